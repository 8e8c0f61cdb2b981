//! Where a proving key's queries live on one GPU.
//!
//! A query is resident (uploaded once, kept between proofs) or, when the key and the circuit's
//! matrices beside it do not fit the card, streamed: uploaded again at every proof in chunks,
//! each summed as its next batch goes up, and freed before the next chunk. A card smaller
//! than a key then still proves it, paying bus time per proof instead of refusing the work: a
//! 32 GiB WindowPoSt key (about 69 GB) beside its PCE fits an H200 whole, but on an 80 GB H100
//! its B G2 query streams. The plan keeps as many of the key's bytes resident as fit.

use cuzk_groth16::backend::Footprint;

use crate::msm::{Table, G1, G2};
use crate::GpuError;

/// Device memory kept back from placement for the CUDA context and allocator slack.
pub const CONTEXT_RESERVE: u64 = 1 << 30;

/// What each resident query's `msm_t` allocates besides its points (its bucket arrays): the
/// H200 showed 1.6 GiB over the five queries of a 32 GiB key.
pub(crate) const MSM_BUCKETS: u64 = 384 << 20;

/// A call's device memory besides a, b and c: one batch of scalars and digits. The H200
/// showed 12.0 GiB per 32 GiB proof, against 12.0 GiB for a, b and c plus this. Our bucket
/// MSM's 6.0 GiB at 2^27 points (2.0 of digits and buckets, 4.0 of batch-affine sums), and its
/// 4.7 GiB for a 32 GiB WindowPoSt's B G2, fit inside the a, b, c allowance: the H MSM runs
/// after b and c are freed, the witness MSMs after a too.
pub(crate) const MSM_SCRATCH: u64 = 512 << 20;

/// The largest query that gets a [`Table`]. Measured on the H200 (PERFORMANCE.md, "Tables of
/// multiples"): a table MSM is 2.0-3.6x sppark's up to 2^19 points and 1.5x at 2^20, where a
/// plain MSM is mostly per-window launches, but only 1.28x at 2^22, whose five copies' build
/// (0.68 s per query) is paid again at every key swap: with a 2 KiB PoRep key's 2^22-point
/// query tabled, a WinningPoSt between its proofs cost the PoRep load 2 s per swap.
const TABLE_MAX_POINTS: usize = 1 << 20;

/// The device memory a backend places keys in, and the size of a streamed chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceMemory {
    usable: u64,
    chunk: u64,
}

impl DeviceMemory {
    /// A card of `total` bytes: all but [`CONTEXT_RESERVE`], streamed in sixteenths (a 5 GB
    /// chunk on an H100, so a 15 GB query goes up in three transfers).
    pub fn of_device(total: u64) -> Self {
        let usable = total.saturating_sub(CONTEXT_RESERVE);
        DeviceMemory {
            usable,
            chunk: (usable / 16).max(G2_POINT),
        }
    }

    /// `usable` bytes, streamed in chunks of `chunk` bytes (at least one G2 point): a smaller
    /// share of a card than it has, for tests and for operators who leave room to others.
    pub fn new(usable: u64, chunk: u64) -> Result<Self, GpuError> {
        if chunk < G2_POINT {
            return Err(GpuError::Argument(format!(
                "a streamed chunk of {chunk} bytes holds no G2 point ({G2_POINT} bytes)"
            )));
        }
        Ok(DeviceMemory { usable, chunk })
    }

    pub fn usable(&self) -> u64 {
        self.usable
    }

    pub fn chunk(&self) -> u64 {
        self.chunk
    }

    /// Room kept free beside a plan: allocator rounding and fragmentation.
    fn headroom(&self) -> u64 {
        self.usable / 32
    }
}

/// Bytes of one affine G2 point, the largest element a chunk must hold.
const G2_POINT: u64 = std::mem::size_of::<cuzk_groth16::G2Affine>() as u64;

/// Which of a key's queries (h, l, a, b G1, b G2) stay resident, which stream, and which get
/// tables.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KeyPlan {
    lengths: [usize; 5],
    /// Non-empty queries uploaded at every proof instead of kept.
    streamed: [bool; 5],
    tables: TablePlan,
    chunk: u64,
}

impl KeyPlan {
    /// The plan for a key of `lengths` beside `beside` resident bytes: the whole key with its
    /// tables when it fits; else the resident subset of the most bytes that fits with one
    /// streamed chunk per proof; else everything streamed (whose footprint then says it does
    /// not fit, and the engine places the work elsewhere).
    pub(crate) fn new(lengths: [usize; 5], memory: DeviceMemory, beside: u64) -> Self {
        let room = memory
            .usable
            .saturating_sub(beside.saturating_add(memory.headroom()));
        let table_budget = memory.usable / 8;
        let plan = |kept: u8, budget: u64| {
            let streamed = std::array::from_fn(|q| lengths[q] > 0 && kept & (1 << q) == 0);
            let resident = std::array::from_fn(|q| if streamed[q] { 0 } else { lengths[q] });
            KeyPlan {
                lengths,
                streamed,
                tables: TablePlan::new(resident, budget),
                chunk: memory.chunk,
            }
        };
        (0..32u8)
            .flat_map(|kept| [plan(kept, table_budget), plan(kept, 0)])
            .filter(|p| p.footprint().call(1) <= room)
            .max_by_key(|p| (p.resident_points_bytes(), p.tables.bytes()))
            .unwrap_or_else(|| plan(0, 0))
    }

    pub(crate) fn streamed(&self) -> [bool; 5] {
        self.streamed
    }

    pub(crate) fn tables(&self) -> [Option<Table>; 5] {
        self.tables.tables
    }

    /// Bytes of one streamed chunk.
    pub(crate) fn chunk(&self) -> u64 {
        self.chunk
    }

    /// Host memory a proof from columns gathers beside them: the A and B scalars, selected
    /// from `input ‖ aux` on the host when any of those queries streams (6.0 GB for a 32 GiB
    /// WindowPoSt on an H100, whose B G2 streams).
    pub(crate) fn host_scratch(&self) -> u64 {
        let [_, _, a, b, _] = self.lengths.map(|n| n as u64);
        if self.streamed[2..].contains(&true) {
            (a + b) * std::mem::size_of::<cuzk_groth16::Fr>() as u64
        } else {
            0
        }
    }

    fn kept(&self) -> [usize; 5] {
        std::array::from_fn(|q| if self.streamed[q] { 0 } else { self.lengths[q] })
    }

    /// The resident queries' points, what the plan maximises.
    fn resident_points_bytes(&self) -> u64 {
        Footprint::of_queries(self.kept(), 0, 0).resident
    }

    /// sppark's layout ([`Footprint::of_queries`]) for the resident queries, with
    /// [`MSM_BUCKETS`] each, and per proof [`MSM_SCRATCH`], the largest table MSM's scratch
    /// and, when any query streams, one chunk and its buckets.
    pub(crate) fn footprint(&self) -> Footprint {
        let whole = Footprint::of_queries(self.lengths, MSM_BUCKETS, MSM_SCRATCH);
        let resident = Footprint::of_queries(self.kept(), MSM_BUCKETS, 0).resident;
        let stream = if self.streamed.contains(&true) {
            self.chunk + MSM_BUCKETS
        } else {
            0
        };
        Footprint {
            resident: resident + self.tables.bytes(),
            per_proof: whole.per_proof + self.tables.scratch() + stream,
        }
    }
}

/// Which of a key's queries (h, l, a, b G1, b G2) get a one-pass [`Table`]: those of at most
/// [`TABLE_MAX_POINTS`], in that order, while their tables fit the budget.
#[derive(Debug, Clone, PartialEq)]
struct TablePlan {
    tables: [Option<Table>; 5],
    lengths: [usize; 5],
}

impl TablePlan {
    fn new(lengths: [usize; 5], budget: u64) -> Self {
        let mut left = budget;
        let tables = std::array::from_fn(|q| {
            let n = lengths[q];
            if n == 0 || n > TABLE_MAX_POINTS {
                return None;
            }
            let t = Table::for_points(n);
            let bytes = Self::query_bytes(q, t, n);
            (bytes <= left).then(|| {
                left -= bytes;
                t
            })
        });
        TablePlan { tables, lengths }
    }

    fn query_bytes(q: usize, t: Table, n: usize) -> u64 {
        if q == 4 {
            t.bytes::<G2>(n)
        } else {
            t.bytes::<G1>(n)
        }
    }

    /// Device memory of the tables, besides the queries' own points.
    fn bytes(&self) -> u64 {
        (0..5)
            .filter_map(|q| self.tables[q].map(|t| Self::query_bytes(q, t, self.lengths[q])))
            .sum()
    }

    /// The largest scratch of one table MSM (a proof runs its MSMs one at a time).
    fn scratch(&self) -> u64 {
        (0..5)
            .filter_map(|q| {
                let (t, n) = (self.tables[q]?, self.lengths[q]);
                Some(if q == 4 {
                    t.scratch::<G2>(n)
                } else {
                    t.scratch::<G1>(n)
                })
            })
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const GIB: u64 = 1 << 30;
    /// Cards as `cudaMemGetInfo` reports them.
    const H200: u64 = 150_011_101_184;
    const H100: u64 = 85_520_809_984;
    const CARD_24G: u64 = 25_386_352_640;

    /// 32 GiB query lengths (h, l, a, b G1, b G2; FACTS.md and PERFORMANCE.md's scalar
    /// counts) and their PCE's [`crate::pce::DevicePce::device_bytes`].
    const POREP: [usize; 5] = [
        (1 << 27) - 1,
        130_169_893,
        129_753_620,
        33_112_282,
        33_112_282,
    ];
    const POREP_PCE: u64 = 11_400_000_000;
    const WINDOW: [usize; 5] = [
        (1 << 27) - 1,
        126_902_376,
        96_179_805,
        91_925_767,
        91_925_767,
    ];
    const WINDOW_PCE: u64 = 14_900_000_000;

    fn plan(card: u64, lengths: [usize; 5], beside: u64) -> KeyPlan {
        KeyPlan::new(lengths, DeviceMemory::of_device(card), beside)
    }

    #[test]
    fn whole_keys_stay_resident_where_they_fit() {
        assert_eq!(plan(H200, POREP, POREP_PCE).streamed(), [false; 5]);
        assert_eq!(plan(H200, WINDOW, WINDOW_PCE).streamed(), [false; 5]);
        assert_eq!(plan(H100, POREP, POREP_PCE).streamed(), [false; 5]);
        // Without its PCE, a WindowPoSt key fits an H100 too; beside it, B G2 streams.
        assert_eq!(plan(H100, WINDOW, 0).streamed(), [false; 5]);
        assert_eq!(
            plan(H100, WINDOW, WINDOW_PCE).streamed(),
            [false, false, false, false, true]
        );
    }

    #[test]
    fn a_small_card_streams_what_does_not_fit_and_says_so() {
        let p = plan(CARD_24G, WINDOW, WINDOW_PCE);
        let f = p.footprint();
        let usable = DeviceMemory::of_device(CARD_24G).usable();
        // Nothing fits beside 8.6 GB of PCE and 12 GiB of a, b, c: every query streams, and
        // the footprint tells the engine it still does not fit.
        assert_eq!(p.streamed(), [true; 5]);
        assert!(f.call(1) + WINDOW_PCE > usable, "{f:?}");
        // The same key proved from a host witness (no PCE) streams every query too, and
        // fits: such a card proves it.
        let p = plan(CARD_24G, WINDOW, 0);
        assert_eq!(p.streamed(), [true; 5]);
        assert!(p.footprint().call(1) <= usable);
    }

    #[test]
    fn streaming_is_charged_one_chunk_per_proof() {
        let whole = plan(H100, WINDOW, 0).footprint();
        let streamed = plan(H100, WINDOW, WINDOW_PCE);
        let f = streamed.footprint();
        let chunk = DeviceMemory::of_device(H100).chunk();
        assert_eq!(f.per_proof, whole.per_proof + chunk + MSM_BUCKETS);
        assert_eq!(
            f.resident,
            whole.resident - WINDOW[4] as u64 * 192 - MSM_BUCKETS
        );
        assert_eq!(streamed.chunk(), chunk);
    }

    #[test]
    fn streamed_a_or_b_gathers_their_scalars_on_the_host() {
        let fr = std::mem::size_of::<cuzk_groth16::Fr>() as u64;
        let window_h100 = plan(H100, WINDOW, WINDOW_PCE);
        assert_eq!(
            window_h100.host_scratch(),
            (WINDOW[2] + WINDOW[3]) as u64 * fr
        );
        assert_eq!(plan(H200, WINDOW, WINDOW_PCE).host_scratch(), 0);
        assert_eq!(plan(H100, POREP, POREP_PCE).host_scratch(), 0);
        // A streamed H alone gathers nothing.
        let memory = DeviceMemory::new(GIB, 192).unwrap();
        let h_only = KeyPlan {
            streamed: [true, false, false, false, false],
            ..KeyPlan::new(POREP, memory, 0)
        };
        assert_eq!(h_only.host_scratch(), 0);
    }

    #[test]
    fn a_chunk_holds_a_g2_point() {
        assert!(DeviceMemory::new(GIB, 191).is_err());
        assert_eq!(DeviceMemory::new(GIB, 192).unwrap().chunk(), 192);
        assert_eq!(DeviceMemory::of_device(0).chunk(), 192);
    }

    proptest! {
        /// Whatever the card, key and circuit: a plan that keeps anything fits, keeps tables
        /// only on resident queries, and no other choice of resident queries that fits keeps
        /// more bytes.
        #[test]
        fn the_plan_keeps_the_most_that_fits(
            lengths in prop::array::uniform5(prop_oneof![Just(0usize), 1usize..(1 << 26)]),
            usable in 0u64..(160 * GIB),
            beside in 0u64..(16 * GIB),
        ) {
            let memory = DeviceMemory::new(usable, (usable / 16).max(192)).unwrap();
            let p = KeyPlan::new(lengths, memory, beside);
            let room = usable.saturating_sub(beside + memory.headroom());
            let fits = p.footprint().call(1) <= room;
            prop_assert!(fits || p.streamed().iter().zip(&lengths).all(|(&s, &n)| s == (n > 0)));
            for ((&streamed, table), &n) in p.streamed().iter().zip(p.tables()).zip(&lengths) {
                prop_assert!(!(streamed && table.is_some()));
                prop_assert!(!(streamed && n == 0));
            }
            for kept in 0..32u8 {
                let other = KeyPlan {
                    streamed: std::array::from_fn(|q| lengths[q] > 0 && kept & (1 << q) == 0),
                    tables: TablePlan::new([0; 5], 0),
                    ..p.clone()
                };
                if other.footprint().call(1) <= room {
                    prop_assert!(fits);
                    prop_assert!(other.resident_points_bytes() <= p.resident_points_bytes());
                }
            }
        }
    }

    #[test]
    fn tables_go_to_small_queries_in_order_within_the_budget() {
        // A 32 GiB WinningPoSt key's lengths: every query gets a table on an H200's budget.
        let winning = [(1 << 19) - 1, 375_210, 284_196, 272_185, 272_185];
        let plan = TablePlan::new(winning, 17 * GIB);
        assert!(plan.tables.iter().all(Option::is_some), "{plan:?}");
        assert!(
            plan.bytes() <= 17 * GIB && plan.bytes() > GIB,
            "{}",
            plan.bytes()
        );
        // Budget for the first two only: the later ones go without, whatever their size.
        let first_two = TablePlan::new(winning, 17 * GIB).tables[..2]
            .iter()
            .zip(&winning)
            .map(|(t, &n)| t.unwrap().bytes::<G1>(n))
            .sum::<u64>();
        let plan = TablePlan::new(winning, first_two);
        assert_eq!(
            plan.tables.map(|t| t.is_some()),
            [true, true, false, false, false]
        );
        assert_eq!(plan.bytes(), first_two);
        // A 32 GiB PoRep key's queries are far past the limit, and empty queries get none.
        assert_eq!(TablePlan::new(POREP, 17 * GIB).bytes(), 0);
        assert_eq!(TablePlan::new([0; 5], 17 * GIB).scratch(), 0);
    }

    #[test]
    fn tables_are_charged_to_the_key_and_each_proof() {
        let lengths = [(1 << 19) - 1, 375_210, 284_196, 272_185, 272_185];
        let plan = TablePlan::new(lengths, 17 * GIB);
        // Each table holds windows − 1 copies past the base, and its MSM sorts one entry per
        // point and window.
        let h = Table::for_points(lengths[0]);
        assert!(plan.scratch() >= 8 * h.copies() as u64 * lengths[0] as u64);
        let g2 = Table::for_points(lengths[4]);
        assert_eq!(
            g2.bytes::<G2>(lengths[4]),
            (g2.copies() as u64 - 1) * lengths[4] as u64 * 192
        );
    }
}
