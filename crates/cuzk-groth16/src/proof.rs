//! The 192-byte proof encoding: compressed A (G1) ‖ B (G2) ‖ C (G1), as bellperson writes it.

use group::prime::PrimeCurveAffine;

use crate::{G1Affine, G2Affine, VerifyError};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub a: G1Affine,
    pub b: G2Affine,
    pub c: G1Affine,
}

impl Proof {
    pub const SIZE: usize = 192;

    pub fn to_bytes(&self) -> [u8; Self::SIZE] {
        let mut out = [0u8; Self::SIZE];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Decodes and subgroup-checks a proof; like bellperson, points at infinity are refused.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, VerifyError> {
        let bytes: &[u8; Self::SIZE] = bytes
            .try_into()
            .map_err(|_| VerifyError::MalformedProof("a proof is exactly 192 bytes"))?;
        let g1 = |b: &[u8], what| {
            let p: G1Affine =
                Option::from(G1Affine::from_compressed(b.try_into().expect("48 bytes")))
                    .ok_or(VerifyError::MalformedProof(what))?;
            if bool::from(p.is_identity()) {
                return Err(VerifyError::MalformedProof("point at infinity"));
            }
            Ok(p)
        };
        let a = g1(&bytes[..48], "A is not a valid G1 point")?;
        let b: G2Affine = Option::from(G2Affine::from_compressed(
            bytes[48..144].try_into().expect("96 bytes"),
        ))
        .ok_or(VerifyError::MalformedProof("B is not a valid G2 point"))?;
        if bool::from(b.is_identity()) {
            return Err(VerifyError::MalformedProof("point at infinity"));
        }
        let c = g1(&bytes[144..], "C is not a valid G1 point")?;
        Ok(Proof { a, b, c })
    }
}
