//! Oracle tests: cuzk's FallbackPoSt circuit, proof types and vanilla-proof reader against
//! storage-proofs-post and filecoin-proofs.
//!
//! Two circuits are the same when `R1csDigest` gives the same counts, the same hash of every
//! row's terms and, with values, the same witness. The bundled fixture (`fixtures/post/2KiB`,
//! written by `cuzk-fixtures --post`) holds upstream vanilla proofs of three sealed sectors.

use std::path::{Path, PathBuf};

use bellpepper_core::Circuit;
use blstrs::Scalar as Fr;
use cuzk_circuits::post::{PostType, SectorProof};
use cuzk_circuits::{
    CircuitShape, PostPartition, PostRequest, PostShape, RegisteredPostProof, Synthesis,
};
use cuzk_gadgets::test_util::{Digest, R1csDigest};
use filecoin_hashers::Domain;
use filecoin_proofs::constants::{
    SectorShape2KiB, SectorShape32GiB, SectorShape512MiB, SectorShape64GiB, SectorShape8MiB,
};
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs::types::FallbackPoStSectorProof;
use filecoin_proofs_api::RegisteredPoStProof as Upstream;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_core::sector::SectorId;
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCircuit, FallbackPoStCompound, PublicSector,
};

type Compound<Tree> = FallbackPoStCompound<Tree>;
type PublicParams<Tree> = compound_proof::PublicParams<'static, FallbackPoSt<'static, Tree>>;

fn digest<C: Circuit<Fr>>(circuit: C, witness: bool) -> Digest {
    let mut cs = R1csDigest::new(witness);
    circuit.synthesize(&mut cs).expect("synthesis");
    cs.finish()
}

/// Upstream's enum value of FFI number `id` (the API enum is in FFI order).
fn upstream(id: u64) -> Upstream {
    use Upstream::*;
    [
        StackedDrgWinning2KiBV1,
        StackedDrgWinning8MiBV1,
        StackedDrgWinning512MiBV1,
        StackedDrgWinning32GiBV1,
        StackedDrgWinning64GiBV1,
        StackedDrgWindow2KiBV1,
        StackedDrgWindow8MiBV1,
        StackedDrgWindow512MiBV1,
        StackedDrgWindow32GiBV1,
        StackedDrgWindow64GiBV1,
        StackedDrgWindow2KiBV1_2,
        StackedDrgWindow8MiBV1_2,
        StackedDrgWindow512MiBV1_2,
        StackedDrgWindow32GiBV1_2,
        StackedDrgWindow64GiBV1_2,
    ][id as usize]
}

fn public_params<Tree: 'static + MerkleTreeTrait>(id: u64) -> PublicParams<Tree> {
    let config = upstream(id).as_v1_config();
    let vanilla_params = match RegisteredPostProof::from_id(id).unwrap().post_type() {
        PostType::Winning => winning_post_setup_params(&config).unwrap(),
        PostType::Window => window_post_setup_params(&config),
    };
    let setup = compound_proof::SetupParams {
        vanilla_params,
        partitions: None,
        priority: false,
    };
    <Compound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::setup(&setup).unwrap()
}

/// Our proof type agrees with upstream's: size, kind, API version, counts, parameter id.
fn proof_type_is_upstreams<Tree: 'static + MerkleTreeTrait>(id: u64) {
    let ours = RegisteredPostProof::from_id(id).unwrap();
    let up = upstream(id);
    assert_eq!(format!("{ours:?}"), format!("{up:?}"));
    assert_eq!(ours.sector_size(), u64::from(up.sector_size()), "{id}");
    assert_eq!(ours.sectors(), up.sector_count(), "{id} sectors");
    assert_eq!(ours.challenges(), up.as_v1_config().challenge_count, "{id}");
    let pp = public_params::<Tree>(id);
    let p = &pp.vanilla_params;
    assert_eq!(
        ours.slots(),
        (p.sector_count, p.challenge_count),
        "{id} slots"
    );
    assert_eq!(
        p.api_version == storage_proofs_core::api_version::ApiVersion::V1_2_0,
        ours.api() == cuzk_circuits::post::PostApi::V1_2,
        "{id}"
    );
    let identifier =
        <Compound<Tree> as CacheableParameters<FallbackPoStCircuit<Tree>, _>>::cache_identifier(p);
    assert_eq!(ours.circuit_identifier(), identifier, "{id}");
}

#[test]
fn proof_types_are_upstreams() {
    for group in [0, 5, 10] {
        proof_type_is_upstreams::<SectorShape2KiB>(group);
        proof_type_is_upstreams::<SectorShape8MiB>(group + 1);
        proof_type_is_upstreams::<SectorShape512MiB>(group + 2);
        proof_type_is_upstreams::<SectorShape32GiB>(group + 3);
        proof_type_is_upstreams::<SectorShape64GiB>(group + 4);
    }
    assert!(RegisteredPostProof::from_id(15).is_none());
}

fn blank_is_upstreams<Tree: 'static + MerkleTreeTrait>(id: u64) -> Digest {
    let pp = public_params::<Tree>(id);
    let theirs = <Compound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::blank_circuit(
        &pp.vanilla_params,
    );
    let shape = PostShape::new(RegisteredPostProof::from_id(id).unwrap());
    let ours = digest(shape.blank(), false);
    assert_eq!(ours, digest(theirs, false), "proof type {id}");
    ours
}

#[test]
fn blank_circuits_are_upstreams_at_test_sizes() {
    for group in [0, 10] {
        blank_is_upstreams::<SectorShape2KiB>(group);
        blank_is_upstreams::<SectorShape8MiB>(group + 1);
        blank_is_upstreams::<SectorShape512MiB>(group + 2);
    }
}

#[test]
fn winning_blank_circuits_are_upstreams_at_32_and_64gib() {
    let d = blank_is_upstreams::<SectorShape32GiB>(3);
    // FACTS.md: 370,590 constraints and 133 public inputs (ONE included).
    assert_eq!((d.constraints, d.inputs), (370_590, 133));
    blank_is_upstreams::<SectorShape64GiB>(4);
}

#[test]
#[ignore = "125 M constraints per circuit: minutes in release; run with cargo test --release -p cuzk-circuits --test post -- --ignored"]
fn window_blank_circuit_is_upstreams_32gib() {
    let d = blank_is_upstreams::<SectorShape32GiB>(13);
    assert_eq!((d.constraints, d.inputs), (125_279_217, 25_840));
}

#[test]
#[ignore = "130 M constraints per circuit: minutes in release; run with cargo test --release -p cuzk-circuits --test post -- --ignored"]
fn window_blank_circuit_is_upstreams_64gib() {
    let d = blank_is_upstreams::<SectorShape64GiB>(14);
    assert_eq!(d.constraints, 129_887_900);
}

#[derive(serde::Deserialize)]
struct Fixture {
    randomness: [u8; 32],
    miner_id: u64,
    sectors: Vec<(u64, [u8; 32])>,
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/post/2KiB")
}

fn fixture() -> (Fixture, Vec<Vec<u8>>, Vec<u8>) {
    let dir = fixture_dir();
    let f: Fixture =
        serde_json::from_slice(&std::fs::read(dir.join("post.json")).unwrap()).unwrap();
    let window = (0..f.sectors.len())
        .map(|i| std::fs::read(dir.join(format!("window-{i}.bin"))).unwrap())
        .collect();
    let winning = std::fs::read(dir.join("winning.bin")).unwrap();
    (f, window, winning)
}

type Tree2K = SectorShape2KiB;
type Dom = <<Tree2K as MerkleTreeTrait>::Hasher as filecoin_hashers::Hasher>::Domain;

fn pub_inputs(
    f: &Fixture,
    sectors: &[(u64, [u8; 32])],
    k: Option<usize>,
) -> fallback::PublicInputs<Dom> {
    fallback::PublicInputs {
        randomness: Dom::try_from_bytes(&f.randomness).unwrap(),
        prover_id: Dom::try_from_bytes(&cuzk_circuits::post::prover_id(f.miner_id)).unwrap(),
        sectors: sectors
            .iter()
            .map(|(id, comm_r)| PublicSector {
                id: SectorId::from(*id),
                comm_r: Dom::try_from_bytes(comm_r).unwrap(),
            })
            .collect(),
        k,
    }
}

fn request(id: u64, f: &Fixture, partition: u32, vanilla: &[Vec<u8>]) -> PostRequest {
    PostRequest {
        registered_proof: id,
        randomness: f.randomness.to_vec(),
        miner_id: f.miner_id,
        partition_index: partition,
        vanilla_proofs: vanilla.to_vec(),
    }
}

/// Upstream's vanilla partition proof from the sectors' bincode proofs, padded as upstream
/// pads it (window: sectors repeated; winning: one slot per inclusion proof).
fn upstream_partition(
    post: PostType,
    vanilla: &[Vec<u8>],
    slots: usize,
) -> fallback::Proof<<Tree2K as MerkleTreeTrait>::Proof> {
    let proofs: Vec<FallbackPoStSectorProof<Tree2K>> = vanilla
        .iter()
        .map(|b| bincode::deserialize(b).unwrap())
        .collect();
    let mut sectors: Vec<fallback::SectorProof<_>> = match post {
        PostType::Window => proofs
            .iter()
            .flat_map(|p| p.vanilla_proof.sectors.clone())
            .collect(),
        PostType::Winning => {
            let s = &proofs[0].vanilla_proof.sectors[0];
            s.inclusion_proofs
                .iter()
                .map(|p| fallback::SectorProof {
                    inclusion_proofs: vec![p.clone()],
                    comm_c: s.comm_c,
                    comm_r_last: s.comm_r_last,
                })
                .collect()
        }
    };
    while sectors.len() < slots {
        sectors.push(sectors.last().unwrap().clone());
    }
    fallback::Proof { sectors }
}

/// Upstream's circuit of one partition proof (its index within the request is 0, as the
/// single-partition provers number it).
fn upstream_circuit(
    pub_in: &fallback::PublicInputs<Dom>,
    partition: &fallback::Proof<<Tree2K as MerkleTreeTrait>::Proof>,
    pp: &PublicParams<Tree2K>,
) -> FallbackPoStCircuit<Tree2K> {
    Compound::<Tree2K>::circuit(
        pub_in,
        Default::default(),
        partition,
        &pp.vanilla_params,
        Some(0),
    )
    .unwrap()
}

/// Upstream's reading of the fixture's vanilla proofs builds the same circuit, with the same
/// witness, as ours; our public inputs are what upstream's verifier derives.
#[test]
fn fixture_witness_and_inputs_are_upstreams() {
    let (f, window, winning) = fixture();
    let pp = public_params::<Tree2K>(10);
    // Two partitions: sectors 0 and 1, then sector 2 alone (its slot repeated).
    for (k, range) in [(0usize, 0..2), (1, 2..3)] {
        let ours = PostPartition::new(&request(10, &f, k as u32, &window[range.clone()])).unwrap();
        let partition = upstream_partition(PostType::Window, &window[range.clone()], 2);
        let theirs = upstream_circuit(&pub_inputs(&f, &f.sectors[range], Some(0)), &partition, &pp);
        assert_eq!(
            digest(ours.circuit(), true),
            digest(theirs, true),
            "partition {k}"
        );
        let expected = Compound::<Tree2K>::generate_public_inputs(
            &pub_inputs(&f, &f.sectors, Some(k)),
            &pp.vanilla_params,
            Some(k),
        )
        .unwrap();
        assert_eq!(ours.public_inputs(), &expected[..], "partition {k}");
        let full = ours.witness(Synthesis::Full).unwrap();
        assert_eq!(full.witness.input[1..], expected[..]);
    }

    let pp = public_params::<Tree2K>(0);
    let ours = PostPartition::new(&request(0, &f, 0, std::slice::from_ref(&winning))).unwrap();
    let partition = upstream_partition(PostType::Winning, std::slice::from_ref(&winning), 66);
    let theirs = upstream_circuit(&pub_inputs(&f, &f.sectors[..1], None), &partition, &pp);
    assert_eq!(
        digest(ours.circuit(), true),
        digest(theirs, true),
        "winning"
    );
    // The verifier lists the challenged sector once per slot.
    let replicated = vec![f.sectors[0]; 66];
    let expected = Compound::<Tree2K>::generate_public_inputs(
        &pub_inputs(&f, &replicated, None),
        &pp.vanilla_params,
        None,
    )
    .unwrap();
    assert_eq!(ours.public_inputs(), &expected[..]);
}

/// The native witness, and witness-only synthesis with the PCE, equal full synthesis.
#[test]
fn every_witness_path_is_full_synthesis() {
    let (f, window, winning) = fixture();
    for (id, vanilla) in [
        (10, &window[..2]),
        (10, &window[2..]),
        (0, std::slice::from_ref(&winning)),
    ] {
        let p = PostPartition::new(&request(
            id,
            &f,
            u32::from(vanilla.len() == 1 && id == 10),
            vanilla,
        ))
        .unwrap();
        let pce = p.shape().extract_pce().unwrap();
        let full = p.witness(Synthesis::Full).unwrap().witness;
        for synthesis in [Synthesis::Pce(&pce), Synthesis::Native(&pce)] {
            let w = p.witness(synthesis).unwrap().witness;
            assert_eq!(w.input, full.input);
            assert_eq!(w.aux, full.aux);
            assert_eq!((&w.a, &w.b, &w.c), (&full.a, &full.b, &full.c));
        }
        let c = p.columns().unwrap();
        assert_eq!((c.input, c.aux), (full.input.clone(), full.aux.clone()));
    }
}

/// Our reader reads exactly what upstream's bincode wrote, and writes it back byte for byte.
#[test]
fn reader_round_trips_upstream_bytes() {
    let (_, window, winning) = fixture();
    for bytes in window.iter().chain([&winning]) {
        let ours = SectorProof::parse(bytes).unwrap();
        assert_eq!(&ours.to_bytes(), bytes);
        let theirs: FallbackPoStSectorProof<Tree2K> = bincode::deserialize(bytes).unwrap();
        assert_eq!(ours.sector_id, u64::from(theirs.sector_id));
    }
}

fn refusal(req: &PostRequest) -> String {
    PostPartition::new(req).unwrap_err().to_string()
}

/// Each kind of bad input is refused with the field named.
#[test]
fn bad_requests_are_refused_by_field() {
    let (f, window, winning) = fixture();
    let good = request(10, &f, 0, &window[..2]);
    assert!(PostPartition::new(&good).is_ok());

    let mut r = good.clone();
    r.registered_proof = 99;
    assert!(
        refusal(&r).starts_with("registered_proof:"),
        "{}",
        refusal(&r)
    );
    let mut r = good.clone();
    r.randomness.pop();
    assert!(
        refusal(&r).starts_with("randomness: 31 bytes"),
        "{}",
        refusal(&r)
    );
    let mut r = good.clone();
    r.randomness[31] = 0xff;
    assert!(
        refusal(&r).contains("not a canonical field element"),
        "{}",
        refusal(&r)
    );
    let mut r = good.clone();
    r.vanilla_proofs = window.clone();
    assert!(
        refusal(&r).starts_with("vanilla_proofs: 3 sector proofs"),
        "{}",
        refusal(&r)
    );
    // Other randomness challenges other leaves.
    let mut r = good.clone();
    r.randomness[0] ^= 1;
    let e = refusal(&r);
    assert!(
        e.starts_with("vanilla_proofs[0].vanilla_proof.sectors[0].inclusion_proofs[0]"),
        "{e}"
    );
    assert!(e.contains("the path leads to node"), "{e}");
    // A Window V1_2 proof type given WinningPoSt's vanilla proof: wrong challenge count.
    let r = request(10, &f, 0, std::slice::from_ref(&winning));
    assert!(
        refusal(&r).contains("66 proofs, the sector has 10 challenges"),
        "{}",
        refusal(&r)
    );
    let mut r = request(0, &f, 0, std::slice::from_ref(&winning));
    r.partition_index = 1;
    assert!(refusal(&r).starts_with("partition_index:"));

    // comm_r (bytes 8..40) that is not Poseidon(comm_c, comm_r_last).
    let mut r = good.clone();
    r.vanilla_proofs[1][8] ^= 1;
    let e = refusal(&r);
    assert!(e.starts_with("vanilla_proofs[1].comm_r"), "{e}");
    // A sibling changed: the path no longer reaches comm_r_last. The first inclusion proof
    // starts after sector_id, comm_r, two lengths; variant 0, root, leaf, path length, the
    // first level's hashes length: its first sibling is at 8+32+8+8+4+32+32+8+8.
    let mut r = good.clone();
    r.vanilla_proofs[0][8 + 32 + 8 + 8 + 4 + 32 + 32 + 8 + 8] ^= 1;
    let e = refusal(&r);
    assert!(e.contains("does not hash up to comm_r_last"), "{e}");
    // Truncated bytes name the field where they end.
    let mut r = good.clone();
    let n = r.vanilla_proofs[0].len();
    r.vanilla_proofs[0].truncate(n - 10);
    let e = refusal(&r);
    assert!(
        e.starts_with(
            "vanilla_proofs[0].vanilla_proof.sectors[0].comm_r_last: ends after 22 of 32"
        ),
        "{e}"
    );
    let mut r = good.clone();
    r.vanilla_proofs[0].truncate(100);
    let e = refusal(&r);
    assert!(
        e.starts_with("vanilla_proofs[0].vanilla_proof.sectors: length 1, but only"),
        "{e}"
    );
    // A hostile length is refused before anything is allocated.
    let mut r = good;
    r.vanilla_proofs[0][40..48].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(refusal(&r).contains("bytes are left"), "{}", refusal(&r));
}

#[test]
fn request_encoding_round_trips_and_refuses_garbage() {
    let (f, window, _) = fixture();
    let r = request(10, &f, 7, &window);
    assert_eq!(PostRequest::decode(&r.encode()).unwrap(), r);
    let bytes = r.encode();
    for cut in [0, 8, 20, bytes.len() - 1] {
        assert!(PostRequest::decode(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(PostRequest::decode(&longer).is_err());
}

#[test]
fn prover_id_is_the_leb128_of_the_miner_id() {
    assert_eq!(cuzk_circuits::post::prover_id(0)[..2], [0, 0]);
    assert_eq!(cuzk_circuits::post::prover_id(1000)[..3], [0xe8, 0x07, 0]);
    let id = cuzk_circuits::post::prover_id(u64::MAX);
    assert_eq!(
        id[..10],
        [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
    );
    assert!(id[10..].iter().all(|&b| b == 0));
}

mod random_requests {
    use super::*;
    use cuzk_pce::WitnessCs;
    use proptest::prelude::*;
    use rand_chacha::rand_core::SeedableRng;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

        /// Random well-formed requests of every test-size proof type (V1 WindowPoSt at any
        /// partition too) pass the checks, and the native witness is what synthesis assigns.
        #[test]
        fn random_requests_check_and_native_witness_is_synthesis(
            id in prop::sample::select(vec![0u64, 1, 2, 5, 6, 10, 11, 12]),
            partition in 0u32..4,
            seed in any::<u64>(),
        ) {
            let proof = RegisteredPostProof::from_id(id).unwrap();
            let partition = if proof.post_type() == PostType::Winning { 0 } else { partition };
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let sectors = 1 + (seed as usize % proof.sectors());
            let req = cuzk_circuits::post::random::request(proof, sectors, partition, &mut rng);
            let p = PostPartition::new(&req).unwrap();
            let (input, aux) = p.circuit().native_witness().unwrap();
            let (want_input, want_aux) = WitnessCs::assign(p.circuit()).unwrap();
            prop_assert_eq!(&input[1..], p.public_inputs());
            prop_assert_eq!(input, want_input);
            prop_assert!(aux == want_aux, "aux differs");
        }
    }
}
