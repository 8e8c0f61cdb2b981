//! The proving backend: everything after the witness, behind one trait.
//!
//! [`CpuBackend`] is the reference implementation. Any other backend (GPU, batched, PCE-fed)
//! must produce the same proof bytes for the same key, witness and randomness; the harness in
//! [`crate::conformance`] checks exactly that.

use ff::Field;
use group::{prime::PrimeCurveAffine, Curve};
use rayon::prelude::*;

use crate::assignment::{Densities, Witness};
use crate::domain::{Coefficients, Domain};
use crate::params::ProvingKey;
use crate::{msm, Fr, G1Projective, G2Projective, Proof, ProverError};

/// The blinding factors `r` and `s` of one proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Randomness {
    pub r: Fr,
    pub s: Fr,
}

impl Randomness {
    pub fn random(rng: &mut impl rand_core::RngCore) -> Self {
        Randomness {
            r: Fr::random(&mut *rng),
            s: Fr::random(&mut *rng),
        }
    }
}

/// Turns witnesses into proofs under one proving key.
pub trait Backend: Send + Sync {
    /// A short name for logs and errors.
    fn name(&self) -> &'static str;

    /// Proves every witness (all of the circuit `pk` was made for) with its randomness.
    fn prove(
        &self,
        pk: &ProvingKey,
        witnesses: &[Witness],
        randomness: &[Randomness],
    ) -> Result<Vec<Proof>, ProverError>;

    /// [`Backend::prove`] for one witness.
    fn prove_single(
        &self,
        pk: &ProvingKey,
        witness: &Witness,
        randomness: &Randomness,
    ) -> Result<Proof, ProverError> {
        let proofs = self.prove(
            pk,
            std::slice::from_ref(witness),
            std::slice::from_ref(randomness),
        )?;
        proofs
            .into_iter()
            .next()
            .ok_or_else(|| ProverError::Backend {
                backend: self.name(),
                message: "no proof for one witness".into(),
            })
    }

    /// Memory of its own (a GPU's) that this backend may use, in bytes; `None` for a backend
    /// working in host memory, which the engine's budget already covers.
    fn device_memory(&self) -> Option<u64> {
        None
    }

    /// What proving under `pk` occupies in [`Backend::device_memory`]; `None` with it.
    fn footprint(&self, _pk: &ProvingKey) -> Option<Footprint> {
        None
    }

    /// [`Backend::footprint`] of a call that also keeps `beside` bytes resident (a circuit's
    /// matrices), counted in [`Footprint::resident`]. A backend short of room may answer by
    /// keeping less of the key resident (streaming the rest at every proof).
    fn footprint_beside(&self, pk: &ProvingKey, beside: u64) -> Option<Footprint> {
        self.footprint(pk).map(|f| Footprint {
            resident: f.resident + beside,
            ..f
        })
    }

    /// Frees what the backend keeps between calls for `pk` (a GPU's copy of the key, and the
    /// circuits whose host matrices are gone); other keys stay. The next call under `pk`
    /// uploads again. Waits for a call in progress.
    fn release(&self, _pk: &ProvingKey) {}
}

/// A borrowed backend is one, so wrappers can take `&dyn Backend`.
impl<B: Backend + ?Sized> Backend for &B {
    fn name(&self) -> &'static str {
        (**self).name()
    }

    fn prove(
        &self,
        pk: &ProvingKey,
        witnesses: &[Witness],
        randomness: &[Randomness],
    ) -> Result<Vec<Proof>, ProverError> {
        (**self).prove(pk, witnesses, randomness)
    }

    fn device_memory(&self) -> Option<u64> {
        (**self).device_memory()
    }

    fn footprint(&self, pk: &ProvingKey) -> Option<Footprint> {
        (**self).footprint(pk)
    }

    fn footprint_beside(&self, pk: &ProvingKey, beside: u64) -> Option<Footprint> {
        (**self).footprint_beside(pk, beside)
    }

    fn release(&self, pk: &ProvingKey) {
        (**self).release(pk)
    }
}

/// A backend's device memory for one proving key, so that work is placed only where it fits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Kept between proofs under the same key (the uploaded queries).
    pub resident: u64,
    /// Working memory of one proof in a call, freed when the call returns.
    pub per_proof: u64,
}

impl Footprint {
    /// Device memory for a call proving `batch` witnesses.
    pub fn call(&self, batch: usize) -> u64 {
        self.resident + self.per_proof * batch as u64
    }

    /// A device holding `pk`'s queries as plain affine points (G1 96 bytes, G2 192) plus
    /// `per_query` for each non-empty query and, per proof, a, b and c over the domain (the
    /// largest allocation of a proof) plus `scratch`.
    pub fn uploaded(pk: &ProvingKey, per_query: u64, scratch: u64) -> Self {
        Self::of_queries(pk.lengths(), per_query, scratch)
    }

    /// [`Footprint::uploaded`] for a key of these query lengths (h, l, a, b G1, b G2).
    pub fn of_queries(lengths: [usize; 5], per_query: u64, scratch: u64) -> Self {
        let lengths = lengths.map(|n| n as u64);
        let [h, l, a, b_g1, b_g2] = lengths;
        let queries = lengths.iter().filter(|&&n| n > 0).count() as u64;
        let domain = (h + 1).next_power_of_two();
        Footprint {
            resident: (h + l + a + b_g1) * 96 + b_g2 * 192 + queries * per_query,
            per_proof: 3 * domain * 32 + scratch,
        }
    }
}

/// The reference backend: NTTs and MSMs on the CPU with rayon and blst.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn prove(
        &self,
        pk: &ProvingKey,
        witnesses: &[Witness],
        randomness: &[Randomness],
    ) -> Result<Vec<Proof>, ProverError> {
        check_batch(witnesses, randomness)?;
        // Each proof already uses every core inside its NTTs and MSMs.
        witnesses
            .iter()
            .zip(randomness)
            .map(|(w, rs)| prove_one(pk, w, rs))
            .collect()
    }
}

/// Coefficients of `h = (a·b − c) / Z`, computed on the coset where `Z` is a constant.
pub fn quotient(a: &[Fr], b: &[Fr], c: &[Fr]) -> Result<(Domain, Coefficients), ProverError> {
    let domain = Domain::for_size(a.len())?;
    // Copies with room for the padding, so padding does not move them again.
    let padded = |v: &[Fr]| {
        let mut x = crate::memory::take(domain.size().max(v.len()));
        x.extend_from_slice(v);
        x
    };
    let coset = |v: &[Fr]| -> Result<_, ProverError> {
        Ok(domain.evaluations_to_coset(domain.evaluations(padded(v))?))
    };
    // c enters linearly and Z is constant on the coset, so c needs no coset transform:
    // h = (icoset(â·b̂) − coefficients(c)) / Z, six NTTs instead of seven.
    let coefficients =
        |v: &[Fr]| -> Result<_, ProverError> { Ok(domain.ifft(domain.evaluations(padded(v))?)) };
    let (ra, (rb, rc)) = rayon::join(|| coset(a), || rayon::join(|| coset(b), || coefficients(c)));
    let (mut a, b, c) = (ra?, rb?, rc?);
    let z_inv = domain.vanishing_on_coset().invert().unwrap();
    a.as_mut_slice()
        .par_iter_mut()
        .zip(b.as_slice().par_iter())
        .for_each(|(a, b)| crate::fr::mul_assign(a, b));
    let mut h = domain.icoset_fft(a);
    h.as_mut_slice()
        .par_iter_mut()
        .zip(c.as_slice().par_iter())
        .for_each(|(h, c)| {
            crate::fr::sub_assign(h, c);
            crate::fr::mul_assign(h, &z_inv);
        });
    crate::memory::recycle(b.into_vec());
    crate::memory::recycle(c.into_vec());
    Ok((domain, h))
}

fn expect(section: &'static str, expected: usize, got: usize) -> Result<(), ProverError> {
    if expected != got {
        return Err(ProverError::ParamsMismatch {
            section,
            expected,
            got,
        });
    }
    Ok(())
}

/// Checks that a batch has one randomness pair per witness.
pub fn check_batch(witnesses: &[Witness], randomness: &[Randomness]) -> Result<(), ProverError> {
    if witnesses.len() != randomness.len() {
        return Err(ProverError::BatchShape {
            witnesses: witnesses.len(),
            randomness: randomness.len(),
        });
    }
    Ok(())
}

/// Checks that the key's sections have the lengths this witness implies.
pub fn check_shape(pk: &ProvingKey, w: &Witness) -> Result<(), ProverError> {
    check_columns(pk, w.a.len(), w.input.len(), w.aux.len(), &w.density)?;
    expect("witness.b", w.a.len(), w.b.len())?;
    expect("witness.c", w.a.len(), w.c.len())
}

/// [`check_shape`] for a witness whose `rows` values of a, b and c are evaluated elsewhere
/// (on a device, from the circuit's matrices).
pub fn check_columns(
    pk: &ProvingKey,
    rows: usize,
    input: usize,
    aux: usize,
    d: &Densities,
) -> Result<(), ProverError> {
    let [h, l, a, b_g1, b_g2] = pk.lengths();
    let n = Domain::for_size(rows)?.size();
    expect("h", n - 1, h)?;
    expect("l", aux, l)?;
    expect("vk.ic", input, pk.vk.ic.len())?;
    expect("a", input + d.a_aux.count(), a)?;
    expect("b_g1", d.b_input.count() + d.b_aux.count(), b_g1)?;
    expect("b_g2", d.b_input.count() + d.b_aux.count(), b_g2)?;
    expect("density.a_aux", aux, d.a_aux.len())?;
    expect("density.b_aux", aux, d.b_aux.len())?;
    expect("density.b_input", input, d.b_input.len())
}

fn prove_one(pk: &ProvingKey, w: &Witness, rs: &Randomness) -> Result<Proof, ProverError> {
    check_shape(pk, w)?;
    let d = &w.density;
    let mut steps = Steps::new();
    let (_, h_vec) = quotient(&w.a, &w.b, &w.c)?;
    let h = &h_vec.as_slice()[..h_vec.len() - 1];
    let quotient_ms = steps.lap();

    let a_aux = d.a_aux.select(&w.aux);
    let b_scalars: Vec<Fr> = d
        .b_input
        .select(&w.input)
        .into_iter()
        .chain(d.b_aux.select(&w.aux))
        .collect();
    let gather_ms = steps.lap();

    let t = pk.tables();
    let h_acc = msm::fixed(t.and_then(|t| t.h.as_ref()), 0, pk.h()?, h);
    crate::memory::recycle(h_vec.into_vec());
    let h_ms = steps.lap();
    let l_acc = msm::fixed(t.and_then(|t| t.l.as_ref()), 0, pk.l()?, &w.aux);
    let l_ms = steps.lap();
    let a_points = pk.a()?;
    let (a_in, a_rest) = a_points.split_at(w.input.len());
    let a_table = t.and_then(|t| t.a.as_ref());
    let a_acc =
        msm::fixed(a_table, 0, a_in, &w.input) + msm::fixed(a_table, a_in.len(), a_rest, &a_aux);
    let a_ms = steps.lap();
    let b1_acc = msm::fixed(t.and_then(|t| t.b_g1.as_ref()), 0, pk.b_g1()?, &b_scalars);
    let b_g1_ms = steps.lap();
    let b2_acc = msm::fixed(t.and_then(|t| t.b_g2.as_ref()), 0, pk.b_g2()?, &b_scalars);
    let b_g2_ms = steps.lap();
    tracing::debug!(
        quotient_ms,
        gather_ms,
        h_msm_ms = h_ms,
        l_msm_ms = l_ms,
        a_msm_ms = a_ms,
        b_g1_msm_ms = b_g1_ms,
        b_g2_msm_ms = b_g2_ms,
        "cpu proof steps"
    );
    Ok(assemble(pk, rs, h_acc + l_acc, a_acc, b1_acc, b2_acc))
}

/// Milliseconds between successive calls, for the `debug` step event.
pub(crate) struct Steps(std::time::Instant);

impl Steps {
    pub(crate) fn new() -> Self {
        Steps(std::time::Instant::now())
    }

    pub(crate) fn lap(&mut self) -> u64 {
        let now = std::time::Instant::now();
        let ms = (now - self.0).as_millis() as u64;
        self.0 = now;
        ms
    }
}

/// Combines the MSM results into `A = α + Σa + rδ`, `B = β + Σb + sδ`,
/// `C = Σh + Σl + sA + rB₁ − rsδ`.
pub fn assemble(
    pk: &ProvingKey,
    rs: &Randomness,
    hl: G1Projective,
    a: G1Projective,
    b_g1: G1Projective,
    b_g2: G2Projective,
) -> Proof {
    let vk = &pk.vk;
    let (delta1, delta2) = (vk.delta_g1.to_curve(), vk.delta_g2.to_curve());
    let ga = vk.alpha_g1.to_curve() + a + delta1 * rs.r;
    let gb2 = vk.beta_g2.to_curve() + b_g2 + delta2 * rs.s;
    let gb1 = vk.beta_g1.to_curve() + b_g1 + delta1 * rs.s;
    let gc = hl + ga * rs.s + gb1 * rs.r - delta1 * (rs.r * rs.s);
    Proof {
        a: ga.to_affine(),
        b: gb2.to_affine(),
        c: gc.to_affine(),
    }
}
