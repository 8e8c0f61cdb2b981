//! Devices that evaluate a circuit's PCE themselves (`DeviceSlot::pce_backend`): with every
//! device so, CPU workers make only witness columns and every partition is proved through the
//! device's `PceBackend`; with one device without it, witnesses are made as before; a bad
//! proof or a panic on the columns path is retried on the CPU from the same columns; and a
//! device without room for the matrices beside the key takes witnesses instead.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::*;
use cuzk_engine::sim::{Fault, SimBackend};
use cuzk_engine::{DeviceSlot, Engine, Outcome, Priority, Wait};
use cuzk_groth16::assignment::Witness;
use cuzk_groth16::backend::{Backend, CpuBackend, Randomness};
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::{Proof, ProverError};
use cuzk_pce::{Columns, HostEvaluated, Pce, PceBackend};

/// Counts witness proofs; proves on the CPU reference.
#[derive(Default)]
struct Witnesses(AtomicU64);

impl Backend for Witnesses {
    fn name(&self) -> &'static str {
        "witnesses"
    }

    fn prove(
        &self,
        pk: &ProvingKey,
        witnesses: &[Witness],
        randomness: &[Randomness],
    ) -> Result<Vec<Proof>, ProverError> {
        self.0.fetch_add(witnesses.len() as u64, Ordering::SeqCst);
        CpuBackend.prove(pk, witnesses, randomness)
    }
}

/// Counts column proofs; the reference evaluator, misbehaving as told.
#[derive(Default)]
struct ColumnsBackend {
    calls: AtomicU64,
    misbehave: Misbehave,
    resident: u64,
    host_scratch: u64,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Misbehave {
    #[default]
    No,
    WrongProof,
    Panic,
}

impl PceBackend for ColumnsBackend {
    fn name(&self) -> &'static str {
        "columns"
    }

    fn prove_assigned(
        &self,
        pk: &ProvingKey,
        pce: &Arc<Pce>,
        columns: &Columns,
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut proof = HostEvaluated(CpuBackend).prove_assigned(pk, pce, columns, rs)?;
        match self.misbehave {
            Misbehave::No => {}
            Misbehave::WrongProof => proof.a = proof.c,
            Misbehave::Panic => panic!("injected panic"),
        }
        Ok(proof)
    }

    fn resident_bytes(&self, _pce: &Pce) -> u64 {
        self.resident
    }

    fn host_scratch(&self, _pk: &ProvingKey, _pce: &Pce) -> u64 {
        self.host_scratch
    }
}

struct Setup {
    engine: Engine,
    witnesses: Arc<Witnesses>,
    columns: Arc<ColumnsBackend>,
}

/// Two devices; `with_pce` says which of them get the columns backend.
fn setup(dir: &std::path::Path, with_pce: [bool; 2], columns: ColumnsBackend) -> Setup {
    let witnesses = Arc::new(Witnesses::default());
    let columns = Arc::new(columns);
    let mut cfg = config(dir, witnesses.clone());
    cfg.devices = with_pce
        .iter()
        .enumerate()
        .map(|(i, &pce)| {
            let slot = DeviceSlot::new(format!("dev{i}"), witnesses.clone());
            if pce {
                slot.with_pce_backend(columns.clone())
            } else {
                slot
            }
        })
        .collect();
    cfg.cpu_workers = 2;
    Setup {
        engine: Engine::start(cfg).unwrap(),
        witnesses,
        columns,
    }
}

/// Proves a SMALL job of 3 partitions and a MEDIUM one of 2; checks the proofs.
fn prove_two_jobs(dir: &std::path::Path, engine: &Engine) {
    let a = submit(engine, "a", Priority::Normal, SMALL, 3);
    let b = submit(engine, "b", Priority::Normal, MEDIUM, 2);
    let check = kind(dir);
    for (job, circuit) in [(a, SMALL), (b, MEDIUM)] {
        match engine.await_job(job, Wait::Forever).unwrap() {
            Outcome::Succeeded { proof, .. } => assert!(check.check(circuit, &proof).unwrap()),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn with_every_device_evaluating_the_pce_partitions_go_as_columns() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path(), [true, true], ColumnsBackend::default());
    prove_two_jobs(dir.path(), &s.engine);
    assert_eq!(s.columns.calls.load(Ordering::SeqCst), 5);
    assert_eq!(s.witnesses.0.load(Ordering::SeqCst), 0);
    assert_eq!(s.engine.metrics().verify_failures, 0);
    s.engine.shutdown();
}

#[test]
fn one_device_without_it_keeps_witnesses_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path(), [true, false], ColumnsBackend::default());
    prove_two_jobs(dir.path(), &s.engine);
    assert_eq!(s.columns.calls.load(Ordering::SeqCst), 0);
    assert_eq!(s.witnesses.0.load(Ordering::SeqCst), 5);
    s.engine.shutdown();
}

#[test]
fn a_bad_proof_or_a_panic_from_columns_is_retried_on_the_cpu() {
    for misbehave in [Misbehave::WrongProof, Misbehave::Panic] {
        let dir = tempfile::tempdir().unwrap();
        let columns = ColumnsBackend {
            misbehave,
            ..ColumnsBackend::default()
        };
        let s = setup(dir.path(), [true, true], columns);
        prove_two_jobs(dir.path(), &s.engine);
        let m = s.engine.metrics();
        assert_eq!((m.verify_failures, m.cpu_retry_successes), (5, 5));
        assert_eq!(s.witnesses.0.load(Ordering::SeqCst), 0);
        s.engine.shutdown();
    }
}

/// A device with room for the key and one proof but not for the circuit's matrices beside
/// them proves from a witness the host evaluated (a 24 GB card at 32 GiB), rather than failing
/// the job; with room for them it proves from columns.
#[test]
fn a_device_without_room_for_the_matrices_proves_from_a_host_witness() {
    for (matrices, columns_calls) in [(1u64 << 40, 0), (0, 1)] {
        let dir = tempfile::tempdir().unwrap();
        let sim = Arc::new(
            SimBackend::new(std::time::Duration::ZERO, Fault::None).with_memory(1 << 40, 1),
        );
        let columns = Arc::new(ColumnsBackend {
            resident: matrices,
            ..ColumnsBackend::default()
        });
        let mut cfg = config(dir.path(), sim.clone());
        cfg.devices = vec![DeviceSlot::new("dev0", sim.clone()).with_pce_backend(columns.clone())];
        let engine = Engine::start(cfg).unwrap();
        let job = submit(&engine, "a", Priority::Normal, SMALL, 1);
        match engine.await_job(job, Wait::Forever).unwrap() {
            Outcome::Succeeded { proof, .. } => {
                assert!(kind(dir.path()).check(SMALL, &proof).unwrap())
            }
            other => panic!("matrices of {matrices} bytes: {other:?}"),
        }
        assert_eq!(columns.calls.load(Ordering::SeqCst), columns_calls);
        assert_eq!(sim.calls(), 1 - columns_calls);
        engine.shutdown();
    }
}

/// With every device evaluating the PCE, a partition holds only its columns on the host, and
/// the backend works in device memory: a budget with room for the key, the PCE and the
/// columns, but not for a host-side witness and the CPU backend's scratch, still proves. (A
/// 32 GiB PoRep job was refused on a 128 GB host before this was so.)
#[test]
fn columns_are_charged_only_their_own_host_memory() {
    use cuzk_engine::kind::{CircuitId, ProofKind};
    use cuzk_groth16::params::Validation;
    let dir = tempfile::tempdir().unwrap();
    let spec = kind(dir.path()).circuit(&CircuitId::from(SMALL)).unwrap();
    let pk = ProvingKey::read(&spec.params, Validation::Full).unwrap();
    let params = SCALE.params(&pk);
    let (columns, host) = (
        SCALE.columns_bound(&pk),
        SCALE.witness_bound(&pk) + SCALE.scratch(&pk),
    );
    assert!(columns < host);
    let witnesses = Arc::new(Witnesses::default());
    let backend = Arc::new(ColumnsBackend::default());
    let mut cfg = config(dir.path(), witnesses.clone());
    cfg.meter = SCALE;
    // An unextracted PCE is charged like the parameters until it is measured.
    cfg.budget_bytes = 2 * params + columns + (host - columns) / 2;
    cfg.recycle_bytes = 0;
    cfg.devices = vec![DeviceSlot::new("dev0", witnesses).with_pce_backend(backend.clone())];
    let engine = Engine::start(cfg).unwrap();
    let job = submit(&engine, "a", Priority::Normal, SMALL, 2);
    match engine.await_job(job, Wait::Forever).unwrap() {
        Outcome::Succeeded { .. } => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(backend.calls.load(Ordering::SeqCst), 2);
    engine.shutdown();
}

/// Where the devices have no room for the matrices, partitions are witnesses, charged as such
/// once the circuit is loaded. A budget that had room for columns but has none for a witness
/// fails the job with the budget named, instead of leaving it waiting for room forever.
#[test]
fn a_witness_that_never_fits_the_budget_fails_the_job() {
    use cuzk_engine::kind::{CircuitId, ProofKind};
    use cuzk_groth16::params::Validation;
    let dir = tempfile::tempdir().unwrap();
    let spec = kind(dir.path()).circuit(&CircuitId::from(SMALL)).unwrap();
    let pk = ProvingKey::read(&spec.params, Validation::Full).unwrap();
    // A first engine extracts the PCE and caches it beside the parameters, so that the
    // constrained one below charges the file's size for it at submission.
    let first = start(dir.path(), 0);
    let job = submit(&first, "warm-up", Priority::Normal, SMALL, 1);
    first.await_job(job, Wait::Forever).unwrap();
    first.shutdown();
    let pce_spec = spec.pce.as_ref().unwrap();
    let file = SCALE.scale(std::fs::metadata(&pce_spec.path).unwrap().len());
    let pce = (pce_spec.extract)().unwrap();
    let params = SCALE.params(&pk);
    let budget = params + file + SCALE.columns_bound(&pk);
    let loaded = params + SCALE.pce(&pce) + SCALE.witness_bound(&pk) + SCALE.scratch(&pk);
    assert!(
        loaded > budget,
        "{loaded} <= {budget}: the test needs a tighter budget"
    );
    let sim =
        Arc::new(SimBackend::new(std::time::Duration::ZERO, Fault::None).with_memory(1 << 40, 1));
    let columns = Arc::new(ColumnsBackend {
        resident: 1 << 40,
        ..ColumnsBackend::default()
    });
    let mut cfg = config(dir.path(), sim.clone());
    cfg.meter = SCALE;
    cfg.budget_bytes = budget;
    cfg.recycle_bytes = 0;
    cfg.devices = vec![DeviceSlot::new("dev0", sim.clone()).with_pce_backend(columns.clone())];
    let engine = Engine::start(cfg).unwrap();
    let job = submit(&engine, "a", Priority::Normal, SMALL, 2);
    // Bounded: the fault this guards against is a wait that never ends.
    let wait = Wait::For(std::time::Duration::from_secs(60));
    match engine.await_job(job, wait).unwrap() {
        Outcome::Failed { reason } => assert!(reason.contains("memory budget"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(columns.calls.load(Ordering::SeqCst), 0);
    engine.shutdown();
}

/// What a device gathers on the host for the queries it streams is charged to each partition
/// of columns: more than the budget fails the job as never fitting; none proves.
#[test]
fn columns_are_charged_the_host_scratch_of_streamed_queries() {
    for (host_scratch, fits) in [(1u64 << 50, false), (0, true)] {
        let dir = tempfile::tempdir().unwrap();
        let witnesses = Arc::new(Witnesses::default());
        let columns = Arc::new(ColumnsBackend {
            host_scratch,
            ..ColumnsBackend::default()
        });
        let mut cfg = config(dir.path(), witnesses.clone());
        cfg.devices = vec![DeviceSlot::new("dev0", witnesses).with_pce_backend(columns.clone())];
        let engine = Engine::start(cfg).unwrap();
        let job = submit(&engine, "a", Priority::Normal, SMALL, 2);
        let wait = Wait::For(std::time::Duration::from_secs(60));
        match engine.await_job(job, wait).unwrap() {
            Outcome::Succeeded { .. } => assert!(fits),
            Outcome::Failed { reason } => {
                assert!(!fits && reason.contains("memory budget"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        engine.shutdown();
    }
}
