//! Proof kinds: the only place that knows what a payload means.
//!
//! A [`ProofKind`] turns a request payload into a [`Plan`]: which circuit (proving key) it
//! needs, how many partitions, each partition's witness and public inputs, and how partition
//! proofs become the result bytes. The engine schedules, budgets and proves partitions without
//! knowing anything else, so PoSt and SnapDeals slot in as more kinds in the [`Registry`].

mod porep;
mod post;
mod snap;
mod synthetic;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::generator::FixedBaseMul;
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::{Fr, Proof};
use cuzk_pce::Pce;
use rand::RngCore;
use serde::{Deserialize, Serialize};

pub use crate::error::KindError;
pub use porep::PorepKind;
pub use post::PostKind;
pub use snap::SnapKind;
pub use synthetic::{SyntheticKind, SyntheticPayload};

/// Names one proving key (and its PCE), e.g. `porep-2k`; residency and status use it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct CircuitId(pub String);

impl fmt::Display for CircuitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for CircuitId {
    fn from(s: &str) -> Self {
        CircuitId(s.to_string())
    }
}

/// One partition, ready for a backend.
#[derive(Debug)]
pub struct PartitionInput {
    pub witness: Witness,
    /// What the partition proof must verify against.
    pub public_inputs: Vec<Fr>,
}

/// One partition's witness columns without a, b, c, for devices that evaluate the circuit's
/// PCE themselves.
#[derive(Debug)]
pub struct PartitionColumns {
    /// Input column values; `input[0]` is ONE.
    pub input: Vec<Fr>,
    pub aux: Vec<Fr>,
    pub public_inputs: Vec<Fr>,
}

/// Where a circuit's resources live on disk.
#[derive(Clone, Debug)]
pub struct CircuitSpec {
    pub id: CircuitId,
    /// The bellperson `.params` file.
    pub params: PathBuf,
    /// Pre-compiled constraints; `None` means partitions use full synthesis.
    pub pce: Option<PceSpec>,
    /// Whether a CPU backend should keep fixed-base tables of the key (within the engine's
    /// `tables_bytes`): they pay where the witness is mostly full field elements (Poseidon),
    /// so that every query's MSM takes random scalars; a bit witness (SHA-256) skips most of
    /// its MSMs through the 0/1 split, and only the large H query would use them.
    pub tables: bool,
    /// The circuit's random setup, for keys made in memory ([`crate::SeededKeys`]).
    pub setup: KeySetup,
}

/// Runs a circuit's random setup: the same key `cuzk paramgen` writes for the same randomness,
/// whatever device makes the points.
#[derive(Clone)]
pub struct KeySetup(
    #[allow(clippy::type_complexity)]
    pub  Arc<
        dyn Fn(&mut dyn RngCore, &dyn FixedBaseMul) -> Result<ProvingKey, KindError> + Send + Sync,
    >,
);

impl fmt::Debug for KeySetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeySetup")
    }
}

/// A PCE file and how to make it when it is missing or stale.
#[derive(Clone)]
pub struct PceSpec {
    pub path: PathBuf,
    /// Must match the identity stored in the file.
    pub identity: String,
    pub extract: Arc<dyn Fn() -> Result<Pce, KindError> + Send + Sync>,
}

impl fmt::Debug for PceSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PceSpec")
            .field("path", &self.path)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl From<cuzk_circuits::PartitionColumns> for PartitionColumns {
    fn from(c: cuzk_circuits::PartitionColumns) -> Self {
        PartitionColumns {
            input: c.input,
            aux: c.aux,
            public_inputs: c.public_inputs,
        }
    }
}

/// Where a Filecoin kind finds its parameters (and PCE caches, beside them, under upstream's
/// file names) and how its partitions synthesise.
#[derive(Clone, Debug)]
struct Files {
    params_dir: PathBuf,
    /// Pre-compiled constraints (extracted into `params_dir` the first time).
    pce: bool,
    /// With `pce`: the native witness generator, else witness-only synthesis (the reference).
    native: bool,
}

impl Files {
    fn new(params_dir: impl Into<PathBuf>, pce: bool) -> Self {
        Files {
            params_dir: params_dir.into(),
            pce,
            native: true,
        }
    }

    /// How a partition synthesises with the circuit's PCE, if it has one.
    fn synthesis<'a>(&self, pce: Option<&'a Pce>) -> cuzk_circuits::Synthesis<'a> {
        use cuzk_circuits::Synthesis;
        match pce {
            None => Synthesis::Full,
            Some(pce) if self.native => Synthesis::Native(pce),
            Some(pce) => Synthesis::Pce(pce),
        }
    }

    /// The resources of a fixed circuit.
    fn spec<S>(&self, shape: S) -> CircuitSpec
    where
        S: cuzk_circuits::CircuitShape + Send + Sync + 'static,
        S::Error: std::fmt::Display,
    {
        let [params, _, _] = shape.file_names();
        let id = CircuitId(shape.circuit_id());
        let shape = Arc::new(shape);
        let extract_from = shape.clone();
        let pce = self.pce.then(|| PceSpec {
            path: self.params_dir.join(shape.pce_file_name()),
            identity: shape.pce_identity(),
            extract: Arc::new(move || {
                extract_from
                    .extract_pce()
                    .map_err(|e| KindError::Other(e.to_string()))
            }),
        });
        CircuitSpec {
            id,
            params: self.params_dir.join(params),
            pce,
            tables: false,
            setup: KeySetup(Arc::new(move |rng, mul| {
                shape
                    .generate_params_with(rng, mul)
                    .map_err(|e| KindError::Other(e.to_string()))
            })),
        }
    }
}

/// A parsed, checked request.
pub trait Plan: Send + Sync {
    fn circuit(&self) -> CircuitId;
    fn partitions(&self) -> usize;
    /// Produces partition `partition`'s witness (with the circuit's PCE when it has one).
    fn synthesize(&self, partition: usize, pce: Option<&Pce>) -> Result<PartitionInput, KindError>;
    /// Partition `partition`'s columns only, for devices that evaluate `pce` themselves;
    /// `None` where the plan has no way to make them apart from [`Plan::synthesize`] (the
    /// engine then synthesises, and the device proves the witness as any backend does).
    fn columns(&self, partition: usize, pce: &Pce) -> Option<Result<PartitionColumns, KindError>> {
        let _ = (partition, pce);
        None
    }
    /// The result bytes; by default the 192-byte proofs concatenated, as Filecoin expects.
    fn assemble(&self, proofs: &[Proof]) -> Vec<u8> {
        proofs.iter().flat_map(Proof::to_bytes).collect()
    }
}

/// A family of requests (PoRep C2, WindowPoSt, ...).
pub trait ProofKind: Send + Sync {
    /// The registry name requests use.
    fn name(&self) -> &'static str;
    /// Parses and checks `payload`; errors here refuse the request before it is accepted.
    fn plan(&self, payload: &[u8]) -> Result<Arc<dyn Plan>, KindError>;
    /// Describes circuit `id` if this kind proves with it.
    fn circuit(&self, id: &CircuitId) -> Option<CircuitSpec>;
}

/// The proof kinds an engine serves, by name.
#[derive(Clone, Default)]
pub struct Registry {
    kinds: BTreeMap<&'static str, Arc<dyn ProofKind>>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.kinds.keys()).finish()
    }
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every Filecoin proof kind cuzk serves (PoRep C2, WindowPoSt, WinningPoSt, SnapDeals),
    /// with parameters and PCE caches in `params_dir`; `pce` and `native` as
    /// [`PorepKind::new`] and [`PorepKind::with_native_witness`] describe them.
    pub fn filecoin(params_dir: &std::path::Path, pce: bool, native: bool) -> Self {
        use cuzk_circuits::post::PostType;
        let post = |t| PostKind::new(t, params_dir, pce).with_native_witness(native);
        Registry::new()
            .with(PorepKind::new(params_dir, pce).with_native_witness(native))
            .with(post(PostType::Window))
            .with(post(PostType::Winning))
            .with(SnapKind::new(params_dir, pce).with_native_witness(native))
    }

    /// Adds `kind`, replacing one of the same name.
    pub fn with(mut self, kind: impl ProofKind + 'static) -> Self {
        self.kinds.insert(kind.name(), Arc::new(kind));
        self
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn ProofKind>> {
        self.kinds.get(name)
    }

    /// The registered kinds' names.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.kinds.keys().copied()
    }

    /// The spec of circuit `id`, from whichever kind knows it.
    pub fn circuit(&self, id: &CircuitId) -> Option<CircuitSpec> {
        self.kinds.values().find_map(|k| k.circuit(id))
    }
}
