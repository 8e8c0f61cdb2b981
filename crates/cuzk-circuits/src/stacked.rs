//! cuzk's StackedDRG PoRep circuit, built from `cuzk-gadgets`.
//!
//! It is row-for-row the circuit of storage-proofs-porep's `StackedCircuit`, so proofs verify
//! under the published Filecoin parameters: the same inputs, aux variables and constraints in
//! the same order with the same coefficients (the identity tests compare the recorded matrices
//! and the witness). Per challenge it proves:
//! - the data leaf is in the comm_d tree (SHA-256, binary);
//! - each DRG and expander parent's column hashes into the comm_c tree;
//! - the challenged node's label in every layer is SHA-256 of the replica id, layer, node and
//!   37 parent labels (DRG parents in this layer, expander parents in the layer below);
//! - the last layer's label encodes the data leaf into a leaf of the comm_r_last tree;
//! - the column of the node's labels hashes into the comm_c tree;
//!
//! and, once per partition, `comm_r = Poseidon(comm_c, comm_r_last)`.

use std::sync::OnceLock;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use rand_core::RngCore;

use cuzk_gadgets::boolean::Boolean;
use cuzk_gadgets::constraint;
use cuzk_gadgets::multipack::pack_bits;
use cuzk_gadgets::num::AllocatedNum;
use cuzk_gadgets::por::{por, PathElement, Root, Sha256Hash, TreeHash, TreeShape};
use cuzk_gadgets::poseidon::{poseidon_hash, PoseidonConstants};
use cuzk_gadgets::sha256::sha256;
use cuzk_gadgets::uint32::UInt32;
use cuzk_gadgets::uint64::UInt64;

use crate::graph::{StackedGraph, DRG_PARENTS, EXP_PARENTS};
use crate::witness::WitnessLayout;

/// What a sector size fixes about the circuit of one partition.
#[derive(Debug)]
pub struct StackedShape {
    /// 32-byte nodes in the sector.
    pub nodes: usize,
    /// Labelling layers (the column height).
    pub layers: usize,
    /// Challenges proven per partition.
    pub challenges: usize,
    /// Arities of the comm_c and comm_r_last trees.
    pub tree: TreeShape,
    /// DRG parents per node.
    pub drg_parents: usize,
    /// Expander parents per node.
    pub exp_parents: usize,
    /// Poseidon of two elements (comm_r).
    pub(crate) pair: PoseidonConstants<Fr>,
    /// Poseidon of one column (`layers` elements).
    pub(crate) column: PoseidonConstants<Fr>,
    /// Poseidon of one tree node, per arity the tree uses.
    pub(crate) tree_hashes: Vec<PoseidonConstants<Fr>>,
    /// Where the native witness generator puts each piece (derived on first use).
    pub(crate) layout: OnceLock<WitnessLayout>,
}

fn shape_error(what: String) -> SynthesisError {
    SynthesisError::IncompatibleLengthVector(what)
}

impl StackedShape {
    /// The comm_d tree: SHA-256, binary.
    pub const COMM_D_TREE: TreeShape = TreeShape {
        base: 2,
        sub: 0,
        top: 0,
    };
    /// Parent labels hashed into each label (repeating the parents up to this count).
    pub const TOTAL_PARENTS: usize = 37;

    /// The shape of the interactive PoRep circuit for a sector of `bytes` bytes (2 KiB, 8 MiB,
    /// 512 MiB, 32 GiB or 64 GiB), built once and shared.
    pub fn for_sector_size(bytes: u64) -> Option<&'static StackedShape> {
        static SHAPES: [OnceLock<StackedShape>; 5] = [const { OnceLock::new() }; 5];
        // (bytes, layers, challenges per partition, tree arities)
        const TABLE: [(u64, usize, usize, [usize; 3]); 5] = [
            (2 << 10, 2, 2, [8, 0, 0]),
            (8 << 20, 2, 2, [8, 0, 0]),
            (512 << 20, 2, 2, [8, 0, 0]),
            (32 << 30, 11, 18, [8, 8, 0]),
            (64 << 30, 11, 18, [8, 8, 2]),
        ];
        let i = TABLE.iter().position(|row| row.0 == bytes)?;
        let (bytes, layers, challenges, [base, sub, top]) = TABLE[i];
        Some(SHAPES[i].get_or_init(|| {
            let constants = |arity| {
                PoseidonConstants::new(arity).expect("Filecoin's Poseidon arities are supported")
            };
            let mut arities = vec![base, sub, top];
            arities.retain(|&a| a > 0);
            arities.dedup();
            StackedShape {
                nodes: (bytes / 32) as usize,
                layers,
                challenges,
                tree: TreeShape { base, sub, top },
                drg_parents: DRG_PARENTS,
                exp_parents: EXP_PARENTS,
                pair: constants(2),
                column: constants(layers),
                tree_hashes: arities.into_iter().map(constants).collect(),
                layout: OnceLock::new(),
            }
        }))
    }

    /// The Poseidon node hash of `children`, by their count (an arity of the tree).
    ///
    /// # Panics
    /// If the tree has no level of that arity.
    pub(crate) fn tree_hash(&self, children: &[Fr]) -> Fr {
        let h = self
            .tree_hashes
            .iter()
            .find(|h| h.arity() == children.len());
        h.expect("an arity of the tree")
            .hash(children)
            .expect("arity matches")
    }

    /// Levels of a comm_d path.
    pub fn comm_d_levels(&self) -> usize {
        self.nodes.trailing_zeros() as usize
    }

    /// Levels of a comm_c or comm_r_last path: base levels, then one per sub and top tree.
    pub fn tree_levels(&self) -> usize {
        let upper = [self.tree.sub, self.tree.top];
        let base_leaves = upper
            .iter()
            .filter(|&&a| a > 0)
            .fold(self.nodes, |n, a| n / a);
        let base = (base_leaves.trailing_zeros() / self.tree.base.trailing_zeros()) as usize;
        base + upper.iter().filter(|&&a| a > 0).count()
    }

    /// A partition's public inputs for its challenged nodes, in the circuit's input order:
    /// replica id, comm_d, comm_r, then per challenge the node (its comm_d path), its DRG and
    /// expander parents (their comm_c paths), the node again as a number, and twice more (its
    /// comm_r_last and comm_c paths). A path's input is its leaf index: the packed index bits.
    pub fn public_inputs(
        &self,
        graph: &StackedGraph,
        [replica_id, comm_d, comm_r]: [Fr; 3],
        challenges: &[u64],
    ) -> Vec<Fr> {
        let per_challenge = 4 + self.drg_parents + self.exp_parents;
        let mut inputs = Vec::with_capacity(3 + challenges.len() * per_challenge);
        inputs.extend([replica_id, comm_d, comm_r]);
        for &c in challenges {
            let node = c as u32;
            inputs.push(Fr::from(c));
            inputs.extend(graph.drg_parents(node).map(|p| Fr::from(u64::from(p))));
            inputs.extend(graph.exp_parents(node).map(|p| Fr::from(u64::from(p))));
            inputs.extend([Fr::from(c); 3]);
        }
        inputs
    }

    /// The arity of each level of a comm_c or comm_r_last path, from the leaves up.
    pub fn tree_arities(&self) -> Vec<usize> {
        let upper = [self.tree.sub, self.tree.top]
            .into_iter()
            .filter(|&a| a > 0);
        let base = self.tree_levels() - upper.clone().count();
        std::iter::repeat(self.tree.base)
            .take(base)
            .chain(upper)
            .collect()
    }

    /// A partition with random values of the right shapes (random challenge, leaves, siblings,
    /// positions and labels): not a valid proof, but a circuit whose synthesis runs, for
    /// measuring and testing witness generation on shapes without a sealed sector.
    pub fn synthetic(&self, rng: &mut impl RngCore) -> StackedCircuit<'_> {
        let mut c = self.blank();
        let path = |path: &mut Vec<PathElement<Fr>>, rng: &mut dyn RngCore| {
            for e in path {
                e.index = Some(rng.next_u32() as usize % (e.siblings.len() + 1));
                e.siblings
                    .iter_mut()
                    .for_each(|v| *v = Some(Fr::random(&mut *rng)));
            }
        };
        for p in &mut c.proofs {
            p.challenge = Some(rng.next_u64() % self.nodes as u64);
            p.data_leaf = Some(Fr::random(&mut *rng));
            path(&mut p.comm_d_path, rng);
            path(&mut p.comm_r_last_path, rng);
            path(&mut p.comm_c_path, rng);
            for col in p.drg_parents.iter_mut().chain(&mut p.exp_parents) {
                col.rows
                    .iter_mut()
                    .for_each(|v| *v = Some(Fr::random(&mut *rng)));
                path(&mut col.path, rng);
            }
        }
        for v in [
            &mut c.replica_id,
            &mut c.comm_d,
            &mut c.comm_r,
            &mut c.comm_r_last,
            &mut c.comm_c,
        ] {
            *v = Some(Fr::random(&mut *rng));
        }
        c
    }

    /// The circuit with every value unknown, for parameter generation and matrix extraction.
    pub fn blank(&self) -> StackedCircuit<'_> {
        let blank_path = |arities: &[usize]| {
            arities
                .iter()
                .map(|&a| PathElement {
                    siblings: vec![None; a - 1],
                    index: None,
                })
                .collect::<Vec<_>>()
        };
        let tree = blank_path(&self.tree_arities());
        let column = || ColumnOpening {
            rows: vec![None; self.layers],
            path: tree.clone(),
        };
        let proof = ChallengeProof {
            challenge: None,
            data_leaf: None,
            comm_d_path: blank_path(&vec![2; self.comm_d_levels()]),
            drg_parents: (0..self.drg_parents).map(|_| column()).collect(),
            exp_parents: (0..self.exp_parents).map(|_| column()).collect(),
            comm_r_last_path: tree.clone(),
            comm_c_path: tree.clone(),
        };
        StackedCircuit {
            shape: self,
            replica_id: None,
            comm_d: None,
            comm_r: None,
            comm_r_last: None,
            comm_c: None,
            proofs: vec![proof; self.challenges],
        }
    }
}

/// A parent's column of labels (one per layer) and its path in the comm_c tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnOpening {
    pub rows: Vec<Option<Fr>>,
    pub path: Vec<PathElement<Fr>>,
}

/// Everything one challenge contributes to the witness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChallengeProof {
    /// The challenged node.
    pub challenge: Option<u64>,
    /// The unsealed data at that node (a comm_d leaf).
    pub data_leaf: Option<Fr>,
    pub comm_d_path: Vec<PathElement<Fr>>,
    pub drg_parents: Vec<ColumnOpening>,
    pub exp_parents: Vec<ColumnOpening>,
    pub comm_r_last_path: Vec<PathElement<Fr>>,
    pub comm_c_path: Vec<PathElement<Fr>>,
}

/// One partition of a PoRep proof.
#[derive(Clone, Debug)]
pub struct StackedCircuit<'a> {
    pub shape: &'a StackedShape,
    pub replica_id: Option<Fr>,
    pub comm_d: Option<Fr>,
    pub comm_r: Option<Fr>,
    pub comm_r_last: Option<Fr>,
    pub comm_c: Option<Fr>,
    pub proofs: Vec<ChallengeProof>,
}

/// A variable of `value` (missing when generating parameters).
pub(crate) fn alloc<CS: ConstraintSystem<Fr>>(
    cs: CS,
    value: Option<Fr>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    AllocatedNum::alloc(cs, || value.ok_or(SynthesisError::AssignmentMissing))
}

/// Reverses the bit order within each byte, padding the last byte with zeros: Filecoin hashes
/// field elements as little-endian bytes, each fed most significant bit first.
fn msb_first_bytes(mut bits: Vec<Boolean>) -> Vec<Boolean> {
    bits.resize(bits.len().next_multiple_of(8), Boolean::Constant(false));
    for byte in bits.chunks_exact_mut(8) {
        byte.reverse();
    }
    bits
}

/// Proves `leaf` is in the tree of root `root` at the position the path's index bits give
/// (they become public inputs).
fn inclusion<CS, H>(
    mut cs: CS,
    tree: TreeShape,
    path: &[PathElement<Fr>],
    root: AllocatedNum<Fr>,
    leaf: AllocatedNum<Fr>,
    hasher: &H,
) -> Result<(), SynthesisError>
where
    CS: ConstraintSystem<Fr>,
    H: TreeHash<Fr> + ?Sized,
{
    por(
        &mut cs,
        tree,
        &Root::Var(leaf),
        path,
        &Root::Var(root),
        true,
        hasher,
    )
}

/// A node's label: SHA-256 over 32-byte blocks (replica id; layer and node; the parents'
/// labels), as the first `CAPACITY` bits of the digest read little-endian.
fn label<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    replica_id: &[Boolean],
    layer: u32,
    node: &UInt64,
    parents: &[Vec<Boolean>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let mut message = Vec::with_capacity((2 + StackedShape::TOTAL_PARENTS) * 256);
    message.extend_from_slice(replica_id);
    message.resize(256, Boolean::Constant(false));
    message.extend_from_slice(&UInt32::constant(layer).into_bits_be());
    message.extend_from_slice(&node.to_bits_be());
    message.resize(512, Boolean::Constant(false));
    for parent in parents.iter().cycle().take(StackedShape::TOTAL_PARENTS) {
        message.extend_from_slice(parent);
        message.resize(
            message.len().next_multiple_of(256),
            Boolean::Constant(false),
        );
    }
    let digest = msb_first_bytes(sha256(cs.namespace(|| "hash"), &message)?);
    pack_bits(
        cs.namespace(|| "result_num"),
        &digest[..Fr::CAPACITY as usize],
    )
}

impl ChallengeProof {
    /// Whether every count and path depth matches `shape` (otherwise the R1CS would differ from
    /// the published circuit's).
    fn check(&self, shape: &StackedShape) -> Result<(), SynthesisError> {
        let tree = shape.tree_levels();
        let columns = self.drg_parents.iter().chain(&self.exp_parents);
        let ok = self.drg_parents.len() == shape.drg_parents
            && self.exp_parents.len() == shape.exp_parents
            && self.comm_d_path.len() == shape.comm_d_levels()
            && self.comm_r_last_path.len() == tree
            && self.comm_c_path.len() == tree
            && columns
                .clone()
                .all(|c| c.rows.len() == shape.layers && c.path.len() == tree);
        if ok {
            Ok(())
        } else {
            Err(shape_error(format!(
                "stacked: a challenge proof does not fit {} nodes, {} layers, tree {:?}",
                shape.nodes, shape.layers, shape.tree
            )))
        }
    }

    fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        mut cs: CS,
        shape: &StackedShape,
        roots: &Roots,
        replica_id: &[Boolean],
    ) -> Result<(), SynthesisError> {
        let tree = &shape.tree_hashes[..];
        let data_leaf = alloc(cs.namespace(|| "data_leaf"), self.data_leaf)?;
        inclusion(
            cs.namespace(|| "comm_d_inclusion"),
            StackedShape::COMM_D_TREE,
            &self.comm_d_path,
            roots.comm_d,
            data_leaf,
            &Sha256Hash,
        )?;

        let mut columns = Vec::with_capacity(shape.drg_parents + shape.exp_parents);
        let parents = [("drg", &self.drg_parents), ("exp", &self.exp_parents)];
        for (kind, openings) in parents {
            for (i, opening) in openings.iter().enumerate() {
                let mut cs = cs.namespace(|| format!("{kind}_parent_{i}"));
                let rows = opening
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(r, v)| alloc(cs.namespace(|| format!("column_num_row_{r}")), *v))
                    .collect::<Result<Vec<_>, _>>()?;
                let hash = poseidon_hash(cs.namespace(|| "column_hash"), &rows, &shape.column)?;
                inclusion(
                    cs.namespace(|| "inclusion"),
                    shape.tree,
                    &opening.path,
                    roots.comm_c,
                    hash,
                    tree,
                )?;
                columns.push(rows);
            }
        }
        let (drg, exp) = columns.split_at(shape.drg_parents);

        let challenge = UInt64::alloc(cs.namespace(|| "challenge"), self.challenge)?;
        challenge.pack_into_input(cs.namespace(|| "challenge input"))?;

        let mut labels = Vec::with_capacity(shape.layers);
        for layer in 1..=shape.layers {
            let mut cs = cs.namespace(|| format!("labeling_{layer}"));
            // DRG parents are labelled in this layer, expander parents in the layer below.
            let sources = drg.iter().map(|c| c[layer - 1]);
            let sources = sources.chain(exp.iter().filter(|_| layer > 1).map(|c| c[layer - 2]));
            let parent_bits = sources
                .enumerate()
                .map(|(i, v)| {
                    v.to_bits_le(cs.namespace(|| format!("parent_{i}_bits")))
                        .map(msb_first_bytes)
                })
                .collect::<Result<Vec<_>, _>>()?;
            labels.push(label(
                cs.namespace(|| "create_label"),
                replica_id,
                layer as u32,
                &challenge,
                &parent_bits,
            )?);
        }

        let key = labels[shape.layers - 1];
        let replica_leaf = constraint::encode(cs.namespace(|| "encode_node"), &key, &data_leaf)?;
        inclusion(
            cs.namespace(|| "comm_r_last_data_inclusion"),
            shape.tree,
            &self.comm_r_last_path,
            roots.comm_r_last,
            replica_leaf,
            tree,
        )?;

        let column = poseidon_hash(cs.namespace(|| "c_x_column_hash"), &labels, &shape.column)?;
        inclusion(
            cs.namespace(|| "c_x_inclusion"),
            shape.tree,
            &self.comm_c_path,
            roots.comm_c,
            column,
            tree,
        )
    }
}

/// The partition-wide variables every challenge refers to.
struct Roots {
    comm_d: AllocatedNum<Fr>,
    comm_c: AllocatedNum<Fr>,
    comm_r_last: AllocatedNum<Fr>,
}

impl StackedCircuit<'_> {
    /// Whether the challenge count and every challenge proof fit the shape.
    pub(crate) fn check(&self) -> Result<(), SynthesisError> {
        let shape = self.shape;
        if self.proofs.len() != shape.challenges {
            return Err(shape_error(format!(
                "stacked: {} challenge proofs, the partition has {}",
                self.proofs.len(),
                shape.challenges
            )));
        }
        self.proofs.iter().try_for_each(|p| p.check(shape))
    }
}

impl Circuit<Fr> for StackedCircuit<'_> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let shape = self.shape;
        self.check()?;

        let replica_id = alloc(cs.namespace(|| "replica_id"), self.replica_id)?;
        replica_id.inputize(cs.namespace(|| "replica_id_input"))?;
        let replica_id_bits =
            msb_first_bytes(replica_id.to_bits_le(cs.namespace(|| "replica_id_bits"))?);

        let comm_d = alloc(cs.namespace(|| "comm_d"), self.comm_d)?;
        comm_d.inputize(cs.namespace(|| "comm_d_input"))?;
        let comm_r = alloc(cs.namespace(|| "comm_r"), self.comm_r)?;
        comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
        let comm_r_last = alloc(cs.namespace(|| "comm_r_last"), self.comm_r_last)?;
        let comm_c = alloc(cs.namespace(|| "comm_c"), self.comm_c)?;

        let hash = poseidon_hash(
            cs.namespace(|| "H_comm_c_comm_r_last"),
            &[comm_c, comm_r_last],
            &shape.pair,
        )?;
        constraint::equal(
            cs,
            || "enforce comm_r = H(comm_c || comm_r_last)",
            &comm_r,
            &hash,
        );

        let roots = Roots {
            comm_d,
            comm_c,
            comm_r_last,
        };
        for (i, proof) in self.proofs.iter().enumerate() {
            proof.synthesize(
                cs.namespace(|| format!("challenge_{i}")),
                shape,
                &roots,
                &replica_id_bits,
            )?;
        }
        Ok(())
    }
}
