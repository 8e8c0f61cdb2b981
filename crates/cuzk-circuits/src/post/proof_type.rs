//! Filecoin's registered PoSt proof types by their FFI numbers (what Curio sends as
//! `registered_proof`), and what each fixes: sector size, WindowPoSt or WinningPoSt, API
//! version, the circuit's sector slots and challenges per slot, and the parameter file names.

use crate::porep::{param_file_names, tree_r_identifier};

/// Which PoSt a proof type proves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PostType {
    /// One sector (chosen by the chain) and 66 challenges, to win a block.
    Winning,
    /// Every sector of a partition, 10 challenges each, once per deadline.
    Window,
}

/// How PoSt challenge indices are numbered (FIP-0061 changed WindowPoSt's in V1_2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostApi {
    /// Challenge index counted over every sector before this one.
    V1_0,
    /// Challenge index counted within the sector.
    V1_2,
}

/// Sector sizes in FFI order within each group of five.
const SIZES: [u64; 5] = [2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30];

/// The circuit-id suffixes Curio uses (`wpost-32g`, `winning-32g`).
const SUFFIXES: [&str; 5] = ["2k", "8m", "512m", "32g", "64g"];

/// WindowPoSt sectors per partition by sector size (`filecoin-proofs` constants).
const WINDOW_SECTORS: [usize; 5] = [2, 2, 2, 2349, 2300];

/// Challenges per sector.
pub const WINDOW_CHALLENGES: usize = 10;
/// Challenges of the one WinningPoSt sector.
pub const WINNING_CHALLENGES: usize = 66;

/// A PoSt proof type; the value is the FFI enum number: Winning V1 0-4, Window V1 5-9, Window
/// V1_2 10-14 (the FFI calls those `V1_1`), each 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegisteredPostProof(u8);

/// Upstream's name, e.g. `StackedDrgWindow32GiBV1_2`.
impl std::fmt::Debug for RegisteredPostProof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let size = ["2KiB", "8MiB", "512MiB", "32GiB", "64GiB"][self.size_index()];
        let (post, version) = match self.0 / 5 {
            0 => ("Winning", "V1"),
            1 => ("Window", "V1"),
            _ => ("Window", "V1_2"),
        };
        write!(f, "StackedDrg{post}{size}{version}")
    }
}

impl RegisteredPostProof {
    /// Every PoSt proof type, in FFI order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..15).map(RegisteredPostProof)
    }

    /// The proof type of FFI number `id`, if there is one.
    pub fn from_id(id: u64) -> Option<Self> {
        (id < 15).then_some(RegisteredPostProof(id as u8))
    }

    /// [`RegisteredPostProof::from_id`], refusing an unknown number with the reason.
    pub fn parse(id: u64) -> Result<Self, String> {
        Self::from_id(id).ok_or_else(|| {
            format!("{id} is not a PoSt proof type (Winning 0-4, Window 5-9 and 10-14)")
        })
    }

    /// The current proof type of `post` for a sector size such as `2KiB` (Window: V1_2).
    pub fn current(post: PostType, size: &str) -> Option<Self> {
        let i = ["2KiB", "8MiB", "512MiB", "32GiB", "64GiB"]
            .iter()
            .position(|s| *s == size)?;
        let group = match post {
            PostType::Winning => 0,
            PostType::Window => 2,
        };
        Some(RegisteredPostProof((group * 5 + i) as u8))
    }

    /// The FFI enum number.
    pub fn id(self) -> u64 {
        u64::from(self.0)
    }

    fn size_index(self) -> usize {
        usize::from(self.0) % 5
    }

    pub fn sector_size(self) -> u64 {
        SIZES[self.size_index()]
    }

    pub fn post_type(self) -> PostType {
        if self.0 < 5 {
            PostType::Winning
        } else {
            PostType::Window
        }
    }

    pub fn api(self) -> PostApi {
        if self.0 >= 10 {
            PostApi::V1_2
        } else {
            PostApi::V1_0
        }
    }

    /// Sectors one proof covers: a WindowPoSt partition's, or WinningPoSt's one.
    pub fn sectors(self) -> usize {
        match self.post_type() {
            PostType::Winning => 1,
            PostType::Window => WINDOW_SECTORS[self.size_index()],
        }
    }

    /// Challenges per sector.
    pub fn challenges(self) -> usize {
        match self.post_type() {
            PostType::Winning => WINNING_CHALLENGES,
            PostType::Window => WINDOW_CHALLENGES,
        }
    }

    /// The circuit's sector slots and challenges per slot. WinningPoSt's circuit has one slot
    /// per challenge of its one sector, as upstream's setup makes it.
    pub fn slots(self) -> (usize, usize) {
        match self.post_type() {
            PostType::Winning => (WINNING_CHALLENGES, 1),
            PostType::Window => (self.sectors(), WINDOW_CHALLENGES),
        }
    }

    /// The engine's circuit id, e.g. `wpost-32g` or `winning-2k` (V1 and V1_2 share one).
    pub fn circuit_id(self) -> String {
        let prefix = match self.post_type() {
            PostType::Winning => "winning",
            PostType::Window => "wpost",
        };
        format!("{prefix}-{}", SUFFIXES[self.size_index()])
    }

    /// Upstream's parameter identifier: the tree, then SHA-256 of the public parameters'
    /// description (which has no API version, so V1 and V1_2 share their files).
    pub fn circuit_identifier(self) -> String {
        let (sectors, challenges) = self.slots();
        let description = format!(
            "FallbackPoSt::PublicParams{{sector_size: {}, challenge_count: {challenges}, sector_count: {sectors}}}",
            self.sector_size()
        );
        tree_r_identifier(
            "proof-of-spacetime-fallback",
            self.sector_size(),
            &description,
        )
    }

    /// The `.params`, `.vk` and `.meta` names upstream looks for.
    pub fn file_names(self) -> [String; 3] {
        param_file_names(&self.circuit_identifier())
    }
}
