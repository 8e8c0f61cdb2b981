//! Which variables appear in a matrix with a non-zero coefficient.
//!
//! bellperson drops the query points of variables that never appear in A (aux only) or B, so
//! the prover must select scalars with the same bitmap the setup used to write the points.

use rayon::prelude::*;

/// A fixed-length bitmap with a cached population count.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl Density {
    /// A bitmap of `len` unset bits.
    pub fn new(len: usize) -> Self {
        Density {
            words: vec![0; len.div_ceil(64)],
            len,
            ones: 0,
        }
    }

    /// Rebuilds a bitmap from its words (as stored on disk); `None` if they do not fit `len`
    /// bits or have bits set past `len`.
    pub fn from_words(words: Vec<u64>, len: usize) -> Option<Self> {
        if words.len() != len.div_ceil(64) {
            return None;
        }
        if len % 64 != 0 && words.last().is_some_and(|w| w >> (len % 64) != 0) {
            return None;
        }
        let ones = words.iter().map(|w| w.count_ones() as usize).sum();
        Some(Density { words, len, ones })
    }

    /// The bitmap's 64-bit words, bit `i` at `words[i / 64] >> (i % 64)`.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Appends one unset bit.
    pub fn push(&mut self) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        self.len += 1;
    }

    /// Sets bit `i` (idempotent). Panics if `i` is out of range: callers index variables they
    /// allocated themselves.
    pub fn set(&mut self, i: usize) {
        assert!(i < self.len, "density index {i} out of range {}", self.len);
        let (w, b) = (i / 64, i % 64);
        if self.words[w] & (1 << b) == 0 {
            self.words[w] |= 1 << b;
            self.ones += 1;
        }
    }

    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of set bits: the number of query points the parameters hold for this column set.
    pub fn count(&self) -> usize {
        self.ones
    }

    /// Indices of the set bits, ascending.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut bits = word;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * 64 + b)
            })
        })
    }

    /// The values at set positions, in order. Blocks of words are gathered in parallel, each
    /// straight into its place in the output: a 32 GiB partition gathers 130 M aux values
    /// for its A query per proof.
    pub fn select<T: Copy + Send + Sync>(&self, values: &[T]) -> Vec<T> {
        let mut out = Vec::new();
        self.select_into(values, &mut out);
        out
    }

    /// [`Density::select`], appending to `out`.
    pub fn select_into<T: Copy + Send + Sync>(&self, values: &[T], out: &mut Vec<T>) {
        assert!(values.len() >= self.len, "fewer values than density bits");
        self.select_with(|i| values[i], out);
    }

    /// [`Density::select_into`] from values that are computed, not stored (packed witness
    /// columns): `value(i)` for each set bit `i`.
    pub fn select_with<T: Send>(&self, value: impl Fn(usize) -> T + Sync, out: &mut Vec<T>) {
        /// Words per task: 262,144 bits.
        const BLOCK: usize = 1 << 12;
        out.reserve(self.ones);
        let start = out.len();
        let counts: Vec<usize> = self
            .words
            .par_chunks(BLOCK)
            .map(|c| c.iter().map(|w| w.count_ones() as usize).sum())
            .collect();
        let mut rest = &mut out.spare_capacity_mut()[..self.ones];
        let mut slots = Vec::with_capacity(counts.len());
        for &n in &counts {
            let (head, tail) = rest.split_at_mut(n);
            slots.push(head);
            rest = tail;
        }
        self.words
            .par_chunks(BLOCK)
            .zip(slots)
            .enumerate()
            .for_each(|(block, (words, dst))| {
                let mut k = 0;
                for (j, &word) in words.iter().enumerate() {
                    let base = (block * BLOCK + j) * 64;
                    let mut bits = word;
                    while bits != 0 {
                        dst[k].write(value(base + bits.trailing_zeros() as usize));
                        k += 1;
                        bits &= bits - 1;
                    }
                }
            });
        // SAFETY: the blocks' slots partition the `ones` slots after `start` (their sizes are
        // the blocks' popcounts, which sum to `ones`), and each block wrote every slot of its own.
        unsafe { out.set_len(start + self.ones) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn set_bits_are_reported(len in 0usize..300, picks in proptest::collection::vec(any::<usize>(), 0..50)) {
            let mut d = Density::new(len);
            let mut want = std::collections::BTreeSet::new();
            if len > 0 {
                for p in picks { d.set(p % len); want.insert(p % len); }
            }
            prop_assert_eq!(d.count(), want.len());
            prop_assert_eq!(d.iter_ones().collect::<Vec<_>>(), want.into_iter().collect::<Vec<_>>());
        }
    }

    proptest! {
        #[test]
        fn select_gathers_the_set_positions_in_order(
            bits in proptest::collection::vec(any::<bool>(), 0..600_000),
        ) {
            let mut d = Density::new(bits.len());
            for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
                d.set(i);
            }
            let values: Vec<u32> = (0..bits.len() as u32).collect();
            let want: Vec<u32> = d.iter_ones().map(|i| values[i]).collect();
            prop_assert_eq!(d.select(&values), want.clone());
            let mut appended = vec![7, 8];
            d.select_into(&values, &mut appended);
            prop_assert_eq!(&appended[..2], &[7, 8]);
            prop_assert_eq!(&appended[2..], &want[..]);
        }
    }

    #[test]
    fn words_round_trip() {
        let mut d = Density::new(70);
        d.set(3);
        d.set(69);
        assert_eq!(Density::from_words(d.words().to_vec(), 70), Some(d.clone()));
        assert_eq!(Density::from_words(d.words().to_vec(), 69), None);
        assert_eq!(Density::from_words(vec![0], 70), None);
    }

    #[test]
    fn push_grows() {
        let mut d = Density::default();
        for _ in 0..130 {
            d.push();
        }
        d.set(129);
        assert!(d.get(129) && !d.get(128));
        assert_eq!(d.count(), 1);
    }
}
