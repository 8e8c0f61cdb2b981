use thiserror::Error;

use crate::job::JobId;
use crate::kind::CircuitId;

/// Why a request or an engine call was refused. Nothing here panics or drops an accepted job.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("unknown proof kind {0:?}")]
    UnknownKind(String),
    #[error("unknown circuit {0:?}")]
    UnknownCircuit(String),
    #[error("invalid request: {0}")]
    InvalidRequest(#[from] KindError),
    #[error("request id {request_id:?} was already used for a different request ({job})")]
    RequestIdReused { request_id: String, job: JobId },
    #[error("unknown job {0}")]
    UnknownJob(JobId),
    #[error("{0} already finished")]
    AlreadyFinished(JobId),
    #[error("{0} has not finished yet")]
    NotFinished(JobId),
    #[error("timed out waiting for {0}")]
    Timeout(JobId),
    #[error("circuit {circuit} needs {needed} bytes (parameters, PCE and one partition), more than the whole memory budget of {budget} bytes")]
    NeverFits {
        circuit: CircuitId,
        needed: u64,
        budget: u64,
    },
    #[error("circuit {circuit} needs {needed} bytes and only {free} can be freed now; try again when jobs finish")]
    NoRoom {
        circuit: CircuitId,
        needed: u64,
        free: u64,
    },
    #[error("no device can prove {kind:?}: {reason}")]
    NoDevice { kind: String, reason: String },
    #[error("circuit {0} is in use by running partitions")]
    InUse(CircuitId),
    #[error("loading circuit {circuit}: {reason}")]
    Load { circuit: CircuitId, reason: String },
    #[error("the engine is shutting down")]
    ShuttingDown,
    #[error("job store: {0}")]
    Store(#[from] StoreError),
    #[error("starting the engine: {0}")]
    Start(String),
}

/// A proof kind's complaint about a payload or a partition.
#[derive(Debug, Error)]
pub enum KindError {
    #[error("malformed payload: {0}")]
    Payload(String),
    #[error("partition {partition}: {reason}")]
    Partition { partition: usize, reason: String },
    #[error("{0}")]
    Other(String),
}

/// The durable store failed; the message keeps redb's chain.
#[derive(Debug, Error)]
#[error("{what}: {message}")]
pub struct StoreError {
    pub what: &'static str,
    pub message: String,
}
