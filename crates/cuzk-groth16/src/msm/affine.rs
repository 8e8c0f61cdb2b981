//! Batch-affine Pippenger over G1, for large MSMs with random scalars (the H query).
//!
//! blst's Pippenger adds every point into an XYZZ bucket (8M + 2S per addition). Here the
//! buckets are affine points and additions are collected into batches that share one field
//! inversion (Montgomery's trick), which leaves 5M + 1S per addition. A point whose bucket is
//! already in the current batch, or whose x equals the bucket's (doubling or cancellation), goes
//! into that bucket's projective overflow instead, so no input shape makes it quadratic.

use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Group;
use rayon::prelude::*;

use crate::{Fr, G1Affine, G1Projective};
use blst::{blst_fp, blst_p1_affine};
use blstrs::Fp;

/// Additions that share one inversion.
const BATCH: usize = 1024;

/// `Σ scalars[i] · points[i]` with `c`-bit signed windows (2^(c−1) buckets per window).
pub(super) fn g1(points: &[G1Affine], scalars: &[Fr], c: usize) -> G1Projective {
    assert_eq!(points.len(), scalars.len(), "msm length mismatch");
    assert!((2..=24).contains(&c), "window of {c} bits");
    // The identity has no affine coordinates to add, and contributes nothing: a zero scalar
    // makes every window skip it.
    let limbs: Vec<[u64; 4]> = points
        .par_iter()
        .zip(scalars.par_iter())
        .map(|(p, s)| {
            if bool::from(p.is_identity()) {
                [0; 4]
            } else {
                canonical(s)
            }
        })
        .collect();
    // SAFETY: `G1Affine` is `repr(transparent)` over `blst_p1_affine`.
    let raw = unsafe {
        std::slice::from_raw_parts(points.as_ptr() as *const blst_p1_affine, points.len())
    };
    // Booth digits: window w reads bits w·c − 1 .. w·c + c − 1; the top window must end above
    // bit 255 so that its sign bit is 0 (scalars are below 2^255).
    let windows = 256usize.div_ceil(c);
    // Windows are the unit of work; with more threads than windows, the points are split too.
    let parts = rayon::current_num_threads().div_ceil(windows);
    let chunk = raw.len().div_ceil(parts).max(1);
    let sums: Vec<G1Projective> = (0..windows * parts)
        .into_par_iter()
        .map(|t| {
            let (w, part) = (t / parts, t % parts);
            let start = (part * chunk).min(raw.len());
            let end = (start + chunk).min(raw.len());
            Window::new(c)
                .accumulate(&raw[start..end], &limbs[start..end], w)
                .reduce()
        })
        .collect();
    sums.chunks(parts)
        .rev()
        .fold(G1Projective::identity(), |acc, s| {
            (0..c).fold(acc, |a, _| a.double()) + s.iter().sum::<G1Projective>()
        })
}

/// The scalar's canonical little-endian limbs.
fn canonical(s: &Fr) -> [u64; 4] {
    let b = s.to_bytes_le();
    std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap()))
}

/// `len` (≤ 32) bits of `limbs` from bit `start`, zero above bit 255.
fn bits(limbs: &[u64; 4], start: usize, len: usize) -> u64 {
    let (i, s) = (start / 64, start % 64);
    let word = |i: usize| limbs.get(i).copied().unwrap_or(0);
    let mut v = word(i) >> s;
    if s + len > 64 {
        v |= word(i + 1) << (64 - s);
    }
    v & ((1 << len) - 1)
}

/// Window `w`'s signed digit in [−2^(c−1), 2^(c−1)]; Σ digit_w · 2^(w·c) is the scalar.
fn digit(limbs: &[u64; 4], w: usize, c: usize) -> i64 {
    let v = if w == 0 {
        bits(limbs, 0, c) << 1
    } else {
        bits(limbs, w * c - 1, c + 1)
    };
    ((v + 1) >> 1) as i64 - (((v >> c) as i64) << c)
}

/// Field operations on blst's representation, each writing into its destination (blstrs'
/// by-value operators copy every 48-byte result through the stack: 10 % of the MSM).
mod fp {
    use blst::blst_fp;

    pub fn sub(out: &mut blst_fp, a: &blst_fp, b: &blst_fp) {
        // SAFETY: valid field elements; blst reads the inputs before writing `out`.
        unsafe { blst::blst_fp_sub(out, a, b) }
    }
    pub fn sub_assign(a: &mut blst_fp, b: &blst_fp) {
        let a: *mut blst_fp = a;
        // SAFETY: blst allows the output to alias an input.
        unsafe { blst::blst_fp_sub(a, a, b) }
    }
    /// a = b − a.
    pub fn sub_from(a: &mut blst_fp, b: &blst_fp) {
        let a: *mut blst_fp = a;
        // SAFETY: as in `sub_assign`.
        unsafe { blst::blst_fp_sub(a, b, a) }
    }
    pub fn mul_assign(a: &mut blst_fp, b: &blst_fp) {
        let a: *mut blst_fp = a;
        // SAFETY: as in `sub_assign`.
        unsafe { blst::blst_fp_mul(a, a, b) }
    }
    pub fn sqr(out: &mut blst_fp, a: &blst_fp) {
        // SAFETY: as in `sub`.
        unsafe { blst::blst_fp_sqr(out, a) }
    }
    pub fn neg(a: &mut blst_fp) {
        let a: *mut blst_fp = a;
        // SAFETY: as in `sub_assign`.
        unsafe { blst::blst_fp_cneg(a, a, true) }
    }
    pub fn inverse(a: &blst_fp) -> blst_fp {
        let mut out = blst_fp::default();
        // SAFETY: as in `sub`.
        unsafe { blst::blst_fp_inverse(&mut out, a) };
        out
    }
    pub fn is_zero(a: &blst_fp) -> bool {
        a.l.iter().all(|&l| l == 0)
    }
}

// SAFETY: `Fp` is `repr(transparent)` over `blst_fp`.
const ONE: blst_fp = unsafe { std::mem::transmute::<Fp, blst_fp>(Fp::ONE) };

/// A G1 point's affine x and y in blst's representation.
type Xy = [blst_fp; 2];

fn affine(q: &Xy) -> G1Affine {
    G1Affine::from_raw_unchecked(
        Fp::from_raw_unchecked(q[0].l),
        Fp::from_raw_unchecked(q[1].l),
        false,
    )
}

/// Asks for a bucket's cache lines ahead of its batch: the buckets are read in random order
/// and the miss otherwise stalls the batch's first pass.
#[allow(unused_unsafe)] // `_mm_prefetch` is a safe function from Rust 1.87 on
fn prefetch(q: &Xy) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = q.as_ptr() as *const i8;
        // SAFETY: prefetching has no architectural effect; the addresses are inside `q`.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
            _mm_prefetch::<_MM_HINT_T0>(p.add(64));
            _mm_prefetch::<_MM_HINT_T0>(p.add(std::mem::size_of::<Xy>() - 1));
        }
    }
}

/// One window's buckets: bucket `b` holds the points whose digit is ±(b + 1).
struct Window {
    /// Affine x, y side by side: one cache line pair per bucket touched.
    buckets: Vec<Xy>,
    /// `EMPTY`, `FULL` or `BUSY` per bucket; small enough to stay in cache.
    state: Vec<u8>,
    overflow: Vec<G1Projective>,
    /// Pending additions: bucket, the (signed) point, and x_point − x_bucket.
    batch: Vec<(u32, Xy, blst_fp)>,
    /// Prefix products of the batch's denominators.
    prefix: Vec<blst_fp>,
}

const EMPTY: u8 = 0;
const FULL: u8 = 1;
/// In the current batch: a second point for it goes to the overflow.
const BUSY: u8 = 2;

impl Window {
    fn new(c: usize) -> Self {
        let n = 1 << (c - 1);
        Window {
            buckets: vec![Xy::default(); n],
            state: vec![EMPTY; n],
            overflow: vec![G1Projective::identity(); n],
            batch: Vec::with_capacity(BATCH),
            prefix: Vec::with_capacity(BATCH),
        }
    }

    fn accumulate(mut self, points: &[blst_p1_affine], limbs: &[[u64; 4]], w: usize) -> Self {
        let c = self.state.len().trailing_zeros() as usize + 1;
        for (p, l) in points.iter().zip(limbs) {
            let d = digit(l, w, c);
            if d == 0 {
                continue;
            }
            let b = (d.unsigned_abs() - 1) as usize;
            let mut q = [p.x, p.y];
            if d < 0 {
                fp::neg(&mut q[1]);
            }
            match self.state[b] {
                EMPTY => (self.buckets[b], self.state[b]) = (q, FULL),
                BUSY => self.overflow[b] += affine(&q),
                _ => {
                    self.state[b] = BUSY;
                    prefetch(&self.buckets[b]);
                    self.batch.push((b as u32, q, blst_fp::default()));
                    if self.batch.len() == BATCH {
                        self.flush();
                    }
                }
            }
        }
        self.flush();
        self
    }

    /// Adds every pending point into its bucket with one shared inversion.
    fn flush(&mut self) {
        self.prefix.clear();
        let mut product = ONE;
        for (b, q, den) in &mut self.batch {
            fp::sub(den, &q[0], &self.buckets[*b as usize][0]);
            fp::mul_assign(&mut product, den);
            self.prefix.push(product);
        }
        if fp::is_zero(&product) {
            self.move_equal_x();
            return self.flush();
        }
        let mut inv = fp::inverse(&product);
        let (mut lambda, mut x) = (blst_fp::default(), blst_fp::default());
        for k in (0..self.batch.len()).rev() {
            let (b, [px, py], den) = &self.batch[k];
            let [bx, by] = &mut self.buckets[*b as usize];
            // inv is 1/(den_0 ⋯ den_k); the prefix before k turns it into 1/den_k.
            fp::sub(&mut lambda, py, by);
            fp::mul_assign(&mut lambda, &inv);
            if k > 0 {
                fp::mul_assign(&mut lambda, &self.prefix[k - 1]);
            }
            fp::mul_assign(&mut inv, den);
            fp::sqr(&mut x, &lambda);
            fp::sub_assign(&mut x, bx);
            fp::sub_assign(&mut x, px);
            // y = λ·(x_bucket − x) − y_bucket
            fp::sub_assign(bx, &x);
            fp::mul_assign(bx, &lambda);
            fp::sub_from(by, bx);
            *bx = x;
            self.state[*b as usize] = FULL;
        }
        self.batch.clear();
    }

    /// Same x as the bucket (a doubling or a cancellation, which the affine formula cannot
    /// take): such points go to the overflow. Rare, so found only when the product is zero.
    fn move_equal_x(&mut self) {
        let (overflow, state) = (&mut self.overflow, &mut self.state);
        self.batch.retain(|(b, q, den)| {
            let b = *b as usize;
            let equal = fp::is_zero(den);
            if equal {
                overflow[b] += affine(q);
                state[b] = FULL;
            }
            !equal
        });
    }

    /// Σ (b + 1) · bucket_b by running sums from the top bucket down.
    fn reduce(self) -> G1Projective {
        let (mut running, mut sum) = (G1Projective::identity(), G1Projective::identity());
        for b in (0..self.state.len()).rev() {
            if self.state[b] != EMPTY {
                running += affine(&self.buckets[b]);
            }
            if !bool::from(self.overflow[b].is_identity()) {
                running += self.overflow[b];
            }
            sum += running;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{random_g1, random_scalars};
    use proptest::prelude::*;

    fn naive(p: &[G1Affine], s: &[Fr]) -> G1Projective {
        p.iter()
            .zip(s)
            .fold(G1Projective::identity(), |acc, (p, s)| acc + *p * s)
    }

    #[test]
    fn digits_recompose_the_scalar() {
        for (seed, c) in [(1, 2), (2, 5), (3, 13), (4, 16), (5, 17), (6, 24)] {
            for s in random_scalars(50, seed)
                .into_iter()
                .chain([Fr::ZERO, -Fr::ONE])
            {
                let l = canonical(&s);
                let got = (0..256usize.div_ceil(c)).rev().fold(Fr::ZERO, |acc, w| {
                    let d = digit(&l, w, c);
                    let m = Fr::from(d.unsigned_abs());
                    acc * Fr::from(1u64 << c) + if d < 0 { -m } else { m }
                });
                assert_eq!(got, s, "c = {c}");
                assert!((0..256usize.div_ceil(c)).all(|w| digit(&l, w, c).abs() <= 1 << (c - 1)));
            }
        }
    }

    /// Repeated points with equal and opposite scalars (doublings and cancellations in one
    /// bucket), identities, zeros and a run of equal scalars (one bucket per window, every
    /// point a conflict), over several batches.
    #[test]
    fn awkward_inputs() {
        let n = 3 * BATCH + 17;
        let mut p = random_g1(n, 7);
        let mut s = random_scalars(n, 8);
        for i in 0..200 {
            p[2 * i + 1] = p[2 * i];
            s[2 * i + 1] = if i % 2 == 0 { s[2 * i] } else { -s[2 * i] };
            p[600 + i] = G1Affine::identity();
            s[900 + i] = Fr::ZERO;
            s[1200 + i] = s[1200];
        }
        for c in [3, 8, 16] {
            assert_eq!(g1(&p, &s, c), naive(&p, &s), "c = {c}");
        }
        assert_eq!(g1(&p[..0], &s[..0], 8), G1Projective::identity());
    }

    #[test]
    fn splits_the_points_when_threads_outnumber_windows() {
        let (p, s) = (random_g1(3000, 9), random_scalars(3000, 10));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(40)
            .build()
            .unwrap();
        // 16 windows, 40 threads: three parts per window; 32 windows: two.
        for c in [16, 8] {
            assert_eq!(pool.install(|| g1(&p, &s, c)), naive(&p, &s), "c = {c}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn matches_naive(len in 0usize..2500, seed in any::<u64>(), c in 2usize..12) {
            let p = random_g1(len, seed);
            let s = random_scalars(len, seed ^ 1);
            prop_assert_eq!(g1(&p, &s, c), naive(&p, &s));
        }
    }
}
