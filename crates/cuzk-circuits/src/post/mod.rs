//! WindowPoSt and WinningPoSt (FallbackPoSt) without upstream crates: the request as Curio
//! sends it ([`PostRequest`]), the proof types ([`proof_type`]), the vanilla proofs
//! ([`vanilla`]), the challenges, the circuit ([`circuit`]) and its native witness
//! ([`witness`]).
//!
//! [`PostPartition::new`] checks a whole request before any proving: the proof type, the
//! randomness, the sector count, and for every sector that comm_r is Poseidon(comm_c,
//! comm_r_last), that each inclusion proof opens the leaf the randomness challenges and that
//! its path hashes up to comm_r_last. What passes proves and verifies.

pub mod circuit;
pub mod proof_type;
pub mod random;
pub mod vanilla;
pub mod witness;

use blstrs::Scalar as Fr;
use cuzk_gadgets::por::PathElement;
use cuzk_groth16::assignment::Witness;
use rayon::prelude::*;

use crate::error::{field, vanilla};
use crate::payload::{Decoder, Encoder};
use crate::porep::{PartitionColumns, PartitionWitness, Synthesis};
use crate::shape::CircuitShape;
use crate::stacked::StackedShape;
use crate::vanilla::{checked_path, element, path_root};
pub use circuit::{PostCircuit, SectorSlot};
pub use proof_type::{PostApi, PostType, RegisteredPostProof};
pub use vanilla::{ReadError, SectorProof};

/// A PoSt request refused, or a proof that could not be made, with the field at fault.
pub type PostError = crate::error::RequestError;

/// What a PoSt proof type fixes about its circuit.
#[derive(Clone, Copy, Debug)]
pub struct PostShape {
    proof: RegisteredPostProof,
    /// The sectors' TreeR: the same tree their seal built, so PoRep's shape describes it.
    pub(crate) sector: &'static StackedShape,
}

impl PostShape {
    pub fn new(proof: RegisteredPostProof) -> Self {
        PostShape {
            proof,
            sector: StackedShape::for_sector_size(proof.sector_size())
                .expect("every PoSt sector size has a sealed-sector shape"),
        }
    }

    pub fn registered_proof(&self) -> RegisteredPostProof {
        self.proof
    }

    /// The circuit's sector slots and challenges per slot.
    pub fn slots(&self) -> (usize, usize) {
        self.proof.slots()
    }

    /// Levels of an inclusion path in the comm_r_last tree.
    pub fn tree_levels(&self) -> usize {
        self.sector.tree_levels()
    }
}

impl CircuitShape for PostShape {
    type Circuit<'a> = PostCircuit<'a>;
    type Error = PostError;

    fn blank(&self) -> PostCircuit<'_> {
        let (slots, challenges) = self.slots();
        let path: Vec<PathElement<Fr>> = self
            .sector
            .tree_arities()
            .into_iter()
            .map(|a| PathElement {
                siblings: vec![None; a - 1],
                index: None,
            })
            .collect();
        let slot = SectorSlot {
            comm_r: None,
            comm_c: None,
            comm_r_last: None,
            leaves: vec![None; challenges],
            paths: vec![path; challenges],
        };
        PostCircuit {
            shape: self,
            slots: vec![slot; slots],
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

/// A PoSt request as Curio sends it (`SubmitProofRequest` of kind WINDOW_POST_PARTITION or
/// WINNING_POST), and the engine payload it travels in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostRequest {
    /// The FFI enum number.
    pub registered_proof: u64,
    pub randomness: Vec<u8>,
    pub miner_id: u64,
    /// The WindowPoSt partition (0 for WinningPoSt).
    pub partition_index: u32,
    /// One bincode `FallbackPoStSectorProof` per sector.
    pub vanilla_proofs: Vec<Vec<u8>>,
}

const MAGIC: &[u8; 8] = b"cuzkpst1";

impl PostRequest {
    /// The engine payload (module `payload`): the fixed fields, then the vanilla proofs.
    pub fn encode(&self) -> Vec<u8> {
        let proofs: usize = self.vanilla_proofs.iter().map(|p| 4 + p.len()).sum();
        Encoder::new(MAGIC, 64 + self.randomness.len() + proofs)
            .u64(self.registered_proof)
            .bytes(&self.randomness)
            .u64(self.miner_id)
            .u32(self.partition_index)
            .list(&self.vanilla_proofs)
            .finish()
    }

    /// Reads what [`PostRequest::encode`] wrote.
    pub fn decode(bytes: &[u8]) -> Result<Self, PostError> {
        let read = || -> Result<Self, String> {
            let mut d = Decoder::new(bytes, MAGIC, "PoSt")?;
            let req = PostRequest {
                registered_proof: d.u64()?,
                randomness: d.bytes()?,
                miner_id: d.u64()?,
                partition_index: d.u32()?,
                vanilla_proofs: d.list()?,
            };
            d.finish()?;
            Ok(req)
        };
        read().map_err(|r| field("payload", r))
    }
}

/// The prover id Curio derives from a miner id: the LEB128 bytes of the ID address payload,
/// zero-padded to 32 bytes. The PoSt circuit does not take it (the chain picks the WinningPoSt
/// sector with it, before the request is made); upstream's provers only check that it is a
/// field element, which every such encoding is.
pub fn prover_id(miner_id: u64) -> [u8; 32] {
    let mut id = [0u8; 32];
    let (mut v, mut i) = (miner_id, 0);
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        id[i] = if v == 0 { byte } else { byte | 0x80 };
        i += 1;
        if v == 0 {
            return id;
        }
    }
}

/// Leaf `index` of a sector's PoSt challenges: SHA-256(randomness ‖ sector id ‖ index), its
/// first 8 bytes little-endian, reduced to the sector's nodes.
pub fn challenge(randomness: &[u8; 32], sector_id: u64, index: u64, nodes: u64) -> u64 {
    use sha2::{Digest, Sha256};
    let hash = Sha256::new()
        .chain_update(randomness)
        .chain_update(sector_id.to_le_bytes())
        .chain_update(index.to_le_bytes())
        .finalize();
    u64::from_le_bytes(hash[..8].try_into().expect("8 bytes")) % nodes
}

/// A checked PoSt request: one circuit's slots with their values, and its public inputs.
#[derive(Debug)]
pub struct PostPartition {
    shape: PostShape,
    /// Exactly `shape.slots()` slots, padded.
    slots: Vec<SectorSlot>,
    public_inputs: Vec<Fr>,
}

impl PostPartition {
    /// Parses and checks `req` (see the module docs); every refusal names its field.
    pub fn new(req: &PostRequest) -> Result<Self, PostError> {
        let proof = RegisteredPostProof::parse(req.registered_proof)
            .map_err(|r| field("registered_proof", r))?;
        let randomness: [u8; 32] = req.randomness.as_slice().try_into().map_err(|_| {
            field(
                "randomness",
                format!("{} bytes, expected 32", req.randomness.len()),
            )
        })?;
        element(&randomness).map_err(|r| field("randomness", r))?;
        let sectors = proof.sectors();
        let n = req.vanilla_proofs.len();
        if n == 0 || n > sectors {
            return Err(field(
                "vanilla_proofs",
                format!("{n} sector proofs; a {proof:?} proof takes 1 to {sectors}"),
            ));
        }
        if proof.post_type() == PostType::Winning && req.partition_index != 0 {
            return Err(field("partition_index", "WinningPoSt has one partition, 0"));
        }
        let shape = PostShape::new(proof);
        let checked = req
            .vanilla_proofs
            .par_iter()
            .enumerate()
            .map(|(i, bytes)| {
                let p = SectorProof::parse(bytes).map_err(|e| vanilla(i, (e.field, e.reason)))?;
                let challenges =
                    sector_challenges(&shape, &randomness, req.partition_index, i, p.sector_id);
                check_sector(&shape, &p, &challenges).map_err(|r| vanilla(i, r))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let (slot_count, per_slot) = shape.slots();
        let mut slots = Vec::with_capacity(slot_count);
        for s in checked {
            if per_slot == s.leaves.len() {
                slots.push(s);
            } else {
                // WinningPoSt: one slot per challenge of its one sector.
                for (leaf, path) in s.leaves.into_iter().zip(s.paths) {
                    slots.push(SectorSlot {
                        comm_r: s.comm_r,
                        comm_c: s.comm_c,
                        comm_r_last: s.comm_r_last,
                        leaves: vec![leaf],
                        paths: vec![path],
                    });
                }
            }
        }
        let mut public_inputs = Vec::with_capacity(slot_count * (1 + per_slot));
        for s in &slots {
            public_inputs.push(s.comm_r.expect("checked"));
            public_inputs.extend(s.paths.iter().map(|p| Fr::from(leaf_index(&shape, p))));
        }
        // A short partition repeats its last sector, as upstream does.
        let last = slots.last().expect("at least one sector").clone();
        let block = public_inputs[public_inputs.len() - (1 + per_slot)..].to_vec();
        while slots.len() < slot_count {
            slots.push(last.clone());
            public_inputs.extend_from_slice(&block);
        }
        Ok(PostPartition {
            shape,
            slots,
            public_inputs,
        })
    }

    pub fn shape(&self) -> &PostShape {
        &self.shape
    }

    /// What the proof verifies against, in the circuit's input order.
    pub fn public_inputs(&self) -> &[Fr] {
        &self.public_inputs
    }

    /// The circuit with this request's values.
    pub fn circuit(&self) -> PostCircuit<'_> {
        PostCircuit {
            shape: &self.shape,
            slots: self.slots.clone(),
        }
    }

    /// The witness and public inputs, by full synthesis, witness-only synthesis with the PCE
    /// or the native generator with the PCE.
    pub fn witness(&self, synthesis: Synthesis<'_>) -> Result<PartitionWitness, PostError> {
        let witness = match synthesis {
            Synthesis::Full => Witness::synthesize(self.circuit())?,
            Synthesis::Pce(pce) => pce.witness(self.circuit())?,
            Synthesis::Native(pce) => {
                let (input, aux) = self.circuit().native_witness()?;
                pce.evaluate(input, aux)?
            }
        };
        Ok(PartitionWitness {
            witness,
            public_inputs: self.public_inputs.clone(),
        })
    }

    /// The native generator's columns, for backends that evaluate the PCE themselves.
    pub fn columns(&self) -> Result<PartitionColumns, PostError> {
        let (input, aux) = self.circuit().native_witness()?;
        Ok(PartitionColumns {
            input,
            aux,
            public_inputs: self.public_inputs.clone(),
        })
    }
}

/// The leaf index a checked path leads to.
fn leaf_index(shape: &PostShape, path: &[PathElement<Fr>]) -> u64 {
    let arities = shape.sector.tree_arities();
    path.iter().zip(arities).rev().fold(0u64, |i, (e, a)| {
        i * a as u64 + e.index.expect("checked") as u64
    })
}

/// The leaves the randomness challenges in vanilla sector `i` of partition `partition`.
pub(crate) fn sector_challenges(
    shape: &PostShape,
    randomness: &[u8; 32],
    partition: u32,
    i: usize,
    sector_id: u64,
) -> Vec<u64> {
    let proof = shape.proof;
    let nodes = proof.sector_size() / 32;
    let (slots, per_slot) = proof.slots();
    let index = |slot: usize, n: usize| -> u64 {
        match proof.api() {
            PostApi::V1_2 => n as u64,
            PostApi::V1_0 => ((partition as usize * slots + slot) * per_slot + n) as u64,
        }
    };
    match proof.post_type() {
        PostType::Window => (0..per_slot).map(|n| index(i, n)).collect::<Vec<_>>(),
        PostType::Winning => (0..slots).map(|slot| index(slot, 0)).collect(),
    }
    .into_iter()
    .map(|j| challenge(randomness, sector_id, j, nodes))
    .collect()
}

/// One sector's vanilla proof checked against its challenges and commitments, as a slot.
fn check_sector(
    shape: &PostShape,
    p: &SectorProof,
    challenges: &[u64],
) -> Result<SectorSlot, (String, String)> {
    let err = |f: &str, r: String| (f.to_string(), r);
    let [o] = p.openings.as_slice() else {
        return Err(err(
            "vanilla_proof.sectors",
            format!("{} entries, expected 1", p.openings.len()),
        ));
    };
    let comm_r = element(&p.comm_r).map_err(|r| err("comm_r", r))?;
    let comm_c = element(&o.comm_c).map_err(|r| err("vanilla_proof.sectors[0].comm_c", r))?;
    let comm_r_last =
        element(&o.comm_r_last).map_err(|r| err("vanilla_proof.sectors[0].comm_r_last", r))?;
    let sector = shape.sector;
    if sector.pair.hash(&[comm_c, comm_r_last]).ok() != Some(comm_r) {
        return Err(err(
            "comm_r",
            "is not Poseidon(comm_c, comm_r_last) of this sector's proof".into(),
        ));
    }
    if o.inclusion_proofs.len() != challenges.len() {
        return Err(err(
            "vanilla_proof.sectors[0].inclusion_proofs",
            format!(
                "{} proofs, the sector has {} challenges",
                o.inclusion_proofs.len(),
                challenges.len()
            ),
        ));
    }
    let levels = sector.tree_levels();
    let mut leaves = Vec::with_capacity(challenges.len());
    let mut paths = Vec::with_capacity(challenges.len());
    for (n, (proof, &c)) in o.inclusion_proofs.iter().zip(challenges).enumerate() {
        let at = format!("vanilla_proof.sectors[0].inclusion_proofs[{n}]");
        let path = checked_path(proof, sector.tree, levels, c)
            .map_err(|r| (at.clone(), format!("challenge {n} (leaf {c}): {r}")))?;
        let leaf = element(proof.leaf()).map_err(|r| (format!("{at}.leaf"), r))?;
        let root = element(proof.root()).map_err(|r| (format!("{at}.root"), r))?;
        if root != comm_r_last {
            return Err((
                format!("{at}.root"),
                "is not the sector's comm_r_last".into(),
            ));
        }
        if path_root(&sector.tree_hashes[..], leaf, &path) != Some(comm_r_last) {
            return Err((
                at,
                "the path does not hash up to comm_r_last (so not to comm_r)".into(),
            ));
        }
        leaves.push(Some(leaf));
        paths.push(path);
    }
    Ok(SectorSlot {
        comm_r: Some(comm_r),
        comm_c: Some(comm_c),
        comm_r_last: Some(comm_r_last),
        leaves,
        paths,
    })
}
