//! PoRep C2 (`porep-c2`): the payload is the C1 output JSON, raw or in Curio's envelope; the
//! result is the partition proofs concatenated, as `seal_commit_phase2` returns them.

use std::path::PathBuf;
use std::sync::Arc;

use cuzk_circuits::{C1Input, SealShape};
use cuzk_pce::Pce;

use super::{
    CircuitId, CircuitSpec, Files, KeySetup, KindError, PartitionColumns, PartitionInput, PceSpec,
    Plan, ProofKind,
};

/// Sector sizes and the circuit-id suffixes Curio uses (`porep-32g`).
const SIZES: [(&str, &str); 5] = [
    ("2KiB", "2k"),
    ("8MiB", "8m"),
    ("512MiB", "512m"),
    ("32GiB", "32g"),
    ("64GiB", "64g"),
];

/// PoRep C2 with parameters (and PCE caches) in one folder under upstream's file names.
#[derive(Clone, Debug)]
pub struct PorepKind {
    files: Files,
}

impl PorepKind {
    pub const NAME: &'static str = "porep-c2";

    /// With `pce`, partitions use pre-compiled constraints, extracted into `params_dir` the
    /// first time a sector size is proved, and the native witness generator.
    pub fn new(params_dir: impl Into<PathBuf>, pce: bool) -> Self {
        let files = Files::new(params_dir, pce);
        PorepKind { files }
    }

    /// With pre-compiled constraints, whether the witness comes from the native generator
    /// (the default) or from witness-only synthesis of the circuit (the reference it is tested
    /// against, kept as a switch back).
    pub fn with_native_witness(mut self, native: bool) -> Self {
        self.files.native = native;
        self
    }

    /// The id of `shape`'s circuit: that of the current proof type of its sector size, if both
    /// use the same parameter files (older proof types with other parameters have none).
    fn circuit_id(shape: &SealShape) -> Option<CircuitId> {
        let files = shape.file_names().ok()?;
        SIZES.iter().find_map(|(name, suffix)| {
            let s = SealShape::from_sector_size(name).ok()?;
            (s.file_names().ok()? == files).then(|| CircuitId(format!("porep-{suffix}")))
        })
    }

    fn spec(&self, shape: SealShape) -> Result<CircuitSpec, KindError> {
        let err = |e: cuzk_circuits::PorepError| KindError::Other(e.to_string());
        let id = Self::circuit_id(&shape)
            .ok_or_else(|| KindError::Other(format!("no circuit id for {shape:?}")))?;
        let [params, _, _] = shape.file_names().map_err(err)?;
        let pce = if self.files.pce {
            Some(PceSpec {
                path: self
                    .files
                    .params_dir
                    .join(shape.pce_file_name().map_err(err)?),
                identity: shape.pce_identity().map_err(err)?,
                extract: Arc::new(move || shape.extract_pce().map_err(err)),
            })
        } else {
            None
        };
        Ok(CircuitSpec {
            id,
            params: self.files.params_dir.join(params),
            pce,
            tables: false,
            setup: KeySetup(Arc::new(move |mut rng, mul| {
                shape.generate_params_with(&mut rng, mul).map_err(err)
            })),
        })
    }
}

#[derive(Debug)]
struct PorepPlan {
    c1: C1Input,
    shape: SealShape,
    circuit: CircuitId,
    files: Files,
}

impl Plan for PorepPlan {
    fn circuit(&self) -> CircuitId {
        self.circuit.clone()
    }

    fn partitions(&self) -> usize {
        self.shape.partitions()
    }

    fn synthesize(&self, partition: usize, pce: Option<&Pce>) -> Result<PartitionInput, KindError> {
        let p = self
            .shape
            .partition_witness(&self.c1, partition, self.files.synthesis(pce))
            .map_err(|e| KindError::Partition {
                partition,
                reason: e.to_string(),
            })?;
        Ok(PartitionInput {
            witness: p.witness,
            public_inputs: p.public_inputs,
        })
    }

    /// The native generator's columns, where the native witness is on.
    fn columns(&self, partition: usize, _pce: &Pce) -> Option<Result<PartitionColumns, KindError>> {
        self.files.native.then(|| {
            let c = self
                .shape
                .partition_columns(&self.c1, partition)
                .map_err(|e| KindError::Partition {
                    partition,
                    reason: e.to_string(),
                })?;
            Ok(c.into())
        })
    }
}

impl ProofKind for PorepKind {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn plan(&self, payload: &[u8]) -> Result<Arc<dyn Plan>, KindError> {
        let c1 = C1Input::parse(payload).map_err(|e| KindError::Payload(e.to_string()))?;
        let shape =
            SealShape::new(c1.registered_proof).map_err(|e| KindError::Payload(e.to_string()))?;
        // Refuse at submission what would only fail at synthesis.
        shape
            .check(&c1)
            .map_err(|e| KindError::Payload(e.to_string()))?;
        let circuit = Self::circuit_id(&shape)
            .ok_or_else(|| KindError::Payload(format!("unsupported proof {shape:?}")))?;
        Ok(Arc::new(PorepPlan {
            c1,
            shape,
            circuit,
            files: self.files.clone(),
        }))
    }

    fn circuit(&self, id: &CircuitId) -> Option<CircuitSpec> {
        let (name, _) = SIZES
            .iter()
            .find(|(_, suffix)| id.0 == format!("porep-{suffix}"))?;
        self.spec(SealShape::from_sector_size(name).ok()?).ok()
    }
}
