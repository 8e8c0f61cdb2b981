//! PoRep C2 (StackedDRG): per-partition witnesses and public inputs, parameter file names,
//! and the setup for a sector shape.

use std::path::Path;

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::params::{ParamsError, ProvingKey};
use cuzk_groth16::{generator, Fr, ProverError};
use cuzk_pce::Pce;
use rayon::prelude::*;
use sha2::Digest;
use thiserror::Error;

use crate::c1::C1Input;
use crate::challenges;
use crate::graph::StackedGraph;
use crate::registry::{ChallengeKind, RegisteredSealProof};
use crate::stacked::{StackedCircuit, StackedShape};
use crate::vanilla::{StackedProof, VanillaError};

/// The parameter files' version prefix (`v28-...`), as upstream's parameter cache names them.
pub const PARAMETER_VERSION: u32 = 28;

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
    #[error(transparent)]
    Vanilla(#[from] VanillaError),
    #[error("native witness: {0}")]
    Witness(#[from] crate::witness::WitnessError),
}

/// One PoRep proof type and what follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealShape {
    proof: RegisteredSealProof,
}

impl SealShape {
    pub fn new(proof: RegisteredSealProof) -> Result<Self, PorepError> {
        match proof.challenge_kind() {
            ChallengeKind::NonInteractive => Err(PorepError::Unsupported(
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
        self.proof.sector_size()
    }

    /// The circuit shape of one partition.
    pub fn stacked(&self) -> &'static StackedShape {
        StackedShape::for_sector_size(self.sector_size())
            .expect("every registered proof type's sector size has a shape")
    }

    pub fn partitions(&self) -> usize {
        self.proof.partitions()
    }

    /// Upstream's parameter identifier, e.g.
    /// `stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-<hash>`.
    pub fn circuit_identifier(&self) -> Result<String, PorepError> {
        Ok(self.proof.circuit_identifier())
    }

    /// The file names upstream looks for in `FIL_PROOFS_PARAMETER_CACHE`: `.params`, `.vk`, `.meta`.
    pub fn file_names(&self) -> Result<[String; 3], PorepError> {
        Ok(param_file_names(&self.circuit_identifier()?))
    }

    /// The challenged nodes of partition `partition`, as the verifier derives them from the
    /// replica id and seed (and comm_r, for Synthetic PoRep).
    pub fn challenges(&self, ids: &SectorIds, partition: usize) -> Vec<u64> {
        let nodes = self.sector_size() / 32;
        let per_partition = self.stacked().challenges;
        let (replica_id, seed) = (&ids.replica_id, &ids.seed);
        match self.proof.challenge_kind() {
            ChallengeKind::Synthetic => challenges::synthetic(
                nodes,
                replica_id,
                &ids.comm_r,
                seed,
                per_partition,
                partition,
            ),
            _ => challenges::interactive(nodes, replica_id, seed, per_partition, partition),
        }
    }

    /// The sector's graph (seeded by the proof type's PoRep id).
    pub fn graph(&self) -> StackedGraph {
        StackedGraph::new(
            (self.sector_size() / 32) as u32,
            &self.proof.porep_id(),
            self.proof.api_version(),
        )
    }

    /// The public inputs of partition `partition`: what the verifier checks its proof against.
    pub fn public_inputs(&self, ids: &SectorIds, partition: usize) -> Result<Vec<Fr>, PorepError> {
        let values = ids.values()?;
        let challenges = self.challenges(ids, partition);
        Ok(self
            .stacked()
            .public_inputs(&self.graph(), values, &challenges))
    }

    /// Synthesises every partition of `c1` (in parallel) into a witness and its public inputs.
    pub fn witnesses(
        &self,
        c1: &C1Input,
        synthesis: Synthesis<'_>,
    ) -> Result<Vec<PartitionWitness>, PorepError> {
        self.check_proof(c1)?;
        partition_witnesses(self, c1, synthesis, None)
    }

    /// Synthesises partition `partition` of `c1` only (what a partition-level scheduler needs).
    pub fn partition_witness(
        &self,
        c1: &C1Input,
        partition: usize,
        synthesis: Synthesis<'_>,
    ) -> Result<PartitionWitness, PorepError> {
        self.check_partition(c1, partition)?;
        let mut one = partition_witnesses(self, c1, synthesis, Some(partition))?;
        Ok(one.remove(0))
    }

    /// Partition `partition`'s witness columns from the native generator, without a, b, c: for
    /// a backend that keeps the circuit's PCE and evaluates them itself.
    pub fn partition_columns(
        &self,
        c1: &C1Input,
        partition: usize,
    ) -> Result<PartitionColumns, PorepError> {
        self.check_partition(c1, partition)?;
        let mut one = map_partitions(self, c1, Some(partition), |_, circuit| {
            Ok(circuit.native_witness()?)
        })?;
        let ((input, aux), public_inputs) = one.remove(0);
        Ok(PartitionColumns {
            input,
            aux,
            public_inputs,
        })
    }

    fn check_partition(&self, c1: &C1Input, partition: usize) -> Result<(), PorepError> {
        self.check_proof(c1)?;
        if partition >= self.partitions() {
            return Err(PorepError::Malformed(format!(
                "partition {partition} does not exist; {:?} has {}",
                self.proof,
                self.partitions()
            )));
        }
        Ok(())
    }

    fn check_proof(&self, c1: &C1Input) -> Result<(), PorepError> {
        if c1.registered_proof != self.proof {
            return Err(PorepError::Malformed(format!(
                "registered_proof is {:?}, expected {:?}",
                c1.registered_proof, self.proof
            )));
        }
        let partitions = &c1.vanilla_proofs.partitions;
        if partitions.len() != self.partitions() || partitions.iter().any(|p| p.is_empty()) {
            return Err(PorepError::PartitionCount {
                proof: self.proof,
                expected: self.partitions(),
                got: partitions.iter().filter(|p| !p.is_empty()).count(),
            });
        }
        Ok(())
    }

    /// Partition `partition`'s circuit with its witness values: what [`Self::witnesses`]
    /// synthesises, for callers that drive their own constraint system.
    pub fn partition_circuit(
        &self,
        c1: &C1Input,
        partition: usize,
    ) -> Result<StackedCircuit<'static>, PorepError> {
        self.check_proof(c1)?;
        let proofs = c1.vanilla_proofs.partitions.get(partition).ok_or_else(|| {
            PorepError::Malformed(format!(
                "partition {partition} does not exist; {:?} has {}",
                self.proof,
                self.partitions()
            ))
        })?;
        let ids = SectorIds::of(c1);
        Ok(self
            .checked_circuit(&ids, ids.values()?, partition, proofs)?
            .0)
    }

    /// Checks everything about `c1` that can be checked before synthesis: the proof type, the
    /// partition count, every vanilla proof against the shape, and that each challenge is the
    /// one the seed picks. What passes here synthesises without input errors.
    pub fn check(&self, c1: &C1Input) -> Result<(), PorepError> {
        self.check_proof(c1)?;
        let ids = SectorIds::of(c1);
        let values = ids.values()?;
        c1.vanilla_proofs
            .partitions
            .par_iter()
            .enumerate()
            .try_for_each(|(k, proofs)| self.checked_circuit(&ids, values, k, proofs).map(drop))
    }

    /// Partition `k`'s circuit, and its challenges, which must be the seed's.
    fn checked_circuit(
        &self,
        ids: &SectorIds,
        values: [Fr; 3],
        k: usize,
        proofs: &[StackedProof],
    ) -> Result<(StackedCircuit<'static>, Vec<u64>), PorepError> {
        let challenges = self.challenges(ids, k);
        let circuit = build_circuit(self.stacked(), k, proofs, values)?;
        for (j, (proof, expected)) in circuit.proofs.iter().zip(&challenges).enumerate() {
            if proof.challenge != Some(*expected) {
                return Err(PorepError::Vanilla(VanillaError {
                    at: format!("partition {k}, challenge {j}, labeling_proofs[0].node"),
                    reason: format!(
                        "node {}, but the seed challenges node {expected}",
                        proof.challenge.unwrap_or_default()
                    ),
                }));
            }
        }
        Ok((circuit, challenges))
    }

    /// Records this shape's constraint matrices (once per circuit, reused for every proof).
    pub fn extract_pce(&self) -> Result<Pce, PorepError> {
        Ok(Pce::extract(self.stacked().blank())?)
    }

    /// The identity a PCE file of this shape carries: upstream's circuit identifier.
    pub fn pce_identity(&self) -> Result<String, PorepError> {
        self.circuit_identifier()
    }

    /// File name for this shape's PCE cache, beside the parameters.
    pub fn pce_file_name(&self) -> Result<String, PorepError> {
        Ok(pce_file_name(&self.circuit_identifier()?))
    }

    /// Runs a fresh random setup for this shape's circuit with our generator.
    pub fn generate_params(
        &self,
        rng: &mut impl rand_core::RngCore,
    ) -> Result<ProvingKey, PorepError> {
        self.generate_params_with(rng, &generator::CpuFixedBase)
    }

    /// [`generate_params`](Self::generate_params) with the query points made by `mul` (the
    /// same key for the same seed).
    pub fn generate_params_with(
        &self,
        rng: &mut impl rand_core::RngCore,
        mul: &dyn generator::FixedBaseMul,
    ) -> Result<ProvingKey, PorepError> {
        let cs = cuzk_groth16::r1cs::record(self.stacked().blank())?;
        Ok(generator::generate_with(&cs, rng, mul)?)
    }

    /// Writes `.params`, `.vk` and `.meta` under their upstream names into `dir`.
    pub fn write_params(&self, pk: &ProvingKey, dir: &Path) -> Result<(), PorepError> {
        Ok(write_param_files(
            pk,
            dir,
            &self.file_names()?,
            self.sector_size(),
        )?)
    }
}

/// The `.params`, `.vk` and `.meta` names upstream looks for under a circuit identifier.
pub(crate) fn param_file_names(identifier: &str) -> [String; 3] {
    ["params", "vk", "meta"].map(|ext| format!("v{PARAMETER_VERSION}-{identifier}.{ext}"))
}

/// Upstream's identifier of a circuit over a sector's TreeR (Poseidon, 8-0-0 below 32 GiB,
/// 8-8-0 at 32 GiB, 8-8-2 at 64 GiB): the cache prefix, the tree, then SHA-256 of the public
/// parameters' description.
pub(crate) fn tree_r_identifier(prefix: &str, sector_size: u64, description: &str) -> String {
    let tree = match sector_size {
        s if s < 32 << 30 => "8-0-0",
        s if s == 32 << 30 => "8-8-0",
        _ => "8-8-2",
    };
    let hash: String = sha2::Sha256::digest(description.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{prefix}-merkletree-poseidon_hasher-{tree}-{hash}")
}

/// The file name of a circuit's PCE cache (beside its parameters), from upstream's identifier.
pub(crate) fn pce_file_name(circuit_identifier: &str) -> String {
    format!(
        "cuzk-pce-v{}-{circuit_identifier}.pce",
        cuzk_pce::file::VERSION
    )
}

/// Writes a key's `.params`, `.vk` and `.meta` files under `names` into `dir`.
pub(crate) fn write_param_files(
    pk: &ProvingKey,
    dir: &Path,
    [params, vk, meta]: &[String; 3],
    sector_size: u64,
) -> Result<(), ParamsError> {
    std::fs::create_dir_all(dir).map_err(|source| ParamsError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    pk.write(dir.join(params))?;
    pk.vk.write(dir.join(vk))?;
    let meta_path = dir.join(meta);
    std::fs::write(&meta_path, format!("{{\"sector_size\":{sector_size}}}")).map_err(|source| {
        ParamsError::Io {
            path: meta_path,
            source,
        }
    })
}

/// How partition witnesses are produced.
#[derive(Clone, Copy, Debug)]
pub enum Synthesis<'a> {
    /// Full constraint synthesis (the reference path).
    Full,
    /// Witness-only synthesis plus the pre-compiled matrices.
    Pce(&'a Pce),
    /// The native witness generator ([`crate::witness`]) plus the pre-compiled matrices: the
    /// fastest path, and the default where a PCE is loaded.
    Native(&'a Pce),
}

/// One partition's witness and the public inputs its proof verifies against.
#[derive(Debug)]
pub struct PartitionWitness {
    pub witness: Witness,
    pub public_inputs: Vec<Fr>,
}

/// One partition's witness columns without a, b, c, and its public inputs.
#[derive(Debug)]
pub struct PartitionColumns {
    /// Input column values; `input[0]` is ONE.
    pub input: Vec<Fr>,
    pub aux: Vec<Fr>,
    pub public_inputs: Vec<Fr>,
}

/// What identifies a sealed sector to C2's verifier, as C1 carries it: little-endian field
/// elements, and the interactive seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectorIds {
    pub replica_id: [u8; 32],
    pub comm_d: [u8; 32],
    pub comm_r: [u8; 32],
    pub seed: [u8; 32],
}

impl SectorIds {
    pub fn of(c1: &C1Input) -> Self {
        SectorIds {
            replica_id: c1.replica_id,
            comm_d: c1.comm_d,
            comm_r: c1.comm_r,
            seed: c1.seed,
        }
    }

    /// Replica id, comm_d and comm_r as field elements (canonical encodings only).
    fn values(&self) -> Result<[Fr; 3], PorepError> {
        if self.comm_d == [0; 32] || self.comm_r == [0; 32] || self.seed == [0; 32] {
            return Err(PorepError::Malformed(
                "comm_d, comm_r and seed must not be all zero".into(),
            ));
        }
        let value = |name: &str, bytes: &[u8; 32]| {
            crate::vanilla::element(bytes)
                .map_err(|e| PorepError::Malformed(format!("{name}: {e}")))
        };
        Ok([
            value("replica_id", &self.replica_id)?,
            value("comm_d", &self.comm_d)?,
            value("comm_r", &self.comm_r)?,
        ])
    }
}

fn partition_witnesses(
    shape: &SealShape,
    c1: &C1Input,
    synthesis: Synthesis<'_>,
    only: Option<usize>,
) -> Result<Vec<PartitionWitness>, PorepError> {
    let made = map_partitions(shape, c1, only, |k, circuit| match synthesis {
        Synthesis::Full => Witness::synthesize(circuit).map_err(|e| PorepError::Prove {
            partition: k,
            source: e.into(),
        }),
        Synthesis::Pce(pce) => Ok(pce.witness(circuit)?),
        Synthesis::Native(pce) => {
            let (input, aux) = circuit.native_witness()?;
            Ok(pce.evaluate(input, aux)?)
        }
    })?;
    Ok(made
        .into_iter()
        .map(|(witness, public_inputs)| PartitionWitness {
            witness,
            public_inputs,
        })
        .collect())
}

/// Builds and checks each partition's circuit (only partition `only` if set), in parallel, and
/// `make`s something of it; with the public inputs its proof verifies against.
fn map_partitions<T: Send>(
    shape: &SealShape,
    c1: &C1Input,
    only: Option<usize>,
    make: impl Fn(usize, StackedCircuit<'_>) -> Result<T, PorepError> + Sync,
) -> Result<Vec<(T, Vec<Fr>)>, PorepError> {
    let ids = SectorIds::of(c1);
    let values = ids.values()?;
    let stacked = shape.stacked();
    let graph = shape.graph();
    c1.vanilla_proofs
        .partitions
        .par_iter()
        .enumerate()
        .filter(|(k, _)| only.map_or(true, |o| o == *k))
        .map(|(k, proofs)| {
            let (circuit, challenges) = shape.checked_circuit(&ids, values, k, proofs)?;
            let public_inputs = stacked.public_inputs(&graph, values, &challenges);
            Ok((make(k, circuit)?, public_inputs))
        })
        .collect()
}

/// Partition `k`'s circuit from its vanilla proofs, checked against the shape.
fn build_circuit<'a>(
    stacked: &'a StackedShape,
    k: usize,
    proofs: &[StackedProof],
    [replica_id, comm_d, comm_r]: [Fr; 3],
) -> Result<StackedCircuit<'a>, PorepError> {
    if proofs.len() != stacked.challenges {
        return Err(PorepError::Malformed(format!(
            "partition {k} has {} challenge proofs, expected {}",
            proofs.len(),
            stacked.challenges
        )));
    }
    let mut roots = None;
    let mut challenges = Vec::with_capacity(proofs.len());
    for (j, p) in proofs.iter().enumerate() {
        let (proof, r) = p.to_circuit(stacked, k, j)?;
        if *roots.get_or_insert(r) != r {
            return Err(PorepError::Malformed(format!(
                "partition {k}, challenge {j}: comm_c or comm_r_last differs from challenge 0's"
            )));
        }
        challenges.push(proof);
    }
    let roots = roots.expect("a partition has at least one challenge");
    Ok(StackedCircuit {
        shape: stacked,
        replica_id: Some(replica_id),
        comm_d: Some(comm_d),
        comm_r: Some(comm_r),
        comm_r_last: Some(roots.comm_r_last),
        comm_c: Some(roots.comm_c),
        proofs: challenges,
    })
}
