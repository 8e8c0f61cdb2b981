//! Random but well-formed PoSt requests, for benchmarks at sizes no test can seal (32 GiB,
//! 64 GiB) and for tests: each sector's challenged leaves sit in one sparse tree (random
//! leaves and untouched siblings, every node on a challenged path hashed), so the inclusion
//! proofs share their root, comm_r = Poseidon(comm_c, comm_r_last), and the request passes
//! every check and satisfies the circuit.

use std::collections::BTreeMap;

use blstrs::Scalar as Fr;
use ff::{Field, PrimeField};
use rand_core::RngCore;

use super::vanilla::{SectorOpenings, SectorProof};
use super::{sector_challenges, PostRequest, PostShape, RegisteredPostProof};
use crate::vanilla::random::from_levels;
use crate::vanilla::Element;

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
    let arities = tree.tree_arities();
    // levels[l]: the known nodes of level l (0 = leaves), by index.
    let mut levels: Vec<BTreeMap<u64, Fr>> = vec![BTreeMap::new()];
    for &c in leaves {
        levels[0].entry(c).or_insert_with(|| Fr::random(&mut *rng));
    }
    for &a in &arities {
        let below = levels.last_mut().expect("a level");
        let parents: Vec<u64> = below.keys().map(|i| i / a as u64).collect();
        let mut above = BTreeMap::new();
        for p in parents {
            if above.contains_key(&p) {
                continue;
            }
            let children: Vec<Fr> = (p * a as u64..(p + 1) * a as u64)
                .map(|i| *below.entry(i).or_insert_with(|| Fr::random(&mut *rng)))
                .collect();
            let h = tree
                .tree_hashes
                .iter()
                .find(|h| h.arity() == a)
                .expect("the tree's arities have constants");
            above.insert(p, h.hash(&children).expect("arity matches"));
        }
        levels.push(above);
    }
    let root = *levels
        .last()
        .and_then(|l| l.values().next())
        .expect("a root");
    let inclusion_proofs = leaves
        .iter()
        .map(|&c| {
            let mut index = c;
            let path = arities
                .iter()
                .enumerate()
                .map(|(l, &a)| {
                    let a = a as u64;
                    let first = index / a * a;
                    let hashes = (first..first + a)
                        .filter(|&i| i != index)
                        .map(|i| levels[l][&i].to_repr())
                        .collect();
                    let e = Element {
                        hashes,
                        index: (index - first) as usize,
                    };
                    index /= a;
                    e
                })
                .collect();
            from_levels(tree.tree, path, root.to_repr(), levels[0][&c].to_repr())
        })
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
