//! Window table lookups: selecting one of `2^k` constant points by `k` bits with the table's
//! multilinear interpolation, as the Pedersen-hash style circuits do.

use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::PrimeField;

use crate::boolean::Boolean;
use crate::num::{AllocatedNum, Num};

/// The coefficients `c[S]` of the multilinear polynomial `f(x) = sum_S c[S] prod_{i in S} x_i`
/// that takes `values[m]` at the bits of `m` (Moebius inversion over subsets).
fn interpolation<Scalar: PrimeField, const N: usize>(values: [Scalar; N]) -> [Scalar; N] {
    let mut c = values;
    let mut bit = 1;
    while bit < N {
        for m in 0..N {
            if m & bit != 0 {
                c[m] -= c[m ^ bit];
            }
        }
        bit <<= 1;
    }
    c
}

fn check_len(what: &str, expected: usize, got: usize) -> Result<(), SynthesisError> {
    if expected == got {
        Ok(())
    } else {
        Err(SynthesisError::IncompatibleLengthVector(format!(
            "{what}: expected {expected}, got {got}"
        )))
    }
}

/// The table index selected by `bits` (least significant first), if all values are known.
fn index(bits: &[Boolean]) -> Option<usize> {
    bits.iter().enumerate().try_fold(0, |acc, (i, b)| {
        Some(acc | (usize::from(b.get_value()?) << i))
    })
}

/// The two sides of one coordinate's lookup row, `A * bits[0] = C`: with `c` the coefficients
/// and `p = bits[1] AND bits[2]`, A collects the terms with bit 0 set and C the result minus
/// the terms without it.
fn lookup3_row<Scalar: PrimeField>(
    one: Variable,
    bits: &[Boolean],
    precomp: &Boolean,
    c: &[Scalar; 8],
    result: Variable,
    lc: LinearCombination<Scalar>,
    with_bit0: bool,
) -> LinearCombination<Scalar> {
    if with_bit0 {
        let lc = bits[1].add_to_lc(one, c[0b011], lc + (c[0b001], one));
        precomp.add_to_lc(one, c[0b111], bits[2].add_to_lc(one, c[0b101], lc))
    } else {
        let lc = bits[1].sub_from_lc(one, c[0b010], lc + result - (c[0b000], one));
        precomp.sub_from_lc(one, c[0b110], bits[2].sub_from_lc(one, c[0b100], lc))
    }
}

/// Looks up `coords[bits]` (3 bits, 8 points) into two new variables, in three constraints.
pub fn lookup3_xy<Scalar, CS>(
    mut cs: CS,
    bits: &[Boolean],
    coords: &[(Scalar, Scalar)],
) -> Result<(AllocatedNum<Scalar>, AllocatedNum<Scalar>), SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    check_len("lookup3_xy bits", 3, bits.len())?;
    check_len("lookup3_xy coords", 8, coords.len())?;
    let i = index(bits);
    let res_x = AllocatedNum::alloc(cs.namespace(|| "x"), || {
        Ok(coords[i.ok_or(SynthesisError::AssignmentMissing)?].0)
    })?;
    let res_y = AllocatedNum::alloc(cs.namespace(|| "y"), || {
        Ok(coords[i.ok_or(SynthesisError::AssignmentMissing)?].1)
    })?;

    let x_coeffs = interpolation::<Scalar, 8>(std::array::from_fn(|m| coords[m].0));
    let y_coeffs = interpolation::<Scalar, 8>(std::array::from_fn(|m| coords[m].1));
    let precomp = Boolean::and(cs.namespace(|| "precomp"), &bits[1], &bits[2])?;

    let one = CS::one();
    for (name, c, res) in [
        ("x-coordinate lookup", &x_coeffs, &res_x),
        ("y-coordinate lookup", &y_coeffs, &res_y),
    ] {
        let res = res.get_variable();
        cs.enforce(
            || name,
            |lc| lookup3_row(one, bits, &precomp, c, res, lc, true),
            |lc| bits[0].add_to_lc(one, Scalar::ONE, lc),
            |lc| lookup3_row(one, bits, &precomp, c, res, lc, false),
        );
    }
    Ok((res_x, res_y))
}

/// Looks up `coords[bits[0..2]]` (4 points) and negates the y-coordinate when `bits[2]` is set.
/// x is returned as a [`Num`] (no constraint); y costs one constraint.
pub fn lookup3_xy_with_conditional_negation<Scalar, CS>(
    mut cs: CS,
    bits: &[Boolean],
    coords: &[(Scalar, Scalar)],
) -> Result<(Num<Scalar>, Num<Scalar>), SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    check_len("lookup3_xy_with_conditional_negation bits", 3, bits.len())?;
    check_len(
        "lookup3_xy_with_conditional_negation coords",
        4,
        coords.len(),
    )?;
    let i = index(&bits[..2]);
    let y = AllocatedNum::alloc(cs.namespace(|| "y"), || {
        let y = coords[i.ok_or(SynthesisError::AssignmentMissing)?].1;
        let negate = bits[2]
            .get_value()
            .ok_or(SynthesisError::AssignmentMissing)?;
        Ok(if negate { -y } else { y })
    })?;

    let one = CS::one();
    let x_coeffs = interpolation::<Scalar, 4>(std::array::from_fn(|m| coords[m].0));
    let y_coeffs = interpolation::<Scalar, 4>(std::array::from_fn(|m| coords[m].1));
    let precomp = Boolean::and(cs.namespace(|| "precomp"), &bits[0], &bits[1])?;

    let x = Num::zero()
        .add_bool_with_coeff(one, &Boolean::Constant(true), x_coeffs[0b00])
        .add_bool_with_coeff(one, &bits[0], x_coeffs[0b01])
        .add_bool_with_coeff(one, &bits[1], x_coeffs[0b10])
        .add_bool_with_coeff(one, &precomp, x_coeffs[0b11]);

    // `scale * (sum of the y-terms)` appended to `lc`.
    let y_terms = |scale: Scalar, lc: LinearCombination<Scalar>| {
        let lc = precomp.add_to_lc(one, y_coeffs[0b11] * scale, lc);
        let lc = bits[1].add_to_lc(one, y_coeffs[0b10] * scale, lc);
        let lc = bits[0].add_to_lc(one, y_coeffs[0b01] * scale, lc);
        lc + (y_coeffs[0b00] * scale, one)
    };
    cs.enforce(
        || "y-coordinate lookup",
        |lc| y_terms(Scalar::ONE.double(), lc),
        |lc| bits[2].add_to_lc(one, Scalar::ONE, lc),
        |lc| y_terms(Scalar::ONE, lc) - y.get_variable(),
    );
    Ok((x, y.into()))
}
