//! The native witness functions (`cuzk_gadgets::native`) against their gadgets: for random
//! operands, including random mixes of constant, allocated and negated bits, the native
//! function writes exactly the values the gadget allocates, in the same order.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use cuzk_gadgets::boolean::{AllocatedBit, Boolean};
use cuzk_gadgets::native::bits::Word;
use cuzk_gadgets::native::sha256::Message;
use cuzk_gadgets::native::{self, Count, Sink};
use cuzk_gadgets::num::AllocatedNum;
use cuzk_gadgets::por::{
    por, por_no_challenge_input, PathElement, Root, Sha256Hash, TreeHash, TreeShape,
};
use cuzk_gadgets::poseidon::{poseidon_hash, PoseidonConstants};
use cuzk_gadgets::sha256::{sha256, sha256_compression_function};
use cuzk_gadgets::uint32::UInt32;
use cuzk_pce::WitnessCs;
use ff::Field;
use proptest::prelude::*;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use sha2::Digest;

/// How a test bit enters the gadget: constant, allocated, or the negation of an allocated bit.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Const,
    Is,
    Not,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::Const), Just(Kind::Is), Just(Kind::Not)]
}

/// A word given bit by bit (least significant first): value and kind.
type TestWord = [(bool, Kind); 32];

fn test_word() -> impl Strategy<Value = TestWord> {
    prop::array::uniform32((any::<bool>(), kind()))
}

/// A word whose bits are all of one kind, or random kinds: the circuits see both.
fn mixed_words(n: usize) -> impl Strategy<Value = Vec<TestWord>> {
    let uniform =
        (any::<u32>(), kind()).prop_map(|(v, k)| std::array::from_fn(|i| (v >> i & 1 == 1, k)));
    prop::collection::vec(prop_oneof![uniform, test_word()], n)
}

fn alloc_word<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    word: &TestWord,
) -> Result<UInt32, SynthesisError> {
    let bits = word
        .iter()
        .enumerate()
        .map(|(i, &(v, k))| {
            Ok(match k {
                Kind::Const => Boolean::Constant(v),
                Kind::Is => Boolean::Is(AllocatedBit::alloc(
                    cs.namespace(|| format!("{i}")),
                    Some(v),
                )?),
                Kind::Not => Boolean::Not(AllocatedBit::alloc(
                    cs.namespace(|| format!("{i}")),
                    Some(!v),
                )?),
            })
        })
        .collect::<Result<Vec<_>, SynthesisError>>()?;
    UInt32::from_bits(&bits)
}

fn native_word(word: &TestWord) -> Word {
    let mut w = Word::constant(0);
    for (i, &(v, k)) in word.iter().enumerate() {
        w.value |= u32::from(v) << i;
        if !matches!(k, Kind::Const) {
            w.var |= 1 << i;
        }
        if matches!(k, Kind::Not) {
            w.neg |= 1 << i;
        }
    }
    w
}

/// Runs `circuit` under the witness generator; returns the aux values after the first `skip`
/// (the test's own operand allocations).
fn gadget_aux(circuit: impl Circuit<Fr>, skip: usize) -> Vec<Fr> {
    let (_, aux) = WitnessCs::assign(circuit).unwrap();
    aux[skip..].to_vec()
}

fn allocated(words: &[TestWord]) -> usize {
    words
        .iter()
        .flatten()
        .filter(|(_, k)| !matches!(k, Kind::Const))
        .count()
}

struct Compress {
    block: Vec<TestWord>,
    state: Vec<TestWord>,
}

impl Circuit<Fr> for &Compress {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut block = Vec::with_capacity(512);
        for w in &self.block {
            block.extend(alloc_word(cs, w)?.into_bits_be());
        }
        let state: Vec<UInt32> = self
            .state
            .iter()
            .map(|w| alloc_word(cs, w))
            .collect::<Result<_, _>>()?;
        let state: [UInt32; 8] = state.try_into().unwrap();
        sha256_compression_function(cs.namespace(|| "compress"), &block, &state)?;
        Ok(())
    }
}

/// A message of bytes that are wholly allocated or wholly constant.
struct Hash {
    bytes: Vec<(u8, bool)>,
}

impl Circuit<Fr> for &Hash {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut bits = Vec::new();
        for (j, &(b, allocated)) in self.bytes.iter().enumerate() {
            for i in (0..8).rev() {
                let v = b >> i & 1 == 1;
                bits.push(if allocated {
                    Boolean::Is(AllocatedBit::alloc(
                        cs.namespace(|| format!("{j} {i}")),
                        Some(v),
                    )?)
                } else {
                    Boolean::Constant(v)
                });
            }
        }
        sha256(cs.namespace(|| "sha256"), &bits)?;
        Ok(())
    }
}

struct Poseidon {
    preimage: Vec<Fr>,
}

impl Circuit<Fr> for &Poseidon {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let preimage = self
            .preimage
            .iter()
            .enumerate()
            .map(|(i, v)| AllocatedNum::alloc(cs.namespace(|| format!("{i}")), || Ok(*v)))
            .collect::<Result<Vec<_>, _>>()?;
        let constants = PoseidonConstants::new(preimage.len())?;
        poseidon_hash(cs.namespace(|| "poseidon"), &preimage, &constants)?;
        Ok(())
    }
}

struct Path<'a, H: ?Sized> {
    shape: TreeShape,
    leaf: Fr,
    root: Fr,
    path: Vec<PathElement<Fr>>,
    hasher: &'a H,
}

impl<H: TreeHash<Fr> + ?Sized> Circuit<Fr> for &Path<'_, H> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let leaf = AllocatedNum::alloc(cs.namespace(|| "leaf"), || Ok(self.leaf))?;
        let root = AllocatedNum::alloc(cs.namespace(|| "root"), || Ok(self.root))?;
        por(
            cs,
            self.shape,
            &Root::Var(leaf),
            &self.path,
            &Root::Var(root),
            true,
            self.hasher,
        )
    }
}

/// The same path, its bits and siblings allocated by the caller (SnapDeals' form).
struct NoChallenge<'a, H: ?Sized>(&'a Path<'a, H>);

impl<H: TreeHash<Fr> + ?Sized> NoChallenge<'_, H> {
    fn bits(&self) -> Vec<bool> {
        let arities = self.0.path.iter().map(|e| e.siblings.len() + 1);
        self.0
            .path
            .iter()
            .zip(arities)
            .flat_map(|(e, a)| (0..a.trailing_zeros()).map(move |i| e.index.unwrap() >> i & 1 == 1))
            .collect()
    }

    fn siblings(&self) -> Vec<Vec<Fr>> {
        let level = |e: &PathElement<Fr>| e.siblings.iter().map(|v| v.unwrap()).collect();
        self.0.path.iter().map(level).collect()
    }
}

impl<H: TreeHash<Fr> + ?Sized> Circuit<Fr> for &NoChallenge<'_, H> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let num = |cs: &mut CS, v: Fr| AllocatedNum::alloc(cs.namespace(|| "n"), || Ok(v));
        let leaf = num(cs, self.0.leaf)?;
        let root = num(cs, self.0.root)?;
        let bits = self
            .bits()
            .into_iter()
            .map(|b| AllocatedBit::alloc(cs.namespace(|| "b"), Some(b)))
            .collect::<Result<Vec<_>, _>>()?;
        let path = self
            .siblings()
            .into_iter()
            .map(|level| level.into_iter().map(|v| num(cs, v)).collect())
            .collect::<Result<Vec<_>, _>>()?;
        por_no_challenge_input(cs, self.0.shape, &bits, &leaf, &path, &root, self.0.hasher)
    }
}

fn random_path(shape: TreeShape, levels: usize, rng: &mut impl RngCore) -> Vec<PathElement<Fr>> {
    let upper: Vec<usize> = [shape.sub, shape.top]
        .into_iter()
        .filter(|&a| a > 0)
        .collect();
    let arities = std::iter::repeat(shape.base).take(levels).chain(upper);
    arities
        .map(|a| PathElement {
            siblings: (1..a).map(|_| Some(Fr::random(&mut *rng))).collect(),
            index: Some(rng.next_u32() as usize % a),
        })
        .collect()
}

fn check_path<H: TreeHash<Fr> + ?Sized>(path: &Path<'_, H>) -> Result<(), TestCaseError> {
    let want = gadget_aux(path, 2);
    let mut got = Vec::new();
    let mut inputs = Vec::new();
    native::por::por(
        &mut got,
        &mut inputs,
        path.shape,
        path.leaf,
        &path.path,
        path.hasher,
    )
    .unwrap();
    prop_assert_eq!(got, want);
    let (gadget_inputs, _) = WitnessCs::assign(path).unwrap();
    prop_assert_eq!(&gadget_inputs[1..], &inputs[..]);

    let no_challenge = NoChallenge(path);
    let (bits, siblings) = (no_challenge.bits(), no_challenge.siblings());
    let operands = 2 + bits.len() + siblings.iter().map(Vec::len).sum::<usize>();
    let want = gadget_aux(&no_challenge, operands);
    let mut got = Vec::new();
    native::por::por_no_challenge_input(
        &mut got,
        path.shape,
        &bits,
        path.leaf,
        &siblings,
        path.hasher,
    )
    .unwrap();
    prop_assert_eq!(got, want);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Compression of a block under a state, both with random constant, allocated and
    /// negated bits: every case of the bit gadgets' constant folding is reached.
    #[test]
    fn compression_matches_the_gadget(block in mixed_words(16), state in mixed_words(8)) {
        let c = Compress { block, state };
        let skip = allocated(&c.block) + allocated(&c.state);
        let want = gadget_aux(&c, skip);
        let block: [Word; 16] = std::array::from_fn(|i| native_word(&c.block[i]));
        let state: [Word; 8] = std::array::from_fn(|i| native_word(&c.state[i]));
        let mut got: Vec<Fr> = Vec::new();
        native::sha256::compress(&mut got, &block, &state);
        prop_assert_eq!(got.len(), want.len());
        prop_assert_eq!(got, want);
    }

    /// The padded hash from the initial value (constant state) of a message of allocated and
    /// constant bytes.
    #[test]
    fn hash_matches_the_gadget(bytes in prop::collection::vec((any::<u8>(), any::<bool>()), 0..200)) {
        let h = Hash { bytes };
        let skip = 8 * h.bytes.iter().filter(|(_, a)| *a).count();
        let want = gadget_aux(&h, skip);
        let mut message = Message::default();
        for &(b, allocated) in &h.bytes {
            message.push(b, if allocated { 0xFF } else { 0 });
        }
        let mut got: Vec<Fr> = Vec::new();
        let state = native::sha256::hash(&mut got, &message);
        prop_assert_eq!(got, want);
        let digest = native::sha256::digest_bytes(&state);
        let plain: Vec<u8> = h.bytes.iter().map(|(b, _)| *b).collect();
        prop_assert_eq!(digest.to_vec(), sha2::Sha256::digest(&plain).to_vec());
    }

    #[test]
    fn poseidon_matches_the_gadget(
        arity in prop::sample::select(vec![2usize, 4, 8, 11]),
        seed in any::<u64>(),
    ) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let p = Poseidon { preimage: (0..arity).map(|_| Fr::random(&mut rng)).collect() };
        let want = gadget_aux(&p, arity);
        let constants = PoseidonConstants::new(arity).unwrap();
        let mut got: Vec<Fr> = Vec::new();
        let hash = native::poseidon::hash(&mut got, &p.preimage, &constants).unwrap();
        prop_assert_eq!(&got, &want);
        prop_assert_eq!(hash, constants.hash(&p.preimage).unwrap());
    }

    /// Paths in Poseidon trees of every Filecoin shape and of arity 4, and in SHA-256 trees of
    /// arity 2 and 16 (the generic insertion network; Poseidon has no constants for 16).
    #[test]
    fn paths_match_the_gadget(
        shape in prop::sample::select(vec![(2, 0, 0), (4, 0, 0), (8, 0, 0), (8, 8, 0), (8, 8, 2), (16, 0, 0)]),
        levels in 1usize..4,
        seed in any::<u64>(),
    ) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let (base, sub, top) = shape;
        let shape = TreeShape { base, sub, top };
        let path = random_path(shape, levels, &mut rng);
        let (leaf, root) = (Fr::random(&mut rng), Fr::random(&mut rng));
        if base == 2 || base == 16 {
            check_path(&Path { shape, leaf, root, path, hasher: &Sha256Hash })?;
        } else {
            let hashers: Vec<PoseidonConstants<Fr>> = [base, sub, top]
                .into_iter()
                .filter(|&a| a > 0)
                .map(|a| PoseidonConstants::new(a).unwrap())
                .collect();
            check_path(&Path { shape, leaf, root, path, hasher: hashers.as_slice() })?;
        }
    }
}

#[test]
fn count_and_vec_agree() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let block: [Word; 16] = std::array::from_fn(|_| Word::allocated(rng.next_u32()));
    let mut count = Count(0);
    let mut values: Vec<Fr> = Vec::new();
    native::sha256::compress::<Fr>(&mut count, &block, &native::sha256::iv());
    native::sha256::compress(&mut values, &block, &native::sha256::iv());
    assert_eq!(count.0, values.len());
    let mut one = Count(0);
    Sink::<Fr>::bits(&mut one, 0, 0b1011);
    assert_eq!(one.0, 3);
}
