//! Native witness generation for a PoSt partition: what [`PostCircuit`]'s synthesis assigns,
//! computed from the values. Every sector slot allocates the same number of values, so the
//! slots fill consecutive slices of one aux vector in parallel.

use blstrs::Scalar as Fr;
use cuzk_gadgets::native::{self, Count, Sink};
use ff::Field;

use super::circuit::{PostCircuit, SectorSlot};
use super::PostShape;
use crate::witness::{fill, WitnessError};

fn value(v: Option<Fr>) -> Result<Fr, WitnessError> {
    v.ok_or(bellpepper_core::SynthesisError::AssignmentMissing.into())
}

/// One slot's aux values, in allocation order; its public inputs go to `inputs`.
fn write_slot(
    shape: &PostShape,
    slot: &SectorSlot,
    s: &mut impl Sink<Fr>,
    inputs: &mut Vec<Fr>,
) -> Result<(), WitnessError> {
    let sector = shape.sector;
    let (comm_r_last, comm_c, comm_r) = (
        value(slot.comm_r_last)?,
        value(slot.comm_c)?,
        value(slot.comm_r)?,
    );
    s.push(comm_r_last);
    s.push(comm_c);
    s.push(comm_r);
    inputs.push(comm_r);
    native::poseidon::hash(s, &[comm_c, comm_r_last], &sector.pair)?;
    for (leaf, path) in slot.leaves.iter().zip(&slot.paths) {
        let leaf = value(*leaf)?;
        s.push(leaf);
        native::por::por(s, inputs, sector.tree, leaf, path, &sector.tree_hashes[..])?;
    }
    Ok(())
}

impl PostCircuit<'_> {
    /// The witness synthesis assigns, `(input, aux)` with ONE as `input[0]`.
    pub fn native_witness(&self) -> Result<(Vec<Fr>, Vec<Fr>), WitnessError> {
        self.check()?;
        let mut count = Count(0);
        write_slot(self.shape, &self.slots[0], &mut count, &mut Vec::new())?;
        let lengths = vec![count.0; self.slots.len()];
        let (aux, slot_inputs) = fill(&lengths, |i, cursor| {
            let mut inputs = Vec::new();
            write_slot(self.shape, &self.slots[i], cursor, &mut inputs)?;
            Ok(inputs)
        })?;
        let mut input = vec![Fr::ONE];
        input.extend(slot_inputs.into_iter().flatten());
        Ok((input, aux))
    }
}
