//! Upstream SnapDeals (EmptySectorUpdate) as oracle and peer: the vanilla partition proofs of
//! a freshly updated sector (what Curio sends the proving daemon), bellperson's random setup of
//! the update circuit, upstream's prover on those vanilla proofs and its verifier.

use std::fs;
use std::path::Path;
use std::time::Duration;

use anyhow::{ensure, Context, Result};
use filecoin_proofs::constants::{SectorShape2KiB, SectorShape512MiB, SectorShape8MiB};
use filecoin_proofs_api::update::{
    empty_sector_update_encode_into, generate_empty_sector_update_proof_with_vanilla,
    generate_partition_proofs, verify_empty_sector_update_proof, verify_partition_proofs,
};
use filecoin_proofs_api::{PartitionProofBytes, RegisteredUpdateProof};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use storage_proofs_core::compound_proof::CompoundProof;
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_update::constants::TreeRHasher;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCircuit, EmptySectorUpdateCompound, PublicParams,
};

use crate::{random_piece, seal_sector, setup_into};

/// Upstream's update proof type of FFI number `id` (filecoin-ffi's `RegisteredUpdateProof`:
/// 0 = 2KiB, 1 = 8MiB, 2 = 512MiB, 3 = 32GiB, 4 = 64GiB, all `StackedDrg*V1`).
pub fn update_proof(id: u64) -> Result<RegisteredUpdateProof> {
    use RegisteredUpdateProof::*;
    Ok(match id {
        0 => StackedDrg2KiBV1,
        1 => StackedDrg8MiBV1,
        2 => StackedDrg512MiBV1,
        3 => StackedDrg32GiBV1,
        4 => StackedDrg64GiBV1,
        other => anyhow::bail!("unknown update proof type {other} (0..=4)"),
    })
}

/// A sector updated with fresh deal data: what a SnapDeals prover is handed and what its
/// verifier checks (`snap.json` plus `partition-<k>.bin` in a fixture folder).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Updated {
    /// FFI number of the update proof type (see [`update_proof`]).
    pub registered_proof: u64,
    /// In bytes.
    pub sector_size: u64,
    pub comm_r_old: [u8; 32],
    pub comm_r_new: [u8; 32],
    pub comm_d_new: [u8; 32],
    /// One vanilla proof per partition, in partition order: exactly the bincode
    /// `PartitionProof` bytes upstream `generate_partition_proofs` returns (what Curio sends).
    #[serde(skip)]
    pub partition_proofs: Vec<Vec<u8>>,
}

impl Updated {
    /// Writes `snap.json` and `partition-<k>.bin` into `dir`.
    pub fn write_fixture(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir)?;
        for (k, p) in self.partition_proofs.iter().enumerate() {
            fs::write(dir.join(format!("partition-{k}.bin")), p)?;
        }
        fs::write(dir.join("snap.json"), serde_json::to_vec_pretty(self)?)?;
        Ok(())
    }

    /// Reads what [`Updated::write_fixture`] wrote: the partitions are read in order until the
    /// first missing `partition-<k>.bin`.
    pub fn read_fixture(dir: &Path) -> Result<Self> {
        let json = dir.join("snap.json");
        let mut out: Self = serde_json::from_slice(
            &fs::read(&json).with_context(|| format!("reading {}", json.display()))?,
        )?;
        while let Ok(p) =
            fs::read(dir.join(format!("partition-{}.bin", out.partition_proofs.len())))
        {
            out.partition_proofs.push(p);
        }
        ensure!(
            !out.partition_proofs.is_empty(),
            "no partition-0.bin in {}",
            dir.display()
        );
        Ok(out)
    }
}

fn bytes(partition_proofs: &[Vec<u8>]) -> Vec<PartitionProofBytes> {
    partition_proofs
        .iter()
        .cloned()
        .map(PartitionProofBytes)
        .collect()
}

/// Seals a fresh sector of random data (CC in all but name: the update ignores its contents),
/// encodes fresh random deal data into it with `empty_sector_update_encode_into`, and returns
/// the commitments and the vanilla partition proofs of `generate_partition_proofs`, after
/// upstream's `verify_partition_proofs` accepted them. Needs no Groth16 parameters.
pub fn update_fresh_sector(size: &str, rng: &mut impl RngCore) -> Result<Updated> {
    let sealed = seal_sector(size, rng)?;
    let seal_proof = sealed.info.registered_proof;
    let registered_proof = match size {
        "2KiB" => 0,
        "8MiB" => 1,
        "512MiB" => 2,
        other => anyhow::bail!("upstream update: unsupported size {other}"),
    };
    let proof = update_proof(registered_proof)?;

    // The update's own files; `sealed` (the sector key and its cache) lives until we return.
    let work = tempfile::tempdir()?;
    let staged = work.path().join("staged");
    let replica = work.path().join("update");
    let cache = work.path().join("update-cache");
    fs::create_dir_all(&cache)?;
    // Upstream maps the new replica writable in place: it must exist at full size.
    fs::File::create(&replica)?.set_len(u64::from(proof.sector_size()))?;
    let piece = random_piece(seal_proof, &staged, rng)?;

    let encoded = empty_sector_update_encode_into(
        proof,
        &replica,
        &cache,
        sealed.replica(),
        sealed.cache_dir(),
        &staged,
        &[piece],
    )
    .context("empty_sector_update_encode_into")?;
    let comm_r_old = sealed.info.comm_r;
    let (comm_r_new, comm_d_new) = (encoded.comm_r_new, encoded.comm_d_new);
    let partitions = generate_partition_proofs(
        proof,
        comm_r_old,
        comm_r_new,
        comm_d_new,
        sealed.replica(),
        sealed.cache_dir(),
        &replica,
        &cache,
    )
    .context("generate_partition_proofs")?;
    ensure!(
        verify_partition_proofs(proof, &partitions, comm_r_old, comm_r_new, comm_d_new)?,
        "upstream rejected its own update partition proofs"
    );
    Ok(Updated {
        registered_proof,
        sector_size: u64::from(proof.sector_size()),
        comm_r_old,
        comm_r_new,
        comm_d_new,
        partition_proofs: partitions.into_iter().map(|p| p.0).collect(),
    })
}

/// Upstream `verify_empty_sector_update_proof`'s verdict (parameters from
/// `FIL_PROOFS_PARAMETER_CACHE`).
pub fn verify(
    registered_proof: u64,
    proof: &[u8],
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
) -> Result<bool> {
    verify_empty_sector_update_proof(
        update_proof(registered_proof)?,
        proof,
        comm_r_old,
        comm_r_new,
        comm_d_new,
    )
}

/// Upstream's prover on the same vanilla partition proofs (the peer of side-by-side
/// benchmarks); returns the concatenated per-partition Groth16 proofs.
pub fn prove_with_vanilla(
    registered_proof: u64,
    partition_proofs: &[Vec<u8>],
    comm_r_old: [u8; 32],
    comm_r_new: [u8; 32],
    comm_d_new: [u8; 32],
) -> Result<Vec<u8>> {
    Ok(generate_empty_sector_update_proof_with_vanilla(
        update_proof(registered_proof)?,
        bytes(partition_proofs),
        comm_r_old,
        comm_r_new,
        comm_d_new,
    )?
    .0)
}

fn generate<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    sector_size: u64,
    out: &Path,
) -> Result<Duration> {
    type Compound<Tree> = EmptySectorUpdateCompound<Tree>;
    // What upstream's parameter lookup builds (`caches::get_empty_sector_update_params`).
    let pp = PublicParams::from_sector_size(sector_size);
    let blank = <Compound<Tree> as CompoundProof<
        EmptySectorUpdate<Tree>,
        EmptySectorUpdateCircuit<Tree>,
    >>::blank_circuit(&pp);
    let id = <Compound<Tree> as CacheableParameters<EmptySectorUpdateCircuit<Tree>, _>>::cache_identifier(&pp);
    setup_into(blank, out, &id)
}

/// bellperson's random setup of a test-size update circuit, written into `out` under
/// upstream's names; returns the generation time.
pub fn paramgen(proof_id: u64, out: &Path) -> Result<Duration> {
    let size = u64::from(update_proof(proof_id)?.sector_size());
    match size {
        2048 => generate::<SectorShape2KiB>(size, out),
        s if s == 8 << 20 => generate::<SectorShape8MiB>(size, out),
        s if s == 512 << 20 => generate::<SectorShape512MiB>(size, out),
        s => anyhow::bail!("upstream update paramgen: unsupported sector size {s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// filecoin-ffi's numbering is upstream's declaration order (its `porep_id` uses it too).
    #[test]
    fn ffi_numbers_follow_upstream_order() {
        let sizes = [2048u64, 8 << 20, 512 << 20, 32 << 30, 64 << 30];
        for (id, size) in sizes.into_iter().enumerate() {
            let proof = update_proof(id as u64).unwrap();
            assert_eq!(proof as u64, id as u64);
            assert_eq!(u64::from(proof.sector_size()), size);
        }
        assert!(update_proof(5).is_err());
    }
}
