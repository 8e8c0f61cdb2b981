//! 64-bit words where Filecoin needs them (node indices in labels, packed public inputs).

use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use crate::boolean::{alloc_bits_le, value_from_bits_le, Boolean};
use crate::multipack::pack_into_inputs;

/// A 64-bit word; `bits[0]` is the least significant bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UInt64 {
    bits: [Boolean; 64],
    value: Option<u64>,
}

impl UInt64 {
    /// A constant word (no variables).
    pub fn constant(value: u64) -> Self {
        UInt64 {
            bits: std::array::from_fn(|i| Boolean::Constant((value >> i) & 1 == 1)),
            value: Some(value),
        }
    }

    /// Allocates 64 bits, least significant first.
    pub fn alloc<F, CS>(cs: CS, value: Option<u64>) -> Result<Self, SynthesisError>
    where
        F: PrimeField,
        CS: ConstraintSystem<F>,
    {
        Self::from_bits(&alloc_bits_le(cs, value, 64)?)
    }

    /// The word's value, if known.
    pub fn get_value(&self) -> Option<u64> {
        self.value
    }

    /// Packs the bits into public inputs.
    pub fn pack_into_input<F, CS>(&self, cs: CS) -> Result<(), SynthesisError>
    where
        F: PrimeField,
        CS: ConstraintSystem<F>,
    {
        pack_into_inputs(cs, &self.bits)
    }

    /// The bits, least significant first.
    pub fn to_bits_le(&self) -> [Boolean; 64] {
        self.bits
    }

    /// The bits, most significant first.
    pub fn to_bits_be(&self) -> [Boolean; 64] {
        let mut bits = self.bits;
        bits.reverse();
        bits
    }

    /// A word from 64 bits, least significant first.
    pub fn from_bits(bits: &[Boolean]) -> Result<Self, SynthesisError> {
        let bits: [Boolean; 64] = bits.try_into().map_err(|_| {
            SynthesisError::IncompatibleLengthVector(format!(
                "UInt64::from_bits: expected 64, got {}",
                bits.len()
            ))
        })?;
        Ok(UInt64 {
            value: value_from_bits_le(&bits),
            bits,
        })
    }

    /// A word from 64 bits, most significant first.
    pub fn from_bits_be(bits: &[Boolean]) -> Result<Self, SynthesisError> {
        let mut le = bits.to_vec();
        le.reverse();
        Self::from_bits(&le)
    }
}
