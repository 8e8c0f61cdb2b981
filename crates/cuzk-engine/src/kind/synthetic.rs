//! A proof kind over `cuzk_groth16::conformance::RandomCircuit`, for tests and benchmarks:
//! small circuits with real parameter files, real (optional) PCE files and real proofs, so the
//! engine's whole path runs in milliseconds.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::conformance::{RandomCircuit, Shape};
use cuzk_groth16::generator::{self, CpuFixedBase};
use cuzk_groth16::params::{ProvingKey, Validation};
use cuzk_groth16::verifier::{verify_proof, PreparedVerifyingKey};
use cuzk_groth16::Proof;
use cuzk_pce::{Pce, WitnessCs};
use serde::{Deserialize, Serialize};

use super::{
    CircuitId, CircuitSpec, KeySetup, KindError, PartitionColumns, PartitionInput, PceSpec, Plan,
    ProofKind,
};

/// The payload of a synthetic request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyntheticPayload {
    pub circuit: String,
    pub partitions: usize,
    /// Make this partition's synthesis fail, to exercise failure paths.
    #[serde(default)]
    pub fail_partition: Option<usize>,
}

impl SyntheticPayload {
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a plain struct always serialises")
    }
}

#[derive(Debug)]
struct Circuit {
    circuit: RandomCircuit,
    spec: CircuitSpec,
}

/// Named random circuits whose parameters live in one folder.
#[derive(Debug)]
pub struct SyntheticKind {
    circuits: BTreeMap<CircuitId, Arc<Circuit>>,
}

impl SyntheticKind {
    pub const NAME: &'static str = "synthetic";

    /// Registers `circuits` (name, shape); each one's parameters are generated into `dir`
    /// (deterministically from the name) unless already there. With `pce`, partitions use
    /// pre-compiled constraints cached in `dir` as well.
    pub fn new(dir: &Path, circuits: &[(&str, Shape)], pce: bool) -> Result<Self, KindError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| KindError::Other(format!("{}: {e}", dir.display())))?;
        let mut out = BTreeMap::new();
        for (name, shape) in circuits {
            let seed = Self::seed(name);
            let circuit = RandomCircuit::new(*shape, seed);
            let params = dir.join(format!("cuzk-synthetic-{name}.params"));
            let setup_of = circuit.clone();
            let setup = KeySetup(Arc::new(move |mut rng, mul| {
                let cs = cuzk_groth16::r1cs::record(setup_of.clone())
                    .and_then(|cs| generator::generate_with(&cs, &mut rng, mul));
                cs.map_err(|e| KindError::Other(e.to_string()))
            }));
            if !params.exists() {
                let pk = (setup.0)(&mut generator::seeded_rng(seed), &CpuFixedBase)
                    .map_err(|e| KindError::Other(format!("setup of {name}: {e}")))?;
                pk.write(&params)
                    .map_err(|e| KindError::Other(format!("writing {name}: {e}")))?;
            }
            let extract_from = circuit.clone();
            let pce = pce.then(|| PceSpec {
                path: dir.join(format!("cuzk-synthetic-{name}.pce")),
                identity: format!("synthetic-{name}-{seed:016x}"),
                extract: Arc::new(move || {
                    Pce::extract(extract_from.clone()).map_err(|e| KindError::Other(e.to_string()))
                }),
            });
            let id = CircuitId::from(*name);
            let spec = CircuitSpec {
                id: id.clone(),
                params,
                pce,
                tables: false,
                setup,
            };
            out.insert(id, Arc::new(Circuit { circuit, spec }));
        }
        Ok(SyntheticKind { circuits: out })
    }

    /// Asks for fixed-base tables of every circuit's key ([`CircuitSpec::tables`]), as the
    /// PoSt kinds do.
    pub fn with_tables(self) -> Self {
        let circuits = self
            .circuits
            .into_iter()
            .map(|(id, c)| {
                let mut spec = c.spec.clone();
                spec.tables = true;
                let circuit = c.circuit.clone();
                (id, Arc::new(Circuit { circuit, spec }))
            })
            .collect();
        SyntheticKind { circuits }
    }
}

impl SyntheticKind {
    /// The seed of circuit `name`'s constraints and of the key written for it.
    pub fn seed(name: &str) -> u64 {
        name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    }

    /// Whether `result` is a valid proof of every partition of a `circuit` job: each 192-byte
    /// proof is checked against the verifying key in the parameter file.
    pub fn check(&self, circuit: &str, result: &[u8]) -> Result<bool, KindError> {
        let c = self
            .circuits
            .get(&CircuitId::from(circuit))
            .ok_or_else(|| KindError::Other(format!("no circuit {circuit:?}")))?;
        let pk = ProvingKey::read(&c.spec.params, Validation::Full)
            .map_err(|e| KindError::Other(e.to_string()))?;
        let pvk = PreparedVerifyingKey::new(&pk.vk);
        let inputs = c.circuit.public_inputs();
        if result.is_empty() || result.len() % Proof::SIZE != 0 {
            return Ok(false);
        }
        Ok(result.chunks(Proof::SIZE).all(|b| {
            Proof::from_bytes(b).is_ok_and(|p| verify_proof(&pvk, &p, &inputs).unwrap_or(false))
        }))
    }
}

#[derive(Debug)]
struct SyntheticPlan {
    circuit: Arc<Circuit>,
    payload: SyntheticPayload,
}

impl Plan for SyntheticPlan {
    fn circuit(&self) -> CircuitId {
        self.circuit.spec.id.clone()
    }

    fn partitions(&self) -> usize {
        self.payload.partitions
    }

    fn synthesize(&self, partition: usize, pce: Option<&Pce>) -> Result<PartitionInput, KindError> {
        let fail = self.injected(partition)?;
        let c = self.circuit.circuit.clone();
        let public_inputs = c.public_inputs();
        let witness = match pce {
            Some(pce) => pce.witness(c).map_err(|e| fail(e.to_string()))?,
            None => Witness::synthesize(c).map_err(|e| fail(e.to_string()))?,
        };
        Ok(PartitionInput {
            witness,
            public_inputs,
        })
    }

    /// Witness-only synthesis into vectors of the PCE's shape.
    fn columns(&self, partition: usize, pce: &Pce) -> Option<Result<PartitionColumns, KindError>> {
        Some(self.injected(partition).and_then(|fail| {
            let c = self.circuit.circuit.clone();
            let public_inputs = c.public_inputs();
            let (input, aux) = WitnessCs::assign_sized(c, pce.num_inputs, pce.num_aux)
                .map_err(|e| fail(e.to_string()))?;
            Ok(PartitionColumns {
                input,
                aux,
                public_inputs,
            })
        }))
    }
}

impl SyntheticPlan {
    /// The request's injected failure for `partition`, else how to fail it.
    fn injected(&self, partition: usize) -> Result<impl Fn(String) -> KindError, KindError> {
        let fail = move |reason: String| KindError::Partition { partition, reason };
        if self.payload.fail_partition == Some(partition) {
            return Err(fail("failure injected by the request".into()));
        }
        Ok(fail)
    }
}

impl ProofKind for SyntheticKind {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn plan(&self, payload: &[u8]) -> Result<Arc<dyn Plan>, KindError> {
        let payload: SyntheticPayload =
            serde_json::from_slice(payload).map_err(|e| KindError::Payload(e.to_string()))?;
        let circuit = self
            .circuits
            .get(&CircuitId(payload.circuit.clone()))
            .ok_or_else(|| KindError::Payload(format!("no circuit {:?}", payload.circuit)))?
            .clone();
        if payload.partitions == 0 {
            return Err(KindError::Payload(
                "a job needs at least one partition".into(),
            ));
        }
        Ok(Arc::new(SyntheticPlan { circuit, payload }))
    }

    fn circuit(&self, id: &CircuitId) -> Option<CircuitSpec> {
        self.circuits.get(id).map(|c| c.spec.clone())
    }
}
