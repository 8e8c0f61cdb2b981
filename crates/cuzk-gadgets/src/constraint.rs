//! Small arithmetic constraints Filecoin's circuits use, row-identical to storage-proofs-core's
//! `constraint` and `encode` gadgets.

use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use crate::num::AllocatedNum;

fn value<F: PrimeField>(n: &AllocatedNum<F>) -> Result<F, SynthesisError> {
    n.get_value().ok_or(SynthesisError::AssignmentMissing)
}

/// `a * 1 = b`.
pub fn equal<F, A, AR, CS>(cs: &mut CS, annotation: A, a: &AllocatedNum<F>, b: &AllocatedNum<F>)
where
    F: PrimeField,
    A: FnOnce() -> AR,
    AR: Into<String>,
    CS: ConstraintSystem<F>,
{
    cs.enforce(
        annotation,
        |lc| lc + a.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + b.get_variable(),
    );
}

/// `(a + b) * 1 = sum`.
pub fn sum<F, A, AR, CS>(
    cs: &mut CS,
    annotation: A,
    a: &AllocatedNum<F>,
    b: &AllocatedNum<F>,
    sum: &AllocatedNum<F>,
) where
    F: PrimeField,
    A: FnOnce() -> AR,
    AR: Into<String>,
    CS: ConstraintSystem<F>,
{
    cs.enforce(
        annotation,
        |lc| lc + a.get_variable() + b.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + sum.get_variable(),
    );
}

/// `(difference + b) * 1 = a`.
pub fn difference<F, A, AR, CS>(
    cs: &mut CS,
    annotation: A,
    a: &AllocatedNum<F>,
    b: &AllocatedNum<F>,
    difference: &AllocatedNum<F>,
) where
    F: PrimeField,
    A: FnOnce() -> AR,
    AR: Into<String>,
    CS: ConstraintSystem<F>,
{
    // The same row as `sum` with the roles swapped: difference + b = a.
    sum(cs, annotation, difference, b, a);
}

/// Allocates `a + b`.
pub fn add<F, CS>(
    mut cs: CS,
    a: &AllocatedNum<F>,
    b: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    let res = AllocatedNum::alloc(cs.namespace(|| "add_num"), || Ok(value(a)? + value(b)?))?;
    sum(&mut cs, || "sum constraint", a, b, &res);
    Ok(res)
}

/// Allocates `a - b`.
pub fn sub<F, CS>(
    mut cs: CS,
    a: &AllocatedNum<F>,
    b: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    let res = AllocatedNum::alloc(cs.namespace(|| "sub_num"), || Ok(value(a)? - value(b)?))?;
    difference(&mut cs, || "subtraction constraint", a, b, &res);
    Ok(res)
}

/// Encodes `value` under `key` (replica encoding: `key + value`).
pub fn encode<F, CS>(
    mut cs: CS,
    key: &AllocatedNum<F>,
    value: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    add(cs.namespace(|| "encode_add"), key, value)
}

/// Decodes `value` under `key` (`value - key`).
pub fn decode<F, CS>(
    mut cs: CS,
    key: &AllocatedNum<F>,
    value: &AllocatedNum<F>,
) -> Result<AllocatedNum<F>, SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
{
    sub(cs.namespace(|| "decode_sub"), value, key)
}
