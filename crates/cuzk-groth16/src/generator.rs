//! A random Groth16 setup for any circuit, writing what bellperson's prover and verifier read.
//!
//! The circuit is recorded once (its A, B, C terms), the QAP polynomials are evaluated at τ
//! through the Lagrange basis of the domain, and every query point is a fixed-base scalar
//! multiplication from one precomputed window table per group.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use ff::Field;
use group::{Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;

use crate::curve::FixedBase;
use crate::density::Density;
use crate::domain::{powers, Domain};
use crate::params::{ProvingKey, VerifyingKey};
use crate::{Fr, G1Projective, G2Projective, ProverError};

const INPUT_TAG: u32 = 1 << 31;

/// The non-zero terms of one matrix as `(row, column, coefficient)`; input columns carry
/// `INPUT_TAG`.
#[derive(Default)]
struct Terms(Vec<(u32, u32, Fr)>);

/// Records the shape of a circuit: its sizes and every matrix term.
#[derive(Default)]
struct Recorder {
    inputs: usize,
    aux: usize,
    rows: usize,
    m: [Terms; 3],
}

impl Recorder {
    fn push(&mut self, which: usize, lc: &LinearCombination<Fr>) {
        let row = self.rows as u32;
        let t = &mut self.m[which].0;
        for (&i, c) in lc.iter_inputs() {
            if !bool::from(c.is_zero()) {
                t.push((row, i as u32 | INPUT_TAG, *c));
            }
        }
        for (&i, c) in lc.iter_aux() {
            if !bool::from(c.is_zero()) {
                t.push((row, i as u32, *c));
            }
        }
    }
}

impl ConstraintSystem<Fr> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux += 1;
        Ok(Variable::new_unchecked(Index::Aux(self.aux - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, _: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Fr, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.inputs += 1;
        Ok(Variable::new_unchecked(Index::Input(self.inputs - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LB: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
        LC: FnOnce(LinearCombination<Fr>) -> LinearCombination<Fr>,
    {
        self.push(0, &a(LinearCombination::zero()));
        self.push(1, &b(LinearCombination::zero()));
        self.push(2, &c(LinearCombination::zero()));
        self.rows += 1;
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

/// One QAP polynomial family evaluated at τ, split by column kind.
struct AtTau {
    input: Vec<Fr>,
    aux: Vec<Fr>,
    input_density: Density,
    aux_density: Density,
}

fn evaluate(terms: &Terms, lagrange: &[Fr], inputs: usize, aux: usize) -> AtTau {
    let mut out = AtTau {
        input: vec![Fr::ZERO; inputs],
        aux: vec![Fr::ZERO; aux],
        input_density: Density::new(inputs),
        aux_density: Density::new(aux),
    };
    for &(row, col, coeff) in &terms.0 {
        let v = coeff * lagrange[row as usize];
        if col & INPUT_TAG != 0 {
            let i = (col & !INPUT_TAG) as usize;
            out.input[i] += v;
            out.input_density.set(i);
        } else {
            out.aux[col as usize] += v;
            out.aux_density.set(col as usize);
        }
    }
    out
}

fn nonzero(rng: &mut impl RngCore) -> Fr {
    loop {
        let x = Fr::random(&mut *rng);
        if !bool::from(x.is_zero()) {
            return x;
        }
    }
}

/// Runs a fresh random setup for `circuit`.
pub fn generate<C: Circuit<Fr>, R: RngCore>(
    circuit: C,
    rng: &mut R,
) -> Result<ProvingKey, ProverError> {
    let mut cs = Recorder::default();
    cs.alloc_input(|| "one", || Ok(Fr::ONE))?;
    circuit.synthesize(&mut cs)?;
    // The `input_i · 0 = 0` rows make the input polynomials linearly independent.
    for i in 0..cs.inputs {
        let row = cs.rows as u32;
        cs.m[0].0.push((row, i as u32 | INPUT_TAG, Fr::ONE));
        cs.rows += 1;
    }
    let domain = Domain::for_size(cs.rows)?;

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

    let (inputs, aux) = (cs.inputs, cs.aux);
    let [ta, tb, tc] = &cs.m;
    let ((u, v), w) = rayon::join(
        || {
            rayon::join(
                || evaluate(ta, &lagrange, inputs, aux),
                || evaluate(tb, &lagrange, inputs, aux),
            )
        },
        || evaluate(tc, &lagrange, inputs, aux),
    );
    drop(lagrange);

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
    let vk = VerifyingKey {
        alpha_g1: (g1 * alpha).to_affine(),
        beta_g1: (g1 * beta).to_affine(),
        beta_g2: (g2 * beta).to_affine(),
        gamma_g2: (g2 * gamma).to_affine(),
        delta_g1: (g1 * delta).to_affine(),
        delta_g2: (g2 * delta).to_affine(),
        ic: t1.batch_mul(&ic_s),
    };
    let h = t1.batch_mul(&h_s);
    drop(h_s);
    let l = t1.batch_mul(&l_s);
    drop(l_s);
    let a = t1.batch_mul(&a_s);
    let b_g1 = t1.batch_mul(&b_s);
    drop(t1);
    let b_g2 = t2.batch_mul(&b_s);
    Ok(ProvingKey::from_points(vk, h, l, a, b_g1, b_g2))
}
