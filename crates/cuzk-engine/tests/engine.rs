//! The engine's behaviour through its public API, on synthetic circuits and a simulated
//! backend: proving, idempotency, typed errors, priorities, cancellation, verification with
//! CPU retry, residency tiers, batching, graceful restart and result expiry.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use cuzk_engine::kind::{CircuitId, SyntheticPayload};
use cuzk_engine::residency::Tier;
use cuzk_engine::sim::{Fault, SimBackend};
use cuzk_engine::{Engine, EngineError, JobState, Outcome, Priority, Request, Stage, Wait};

fn proof_of(outcome: Outcome) -> Vec<u8> {
    match outcome {
        Outcome::Succeeded { proof, .. } => proof,
        other => panic!("expected success, got {other:?}"),
    }
}

#[test]
fn proves_partitioned_jobs_and_every_proof_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 0);
    let a = submit(&engine, "a", Priority::Normal, SMALL, 3);
    let b = submit(&engine, "b", Priority::High, MEDIUM, 2);
    let check = kind(dir.path());
    let pa = proof_of(engine.await_job(a, Wait::Forever).unwrap());
    let pb = proof_of(engine.await_job(b, Wait::Forever).unwrap());
    assert_eq!((pa.len(), pb.len()), (3 * 192, 2 * 192));
    assert!(check.check(SMALL, &pa).unwrap());
    assert!(check.check(MEDIUM, &pb).unwrap());
    // A proof checked against the other circuit's key does not verify: the check is real.
    assert!(!check.check(MEDIUM, &pa[..192]).unwrap());
    let m = engine.metrics();
    assert_eq!(
        (m.jobs_succeeded, m.partitions_proved, m.verify_failures),
        (2, 5, 0)
    );
    assert!(engine
        .metrics()
        .to_prometheus()
        .contains("cuzk_jobs_succeeded_total 2"));
    let info = engine.job(a).unwrap();
    assert_eq!(info.state, JobState::Succeeded);
    assert!(info.timings.total_ms >= info.timings.queue_wait_ms);
}

#[test]
fn submit_is_idempotent_on_the_request_id() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 0);
    let req = request("same", Priority::Normal, SMALL, 1);
    let first = engine.submit(req.clone()).unwrap();
    assert_eq!(engine.submit(req.clone()).unwrap(), first);
    let mut other = req.clone();
    other.payload = request("x", Priority::Normal, SMALL, 2).payload;
    assert!(matches!(
        engine.submit(other),
        Err(EngineError::RequestIdReused { job, .. }) if job == first
    ));
    engine.await_job(first, Wait::Forever).unwrap();
    // Still the same job after it finished, until collected.
    assert_eq!(engine.submit(req.clone()).unwrap(), first);
    assert!(matches!(
        engine.collect(first),
        Ok(Outcome::Succeeded { .. })
    ));
    assert!(matches!(
        engine.collect(first),
        Err(EngineError::UnknownJob(_))
    ));
    let again = engine.submit(req).unwrap();
    assert_ne!(again, first);
    assert_eq!(engine.metrics().duplicate_submissions, 2);
}

#[test]
fn bad_input_gets_typed_errors_and_never_disturbs_accepted_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), sim(0));
    cfg.meter = SCALE;
    cfg.budget_bytes = 20_000_000_000; // fits SMALL (13.2 GB scaled), not MEDIUM
    let engine = Engine::start(cfg).unwrap();
    let ok = submit(&engine, "ok", Priority::Normal, SMALL, 2);

    let mut r = request("k", Priority::Normal, SMALL, 1);
    r.kind = "nope".into();
    assert!(matches!(engine.submit(r), Err(EngineError::UnknownKind(_))));
    let mut r = request("p", Priority::Normal, SMALL, 1);
    r.payload = b"{not json".to_vec();
    assert!(matches!(
        engine.submit(r),
        Err(EngineError::InvalidRequest(_))
    ));
    let r = request("z", Priority::Normal, SMALL, 0);
    assert!(matches!(
        engine.submit(r),
        Err(EngineError::InvalidRequest(_))
    ));
    let r = request("c", Priority::Normal, "unknown-circuit", 1);
    assert!(matches!(
        engine.submit(r),
        Err(EngineError::InvalidRequest(_))
    ));
    let r = request("big", Priority::Normal, MEDIUM, 1);
    assert!(matches!(
        engine.submit(r),
        Err(EngineError::NeverFits { .. })
    ));

    let ghost = cuzk_engine::JobId(999);
    assert!(matches!(
        engine.await_job(ghost, Duration::ZERO),
        Err(EngineError::UnknownJob(_))
    ));
    assert!(matches!(
        engine.cancel(ghost),
        Err(EngineError::UnknownJob(_))
    ));
    assert!(matches!(
        engine.collect(ghost),
        Err(EngineError::UnknownJob(_))
    ));
    assert!(matches!(engine.job(ghost), Err(EngineError::UnknownJob(_))));
    let nobody = CircuitId::from("nobody");
    assert!(matches!(
        engine.preload(&nobody),
        Err(EngineError::UnknownCircuit(_))
    ));
    assert!(matches!(
        engine.evict(&nobody),
        Err(EngineError::UnknownCircuit(_))
    ));

    assert!(matches!(
        engine.await_job(ok, Wait::Forever),
        Ok(Outcome::Succeeded { .. })
    ));
    assert!(matches!(
        engine.cancel(ok),
        Err(EngineError::AlreadyFinished(_))
    ));
    assert_eq!(engine.metrics().jobs_submitted, 1);
}

#[test]
fn a_failing_partition_fails_its_job_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 0);
    let mut r = request("f", Priority::Normal, SMALL, 3);
    r.payload = SyntheticPayload {
        circuit: SMALL.into(),
        partitions: 3,
        fail_partition: Some(1),
    }
    .to_bytes();
    let job = engine.submit(r).unwrap();
    match engine.await_job(job, Wait::Forever).unwrap() {
        Outcome::Failed { reason } => assert!(reason.contains("partition 1"), "{reason}"),
        other => panic!("{other:?}"),
    }
    wait_until("partitions released", || {
        engine.status().partitions_in_flight == 0
    });
    // The engine goes on serving.
    let next = submit(&engine, "n", Priority::Normal, SMALL, 1);
    proof_of(engine.await_job(next, Wait::Forever).unwrap());
}

#[test]
fn critical_work_overtakes_queued_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 40);
    let normal = submit(&engine, "n", Priority::Normal, SMALL, 8);
    let low = submit(&engine, "l", Priority::Low, SMALL, 1);
    wait_running(&engine, normal, 0);
    let critical = submit(&engine, "c", Priority::Critical, SMALL, 1);
    // Ahead of everything queued: first in the queue, or already taken by a CPU worker (it
    // need not wait for the look-ahead).
    let c = engine.job(critical).unwrap();
    assert!(
        c.state != JobState::Queued || c.queue_position == 0,
        "{c:?}"
    );
    proof_of(engine.await_job(critical, Wait::Forever).unwrap());
    // Critical needed one partition; normal had eight, low waits behind normal.
    assert!(matches!(
        engine.job(normal).unwrap().state,
        JobState::Running { .. }
    ));
    assert_eq!(engine.job(low).unwrap().state, JobState::Queued);
    proof_of(engine.await_job(normal, Wait::Forever).unwrap());
    proof_of(engine.await_job(low, Wait::Forever).unwrap());
}

/// A critical partition is made at once, past a full look-ahead of queued partitions, so it
/// waits only for the partition on the device (a WinningPoSt under 32 GiB sealing load waited
/// for the next one too: 3.9 s).
#[test]
fn critical_work_is_made_without_waiting_for_the_lookahead() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 500);
    let long = submit(&engine, "long", Priority::Normal, SMALL, 6);
    wait_running(&engine, long, 1);
    // The next partition is on the device and the look-ahead's one is made by now.
    std::thread::sleep(Duration::from_millis(100));
    let (_, submitted) = engine.trace(u64::MAX);
    let critical = submit(&engine, "c", Priority::Critical, SMALL, 1);
    proof_of(engine.await_job(critical, Wait::Forever).unwrap());
    let (spans, _) = engine.trace(0);
    let span = |job, stage| {
        spans
            .iter()
            .filter(move |s| s.job == job && s.stage == stage)
    };
    let made = span(critical, Stage::Synthesis).next().unwrap();
    // The long partition on the device when the critical one came (or the next to start).
    let on_device = span(long, Stage::Backend)
        .filter(|s| s.end_us > submitted)
        .min_by_key(|s| s.start_us)
        .unwrap();
    assert!(
        made.start_us < on_device.end_us,
        "made at {} µs, after the partition on the device ended at {} µs",
        made.start_us,
        on_device.end_us
    );
    // And proved right after it.
    let proved = span(critical, Stage::Backend).next().unwrap();
    assert!(!span(long, Stage::Backend)
        .any(|s| s.start_us > on_device.start_us && s.start_us < proved.start_us));
    proof_of(engine.await_job(long, Wait::Forever).unwrap());
}

/// A critical job cancelled before any of its partitions was admitted leaves no claims past
/// the look-ahead behind: the partitions made after it still wait for the device (each one
/// made early holds a partition's memory; 32 GiB PoRep ones are 14 GB).
#[test]
fn a_cancelled_critical_job_leaves_the_lookahead_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    // MEDIUM fits alone, not beside SMALL at work: the critical job waits at the head of the
    // queue until the long job's partitions in flight are done.
    let engine = scaled(dir.path(), 60, medium_needs(dir.path()));
    let long = submit(&engine, "long", Priority::Normal, SMALL, 14);
    wait_running(&engine, long, 1);
    let critical = submit(&engine, "c", Priority::Critical, MEDIUM, 8);
    let (_, cancelled) = engine.trace(u64::MAX);
    assert!(!engine.cancel(critical).unwrap(), "cancelled before it ran");
    proof_of(engine.await_job(long, Wait::Forever).unwrap());
    // Partitions made and not yet on the device, at most: the look-ahead's one, and one more
    // while the device takes it (the spans' ends and starts are stamped a little apart).
    let (spans, _) = engine.trace(0);
    let stamp = |k: u32, stage| {
        spans
            .iter()
            .find(|s| s.job == long && s.partition == k && s.stage == stage)
            .map(|s| (s.start_us, s.end_us))
            .unwrap()
    };
    let waits: Vec<(u64, u64)> = (0..14)
        .map(|k| (stamp(k, Stage::Synthesis).1, stamp(k, Stage::Backend).0))
        .collect();
    let most = waits
        .iter()
        .map(|&(made, _)| made)
        .filter(|&t| t > cancelled)
        .map(|t| waits.iter().filter(|&&(m, b)| m <= t && t < b).count())
        .max()
        .unwrap();
    assert!(most <= 2, "{most} partitions made ahead of the device");
}

#[test]
fn cancel_stops_queued_and_running_jobs_and_frees_their_memory() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 20);
    let running = submit(&engine, "r", Priority::Normal, SMALL, 50);
    let queued = submit(&engine, "q", Priority::Normal, MEDIUM, 3);
    wait_running(&engine, running, 1);
    assert!(!engine.cancel(queued).unwrap(), "never started");
    assert!(engine.cancel(running).unwrap(), "was running");
    assert_eq!(
        engine.await_job(running, Wait::Forever).unwrap(),
        Outcome::Cancelled
    );
    assert_eq!(
        engine.await_job(queued, Wait::Forever).unwrap(),
        Outcome::Cancelled
    );
    assert!(matches!(
        engine.cancel(running),
        Err(EngineError::AlreadyFinished(_))
    ));
    wait_until("in-flight partitions released", || {
        engine.status().partitions_in_flight == 0
    });
    let status = engine.status();
    let resident: u64 = status
        .resident
        .iter()
        .filter(|r| r.tier == Tier::Hot)
        .map(|r| r.size_bytes)
        .sum();
    assert_eq!(
        status.budget_used_bytes, resident,
        "only hot parameters stay charged"
    );
    assert!(status.resident.iter().all(|r| r.ref_count == 0));
    let m = engine.metrics();
    assert_eq!(m.jobs_cancelled, 2);
    assert!(m.partitions_proved < 50);
}

#[test]
fn wrong_proofs_are_caught_retried_on_the_cpu_and_counted() {
    for fault in [Fault::WrongProof, Fault::Error, Fault::Panic] {
        let dir = tempfile::tempdir().unwrap();
        let backend = Arc::new(SimBackend::new(Duration::ZERO, fault));
        let engine = Engine::start(config(dir.path(), backend)).unwrap();
        let job = submit(&engine, "w", Priority::Normal, MEDIUM, 2);
        let proof = proof_of(engine.await_job(job, Wait::Forever).unwrap());
        assert!(kind(dir.path()).check(MEDIUM, &proof).unwrap(), "{fault:?}");
        let m = engine.metrics();
        assert_eq!(
            (m.verify_failures, m.cpu_retries, m.cpu_retry_successes),
            (2, 2, 2),
            "{fault:?}"
        );
        // Charged to the device that failed; the CPU retries prove nothing for it.
        let [dev] = &m.devices[..] else {
            panic!("one device: {:?}", m.devices)
        };
        assert_eq!(
            (dev.verify_failures, dev.partitions_proved),
            (2, 0),
            "{fault:?}"
        );
    }
}

/// A backend that fails at random, half of its calls, in every way it can: each job still ends
/// with a valid proof (the CPU reference re-proves what failed) and the engine keeps serving.
#[test]
fn a_randomly_failing_backend_is_covered_by_cpu_retries() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Arc::new(SimBackend::new(
        Duration::ZERO,
        Fault::Random { percent: 50 },
    ));
    let engine = Engine::start(config(dir.path(), backend.clone())).unwrap();
    let jobs: Vec<_> = (0..12)
        .map(|i| submit(&engine, &format!("r{i}"), Priority::Normal, SMALL, 2))
        .collect();
    for job in jobs {
        let proof = proof_of(engine.await_job(job, Wait::Forever).unwrap());
        assert!(kind(dir.path()).check(SMALL, &proof).unwrap());
    }
    let m = engine.metrics();
    assert!(backend.calls() >= 12, "{} calls", backend.calls());
    assert_eq!(m.cpu_retries, m.cpu_retry_successes);
    assert_eq!(m.jobs_succeeded, 12);
    // Every partition is proved by the device or, once it failed, by the CPU retry.
    let dev = &m.devices[0];
    assert_eq!(dev.verify_failures, m.verify_failures);
    assert_eq!(dev.partitions_proved + m.cpu_retry_successes, 24);
}

#[test]
fn a_job_interrupted_by_too_many_restarts_fails_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 50);
    let job = submit(&engine, "p", Priority::Normal, SMALL, 20);
    wait_running(&engine, job, 0);
    engine.halt();
    let mut cfg = config(dir.path(), sim(0));
    cfg.max_restarts = 0;
    let engine = Engine::start(cfg).unwrap();
    match engine.await_job(job, Wait::Forever).unwrap() {
        Outcome::Failed { reason } => assert!(reason.contains("1 engine restarts"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn residency_tiers_lru_eviction_preload_and_evict() {
    let dir = tempfile::tempdir().unwrap();
    // Room for MEDIUM at work, not for SMALL staying hot beside it.
    let budget = medium_needs(dir.path());
    let engine = scaled(dir.path(), 0, budget);
    let (small, medium) = (CircuitId::from(SMALL), CircuitId::from(MEDIUM));
    let tier = |c: &CircuitId| {
        engine
            .status()
            .resident
            .into_iter()
            .find(|r| &r.circuit == c)
            .map(|r| r.tier)
    };
    assert_eq!(tier(&small), None);
    let first = engine.preload(&small).unwrap();
    assert!(!first.already_loaded);
    assert!(engine.preload(&small).unwrap().already_loaded);
    assert_eq!(tier(&small), Some(Tier::Hot));
    let job = submit(&engine, "m", Priority::Normal, MEDIUM, 2);
    proof_of(engine.await_job(job, Wait::Forever).unwrap());
    let status = engine.status();
    assert_eq!(
        (tier(&small), tier(&medium)),
        (Some(Tier::Warm), Some(Tier::Hot)),
        "LRU demotes the idle circuit to make room: {status:?}"
    );
    assert!(engine.metrics().evictions >= 1);
    let report = engine.evict(&medium).unwrap();
    assert!(report.was_loaded && report.freed_bytes > 0);
    assert_eq!(tier(&medium), Some(Tier::Cold));
    assert!(!engine.evict(&medium).unwrap().was_loaded);
    assert_eq!(engine.status().budget_used_bytes, 0);
    assert!(engine.metrics().budget_peak_bytes <= budget);
    // Cold circuits come back on use.
    let job = submit(&engine, "m2", Priority::Normal, MEDIUM, 1);
    proof_of(engine.await_job(job, Wait::Forever).unwrap());
    assert_eq!(tier(&medium), Some(Tier::Hot));
}

#[test]
fn a_circuit_in_use_is_never_evicted() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 100);
    let job = submit(&engine, "u", Priority::Normal, SMALL, 3);
    wait_running(&engine, job, 0);
    assert!(matches!(
        engine.evict(&CircuitId::from(SMALL)),
        Err(EngineError::InUse(_))
    ));
    proof_of(engine.await_job(job, Wait::Forever).unwrap());
    assert!(engine.evict(&CircuitId::from(SMALL)).unwrap().was_loaded);
}

#[test]
fn same_circuit_partitions_are_batched_into_one_backend_call() {
    let dir = tempfile::tempdir().unwrap();
    let backend = sim(30);
    let mut cfg = config(dir.path(), backend.clone());
    cfg.max_batch = 4;
    cfg.lookahead = 4;
    let engine = Engine::start(cfg).unwrap();
    let job = submit(&engine, "b", Priority::Normal, SMALL, 12);
    let proof = proof_of(engine.await_job(job, Wait::Forever).unwrap());
    assert!(kind(dir.path()).check(SMALL, &proof).unwrap());
    let batches = backend.batches();
    assert_eq!(batches.iter().sum::<usize>(), 12);
    assert!(batches.iter().any(|&b| b > 1), "{batches:?}");
    assert!(batches.iter().all(|&b| b <= 4), "{batches:?}");
    assert_eq!(engine.metrics().backend_calls, batches.len() as u64);
}

#[test]
fn shutdown_keeps_unfinished_jobs_and_a_restart_finishes_them() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 20);
    let job = submit(&engine, "s", Priority::Normal, SMALL, 30);
    let done = submit(&engine, "d", Priority::High, SMALL, 1);
    engine.await_job(done, Wait::Forever).unwrap();
    wait_running(&engine, job, 1);
    engine.shutdown();

    let engine = start(dir.path(), 0);
    let m = engine.metrics();
    assert_eq!(m.jobs_recovered, 1);
    // The finished job's result survives the restart.
    assert_eq!(
        proof_of(engine.await_job(done, Wait::Forever).unwrap()).len(),
        192
    );
    let proof = proof_of(engine.await_job(job, Wait::Forever).unwrap());
    assert!(kind(dir.path()).check(SMALL, &proof).unwrap());
    // Partitions proved before the shutdown were not proved again.
    assert!(engine.metrics().partitions_proved < 30);
}

#[test]
fn uncollected_results_expire() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), sim(0));
    cfg.result_ttl = Duration::ZERO;
    let engine = Engine::start(cfg).unwrap();
    let job = submit(&engine, "e", Priority::Normal, SMALL, 1);
    wait_until("expiry", || {
        matches!(engine.job(job), Err(EngineError::UnknownJob(_)))
    });
    let again: Request = request("e", Priority::Normal, SMALL, 1);
    assert_ne!(
        engine.submit(again).unwrap(),
        job,
        "the request id was freed"
    );
}

#[test]
fn trace_queue_depth_and_stage_histograms_describe_the_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let engine = start(dir.path(), 20);
    let a = submit(&engine, "a", Priority::Normal, SMALL, 2);
    let queued = submit(&engine, "q", Priority::Low, MEDIUM, 1);
    let m = engine.metrics();
    let depth: u32 = m.queues.iter().map(|q| q.pending + q.running).sum();
    assert_eq!(depth, 2);
    assert!(m
        .queues
        .iter()
        .any(|q| q.priority == Priority::Low && q.pending + q.running == 1));
    engine.await_job(a, Wait::Forever).unwrap();
    engine.await_job(queued, Wait::Forever).unwrap();

    // Every partition has a synthesis, a backend and a verify span, in pipeline order.
    let (spans, now) = engine.trace(0);
    for (job, partition) in [(a, 0), (a, 1), (queued, 0)] {
        let of = |stage: Stage| {
            spans
                .iter()
                .find(|s| s.job == job && s.partition == partition && s.stage == stage)
                .unwrap_or_else(|| panic!("no {stage:?} span for {job} #{partition}"))
                .clone()
        };
        let (s, b, v) = (of(Stage::Synthesis), of(Stage::Backend), of(Stage::Verify));
        assert!(s.end_us <= b.start_us && b.end_us <= v.start_us && v.end_us <= now);
    }
    assert!(spans.windows(2).all(|w| w[0].end_us <= w[1].end_us));
    let last = spans.last().unwrap().end_us;
    assert_eq!(engine.trace(last + 1).0, vec![]);

    let m = engine.metrics();
    let total = m.stages.iter().find(|h| h.stage == "total").unwrap();
    assert_eq!(total.counts.iter().sum::<u64>(), 2);
    let text = m.to_prometheus();
    for line in [
        "cuzk_job_stage_seconds_count{stage=\"backend\"} 2",
        "cuzk_job_stage_seconds_bucket{stage=\"total\",le=\"+Inf\"} 2",
        "cuzk_queue_jobs{kind=\"synthetic\",priority=\"Low\",state=\"pending\"} 0",
        "cuzk_circuit_bytes{circuit=\"small\",tier=\"Hot\"}",
        "cuzk_backend_busy_ratio ",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
}

/// With `recycle_bytes`, finished witnesses' vectors are kept for the next partitions (within
/// the limit, which the budget gives up), and stopping the engine frees them. The only test in
/// this binary that sets the process-wide limit.
#[test]
fn finished_witnesses_are_recycled_within_the_reserved_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path(), sim(0));
    cfg.recycle_bytes = 64 << 20;
    let engine = Engine::start(cfg).unwrap();
    assert_eq!(engine.status().budget_limit_bytes, (1 << 30) - (64 << 20));
    let job = submit(&engine, "r", Priority::Normal, SMALL, 3);
    proof_of(engine.await_job(job, Wait::Forever).unwrap());
    let held = cuzk_groth16::memory::recycled_bytes();
    assert!(held > 0 && held <= 64 << 20, "{held}");
    engine.shutdown();
    assert_eq!(cuzk_groth16::memory::recycled_bytes(), 0);

    let mut cfg = config(dir.path(), sim(0));
    cfg.recycle_bytes = 2 << 30;
    assert!(matches!(Engine::start(cfg), Err(EngineError::Start(_))));
}

#[test]
fn evicting_a_circuit_releases_the_devices_that_hold_it() {
    let dir = tempfile::tempdir().unwrap();
    let backend = sim(0);
    let engine = Engine::start(config(dir.path(), backend.clone())).unwrap();
    let small = CircuitId::from(SMALL);
    let job = submit(&engine, "s", Priority::Normal, SMALL, 1);
    proof_of(engine.await_job(job, Wait::Forever).unwrap());
    let resident = || engine.status().backends[0].resident.clone();
    assert_eq!(resident(), std::slice::from_ref(&small));
    // A circuit loaded but not on the device: nothing to release there.
    let medium = CircuitId::from(MEDIUM);
    engine.preload(&medium).unwrap();
    assert!(engine.evict(&medium).unwrap().was_loaded);
    assert_eq!((backend.releases(), resident()), (0, vec![small.clone()]));
    engine.evict(&small).unwrap();
    assert_eq!((backend.releases(), resident()), (1, vec![]));
    // The next job uploads again.
    let job = submit(&engine, "s2", Priority::Normal, SMALL, 1);
    proof_of(engine.await_job(job, Wait::Forever).unwrap());
    assert_eq!(resident(), std::slice::from_ref(&small));
    // A circuit the ledger counts as displaced may still be held by the backend (a GPU
    // frees by the memory it finds free, not by the ledger's estimate): released all the same.
    let job = submit(&engine, "m", Priority::Normal, MEDIUM, 1);
    proof_of(engine.await_job(job, Wait::Forever).unwrap());
    assert_eq!(resident(), std::slice::from_ref(&medium));
    engine.evict(&small).unwrap();
    assert_eq!(backend.releases(), 2);
    engine.evict(&small).unwrap();
    assert_eq!(backend.releases(), 2, "released once per placement");
}

/// A circuit whose spec asks for fixed-base tables gets them when it goes hot under a host
/// backend, charged with its key (exactly the planned bytes), and the CPU backend proves
/// through them.
#[test]
fn fixed_base_tables_are_charged_with_the_key() {
    use cuzk_engine::kind::{Registry, SyntheticKind};
    use cuzk_engine::EngineConfig;
    use cuzk_groth16::backend::CpuBackend;
    use cuzk_groth16::msm::Tables;
    use cuzk_groth16::params::{ProvingKey, Validation};
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params");
    // 3,000 constraints: every query but the inputs' has hundreds of bases or more.
    let big = [("big", cuzk_groth16::conformance::standard_shapes()[5])];
    let kind = || {
        SyntheticKind::new(&params, &big, true)
            .unwrap()
            .with_tables()
    };
    let id = CircuitId::from("big");
    let hot_size = |tables: u64| {
        let store = dir.path().join(format!("store-{tables}"));
        let mut cfg = EngineConfig::new(store, Registry::new().with(kind()), Arc::new(CpuBackend));
        cfg.tables_bytes = tables;
        let engine = Engine::start(cfg).unwrap();
        let job = engine
            .submit(Request {
                request_id: "t".into(),
                kind: SyntheticKind::NAME.into(),
                priority: Priority::Normal,
                payload: SyntheticPayload {
                    circuit: "big".into(),
                    partitions: 2,
                    fail_partition: None,
                }
                .to_bytes(),
            })
            .unwrap();
        let proof = proof_of(engine.await_job(job, Wait::Forever).unwrap());
        assert!(kind().check("big", &proof).unwrap());
        let status = engine.status();
        let entry = status.resident.iter().find(|r| r.circuit == id).unwrap();
        assert_eq!(entry.tier, Tier::Hot);
        let size = entry.size_bytes;
        engine.shutdown();
        size
    };
    let without = hot_size(0);
    let limit = 256 << 20;
    let with = hot_size(limit);
    let pk = ProvingKey::read(params.join("cuzk-synthetic-big.params"), Validation::Full).unwrap();
    let (picked, bytes) = Tables::plan(pk.lengths(), limit);
    assert!(picked[0] && bytes > 0, "{picked:?}");
    assert_eq!(with - without, bytes);
}

/// Bench only (a 32 GiB WindowPoSt key is larger than the device machine's disk): with seeded
/// keys, a circuit whose `.params` file is missing gets, in memory, the key the same seed
/// writes, and its `.vk` beside the missing file; its proofs verify under the written key.
/// Without them, a missing file is a typed refusal.
#[test]
fn seeded_keys_are_made_in_memory_where_the_parameter_file_is_missing() {
    use cuzk_engine::kind::SyntheticKind;
    use cuzk_engine::SeededKeys;
    use cuzk_groth16::generator::CpuFixedBase;
    use cuzk_groth16::params::{ProvingKey, Validation, VerifyingKey};

    let dir = tempfile::tempdir().unwrap();
    let params = dir
        .path()
        .join("params")
        .join(format!("cuzk-synthetic-{SMALL}.params"));
    let vk = params.with_extension("vk");
    // Each config writes the parameter files its kind lacks; they go before the engine starts.
    let without_file = |seeded: Option<SeededKeys>| {
        let mut cfg = config(dir.path(), sim(0));
        let file = std::fs::read(&params).unwrap();
        std::fs::remove_file(&params).unwrap();
        cfg.seeded_keys = seeded;
        (Engine::start(cfg).unwrap(), file)
    };

    let (engine, _) = without_file(None);
    let err = engine
        .submit(request("plain", Priority::Normal, SMALL, 1))
        .unwrap_err();
    assert!(
        matches!(&err, EngineError::Load { reason, .. } if reason.contains("no parameters")),
        "{err}"
    );
    assert!(!vk.exists());
    engine.shutdown();

    let seeded = SeededKeys::new(SyntheticKind::seed(SMALL), Arc::new(CpuFixedBase));
    let (engine, file) = without_file(Some(seeded));
    let job = submit(&engine, "seeded", Priority::Normal, SMALL, 2);
    let proof = proof_of(engine.await_job(job, Wait::Forever).unwrap());
    engine.shutdown();
    assert!(!params.exists(), "the key stays in memory");
    let written = ProvingKey::from_bytes(file.clone(), Validation::Full).unwrap();
    assert_eq!(
        VerifyingKey::read(&vk).unwrap().to_bytes(),
        written.vk.to_bytes(),
        "the seed's key is the one written for it"
    );
    std::fs::write(&params, file).unwrap();
    assert!(kind(dir.path()).check(SMALL, &proof).unwrap());
}
