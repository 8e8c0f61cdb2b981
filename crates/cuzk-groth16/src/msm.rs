//! Multi-scalar multiplication on the CPU through blst's multi-threaded Pippenger.

use blst::{blst_p1_affine, blst_p2_affine, MultiPoint};
use group::Group;
use rayon::prelude::*;

use crate::{Fr, G1Affine, G1Projective, G2Affine, G2Projective};

/// Little-endian 32-byte encodings of the scalars, the input blst expects.
fn scalar_bytes(scalars: &[Fr]) -> Vec<u8> {
    let mut out = vec![0u8; scalars.len() * 32];
    out.par_chunks_mut(32)
        .zip(scalars.par_iter())
        .for_each(|(o, s)| o.copy_from_slice(&s.to_bytes_le()));
    out
}

/// `Σ scalars[i] · points[i]` over G1. The slices must have equal length.
pub fn g1(points: &[G1Affine], scalars: &[Fr]) -> G1Projective {
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

/// `Σ scalars[i] · points[i]` over G2. The slices must have equal length.
pub fn g2(points: &[G2Affine], scalars: &[Fr]) -> G2Projective {
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
    use ff::Field;
    use group::Curve;
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        #[test]
        fn matches_naive(len in 0usize..80, seed in any::<u64>(), zeros in any::<bool>()) {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let p1: Vec<G1Affine> = (0..len).map(|_| G1Projective::random(&mut rng).to_affine()).collect();
            let p2: Vec<G2Affine> = (0..len).map(|_| G2Projective::random(&mut rng).to_affine()).collect();
            let s: Vec<Fr> = (0..len).map(|i| if zeros && i % 3 == 0 { Fr::ZERO } else { Fr::random(&mut rng) }).collect();
            let n1 = p1.iter().zip(&s).fold(G1Projective::identity(), |acc, (p, s)| acc + *p * s);
            let n2 = p2.iter().zip(&s).fold(G2Projective::identity(), |acc, (p, s)| acc + *p * s);
            prop_assert_eq!(g1(&p1, &s), n1);
            prop_assert_eq!(g2(&p2, &s), n2);
        }
    }
}
