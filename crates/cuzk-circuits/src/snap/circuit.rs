//! cuzk's EmptySectorUpdate (SnapDeals) circuit, built from `cuzk-gadgets`.
//!
//! Row-for-row storage-proofs-update's `EmptySectorUpdateCircuit`. One partition proves, for
//! its challenges (derived in the circuit from comm_r_new and the partition index):
//! - comm_r_old = Poseidon(comm_c, root_r_old) and comm_r_new = Poseidon(comm_c, root_r_new);
//! - this partition's apex leaves hash, with the partition path, up to comm_d_new;
//! - per challenge c, with rho = Poseidon_gen(phi, high h bits of c) and phi =
//!   Poseidon_gen(comm_d_new, comm_r_old): leaf_r_new = leaf_r_old + leaf_d_new · rho, the old
//!   and new leaves open at c in TreeR old and new, and the data leaf's TreeD path reaches the
//!   apex leaf that c's bits select.
//!
//! Public inputs: k | h_select << log2(partitions), comm_r_old, comm_d_new, comm_r_new.

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use blstrs::Scalar as Fr;
use ff::{Field, PrimeFieldBits};

use cuzk_gadgets::boolean::{field_into_allocated_bits_le, AllocatedBit, Boolean};
use cuzk_gadgets::insertion::select;
use cuzk_gadgets::multipack::pack_bits;
use cuzk_gadgets::num::AllocatedNum;
use cuzk_gadgets::por::{por_no_challenge_input, Sha256Hash};
use cuzk_gadgets::poseidon::poseidon_hash;

use super::SnapShape;
use crate::stacked::{alloc, StackedShape};

/// One challenge's openings: the old and new replica leaves' TreeR paths (siblings per level)
/// and the data leaf's TreeD path up to its apex leaf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChallengeOpening {
    pub leaf_r_old: Option<Fr>,
    pub leaf_d_new: Option<Fr>,
    pub path_r_old: Vec<Vec<Option<Fr>>>,
    pub path_r_new: Vec<Vec<Option<Fr>>>,
    pub path_to_apex: Vec<Option<Fr>>,
}

/// One partition of a sector update.
#[derive(Clone, Debug)]
pub struct UpdateCircuit {
    pub shape: SnapShape,
    /// The packed public input `k | h_select << partition_bits`.
    pub k_and_h_select: Option<u64>,
    pub comm_r_old: Option<Fr>,
    pub comm_d_new: Option<Fr>,
    pub comm_r_new: Option<Fr>,
    pub comm_c: Option<Fr>,
    pub root_r_old: Option<Fr>,
    pub root_r_new: Option<Fr>,
    /// This partition's apex leaves (a row of TreeD).
    pub apex_leaves: Vec<Option<Fr>>,
    /// TreeD siblings from this partition's apex root up to comm_d_new.
    pub partition_path: Vec<Option<Fr>>,
    pub challenges: Vec<ChallengeOpening>,
}

impl UpdateCircuit {
    /// Whether every count and path length fits the shape.
    pub(crate) fn check(&self) -> Result<(), SynthesisError> {
        let s = &self.shape;
        let r_levels = s.sector.tree_arities();
        let path_ok = |p: &[Vec<Option<Fr>>]| {
            p.len() == r_levels.len() && p.iter().zip(&r_levels).all(|(l, a)| l.len() + 1 == *a)
        };
        let ok = self.apex_leaves.len() == s.apex_leaves()
            && self.partition_path.len() == s.partition_bits()
            && self.challenges.len() == s.challenges()
            && self.challenges.iter().all(|c| {
                path_ok(&c.path_r_old)
                    && path_ok(&c.path_r_new)
                    && c.path_to_apex.len() == s.apex_depth()
            });
        if ok {
            Ok(())
        } else {
            Err(SynthesisError::IncompatibleLengthVector(format!(
                "snap: the circuit of {:?} needs {} apex leaves, {} partition siblings and {} \
                 challenges with {}-level TreeR paths and {}-level TreeD paths",
                s.proof,
                s.apex_leaves(),
                s.partition_bits(),
                s.challenges(),
                r_levels.len(),
                s.apex_depth()
            )))
        }
    }
}

fn alloc_all<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    values: &[Option<Fr>],
    name: impl Fn(usize) -> String,
) -> Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| alloc(cs.namespace(|| name(i)), *v))
        .collect()
}

/// `Σ 2^i · bits[i] · 1 = num`.
fn enforce_decomposition<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    name: &str,
    bits: &[AllocatedBit],
    num: &AllocatedNum<Fr>,
) {
    let mut lc = LinearCombination::zero();
    let mut pow2 = Fr::ONE;
    for bit in bits {
        lc = lc + (pow2, bit.get_variable());
        pow2 = pow2.double();
    }
    cs.enforce(
        || name,
        |_| lc,
        |lc| lc + CS::one(),
        |lc| lc + num.get_variable(),
    );
}

fn booleans(bits: &[AllocatedBit]) -> Vec<Boolean> {
    bits.iter().map(|b| Boolean::Is(*b)).collect()
}

impl SnapShape {
    /// Each challenge's random bits (without the partition bits): chunks of Poseidon_gen(
    /// comm_r_new, digest index) decomposed into bits, `CAPACITY / bits` challenges a digest.
    fn random_challenge_bits<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        comm_r_new: &AllocatedNum<Fr>,
        partition: &AllocatedNum<Fr>,
    ) -> Result<Vec<Vec<AllocatedBit>>, SynthesisError> {
        let (per_digest, digests) = self.digests();
        let bits_per_challenge = self.random_bits();
        let mut out = Vec::with_capacity(self.challenges());
        for j in 0..digests {
            let index = AllocatedNum::alloc(cs.namespace(|| format!("digest_index_{j}")), || {
                let k = partition
                    .get_value()
                    .ok_or(SynthesisError::AssignmentMissing)?;
                Ok(k * Fr::from(digests as u64) + Fr::from(j as u64))
            })?;
            cs.enforce(
                || format!("digest_index_{j} == k * digests_per_partition + {j}"),
                |lc| {
                    lc + (Fr::from(digests as u64), partition.get_variable())
                        + (Fr::from(j as u64), CS::one())
                },
                |lc| lc + CS::one(),
                |lc| lc + index.get_variable(),
            );
            let digest = poseidon_hash(
                cs.namespace(|| format!("digest_{j}")),
                &[*comm_r_new, index],
                self.gen,
            )?;
            let bits = {
                let mut cs = cs.namespace(|| format!("digest_{j}_bits"));
                let bits = field_into_allocated_bits_le(&mut cs, digest.get_value())?;
                enforce_decomposition(&mut cs, "binary decomp", &bits, &digest);
                bits
            };
            let take = (self.challenges() - out.len()).min(per_digest);
            out.extend(
                bits.chunks(bits_per_challenge)
                    .take(take)
                    .map(<[AllocatedBit]>::to_vec),
            );
        }
        Ok(out)
    }

    /// The `h` high bits of a challenge, `h` chosen by the one set bit of `h_select`.
    fn high_bits<CS: ConstraintSystem<Fr>>(
        &self,
        mut cs: CS,
        c_bits: &[Boolean],
        h_select: &[AllocatedBit],
    ) -> Result<AllocatedNum<Fr>, SynthesisError> {
        let len = c_bits.len();
        let scaled = self
            .proof
            .hs()
            .iter()
            .zip(h_select)
            .enumerate()
            .map(|(k, (&h, select))| {
                let high = pack_bits(
                    cs.namespace(|| format!("c_high (h={h}, k={k})")),
                    &c_bits[len - h..],
                )?;
                let or_zero = AllocatedNum::alloc(
                    cs.namespace(|| format!("c_high_or_zero (h={h}, k={k})")),
                    || {
                        let on = select
                            .get_value()
                            .ok_or(SynthesisError::AssignmentMissing)?;
                        if on {
                            high.get_value().ok_or(SynthesisError::AssignmentMissing)
                        } else {
                            Ok(Fr::ZERO)
                        }
                    },
                )?;
                cs.enforce(
                    || format!("c_high_or_zero == c_high * h_select_bit (h={h}, k={k})"),
                    |lc| lc + high.get_variable(),
                    |lc| lc + select.get_variable(),
                    |lc| lc + or_zero.get_variable(),
                );
                Ok(or_zero)
            })
            .collect::<Result<Vec<_>, SynthesisError>>()?;
        let selected = AllocatedNum::alloc(cs.namespace(|| "c_high_selected"), || {
            scaled.iter().try_fold(Fr::ZERO, |sum, v| {
                Ok(sum + v.get_value().ok_or(SynthesisError::AssignmentMissing)?)
            })
        })?;
        cs.enforce(
            || "c_high_selected == dot(c_highs, h_select_bits)",
            |lc| scaled.iter().fold(lc, |lc, v| lc + v.get_variable()),
            |lc| lc + CS::one(),
            |lc| lc + selected.get_variable(),
        );
        Ok(selected)
    }
}

/// `comm_r = Poseidon(comm_c, root)`, enforced against the public `comm_r`.
fn enforce_comm_r<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    name: &str,
    sector: &StackedShape,
    comm_c: &AllocatedNum<Fr>,
    root: &AllocatedNum<Fr>,
    comm_r: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    let calc = poseidon_hash(
        cs.namespace(|| format!("{name}_calc")),
        &[*comm_c, *root],
        &sector.pair,
    )?;
    cs.enforce(
        || format!("enforce {name}_calc == {name}"),
        |lc| lc + calc.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + comm_r.get_variable(),
    );
    Ok(())
}

impl ChallengeOpening {
    #[allow(clippy::too_many_arguments)]
    fn synthesize<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
        i: usize,
        shape: &SnapShape,
        c_bits: &[AllocatedBit],
        rho: &AllocatedNum<Fr>,
        roots: [&AllocatedNum<Fr>; 2],
        apex_leaves: &[AllocatedNum<Fr>],
    ) -> Result<(), SynthesisError> {
        let sector = shape.sector;
        let leaf_r_old = alloc(
            cs.namespace(|| format!("leaf_r_old (c_index={i})")),
            self.leaf_r_old,
        )?;
        let leaf_d_new = alloc(
            cs.namespace(|| format!("leaf_d_new (c_index={i})")),
            self.leaf_d_new,
        )?;
        let leaf_r_new = {
            let mut cs = cs.namespace(|| format!("leaf_r_new (c_index={i})"));
            let d_rho = leaf_d_new.mul(cs.namespace(|| "label_d_new * rho"), rho)?;
            let new = AllocatedNum::alloc(cs.namespace(|| "label_r_new"), || {
                let old = leaf_r_old
                    .get_value()
                    .ok_or(SynthesisError::AssignmentMissing)?;
                let d_rho = d_rho.get_value().ok_or(SynthesisError::AssignmentMissing)?;
                Ok(old + d_rho)
            })?;
            cs.enforce(
                || "label_r_new == label_r_old + label_d_new * rho",
                |lc| lc + leaf_r_old.get_variable() + d_rho.get_variable(),
                |lc| lc + CS::one(),
                |lc| lc + new.get_variable(),
            );
            new
        };
        for (tree, leaf, path, root) in [
            ("r_old", leaf_r_old, &self.path_r_old, roots[0]),
            ("r_new", leaf_r_new, &self.path_r_new, roots[1]),
        ] {
            let siblings = path
                .iter()
                .enumerate()
                .map(|(row, level)| {
                    alloc_all(cs, level, |s| {
                        format!(
                            "path_{tree} sibling (c_index={i}, tree_row={row}, sibling_index={s})"
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            por_no_challenge_input(
                &mut cs.namespace(|| format!("por tree_{tree} (c_index={i})")),
                sector.tree,
                c_bits,
                &leaf,
                &siblings,
                root,
                &sector.tree_hashes[..],
            )?;
        }
        let depth = shape.apex_depth();
        let apex_bits = booleans(&c_bits[depth..depth + shape.apex_bits()]);
        let apex_leaf = select(
            cs.namespace(|| format!("select_apex_leaf (c_index={i})")),
            apex_leaves,
            &apex_bits,
        )?;
        let path = alloc_all(cs, &self.path_to_apex, |row| {
            format!("path_to_apex_leaf sibling (c_index={i}, tree_row={row})")
        })?;
        let path: Vec<Vec<AllocatedNum<Fr>>> = path.into_iter().map(|s| vec![s]).collect();
        por_no_challenge_input(
            &mut cs.namespace(|| format!("por to_apex_leaf (c_index={i})")),
            StackedShape::COMM_D_TREE,
            &c_bits[..depth],
            &leaf_d_new,
            &path,
            &apex_leaf,
            &Sha256Hash,
        )
    }
}

impl Circuit<Fr> for UpdateCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        self.check()?;
        let shape = self.shape;
        let partition_bits = shape.partition_bits();

        let k_and_h_select = alloc(
            cs.namespace(|| "k_and_h_select"),
            self.k_and_h_select.map(Fr::from),
        )?;
        k_and_h_select.inputize(cs.namespace(|| "k_and_h_select (public input)"))?;
        let bit_len = partition_bits + shape.proof.hs().len();
        let values: Vec<Option<bool>> = match k_and_h_select.get_value() {
            Some(v) => v.to_le_bits().into_iter().take(bit_len).map(Some).collect(),
            None => vec![None; bit_len],
        };
        let bits = values
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                AllocatedBit::alloc(cs.namespace(|| format!("k_and_h_select_bit_{i}")), b)
            })
            .collect::<Result<Vec<_>, _>>()?;
        enforce_decomposition(cs, "k_and_h_select binary decomp", &bits, &k_and_h_select);
        let (k_bits, h_select) = bits.split_at(partition_bits);
        let partition = pack_bits(cs.namespace(|| "pack partition bits"), &booleans(k_bits))?;

        let mut public = |name: &'static str, v: Option<Fr>| {
            let n = alloc(cs.namespace(|| name), v)?;
            n.inputize(cs.namespace(|| format!("{name}_input")))?;
            Ok::<_, SynthesisError>(n)
        };
        let comm_r_old = public("comm_r_old", self.comm_r_old)?;
        let comm_d_new = public("comm_d_new", self.comm_d_new)?;
        let comm_r_new = public("comm_r_new", self.comm_r_new)?;
        let phi = poseidon_hash(cs.namespace(|| "phi"), &[comm_d_new, comm_r_old], shape.gen)?;

        let comm_c = alloc(cs.namespace(|| "comm_c"), self.comm_c)?;
        let root_r_old = alloc(cs.namespace(|| "root_r_old"), self.root_r_old)?;
        let root_r_new = alloc(cs.namespace(|| "root_r_new"), self.root_r_new)?;
        let apex_leaves = alloc_all(cs, &self.apex_leaves, |i| format!("apex_leaf_{i}"))?;
        let partition_path: Vec<Vec<AllocatedNum<Fr>>> =
            alloc_all(cs, &self.partition_path, |i| {
                format!("partition_path_sibling_{i}")
            })?
            .into_iter()
            .map(|s| vec![s])
            .collect();

        enforce_comm_r(
            cs,
            "comm_r_old",
            shape.sector,
            &comm_c,
            &root_r_old,
            &comm_r_old,
        )?;
        enforce_comm_r(
            cs,
            "comm_r_new",
            shape.sector,
            &comm_c,
            &root_r_new,
            &comm_r_new,
        )?;

        // The apex tree over this partition's leaves, then its root up to comm_d_new.
        {
            let mut cs = cs.namespace(|| "apex_gadget");
            let mut row = apex_leaves.clone();
            for r in 0..shape.apex_bits() {
                row = row
                    .chunks(2)
                    .enumerate()
                    .map(|(i, pair)| {
                        cuzk_gadgets::por::TreeHash::hash_leaves(
                            &Sha256Hash,
                            cs.namespace(|| {
                                format!("apex_tree generation hash (tree_row={r}, siblings={i})")
                            }),
                            pair,
                        )
                    })
                    .collect::<Result<_, _>>()?;
            }
            por_no_challenge_input(
                &mut cs.namespace(|| "partition-tree por"),
                StackedShape::COMM_D_TREE,
                k_bits,
                &row[0],
                &partition_path,
                &comm_d_new,
                &Sha256Hash,
            )?;
        }

        let generated = shape.random_challenge_bits(
            &mut cs.namespace(|| "gen_challenge_bits"),
            &comm_r_new,
            &partition,
        )?;
        for (i, (opening, random)) in self.challenges.iter().zip(generated).enumerate() {
            let c_bits: Vec<AllocatedBit> =
                random.into_iter().chain(k_bits.iter().copied()).collect();
            let high = shape.high_bits(
                cs.namespace(|| format!("get_challenge_high_bits (c_index={i})")),
                &booleans(&c_bits),
                h_select,
            )?;
            let rho = poseidon_hash(
                cs.namespace(|| format!("rho (c_index={i})")),
                &[phi, high],
                shape.gen,
            )?;
            opening.synthesize(
                cs,
                i,
                &shape,
                &c_bits,
                &rho,
                [&root_r_old, &root_r_new],
                &apex_leaves,
            )?;
        }
        Ok(())
    }
}
