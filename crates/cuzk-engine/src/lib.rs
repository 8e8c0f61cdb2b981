//! The embeddable cuzk proving engine.
//!
//! ```text
//! submit ─▶ store (durable) ─▶ scheduler (priority, FIFO, per partition)
//!        ─▶ admission (budget + residency) ─▶ CPU workers (load, synthesise)
//!        ─▶ bounded ready queue ─▶ one backend worker per device (place, batch, prove)
//!        ─▶ finisher (verify, CPU retry, store partition, release buffers) ─▶ await_job
//! ```
//!
//! [`Engine::start`] opens the job store and re-queues what an earlier run left unfinished;
//! [`Engine::submit`] records a request before returning its [`JobId`] (idempotent on the
//! caller's request id); [`Engine::await_job`] blocks for the [`Outcome`] (`await` is a
//! keyword); [`Engine::cancel`], [`Engine::status`], [`Engine::metrics`],
//! [`Engine::preload`], [`Engine::evict`] and [`Engine::shutdown`] complete the `cuzk.v1`
//! surface. Proof kinds come from a [`kind::Registry`] ([`kind::PorepKind`] for PoRep C2,
//! [`kind::SyntheticKind`] for tests); each proving device ([`DeviceSlot`]: a GPU, or the CPU)
//! is any `cuzk_groth16::backend::Backend`.

pub mod budget;
pub mod device;
mod engine;
mod error;
pub mod job;
pub mod kind;
pub mod metrics;
mod pipeline;
pub mod residency;
pub mod scheduler;
pub mod sim;
pub mod store;
pub mod trace;

pub use device::DeviceSlot;
pub use engine::{
    BackendStatus, Engine, EngineConfig, EvictReport, PreloadReport, QueueStatus, Status,
};
pub use error::{EngineError, KindError, StoreError};
pub use job::{JobId, JobInfo, JobState, Outcome, Priority, Request, Timings, Wait};
pub use metrics::{DeviceMetrics, Metrics, QueueDepth, StageLatency};
pub use residency::SeededKeys;
pub use trace::{Span, Stage};
