//! Batch helpers on top of blst: projective-to-affine with one inversion per batch, and
//! fixed-base scalar multiplication with precomputed window tables (the setup's hot loop).

use std::ops::AddAssign;

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};
use blstrs::{Fp, Fp2};
use ff::{BatchInvert, Field, PrimeField};
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rayon::prelude::*;

use crate::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

/// Raw affine coordinates, for additions done directly in affine form.
pub trait Coords: PrimeCurveAffine + Copy + Default + Send + Sync {
    type Base: Field;
    fn xy(&self) -> (Self::Base, Self::Base);
    /// The point `(x, y)`; the caller guarantees it is on the curve.
    fn from_xy(x: Self::Base, y: Self::Base) -> Self;
}

impl Coords for G1Affine {
    type Base = Fp;
    fn xy(&self) -> (Fp, Fp) {
        (self.x(), self.y())
    }
    fn from_xy(x: Fp, y: Fp) -> Self {
        G1Affine::from_raw_unchecked(x, y, false)
    }
}

impl Coords for G2Affine {
    type Base = Fp2;
    fn xy(&self) -> (Fp2, Fp2) {
        (self.x(), self.y())
    }
    fn from_xy(x: Fp2, y: Fp2) -> Self {
        G2Affine::from_raw_unchecked(x, y, false)
    }
}

/// A projective group type whose points can be normalised in bulk (G1 and G2).
pub trait Projective:
    Group<Scalar = Fr>
    + Curve
    + for<'a> AddAssign<&'a <Self as Curve>::AffineRepr>
    + From<<Self as Curve>::AffineRepr>
    + Send
    + Sync
where
    Self::AffineRepr: Coords,
{
    /// Writes the affine form of `points` into `out` (same length) with one field inversion.
    fn batch_to_affine(points: &[Self], out: &mut [Self::AffineRepr]);
}

macro_rules! projective {
    ($proj:ty, $aff:ty, $raw:ty, $raw_aff:ty, $f:path) => {
        impl Projective for $proj {
            fn batch_to_affine(points: &[Self], out: &mut [$aff]) {
                assert_eq!(points.len(), out.len());
                if points.is_empty() {
                    return;
                }
                // blst treats `[ptr, null]` as one contiguous array of points.
                let ptrs: [*const $raw; 2] = [points.as_ptr() as *const $raw, std::ptr::null()];
                // SAFETY: blstrs' point types are `repr(transparent)` over blst's, the slices
                // have equal length, and blst writes exactly `points.len()` affine points.
                unsafe {
                    $f(
                        out.as_mut_ptr() as *mut $raw_aff,
                        ptrs.as_ptr(),
                        points.len(),
                    )
                };
            }
        }
    };
}
projective!(
    G1Projective,
    G1Affine,
    blst_p1,
    blst_p1_affine,
    blst::blst_p1s_to_affine
);
projective!(
    G2Projective,
    G2Affine,
    blst_p2,
    blst_p2_affine,
    blst::blst_p2s_to_affine
);

/// `d · 2^{w·k} · base` for every window `k` and digit `d ∈ [1, 2^w)`, as raw affine
/// coordinates (the form the batched additions read, and what a device uploads).
pub struct FixedBase<G: Projective>
where
    G::AffineRepr: Coords,
{
    window: usize,
    table: Vec<[Base<G>; 2]>,
}

impl<G: Projective> std::fmt::Debug for FixedBase<G>
where
    G::AffineRepr: Coords,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixedBase")
            .field("window", &self.window)
            .field("points", &self.table.len())
            .finish()
    }
}

/// The coordinate field of `G`'s affine points (Fp for G1, Fp2 for G2).
pub type Base<G> = <<G as Curve>::AffineRepr as Coords>::Base;

const BATCH: usize = 1 << 12;
const SCALAR_BITS: usize = Fr::NUM_BITS as usize;

impl<G: Projective> FixedBase<G>
where
    G::AffineRepr: Coords,
{
    /// Builds a table sized for about `count` multiplications by the same base.
    pub fn new(base: G, count: usize) -> Self {
        let window = Self::best_window(count);
        let windows = SCALAR_BITS.div_ceil(window);
        let row = (1usize << window) - 1;
        let mut starts = Vec::with_capacity(windows);
        let mut b = base;
        for _ in 0..windows {
            starts.push(b);
            for _ in 0..window {
                b = b.double();
            }
        }
        let mut table = vec![[Base::<G>::ZERO; 2]; windows * row];
        table
            .par_chunks_mut(row)
            .zip(starts.par_iter())
            .for_each(|(out, start)| {
                let mut proj = Vec::with_capacity(row);
                let mut acc = *start;
                for _ in 0..row {
                    proj.push(acc);
                    acc += start;
                }
                let mut affine = vec![G::AffineRepr::default(); row];
                G::batch_to_affine(&proj, &mut affine);
                for (o, a) in out.iter_mut().zip(&affine) {
                    let (x, y) = a.xy();
                    *o = [x, y];
                }
            });
        FixedBase { window, table }
    }

    /// Digit bits per window.
    pub fn window(&self) -> usize {
        self.window
    }

    /// `[x, y]` of `d · 2^{w·k} · base` at index `k · (2^w − 1) + d − 1`; no entry is the
    /// point at infinity.
    pub fn table(&self) -> &[[Base<G>; 2]] {
        &self.table
    }

    /// Minimises table construction plus per-scalar additions, capped at 16-bit windows so a
    /// G2 table stays near 200 MB.
    fn best_window(count: usize) -> usize {
        (2..=16)
            .min_by_key(|&w| {
                let windows = SCALAR_BITS.div_ceil(w);
                windows * ((1usize << w) - 1) + count.saturating_mul(windows)
            })
            .unwrap_or(8)
    }

    /// `scalar_i · base` for every scalar, in affine form.
    pub fn batch_mul(&self, scalars: &[Fr]) -> Vec<G::AffineRepr> {
        let mut out = vec![G::AffineRepr::default(); scalars.len()];
        out.par_chunks_mut(BATCH)
            .zip(scalars.par_chunks(BATCH))
            .for_each(|(o, s)| self.mul_block(s, o));
        out
    }

    /// Accumulates a block of scalars window by window in affine coordinates, with one field
    /// inversion per window for the whole block (Montgomery's trick): about half the field
    /// multiplications of mixed projective additions.
    fn mul_block(&self, scalars: &[Fr], out: &mut [G::AffineRepr]) {
        let n = scalars.len();
        let limbs: Vec<[u64; 4]> = scalars.iter().map(limbs).collect();
        let row = (1usize << self.window) - 1;
        let mask = (1u64 << self.window) - 1;
        let (mut ax, mut ay) = (vec![Base::<G>::ZERO; n], vec![Base::<G>::ZERO; n]);
        let mut set = vec![false; n];
        let mut todo: Vec<(u32, u32)> = Vec::with_capacity(n);
        let mut denom: Vec<Base<G>> = Vec::with_capacity(n);
        for (k, bit) in (0..SCALAR_BITS).step_by(self.window).enumerate() {
            todo.clear();
            denom.clear();
            for j in 0..n {
                let d = (window_bits(&limbs[j], bit) & mask) as usize;
                if d == 0 {
                    continue;
                }
                let t = k * row + d - 1;
                let [px, py] = self.table[t];
                if !set[j] {
                    (ax[j], ay[j], set[j]) = (px, py, true);
                    continue;
                }
                let dx = px - ax[j];
                if bool::from(dx.is_zero()) {
                    // A doubling or a cancellation: left to the projective formulas.
                    let mut sum = G::from(G::AffineRepr::from_xy(ax[j], ay[j]));
                    sum += &G::AffineRepr::from_xy(px, py);
                    let sum = sum.to_affine();
                    set[j] = !bool::from(sum.is_identity());
                    (ax[j], ay[j]) = sum.xy();
                    continue;
                }
                todo.push((j as u32, t as u32));
                denom.push(dx);
            }
            denom.iter_mut().batch_invert();
            for (&(j, t), inv) in todo.iter().zip(&denom) {
                let (j, [px, py]) = (j as usize, self.table[t as usize]);
                let l = (py - ay[j]) * inv;
                let x3 = l.square() - ax[j] - px;
                ay[j] = l * (ax[j] - x3) - ay[j];
                ax[j] = x3;
            }
        }
        for j in 0..n {
            out[j] = if set[j] {
                G::AffineRepr::from_xy(ax[j], ay[j])
            } else {
                G::AffineRepr::identity()
            };
        }
    }
}

/// The canonical little-endian limbs of a scalar.
pub(crate) fn limbs(s: &Fr) -> [u64; 4] {
    let r = s.to_repr();
    let b = r.as_ref();
    std::array::from_fn(|i| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().expect("8 bytes")))
}

/// The 64 bits of `limbs` starting at `bit` (zero past the top).
#[inline]
pub(crate) fn window_bits(limbs: &[u64; 4], bit: usize) -> u64 {
    let (i, sh) = (bit / 64, bit % 64);
    let lo = limbs[i] >> sh;
    if sh == 0 || i + 1 >= 4 {
        lo
    } else {
        lo | limbs[i + 1] << (64 - sh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::prime::PrimeCurveAffine;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn fixed_base_matches_scalar_mul() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let base = G1Projective::random(&mut rng);
        let mut scalars: Vec<Fr> = (0..50).map(|_| Fr::random(&mut rng)).collect();
        scalars.extend([Fr::ZERO, Fr::ONE, -Fr::ONE]);
        for count in [1, 100, 1 << 20] {
            let t = FixedBase::new(base, count);
            let got = t.batch_mul(&scalars);
            for (s, g) in scalars.iter().zip(&got) {
                assert_eq!(*g, (base * s).to_affine());
            }
        }
        let base2 = G2Projective::random(&mut rng);
        let t = FixedBase::new(base2, 10);
        for (s, g) in scalars.iter().zip(t.batch_mul(&scalars)) {
            assert_eq!(g, (base2 * s).to_affine());
        }
    }

    #[test]
    fn batch_affine_handles_identity() {
        let pts = vec![G1Projective::identity(), G1Projective::generator()];
        let mut aff = vec![G1Affine::default(); 2];
        G1Projective::batch_to_affine(&pts, &mut aff);
        assert_eq!(aff[0], G1Affine::identity());
        assert_eq!(aff[1], G1Affine::generator());
    }
}
