//! A bounded record of recent stage spans: what `cuzk bench` draws as a timeline, and where
//! an operator looks when the backend sits idle.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

use crate::job::JobId;

/// Spans kept; older ones are dropped (a 32 GiB job makes about 40).
const CAPACITY: usize = 1 << 16;

/// A pipeline stage of one partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Waiting for parameters / PCE to reach the hot tier.
    Load,
    Synthesis,
    Backend,
    /// Verification (and a CPU retry, if the backend's proof failed).
    Verify,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Load => "load",
            Stage::Synthesis => "synthesis",
            Stage::Backend => "backend",
            Stage::Verify => "verify",
        }
    }
}

/// One stage of one partition, in microseconds since the engine started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub job: JobId,
    pub partition: u32,
    pub stage: Stage,
    /// The CPU or backend worker that ran it.
    pub worker: u32,
    pub start_us: u64,
    pub end_us: u64,
}

#[derive(Debug)]
pub(crate) struct Trace {
    epoch: Instant,
    spans: Mutex<VecDeque<Span>>,
}

impl Trace {
    pub fn new(epoch: Instant) -> Self {
        Trace {
            epoch,
            spans: Mutex::new(VecDeque::new()),
        }
    }

    pub fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// Records a span from `start` to now.
    pub fn record(
        &self,
        job: JobId,
        partition: usize,
        stage: Stage,
        worker: usize,
        start: Instant,
    ) {
        let mut spans = self.spans.lock().unwrap_or_else(|p| p.into_inner());
        if spans.len() == CAPACITY {
            spans.pop_front();
        }
        // Taking the end time under the lock keeps the deque sorted by end.
        spans.push_back(Span {
            job,
            partition: partition as u32,
            stage,
            worker: worker as u32,
            start_us: start.saturating_duration_since(self.epoch).as_micros() as u64,
            end_us: self.now_us(),
        });
    }

    /// Spans that ended at or after `since_us`, in the order they ended.
    pub fn since(&self, since_us: u64) -> Vec<Span> {
        let spans = self.spans.lock().unwrap_or_else(|p| p.into_inner());
        let first = spans.partition_point(|s| s.end_us < since_us);
        spans.range(first..).cloned().collect()
    }
}
