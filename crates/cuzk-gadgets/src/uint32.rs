//! 32-bit words as 32 [`Boolean`]s, with the operations SHA-256 needs.
//!
//! The bits live in a `[Boolean; 32]`, so rotations, shifts and copies never allocate, and
//! [`UInt32::addmany`] appends its operands' bits straight into the [`MultiEq`] accumulator.

use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use crate::boolean::{alloc_bits_le, value_from_bits_le, AllocatedBit, Boolean};
use crate::multieq::MultiEq;

/// A 32-bit word; `bits[0]` is the least significant bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UInt32 {
    bits: [Boolean; 32],
    value: Option<u32>,
}

fn length_error(what: &str, expected: usize, got: usize) -> SynthesisError {
    SynthesisError::IncompatibleLengthVector(format!("{what}: expected {expected}, got {got}"))
}

impl UInt32 {
    /// A constant word (no variables).
    pub fn constant(value: u32) -> Self {
        UInt32 {
            bits: std::array::from_fn(|i| Boolean::Constant((value >> i) & 1 == 1)),
            value: Some(value),
        }
    }

    /// Allocates 32 bits, least significant first.
    pub fn alloc<Scalar, CS>(cs: CS, value: Option<u32>) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let bits = alloc_bits_le(cs, value.map(u64::from), 32)?;
        Self::from_bits(&bits)
    }

    /// The word's value, if known.
    pub fn get_value(&self) -> Option<u32> {
        self.value
    }

    /// The bits, least significant first.
    pub fn bits_le(&self) -> &[Boolean; 32] {
        &self.bits
    }

    /// The bits, most significant first.
    pub fn into_bits_be(self) -> [Boolean; 32] {
        let mut bits = self.bits;
        bits.reverse();
        bits
    }

    /// A word from 32 bits, least significant first.
    pub fn from_bits(bits: &[Boolean]) -> Result<Self, SynthesisError> {
        let bits: [Boolean; 32] = bits
            .try_into()
            .map_err(|_| length_error("UInt32::from_bits", 32, bits.len()))?;
        Ok(UInt32 {
            value: value_from_bits_le(&bits).map(|v| v as u32),
            bits,
        })
    }

    /// A word from 32 bits, most significant first.
    pub fn from_bits_be(bits: &[Boolean]) -> Result<Self, SynthesisError> {
        let mut bits: [Boolean; 32] = bits
            .try_into()
            .map_err(|_| length_error("UInt32::from_bits_be", 32, bits.len()))?;
        bits.reverse();
        Self::from_bits(&bits)
    }

    /// Rotation right by `by` bits (free).
    pub fn rotr(&self, by: usize) -> Self {
        let by = by % 32;
        UInt32 {
            bits: std::array::from_fn(|i| self.bits[(i + by) % 32]),
            value: self.value.map(|v| v.rotate_right(by as u32)),
        }
    }

    /// Logical shift right by `by` bits (free).
    pub fn shr(&self, by: usize) -> Self {
        let by = by % 32;
        UInt32 {
            bits: std::array::from_fn(|i| {
                self.bits
                    .get(i + by)
                    .copied()
                    .unwrap_or(Boolean::Constant(false))
            }),
            value: self.value.map(|v| v >> by),
        }
    }

    /// Bitwise XOR: one constraint per bit that is not constant on either side.
    pub fn xor<Scalar, CS>(&self, mut cs: CS, other: &Self) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        let mut bits = [Boolean::Constant(false); 32];
        for (i, out) in bits.iter_mut().enumerate() {
            *out = Boolean::xor(
                cs.namespace(|| format!("xor of bit {i}")),
                &self.bits[i],
                &other.bits[i],
            )?;
        }
        Ok(UInt32 {
            bits,
            value: self.value.zip(other.value).map(|(a, b)| a ^ b),
        })
    }

    /// Applies a bitwise three-input gadget to every bit position.
    fn triop<Scalar, CS, G>(
        mut cs: CS,
        [a, b, c]: [&Self; 3],
        name: &'static str,
        word_fn: fn(u32, u32, u32) -> u32,
        bit_gadget: G,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
        G: Fn(
            bellpepper_core::Namespace<'_, Scalar, CS::Root>,
            &Boolean,
            &Boolean,
            &Boolean,
        ) -> Result<Boolean, SynthesisError>,
    {
        let mut bits = [Boolean::Constant(false); 32];
        for (i, out) in bits.iter_mut().enumerate() {
            *out = bit_gadget(
                cs.namespace(|| format!("{name} {i}")),
                &a.bits[i],
                &b.bits[i],
                &c.bits[i],
            )?;
        }
        let value = match (a.value, b.value, c.value) {
            (Some(a), Some(b), Some(c)) => Some(word_fn(a, b, c)),
            _ => None,
        };
        Ok(UInt32 { bits, value })
    }

    /// SHA-256's choose, bitwise (see [`Boolean::sha256_ch`]).
    pub fn sha256_ch<Scalar, CS>(
        cs: CS,
        a: &Self,
        b: &Self,
        c: &Self,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        Self::triop(
            cs,
            [a, b, c],
            "ch",
            |a, b, c| (a & b) ^ (!a & c),
            |cs, a, b, c| Boolean::sha256_ch(cs, a, b, c),
        )
    }

    /// SHA-256's majority, bitwise (see [`Boolean::sha256_maj`]).
    pub fn sha256_maj<Scalar, CS>(
        cs: CS,
        a: &Self,
        b: &Self,
        c: &Self,
    ) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
    {
        Self::triop(
            cs,
            [a, b, c],
            "maj",
            |a, b, c| (a & b) ^ (a & c) ^ (b & c),
            |cs, a, b, c| Boolean::sha256_maj(cs, a, b, c),
        )
    }

    /// The sum of 2 to 10 words modulo 2^32. Allocates the full-width sum's bits and adds the
    /// equality `sum of operand bits == sum of result bits` to the [`MultiEq`] at the root of
    /// `cs`; a sum of constants is a constant.
    pub fn addmany<Scalar, CS, M>(mut cs: M, operands: &[Self]) -> Result<Self, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
        M: ConstraintSystem<Scalar, Root = MultiEq<Scalar, CS>>,
    {
        if Scalar::NUM_BITS < 64 {
            return Err(length_error(
                "UInt32::addmany field bits",
                64,
                Scalar::NUM_BITS as usize,
            ));
        }
        if !(2..=10).contains(&operands.len()) {
            return Err(SynthesisError::IncompatibleLengthVector(format!(
                "UInt32::addmany: expected 2 to 10 operands, got {}",
                operands.len()
            )));
        }

        let sum = operands
            .iter()
            .try_fold(0u64, |acc, op| Some(acc + u64::from(op.value?)));
        let modular = sum.map(|v| v as u32);
        let all_constant = operands
            .iter()
            .all(|op| op.bits.iter().all(Boolean::is_constant));
        if all_constant {
            if let Some(v) = modular {
                return Ok(UInt32::constant(v));
            }
        }

        // Bits needed for the largest possible sum.
        let max_sum = operands.len() as u64 * u64::from(u32::MAX);
        let width = (u64::BITS - max_sum.leading_zeros()) as usize;
        let mut result = Vec::with_capacity(width);
        for i in 0..width {
            let bit = sum.map(|v| (v >> i) & 1 == 1);
            result.push(AllocatedBit::alloc(
                cs.namespace(|| format!("result bit {i}")),
                bit,
            )?);
        }

        let one = CS::one();
        cs.get_root().enforce_equal_with(
            width,
            |lhs, shift| {
                for op in operands {
                    let mut coeff = shift;
                    for bit in &op.bits {
                        bit.add_to_lc(one, coeff, &mut *lhs);
                        coeff = coeff.double();
                    }
                }
            },
            |rhs, shift| {
                let mut coeff = shift;
                for bit in &result {
                    Boolean::Is(*bit).add_to_lc(one, coeff, &mut *rhs);
                    coeff = coeff.double();
                }
            },
        )?;

        Ok(UInt32 {
            bits: std::array::from_fn(|i| Boolean::Is(result[i])),
            value: modular,
        })
    }
}
