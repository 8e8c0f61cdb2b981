//! SnapDeals (`snap-update`): the payload is a [`SnapRequest`] (Curio's fields, encoded by the
//! daemon or the CLI); the update's partitions (16 at 32 GiB) are scheduled one by one like
//! PoRep's, so they pipeline and share devices with other jobs; the result is the partition
//! proofs concatenated, as upstream returns them.

use std::path::PathBuf;
use std::sync::Arc;

use cuzk_circuits::snap::{RegisteredUpdateProof, SnapRequest, SnapShape, SnapUpdate};
use cuzk_pce::Pce;

use super::{
    CircuitId, CircuitSpec, Files, KindError, PartitionColumns, PartitionInput, Plan, ProofKind,
};

/// SnapDeals updates with parameters (and PCE caches) in one folder under upstream's names.
#[derive(Clone, Debug)]
pub struct SnapKind {
    files: Files,
}

impl SnapKind {
    pub const NAME: &'static str = "snap-update";

    /// With `pce`, partitions use pre-compiled constraints (extracted into `params_dir` the
    /// first time) and the native witness generator.
    pub fn new(params_dir: impl Into<PathBuf>, pce: bool) -> Self {
        let files = Files::new(params_dir, pce);
        SnapKind { files }
    }

    /// With pre-compiled constraints, the native generator (default) or witness-only
    /// synthesis (the reference).
    pub fn with_native_witness(mut self, native: bool) -> Self {
        self.files.native = native;
        self
    }
}

#[derive(Debug)]
struct SnapPlan {
    update: SnapUpdate,
    files: Files,
}

fn partition_error(partition: usize) -> impl Fn(cuzk_circuits::snap::SnapError) -> KindError {
    move |e| KindError::Partition {
        partition,
        reason: e.to_string(),
    }
}

impl Plan for SnapPlan {
    fn circuit(&self) -> CircuitId {
        CircuitId(self.update.shape().registered_proof().circuit_id())
    }

    fn partitions(&self) -> usize {
        self.update.partitions()
    }

    fn synthesize(&self, k: usize, pce: Option<&Pce>) -> Result<PartitionInput, KindError> {
        let p = self
            .update
            .witness(k, self.files.synthesis(pce))
            .map_err(partition_error(k))?;
        Ok(PartitionInput {
            witness: p.witness,
            public_inputs: p.public_inputs,
        })
    }

    fn columns(&self, k: usize, _: &Pce) -> Option<Result<PartitionColumns, KindError>> {
        self.files
            .native
            .then(|| Ok(self.update.columns(k).map_err(partition_error(k))?.into()))
    }
}

impl ProofKind for SnapKind {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn plan(&self, payload: &[u8]) -> Result<Arc<dyn Plan>, KindError> {
        let payload_error = |e: cuzk_circuits::snap::SnapError| KindError::Payload(e.to_string());
        let req = SnapRequest::decode(payload).map_err(payload_error)?;
        let update = SnapUpdate::new(&req).map_err(payload_error)?;
        Ok(Arc::new(SnapPlan {
            update,
            files: self.files.clone(),
        }))
    }

    fn circuit(&self, id: &CircuitId) -> Option<CircuitSpec> {
        RegisteredUpdateProof::all()
            .find(|p| p.circuit_id() == id.0)
            .map(|p| self.files.spec(SnapShape::new(p)))
    }
}
