//! Oracle tests: cuzk's EmptySectorUpdate circuit, proof types, challenges and vanilla-proof
//! checks against storage-proofs-update and filecoin-proofs.
//!
//! Two circuits are the same when `R1csDigest` gives the same counts, the same hash of every
//! row's terms and, with values, the same witness.

use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use cuzk_circuits::snap::{RegisteredUpdateProof, SnapRequest, SnapShape, SnapUpdate};
use cuzk_circuits::{CircuitShape, Synthesis};
use cuzk_gadgets::test_util::{Digest, R1csDigest};
use ff::{Field, PrimeField};
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{
    SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB, SectorShape8MiB,
};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_update::constants::{TreeDDomain, TreeRDomain, TreeRHasher};
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
            let comm_r_new = TreeRDomain::random(&mut rng);
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

/// The bundled update (`fixtures/snap/2KiB`, upstream's vanilla proofs of a fresh sector).
#[derive(serde::Deserialize)]
struct Fixture {
    registered_proof: u64,
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
}

fn fixture() -> (Fixture, Vec<Vec<u8>>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/snap/2KiB");
    let f: Fixture =
        serde_json::from_slice(&std::fs::read(dir.join("snap.json")).unwrap()).unwrap();
    let partitions = (0..proof(f.registered_proof).partitions())
        .map(|k| std::fs::read(dir.join(format!("partition-{k}.bin"))).unwrap())
        .collect();
    (f, partitions)
}

fn request(f: &Fixture, partitions: Vec<Vec<u8>>) -> SnapRequest {
    SnapRequest {
        registered_proof: f.registered_proof,
        comm_r_old: f.comm_r_old.to_vec(),
        comm_r_new: f.comm_r_new.to_vec(),
        comm_d_new: f.comm_d_new.to_vec(),
        vanilla_proofs: partitions,
    }
}

/// On upstream's vanilla proofs our circuit with values is upstream's (rows and witness), our
/// public inputs are what upstream's verifier derives, and every synthesis path (full,
/// witness-only with the PCE, native with the PCE) gives the same witness.
#[test]
fn fixture_circuit_witness_and_inputs_are_upstreams() {
    type Tree = SectorShape2KiB;
    let (f, partitions) = fixture();
    let update = SnapUpdate::new(&request(&f, partitions.clone())).unwrap();
    let pp = PublicParams::from_sector_size(2048);
    let pub_inputs = storage_proofs_update::PublicInputs {
        k: 0,
        comm_r_old: TreeRDomain::try_from_bytes(&f.comm_r_old).unwrap(),
        comm_d_new: TreeDDomain::try_from_bytes(&f.comm_d_new).unwrap(),
        comm_r_new: TreeRDomain::try_from_bytes(&f.comm_r_new).unwrap(),
        h: storage_proofs_update::constants::h_default(pp.sector_nodes),
    };
    let pce = update.shape().extract_pce().unwrap();
    for (k, bytes) in partitions.iter().enumerate() {
        let vanilla: storage_proofs_update::PartitionProof<Tree> =
            bincode::deserialize(bytes).unwrap();
        let theirs = <EmptySectorUpdateCompound<Tree> as CompoundProof<_, _>>::circuit(
            &pub_inputs,
            (),
            &vanilla,
            &pp,
            Some(k),
        )
        .unwrap();
        assert_eq!(
            digest(update.circuit(k), true),
            digest(theirs, true),
            "partition {k}"
        );
        let inputs =
            <EmptySectorUpdateCompound<Tree> as CompoundProof<_, _>>::generate_public_inputs(
                &pub_inputs,
                &pp,
                Some(k),
            )
            .unwrap();
        assert_eq!(update.public_inputs(k), inputs, "partition {k}");
        let full = update.witness(k, Synthesis::Full).unwrap().witness;
        for synthesis in [Synthesis::Pce(&pce), Synthesis::Native(&pce)] {
            let w = update.witness(k, synthesis).unwrap().witness;
            assert_eq!(w.input, full.input);
            assert_eq!(w.aux, full.aux);
            assert_eq!(
                (w.a, w.b, w.c),
                (full.a.clone(), full.b.clone(), full.c.clone())
            );
        }
    }
}

/// Every refusal names its field: a wrong proof type, short or other commitments, a missing
/// partition, a truncated or altered vanilla proof.
#[test]
fn bad_requests_are_refused_by_field() {
    let (f, partitions) = fixture();
    let good = request(&f, partitions);
    assert!(SnapUpdate::new(&good).is_ok());
    let refusal = |r: SnapRequest| SnapUpdate::new(&r).unwrap_err().to_string();
    let mut r = good.clone();
    r.registered_proof = 7;
    assert!(refusal(r).starts_with("registered_proof: "));
    let mut r = good.clone();
    r.registered_proof = 1; // 8 MiB: four partitions
    assert!(refusal(r).starts_with("vanilla_proofs: "));
    let mut r = good.clone();
    r.comm_d_new.pop();
    assert!(refusal(r).starts_with("comm_d_new: "));
    let mut r = good.clone();
    r.comm_r_new = good.comm_r_old.clone();
    assert!(refusal(r).starts_with("vanilla_proofs[0].challenge_proofs[0].proof_r_new.root"));
    let mut r = good.clone();
    r.comm_d_new = good.comm_r_old.clone();
    assert!(refusal(r).starts_with("vanilla_proofs[0].challenge_proofs[0]"));
    let mut r = good.clone();
    let n = r.vanilla_proofs[0].len();
    r.vanilla_proofs[0].truncate(n - 1);
    assert!(refusal(r).starts_with("vanilla_proofs[0].challenge_proofs["));
    // Any flipped byte past comm_c is caught by a check, never a panic.
    for at in (32..n).step_by(97) {
        let mut r = good.clone();
        r.vanilla_proofs[0][at] ^= 1;
        assert!(SnapUpdate::new(&r).is_err(), "byte {at}");
    }
    let decoded = SnapRequest::decode(&good.encode()).unwrap();
    assert_eq!(decoded, good);
    assert!(SnapRequest::decode(&good.encode()[..40]).is_err());
}

/// Random well-formed updates pass every check at every size; at 2 KiB and in the last of the
/// four 8 MiB partitions their circuits are satisfied, the native witness is full synthesis's,
/// and no witness value other than 0 and 1 repeats more than a random update's paths repeat
/// them (one label and one data element everywhere repeated one value 1,408 times at 8 MiB
/// and 11,136 times at 32 GiB, which made sppark's Pippenger 4x slower: log #64).
#[test]
fn random_updates_are_well_formed() {
    use cuzk_gadgets::test_util::RecordingCs;
    let mut rng = rand::thread_rng();
    for id in 0..5 {
        let req = cuzk_circuits::snap::random::update(proof(id), &mut rng);
        let update = SnapUpdate::new(&req).unwrap_or_else(|e| panic!("{id}: {e}"));
        if id > 1 {
            continue;
        }
        let k = update.partitions() - 1;
        {
            let mut cs = RecordingCs::new();
            update.circuit(k).synthesize(&mut cs).unwrap();
            assert_eq!(cs.which_is_unsatisfied(), None, "{id} partition {k}");
            let (input, aux) = update.circuit(k).native_witness().unwrap();
            let full = cuzk_groth16::assignment::Witness::synthesize(update.circuit(k)).unwrap();
            assert_eq!(
                (&input, &aux),
                (&full.input, &full.aux),
                "{id} partition {k}"
            );
            let mut counts = std::collections::HashMap::new();
            for v in aux.iter().filter(|v| **v != Fr::ZERO && **v != Fr::ONE) {
                *counts.entry(v.to_repr()).or_insert(0usize) += 1;
            }
            let most = counts.values().max().copied().unwrap_or(0);
            assert!(most <= 128, "{id}: a value repeats {most} times");
        }
    }
}
