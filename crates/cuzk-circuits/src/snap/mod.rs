//! SnapDeals (EmptySectorUpdate) without upstream crates: the request as Curio sends it
//! ([`SnapRequest`]), the proof types ([`proof_type`]), the vanilla partition proofs
//! ([`vanilla`]), the challenges, the circuit ([`circuit`]) and its native witness
//! ([`witness`]).
//!
//! [`SnapUpdate::new`] checks a whole request before any proving: the proof type, the three
//! commitments, the partition count, and per partition that comm_r_old and comm_r_new are
//! Poseidon(comm_c, TreeR root), that each challenge's three openings are at the node the
//! challenges derived from comm_r_new pick and hash up to their roots, that the new replica
//! leaf encodes the old one and the data, and that the apex leaves reach comm_d_new. What
//! passes proves and verifies.

pub mod circuit;
pub mod proof_type;
pub mod random;
pub mod vanilla;
pub mod witness;

use std::sync::OnceLock;

use blstrs::Scalar as Fr;
use cuzk_gadgets::por::{PathElement, Sha256Hash, TreeHash, TreeShape};
use cuzk_gadgets::poseidon::PoseidonConstants;
use cuzk_groth16::assignment::Witness;
use ff::{PrimeField, PrimeFieldBits};
use rayon::prelude::*;

use crate::error::{field, vanilla};
use crate::payload::{Decoder, Encoder};
use crate::porep::{PartitionColumns, PartitionWitness, Synthesis};
use crate::shape::CircuitShape;
use crate::stacked::StackedShape;
use crate::vanilla::{checked_path, element, path_root, MerkleProof};
pub use circuit::{ChallengeOpening, UpdateCircuit};
pub use proof_type::RegisteredUpdateProof;
pub use vanilla::PartitionProof;

/// A SnapDeals request refused, or a proof that could not be made, with the field at fault.
pub type SnapError = crate::error::RequestError;

/// Poseidon of two elements under neptune's custom domain tag 1: SnapDeals' randomness hash
/// (phi, rho and the challenge digests).
fn gen_randomness() -> &'static PoseidonConstants<Fr> {
    static GEN: OnceLock<PoseidonConstants<Fr>> = OnceLock::new();
    GEN.get_or_init(|| PoseidonConstants::custom(2, 1).expect("arity 2, tag 1 is supported"))
}

/// What an update proof type fixes about its circuit.
#[derive(Clone, Copy, Debug)]
pub struct SnapShape {
    proof: RegisteredUpdateProof,
    /// The sector's TreeR (old and new replicas share the sealed sector's shape).
    pub(crate) sector: &'static StackedShape,
    pub(crate) gen: &'static PoseidonConstants<Fr>,
}

impl SnapShape {
    pub fn new(proof: RegisteredUpdateProof) -> Self {
        SnapShape {
            proof,
            sector: StackedShape::for_sector_size(proof.sector_size())
                .expect("every update sector size has a sealed-sector shape"),
            gen: gen_randomness(),
        }
    }

    pub fn registered_proof(&self) -> RegisteredUpdateProof {
        self.proof
    }

    pub fn partitions(&self) -> usize {
        self.proof.partitions()
    }

    pub fn challenges(&self) -> usize {
        self.proof.challenges()
    }

    pub fn apex_leaves(&self) -> usize {
        self.proof.apex_leaves()
    }

    /// Bits of a challenge: TreeD's height.
    pub fn challenge_bits(&self) -> usize {
        self.proof.nodes().trailing_zeros() as usize
    }

    /// Bits of the partition index, the top bits of each of its challenges.
    pub fn partition_bits(&self) -> usize {
        self.partitions().trailing_zeros() as usize
    }

    /// Height of each partition's apex tree.
    pub fn apex_bits(&self) -> usize {
        self.apex_leaves().trailing_zeros() as usize
    }

    /// Random bits of a challenge (the rest are the partition's).
    pub(crate) fn random_bits(&self) -> usize {
        self.challenge_bits() - self.partition_bits()
    }

    /// TreeD levels from a leaf up to the apex-leaf row.
    pub fn apex_depth(&self) -> usize {
        self.random_bits() - self.apex_bits()
    }

    /// Challenges taken from one digest, and digests per partition.
    pub(crate) fn digests(&self) -> (usize, usize) {
        let per_digest = Fr::CAPACITY as usize / self.random_bits();
        (per_digest, self.challenges().div_ceil(per_digest))
    }

    /// The leaves partition `k` challenges: each digest Poseidon_gen(comm_r_new, digest index)
    /// cut into random bits, with `k` above them (so every challenge lies in the partition's
    /// slice of the sector).
    pub fn challenge_nodes(&self, comm_r_new: Fr, k: usize) -> Vec<u64> {
        let (per_digest, digests) = self.digests();
        let bits = self.random_bits();
        let mut out = Vec::with_capacity(self.challenges());
        for j in 0..digests {
            let index = Fr::from((k * digests + j) as u64);
            let digest = self
                .gen
                .hash(&[comm_r_new, index])
                .expect("two inputs")
                .to_le_bits();
            let take = (self.challenges() - out.len()).min(per_digest);
            out.extend((0..take).map(|i| {
                let random = (0..bits).fold(0u64, |c, b| c | u64::from(digest[i * bits + b]) << b);
                random | (k as u64) << bits
            }));
        }
        out
    }

    /// phi = Poseidon_gen(comm_d_new, comm_r_old): the seed of every rho.
    pub fn phi(&self, comm_d_new: Fr, comm_r_old: Fr) -> Fr {
        self.gen
            .hash(&[comm_d_new, comm_r_old])
            .expect("two inputs")
    }

    /// rho of a node: Poseidon_gen(phi, its high `h` bits); new label = old + data · rho.
    pub fn rho(&self, phi: Fr, node: u64) -> Fr {
        let high = node >> (self.challenge_bits() - self.proof.h());
        self.gen.hash(&[phi, Fr::from(high)]).expect("two inputs")
    }

    /// Partition `k`'s public inputs, in the circuit's order.
    pub fn public_inputs(&self, k: usize, comms: &Comms) -> Vec<Fr> {
        vec![
            Fr::from(self.k_and_h_select(k)),
            comms.comm_r_old,
            comms.comm_d_new,
            comms.comm_r_new,
        ]
    }

    fn k_and_h_select(&self, k: usize) -> u64 {
        k as u64 | self.proof.h_select() << self.partition_bits()
    }

    fn tree_r_levels(&self) -> Vec<Vec<Option<Fr>>> {
        self.sector
            .tree_arities()
            .into_iter()
            .map(|a| vec![None; a - 1])
            .collect()
    }
}

impl CircuitShape for SnapShape {
    type Circuit<'a> = UpdateCircuit;
    type Error = SnapError;

    fn blank(&self) -> UpdateCircuit {
        let path_r = self.tree_r_levels();
        UpdateCircuit {
            shape: *self,
            k_and_h_select: None,
            comm_r_old: None,
            comm_d_new: None,
            comm_r_new: None,
            comm_c: None,
            root_r_old: None,
            root_r_new: None,
            apex_leaves: vec![None; self.apex_leaves()],
            partition_path: vec![None; self.partition_bits()],
            challenges: vec![
                ChallengeOpening {
                    leaf_r_old: None,
                    leaf_d_new: None,
                    path_r_old: path_r.clone(),
                    path_r_new: path_r,
                    path_to_apex: vec![None; self.apex_depth()],
                };
                self.challenges()
            ],
        }
    }

    fn sector_size(&self) -> u64 {
        self.proof.sector_size()
    }

    fn circuit_identifier(&self) -> String {
        self.proof.circuit_identifier()
    }

    fn circuit_id(&self) -> String {
        self.proof.circuit_id()
    }
}

/// The update's public commitments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comms {
    pub comm_r_old: Fr,
    pub comm_d_new: Fr,
    pub comm_r_new: Fr,
}

/// A SnapDeals request as Curio sends it (`SubmitProofRequest` of kind SNAP_DEALS_UPDATE), and
/// the engine payload it travels in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapRequest {
    /// The FFI enum number (0-4).
    pub registered_proof: u64,
    pub comm_r_old: Vec<u8>,
    pub comm_r_new: Vec<u8>,
    pub comm_d_new: Vec<u8>,
    /// One bincode `PartitionProof` per partition, in partition order.
    pub vanilla_proofs: Vec<Vec<u8>>,
}

const MAGIC: &[u8; 8] = b"cuzksnp1";

impl SnapRequest {
    /// The engine payload (module `payload`): the fixed fields, then the vanilla proofs.
    pub fn encode(&self) -> Vec<u8> {
        let proofs: usize = self.vanilla_proofs.iter().map(|p| 4 + p.len()).sum();
        Encoder::new(MAGIC, 128 + proofs)
            .u64(self.registered_proof)
            .bytes(&self.comm_r_old)
            .bytes(&self.comm_r_new)
            .bytes(&self.comm_d_new)
            .list(&self.vanilla_proofs)
            .finish()
    }

    /// Reads what [`SnapRequest::encode`] wrote.
    pub fn decode(bytes: &[u8]) -> Result<Self, SnapError> {
        let read = || -> Result<Self, String> {
            let mut d = Decoder::new(bytes, MAGIC, "SnapDeals")?;
            let req = SnapRequest {
                registered_proof: d.u64()?,
                comm_r_old: d.bytes()?,
                comm_r_new: d.bytes()?,
                comm_d_new: d.bytes()?,
                vanilla_proofs: d.list()?,
            };
            d.finish()?;
            Ok(req)
        };
        read().map_err(|r| field("payload", r))
    }
}

/// A 32-byte commitment field, canonical.
fn commitment(name: &str, bytes: &[u8]) -> Result<Fr, SnapError> {
    let bytes: [u8; 32] = bytes
        .try_into()
        .map_err(|_| field(name, format!("{} bytes, expected 32", bytes.len())))?;
    element(&bytes).map_err(|r| field(name, r))
}

/// A checked update: every partition's circuit values, ready to prove.
#[derive(Debug)]
pub struct SnapUpdate {
    shape: SnapShape,
    comms: Comms,
    partitions: Vec<UpdateCircuit>,
}

impl SnapUpdate {
    /// Parses and checks `req` (see the module docs); every refusal names its field.
    pub fn new(req: &SnapRequest) -> Result<Self, SnapError> {
        let proof = RegisteredUpdateProof::parse(req.registered_proof)
            .map_err(|r| field("registered_proof", r))?;
        let comms = Comms {
            comm_r_old: commitment("comm_r_old", &req.comm_r_old)?,
            comm_d_new: commitment("comm_d_new", &req.comm_d_new)?,
            comm_r_new: commitment("comm_r_new", &req.comm_r_new)?,
        };
        let shape = SnapShape::new(proof);
        if req.vanilla_proofs.len() != shape.partitions() {
            return Err(field(
                "vanilla_proofs",
                format!(
                    "{} partition proofs; a {proof:?} update has {}",
                    req.vanilla_proofs.len(),
                    shape.partitions()
                ),
            ));
        }
        let partitions = req
            .vanilla_proofs
            .par_iter()
            .enumerate()
            .map(|(k, bytes)| {
                let p =
                    PartitionProof::parse(bytes).map_err(|e| vanilla(k, (e.field, e.reason)))?;
                check_partition(&shape, &comms, k, &p).map_err(|r| vanilla(k, r))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SnapUpdate {
            shape,
            comms,
            partitions,
        })
    }

    pub fn shape(&self) -> &SnapShape {
        &self.shape
    }

    pub fn partitions(&self) -> usize {
        self.partitions.len()
    }

    /// Partition `k`'s public inputs.
    pub fn public_inputs(&self, k: usize) -> Vec<Fr> {
        self.shape.public_inputs(k, &self.comms)
    }

    /// Partition `k`'s circuit with its values.
    pub fn circuit(&self, k: usize) -> UpdateCircuit {
        self.partitions[k].clone()
    }

    /// Partition `k`'s witness and public inputs, by full synthesis, witness-only synthesis
    /// with the PCE or the native generator with the PCE.
    pub fn witness(
        &self,
        k: usize,
        synthesis: Synthesis<'_>,
    ) -> Result<PartitionWitness, SnapError> {
        let circuit = &self.partitions[k];
        let witness = match synthesis {
            Synthesis::Full => Witness::synthesize(circuit.clone())?,
            Synthesis::Pce(pce) => pce.witness(circuit.clone())?,
            Synthesis::Native(pce) => {
                let (input, aux) = circuit.native_witness()?;
                pce.evaluate(input, aux)?
            }
        };
        Ok(PartitionWitness {
            witness,
            public_inputs: self.public_inputs(k),
        })
    }

    /// Partition `k`'s native columns, for backends that evaluate the PCE themselves.
    pub fn columns(&self, k: usize) -> Result<PartitionColumns, SnapError> {
        let (input, aux) = self.partitions[k].native_witness()?;
        Ok(PartitionColumns {
            input,
            aux,
            public_inputs: self.public_inputs(k),
        })
    }
}

type Refusal = (String, String);

fn refuse(field: impl Into<String>, reason: impl Into<String>) -> Refusal {
    (field.into(), reason.into())
}

/// The siblings of each level of a checked path.
fn siblings(path: &[PathElement<Fr>]) -> Vec<Vec<Option<Fr>>> {
    path.iter().map(|e| e.siblings.clone()).collect()
}

/// Partition `k`'s vanilla proof checked against the commitments, as its circuit.
fn check_partition(
    shape: &SnapShape,
    comms: &Comms,
    k: usize,
    p: &PartitionProof,
) -> Result<UpdateCircuit, Refusal> {
    if p.apex_leaves.len() != shape.apex_leaves() {
        return Err(refuse(
            "apex_leafs",
            format!(
                "{} leaves, expected {}",
                p.apex_leaves.len(),
                shape.apex_leaves()
            ),
        ));
    }
    if p.challenges.len() != shape.challenges() {
        return Err(refuse(
            "challenge_proofs",
            format!(
                "{} proofs, expected {}",
                p.challenges.len(),
                shape.challenges()
            ),
        ));
    }
    let comm_c = element(&p.comm_c).map_err(|r| refuse("comm_c", r))?;
    let apex_leaves = p
        .apex_leaves
        .iter()
        .enumerate()
        .map(|(i, l)| element(l).map_err(|r| refuse(format!("apex_leafs[{i}]"), r)))
        .collect::<Result<Vec<_>, _>>()?;
    let first = &p.challenges[0];
    let root = |name: &str, proof: &MerkleProof, comm_r: Fr, which: &str| {
        let at = format!("challenge_proofs[0].{name}.root");
        let root = element(proof.root()).map_err(|r| refuse(&at, r))?;
        if shape.sector.pair.hash(&[comm_c, root]).ok() != Some(comm_r) {
            return Err(refuse(
                at,
                format!("Poseidon(comm_c, this root) is not {which}"),
            ));
        }
        Ok(root)
    };
    let root_r_old = root("proof_r_old", &first.r_old, comms.comm_r_old, "comm_r_old")?;
    let root_r_new = root("proof_r_new", &first.r_new, comms.comm_r_new, "comm_r_new")?;

    let phi = shape.phi(comms.comm_d_new, comms.comm_r_old);
    let nodes = shape.challenge_nodes(comms.comm_r_new, k);
    let mut partition_path = Vec::new();
    let mut challenges = Vec::with_capacity(nodes.len());
    for (i, (c, &node)) in p.challenges.iter().zip(&nodes).enumerate() {
        let at = |f: &str| format!("challenge_proofs[{i}].{f}");
        let tree_r = (shape.sector.tree, shape.sector.tree_levels());
        let tree_d = (StackedShape::COMM_D_TREE, shape.challenge_bits());
        let (leaf_r_old, path_r_old) = open(
            &c.r_old,
            tree_r,
            node,
            root_r_old,
            &shape.sector.tree_hashes[..],
        )
        .map_err(|r| refuse(at("proof_r_old"), r))?;
        let (leaf_r_new, path_r_new) = open(
            &c.r_new,
            tree_r,
            node,
            root_r_new,
            &shape.sector.tree_hashes[..],
        )
        .map_err(|r| refuse(at("proof_r_new"), r))?;
        let (leaf_d_new, path_d) = open(&c.d_new, tree_d, node, comms.comm_d_new, &Sha256Hash)
            .map_err(|r| refuse(at("proof_d_new"), r))?;
        if leaf_r_old + leaf_d_new * shape.rho(phi, node) != leaf_r_new {
            return Err(refuse(
                at("proof_r_new.leaf"),
                "is not the old replica leaf plus the data leaf times rho (comm_d_new, \
                 comm_r_old and the data do not match)",
            ));
        }
        let depth = shape.apex_depth();
        let apex = (node >> depth) as usize & (shape.apex_leaves() - 1);
        if path_root(&Sha256Hash, leaf_d_new, &path_d[..depth]) != Some(apex_leaves[apex]) {
            return Err(refuse(
                at("proof_d_new"),
                format!("does not pass through apex leaf {apex}"),
            ));
        }
        if i == 0 {
            partition_path = path_d[shape.challenge_bits() - shape.partition_bits()..].to_vec();
        }
        challenges.push(ChallengeOpening {
            leaf_r_old: Some(leaf_r_old),
            leaf_d_new: Some(leaf_d_new),
            path_r_old: siblings(&path_r_old),
            path_r_new: siblings(&path_r_new),
            path_to_apex: path_d[..depth].iter().map(|e| e.siblings[0]).collect(),
        });
    }

    // The apex tree over this partition's leaves, and its root up the partition path.
    let mut row = apex_leaves.clone();
    while row.len() > 1 {
        row = row.chunks(2).map(sha256_node).collect();
    }
    if path_root(&Sha256Hash, row[0], &partition_path) != Some(comms.comm_d_new) {
        return Err(refuse(
            "apex_leafs",
            "the apex tree's root does not reach comm_d_new along the partition path",
        ));
    }
    Ok(UpdateCircuit {
        shape: *shape,
        k_and_h_select: Some(shape.k_and_h_select(k)),
        comm_r_old: Some(comms.comm_r_old),
        comm_d_new: Some(comms.comm_d_new),
        comm_r_new: Some(comms.comm_r_new),
        comm_c: Some(comm_c),
        root_r_old: Some(root_r_old),
        root_r_new: Some(root_r_new),
        apex_leaves: apex_leaves.into_iter().map(Some).collect(),
        partition_path: partition_path.iter().map(|e| e.siblings[0]).collect(),
        challenges,
    })
}

/// One opening at `node` in a tree of `(shape, levels)`: its leaf and checked path, which must
/// hash up to `root`.
fn open<H: TreeHash<Fr> + ?Sized>(
    proof: &MerkleProof,
    (tree, levels): (TreeShape, usize),
    node: u64,
    root: Fr,
    hasher: &H,
) -> Result<(Fr, Vec<PathElement<Fr>>), String> {
    let path = checked_path(proof, tree, levels, node).map_err(|r| format!("node {node}: {r}"))?;
    let leaf = element(proof.leaf()).map_err(|r| format!("leaf: {r}"))?;
    if element(proof.root()).ok() != Some(root) || path_root(hasher, leaf, &path) != Some(root) {
        return Err(format!(
            "node {node}: the path does not hash up to its tree's root"
        ));
    }
    Ok((leaf, path))
}

/// Filecoin's SHA-256 node hash of two children.
fn sha256_node(pair: &[Fr]) -> Fr {
    Sha256Hash
        .native(&mut cuzk_gadgets::native::Count(0), pair)
        .expect("two children")
}
