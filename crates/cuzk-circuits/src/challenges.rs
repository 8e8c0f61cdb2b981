//! Which nodes a PoRep proves: derived from the replica id and the interactive seed (and, for
//! Synthetic PoRep, comm_r), as storage-proofs derives them. Node 0 is never challenged.

use blake2b_simd::Params as Blake2b;
use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use chacha20::ChaCha20;
use sha2::{Digest, Sha256};

/// A 256-bit little-endian number reduced into `1..nodes`.
fn to_challenge(bytes: &[u8; 32], nodes: u64) -> u64 {
    let m = u128::from(nodes - 1);
    let rem = bytes
        .iter()
        .rev()
        .fold(0u128, |r, &b| ((r << 8) | u128::from(b)) % m);
    rem as u64 + 1
}

/// Interactive PoRep: challenge `j` (counted over all partitions) is
/// `SHA-256(replica_id ‖ seed ‖ j as u32 LE)`.
pub fn interactive(
    nodes: u64,
    replica_id: &[u8; 32],
    seed: &[u8; 32],
    per_partition: usize,
    partition: usize,
) -> Vec<u64> {
    (0..per_partition)
        .map(|i| {
            let j = (per_partition * partition + i) as u32;
            let hash: [u8; 32] = Sha256::new()
                .chain_update(replica_id)
                .chain_update(seed)
                .chain_update(j.to_le_bytes())
                .finalize()
                .into();
            to_challenge(&hash, nodes)
        })
        .collect()
}

/// Synthetic PoRep draws up to 2^18 "synthetic" challenges from comm_r at PreCommit; the seed
/// then selects which of them each partition proves.
const SYNTH_CHALLENGES: u64 = 1 << 18;

fn chacha20(domain: &[u8], replica_id: &[u8; 32], other: &[u8; 32]) -> ChaCha20 {
    let key = Blake2b::new()
        .hash_length(32)
        .key(domain)
        .to_state()
        .update(replica_id)
        .update(other)
        .finalize();
    ChaCha20::new(key.as_bytes().into(), b"synth-porep\x00".into())
}

/// Synthetic PoRep: the seed's ChaCha20 stream picks synthetic indexes (u32 LE, four bytes per
/// challenge), and comm_r's stream gives each index's challenge (32 bytes per index).
pub fn synthetic(
    nodes: u64,
    replica_id: &[u8; 32],
    comm_r: &[u8; 32],
    seed: &[u8; 32],
    per_partition: usize,
    partition: usize,
) -> Vec<u64> {
    let count = nodes.min(SYNTH_CHALLENGES);
    let mut select = chacha20(
        b"filecoin.io|PoRep|1|Synthetic|1|Selection",
        replica_id,
        seed,
    );
    select.seek((partition * per_partition * 4) as u64);
    let mut indexes = vec![0u8; per_partition * 4];
    select.apply_keystream(&mut indexes);
    let mut generate = chacha20(
        b"filecoin.io|PoRep|1|Synthetic|1|Generation",
        replica_id,
        comm_r,
    );
    indexes
        .chunks_exact(4)
        .map(|b| {
            let index = u64::from(u32::from_le_bytes(b.try_into().unwrap())) % count;
            generate.seek(index * 32);
            let mut bytes = [0u8; 32];
            generate.apply_keystream(&mut bytes);
            to_challenge(&bytes, nodes)
        })
        .collect()
}
