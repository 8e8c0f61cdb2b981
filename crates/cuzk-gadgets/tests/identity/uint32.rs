use bellpepper::gadgets::multieq::MultiEq as UpMultiEq;
use bellpepper::gadgets::uint32::UInt32 as Up;
use bellpepper_core::{ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::Scalar as Fr;
use cuzk_gadgets::multieq::MultiEq;
use cuzk_gadgets::test_util::RecordingCs;
use cuzk_gadgets::uint32::UInt32;
use proptest::prelude::*;

use crate::harness::*;

fn words(n: usize) -> impl Strategy<Value = Vec<WordSpec>> {
    prop::collection::vec(word_spec(), n)
}

fn up_value(w: &Up) -> Vec<Option<bool>> {
    up_values(&w.clone().into_bits())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn bitwise(op in 0..3usize, specs in words(3), r in 0..40usize, s in 0..40usize) {
        let (o, t) = compare(
            |cs| {
                let w: Vec<_> = specs.iter().enumerate().map(|(i, s)| ours_word(cs, i, s)).collect::<Result<_, _>>()?;
                let (a, b, c) = (w[0].rotr(r), w[1].shr(s), w[2]);
                let cs = cs.namespace(|| "op");
                match op {
                    0 => a.xor(cs, &b),
                    1 => UInt32::sha256_ch(cs, &a, &b, &c),
                    _ => UInt32::sha256_maj(cs, &a, &b, &c),
                }
            },
            |cs| {
                let w: Vec<_> = specs.iter().enumerate().map(|(i, s)| theirs_word(cs, i, s)).collect::<Result<_, _>>()?;
                let (a, b, c) = (w[0].rotr(r), w[1].shr(s), w[2].clone());
                let cs = cs.namespace(|| "op");
                match op {
                    0 => a.xor(cs, &b),
                    1 => Up::sha256_ch(cs, &a, &b, &c),
                    _ => Up::sha256_maj(cs, &a, &b, &c),
                }
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(values(o.bits_le()), up_value(&t));
        }
    }

    /// Several additions through one MultiEq, so that packing and flushing are exercised.
    #[test]
    fn addmany(sums in prop::collection::vec(words(10).prop_flat_map(|w| (2..=10usize, Just(w))), 1..6)) {
        let (o, t) = compare(
            |cs| {
                let mut cs = MultiEq::new(cs);
                let mut out = Vec::new();
                for (k, (n, specs)) in sums.iter().enumerate() {
                    let w: Vec<_> = specs[..*n].iter().enumerate().map(|(i, s)| ours_word(&mut cs.namespace(|| format!("sum {k}")), i, s)).collect::<Result<_, _>>()?;
                    out.push(UInt32::addmany(cs.namespace(|| format!("add {k}")), &w)?);
                }
                Ok(out)
            },
            |cs| {
                let mut cs = UpMultiEq::new(cs);
                let mut out = Vec::new();
                for (k, (n, specs)) in sums.iter().enumerate() {
                    let w: Vec<_> = specs[..*n].iter().enumerate().map(|(i, s)| theirs_word(&mut cs.namespace(|| format!("sum {k}")), i, s)).collect::<Result<_, _>>()?;
                    out.push(Up::addmany(cs.namespace(|| format!("add {k}")), &w)?);
                }
                Ok::<_, SynthesisError>(out)
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            for (o, t) in o.iter().zip(&t) {
                prop_assert_eq!(values(o.bits_le()), up_value(t));
            }
        }
    }

    #[test]
    fn bits_roundtrip(spec in word_spec()) {
        let mut cs = RecordingCs::<Fr>::shape_only();
        let w = ours_word(&mut cs, 0, &spec).unwrap();
        let be = w.into_bits_be();
        prop_assert_eq!(UInt32::from_bits_be(&be).unwrap(), w);
        if let Some(v) = w.get_value() {
            prop_assert_eq!(UInt32::constant(v).get_value(), Some(v));
        }
    }
}

#[test]
fn addmany_rejects_bad_operand_counts() {
    let mut cs = MultiEq::new(RecordingCs::<Fr>::new());
    let w = UInt32::constant(1);
    for n in [0, 1, 11] {
        assert!(matches!(
            UInt32::addmany(&mut cs, &vec![w; n]),
            Err(SynthesisError::IncompatibleLengthVector(_))
        ));
    }
    assert!(UInt32::from_bits(&[]).is_err());
}

/// Two fresh one-variable sides for equality `k`.
fn sides<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    k: usize,
) -> Result<[LinearCombination<Fr>; 2], SynthesisError> {
    let value = Fr::from(k as u64);
    let a = cs.alloc(|| format!("l{k}"), || Ok(value))?;
    let b = cs.alloc(|| format!("r{k}"), || Ok(value))?;
    Ok([
        LinearCombination::zero() + (Fr::from(3), a),
        LinearCombination::zero() + (Fr::from(3), b) + (Fr::from(5), CS::one()),
    ])
}

/// Equalities of the given widths through both MultiEqs, flushing exactly where upstream does.
fn multieq_widths(widths: &[usize]) {
    let (o, t) = compare(
        |cs| {
            let mut m = MultiEq::new(cs);
            for (k, w) in widths.iter().enumerate() {
                let [l, r] = sides(&mut m, k)?;
                m.enforce_equal(*w, &l, &r)?;
            }
            Ok(())
        },
        |cs| {
            let mut m = UpMultiEq::new(cs);
            for (k, w) in widths.iter().enumerate() {
                let [l, r] = sides(&mut m, k)?;
                m.enforce_equal(*w, &l, &r);
            }
            Ok(())
        },
    );
    assert!(o.is_ok() && t.is_ok());
}

#[test]
fn multieq_flushes_at_capacity() {
    // CAPACITY is 254: 127 + 127 does not fit, 126 + 127 does.
    for widths in [
        &[127, 127][..],
        &[126, 127],
        &[253],
        &[1, 253],
        &[33, 221, 1],
        &[100, 100, 54],
    ] {
        multieq_widths(widths);
    }
}

proptest! {
    #[test]
    fn multieq_packing(widths in prop::collection::vec(1..=253usize, 1..8)) {
        multieq_widths(&widths);
    }
}
