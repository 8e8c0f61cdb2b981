//! Engine benchmarks (plain binary; figures go to docs/PERFORMANCE.md).
//!
//! `cargo bench -p cuzk-engine --bench engine -- sim`: backend busy share with simulated
//! devices (a fixed delay per partition) fed by CPU workers synthesising small circuits, i.e.
//! whether the pipeline keeps one device, or 2 or 4 of them, busy when CPU production keeps up.
//! A few seconds.
//!
//! `cargo bench -p cuzk-engine --bench engine -- porep`: eight 2 KiB PoRep C2 jobs on the CPU
//! backend, (a) one by one on a fresh engine each (like one process per proof), (b) one by one
//! on one engine, (c) all eight submitted at once (`porep-fresh`, `porep-warm`,
//! `porep-concurrent` run one of them), with `lookahead` 0 (`CUZK_BENCH_LOOKAHEAD` changes it). Needs the 2 KiB parameters in
//! `$FIL_PROOFS_PARAMETER_CACHE` (`cuzk paramgen porep --sector-size 2KiB`). About 8 minutes
//! on 2 cores.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk_engine::kind::{CircuitId, PorepKind, Registry, SyntheticKind, SyntheticPayload};
use cuzk_engine::sim::{Fault, SimBackend};
use cuzk_engine::{
    DeviceSlot, Engine, EngineConfig, JobId, Outcome, Priority, Request, Timings, Wait,
};
use cuzk_groth16::backend::{Backend, CpuBackend};
use cuzk_groth16::conformance::Shape;

/// Submits all, awaits all; the wall time and each job's timings.
fn run_all(engine: &Engine, requests: Vec<Request>) -> (Duration, Vec<Timings>) {
    let t = Instant::now();
    let ids: Vec<JobId> = requests
        .into_iter()
        .map(|r| engine.submit(r).expect("submit"))
        .collect();
    let timings = ids
        .into_iter()
        .map(
            |id| match engine.await_job(id, Wait::Forever).expect("await") {
                Outcome::Succeeded { timings, .. } => timings,
                other => panic!("{id}: {other:?}"),
            },
        )
        .collect();
    (t.elapsed(), timings)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn sim() {
    let shape = Shape {
        inputs: 3,
        free_aux: 10,
        constraints: 60,
        max_terms: 4,
        zero_witness: false,
        b_only_one: false,
    };
    let shapes = [
        ("a", shape),
        (
            "b",
            Shape {
                constraints: 200,
                ..shape
            },
        ),
    ];
    for (delay_ms, cpu_workers, devices) in [
        (20u64, 1usize, 1usize),
        (20, 2, 1),
        (2, 1, 1),
        (50, 2, 1),
        (50, 2, 2),
        (50, 2, 4),
    ] {
        let mut busy = Vec::new();
        let mut walls = Vec::new();
        for rep in 0..3 {
            let dir = tempfile::tempdir().expect("tempdir");
            let kind = SyntheticKind::new(&dir.path().join("params"), &shapes, true).expect("kind");
            let sim = || -> Arc<dyn Backend> {
                Arc::new(SimBackend::new(
                    Duration::from_millis(delay_ms),
                    Fault::None,
                ))
            };
            let mut cfg =
                EngineConfig::new(dir.path().join("store"), Registry::new().with(kind), sim());
            cfg.devices = (0..devices)
                .map(|i| DeviceSlot::new(format!("sim{i}"), sim()))
                .collect();
            cfg.cpu_workers = cpu_workers;
            cfg.lookahead = 2;
            let engine = Engine::start(cfg).expect("start");
            for c in ["a", "b"] {
                engine.preload(&CircuitId::from(c)).expect("preload");
            }
            let requests = (0..8)
                .map(|i| Request {
                    request_id: format!("r{rep}-{i}"),
                    kind: SyntheticKind::NAME.into(),
                    priority: Priority::ALL[i % 4],
                    payload: SyntheticPayload {
                        circuit: if i % 2 == 0 { "a" } else { "b" }.into(),
                        partitions: 6,
                        fail_partition: None,
                    }
                    .to_bytes(),
                })
                .collect();
            let (wall, _) = run_all(&engine, requests);
            let m = engine.metrics();
            busy.push(m.backend_busy_ns as f64 / (wall.as_nanos() as f64 * devices as f64));
            walls.push(wall.as_secs_f64() * 1e3);
            println!(
                "sim delay_ms={delay_ms} cpu_workers={cpu_workers} devices={devices} rep={rep} partitions={} wall_ms={} backend_busy_ms={} busy={:.4}",
                m.partitions_proved,
                wall.as_millis(),
                m.backend_busy_ns / 1_000_000,
                busy[rep]
            );
        }
        println!(
            "sim delay_ms={delay_ms} cpu_workers={cpu_workers} devices={devices} median_busy={:.4} median_wall_ms={:.0}",
            median(busy),
            median(walls)
        );
    }
}

fn porep(modes: &[String]) {
    let params = PathBuf::from(
        std::env::var_os("FIL_PROOFS_PARAMETER_CACHE").expect("FIL_PROOFS_PARAMETER_CACHE"),
    );
    let c1 = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/porep/2KiB/c1.json"),
    )
    .expect("2 KiB fixture");
    let jobs = 8;
    let requests = |tag: &str| -> Vec<Request> {
        (0..jobs)
            .map(|i| Request {
                request_id: format!("{tag}-{i}"),
                kind: PorepKind::NAME.into(),
                priority: Priority::Normal,
                payload: c1.clone(),
            })
            .collect()
    };
    let backend: Arc<dyn Backend> = Arc::new(CpuBackend);
    let lookahead =
        std::env::var("CUZK_BENCH_LOOKAHEAD").map_or(0, |v| v.parse().expect("a number"));
    let engine = |store: &Path| {
        let registry = Registry::new().with(PorepKind::new(&params, true));
        let mut cfg = EngineConfig::new(store, registry, backend.clone());
        // The CPU backend uses every core: synthesising ahead would only slow it down.
        cfg.lookahead = lookahead;
        Engine::start(cfg).expect("start")
    };
    let report = |what: &str, wall: Duration, t: &[Timings]| {
        let mean = |f: fn(&Timings) -> u64| t.iter().map(f).sum::<u64>() / t.len() as u64;
        println!(
            "porep 2KiB {what}: jobs={jobs} wall_s={:.1} proofs_per_min={:.3} mean_ms: load={} synthesis={} backend={} queue={} total={}",
            wall.as_secs_f64(),
            jobs as f64 * 60.0 / wall.as_secs_f64(),
            mean(|t| t.srs_load_ms),
            mean(|t| t.synthesis_ms),
            mean(|t| t.backend_ms),
            mean(|t| t.queue_wait_ms),
            mean(|t| t.total_ms),
        );
        wall
    };
    let selected = |mode: &str| modes.iter().any(|m| m == "porep" || m == mode);

    if selected("porep-fresh") {
        let t = Instant::now();
        let mut timings = Vec::new();
        for (i, r) in requests("fresh").into_iter().enumerate() {
            let dir = tempfile::tempdir().expect("tempdir");
            let e = engine(&dir.path().join(i.to_string()));
            timings.extend(run_all(&e, vec![r]).1);
            e.shutdown();
        }
        report("one by one, fresh engine per job", t.elapsed(), &timings);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    if selected("porep-warm") {
        let e = engine(&dir.path().join("warm"));
        let t = Instant::now();
        let mut timings = Vec::new();
        for r in requests("warm") {
            timings.extend(run_all(&e, vec![r]).1);
        }
        report("one by one, one engine", t.elapsed(), &timings);
    }
    if selected("porep-concurrent") {
        let e = engine(&dir.path().join("concurrent"));
        let (wall, timings) = run_all(&e, requests("concurrent"));
        report("8 concurrent, one engine", wall, &timings);
        let m = e.metrics();
        println!(
            "porep 2KiB concurrent: backend_busy={:.3} budget_peak_bytes={} verify_failures={}",
            m.backend_busy_ns as f64 / wall.as_nanos() as f64,
            m.budget_peak_bytes,
            m.verify_failures
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; any other word selects a benchmark.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if args.is_empty() || args.iter().any(|a| a == "sim") {
        sim();
    }
    if args.iter().any(|a| a.starts_with("porep")) {
        porep(&args);
    }
}
