//! Merkle inclusion proofs (proofs of retrievability): a leaf, its path of siblings and index
//! bits, and the root, for SHA-256 binary trees and Poseidon trees of base/sub/top arities
//! (8-0-0, 8-8-0, 8-8-2). Row-identical to storage-proofs-core's `PoRCircuit` with
//! filecoin-hashers' node hashes.

use bellpepper_core::{ConstraintSystem, SynthesisError};
use ff::{PrimeField, PrimeFieldBits};

use crate::boolean::{AllocatedBit, Boolean};
use crate::constraint;
use crate::insertion::insert;
use crate::multipack::{pack_bits, pack_into_inputs};
use crate::native::{self, sha256::Message, Sink};
use crate::num::AllocatedNum;
use crate::poseidon::{poseidon_hash, PoseidonConstants};
use crate::sha256::sha256;

fn shape_error(what: String) -> SynthesisError {
    SynthesisError::IncompatibleLengthVector(what)
}

/// A Merkle tree's node hash in a circuit: the parent of `leaves` (one node's children).
pub trait TreeHash<F: PrimeField> {
    /// Hashes one node's children.
    fn hash_leaves<CS: ConstraintSystem<F>>(
        &self,
        cs: CS,
        leaves: &[AllocatedNum<F>],
    ) -> Result<AllocatedNum<F>, SynthesisError>;

    /// The parent's value, with the witness [`TreeHash::hash_leaves`] allocates written to `s`.
    fn native<S: Sink<F>>(&self, s: &mut S, leaves: &[F]) -> Result<F, SynthesisError>;
}

/// Filecoin's SHA-256 node hash: the children's canonical little-endian bytes, hashed, the
/// digest read back little-endian and truncated to the field's capacity.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sha256Hash;

impl<F: PrimeFieldBits> TreeHash<F> for Sha256Hash {
    fn hash_leaves<CS: ConstraintSystem<F>>(
        &self,
        mut cs: CS,
        leaves: &[AllocatedNum<F>],
    ) -> Result<AllocatedNum<F>, SynthesisError> {
        let mut preimage = Vec::with_capacity(leaves.len() * 256);
        for (i, leaf) in leaves.iter().enumerate() {
            let mut bits = leaf.to_bits_le(cs.namespace(|| format!("{i}_num_into_bits")))?;
            bits.resize(bits.len().next_multiple_of(8), Boolean::Constant(false));
            // Bytes in order, each byte's bits most significant first.
            preimage.extend(bits.chunks_exact(8).flat_map(|byte| byte.iter().rev()));
        }
        let digest = sha256(cs.namespace(|| "hash"), &preimage)?;
        let le: Vec<Boolean> = digest
            .chunks(8)
            .flat_map(|byte| byte.iter().rev())
            .take(F::CAPACITY as usize)
            .copied()
            .collect();
        pack_bits(cs.namespace(|| "pack_le"), &le)
    }

    fn native<S: Sink<F>>(&self, s: &mut S, leaves: &[F]) -> Result<F, SynthesisError> {
        let mut message = Message::with_capacity(leaves.len() * 32);
        for leaf in leaves {
            push_field_bits::<F>(&mut message, &native::num::to_bits_le(s, *leaf));
        }
        let digest = native::sha256::digest_bytes(&native::sha256::hash(s, &message));
        let packed = native::num::pack_le(&digest);
        s.push(packed);
        Ok(packed)
    }
}

/// Appends a field element's `NUM_BITS` allocated bits (from their little-endian bytes), then
/// constant zeros to a whole byte, as the bytes' bits most significant first: how Filecoin feeds
/// field elements to SHA-256.
pub fn push_field_bits<F: PrimeField>(message: &mut Message, le_bytes: &[u8]) {
    let num_bits = F::NUM_BITS as usize;
    for (i, &byte) in le_bytes.iter().enumerate() {
        let allocated = num_bits.saturating_sub(8 * i).min(8);
        message.push(byte, (0xFFu16 >> (8 - allocated)) as u8);
    }
}

/// The constants of the arity a node with `arity` children needs.
fn constants_for<F: PrimeField>(
    set: &[PoseidonConstants<F>],
    arity: usize,
) -> Result<&PoseidonConstants<F>, SynthesisError> {
    set.iter()
        .find(|c| c.arity() == arity)
        .ok_or_else(|| shape_error(format!("poseidon: no constants for arity {arity}")))
}

/// Poseidon node hashes, one set of constants per arity in use (e.g. 8 and 2 for an 8-8-2
/// tree).
impl<F: PrimeField> TreeHash<F> for [PoseidonConstants<F>] {
    fn hash_leaves<CS: ConstraintSystem<F>>(
        &self,
        cs: CS,
        leaves: &[AllocatedNum<F>],
    ) -> Result<AllocatedNum<F>, SynthesisError> {
        poseidon_hash(cs, leaves, constants_for(self, leaves.len())?)
    }

    fn native<S: Sink<F>>(&self, s: &mut S, leaves: &[F]) -> Result<F, SynthesisError> {
        native::poseidon::hash(s, leaves, constants_for(self, leaves.len())?)
    }
}

/// A value that is either already a variable or still to be allocated.
#[derive(Clone, Debug)]
pub enum Root<F: PrimeField> {
    /// An existing variable.
    Var(AllocatedNum<F>),
    /// A value to allocate (unknown when generating parameters).
    Val(Option<F>),
}

impl<F: PrimeField> Root<F> {
    /// The variable, allocating it if needed.
    pub fn allocated<CS: ConstraintSystem<F>>(
        &self,
        cs: CS,
    ) -> Result<AllocatedNum<F>, SynthesisError> {
        match self {
            Root::Var(v) => Ok(*v),
            Root::Val(v) => AllocatedNum::alloc(cs, || v.ok_or(SynthesisError::AssignmentMissing)),
        }
    }
}

/// One level of a Merkle path: the node's siblings (`arity - 1` of them) and its index among
/// the children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathElement<F> {
    /// The siblings in order, the node itself left out.
    pub siblings: Vec<Option<F>>,
    /// The node's position among its parent's children.
    pub index: Option<usize>,
}

/// A tree's arities: a base tree, optionally a layer of sub-trees and a top tree over them
/// (0 when absent). Filecoin uses 2-0-0 (SHA-256), 8-0-0, 8-8-0 and 8-8-2 (Poseidon).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeShape {
    /// Arity of the base tree.
    pub base: usize,
    /// Arity of the sub-tree layer, or 0.
    pub sub: usize,
    /// Arity of the top tree, or 0 (requires a sub-tree layer).
    pub top: usize,
}

impl TreeShape {
    /// The arity of each level of a path of `levels` elements.
    pub(crate) fn level_arities(&self, levels: usize) -> Result<Vec<usize>, SynthesisError> {
        let valid =
            |a: usize, optional: bool| (optional && a == 0) || (a >= 2 && a.is_power_of_two());
        if !valid(self.base, false) || !valid(self.sub, true) || !valid(self.top, true) {
            return Err(shape_error(format!("por: invalid tree shape {self:?}")));
        }
        if self.top > 0 && self.sub == 0 {
            return Err(shape_error("por: a top tree needs sub-trees".into()));
        }
        let upper: Vec<usize> = [self.sub, self.top]
            .into_iter()
            .filter(|&a| a > 0)
            .collect();
        let base_levels = levels
            .checked_sub(upper.len())
            .ok_or_else(|| shape_error(format!("por: {levels} path levels for {self:?}")))?;
        let mut arities = vec![self.base; base_levels];
        arities.extend(upper);
        Ok(arities)
    }
}

/// Hashes `cur` up one level; returns the parent and the level's index bits.
fn path_level<F, CS, H>(
    mut cs: CS,
    cur: AllocatedNum<F>,
    element: &PathElement<F>,
    arity: usize,
    hasher: &H,
) -> Result<(AllocatedNum<F>, Vec<Boolean>), SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
    H: TreeHash<F> + ?Sized,
{
    if element.siblings.len() + 1 != arity {
        return Err(shape_error(format!(
            "por: {} siblings at a level of arity {arity}",
            element.siblings.len()
        )));
    }
    let bits = (0..arity.trailing_zeros() as usize)
        .map(|i| {
            let bit = element.index.map(|index| (index >> i) & 1 == 1);
            AllocatedBit::alloc(cs.namespace(|| format!("index bit {i}")), bit).map(Boolean::Is)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let siblings = element
        .siblings
        .iter()
        .enumerate()
        .map(|(i, v)| {
            AllocatedNum::alloc(cs.namespace(|| format!("path element {i}")), || {
                v.ok_or(SynthesisError::AssignmentMissing)
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let children = insert(&mut cs, &cur, &bits, &siblings)?;
    let parent =
        hasher.hash_leaves(cs.namespace(|| "computation of commitment hash"), &children)?;
    Ok((parent, bits))
}

/// Proves that `value` is the leaf at the position `path` describes in the tree of root `root`:
/// the path's index bits become public inputs, and so does the root unless `private`.
pub fn por<F, CS, H>(
    cs: &mut CS,
    shape: TreeShape,
    value: &Root<F>,
    path: &[PathElement<F>],
    root: &Root<F>,
    private: bool,
    hasher: &H,
) -> Result<(), SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
    H: TreeHash<F> + ?Sized,
{
    let arities = shape.level_arities(path.len())?;
    let mut cur = value.allocated(cs.namespace(|| "value"))?;
    let mut bits = Vec::new();
    for (i, (element, &arity)) in path.iter().zip(&arities).enumerate() {
        let (parent, level_bits) = path_level(
            cs.namespace(|| format!("merkle tree hash {i}")),
            cur,
            element,
            arity,
            hasher,
        )?;
        cur = parent;
        bits.extend(level_bits);
    }
    pack_into_inputs(cs.namespace(|| "path"), &bits)?;
    let rt = root.allocated(cs.namespace(|| "root_value"))?;
    constraint::equal(cs, || "enforce root is correct", &cur, &rt);
    if !private {
        rt.inputize(cs.namespace(|| "root"))?;
    }
    Ok(())
}

/// Proves that `leaf` is the leaf at the position `index_bits` gives (little-endian, already
/// allocated, `log2(arity)` per level) in the tree of root `root`, where `path` holds every
/// level's siblings, already allocated. Nothing becomes a public input; the caller derives the
/// bits in-circuit (SnapDeals' `por_no_challenge_input`).
pub fn por_no_challenge_input<F, CS, H>(
    cs: &mut CS,
    shape: TreeShape,
    index_bits: &[AllocatedBit],
    leaf: &AllocatedNum<F>,
    path: &[Vec<AllocatedNum<F>>],
    root: &AllocatedNum<F>,
    hasher: &H,
) -> Result<(), SynthesisError>
where
    F: PrimeField,
    CS: ConstraintSystem<F>,
    H: TreeHash<F> + ?Sized,
{
    let arities = shape.level_arities(path.len())?;
    let needed: usize = arities.iter().map(|a| a.trailing_zeros() as usize).sum();
    if needed != index_bits.len() {
        return Err(shape_error(format!(
            "por: {} index bits for a path that needs {needed}",
            index_bits.len()
        )));
    }
    let mut bits = index_bits.iter().map(|b| Boolean::Is(*b));
    let mut cur = *leaf;
    for (height, (siblings, &arity)) in path.iter().zip(&arities).enumerate() {
        if siblings.len() + 1 != arity {
            return Err(shape_error(format!(
                "por: {} siblings at a level of arity {arity}",
                siblings.len()
            )));
        }
        let level_bits: Vec<Boolean> = bits
            .by_ref()
            .take(arity.trailing_zeros() as usize)
            .collect();
        let children = insert(
            &mut cs.namespace(|| format!("merkle proof insert (height={height})")),
            &cur,
            &level_bits,
            siblings,
        )?;
        cur = hasher.hash_leaves(
            cs.namespace(|| format!("merkle proof hash (height={height})")),
            &children,
        )?;
    }
    constraint::equal(cs, || "calculated root == provided root", &cur, root);
    Ok(())
}

/// The little-endian index bits of leaf `challenge` in a tree of `leaves` leaves (a power of
/// two): the public input the path bits are packed into.
pub fn challenge_into_auth_path_bits(
    challenge: usize,
    leaves: usize,
) -> Result<Vec<bool>, SynthesisError> {
    if !leaves.is_power_of_two() {
        return Err(shape_error(format!(
            "por: {leaves} leaves is not a power of two"
        )));
    }
    Ok((0..leaves.trailing_zeros())
        .map(|i| (challenge >> i) & 1 == 1)
        .collect())
}
