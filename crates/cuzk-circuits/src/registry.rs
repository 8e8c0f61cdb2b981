//! Filecoin's registered seal proof types, named and serialised as lotus, Curio and
//! filecoin-proofs-api name them, with what cuzk needs from each: sector size, partitions, API
//! version, PoRep id (which seeds the graph) and the published parameter files' identifier.

use serde::{Deserialize, Serialize};

/// Declares the enum and its `ALL` list from one list of names, in id order.
macro_rules! proof_types {
    ($($name:ident),* $(,)?) => {
        /// A PoRep proof type. The discriminant is the registered proof id the PoRep id carries.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum RegisteredSealProof {
            $($name),*
        }

        impl RegisteredSealProof {
            /// Every proof type, in id order.
            pub const ALL: [Self; [$(stringify!($name)),*].len()] = [$(Self::$name),*];
        }
    };
}

proof_types! {
    StackedDrg2KiBV1,
    StackedDrg8MiBV1,
    StackedDrg512MiBV1,
    StackedDrg32GiBV1,
    StackedDrg64GiBV1,
    StackedDrg2KiBV1_1,
    StackedDrg8MiBV1_1,
    StackedDrg512MiBV1_1,
    StackedDrg32GiBV1_1,
    StackedDrg64GiBV1_1,
    StackedDrg2KiBV1_1_Feat_SyntheticPoRep,
    StackedDrg8MiBV1_1_Feat_SyntheticPoRep,
    StackedDrg512MiBV1_1_Feat_SyntheticPoRep,
    StackedDrg32GiBV1_1_Feat_SyntheticPoRep,
    StackedDrg64GiBV1_1_Feat_SyntheticPoRep,
    StackedDrg2KiBV1_2_Feat_NonInteractivePoRep,
    StackedDrg8MiBV1_2_Feat_NonInteractivePoRep,
    StackedDrg512MiBV1_2_Feat_NonInteractivePoRep,
    StackedDrg32GiBV1_2_Feat_NonInteractivePoRep,
    StackedDrg64GiBV1_2_Feat_NonInteractivePoRep,
}

/// The proofs API version a proof type belongs to; it changes the graph's details.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApiVersion {
    V1_0_0,
    V1_1_0,
    V1_2_0,
}

/// How a proof type's challenges are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChallengeKind {
    /// From the interactive seed (`challenges::interactive`).
    Interactive,
    /// Selected by the seed among synthetic challenges (`challenges::synthetic`).
    Synthetic,
    /// Non-interactive PoRep (needs proof aggregation; not proven by cuzk yet).
    NonInteractive,
}

/// Sector sizes in proof-type order.
const SIZES: [u64; 5] = [2 << 10, 8 << 20, 512 << 20, 32 << 30, 64 << 30];

/// The hash part of the published parameter file names (`v28-stacked-proof-of-replication-
/// <tree>-sha256_hasher-<hash>.params`), by sector size; the same for every API version.
const PARAMETER_HASHES: [&str; 5] = [
    "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f",
    "ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb",
    "6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472",
    "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820",
    "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2",
];

impl RegisteredSealProof {
    /// The registered proof id.
    pub fn id(self) -> u64 {
        self as u64
    }

    fn size_index(self) -> usize {
        self as usize % 5
    }

    /// Sector size in bytes.
    pub fn sector_size(self) -> u64 {
        SIZES[self.size_index()]
    }

    /// Partitions (one Groth16 proof each) of a seal proof.
    pub fn partitions(self) -> usize {
        if self.sector_size() >= 32 << 30 {
            10
        } else {
            1
        }
    }

    pub fn api_version(self) -> ApiVersion {
        match self as usize / 5 {
            0 => ApiVersion::V1_0_0,
            1 => ApiVersion::V1_1_0,
            _ => ApiVersion::V1_2_0,
        }
    }

    pub fn challenge_kind(self) -> ChallengeKind {
        match self as usize / 5 {
            0 | 1 => ChallengeKind::Interactive,
            2 => ChallengeKind::Synthetic,
            _ => ChallengeKind::NonInteractive,
        }
    }

    /// The PoRep id: the proof id and a zero nonce, little-endian, zero-padded to 32 bytes.
    pub fn porep_id(self) -> [u8; 32] {
        let mut id = [0u8; 32];
        id[..8].copy_from_slice(&self.id().to_le_bytes());
        id
    }

    /// Upstream's circuit identifier, which names the parameter files, e.g.
    /// `stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-<hash>`.
    pub fn circuit_identifier(self) -> String {
        let tree = match self.sector_size() {
            s if s < 32 << 30 => "8-0-0",
            s if s == 32 << 30 => "8-8-0",
            _ => "8-8-2",
        };
        format!(
            "stacked-proof-of-replication-merkletree-poseidon_hasher-{tree}-sha256_hasher-{}",
            PARAMETER_HASHES[self.size_index()]
        )
    }
}
