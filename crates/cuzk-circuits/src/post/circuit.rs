//! cuzk's FallbackPoSt circuit (WindowPoSt and WinningPoSt), built from `cuzk-gadgets`.
//!
//! Row-for-row storage-proofs-post's `FallbackPoStCircuit`: per sector slot it proves
//! `comm_r = Poseidon(comm_c, comm_r_last)` (comm_r public) and, per challenge, that the
//! challenged leaf is in the comm_r_last tree at the leaf index its public input names.

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;

use cuzk_gadgets::constraint;
use cuzk_gadgets::por::{por, PathElement, Root};
use cuzk_gadgets::poseidon::poseidon_hash;

use super::PostShape;
use crate::stacked::alloc;

/// One sector slot of the circuit: its commitments and its challenged leaves with their paths
/// in the comm_r_last tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectorSlot {
    pub comm_r: Option<Fr>,
    pub comm_c: Option<Fr>,
    pub comm_r_last: Option<Fr>,
    pub leaves: Vec<Option<Fr>>,
    pub paths: Vec<Vec<PathElement<Fr>>>,
}

/// One PoSt partition (a WindowPoSt partition, or the WinningPoSt proof).
#[derive(Clone, Debug)]
pub struct PostCircuit<'a> {
    pub shape: &'a PostShape,
    /// Exactly `shape.slots()` slots (a short partition repeats its last sector).
    pub slots: Vec<SectorSlot>,
}

impl PostCircuit<'_> {
    /// Whether the slot count, challenge counts and path depths fit the shape.
    pub(crate) fn check(&self) -> Result<(), SynthesisError> {
        let (slots, challenges) = self.shape.slots();
        let levels = self.shape.sector.tree_levels();
        let ok = self.slots.len() == slots
            && self.slots.iter().all(|s| {
                s.leaves.len() == challenges
                    && s.paths.len() == challenges
                    && s.paths.iter().all(|p| p.len() == levels)
            });
        if ok {
            Ok(())
        } else {
            Err(SynthesisError::IncompatibleLengthVector(format!(
                "post: the circuit needs {slots} slots of {challenges} challenges with \
                 {levels}-level paths"
            )))
        }
    }
}

impl SectorSlot {
    fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        shape: &PostShape,
    ) -> Result<(), SynthesisError> {
        let sector = shape.sector;
        let comm_r_last = alloc(cs.namespace(|| "comm_r_last"), self.comm_r_last)?;
        let comm_c = alloc(cs.namespace(|| "comm_c"), self.comm_c)?;
        let comm_r = alloc(cs.namespace(|| "comm_r"), self.comm_r)?;
        comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
        let hash = poseidon_hash(
            cs.namespace(|| "H_comm_c_comm_r_last"),
            &[comm_c, comm_r_last],
            &sector.pair,
        )?;
        constraint::equal(
            cs,
            || "enforce_comm_c_comm_r_last_hash_comm_r",
            &comm_r,
            &hash,
        );
        let root = Root::Var(comm_r_last);
        for (i, (leaf, path)) in self.leaves.iter().zip(&self.paths).enumerate() {
            por(
                &mut cs.namespace(|| format!("challenge_inclusion_{i}")),
                sector.tree,
                &Root::Val(*leaf),
                path,
                &root,
                true,
                &sector.tree_hashes[..],
            )?;
        }
        Ok(())
    }
}

impl Circuit<Fr> for PostCircuit<'_> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        self.check()?;
        let cs = &mut cs.namespace(|| "outer namespace");
        for (i, slot) in self.slots.iter().enumerate() {
            slot.synthesize(&mut cs.namespace(|| format!("sector_{i}")), self.shape)?;
        }
        Ok(())
    }
}
