//! Native witness generation for an update partition: what [`UpdateCircuit`]'s synthesis
//! assigns, computed from the values. The head (public inputs, phi, comm_r checks, the apex
//! tree, the challenge digests) comes first; every challenge then allocates the same number
//! of values, so the challenges fill consecutive slices of one aux vector in parallel.

use blstrs::Scalar as Fr;
use cuzk_gadgets::native::por::{por_no_challenge_input, select};
use cuzk_gadgets::native::{self, Count, Sink};
use cuzk_gadgets::por::{Sha256Hash, TreeHash};
use ff::{Field, PrimeField, PrimeFieldBits};

use super::circuit::{ChallengeOpening, UpdateCircuit};
use super::SnapShape;
use crate::stacked::StackedShape;
use crate::witness::{fill, WitnessError};

const COMM_D: cuzk_gadgets::por::TreeShape = StackedShape::COMM_D_TREE;

fn value(v: Option<Fr>) -> Result<Fr, WitnessError> {
    v.ok_or(bellpepper_core::SynthesisError::AssignmentMissing.into())
}

fn values(vs: &[Option<Fr>]) -> Result<Vec<Fr>, WitnessError> {
    vs.iter().map(|v| value(*v)).collect()
}

fn bit(b: bool) -> Fr {
    if b {
        Fr::ONE
    } else {
        Fr::ZERO
    }
}

/// Little-endian bits as a number.
fn packed(bits: &[bool]) -> Fr {
    bits.iter()
        .rev()
        .fold(Fr::ZERO, |acc, &b| acc.double() + bit(b))
}

/// What the circuit computes before its challenge loop.
struct Head {
    phi: Fr,
    k_bits: Vec<bool>,
    h_select: Vec<bool>,
    /// Each challenge's random bits.
    random: Vec<Vec<bool>>,
    apex_leaves: Vec<Fr>,
}

fn write_head(
    c: &UpdateCircuit,
    s: &mut impl Sink<Fr>,
    inputs: &mut Vec<Fr>,
) -> Result<Head, WitnessError> {
    let shape = &c.shape;
    let sector = shape.sector;
    let kh = c
        .k_and_h_select
        .ok_or(bellpepper_core::SynthesisError::AssignmentMissing)?;
    s.push(Fr::from(kh));
    inputs.push(Fr::from(kh));
    let partition_bits = shape.partition_bits();
    let bits: Vec<bool> = (0..partition_bits + shape.registered_proof().hs().len())
        .map(|i| kh >> i & 1 == 1)
        .collect();
    bits.iter().for_each(|&b| s.push(bit(b)));
    let (k_bits, h_select) = bits.split_at(partition_bits);
    let k = packed(k_bits);
    s.push(k);
    let [comm_r_old, comm_d_new, comm_r_new] =
        [c.comm_r_old, c.comm_d_new, c.comm_r_new].map(value);
    let (comm_r_old, comm_d_new, comm_r_new) = (comm_r_old?, comm_d_new?, comm_r_new?);
    for v in [comm_r_old, comm_d_new, comm_r_new] {
        s.push(v);
        inputs.push(v);
    }
    let phi = native::poseidon::hash(s, &[comm_d_new, comm_r_old], shape.gen)?;
    let (comm_c, root_r_old, root_r_new) =
        (value(c.comm_c)?, value(c.root_r_old)?, value(c.root_r_new)?);
    let apex_leaves = values(&c.apex_leaves)?;
    let partition_path = values(&c.partition_path)?;
    for v in [comm_c, root_r_old, root_r_new]
        .iter()
        .chain(&apex_leaves)
        .chain(&partition_path)
    {
        s.push(*v);
    }
    for root in [root_r_old, root_r_new] {
        native::poseidon::hash(s, &[comm_c, root], &sector.pair)?;
    }
    let mut row = apex_leaves.clone();
    while row.len() > 1 {
        row = row
            .chunks(2)
            .map(|pair| Sha256Hash.native(s, pair))
            .collect::<Result<_, _>>()?;
    }
    let path: Vec<Vec<Fr>> = partition_path.iter().map(|&v| vec![v]).collect();
    por_no_challenge_input(s, COMM_D, k_bits, row[0], &path, &Sha256Hash)?;

    let (per_digest, digests) = shape.digests();
    let k_value = (kh & ((1 << partition_bits) - 1)) as usize;
    let mut random = Vec::with_capacity(shape.challenges());
    for j in 0..digests {
        let index = Fr::from((k_value * digests + j) as u64);
        s.push(index);
        let digest = native::poseidon::hash(s, &[comm_r_new, index], shape.gen)?;
        let digest_bits: Vec<bool> = digest
            .to_le_bits()
            .into_iter()
            .take(Fr::NUM_BITS as usize)
            .collect();
        digest_bits.iter().for_each(|&b| s.push(bit(b)));
        let take = (shape.challenges() - random.len()).min(per_digest);
        random.extend(
            digest_bits
                .chunks(shape.random_bits())
                .take(take)
                .map(<[bool]>::to_vec),
        );
    }
    Ok(Head {
        phi,
        k_bits: k_bits.to_vec(),
        h_select: h_select.to_vec(),
        random,
        apex_leaves,
    })
}

fn write_challenge(
    shape: &SnapShape,
    head: &Head,
    random: &[bool],
    o: &ChallengeOpening,
    s: &mut impl Sink<Fr>,
) -> Result<(), WitnessError> {
    let sector = shape.sector;
    let c_bits: Vec<bool> = random.iter().chain(&head.k_bits).copied().collect();
    let len = c_bits.len();
    let mut high = Fr::ZERO;
    for (&h, &on) in shape.registered_proof().hs().iter().zip(&head.h_select) {
        let c_high = packed(&c_bits[len - h..]);
        s.push(c_high);
        let or_zero = if on { c_high } else { Fr::ZERO };
        s.push(or_zero);
        high += or_zero;
    }
    s.push(high);
    let rho = native::poseidon::hash(s, &[head.phi, high], shape.gen)?;
    let (leaf_r_old, leaf_d_new) = (value(o.leaf_r_old)?, value(o.leaf_d_new)?);
    s.push(leaf_r_old);
    s.push(leaf_d_new);
    let d_rho = leaf_d_new * rho;
    s.push(d_rho);
    let leaf_r_new = leaf_r_old + d_rho;
    s.push(leaf_r_new);
    for (leaf, path) in [(leaf_r_old, &o.path_r_old), (leaf_r_new, &o.path_r_new)] {
        let path = path
            .iter()
            .map(|l| values(l))
            .collect::<Result<Vec<_>, _>>()?;
        path.iter().flatten().for_each(|&v| s.push(v));
        por_no_challenge_input(
            s,
            sector.tree,
            &c_bits,
            leaf,
            &path,
            &sector.tree_hashes[..],
        )?;
    }
    let depth = shape.apex_depth();
    select(
        s,
        head.apex_leaves.clone(),
        &c_bits[depth..depth + shape.apex_bits()],
    );
    let path = values(&o.path_to_apex)?;
    path.iter().for_each(|&v| s.push(v));
    let path: Vec<Vec<Fr>> = path.into_iter().map(|v| vec![v]).collect();
    por_no_challenge_input(s, COMM_D, &c_bits[..depth], leaf_d_new, &path, &Sha256Hash)?;
    Ok(())
}

impl UpdateCircuit {
    /// The witness synthesis assigns, `(input, aux)` with ONE as `input[0]`.
    pub fn native_witness(&self) -> Result<(Vec<Fr>, Vec<Fr>), WitnessError> {
        self.check()?;
        let mut count = Count(0);
        let head = write_head(self, &mut count, &mut Vec::new())?;
        let head_len = count.0;
        let mut count = Count(0);
        write_challenge(
            &self.shape,
            &head,
            &head.random[0],
            &self.challenges[0],
            &mut count,
        )?;
        let mut lengths = vec![head_len];
        lengths.extend(vec![count.0; self.challenges.len()]);
        let (aux, inputs) = fill(&lengths, |i, cursor| {
            let mut inputs = Vec::new();
            if i == 0 {
                write_head(self, cursor, &mut inputs)?;
            } else {
                write_challenge(
                    &self.shape,
                    &head,
                    &head.random[i - 1],
                    &self.challenges[i - 1],
                    cursor,
                )?;
            }
            Ok(inputs)
        })?;
        let mut input = vec![Fr::ONE];
        input.extend(inputs.into_iter().flatten());
        Ok((input, aux))
    }
}
