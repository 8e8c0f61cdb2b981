//! Native witness generation for a StackedDRG partition: the values [`StackedCircuit`]'s
//! synthesis assigns, computed directly from the vanilla proof.
//!
//! The witness of a fixed circuit is a pure function of its inputs, so it needs no constraint
//! system: each piece (a comm_d path, a parent's column and path, a label, ...) is written by
//! `cuzk_gadgets::native`, which mirrors the gadgets' allocations. A [`WitnessLayout`], derived
//! once per sector shape by counting, says where each piece starts in the aux vector, so the
//! pieces fill disjoint slices of one allocation in parallel.

use std::mem::MaybeUninit;

use bellpepper_core::SynthesisError;
use blstrs::Scalar as Fr;
use cuzk_gadgets::multipack::compute_multipacking;
use cuzk_gadgets::native::sha256::Message;
use cuzk_gadgets::native::{self, Count, Cursor, LayoutMismatch, Sink};
use cuzk_gadgets::por::{push_field_bits, Sha256Hash};
use ff::Field;
use rand_core::SeedableRng;
use rayon::prelude::*;
use sha2::Digest;

use crate::stacked::{ChallengeProof, ColumnOpening, StackedCircuit, StackedShape};

/// Why a native witness could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    /// A value is missing or a count does not fit the shape.
    #[error(transparent)]
    Synthesis(#[from] SynthesisError),
    /// A generator wrote a different number of values than the layout gave it (a bug).
    #[error(transparent)]
    Layout(#[from] LayoutMismatch),
}

/// One independently written piece of a challenge's witness, in the circuit's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    /// The data leaf and its comm_d path.
    CommD,
    /// Parent `i` (DRG parents first, then expander parents): its column and comm_c path.
    Parent(usize),
    /// The challenged node's 64 bits.
    Challenge,
    /// The label in layer `l` (from 1): the parents' bits and the SHA-256 of the label.
    Label(usize),
    /// The replica leaf, its comm_r_last path, the node's column hash and its comm_c path.
    Tail,
}

/// Where the pieces of a partition's witness lie in its aux vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WitnessLayout {
    /// Values before the first challenge (replica id and its bits, roots, comm_r's hash).
    head: usize,
    /// Each piece of one challenge and its length, in order.
    pieces: Vec<(Piece, usize)>,
    challenges: usize,
}

impl WitnessLayout {
    /// Counts what each piece allocates, on a synthetic partition (what a piece allocates
    /// depends on the shape only, not on the values).
    fn of(shape: &StackedShape) -> Result<Self, WitnessError> {
        let circuit = shape.synthetic(&mut rand_chacha::ChaCha8Rng::seed_from_u64(0));
        let mut count = Count(0);
        head(&circuit, &mut count, &mut Vec::new())?;
        let head_len = count.0;
        let proof = &circuit.proofs[0];
        let labels = vec![Fr::ZERO; shape.layers];
        let pieces = pieces(shape)
            .map(|piece| {
                let mut count = Count(0);
                write(&circuit, proof, &labels, piece, &mut count, &mut Vec::new())?;
                Ok((piece, count.0))
            })
            .collect::<Result<_, WitnessError>>()?;
        Ok(WitnessLayout {
            head: head_len,
            pieces,
            challenges: shape.challenges,
        })
    }

    /// Aux values of the whole partition.
    pub fn aux(&self) -> usize {
        self.head + self.challenges * self.pieces.iter().map(|(_, n)| n).sum::<usize>()
    }

    /// Independently written pieces of the partition (the unit of parallelism).
    pub fn piece_count(&self) -> usize {
        1 + self.challenges * self.pieces.len()
    }
}

impl StackedShape {
    /// The aux layout of this shape's partitions, derived on first use.
    pub fn witness_layout(&self) -> Result<&WitnessLayout, WitnessError> {
        if let Some(layout) = self.layout.get() {
            return Ok(layout);
        }
        let layout = WitnessLayout::of(self)?;
        Ok(self.layout.get_or_init(|| layout))
    }
}

/// The pieces of one challenge, in order.
fn pieces(shape: &StackedShape) -> impl Iterator<Item = Piece> {
    let parents = (0..shape.drg_parents + shape.exp_parents).map(Piece::Parent);
    let labels = (1..=shape.layers).map(Piece::Label);
    std::iter::once(Piece::CommD)
        .chain(parents)
        .chain(std::iter::once(Piece::Challenge))
        .chain(labels)
        .chain(std::iter::once(Piece::Tail))
}

fn value<T: Copy>(v: Option<T>) -> Result<T, SynthesisError> {
    v.ok_or(SynthesisError::AssignmentMissing)
}

impl StackedCircuit<'_> {
    /// The witness synthesis assigns, `(input, aux)` with ONE as `input[0]`, computed natively
    /// and in parallel over the layout's pieces.
    pub fn native_witness(&self) -> Result<(Vec<Fr>, Vec<Fr>), WitnessError> {
        let shape = self.shape;
        self.check()?;
        let layout = shape.witness_layout()?;
        let labels: Vec<Vec<Fr>> = self
            .proofs
            .par_iter()
            .map(|p| label_values(self, p))
            .collect::<Result<_, _>>()?;

        let mut lengths = Vec::with_capacity(layout.piece_count());
        lengths.push(layout.head);
        for _ in 0..shape.challenges {
            lengths.extend(layout.pieces.iter().map(|(_, n)| n));
        }
        let per = layout.pieces.len();
        let (aux, piece_inputs) = fill(&lengths, |i, cursor| {
            let mut inputs = Vec::new();
            if i == 0 {
                head(self, cursor, &mut inputs)?;
            } else {
                let (j, k) = ((i - 1) / per, (i - 1) % per);
                let piece = layout.pieces[k].0;
                write(
                    self,
                    &self.proofs[j],
                    &labels[j],
                    piece,
                    cursor,
                    &mut inputs,
                )?;
            }
            Ok(inputs)
        })?;
        let mut input = vec![Fr::ONE];
        input.extend(piece_inputs.into_iter().flatten());
        Ok((input, aux))
    }
}

/// Fills a vector from consecutive slices of the given lengths, written in parallel by
/// `write(i, cursor)`, each of which returns some inputs; every slice must be written exactly.
pub(crate) fn fill<T: Send>(
    lengths: &[usize],
    write: impl Fn(usize, &mut Cursor<'_, Fr>) -> Result<T, WitnessError> + Sync,
) -> Result<(Vec<Fr>, Vec<T>), WitnessError> {
    let len = lengths.iter().sum();
    let mut out: Vec<Fr> = cuzk_groth16::memory::take(len);
    let mut rest: &mut [MaybeUninit<Fr>] = &mut out.spare_capacity_mut()[..len];
    let mut slices = Vec::with_capacity(lengths.len());
    for &n in lengths {
        let (slice, tail) = rest.split_at_mut(n);
        slices.push(slice);
        rest = tail;
    }
    let results = slices
        .into_par_iter()
        .enumerate()
        .map(|(i, slice)| {
            let mut cursor = Cursor::new(slice);
            let t = write(i, &mut cursor)?;
            cursor.finish()?;
            Ok(t)
        })
        .collect::<Result<Vec<T>, WitnessError>>()?;
    // SAFETY: the slices tile `0..len` and `finish` checked that each was written in full, so
    // the first `len` values are initialised.
    unsafe { out.set_len(len) };
    Ok((out, results))
}

/// The values before the first challenge: replica id and its bits, comm_d, comm_r,
/// comm_r_last, comm_c, and the hash comm_r must equal.
fn head(
    c: &StackedCircuit<'_>,
    s: &mut impl Sink<Fr>,
    inputs: &mut Vec<Fr>,
) -> Result<(), WitnessError> {
    let replica_id = value(c.replica_id)?;
    s.push(replica_id);
    inputs.push(replica_id);
    native::num::to_bits_le(s, replica_id);
    let comm_d = value(c.comm_d)?;
    s.push(comm_d);
    inputs.push(comm_d);
    let comm_r = value(c.comm_r)?;
    s.push(comm_r);
    inputs.push(comm_r);
    let (comm_r_last, comm_c) = (value(c.comm_r_last)?, value(c.comm_c)?);
    s.push(comm_r_last);
    s.push(comm_c);
    native::poseidon::hash(s, &[comm_c, comm_r_last], &c.shape.pair)?;
    Ok(())
}

/// One piece of challenge `proof`'s witness; `labels` are the challenge's label values.
fn write(
    c: &StackedCircuit<'_>,
    proof: &ChallengeProof,
    labels: &[Fr],
    piece: Piece,
    s: &mut impl Sink<Fr>,
    inputs: &mut Vec<Fr>,
) -> Result<(), WitnessError> {
    let shape = c.shape;
    let tree = &shape.tree_hashes[..];
    match piece {
        Piece::CommD => {
            let leaf = value(proof.data_leaf)?;
            s.push(leaf);
            let path = &proof.comm_d_path;
            native::por::por(
                s,
                inputs,
                StackedShape::COMM_D_TREE,
                leaf,
                path,
                &Sha256Hash,
            )?;
        }
        Piece::Parent(i) => {
            let opening = parent(proof, i);
            let rows = opening
                .rows
                .iter()
                .map(|r| value(*r))
                .collect::<Result<Vec<_>, _>>()?;
            rows.iter().for_each(|r| s.push(*r));
            let hash = native::poseidon::hash(s, &rows, &shape.column)?;
            native::por::por(s, inputs, shape.tree, hash, &opening.path, tree)?;
        }
        Piece::Challenge => {
            let node = value(proof.challenge)?;
            s.bits(node, u64::MAX);
            let bits: Vec<bool> = (0..64).map(|i| node >> i & 1 == 1).collect();
            inputs.extend(compute_multipacking::<Fr>(&bits));
        }
        Piece::Label(layer) => {
            let sources = label_sources(proof, layer)?;
            let parents: Vec<Vec<u8>> = sources
                .iter()
                .map(|v| native::num::to_bits_le(s, *v))
                .collect();
            let message = label_message(c, proof, layer, &parents)?;
            let digest = native::sha256::digest_bytes(&native::sha256::hash(s, &message));
            s.push(native::num::pack_le(&digest));
        }
        Piece::Tail => {
            let key = labels[shape.layers - 1];
            let replica_leaf = key + value(proof.data_leaf)?;
            s.push(replica_leaf);
            let path = &proof.comm_r_last_path;
            native::por::por(s, inputs, shape.tree, replica_leaf, path, tree)?;
            let column = native::poseidon::hash(s, labels, &shape.column)?;
            native::por::por(s, inputs, shape.tree, column, &proof.comm_c_path, tree)?;
        }
    }
    Ok(())
}

/// Parent `i`'s opening: DRG parents first, then expander parents.
fn parent(proof: &ChallengeProof, i: usize) -> &ColumnOpening {
    let drg = proof.drg_parents.len();
    if i < drg {
        &proof.drg_parents[i]
    } else {
        &proof.exp_parents[i - drg]
    }
}

/// The parent labels hashed into the label of `layer`: DRG parents in this layer, expander
/// parents in the layer below.
fn label_sources(proof: &ChallengeProof, layer: usize) -> Result<Vec<Fr>, SynthesisError> {
    let drg = proof.drg_parents.iter().map(|c| c.rows[layer - 1]);
    let exp = proof
        .exp_parents
        .iter()
        .filter(|_| layer > 1)
        .map(|c| c.rows[layer - 2]);
    drg.chain(exp).map(value).collect()
}

/// The message hashed into a label: the replica id, the layer and node, then the parents'
/// labels repeated to [`StackedShape::TOTAL_PARENTS`], each in 32-byte blocks.
fn label_message(
    c: &StackedCircuit<'_>,
    proof: &ChallengeProof,
    layer: usize,
    parents: &[Vec<u8>],
) -> Result<Message, SynthesisError> {
    let mut m = Message::with_capacity((2 + StackedShape::TOTAL_PARENTS) * 32);
    push_field_bits::<Fr>(&mut m, &native::num::le_bytes(value(c.replica_id)?));
    m.zero_pad(32);
    m.constant(&(layer as u32).to_be_bytes());
    m.allocated(&value(proof.challenge)?.to_be_bytes());
    m.zero_pad(64);
    for p in parents.iter().cycle().take(StackedShape::TOTAL_PARENTS) {
        push_field_bits::<Fr>(&mut m, p);
        m.zero_pad(32);
    }
    Ok(m)
}

/// The challenge's label in every layer (plain SHA-256: the pieces after the labels need the
/// values, not the labels' witness).
fn label_values(c: &StackedCircuit<'_>, proof: &ChallengeProof) -> Result<Vec<Fr>, SynthesisError> {
    (1..=c.shape.layers)
        .map(|layer| {
            let parents: Vec<Vec<u8>> = label_sources(proof, layer)?
                .into_iter()
                .map(native::num::le_bytes)
                .collect();
            let message = label_message(c, proof, layer, &parents)?;
            let digest: [u8; 32] = sha2::Sha256::digest(message.bytes()).into();
            Ok(native::num::pack_le(&digest))
        })
        .collect()
}
