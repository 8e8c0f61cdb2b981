//! [`CircuitShape`]: what every fixed Filecoin circuit offers the engine and the CLI, so a new
//! proof kind gets parameter files, PCE caches and random setups by naming its blank circuit
//! and upstream's identifier.

use std::path::Path;

use blstrs::Scalar as Fr;
use cuzk_groth16::generator;
use cuzk_groth16::params::{ParamsError, ProvingKey};
use cuzk_groth16::ProverError;
use cuzk_pce::{Pce, PceError};

use crate::porep::{param_file_names, pce_file_name, write_param_files};

/// One proof type's circuit, fixed up to its witness.
pub trait CircuitShape {
    /// The circuit with or without values.
    type Circuit<'a>: bellpepper_core::Circuit<Fr>
    where
        Self: 'a;
    type Error: From<PceError> + From<ProverError> + From<ParamsError>;

    /// The circuit with every value unknown, for parameter generation and PCE extraction.
    fn blank(&self) -> Self::Circuit<'_>;

    /// Bytes of the sector the proof is about (written into the `.meta` file).
    fn sector_size(&self) -> u64;

    /// Upstream's parameter identifier, which names the parameter files and the PCE cache.
    fn circuit_identifier(&self) -> String;

    /// The engine's circuit id (`wpost-32g`, `snap-2k`, ...), a short label for logs.
    fn circuit_id(&self) -> String;

    /// The `.params`, `.vk` and `.meta` names upstream looks for.
    fn file_names(&self) -> [String; 3] {
        param_file_names(&self.circuit_identifier())
    }

    /// The identity a PCE file of this circuit carries.
    fn pce_identity(&self) -> String {
        self.circuit_identifier()
    }

    fn pce_file_name(&self) -> String {
        pce_file_name(&self.circuit_identifier())
    }

    /// Records this circuit's constraint matrices (once per circuit, reused for every proof).
    fn extract_pce(&self) -> Result<Pce, Self::Error> {
        Ok(Pce::extract(self.blank())?)
    }

    /// A fresh random setup of this circuit with our generator.
    fn generate_params(&self, rng: &mut dyn rand_core::RngCore) -> Result<ProvingKey, Self::Error> {
        self.generate_params_with(rng, &generator::CpuFixedBase)
    }

    /// [`generate_params`](Self::generate_params) with the query points made by `mul` (the
    /// same key for the same seed).
    fn generate_params_with(
        &self,
        rng: &mut dyn rand_core::RngCore,
        mul: &dyn generator::FixedBaseMul,
    ) -> Result<ProvingKey, Self::Error> {
        let mut rng = rng;
        let cs = cuzk_groth16::r1cs::record(self.blank())?;
        Ok(generator::generate_with(&cs, &mut rng, mul)?)
    }

    /// Writes `.params`, `.vk` and `.meta` under their upstream names into `dir`.
    fn write_params(&self, pk: &ProvingKey, dir: &Path) -> Result<(), Self::Error> {
        Ok(write_param_files(
            pk,
            dir,
            &self.file_names(),
            self.sector_size(),
        )?)
    }
}
