//! What a caller submits and what becomes of it: ids, priorities, the job state machine, and
//! the outcome `await_job` hands back.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::EngineError;

/// The engine's name for an accepted job; unique for the life of a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct JobId(pub u64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "job-{}", self.0)
    }
}

/// Scheduling class. Declared from least to most urgent, so the derived order is urgency;
/// the discriminants are the `cuzk.v1` wire numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Priority {
    Low = 1,
    Normal = 2,
    High = 3,
    /// WinningPoSt: a missed deadline loses a block reward.
    Critical = 4,
}

impl Priority {
    pub const ALL: [Priority; 4] = [
        Priority::Low,
        Priority::Normal,
        Priority::High,
        Priority::Critical,
    ];
}

/// One proof request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The caller's idempotency key: submitting the same id again returns the same job.
    pub request_id: String,
    /// The proof kind's registry name, e.g. `porep-c2`.
    pub kind: String,
    pub priority: Priority,
    /// Kind-specific input (for PoRep C2: the C1 output JSON or Curio's envelope).
    pub payload: Vec<u8>,
}

/// Where a job is. `Queued → Running → Succeeded | Failed | Cancelled`, and a terminal state
/// is entered exactly once ([`JobState::finish`] refuses a second time).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JobState {
    Queued,
    Running { done: u32, total: u32 },
    Succeeded,
    Failed { reason: String },
    Cancelled,
}

impl JobState {
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            JobState::Succeeded | JobState::Failed { .. } | JobState::Cancelled
        )
    }

    /// Records partition progress; a terminal job stays as it is.
    pub(crate) fn progress(&mut self, done: u32, total: u32) {
        if !self.is_terminal() {
            *self = JobState::Running { done, total };
        }
    }

    /// Moves to `to`; an error if the job already finished, so nothing finishes twice.
    pub(crate) fn finish(&mut self, job: JobId, to: JobState) -> Result<(), EngineError> {
        debug_assert!(to.is_terminal());
        if self.is_terminal() {
            return Err(EngineError::AlreadyFinished(job));
        }
        *self = to;
        Ok(())
    }
}

/// Where the time of a job went, in the shape of `cuzk.v1`'s `AwaitProofResponse`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// Submission to the first partition's dispatch.
    pub queue_wait_ms: u64,
    /// Waiting for parameters / PCE to load (summed over partitions).
    pub srs_load_ms: u64,
    /// Witness and a/b/c production (summed over partitions).
    pub synthesis_ms: u64,
    /// Backend time (summed over partitions).
    pub backend_ms: u64,
    /// Submission to completion.
    pub total_ms: u64,
}

/// How a job ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every partition proof verified; `proof` is their concatenation as the kind assembles it.
    Succeeded {
        proof: Vec<u8>,
        timings: Timings,
    },
    Failed {
        reason: String,
    },
    Cancelled,
}

/// A snapshot of one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobInfo {
    pub id: JobId,
    pub request_id: String,
    pub kind: String,
    pub priority: Priority,
    pub state: JobState,
    /// Jobs ahead of this one in the queue (0 when running or finished).
    pub queue_position: u32,
    pub timings: Timings,
}

/// How long [`crate::Engine::await_job`] may block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    Forever,
    For(Duration),
}

impl From<Duration> for Wait {
    fn from(d: Duration) -> Self {
        Wait::For(d)
    }
}
