//! Groth16 over BLS12-381, compatible with `bellperson` 0.27 byte for byte.
//!
//! The crate knows nothing about Filecoin. It reads and writes bellperson's `.params` / `.vk`
//! files ([`params`]), runs a random trusted setup ([`generator`]), turns a
//! `bellpepper_core::Circuit` into a [`assignment::Witness`], proves through a pluggable
//! [`backend::Backend`] (the [`backend::CpuBackend`] is the reference every other backend is
//! checked against with [`conformance`]), and verifies ([`verifier`]).

pub mod assignment;
pub mod backend;
pub mod conformance;
pub mod curve;
pub mod density;
pub mod domain;
mod error;
pub mod fr;
pub mod generator;
mod limbs;
pub mod memory;
pub mod msm;
pub mod params;
pub mod proof;
pub mod prover;
pub mod r1cs;
pub mod verifier;

pub use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar as Fr};
pub use error::{ProverError, VerifyError};
pub use proof::Proof;
