//! Filecoin's registered sector-update proof types by their FFI numbers (what Curio sends as
//! `registered_proof` for SnapDeals), and what each fixes about the EmptySectorUpdate circuit:
//! partitions, challenges, the allowed `h` values, the apex tree and the parameter file names.

use crate::porep::{param_file_names, tree_r_identifier};

/// Sector sizes in FFI order.
const SIZES: [u64; 5] = [2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30];

/// The circuit-id suffixes Curio uses (`snap-32g`).
const SUFFIXES: [&str; 5] = ["2k", "8m", "512m", "32g", "64g"];

/// Nodes up to which a sector size counts as small in upstream's tables (32 KiB).
const SMALL_NODES: usize = 1 << 10;

/// An update proof type; the value is the FFI enum number 0-4 (`StackedDrg2KiBV1` ..
/// `StackedDrg64GiBV1`, all API V1_1).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegisteredUpdateProof(u8);

/// Upstream's name, e.g. `StackedDrg32GiBV1`.
impl std::fmt::Debug for RegisteredUpdateProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let size = ["2KiB", "8MiB", "512MiB", "32GiB", "64GiB"][usize::from(self.0)];
        write!(f, "StackedDrg{size}V1")
    }
}

impl RegisteredUpdateProof {
    /// Every update proof type, in FFI order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..5).map(RegisteredUpdateProof)
    }

    /// [`RegisteredUpdateProof::all`]'s entry for FFI number `id`, refusing an unknown one
    /// with the reason.
    pub fn parse(id: u64) -> Result<Self, String> {
        (id < 5)
            .then_some(RegisteredUpdateProof(id as u8))
            .ok_or_else(|| format!("{id} is not an update proof type (0-4: 2KiB..64GiB)"))
    }

    /// The proof type of a sector size such as `2KiB`.
    pub fn for_size(size: &str) -> Option<Self> {
        ["2KiB", "8MiB", "512MiB", "32GiB", "64GiB"]
            .iter()
            .position(|s| *s == size)
            .map(|i| RegisteredUpdateProof(i as u8))
    }

    /// The FFI enum number.
    pub fn id(self) -> u64 {
        u64::from(self.0)
    }

    pub fn sector_size(self) -> u64 {
        SIZES[usize::from(self.0)]
    }

    /// 32-byte nodes in the sector.
    pub fn nodes(self) -> usize {
        (self.sector_size() / 32) as usize
    }

    /// Partition proofs per update: 1 up to 8 KiB, 2 up to 32 KiB, 4 up to 16 MiB, 16 above.
    pub fn partitions(self) -> usize {
        match self.nodes() {
            n if n <= 1 << 8 => 1,
            n if n <= SMALL_NODES => 2,
            n if n <= 1 << 19 => 4,
            _ => 16,
        }
    }

    /// Challenges per partition.
    pub fn challenges(self) -> usize {
        if self.nodes() <= 1 << 19 {
            10
        } else {
            86
        }
    }

    /// The `h` values the circuit can select between (high bits of a challenge that pick its
    /// rho); fixed by the trusted setup.
    pub fn hs(self) -> [usize; 6] {
        if self.nodes() <= SMALL_NODES {
            [1; 6]
        } else {
            [7, 8, 9, 10, 11, 12]
        }
    }

    /// The `h` every update of this size uses (upstream's `h_default`: `hs[3]`).
    pub fn h(self) -> usize {
        self.hs()[3]
    }

    /// The one-hot `h_select` public bits for [`RegisteredUpdateProof::h`]: the first entry of
    /// `hs` equal to it, as upstream picks.
    pub fn h_select(self) -> u64 {
        let h = self.h();
        1 << self.hs().iter().position(|&x| x == h).expect("h is in hs")
    }

    /// Leaves of each partition's apex tree (a row of TreeD).
    pub fn apex_leaves(self) -> usize {
        if self.nodes() <= 1 << 8 {
            8
        } else {
            128
        }
    }

    /// The engine's circuit id, e.g. `snap-32g`.
    pub fn circuit_id(self) -> String {
        format!("snap-{}", SUFFIXES[usize::from(self.0)])
    }

    /// Upstream's parameter identifier.
    pub fn circuit_identifier(self) -> String {
        let description = format!(
            "empty_sector_update::PublicParams{{ sector_nodes: {} }}",
            self.nodes()
        );
        tree_r_identifier("empty-sector-update", self.sector_size(), &description)
    }

    /// The `.params`, `.vk` and `.meta` names upstream looks for.
    pub fn file_names(self) -> [String; 3] {
        param_file_names(&self.circuit_identifier())
    }
}
