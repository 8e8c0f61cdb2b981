//! SnapDeals vanilla proofs as Curio sends them: one bincode `PartitionProof` per partition
//! (what filecoin-proofs-api's `generate_partition_proofs` returns), read into cuzk's own types.

use crate::codec::{write_list, write_merkle, ReadError, Reader};
use crate::vanilla::{Bytes, MerkleProof};

/// One challenge's three openings (upstream's `ChallengeProof`): the old replica's TreeR, the
/// new data's TreeD and the new replica's TreeR, all at the challenged node.
#[derive(Debug, Clone)]
pub struct ChallengeProofs {
    pub(crate) r_old: MerkleProof,
    pub(crate) d_new: MerkleProof,
    pub(crate) r_new: MerkleProof,
}

/// One partition's vanilla proof (upstream's `PartitionProof`).
#[derive(Debug, Clone)]
pub struct PartitionProof {
    pub comm_c: Bytes,
    /// This partition's row of TreeD apex leaves.
    pub apex_leaves: Vec<Bytes>,
    pub(crate) challenges: Vec<ChallengeProofs>,
}

impl PartitionProof {
    /// Reads one bincode `PartitionProof`; trailing bytes are refused.
    pub fn parse(bytes: &[u8]) -> Result<Self, ReadError> {
        let mut r = Reader::new(bytes);
        let comm_c = r.field("comm_c", Reader::bytes32)?;
        let apex_leaves = r.field("apex_leafs", |r| r.list(32, Reader::bytes32))?;
        let challenges = r.field("challenge_proofs", |r| {
            r.list(3 * (4 + 64), |r| {
                Ok(ChallengeProofs {
                    r_old: r.field("proof_r_old", Reader::merkle_proof)?,
                    d_new: r.field("proof_d_new", Reader::merkle_proof)?,
                    r_new: r.field("proof_r_new", Reader::merkle_proof)?,
                })
            })
        })?;
        r.finish()?;
        Ok(PartitionProof {
            comm_c,
            apex_leaves,
            challenges,
        })
    }

    /// The bincode bytes [`PartitionProof::parse`] reads (for tests, fuzz seeds and benches).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.comm_c);
        write_list(&mut out, &self.apex_leaves, |out, l| out.extend(l));
        write_list(&mut out, &self.challenges, |out, c| {
            write_merkle(out, &c.r_old);
            write_merkle(out, &c.d_new);
            write_merkle(out, &c.r_new);
        });
        out
    }
}
