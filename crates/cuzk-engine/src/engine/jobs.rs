//! The life of a job in the shared state: accepted durably, recovered after a restart,
//! partition proofs recorded as they arrive, concluded once, forgotten when its result
//! expires.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use cuzk_groth16::Proof;

use super::{now_ms, JobEntry, Shared};
use crate::error::EngineError;
use crate::job::{JobId, JobState, Request, Timings};
use crate::kind::Plan;
use crate::metrics::Counters;
use crate::store::{Accept, Loaded};

impl Shared {
    pub(super) fn submit(&self, req: Request) -> Result<JobId, EngineError> {
        if !self.lock().accepting {
            return Err(EngineError::ShuttingDown);
        }
        let kind = self
            .registry
            .get(&req.kind)
            .ok_or_else(|| EngineError::UnknownKind(req.kind.clone()))?;
        let plan = kind.plan(&req.payload)?;
        let circuit = plan.circuit();
        self.ensure_mapped(&circuit)?;
        {
            let st = self.lock();
            if let Some(key) = st.residency.get(&circuit).and_then(|e| e.warm.clone()) {
                self.placement(&req.kind, &key, None)
                    .map_err(|reason| EngineError::NoDevice {
                        kind: req.kind.clone(),
                        reason,
                    })?;
            }
            let sizes = st.residency.get(&circuit).map(|e| e.sizes);
            let needed = sizes.map_or(0, |s| s.hot() + s.partition());
            if needed > st.budget.limit() {
                return Err(EngineError::NeverFits {
                    circuit,
                    needed,
                    budget: st.budget.limit(),
                });
            }
        }
        let now = now_ms();
        // The durable accept and the in-memory insert happen under one lock, so a duplicate
        // submit racing this one never gets an id the engine does not know yet.
        let mut st = self.lock();
        match self.store.accept(&req, now)? {
            Accept::Conflict(job) => Err(EngineError::RequestIdReused {
                request_id: req.request_id,
                job,
            }),
            Accept::Existing(job) => {
                Counters::add(&self.counters.duplicates, 1);
                Ok(job)
            }
            Accept::New(job) => {
                let rec = crate::store::Record {
                    request_id: req.request_id,
                    kind: req.kind,
                    priority: req.priority,
                    state: JobState::Queued,
                    submitted_ms: now,
                    finished_ms: None,
                    restarts: 0,
                    timings: Timings::default(),
                };
                let partitions = plan.partitions();
                st.jobs.insert(job, JobEntry::new(&rec, Some(plan)));
                self.schedule(&mut st, |s| s.push(job, rec.priority, 0..partitions));
                drop(st);
                Counters::add(&self.counters.submitted, 1);
                self.cv.notify_all();
                Ok(job)
            }
        }
    }

    /// Puts a job found in the store back: finished ones for fetching, unfinished ones into
    /// the queue with their stored partition proofs, or failed with the reason they cannot run.
    pub(super) fn recover(&self, l: Loaded) -> Result<(), EngineError> {
        let Loaded {
            id,
            record,
            payload,
            parts,
        } = l;
        if record.state.is_terminal() {
            let mut e = JobEntry::new(&record, None);
            if record.state == JobState::Succeeded {
                e.result = self.store.result(id)?;
            }
            self.lock().jobs.insert(id, e);
            return Ok(());
        }
        Counters::add(&self.counters.recovered, 1);
        let plan = self.recovered_plan(&record, payload.as_deref());
        let mut e = JobEntry::new(&record, plan.as_ref().ok().cloned());
        for (k, bytes) in parts {
            // A stored proof that does not decode is simply made again.
            if let (Some(slot), Ok(p)) = (e.proofs.get_mut(k as usize), Proof::from_bytes(&bytes)) {
                *slot = Some(p);
            }
        }
        let pending: Vec<usize> = (0..e.proofs.len())
            .filter(|&k| e.proofs[k].is_none())
            .collect();
        let priority = e.priority;
        self.lock().jobs.insert(id, e);
        match plan {
            Err(reason) => {
                self.conclude(id, JobState::Failed { reason }, None);
            }
            Ok(_) if pending.is_empty() => self.complete(id),
            Ok(_) => {
                self.schedule(&mut self.lock(), |s| s.push(id, priority, pending));
            }
        }
        Ok(())
    }

    fn recovered_plan(
        &self,
        record: &crate::store::Record,
        payload: Option<&[u8]>,
    ) -> Result<Arc<dyn Plan>, String> {
        if record.restarts > self.max_restarts {
            return Err(format!(
                "interrupted by {} engine restarts while running; not retried again",
                record.restarts
            ));
        }
        let kind = self
            .registry
            .get(&record.kind)
            .ok_or_else(|| format!("proof kind {:?} is no longer registered", record.kind))?;
        let payload = payload.ok_or("the stored request has no payload")?;
        let plan = kind.plan(payload).map_err(|e| e.to_string())?;
        self.ensure_mapped(&plan.circuit())
            .map_err(|e| e.to_string())?;
        Ok(plan)
    }

    /// Persists that `job` started (so a restart counts it).
    pub(crate) fn mark_running(&self, job: JobId) {
        let state = self.lock().jobs.get(&job).map(|e| e.state.clone());
        if let (Some(state), false) = (state, self.halted()) {
            let _ = self.store.set_state(job, &state);
        }
    }

    /// Records partition `k`'s verified proof; completes the job when it was the last.
    pub(crate) fn partition_done(&self, job: JobId, k: usize, proof: Proof, t: Timings) {
        // The proof is stored before the job reports it done, so a status never runs ahead of
        // what survives a crash (recovery counts the stored proofs, not the recorded state).
        let next = {
            let st = self.lock();
            let Some(e) = st.jobs.get(&job) else {
                return;
            };
            if e.state.is_terminal() {
                return;
            }
            let mut next = e.state.clone();
            let done = e.done_count() + u32::from(e.proofs[k].is_none());
            next.progress(done, e.proofs.len() as u32);
            next
        };
        if !self.halted() {
            let _ = self
                .store
                .put_partition(job, k as u32, &proof.to_bytes(), &next);
        }
        let state = {
            let mut st = self.lock();
            let Some(e) = st.jobs.get_mut(&job) else {
                return;
            };
            if e.state.is_terminal() {
                return;
            }
            e.proofs[k] = Some(proof);
            e.timings.srs_load_ms += t.srs_load_ms;
            e.timings.synthesis_ms += t.synthesis_ms;
            e.timings.backend_ms += t.backend_ms;
            let done = e.done_count();
            e.state.progress(done, e.proofs.len() as u32);
            e.state.clone()
        };
        Counters::add(&self.counters.partitions, 1);
        if let JobState::Running { done, total } = state {
            if done == total {
                self.complete(job);
            }
        }
        self.cv.notify_all();
    }

    /// Assembles a job whose partitions are all proved and records its success.
    fn complete(&self, job: JobId) {
        let parts = {
            let st = self.lock();
            st.jobs.get(&job).and_then(|e| {
                let proofs: Option<Vec<Proof>> = e.proofs.iter().copied().collect();
                Some((e.plan.clone()?, proofs?))
            })
        };
        if let Some((plan, proofs)) = parts {
            let bytes = plan.assemble(&proofs);
            self.conclude(job, JobState::Succeeded, Some(bytes));
        }
    }

    /// Moves `job` to a terminal state, once: the first caller wins, later ones get false.
    /// The store commit happens under the lock so no waiter sees an unrecorded ending.
    pub(crate) fn conclude(&self, job: JobId, to: JobState, result: Option<Vec<u8>>) -> bool {
        let mut guard = self.lock();
        let st = &mut *guard;
        let Some(e) = st.jobs.get_mut(&job) else {
            return false;
        };
        if e.state.finish(job, to.clone()).is_err() {
            return false;
        }
        e.stop.store(true, Ordering::SeqCst);
        let now = now_ms();
        e.finished_ms = Some(now);
        e.timings.total_ms = now.saturating_sub(e.submitted_ms);
        e.plan = None;
        e.proofs = Vec::new();
        e.result = result;
        let timings = e.timings;
        if !self.halted() {
            let _ = self
                .store
                .finish(job, &to, e.result.as_deref(), timings, now);
        }
        self.schedule(st, |s| s.remove(job));
        let counter = match to {
            JobState::Succeeded => &self.counters.succeeded,
            JobState::Cancelled => &self.counters.cancelled,
            _ => &self.counters.failed,
        };
        Counters::add(counter, 1);
        if to == JobState::Succeeded {
            self.counters.stages.observe(&timings);
        }
        drop(guard);
        self.cv.notify_all();
        true
    }

    /// Forgets finished jobs older than the result lifetime (checked at most once a second).
    pub(crate) fn expire(&self) {
        let now = now_ms();
        let ttl = self.result_ttl.as_millis() as u64;
        let expired: Vec<JobId> = {
            let mut st = self.lock();
            if now < st.next_expiry_check {
                return;
            }
            st.next_expiry_check = now + 1000;
            st.jobs
                .iter()
                .filter(|(_, e)| e.finished_ms.is_some_and(|f| now.saturating_sub(f) > ttl))
                .map(|(id, _)| *id)
                .collect()
        };
        for id in expired {
            if self.halted() || self.store.remove(id).is_ok() {
                self.lock().jobs.remove(&id);
            }
        }
    }
}
