//! The partition pipeline:
//!
//! ```text
//! CPU workers ──(bounded ReadyQueue)──▶ backend workers ──(channel)──▶ finisher
//! admit, load,                          one per device: pick,        verify (CPU retry once),
//! synthesise                            batch, prove                 store, drop buffers
//! ```
//!
//! Every device's worker takes from the one queue what that device can prove
//! ([`crate::device::pick`]), so no device idles while work it could do waits.
//!
//! While the backend proves partition N, a CPU worker synthesises N+1 (of any job); the queue
//! bound and the budget keep that look-ahead from costing unbounded memory. Witnesses and
//! evicted parameters are dropped on the finisher thread, never on a worker's hot path.

use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::backend::{Backend, CpuBackend, Randomness};
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::{Fr, Proof, ProverError};
use cuzk_pce::{Columns, HostEvaluated, Pce, PceBackend};

use crate::budget::Meter;
use crate::device::{pick, Candidate, DeviceSlot, Ledger};
use crate::engine::{Resources, Shared};
use crate::job::{JobId, JobState, Priority, Timings};
use crate::kind::{CircuitId, Plan};
use crate::metrics::Counters;
use crate::trace::Stage;

/// What one admitted partition holds: budget bytes and a pin on its circuit. Dropping it
/// gives both back, so no path (failure, cancel, shutdown) can leak them.
pub(crate) struct Lease {
    shared: Arc<Shared>,
    job: JobId,
    pub(crate) circuit: CircuitId,
    pub(crate) bytes: u64,
}

impl Lease {
    pub(crate) fn new(shared: Arc<Shared>, job: JobId, circuit: CircuitId, bytes: u64) -> Self {
        Lease {
            shared,
            job,
            circuit,
            bytes,
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.budget.release(self.bytes);
        st.residency.unpin(&self.circuit);
        st.in_flight -= 1;
        if let Some(e) = st.jobs.get_mut(&self.job) {
            e.in_flight -= 1;
        }
        drop(st);
        self.shared.cv.notify_all();
    }
}

/// An admitted partition.
pub(crate) struct Work {
    pub job: JobId,
    pub partition: usize,
    /// The job's proof kind and priority, for placement.
    pub kind: String,
    pub priority: Priority,
    pub plan: Arc<dyn Plan>,
    /// Set when the job finished (cancelled, failed elsewhere): stop at the next boundary.
    pub stop: Arc<AtomicBool>,
    pub pvk: Arc<PreparedVerifyingKey>,
    /// This partition's worker loads the circuit.
    pub load: bool,
    /// The job's first dispatched partition.
    pub first: bool,
    pub lease: Lease,
}

impl Work {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// A synthesised partition waiting for the backend.
pub(crate) struct Ready {
    work: Work,
    assignment: Assignment,
    /// What the partition proof must verify against.
    public_inputs: Vec<Fr>,
    key: Arc<ProvingKey>,
    timings: Timings,
}

/// What a backend proves a partition from.
pub(crate) enum Assignment {
    /// a, b and c evaluated on the host: any backend proves it.
    Witness(Witness),
    /// Only the columns: the device's [`PceBackend`] evaluates a, b and c from `pce`.
    Columns { columns: Columns, pce: Arc<Pce> },
}

impl Assignment {
    /// The circuit's PCE when the device evaluates it (for the device memory plan).
    fn pce(&self) -> Option<&Pce> {
        match self {
            Assignment::Witness(_) => None,
            Assignment::Columns { pce, .. } => Some(pce),
        }
    }

    fn bytes(&self, meter: Meter) -> u64 {
        match self {
            Assignment::Witness(w) => meter.witness(w),
            Assignment::Columns { columns, .. } => meter.columns(columns.capacity()),
        }
    }

    /// One proof on `slot`'s device.
    fn prove_on(
        &self,
        slot: &DeviceSlot,
        key: &ProvingKey,
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        match (self, &slot.pce_backend) {
            (Assignment::Columns { columns, pce }, Some(b)) => {
                b.prove_assigned(key, pce, columns, rs)
            }
            (assignment, _) => assignment.prove_with(&*slot.backend, key, rs),
        }
    }

    /// One proof on `backend`, evaluating a, b, c on the host if they are not.
    fn prove_with(
        &self,
        backend: &dyn Backend,
        key: &ProvingKey,
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        match self {
            Assignment::Witness(w) => backend.prove_single(key, w, rs),
            Assignment::Columns { columns, pce } => {
                HostEvaluated(backend).prove_assigned(key, pce, columns, rs)
            }
        }
    }

    /// Hands the large vectors to `memory::recycle`.
    fn recycle(self) {
        match self {
            Assignment::Witness(w) => w.recycle(),
            Assignment::Columns { columns, .. } => columns.recycle(),
        }
    }
}

/// The hand-off between CPU workers and backend workers, and the devices' memory ledgers.
/// Production is demand-driven: a CPU worker starts a partition only while fewer are ready or
/// being made than there are idle devices plus `lookahead` per device. With `lookahead` 1 the
/// CPU makes partition N+1 for every device while it proves N; with 0 it starts only when a
/// device is idle, for a backend that needs every core itself (the CPU backend), where
/// overlapping would only slow both sides. Critical partitions are not held to that limit
/// ([`ReadyQueue::set_critical`]). Its lock nests inside the engine's state lock; it never
/// takes that lock itself.
pub(crate) struct ReadyQueue {
    inner: Mutex<Queue>,
    cv: Condvar,
    /// `lookahead` times the device count.
    ahead: usize,
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Box<Ready>>,
    /// Claims held by CPU workers.
    producing: usize,
    /// Critical partitions queued in the scheduler, as the engine last set it: each may take
    /// a claim past the look-ahead, so that it is made now and not after the queued partitions
    /// ahead of it. Set, never counted here, so a cancelled or recovered job cannot skew it.
    critical: usize,
    /// Claims granted past the look-ahead whose partition is not admitted yet.
    express: usize,
    /// Backend workers waiting for items.
    idle: usize,
    /// No new claims (shutdown).
    no_claims: bool,
    /// Backend workers exit once nothing is left for them.
    closed: bool,
    /// Per device, what the engine placed on it.
    ledgers: Vec<Ledger>,
}

/// A CPU worker's right to make one partition; given back on drop unless pushed. `express`
/// when it was granted past the look-ahead for a critical partition.
pub(crate) struct Claim<'a> {
    queue: &'a ReadyQueue,
    express: bool,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        let mut q = self.queue.lock();
        q.producing -= 1;
        q.express -= usize::from(self.express);
        drop(q);
        self.queue.cv.notify_all();
    }
}

impl Claim<'_> {
    /// A partition was admitted under this claim: an express claim has served (whichever
    /// partition it got, the engine's critical count now says what is still queued).
    pub fn admitted(&mut self) {
        if std::mem::take(&mut self.express) {
            self.queue.lock().express -= 1;
        }
    }
}

impl ReadyQueue {
    pub fn new(lookahead: usize, devices: usize) -> Self {
        ReadyQueue {
            inner: Mutex::new(Queue {
                ledgers: vec![Ledger::default(); devices],
                ..Queue::default()
            }),
            cv: Condvar::new(),
            ahead: lookahead * devices,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the backends want another partition, or a critical one waits for a claim;
    /// `None` once claims stop.
    fn claim(&self) -> Option<Claim<'_>> {
        let mut q = self.lock();
        let full = |q: &Queue| q.items.len() + q.producing >= q.idle + self.ahead;
        while !q.no_claims && full(&q) && q.critical <= q.express {
            q = self.cv.wait(q).unwrap_or_else(|p| p.into_inner());
        }
        if q.no_claims {
            return None;
        }
        let express = full(&q);
        q.express += usize::from(express);
        q.producing += 1;
        Some(Claim {
            queue: self,
            express,
        })
    }

    /// The scheduler now holds `partitions` critical partitions: each may be made at once,
    /// past the look-ahead (a WinningPoSt then waits only for the partition on the device, not
    /// also for the ones made ahead of it). The engine calls this on every change to its
    /// scheduler, under the engine's lock, so calls arrive in order.
    pub fn set_critical(&self, partitions: usize) {
        let mut q = self.lock();
        let more = partitions > q.critical;
        q.critical = partitions;
        drop(q);
        if more {
            self.cv.notify_all();
        }
    }

    /// Queues a partition made under `claim`; gives it back if the queue is closed.
    fn push(&self, item: Box<Ready>, claim: Claim<'_>) -> Result<(), Box<Ready>> {
        let mut q = self.lock();
        if q.closed {
            return Err(item);
        }
        q.items.push_back(item);
        q.producing -= 1;
        q.express -= usize::from(claim.express);
        std::mem::forget(claim);
        drop(q);
        self.cv.notify_all();
        Ok(())
    }

    /// Waits for an item device `index` can prove ([`pick`]) and takes it with more of the
    /// same circuit, up to `max` and what fits the device's memory; charges the device's
    /// ledger. `None` once closed with nothing left for this device.
    fn pop_batch(&self, index: usize, slot: &DeviceSlot, max: usize) -> Option<Vec<Ready>> {
        let mut q = self.lock();
        q.idle += 1;
        self.cv.notify_all();
        let at = loop {
            let picked = {
                let cands: Vec<Candidate<'_>> = q
                    .items
                    .iter()
                    .map(|r| Candidate {
                        circuit: &r.work.lease.circuit,
                        priority: r.work.priority,
                        eligible: slot
                            .refusal(&r.work.kind, &r.key, r.assignment.pce())
                            .is_none(),
                    })
                    .collect();
                pick(&cands, &q.ledgers[index])
            };
            match picked {
                Some(at) => break Some(at),
                None if q.closed => break None,
                None => q = self.cv.wait(q).unwrap_or_else(|p| p.into_inner()),
            }
        };
        q.idle -= 1;
        let first = *q.items.remove(at?).expect("picked from the queue");
        let max = slot.batch_limit(&first.key, first.assignment.pce(), max);
        let mut batch = vec![first];
        let mut i = 0;
        while batch.len() < max && i < q.items.len() {
            if q.items[i].work.lease.circuit == batch[0].work.lease.circuit {
                batch.extend(q.items.remove(i).map(|r| *r));
            } else {
                i += 1;
            }
        }
        let footprint = slot.footprint(&batch[0].key, batch[0].assignment.pce());
        let limit = slot.backend.device_memory();
        q.ledgers[index].start(&batch[0].work.lease.circuit, footprint, batch.len(), limit);
        drop(q);
        self.cv.notify_all();
        Some(batch)
    }

    /// Device `index`'s call returned: its working memory is free again.
    fn call_ended(&self, index: usize) {
        self.lock().ledgers[index].end();
    }

    /// The engine evicted `circuit`: the ledgers forget it, and the caller releases it on the
    /// devices returned, every one that ran it since its last eviction (the backend may hold
    /// it where the ledger's estimate has dropped it).
    pub fn forget(&self, circuit: &CircuitId) -> Vec<usize> {
        let mut q = self.lock();
        let mut placed = Vec::new();
        for (i, l) in q.ledgers.iter_mut().enumerate() {
            if l.placed.contains(circuit) {
                l.placed.retain(|c| c != circuit);
                l.resident.retain(|r| &r.0 != circuit);
                placed.push(i);
            }
        }
        placed
    }

    /// Every device's ledger, in device order.
    pub fn ledgers(&self) -> Vec<Ledger> {
        self.lock().ledgers.clone()
    }

    /// Stops handing out claims (CPU workers then exit).
    pub fn stop_claims(&self) {
        self.lock().no_claims = true;
        self.cv.notify_all();
    }

    /// Backend workers exit once the queue is empty.
    pub fn close(&self) {
        self.lock().closed = true;
        self.cv.notify_all();
    }
}

/// Messages to the finisher thread.
pub(crate) enum Finish {
    /// A partition, the device that proved it, and what its backend made of it.
    Proved(Box<(Ready, usize, Result<Proof, String>)>),
    /// Anything big to drop off the hot path.
    Release(Box<dyn Send>),
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

pub(crate) fn cpu_worker(shared: &Arc<Shared>, index: usize, tx: &Sender<Finish>) {
    while let Some(mut claim) = shared.ready.claim() {
        let Some(mut work) = shared.admit() else {
            return;
        };
        claim.admitted();
        if work.first {
            shared.mark_running(work.job);
        }
        let mut timings = Timings::default();
        let t = Instant::now();
        if work.load {
            if let Err(reason) = shared.load(&work.lease.circuit) {
                let reason = format!("loading circuit {}: {reason}", work.lease.circuit);
                fail(shared, work, reason);
                continue;
            }
        }
        let resources = shared.wait_hot(&work.lease.circuit);
        timings.srs_load_ms = ms(t.elapsed());
        if t.elapsed() >= Duration::from_millis(1) {
            let (job, p) = (work.job, work.partition);
            shared.trace.record(job, p, Stage::Load, index, t);
        }
        let Resources { key, pce, columns } = match resources {
            Ok(r) => r,
            Err(reason) => {
                let reason = format!("circuit {}: {reason}", work.lease.circuit);
                fail(shared, work, reason);
                continue;
            }
        };
        // Where the devices evaluate the PCE themselves, CPU workers make only columns.
        let device_pce = pce.as_ref().filter(|_| columns);
        if let Err(reason) = shared.placement(&work.kind, &key, device_pce.map(|p| &**p)) {
            // Accepted under another configuration (recovered from the store).
            fail(shared, work, format!("no device can prove it: {reason}"));
            continue;
        }
        if work.stopped() {
            continue;
        }
        let t = Instant::now();
        let synthesized = guarded("synthesis", || {
            let columns = device_pce.and_then(|pce| {
                let made = work.plan.columns(work.partition, pce)?;
                Some(made.map(|c| {
                    // Packed here, on the CPU worker, so the device's bus and lock never see
                    // the full columns of a witness that is mostly bits.
                    let columns = Columns::new(c.input, c.aux);
                    let pce = pce.clone();
                    (Assignment::Columns { columns, pce }, c.public_inputs)
                }))
            });
            columns
                .unwrap_or_else(|| {
                    let p = work.plan.synthesize(work.partition, pce.as_deref())?;
                    Ok((Assignment::Witness(p.witness), p.public_inputs))
                })
                .map_err(|e| e.to_string())
        });
        match synthesized {
            Err(reason) => fail(shared, work, reason),
            Ok((assignment, public_inputs)) => {
                timings.synthesis_ms = ms(t.elapsed());
                let (job, p) = (work.job, work.partition);
                shared.trace.record(job, p, Stage::Synthesis, index, t);
                let bytes = assignment.bytes(shared.meter);
                shared.measured(&mut work.lease, bytes);
                let ready = Box::new(Ready {
                    work,
                    assignment,
                    public_inputs,
                    key,
                    timings,
                });
                if ready.work.stopped() {
                    let _ = tx.send(Finish::Release(ready));
                } else if let Err(ready) = shared.ready.push(ready, claim) {
                    let _ = tx.send(Finish::Release(ready));
                }
            }
        }
    }
}

/// Runs `f`, turning a panic (in a proof kind or a backend) into an error for the job, so it
/// cannot take a worker thread, and with it every job in flight, down.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("{what} panicked: {msg}"))
    })
}

/// Fails `work`'s job after releasing what the partition held, so a caller woken by the
/// failure finds the memory free.
fn fail(shared: &Shared, work: Work, reason: String) {
    let job = work.job;
    drop(work);
    shared.conclude(job, JobState::Failed { reason }, None);
}

pub(crate) fn backend_worker(shared: &Arc<Shared>, index: usize, tx: &Sender<Finish>) {
    let slot = &shared.devices[index];
    while let Some(batch) = shared.ready.pop_batch(index, slot, shared.max_batch) {
        let (mut live, stopped): (Vec<Ready>, Vec<Ready>) =
            batch.into_iter().partition(|r| !r.work.stopped());
        for r in stopped {
            let _ = tx.send(Finish::Release(Box::new(r)));
        }
        if live.is_empty() {
            shared.ready.call_ended(index);
            continue;
        }
        shared.lock().backend_jobs[index] = Some(live[0].work.job);
        let key = live[0].key.clone();
        let rs: Vec<Randomness> = live
            .iter()
            .map(|_| Randomness::random(&mut rand::rngs::OsRng))
            .collect();
        // Witnesses go in one backend call (a backend may share work across a batch), and
        // are taken out here so that a panicking backend cannot lose them; columns go one at
        // a time through the device's `PceBackend`.
        let witnesses = take_witnesses(&mut live);
        let t = Instant::now();
        let result = guarded("the backend", || {
            match &witnesses {
                Some(w) => slot.backend.prove(&key, w, &rs),
                None => (live.iter().zip(&rs))
                    .map(|(r, rs)| r.assignment.prove_on(slot, &key, rs))
                    .collect(),
            }
            .map_err(|e| e.to_string())
        });
        for (r, w) in live.iter_mut().zip(witnesses.into_iter().flatten()) {
            r.assignment = Assignment::Witness(w);
        }
        let busy = t.elapsed();
        shared.ready.call_ended(index);
        let mine = &shared.counters.devices[index];
        Counters::add(&mine.busy_ns, busy.as_nanos() as u64);
        Counters::add(&mine.calls, 1);
        shared.lock().backend_jobs[index] = None;
        let n = live.len();
        let mut proofs: Vec<Result<Proof, String>> = match result {
            Ok(p) if p.len() == n => p.into_iter().map(Ok).collect(),
            Ok(p) => vec![
                Err(format!(
                    "backend returned {} proofs for {n} witnesses",
                    p.len()
                ));
                n
            ],
            Err(e) => vec![Err(e); n],
        };
        for (mut r, proof) in live.into_iter().zip(proofs.drain(..)) {
            r.timings.backend_ms = ms(busy) / n as u64;
            let (job, p) = (r.work.job, r.work.partition);
            shared.trace.record(job, p, Stage::Backend, index, t);
            let _ = tx.send(Finish::Proved(Box::new((r, index, proof))));
        }
    }
}

/// Moves the batch's witnesses out for one backend call (the backend takes a slice), if every
/// item is a witness; `None` (nothing moved) if some are columns.
fn take_witnesses(batch: &mut [Ready]) -> Option<Vec<Witness>> {
    let all = (batch.iter()).all(|r| matches!(r.assignment, Assignment::Witness(_)));
    all.then(|| {
        batch
            .iter_mut()
            .filter_map(|r| match &mut r.assignment {
                Assignment::Witness(w) => Some(std::mem::take(w)),
                Assignment::Columns { .. } => None,
            })
            .collect()
    })
}

pub(crate) fn finisher(shared: &Arc<Shared>, rx: &Receiver<Finish>) {
    loop {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(Finish::Proved(p)) => check(shared, p.0, p.1, p.2),
            Ok(Finish::Release(item)) => drop(item),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        shared.expire();
    }
}

/// Verifies a backend proof; a bad one (or a backend error) is retried once on the CPU
/// reference backend. Then records the partition, or fails the job with the reason.
fn check(shared: &Shared, ready: Ready, index: usize, proof: Result<Proof, String>) {
    let (device, mine) = (&shared.devices[index], &shared.counters.devices[index]);
    let Ready {
        work,
        assignment,
        public_inputs,
        key,
        timings,
    } = ready;
    if work.stopped() {
        return;
    }
    let started = Instant::now();
    let (job, partition, pvk) = (work.job, work.partition, work.pvk.clone());
    let traced = || {
        shared
            .trace
            .record(job, partition, Stage::Verify, 0, started)
    };
    let valid = |p: &Proof| verify_proof(&pvk, p, &public_inputs).unwrap_or(false);
    // Buffers and the lease go before the job is told, so its waiter finds them released.
    let first_error = match proof {
        Ok(p) if valid(&p) => {
            assignment.recycle();
            drop(work);
            traced();
            Counters::add(&mine.proved, 1);
            shared.partition_done(job, partition, p, timings);
            return;
        }
        Ok(_) => format!(
            "backend {} on {} returned a proof that does not verify",
            device.backend.name(),
            device.label
        ),
        Err(e) => format!("backend {} on {}: {e}", device.backend.name(), device.label),
    };
    Counters::add(&mine.failures, 1);
    Counters::add(&shared.counters.cpu_retries, 1);
    let rs = Randomness::random(&mut rand::rngs::OsRng);
    let retried = assignment.prove_with(&CpuBackend, &key, &rs);
    assignment.recycle();
    drop(work);
    traced();
    match retried {
        Ok(p) if valid(&p) => {
            Counters::add(&shared.counters.cpu_retry_successes, 1);
            shared.partition_done(job, partition, p, timings);
        }
        other => {
            let retry = match other {
                Err(e) => e.to_string(),
                Ok(_) => "its proof does not verify either".into(),
            };
            let reason = format!(
                "partition {partition}: {first_error}; retry on the CPU reference backend: {retry}"
            );
            shared.conclude(job, JobState::Failed { reason }, None);
        }
    }
}
