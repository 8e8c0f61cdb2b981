//! Modular addition and subtraction on little-endian 64-bit limbs, inlined where they are used.
//!
//! blst's `add`/`sub` are two calls deep and constant-time; in the NTT butterflies and the
//! batch-affine additions they are a fifth of the time (perf: `sub_mod_256`, `add_mod_256`,
//! `sub_mod_384` and their wrappers). Both inputs are reduced (below the modulus), so one
//! conditional correction, done with a mask instead of a branch, gives the same reduced result.

/// `a − b` and whether it borrowed.
#[inline(always)]
fn sub_borrow<const N: usize>(a: &[u64; N], b: &[u64; N]) -> ([u64; N], bool) {
    let mut out = [0u64; N];
    let mut borrow = false;
    for i in 0..N {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        out[i] = d;
        borrow = b1 | b2;
    }
    (out, borrow)
}

/// `a + b`, the carry out dropped.
#[inline(always)]
fn add_wrapping<const N: usize>(a: &[u64; N], b: &[u64; N]) -> [u64; N] {
    let mut out = [0u64; N];
    let mut carry = false;
    for i in 0..N {
        let (s, c1) = a[i].overflowing_add(b[i]);
        let (s, c2) = s.overflowing_add(carry as u64);
        out[i] = s;
        carry = c1 | c2;
    }
    out
}

/// All ones after a borrow, else zero. Hidden from the optimiser: knowing the mask is 0 or all
/// ones, LLVM turns the masked correction into a branch, which random operands mispredict half
/// the time (perf: a quarter of the subtraction's samples on that jump; log #39).
#[inline(always)]
fn mask(borrow: bool) -> u64 {
    std::hint::black_box(0u64.wrapping_sub(borrow as u64))
}

/// `a − b mod m` for `a, b < m`.
#[inline(always)]
pub(crate) fn sub_mod<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N]) -> [u64; N] {
    let (d, borrow) = sub_borrow(a, b);
    // A borrow means a < b: add m back (the carry out of that cancels the borrow).
    let mask = mask(borrow);
    add_wrapping(&d, &std::array::from_fn(|i| m[i] & mask))
}

/// `a + b mod m` for `a, b < m` and `2m < 2^(64·N)`.
#[inline(always)]
pub(crate) fn add_mod<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N]) -> [u64; N] {
    let sum = add_wrapping(a, b);
    // sum − m, kept unless it borrows (sum < m).
    let (reduced, borrow) = sub_borrow(&sum, m);
    let keep = mask(borrow);
    std::array::from_fn(|i| (sum[i] & keep) | (reduced[i] & !keep))
}

/// BLS12-381's base field modulus p.
pub(crate) const P: [u64; 6] = [
    0xb9fe_ffff_ffff_aaab,
    0x1eab_fffe_b153_ffff,
    0x6730_d2a0_f6b0_f624,
    0x6477_4b84_f385_12bf,
    0x4b1b_a7b6_434b_acd7,
    0x1a01_11ea_397f_e69a,
];

/// BLS12-381's scalar field modulus r.
pub(crate) const R: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

#[cfg(test)]
mod tests {
    use super::*;
    use blst::{blst_fp, blst_fr};
    use proptest::prelude::*;

    /// Any limbs made an element: a top limb below the modulus's puts the value below it.
    fn reduced<const N: usize>(mut l: [u64; N], m: &[u64; N]) -> [u64; N] {
        l[N - 1] %= m[N - 1];
        l
    }

    fn edge<const N: usize>(m: &[u64; N]) -> Vec<[u64; N]> {
        let mut top = *m;
        top[0] -= 1;
        vec![[0; N], top, std::array::from_fn(|i| (i == 0) as u64)]
    }

    /// Our add and sub of two elements of one field against blst's (`$t`, `$add`, `$sub`).
    macro_rules! check {
        ($t:ident, $add:ident, $sub:ident, $m:expr, $a:expr, $b:expr) => {{
            let (a, b) = ($t { l: $a }, $t { l: $b });
            let (mut s, mut d) = ($t::default(), $t::default());
            // SAFETY: valid field elements.
            unsafe {
                blst::$add(&mut s, &a, &b);
                blst::$sub(&mut d, &a, &b);
            }
            assert_eq!(add_mod(&a.l, &b.l, &$m), s.l);
            assert_eq!(sub_mod(&a.l, &b.l, &$m), d.l);
        }};
    }

    fn check_fp(a: [u64; 6], b: [u64; 6]) {
        check!(blst_fp, blst_fp_add, blst_fp_sub, P, a, b)
    }

    fn check_fr(a: [u64; 4], b: [u64; 4]) {
        check!(blst_fr, blst_fr_add, blst_fr_sub, R, a, b)
    }

    #[test]
    fn edges_match_blst() {
        for a in edge(&P) {
            for b in edge(&P) {
                check_fp(a, b);
            }
        }
        for a in edge(&R) {
            for b in edge(&R) {
                check_fr(a, b);
            }
        }
    }

    proptest! {
        #[test]
        fn matches_blst(a in any::<[u64; 6]>(), b in any::<[u64; 6]>()) {
            check_fp(reduced(a, &P), reduced(b, &P));
            let (a, b) = ([a[0], a[1], a[2], a[3]], [b[0], b[1], b[2], b[3]]);
            check_fr(reduced(a, &R), reduced(b, &R));
        }
    }
}
