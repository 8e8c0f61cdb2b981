//! Field elements as bits: `AllocatedNum::to_bits_le` and `multipack`'s packing.

use ff::{PrimeField, PrimeFieldBits};

use super::Sink;

/// The little-endian bytes of `value`'s `NUM_BITS` bits, zero-padded to whole bytes.
pub fn le_bytes<F: PrimeFieldBits>(value: F) -> Vec<u8> {
    let mut out = vec![0u8; (F::NUM_BITS as usize).div_ceil(8)];
    for (i, bit) in value
        .to_le_bits()
        .iter()
        .take(F::NUM_BITS as usize)
        .enumerate()
    {
        out[i / 8] |= u8::from(*bit) << (i % 8);
    }
    out
}

/// `AllocatedNum::to_bits_le`: allocates the `NUM_BITS` bits of `value`; returns its
/// little-endian bytes (the bits past `NUM_BITS` are zero).
pub fn to_bits_le<F: PrimeFieldBits>(s: &mut impl Sink<F>, value: F) -> Vec<u8> {
    let bytes = le_bytes(value);
    let n = F::NUM_BITS as usize;
    for (i, chunk) in bytes.chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        let bits = (n - 64 * i).min(64);
        s.bits(u64::from_le_bytes(word), u64::MAX >> (64 - bits));
    }
    bytes
}

/// The value `multipack::pack_bits` allocates for the first `CAPACITY` bits of a little-endian
/// byte string.
pub fn pack_le<F: PrimeField>(bytes: &[u8]) -> F {
    let mut acc = F::ZERO;
    let mut coeff = F::ONE;
    let bits = bytes
        .iter()
        .flat_map(|b| (0..8).map(move |i| b >> i & 1 == 1))
        .take(F::CAPACITY as usize);
    for bit in bits {
        if bit {
            acc += coeff;
        }
        coeff = coeff.double();
    }
    acc
}
