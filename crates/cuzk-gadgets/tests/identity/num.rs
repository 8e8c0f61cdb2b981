use bellpepper::gadgets::num as up;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use cuzk_gadgets::num::{AllocatedNum, Num};
use proptest::prelude::*;

use crate::harness::*;

fn maybe_scalar() -> impl Strategy<Value = Option<Fr>> {
    prop::option::weighted(0.95, scalar())
}

fn value(v: Option<Fr>) -> impl FnOnce() -> Result<Fr, SynthesisError> {
    move || v.ok_or(SynthesisError::AssignmentMissing)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn arithmetic(op in 0..7usize, a in maybe_scalar(), b in maybe_scalar(), input in any::<bool>(), cond in bit_spec()) {
        let (o, t) = compare(
            |cs| {
                let a = AllocatedNum::alloc_maybe_input(cs.namespace(|| "a"), input, value(a))?;
                let b = AllocatedNum::alloc(cs.namespace(|| "b"), value(b))?;
                let cond = ours_bit(cs, 0, cond)?;
                let cs = cs.namespace(|| "op");
                match op {
                    0 => a.mul(cs, &b).map(|n| vec![n.get_value()]),
                    1 => a.square(cs).map(|n| vec![n.get_value()]),
                    2 => a.assert_nonzero(cs).map(|()| vec![]),
                    3 => a.inputize(cs).map(|()| vec![]),
                    4 => a.to_bits_le(cs).map(|v| vec![Num::zero().add_bool_with_coeff(RecCs::one(), &v[0], Fr::from(3)).get_value()]),
                    5 => AllocatedNum::conditionally_reverse(cs, &a, &b, &cond).map(|(c, d)| vec![c.get_value(), d.get_value()]),
                    _ => a.to_bits_le_strict(cs).map(|v| vec![Some(Fr::from(v.len() as u64))]),
                }
            },
            |cs| {
                let a = up::AllocatedNum::alloc_maybe_input(cs.namespace(|| "a"), input, value(a))?;
                let b = up::AllocatedNum::alloc(cs.namespace(|| "b"), value(b))?;
                let cond = theirs_bit(cs, 0, cond)?;
                let cs = cs.namespace(|| "op");
                match op {
                    0 => a.mul(cs, &b).map(|n| vec![n.get_value()]),
                    1 => a.square(cs).map(|n| vec![n.get_value()]),
                    2 => a.assert_nonzero(cs).map(|()| vec![]),
                    3 => a.inputize(cs).map(|()| vec![]),
                    4 => a.to_bits_le(cs).map(|v| vec![up::Num::zero().add_bool_with_coeff(RecCs::one(), &v[0], Fr::from(3)).get_value()]),
                    5 => up::AllocatedNum::conditionally_reverse(cs, &a, &b, &cond).map(|(c, d)| vec![c.get_value(), d.get_value()]),
                    _ => a.to_bits_le_strict(cs).map(|v| vec![Some(Fr::from(v.len() as u64))]),
                }
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o, t);
        }
    }

    /// Num built from bits and numbers, scaled and summed, then used in a row.
    #[test]
    fn num_lc(specs in prop::collection::vec(bit_spec(), 1..6), coeffs in prop::collection::vec(scalar(), 6), n in maybe_scalar(), k in scalar()) {
        let (o, t) = compare(
            |cs| {
                let bits = ours_bits(cs, &specs)?;
                let x = AllocatedNum::alloc(cs.namespace(|| "x"), value(n))?;
                let num = bits.iter().zip(&coeffs).fold(Num::zero(), |acc, (b, c)| acc.add_bool_with_coeff(RecCs::one(), b, *c));
                let num = num.scale(k).add(&Num::from(x));
                let v = num.get_value();
                cs.enforce(|| "row", |lc| num.add_to_lc(coeffs[5], lc), |lc| lc + x.get_variable(), |_| num.lc(k));
                Ok(v)
            },
            |cs| {
                let bits = theirs_bits(cs, &specs)?;
                let x = up::AllocatedNum::alloc(cs.namespace(|| "x"), value(n))?;
                let num = bits.iter().zip(&coeffs).fold(up::Num::zero(), |acc, (b, c)| acc.add_bool_with_coeff(RecCs::one(), b, *c));
                let num = num.scale(k).add(&up::Num::from(x.clone()));
                let v = num.get_value();
                cs.enforce(|| "row", |lc| lc + &num.lc(coeffs[5]), |lc| lc + x.get_variable(), |_| num.lc(k));
                Ok(v)
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o, t);
        }
    }
}

type RecCs = cuzk_gadgets::test_util::RecordingCs<Fr>;
