//! Filecoin circuits for cuzk.
//!
//! [`c1`] reads what lotus and Curio hand to C2 (the `SealCommitPhase1Output` JSON, raw or in
//! Curio's envelope) with typed errors. [`porep`] turns it into one Groth16 witness and public
//! input vector per partition, names the upstream parameter files, and runs a setup for a
//! proof type. For now the PoRep circuit is upstream's `StackedCircuit` synthesised into our
//! constraint systems; our own circuit replaces it without changing this API.

pub mod c1;
pub mod porep;

pub use c1::{C1Error, C1Input};
pub use filecoin_proofs_api::RegisteredSealProof;
pub use porep::{PorepError, SealShape, Synthesis};
