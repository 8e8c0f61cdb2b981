//! Multi-scalar multiplication on the GPU with the points resident in device memory.
//!
//! A [`DeviceBase`] uploads a point set once (a proving key's query) and then runs any number
//! of MSMs against it; only the scalars cross the bus per call (through pinned staging).
//! Dropping it frees the device memory.
//!
//! Witness scalars are mostly 0 and 1 (96-99 % of a PoRep partition's), so the device sorts
//! them first: zeros are skipped, the points of ones are summed by batch addition, and only the
//! rest go through Pippenger (when over a quarter are neither, every scalar does).

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
    fn free(raw: NonNull<c_void>);
}

/// G1 of BLS12-381.
#[derive(Debug)]
pub enum G1 {}
/// G2 of BLS12-381.
#[derive(Debug)]
pub enum G2 {}

macro_rules! device_curve {
    ($curve:ty, $affine:ty, $projective:ty, $new:ident, $run:ident, $run_pce:ident, $free:ident) => {
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
    cuzk_msm_g1_free
);
device_curve!(
    G2,
    G2Affine,
    G2Projective,
    cuzk_msm_g2_new,
    cuzk_msm_g2_run,
    cuzk_pce_msm_g2,
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
