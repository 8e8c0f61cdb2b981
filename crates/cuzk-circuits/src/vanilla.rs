//! The StackedDRG vanilla proofs inside a C1 output, read from the JSON that `filecoin-proofs`
//! writes, and checked against a sector shape into what the circuit consumes.
//!
//! The JSON mirrors upstream's serde layout: `{"StackedDrg2KiBV1": [[proof, ...], ...]}`, one
//! list per partition, each proof holding Merkle proofs as `{"data": {"Single" | "Sub" | "Top":
//! ...}}` and 32-byte little-endian field elements as byte arrays. Everything the circuit uses
//! is validated here (counts, path depths and arities, canonical field encodings), so a bad C1
//! file is a [`VanillaError`] naming the offending field, never a panic inside synthesis.

use blstrs::Scalar as Fr;
use ff::PrimeField;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::stacked::{ChallengeProof, ColumnOpening, StackedShape};
use cuzk_gadgets::native::Count;
use cuzk_gadgets::por::{PathElement, TreeHash, TreeShape};

/// A vanilla proof that does not fit the sector shape, with where it went wrong.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("vanilla proofs: {at}: {reason}")]
pub struct VanillaError {
    /// Location, e.g. `partition 0, challenge 1, drg_parents[3].inclusion_proof`.
    pub at: String,
    pub reason: String,
}

pub(crate) type Bytes = [u8; 32];

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Element {
    pub(crate) hashes: Vec<Bytes>,
    pub(crate) index: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Path {
    pub(crate) path: Vec<Element>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Single {
    pub(crate) root: Bytes,
    pub(crate) leaf: Bytes,
    pub(crate) path: Path,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Sub {
    pub(crate) base_proof: Path,
    pub(crate) sub_proof: Path,
    pub(crate) root: Bytes,
    pub(crate) leaf: Bytes,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Top {
    pub(crate) base_proof: Path,
    pub(crate) sub_proof: Path,
    pub(crate) top_proof: Path,
    pub(crate) root: Bytes,
    pub(crate) leaf: Bytes,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum ProofData {
    Single(Single),
    Sub(Sub),
    Top(Top),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct MerkleProof {
    pub(crate) data: ProofData,
}

impl MerkleProof {
    pub(crate) fn root(&self) -> &Bytes {
        match &self.data {
            ProofData::Single(p) => &p.root,
            ProofData::Sub(p) => &p.root,
            ProofData::Top(p) => &p.root,
        }
    }

    pub(crate) fn leaf(&self) -> &Bytes {
        match &self.data {
            ProofData::Single(p) => &p.leaf,
            ProofData::Sub(p) => &p.leaf,
            ProofData::Top(p) => &p.leaf,
        }
    }

    /// The levels from the leaf up, each with the arity its tree part has in `shape`.
    fn levels(&self, shape: TreeShape) -> Result<Vec<(&Element, usize)>, String> {
        let (parts, arities): (Vec<&Path>, Vec<usize>) = match &self.data {
            ProofData::Single(p) => (vec![&p.path], vec![shape.base]),
            ProofData::Sub(p) => (
                vec![&p.base_proof, &p.sub_proof],
                vec![shape.base, shape.sub],
            ),
            ProofData::Top(p) => (
                vec![&p.base_proof, &p.sub_proof, &p.top_proof],
                vec![shape.base, shape.sub, shape.top],
            ),
        };
        let expected = 1 + usize::from(shape.sub > 0) + usize::from(shape.top > 0);
        if parts.len() != expected {
            return Err(format!(
                "a {}-part Merkle proof, the tree has {expected} parts ({}-{}-{})",
                parts.len(),
                shape.base,
                shape.sub,
                shape.top
            ));
        }
        Ok(parts
            .into_iter()
            .zip(arities)
            .flat_map(|(part, arity)| part.path.iter().map(move |e| (e, arity)))
            .collect())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Column {
    index: u32,
    rows: Vec<Bytes>,
    /// Upstream serialises its hasher marker as `null`.
    #[serde(rename = "_h", default)]
    _marker: Option<()>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ColumnProof {
    column: Column,
    inclusion_proof: MerkleProof,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplicaColumnProofs {
    c_x: ColumnProof,
    drg_parents: Vec<ColumnProof>,
    exp_parents: Vec<ColumnProof>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelingProof {
    parents: Vec<Bytes>,
    layer_index: u32,
    node: u64,
}

/// One challenge's vanilla proof, as C1 wrote it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackedProof {
    comm_d_proofs: MerkleProof,
    comm_r_last_proof: MerkleProof,
    replica_column_proofs: ReplicaColumnProofs,
    labeling_proofs: Vec<LabelingProof>,
    encoding_proof: LabelingProof,
}

/// A node's column and its opening in the comm_c tree.
pub(crate) type ColumnOpened = (u32, Vec<Fr>, MerkleProof);
/// A labeling proof's layer, node and parent labels (before repetition).
pub(crate) type Labeled = (u32, u64, Vec<Fr>);

impl StackedProof {
    /// One challenge's proof from its parts; labeling parents are repeated to
    /// [`StackedShape::TOTAL_PARENTS`], as upstream stores them.
    pub(crate) fn new(
        comm_d: MerkleProof,
        comm_r_last: MerkleProof,
        c_x: ColumnOpened,
        drg: Vec<ColumnOpened>,
        exp: Vec<ColumnOpened>,
        labeling: Vec<Labeled>,
        encoding: Labeled,
    ) -> Self {
        let column = |(index, rows, inclusion_proof): ColumnOpened| ColumnProof {
            column: Column {
                index,
                rows: rows.iter().map(|r| r.to_repr()).collect(),
                _marker: None,
            },
            inclusion_proof,
        };
        let labeled = |(layer_index, node, parents): Labeled| LabelingProof {
            parents: parents
                .iter()
                .cycle()
                .take(StackedShape::TOTAL_PARENTS)
                .map(|p| p.to_repr())
                .collect(),
            layer_index,
            node,
        };
        StackedProof {
            comm_d_proofs: comm_d,
            comm_r_last_proof: comm_r_last,
            replica_column_proofs: ReplicaColumnProofs {
                c_x: column(c_x),
                drg_parents: drg.into_iter().map(column).collect(),
                exp_parents: exp.into_iter().map(column).collect(),
            },
            labeling_proofs: labeling.into_iter().map(labeled).collect(),
            encoding_proof: labeled(encoding),
        }
    }
}

/// The `vanilla_proofs` of a C1 output: the sector-size variant name and one list of challenge
/// proofs per partition.
#[derive(Debug, Clone)]
pub struct VanillaProofs {
    /// Upstream's variant name, e.g. `StackedDrg32GiBV1`.
    pub variant: String,
    pub partitions: Vec<Vec<StackedProof>>,
}

impl Serialize for VanillaProofs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(&self.variant, &self.partitions)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for VanillaProofs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let map = std::collections::BTreeMap::<String, Vec<Vec<StackedProof>>>::deserialize(d)?;
        let mut entries = map.into_iter();
        match (entries.next(), entries.next()) {
            (Some((variant, partitions)), None) => Ok(VanillaProofs {
                variant,
                partitions,
            }),
            _ => Err(D::Error::custom(
                "expected exactly one sector-size variant such as \"StackedDrg2KiBV1\"",
            )),
        }
    }
}

/// Reads a canonical little-endian field element.
pub(crate) fn element(bytes: &Bytes) -> Result<Fr, String> {
    Option::from(Fr::from_repr(*bytes))
        .ok_or_else(|| format!("0x{} is not a canonical field element", hex(bytes)))
}

fn hex(bytes: &Bytes) -> String {
    bytes.iter().rev().map(|b| format!("{b:02x}")).collect()
}

/// Which challenge proof a check runs on.
#[derive(Clone, Copy)]
struct At {
    partition: usize,
    challenge: usize,
}

impl At {
    fn err(self, field: &str, reason: impl Into<String>) -> VanillaError {
        VanillaError {
            at: format!(
                "partition {}, challenge {}, {field}",
                self.partition, self.challenge
            ),
            reason: reason.into(),
        }
    }
}

/// A Merkle path of `levels` levels in a tree of this shape, to the leaf at `leaf`, checked and
/// converted.
fn path(
    proof: &MerkleProof,
    shape: TreeShape,
    levels: usize,
    leaf: u64,
    at: At,
    field: &str,
) -> Result<Vec<PathElement<Fr>>, VanillaError> {
    checked_path(proof, shape, levels, leaf).map_err(|r| at.err(field, r))
}

/// [`path`] with the reason alone, for callers that name the place themselves.
pub(crate) fn checked_path(
    proof: &MerkleProof,
    shape: TreeShape,
    levels: usize,
    leaf: u64,
) -> Result<Vec<PathElement<Fr>>, String> {
    let got = proof.levels(shape)?;
    if got.len() != levels {
        return Err(format!(
            "the path has {} levels, this sector's tree has {levels}",
            got.len()
        ));
    }
    let elements = got
        .iter()
        .enumerate()
        .map(|(level, (e, arity))| {
            if e.hashes.len() + 1 != *arity || e.index >= *arity {
                return Err(format!(
                    "level {level}: {} siblings and index {}, the level's arity is {arity}",
                    e.hashes.len(),
                    e.index
                ));
            }
            let siblings = e
                .hashes
                .iter()
                .map(|h| element(h).map(Some))
                .collect::<Result<_, _>>()
                .map_err(|r| format!("level {level}: {r}"))?;
            Ok(PathElement {
                siblings,
                index: Some(e.index),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Each index is below its arity now, so this cannot overflow: the tree has < 2^64 leaves.
    let (index, _) = got.iter().fold((0u64, 1u64), |(index, below), (e, arity)| {
        (index + e.index as u64 * below, below * *arity as u64)
    });
    if index != leaf {
        return Err(format!("the path leads to node {index}, not {leaf}"));
    }
    Ok(elements)
}

fn column(
    proof: &ColumnProof,
    shape: &StackedShape,
    at: At,
    field: &str,
) -> Result<ColumnOpening, VanillaError> {
    let rows = &proof.column.rows;
    if rows.len() != shape.layers {
        return Err(at.err(
            field,
            format!(
                "column has {} rows, the sector has {} layers",
                rows.len(),
                shape.layers
            ),
        ));
    }
    let rows = rows
        .iter()
        .map(|r| element(r).map(Some))
        .collect::<Result<_, _>>()
        .map_err(|r| at.err(field, r))?;
    Ok(ColumnOpening {
        rows,
        path: path(
            &proof.inclusion_proof,
            shape.tree,
            shape.tree_levels(),
            u64::from(proof.column.index),
            at,
            &format!("{field}.inclusion_proof"),
        )?,
    })
}

/// The roots every challenge of a partition must share: `comm_r_last` and `comm_c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartitionRoots {
    pub comm_r_last: Fr,
    pub comm_c: Fr,
}

impl StackedProof {
    /// The challenged node, checked to be the same in every labeling proof, the encoding proof
    /// and the `c_x` column, with one labeling proof per layer of `TOTAL_PARENTS` parents.
    fn challenge(&self, shape: &StackedShape, at: At) -> Result<u64, VanillaError> {
        let labels = &self.labeling_proofs;
        if labels.len() != shape.layers {
            return Err(at.err(
                "labeling_proofs",
                format!(
                    "{} labeling proofs, the sector has {} layers",
                    labels.len(),
                    shape.layers
                ),
            ));
        }
        let node = labels[0].node;
        if node >= shape.nodes as u64 {
            return Err(at.err(
                "labeling_proofs[0].node",
                format!(
                    "challenge {node} is outside the sector's {} nodes",
                    shape.nodes
                ),
            ));
        }
        let layers = labels.iter().chain([&self.encoding_proof]);
        for (i, l) in layers.enumerate() {
            let (field, layer) = match i {
                i if i < shape.layers => (format!("labeling_proofs[{i}]"), i as u32 + 1),
                _ => ("encoding_proof".to_string(), shape.layers as u32),
            };
            let wrong = if l.node != node {
                Some(format!("node {}, the challenge is {node}", l.node))
            } else if l.layer_index != layer {
                Some(format!("layer_index {}, expected {layer}", l.layer_index))
            } else if l.parents.len() != StackedShape::TOTAL_PARENTS {
                Some(format!(
                    "{} parents, expected {}",
                    l.parents.len(),
                    StackedShape::TOTAL_PARENTS
                ))
            } else {
                None
            };
            if let Some(reason) = wrong {
                return Err(at.err(&field, reason));
            }
        }
        let c_x = self.replica_column_proofs.c_x.column.index;
        if u64::from(c_x) != node {
            return Err(at.err(
                "c_x.column.index",
                format!("column {c_x}, the challenge is {node}"),
            ));
        }
        Ok(node)
    }

    /// Checks this challenge's proof against `shape` and converts it for the circuit.
    pub fn to_circuit(
        &self,
        shape: &StackedShape,
        partition: usize,
        challenge: usize,
    ) -> Result<(ChallengeProof, PartitionRoots), VanillaError> {
        let at = At {
            partition,
            challenge,
        };
        let cols = &self.replica_column_proofs;
        let openings = |name: &str, list: &[ColumnProof], want: usize| {
            if list.len() != want {
                return Err(at.err(name, format!("{} parents, expected {want}", list.len())));
            }
            list.iter()
                .enumerate()
                .map(|(i, p)| column(p, shape, at, &format!("{name}[{i}]")))
                .collect::<Result<Vec<_>, _>>()
        };
        let node = self.challenge(shape, at)?;
        let root = |proof: &MerkleProof, name| element(proof.root()).map_err(|r| at.err(name, r));
        let roots = PartitionRoots {
            comm_r_last: root(&self.comm_r_last_proof, "comm_r_last_proof.root")?,
            comm_c: root(&cols.c_x.inclusion_proof, "c_x.inclusion_proof.root")?,
        };
        let tree_path = |proof, name| path(proof, shape.tree, shape.tree_levels(), node, at, name);
        let proof = ChallengeProof {
            challenge: Some(node),
            data_leaf: Some(
                element(self.comm_d_proofs.leaf()).map_err(|r| at.err("comm_d_proofs.leaf", r))?,
            ),
            comm_d_path: path(
                &self.comm_d_proofs,
                StackedShape::COMM_D_TREE,
                shape.comm_d_levels(),
                node,
                at,
                "comm_d_proofs",
            )?,
            drg_parents: openings("drg_parents", &cols.drg_parents, shape.drg_parents)?,
            exp_parents: openings("exp_parents", &cols.exp_parents, shape.exp_parents)?,
            comm_r_last_path: tree_path(&self.comm_r_last_proof, "comm_r_last_proof")?,
            comm_c_path: tree_path(&cols.c_x.inclusion_proof, "c_x.inclusion_proof")?,
        };
        Ok((proof, roots))
    }
}

/// Random but well-formed vanilla proofs: the right counts, depths and arities, challenges
/// derived from the seed and parents from the graph, random field elements everywhere else.
/// They pass every check here but do not satisfy the circuit: for benchmarks, and for format
/// tests against upstream's parser at sizes no test can seal (32 GiB, 64 GiB).
pub mod random {
    use ff::Field;
    use rand_core::RngCore;

    use super::*;
    use crate::porep::{SealShape, SectorIds};

    fn element(rng: &mut impl RngCore) -> Bytes {
        Fr::random(rng).to_repr()
    }

    /// A Merkle proof to leaf `leaf` in a tree with per-level `arities` and this shape.
    pub(crate) fn merkle(
        shape: TreeShape,
        arities: &[usize],
        leaf: u64,
        rng: &mut impl RngCore,
    ) -> MerkleProof {
        let mut rest = leaf;
        let levels: Vec<Element> = arities
            .iter()
            .map(|&a| {
                let index = (rest % a as u64) as usize;
                rest /= a as u64;
                Element {
                    hashes: (1..a).map(|_| element(rng)).collect(),
                    index,
                }
            })
            .collect();
        from_levels(shape, levels, element(rng), element(rng))
    }

    /// A Merkle proof of `leaf` under `root` with these levels (from the leaf up), split into
    /// the parts of a tree of this shape.
    pub(crate) fn from_levels(
        shape: TreeShape,
        mut levels: Vec<Element>,
        root: Bytes,
        leaf: Bytes,
    ) -> MerkleProof {
        let n = levels.len();
        let mut part = |k: usize| Path {
            path: levels.drain(..k).collect(),
        };
        let data = match (shape.sub > 0, shape.top > 0) {
            (false, _) => ProofData::Single(Single {
                root,
                leaf,
                path: part(n),
            }),
            (true, false) => ProofData::Sub(Sub {
                base_proof: part(n - 1),
                sub_proof: part(1),
                root,
                leaf,
            }),
            (true, true) => ProofData::Top(Top {
                base_proof: part(n - 2),
                sub_proof: part(1),
                top_proof: part(1),
                root,
                leaf,
            }),
        };
        MerkleProof { data }
    }

    fn labeling(layer: u32, node: u64, rng: &mut impl RngCore) -> LabelingProof {
        LabelingProof {
            parents: (0..StackedShape::TOTAL_PARENTS)
                .map(|_| element(rng))
                .collect(),
            layer_index: layer,
            node,
        }
    }

    /// One partition's proofs for `shape`'s proof type and these sector ids.
    pub fn partition(
        shape: &SealShape,
        ids: &SectorIds,
        k: usize,
        rng: &mut impl RngCore,
    ) -> Vec<StackedProof> {
        let stacked = shape.stacked();
        let graph = shape.graph();
        let tree = stacked.tree_arities();
        let binary = vec![2; stacked.comm_d_levels()];
        let (comm_c, comm_r_last) = (element(rng), element(rng));
        let column = |node: u32, root: Option<Bytes>, rng: &mut _| {
            let mut inclusion_proof = merkle(stacked.tree, &tree, u64::from(node), rng);
            if let Some(root) = root {
                set_root(&mut inclusion_proof, root);
            }
            ColumnProof {
                column: Column {
                    index: node,
                    rows: (0..stacked.layers).map(|_| element(rng)).collect(),
                    _marker: None,
                },
                inclusion_proof,
            }
        };
        shape
            .challenges(ids, k)
            .into_iter()
            .map(|c| {
                let node = c as u32;
                let mut comm_r_last_proof = merkle(stacked.tree, &tree, c, rng);
                set_root(&mut comm_r_last_proof, comm_r_last);
                StackedProof {
                    comm_d_proofs: merkle(StackedShape::COMM_D_TREE, &binary, c, rng),
                    comm_r_last_proof,
                    replica_column_proofs: ReplicaColumnProofs {
                        c_x: column(node, Some(comm_c), rng),
                        drg_parents: graph
                            .drg_parents(node)
                            .iter()
                            .map(|&p| column(p, None, rng))
                            .collect(),
                        exp_parents: graph
                            .exp_parents(node)
                            .iter()
                            .map(|&p| column(p, None, rng))
                            .collect(),
                    },
                    labeling_proofs: (1..=stacked.layers as u32)
                        .map(|l| labeling(l, c, rng))
                        .collect(),
                    encoding_proof: labeling(stacked.layers as u32, c, rng),
                }
            })
            .collect()
    }

    pub(crate) fn set_root(proof: &mut MerkleProof, root: Bytes) {
        match &mut proof.data {
            ProofData::Single(p) => p.root = root,
            ProofData::Sub(p) => p.root = root,
            ProofData::Top(p) => p.root = root,
        }
    }

    /// Every partition's proofs, under upstream's variant name for the sector size.
    pub fn proofs(shape: &SealShape, ids: &SectorIds, rng: &mut impl RngCore) -> VanillaProofs {
        VanillaProofs {
            variant: variant_name(shape.sector_size()),
            partitions: (0..shape.partitions())
                .map(|k| partition(shape, ids, k, rng))
                .collect(),
        }
    }
}

/// Upstream's `VanillaSealProof` variant name for a sector size, e.g. `StackedDrg2KiBV1`.
pub fn variant_name(sector_size: u64) -> String {
    let size = match sector_size {
        s if s < 1 << 20 => format!("{}KiB", s >> 10),
        s if s < 1 << 30 => format!("{}MiB", s >> 20),
        s => format!("{}GiB", s >> 30),
    };
    format!("StackedDrg{size}V1")
}

/// The root `leaf` hashes up to along `path` (levels with every sibling and index known), by
/// the node hashes of `hasher`; `None` where a value is missing or an arity has no hash.
pub(crate) fn path_root<H: TreeHash<Fr> + ?Sized>(
    hasher: &H,
    leaf: Fr,
    path: &[PathElement<Fr>],
) -> Option<Fr> {
    path.iter().try_fold(leaf, |cur, e| {
        let index = e.index?;
        let mut children: Vec<Fr> = e.siblings.iter().copied().collect::<Option<_>>()?;
        children.insert(index, cur);
        hasher.native(&mut Count(0), &children).ok()
    })
}
