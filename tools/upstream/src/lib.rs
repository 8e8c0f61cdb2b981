//! Upstream filecoin-proofs, driven the way cuzk's tests and benchmarks need it: seal a fresh
//! test sector (C1 output plus what the verifier needs), generate parameters with bellperson,
//! and verify a proof with `verify_seal`. The `cuzk-fixtures` and `cuzk-peer` binaries and
//! cuzk's end-to-end tests share these, so upstream is only ever an oracle or a peer.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use filecoin_proofs::constants::{DefaultPieceHasher, SectorShape2KiB, SectorShape8MiB};
use filecoin_proofs_api::seal::{
    add_piece, seal_commit_phase1, seal_pre_commit_phase1, seal_pre_commit_phase2, verify_seal,
};
use filecoin_proofs_api::{PieceInfo, RegisteredSealProof, SectorId, UnpaddedBytesAmount};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::VERSION;
use storage_proofs_porep::stacked::{StackedCompound, StackedDrg};

pub mod post;
pub mod snap;

/// The current (V1_1) proof type of a test sector size.
pub fn proof_type(size: &str) -> Result<RegisteredSealProof> {
    Ok(match size {
        "2KiB" => RegisteredSealProof::StackedDrg2KiBV1_1,
        "8MiB" => RegisteredSealProof::StackedDrg8MiBV1_1,
        "512MiB" => RegisteredSealProof::StackedDrg512MiBV1_1,
        other => anyhow::bail!("unsupported test sector size {other} (2KiB, 8MiB, 512MiB)"),
    })
}

/// What the verifier needs beside the C1 output (`sector.json` in a fixture folder).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SectorInfo {
    pub registered_proof: RegisteredSealProof,
    pub prover_id: [u8; 32],
    pub sector_id: u64,
    pub ticket: [u8; 32],
    pub seed: [u8; 32],
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
}

impl SectorInfo {
    /// Reads `sector.json`.
    pub fn read(path: &Path) -> Result<Self> {
        Ok(serde_json::from_slice(&fs::read(path)?)?)
    }

    /// Upstream `verify_seal`'s verdict on `proof` (parameters from
    /// `FIL_PROOFS_PARAMETER_CACHE`); `Err` when it cannot even parse the proof.
    pub fn verify(&self, proof: &[u8]) -> Result<bool, String> {
        verify_seal(
            self.registered_proof,
            self.comm_r,
            self.comm_d,
            self.prover_id,
            SectorId::from(self.sector_id),
            self.ticket,
            self.seed,
            proof,
        )
        .map_err(|e| format!("{e:#}"))
    }
}

/// A 32-byte value that is a valid field element (top bits cleared), as Filecoin requires of
/// prover ids and tickets.
pub fn fr_bytes(rng: &mut impl RngCore) -> [u8; 32] {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    b[31] &= 0x3f;
    b
}

/// A sealed test sector kept on disk (removed on drop): what PoSt needs of it.
pub struct Sealed {
    work: tempfile::TempDir,
    pub info: SectorInfo,
    c1: Vec<u8>,
}

impl std::fmt::Debug for Sealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealed").field("info", &self.info).finish()
    }
}

impl Sealed {
    pub fn cache_dir(&self) -> std::path::PathBuf {
        self.work.path().join("cache")
    }

    pub fn replica(&self) -> std::path::PathBuf {
        self.work.path().join("sealed")
    }

    /// The C1 output exactly as `serde_json` writes it (what lotus and Curio hand to C2).
    pub fn c1(&self) -> &[u8] {
        &self.c1
    }
}

/// Seals a sector of random data with random prover id, sector id, ticket and seed, and
/// returns the C1 output exactly as `serde_json` writes it (what lotus and Curio hand to C2).
/// Needs no Groth16 parameters; the SDR parent cache goes to `FIL_PROOFS_PARENT_CACHE`.
pub fn seal(size: &str, rng: &mut impl RngCore) -> Result<(Vec<u8>, SectorInfo)> {
    let sealed = seal_sector(size, rng)?;
    Ok((sealed.c1.clone(), sealed.info.clone()))
}

/// [`seal`], keeping the sealed replica and its cache (for PoSt vanilla proofs).
pub fn seal_sector(size: &str, rng: &mut impl RngCore) -> Result<Sealed> {
    let proof = proof_type(size)?;
    let work = tempfile::tempdir()?;
    let cache = work.path().join("cache");
    fs::create_dir_all(&cache)?;
    let staged = work.path().join("staged");
    let sealed = work.path().join("sealed");
    fs::File::create(&sealed)?;

    let pieces = [random_piece(proof, &staged, rng)?];

    let prover_id = fr_bytes(rng);
    let ticket = fr_bytes(rng);
    let seed = fr_bytes(rng);
    let sector_id = SectorId::from(rng.next_u32() as u64);
    let pc1 = seal_pre_commit_phase1(
        proof, &cache, &staged, &sealed, prover_id, sector_id, ticket, &pieces,
    )?;
    let pc2 = seal_pre_commit_phase2(pc1, &cache, &sealed)?;
    let (comm_r, comm_d) = (pc2.comm_r, pc2.comm_d);
    let c1 = seal_commit_phase1(
        &cache, &sealed, prover_id, sector_id, ticket, seed, pc2, &pieces,
    )?;
    let info = SectorInfo {
        registered_proof: proof,
        prover_id,
        sector_id: u64::from(sector_id),
        ticket,
        seed,
        comm_r,
        comm_d,
    };
    Ok(Sealed {
        work,
        info,
        c1: serde_json::to_vec(&c1)?,
    })
}

/// Writes one piece of random data filling a whole sector of `proof`'s size to `staged`,
/// fr32-padded by upstream `add_piece` (so every 32-byte node is a field element), and returns
/// its piece info: the deal data of a fresh sector or of a SnapDeals update.
pub(crate) fn random_piece(
    proof: RegisteredSealProof,
    staged: &Path,
    rng: &mut impl RngCore,
) -> Result<PieceInfo> {
    let unpadded = u64::from(proof.sector_size()) / 128 * 127;
    let mut data = vec![0u8; unpadded as usize];
    rng.fill_bytes(&mut data);
    let (piece, _) = add_piece(
        proof,
        &data[..],
        fs::File::create(staged)?,
        UnpaddedBytesAmount(unpadded),
        &[],
    )?;
    Ok(piece)
}

fn generate<Tree: 'static + MerkleTreeTrait>(
    proof: RegisteredSealProof,
    out: &Path,
) -> Result<Duration> {
    type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;
    let config = proof.as_v1_config();
    let setup = compound_proof::SetupParams {
        vanilla_params: filecoin_proofs::parameters::setup_params(&config)?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    };
    let pp = <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(
        &setup,
    )?;
    let blank = <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::blank_circuit(
        &pp.vanilla_params,
    );
    setup_into(blank, out, &proof.circuit_identifier()?)
}

/// [`random_setup`] of `blank`, written by [`write_params`] under circuit identifier `id`:
/// every upstream `paramgen`. Returns the setup time.
pub(crate) fn setup_into(
    blank: impl bellperson::Circuit<blstrs::Scalar>,
    out: &Path,
    id: &str,
) -> Result<Duration> {
    let (params, took) = random_setup(blank)?;
    write_params(&params, out, id)?;
    Ok(took)
}

/// bellperson's random setup of `blank`, and how long it took.
pub(crate) fn random_setup(
    blank: impl bellperson::Circuit<blstrs::Scalar>,
) -> Result<(bellperson::groth16::Parameters<blstrs::Bls12>, Duration)> {
    let t = Instant::now();
    let params = bellperson::groth16::generate_random_parameters::<blstrs::Bls12, _, _>(
        blank,
        &mut rand::rngs::OsRng,
    )?;
    Ok((params, t.elapsed()))
}

/// Writes bellperson parameters as `.params` and `.vk` under upstream's names for circuit
/// identifier `id` into `out`.
pub(crate) fn write_params(
    params: &bellperson::groth16::Parameters<blstrs::Bls12>,
    out: &Path,
    id: &str,
) -> Result<()> {
    fs::create_dir_all(out)?;
    let path = |ext: &str| out.join(format!("v{VERSION}-{id}.{ext}"));
    write_atomically(&path("params"), |f| params.write(f))?;
    write_atomically(&path("vk"), |f| params.vk.write(f))?;
    Ok(())
}

/// Writes beside `path`, then renames: a reader never sees half a file.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<fs::File>) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut w = std::io::BufWriter::new(fs::File::create(&tmp)?);
    write(&mut w)?;
    w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    fs::rename(&tmp, path)?;
    Ok(())
}

/// bellperson's `generate_random_parameters` for a test sector size's PoRep circuit, written
/// into `out` under upstream's names; returns the generation time.
pub fn paramgen(size: &str, out: &Path) -> Result<Duration> {
    let proof = proof_type(size)?;
    match size {
        "2KiB" => generate::<SectorShape2KiB>(proof, out),
        "8MiB" => generate::<SectorShape8MiB>(proof, out),
        other => anyhow::bail!("upstream paramgen: unsupported size {other}"),
    }
}
