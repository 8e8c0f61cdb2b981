//! Fr arithmetic in place through blst, for the NTT's inner loops.
//!
//! blstrs' by-value operators let blst write each result to the stack in 8-byte stores that
//! Rust then reads back in 16-byte loads: the store cannot be forwarded, and perf put half of
//! the radix-2 loop's own time on those two loads. Writing straight into the destination
//! avoids the round trip.

use blst::{blst_fr, blst_fr_add, blst_fr_mul, blst_fr_sub};

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

/// `a ← a − b`.
pub(crate) fn sub_assign(a: &mut Fr, b: &Fr) {
    let a = raw_mut(a);
    // SAFETY: as in `mul_assign`.
    unsafe { blst_fr_sub(a, a, raw(b)) }
}

/// `(lo, hi) ← (lo + w·hi, lo − w·hi)`.
pub(crate) fn butterfly(lo: &mut Fr, hi: &mut Fr, w: &Fr) {
    let mut t = blst_fr::default();
    let (lo, hi) = (raw_mut(lo), raw_mut(hi));
    // SAFETY: valid field elements; `lo` and `hi` are distinct (two `&mut`), and blst allows
    // the output to alias an input.
    unsafe {
        blst_fr_mul(&mut t, hi, raw(w));
        blst_fr_sub(hi, lo, &t);
        blst_fr_add(lo, lo, &t);
    }
}

/// `(lo, hi) ← (lo + hi, lo − hi)`.
pub(crate) fn butterfly_one(lo: &mut Fr, hi: &mut Fr) {
    let t = *hi;
    let (lo, hi) = (raw_mut(lo), raw_mut(hi));
    // SAFETY: as in `butterfly`.
    unsafe {
        blst_fr_sub(hi, lo, raw(&t));
        blst_fr_add(lo, lo, raw(&t));
    }
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
