//! The C2 input: `SealCommitPhase1Output` JSON, raw or wrapped in Curio's envelope
//! `{"SectorNum": n, "Phase1Out": base64(json), "SectorSize": bytes}`.

use base64::Engine;
use filecoin_proofs_api::seal::SealCommitPhase1Output;
use serde::Deserialize;
use thiserror::Error;

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
        proof: filecoin_proofs_api::RegisteredSealProof,
        actual: u64,
    },
}

/// A parsed C1 output, with what Curio's envelope adds when present.
#[derive(Debug, Clone)]
pub struct C1Input {
    pub output: SealCommitPhase1Output,
    /// The sector number, when the input came in Curio's envelope.
    pub sector_number: Option<u64>,
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
    /// Parses either form; the envelope is recognised by its `Phase1Out` field.
    pub fn parse(bytes: &[u8]) -> Result<Self, C1Error> {
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(C1Error::NotJson)?;
        if value.get("Phase1Out").is_none() {
            let output = serde_json::from_value(value).map_err(C1Error::Phase1Output)?;
            return Ok(C1Input {
                output,
                sector_number: None,
            });
        }
        let env: Envelope = serde_json::from_value(value).map_err(|e| C1Error::Envelope {
            field: "(envelope)",
            reason: e.to_string(),
        })?;
        let inner = base64::engine::general_purpose::STANDARD
            .decode(env.phase1_out.as_bytes())
            .map_err(|e| C1Error::Envelope {
                field: "Phase1Out",
                reason: format!("not base64: {e}"),
            })?;
        let output: SealCommitPhase1Output =
            serde_json::from_slice(&inner).map_err(C1Error::Phase1Output)?;
        let actual = u64::from(output.registered_proof.sector_size());
        if actual != env.sector_size {
            return Err(C1Error::SectorSize {
                envelope: env.sector_size,
                proof: output.registered_proof,
                actual,
            });
        }
        Ok(C1Input {
            output,
            sector_number: Some(env.sector_num),
        })
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
