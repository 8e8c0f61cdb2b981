//! Fr on its limbs: arithmetic in place for the NTT's inner loops (multiplication through
//! blst, addition and subtraction inlined: [`crate::limbs`]), and the 0/1 test that packs a
//! witness ([`zero_one_masks`]).
//!
//! blstrs' by-value operators let blst write each result to the stack in 8-byte stores that
//! Rust then reads back in 16-byte loads: the store cannot be forwarded, and perf put half of
//! the radix-2 loop's own time on those two loads. Writing straight into the destination
//! avoids the round trip.

use blst::{blst_fr, blst_fr_mul};
use ff::Field;

use crate::limbs::{add_mod, sub_mod, R};
use crate::Fr;

fn raw(x: &Fr) -> *const blst_fr {
    // `Scalar` is `repr(transparent)` over `blst_fr`.
    (x as *const Fr).cast()
}

fn raw_mut(x: &mut Fr) -> *mut blst_fr {
    (x as *mut Fr).cast()
}

/// `a ← a·b`.
pub(crate) fn mul_assign(a: &mut Fr, b: &Fr) {
    let a = raw_mut(a);
    // SAFETY: valid field elements; blst allows the output to alias an input.
    unsafe { blst_fr_mul(a, a, raw(b)) }
}

/// The limbs of an element (Montgomery form; addition does not care).
fn limbs(x: &Fr) -> &[u64; 4] {
    // SAFETY: `Scalar` is `repr(transparent)` over `blst_fr`, four u64 limbs.
    unsafe { &(*raw(x)).l }
}

fn limbs_mut(x: &mut Fr) -> &mut [u64; 4] {
    // SAFETY: as in `limbs`.
    unsafe { &mut (*raw_mut(x)).l }
}

/// Bit `b` of the first mask is set where `values[b]` is 0, of the second where it is 1 (at
/// most 64 values). Compares the Montgomery limbs without a branch per value: a witness mixes
/// zeros and ones at random, which branches mispredict, and `is_zero` is constant-time
/// (`Columns::new` of a 32 GiB PoRep partition on two threads: 1.20 → 0.37 s).
pub fn zero_one_masks(values: &[Fr]) -> (u64, u64) {
    assert!(
        values.len() <= 64,
        "{} values for a 64-bit mask",
        values.len()
    );
    let one = limbs(&Fr::ONE);
    let (mut zero, mut ones) = (0u64, 0u64);
    for (b, v) in values.iter().enumerate() {
        let l = limbs(v);
        let z = l[0] | l[1] | l[2] | l[3];
        let o = (l[0] ^ one[0]) | (l[1] ^ one[1]) | (l[2] ^ one[2]) | (l[3] ^ one[3]);
        zero |= u64::from(z == 0) << b;
        ones |= u64::from(o == 0) << b;
    }
    (zero, ones)
}

/// `a ← a − b`.
#[inline(always)]
pub(crate) fn sub_assign(a: &mut Fr, b: &Fr) {
    *limbs_mut(a) = sub_mod(limbs(a), limbs(b), &R);
}

/// `(lo, hi) ← (lo + w·hi, lo − w·hi)`.
#[inline(always)]
pub(crate) fn butterfly(lo: &mut Fr, hi: &mut Fr, w: &Fr) {
    mul_assign(hi, w);
    butterfly_one(lo, hi);
}

/// `(lo, hi) ← (lo + hi, lo − hi)`.
#[inline(always)]
pub(crate) fn butterfly_one(lo: &mut Fr, hi: &mut Fr) {
    let (l, h) = (*limbs(lo), *limbs(hi));
    *limbs_mut(hi) = sub_mod(&l, &h, &R);
    *limbs_mut(lo) = add_mod(&l, &h, &R);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::random_scalars;
    use proptest::prelude::*;

    /// 0, 1, −1, a random value, and for each limb k the elements whose Montgomery limbs are
    /// 0 but for a 1 in limb k, or equal ONE's but for limb k: each masks' test must read
    /// every limb.
    fn edge_values() -> Vec<Fr> {
        let r_inv = Fr::from(2).pow_vartime([256]).invert().unwrap();
        let mut v = vec![Fr::ZERO, Fr::ONE, -Fr::ONE, random_scalars(1, 9)[0]];
        for k in 0..4 {
            let e = Fr::from(2).pow_vartime([64 * k]) * r_inv;
            let mut unit = [0u64; 4];
            unit[k as usize] = 1;
            assert_eq!(*limbs(&e), unit, "limb {k}");
            v.extend([e, Fr::ONE + e]);
        }
        v
    }

    proptest! {
        #[test]
        fn masks_match_is_zero_and_eq(picks in prop::collection::vec(0usize..12, 0..=64)) {
            let edge = edge_values();
            let values: Vec<Fr> = picks.iter().map(|&i| edge[i]).collect();
            let (zero, one) = zero_one_masks(&values);
            for (b, v) in values.iter().enumerate() {
                prop_assert_eq!(zero >> b & 1 == 1, bool::from(v.is_zero()), "0 at {}", b);
                prop_assert_eq!(one >> b & 1 == 1, *v == Fr::ONE, "1 at {}", b);
            }
            if values.len() < 64 {
                prop_assert_eq!((zero >> values.len(), one >> values.len()), (0, 0));
            }
        }
    }

    #[test]
    fn match_the_operators() {
        let v = random_scalars(30, 5);
        for w in v.chunks_exact(3) {
            let (mut lo, mut hi) = (w[0], w[1]);
            butterfly(&mut lo, &mut hi, &w[2]);
            assert_eq!((lo, hi), (w[0] + w[1] * w[2], w[0] - w[1] * w[2]));
            let (mut lo, mut hi) = (w[0], w[1]);
            butterfly_one(&mut lo, &mut hi);
            assert_eq!((lo, hi), (w[0] + w[1], w[0] - w[1]));
            let mut a = w[0];
            mul_assign(&mut a, &w[1]);
            assert_eq!(a, w[0] * w[1]);
            sub_assign(&mut a, &w[2]);
            assert_eq!(a, w[0] * w[1] - w[2]);
        }
    }
}
