//! A partition's witness columns, `input ‖ aux`, as CPU workers hand them to a prover.
//!
//! PoRep's and SnapDeals' witnesses are 97-99 % zeros and ones (SHA-256 bits), so most of a
//! 32 GiB partition's 4.2 GB of columns says one bit per value. [`Columns::new`] keeps such a
//! witness packed: the 0s and 1s as two bitmaps, only the other values in full (about 100 MB
//! at 32 GiB). A GPU uploads that and expands it on the device, where the full columns cost
//! 140 ms of bus per partition. PoSt's Poseidon witness is 99 % full field elements and stays
//! as it is.

use std::borrow::Cow;

use cuzk_groth16::{memory, Fr};
use ff::Field;
use rayon::prelude::*;

use crate::matrix::Classes;

/// A witness packs when at most one value in this many is neither 0 nor 1.
const PACK_WHEN_ONE_IN: usize = 8;

/// `input ‖ aux` of one partition (`input[0]` is ONE).
#[derive(Debug)]
pub struct Columns {
    num_inputs: usize,
    num_aux: usize,
    /// Values the synthesis buffers held: what making the columns took from the budget.
    capacity: usize,
    values: Stored,
}

#[derive(Debug)]
enum Stored {
    Full { input: Vec<Fr>, aux: Vec<Fr> },
    Packed(Packed),
}

/// The packed form of `input ‖ aux`: value `i` is 0 where bit `i` of the zero bitmap is set, 1
/// where the one bitmap's is, and otherwise the next of `others`.
#[derive(Debug)]
pub struct Packed {
    classes: Classes,
    /// Per 64-value word, the index in `others` of its first other value.
    starts: Vec<u32>,
    others: Vec<Fr>,
}

/// How a prover reads [`Columns`].
#[derive(Clone, Copy, Debug)]
pub enum Values<'a> {
    Full { input: &'a [Fr], aux: &'a [Fr] },
    Packed(&'a Packed),
}

impl Columns {
    /// Packs `input ‖ aux` when at most one value in eight is neither 0 nor 1 (the full `aux`
    /// goes back to [`memory::recycle`] for the next synthesis), else keeps both as they are.
    pub fn new(input: Vec<Fr>, aux: Vec<Fr>) -> Self {
        let classes = Classes::of(&input, &aux);
        let (starts, others) = Packed::index(&classes);
        if others * PACK_WHEN_ONE_IN > input.len() + aux.len() {
            return Columns::full(input, aux);
        }
        let (num_inputs, num_aux) = (input.len(), aux.len());
        let capacity = input.capacity() + aux.capacity();
        let packed = Packed::new(classes, starts, others, &input, &aux);
        memory::recycle(aux);
        Columns {
            num_inputs,
            num_aux,
            capacity,
            values: Stored::Packed(packed),
        }
    }

    /// Keeps every value in full, whatever the witness (to compare both forms).
    pub fn full(input: Vec<Fr>, aux: Vec<Fr>) -> Self {
        Columns {
            num_inputs: input.len(),
            num_aux: aux.len(),
            capacity: input.capacity() + aux.capacity(),
            values: Stored::Full { input, aux },
        }
    }

    pub fn num_inputs(&self) -> usize {
        self.num_inputs
    }

    pub fn num_aux(&self) -> usize {
        self.num_aux
    }

    /// Values the synthesis buffers held (not what the columns hold now): the budget charges
    /// a partition what making it took.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn values(&self) -> Values<'_> {
        match &self.values {
            Stored::Full { input, aux } => Values::Full { input, aux },
            Stored::Packed(p) => Values::Packed(p),
        }
    }

    /// Value `i` of `input ‖ aux`.
    pub fn get(&self, i: usize) -> Fr {
        match &self.values {
            Stored::Full { input, aux } => match i.checked_sub(input.len()) {
                None => input[i],
                Some(j) => aux[j],
            },
            Stored::Packed(p) => p.get(i),
        }
    }

    /// The aux values in full: borrowed, or expanded from the packed form.
    pub fn aux(&self) -> Cow<'_, [Fr]> {
        match &self.values {
            Stored::Full { aux, .. } => Cow::Borrowed(aux),
            Stored::Packed(p) => {
                Cow::Owned(p.expand(self.num_inputs..self.num_inputs + self.num_aux))
            }
        }
    }

    /// `input` and `aux` in full.
    pub fn to_vecs(&self) -> (Vec<Fr>, Vec<Fr>) {
        match &self.values {
            Stored::Full { input, aux } => (input.clone(), aux.clone()),
            Stored::Packed(p) => (p.expand(0..self.num_inputs), self.aux().into_owned()),
        }
    }

    /// Hands the large vectors to [`memory::recycle`].
    pub fn recycle(self) {
        if let Stored::Full { aux, .. } = self.values {
            memory::recycle(aux);
        }
    }
}

impl Packed {
    /// Per word, the index of its first other value; and how many others there are.
    fn index(classes: &Classes) -> (Vec<u32>, usize) {
        let mut starts = Vec::with_capacity(classes.words());
        let mut total = 0usize;
        for k in 0..classes.words() {
            starts.push(u32::try_from(total).expect("at most 2^32 columns"));
            total += classes.others_mask(k).count_ones() as usize;
        }
        (starts, total)
    }

    fn new(classes: Classes, starts: Vec<u32>, total: usize, input: &[Fr], aux: &[Fr]) -> Self {
        let value = |i: usize| match i.checked_sub(input.len()) {
            None => &input[i],
            Some(j) => &aux[j],
        };
        // Blocks of words in parallel, each into its share of `others`.
        const BLOCK: usize = 1 << 12;
        let bounds: Vec<usize> = (starts.iter().step_by(BLOCK).map(|&s| s as usize))
            .chain([total])
            .collect();
        let mut others = vec![Fr::ZERO; total];
        let mut rest = &mut others[..];
        let mut slots = Vec::with_capacity(bounds.len());
        for w in bounds.windows(2) {
            let (head, tail) = rest.split_at_mut(w[1] - w[0]);
            slots.push(head);
            rest = tail;
        }
        slots.into_par_iter().enumerate().for_each(|(b, dst)| {
            let mut k = 0;
            for w in b * BLOCK..((b + 1) * BLOCK).min(classes.words()) {
                let mut bits = classes.others_mask(w);
                while bits != 0 {
                    dst[k] = *value(w * 64 + bits.trailing_zeros() as usize);
                    k += 1;
                    bits &= bits - 1;
                }
            }
        });
        Packed {
            classes,
            starts,
            others,
        }
    }

    /// Number of values, `input ‖ aux`.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bit `i % 64` of word `i / 64` is set where value `i` is 0.
    pub fn zero_words(&self) -> &[u64] {
        self.classes.zero_words()
    }

    /// Bit `i % 64` of word `i / 64` is set where value `i` is 1.
    pub fn one_words(&self) -> &[u64] {
        self.classes.one_words()
    }

    /// Per word of the bitmaps, the index in [`Packed::others`] of its first other value.
    pub fn starts(&self) -> &[u32] {
        &self.starts
    }

    /// The values that are neither 0 nor 1, in order.
    pub fn others(&self) -> &[Fr] {
        &self.others
    }

    /// Value `i`; panics past the end, as a slice does.
    pub fn get(&self, i: usize) -> Fr {
        assert!(i < self.len(), "value {i} of {}", self.len());
        let (k, b) = (i / 64, i % 64);
        if self.classes.zero_words()[k] >> b & 1 == 1 {
            Fr::ZERO
        } else if self.classes.one_words()[k] >> b & 1 == 1 {
            Fr::ONE
        } else {
            let before = self.classes.others_mask(k) & ((1u64 << b) - 1);
            self.others[self.starts[k] as usize + before.count_ones() as usize]
        }
    }

    fn expand(&self, range: std::ops::Range<usize>) -> Vec<Fr> {
        range.into_par_iter().map(|i| self.get(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values drawn from 0, 1 and `x + 2` (never 0 or 1), by `kinds` (0, 1, else other).
    fn values(kinds: &[(u8, u64)]) -> Vec<Fr> {
        kinds
            .iter()
            .map(|&(k, x)| match k % 3 {
                0 => Fr::ZERO,
                1 => Fr::ONE,
                _ => Fr::from(x % (u64::MAX - 2) + 2),
            })
            .collect()
    }

    fn check(input: Vec<Fr>, aux: Vec<Fr>, packs: bool) -> Result<(), TestCaseError> {
        let c = Columns::new(input.clone(), aux.clone());
        prop_assert_eq!(matches!(c.values(), Values::Packed(_)), packs);
        prop_assert_eq!((c.num_inputs(), c.num_aux()), (input.len(), aux.len()));
        let all: Vec<Fr> = input.iter().chain(&aux).copied().collect();
        for (i, v) in all.iter().enumerate() {
            prop_assert_eq!(c.get(i), *v);
        }
        prop_assert_eq!(&*c.aux(), &aux[..]);
        prop_assert_eq!(c.to_vecs(), (input, aux));
        Ok(())
    }

    proptest! {
        /// Mostly bits packs, and every way of reading the columns gives the values back.
        #[test]
        fn packed_columns_read_back(
            input in proptest::collection::vec((0u8..2, any::<u64>()), 1..4),
            aux in proptest::collection::vec((0u8..2, any::<u64>()), 0..400),
            others in proptest::collection::vec((any::<usize>(), any::<u64>()), 0..40),
        ) {
            let (input, mut aux) = (values(&input), values(&aux));
            let n = input.len() + aux.len();
            for &(at, x) in others.iter().take(n / PACK_WHEN_ONE_IN) {
                if !aux.is_empty() {
                    let at = at % aux.len();
                    aux[at] = values(&[(2, x)])[0];
                }
            }
            check(input, aux, true)?;
        }

        /// Past one value in eight that is neither 0 nor 1, the columns stay in full.
        #[test]
        fn dense_columns_stay_full(kinds in proptest::collection::vec((0u8..3, any::<u64>()), 40..400)) {
            let (input, aux) = (values(&kinds[..3]), values(&kinds[3..]));
            let others = kinds.iter().filter(|(k, _)| k % 3 == 2).count();
            check(input, aux, others * PACK_WHEN_ONE_IN <= kinds.len())?;
        }
    }

    /// A word whose values are all other, one with none, and a partial last word.
    #[test]
    fn word_boundaries() {
        let mut aux = vec![Fr::ONE; 64 * 20 + 5];
        for (i, v) in aux.iter_mut().enumerate().take(64 * 2).skip(64) {
            *v = Fr::from(i as u64 + 7);
        }
        let last = aux.len() - 1;
        aux[last] = Fr::from(3u64);
        check(vec![Fr::ONE], aux, true).unwrap();
    }
}
