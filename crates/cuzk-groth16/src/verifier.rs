//! Groth16 verification: `e(A, B) = e(α, β) · e(Σ x_i·IC_i, γ) · e(C, δ)`.

use blstrs::{Bls12, G2Prepared, Gt};
use ff::{Field, PrimeField};
use group::{prime::PrimeCurveAffine, Curve, Group};
use pairing::{MillerLoopResult, MultiMillerLoop};
use rand_core::RngCore;

use crate::params::VerifyingKey;
use crate::{msm, Fr, G1Affine, G1Projective, Proof, VerifyError};

/// A verifying key with its pairing-side work done once.
#[derive(Debug)]
pub struct PreparedVerifyingKey {
    alpha_beta: Gt,
    neg_gamma: G2Prepared,
    neg_delta: G2Prepared,
    ic: Vec<G1Affine>,
}

impl PreparedVerifyingKey {
    pub fn new(vk: &VerifyingKey) -> Self {
        PreparedVerifyingKey {
            alpha_beta: blstrs::pairing(&vk.alpha_g1, &vk.beta_g2),
            neg_gamma: G2Prepared::from(-vk.gamma_g2),
            neg_delta: G2Prepared::from(-vk.delta_g2),
            ic: vk.ic.clone(),
        }
    }

    /// Number of public inputs (without ONE).
    pub fn num_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }

    fn input_acc(&self, inputs: &[Fr]) -> Result<G1Projective, VerifyError> {
        if inputs.len() + 1 != self.ic.len() {
            return Err(VerifyError::InputCount {
                expected: self.num_inputs(),
                got: inputs.len(),
            });
        }
        Ok(self.ic[0].to_curve() + msm::g1(&self.ic[1..], inputs))
    }
}

/// Checks one proof. `Ok(false)` means the proof is wrong; `Err` means the question was ill-posed.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    inputs: &[Fr],
) -> Result<bool, VerifyError> {
    let acc = pvk.input_acc(inputs)?.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma),
        (&proof.c, &pvk.neg_delta),
    ]);
    Ok(ml.final_exponentiation() == pvk.alpha_beta)
}

/// Checks many proofs under one key with a random linear combination: one final
/// exponentiation in all. `Ok(true)` only if every proof is valid (except with probability
/// 2^-128 over `rng`).
pub fn verify_proofs_batch(
    pvk: &PreparedVerifyingKey,
    proofs: &[Proof],
    inputs: &[Vec<Fr>],
    rng: &mut impl RngCore,
) -> Result<bool, VerifyError> {
    if proofs.len() != inputs.len() {
        return Err(VerifyError::InputCount {
            expected: proofs.len(),
            got: inputs.len(),
        });
    }
    if proofs.is_empty() {
        return Ok(true);
    }
    // 128-bit random weights suffice for soundness and keep the scalar work small.
    let weights: Vec<Fr> = (0..proofs.len())
        .map(|_| Fr::from_u128(((rng.next_u64() as u128) << 64) | rng.next_u64() as u128))
        .collect();
    let mut acc = G1Projective::identity();
    let mut c_acc = G1Projective::identity();
    let mut sum = Fr::ZERO;
    let mut terms: Vec<(G1Affine, G2Prepared)> = Vec::with_capacity(proofs.len() + 2);
    for ((p, x), w) in proofs.iter().zip(inputs).zip(&weights) {
        acc += pvk.input_acc(x)? * w;
        c_acc += p.c * w;
        sum += w;
        terms.push(((p.a * w).to_affine(), G2Prepared::from(p.b)));
    }
    terms.push((acc.to_affine(), pvk.neg_gamma.clone()));
    terms.push((c_acc.to_affine(), pvk.neg_delta.clone()));
    let refs: Vec<(&G1Affine, &G2Prepared)> = terms.iter().map(|(a, b)| (a, b)).collect();
    let ml = Bls12::multi_miller_loop(&refs);
    Ok(ml.final_exponentiation() == pvk.alpha_beta * sum)
}
