//! Batch-affine point additions: a Pippenger for large MSMs with random scalars (the H query),
//! and a sum for the many points whose scalar is one (witness MSMs), over G1 and G2.
//!
//! blst adds into XYZZ (Pippenger) or Jacobian (mixed addition) points: 8M + 2S or 7M + 4S
//! per addition. Affine additions collected into batches that share one field inversion
//! (Montgomery's trick) need 5M + 1S. In the Pippenger a point whose bucket is already in the
//! current batch, or whose x equals the bucket's (doubling or cancellation), goes into that
//! bucket's projective overflow instead, so no input shape makes it quadratic.

use std::ops::AddAssign;

use blst::{blst_fp, blst_fp2, blst_p1_affine, blst_p2_affine};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Group;
use rayon::prelude::*;

use crate::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

/// Additions that share one inversion.
const BATCH: usize = 1024;

/// A coordinate field in blst's representation; every operation writes into its destination
/// (blstrs' by-value operators copy each result through the stack: 10 % of the MSM).
pub(crate) trait Coord: Copy + Default + Send + Sync {
    const ONE: Self;
    fn sub(out: &mut Self, a: &Self, b: &Self);
    fn mul_assign(a: &mut Self, b: &Self);
    fn sqr(out: &mut Self, a: &Self);
    fn neg(a: &mut Self);
    fn inverse(a: &Self) -> Self;
    fn is_zero(a: &Self) -> bool;
    fn sub_assign(a: &mut Self, b: &Self);
    /// a = b − a.
    fn sub_from(a: &mut Self, b: &Self);
}

/// Implements [`Coord`]: multiplication, squaring and inversion through blst's functions of
/// the field (which allow the output to alias an input, so the in-place forms pass one pointer
/// twice); subtraction and negation inlined on the limbs (`$sub_limbs`).
macro_rules! coord {
    ($t:ty, $one:expr, $sub_limbs:expr, $mul:ident, $sqr:ident, $inv:ident) => {
        impl Coord for $t {
            const ONE: Self = $one;
            #[inline(always)]
            fn sub(out: &mut Self, a: &Self, b: &Self) {
                *out = $sub_limbs(a, b);
            }
            #[inline(always)]
            fn sub_assign(a: &mut Self, b: &Self) {
                *a = $sub_limbs(a, b);
            }
            #[inline(always)]
            fn sub_from(a: &mut Self, b: &Self) {
                *a = $sub_limbs(b, a);
            }
            fn mul_assign(a: &mut Self, b: &Self) {
                let a: *mut Self = a;
                // SAFETY: valid field elements; blst reads the inputs before writing.
                unsafe { blst::$mul(a, a, b) }
            }
            fn sqr(out: &mut Self, a: &Self) {
                // SAFETY: as in `mul_assign`.
                unsafe { blst::$sqr(out, a) }
            }
            #[inline(always)]
            fn neg(a: &mut Self) {
                *a = $sub_limbs(&Self::default(), a);
            }
            fn inverse(a: &Self) -> Self {
                let mut out = Self::default();
                // SAFETY: as in `mul_assign`.
                unsafe { blst::$inv(&mut out, a) };
                out
            }
            fn is_zero(a: &Self) -> bool {
                words(a).iter().all(|&l| l == 0)
            }
        }
    };
}

#[inline(always)]
fn fp_sub(a: &blst_fp, b: &blst_fp) -> blst_fp {
    blst_fp {
        l: crate::limbs::sub_mod(&a.l, &b.l, &crate::limbs::P),
    }
}

#[inline(always)]
fn fp2_sub(a: &blst_fp2, b: &blst_fp2) -> blst_fp2 {
    blst_fp2 {
        fp: [fp_sub(&a.fp[0], &b.fp[0]), fp_sub(&a.fp[1], &b.fp[1])],
    }
}

/// The limbs of a field element (blst's fields are `repr(C)` arrays of u64 limbs).
fn words<T: Coord>(a: &T) -> &[u64] {
    // SAFETY: `blst_fp` and `blst_fp2` are plain u64 arrays without padding.
    unsafe { std::slice::from_raw_parts((a as *const T).cast(), std::mem::size_of::<T>() / 8) }
}

// SAFETY: `Fp` is `repr(transparent)` over `blst_fp`.
const FP_ONE: blst_fp = unsafe { std::mem::transmute::<blstrs::Fp, blst_fp>(blstrs::Fp::ONE) };

coord!(
    blst_fp,
    FP_ONE,
    fp_sub,
    blst_fp_mul,
    blst_fp_sqr,
    blst_fp_inverse
);
coord!(
    blst_fp2,
    blst_fp2 {
        fp: [FP_ONE, blst_fp { l: [0; 6] }]
    },
    fp2_sub,
    blst_fp2_mul,
    blst_fp2_sqr,
    blst_fp2_inverse
);

/// A group whose affine points are blst's `(x, y)` pairs over [`Curve::Coord`].
pub(crate) trait Curve {
    type Coord: Coord;
    type Affine: PrimeCurveAffine<Curve = Self::Projective>
        + crate::curve::Coords
        + Copy
        + Send
        + Sync;
    type Projective: crate::curve::Projective
        + group::Curve<AffineRepr = Self::Affine>
        + AddAssign<Self::Affine>
        + std::iter::Sum;

    /// The points as blst lays them out: x then y.
    fn coordinates(points: &[Self::Affine]) -> &[[Self::Coord; 2]];
    fn affine(q: &[Self::Coord; 2]) -> Self::Affine;
}

/// BLS12-381 G1.
#[derive(Debug)]
pub(crate) struct G1;
/// BLS12-381 G2.
#[derive(Debug)]
pub(crate) struct G2;

macro_rules! curve {
    ($curve:ty, $coord:ty, $affine:ty, $projective:ty, $raw:ty) => {
        impl Curve for $curve {
            type Coord = $coord;
            type Affine = $affine;
            type Projective = $projective;
            fn coordinates(points: &[$affine]) -> &[[$coord; 2]] {
                // SAFETY: the blstrs affine type is `repr(transparent)` over blst's, a
                // `repr(C)` pair of coordinates.
                unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) }
            }
            fn affine(q: &[$coord; 2]) -> $affine {
                let raw = <$raw as FromXy<$coord>>::from_xy(*q);
                // SAFETY: as in `coordinates`.
                unsafe { std::mem::transmute::<$raw, $affine>(raw) }
            }
        }
    };
}

/// blst's affine points from their coordinates.
trait FromXy<F> {
    fn from_xy(q: [F; 2]) -> Self;
}
impl FromXy<blst_fp> for blst_p1_affine {
    fn from_xy([x, y]: [blst_fp; 2]) -> Self {
        blst_p1_affine { x, y }
    }
}
impl FromXy<blst_fp2> for blst_p2_affine {
    fn from_xy([x, y]: [blst_fp2; 2]) -> Self {
        blst_p2_affine { x, y }
    }
}

curve!(G1, blst_fp, G1Affine, G1Projective, blst_p1_affine);
curve!(G2, blst_fp2, G2Affine, G2Projective, blst_p2_affine);

/// `Σ scalars[i] · points[i]` with `c`-bit signed windows (2^(c−1) buckets per window) and
/// `batch` additions per inversion.
pub(super) fn msm<C: Curve>(
    points: &[C::Affine],
    scalars: &[Fr],
    c: usize,
    batch: usize,
) -> C::Projective {
    assert_eq!(points.len(), scalars.len(), "msm length mismatch");
    assert!((2..=24).contains(&c), "window of {c} bits");
    assert!(batch >= 1, "empty batches");
    // The identity has no affine coordinates to add, and contributes nothing: a zero scalar
    // makes every window skip it.
    let signed: Vec<Signed> = points
        .par_iter()
        .zip(scalars.par_iter())
        .map(|(p, s)| {
            if bool::from(p.is_identity()) {
                Signed([0; 4])
            } else {
                Signed::new(s)
            }
        })
        .collect();
    let raw = C::coordinates(points);
    // Booth digits: window w reads bits w·c − 1 .. w·c + c − 1 of |s| < 2^254; the top
    // window's sign bit (bit windows·c − 1) must be 0, so the windows cover 255 bits.
    let windows = 255usize.div_ceil(c);
    // Several windows share one bucket array (and so one batch) where their buckets are few:
    // a batch then still holds many additions per inversion without most of them finding
    // their bucket busy, and each point is read once for all of them.
    let group = (GROUP_BUCKETS >> (c - 1)).max(1);
    let threads = rayon::current_num_threads();
    let sums: Vec<(usize, C::Projective)> = shares(windows, raw.len(), threads, group)
        .into_par_iter()
        .flat_map_iter(|share| {
            share.into_iter().flat_map(|(ws, range)| {
                let first = ws.start;
                let held = ws.len();
                let visits = raw[range.clone()]
                    .iter()
                    .zip(&signed[range])
                    .flat_map(move |(p, s)| (0..held).map(move |j| (j, s.digit(first + j, c), p)));
                Window::<C>::new(c, held, batch)
                    .accumulate(visits)
                    .reduce()
                    .into_iter()
                    .enumerate()
                    .map(move |(j, sum)| (first + j, sum))
            })
        })
        .collect();
    let mut per_window = vec![C::Projective::identity(); windows];
    for (w, sum) in sums {
        per_window[w] += sum;
    }
    per_window
        .into_iter()
        .rev()
        .fold(C::Projective::identity(), |acc, s| {
            (0..c).fold(acc, |a, _| a.double()) + s
        })
}

/// Multiples of fixed bases for `c`-bit windows: entry `i·windows + w` is `2^(c·w)·P_i` in
/// blst's affine layout. With them every window's digit of a point goes into one bucket array,
/// so an MSM pays one bucket reduction per thread instead of one per window and no doublings
/// between windows, and affords larger windows (fewer additions per point). A proving key's
/// queries never change, so a table is built once per key and costs `windows` times its query.
pub(crate) struct Table<C: Curve> {
    c: usize,
    windows: usize,
    /// Additions per inversion.
    batch: usize,
    copies: Vec<[C::Coord; 2]>,
}

impl<C: Curve> std::fmt::Debug for Table<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("c", &self.c)
            .field("bases", &self.len())
            .finish()
    }
}

impl<C: Curve> Table<C> {
    /// Bytes of the table of `n` bases under `c`-bit windows.
    pub(crate) fn bytes(n: usize, c: usize) -> u64 {
        (n * 255usize.div_ceil(c) * std::mem::size_of::<[C::Coord; 2]>()) as u64
    }

    pub(crate) fn new(points: &[C::Affine], c: usize, batch: usize) -> Self {
        assert!((2..=24).contains(&c), "window of {c} bits");
        assert!(batch >= 1, "empty batches");
        let windows = 255usize.div_ceil(c);
        let n = points.len() * windows;
        let mut copies = crate::memory::large_vec(n);
        copies.resize(n, Default::default());
        const CHUNK: usize = 1024;
        copies
            .par_chunks_mut(CHUNK * windows)
            .zip(points.par_chunks(CHUNK))
            .for_each(|(out, p)| {
                let mut q: Vec<C::Projective> = p.iter().map(|a| a.to_curve()).collect();
                let mut affine = vec![C::Affine::identity(); p.len()];
                for w in 0..windows {
                    if w > 0 {
                        q.iter_mut()
                            .for_each(|q| *q = (0..c).fold(*q, |q, _| q.double()));
                    }
                    // One inversion for the chunk (group's default inverts per point).
                    <C::Projective as crate::curve::Projective>::batch_to_affine(&q, &mut affine);
                    for (i, xy) in C::coordinates(&affine).iter().enumerate() {
                        out[i * windows + w] = *xy;
                    }
                }
            });
        Table {
            c,
            windows,
            batch,
            copies,
        }
    }

    /// Bytes the multiples take: [`Table::bytes`] of its bases and window.
    pub(crate) fn held(&self) -> u64 {
        (self.copies.len() * std::mem::size_of::<[C::Coord; 2]>()) as u64
    }

    /// The number of bases.
    pub(crate) fn len(&self) -> usize {
        self.copies.len() / self.windows
    }

    /// `Σ scalars[i] · P_(first + i)`, each thread over its share of the bases.
    pub(crate) fn msm(&self, first: usize, scalars: &[Fr]) -> C::Projective {
        let (n, c, windows, batch) = (scalars.len(), self.c, self.windows, self.batch);
        assert!(first + n <= self.len(), "msm past the table's bases");
        let threads = rayon::current_num_threads().clamp(1, n.max(1));
        (0..threads)
            .into_par_iter()
            .map(|t| {
                let visits = (t * n / threads..(t + 1) * n / threads).flat_map(|i| {
                    let copies = &self.copies[(first + i) * windows..][..windows];
                    // The identity has no affine coordinates to add, and adds nothing.
                    let s = if bool::from(C::affine(&copies[0]).is_identity()) {
                        Signed([0; 4])
                    } else {
                        Signed::new(&scalars[i])
                    };
                    copies
                        .iter()
                        .enumerate()
                        .map(move |(w, p)| (0, s.digit(w, c), p))
                });
                let mut sums = Window::<C>::new(c, 1, batch).accumulate(visits).reduce();
                sums.pop().expect("one window array")
            })
            .sum()
    }
}

/// Buckets of all the windows one bucket array holds, at most (one window may exceed it).
const GROUP_BUCKETS: usize = 1 << 15;

/// A piece of work: windows `.0` over points `.1`.
type Piece = (std::ops::Range<usize>, std::ops::Range<usize>);

/// The pieces of work for each of `threads` threads: equal shares of `windows × len` point
/// visits, so no thread idles while another finishes an odd window. At most `threads − 1`
/// windows are cut in two (each cut costs one more bucket reduction); whole windows go in runs
/// of up to `group`.
fn shares(windows: usize, len: usize, threads: usize, group: usize) -> Vec<Vec<Piece>> {
    let total = windows * len;
    let threads = threads.clamp(1, total.max(1));
    (0..threads)
        .map(|t| {
            let (start, end) = (t * total / threads, (t + 1) * total / threads);
            let mut pieces: Vec<Piece> = Vec::new();
            let mut at = start;
            while at < end {
                let (w, i) = (at / len, at % len);
                let stop = end.min((w + 1) * len);
                match pieces.last_mut() {
                    Some((ws, r))
                        if i == 0 && stop - at == len && *r == (0..len) && ws.len() < group =>
                    {
                        ws.end = w + 1
                    }
                    _ => pieces.push((w..w + 1, i..i + (stop - at))),
                }
                at = stop;
            }
            pieces
        })
        .collect()
}

/// A scalar as `±|s|` with `|s| ≤ (r − 1)/2 < 2^254`: the canonical limbs of `s` or of `−s`,
/// the sign in bit 255. One window fewer than the full 255-bit range needs at some sizes.
#[derive(Clone, Copy, Debug)]
struct Signed([u64; 4]);

/// `(r − 1)/2`, little-endian limbs.
const HALF_R: [u64; 4] = [
    0x7fff_ffff_8000_0000,
    0xa9de_d201_7fff_2dff,
    0x199c_ec04_04d0_ec02,
    0x39f6_d3a9_94ce_bea4,
];

impl Signed {
    fn new(s: &Fr) -> Self {
        let l = canonical(s);
        // Lexicographic from the top limb: l > (r − 1)/2.
        if l.iter().rev().cmp(HALF_R.iter().rev()) == std::cmp::Ordering::Greater {
            let mut m = canonical(&-*s);
            m[3] |= 1 << 63;
            Signed(m)
        } else {
            Signed(l)
        }
    }

    /// Window `w`'s digit of the scalar, sign applied.
    fn digit(&self, w: usize, c: usize) -> i64 {
        let mut l = self.0;
        let negative = l[3] >> 63 == 1;
        l[3] &= !(1 << 63);
        let d = digit(&l, w, c);
        if negative {
            -d
        } else {
            d
        }
    }
}

/// `Σ points` by batch-affine additions ([`sums`]). Sequential: callers sum chunks in
/// parallel.
pub(super) fn sum<C: Curve>(mut xy: Vec<[C::Coord; 2]>) -> C::Projective {
    match xy.len() {
        0 => C::Projective::identity(),
        _ => sums::<C>(&mut xy, 1).pop().expect("one run"),
    }
}

/// Rounds with fewer pairs than this finish projectively: they would share one inversion
/// among too few additions.
const MIN_PAIRS: usize = 8;

/// The sums of `groups` equal, consecutive runs of `xy`, by rounds of pairwise affine
/// additions (in each run, point `i` with point `i + live/2`); all runs' pairs of a round
/// share one inversion per batch. A pair with equal x (a doubling or a cancellation) leaves
/// its second point to the run's projective sum. `xy` is consumed as scratch.
fn sums<C: Curve>(xy: &mut [[C::Coord; 2]], groups: usize) -> Vec<C::Projective> {
    let run = xy.len().checked_div(groups).unwrap_or(0);
    assert_eq!(run * groups, xy.len(), "runs of equal length");
    let mut rest = vec![C::Projective::identity(); groups];
    let (mut den, mut prefix) = (Vec::with_capacity(BATCH), Vec::with_capacity(BATCH));
    let mut live = run;
    while live > 1 && groups * (live / 2) >= MIN_PAIRS {
        let half = live / 2;
        let pairs = groups * half;
        for start in (0..pairs).step_by(BATCH) {
            let pairs = start..(start + BATCH).min(pairs);
            add_pairs::<C>(xy, run, half, pairs, &mut den, &mut prefix, &mut rest);
        }
        if live % 2 == 1 {
            for g in 0..groups {
                xy[g * run + half] = xy[g * run + live - 1];
            }
            live = half + 1;
        } else {
            live = half;
        }
    }
    rest.into_iter()
        .enumerate()
        .map(|(g, mut r)| {
            for q in &xy[g * run..g * run + live] {
                r += C::affine(q);
            }
            r
        })
        .collect()
}

/// For each pair `p` in `pairs` (run `p / half`, index `i = p % half` in it), adds the run's
/// point `i + half` into its point `i`, with one inversion.
fn add_pairs<C: Curve>(
    xy: &mut [[C::Coord; 2]],
    run: usize,
    half: usize,
    pairs: std::ops::Range<usize>,
    den: &mut Vec<C::Coord>,
    prefix: &mut Vec<C::Coord>,
    rest: &mut [C::Projective],
) {
    let at = |p: usize| (p / half) * run + p % half;
    den.clear();
    prefix.clear();
    let mut product = C::Coord::ONE;
    for p in pairs.clone() {
        let (a, b) = (at(p), at(p) + half);
        let mut d = C::Coord::default();
        C::Coord::sub(&mut d, &xy[b][0], &xy[a][0]);
        if C::Coord::is_zero(&d) {
            // b = ±a: added projectively; the pair's result is a itself (a zero den marks it).
            rest[p / half] += C::affine(&xy[b]);
            den.push(C::Coord::default());
            d = C::Coord::ONE;
        } else {
            den.push(d);
        }
        C::Coord::mul_assign(&mut product, &d);
        prefix.push(product);
    }
    let mut inv = C::Coord::inverse(&product);
    let (mut lambda, mut x) = (C::Coord::default(), C::Coord::default());
    for (k, p) in pairs.enumerate().rev() {
        let d = &den[k];
        if C::Coord::is_zero(d) {
            continue;
        }
        let a = at(p);
        let [bx, by] = xy[a + half];
        let [ax, ay] = &mut xy[a];
        // inv is 1/(den_0 ⋯ den_k); the prefix before k turns it into 1/den_k.
        C::Coord::sub(&mut lambda, &by, ay);
        C::Coord::mul_assign(&mut lambda, &inv);
        if k > 0 {
            C::Coord::mul_assign(&mut lambda, &prefix[k - 1]);
        }
        C::Coord::mul_assign(&mut inv, d);
        C::Coord::sqr(&mut x, &lambda);
        C::Coord::sub_assign(&mut x, ax);
        C::Coord::sub_assign(&mut x, &bx);
        // y = λ·(x_a − x) − y_a
        C::Coord::sub_assign(ax, &x);
        C::Coord::mul_assign(ax, &lambda);
        C::Coord::sub_from(ay, ax);
        *ax = x;
    }
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

/// Asks for a bucket's cache lines ahead of its batch: the buckets are read in random order
/// and the miss otherwise stalls the batch's first pass.
#[allow(unused_unsafe)] // `_mm_prefetch` is a safe function from Rust 1.87 on
fn prefetch<T>(q: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = (q as *const T).cast::<i8>();
        // SAFETY: prefetching has no architectural effect; the addresses are inside `q`.
        unsafe {
            for line in (0..std::mem::size_of::<T>()).step_by(64) {
                _mm_prefetch::<_MM_HINT_T0>(p.add(line));
            }
            _mm_prefetch::<_MM_HINT_T0>(p.add(std::mem::size_of::<T>() - 1));
        }
    }
}

/// The buckets of consecutive windows, one array: bucket `j·2^(c−1) + b` holds the points
/// whose digit in the `j`-th window is ±(b + 1).
struct Window<C: Curve> {
    /// Affine x, y side by side: one cache line pair per bucket touched.
    buckets: Vec<[C::Coord; 2]>,
    /// `EMPTY`, `FULL` or `BUSY` per bucket; small enough to stay in cache.
    state: Vec<u8>,
    overflow: Vec<C::Projective>,
    /// Pending additions: bucket, the (signed) point, and x_point − x_bucket.
    batch: Vec<(u32, [C::Coord; 2], C::Coord)>,
    /// Prefix products of the batch's denominators.
    prefix: Vec<C::Coord>,
    /// Points whose bucket was busy, for a later batch (past `batch_len` of them, the
    /// overflow takes them: one bucket's long run must not make every batch tiny).
    pending: Vec<(u32, [C::Coord; 2])>,
    /// Additions per inversion: small against the bucket count, or most points would find
    /// their bucket busy.
    batch_len: usize,
    /// Window bits and the number of windows held.
    c: usize,
    windows: usize,
}

const EMPTY: u8 = 0;
const FULL: u8 = 1;
/// In the current batch: a second point for it goes to the overflow.
const BUSY: u8 = 2;

impl<C: Curve> Window<C> {
    fn new(c: usize, windows: usize, batch: usize) -> Self {
        let n = windows << (c - 1);
        // Huge pages where the kernel allows: buckets are visited at random, and at 2^16
        // buckets (6 MB for G1) 4 KiB pages would miss the TLB on most visits.
        let mut buckets = crate::memory::large_vec(n);
        buckets.resize(n, Default::default());
        Window {
            buckets,
            state: vec![EMPTY; n],
            overflow: vec![C::Projective::identity(); n],
            batch: Vec::with_capacity(batch),
            prefix: Vec::with_capacity(batch),
            pending: Vec::with_capacity(batch),
            batch_len: batch,
            c,
            windows,
        }
    }

    /// Adds each visit's point, times the sign of its digit, into the bucket of the digit's
    /// magnitude in the visit's window (of those this array holds).
    fn accumulate<'p>(
        mut self,
        visits: impl Iterator<Item = (usize, i64, &'p [C::Coord; 2])>,
    ) -> Self
    where
        C::Coord: 'p,
    {
        let per = 1usize << (self.c - 1);
        for (j, d, p) in visits {
            if d == 0 {
                continue;
            }
            let b = j * per + (d.unsigned_abs() - 1) as usize;
            let mut q = *p;
            if d < 0 {
                C::Coord::neg(&mut q[1]);
            }
            self.add(b, q);
        }
        while !self.batch.is_empty() || !self.pending.is_empty() {
            self.flush();
        }
        self
    }

    /// Puts `q` into bucket `b`: at once if it is empty, into the batch if it is not already
    /// there, else into the pending list (or the overflow when that is full).
    fn add(&mut self, b: usize, q: [C::Coord; 2]) {
        match self.state[b] {
            EMPTY => (self.buckets[b], self.state[b]) = (q, FULL),
            BUSY if self.pending.len() < self.batch_len => self.pending.push((b as u32, q)),
            BUSY => self.overflow[b] += C::affine(&q),
            _ => {
                self.state[b] = BUSY;
                prefetch(&self.buckets[b]);
                self.batch.push((b as u32, q, Default::default()));
                if self.batch.len() == self.batch_len {
                    self.flush();
                }
            }
        }
    }

    /// Adds every pending point into its bucket with one shared inversion.
    fn flush(&mut self) {
        self.prefix.clear();
        let mut product = C::Coord::ONE;
        for (b, q, den) in &mut self.batch {
            C::Coord::sub(den, &q[0], &self.buckets[*b as usize][0]);
            C::Coord::mul_assign(&mut product, den);
            self.prefix.push(product);
        }
        if C::Coord::is_zero(&product) {
            self.move_equal_x();
            return self.flush();
        }
        let mut inv = C::Coord::inverse(&product);
        let (mut lambda, mut x) = (C::Coord::default(), C::Coord::default());
        for k in (0..self.batch.len()).rev() {
            let (b, [px, py], den) = &self.batch[k];
            let [bx, by] = &mut self.buckets[*b as usize];
            // inv is 1/(den_0 ⋯ den_k); the prefix before k turns it into 1/den_k.
            C::Coord::sub(&mut lambda, py, by);
            C::Coord::mul_assign(&mut lambda, &inv);
            if k > 0 {
                C::Coord::mul_assign(&mut lambda, &self.prefix[k - 1]);
            }
            C::Coord::mul_assign(&mut inv, den);
            C::Coord::sqr(&mut x, &lambda);
            C::Coord::sub_assign(&mut x, bx);
            C::Coord::sub_assign(&mut x, px);
            // y = λ·(x_bucket − x) − y_bucket
            C::Coord::sub_assign(bx, &x);
            C::Coord::mul_assign(bx, &lambda);
            C::Coord::sub_from(by, bx);
            *bx = x;
            self.state[*b as usize] = FULL;
        }
        self.batch.clear();
        // Every bucket is out of the batch now: the pending points go in (those of one bucket
        // one per batch).
        let pending = std::mem::take(&mut self.pending);
        for &(b, q) in &pending {
            self.add(b as usize, q);
        }
        let mut pending = pending;
        pending.clear();
        if self.pending.is_empty() {
            self.pending = pending;
        }
    }

    /// Same x as the bucket (a doubling or a cancellation, which the affine formula cannot
    /// take): such points go to the overflow. Rare, so found only when the product is zero.
    fn move_equal_x(&mut self) {
        let (overflow, state) = (&mut self.overflow, &mut self.state);
        self.batch.retain(|(b, q, den)| {
            let b = *b as usize;
            let equal = C::Coord::is_zero(den);
            if equal {
                overflow[b] += C::affine(q);
                state[b] = FULL;
            }
            !equal
        });
    }

    /// Per window, Σ (b + 1) · bucket_b.
    fn reduce(mut self) -> Vec<C::Projective> {
        let per = 1usize << (self.c - 1);
        (0..self.windows)
            .map(|j| {
                let range = j * per..(j + 1) * per;
                let affine_only = self.state[range.clone()].iter().all(|&s| s == FULL)
                    && (self.overflow[range.clone()].iter()).all(|o| bool::from(o.is_identity()));
                if affine_only {
                    reduce_affine::<C>(&mut self.buckets[range])
                } else {
                    self.reduce_projective(range)
                }
            })
            .collect()
    }

    /// Σ (b + 1) · bucket_b over `range` by running sums from the top bucket down: any state
    /// of buckets (empty, with overflow).
    fn reduce_projective(&self, range: std::ops::Range<usize>) -> C::Projective {
        let (mut running, mut sum) = (C::Projective::identity(), C::Projective::identity());
        for b in range.rev() {
            if self.state[b] != EMPTY {
                running += C::affine(&self.buckets[b]);
            }
            if !bool::from(self.overflow[b].is_identity()) {
                running += self.overflow[b];
            }
            sum += running;
        }
        sum
    }
}

/// Σ (b + 1) · P_b for `B = 2^k` affine points `P` (every bucket full), mostly by batch-affine
/// additions: with `b = u·lo + v`, `Σ (b + 1) P_b = lo · Σ_u u·Q_u + Σ_v (v + 1)·W_v`, where
/// `Q_u = Σ_v P_{u·lo+v}` and `W_v = Σ_u P_{u·lo+v}` are sums of runs ([`sums`]) and only the
/// `hi + lo` weighted terms are projective (running sums over `√B` points, not `B`).
fn reduce_affine<C: Curve>(p: &mut [[C::Coord; 2]]) -> C::Projective {
    let n = p.len();
    debug_assert!(n.is_power_of_two());
    let lo_bits = n.trailing_zeros() / 2;
    let (lo, hi) = (1usize << lo_bits, n >> lo_bits);
    let mut by_v: Vec<[C::Coord; 2]> = (0..n).map(|i| p[(i % hi) * lo + i / hi]).collect();
    let w = sums::<C>(&mut by_v, lo);
    let q = sums::<C>(p, hi);
    let (q_weighted, q_total) = running_sums::<C>(&q);
    let (w_weighted, _) = running_sums::<C>(&w);
    // Σ_u u·Q_u is Σ_u (u + 1)·Q_u − Σ_u Q_u.
    (0..lo_bits).fold(q_weighted - q_total, |acc, _| acc.double()) + w_weighted
}

/// `(Σ (i + 1)·terms[i], Σ terms[i])`, by running sums from the top.
fn running_sums<C: Curve>(terms: &[C::Projective]) -> (C::Projective, C::Projective) {
    let (mut running, mut sum) = (C::Projective::identity(), C::Projective::identity());
    for t in terms.iter().rev() {
        running += *t;
        sum += running;
    }
    (sum, running)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{random_g1, random_g2, random_scalars};
    use proptest::prelude::*;

    fn naive<A: PrimeCurveAffine>(p: &[A], s: &[Fr]) -> A::Curve
    where
        A::Curve: Group<Scalar = Fr>,
    {
        p.iter()
            .zip(s)
            .fold(A::Curve::identity(), |acc, (p, s)| acc + p.to_curve() * s)
    }

    /// `(r − 1)/2` as a field element.
    fn half_r() -> Fr {
        -Fr::ONE * Fr::from(2).invert().unwrap()
    }

    #[test]
    fn half_r_is_the_largest_positive_scalar() {
        assert_eq!(canonical(&half_r()), HALF_R);
        assert_eq!(half_r() + half_r(), -Fr::ONE);
    }

    #[test]
    fn digits_recompose_the_scalar() {
        for (seed, c) in [(1, 2), (2, 5), (3, 13), (4, 16), (5, 17), (6, 24)] {
            for s in random_scalars(50, seed)
                .into_iter()
                .chain([Fr::ZERO, Fr::ONE, -Fr::ONE])
                .chain([half_r(), half_r() + Fr::ONE, -half_r()])
            {
                let l = canonical(&s);
                let got = (0..256usize.div_ceil(c)).rev().fold(Fr::ZERO, |acc, w| {
                    let d = digit(&l, w, c);
                    let m = Fr::from(d.unsigned_abs());
                    acc * Fr::from(1u64 << c) + if d < 0 { -m } else { m }
                });
                assert_eq!(got, s, "c = {c}");
                assert!((0..256usize.div_ceil(c)).all(|w| digit(&l, w, c).abs() <= 1 << (c - 1)));
                // Signed: 255 bits of windows suffice.
                let signed = Signed::new(&s);
                let got = (0..255usize.div_ceil(c)).rev().fold(Fr::ZERO, |acc, w| {
                    let d = signed.digit(w, c);
                    let m = Fr::from(d.unsigned_abs());
                    acc * Fr::from(1u64 << c) + if d < 0 { -m } else { m }
                });
                assert_eq!(got, s, "signed, c = {c}");
            }
        }
    }

    /// `n` (at least 1,400) points and scalars, with repeated points under equal and opposite
    /// scalars (doublings and cancellations in one bucket), identities, zeros, a run of equal
    /// scalars (one bucket per window, every point a conflict), ±1 and ±(r − 1)/2.
    fn awkward(n: usize, seed: u64) -> (Vec<G1Affine>, Vec<Fr>) {
        let mut p = random_g1(n, seed);
        let mut s = random_scalars(n, seed + 1);
        for i in 0..200 {
            p[2 * i + 1] = p[2 * i];
            s[2 * i + 1] = if i % 2 == 0 { s[2 * i] } else { -s[2 * i] };
            p[600 + i] = G1Affine::identity();
            s[800 + i] = Fr::ZERO;
            s[1000 + i] = s[1000];
        }
        s[1300] = Fr::ONE;
        s[1301] = -Fr::ONE;
        s[1302] = half_r();
        s[1303] = -half_r();
        (p, s)
    }

    /// [`awkward`] inputs over several batches.
    #[test]
    fn awkward_inputs() {
        let (p, s) = awkward(3 * BATCH + 17, 7);
        for c in [3, 8, 16] {
            assert_eq!(msm::<G1>(&p, &s, c, BATCH), naive(&p, &s), "c = {c}");
        }
        assert_eq!(
            msm::<G1>(&p[..0], &s[..0], 8, BATCH),
            G1Projective::identity()
        );
        let (p2, s2) = (random_g2(300, 11), random_scalars(300, 12));
        assert_eq!(msm::<G2>(&p2, &s2, 5, 16), naive(&p2, &s2));
    }

    /// The fixed-base table over [`awkward`] inputs, from offsets into it.
    #[test]
    fn tables_match_naive() {
        let n = 2 * BATCH + 33;
        let (p, s) = awkward(n, 30);
        for c in [2, 7, 13] {
            let table = Table::<G1>::new(&p, c, 64);
            assert_eq!(table.len(), n);
            assert_eq!(table.held(), Table::<G1>::bytes(n, c));
            for (first, len) in [(0, n), (5, n - 5), (0, 0), (n - 1, 1)] {
                let want = naive(&p[first..first + len], &s[first..first + len]);
                let got = table.msm(first, &s[first..first + len]);
                assert_eq!(got, want, "c = {c}, {first} + {len}");
            }
        }
        let (p2, s2) = (random_g2(200, 32), random_scalars(200, 33));
        let table = Table::<G2>::new(&p2, 6, 16);
        assert_eq!(table.msm(0, &s2), naive(&p2, &s2));
        assert_eq!(
            Table::<G2>::bytes(200, 6),
            (200 * 43 * std::mem::size_of::<G2Affine>()) as u64
        );
    }

    proptest! {
        /// Every (window, point) visit is in exactly one share, and shares differ by at most
        /// one visit.
        #[test]
        fn shares_cover_each_visit_once(
            windows in 1usize..40,
            len in 0usize..300,
            threads in 1usize..50,
            group in 1usize..8,
        ) {
            let shares = shares(windows, len, threads, group);
            let mut seen = vec![0u8; windows * len];
            for share in &shares {
                for (ws, r) in share {
                    prop_assert!(!r.is_empty() && !ws.is_empty() && ws.len() <= group);
                    for w in ws.clone() {
                        for i in r.clone() {
                            seen[w * len + i] += 1;
                        }
                    }
                }
            }
            prop_assert!(seen.iter().all(|&n| n == 1));
            let sizes: Vec<usize> = shares
                .iter()
                .map(|s| s.iter().map(|(ws, r)| ws.len() * r.len()).sum())
                .collect();
            prop_assert!(sizes.iter().max().unwrap_or(&0) - sizes.iter().min().unwrap_or(&0) <= 1);
        }
    }

    #[test]
    fn splits_the_points_when_threads_outnumber_windows() {
        let (p, s) = (random_g1(3000, 9), random_scalars(3000, 10));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(40)
            .build()
            .unwrap();
        // 16 or 32 windows over 40 threads: most windows are cut between threads.
        for c in [16, 8] {
            assert_eq!(
                pool.install(|| msm::<G1>(&p, &s, c, BATCH)),
                naive(&p, &s),
                "c = {c}"
            );
        }
    }

    /// Sums of points with repeats and negations (pairs with equal x in some round), over
    /// several batches and odd lengths.
    fn sum_case<C: Curve>(points: Vec<C::Affine>) -> (C::Projective, C::Projective) {
        let want = points.iter().fold(C::Projective::identity(), |mut acc, p| {
            acc += *p;
            acc
        });
        (sum::<C>(C::coordinates(&points).to_vec()), want)
    }

    #[test]
    fn sums_with_doublings_and_cancellations() {
        let n = 2 * BATCH + 2 * 17 + 1;
        let mut p = random_g1(n, 13);
        let half = n / 2;
        for i in 0..100 {
            p[half + i] = p[i];
            p[half + 100 + i] = -p[100 + i];
        }
        let (got, want) = sum_case::<G1>(p);
        assert_eq!(got, want);
        let mut q = random_g2(77, 14);
        q[40] = q[2];
        q[41] = -q[3];
        let (got, want) = sum_case::<G2>(q);
        assert_eq!(got, want);
        // A run of one point: every round doubles.
        let (got, want) = sum_case::<G1>(vec![random_g1(1, 15)[0]; 100]);
        assert_eq!(got, want);
    }

    /// The batch-affine bucket reduction against Σ (b + 1)·P_b, with repeated and negated
    /// buckets (equal x inside its sums) and every size it can meet.
    #[test]
    fn affine_reduction_weighs_each_bucket_by_its_index() {
        for k in 0..=9 {
            let n = 1usize << k;
            let mut p = random_g1(n, 20 + k as u64);
            for i in (0..n).step_by(5) {
                p[i] = p[0];
            }
            for i in (3..n).step_by(7) {
                p[i] = -p[1];
            }
            let want = p
                .iter()
                .enumerate()
                .fold(G1Projective::identity(), |acc, (b, q)| {
                    acc + q.to_curve() * Fr::from(b as u64 + 1)
                });
            let mut xy = G1::coordinates(&p).to_vec();
            assert_eq!(reduce_affine::<G1>(&mut xy), want, "2^{k} buckets");
        }
    }

    /// The Pippenger and the sum of the same points against the naive sums.
    fn agrees<C: Curve>(
        p: Vec<C::Affine>,
        s: &[Fr],
        c: usize,
        batch: usize,
    ) -> Result<(), TestCaseError>
    where
        C::Affine: PrimeCurveAffine<Curve = C::Projective>,
        C::Projective: Group<Scalar = Fr> + std::fmt::Debug,
    {
        prop_assert_eq!(msm::<C>(&p, s, c, batch), naive(&p, s));
        let (got, want) = sum_case::<C>(p);
        prop_assert_eq!(got, want);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn matches_naive(len in 0usize..2500, seed in any::<u64>(), c in 2usize..12, batch in 1usize..2048) {
            agrees::<G1>(random_g1(len, seed), &random_scalars(len, seed ^ 1), c, batch)?;
        }

        #[test]
        fn g2_matches_naive(len in 0usize..300, seed in any::<u64>(), c in 2usize..9, batch in 1usize..64) {
            agrees::<G2>(random_g2(len, seed), &random_scalars(len, seed ^ 1), c, batch)?;
        }
    }
}
