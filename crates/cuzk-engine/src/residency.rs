//! Parameter and PCE residency, in three real tiers:
//!
//! - **cold**: only the files on disk; nothing mapped, nothing charged.
//! - **warm**: the `.params` file mapped and its layout checked (sizes and the verifying key
//!   known), nothing decoded; not charged to the budget (page cache the kernel can drop).
//! - **hot**: every query section decoded and the PCE loaded; charged at measured size.
//!
//! Entries in use are pinned by a reference count; only idle hot entries are demoted, least
//! recently used first. The table is plain data guarded by the engine's lock; the slow parts
//! (mapping, decoding, extracting) are the free functions at the bottom, run outside it.

use std::collections::HashMap;
use std::sync::Arc;

use cuzk_groth16::params::{ProvingKey, Validation};
use cuzk_groth16::verifier::PreparedVerifyingKey;
use cuzk_pce::Pce;

use crate::budget::Meter;
use crate::kind::{CircuitId, CircuitSpec};

/// `cuzk.v1`'s `SRSStatus.Tier`, numbered as on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    Hot = 0,
    Warm = 1,
    Cold = 2,
}

/// The decoded key and PCE of a hot circuit.
#[derive(Debug)]
pub struct Hot {
    pub key: Arc<ProvingKey>,
    pub pce: Option<Arc<Pce>>,
}

/// Measured sizes of one circuit, under the engine's meter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    /// The decoded proving key.
    pub params: u64,
    /// The PCE: the file's size until it was loaded, then its measured size.
    pub pce: u64,
    /// One partition's witness: the key's upper bound until one was measured.
    pub witness: u64,
    /// Backend working memory for one partition.
    pub scratch: u64,
}

impl Sizes {
    pub fn hot(&self) -> u64 {
        self.params + self.pce
    }

    pub fn partition(&self) -> u64 {
        self.witness + self.scratch
    }
}

/// One circuit's residency.
#[derive(Debug)]
pub struct Entry {
    pub spec: CircuitSpec,
    pub sizes: Sizes,
    /// Whether `sizes.witness` was measured rather than bounded.
    pub witness_measured: bool,
    pub pvk: Arc<PreparedVerifyingKey>,
    /// The mapped key; `None` when cold.
    pub warm: Option<Arc<ProvingKey>>,
    pub hot: Option<Hot>,
    /// Bytes charged to the budget for `hot` (or for the load in progress).
    pub charged: u64,
    pub loading: bool,
    /// Partitions holding this entry.
    pub refs: usize,
    last_used: u64,
}

impl Entry {
    pub fn tier(&self) -> Tier {
        match (&self.hot, &self.warm) {
            (Some(_), _) => Tier::Hot,
            (None, Some(_)) => Tier::Warm,
            (None, None) => Tier::Cold,
        }
    }
}

/// What a status report shows for one circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResidentInfo {
    pub circuit: CircuitId,
    pub tier: Tier,
    /// Charged bytes when hot; otherwise what going hot would charge.
    pub size_bytes: u64,
    pub ref_count: usize,
}

/// Everything taken out of the table by an eviction, to be dropped off the lock.
#[derive(Debug, Default)]
pub struct Evicted {
    pub hot: Vec<Hot>,
    pub warm: Vec<Arc<ProvingKey>>,
    pub freed: u64,
}

/// Every circuit the engine has seen.
#[derive(Debug, Default)]
pub struct Residency {
    entries: HashMap<CircuitId, Entry>,
    clock: u64,
}

impl Residency {
    pub fn get(&self, id: &CircuitId) -> Option<&Entry> {
        self.entries.get(id)
    }

    pub fn get_mut(&mut self, id: &CircuitId) -> Option<&mut Entry> {
        self.entries.get_mut(id)
    }

    /// Adds a circuit mapped by [`map`]; a known circuit keeps its entry (and gets the mapping
    /// back if it had gone cold).
    pub fn insert(&mut self, mapped: Mapped) {
        let id = mapped.spec.id.clone();
        match self.entries.get_mut(&id) {
            Some(e) => {
                if e.warm.is_none() {
                    e.warm = Some(mapped.key);
                }
            }
            None => {
                self.entries.insert(
                    id,
                    Entry {
                        spec: mapped.spec,
                        sizes: mapped.sizes,
                        witness_measured: false,
                        pvk: mapped.pvk,
                        warm: Some(mapped.key),
                        hot: None,
                        charged: 0,
                        loading: false,
                        refs: 0,
                        last_used: 0,
                    },
                );
            }
        }
    }

    /// Marks `id` as used now and pins it.
    pub fn pin(&mut self, id: &CircuitId) {
        self.clock += 1;
        let e = self.entries.get_mut(id).expect("pinned circuits are known");
        e.refs += 1;
        e.last_used = self.clock;
    }

    pub fn unpin(&mut self, id: &CircuitId) {
        if let Some(e) = self.entries.get_mut(id) {
            e.refs = e.refs.saturating_sub(1);
        }
    }

    /// Idle hot circuits other than `keep`, least recently used first, with their charges.
    pub fn evictable(&self, keep: &CircuitId) -> Vec<(CircuitId, u64)> {
        let mut v: Vec<_> = self
            .entries
            .iter()
            .filter(|(id, e)| *id != keep && e.refs == 0 && !e.loading && e.hot.is_some())
            .map(|(id, e)| (e.last_used, id.clone(), e.charged))
            .collect();
        v.sort();
        v.into_iter().map(|(_, id, c)| (id, c)).collect()
    }

    /// Demotes an idle circuit to `to` (warm or cold); the caller releases `freed` from the
    /// budget and drops what comes back outside the lock.
    pub fn demote(&mut self, id: &CircuitId, to: Tier, out: &mut Evicted) {
        let Some(e) = self.entries.get_mut(id) else {
            return;
        };
        debug_assert!(e.refs == 0 && !e.loading);
        if let Some(hot) = e.hot.take() {
            out.hot.push(hot);
            out.freed += e.charged;
            e.charged = 0;
        }
        if to == Tier::Cold {
            out.warm.extend(e.warm.take());
        }
    }

    pub fn status(&self) -> Vec<ResidentInfo> {
        let mut v: Vec<_> = self
            .entries
            .iter()
            .map(|(id, e)| ResidentInfo {
                circuit: id.clone(),
                tier: e.tier(),
                size_bytes: if e.hot.is_some() {
                    e.charged
                } else {
                    e.sizes.hot()
                },
                ref_count: e.refs,
            })
            .collect();
        v.sort_by(|a, b| a.circuit.cmp(&b.circuit));
        v
    }

    /// Total charged for hot circuits (and loads in progress).
    pub fn charged(&self) -> u64 {
        self.entries.values().map(|e| e.charged).sum()
    }
}

/// A circuit taken to the warm tier, ready for [`Residency::insert`].
#[derive(Debug)]
pub struct Mapped {
    pub spec: CircuitSpec,
    pub key: Arc<ProvingKey>,
    pub pvk: Arc<PreparedVerifyingKey>,
    pub sizes: Sizes,
}

/// Maps `spec`'s parameter file (layout and verifying key checked) and measures the sizes.
pub fn map(spec: CircuitSpec, validation: Validation, meter: Meter) -> Result<Mapped, String> {
    if !spec.params.exists() {
        return Err(format!(
            "no parameters at {}; generate them with `cuzk paramgen` or fetch the official files",
            spec.params.display()
        ));
    }
    let key = ProvingKey::read(&spec.params, validation).map_err(|e| e.to_string())?;
    let params = meter.params(&key);
    // An unbuilt PCE is charged like the parameters until measured: real PCEs are far smaller.
    let pce = match &spec.pce {
        None => 0,
        Some(p) => match std::fs::metadata(&p.path) {
            Ok(m) => meter.scale(m.len()),
            Err(_) => params,
        },
    };
    let sizes = Sizes {
        params,
        pce,
        witness: meter.witness_bound(&key),
        scratch: meter.scratch(&key),
    };
    Ok(Mapped {
        pvk: Arc::new(PreparedVerifyingKey::new(&key.vk)),
        key: Arc::new(key),
        spec,
        sizes,
    })
}

/// Decodes `spec`'s parameters and loads (or extracts and caches) its PCE.
pub fn load_hot(spec: &CircuitSpec, validation: Validation) -> Result<Hot, String> {
    let key = ProvingKey::read(&spec.params, validation).map_err(|e| e.to_string())?;
    key.preload().map_err(|e| e.to_string())?;
    let pce = match &spec.pce {
        None => None,
        Some(p) => Some(Arc::new(load_pce(p)?)),
    };
    Ok(Hot {
        key: Arc::new(key),
        pce,
    })
}

fn load_pce(p: &crate::kind::PceSpec) -> Result<Pce, String> {
    if p.path.exists() {
        match Pce::load(&p.path, Some(&p.identity)) {
            Ok((pce, _)) => return Ok(pce),
            Err(e) => tracing::warn!(error = %e, "PCE cache unusable; extracting again"),
        }
    }
    let pce = (p.extract)().map_err(|e| format!("extracting the PCE: {e}"))?;
    // A cache that cannot be written (full disk, no permission) only costs the next start an
    // extraction; the write goes through a temporary file, so no partial cache is left.
    if let Err(e) = pce.write(&p.path, &p.identity) {
        tracing::warn!(error = %e, "PCE cache not written; proving from memory");
    }
    Ok(pce)
}
