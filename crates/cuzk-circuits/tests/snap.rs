//! Oracle tests: cuzk's EmptySectorUpdate circuit, proof types, challenges and vanilla-proof
//! checks against storage-proofs-update and filecoin-proofs.
//!
//! Two circuits are the same when `R1csDigest` gives the same counts, the same hash of every
//! row's terms and, with values, the same witness.

use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use cuzk_circuits::snap::{RegisteredUpdateProof, SnapShape};
use cuzk_circuits::CircuitShape;
use cuzk_gadgets::test_util::{Digest, R1csDigest};
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{
    SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB, SectorShape8MiB,
};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_update::constants::TreeRHasher;
use storage_proofs_update::{
    Challenges, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PublicParams,
};

fn digest<C: Circuit<Fr>>(circuit: C, witness: bool) -> Digest {
    let mut cs = R1csDigest::new(witness);
    circuit.synthesize(&mut cs).expect("synthesis");
    cs.finish()
}

fn proof(id: u64) -> RegisteredUpdateProof {
    RegisteredUpdateProof::parse(id).unwrap()
}

/// Our proof type agrees with upstream's public parameters and parameter identifier.
fn proof_type_is_upstreams<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(id: u64) {
    let ours = proof(id);
    let pp = PublicParams::from_sector_size(ours.sector_size());
    let shape = SnapShape::new(ours);
    assert_eq!(ours.nodes(), pp.sector_nodes, "{id}");
    assert_eq!(ours.partitions(), pp.partition_count, "{id}");
    assert_eq!(ours.challenges(), pp.challenge_count, "{id}");
    assert_eq!(ours.apex_leaves(), pp.apex_leaf_count, "{id}");
    assert_eq!(shape.partition_bits(), pp.partition_bit_len, "{id}");
    assert_eq!(shape.apex_bits(), pp.apex_leaf_bit_len, "{id}");
    assert_eq!(
        ours.h(),
        storage_proofs_update::constants::h_default(pp.sector_nodes)
    );
    assert_eq!(
        ours.h_select(),
        storage_proofs_update::constants::h_select(pp.sector_nodes, ours.h())
    );
    let identifier = <EmptySectorUpdateCompound<Tree> as CacheableParameters<
        EmptySectorUpdateCircuit<Tree>,
        _,
    >>::cache_identifier(&pp);
    assert_eq!(ours.circuit_identifier(), identifier, "{id}");
}

#[test]
fn proof_types_are_upstreams() {
    proof_type_is_upstreams::<SectorShape2KiB>(0);
    proof_type_is_upstreams::<SectorShape8MiB>(1);
    proof_type_is_upstreams::<SectorShape512MiB>(2);
    proof_type_is_upstreams::<SectorShape32GiB>(3);
    proof_type_is_upstreams::<SectorShape64GiB>(4);
    assert!(RegisteredUpdateProof::parse(5).is_err());
}

/// Our challenges are upstream's for every partition of every size, on random comm_r_new.
#[test]
fn challenges_are_upstreams() {
    let mut rng = rand::thread_rng();
    for id in 0..5 {
        let shape = SnapShape::new(proof(id));
        let nodes = proof(id).nodes();
        for k in 0..shape.partitions() {
            let comm_r_new = storage_proofs_update::constants::TreeRDomain::random(&mut rng);
            let theirs: Vec<u64> = Challenges::new(nodes, comm_r_new, k)
                .map(u64::from)
                .collect();
            assert_eq!(
                shape.challenge_nodes(comm_r_new.into(), k),
                theirs,
                "{id} {k}"
            );
        }
    }
}

fn blank_is_upstreams<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(id: u64) -> Digest {
    let ours = SnapShape::new(proof(id));
    let pp = PublicParams::from_sector_size(proof(id).sector_size());
    let theirs = EmptySectorUpdateCircuit::<Tree>::blank(pp);
    let d = digest(ours.blank(), false);
    assert_eq!(d, digest(theirs, false), "update proof {id}");
    d
}

#[test]
fn blank_circuit_is_upstreams_at_test_sizes() {
    blank_is_upstreams::<SectorShape2KiB>(0);
    blank_is_upstreams::<SectorShape8MiB>(1);
}

/// 512 MiB has the production challenge count (86) and 16 partitions over an 8-0-0 TreeR.
#[test]
#[ignore = "about a minute of synthesis per side; run with --ignored"]
fn blank_circuit_is_upstreams_at_512mib() {
    blank_is_upstreams::<SectorShape512MiB>(2);
}

/// The published size: 81,049,499 constraints per 32 GiB partition.
#[test]
#[ignore = "minutes of synthesis; cargo test --release -p cuzk-circuits --test snap -- --ignored"]
fn blank_circuit_is_upstreams_at_32_and_64_gib() {
    let d = blank_is_upstreams::<SectorShape32GiB>(3);
    assert_eq!(d.constraints, 81_049_499);
    blank_is_upstreams::<SectorShape64GiB>(4);
}
