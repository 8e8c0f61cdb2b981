//! Random but well-formed PoSt requests, for benchmarks at sizes no test can seal (32 GiB,
//! 64 GiB) and for tests: each sector's challenged leaves sit in one sparse tree (random
//! leaves and untouched siblings, every node on a challenged path hashed), so the inclusion
//! proofs share their root, comm_r = Poseidon(comm_c, comm_r_last), and the request passes
//! every check and satisfies the circuit.

use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use rand_core::RngCore;

use super::vanilla::{SectorOpenings, SectorProof};
use super::{sector_challenges, PostRequest, PostShape, RegisteredPostProof};
use crate::sparse::SparseTree;

/// A request of `sectors` random sectors for `proof`'s partition `partition`.
pub fn request(
    proof: RegisteredPostProof,
    sectors: usize,
    partition: u32,
    rng: &mut impl RngCore,
) -> PostRequest {
    let shape = PostShape::new(proof);
    let randomness = Fr::random(&mut *rng).to_repr();
    let vanilla_proofs = (0..sectors)
        .map(|i| {
            let id = rng.next_u64() >> 1;
            let leaves = sector_challenges(&shape, &randomness, partition, i, id);
            sector(&shape, id, &leaves, rng).to_bytes()
        })
        .collect();
    PostRequest {
        registered_proof: proof.id(),
        randomness: randomness.to_vec(),
        miner_id: 1000 + u64::from(rng.next_u32() % 1_000_000),
        partition_index: partition,
        vanilla_proofs,
    }
}

/// One sector's proof opening `leaves` of a sparse random tree.
fn sector(shape: &PostShape, id: u64, leaves: &[u64], rng: &mut impl RngCore) -> SectorProof {
    let tree = shape.sector;
    let hash = |children: &[Fr]| tree.tree_hash(children);
    let leaves: Vec<(u64, Fr)> = leaves.iter().map(|&c| (c, Fr::random(&mut *rng))).collect();
    let sparse = SparseTree::new(tree.tree_arities(), leaves.iter().copied(), &hash, rng);
    let root = sparse.root();
    let inclusion_proofs = leaves
        .iter()
        .map(|&(c, _)| sparse.proof(tree.tree, c))
        .collect();
    let comm_c = Fr::random(&mut *rng);
    let comm_r = tree.pair.hash(&[comm_c, root]).expect("arity 2");
    SectorProof {
        sector_id: id,
        comm_r: comm_r.to_repr(),
        openings: vec![SectorOpenings {
            inclusion_proofs,
            comm_c: comm_c.to_repr(),
            comm_r_last: root.to_repr(),
        }],
    }
}
