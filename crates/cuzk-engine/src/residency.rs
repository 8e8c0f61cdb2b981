//! Parameter and PCE residency, in three real tiers:
//!
//! - **cold**: only the files on disk; nothing mapped, nothing charged.
//! - **warm**: the `.params` file mapped and its layout checked (sizes and the verifying key
//!   known), nothing decoded; not charged to the budget (page cache the kernel can drop).
//! - **hot**: every query section decoded (or mapped from the point cache) and the PCE loaded;
//!   charged at measured size.
//!
//! Entries in use are pinned by a reference count; only idle hot entries are demoted, least
//! recently used first. The table is plain data guarded by the engine's lock; the slow parts
//! (mapping, decoding, extracting) are the [`Loader`]'s, run outside it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;

use cuzk_groth16::generator::FixedBaseMul;
use cuzk_groth16::msm::Tables;
use cuzk_groth16::params::{ParamsError, PointCache, ProvingKey, Validation};
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
    /// Whether its partitions are made as columns only, decided when it loads (every device
    /// evaluates PCEs and holds its matrices).
    pub columns: bool,
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
                        columns: false,
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

/// How circuits' keys are read: how far points are checked, and whether decoded points are
/// kept in a point cache beside the parameters (`<params>.cuzk-points`), which later loads map
/// instead of decoding (a 32 GiB key takes minutes to decode).
#[derive(Debug)]
pub struct Loader {
    validation: Validation,
    point_cache: bool,
    /// Fixed-base table memory per key whose spec asks for tables.
    tables: u64,
    seeded: Option<SeededKeys>,
    /// Point caches being written beside the first proofs, joined by [`Loader::finish`].
    writes: Mutex<Vec<JoinHandle<()>>>,
}

/// Bench only: keys made in memory where the `.params` file is missing, for keys larger than
/// the disk (a 32 GiB WindowPoSt key is 60.7 GB; the device machine has 64 GB of disk).
/// Each is the key `cuzk paramgen --seed` would write, and its `.vk` is written where the
/// `.params` would be, so verifiers can check its proofs, which verify against nothing else.
/// It lives in memory from the moment it is mapped (the warm tier then holds the whole key,
/// outside the budget) and is made again, minutes at 32 GiB, after the circuit goes cold.
#[derive(Clone)]
pub struct SeededKeys {
    seed: u64,
    points: Arc<dyn FixedBaseMul + Send + Sync>,
    /// The keys made, while anything holds them: two submits that map a cold circuit at once
    /// share one key instead of making two.
    made: Arc<Mutex<HashMap<CircuitId, Weak<ProvingKey>>>>,
}

impl Loader {
    pub fn new(validation: Validation, point_cache: bool, tables: u64) -> Self {
        Loader {
            validation,
            point_cache,
            tables,
            seeded: None,
            writes: Mutex::new(Vec::new()),
        }
    }

    pub fn with_seeded_keys(mut self, seeded: Option<SeededKeys>) -> Self {
        self.seeded = seeded;
        self
    }

    /// Maps `spec`'s parameter file (layout and verifying key checked), or makes the key in
    /// memory ([`SeededKeys`]), and measures the sizes. With `columns` (every device evaluates
    /// the circuit's PCE itself), a partition holds only its input and aux values on the host,
    /// and the backend works in device memory.
    pub fn map(&self, spec: CircuitSpec, meter: Meter, columns: bool) -> Result<Mapped, String> {
        let key = if spec.params.exists() {
            Arc::new(ProvingKey::read(&spec.params, self.validation).map_err(|e| e.to_string())?)
        } else if let Some(seeded) = &self.seeded {
            seeded.generate(&spec)?
        } else {
            return Err(format!(
                "no parameters at {}; generate them with `cuzk paramgen` or fetch the official files",
                spec.params.display()
            ));
        };
        let params = meter.params(&key) + meter.scale(self.tables_plan(&spec, &key));
        // An unbuilt PCE is charged like the parameters until measured: real PCEs are far
        // smaller.
        let pce = match &spec.pce {
            None => 0,
            Some(p) => match std::fs::metadata(&p.path) {
                Ok(m) => meter.scale(m.len()),
                Err(_) => params,
            },
        };
        let columns = columns && spec.pce.is_some();
        let sizes = Sizes {
            params,
            pce,
            witness: if columns {
                meter.columns_bound(&key)
            } else {
                meter.witness_bound(&key)
            },
            scratch: if columns { 0 } else { meter.scratch(&key) },
        };
        Ok(Mapped {
            pvk: Arc::new(PreparedVerifyingKey::new(&key.vk)),
            key,
            spec,
            sizes,
        })
    }

    /// Decodes `spec`'s parameters (or maps them from the point cache; a key made in memory,
    /// `warm`, is taken as it is) and loads (or extracts and caches) its PCE.
    pub fn load_hot(
        &self,
        spec: &CircuitSpec,
        warm: Option<Arc<ProvingKey>>,
    ) -> Result<Hot, String> {
        let t = std::time::Instant::now();
        let (key, points) = match warm {
            Some(key) if key.file().is_none() => (key, "generated"),
            _ => self.read_key(&spec.params).map_err(|e| e.to_string())?,
        };
        tracing::info!(
            circuit = %spec.id,
            points = %points,
            ms = t.elapsed().as_millis() as u64,
            "parameters loaded"
        );
        if self.tables_plan(spec, &key) > 0 {
            let t = std::time::Instant::now();
            let bytes = key.tabulate(self.tables).map_err(|e| e.to_string())?;
            tracing::info!(
                circuit = %spec.id,
                bytes,
                ms = t.elapsed().as_millis() as u64,
                "fixed-base tables built"
            );
        }
        let pce = match &spec.pce {
            None => None,
            Some(p) => Some(Arc::new(load_pce(p)?)),
        };
        Ok(Hot { key, pce })
    }

    /// Bytes of the fixed-base tables [`Loader::load_hot`] will build for `spec`'s key.
    fn tables_plan(&self, spec: &CircuitSpec, key: &ProvingKey) -> u64 {
        match spec.tables {
            true => Tables::plan(key.lengths(), self.tables).1,
            false => 0,
        }
    }

    /// The decoded key and where its points came from: `cached`, `decoded+cached` (the cache
    /// is being written in the background) or `decoded`.
    fn read_key(&self, params: &Path) -> Result<(Arc<ProvingKey>, &'static str), ParamsError> {
        if !self.point_cache {
            let key = ProvingKey::read(params, self.validation)?;
            key.preload()?;
            return Ok((Arc::new(key), "decoded"));
        }
        let cache = params.with_extension("cuzk-points");
        let (key, write) = match ProvingKey::read_cached(params, self.validation, &cache)? {
            (key, PointCache::Hit) => return Ok((Arc::new(key), "cached")),
            (key, PointCache::Miss(write)) => (Arc::new(key), write),
        };
        // The write reads the decoded points while partitions prove with them: it costs disk,
        // not cores. A cache that cannot be written (no space, no permission) only costs the
        // next load a decode.
        if let Err(e) = write.check_space(&key) {
            tracing::warn!(error = %e, "point cache not written");
            return Ok((key, "decoded"));
        }
        let k = Arc::clone(&key);
        let writer = std::thread::Builder::new()
            .name("cuzk-point-cache".into())
            .spawn(move || {
                let path = write.path().to_path_buf();
                let t = std::time::Instant::now();
                match write.write(&k) {
                    Ok(()) => tracing::info!(
                        cache = %path.display(),
                        ms = t.elapsed().as_millis() as u64,
                        "point cache written"
                    ),
                    Err(e) => {
                        tracing::warn!(cache = %path.display(), error = %e, "point cache not written")
                    }
                }
            });
        match writer {
            Ok(h) => self
                .writes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(h),
            Err(e) => tracing::warn!(error = %e, "point cache not written"),
        }
        Ok((key, "decoded+cached"))
    }

    /// Waits for the point caches still being written: one cut short by the process exiting
    /// would be lost (the write goes through a temporary file, so it is never left partial).
    pub fn finish(&self) {
        let writes = std::mem::take(&mut *self.writes.lock().unwrap_or_else(|p| p.into_inner()));
        for h in writes {
            let _ = h.join();
        }
    }
}

impl std::fmt::Debug for SeededKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeededKeys")
            .field("seed", &self.seed)
            .field("points", &self.points.name())
            .finish()
    }
}

impl SeededKeys {
    /// Keys from `seed`, their query points computed by `points` (a GPU's, or `CpuFixedBase`).
    pub fn new(seed: u64, points: Arc<dyn FixedBaseMul + Send + Sync>) -> Self {
        SeededKeys {
            seed,
            points,
            made: Arc::default(),
        }
    }

    /// `spec`'s key from this seed, as `cuzk paramgen --seed` makes it; writes its `.vk`.
    fn generate(&self, spec: &CircuitSpec) -> Result<Arc<ProvingKey>, String> {
        let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(key) = made.get(&spec.id).and_then(Weak::upgrade) {
            return Ok(key);
        }
        let t = std::time::Instant::now();
        let mut rng = cuzk_groth16::generator::seeded_rng(self.seed);
        let key = (spec.setup.0)(&mut rng, self.points.as_ref())
            .map_err(|e| format!("setup of {} in memory: {e}", spec.id))?;
        let vk = spec.params.with_extension("vk");
        key.vk
            .write(&vk)
            .map_err(|e| format!("{}: writing the verifying key: {e}", spec.id))?;
        tracing::warn!(
            circuit = %spec.id,
            seed = self.seed,
            points = self.points.name(),
            ms = t.elapsed().as_millis() as u64,
            vk = %vk.display(),
            "key made in memory (bench only): its proofs verify against this .vk and no other"
        );
        let key = Arc::new(key);
        made.insert(spec.id.clone(), Arc::downgrade(&key));
        Ok(key)
    }
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
