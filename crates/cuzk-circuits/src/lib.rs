//! Filecoin's proof circuits for cuzk (PoRep C2, WindowPoSt and WinningPoSt), without
//! upstream Filecoin crates.
//!
//! [`c1`] reads what lotus and Curio hand to C2 (the `SealCommitPhase1Output` JSON, raw or in
//! Curio's envelope) and [`vanilla`] checks its vanilla proofs against the sector shape, with
//! typed errors naming the bad field. [`registry`] knows the proof types, [`graph`] and
//! [`challenges`] derive what the verifier derives, [`stacked`] is the circuit (built from
//! `cuzk-gadgets`, row-identical to upstream's), and [`porep`] turns a C1 output into one
//! witness and public-input vector per partition, names the parameter files and runs a setup.
//! [`post`] does the same for WindowPoSt and WinningPoSt from Curio's bincode vanilla proofs.

pub mod c1;
pub mod challenges;
mod codec;
mod error;
pub mod graph;
mod payload;
pub mod porep;
pub mod post;
pub mod registry;
pub mod seal;
mod shape;
pub mod snap;
mod sparse;
pub mod stacked;
pub mod vanilla;
pub mod witness;

pub use c1::{C1Error, C1Input};
pub use error::RequestError;
pub use porep::{PartitionColumns, PartitionWitness, PorepError, SealShape, SectorIds, Synthesis};
pub use post::{PostError, PostPartition, PostRequest, PostShape, RegisteredPostProof};
pub use registry::RegisteredSealProof;
pub use shape::CircuitShape;
pub use stacked::{StackedCircuit, StackedShape};
pub use vanilla::VanillaError;
pub use witness::{WitnessError, WitnessLayout};
