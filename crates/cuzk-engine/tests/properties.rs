//! Property tests of the whole engine over random workloads, with the simulated backend and the
//! scaled (simulated) memory meter: the budget is never exceeded, every job ends exactly once
//! and as its request implies, cancelling frees what a job held, and no accepted job is lost
//! across a simulated crash. Priority order is property-tested on the scheduler itself
//! (`scheduler::tests`), where it is deterministic.

mod common;

use std::sync::OnceLock;
use std::time::Duration;

use common::*;
use cuzk_engine::kind::SyntheticPayload;
use cuzk_engine::residency::Tier;
use cuzk_engine::{Engine, EngineError, JobId, Outcome, Priority, Request, Wait};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Job {
    medium: bool,
    partitions: usize,
    priority: Priority,
    fail: Option<usize>,
    cancel: bool,
}

fn job() -> impl Strategy<Value = Job> {
    (
        any::<bool>(),
        1usize..5,
        prop::sample::select(Priority::ALL.to_vec()),
        prop::option::weighted(0.2, 0usize..5),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(medium, partitions, priority, fail, cancel)| Job {
            medium,
            partitions,
            priority,
            fail,
            cancel,
        })
}

impl Job {
    fn request(&self, id: usize) -> Request {
        let circuit = if self.medium { MEDIUM } else { SMALL };
        let mut r = request(&format!("r{id}"), self.priority, circuit, self.partitions);
        r.payload = SyntheticPayload {
            circuit: circuit.into(),
            partitions: self.partitions,
            fail_partition: self.fail,
        }
        .to_bytes();
        r
    }

    fn fails(&self) -> bool {
        self.fail.is_some_and(|k| k < self.partitions)
    }
}

/// Scaled bytes MEDIUM needs to run at all (learned from the engine's own refusal).
fn medium_needs() -> u64 {
    static NEEDS: OnceLock<u64> = OnceLock::new();
    *NEEDS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path(), 1, 1, 1, 0, 1);
        match engine.submit(request("probe", Priority::Normal, MEDIUM, 1)) {
            Err(EngineError::NeverFits { needed, .. }) => needed,
            other => panic!("{other:?}"),
        }
    })
}

fn engine(
    dir: &std::path::Path,
    cpu: usize,
    batch: usize,
    lookahead: usize,
    delay: u64,
    budget: u64,
) -> Engine {
    let mut cfg = config(dir, sim(delay));
    cfg.meter = SCALE;
    cfg.budget_bytes = budget;
    cfg.cpu_workers = cpu;
    cfg.max_batch = batch;
    cfg.lookahead = lookahead;
    Engine::start(cfg).unwrap()
}

/// Checks `outcome` against what `job` asked for; a success must carry valid proofs.
fn expect(
    dir: &std::path::Path,
    job: &Job,
    outcome: &Outcome,
    cancelled: bool,
) -> Result<(), TestCaseError> {
    match outcome {
        Outcome::Cancelled => prop_assert!(cancelled, "cancelled without being asked"),
        Outcome::Failed { reason } => {
            prop_assert!(job.fails() && !cancelled, "unexpected failure: {reason}");
            prop_assert!(reason.contains("partition"), "{reason}");
        }
        Outcome::Succeeded { proof, .. } => {
            prop_assert!(!job.fails() && !cancelled);
            let circuit = if job.medium { MEDIUM } else { SMALL };
            prop_assert_eq!(proof.len(), 192 * job.partitions);
            prop_assert!(kind(dir).check(circuit, proof).unwrap());
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn budget_holds_jobs_end_once_and_cancel_frees(
        jobs in prop::collection::vec(job(), 1..9),
        cpu in 1usize..3,
        batch in 1usize..4,
        lookahead in 0usize..3,
        delay in 0u64..4,
        headroom in 0u64..3,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let budget = medium_needs() + headroom * medium_needs() / 2;
        let engine = engine(dir.path(), cpu, batch, lookahead, delay, budget);
        let ids: Vec<JobId> = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| engine.submit(j.request(i)).unwrap())
            .collect();
        let mut cancelled = vec![false; jobs.len()];
        for (i, j) in jobs.iter().enumerate() {
            if j.cancel {
                cancelled[i] = engine.cancel(ids[i]).is_ok();
            }
        }
        for (i, j) in jobs.iter().enumerate() {
            let outcome = engine.await_job(ids[i], Wait::Forever).unwrap();
            expect(dir.path(), j, &outcome, cancelled[i])?;
        }
        wait_until("quiescence", || engine.status().partitions_in_flight == 0);
        let m = engine.metrics();
        prop_assert_eq!(m.jobs_submitted, jobs.len() as u64);
        prop_assert_eq!(m.jobs_succeeded + m.jobs_failed + m.jobs_cancelled, jobs.len() as u64);
        prop_assert_eq!(m.jobs_cancelled, cancelled.iter().filter(|c| **c).count() as u64);
        prop_assert!(m.budget_peak_bytes <= budget, "peak {} > budget {}", m.budget_peak_bytes, budget);
        let status = engine.status();
        let hot: u64 = status.resident.iter().filter(|r| r.tier == Tier::Hot).map(|r| r.size_bytes).sum();
        prop_assert_eq!(status.budget_used_bytes, hot, "only hot parameters stay charged");
        prop_assert!(status.resident.iter().all(|r| r.ref_count == 0));
    }

    #[test]
    fn no_accepted_job_is_lost_across_a_simulated_crash(
        jobs in prop::collection::vec(job(), 1..8),
        halt_after_ms in 0u64..40,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let budget = 3 * medium_needs();
        let first = engine(dir.path(), 1, 1, 1, 2, budget);
        let ids: Vec<JobId> = jobs
            .iter()
            .enumerate()
            .map(|(i, j)| first.submit(j.request(i)).unwrap())
            .collect();
        std::thread::sleep(Duration::from_millis(halt_after_ms));
        first.halt();

        let second = engine(dir.path(), 1, 1, 1, 0, budget);
        for (i, j) in jobs.iter().enumerate() {
            let outcome = second.await_job(ids[i], Wait::Forever).unwrap();
            expect(dir.path(), j, &outcome, false)?;
        }
        let m = second.metrics();
        prop_assert!(m.jobs_recovered <= jobs.len() as u64);
    }
}
