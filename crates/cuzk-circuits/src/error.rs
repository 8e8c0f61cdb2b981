//! [`RequestError`]: the one error of the kinds whose requests are Curio's fields (PoSt,
//! SnapDeals), naming the field at fault.

use thiserror::Error;

/// A request refused, or a proof that could not be made, with the field at fault.
#[derive(Debug, Error)]
pub enum RequestError {
    #[error("{field}: {reason}")]
    Field { field: String, reason: String },
    /// One vanilla proof (a PoSt sector's, an update partition's) at fault.
    #[error("vanilla_proofs[{index}].{field}: {reason}")]
    Vanilla {
        index: usize,
        field: String,
        reason: String,
    },
    #[error(transparent)]
    Setup(#[from] cuzk_groth16::ProverError),
    #[error(transparent)]
    Params(#[from] cuzk_groth16::params::ParamsError),
    #[error(transparent)]
    Pce(#[from] cuzk_pce::PceError),
    #[error("synthesis: {0}")]
    Synthesis(#[from] bellpepper_core::SynthesisError),
    #[error("native witness: {0}")]
    Witness(#[from] crate::witness::WitnessError),
}

/// A refusal of request field `field`.
pub(crate) fn field(field: &str, reason: impl Into<String>) -> RequestError {
    RequestError::Field {
        field: field.into(),
        reason: reason.into(),
    }
}

/// A refusal of vanilla proof `index`'s field (`(field, reason)`).
pub(crate) fn vanilla(index: usize, (field, reason): (String, String)) -> RequestError {
    RequestError::Vanilla {
        index,
        field,
        reason,
    }
}
