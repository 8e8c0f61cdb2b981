//! Pre-compiled constraint evaluation (PCE).
//!
//! A Filecoin circuit's R1CS never changes between proofs; only the witness does. This crate
//! records A, B and C once ([`Pce::extract`]) into a compact CSR form ([`matrix::Matrix`]:
//! 4 bytes per non-zero, coefficients through a per-matrix dictionary), stores it in a
//! checksummed, mmap-able file ([`file`]), and per proof runs only the circuit's witness
//! closures ([`WitnessCs`]) and a parallel sparse mat-vec ([`Pce::evaluate`]), producing
//! exactly the [`Witness`] full synthesis would.

pub mod backend;
mod columns;
pub mod file;
pub mod matrix;
mod record;
mod witness;

use bellpepper_core::{Circuit, SynthesisError};
use cuzk_groth16::assignment::{Densities, Witness};
use cuzk_groth16::Fr;
use ff::Field;
use thiserror::Error;

pub use backend::{HostEvaluated, PceBackend};
pub use columns::{Columns, Packed, Values};
pub use matrix::Matrix;
pub use witness::WitnessCs;

#[derive(Debug, Error)]
pub enum PceError {
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error("circuit too large for the compact form: {what} is {got}, at most {max}")]
    TooLarge {
        what: &'static str,
        got: usize,
        max: usize,
    },
    #[error(
        "witness does not fit the recorded circuit: {what} has {got} values, expected {expected}"
    )]
    WitnessShape {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error(transparent)]
    File(#[from] file::FileError),
    #[error("recording the circuit: {0}")]
    Record(#[from] cuzk_groth16::ProverError),
}

/// Names one of the three matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    A,
    B,
    C,
}

/// A circuit's constraint matrices and the densities they imply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pce {
    /// Input columns, ONE included.
    pub num_inputs: usize,
    pub num_aux: usize,
    pub a: Matrix,
    pub b: Matrix,
    pub c: Matrix,
    pub density: Densities,
}

impl Pce {
    /// Records `circuit`'s constraints (its witness closures are not run).
    pub fn extract<C: Circuit<Fr>>(circuit: C) -> Result<Self, PceError> {
        record::extract(circuit)
    }

    /// Number of constraints (without the per-input rows the prover adds).
    pub fn num_constraints(&self) -> usize {
        self.a.rows()
    }

    /// Runs `circuit`'s witness closures only and evaluates the matrices on the result.
    pub fn witness<C: Circuit<Fr>>(&self, circuit: C) -> Result<Witness, PceError> {
        let (input, aux) = WitnessCs::assign_sized(circuit, self.num_inputs, self.num_aux)?;
        self.evaluate(input, aux)
    }

    fn check_shape(&self, input: &[Fr], aux: &[Fr]) -> Result<(), PceError> {
        for (what, expected, got) in [
            ("input", self.num_inputs, input.len()),
            ("aux", self.num_aux, aux.len()),
        ] {
            if expected != got {
                return Err(PceError::WitnessShape {
                    what,
                    expected,
                    got,
                });
            }
        }
        Ok(())
    }

    /// One matrix times `input ‖ aux`, one value per constraint.
    pub fn product(&self, which: Which, input: &[Fr], aux: &[Fr]) -> Result<Vec<Fr>, PceError> {
        self.check_shape(input, aux)?;
        let m = match which {
            Which::A => &self.a,
            Which::B => &self.b,
            Which::C => &self.c,
        };
        Ok(m.mul_vec(input, aux, &matrix::Classes::of(input, aux), 0))
    }

    /// `a = A·w`, `b = B·w`, `c = C·w` for `w = input ‖ aux`, plus the `input·0 = 0` rows, in
    /// the layout [`cuzk_groth16::backend::Backend`] expects.
    pub fn evaluate(&self, input: Vec<Fr>, aux: Vec<Fr>) -> Result<Witness, PceError> {
        self.check_shape(&input, &aux)?;
        let classes = matrix::Classes::of(&input, &aux);
        let (mut a, (b, c)) = rayon::join(
            || self.a.mul_vec(&input, &aux, &classes, input.len()),
            || {
                rayon::join(
                    || self.b.mul_vec(&input, &aux, &classes, input.len()),
                    || self.c.mul_vec(&input, &aux, &classes, input.len()),
                )
            },
        );
        let (mut b, mut c) = (b, c);
        a.extend_from_slice(&input);
        b.resize(a.len(), Fr::ZERO);
        c.resize(a.len(), Fr::ZERO);
        Ok(Witness {
            a,
            b,
            c,
            input,
            aux,
            density: self.density.clone(),
        })
    }

    /// A [`tiled_key`](cuzk_groth16::conformance::tiled_key) with this circuit's query
    /// lengths: a stand-in for parameters too large to generate, for benchmarks only.
    pub fn tiled_key(&self) -> cuzk_groth16::params::ProvingKey {
        let d = &self.density;
        cuzk_groth16::conformance::tiled_key(
            self.num_inputs,
            self.num_constraints() + self.num_inputs,
            self.num_aux,
            self.num_inputs + d.a_aux.count(),
            d.b_input.count() + d.b_aux.count(),
        )
    }

    /// Bytes held by the matrices (what the memory budget should charge).
    pub fn heap_bytes(&self) -> usize {
        self.a.heap_bytes() + self.b.heap_bytes() + self.c.heap_bytes()
    }
}
