//! A random Groth16 setup for any circuit, writing what bellperson's prover and verifier read.
//!
//! The circuit is recorded once ([`crate::r1cs`]), the QAP polynomials are evaluated at τ
//! through the Lagrange basis of the domain, and every query point is a fixed-base scalar
//! multiplication from one precomputed window table per group: hundreds of millions of them
//! for a 32 GiB circuit, so they go through a [`FixedBaseMul`], which a device can implement.

use bellpepper_core::Circuit;
use ff::Field;
use group::{Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;

use crate::curve::FixedBase;
use crate::domain::{powers, Domain};
use crate::params::{ProvingKey, VerifyingKey};
use crate::r1cs::{self, Recording};
use crate::{Fr, G1Projective, G2Projective, ProverError};
use crate::{G1Affine, G2Affine};

fn nonzero(rng: &mut impl RngCore) -> Fr {
    loop {
        let x = Fr::random(&mut *rng);
        if !bool::from(x.is_zero()) {
            return x;
        }
    }
}

/// The bulk of a setup: `s_i · base` for every scalar, from `base`'s window table, in affine
/// form. [`CpuFixedBase`] is the reference; every other implementation must give the same
/// points ([`crate::conformance::check_fixed_base`]), so a setup's file depends only on its
/// seed.
pub trait FixedBaseMul: Sync {
    fn name(&self) -> &str;
    fn g1(
        &self,
        table: &FixedBase<G1Projective>,
        scalars: &[Fr],
    ) -> Result<Vec<G1Affine>, ProverError>;
    fn g2(
        &self,
        table: &FixedBase<G2Projective>,
        scalars: &[Fr],
    ) -> Result<Vec<G2Affine>, ProverError>;
}

/// Batch-affine additions on every core ([`FixedBase::batch_mul`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuFixedBase;

impl FixedBaseMul for CpuFixedBase {
    fn name(&self) -> &str {
        "cpu"
    }
    fn g1(
        &self,
        table: &FixedBase<G1Projective>,
        scalars: &[Fr],
    ) -> Result<Vec<G1Affine>, ProverError> {
        Ok(table.batch_mul(scalars))
    }
    fn g2(
        &self,
        table: &FixedBase<G2Projective>,
        scalars: &[Fr],
    ) -> Result<Vec<G2Affine>, ProverError> {
        Ok(table.batch_mul(scalars))
    }
}

/// The randomness of a reproducible setup from `seed`: `cuzk paramgen --seed` and the engine's
/// seeded keys both draw from it, so they make the same key.
pub fn seeded_rng(seed: u64) -> rand_chacha::ChaCha20Rng {
    use rand_core::SeedableRng;
    rand_chacha::ChaCha20Rng::seed_from_u64(seed)
}

/// Runs a fresh random setup for `circuit`.
pub fn generate<C: Circuit<Fr>, R: RngCore>(
    circuit: C,
    rng: &mut R,
) -> Result<ProvingKey, ProverError> {
    generate_from(&r1cs::record(circuit)?, rng)
}

/// Runs a fresh random setup for a recorded circuit.
pub fn generate_from<R: RngCore>(cs: &Recording, rng: &mut R) -> Result<ProvingKey, ProverError> {
    generate_with(cs, rng, &CpuFixedBase)
}

/// Runs a fresh random setup for a recorded circuit, its query points made by `mul`. The
/// same seed gives the same key whatever `mul` is.
pub fn generate_with<R: RngCore>(
    cs: &Recording,
    rng: &mut R,
    mul: &dyn FixedBaseMul,
) -> Result<ProvingKey, ProverError> {
    let mut steps = crate::backend::Steps::new();
    // Minutes at 32 GiB: each step is logged as it ends.
    let mut done =
        |step: &str| tracing::info!(step, ms = steps.lap(), points = mul.name(), "setup");
    let (inputs, aux, rows) = (cs.num_inputs, cs.num_aux, cs.num_constraints());
    // The prover's `input_i · 0 = 0` rows follow the constraints.
    let domain = Domain::for_size(rows + inputs)?;

    let g1 = G1Projective::random(&mut *rng);
    let g2 = G2Projective::random(&mut *rng);
    let (alpha, beta, gamma, delta) = (nonzero(rng), nonzero(rng), nonzero(rng), nonzero(rng));
    let (tau, lagrange) = loop {
        let tau = nonzero(rng);
        if let Some(l) = domain.lagrange_at(tau) {
            break (tau, l);
        }
    };
    let (gamma_inv, delta_inv) = (gamma.invert().unwrap(), delta.invert().unwrap());

    let ((mut u, v), w) = rayon::join(
        || {
            rayon::join(
                || cs.a.column_values(&lagrange, inputs, aux),
                || cs.b.column_values(&lagrange, inputs, aux),
            )
        },
        || cs.c.column_values(&lagrange, inputs, aux),
    );
    // Input i's extra row makes the input polynomials linearly independent.
    for (i, x) in u.input.iter_mut().enumerate() {
        *x += lagrange[rows + i];
    }
    drop(lagrange);
    done("lagrange and columns");

    let combine = |u: &[Fr], v: &[Fr], w: &[Fr], k: Fr| -> Vec<Fr> {
        u.par_iter()
            .zip(v.par_iter())
            .zip(w.par_iter())
            .map(|((u, v), w)| (beta * u + alpha * v + w) * k)
            .collect()
    };
    let ic_s = combine(&u.input, &v.input, &w.input, gamma_inv);
    let l_s = combine(&u.aux, &v.aux, &w.aux, delta_inv);
    // A column in no constraint would give a point at infinity, which bellperson refuses to read.
    if let Some(column) = l_s.iter().position(|x| bool::from(x.is_zero())) {
        return Err(ProverError::Unconstrained { column });
    }
    // Every input is in A through its extra row; aux columns only where they occur.
    let a_s: Vec<Fr> = u
        .input
        .iter()
        .copied()
        .chain(u.aux_density.select(&u.aux))
        .collect();
    let b_s: Vec<Fr> = v
        .input_density
        .select(&v.input)
        .into_iter()
        .chain(v.aux_density.select(&v.aux))
        .collect();
    let mut h_s = powers(tau, domain.size() - 1);
    let zk = domain.vanishing_at(tau) * delta_inv;
    h_s.par_iter_mut().for_each(|x| *x *= zk);

    let t1 = FixedBase::new(
        g1,
        ic_s.len() + l_s.len() + a_s.len() + b_s.len() + h_s.len(),
    );
    let t2 = FixedBase::new(g2, b_s.len());
    done("scalars and tables");
    let vk = VerifyingKey {
        alpha_g1: (g1 * alpha).to_affine(),
        beta_g1: (g1 * beta).to_affine(),
        beta_g2: (g2 * beta).to_affine(),
        gamma_g2: (g2 * gamma).to_affine(),
        delta_g1: (g1 * delta).to_affine(),
        delta_g2: (g2 * delta).to_affine(),
        ic: t1.batch_mul(&ic_s),
    };
    let h = mul.g1(&t1, &h_s)?;
    drop(h_s);
    done("h points");
    let l = mul.g1(&t1, &l_s)?;
    drop(l_s);
    done("l points");
    let a = mul.g1(&t1, &a_s)?;
    done("a points");
    let b_g1 = mul.g1(&t1, &b_s)?;
    drop(t1);
    done("b_g1 points");
    let b_g2 = mul.g2(&t2, &b_s)?;
    done("b_g2 points");
    Ok(ProvingKey::from_points(vk, h, l, a, b_g1, b_g2))
}
