//! One memory budget for everything big the engine holds: decoded parameters, PCE matrices and
//! per-partition working sets (witness + backend scratch).
//!
//! [`Budget`] is plain accounting; admission (in the engine) charges it before anything is
//! loaded or synthesised, so the accounted total never exceeds the limit. Sizes come from a
//! [`Meter`], which measures the real objects (or, in tests, scales them so that small circuits
//! weigh like large ones).

use std::mem::size_of;

use cuzk_groth16::assignment::Witness;
use cuzk_groth16::params::ProvingKey;
use cuzk_groth16::{Fr, G1Affine, G2Affine};
use cuzk_pce::Pce;

/// Accounted bytes against a fixed limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    limit: u64,
    used: u64,
    peak: u64,
}

impl Budget {
    pub fn new(limit: u64) -> Self {
        Budget {
            limit,
            used: 0,
            peak: 0,
        }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    pub fn used(&self) -> u64 {
        self.used
    }

    /// The highest `used` ever reached.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    pub fn free(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }

    /// Charges `bytes` if they fit.
    pub fn try_charge(&mut self, bytes: u64) -> bool {
        if bytes > self.free() {
            return false;
        }
        self.used += bytes;
        self.peak = self.peak.max(self.used);
        true
    }

    /// Charges `bytes` even past the limit, for memory that already exists (an estimate that
    /// proved short); the overrun shows in [`Budget::peak`].
    pub fn force_charge(&mut self, bytes: u64) {
        self.used += bytes;
        self.peak = self.peak.max(self.used);
    }

    pub fn release(&mut self, bytes: u64) {
        debug_assert!(bytes <= self.used, "releasing more than was charged");
        self.used -= bytes.min(self.used);
    }
}

/// How object sizes are measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Meter {
    /// The bytes the objects really occupy.
    #[default]
    Heap,
    /// Real sizes times a factor: a simulated meter for tests and benchmarks.
    Scaled(u64),
}

const FR: u64 = size_of::<Fr>() as u64;

impl Meter {
    /// `bytes` as this meter counts them.
    pub fn scale(self, bytes: u64) -> u64 {
        match self {
            Meter::Heap => bytes,
            Meter::Scaled(k) => bytes.saturating_mul(k),
        }
    }

    /// A proving key with every section decoded (known from the file layout alone), and its
    /// fixed-base tables once made.
    pub fn params(self, pk: &ProvingKey) -> u64 {
        let [h, l, a, b_g1, b_g2] = pk.lengths().map(|n| n as u64);
        let g1 = size_of::<G1Affine>() as u64;
        let g2 = size_of::<G2Affine>() as u64;
        self.scale((h + l + a + b_g1 + pk.vk.ic.len() as u64) * g1 + b_g2 * g2 + pk.tables_bytes())
    }

    pub fn pce(self, pce: &Pce) -> u64 {
        self.scale(pce.heap_bytes() as u64)
    }

    /// A witness as allocated (capacities, not lengths).
    pub fn witness(self, w: &Witness) -> u64 {
        let values = [&w.a, &w.b, &w.c, &w.input, &w.aux]
            .iter()
            .map(|v| v.capacity() as u64)
            .sum::<u64>();
        let d = &w.density;
        let bits = [&d.a_aux, &d.b_input, &d.b_aux]
            .iter()
            .map(|d| 8 * d.words().len() as u64)
            .sum::<u64>();
        self.scale(values * FR + bits)
    }

    /// A partition of witness columns only (the device evaluates a, b, c): `values` is the
    /// capacity of its input and aux vectors together.
    pub fn columns(self, values: usize) -> u64 {
        self.scale(FR * values as u64)
    }

    /// Before any partition of a circuit was measured: the lengths the key implies, doubled
    /// (a vector grown by pushing may hold up to twice its length, and at least 4 items).
    pub fn witness_bound(self, pk: &ProvingKey) -> u64 {
        let [h, l, _, _, _] = pk.lengths().map(|n| n as u64);
        let (rows, inputs) = (h + 1, pk.vk.ic.len() as u64);
        let grown = |len: u64, item: u64| item * (2 * len).max(4);
        let values = 3 * grown(rows, FR) + grown(inputs, FR) + grown(l, FR);
        let bits = 2 * grown(l.div_ceil(64), 8) + grown(inputs.div_ceil(64), 8);
        self.scale(values + bits)
    }

    /// Before any partition was measured, for partitions made as columns only (a device
    /// evaluates the PCE): the input and aux values, doubled as [`Meter::witness_bound`] does.
    pub fn columns_bound(self, pk: &ProvingKey) -> u64 {
        let [_, l, _, _, _] = pk.lengths().map(|n| n as u64);
        self.scale(2 * FR * (pk.vk.ic.len() as u64 + l))
    }

    /// Backend working memory for one partition, modelled on the CPU reference backend: three
    /// domain-sized vectors for the quotient, plus the aux and B scalars it gathers.
    pub fn scratch(self, pk: &ProvingKey) -> u64 {
        let [h, l, _, b_g1, _] = pk.lengths().map(|n| n as u64);
        self.scale(FR * (3 * (h + 1) + l + b_g1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_never_exceed_the_limit() {
        let mut b = Budget::new(100);
        assert!(b.try_charge(60));
        assert!(!b.try_charge(41));
        assert!(b.try_charge(40));
        assert_eq!(b.free(), 0);
        b.release(60);
        assert_eq!((b.used(), b.peak()), (40, 100));
    }

    #[test]
    fn the_witness_bound_covers_a_synthesised_witness() {
        use cuzk_groth16::conformance::{standard_shapes, RandomCircuit};
        use rand_chacha::rand_core::SeedableRng;
        for (i, shape) in standard_shapes().into_iter().enumerate() {
            let c = RandomCircuit::new(shape, i as u64);
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
            let pk = cuzk_groth16::generator::generate(c.clone(), &mut rng).unwrap();
            let w = Witness::synthesize(c).unwrap();
            assert!(
                Meter::Heap.witness(&w) <= Meter::Heap.witness_bound(&pk),
                "{shape:?}"
            );
            assert_eq!(Meter::Scaled(10).witness(&w), 10 * Meter::Heap.witness(&w));
        }
    }
}
