//! A simulated backend, for tests and benchmarks: it takes a configured time per partition (as
//! a GPU would, without using the CPU) and then proves for real on the CPU reference backend,
//! which is quick for the small synthetic circuits, so every proof still verifies. Faults can
//! be injected to exercise the engine's verification and retry, and a device memory limit set
//! to exercise placement.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::backend::{Backend, CpuBackend, Footprint, Randomness};
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::{G1Affine, G2Affine, Proof, ProverError};
use group::prime::PrimeCurveAffine;
use rand::Rng;

/// What the simulated backend gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    None,
    /// Returns well-formed proofs that do not verify.
    WrongProof,
    /// Fails every call.
    Error,
    /// Panics in every call (as a buggy device wrapper might).
    Panic,
    /// Each call, with this probability in percent, fails in one of the three ways above
    /// (chosen at random); otherwise proves correctly.
    Random {
        percent: u8,
    },
}

/// See the module documentation.
#[derive(Debug)]
pub struct SimBackend {
    delay: Duration,
    fault: Fault,
    calls: AtomicU64,
    /// Sizes of the batches it was given, in call order.
    batches: Mutex<Vec<usize>>,
    /// Simulated device memory, with footprints scaled by the factor.
    memory: Option<(u64, u64)>,
    /// The largest footprint of any call it was given.
    largest_call: AtomicU64,
    /// `Backend::release` calls.
    releases: AtomicU64,
}

impl SimBackend {
    pub fn new(delay: Duration, fault: Fault) -> Self {
        SimBackend {
            delay,
            fault,
            calls: AtomicU64::new(0),
            batches: Mutex::new(Vec::new()),
            memory: None,
            largest_call: AtomicU64::new(0),
            releases: AtomicU64::new(0),
        }
    }

    pub fn releases(&self) -> u64 {
        self.releases.load(Ordering::SeqCst)
    }

    /// Gives it `bytes` of device memory, with sppark's footprints ([`Footprint::uploaded`])
    /// times `scale`, so that small circuits weigh like large ones.
    pub fn with_memory(mut self, bytes: u64, scale: u64) -> Self {
        self.memory = Some((bytes, scale));
        self
    }

    /// The largest device memory any call it was given needed.
    pub fn largest_call(&self) -> u64 {
        self.largest_call.load(Ordering::SeqCst)
    }

    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn batches(&self) -> Vec<usize> {
        self.batches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Backend for SimBackend {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn prove(
        &self,
        pk: &ProvingKey,
        witnesses: &[Witness],
        randomness: &[Randomness],
    ) -> Result<Vec<Proof>, ProverError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(f) = self.footprint(pk) {
            let need = f.call(witnesses.len());
            self.largest_call.fetch_max(need, Ordering::SeqCst);
        }
        self.batches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(witnesses.len());
        std::thread::sleep(self.delay * witnesses.len() as u32);
        let fault = match self.fault {
            Fault::Random { percent } => {
                let mut rng = rand::thread_rng();
                if rng.gen_range(0..100) < percent {
                    [Fault::WrongProof, Fault::Error, Fault::Panic][rng.gen_range(0..3)]
                } else {
                    Fault::None
                }
            }
            f => f,
        };
        match fault {
            Fault::None => CpuBackend.prove(pk, witnesses, randomness),
            Fault::WrongProof => Ok(witnesses
                .iter()
                .map(|_| Proof {
                    a: G1Affine::generator(),
                    b: G2Affine::generator(),
                    c: G1Affine::generator(),
                })
                .collect()),
            Fault::Error => Err(ProverError::Backend {
                backend: "sim",
                message: "injected failure".into(),
            }),
            Fault::Panic | Fault::Random { .. } => panic!("injected panic"),
        }
    }

    fn device_memory(&self) -> Option<u64> {
        self.memory.map(|m| m.0)
    }

    fn footprint(&self, pk: &ProvingKey) -> Option<Footprint> {
        let (_, scale) = self.memory?;
        let f = Footprint::uploaded(pk, 0, 0);
        Some(Footprint {
            resident: f.resident * scale,
            per_proof: f.per_proof * scale,
        })
    }

    fn release(&self, _pk: &ProvingKey) {
        self.releases.fetch_add(1, Ordering::SeqCst);
    }
}
