//! Packing bits into as few field elements as fit (`CAPACITY` bits each): the encoding of public
//! inputs that are bit strings, and the matching native computation for the verifier side.

use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use crate::boolean::Boolean;
use crate::num::{AllocatedNum, Num};

/// `sum 2^i bits[i]` over the first `CAPACITY` bits, as a [`Num`].
fn pack<Scalar: PrimeField>(one: bellpepper_core::Variable, bits: &[Boolean]) -> Num<Scalar> {
    let mut num = Num::zero();
    let mut coeff = Scalar::ONE;
    for bit in bits.iter().take(Scalar::CAPACITY as usize) {
        num = num.add_bool_with_coeff(one, bit, coeff);
        coeff = coeff.double();
    }
    num
}

/// Packs `bits` (least significant first within each chunk) into public inputs, one per
/// `CAPACITY` bits: `packed * 1 = input`.
pub fn pack_into_inputs<Scalar, CS>(mut cs: CS, bits: &[Boolean]) -> Result<(), SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    for (i, chunk) in bits.chunks(Scalar::CAPACITY as usize).enumerate() {
        let num = pack::<Scalar>(CS::one(), chunk);
        let value = num.get_value();
        let input = cs.alloc_input(
            || format!("input {i}"),
            || value.ok_or(SynthesisError::AssignmentMissing),
        )?;
        cs.enforce(
            || format!("packing constraint {i}"),
            |_| num.into_lc(),
            |lc| lc + CS::one(),
            |lc| lc + input,
        );
    }
    Ok(())
}

/// Packs the first `CAPACITY` bits into one private variable: `packed * 1 = num`.
pub fn pack_bits<Scalar, CS>(
    mut cs: CS,
    bits: &[Boolean],
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    let num = pack::<Scalar>(CS::one(), bits);
    let value = num.get_value();
    let packed = AllocatedNum::alloc(cs.namespace(|| "input"), || {
        value.ok_or(SynthesisError::AssignmentMissing)
    })?;
    cs.enforce(
        || "packing constraint",
        |_| num.into_lc(),
        |lc| lc + CS::one(),
        |lc| lc + packed.get_variable(),
    );
    Ok(packed)
}

/// The bits of `bytes`, most significant first within each byte.
pub fn bytes_to_bits(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|&b| (0..8).rev().map(move |i| (b >> i) & 1 == 1))
        .collect()
}

/// The bits of `bytes`, least significant first within each byte.
pub fn bytes_to_bits_le(bytes: &[u8]) -> Vec<bool> {
    bytes
        .iter()
        .flat_map(|&b| (0..8).map(move |i| (b >> i) & 1 == 1))
        .collect()
}

/// The native counterpart of [`pack_into_inputs`]: the public inputs for `bits`.
pub fn compute_multipacking<Scalar: PrimeField>(bits: &[bool]) -> Vec<Scalar> {
    bits.chunks(Scalar::CAPACITY as usize)
        .map(|chunk| {
            let mut acc = Scalar::ZERO;
            let mut coeff = Scalar::ONE;
            for &bit in chunk {
                if bit {
                    acc += coeff;
                }
                coeff = coeff.double();
            }
            acc
        })
        .collect()
}
