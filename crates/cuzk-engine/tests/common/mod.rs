//! Test support: synthetic circuits with real parameter files, engines over a simulated
//! backend, and polling helpers that wait for states (never for wall-clock times).

#![allow(dead_code)] // each test binary uses its own part of this module

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_engine::budget::Meter;
use cuzk_engine::kind::{Registry, SyntheticKind, SyntheticPayload};
use cuzk_engine::sim::{Fault, SimBackend};
use cuzk_engine::{Engine, EngineConfig, JobId, JobState, Priority, Request};
use cuzk_groth16::backend::Backend;
use cuzk_groth16::conformance::{standard_shapes, Shape};

/// Two circuits, so residency and batching have something to choose between.
pub const SMALL: &str = "small";
pub const MEDIUM: &str = "medium";

/// The first and third of the conformance harness's standard shapes (5 and 60 constraints).
pub fn shapes() -> [(&'static str, Shape); 2] {
    let standard = standard_shapes();
    [(SMALL, standard[0]), (MEDIUM, standard[2])]
}

pub fn kind(dir: &Path) -> SyntheticKind {
    SyntheticKind::new(&dir.join("params"), &shapes(), true).unwrap()
}

pub fn registry(dir: &Path) -> Registry {
    Registry::new().with(kind(dir))
}

/// An engine config over `dir` with a simulated backend taking `delay` per partition.
pub fn config(dir: &Path, backend: Arc<dyn Backend>) -> EngineConfig {
    let mut cfg = EngineConfig::new(dir.join("store"), registry(dir), backend);
    cfg.budget_bytes = 1 << 30;
    cfg
}

pub fn sim(delay_ms: u64) -> Arc<SimBackend> {
    Arc::new(SimBackend::new(
        Duration::from_millis(delay_ms),
        Fault::None,
    ))
}

pub fn start(dir: &Path, delay_ms: u64) -> Engine {
    Engine::start(config(dir, sim(delay_ms))).unwrap()
}

pub fn request(id: &str, priority: Priority, circuit: &str, partitions: usize) -> Request {
    Request {
        request_id: id.into(),
        kind: SyntheticKind::NAME.into(),
        priority,
        payload: SyntheticPayload {
            circuit: circuit.into(),
            partitions,
            fail_partition: None,
        }
        .to_bytes(),
    }
}

/// Submits a synthetic job that must be accepted.
pub fn submit(
    engine: &Engine,
    id: &str,
    priority: Priority,
    circuit: &str,
    partitions: usize,
) -> JobId {
    engine
        .submit(request(id, priority, circuit, partitions))
        .unwrap()
}

/// Waits until `job` runs with at least `done` partitions proved.
pub fn wait_running(engine: &Engine, job: JobId, done: u32) {
    wait_until(
        "progress",
        || matches!(engine.job(job).unwrap().state, JobState::Running { done: d, .. } if d >= done),
    );
}

/// Polls `f` until it holds; panics after a generous minute (a hang, not a slow machine).
pub fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "gave up waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The scaled meter the budget tests use: tiny circuits weigh as if a million times larger.
pub const SCALE: Meter = Meter::Scaled(1_000_000);

/// An engine over `dir` under the scaled meter with `budget` bytes, the simulated backend
/// taking `delay_ms` per partition.
pub fn scaled(dir: &Path, delay_ms: u64, budget: u64) -> Engine {
    let mut cfg = config(dir, sim(delay_ms));
    cfg.meter = SCALE;
    cfg.budget_bytes = budget;
    Engine::start(cfg).unwrap()
}

/// What MEDIUM needs under the scaled meter (hot parameters + PCE + one unmeasured
/// partition), from the refusal a one-byte budget gives.
pub fn medium_needs(dir: &Path) -> u64 {
    let probe = scaled(dir, 0, 1).submit(request("probe", Priority::Normal, MEDIUM, 1));
    let Err(cuzk_engine::EngineError::NeverFits { needed, .. }) = probe else {
        panic!("a one-byte budget fits nothing: {probe:?}")
    };
    needed
}
