use thiserror::Error;

/// Why a proof could not be produced.
#[derive(Debug, Error)]
pub enum ProverError {
    /// The circuit's own synthesis failed (for example a missing witness value).
    #[error("circuit synthesis failed: {0}")]
    Synthesis(#[from] bellpepper_core::SynthesisError),
    /// The parameters do not belong to this circuit.
    #[error("parameters do not match the circuit: section {section} has {got} points, the circuit needs {expected}")]
    ParamsMismatch {
        section: &'static str,
        expected: usize,
        got: usize,
    },
    /// A parameter section could not be decoded.
    #[error(transparent)]
    Params(#[from] crate::params::ParamsError),
    /// The evaluation domain would exceed the field's two-adicity.
    #[error(transparent)]
    Domain(#[from] crate::domain::DomainError),
    /// A batch call got a different number of witnesses and randomness pairs.
    #[error("batch has {witnesses} witnesses but {randomness} randomness pairs")]
    BatchShape { witnesses: usize, randomness: usize },
    /// The circuit exceeds what the recorder can index.
    #[error("circuit too large to record: {what} exceed {max}")]
    TooLarge { what: &'static str, max: usize },
    /// The setup found an aux column that no constraint uses.
    #[error(
        "aux variable {column} appears in no constraint; bellperson parameters cannot represent it"
    )]
    Unconstrained { column: usize },
    /// A backend-specific failure (device errors, out of memory, ...).
    #[error("backend {backend}: {message}")]
    Backend {
        backend: &'static str,
        message: String,
    },
}

/// Why a verification could not be carried out (a proof that is merely wrong gives `Ok(false)`).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VerifyError {
    /// The number of public inputs does not match the verifying key.
    #[error("verifying key expects {expected} public inputs, got {got}")]
    InputCount { expected: usize, got: usize },
    /// The proof bytes do not encode valid points.
    #[error("malformed proof: {0}")]
    MalformedProof(&'static str),
}
