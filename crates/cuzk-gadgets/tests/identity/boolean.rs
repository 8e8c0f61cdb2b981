use bellpepper::gadgets::boolean as up;
use bellpepper_core::ConstraintSystem;
use blstrs::Scalar as Fr;
use cuzk_gadgets::boolean::{self as ours, AllocatedBit, Boolean};
use proptest::prelude::*;

use crate::harness::*;

/// The allocated-bit operations, by index, on both sides.
const OPS: usize = 4;

fn ours_op<CS: ConstraintSystem<Fr>>(
    op: usize,
    cs: CS,
    a: &AllocatedBit,
    b: &AllocatedBit,
) -> Result<AllocatedBit, bellpepper_core::SynthesisError> {
    match op {
        0 => AllocatedBit::xor(cs, a, b),
        1 => AllocatedBit::and(cs, a, b),
        2 => AllocatedBit::and_not(cs, a, b),
        _ => AllocatedBit::nor(cs, a, b),
    }
}

fn theirs_op<CS: ConstraintSystem<Fr>>(
    op: usize,
    cs: CS,
    a: &up::AllocatedBit,
    b: &up::AllocatedBit,
) -> Result<up::AllocatedBit, bellpepper_core::SynthesisError> {
    match op {
        0 => up::AllocatedBit::xor(cs, a, b),
        1 => up::AllocatedBit::and(cs, a, b),
        2 => up::AllocatedBit::and_not(cs, a, b),
        _ => up::AllocatedBit::nor(cs, a, b),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn allocated_bit_ops(op in 0..OPS, a in known_bit(), b in known_bit(), cond in known_bit()) {
        let (o, t) = compare(
            |cs| {
                let a = AllocatedBit::alloc(cs.namespace(|| "a"), a)?;
                let b = AllocatedBit::alloc_conditionally(cs.namespace(|| "b"), b, &a)?;
                let c = AllocatedBit::alloc(cs.namespace(|| "c"), cond)?;
                ours_op(op, cs.namespace(|| "op"), &b, &c)
            },
            |cs| {
                let a = up::AllocatedBit::alloc(cs.namespace(|| "a"), a)?;
                let b = up::AllocatedBit::alloc_conditionally(cs.namespace(|| "b"), b, &a)?;
                let c = up::AllocatedBit::alloc(cs.namespace(|| "c"), cond)?;
                theirs_op(op, cs.namespace(|| "op"), &b, &c)
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o.get_value(), t.get_value());
        }
    }

    #[test]
    fn boolean_ops(op in 0..5usize, specs in prop::collection::vec(bit_spec(), 3)) {
        let (o, t) = compare(
            |cs| {
                let v = ours_bits(cs, &specs)?;
                let mut cs = cs.namespace(|| "op");
                match op {
                    0 => Boolean::xor(cs, &v[0], &v[1]),
                    1 => Boolean::and(cs, &v[0], &v[1]),
                    2 => Boolean::sha256_ch(cs, &v[0], &v[1], &v[2]),
                    3 => Boolean::sha256_maj(cs, &v[0], &v[1], &v[2]),
                    _ => Boolean::enforce_equal(&mut cs, &v[0], &v[1]).map(|()| v[2]),
                }
            },
            |cs| {
                let v = theirs_bits(cs, &specs)?;
                let mut cs = cs.namespace(|| "op");
                match op {
                    0 => up::Boolean::xor(cs, &v[0], &v[1]),
                    1 => up::Boolean::and(cs, &v[0], &v[1]),
                    2 => up::Boolean::sha256_ch(cs, &v[0], &v[1], &v[2]),
                    3 => up::Boolean::sha256_maj(cs, &v[0], &v[1], &v[2]),
                    _ => up::Boolean::enforce_equal(&mut cs, &v[0], &v[1]).map(|()| v[2].clone()),
                }
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o.get_value(), t.get_value());
            prop_assert_eq!(o.is_constant(), t.is_constant());
        }
    }

    /// `add_to_lc` / `sub_from_lc` append exactly the terms of `lc(one, coeff)`, zero
    /// coefficients included.
    #[test]
    fn lc_paths(specs in prop::collection::vec(bit_spec(), 4), coeffs in prop::collection::vec(scalar(), 4), subtract in prop::collection::vec(any::<bool>(), 4)) {
        let _ = compare(
            |cs| {
                let v = ours_bits(cs, &specs)?;
                let one = Cs::one();
                cs.enforce(|| "row", |lc| {
                    v.iter().zip(&coeffs).zip(&subtract).fold(lc, |lc, ((b, c), s)| {
                        if *s { b.sub_from_lc(one, *c, lc) } else { b.add_to_lc(one, *c, lc) }
                    })
                }, |lc| lc, |_| v[0].lc(one, coeffs[1]));
                Ok(())
            },
            |cs| {
                let v = theirs_bits(cs, &specs)?;
                let one = Cs::one();
                cs.enforce(|| "row", |lc| {
                    v.iter().zip(&coeffs).zip(&subtract).fold(lc, |lc, ((b, c), s)| {
                        if *s { lc - &b.lc(one, *c) } else { lc + &b.lc(one, *c) }
                    })
                }, |lc| lc, |_| v[0].lc(one, coeffs[1]));
                Ok(())
            },
        );
    }

    #[test]
    fn u64_bits(value in prop::option::weighted(0.9, any::<u64>())) {
        let (o, t) = compare(
            |cs| ours::u64_into_boolean_vec_le(cs, value),
            |cs| up::u64_into_boolean_vec_le(cs, value),
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(values(&o), up_values(&t));
        }
    }

    #[test]
    fn field_bits(value in prop::option::weighted(0.9, scalar())) {
        let (o, t) = compare(
            |cs| ours::field_into_boolean_vec_le(cs, value),
            |cs| up::field_into_boolean_vec_le(cs, value),
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(values(&o), up_values(&t));
        }
    }
}

type Cs = cuzk_gadgets::test_util::RecordingCs<Fr>;

#[test]
fn unequal_constants_are_unsatisfiable() {
    let mut cs = Cs::new();
    let err = Boolean::enforce_equal(&mut cs, &Boolean::Constant(true), &Boolean::Constant(false));
    assert!(matches!(
        err,
        Err(bellpepper_core::SynthesisError::Unsatisfiable)
    ));
}
