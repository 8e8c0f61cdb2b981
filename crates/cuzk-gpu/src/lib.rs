//! CUDA backend for cuzk's Groth16 prover.
//!
//! Kernels live in the workspace's `cuda/` directory and use sppark's Pippenger MSM and NTT.
//! [`GpuBackend`] implements [`cuzk_groth16::backend::Backend`] and gives the same proof bytes
//! as the CPU reference for the same witness and randomness. Without the `cuda` feature the
//! crate still builds; every entry point then returns [`GpuError::NotBuilt`].

mod backend;
mod device;
pub mod domain;
mod error;
pub mod msm;
pub mod pce;
pub mod placement;
mod resident;
pub mod setup;
mod sys;

pub use backend::GpuBackend;
pub use device::{count, Device};
pub use error::GpuError;
pub use placement::DeviceMemory;

/// Whether this build carries the CUDA kernels (the `cuda` feature).
pub const BUILT_WITH_CUDA: bool = cfg!(cuzk_cuda);
