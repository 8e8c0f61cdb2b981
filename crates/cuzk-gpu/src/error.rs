use cuzk_groth16::ProverError;
use thiserror::Error;

/// Why a GPU operation failed. Every CUDA failure arrives as one of these, never as a panic.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum GpuError {
    /// This build has no kernels: enable the `cuda` feature.
    #[error("cuzk-gpu was built without the `cuda` feature")]
    NotBuilt,
    /// No usable CUDA device or driver on this machine.
    #[error("no usable CUDA device: {0}")]
    NoDevice(String),
    /// The requested ordinal is not one of the enumerated GPUs.
    #[error("no GPU with ordinal {ordinal} ({count} present)")]
    BadOrdinal { ordinal: usize, count: usize },
    /// A device allocation failed.
    #[error("GPU {ordinal} is out of memory: {message}")]
    OutOfMemory { ordinal: usize, message: String },
    /// Any other CUDA runtime error (launch failure, illegal address, ...).
    #[error("CUDA error {code} on GPU {ordinal}: {message}")]
    Cuda {
        ordinal: usize,
        code: i32,
        message: String,
    },
    /// The host side of the CUDA layer failed (allocation, unexpected exception).
    #[error("CUDA host layer on GPU {ordinal}: {message}")]
    Host { ordinal: usize, message: String },
    /// The caller passed inconsistent sizes.
    #[error("invalid GPU call: {0}")]
    Argument(String),
}

impl From<GpuError> for ProverError {
    fn from(e: GpuError) -> Self {
        ProverError::Backend {
            backend: "cuda",
            message: e.to_string(),
        }
    }
}
