//! WindowPoSt (`window-post`, one partition per job, as Curio asks) and WinningPoSt
//! (`winning-post`): the payload is a [`PostRequest`] (Curio's fields, encoded by the daemon or
//! the CLI); the result is the one 192-byte proof upstream returns.

use std::path::PathBuf;
use std::sync::Arc;

use cuzk_circuits::post::PostType;
use cuzk_circuits::{PostPartition, PostRequest, PostShape, RegisteredPostProof};
use cuzk_pce::Pce;

use super::{
    CircuitId, CircuitSpec, Files, KindError, PartitionColumns, PartitionInput, Plan, ProofKind,
};

/// One of the two PoSt kinds, with parameters (and PCE caches) in one folder under
/// upstream's file names.
#[derive(Clone, Debug)]
pub struct PostKind {
    post: PostType,
    files: Files,
}

impl PostKind {
    pub const WINDOW: &'static str = "window-post";
    pub const WINNING: &'static str = "winning-post";

    /// With `pce`, partitions use pre-compiled constraints (extracted into `params_dir` the
    /// first time) and the native witness generator.
    pub fn new(post: PostType, params_dir: impl Into<PathBuf>, pce: bool) -> Self {
        let files = Files::new(params_dir, pce);
        PostKind { post, files }
    }

    /// With pre-compiled constraints, the native generator (default) or witness-only
    /// synthesis (the reference).
    pub fn with_native_witness(mut self, native: bool) -> Self {
        self.files.native = native;
        self
    }
}

#[derive(Debug)]
struct PostPlan {
    partition: PostPartition,
    files: Files,
}

fn partition_error(e: cuzk_circuits::PostError) -> KindError {
    KindError::Partition {
        partition: 0,
        reason: e.to_string(),
    }
}

impl Plan for PostPlan {
    fn circuit(&self) -> CircuitId {
        CircuitId(self.partition.shape().registered_proof().circuit_id())
    }

    fn partitions(&self) -> usize {
        1
    }

    fn synthesize(&self, _: usize, pce: Option<&Pce>) -> Result<PartitionInput, KindError> {
        let p = self
            .partition
            .witness(self.files.synthesis(pce))
            .map_err(partition_error)?;
        Ok(PartitionInput {
            witness: p.witness,
            public_inputs: p.public_inputs,
        })
    }

    fn columns(&self, _: usize, _: &Pce) -> Option<Result<PartitionColumns, KindError>> {
        self.files
            .native
            .then(|| Ok(self.partition.columns().map_err(partition_error)?.into()))
    }
}

impl ProofKind for PostKind {
    fn name(&self) -> &'static str {
        match self.post {
            PostType::Window => Self::WINDOW,
            PostType::Winning => Self::WINNING,
        }
    }

    fn plan(&self, payload: &[u8]) -> Result<Arc<dyn Plan>, KindError> {
        let payload_error = |e: cuzk_circuits::PostError| KindError::Payload(e.to_string());
        let req = PostRequest::decode(payload).map_err(payload_error)?;
        if let Some(proof) = RegisteredPostProof::from_id(req.registered_proof) {
            if proof.post_type() != self.post {
                return Err(KindError::Payload(format!(
                    "registered_proof: {} is {proof:?}, not a {} proof type",
                    req.registered_proof,
                    self.name()
                )));
            }
        }
        let partition = PostPartition::new(&req).map_err(payload_error)?;
        Ok(Arc::new(PostPlan {
            partition,
            files: self.files.clone(),
        }))
    }

    fn circuit(&self, id: &CircuitId) -> Option<CircuitSpec> {
        RegisteredPostProof::all()
            .filter(|p| p.post_type() == self.post)
            .find(|p| p.circuit_id() == id.0)
            .map(|p| CircuitSpec {
                // Poseidon state: 99 % of the witness is full field elements.
                tables: true,
                ..self.files.spec(PostShape::new(p))
            })
    }
}
