//! The C2 input: `SealCommitPhase1Output` JSON, raw or wrapped in Curio's envelope
//! `{"SectorNum": n, "Phase1Out": base64(json), "SectorSize": bytes}`.

use crate::registry::RegisteredSealProof;
use base64::Engine;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::vanilla::VanillaProofs;

#[derive(Debug, Error)]
pub enum C1Error {
    #[error("C1 input is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("Curio envelope: field {field}: {reason}")]
    Envelope { field: &'static str, reason: String },
    #[error("SealCommitPhase1Output: {0}")]
    Phase1Output(#[source] serde_json::Error),
    #[error("sector size mismatch: the envelope says {envelope} bytes, registered proof {proof:?} is {actual} bytes")]
    SectorSize {
        envelope: u64,
        proof: RegisteredSealProof,
        actual: u64,
    },
    #[error("vanilla_proofs are for {variant}, registered proof {proof:?} needs {expected}")]
    Variant {
        variant: String,
        proof: RegisteredSealProof,
        expected: String,
    },
}

/// A parsed C1 output (`SealCommitPhase1Output`), with what Curio's envelope adds when present.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct C1Input {
    pub registered_proof: RegisteredSealProof,
    pub vanilla_proofs: VanillaProofs,
    /// Little-endian field elements, as upstream writes them.
    pub comm_r: [u8; 32],
    pub comm_d: [u8; 32],
    pub replica_id: [u8; 32],
    pub seed: [u8; 32],
    pub ticket: [u8; 32],
    /// The sector number, when the input came in Curio's envelope.
    #[serde(skip)]
    pub sector_number: Option<u64>,
}

/// Which form an input is in: skims the document for a top-level `Phase1Out`.
#[derive(Deserialize)]
struct Form {
    #[serde(rename = "Phase1Out", default)]
    phase1_out: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    #[serde(rename = "SectorNum")]
    sector_num: u64,
    #[serde(rename = "Phase1Out")]
    phase1_out: String,
    #[serde(rename = "SectorSize")]
    sector_size: u64,
}

impl C1Input {
    /// Parses either form; the envelope is recognised by its `Phase1Out` field. The bytes are
    /// deserialised straight into the types (a 32 GiB C1 output is 50-67 MB of JSON; no
    /// document tree is built), after one skimming pass that finds the form.
    pub fn parse(bytes: &[u8]) -> Result<Self, C1Error> {
        let enveloped = match serde_json::from_slice::<Form>(bytes) {
            Ok(form) => form.phase1_out.is_some(),
            Err(e) if e.is_syntax() || e.is_eof() || e.is_io() => return Err(C1Error::NotJson(e)),
            // Valid JSON but not an object: let the C1 parser name what is wrong.
            Err(_) => false,
        };
        if !enveloped {
            let c1: C1Input = serde_json::from_slice(bytes).map_err(C1Error::Phase1Output)?;
            return c1.checked();
        }
        let env: Envelope = serde_json::from_slice(bytes).map_err(|e| C1Error::Envelope {
            field: "(envelope)",
            reason: e.to_string(),
        })?;
        let inner = base64::engine::general_purpose::STANDARD
            .decode(env.phase1_out.as_bytes())
            .map_err(|e| C1Error::Envelope {
                field: "Phase1Out",
                reason: format!("not base64: {e}"),
            })?;
        let mut c1: C1Input = serde_json::from_slice(&inner).map_err(C1Error::Phase1Output)?;
        let actual = c1.sector_size();
        if actual != env.sector_size {
            return Err(C1Error::SectorSize {
                envelope: env.sector_size,
                proof: c1.registered_proof,
                actual,
            });
        }
        c1.sector_number = Some(env.sector_num);
        c1.checked()
    }

    /// A well-formed C1 output of random values for `proof`: challenges follow the seed and
    /// parents the graph, so it parses and synthesises, but the circuit is not satisfied. For
    /// benchmarks and format tests at sizes no test can seal.
    pub fn random(proof: RegisteredSealProof, rng: &mut impl rand_core::RngCore) -> Self {
        use ff::{Field, PrimeField};
        let mut element = || blstrs::Scalar::random(&mut *rng).to_repr();
        let ids = crate::porep::SectorIds {
            replica_id: element(),
            comm_d: element(),
            comm_r: element(),
            seed: element(),
        };
        let ticket = element();
        let shape = crate::porep::SealShape::new(proof);
        C1Input {
            registered_proof: proof,
            vanilla_proofs: match shape {
                Ok(shape) => crate::vanilla::random::proofs(&shape, &ids, rng),
                Err(_) => VanillaProofs {
                    variant: crate::vanilla::variant_name(proof.sector_size()),
                    partitions: Vec::new(),
                },
            },
            comm_r: ids.comm_r,
            comm_d: ids.comm_d,
            replica_id: ids.replica_id,
            seed: ids.seed,
            ticket,
            sector_number: None,
        }
    }

    /// The sector size the registered proof names, in bytes.
    pub fn sector_size(&self) -> u64 {
        self.registered_proof.sector_size()
    }

    /// Checks that the vanilla proofs are upstream's variant for the registered proof's size.
    fn checked(self) -> Result<Self, C1Error> {
        let expected = crate::vanilla::variant_name(self.sector_size());
        if self.vanilla_proofs.variant != expected {
            return Err(C1Error::Variant {
                variant: self.vanilla_proofs.variant,
                proof: self.registered_proof,
                expected,
            });
        }
        Ok(self)
    }

    /// Wraps raw C1 JSON in Curio's envelope.
    pub fn envelope(raw_c1_json: &[u8], sector_number: u64, sector_size: u64) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "SectorNum": sector_number,
            "Phase1Out": base64::engine::general_purpose::STANDARD.encode(raw_c1_json),
            "SectorSize": sector_size,
        }))
        .expect("a JSON object always serialises")
    }
}
