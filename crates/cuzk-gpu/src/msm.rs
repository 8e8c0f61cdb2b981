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
//! weighted sums) for G1 from a measured size on. A base uploaded with a [`Table`] (its
//! multiples `2^(c·j)·P` for every window j) always takes ours over the table: one sort,
//! accumulation and weighted sum for all windows at once, where a small MSM otherwise pays
//! each per window. [`prefer`] overrides the choice process-wide; [`DeviceBase::time`] runs
//! one engine alone, for benchmarks and agreement tests.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;

use cuzk_groth16::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

use crate::sys::{cuda, SplitTimes};
use crate::{Device, GpuError};

/// A group whose MSM has device entry points.
pub trait Curve: Send + 'static {
    type Affine: Copy + Send + Sync;
    type Projective: group::Group;
    #[doc(hidden)]
    fn upload(
        ordinal: usize,
        points: &[Self::Affine],
        table: Option<Table>,
    ) -> Result<NonNull<c_void>, GpuError>;
    #[doc(hidden)]
    fn run(raw: NonNull<c_void>, ordinal: usize, s: &[Fr]) -> Result<Self::Projective, GpuError>;
    #[doc(hidden)]
    fn run_pce(
        raw: NonNull<c_void>,
        pce: NonNull<c_void>,
        ordinal: usize,
        which: i32,
        times: Option<&mut SplitTimes>,
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
    fn streamed(
        ordinal: usize,
        points: &[Self::Affine],
        scalars: &[Fr],
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
    ($curve:ty, $affine:ty, $projective:ty, $new:ident, $run:ident, $run_pce:ident, $time:ident,
     $streamed:ident, $free:ident) => {
        impl Curve for $curve {
            type Affine = $affine;
            type Projective = $projective;

            fn upload(
                ordinal: usize,
                points: &[$affine],
                table: Option<Table>,
            ) -> Result<NonNull<c_void>, GpuError> {
                let mut raw = std::ptr::null_mut::<c_void>();
                let (bits, copies) = table.map_or((0, 1), |t| (t.window_bits, t.copies));
                cuda!(
                    ordinal,
                    $new(
                        ordinal as i32,
                        points.as_ptr(),
                        points.len(),
                        bits,
                        copies,
                        &mut raw
                    )
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
                times: Option<&mut SplitTimes>,
            ) -> Result<$projective, GpuError> {
                let mut out = <$projective as group::Group>::identity();
                let times = times.map_or(std::ptr::null_mut(), |t| t as *mut SplitTimes);
                cuda!(
                    ordinal,
                    $run_pce(pce.as_ptr(), raw.as_ptr(), which, &mut out, times)
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
                let steps = (engine != Engine::Sppark).then_some(steps);
                Ok(Timed { sum, ms, steps })
            }

            fn streamed(
                ordinal: usize,
                points: &[$affine],
                scalars: &[Fr],
            ) -> Result<$projective, GpuError> {
                let mut out = <$projective as group::Group>::identity();
                cuda!(
                    ordinal,
                    $streamed(
                        ordinal as i32,
                        points.as_ptr(),
                        scalars.as_ptr(),
                        points.len(),
                        &mut out
                    )
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
    cuzk_msm_g1_time,
    cuzk_msm_g1_streamed,
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
    cuzk_msm_g2_streamed,
    cuzk_msm_g2_free
);

/// Points resident on one GPU. `Send` but not `Sync`: one MSM at a time per base, because
/// sppark's `msm_t` reuses its device buckets between calls.
#[derive(Debug)]
pub struct DeviceBase<C: Curve> {
    raw: NonNull<c_void>,
    ordinal: usize,
    len: usize,
    table: Option<Table>,
    _curve: PhantomData<C>,
}

// SAFETY: the handle is only used through `&mut self` (or dropped), so never concurrently.
unsafe impl<C: Curve> Send for DeviceBase<C> {}

impl<C: Curve> DeviceBase<C> {
    /// Uploads `points` to `device`. An empty base is refused (there is nothing to multiply).
    pub fn upload(device: &Device, points: &[C::Affine]) -> Result<Self, GpuError> {
        Self::with_table(device, points, None)
    }

    /// Uploads `points` and builds `table`'s other copies from them on the device.
    pub fn tabulated(
        device: &Device,
        points: &[C::Affine],
        table: Table,
    ) -> Result<Self, GpuError> {
        Self::with_table(device, points, Some(table))
    }

    fn with_table(
        device: &Device,
        points: &[C::Affine],
        table: Option<Table>,
    ) -> Result<Self, GpuError> {
        if points.is_empty() {
            return Err(GpuError::Argument("empty MSM base".into()));
        }
        Ok(DeviceBase {
            raw: C::upload(device.ordinal(), points, table)?,
            ordinal: device.ordinal(),
            len: points.len(),
            table,
            _curve: PhantomData,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn table(&self) -> Option<Table> {
        self.table
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

/// A Pippenger for the scalars that go through buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// sppark's.
    Sppark,
    /// Ours, with windows of `window_bits` bits (8-24), or chosen by size when `None`.
    Buckets { window_bits: Option<u32> },
    /// Ours over the base's [`Table`] (as [`Engine::Buckets`] where a base has none; timing
    /// a base without one is refused).
    Table,
}

impl Engine {
    fn code(self) -> (i32, u32) {
        match self {
            Engine::Sppark => (1, 0),
            Engine::Buckets { window_bits } => (2, window_bits.unwrap_or(0)),
            Engine::Table => (3, 0),
        }
    }
}

/// Precomputed multiples of a base for our bucket MSM: `copies` copies, copy j holding
/// `2^(c·j)·P_i` for c = `window_bits`, so `copies` windows share one pass. Built on the device
/// at upload (c doublings and one inversion per point and copy) and kept with the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    window_bits: u32,
    copies: u32,
}

impl Table {
    /// Windows our bucket MSM takes with tables (its `geometry_t` bounds).
    pub const BITS: std::ops::RangeInclusive<u32> = 8..=24;

    /// A table of `copies` (2 up to the windows of `window_bits`-bit digits, which is one pass
    /// per MSM), or `None` for anything else.
    pub fn new(window_bits: u32, copies: u32) -> Option<Self> {
        (Self::BITS.contains(&window_bits) && (2..=windows(window_bits)).contains(&copies))
            .then_some(Table {
                window_bits,
                copies,
            })
    }

    /// The one-pass table for `n` points whose window minimises the pass's work: a mixed
    /// addition per digit (n per window) and about three per bucket for the weighted sum.
    pub fn for_points(n: usize) -> Self {
        let cost = |c: u32| n as u64 * windows(c) as u64 + (3 << (c - 1));
        let c = (*Self::BITS.start()..=20).min_by_key(|&c| cost(c)).unwrap();
        Table {
            window_bits: c,
            copies: windows(c),
        }
    }

    pub fn window_bits(&self) -> u32 {
        self.window_bits
    }

    pub fn copies(&self) -> u32 {
        self.copies
    }

    /// Device memory the copies past the base take for `n` points of `C`.
    pub fn bytes<C: Curve>(&self, n: usize) -> u64 {
        (self.copies as u64 - 1) * n as u64 * std::mem::size_of::<C::Affine>() as u64
    }

    /// Device memory one MSM of `n` scalars over the table allocates: a key and a sorted entry
    /// per window digit, the buckets (XYZZ: twice an affine point), and 32 MiB for the
    /// segments' carries and the weighted sums' ranges (15 MiB on the H200). A table's
    /// segments are too short for batch-affine sums (`bucket_msm.cuh`), so it takes none of
    /// their scratch.
    pub fn scratch<C: Curve>(&self, n: usize) -> u64 {
        let per_pass = self.copies.min(windows(self.window_bits)) as u64;
        let bucket = 2 * std::mem::size_of::<C::Affine>() as u64 + 8;
        8 * per_pass * n as u64 + (bucket << (self.window_bits - 1)) + (32 << 20)
    }
}

/// Signed `c`-bit windows of a 255-bit scalar (`bucket_msm::geometry_t`).
fn windows(c: u32) -> u32 {
    256u32.div_ceil(c)
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
    /// Sorts, accumulations and weighted sums: the windows, or fewer over a table.
    pub passes: u32,
    /// Whether the buckets were summed by batch-affine additions (G1's long segments).
    pub batch_affine: bool,
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
    check_lengths(points.len(), scalars.len())?;
    if points.is_empty() {
        return Ok(<C::Projective as group::Group>::identity());
    }
    DeviceBase::<C>::upload(device, points)?.msm(scalars)
}

fn check_lengths(points: usize, scalars: usize) -> Result<(), GpuError> {
    if points == scalars {
        Ok(())
    } else {
        Err(GpuError::Argument(format!(
            "{points} points but {scalars} scalars"
        )))
    }
}

/// `Σ scalars[i] · points[i]` with both in host memory, for a query too large to keep on the
/// device (see [`crate::placement`]): by sppark's Pippenger, which uploads the points a batch
/// at a time while it sums the previous batch, in calls of `chunk` points, so that a call's
/// device memory (two batches of an eighth to a quarter of its points, their digits and
/// buckets) stays within `chunk` points and the buckets the plan charges.
pub fn streamed_msm<C: Curve>(
    device: &Device,
    points: &[C::Affine],
    scalars: &[Fr],
    chunk: usize,
) -> Result<C::Projective, GpuError> {
    check_lengths(points.len(), scalars.len())?;
    let mut sum = <C::Projective as group::Group>::identity();
    for (p, s) in points
        .chunks(chunk.max(1))
        .zip(scalars.chunks(chunk.max(1)))
    {
        sum += C::streamed(device.ordinal(), p, s)?;
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_fit_the_bucket_msm_geometry() {
        assert_eq!(Table::new(16, 16).map(|t| t.copies()), Some(16));
        // More copies than windows, one copy, and windows outside 8-24 are refused.
        assert_eq!(Table::new(16, 17), None);
        assert_eq!(Table::new(16, 1), None);
        assert_eq!(Table::new(7, 2), None);
        assert_eq!(Table::new(25, 2), None);
        for lg in 0..=22 {
            let t = Table::for_points(1 << lg);
            assert_eq!(t.copies(), windows(t.window_bits()), "one pass at 2^{lg}");
            assert!(t.copies() as u64 * (1u64 << lg) < 1 << 31);
        }
        // The window grows with the points: a bucket's weighted-sum share stays small.
        assert!(
            Table::for_points(1 << 10).window_bits() < Table::for_points(1 << 19).window_bits()
        );
        assert_eq!(Table::new(20, 13).unwrap().bytes::<G1>(10), 12 * 10 * 96);
    }
}
