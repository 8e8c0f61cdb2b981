//! WindowPoSt / WinningPoSt vanilla proofs as Curio sends them: one bincode
//! `FallbackPoStSectorProof` per sector, read here into cuzk's own types.

pub use crate::codec::ReadError;
use crate::codec::{write_list, write_merkle, Reader};
use crate::vanilla::{Bytes, MerkleProof};

/// The inclusion proofs of one sector with the roots they lead to (upstream's `SectorProof`).
#[derive(Debug, Clone)]
pub struct SectorOpenings {
    pub(crate) inclusion_proofs: Vec<MerkleProof>,
    pub(crate) comm_c: Bytes,
    pub(crate) comm_r_last: Bytes,
}

/// One sector's vanilla PoSt proof (upstream's `FallbackPoStSectorProof`).
#[derive(Debug, Clone)]
pub struct SectorProof {
    pub sector_id: u64,
    pub comm_r: Bytes,
    /// `vanilla_proof.sectors`: `generate_single_vanilla_proof` writes exactly one.
    pub(crate) openings: Vec<SectorOpenings>,
}

impl SectorProof {
    /// Reads one bincode `FallbackPoStSectorProof`; trailing bytes are refused.
    pub fn parse(bytes: &[u8]) -> Result<Self, ReadError> {
        let mut r = Reader::new(bytes);
        let sector_id = r.field("sector_id", Reader::u64)?;
        let comm_r = r.field("comm_r", Reader::bytes32)?;
        let openings = r.field("vanilla_proof.sectors", |r| {
            r.list(8 + 64, |r| {
                let inclusion_proofs =
                    r.field("inclusion_proofs", |r| r.list(4 + 64, Reader::merkle_proof))?;
                let comm_c = r.field("comm_c", Reader::bytes32)?;
                let comm_r_last = r.field("comm_r_last", Reader::bytes32)?;
                Ok(SectorOpenings {
                    inclusion_proofs,
                    comm_c,
                    comm_r_last,
                })
            })
        })?;
        r.finish()?;
        Ok(SectorProof {
            sector_id,
            comm_r,
            openings,
        })
    }

    /// The bincode bytes [`SectorProof::parse`] reads (for tests, fixtures and benches).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.sector_id.to_le_bytes());
        out.extend(self.comm_r);
        write_list(&mut out, &self.openings, |out, o| {
            write_list(out, &o.inclusion_proofs, write_merkle);
            out.extend(o.comm_c);
            out.extend(o.comm_r_last);
        });
        out
    }
}
