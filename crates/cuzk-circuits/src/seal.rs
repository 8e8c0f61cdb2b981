//! A random sector, sealed sparsely: the C1 output of a sector no test can seal (32 GiB, 64 GiB),
//! whose vanilla proofs satisfy the circuit, so its proofs verify under a real key, upstream's
//! `verify_seal` included.
//!
//! What a real seal would compute everywhere is computed only where the proofs look:
//! - the data is random per aligned block of leaves ([`BlockTree`]), so comm_d comes first and
//!   any leaf opens; the replica id is then derived as upstream derives it, and the
//!   (interactive) challenges from it and the seed;
//! - every challenged node's labels are computed layer by layer from its parents' columns
//!   (a parent's column is random unless the parent is challenged too);
//! - comm_c and comm_r_last are [`SparseTree`]s over the columns and replica leaves the proofs
//!   open, random elsewhere; comm_r = Poseidon(comm_c, comm_r_last).
//!
//! Only the values off those paths differ from a real sector's, and no prover cost depends on
//! them. Synthetic PoRep is refused: its challenges depend on comm_r, which depends on them.

use std::collections::{BTreeMap, BTreeSet};

use blstrs::Scalar as Fr;
use cuzk_gadgets::native::Count;
use cuzk_gadgets::por::{Sha256Hash, TreeHash};
use ff::{Field, PrimeField};
use rand_core::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::porep::{SealShape, SectorIds};
use crate::registry::ChallengeKind;
use crate::sparse::{fr32, BlockTree, SparseTree};
use crate::stacked::StackedShape;
use crate::vanilla::{StackedProof, VanillaProofs};
use crate::{C1Input, PorepError, RegisteredSealProof};

/// What `verify_seal` takes beside the proof: upstream's `sector.json` in a fixture folder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectorInfo {
    pub registered_proof: RegisteredSealProof,
    pub prover_id: [u8; 32],
    pub sector_id: u64,
    pub ticket: [u8; 32],
    pub seed: [u8; 32],
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
}

/// Upstream's replica id: SHA-256 of the prover id, sector id (big-endian), ticket, comm_d and
/// PoRep id, read as a field element with its top two bits cleared.
pub fn replica_id(
    proof: RegisteredSealProof,
    prover_id: &[u8; 32],
    sector_id: u64,
    ticket: &[u8; 32],
    comm_d: &[u8; 32],
) -> [u8; 32] {
    let mut id: [u8; 32] = Sha256::new()
        .chain_update(prover_id)
        .chain_update(sector_id.to_be_bytes())
        .chain_update(ticket)
        .chain_update(comm_d)
        .chain_update(proof.porep_id())
        .finalize()
        .into();
    id[31] &= 0x3f;
    id
}

/// A node's label: SHA-256 of the replica id, layer (u32 BE) and node (u64 BE) in the first
/// 64 bytes, then the parents' labels repeated to [`StackedShape::TOTAL_PARENTS`], read as a
/// field element with its top two bits cleared.
fn label(replica_id: &[u8; 32], layer: usize, node: u64, parents: &[Fr]) -> Fr {
    let mut h = Sha256::new();
    h.update(replica_id);
    h.update((layer as u32).to_be_bytes());
    h.update(node.to_be_bytes());
    h.update([0u8; 20]);
    for p in parents.iter().cycle().take(StackedShape::TOTAL_PARENTS) {
        h.update(p.to_repr());
    }
    let mut digest: [u8; 32] = h.finalize().into();
    digest[31] &= 0x3f;
    Fr::from_repr(digest).expect("below 2^254")
}

/// A random sector of `proof`'s size, sealed sparsely: its C1 output and what upstream's
/// verifier takes beside the proof.
pub fn random_sector(
    proof: RegisteredSealProof,
    rng: &mut impl RngCore,
) -> Result<(C1Input, SectorInfo), PorepError> {
    let shape = SealShape::new(proof)?;
    if proof.challenge_kind() == ChallengeKind::Synthetic {
        return Err(PorepError::Unsupported(
            proof,
            "a sparse random sector needs interactive challenges",
        ));
    }
    let stacked = shape.stacked();
    let graph = shape.graph();
    let nodes = stacked.nodes as u64;
    let mut bytes = || fr32(&mut *rng).to_repr();
    let (prover_id, ticket, seed) = (bytes(), bytes(), bytes());
    let sector_id = rng.next_u64() >> 1;

    // Data: one random leaf per block of up to 2^14 leaves (2^16 blocks at 32 GiB).
    let block = (nodes >> 16).max(1);
    let data: Vec<Fr> = (0..nodes / block).map(|_| fr32(&mut *rng)).collect();
    let data_leaf = |b: u64| data[b as usize];
    let sha = |c: &[Fr]| Sha256Hash.native(&mut Count(0), c).expect("two children");
    let mut tree_d = BlockTree::new(vec![2; stacked.comm_d_levels()], &sha, block, &data_leaf);
    let comm_d = tree_d.root().to_repr();
    let replica = replica_id(proof, &prover_id, sector_id, &ticket, &comm_d);
    // Interactive challenges read the replica id and seed only; comm_r comes last.
    let ids = SectorIds {
        replica_id: replica,
        comm_d,
        comm_r: [0; 32],
        seed,
    };
    let challenges: Vec<Vec<u64>> = (0..shape.partitions())
        .map(|k| shape.challenges(&ids, k))
        .collect();

    // Columns: computed labels for challenged nodes, random rows for every other parent.
    let challenged: BTreeSet<u64> = challenges.iter().flatten().copied().collect();
    let mut columns: BTreeMap<u64, Vec<Fr>> = BTreeMap::new();
    for &c in &challenged {
        let parents = graph.drg_parents(c as u32).into_iter();
        for p in parents.chain(graph.exp_parents(c as u32)) {
            let p = u64::from(p);
            if !challenged.contains(&p) {
                columns.entry(p).or_insert_with(|| {
                    (0..stacked.layers).map(|_| Fr::random(&mut *rng)).collect()
                });
            }
        }
        columns.insert(c, Vec::with_capacity(stacked.layers));
    }
    // Layer by layer, nodes in ascending order: DRG parents are below their node (so a
    // challenged one has this layer's label already), expander parents read the layer below.
    let mut sources = BTreeMap::new();
    for layer in 1..=stacked.layers {
        for &c in &challenged {
            let row = |p: u32, l: usize| columns[&u64::from(p)][l - 1];
            let mut parents: Vec<Fr> = graph
                .drg_parents(c as u32)
                .into_iter()
                .map(|p| row(p, layer))
                .collect();
            if layer > 1 {
                parents.extend(
                    graph
                        .exp_parents(c as u32)
                        .into_iter()
                        .map(|p| row(p, layer - 1)),
                );
            }
            let l = label(&replica, layer, c, &parents);
            columns.get_mut(&c).expect("challenged").push(l);
            sources.insert((layer, c), parents);
        }
    }

    let hash_column = |rows: &[Fr]| stacked.column.hash(rows).expect("layers rows");
    let poseidon = |children: &[Fr]| stacked.tree_hash(children);
    let tree_c = SparseTree::new(
        stacked.tree_arities(),
        columns.iter().map(|(&n, rows)| (n, hash_column(rows))),
        &poseidon,
        rng,
    );
    // Replica = data + the last layer's label (the encoding key).
    let replicas: Vec<(u64, Fr)> = challenged
        .iter()
        .map(|&c| (c, columns[&c][stacked.layers - 1] + tree_d.node(0, c)))
        .collect();
    let tree_r = SparseTree::new(stacked.tree_arities(), replicas, &poseidon, rng);
    let comm_r = stacked
        .pair
        .hash(&[tree_c.root(), tree_r.root()])
        .expect("two")
        .to_repr();

    let column = |n: u32| {
        (
            n,
            columns[&u64::from(n)].clone(),
            tree_c.proof(stacked.tree, u64::from(n)),
        )
    };
    let partitions = challenges
        .iter()
        .map(|cs| {
            cs.iter()
                .map(|&c| {
                    let labeling = |layer: usize| (layer as u32, c, sources[&(layer, c)].clone());
                    StackedProof::new(
                        tree_d.proof(StackedShape::COMM_D_TREE, c),
                        tree_r.proof(stacked.tree, c),
                        column(c as u32),
                        graph.drg_parents(c as u32).map(column).to_vec(),
                        graph.exp_parents(c as u32).map(column).to_vec(),
                        (1..=stacked.layers).map(labeling).collect(),
                        labeling(stacked.layers),
                    )
                })
                .collect()
        })
        .collect();
    let c1 = C1Input {
        registered_proof: proof,
        vanilla_proofs: VanillaProofs {
            variant: crate::vanilla::variant_name(proof.sector_size()),
            partitions,
        },
        comm_r,
        comm_d,
        replica_id: replica,
        seed,
        ticket,
        sector_number: None,
    };
    let info = SectorInfo {
        registered_proof: proof,
        prover_id,
        sector_id,
        ticket,
        seed,
        comm_r,
        comm_d,
    };
    Ok((c1, info))
}
