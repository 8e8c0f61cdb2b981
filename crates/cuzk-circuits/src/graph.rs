//! The StackedDRG graph: each node's 6 DRG parents (bucket sampling, "DRSample") in its own
//! layer and 8 expander parents (a Feistel permutation) in the layer below. Public inputs name
//! the parents of every challenged node, so they are computed here from the proof type alone,
//! exactly as storage-proofs computes them (tests compare every node of the test sectors and
//! samples of the large ones).

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use crate::registry::ApiVersion;

/// DRG parents per node, the immediate predecessor included.
pub const DRG_PARENTS: usize = 6;
/// Expander parents per node.
pub const EXP_PARENTS: usize = 8;

/// One sector's graph.
#[derive(Clone, Debug)]
pub struct StackedGraph {
    nodes: u32,
    drg_seed: [u8; 28],
    feistel_keys: [u64; 4],
    feistel: Feistel,
    api: ApiVersion,
}

fn domain_seed(tag: &str, porep_id: &[u8; 32]) -> [u8; 32] {
    Sha256::new()
        .chain_update(tag)
        .chain_update(porep_id)
        .finalize()
        .into()
}

impl StackedGraph {
    /// The graph of a sector of `nodes` nodes for a proof type's PoRep id and API version.
    pub fn new(nodes: u32, porep_id: &[u8; 32], api: ApiVersion) -> Self {
        let drg = domain_seed("Filecoin_DRSample", porep_id);
        let keys = domain_seed("Filecoin_Feistel", porep_id);
        let key = |i: usize| u64::from_le_bytes(keys[i * 8..i * 8 + 8].try_into().unwrap());
        StackedGraph {
            nodes,
            drg_seed: drg[..28].try_into().unwrap(),
            feistel_keys: [key(0), key(1), key(2), key(3)],
            feistel: Feistel::new(u64::from(nodes) * EXP_PARENTS as u64),
            api,
        }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// The DRG parents of `node` in its own layer. Nodes 0 and 1 have only node 0; from node 2
    /// on, the predecessor comes first (last under API 1.0) and the rest are drawn from buckets
    /// of exponentially growing distance.
    pub fn drg_parents(&self, node: u32) -> [u32; DRG_PARENTS] {
        let mut parents = [0u32; DRG_PARENTS];
        if node < 2 {
            return parents;
        }
        let mut seed = [0u8; 32];
        seed[..28].copy_from_slice(&self.drg_seed);
        seed[28..].copy_from_slice(&node.to_le_bytes());
        let mut rng = ChaCha8Rng::from_seed(seed);
        let m = (DRG_PARENTS - 1) as u64;
        // The metagraph has `m` nodes per graph node.
        let meta = u64::from(node) * m;
        // ceil(log2(meta)), meta >= 10.
        let buckets = u64::from(64 - (meta - 1).leading_zeros());
        let (predecessor, drawn) = match self.api {
            ApiVersion::V1_0_0 => (DRG_PARENTS - 1, 0..DRG_PARENTS - 1),
            _ => (0, 1..DRG_PARENTS),
        };
        for slot in drawn {
            let bucket = rng.next_u64() % buckets + 1;
            let largest = meta.min(1 << bucket);
            let smallest = (largest >> 1).max(2);
            let distance = smallest + rng.next_u64() % (largest - smallest + 1);
            let parent = ((meta - distance) / m) as u32;
            parents[slot] = if parent == node { node - 1 } else { parent };
        }
        parents[predecessor] = node - 1;
        parents
    }

    /// The expander parents of `node` in the layer below: each of the node's 8 edge slots is
    /// mapped by a keyed Feistel permutation over all `8 · nodes` slots to another node's slot.
    pub fn exp_parents(&self, node: u32) -> [u32; EXP_PARENTS] {
        let slots = u64::from(self.nodes) * EXP_PARENTS as u64;
        std::array::from_fn(|i| {
            let slot = u64::from(node) * EXP_PARENTS as u64 + i as u64;
            let target = self.feistel.permute(slots, slot, &self.feistel_keys);
            match self.api {
                // API 1.0 truncated the slot to 32 bits first (it matters from 32 GiB on).
                ApiVersion::V1_0_0 => target as u32 / EXP_PARENTS as u32,
                // The slot is below 8 · nodes, so its node fits.
                _ => (target / EXP_PARENTS as u64) as u32,
            }
        })
    }
}

/// A 3-round Feistel network on the smallest power of 4 covering the domain, cycle-walked
/// into the domain; the round function is the first 8 bytes of BLAKE2b-512 of the big-endian
/// half and key.
#[derive(Clone, Copy, Debug)]
struct Feistel {
    half_bits: u32,
    right_mask: u64,
}

impl Feistel {
    const ROUNDS: usize = 3;

    fn new(elements: u64) -> Self {
        let mut half_bits = 1;
        while 1u64 << (2 * half_bits) < elements {
            half_bits += 1;
        }
        Feistel {
            half_bits,
            right_mask: (1 << half_bits) - 1,
        }
    }

    fn round(&self, half: u64, key: u64) -> u64 {
        let mut data = [0u8; 16];
        data[..8].copy_from_slice(&half.to_be_bytes());
        data[8..].copy_from_slice(&key.to_be_bytes());
        let hash = blake2b_simd::blake2b(&data);
        u64::from_be_bytes(hash.as_bytes()[..8].try_into().unwrap()) & self.right_mask
    }

    fn encode(&self, index: u64, keys: &[u64; 4]) -> u64 {
        let mut left = (index >> self.half_bits) & self.right_mask;
        let mut right = index & self.right_mask;
        for &key in &keys[..Self::ROUNDS] {
            (left, right) = (right, left ^ self.round(right, key));
        }
        (left << self.half_bits) | right
    }

    /// `index`'s image, re-encrypted until it falls inside `elements`.
    fn permute(&self, elements: u64, index: u64, keys: &[u64; 4]) -> u64 {
        let mut u = self.encode(index, keys);
        while u >= elements {
            u = self.encode(u, keys);
        }
        u
    }
}
