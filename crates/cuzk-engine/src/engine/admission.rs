//! Admission: a partition starts only when its circuit is hot and the budget holds it.
//! Circuits are mapped (warm) at submit, loaded to the hot tier on demand, demoted least
//! recently used first to make room; a partition's charge follows its measured witness.

use std::sync::Arc;
use std::time::Instant;

use cuzk_groth16::params::ProvingKey;

use super::{now_ms, Resources, Shared, State};
use crate::budget::Budget;
use crate::error::EngineError;
use crate::job::JobState;
use crate::kind::CircuitId;
use crate::metrics::Counters;
use crate::pipeline::{Lease, Work};
use crate::residency::{Evicted, Hot, Tier};
use crate::scheduler::Scheduler;

impl Shared {
    /// Maps `circuit` (warm tier) unless it is known and mapped already.
    pub(super) fn ensure_mapped(&self, circuit: &CircuitId) -> Result<(), EngineError> {
        if let Some(e) = self.lock().residency.get(circuit) {
            if e.tier() != Tier::Cold {
                return Ok(());
            }
        }
        let spec = self
            .registry
            .circuit(circuit)
            .ok_or_else(|| EngineError::UnknownCircuit(circuit.0.clone()))?;
        let mapped = self
            .loader
            .map(spec, self.meter, self.columns)
            .map_err(|reason| EngineError::Load {
                circuit: circuit.clone(),
                reason,
            })?;
        self.lock().residency.insert(mapped);
        Ok(())
    }

    /// Whether some device can prove `kind` under `pk` (from columns of `pce`'s circuit when
    /// set); if none can, why each one cannot.
    pub(crate) fn placement(
        &self,
        kind: &str,
        pk: &ProvingKey,
        pce: Option<&cuzk_pce::Pce>,
    ) -> Result<(), String> {
        let mut why = Vec::new();
        for d in &self.devices {
            match d.refusal(kind, pk, pce) {
                None => return Ok(()),
                Some(r) => why.push(d.explain(r)),
            }
        }
        Err(why.join("; "))
    }

    /// Frees budget by demoting idle hot circuits (least recently used first, never `keep`)
    /// until `need` bytes are free; false (and nothing demoted) if that cannot be reached.
    pub(crate) fn make_room(&self, st: &mut State, keep: &CircuitId, need: u64) -> bool {
        if st.budget.free() >= need {
            return true;
        }
        let candidates = st.residency.evictable(keep);
        let reclaimable: u64 = candidates.iter().map(|(_, c)| c).sum();
        if st.budget.free() + reclaimable < need {
            return false;
        }
        let mut out = Evicted::default();
        for (id, _) in candidates {
            if st.budget.free() + out.freed >= need {
                break;
            }
            st.residency.demote(&id, Tier::Warm, &mut out);
            Counters::add(&self.counters.evictions, 1);
        }
        st.budget.release(out.freed);
        self.release(Box::new(out));
        true
    }

    /// Charges `bytes` for `circuit`'s hot tier and marks it loading; the caller loads it.
    pub(crate) fn begin_load(&self, st: &mut State, circuit: &CircuitId, bytes: u64) {
        let charged = st.budget.try_charge(bytes);
        debug_assert!(charged, "begin_load after make_room");
        if let Some(e) = st.residency.get_mut(circuit) {
            e.charged += bytes;
            e.loading = true;
        }
    }

    /// Loads `circuit` to the hot tier (after [`Shared::begin_load`]), then charges its
    /// measured size instead of the estimate.
    pub(crate) fn load(&self, circuit: &CircuitId) -> Result<(), String> {
        let (spec, warm) = self
            .lock()
            .residency
            .get(circuit)
            .map(|e| (e.spec.clone(), e.warm.clone()))
            .ok_or("circuit vanished")?;
        let t = Instant::now();
        let loaded = self.loader.load_hot(&spec, warm);
        Counters::add(&self.counters.load_ns, t.elapsed().as_nanos() as u64);
        Counters::add(&self.counters.loads, 1);
        let mut guard = self.lock();
        let st = &mut *guard;
        let e = st.residency.get_mut(circuit).ok_or("circuit vanished")?;
        e.loading = false;
        let result = match loaded {
            Ok(hot) => {
                let pce = hot.pce.as_deref().map_or(0, |p| self.meter.pce(p));
                let measured = self.meter.params(&hot.key) + pce;
                e.sizes.pce = pce;
                e.columns = false;
                match hot.pce.as_deref().filter(|_| self.columns) {
                    Some(p) if self.columns_for(&hot.key, p) => {
                        e.columns = true;
                        e.sizes.scratch = self.host_scratch(&hot.key, p);
                    }
                    Some(_) => {
                        // Mapped for columns, but some device has no room for the matrices.
                        if !e.witness_measured {
                            e.sizes.witness = self.meter.witness_bound(&hot.key);
                        }
                        e.sizes.scratch = self.meter.scratch(&hot.key);
                    }
                    None => {}
                }
                Self::recharge(&mut st.budget, &mut e.charged, measured);
                e.hot = Some(hot);
                Ok(())
            }
            Err(reason) => {
                st.budget.release(e.charged);
                e.charged = 0;
                Err(reason)
            }
        };
        drop(guard);
        self.cv.notify_all();
        result
    }

    /// Changes a charge from `*charged` to `to` bytes. Growth that does not fit is charged
    /// anyway (the object exists already) and shows as a budget peak above the limit.
    pub(crate) fn recharge(budget: &mut Budget, charged: &mut u64, to: u64) {
        if to <= *charged {
            budget.release(*charged - to);
        } else if !budget.try_charge(to - *charged) {
            budget.force_charge(to - *charged);
        }
        *charged = to;
    }

    /// Waits until `circuit` is no longer loading and returns its hot resources.
    pub(crate) fn wait_hot(&self, circuit: &CircuitId) -> Result<Resources, String> {
        let mut st = self.lock();
        loop {
            let e = st.residency.get(circuit).ok_or("circuit vanished")?;
            if !e.loading {
                return match &e.hot {
                    Some(Hot { key, pce }) => Ok(Resources {
                        key: key.clone(),
                        pce: pce.clone(),
                        columns: e.columns,
                    }),
                    None => Err("its parameters failed to load".into()),
                };
            }
            st = self.wait(st);
        }
    }

    /// Picks the most urgent partition that can be admitted now: makes room, charges the
    /// budget, pins the circuit. Blocks until one can; `None` once the engine drains.
    pub(crate) fn admit(self: &Arc<Self>) -> Option<Work> {
        let mut guard = self.lock();
        loop {
            if guard.draining {
                return None;
            }
            let st = &mut *guard;
            if let Some((job, partition)) = st.scheduler.peek() {
                let e = &st.jobs[&job];
                let plan = e.plan.clone().expect("queued jobs have a plan");
                let circuit = plan.circuit();
                let Some(r) = st.residency.get(&circuit) else {
                    drop(guard);
                    self.conclude(
                        job,
                        JobState::Failed {
                            reason: format!("circuit {circuit} is not known"),
                        },
                        None,
                    );
                    guard = self.lock();
                    continue;
                };
                let load = r.hot.is_none() && !r.loading;
                let hot_bytes = if load { r.sizes.hot() } else { 0 };
                let part_bytes = r.sizes.partition();
                let pvk = r.pvk.clone();
                let needed = r.sizes.hot() + part_bytes;
                if needed > st.budget.limit() {
                    // Sizes grow once measured (a witness where columns were planned); a
                    // partition that can never be admitted fails rather than waiting forever.
                    let never = EngineError::NeverFits {
                        circuit,
                        needed,
                        budget: st.budget.limit(),
                    };
                    let reason = never.to_string();
                    drop(guard);
                    self.conclude(job, JobState::Failed { reason }, None);
                    guard = self.lock();
                    continue;
                }
                if self.make_room(st, &circuit, hot_bytes + part_bytes) {
                    if load {
                        self.begin_load(st, &circuit, hot_bytes);
                    }
                    let charged = st.budget.try_charge(part_bytes);
                    debug_assert!(charged);
                    st.residency.pin(&circuit);
                    self.schedule(st, Scheduler::pop);
                    st.in_flight += 1;
                    let now = now_ms();
                    let e = st.jobs.get_mut(&job).expect("peeked job exists");
                    e.in_flight += 1;
                    let first = e.state == JobState::Queued;
                    if first {
                        e.timings.queue_wait_ms = now.saturating_sub(e.submitted_ms);
                        e.state.progress(e.done_count(), e.proofs.len() as u32);
                    }
                    return Some(Work {
                        job,
                        partition,
                        kind: e.kind.clone(),
                        priority: e.priority,
                        plan,
                        stop: e.stop.clone(),
                        pvk,
                        load,
                        first,
                        lease: Lease::new(self.clone(), job, circuit, part_bytes),
                    });
                }
            }
            guard = self.wait(guard);
        }
    }

    /// Whether partitions of `pce`'s circuit are made as columns: every device evaluates PCEs
    /// and has room for these matrices beside `pk` and one proof (devices dedicated to other
    /// kinds too, so that the answer is the circuit's). Otherwise the host evaluates a, b, c
    /// into a witness, and a card too small for the matrices (24 GB at 32 GiB) still proves
    /// instead of failing the job.
    fn columns_for(&self, pk: &ProvingKey, pce: &cuzk_pce::Pce) -> bool {
        self.columns && self.devices.iter().all(|d| d.holds_matrices(pk, pce))
    }

    /// Host memory one proof from columns of `pce`'s circuit takes on the device that takes
    /// most (the scalars a GPU gathers for the queries it streams).
    fn host_scratch(&self, pk: &ProvingKey, pce: &cuzk_pce::Pce) -> u64 {
        let each = self.devices.iter().filter_map(|d| d.pce_backend.as_ref());
        let most = each.map(|b| b.host_scratch(pk, pce)).max();
        self.meter.scale(most.unwrap_or(0))
    }

    /// Records a measured witness: the partition's charge becomes witness + scratch, and the
    /// circuit's future partitions are charged the measured size.
    pub(crate) fn measured(&self, lease: &mut Lease, witness: u64) {
        let mut guard = self.lock();
        let st = &mut *guard;
        if let Some(e) = st.residency.get_mut(&lease.circuit) {
            e.sizes.witness = if e.witness_measured {
                e.sizes.witness.max(witness)
            } else {
                witness
            };
            e.witness_measured = true;
            Self::recharge(&mut st.budget, &mut lease.bytes, witness + e.sizes.scratch);
        }
        drop(guard);
        self.cv.notify_all();
    }
}
