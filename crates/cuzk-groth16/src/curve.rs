//! Batch helpers on top of blst: projective-to-affine with one inversion per batch, and
//! fixed-base scalar multiplication with precomputed window tables (the setup's hot loop).

use std::ops::AddAssign;

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine};
use ff::PrimeField;
use group::{Curve, Group};
use rayon::prelude::*;

use crate::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

/// A projective group type whose points can be normalised in bulk (G1 and G2).
pub trait Projective:
    Group<Scalar = Fr> + Curve + for<'a> AddAssign<&'a <Self as Curve>::AffineRepr> + Send + Sync
where
    Self::AffineRepr: Copy + Default + Send + Sync,
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

const BATCH: usize = 1 << 12;
const SCALAR_BITS: usize = Fr::NUM_BITS as usize;

/// `d · 2^{w·k} · base` for every window `k` and digit `d ∈ [1, 2^w)`, in affine form.
pub(crate) struct FixedBase<G: Projective>
where
    G::AffineRepr: Copy + Default + Send + Sync,
{
    window: usize,
    table: Vec<G::AffineRepr>,
}

impl<G: Projective> FixedBase<G>
where
    G::AffineRepr: Copy + Default + Send + Sync,
{
    /// Builds a table sized for about `count` multiplications by the same base.
    pub(crate) fn new(base: G, count: usize) -> Self {
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
        let mut table = vec![G::AffineRepr::default(); windows * row];
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
                G::batch_to_affine(&proj, out);
            });
        FixedBase { window, table }
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

    fn mul_projective(&self, scalar: &Fr) -> G {
        let repr = scalar.to_repr();
        let bytes = repr.as_ref();
        let row = (1usize << self.window) - 1;
        let mut acc = G::identity();
        let mut bit = 0;
        let mut k = 0;
        while bit < SCALAR_BITS {
            let d = digit(bytes, bit, self.window);
            if d != 0 {
                acc += &self.table[k * row + d - 1];
            }
            bit += self.window;
            k += 1;
        }
        acc
    }

    /// `scalar_i · base` for every scalar, in affine form.
    pub(crate) fn batch_mul(&self, scalars: &[Fr]) -> Vec<G::AffineRepr> {
        let mut out = vec![G::AffineRepr::default(); scalars.len()];
        out.par_chunks_mut(BATCH)
            .zip(scalars.par_chunks(BATCH))
            .for_each(|(o, s)| {
                let proj: Vec<G> = s.iter().map(|s| self.mul_projective(s)).collect();
                G::batch_to_affine(&proj, o);
            });
        out
    }
}

/// Bits `[bit, bit + width)` of a little-endian byte string (zero past its end).
fn digit(le: &[u8], bit: usize, width: usize) -> usize {
    let mut v = 0usize;
    for i in 0..width {
        let b = bit + i;
        if b / 8 < le.len() && (le[b / 8] >> (b % 8)) & 1 == 1 {
            v |= 1 << i;
        }
    }
    v
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
