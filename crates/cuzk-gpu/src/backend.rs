//! [`GpuBackend`]: the [`Backend`] whose NTTs and MSMs run on one GPU.
//!
//! A proving key's five queries (and a circuit's PCE) are uploaded once and stay resident,
//! beside other keys and circuits, until a call needs their room ([`crate::resident`]) or the
//! backend is released; per proof only the witness crosses the bus. A key too large for the
//! card keeps what fits and streams the rest at every proof ([`crate::placement`]). The proof
//! is assembled exactly as [`CpuBackend`](cuzk_groth16::backend::CpuBackend) does, so the bytes
//! are identical for the same witness and randomness.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, Weak};

use cuzk_groth16::assignment::{Densities, Witness};
use cuzk_groth16::backend::{
    assemble, check_batch, check_columns, check_shape, Backend, Footprint, Randomness,
};
use cuzk_groth16::domain::{Coefficients, Domain};
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::{Fr, G1Affine, G1Projective, Proof, ProverError};
use cuzk_pce::{Columns, Pce, PceBackend};
use group::Group;

use crate::domain::{check_h, quotient, quotient_msm};
use crate::msm::{streamed_msm, Curve, DeviceBase, Table, G1, G2};
use crate::pce::{DevicePce, Scalars};
use crate::placement::{DeviceMemory, KeyPlan};
use crate::resident::{make_room, Lru};
use crate::{Device, GpuError};

/// Proves on one GPU. Calls are serialised per backend; make one per GPU to use several.
#[derive(Debug)]
pub struct GpuBackend {
    device: Device,
    memory: DeviceMemory,
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
    /// The key whose calls left their scratch in the device's allocator pool.
    pool_key: Option<KeyId>,
}

impl GpuBackend {
    /// A backend on GPU `ordinal`, placing keys in all of its memory.
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        Self::with_memory(ordinal, None)
    }

    /// A backend on GPU `ordinal` that places keys in `memory` (by default
    /// [`DeviceMemory::of_device`] of the card's).
    pub fn with_memory(ordinal: usize, memory: Option<DeviceMemory>) -> Result<Self, GpuError> {
        let device = Device::open(ordinal)?;
        device.keep_pool(true)?;
        let memory =
            memory.unwrap_or_else(|| DeviceMemory::of_device(device.total_memory() as u64));
        Ok(GpuBackend {
            device,
            memory,
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

    /// Where `pk`'s queries go beside `beside` resident bytes (a circuit's matrices).
    fn plan(&self, pk: &ProvingKey, beside: u64) -> KeyPlan {
        KeyPlan::new(pk.lengths(), self.memory, beside)
    }

    /// Makes `pk`'s queries (and `pce`'s matrices) resident for one call, as far as its plan
    /// keeps them, first freeing the least recently used other keys and circuits while the
    /// uploads and the call's scratch would not fit beside them.
    fn hold<'a>(
        &self,
        r: &'a mut Resident,
        pk: &ProvingKey,
        pce: Option<&Arc<Pce>>,
    ) -> Result<(&'a mut ResidentKey, Option<&'a mut DevicePce>), ProverError> {
        r.calls += 1;
        let id = KeyId::of(pk);
        // The pool keeps what the last key's calls freed, in its circuit's sizes. Another
        // circuit's scratch might not fit beside blocks of the wrong sizes, so they go back
        // first (a key switch costs one proof's mapping, 40 ms at 32 GiB).
        if r.pool_key.as_ref() != Some(&id) {
            self.device.free_memory()?;
            r.pool_key = Some(id.clone());
        }
        let Resident {
            calls: now,
            keys,
            circuits,
            ..
        } = r;
        let now = *now;
        let plan = self.plan(pk, pce.map_or(0, |p| DevicePce::device_bytes(p)));
        // A copy placed beside another circuit may hold more than fits beside this one.
        keys.retain(|k| k.id != id || k.plan == plan);
        let is_key = |k: &ResidentKey| k.id == id;
        let circuit = pce.map(Arc::downgrade);
        let is_circuit =
            |(w, _): &(Weak<Pce>, DevicePce)| circuit.as_ref().is_some_and(|c| c.ptr_eq(w));
        // A circuit the engine has dropped can never be asked for again.
        circuits.retain(|(w, _)| w.strong_count() > 0);
        let f = plan.footprint();
        let mut need = f.per_proof;
        if !keys.touch(now, is_key) {
            need += f.resident;
        }
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
            ResidentKey::upload(&self.device, pk, id.clone(), plan)
        })?;
        Ok((key, pce))
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
            .map(|(w, rs)| key.prove(&self.device, pk, w, rs))
            .collect()
    }

    /// [`DeviceMemory::usable`]: by default the GPU's total memory less
    /// [`crate::placement::CONTEXT_RESERVE`].
    fn device_memory(&self) -> Option<u64> {
        Some(self.memory.usable())
    }

    fn footprint(&self, pk: &ProvingKey) -> Option<Footprint> {
        self.footprint_beside(pk, 0)
    }

    /// The footprint of `pk`'s plan beside `beside` bytes ([`crate::placement`]).
    fn footprint_beside(&self, pk: &ProvingKey, beside: u64) -> Option<Footprint> {
        let f = self.plan(pk, beside).footprint();
        Some(Footprint {
            resident: f.resident + beside,
            ..f
        })
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
        columns: &Columns,
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        let rows = pce.num_constraints() + pce.num_inputs;
        let (input, aux) = (columns.num_inputs(), columns.num_aux());
        check_columns(pk, rows, input, aux, &pce.density)?;
        let mut resident = self.lock();
        let (key, device_pce) = self.hold(&mut resident, pk, Some(pce))?;
        let device_pce = device_pce.ok_or_else(|| GpuError::Argument("no circuit held".into()))?;
        key.prove_assigned(&self.device, pk, pce, device_pce, columns, rs)
    }

    /// [`DevicePce::device_bytes`].
    fn resident_bytes(&self, pce: &Pce) -> u64 {
        DevicePce::device_bytes(pce)
    }

    /// The A and B scalars gathered for streamed queries ([`KeyPlan::host_scratch`]). A
    /// streamed L's aux expanded from packed columns needs nothing more: the partition is
    /// still charged what its synthesis held ([`Columns::capacity`]), which covers it.
    fn host_scratch(&self, pk: &ProvingKey, pce: &Pce) -> u64 {
        self.plan(pk, DevicePce::device_bytes(pce)).host_scratch()
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

/// A proving key's queries on the device, as its [`KeyPlan`] places them.
#[derive(Debug)]
struct ResidentKey {
    id: KeyId,
    plan: KeyPlan,
    h: Query<G1>,
    l: Query<G1>,
    a: Query<G1>,
    b_g1: Query<G1>,
    b_g2: Query<G2>,
    /// The A and B scalar vectors of the last proof, refilled by the next: a 32 GiB proof
    /// gathers 5.2 GB, and faulting in and unmapping that much per proof cost more than the
    /// gathers themselves (and slowed the other GPUs' proofs). Freed with the key, or when a
    /// call under another key comes. `prove_assigned` fills them only for streamed queries.
    a_scalars: Vec<Fr>,
    b_scalars: Vec<Fr>,
}

/// One query of a key on the device.
#[derive(Debug)]
enum Query<C: Curve> {
    /// No points: sums to zero.
    Empty,
    Resident(DeviceBase<C>),
    /// Uploaded from the host key at every proof, this many points at a time.
    Streamed {
        chunk: usize,
    },
}

impl<C: Curve> Query<C> {
    fn place(
        device: &Device,
        points: &[C::Affine],
        streamed: bool,
        table: Option<Table>,
        chunk_bytes: u64,
    ) -> Result<Self, GpuError> {
        Ok(if points.is_empty() {
            Query::Empty
        } else if streamed {
            let point = std::mem::size_of::<C::Affine>() as u64;
            Query::Streamed {
                chunk: (chunk_bytes / point).max(1) as usize,
            }
        } else {
            Query::Resident(match table {
                Some(t) => DeviceBase::tabulated(device, points, t)?,
                None => DeviceBase::upload(device, points)?,
            })
        })
    }

    /// `Σ scalars[i] · points[i]`, `points` being the host key's copy of this query.
    fn msm(
        &mut self,
        device: &Device,
        points: &[C::Affine],
        scalars: &[Fr],
    ) -> Result<C::Projective, GpuError> {
        match self {
            Query::Empty => Ok(<C::Projective as Group>::identity()),
            Query::Resident(base) => base.msm(scalars),
            Query::Streamed { chunk } => streamed_msm::<C>(device, points, scalars, *chunk),
        }
    }

    /// [`Query::msm`] over scalar set `which` of `pce`'s loaded witness; a streamed query
    /// takes the same scalars from the host (`host`).
    fn pce_msm(
        &mut self,
        device: &Device,
        pce: &mut DevicePce,
        which: Scalars,
        points: &[C::Affine],
        host: &[Fr],
    ) -> Result<C::Projective, GpuError> {
        match self {
            Query::Resident(base) => pce.msm(base, which),
            _ => self.msm(device, points, host),
        }
    }
}

/// `Σ h_i · H_i` of quotient coefficients `h` on the host, the H query streamed.
fn stream_h(
    device: &Device,
    points: &[G1Affine],
    chunk: usize,
    domain: &Domain,
    h: &Coefficients,
) -> Result<G1Projective, ProverError> {
    let len = check_h(points.len(), domain)?;
    Ok(streamed_msm::<G1>(
        device,
        points,
        &h.as_slice()[..len],
        chunk,
    )?)
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
        plan: KeyPlan,
    ) -> Result<Self, ProverError> {
        let [h, l, a, b_g1, b_g2] = plan.tables();
        let s = plan.streamed();
        let chunk = plan.chunk();
        let start = std::time::Instant::now();
        let key = ResidentKey {
            id,
            h: Query::place(device, pk.h()?, s[0], h, chunk)?,
            l: Query::place(device, pk.l()?, s[1], l, chunk)?,
            a: Query::place(device, pk.a()?, s[2], a, chunk)?,
            b_g1: Query::place(device, pk.b_g1()?, s[3], b_g1, chunk)?,
            b_g2: Query::place(device, pk.b_g2()?, s[4], b_g2, chunk)?,
            plan,
            a_scalars: Vec::new(),
            b_scalars: Vec::new(),
        };
        let resident_bytes = key.plan.footprint().resident;
        tracing::debug!(
            tables = ?key.plan.tables(),
            resident_bytes,
            streamed = ?s,
            ms = start.elapsed().as_secs_f64() * 1e3,
            "key uploaded"
        );
        if s.contains(&true) {
            tracing::info!(
                streamed = ?s,
                chunk,
                "the key does not fit the device whole: queries h, l, a, b_g1, b_g2 marked \
                 true go up at every proof"
            );
        }
        Ok(key)
    }

    /// Fills the A and B scalars from `input ‖ aux` (value `i` is `value(i)`, the first
    /// `num_inputs` the inputs) as the densities select them.
    fn gather(&mut self, num_inputs: usize, value: impl Fn(usize) -> Fr + Sync, d: &Densities) {
        let aux = |j| value(num_inputs + j);
        self.a_scalars.clear();
        self.a_scalars.extend((0..num_inputs).map(&value));
        d.a_aux.select_with(aux, &mut self.a_scalars);
        self.b_scalars.clear();
        d.b_input.select_with(&value, &mut self.b_scalars);
        d.b_aux.select_with(aux, &mut self.b_scalars);
    }

    fn prove(
        &mut self,
        device: &Device,
        pk: &ProvingKey,
        w: &Witness,
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        let mut clock = Stages::start();
        let h = match &mut self.h {
            Query::Empty => Group::identity(),
            Query::Resident(base) => quotient_msm(base, &w.a, &w.b, &w.c)?,
            Query::Streamed { chunk } => {
                let (domain, h) = quotient(device, &w.a, &w.b, &w.c)?;
                stream_h(device, pk.h()?, *chunk, &domain, &h)?
            }
        };
        clock.lap("quotient + H");
        let ni = w.input.len();
        let value = |i: usize| match i.checked_sub(ni) {
            None => w.input[i],
            Some(j) => w.aux[j],
        };
        self.gather(ni, value, &w.density);
        clock.lap("gathers");
        let l = self.l.msm(device, pk.l()?, &w.aux)?;
        clock.lap("L");
        let a = self.a.msm(device, pk.a()?, &self.a_scalars)?;
        clock.lap("A");
        let b1 = self.b_g1.msm(device, pk.b_g1()?, &self.b_scalars)?;
        clock.lap("B G1");
        let b2 = self.b_g2.msm(device, pk.b_g2()?, &self.b_scalars)?;
        clock.lap("B G2");
        let proof = assemble(pk, rs, h + l, a, b1, b2);
        clock.lap("assemble");
        Ok(proof)
    }

    /// [`Self::prove`] with a, b, c and the resident queries' scalars in device memory: only
    /// `input ‖ aux` goes up (and the streamed queries' points, with their scalars).
    #[allow(clippy::too_many_arguments)] // the call's key, circuit (host and device) and witness
    fn prove_assigned(
        &mut self,
        device: &Device,
        pk: &ProvingKey,
        circuit: &Pce,
        pce: &mut DevicePce,
        columns: &Columns,
        rs: &Randomness,
    ) -> Result<Proof, ProverError> {
        let mut clock = Stages::start();
        pce.load(columns)?;
        clock.lap("witness upload");
        let h = match &mut self.h {
            Query::Empty => Group::identity(),
            Query::Resident(base) => pce.quotient_msm(base)?,
            Query::Streamed { chunk } => {
                let (domain, h) = pce.quotient()?;
                stream_h(device, pk.h()?, *chunk, &domain, &h)?
            }
        };
        clock.lap("mat-vec + quotient + H");
        if self.plan.streamed()[2..].contains(&true) {
            self.gather(columns.num_inputs(), |i| columns.get(i), &circuit.density);
            clock.lap("gathers");
        }
        // A streamed L takes every aux value from the host (packed columns expand within the
        // partition's charge: `host_scratch`).
        let aux = match self.l {
            Query::Streamed { .. } => columns.aux(),
            _ => Cow::Borrowed(&[][..]),
        };
        let l = self.l.pce_msm(device, pce, Scalars::L, pk.l()?, &aux)?;
        clock.lap("L");
        let a = (self.a).pce_msm(device, pce, Scalars::A, pk.a()?, &self.a_scalars)?;
        clock.lap("A");
        let b1 = (self.b_g1).pce_msm(device, pce, Scalars::B, pk.b_g1()?, &self.b_scalars)?;
        clock.lap("B G1");
        let b2 = (self.b_g2).pce_msm(device, pce, Scalars::B, pk.b_g2()?, &self.b_scalars)?;
        clock.lap("B G2");
        Ok(assemble(pk, rs, h + l, a, b1, b2))
    }
}
