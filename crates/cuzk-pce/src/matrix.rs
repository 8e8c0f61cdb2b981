//! One constraint matrix in compact CSR form.
//!
//! Each non-zero is one `u32`: the column in the high 28 bits, a 4-bit tag in the low bits.
//! Tags 0..14 name the matrix's 15 most frequent coefficients (±1 and small powers of two in
//! Filecoin circuits); tag 15 takes the coefficient's dictionary index from `escapes`, which
//! holds one `u32` per escaped entry in entry order. `escape_marks` records how many escapes
//! precede every `CHUNK_ROWS`-th row so that row blocks can be evaluated independently.

use std::sync::Arc;

use cuzk_groth16::fr::zero_one_masks;
use cuzk_groth16::Fr;
use ff::Field;
use rayon::prelude::*;

/// Rows evaluated per parallel task, and the spacing of `escape_marks`.
pub const CHUNK_ROWS: usize = 1 << 12;
/// The tag that sends a lookup to `escapes`.
pub const ESCAPE: u32 = 15;
/// Columns must fit in the 28 bits above the tag.
pub const MAX_COLUMNS: usize = 1 << 28;

/// `u32` words, owned or borrowed from a mapped file.
#[derive(Clone)]
pub enum Words {
    Owned(Vec<u32>),
    Mapped {
        map: Arc<memmap2::Mmap>,
        /// Byte offset, a multiple of 4.
        offset: usize,
        len: usize,
    },
}

impl Words {
    pub fn as_slice(&self) -> &[u32] {
        match self {
            Words::Owned(v) => v,
            Words::Mapped { map, offset, len } => {
                let bytes = &map[*offset..*offset + len * 4];
                // SAFETY: the file loader checked the alignment (sections start on 64-byte
                // boundaries of a page-aligned map), the bounds, and the host's endianness.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const u32, *len) }
            }
        }
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Words({})", self.as_slice().len())
    }
}

impl PartialEq for Words {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for Words {}

/// A matrix's sections, borrowed: what an evaluator outside this crate (the GPU copy) uploads.
/// Their invariants hold for every `Matrix` (extracted, or loaded and checked).
#[derive(Clone, Copy, Debug)]
pub struct Parts<'a> {
    /// `rows + 1` offsets into `entries`.
    pub row_starts: &'a [u32],
    /// Per non-zero: column `<< 4` | tag.
    pub entries: &'a [u32],
    /// Dictionary index of each escaped entry, in entry order.
    pub escapes: &'a [u32],
    /// Escapes before every [`CHUNK_ROWS`]-th row, then the total.
    pub escape_marks: &'a [u32],
    pub dict: &'a [Fr],
}

/// How a coefficient can be applied without a full multiplication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    One,
    MinusOne,
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    pub(crate) row_starts: Words,
    pub(crate) entries: Words,
    pub(crate) escapes: Words,
    pub(crate) escape_marks: Words,
    pub(crate) dict: Vec<Fr>,
}

/// Which witness values are 0 or 1: most of a Filecoin witness is bits, and those need no
/// multiplication.
#[derive(Debug)]
pub(crate) struct Classes {
    zero: Vec<u64>,
    one: Vec<u64>,
    len: usize,
}

impl Classes {
    pub(crate) fn of(input: &[Fr], aux: &[Fr]) -> Self {
        let n = input.len() + aux.len();
        let ni = input.len();
        let (zero, one) = (0..n.div_ceil(64))
            .into_par_iter()
            .map(|w| {
                // Word w's values: the end of `input`, then the start of `aux` (only one word
                // straddles the two).
                let (lo, hi) = (w * 64, (w * 64 + 64).min(n));
                let head = &input[lo.min(ni)..hi.min(ni)];
                let tail = &aux[lo.max(ni) - ni..hi.max(ni) - ni];
                let (hz, ho) = zero_one_masks(head);
                let (tz, to) = zero_one_masks(tail);
                let shift = |m: u64| m.checked_shl(head.len() as u32).unwrap_or(0);
                (hz | shift(tz), ho | shift(to))
            })
            .unzip();
        Classes { zero, one, len: n }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn words(&self) -> usize {
        self.zero.len()
    }

    pub(crate) fn zero_words(&self) -> &[u64] {
        &self.zero
    }

    pub(crate) fn one_words(&self) -> &[u64] {
        &self.one
    }

    /// Bits of word `k` for the values that are neither 0 nor 1.
    pub(crate) fn others_mask(&self, k: usize) -> u64 {
        let valid = match self.len - 64 * k {
            n if n >= 64 => u64::MAX,
            n => (1 << n) - 1,
        };
        !(self.zero[k] | self.one[k]) & valid
    }

    #[inline]
    fn bit(words: &[u64], i: usize) -> bool {
        words[i / 64] >> (i % 64) & 1 == 1
    }
}

/// The dictionary index of entry `e`, consuming the next escape (cursor `esc`) if it has one.
#[inline]
fn coefficient(e: u32, escapes: &[u32], esc: &mut usize) -> usize {
    if e & 15 == ESCAPE {
        *esc += 1;
        escapes[*esc - 1] as usize
    } else {
        (e & 15) as usize
    }
}

impl Matrix {
    pub fn rows(&self) -> usize {
        self.row_starts.as_slice().len().saturating_sub(1)
    }

    pub fn parts(&self) -> Parts<'_> {
        Parts {
            row_starts: self.row_starts.as_slice(),
            entries: self.entries.as_slice(),
            escapes: self.escapes.as_slice(),
            escape_marks: self.escape_marks.as_slice(),
            dict: &self.dict,
        }
    }

    /// Number of non-zero entries.
    pub fn nnz(&self) -> usize {
        self.entries.as_slice().len()
    }

    /// Entries whose coefficient is not among the 15 tagged ones.
    pub fn escaped(&self) -> usize {
        self.escapes.as_slice().len()
    }

    pub fn heap_bytes(&self) -> usize {
        4 * (self.row_starts.as_slice().len()
            + self.entries.as_slice().len()
            + self.escapes.as_slice().len()
            + self.escape_marks.as_slice().len())
            + 32 * self.dict.len()
    }

    fn kinds(&self) -> Vec<Kind> {
        self.dict
            .iter()
            .map(|c| {
                if *c == Fr::ONE {
                    Kind::One
                } else if *c == -Fr::ONE {
                    Kind::MinusOne
                } else {
                    Kind::Other
                }
            })
            .collect()
    }

    /// `M · (input ‖ aux)`, one value per row, rows evaluated in parallel blocks.
    /// One value per row, in a vector (recycled where one is kept) with room for `extra` more:
    /// the caller appends rows.
    pub(crate) fn mul_vec(
        &self,
        input: &[Fr],
        aux: &[Fr],
        classes: &Classes,
        extra: usize,
    ) -> Vec<Fr> {
        let rs = self.row_starts.as_slice();
        let (entries, escapes, marks) = (
            self.entries.as_slice(),
            self.escapes.as_slice(),
            self.escape_marks.as_slice(),
        );
        let kinds = self.kinds();
        let dict = &self.dict;
        let ni = input.len();
        let mut out = cuzk_groth16::memory::take(self.rows() + extra);
        out.par_extend(rayon::iter::repeat_n(Fr::ZERO, self.rows()));
        out.par_chunks_mut(CHUNK_ROWS)
            .enumerate()
            .for_each(|(k, chunk)| {
                let mut esc = marks[k] as usize;
                let r0 = k * CHUNK_ROWS;
                for (i, o) in chunk.iter_mut().enumerate() {
                    let r = r0 + i;
                    let mut acc = Fr::ZERO;
                    for &e in &entries[rs[r] as usize..rs[r + 1] as usize] {
                        let idx = coefficient(e, escapes, &mut esc);
                        let col = (e >> 4) as usize;
                        if Classes::bit(&classes.zero, col) {
                            continue;
                        }
                        if Classes::bit(&classes.one, col) {
                            acc += dict[idx];
                            continue;
                        }
                        let v = if col < ni { input[col] } else { aux[col - ni] };
                        match kinds[idx] {
                            Kind::One => acc += v,
                            Kind::MinusOne => acc -= v,
                            Kind::Other => acc += v * dict[idx],
                        }
                    }
                    *o = acc;
                }
            });
        out
    }
}
