//! SHA-256 as `crate::sha256` allocates it: the compression function over [`Word`]s and the
//! padded hash of a [`Message`] whose bits are each allocated or constant.

use ff::PrimeField;

use super::bits::Word;
use super::Sink;
use crate::sha256::{IV, ROUND_CONSTANTS};

/// A message of whole bytes (bits most significant first within each byte), with a mask of
/// which bits are allocated; the rest are constants.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    bytes: Vec<u8>,
    var: Vec<u8>,
}

impl Message {
    pub fn with_capacity(bytes: usize) -> Self {
        Message {
            bytes: Vec::with_capacity(bytes),
            var: Vec::with_capacity(bytes),
        }
    }

    /// Appends a byte whose bits set in `var` are allocated.
    pub fn push(&mut self, byte: u8, var: u8) {
        self.bytes.push(byte);
        self.var.push(var);
    }

    /// Appends constant bytes.
    pub fn constant(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.var.resize(self.bytes.len(), 0);
    }

    /// Appends allocated bytes.
    pub fn allocated(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.var.resize(self.bytes.len(), u8::MAX);
    }

    /// Pads with constant zero bytes to a multiple of `n` bytes.
    pub fn zero_pad(&mut self, n: usize) {
        let len = self.bytes.len().next_multiple_of(n);
        self.bytes.resize(len, 0);
        self.var.resize(len, 0);
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The message bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// The initial hash value as constant words.
pub fn iv() -> [Word; 8] {
    IV.map(Word::constant)
}

/// The digest of a final state: its words big-endian, as `sha256` returns its bits.
pub fn digest_bytes(state: &[Word; 8]) -> [u8; 32] {
    let mut out = [0; 32];
    for (chunk, w) in out.chunks_exact_mut(4).zip(state) {
        chunk.copy_from_slice(&w.value.to_be_bytes());
    }
    out
}

/// `crate::sha256::sha256`: the message padded as the standard says, compressed from the
/// initial hash value.
pub fn hash<F: PrimeField>(s: &mut impl Sink<F>, message: &Message) -> [Word; 8] {
    let bit_len = (message.len() as u64) * 8;
    let mut padded = message.clone();
    padded.constant(&[0x80]);
    while padded.len() % 64 != 56 {
        padded.constant(&[0]);
    }
    padded.constant(&bit_len.to_be_bytes());
    let mut state = iv();
    for (bytes, var) in padded
        .bytes
        .chunks_exact(64)
        .zip(padded.var.chunks_exact(64))
    {
        let block = std::array::from_fn(|i| {
            let at = 4 * i..4 * i + 4;
            let word = |b: &[u8]| b[at.clone()].try_into().expect("four bytes");
            Word::from_be_bytes(word(bytes), word(var))
        });
        state = compress(s, &block, &state);
    }
    state
}

/// A word still to be summed: its operands.
struct Pending {
    ops: [Word; 8],
    n: usize,
}

impl Pending {
    fn ready(w: Word) -> Self {
        let mut ops = [Word::constant(0); 8];
        ops[0] = w;
        Pending { ops, n: 1 }
    }

    fn of(parts: &[Word]) -> Self {
        let mut p = Pending::ready(parts[0]);
        p.ops[..parts.len()].copy_from_slice(parts);
        p.n = parts.len();
        p
    }

    /// The sum with `other` added, if any: a lone ready word is returned as is.
    fn sum<F: PrimeField>(mut self, s: &mut impl Sink<F>, other: Option<Word>) -> Word {
        match other {
            None if self.n == 1 => return self.ops[0],
            None => {}
            Some(w) => {
                self.ops[self.n] = w;
                self.n += 1;
            }
        }
        Word::addmany(s, &self.ops[..self.n])
    }
}

/// `x.rotr(r0) ^ x.rotr(r1) ^ last`.
fn sigma<F: PrimeField>(s: &mut impl Sink<F>, x: Word, [r0, r1]: [u32; 2], last: Word) -> Word {
    let t = Word::xor(s, x.rotr(r0), x.rotr(r1));
    Word::xor(s, t, last)
}

/// `crate::sha256::sha256_compression_function`.
pub fn compress<F: PrimeField>(
    s: &mut impl Sink<F>,
    block: &[Word; 16],
    current: &[Word; 8],
) -> [Word; 8] {
    let mut w = [Word::constant(0); 64];
    w[..16].copy_from_slice(block);
    for i in 16..64 {
        let (w15, w2) = (w[i - 15], w[i - 2]);
        let s0 = sigma(s, w15, [7, 18], w15 >> 3);
        let s1 = sigma(s, w2, [17, 19], w2 >> 10);
        w[i] = Word::addmany(s, &[w[i - 16], s0, w[i - 7], s1]);
    }

    let mut a = Pending::ready(current[0]);
    let [_, mut b, mut c, mut d, _, mut f, mut g, mut h] = *current;
    let mut e = Pending::ready(current[4]);
    for (&k, &wi) in ROUND_CONSTANTS.iter().zip(&w) {
        let new_e = e.sum(s, None);
        let s1 = sigma(s, new_e, [6, 11], new_e.rotr(25));
        let ch = Word::ch(s, new_e, f, g);
        let temp1 = [h, s1, ch, Word::constant(k), wi];
        let new_a = a.sum(s, None);
        let s0 = sigma(s, new_a, [2, 13], new_a.rotr(22));
        let maj = Word::maj(s, new_a, b, c);

        h = g;
        g = f;
        f = new_e;
        e = Pending::of(&[temp1[0], temp1[1], temp1[2], temp1[3], temp1[4], d]);
        d = c;
        c = b;
        b = new_a;
        a = Pending::of(&[temp1[0], temp1[1], temp1[2], temp1[3], temp1[4], s0, maj]);
    }

    [
        a.sum(s, Some(current[0])),
        Word::addmany(s, &[current[1], b]),
        Word::addmany(s, &[current[2], c]),
        Word::addmany(s, &[current[3], d]),
        e.sum(s, Some(current[4])),
        Word::addmany(s, &[current[5], f]),
        Word::addmany(s, &[current[6], g]),
        Word::addmany(s, &[current[7], h]),
    ]
}
