//! Proving devices: one backend worker per device, what each device may take (proof kinds,
//! memory), and each device's own memory account.
//!
//! A host may carry several GPUs. Every device gets a [`DeviceSlot`]; the backend workers share
//! one ready queue, and an idle device takes the most urgent partition it can prove, preferring
//! one whose proving key it already holds (a 32 GiB key is 47 GB to upload). Device memory is
//! accounted per device in a [`Ledger`], apart from the host budget.

use std::sync::Arc;

use cuzk_groth16::backend::{Backend, Footprint};
use cuzk_groth16::params::ProvingKey;
use cuzk_pce::{Pce, PceBackend};

use crate::job::Priority;
use crate::kind::CircuitId;

/// One proving device and what it may prove.
#[derive(Clone)]
pub struct DeviceSlot {
    /// Its name in status, metrics and traces, e.g. `gpu1`.
    pub label: String,
    pub backend: Arc<dyn Backend>,
    /// Proof kinds this device takes; empty for every kind.
    pub kinds: Vec<String>,
    /// Set when the device can evaluate a circuit's PCE itself (the GPU keeps the matrices in
    /// device memory): with every device so, CPU workers make only witness columns.
    pub pce_backend: Option<Arc<dyn PceBackend>>,
}

impl std::fmt::Debug for DeviceSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceSlot")
            .field("label", &self.label)
            .field("backend", &self.backend.name())
            .field("kinds", &self.kinds)
            .field("pce_backend", &self.pce_backend.as_ref().map(|b| b.name()))
            .finish()
    }
}

impl DeviceSlot {
    /// A device taking every proof kind.
    pub fn new(label: impl Into<String>, backend: Arc<dyn Backend>) -> Self {
        DeviceSlot {
            label: label.into(),
            backend,
            kinds: Vec::new(),
            pce_backend: None,
        }
    }

    /// Lets the device prove from witness columns through `b` (see [`DeviceSlot::pce_backend`]).
    pub fn with_pce_backend(mut self, b: Arc<dyn PceBackend>) -> Self {
        self.pce_backend = Some(b);
        self
    }

    /// Restricts the device to `kinds` (an empty list keeps every kind).
    pub fn only(mut self, kinds: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.kinds = kinds.into_iter().map(Into::into).collect();
        self
    }

    pub fn accepts(&self, kind: &str) -> bool {
        self.kinds.is_empty() || self.kinds.iter().any(|k| k == kind)
    }

    /// `pk`'s footprint on this device; with `pce` (a partition of columns) plus what the
    /// circuit's matrices keep there.
    pub(crate) fn footprint(&self, pk: &ProvingKey, pce: Option<&Pce>) -> Option<Footprint> {
        let beside = match (pce, &self.pce_backend) {
            (Some(pce), Some(b)) => b.resident_bytes(pce),
            _ => 0,
        };
        self.backend.footprint_beside(pk, beside)
    }

    /// The device's memory limit and the footprint on it, for a backend with memory of its own.
    fn memory(&self, pk: &ProvingKey, pce: Option<&Pce>) -> Option<(u64, Footprint)> {
        Some((self.backend.device_memory()?, self.footprint(pk, pce)?))
    }

    /// Whether it evaluates PCEs and has room for `pce`'s matrices beside `pk` and one proof.
    pub(crate) fn holds_matrices(&self, pk: &ProvingKey, pce: &Pce) -> bool {
        self.pce_backend.is_some() && self.too_small(pk, Some(pce)).is_none()
    }

    /// Why this device can never prove `kind` under `pk` (from columns of `pce`'s circuit when
    /// set), or `None` if it can. Checked for every queued partition whenever a device looks
    /// for work, so it allocates nothing.
    pub(crate) fn refusal(
        &self,
        kind: &str,
        pk: &ProvingKey,
        pce: Option<&Pce>,
    ) -> Option<Refusal> {
        if !self.accepts(kind) {
            return Some(Refusal::Kind);
        }
        self.too_small(pk, pce)
    }

    /// [`Refusal::Memory`] when one proof under `pk` (beside `pce`'s matrices) does not fit.
    fn too_small(&self, pk: &ProvingKey, pce: Option<&Pce>) -> Option<Refusal> {
        match self.memory(pk, pce) {
            Some((limit, f)) if f.call(1) > limit => Some(Refusal::Memory {
                limit,
                needed: f.call(1),
            }),
            _ => None,
        }
    }

    /// How many of `want` proofs under `pk` one call may take (at least 1; eligibility is
    /// [`DeviceSlot::refusal`]'s business).
    pub(crate) fn batch_limit(&self, pk: &ProvingKey, pce: Option<&Pce>, want: usize) -> usize {
        match self.memory(pk, pce) {
            Some((limit, f)) if f.per_proof > 0 => {
                let fit = limit.saturating_sub(f.resident) / f.per_proof;
                (fit as usize).clamp(1, want.max(1))
            }
            _ => want.max(1),
        }
    }

    /// `refusal` in words, naming the device.
    pub(crate) fn explain(&self, refusal: Refusal) -> String {
        match refusal {
            Refusal::Kind => format!("{} takes only {:?}", self.label, self.kinds),
            Refusal::Memory { limit, needed } => format!(
                "{} has {limit} bytes of device memory and one proof needs {needed}",
                self.label
            ),
        }
    }
}

/// Why a device cannot take some work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The device is dedicated to other proof kinds.
    Kind,
    /// Key plus one proof's working memory exceed the device.
    Memory { limit: u64, needed: u64 },
}

/// One device's memory as the engine placed work on it. A device backend keeps several keys
/// resident and frees the least recently used when a call needs room, so the account does
/// the same against the device's limit; a host backend (no limit) holds only the last.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Circuits whose keys the device holds, least recently used first, with their bytes.
    pub resident: Vec<(CircuitId, u64)>,
    /// Working memory of the call in progress.
    pub working: u64,
    /// The most ever in use.
    pub peak: u64,
    /// Every circuit a call ran under since it was last evicted: what the backend may still
    /// hold, whatever `resident` estimates (the backend frees by the memory it finds free).
    pub placed: Vec<CircuitId>,
}

impl Ledger {
    pub fn used(&self) -> u64 {
        self.resident.iter().map(|r| r.1).sum::<u64>() + self.working
    }

    pub fn holds(&self, circuit: &CircuitId) -> bool {
        self.resident.iter().any(|r| &r.0 == circuit)
    }

    /// A call of `batch` proofs of `circuit` starts on a device of `limit` bytes.
    pub fn start(
        &mut self,
        circuit: &CircuitId,
        f: Option<Footprint>,
        batch: usize,
        limit: Option<u64>,
    ) {
        let f = f.unwrap_or_default();
        if !self.placed.contains(circuit) {
            self.placed.push(circuit.clone());
        }
        self.resident.retain(|r| &r.0 != circuit);
        self.resident.push((circuit.clone(), f.resident));
        self.working = f.per_proof * batch as u64;
        while self.resident.len() > 1 && limit.map_or(true, |l| self.used() > l) {
            self.resident.remove(0);
        }
        self.peak = self.peak.max(self.used());
    }

    pub fn end(&mut self) {
        self.working = 0;
    }
}

/// What a device sees of one queued partition.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    pub circuit: &'a CircuitId,
    pub priority: Priority,
    /// The device can prove it (kind accepted, fits its memory).
    pub eligible: bool,
}

/// The queued partition a device takes: the first eligible one of the most urgent priority
/// present, but the first of that priority whose key the device already holds if there is one.
/// `None` exactly when nothing is eligible, so no device idles while work it can do waits.
pub fn pick(queue: &[Candidate<'_>], held: &Ledger) -> Option<usize> {
    let urgent = queue
        .iter()
        .filter(|c| c.eligible)
        .map(|c| c.priority)
        .max()?;
    let mut of_urgent = queue
        .iter()
        .enumerate()
        .filter(|(_, c)| c.eligible && c.priority == urgent);
    let first = of_urgent.clone().next().map(|(i, _)| i);
    of_urgent
        .find(|(_, c)| held.holds(c.circuit))
        .map(|(i, _)| i)
        .or(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn circuit(i: u8) -> CircuitId {
        CircuitId(format!("c{i}"))
    }

    proptest! {
        #[test]
        fn pick_takes_eligible_urgent_work_and_prefers_the_resident_key(
            queue in prop::collection::vec((0u8..3, 0usize..4, any::<bool>()), 0..12),
            resident in prop::collection::btree_set(0u8..3, 0..3),
        ) {
            let circuits: Vec<CircuitId> = (0..3).map(circuit).collect();
            let cands: Vec<Candidate<'_>> = queue
                .iter()
                .map(|&(c, p, eligible)| Candidate {
                    circuit: &circuits[c as usize],
                    priority: Priority::ALL[p],
                    eligible,
                })
                .collect();
            let held = Ledger {
                resident: resident.iter().map(|&r| (circuits[r as usize].clone(), 1)).collect(),
                ..Ledger::default()
            };
            let got = pick(&cands, &held);
            prop_assert_eq!(got.is_some(), cands.iter().any(|c| c.eligible));
            if let Some(i) = got {
                let c = cands[i];
                prop_assert!(c.eligible);
                let urgent = cands.iter().filter(|c| c.eligible).map(|c| c.priority).max();
                prop_assert_eq!(Some(c.priority), urgent);
                let same = |d: &Candidate<'_>| d.eligible && d.priority == c.priority;
                let resident_exists = cands.iter().any(|d| same(d) && held.holds(d.circuit));
                if resident_exists {
                    prop_assert!(held.holds(c.circuit));
                    prop_assert!(!cands[..i].iter().any(|d| same(d) && held.holds(d.circuit)));
                } else {
                    prop_assert!(!cands[..i].iter().any(same));
                }
            }
        }
    }

    #[test]
    fn the_ledger_keeps_keys_that_fit_and_drops_the_least_recently_used() {
        let f = |resident, per_proof| {
            Some(Footprint {
                resident,
                per_proof,
            })
        };
        let names = |l: &Ledger| l.resident.iter().map(|r| r.0.clone()).collect::<Vec<_>>();
        // A host backend holds only the last key.
        let mut l = Ledger::default();
        l.start(&circuit(0), f(100, 10), 2, None);
        assert_eq!(l.used(), 120);
        l.end();
        l.start(&circuit(1), f(50, 5), 1, None);
        assert_eq!((l.used(), l.peak, names(&l)), (55, 120, vec![circuit(1)]));
        // A device keeps both while they fit, the one used again last.
        let mut l = Ledger::default();
        l.start(&circuit(0), f(100, 10), 2, Some(200));
        l.end();
        l.start(&circuit(1), f(50, 5), 1, Some(200));
        l.end();
        l.start(&circuit(0), f(100, 10), 1, Some(200));
        assert_eq!((l.used(), names(&l)), (160, vec![circuit(1), circuit(0)]));
        l.end();
        // A third that does not fit beside them frees the least recently used first.
        l.start(&circuit(2), f(40, 20), 1, Some(200));
        assert_eq!((l.used(), names(&l)), (160, vec![circuit(0), circuit(2)]));
        l.end();
        l.start(&circuit(1), f(150, 50), 1, Some(200));
        assert_eq!((l.used(), l.peak, names(&l)), (200, 200, vec![circuit(1)]));
        assert!(l.holds(&circuit(1)) && !l.holds(&circuit(0)));
        // The backend may still hold what the estimate dropped.
        assert_eq!(l.placed, [circuit(0), circuit(1), circuit(2)]);
    }
}
