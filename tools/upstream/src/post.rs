//! Upstream WindowPoSt and WinningPoSt as oracle and peer: vanilla proofs of sealed sectors
//! (what Curio's workers send the proving daemon), bellperson's random setup of the PoSt
//! circuits, upstream's provers and its verifiers.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use filecoin_proofs::constants::{SectorShape2KiB, SectorShape512MiB, SectorShape8MiB};
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs_api::post::{
    generate_fallback_sector_challenges, generate_single_vanilla_proof,
    generate_single_window_post_with_vanilla, generate_winning_post_with_vanilla,
    merge_window_post_partition_proofs, verify_window_post, verify_winning_post,
};
use filecoin_proofs_api::{
    PartitionSnarkProof, PrivateReplicaInfo, PublicReplicaInfo, RegisteredPoStProof, SectorId,
};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_post::fallback::{FallbackPoSt, FallbackPoStCompound};

use crate::{setup_into, Sealed};

/// Upstream's PoSt proof type of FFI number `id` (Winning 0-4, Window V1 5-9, V1_2 10-14), by
/// its name (cuzk's and upstream's agree; `cuzk-circuits`' tests check the numbering).
pub fn post_proof(id: u64) -> Result<RegisteredPoStProof> {
    let ours = cuzk_circuits::RegisteredPostProof::parse(id).map_err(anyhow::Error::msg)?;
    Ok(serde_json::from_value(serde_json::Value::String(format!(
        "{ours:?}"
    )))?)
}

fn replica(proof: RegisteredPoStProof, s: &Sealed) -> PrivateReplicaInfo {
    PrivateReplicaInfo::new(proof, s.info.comm_r, s.cache_dir(), s.replica())
}

fn public(
    proof: RegisteredPoStProof,
    sectors: &[&Sealed],
) -> BTreeMap<SectorId, PublicReplicaInfo> {
    sectors
        .iter()
        .map(|s| {
            (
                SectorId::from(s.info.sector_id),
                PublicReplicaInfo::new(proof, s.info.comm_r),
            )
        })
        .collect()
}

/// The prover id Curio derives from a miner id: the ID address payload's LEB128 bytes,
/// zero-padded (written from the address spec, independently of cuzk's).
pub fn prover_id(miner_id: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut v = miner_id;
    for byte in out.iter_mut() {
        *byte = (v as u8) & 0x7f;
        v >>= 7;
        if v == 0 {
            break;
        }
        *byte |= 0x80;
    }
    out
}

/// Each sector's vanilla proof (bincode `FallbackPoStSectorProof`), as Curio's workers make
/// them: challenges from `generate_fallback_sector_challenges`, proofs from
/// `generate_single_vanilla_proof`.
pub fn vanilla_proofs(
    proof_id: u64,
    sectors: &[&Sealed],
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
) -> Result<Vec<Vec<u8>>> {
    let proof = post_proof(proof_id)?;
    let ids: Vec<SectorId> = sectors
        .iter()
        .map(|s| SectorId::from(s.info.sector_id))
        .collect();
    let challenges = generate_fallback_sector_challenges(proof, randomness, &ids, *prover_id)?;
    sectors
        .iter()
        .zip(&ids)
        .map(|(s, id)| {
            generate_single_vanilla_proof(proof, *id, &replica(proof, s), &challenges[id])
        })
        .collect()
}

/// Upstream `verify_window_post` on the partition proofs of a deadline's sectors, merged in
/// partition order.
pub fn verify_window(
    proof_id: u64,
    sectors: &[&Sealed],
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
    partitions: &[Vec<u8>],
) -> Result<bool> {
    let proof = post_proof(proof_id)?;
    let merged = merge_window_post_partition_proofs(
        proof,
        partitions
            .iter()
            .cloned()
            .map(PartitionSnarkProof)
            .collect(),
    )?;
    verify_window_post(
        randomness,
        &[(proof, &merged[..])],
        &public(proof, sectors),
        *prover_id,
    )
}

/// Upstream `verify_winning_post` on the proof of one challenged sector.
pub fn verify_winning(
    proof_id: u64,
    sector: &Sealed,
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
    snark: &[u8],
) -> Result<bool> {
    let proof = post_proof(proof_id)?;
    verify_winning_post(randomness, snark, &public(proof, &[sector]), *prover_id)
}

/// Upstream's prover on the same vanilla proofs (the peer of side-by-side benchmarks).
pub fn prove_with_vanilla(
    proof_id: u64,
    randomness: &[u8; 32],
    prover_id: &[u8; 32],
    vanilla: &[Vec<u8>],
    partition: usize,
) -> Result<Vec<u8>> {
    let proof = post_proof(proof_id)?;
    if proof.typ() == filecoin_proofs::PoStType::Winning {
        let mut out = generate_winning_post_with_vanilla(proof, randomness, *prover_id, vanilla)?;
        Ok(out.remove(0).1)
    } else {
        Ok(generate_single_window_post_with_vanilla(
            proof, randomness, *prover_id, vanilla, partition,
        )?
        .0)
    }
}

fn generate<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredPoStProof,
    out: &Path,
) -> Result<Duration> {
    type Compound<Tree> = FallbackPoStCompound<Tree>;
    let config = proof.as_v1_config();
    let vanilla_params = match proof.typ() {
        filecoin_proofs::PoStType::Winning => winning_post_setup_params(&config)?,
        filecoin_proofs::PoStType::Window => window_post_setup_params(&config),
    };
    let setup = compound_proof::SetupParams {
        vanilla_params,
        partitions: None,
        priority: false,
    };
    let pp = <Compound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::setup(&setup)?;
    let blank = <Compound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::blank_circuit(
        &pp.vanilla_params,
    );
    let id = <Compound<Tree> as CacheableParameters<
        storage_proofs_post::fallback::FallbackPoStCircuit<Tree>,
        _,
    >>::cache_identifier(&pp.vanilla_params);
    setup_into(blank, out, &id)
}

/// bellperson's random setup of a test-size PoSt circuit, written into `out` under upstream's
/// names; returns the generation time.
pub fn paramgen(proof_id: u64, out: &Path) -> Result<Duration> {
    let proof = post_proof(proof_id)?;
    match u64::from(proof.sector_size()) {
        2048 => generate::<SectorShape2KiB>(proof, out),
        s if s == 8 << 20 => generate::<SectorShape8MiB>(proof, out),
        s if s == 512 << 20 => generate::<SectorShape512MiB>(proof, out),
        s => anyhow::bail!("upstream PoSt paramgen: unsupported sector size {s}"),
    }
}
