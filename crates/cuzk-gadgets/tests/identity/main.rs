//! R1CS identity of every gadget with its upstream counterpart, over random inputs.

mod boolean;
mod filecoin;
mod harness;
mod lookup;
mod multipack;
mod num;
mod poseidon;
mod sha256;
mod uint32;
