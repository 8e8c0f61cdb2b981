//! Proving entry points: synthesise circuits, then hand the witnesses to a backend.

use bellpepper_core::Circuit;
use rand_core::RngCore;
use rayon::prelude::*;

use crate::assignment::Witness;
use crate::backend::{Backend, Randomness};
use crate::params::ProvingKey;
use crate::{Fr, Proof, ProverError};

/// Proves one circuit with explicit randomness (deterministic, like bellperson's `create_proof`).
pub fn create_proof<C: Circuit<Fr>>(
    circuit: C,
    pk: &ProvingKey,
    randomness: Randomness,
    backend: &dyn Backend,
) -> Result<Proof, ProverError> {
    let w = Witness::synthesize(circuit)?;
    let mut proofs = backend.prove(pk, std::slice::from_ref(&w), &[randomness])?;
    Ok(proofs.remove(0))
}

/// Proves a batch of circuits of one shape; synthesis runs in parallel.
pub fn create_proofs<C: Circuit<Fr> + Send>(
    circuits: Vec<C>,
    pk: &ProvingKey,
    randomness: &[Randomness],
    backend: &dyn Backend,
) -> Result<Vec<Proof>, ProverError> {
    if circuits.len() != randomness.len() {
        return Err(ProverError::BatchShape {
            witnesses: circuits.len(),
            randomness: randomness.len(),
        });
    }
    let witnesses = circuits
        .into_par_iter()
        .map(Witness::synthesize)
        .collect::<Result<Vec<_>, _>>()?;
    backend.prove(pk, &witnesses, randomness)
}

/// Proves one circuit with fresh randomness from `rng`.
pub fn create_random_proof<C: Circuit<Fr>>(
    circuit: C,
    pk: &ProvingKey,
    rng: &mut impl RngCore,
    backend: &dyn Backend,
) -> Result<Proof, ProverError> {
    create_proof(circuit, pk, Randomness::random(rng), backend)
}
