//! Multi-scalar multiplication on the GPU with the points resident in device memory.
//!
//! A [`DeviceBase`] uploads a point set once (a proving key's query) and then runs any number
//! of MSMs against it; only the scalars cross the bus per call (through pinned staging).
//! Dropping it frees the device memory.
//!
//! Witness scalars are mostly 0 and 1 (96-99 % of a PoRep partition's), so the device sorts
//! them first: zeros are skipped, the points of ones are summed by batch addition, and only the
//! rest go through Pippenger (when over a quarter are neither, every scalar does).
//!
//! Two Pippengers take the scalars that go through buckets: sppark's, and ours
//! (`cuda/bucket_msm.cuh`: counting-sorted digits, equal-length segments per thread, parallel
//! weighted sums) for G1 from a measured size on. [`prefer`] overrides the choice
//! process-wide; [`DeviceBase::time`] runs one engine alone, for benchmarks and agreement
//! tests.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;

use cuzk_groth16::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::sys::cuda;
use crate::{Device, GpuError};

/// A group whose MSM has device entry points.
pub trait Curve: Send + 'static {
    type Affine: Copy + Send + Sync;
    type Projective: group::Group;
    #[doc(hidden)]
    fn upload(ordinal: usize, points: &[Self::Affine]) -> Result<NonNull<c_void>, GpuError>;
    #[doc(hidden)]
    fn run(raw: NonNull<c_void>, ordinal: usize, s: &[Fr]) -> Result<Self::Projective, GpuError>;
    #[doc(hidden)]
    fn run_pce(
        raw: NonNull<c_void>,
        pce: NonNull<c_void>,
        ordinal: usize,
        which: i32,
    ) -> Result<Self::Projective, GpuError>;
    #[doc(hidden)]
    fn time(
        raw: NonNull<c_void>,
        ordinal: usize,
        s: &[Fr],
        engine: Engine,
        runs: u32,
    ) -> Result<Timed<Self::Projective>, GpuError>;
    #[doc(hidden)]
    fn free(raw: NonNull<c_void>);
}

/// G1 of BLS12-381.
#[derive(Debug)]
pub enum G1 {}
/// G2 of BLS12-381.
#[derive(Debug)]
pub enum G2 {}

macro_rules! device_curve {
    ($curve:ty, $affine:ty, $projective:ty, $new:ident, $run:ident, $run_pce:ident, $time:ident,
     $free:ident) => {
        impl Curve for $curve {
            type Affine = $affine;
            type Projective = $projective;

            fn upload(ordinal: usize, points: &[$affine]) -> Result<NonNull<c_void>, GpuError> {
                let mut raw = std::ptr::null_mut::<c_void>();
                cuda!(
                    ordinal,
                    $new(ordinal as i32, points.as_ptr(), points.len(), &mut raw)
                )?;
                NonNull::new(raw).ok_or_else(|| GpuError::Argument("no MSM handle".into()))
            }

            fn run(
                raw: NonNull<c_void>,
                ordinal: usize,
                scalars: &[Fr],
            ) -> Result<$projective, GpuError> {
                let mut out = <$projective as group::Group>::identity();
                cuda!(
                    ordinal,
                    $run(raw.as_ptr(), scalars.as_ptr(), scalars.len(), &mut out)
                )?;
                Ok(out)
            }

            fn run_pce(
                raw: NonNull<c_void>,
                pce: NonNull<c_void>,
                ordinal: usize,
                which: i32,
            ) -> Result<$projective, GpuError> {
                let mut out = <$projective as group::Group>::identity();
                cuda!(
                    ordinal,
                    $run_pce(pce.as_ptr(), raw.as_ptr(), which, &mut out)
                )?;
                Ok(out)
            }

            fn time(
                raw: NonNull<c_void>,
                ordinal: usize,
                scalars: &[Fr],
                engine: Engine,
                runs: u32,
            ) -> Result<Timed<$projective>, GpuError> {
                let (code, bits) = engine.code();
                let mut sum = <$projective as group::Group>::identity();
                let mut ms = vec![0.0; runs as usize];
                let mut steps = BucketSteps::default();
                cuda!(
                    ordinal,
                    $time(
                        raw.as_ptr(),
                        scalars.as_ptr(),
                        scalars.len(),
                        code,
                        bits,
                        runs,
                        &mut sum,
                        ms.as_mut_ptr(),
                        &mut steps,
                    )
                )?;
                let steps = matches!(engine, Engine::Buckets { .. }).then_some(steps);
                Ok(Timed { sum, ms, steps })
            }

            fn free(raw: NonNull<c_void>) {
                #[cfg(cuzk_cuda)]
                // SAFETY: `raw` came from the matching `_new` and is freed exactly once (Drop).
                unsafe {
                    crate::sys::ffi::$free(raw.as_ptr())
                };
                #[cfg(not(cuzk_cuda))]
                let _ = raw;
            }
        }
    };
}

device_curve!(
    G1,
    G1Affine,
    G1Projective,
    cuzk_msm_g1_new,
    cuzk_msm_g1_run,
    cuzk_pce_msm_g1,
    cuzk_msm_g1_time,
    cuzk_msm_g1_free
);
device_curve!(
    G2,
    G2Affine,
    G2Projective,
    cuzk_msm_g2_new,
    cuzk_msm_g2_run,
    cuzk_pce_msm_g2,
    cuzk_msm_g2_time,
    cuzk_msm_g2_free
);

/// Points resident on one GPU. `Send` but not `Sync`: one MSM at a time per base, because
/// sppark's `msm_t` reuses its device buckets between calls.
#[derive(Debug)]
pub struct DeviceBase<C: Curve> {
    raw: NonNull<c_void>,
    ordinal: usize,
    len: usize,
    _curve: PhantomData<C>,
}

// SAFETY: the handle is only used through `&mut self` (or dropped), so never concurrently.
unsafe impl<C: Curve> Send for DeviceBase<C> {}

impl<C: Curve> DeviceBase<C> {
    /// Uploads `points` to `device`. An empty base is refused (there is nothing to multiply).
    pub fn upload(device: &Device, points: &[C::Affine]) -> Result<Self, GpuError> {
        if points.is_empty() {
            return Err(GpuError::Argument("empty MSM base".into()));
        }
        Ok(DeviceBase {
            raw: C::upload(device.ordinal(), points)?,
            ordinal: device.ordinal(),
            len: points.len(),
            _curve: PhantomData,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `Σ scalars[i] · points[i]` over the first `scalars.len()` points.
    pub fn msm(&mut self, scalars: &[Fr]) -> Result<C::Projective, GpuError> {
        if scalars.len() > self.len {
            return Err(GpuError::Argument(format!(
                "{} scalars for a base of {} points",
                scalars.len(),
                self.len
            )));
        }
        C::run(self.raw, self.ordinal, scalars)
    }

    /// `Σ scalars[i] · points[i]` by `engine` alone, every scalar through buckets: the scalars
    /// are uploaded once, then the MSM runs `runs` times (at least once) from device memory.
    pub fn time(
        &mut self,
        scalars: &[Fr],
        engine: Engine,
        runs: u32,
    ) -> Result<Timed<C::Projective>, GpuError> {
        if scalars.len() > self.len {
            return Err(GpuError::Argument(format!(
                "{} scalars for a base of {} points",
                scalars.len(),
                self.len
            )));
        }
        C::time(self.raw, self.ordinal, scalars, engine, runs.max(1))
    }

    /// The handle, for a device PCE's MSMs over this base (`&mut`: one MSM at a time).
    pub(crate) fn raw(&mut self) -> NonNull<c_void> {
        self.raw
    }

    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }
}

impl<C: Curve> Drop for DeviceBase<C> {
    fn drop(&mut self) {
        C::free(self.raw);
    }
}

/// A Pippenger for the scalars that go through buckets (G1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// sppark's.
    Sppark,
    /// Ours, with windows of `window_bits` bits (8-24), or chosen by size when `None`.
    Buckets { window_bits: Option<u32> },
}

impl Engine {
    fn code(self) -> (i32, u32) {
        match self {
            Engine::Sppark => (1, 0),
            Engine::Buckets { window_bits } => (2, window_bits.unwrap_or(0)),
        }
    }
}

/// Sets the engine of every later MSM in this process (`None`: by size, the default): an
/// escape hatch for operators and the side-by-side benchmark.
pub fn prefer(engine: Option<Engine>) -> Result<(), GpuError> {
    let code = engine.map_or(0, |e| e.code().0);
    cuda!(0, cuzk_msm_prefer(code))
}

/// `bucket_msm::times_t`: device milliseconds of one bucket MSM's steps, summed over windows.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct BucketSteps {
    /// Digits, histogram, scan and scatter.
    pub sort_ms: f64,
    /// Bucket sums (segments and carries).
    pub accumulate_ms: f64,
    /// Weighted bucket sums and the pairwise tree.
    pub reduce_ms: f64,
    pub window_bits: u32,
    pub windows: u32,
    /// Device memory the call allocated besides the base and the scalars.
    pub scratch_bytes: usize,
}

/// What [`DeviceBase::time`] measured.
#[derive(Debug, Clone)]
pub struct Timed<P> {
    pub sum: P,
    /// Wall time of each run, scalars already in device memory.
    pub ms: Vec<f64>,
    /// The last run's steps (ours only).
    pub steps: Option<BucketSteps>,
}

/// One-shot MSM: uploads `points`, multiplies, frees. An empty input gives the identity.
pub fn msm<C: Curve>(
    device: &Device,
    points: &[C::Affine],
    scalars: &[Fr],
) -> Result<C::Projective, GpuError> {
    if points.len() != scalars.len() {
        return Err(GpuError::Argument(format!(
            "{} points but {} scalars",
            points.len(),
            scalars.len()
        )));
    }
    if points.is_empty() {
        return Ok(<C::Projective as group::Group>::identity());
    }
    DeviceBase::<C>::upload(device, points)?.msm(scalars)
}
