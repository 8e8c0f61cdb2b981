//! The public facade and the shared state behind it.
//!
//! One mutex guards the scheduler, the job table, the residency table and the budget, so
//! admission (pick the most urgent partition, make room, charge, pin) is one atomic decision.
//! Nothing slow runs under it except the store commit of a job's terminal state. Workers and
//! callers wait on one condition variable, notified whenever something they may wait for
//! changes (a job finished, memory was released, a load ended).
//!
//! The shared state's work is split by job: [`admission`] (hot tier, budget, picking the
//! next partition) and [`jobs`] (a job's life from accept to expiry).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cuzk_groth16::backend::Backend;
use cuzk_groth16::memory;
use cuzk_groth16::params::Validation;
use cuzk_groth16::Proof;

use crate::budget::{Budget, Meter};
use crate::device::DeviceSlot;
use crate::error::EngineError;
use crate::job::{JobId, JobInfo, JobState, Outcome, Priority, Request, Timings, Wait};
use crate::kind::{CircuitId, Plan, Registry};
use crate::metrics::{Counters, Metrics, QueueDepth};
use crate::pipeline::{self, Finish, ReadyQueue};
use crate::residency::{self, Evicted, Residency, ResidentInfo, SeededKeys, Tier};
use crate::scheduler::Scheduler;
use crate::store::Store;
use crate::trace::{Span, Trace};

mod admission;
mod jobs;

/// How to run an engine. [`EngineConfig::new`] fills in defaults.
#[derive(Clone)]
pub struct EngineConfig {
    /// Folder of the durable job store.
    pub store_dir: PathBuf,
    pub registry: Registry,
    /// The proving devices, one backend worker each.
    pub devices: Vec<DeviceSlot>,
    /// Memory budget for parameters, PCEs and partition working sets.
    pub budget_bytes: u64,
    /// Part of the budget kept for finished witnesses' vectors, which the next partitions
    /// reuse instead of faulting in (and having the kernel zero) fresh memory; 0 (the default)
    /// keeps none. Process-wide: see `cuzk_groth16::memory`.
    pub recycle_bytes: u64,
    /// Host memory per proving key for fixed-base tables (precomputed multiples of its
    /// points), which make a CPU backend's MSMs over random scalars faster; charged with the
    /// key. Only circuits whose spec asks for them ([`crate::kind::CircuitSpec::tables`]), and
    /// only with a device working in host memory. 0 (the default) makes none.
    pub tables_bytes: u64,
    pub meter: Meter,
    /// Threads producing witnesses (CPU side of the pipeline).
    pub cpu_workers: usize,
    /// Partitions the CPU workers may make ahead of idle devices, per device: 1 (the default)
    /// overlaps synthesis of partition N+1 with proving N on every device, for backends on
    /// their own devices; 0 synthesises only while a device is idle, for the CPU backend,
    /// which needs every core itself. Raise it when synthesis takes longer than a proof, or
    /// to give batching something to batch.
    pub lookahead: usize,
    /// Same-circuit partitions per backend call. Keep 1 for backends that prove a batch one
    /// proof at a time (the CPU backend); raise it for backends that share work across a batch.
    pub max_batch: usize,
    /// How far parameter points are checked on load (proofs are always verified anyway).
    pub validation: Validation,
    /// Keep decoded parameter points in a point cache beside each `.params` file (as much disk
    /// again), which later loads map instead of decoding.
    pub point_cache: bool,
    /// How long an uncollected result is kept.
    pub result_ttl: Duration,
    /// A job found started-but-unfinished at more starts than this fails instead of running
    /// again (it may be what kills the process).
    pub max_restarts: u32,
    /// Bench only: keys whose `.params` file is missing are made in memory from a seed
    /// (`None`, the default: a missing file is an error).
    pub seeded_keys: Option<SeededKeys>,
}

impl std::fmt::Debug for EngineConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineConfig")
            .field("store_dir", &self.store_dir)
            .field("registry", &self.registry)
            .field("devices", &self.devices)
            .field("budget_bytes", &self.budget_bytes)
            .field("recycle_bytes", &self.recycle_bytes)
            .field("tables_bytes", &self.tables_bytes)
            .field("meter", &self.meter)
            .field("cpu_workers", &self.cpu_workers)
            .field("lookahead", &self.lookahead)
            .field("max_batch", &self.max_batch)
            .field("point_cache", &self.point_cache)
            .field("result_ttl", &self.result_ttl)
            .field("max_restarts", &self.max_restarts)
            .field("seeded_keys", &self.seeded_keys)
            .finish_non_exhaustive()
    }
}

impl EngineConfig {
    /// Defaults: `backend` as the one device, budget three quarters of physical memory, one
    /// CPU worker, one partition made ahead of the backend, no batching, trusted parameter
    /// decoding without a point cache, results kept a day, three restarts.
    pub fn new(
        store_dir: impl Into<PathBuf>,
        registry: Registry,
        backend: Arc<dyn Backend>,
    ) -> Self {
        EngineConfig {
            store_dir: store_dir.into(),
            registry,
            devices: vec![DeviceSlot::new(backend.name(), backend)],
            budget_bytes: default_budget(),
            recycle_bytes: 0,
            tables_bytes: 0,
            meter: Meter::Heap,
            cpu_workers: 1,
            lookahead: 1,
            max_batch: 1,
            validation: Validation::Trusted,
            point_cache: false,
            result_ttl: Duration::from_secs(24 * 3600),
            max_restarts: 3,
            seeded_keys: None,
        }
    }
}

/// Three quarters of `MemTotal`, or 16 GiB where that cannot be read.
fn default_budget() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024 / 4 * 3)
        })
        .unwrap_or(16 << 30)
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A device's backend worker, for status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendStatus {
    /// The backend's name (`cpu`, `cuda`).
    pub name: &'static str,
    /// The device's label.
    pub device: String,
    pub current_job: Option<JobId>,
    /// The circuits whose keys the device holds, least recently used first.
    pub resident: Vec<CircuitId>,
    /// Device memory in use as placed by the engine, its peak and the device's limit (`None`
    /// for a backend working in host memory).
    pub memory_used_bytes: u64,
    pub memory_peak_bytes: u64,
    pub memory_limit_bytes: Option<u64>,
}

/// Jobs of one kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueStatus {
    pub pending: u32,
    pub in_progress: u32,
}

/// What `GetStatus` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub backends: Vec<BackendStatus>,
    pub resident: Vec<ResidentInfo>,
    /// By proof kind name.
    pub queues: BTreeMap<String, QueueStatus>,
    pub completed: u64,
    pub failed: u64,
    pub uptime: Duration,
    pub budget_used_bytes: u64,
    pub budget_limit_bytes: u64,
    /// Partitions admitted and not yet released.
    pub partitions_in_flight: usize,
}

/// `PreloadSRS`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreloadReport {
    pub already_loaded: bool,
    pub load_time: Duration,
}

/// `EvictSRS`'s answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvictReport {
    pub was_loaded: bool,
    pub freed_bytes: u64,
}

pub(crate) struct JobEntry {
    request_id: String,
    kind: String,
    priority: Priority,
    pub(crate) state: JobState,
    plan: Option<Arc<dyn Plan>>,
    /// Set when the job finishes, so its partitions still in flight stop at the next boundary.
    pub(crate) stop: Arc<AtomicBool>,
    proofs: Vec<Option<Proof>>,
    pub(crate) in_flight: usize,
    submitted_ms: u64,
    finished_ms: Option<u64>,
    pub(crate) timings: Timings,
    result: Option<Vec<u8>>,
}

impl JobEntry {
    fn new(rec: &crate::store::Record, plan: Option<Arc<dyn Plan>>) -> Self {
        JobEntry {
            request_id: rec.request_id.clone(),
            kind: rec.kind.clone(),
            priority: rec.priority,
            state: rec.state.clone(),
            proofs: vec![None; plan.as_ref().map_or(0, |p| p.partitions())],
            plan,
            stop: Arc::new(AtomicBool::new(false)),
            in_flight: 0,
            submitted_ms: rec.submitted_ms,
            finished_ms: rec.finished_ms,
            timings: rec.timings,
            result: None,
        }
    }

    fn done_count(&self) -> u32 {
        self.proofs.iter().filter(|p| p.is_some()).count() as u32
    }

    fn outcome(&self) -> Option<Outcome> {
        Some(match &self.state {
            JobState::Succeeded => Outcome::Succeeded {
                proof: self.result.clone().unwrap_or_default(),
                timings: self.timings,
            },
            JobState::Failed { reason } => Outcome::Failed {
                reason: reason.clone(),
            },
            JobState::Cancelled => Outcome::Cancelled,
            JobState::Queued | JobState::Running { .. } => return None,
        })
    }
}

pub(crate) struct State {
    pub(crate) jobs: HashMap<JobId, JobEntry>,
    pub(crate) scheduler: Scheduler,
    pub(crate) residency: Residency,
    pub(crate) budget: Budget,
    accepting: bool,
    /// Workers take no new partitions.
    pub(crate) draining: bool,
    pub(crate) in_flight: usize,
    pub(crate) backend_jobs: Vec<Option<JobId>>,
    next_expiry_check: u64,
}

/// A hot circuit's resources, as a partition takes them.
pub(crate) struct Resources {
    pub(crate) key: Arc<cuzk_groth16::params::ProvingKey>,
    pub(crate) pce: Option<Arc<cuzk_pce::Pce>>,
    /// Partitions are made as columns only ([`Shared::columns_for`], decided at load).
    pub(crate) columns: bool,
}

/// What every thread shares.
pub(crate) struct Shared {
    pub(crate) registry: Registry,
    pub(crate) devices: Vec<DeviceSlot>,
    /// Every device evaluates PCEs itself ([`DeviceSlot::pce_backend`]): partitions of
    /// circuits with a PCE are made as columns only where the devices hold the matrices
    /// ([`Shared::columns_for`]).
    pub(crate) columns: bool,
    pub(crate) meter: Meter,
    pub(crate) max_batch: usize,
    loader: residency::Loader,
    result_ttl: Duration,
    max_restarts: u32,
    store: Store,
    state: Mutex<State>,
    pub(crate) cv: Condvar,
    pub(crate) ready: ReadyQueue,
    pub(crate) counters: Counters,
    release: Mutex<Option<Sender<Finish>>>,
    started: Instant,
    pub(crate) trace: Trace,
    /// Set by [`Engine::halt`]: nothing more reaches the store, as after a crash.
    halted: AtomicBool,
}

/// The proving engine. See the crate documentation for the life of a job.
pub struct Engine {
    shared: Arc<Shared>,
    cpu: Vec<JoinHandle<()>>,
    backends: Vec<JoinHandle<()>>,
    finisher: Option<JoinHandle<()>>,
    /// Whether this engine set the process-wide recycling limit (cleared again on stop).
    recycles: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("devices", &self.shared.devices)
            .field("cpu_workers", &self.cpu.len())
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Opens the store, re-queues its unfinished jobs, and starts the workers.
    pub fn start(cfg: EngineConfig) -> Result<Engine, EngineError> {
        if cfg.cpu_workers == 0 || cfg.devices.is_empty() || cfg.max_batch == 0 {
            return Err(EngineError::Start(
                "cpu_workers, devices and max_batch must be at least 1".into(),
            ));
        }
        if cfg.recycle_bytes > cfg.budget_bytes {
            return Err(EngineError::Start(format!(
                "recycle_bytes ({}) exceeds the budget ({})",
                cfg.recycle_bytes, cfg.budget_bytes
            )));
        }
        let devices = cfg.devices.len();
        let labels: Vec<String> = cfg.devices.iter().map(|d| d.label.clone()).collect();
        let store = Store::open(&cfg.store_dir)?;
        let loaded = store.recover()?;
        let (tx, rx) = mpsc::channel();
        let started = Instant::now();
        // Devices with memory of their own prove from the key as uploaded.
        let host_device = cfg
            .devices
            .iter()
            .any(|d| d.backend.device_memory().is_none());
        let tables_bytes = if host_device { cfg.tables_bytes } else { 0 };
        let shared = Arc::new(Shared {
            registry: cfg.registry,
            columns: !cfg.devices.is_empty() && cfg.devices.iter().all(|d| d.pce_backend.is_some()),
            devices: cfg.devices,
            meter: cfg.meter,
            max_batch: cfg.max_batch,
            loader: residency::Loader::new(cfg.validation, cfg.point_cache, tables_bytes)
                .with_seeded_keys(cfg.seeded_keys.clone()),
            result_ttl: cfg.result_ttl,
            max_restarts: cfg.max_restarts,
            store,
            state: Mutex::new(State {
                jobs: HashMap::new(),
                scheduler: Scheduler::new(),
                residency: Residency::default(),
                // Recycled vectors are memory in use that no partition is charged for.
                budget: Budget::new(cfg.budget_bytes - cfg.recycle_bytes),
                accepting: true,
                draining: false,
                in_flight: 0,
                backend_jobs: vec![None; devices],
                next_expiry_check: 0,
            }),
            cv: Condvar::new(),
            ready: ReadyQueue::new(cfg.lookahead, devices),
            counters: Counters::new(labels),
            release: Mutex::new(Some(tx.clone())),
            started,
            trace: Trace::new(started),
            halted: AtomicBool::new(false),
        });
        for job in loaded {
            shared.recover(job)?;
        }
        shared.expire();
        let spawn = |name: String, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name)
                .spawn(f)
                .map_err(|e| EngineError::Start(e.to_string()))
        };
        let mut cpu = Vec::new();
        for i in 0..cfg.cpu_workers {
            let (s, tx) = (shared.clone(), tx.clone());
            cpu.push(spawn(
                format!("cuzk-cpu-{i}"),
                Box::new(move || pipeline::cpu_worker(&s, i, &tx)),
            )?);
        }
        let mut backends = Vec::new();
        for i in 0..devices {
            let (s, tx) = (shared.clone(), tx.clone());
            backends.push(spawn(
                format!("cuzk-dev-{}", s.devices[i].label),
                Box::new(move || pipeline::backend_worker(&s, i, &tx)),
            )?);
        }
        drop(tx);
        let s = shared.clone();
        let finisher = spawn(
            "cuzk-finisher".into(),
            Box::new(move || pipeline::finisher(&s, &rx)),
        )?;
        let recycles = cfg.recycle_bytes > 0;
        if recycles {
            memory::set_recycle_limit(usize::try_from(cfg.recycle_bytes).unwrap_or(usize::MAX));
        }
        Ok(Engine {
            shared,
            cpu,
            backends,
            finisher: Some(finisher),
            recycles,
        })
    }

    /// Accepts `req` (durably, before returning) and queues it. Submitting a request id again
    /// returns the job it already names, until that job is collected or expires.
    pub fn submit(&self, req: Request) -> Result<JobId, EngineError> {
        self.shared.submit(req)
    }

    /// Waits for `job` to finish and returns how it ended (named `await_job` because `await`
    /// is a Rust keyword). The result stays available until [`Engine::collect`] or expiry.
    pub fn await_job(&self, job: JobId, wait: impl Into<Wait>) -> Result<Outcome, EngineError> {
        let wait = wait.into();
        let deadline = match wait {
            Wait::Forever => None,
            Wait::For(d) => Some(Instant::now() + d),
        };
        let mut st = self.shared.lock();
        loop {
            let e = st.jobs.get(&job).ok_or(EngineError::UnknownJob(job))?;
            if let Some(o) = e.outcome() {
                return Ok(o);
            }
            st = match deadline {
                None => self.shared.cv.wait(st).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(EngineError::Timeout(job));
                    }
                    self.shared
                        .cv
                        .wait_timeout(st, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
    }

    /// Returns a finished job's outcome and forgets the job (its request id may be reused).
    pub fn collect(&self, job: JobId) -> Result<Outcome, EngineError> {
        let mut st = self.shared.lock();
        let e = st.jobs.get(&job).ok_or(EngineError::UnknownJob(job))?;
        let outcome = e.outcome().ok_or(EngineError::NotFinished(job))?;
        self.shared.store.remove(job)?;
        st.jobs.remove(&job);
        Ok(outcome)
    }

    /// Cancels `job`: queued partitions are dropped now, running ones at their next boundary
    /// (their memory is released then). Returns whether any partition had started.
    pub fn cancel(&self, job: JobId) -> Result<bool, EngineError> {
        let was_running = {
            let st = self.shared.lock();
            let e = st.jobs.get(&job).ok_or(EngineError::UnknownJob(job))?;
            e.in_flight > 0 || matches!(e.state, JobState::Running { .. })
        };
        if self.shared.conclude(job, JobState::Cancelled, None) {
            Ok(was_running)
        } else {
            Err(EngineError::AlreadyFinished(job))
        }
    }

    /// A snapshot of one job.
    pub fn job(&self, job: JobId) -> Result<JobInfo, EngineError> {
        let st = self.shared.lock();
        let e = st.jobs.get(&job).ok_or(EngineError::UnknownJob(job))?;
        Ok(JobInfo {
            id: job,
            request_id: e.request_id.clone(),
            kind: e.kind.clone(),
            priority: e.priority,
            state: e.state.clone(),
            queue_position: st.scheduler.position(job).unwrap_or(0) as u32,
            timings: e.timings,
        })
    }

    pub fn status(&self) -> Status {
        // Taken before the state lock, not to hold it longer (the ready queue's lock nests
        // inside the state lock, never the other way round: `Shared::schedule`).
        let ledgers = self.shared.ready.ledgers();
        let st = self.shared.lock();
        let mut queues: BTreeMap<String, QueueStatus> = BTreeMap::new();
        for e in st.jobs.values() {
            let q = queues.entry(e.kind.clone()).or_default();
            match e.state {
                JobState::Queued => q.pending += 1,
                JobState::Running { .. } => q.in_progress += 1,
                _ => {}
            }
        }
        let c = Metrics::from_counters(&self.shared.counters);
        Status {
            backends: st
                .backend_jobs
                .iter()
                .zip(&self.shared.devices)
                .zip(ledgers)
                .map(|((j, d), l)| BackendStatus {
                    name: d.backend.name(),
                    device: d.label.clone(),
                    current_job: *j,
                    memory_used_bytes: l.used(),
                    memory_peak_bytes: l.peak,
                    memory_limit_bytes: d.backend.device_memory(),
                    resident: l.resident.into_iter().map(|r| r.0).collect(),
                })
                .collect(),
            resident: st.residency.status(),
            queues,
            completed: c.jobs_succeeded,
            failed: c.jobs_failed,
            uptime: self.shared.started.elapsed(),
            budget_used_bytes: st.budget.used(),
            budget_limit_bytes: st.budget.limit(),
            partitions_in_flight: st.in_flight,
        }
    }

    /// Stage spans that ended at or after `since_us` (microseconds since start), and the
    /// current time on the same clock.
    pub fn trace(&self, since_us: u64) -> (Vec<Span>, u64) {
        let t = &self.shared.trace;
        (t.since(since_us), t.now_us())
    }

    pub fn metrics(&self) -> Metrics {
        let st = self.shared.lock();
        let mut queues: BTreeMap<(String, Priority), QueueDepth> = BTreeMap::new();
        for e in st.jobs.values() {
            let q = queues
                .entry((e.kind.clone(), e.priority))
                .or_insert_with(|| QueueDepth {
                    kind: e.kind.clone(),
                    priority: e.priority,
                    pending: 0,
                    running: 0,
                });
            match e.state {
                JobState::Queued => q.pending += 1,
                JobState::Running { .. } => q.running += 1,
                _ => {}
            }
        }
        Metrics {
            queues: queues.into_values().collect(),
            resident: st.residency.status(),
            uptime_ms: self.shared.started.elapsed().as_millis() as u64,
            backend_workers: self.shared.devices.len() as u64,
            budget_used_bytes: st.budget.used(),
            budget_peak_bytes: st.budget.peak(),
            budget_limit_bytes: st.budget.limit(),
            queued_jobs: st.scheduler.len() as u64,
            running_jobs: st
                .jobs
                .values()
                .filter(|e| matches!(e.state, JobState::Running { .. }))
                .count() as u64,
            ..Metrics::from_counters(&self.shared.counters)
        }
    }

    /// Brings `circuit` to the hot tier now (evicting idle circuits if needed), so the first
    /// job using it does not wait for the load.
    pub fn preload(&self, circuit: &CircuitId) -> Result<PreloadReport, EngineError> {
        let s = &self.shared;
        s.ensure_mapped(circuit)?;
        let mut st = s.lock();
        loop {
            let e = st
                .residency
                .get(circuit)
                .ok_or_else(|| EngineError::UnknownCircuit(circuit.0.clone()))?;
            if e.hot.is_some() {
                return Ok(PreloadReport {
                    already_loaded: true,
                    load_time: Duration::ZERO,
                });
            }
            if !e.loading {
                break;
            }
            st = s.cv.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        let need = st.residency.get(circuit).map_or(0, |e| e.sizes.hot());
        if !s.make_room(&mut st, circuit, need) {
            return Err(EngineError::NoRoom {
                circuit: circuit.clone(),
                needed: need,
                free: st.budget.free(),
            });
        }
        s.begin_load(&mut st, circuit, need);
        drop(st);
        let t = Instant::now();
        s.load(circuit).map_err(|reason| EngineError::Load {
            circuit: circuit.clone(),
            reason,
        })?;
        Ok(PreloadReport {
            already_loaded: false,
            load_time: t.elapsed(),
        })
    }

    /// Takes an idle `circuit` to the cold tier, releasing its memory. Refused while in use.
    pub fn evict(&self, circuit: &CircuitId) -> Result<EvictReport, EngineError> {
        let s = &self.shared;
        let mut st = s.lock();
        let e = st
            .residency
            .get(circuit)
            .ok_or_else(|| EngineError::UnknownCircuit(circuit.0.clone()))?;
        if e.refs > 0 || e.loading {
            return Err(EngineError::InUse(circuit.clone()));
        }
        let was_loaded = e.hot.is_some();
        let key = e
            .warm
            .clone()
            .or_else(|| e.hot.as_ref().map(|h| h.key.clone()));
        let mut out = Evicted::default();
        st.residency.demote(circuit, Tier::Cold, &mut out);
        st.budget.release(out.freed);
        let freed = out.freed;
        drop(st);
        s.cv.notify_all();
        s.release(Box::new(out));
        // The devices that held it free their copies too (a 32 GiB key and PCE: 57 GB).
        if let Some(key) = key {
            for i in s.ready.forget(circuit) {
                s.devices[i].backend.release(&key);
            }
        }
        Ok(EvictReport {
            was_loaded,
            freed_bytes: freed,
        })
    }

    /// Stops admitting work, finishes the partitions in flight (their proofs are stored), and
    /// leaves every unfinished job queued in the store for the next start.
    pub fn shutdown(mut self) {
        self.stop(false);
    }

    /// Stops as a crash would, for crash tests: from now on nothing reaches the store; the
    /// threads are then joined and the store closed, so it can be opened again in-process.
    pub fn halt(mut self) {
        self.stop(true);
    }

    fn stop(&mut self, halt: bool) {
        let s = &self.shared;
        if halt {
            s.halted.store(true, Ordering::SeqCst);
        }
        {
            let mut st = s.lock();
            st.accepting = false;
            st.draining = true;
        }
        s.cv.notify_all();
        s.ready.stop_claims();
        for t in self.cpu.drain(..) {
            let _ = t.join();
        }
        s.ready.close();
        for t in self.backends.drain(..) {
            let _ = t.join();
        }
        s.release.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = self.finisher.take() {
            let _ = t.join();
        }
        s.loader.finish();
        if self.recycles {
            memory::set_recycle_limit(0);
        }
        if !halt {
            // A graceful stop is not a crash: unfinished jobs go back to plain queued.
            let st = s.lock();
            for (id, e) in &st.jobs {
                if matches!(e.state, JobState::Running { .. }) {
                    let _ = s.store.set_state(*id, &JobState::Queued);
                }
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if self.finisher.is_some() {
            self.stop(false);
        }
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked must not take the whole engine down with poisoning.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn wait<'a>(&self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cv.wait(st).unwrap_or_else(|p| p.into_inner())
    }

    /// Every change to the queued partitions goes through here: the ready queue then learns
    /// how many critical ones are queued (each may be made past the look-ahead).
    fn schedule<R>(&self, st: &mut State, change: impl FnOnce(&mut Scheduler) -> R) -> R {
        let r = change(&mut st.scheduler);
        self.ready.set_critical(st.scheduler.critical());
        r
    }

    /// Hands `item` to the finisher thread to drop, off the hot path.
    pub(crate) fn release(&self, item: Box<dyn Send>) {
        let tx = self
            .release
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(tx) = tx {
            let _ = tx.send(Finish::Release(item));
        }
    }

    fn halted(&self) -> bool {
        self.halted.load(Ordering::SeqCst)
    }
}
