//! [`GpuBackend`]: the [`Backend`] whose NTTs and MSMs run on one GPU.
//!
//! A proving key's five queries (and a circuit's PCE) are uploaded once and stay resident,
//! beside other keys and circuits, until a call needs their room ([`crate::resident`]) or the
//! backend is released; per proof only the witness crosses the bus. The proof is assembled exactly as [`CpuBackend`](cuzk_groth16::backend::CpuBackend)
//! does, so the bytes are identical for the same witness and randomness.

use std::sync::{Arc, Mutex, Weak};

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::backend::{
    assemble, check_batch, check_columns, check_shape, Backend, Footprint, Randomness,
};
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::{Fr, Proof, ProverError};
use cuzk_pce::{Pce, PceBackend};
use group::Group;

use crate::domain::quotient_msm;
use crate::msm::{Curve, DeviceBase, Table, G1, G2};
use crate::pce::{DevicePce, Scalars};
use crate::resident::{make_room, Lru};
use crate::{Device, GpuError};

/// Proves on one GPU. Calls are serialised per backend; make one per GPU to use several.
#[derive(Debug)]
pub struct GpuBackend {
    device: Device,
    resident: Mutex<Resident>,
}

/// What stays in device memory between calls.
#[derive(Debug, Default)]
struct Resident {
    /// Calls so far: the stamp of the current one.
    calls: u64,
    keys: Lru<ResidentKey>,
    /// Circuits of `prove_assigned` calls. The `Weak` keeps the `Arc`'s address from being
    /// reused, so pointer identity names the circuit, without keeping the host matrices alive
    /// after the engine drops them.
    circuits: Lru<(Weak<Pce>, DevicePce)>,
}

impl GpuBackend {
    /// A backend on GPU `ordinal`.
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        Ok(GpuBackend {
            device: Device::open(ordinal)?,
            resident: Mutex::new(Resident::default()),
        })
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// How many proving keys and circuits are resident on the device.
    pub fn resident(&self) -> (usize, usize) {
        let r = self.lock();
        (r.keys.len(), r.circuits.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Resident> {
        self.resident.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Uploads `pk`'s queries now rather than at the first proof.
    pub fn preload(&self, pk: &ProvingKey) -> Result<(), ProverError> {
        self.hold(&mut self.lock(), pk, None)?;
        Ok(())
    }

    /// Makes `pk`'s queries (and `pce`'s matrices) resident for one call, first freeing the
    /// least recently used other keys and circuits while the uploads and the call's scratch
    /// would not fit beside them.
    fn hold<'a>(
        &self,
        r: &'a mut Resident,
        pk: &ProvingKey,
        pce: Option<&Arc<Pce>>,
    ) -> Result<(&'a mut ResidentKey, Option<&'a mut DevicePce>), ProverError> {
        r.calls += 1;
        let Resident {
            calls: now,
            keys,
            circuits,
        } = r;
        let now = *now;
        let id = KeyId::of(pk);
        let is_key = |k: &ResidentKey| k.id == id;
        let circuit = pce.map(Arc::downgrade);
        let is_circuit =
            |(w, _): &(Weak<Pce>, DevicePce)| circuit.as_ref().is_some_and(|c| c.ptr_eq(w));
        // A circuit the engine has dropped can never be asked for again.
        circuits.retain(|(w, _)| w.strong_count() > 0);
        let mut need = self.footprint(pk).map_or(0, |f| {
            f.per_proof
                + if keys.touch(now, is_key) {
                    0
                } else {
                    f.resident
                }
        });
        if let Some(pce) = pce.filter(|_| !circuits.touch(now, is_circuit)) {
            need += DevicePce::device_bytes(pce);
        }
        let freed = make_room(keys, circuits, now, need, || {
            self.device.free_memory().map(|b| b as u64)
        })?;
        if freed > 0 {
            tracing::debug!(freed, need, "least recently used keys and circuits freed");
        }
        // Host scratch is kept only for the key in use (5.2 GB at 32 GiB PoRep).
        keys.idle_mut(now).for_each(ResidentKey::drop_scratch);
        let pce = match pce {
            Some(pce) => Some(
                &mut circuits
                    .get_or_try_insert(now, is_circuit, || {
                        Ok::<_, GpuError>((
                            Arc::downgrade(pce),
                            DevicePce::upload(&self.device, pce)?,
                        ))
                    })?
                    .1,
            ),
            None => None,
        };
        let key = keys.get_or_try_insert(now, is_key, || {
            let tables = TablePlan::new(pk.lengths(), self.table_budget());
            ResidentKey::upload(&self.device, pk, id.clone(), &tables)
        })?;
        Ok((key, pce))
    }

    /// Device memory a key's tables may take: an eighth of the device's.
    fn table_budget(&self) -> u64 {
        self.device_memory().unwrap_or(0) / 8
    }
}

impl Backend for GpuBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn prove(
        &self,
        pk: &ProvingKey,
        witnesses: &[Witness],
        randomness: &[Randomness],
    ) -> Result<Vec<Proof>, ProverError> {
        check_batch(witnesses, randomness)?;
        for w in witnesses {
            check_shape(pk, w)?;
        }
        let mut resident = self.lock();
        let (key, _) = self.hold(&mut resident, pk, None)?;
        witnesses
            .iter()
            .zip(randomness)
            .map(|(w, rs)| key.prove(pk, w, rs))
            .collect()
    }

    /// The GPU's total memory less [`CONTEXT_RESERVE`].
    fn device_memory(&self) -> Option<u64> {
        Some((self.device.total_memory() as u64).saturating_sub(CONTEXT_RESERVE))
    }

    /// sppark's layout ([`Footprint::uploaded`]), with [`MSM_BUCKETS`] per query and
    /// [`MSM_SCRATCH`] per proof, plus the key's tables and their MSMs' scratch.
    fn footprint(&self, pk: &ProvingKey) -> Option<Footprint> {
        let mut f = Footprint::uploaded(pk, MSM_BUCKETS, MSM_SCRATCH);
        let tables = TablePlan::new(pk.lengths(), self.table_budget());
        f.resident += tables.bytes();
        f.per_proof += tables.scratch();
        Some(f)
    }

    /// Frees `pk`'s device copy, and the circuits whose `Arc` is gone; other keys stay.
    fn release(&self, pk: &ProvingKey) {
        let id = KeyId::of(pk);
        let mut r = self.lock();
        r.keys.retain(|k| k.id != id);
        r.circuits.retain(|(w, _)| w.strong_count() > 0);
    }
}

impl PceBackend for GpuBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    /// `pce`'s matrices are kept on the device (uploaded at the first call for this `Arc`), a,
    /// b and c are evaluated there, and the MSMs read their scalars from the uploaded witness.
    fn prove_assigned(
        &self,
        pk: &ProvingKey,
        pce: &Arc<Pce>,
        input: &[Fr],
        aux: &[Fr],
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        let rows = pce.num_constraints() + pce.num_inputs;
        check_columns(pk, rows, input.len(), aux.len(), &pce.density)?;
        let mut resident = self.lock();
        let (key, device_pce) = self.hold(&mut resident, pk, Some(pce))?;
        let device_pce = device_pce.ok_or_else(|| GpuError::Argument("no circuit held".into()))?;
        key.prove_assigned(pk, device_pce, input, aux, rs)
    }

    /// [`DevicePce::device_bytes`].
    fn resident_bytes(&self, pce: &Pce) -> u64 {
        DevicePce::device_bytes(pce)
    }
}

/// Per-stage wall times of one proof, as `debug` events (target `cuzk_gpu::backend`), for
/// finding where a proof waits.
struct Stages(std::time::Instant);

impl Stages {
    fn start() -> Self {
        Stages(std::time::Instant::now())
    }

    fn lap(&mut self, stage: &'static str) {
        let ms = self.0.elapsed().as_secs_f64() * 1e3;
        tracing::debug!(stage, ms, "proof stage");
        self.0 = std::time::Instant::now();
    }
}

/// Device memory kept back from placement for the CUDA context and allocator slack.
pub const CONTEXT_RESERVE: u64 = 1 << 30;

/// What each resident query's `msm_t` allocates besides its points (its bucket arrays): the
/// H200 showed 1.6 GiB over the five queries of a 32 GiB key.
const MSM_BUCKETS: u64 = 384 << 20;

/// A call's device memory besides a, b and c: one batch of scalars and digits. The H200
/// showed 12.0 GiB per 32 GiB proof, against 12.0 GiB for a, b and c plus this. Our bucket
/// MSM's 6.0 GiB at 2^27 points (2.0 of digits and buckets, 4.0 of batch-affine sums) fits
/// inside the a, b, c allowance: the H MSM runs after b and c are freed, the witness MSMs
/// after a too.
const MSM_SCRATCH: u64 = 512 << 20;

/// The largest query that gets a [`Table`]. Measured on the H200 (PERFORMANCE.md, "Tables of
/// multiples"): a table MSM is 2.0-3.6x sppark's up to 2^19 points and 1.5x at 2^20, where a
/// plain MSM is mostly per-window launches, but only 1.28x at 2^22, whose five copies' build
/// (0.68 s per query) is paid again at every key swap: with a 2 KiB PoRep key's 2^22-point
/// query tabled, a WinningPoSt between its proofs cost the PoRep load 2 s per swap.
const TABLE_MAX_POINTS: usize = 1 << 20;

/// Which of a key's queries (h, l, a, b G1, b G2) get a one-pass [`Table`]: those of at most
/// [`TABLE_MAX_POINTS`], in that order, while their tables fit the budget.
#[derive(Debug, Clone, PartialEq)]
struct TablePlan {
    tables: [Option<Table>; 5],
    lengths: [usize; 5],
}

impl TablePlan {
    fn new(lengths: [usize; 5], budget: u64) -> Self {
        let mut left = budget;
        let tables = std::array::from_fn(|q| {
            let n = lengths[q];
            if n == 0 || n > TABLE_MAX_POINTS {
                return None;
            }
            let t = Table::for_points(n);
            let bytes = Self::query_bytes(q, t, n);
            (bytes <= left).then(|| {
                left -= bytes;
                t
            })
        });
        TablePlan { tables, lengths }
    }

    fn query_bytes(q: usize, t: Table, n: usize) -> u64 {
        if q == 4 {
            t.bytes::<G2>(n)
        } else {
            t.bytes::<G1>(n)
        }
    }

    /// Device memory of the tables, besides the queries' own points.
    fn bytes(&self) -> u64 {
        (0..5)
            .filter_map(|q| self.tables[q].map(|t| Self::query_bytes(q, t, self.lengths[q])))
            .sum()
    }

    /// The largest scratch of one table MSM (a proof runs its MSMs one at a time).
    fn scratch(&self) -> u64 {
        (0..5)
            .filter_map(|q| {
                let (t, n) = (self.tables[q]?, self.lengths[q]);
                Some(if q == 4 {
                    t.scratch::<G2>(n)
                } else {
                    t.scratch::<G1>(n)
                })
            })
            .max()
            .unwrap_or(0)
    }
}

/// Tells proving keys apart cheaply: δ is fresh randomness of each setup.
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeyId {
    delta_g1: [u8; 48],
    lengths: [usize; 5],
}

impl KeyId {
    fn of(pk: &ProvingKey) -> Self {
        KeyId {
            delta_g1: pk.vk.delta_g1.to_compressed(),
            lengths: pk.lengths(),
        }
    }
}

/// A proving key's queries in device memory. Empty queries have no base and sum to zero.
#[derive(Debug)]
struct ResidentKey {
    id: KeyId,
    h: Option<DeviceBase<G1>>,
    l: Option<DeviceBase<G1>>,
    a: Option<DeviceBase<G1>>,
    b_g1: Option<DeviceBase<G1>>,
    b_g2: Option<DeviceBase<G2>>,
    /// The A and B scalar vectors of the last proof, refilled by the next: a 32 GiB proof
    /// gathers 5.2 GB, and faulting in and unmapping that much per proof cost more than the
    /// gathers themselves (and slowed the other GPUs' proofs). Freed with the key, or when a
    /// call under another key comes.
    a_scalars: Vec<Fr>,
    b_scalars: Vec<Fr>,
}

fn upload<C: Curve>(
    device: &Device,
    points: &[C::Affine],
    table: Option<Table>,
) -> Result<Option<DeviceBase<C>>, GpuError> {
    if points.is_empty() {
        return Ok(None);
    }
    match table {
        Some(t) => DeviceBase::tabulated(device, points, t),
        None => DeviceBase::upload(device, points),
    }
    .map(Some)
}

fn run<C: Curve>(
    base: &mut Option<DeviceBase<C>>,
    scalars: &[Fr],
) -> Result<C::Projective, GpuError> {
    match base {
        Some(base) => base.msm(scalars),
        None => Ok(C::Projective::identity()),
    }
}

fn run_pce<C: Curve>(
    base: &mut Option<DeviceBase<C>>,
    pce: &mut DevicePce,
    which: Scalars,
) -> Result<C::Projective, GpuError> {
    match base {
        Some(base) => pce.msm(base, which),
        None => Ok(C::Projective::identity()),
    }
}

impl ResidentKey {
    fn drop_scratch(&mut self) {
        self.a_scalars = Vec::new();
        self.b_scalars = Vec::new();
    }

    fn upload(
        device: &Device,
        pk: &ProvingKey,
        id: KeyId,
        plan: &TablePlan,
    ) -> Result<Self, ProverError> {
        let [h, l, a, b_g1, b_g2] = plan.tables;
        let start = std::time::Instant::now();
        let key = ResidentKey {
            id,
            h: upload::<G1>(device, pk.h()?, h)?,
            l: upload::<G1>(device, pk.l()?, l)?,
            a: upload::<G1>(device, pk.a()?, a)?,
            b_g1: upload::<G1>(device, pk.b_g1()?, b_g1)?,
            b_g2: upload::<G2>(device, pk.b_g2()?, b_g2)?,
            a_scalars: Vec::new(),
            b_scalars: Vec::new(),
        };
        tracing::debug!(
            tables = ?plan.tables,
            table_bytes = plan.bytes(),
            ms = start.elapsed().as_secs_f64() * 1e3,
            "key uploaded"
        );
        Ok(key)
    }

    fn prove(
        &mut self,
        pk: &ProvingKey,
        w: &Witness,
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        let d = &w.density;
        let mut clock = Stages::start();
        let h = match &mut self.h {
            Some(base) => quotient_msm(base, &w.a, &w.b, &w.c)?,
            None => Group::identity(),
        };
        clock.lap("quotient + H");
        self.a_scalars.clear();
        self.a_scalars.extend_from_slice(&w.input);
        d.a_aux.select_into(&w.aux, &mut self.a_scalars);
        self.b_scalars.clear();
        d.b_input.select_into(&w.input, &mut self.b_scalars);
        d.b_aux.select_into(&w.aux, &mut self.b_scalars);
        clock.lap("gathers");
        let l = run(&mut self.l, &w.aux)?;
        clock.lap("L");
        let a = run(&mut self.a, &self.a_scalars)?;
        clock.lap("A");
        let b1 = run(&mut self.b_g1, &self.b_scalars)?;
        clock.lap("B G1");
        let b2 = run(&mut self.b_g2, &self.b_scalars)?;
        clock.lap("B G2");
        let proof = assemble(pk, rs, h + l, a, b1, b2);
        clock.lap("assemble");
        Ok(proof)
    }

    /// [`Self::prove`] with a, b, c and every MSM's scalars in device memory: only `input ‖
    /// aux` goes up.
    fn prove_assigned(
        &mut self,
        pk: &ProvingKey,
        pce: &mut DevicePce,
        input: &[Fr],
        aux: &[Fr],
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        let mut clock = Stages::start();
        pce.load(input, aux)?;
        clock.lap("witness upload");
        let h = match &mut self.h {
            Some(base) => pce.quotient_msm(base)?,
            None => Group::identity(),
        };
        clock.lap("mat-vec + quotient + H");
        let l = run_pce(&mut self.l, pce, Scalars::L)?;
        clock.lap("L");
        let a = run_pce(&mut self.a, pce, Scalars::A)?;
        clock.lap("A");
        let b1 = run_pce(&mut self.b_g1, pce, Scalars::B)?;
        clock.lap("B G1");
        let b2 = run_pce(&mut self.b_g2, pce, Scalars::B)?;
        clock.lap("B G2");
        Ok(assemble(pk, rs, h + l, a, b1, b2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn tables_go_to_small_queries_in_order_within_the_budget() {
        // A 32 GiB WinningPoSt key's lengths: every query gets a table on an H200's budget.
        let winning = [(1 << 19) - 1, 375_210, 284_196, 272_185, 272_185];
        let plan = TablePlan::new(winning, 17 * GIB);
        assert!(plan.tables.iter().all(Option::is_some), "{plan:?}");
        assert!(
            plan.bytes() <= 17 * GIB && plan.bytes() > GIB,
            "{}",
            plan.bytes()
        );
        // Budget for the first two only: the later ones go without, whatever their size.
        let first_two = TablePlan::new(winning, 17 * GIB).tables[..2]
            .iter()
            .zip(&winning)
            .map(|(t, &n)| t.unwrap().bytes::<G1>(n))
            .sum::<u64>();
        let plan = TablePlan::new(winning, first_two);
        assert_eq!(
            plan.tables.map(|t| t.is_some()),
            [true, true, false, false, false]
        );
        assert_eq!(plan.bytes(), first_two);
        // A 32 GiB PoRep key's queries are far past the limit, and empty queries get none.
        let porep = [
            (1 << 27) - 1,
            130_000_000,
            98_000_000,
            71_000_000,
            71_000_000,
        ];
        assert_eq!(TablePlan::new(porep, 17 * GIB).bytes(), 0);
        assert_eq!(TablePlan::new([0; 5], 17 * GIB).scratch(), 0);
    }

    #[test]
    fn tables_are_charged_to_the_key_and_each_proof() {
        let lengths = [(1 << 19) - 1, 375_210, 284_196, 272_185, 272_185];
        let plan = TablePlan::new(lengths, 17 * GIB);
        // Each table holds windows − 1 copies past the base, and its MSM sorts one entry per
        // point and window.
        let h = Table::for_points(lengths[0]);
        assert!(plan.scratch() >= 8 * h.copies() as u64 * lengths[0] as u64);
        let g2 = Table::for_points(lengths[4]);
        assert_eq!(
            g2.bytes::<G2>(lengths[4]),
            (g2.copies() as u64 - 1) * lengths[4] as u64 * 192
        );
    }
}
