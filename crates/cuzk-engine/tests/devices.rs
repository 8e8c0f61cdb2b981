//! Engines over several simulated devices (`SimBackend` with a device memory limit): every
//! partition is proved on exactly one device, only on a device that accepts its kind and has
//! the memory for it, each device's memory is accounted on its own and never exceeded, and
//! idle devices take queued work. Which device may take what is property-tested on
//! `device::pick` itself, where it is deterministic.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use cuzk_engine::kind::{CircuitId, SyntheticKind};
use cuzk_engine::sim::{Fault, SimBackend};
use cuzk_engine::{DeviceSlot, Engine, EngineConfig, EngineError, Outcome, Priority, Stage, Wait};
use cuzk_groth16::backend::Footprint;
use cuzk_groth16::params::{ProvingKey, Validation};
use proptest::prelude::*;

/// Device footprints are scaled like this, so the tiny circuits weigh like real ones.
const DEVICE_SCALE: u64 = 1000;

fn footprint(dir: &std::path::Path, circuit: &str) -> Footprint {
    let spec = registry(dir).circuit(&CircuitId::from(circuit)).unwrap();
    let f = Footprint::uploaded(
        &ProvingKey::read(&spec.params, Validation::Trusted).unwrap(),
        0,
        0,
    );
    Footprint {
        resident: f.resident * DEVICE_SCALE,
        per_proof: f.per_proof * DEVICE_SCALE,
    }
}

/// A simulated device: `big` ones hold MEDIUM with room for two proofs per call, small ones
/// only SMALL; `accepts` says whether it takes the synthetic kind at all.
#[derive(Clone, Copy, Debug)]
struct Dev {
    big: bool,
    accepts: bool,
}

impl Dev {
    /// Holds MEDIUM, takes every kind.
    const ANY: Dev = Dev {
        big: true,
        accepts: true,
    };
}

struct Devices {
    sims: Vec<Arc<SimBackend>>,
    limits: Vec<u64>,
    config: EngineConfig,
}

fn devices(dir: &std::path::Path, devs: &[Dev], delay_ms: u64) -> Devices {
    let (small, medium) = (footprint(dir, SMALL), footprint(dir, MEDIUM));
    assert!(medium.call(1) > small.call(1), "MEDIUM must be the larger");
    let mut sims = Vec::new();
    let mut limits = Vec::new();
    let mut slots = Vec::new();
    for (i, d) in devs.iter().enumerate() {
        let limit = if d.big {
            medium.call(2)
        } else {
            small.call(1).max(medium.call(1) - 1)
        };
        let sim = Arc::new(
            SimBackend::new(Duration::from_millis(delay_ms), Fault::None)
                .with_memory(limit, DEVICE_SCALE),
        );
        let kinds = if d.accepts {
            vec![SyntheticKind::NAME]
        } else {
            vec!["winning-post"]
        };
        slots.push(DeviceSlot::new(format!("sim{i}"), sim.clone()).only(kinds));
        sims.push(sim);
        limits.push(limit);
    }
    let mut config = config(dir, sims[0].clone());
    config.devices = slots;
    Devices {
        sims,
        limits,
        config,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    #[test]
    fn partitions_run_once_where_they_fit_and_device_memory_holds(
        mut devs in prop::collection::vec(
            (any::<bool>(), prop::bool::weighted(0.8)).prop_map(|(big, accepts)| Dev { big, accepts }),
            1..4,
        ),
        jobs in prop::collection::vec(
            (any::<bool>(), 1usize..4, prop::sample::select(Priority::ALL.to_vec())),
            1..7,
        ),
        batch in 1usize..5,
        lookahead in 0usize..5,
    ) {
        devs[0] = Dev::ANY; // someone can prove everything
        let dir = tempfile::tempdir().unwrap();
        let mut d = devices(dir.path(), &devs, 5);
        d.config.cpu_workers = 2;
        d.config.max_batch = batch;
        d.config.lookahead = lookahead;
        let engine = Engine::start(d.config).unwrap();
        let mut ids = Vec::new();
        for (i, &(medium, partitions, priority)) in jobs.iter().enumerate() {
            let circuit = if medium { MEDIUM } else { SMALL };
            ids.push(submit(&engine, &format!("j{i}"), priority, circuit, partitions));
        }
        for (id, &(medium, partitions, _)) in ids.iter().zip(&jobs) {
            match engine.await_job(*id, Wait::Forever).unwrap() {
                Outcome::Succeeded { proof, .. } => {
                    let circuit = if medium { MEDIUM } else { SMALL };
                    prop_assert!(kind(dir.path()).check(circuit, &proof).unwrap());
                    prop_assert_eq!(proof.len(), 192 * partitions);
                }
                other => prop_assert!(false, "{other:?}"),
            }
        }
        // Every partition on exactly one device, and only where it may run.
        let (spans, _) = engine.trace(0);
        let mut placed: HashMap<(u64, u32), Vec<u32>> = HashMap::new();
        for s in spans.iter().filter(|s| s.stage == Stage::Backend) {
            placed.entry((s.job.0, s.partition)).or_default().push(s.worker);
        }
        for (id, &(medium, partitions, _)) in ids.iter().zip(&jobs) {
            for p in 0..partitions as u32 {
                let on = placed.get(&(id.0, p)).cloned().unwrap_or_default();
                prop_assert_eq!(on.len(), 1, "job {} partition {} ran on {:?}", id, p, on);
                let dev = devs[on[0] as usize];
                prop_assert!(dev.accepts, "on a device that does not take the kind");
                prop_assert!(dev.big || !medium, "MEDIUM on a device too small for it");
            }
        }
        // Per-device metrics say the same: partitions and calls by device.
        let m = engine.metrics();
        prop_assert_eq!(m.devices.len(), devs.len());
        let mut per_device = vec![0u64; devs.len()];
        for on in placed.values() {
            per_device[on[0] as usize] += 1;
        }
        for (i, (dm, sim)) in m.devices.iter().zip(&d.sims).enumerate() {
            prop_assert_eq!(&dm.device, &format!("sim{i}"));
            prop_assert_eq!(dm.partitions_proved, per_device[i]);
            prop_assert_eq!(dm.backend_calls, sim.calls());
            prop_assert_eq!(dm.verify_failures, 0);
        }
        prop_assert_eq!(m.devices.iter().map(|d| d.backend_calls).sum::<u64>(), m.backend_calls);
        let text = m.to_prometheus();
        for (i, n) in per_device.iter().enumerate() {
            let line = format!("cuzk_device_partitions_proved_total{{device=\"sim{i}\"}} {n}");
            prop_assert!(text.lines().any(|l| l == line), "no line {}", line);
        }
        // Each device's own account: what it was given never exceeded its memory.
        let status = engine.status();
        prop_assert_eq!(status.backends.len(), devs.len());
        for ((b, sim), limit) in status.backends.iter().zip(&d.sims).zip(&d.limits) {
            prop_assert_eq!(b.memory_limit_bytes, Some(*limit));
            prop_assert!(b.memory_peak_bytes <= *limit, "{:?}", b);
            prop_assert!(sim.largest_call() <= *limit);
            prop_assert_eq!(b.memory_used_bytes, b.resident.iter().map(|c| {
                footprint(dir.path(), &c.0).resident
            }).sum::<u64>());
        }
        engine.shutdown();
    }
}

#[test]
fn idle_devices_take_queued_work() {
    let dir = tempfile::tempdir().unwrap();
    let devs = [Dev::ANY; 2];
    // Each call takes 400 ms; the second partition is ready within milliseconds of the first,
    // while the first device is still busy, so the second device must take it.
    let mut d = devices(dir.path(), &devs, 400);
    d.config.cpu_workers = 2;
    let engine = Engine::start(d.config).unwrap();
    let job = submit(&engine, "two", Priority::Normal, SMALL, 2);
    assert!(matches!(
        engine.await_job(job, Wait::Forever).unwrap(),
        Outcome::Succeeded { .. }
    ));
    assert_eq!(d.sims.iter().map(|s| s.calls()).collect::<Vec<_>>(), [1, 1]);
}

#[test]
fn work_no_device_can_take_is_refused_at_submission() {
    let dir = tempfile::tempdir().unwrap();
    let small_only = [Dev {
        big: false,
        ..Dev::ANY
    }];
    let engine = Engine::start(devices(dir.path(), &small_only, 0).config).unwrap();
    submit(&engine, "fits", Priority::Normal, SMALL, 1);
    match engine.submit(request("too-big", Priority::Normal, MEDIUM, 1)) {
        Err(EngineError::NoDevice { reason, .. }) => {
            assert!(
                reason.contains("sim0") && reason.contains("device memory"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    engine.shutdown();

    let dir = tempfile::tempdir().unwrap();
    let other_kind = [Dev {
        accepts: false,
        ..Dev::ANY
    }];
    let engine = Engine::start(devices(dir.path(), &other_kind, 0).config).unwrap();
    match engine.submit(request("no-kind", Priority::Normal, SMALL, 1)) {
        Err(EngineError::NoDevice { reason, .. }) => {
            assert!(reason.contains("takes only"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}
