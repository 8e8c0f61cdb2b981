//! Circuit gadgets for Filecoin's proofs on `bellpepper-core`: bits, 32-bit words, SHA-256, field
//! elements, multipacking, window lookups, Poseidon, and the Merkle-path (PoR) gadgets and small
//! helpers Filecoin's circuits are built from.
//!
//! Every gadget is constraint-for-constraint identical to its upstream counterpart (bellpepper,
//! bellpepper-core, neptune, storage-proofs-core, filecoin-hashers): the same variables in the same order, the same rows with the same
//! coefficients, the same witness. Circuits built on these gadgets therefore keep proving and
//! verifying under the published Filecoin parameters. They differ in cost: linear combinations
//! are built by appending terms in place ([`boolean::Boolean::add_to_lc`] and friends) rather
//! than by summing temporaries, and bits and words are `Copy` values.
//!
//! Malformed arguments (wrong lengths, operand counts, arities, tree shapes) are reported as
//! [`bellpepper_core::SynthesisError`], never by panicking.

pub mod boolean;
pub mod constraint;
pub mod insertion;
pub mod lookup;
pub mod multieq;
pub mod multipack;
pub mod native;
pub mod num;
pub mod por;
pub mod poseidon;
pub mod sha256;
#[cfg(feature = "testing")]
pub mod test_util;
pub mod uint32;
pub mod uint64;
