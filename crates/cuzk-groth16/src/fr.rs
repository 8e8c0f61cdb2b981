//! Fr arithmetic in place, for the NTT's inner loops: multiplication through blst, addition
//! and subtraction inlined on the limbs ([`crate::limbs`]).
//!
//! blstrs' by-value operators let blst write each result to the stack in 8-byte stores that
//! Rust then reads back in 16-byte loads: the store cannot be forwarded, and perf put half of
//! the radix-2 loop's own time on those two loads. Writing straight into the destination
//! avoids the round trip.

use blst::{blst_fr, blst_fr_mul};

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
