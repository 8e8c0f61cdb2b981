//! The C ABI of `cuda/cuzk_gpu.cu`, and the one place its statuses become [`GpuError`]s.
//!
//! Without the `cuda` feature the declarations are absent and [`cuda!`] returns
//! [`GpuError::NotBuilt`], so the rest of the crate compiles (and fails cleanly) everywhere.

// Without the kernels nothing produces a status; the conversion stays compiled.
#![cfg_attr(not(cuzk_cuda), allow(dead_code))]

use std::ffi::{c_char, CStr};

use crate::GpuError;

/// `cuzk_status`: 0 is success, positive a `cudaError_t`, negative a host-side failure.
#[repr(C)]
pub(crate) struct Status {
    code: i32,
    message: [c_char; 244],
}

/// `cuzk_quotient_times`: wall times (ms) of a device quotient's steps.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct QuotientTimes {
    pub abc: f64,
    pub coset: f64,
    pub combine: f64,
    pub coefficients: f64,
    pub msm: f64,
}

/// `cuzk_split_times`: where a witness MSM's time went (ms), and its ones and others.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
#[doc(hidden)]
pub struct SplitTimes {
    pub gather: f64,
    pub classes: f64,
    pub ones: f64,
    pub others: f64,
    pub ones_n: u64,
    pub others_n: u64,
}

const BAD_ORDINAL: i32 = -1;
const HOST_ALLOC: i32 = -2;
const BAD_ARGUMENT: i32 = -3;
// cudaError_t values that mean "no usable device or driver".
const NO_DEVICE: [i32; 4] = [
    3,   // cudaErrorInitializationError
    34,  // cudaErrorStubLibrary
    35,  // cudaErrorInsufficientDriver
    100, // cudaErrorNoDevice
];
const MEMORY_ALLOCATION: i32 = 2;

impl Status {
    /// Converts the status of a call made on GPU `ordinal` (ignored for device-less calls).
    pub(crate) fn check(self, ordinal: usize) -> Result<(), GpuError> {
        if self.code == 0 {
            return Ok(());
        }
        // SAFETY: the C side always NUL-terminates `message` (snprintf).
        let message = unsafe { CStr::from_ptr(self.message.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        Err(match self.code {
            BAD_ORDINAL => GpuError::BadOrdinal {
                ordinal,
                count: crate::device::count().unwrap_or(0),
            },
            HOST_ALLOC => GpuError::Host { ordinal, message },
            BAD_ARGUMENT => GpuError::Argument(message),
            MEMORY_ALLOCATION => GpuError::OutOfMemory { ordinal, message },
            c if NO_DEVICE.contains(&c) => GpuError::NoDevice(message),
            c if c < 0 => GpuError::Host { ordinal, message },
            code => GpuError::Cuda {
                ordinal,
                code,
                message,
            },
        })
    }
}

/// Calls `cuzk_*` on GPU `ordinal` and converts its status; `NotBuilt` without the kernels.
macro_rules! cuda {
    ($ordinal:expr, $f:ident($($arg:expr),* $(,)?)) => {{
        #[cfg(cuzk_cuda)]
        let r = unsafe { $crate::sys::ffi::$f($($arg),*) }.check($ordinal);
        #[cfg(not(cuzk_cuda))]
        let r = {
            let _ = ($ordinal, $($arg),*);
            Err::<(), $crate::GpuError>($crate::GpuError::NotBuilt)
        };
        r
    }};
}
pub(crate) use cuda;

#[cfg(cuzk_cuda)]
pub(crate) mod ffi {
    use std::ffi::{c_char, c_void};

    use blstrs::{Fp, Fp2};
    use cuzk_groth16::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

    use super::{QuotientTimes, SplitTimes, Status};
    use crate::msm::BucketSteps;
    use crate::pce::MatrixHost;

    /// sppark's `msm_t` with its points resident on one GPU (G1 or G2; typed in `crate::msm`).
    type Msm = c_void;
    /// `cuzk_pce_t`: a circuit's matrices and one witness on one GPU (`crate::pce`).
    type Pce = c_void;

    extern "C" {
        pub(crate) fn cuzk_gpu_count(count: *mut usize) -> Status;
        pub(crate) fn cuzk_gpu_info(
            ordinal: i32,
            name: *mut c_char,
            sm: *mut i32,
            free: *mut usize,
            total: *mut usize,
            settle: i32,
        ) -> Status;
        pub(crate) fn cuzk_gpu_keep_pool(ordinal: i32, keep: i32) -> Status;
        pub(crate) fn cuzk_msm_g1_new(
            ordinal: i32,
            points: *const G1Affine,
            n: usize,
            table_bits: u32,
            copies: u32,
            out: *mut *mut Msm,
        ) -> Status;
        pub(crate) fn cuzk_msm_g1_run(
            msm: *mut Msm,
            scalars: *const Fr,
            n: usize,
            out: *mut G1Projective,
        ) -> Status;
        pub(crate) fn cuzk_msm_g1_free(msm: *mut Msm);
        pub(crate) fn cuzk_msm_g1_streamed(
            ordinal: i32,
            points: *const G1Affine,
            scalars: *const Fr,
            n: usize,
            out: *mut G1Projective,
        ) -> Status;
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn cuzk_msm_g1_time(
            msm: *mut Msm,
            scalars: *const Fr,
            n: usize,
            engine: i32,
            window_bits: u32,
            runs: u32,
            out: *mut G1Projective,
            ms: *mut f64,
            steps: *mut BucketSteps,
        ) -> Status;
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn cuzk_msm_g2_time(
            msm: *mut Msm,
            scalars: *const Fr,
            n: usize,
            engine: i32,
            window_bits: u32,
            runs: u32,
            out: *mut G2Projective,
            ms: *mut f64,
            steps: *mut BucketSteps,
        ) -> Status;
        pub(crate) fn cuzk_msm_prefer(engine: i32) -> Status;
        pub(crate) fn cuzk_fixed_base_g1(
            ordinal: i32,
            table: *const [Fp; 2],
            rows: usize,
            window: u32,
            scalars: *const Fr,
            n: usize,
            out: *mut G1Affine,
        ) -> Status;
        pub(crate) fn cuzk_fixed_base_g2(
            ordinal: i32,
            table: *const [Fp2; 2],
            rows: usize,
            window: u32,
            scalars: *const Fr,
            n: usize,
            out: *mut G2Affine,
        ) -> Status;
        pub(crate) fn cuzk_msm_g2_new(
            ordinal: i32,
            points: *const G2Affine,
            n: usize,
            table_bits: u32,
            copies: u32,
            out: *mut *mut Msm,
        ) -> Status;
        pub(crate) fn cuzk_msm_g2_run(
            msm: *mut Msm,
            scalars: *const Fr,
            n: usize,
            out: *mut G2Projective,
        ) -> Status;
        pub(crate) fn cuzk_msm_g2_free(msm: *mut Msm);
        pub(crate) fn cuzk_msm_g2_streamed(
            ordinal: i32,
            points: *const G2Affine,
            scalars: *const Fr,
            n: usize,
            out: *mut G2Projective,
        ) -> Status;
        pub(crate) fn cuzk_ntt(
            ordinal: i32,
            inout: *mut Fr,
            lg: u32,
            inverse: i32,
            coset: i32,
        ) -> Status;
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn cuzk_quotient(
            ordinal: i32,
            a: *const Fr,
            b: *const Fr,
            c: *const Fr,
            n: usize,
            lg: u32,
            z_inv: *const Fr,
            h_out: *mut Fr,
            h_msm: *mut Msm,
            h_len: usize,
            msm_out: *mut G1Projective,
            times: *mut QuotientTimes,
        ) -> Status;
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn cuzk_pce_new(
            ordinal: i32,
            m: *const MatrixHost,
            num_inputs: usize,
            num_aux: usize,
            a_idx: *const u32,
            a_len: usize,
            b_idx: *const u32,
            b_len: usize,
            out: *mut *mut Pce,
        ) -> Status;
        pub(crate) fn cuzk_pce_free(pce: *mut Pce);
        pub(crate) fn cuzk_pce_upload(pce: *mut Pce, input: *const Fr, aux: *const Fr) -> Status;
        pub(crate) fn cuzk_pce_upload_packed(
            pce: *mut Pce,
            zero: *const u64,
            one: *const u64,
            starts: *const u32,
            others: *const Fr,
            num_others: usize,
        ) -> Status;
        pub(crate) fn cuzk_pce_products(
            pce: *mut Pce,
            a: *mut Fr,
            b: *mut Fr,
            c: *mut Fr,
        ) -> Status;
        pub(crate) fn cuzk_pce_quotient(
            pce: *mut Pce,
            lg: u32,
            z_inv: *const Fr,
            h_out: *mut Fr,
            h_msm: *mut Msm,
            h_len: usize,
            msm_out: *mut G1Projective,
            times: *mut QuotientTimes,
        ) -> Status;
        pub(crate) fn cuzk_pce_msm_g1(
            pce: *mut Pce,
            msm: *mut Msm,
            which: i32,
            out: *mut G1Projective,
            times: *mut SplitTimes,
        ) -> Status;
        pub(crate) fn cuzk_pce_msm_g2(
            pce: *mut Pce,
            msm: *mut Msm,
            which: i32,
            out: *mut G2Projective,
            times: *mut SplitTimes,
        ) -> Status;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: i32, text: &str) -> Status {
        let mut message = [0 as c_char; 244];
        for (m, b) in message.iter_mut().zip(text.bytes()) {
            *m = b as c_char;
        }
        Status { code, message }
    }

    #[test]
    fn statuses_become_typed_errors() {
        assert_eq!(status(0, "").check(0), Ok(()));
        assert!(matches!(
            status(2, "out of memory").check(3),
            Err(GpuError::OutOfMemory { ordinal: 3, .. })
        ));
        for code in NO_DEVICE {
            assert!(matches!(
                status(code, "x").check(0),
                Err(GpuError::NoDevice(_))
            ));
        }
        assert!(matches!(
            status(BAD_ORDINAL, "").check(7),
            Err(GpuError::BadOrdinal { ordinal: 7, .. })
        ));
        assert!(matches!(
            status(HOST_ALLOC, "").check(0),
            Err(GpuError::Host { .. })
        ));
        assert_eq!(
            status(BAD_ARGUMENT, "empty MSM base").check(0),
            Err(GpuError::Argument("empty MSM base".into()))
        );
        assert_eq!(
            status(719, "unspecified launch failure").check(1),
            Err(GpuError::Cuda {
                ordinal: 1,
                code: 719,
                message: "unspecified launch failure".into()
            })
        );
    }

    /// A 2 TiB allocation must come back as `OutOfMemory`, not abort the process.
    #[cfg(cuzk_cuda)]
    #[test]
    #[ignore = "needs an NVIDIA GPU; run by tools/gpu-tests.sh (docs/GPU.md)"]
    fn device_out_of_memory_is_typed() {
        let mut dummy = cuzk_groth16::Fr::from(1u64);
        let r = unsafe { ffi::cuzk_ntt(0, &mut dummy, 36, 0, 0) }.check(0);
        assert!(matches!(r, Err(GpuError::OutOfMemory { .. })), "{r:?}");
    }
}
