//! Multi-scalar multiplication on the CPU.
//!
//! Witness-side MSMs of Filecoin circuits are dominated by 0/1 scalars (bit decompositions),
//! so [`g1`] and [`g2`] first drop zeros and sum the points of ones by batch-affine additions,
//! and hand only the remaining scalars to a Pippenger: our batch-affine one ([`affine`]) from
//! a few thousand points, blst's multi-threaded one ([`blst_g1`], [`blst_g2`]) below (and
//! for large G2 inputs). Inputs with few such scalars (the H query) skip the split.

mod affine;
mod tables;

pub use tables::Tables;

use blst::{blst_p1_affine, blst_p2_affine, MultiPoint};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::Group;
use rayon::prelude::*;

use crate::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};
use affine::{Curve, Table};

/// `Σ scalars[i] · points[i]` over G1. The slices must have equal length.
pub fn g1(points: &[G1Affine], scalars: &[Fr]) -> G1Projective {
    fixed::<affine::G1>(None, 0, points, scalars)
}

/// `Σ scalars[i] · points[i]` over G2. The slices must have equal length.
pub fn g2(points: &[G2Affine], scalars: &[Fr]) -> G2Projective {
    fixed::<affine::G2>(None, 0, points, scalars)
}

/// `Σ scalars[i] · points[i]`, where `points` are the bases `first ..` of `table` when there
/// is one: the table serves the whole MSM, a Pippenger the rest of a mostly-0/1 one.
pub(crate) fn fixed<C: Pippenger>(
    table: Option<&Table<C>>,
    first: usize,
    points: &[C::Affine],
    scalars: &[Fr],
) -> C::Projective {
    let whole = || match table {
        Some(t) => t.msm(first, scalars),
        None => C::pippenger(points, scalars),
    };
    split::<C>(points, scalars, whole, C::pippenger)
}

/// A curve's Pippenger for the points no table serves.
pub(crate) trait Pippenger: Curve {
    fn pippenger(points: &[Self::Affine], scalars: &[Fr]) -> Self::Projective;
}

impl Pippenger for affine::G1 {
    fn pippenger(points: &[G1Affine], scalars: &[Fr]) -> G1Projective {
        pippenger::<affine::G1>(points, scalars, usize::MAX, blst_g1)
    }
}

impl Pippenger for affine::G2 {
    fn pippenger(points: &[G2Affine], scalars: &[Fr]) -> G2Projective {
        // Measured up to 2^15 points (log #31); blst's above, where it was not compared.
        pippenger::<affine::G2>(points, scalars, 1 << 17, blst_g2)
    }
}

/// Our batch-affine Pippenger for fewer than `below` points where [`affine_window`] has a
/// window, else `blst`'s.
fn pippenger<C: Curve>(
    points: &[C::Affine],
    scalars: &[Fr],
    below: usize,
    blst: fn(&[C::Affine], &[Fr]) -> C::Projective,
) -> C::Projective {
    match affine_window(points.len()) {
        Some((c, batch)) if points.len() < below => affine::msm::<C>(points, scalars, c, batch),
        _ => blst(points, scalars),
    }
}

/// Window bits and additions per inversion of the batch-affine Pippenger for `n` points, or
/// `None` where blst's is faster. Measured on 2 cores (logs #28, #31, #56): from 2^12 points
/// ours wins by 15-30 %; 17-bit windows (15 signed windows) from 2^21; 11 and 12 bits only
/// where their 2-3-bit top window costs least.
fn affine_window(n: usize) -> Option<(usize, usize)> {
    Some(match n {
        0..0x1000 => return None,
        0x1000..0x8000 => (10, 256),
        0x8000..0x1_0000 => (12, 256),
        0x1_0000..0x2_0000 => (13, 1024),
        0x2_0000..0x20_0000 => (16, 1024),
        _ => (17, 1024),
    })
}

/// Below this share of 0/1 scalars, splitting costs more (gathering points) than it saves.
const SPLIT_MIN_PERCENT: usize = 25;

/// `whole()` (the MSM of every point) unless enough scalars are 0 or 1: then the ones' points
/// are summed and `rest` takes only the other points.
fn split<C: Curve>(
    points: &[C::Affine],
    scalars: &[Fr],
    whole: impl FnOnce() -> C::Projective,
    rest: fn(&[C::Affine], &[Fr]) -> C::Projective,
) -> C::Projective {
    assert_eq!(points.len(), scalars.len(), "msm length mismatch");
    let trivial = scalars
        .par_iter()
        .filter(|s| bool::from(s.is_zero()) || **s == Fr::ONE)
        .count();
    if trivial * 100 < scalars.len() * SPLIT_MIN_PERCENT {
        return whole();
    }
    let (ones, (rest_p, rest_s)) = points
        .par_chunks(1 << 14)
        .zip(scalars.par_chunks(1 << 14))
        .map(|(p, s)| {
            let (mut ones, mut rp, mut rs) = (Vec::new(), Vec::new(), Vec::new());
            for ((p, xy), s) in p.iter().zip(C::coordinates(p)).zip(s) {
                if *s == Fr::ONE {
                    // The identity has no affine coordinates to add, and adds nothing.
                    if !bool::from(p.is_identity()) {
                        ones.push(*xy);
                    }
                } else if !bool::from(s.is_zero()) {
                    rp.push(*p);
                    rs.push(*s);
                }
            }
            (affine::sum::<C>(ones), (rp, rs))
        })
        .reduce(
            || (C::Projective::identity(), (Vec::new(), Vec::new())),
            |(a, (mut ap, mut as_)), (b, (bp, bs))| {
                ap.extend(bp);
                as_.extend(bs);
                (a + b, (ap, as_))
            },
        );
    ones + rest(&rest_p, &rest_s)
}

/// Little-endian 32-byte encodings of the scalars, the input blst expects.
fn scalar_bytes(scalars: &[Fr]) -> Vec<u8> {
    let mut out = vec![0u8; scalars.len() * 32];
    out.par_chunks_mut(32)
        .zip(scalars.par_iter())
        .for_each(|(o, s)| o.copy_from_slice(&s.to_bytes_le()));
    out
}

/// blst's multi-threaded Pippenger over G1.
pub fn blst_g1(points: &[G1Affine], scalars: &[Fr]) -> G1Projective {
    assert_eq!(points.len(), scalars.len(), "msm length mismatch");
    if points.is_empty() {
        return G1Projective::identity();
    }
    // SAFETY: `G1Affine` is `repr(transparent)` over `blst_p1_affine`.
    let raw = unsafe {
        std::slice::from_raw_parts(points.as_ptr() as *const blst_p1_affine, points.len())
    };
    let out = raw.mult(&scalar_bytes(scalars), 255);
    // SAFETY: `G1Projective` is `repr(transparent)` over `blst_p1`.
    unsafe { std::mem::transmute::<blst::blst_p1, G1Projective>(out) }
}

/// blst's multi-threaded Pippenger over G2.
pub fn blst_g2(points: &[G2Affine], scalars: &[Fr]) -> G2Projective {
    assert_eq!(points.len(), scalars.len(), "msm length mismatch");
    if points.is_empty() {
        return G2Projective::identity();
    }
    // SAFETY: `G2Affine` is `repr(transparent)` over `blst_p2_affine`.
    let raw = unsafe {
        std::slice::from_raw_parts(points.as_ptr() as *const blst_p2_affine, points.len())
    };
    let out = raw.mult(&scalar_bytes(scalars), 255);
    // SAFETY: `G2Projective` is `repr(transparent)` over `blst_p2`.
    unsafe { std::mem::transmute::<blst::blst_p2, G2Projective>(out) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{random_g1, random_scalars};
    use group::Curve;
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;

    /// Mixed 0/1 and general scalars take the split path; repeated points and ±scalars too.
    #[test]
    fn agrees_with_blst_on_awkward_inputs() {
        let n = 1 << 17;
        let mut p = random_g1(n, 1);
        let mut s = random_scalars(n, 2);
        for i in 0..1000 {
            p[2 * i + 1] = p[2 * i];
            s[2 * i + 1] = if i % 2 == 0 { s[2 * i] } else { -s[2 * i] };
            s[5000 + i] = Fr::from(i as u64);
            s[9000 + i] = -Fr::ONE;
        }
        assert_eq!(g1(&p, &s), blst_g1(&p, &s));
        let bits: Vec<Fr> = (0..n).map(|i| Fr::from((i % 3 == 0) as u64)).collect();
        assert_eq!(g1(&p, &bits), blst_g1(&p, &bits));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        #[test]
        fn matches_naive(len in 0usize..80, seed in any::<u64>(), bits in any::<bool>()) {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let p1: Vec<G1Affine> = (0..len).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
            let p2: Vec<G2Affine> = (0..len).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
            // With `bits`, two thirds of the scalars are 0 or 1: the split path.
            let s: Vec<Fr> = (0..len)
                .map(|i| match (bits, i % 3) {
                    (true, 0) => Fr::ZERO,
                    (true, 1) => Fr::ONE,
                    _ => Fr::random(&mut rng),
                })
                .collect();
            let n1 = p1.iter().zip(&s).fold(G1Projective::identity(), |acc, (p, s)| acc + *p * s);
            let n2 = p2.iter().zip(&s).fold(G2Projective::identity(), |acc, (p, s)| acc + *p * s);
            prop_assert_eq!(g1(&p1, &s), n1);
            prop_assert_eq!(g2(&p2, &s), n2);
            prop_assert_eq!(blst_g1(&p1, &s), n1);
            prop_assert_eq!(blst_g2(&p2, &s), n2);
        }
    }
}
