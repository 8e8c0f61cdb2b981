//! SHA-256: the compression function and the padded-message hash Filecoin uses for labels and
//! comm_d trees.
//!
//! Additions are deferred as upstream does: `a` and `e` stay lists of pending operands until the
//! next round needs their bits, so each round costs one multi-operand addition per word and the
//! additions' equalities are batched by a [`MultiEq`].

use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::PrimeField;

use crate::boolean::Boolean;
use crate::multieq::MultiEq;
use crate::uint32::UInt32;

#[rustfmt::skip]
pub(crate) const ROUND_CONSTANTS: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

pub(crate) const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The initial hash value as constant words.
pub fn sha256_iv() -> [UInt32; 8] {
    IV.map(UInt32::constant)
}

fn digest_bits(state: [UInt32; 8]) -> Vec<Boolean> {
    state.into_iter().flat_map(UInt32::into_bits_be).collect()
}

/// SHA-256 of a message of whole bytes (bits most significant first within each byte), padded
/// as the standard says. Returns the 256 digest bits, most significant first.
pub fn sha256<Scalar, CS>(mut cs: CS, input: &[Boolean]) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    if input.len() % 8 != 0 {
        return Err(SynthesisError::IncompatibleLengthVector(format!(
            "sha256: message of {} bits is not whole bytes",
            input.len()
        )));
    }
    let bit_len = input.len() as u64;
    let mut padded = input.to_vec();
    padded.push(Boolean::Constant(true));
    while (padded.len() + 64) % 512 != 0 {
        padded.push(Boolean::Constant(false));
    }
    padded.extend(
        (0..64)
            .rev()
            .map(|i| Boolean::Constant((bit_len >> i) & 1 == 1)),
    );

    let mut state = sha256_iv();
    for (i, block) in padded.chunks(512).enumerate() {
        state = sha256_compression_function(cs.namespace(|| format!("block {i}")), block, &state)?;
    }
    Ok(digest_bits(state))
}

/// One compression of a 512-bit block from the initial hash value, without padding.
pub fn sha256_block_no_padding<Scalar, CS>(
    mut cs: CS,
    input: &[Boolean],
) -> Result<Vec<Boolean>, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    Ok(digest_bits(sha256_compression_function(
        &mut cs,
        input,
        &sha256_iv(),
    )?))
}

/// A word that is either ready or still a list of operands waiting to be summed.
struct Pending(Vec<UInt32>);

impl Pending {
    fn ready(word: UInt32) -> Self {
        Pending(vec![word])
    }

    /// The word plus `others`: a ready word with nothing to add is returned as is.
    fn sum<Scalar, CS, M>(mut self, cs: M, others: &[UInt32]) -> Result<UInt32, SynthesisError>
    where
        Scalar: PrimeField,
        CS: ConstraintSystem<Scalar>,
        M: ConstraintSystem<Scalar, Root = MultiEq<Scalar, CS>>,
    {
        if let ([word], []) = (self.0.as_slice(), others) {
            return Ok(*word);
        }
        self.0.extend_from_slice(others);
        UInt32::addmany(cs, &self.0)
    }
}

/// `x.rotr(r0) ^ x.rotr(r1) ^ (x.rotr(r2) or x.shr(r2))`, the shape of every SHA-256 sigma.
fn sigma<Scalar, CS>(
    mut cs: CS,
    names: [&'static str; 2],
    x: &UInt32,
    [r0, r1]: [usize; 2],
    last: UInt32,
) -> Result<UInt32, SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    x.rotr(r0)
        .xor(cs.namespace(|| names[0]), &x.rotr(r1))?
        .xor(cs.namespace(|| names[1]), &last)
}

/// The SHA-256 compression function: `current` updated by one 512-bit block (most significant
/// bit first).
pub fn sha256_compression_function<Scalar, CS>(
    cs: CS,
    input: &[Boolean],
    current: &[UInt32; 8],
) -> Result<[UInt32; 8], SynthesisError>
where
    Scalar: PrimeField,
    CS: ConstraintSystem<Scalar>,
{
    if input.len() != 512 {
        return Err(SynthesisError::IncompatibleLengthVector(format!(
            "sha256 block: expected 512 bits, got {}",
            input.len()
        )));
    }
    let mut w = Vec::with_capacity(64);
    for chunk in input.chunks(32) {
        w.push(UInt32::from_bits_be(chunk)?);
    }

    let mut cs = MultiEq::new(cs);

    for i in 16..64 {
        let cs = &mut cs.namespace(|| format!("w extension {i}"));
        let (w15, w2) = (w[i - 15], w[i - 2]);
        let s0 = sigma(
            &mut *cs,
            ["first xor for s0", "second xor for s0"],
            &w15,
            [7, 18],
            w15.shr(3),
        )?;
        let s1 = sigma(
            &mut *cs,
            ["first xor for s1", "second xor for s1"],
            &w2,
            [17, 19],
            w2.shr(10),
        )?;
        let wi = UInt32::addmany(
            cs.namespace(|| "computation of w[i]"),
            &[w[i - 16], s0, w[i - 7], s1],
        )?;
        w.push(wi);
    }

    let mut a = Pending::ready(current[0]);
    let [_, mut b, mut c, mut d, _, mut f, mut g, mut h] = *current;
    let mut e = Pending::ready(current[4]);

    for (i, (&k, &wi)) in ROUND_CONSTANTS.iter().zip(&w).enumerate() {
        let cs = &mut cs.namespace(|| format!("compression round {i}"));

        let new_e = e.sum(cs.namespace(|| "deferred e computation"), &[])?;
        let s1 = sigma(
            &mut *cs,
            ["first xor for s1", "second xor for s1"],
            &new_e,
            [6, 11],
            new_e.rotr(25),
        )?;
        let ch = UInt32::sha256_ch(cs.namespace(|| "ch"), &new_e, &f, &g)?;
        let temp1 = [h, s1, ch, UInt32::constant(k), wi];

        let new_a = a.sum(cs.namespace(|| "deferred a computation"), &[])?;
        let s0 = sigma(
            &mut *cs,
            ["first xor for s0", "second xor for s0"],
            &new_a,
            [2, 13],
            new_a.rotr(22),
        )?;
        let maj = UInt32::sha256_maj(cs.namespace(|| "maj"), &new_a, &b, &c)?;

        h = g;
        g = f;
        f = new_e;
        e = Pending([temp1.as_slice(), &[d]].concat());
        d = c;
        c = b;
        b = new_a;
        a = Pending([temp1.as_slice(), &[s0, maj]].concat());
    }

    Ok([
        a.sum(cs.namespace(|| "deferred h0 computation"), &[current[0]])?,
        UInt32::addmany(cs.namespace(|| "new h1"), &[current[1], b])?,
        UInt32::addmany(cs.namespace(|| "new h2"), &[current[2], c])?,
        UInt32::addmany(cs.namespace(|| "new h3"), &[current[3], d])?,
        e.sum(cs.namespace(|| "deferred h4 computation"), &[current[4]])?,
        UInt32::addmany(cs.namespace(|| "new h5"), &[current[5], f])?,
        UInt32::addmany(cs.namespace(|| "new h6"), &[current[6], g])?,
        UInt32::addmany(cs.namespace(|| "new h7"), &[current[7], h])?,
    ])
}
