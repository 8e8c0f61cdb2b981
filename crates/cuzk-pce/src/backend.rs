//! Provers that take a partition's columns and evaluate a, b, c from the circuit's PCE
//! themselves: a GPU keeps the matrices in device memory, so per proof only `input ‖ aux`
//! crosses the bus ([`Columns`], packed where it is mostly bits) and the host does no mat-vec.

use std::sync::Arc;

use cuzk_groth16::backend::{Backend, Randomness};
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::{Proof, ProverError};

use crate::{Columns, Pce};

/// One concept, two places to evaluate: every implementation must give, for the same
/// randomness, the bytes [`HostEvaluated`] gives (the conformance check is
/// `cuzk-gpu/tests/pce.rs`).
pub trait PceBackend: Send + Sync {
    fn name(&self) -> &'static str;

    /// The proof [`Backend::prove`] gives for `pce.evaluate(input, aux)` of the columns'
    /// values.
    fn prove_assigned(
        &self,
        pk: &ProvingKey,
        pce: &Arc<Pce>,
        columns: &Columns,
        rs: &Randomness,
    ) -> Result<Proof, ProverError>;

    /// Device memory the circuit's matrices and one witness keep besides the key's
    /// [`cuzk_groth16::backend::Footprint`]; none for a host evaluator.
    fn resident_bytes(&self, _pce: &Pce) -> u64 {
        0
    }

    /// Host memory one proof from columns takes besides them (scalars it gathers on the
    /// host), for the engine's budget; none when everything stays on the device.
    fn host_scratch(&self, _pk: &ProvingKey, _pce: &Pce) -> u64 {
        0
    }
}

/// The reference: the mat-vec on the host ([`Pce::evaluate`]), then any [`Backend`].
#[derive(Clone, Copy, Debug, Default)]
pub struct HostEvaluated<B>(pub B);

impl<B: Backend> PceBackend for HostEvaluated<B> {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn prove_assigned(
        &self,
        pk: &ProvingKey,
        pce: &Arc<Pce>,
        columns: &Columns,
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        let (input, aux) = columns.to_vecs();
        let w = pce.evaluate(input, aux).map_err(|e| ProverError::Backend {
            backend: "host mat-vec",
            message: e.to_string(),
        })?;
        let proof = self.0.prove_single(pk, &w, rs);
        w.recycle();
        proof
    }
}
