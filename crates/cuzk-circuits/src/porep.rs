//! PoRep C2 (StackedDRG): per-partition witnesses and public inputs, parameter file names,
//! and the setup for a sector shape.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::params::{ParamsError, ProvingKey};
use cuzk_groth16::{generator, Fr, ProverError};
use cuzk_pce::Pce;
use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::{
    DefaultPieceDomain, DefaultPieceHasher, SectorShape2KiB, SectorShape32GiB, SectorShape512MiB,
    SectorShape64GiB, SectorShape8MiB,
};
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::types::VanillaSealProof;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use filecoin_proofs_api::RegisteredSealProof;
use rayon::prelude::*;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::merkle::MerkleTreeTrait;
use storage_proofs_core::parameter_cache::VERSION;
use storage_proofs_porep::stacked::{self, StackedCompound, StackedDrg};
use thiserror::Error;

use crate::c1::C1Input;

#[derive(Debug, Error)]
pub enum PorepError {
    #[error("unsupported registered seal proof {0:?}: {1}")]
    Unsupported(RegisteredSealProof, &'static str),
    #[error("unknown sector size {0}; expected 2KiB, 8MiB, 512MiB, 32GiB or 64GiB")]
    SectorSize(String),
    #[error("C1 output: {0}")]
    Malformed(String),
    #[error("C1 output has {got} partitions of vanilla proofs, {proof:?} needs {expected}")]
    PartitionCount {
        proof: RegisteredSealProof,
        expected: usize,
        got: usize,
    },
    #[error("partition {partition}: {source}")]
    Prove {
        partition: usize,
        #[source]
        source: ProverError,
    },
    #[error(transparent)]
    Setup(#[from] ProverError),
    #[error(transparent)]
    Params(#[from] ParamsError),
    #[error(transparent)]
    Pce(#[from] cuzk_pce::PceError),
    #[error("PCE file: {0}")]
    PceFile(#[from] cuzk_pce::file::FileError),
    #[error("upstream {what}: {message}")]
    Upstream { what: &'static str, message: String },
}

/// Upstream returns `anyhow::Error`s; we keep their message chain.
fn upstream<E: std::fmt::Display>(what: &'static str) -> impl FnOnce(E) -> PorepError {
    move |e| PorepError::Upstream {
        what,
        message: format!("{e:#}"),
    }
}

/// One PoRep proof type and what follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealShape {
    proof: RegisteredSealProof,
}

impl SealShape {
    pub fn new(proof: RegisteredSealProof) -> Result<Self, PorepError> {
        use RegisteredSealProof::*;
        match proof {
            StackedDrg2KiBV1_2_Feat_NonInteractivePoRep
            | StackedDrg8MiBV1_2_Feat_NonInteractivePoRep
            | StackedDrg512MiBV1_2_Feat_NonInteractivePoRep
            | StackedDrg32GiBV1_2_Feat_NonInteractivePoRep
            | StackedDrg64GiBV1_2_Feat_NonInteractivePoRep => Err(PorepError::Unsupported(
                proof,
                "non-interactive PoRep needs proof aggregation, not supported yet",
            )),
            _ => Ok(SealShape { proof }),
        }
    }

    /// The current (V1_1) proof type for a sector size such as `2KiB` or `32GiB`.
    pub fn from_sector_size(size: &str) -> Result<Self, PorepError> {
        use RegisteredSealProof::*;
        let proof = match size {
            "2KiB" => StackedDrg2KiBV1_1,
            "8MiB" => StackedDrg8MiBV1_1,
            "512MiB" => StackedDrg512MiBV1_1,
            "32GiB" => StackedDrg32GiBV1_1,
            "64GiB" => StackedDrg64GiBV1_1,
            other => return Err(PorepError::SectorSize(other.to_string())),
        };
        SealShape::new(proof)
    }

    pub fn registered_proof(&self) -> RegisteredSealProof {
        self.proof
    }

    pub fn sector_size(&self) -> u64 {
        u64::from(self.proof.sector_size())
    }

    pub fn partitions(&self) -> usize {
        usize::from(self.proof.as_v1_config().partitions)
    }

    /// Upstream's parameter identifier, e.g.
    /// `stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-<hash>`.
    pub fn circuit_identifier(&self) -> Result<String, PorepError> {
        self.proof
            .circuit_identifier()
            .map_err(upstream("circuit identifier"))
    }

    /// The file names upstream looks for in `FIL_PROOFS_PARAMETER_CACHE`: `.params`, `.vk`, `.meta`.
    pub fn file_names(&self) -> Result<[String; 3], PorepError> {
        let id = self.circuit_identifier()?;
        Ok(["params", "vk", "meta"].map(|ext| format!("v{VERSION}-{id}.{ext}")))
    }

    /// Synthesises every partition of `c1` (in parallel) into a witness and its public inputs.
    pub fn witnesses(
        &self,
        c1: &C1Input,
        synthesis: Synthesis<'_>,
    ) -> Result<Vec<PartitionWitness>, PorepError> {
        self.check_proof(c1)?;
        dispatch!(
            self.sector_size(),
            partition_witnesses(self, &c1.output, synthesis, None)
        )
    }

    /// Synthesises partition `partition` of `c1` only (what a partition-level scheduler needs).
    pub fn partition_witness(
        &self,
        c1: &C1Input,
        partition: usize,
        synthesis: Synthesis<'_>,
    ) -> Result<PartitionWitness, PorepError> {
        self.check_proof(c1)?;
        if partition >= self.partitions() {
            return Err(PorepError::Malformed(format!(
                "partition {partition} does not exist; {:?} has {}",
                self.proof,
                self.partitions()
            )));
        }
        let mut one = dispatch!(
            self.sector_size(),
            partition_witnesses(self, &c1.output, synthesis, Some(partition))
        )?;
        Ok(one.remove(0))
    }

    fn check_proof(&self, c1: &C1Input) -> Result<(), PorepError> {
        if c1.output.registered_proof != self.proof {
            return Err(PorepError::Malformed(format!(
                "registered_proof is {:?}, expected {:?}",
                c1.output.registered_proof, self.proof
            )));
        }
        Ok(())
    }

    /// Records this shape's constraint matrices (once per circuit, reused for every proof).
    pub fn extract_pce(&self) -> Result<Pce, PorepError> {
        dispatch!(self.sector_size(), extract(self))
    }

    /// The identity a PCE file of this shape carries: upstream's circuit identifier.
    pub fn pce_identity(&self) -> Result<String, PorepError> {
        self.circuit_identifier()
    }

    /// File name for this shape's PCE cache, beside the parameters.
    pub fn pce_file_name(&self) -> Result<String, PorepError> {
        Ok(format!(
            "cuzk-pce-v{}-{}.pce",
            cuzk_pce::file::VERSION,
            self.circuit_identifier()?
        ))
    }

    /// Runs a fresh random setup for this shape's circuit with our generator.
    pub fn generate_params(
        &self,
        rng: &mut impl rand_core::RngCore,
    ) -> Result<ProvingKey, PorepError> {
        dispatch!(self.sector_size(), setup(self, rng))
    }

    /// Writes `.params`, `.vk` and `.meta` under their upstream names into `dir`.
    pub fn write_params(&self, pk: &ProvingKey, dir: &Path) -> Result<(), PorepError> {
        let [params, vk, meta] = self.file_names()?;
        std::fs::create_dir_all(dir).map_err(|source| ParamsError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        pk.write(dir.join(params))?;
        pk.vk.write(dir.join(vk))?;
        let meta_path = dir.join(meta);
        std::fs::write(
            &meta_path,
            format!("{{\"sector_size\":{}}}", self.sector_size()),
        )
        .map_err(|source| ParamsError::Io {
            path: meta_path,
            source,
        })?;
        Ok(())
    }
}

/// How partition witnesses are produced.
#[derive(Clone, Copy, Debug)]
pub enum Synthesis<'a> {
    /// Full constraint synthesis (the reference path).
    Full,
    /// Witness-only synthesis plus the pre-compiled matrices.
    Pce(&'a Pce),
}

/// One partition's witness and the public inputs its proof verifies against.
#[derive(Debug)]
pub struct PartitionWitness {
    pub witness: Witness,
    pub public_inputs: Vec<Fr>,
}

/// Calls a function generic over the sector's Merkle tree shape.
macro_rules! dispatch {
    ($size:expr, $f:ident($($arg:expr),*)) => {
        match $size {
            2048 => $f::<SectorShape2KiB>($($arg),*),
            0x80_0000 => $f::<SectorShape8MiB>($($arg),*),
            0x2000_0000 => $f::<SectorShape512MiB>($($arg),*),
            0x8_0000_0000 => $f::<SectorShape32GiB>($($arg),*),
            0x10_0000_0000 => $f::<SectorShape64GiB>($($arg),*),
            other => Err(PorepError::SectorSize(other.to_string())),
        }
    };
}
use dispatch;

type Compound<Tree> = StackedCompound<Tree, DefaultPieceHasher>;

fn public_params<Tree: 'static + MerkleTreeTrait>(
    shape: &SealShape,
) -> Result<
    compound_proof::PublicParams<'static, StackedDrg<'static, Tree, DefaultPieceHasher>>,
    PorepError,
> {
    let config = shape.proof.as_v1_config();
    let setup = compound_proof::SetupParams {
        vanilla_params: setup_params(&config).map_err(upstream("setup params"))?,
        partitions: Some(shape.partitions()),
        priority: false,
    };
    <Compound<Tree> as CompoundProof<StackedDrg<'_, Tree, DefaultPieceHasher>, _>>::setup(&setup)
        .map_err(upstream("public params"))
}

/// Runs `f`, turning a panic inside upstream code into a typed error.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, PorepError>) -> Result<T, PorepError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(PorepError::Malformed(format!(
            "{what} failed on this input: {msg}"
        )))
    })
}

fn partition_witnesses<Tree: 'static + MerkleTreeTrait>(
    shape: &SealShape,
    c1: &SealCommitPhase1Output,
    synthesis: Synthesis<'_>,
    only: Option<usize>,
) -> Result<Vec<PartitionWitness>, PorepError> {
    if c1.comm_d == [0; 32] || c1.comm_r == [0; 32] || c1.seed == [0; 32] {
        return Err(PorepError::Malformed(
            "comm_d, comm_r and seed must not be all zero".into(),
        ));
    }
    let vanilla: Vec<Vec<VanillaSealProof<Tree>>> = c1
        .vanilla_proofs
        .clone()
        .try_into()
        .map_err(|e: anyhow::Error| PorepError::Malformed(format!("vanilla_proofs: {e:#}")))?;
    if vanilla.len() != shape.partitions() || vanilla.iter().any(|p| p.is_empty()) {
        return Err(PorepError::PartitionCount {
            proof: shape.proof,
            expected: shape.partitions(),
            got: vanilla.iter().filter(|p| !p.is_empty()).count(),
        });
    }
    let comm_r = <Tree::Hasher as Hasher>::Domain::try_from_bytes(&c1.comm_r)
        .map_err(|e| PorepError::Malformed(format!("comm_r: {e:#}")))?;
    let comm_d = DefaultPieceDomain::try_from_bytes(&c1.comm_d)
        .map_err(|e| PorepError::Malformed(format!("comm_d: {e:#}")))?;
    let replica_id = <Tree::Hasher as Hasher>::Domain::try_from_bytes(&c1.replica_id.into_bytes())
        .map_err(|e| PorepError::Malformed(format!("replica_id: {e:#}")))?;
    let pub_in = stacked::PublicInputs {
        replica_id,
        tau: Some(stacked::Tau { comm_d, comm_r }),
        k: None,
        seed: Some(c1.seed),
    };
    let pp = public_params::<Tree>(shape)?;
    vanilla
        .par_iter()
        .enumerate()
        .filter(|(k, _)| only.map_or(true, |o| o == *k))
        .map(|(k, proofs)| {
            guarded("partition synthesis", || {
                let inputs =
                    Compound::<Tree>::generate_public_inputs(&pub_in, &pp.vanilla_params, Some(k))
                        .map_err(upstream("public inputs"))?;
                let circuit =
                    Compound::<Tree>::circuit(&pub_in, (), proofs, &pp.vanilla_params, Some(k))
                        .map_err(upstream("circuit"))?;
                let witness = match synthesis {
                    Synthesis::Full => {
                        Witness::synthesize(circuit).map_err(|e| PorepError::Prove {
                            partition: k,
                            source: e.into(),
                        })?
                    }
                    Synthesis::Pce(pce) => pce.witness(circuit)?,
                };
                Ok(PartitionWitness {
                    witness,
                    public_inputs: inputs,
                })
            })
        })
        .collect()
}

fn blank<Tree: 'static + MerkleTreeTrait>(
    shape: &SealShape,
) -> Result<storage_proofs_porep::stacked::StackedCircuit<Tree, DefaultPieceHasher>, PorepError> {
    let pp = public_params::<Tree>(shape)?;
    Ok(<Compound<Tree> as CompoundProof<
        StackedDrg<'_, Tree, DefaultPieceHasher>,
        _,
    >>::blank_circuit(&pp.vanilla_params))
}

fn extract<Tree: 'static + MerkleTreeTrait>(shape: &SealShape) -> Result<Pce, PorepError> {
    Ok(Pce::extract(blank::<Tree>(shape)?)?)
}

fn setup<Tree: 'static + MerkleTreeTrait>(
    shape: &SealShape,
    rng: &mut impl rand_core::RngCore,
) -> Result<ProvingKey, PorepError> {
    Ok(generator::generate(blank::<Tree>(shape)?, rng)?)
}
