//! The conformance harness every [`Backend`] must pass, and the random circuits it uses.
//!
//! A backend conforms when, for the same proving key, witness and randomness, it returns
//! exactly the proof bytes of the [`CpuBackend`] reference, and those proofs verify.

use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError, Variable};
use ff::Field;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::assignment::Witness;
use crate::backend::{Backend, CpuBackend, Randomness};
use crate::curve::Projective;
use crate::params::ProvingKey;
use crate::verifier::{verify_proof, PreparedVerifyingKey};
use crate::{generator, Fr, G1Affine, G1Projective, G2Affine, G2Projective, ProverError};

/// The shape of a random satisfiable circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Public inputs besides ONE.
    pub inputs: usize,
    /// Free witness variables; each constraint also allocates its own product variable.
    pub free_aux: usize,
    /// Constraints (at least one, so every variable is constrained).
    pub constraints: usize,
    /// Terms per linear combination, at most.
    pub max_terms: usize,
    /// All witness values zero.
    pub zero_witness: bool,
    /// B uses only ONE, so the B query holds a single point.
    pub b_only_one: bool,
}

/// A random circuit: constraint `k` is `A_k · B_k = z_k` for random linear combinations over
/// the variables allocated so far and a fresh aux variable `z_k`.
#[derive(Clone, Debug)]
pub struct RandomCircuit {
    pub shape: Shape,
    pub seed: u64,
}

impl Shape {
    /// A random small shape (for property tests): up to `max_constraints` constraints, every
    /// flag drawn.
    pub fn random(seed: u64, max_constraints: usize) -> Shape {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut below = |n: usize| (rng.next_u32() as usize) % n.max(1);
        Shape {
            inputs: below(6),
            free_aux: below(30),
            constraints: 1 + below(max_constraints),
            max_terms: 1 + below(7),
            zero_witness: below(2) == 1,
            b_only_one: below(2) == 1,
        }
    }
}

impl RandomCircuit {
    pub fn new(shape: Shape, seed: u64) -> Self {
        RandomCircuit { shape, seed }
    }

    /// The public inputs the circuit allocates (without ONE).
    pub fn public_inputs(&self) -> Vec<Fr> {
        let mut rng = ChaCha20Rng::seed_from_u64(self.seed);
        (0..self.shape.inputs)
            .map(|_| self.value(&mut rng))
            .collect()
    }

    fn value(&self, rng: &mut ChaCha20Rng) -> Fr {
        let v = Fr::random(&mut *rng);
        if self.shape.zero_witness {
            Fr::ZERO
        } else {
            v
        }
    }
}

fn random_lc(
    rng: &mut ChaCha20Rng,
    vars: &[(Variable, Fr)],
    max_terms: usize,
) -> (LinearCombination<Fr>, Fr) {
    let mut lc = LinearCombination::zero();
    let mut val = Fr::ZERO;
    let terms = 1 + (rng.next_u32() as usize) % max_terms.max(1);
    let picks: Vec<_> = (0..terms)
        .map(|_| vars[(rng.next_u32() as usize) % vars.len()])
        .collect();
    for (var, v) in picks {
        // Mostly ±1 and small powers of two, like real circuits, sometimes arbitrary.
        let coeff = match rng.next_u32() % 4 {
            0 => Fr::ONE,
            1 => -Fr::ONE,
            2 => Fr::from(1u64 << (rng.next_u32() % 64)),
            _ => Fr::random(&mut *rng),
        };
        lc = lc + (coeff, var);
        val += v * coeff;
    }
    (lc, val)
}

impl Circuit<Fr> for RandomCircuit {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let s = self.shape;
        let mut rng = ChaCha20Rng::seed_from_u64(self.seed);
        let mut vars = vec![(CS::one(), Fr::ONE)];
        for i in 0..s.inputs {
            let v = self.value(&mut rng);
            vars.push((cs.alloc_input(|| format!("input {i}"), || Ok(v))?, v));
        }
        let mut free = Vec::new();
        for i in 0..s.free_aux {
            let v = self.value(&mut rng);
            let var = cs.alloc(|| format!("free {i}"), || Ok(v))?;
            vars.push((var, v));
            free.push((var, v));
        }
        let constraints = s.constraints.max(1);
        for k in 0..constraints {
            // Spread the free variables over the constraints so none is left unconstrained.
            let must = free
                .iter()
                .skip(k)
                .step_by(constraints)
                .copied()
                .collect::<Vec<_>>();
            let (mut a, mut av) = random_lc(&mut rng, &vars, s.max_terms);
            for m in must {
                // A random coefficient cannot cancel against the random terms (but ±1 could).
                let coeff = Fr::random(&mut rng);
                a = a + (coeff, m.0);
                av += m.1 * coeff;
            }
            let (b, bv) = if s.b_only_one {
                (LinearCombination::zero() + CS::one(), Fr::ONE)
            } else {
                random_lc(&mut rng, &vars, s.max_terms)
            };
            let zv = av * bv;
            let z = cs.alloc(|| format!("z {k}"), || Ok(zv))?;
            cs.enforce(|| format!("c {k}"), |_| a, |_| b, |lc| lc + z);
            vars.push((z, zv));
        }
        Ok(())
    }
}

/// What went wrong when a backend was checked.
#[derive(Debug, thiserror::Error)]
pub enum Nonconformance {
    #[error("case {case}: {source}")]
    Failed {
        case: usize,
        #[source]
        source: ProverError,
    },
    #[error("case {case}: proof {index} differs from the CPU reference")]
    Differs { case: usize, index: usize },
    #[error("case {case}: proof {index} does not verify")]
    Invalid { case: usize, index: usize },
}

/// The shapes every backend is checked on: tiny, power-of-two edges, empty B density, zero
/// witness, and a few thousand constraints.
pub fn standard_shapes() -> Vec<Shape> {
    let base = Shape {
        inputs: 2,
        free_aux: 3,
        constraints: 5,
        max_terms: 4,
        zero_witness: false,
        b_only_one: false,
    };
    vec![
        base,
        Shape {
            inputs: 0,
            free_aux: 0,
            constraints: 1,
            ..base
        },
        // constraints + inputs + 1 = 64: exactly a power of two.
        Shape {
            inputs: 3,
            free_aux: 10,
            constraints: 60,
            ..base
        },
        Shape {
            inputs: 5,
            free_aux: 40,
            constraints: 61,
            b_only_one: true,
            ..base
        },
        Shape {
            inputs: 1,
            free_aux: 8,
            constraints: 30,
            zero_witness: true,
            ..base
        },
        Shape {
            inputs: 16,
            free_aux: 500,
            constraints: 3000,
            max_terms: 8,
            ..base
        },
    ]
}

/// Checks `backend` against [`CpuBackend`] on the given circuits, proving each in a batch of
/// `batch` witnesses with distinct randomness.
pub fn check_backend(
    backend: &dyn Backend,
    circuits: &[RandomCircuit],
    batch: usize,
) -> Result<(), Nonconformance> {
    for (case, circuit) in circuits.iter().enumerate() {
        let fail = |source| Nonconformance::Failed { case, source };
        let mut rng = ChaCha20Rng::seed_from_u64(circuit.seed ^ 0x5eed);
        let pk: ProvingKey = generator::generate(circuit.clone(), &mut rng).map_err(fail)?;
        let w = Witness::synthesize(circuit.clone()).map_err(|e| fail(e.into()))?;
        let witnesses = vec![w; batch];
        let rs: Vec<Randomness> = (0..batch).map(|_| Randomness::random(&mut rng)).collect();
        let want = CpuBackend.prove(&pk, &witnesses, &rs).map_err(fail)?;
        let got = backend.prove(&pk, &witnesses, &rs).map_err(fail)?;
        if got.len() != want.len() {
            return Err(Nonconformance::Differs {
                case,
                index: got.len().min(want.len()),
            });
        }
        let pvk = PreparedVerifyingKey::new(&pk.vk);
        for (index, (g, w)) in got.iter().zip(&want).enumerate() {
            if g.to_bytes() != w.to_bytes() {
                return Err(Nonconformance::Differs { case, index });
            }
            if !verify_proof(&pvk, g, &circuit.public_inputs()).unwrap_or(false) {
                return Err(Nonconformance::Invalid { case, index });
            }
        }
    }
    Ok(())
}

/// `n` distinct pseudo-random points `P + i·Q`, normalised in batches: cheap inputs for MSM
/// benchmarks and backend tests at sizes where hashing to the curve would take minutes.
pub fn random_points<G: Projective>(n: usize, seed: u64) -> Vec<G::AffineRepr>
where
    G::AffineRepr: crate::curve::Coords,
{
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (p, q) = (G::random(&mut rng), G::random(&mut rng));
    let mut out = vec![G::AffineRepr::default(); n];
    let mut acc = p;
    for block in out.chunks_mut(1 << 12) {
        let proj: Vec<G> = block
            .iter()
            .map(|_| {
                acc += q;
                acc
            })
            .collect();
        G::batch_to_affine(&proj, block);
    }
    out
}

/// [`random_points`] over G1.
pub fn random_g1(n: usize, seed: u64) -> Vec<G1Affine> {
    random_points::<G1Projective>(n, seed)
}

/// [`random_points`] over G2.
pub fn random_g2(n: usize, seed: u64) -> Vec<G2Affine> {
    random_points::<G2Projective>(n, seed)
}

/// `distinct` repeated to length `n` (in parallel: keys of tens of GiB are built this way).
pub fn tile<T: Copy + Send + Sync>(distinct: &[T], n: usize) -> Vec<T> {
    use rayon::prelude::*;
    let mut out = vec![distinct[0]; n];
    out.par_chunks_mut(distinct.len())
        .for_each(|c| c.copy_from_slice(&distinct[..c.len()]));
    out
}

/// A key of random points for a circuit of `inputs` inputs, `rows` a/b/c rows, `aux` aux
/// columns, `a` A-query and `b` B-query points: up to 2^20 distinct G1 and 2^18 distinct G2
/// points tiled to those lengths, so a 32 GiB-shaped key (44 GiB) is built in seconds where real
/// parameters take hours. MSM cost does not depend on which points are used, so it serves
/// benchmarks; proofs over it prove nothing. Panics if `rows` exceeds the largest domain.
pub fn tiled_key(inputs: usize, rows: usize, aux: usize, a: usize, b: usize) -> ProvingKey {
    let domain = crate::domain::Domain::for_size(rows).expect("rows fit a BLS12-381 domain");
    // Three at least for the verifying key; a longer key repeats the same prefix.
    let longest = inputs.max(domain.size()).max(aux).max(a).max(b);
    let (g1, g2) = (
        random_g1(longest.clamp(3, 1 << 20), 3),
        random_g2(b.clamp(3, 1 << 18), 4),
    );
    let vk = crate::params::VerifyingKey {
        alpha_g1: g1[0],
        beta_g1: g1[1],
        beta_g2: g2[0],
        gamma_g2: g2[1],
        delta_g1: g1[2],
        delta_g2: g2[2],
        ic: tile(&g1, inputs),
    };
    ProvingKey::from_points(
        vk,
        tile(&g1, domain.size() - 1),
        tile(&g1, aux),
        tile(&g1, a),
        tile(&g1, b),
        tile(&g2, b),
    )
}

/// `n` random scalars.
pub fn random_scalars(n: usize, seed: u64) -> Vec<Fr> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n).map(|_| Fr::random(&mut rng)).collect()
}

/// Checks `mul` against [`generator::CpuFixedBase`]: the same points for random and edge
/// scalars (0, 1, −1, every power of two) under tables of small and large windows, in G1 and
/// G2; then, for every standard shape, the same `.params` bytes from a whole setup with the
/// same seed. The error names the first difference.
pub fn check_fixed_base(mul: &dyn generator::FixedBaseMul) -> Result<(), String> {
    use crate::curve::FixedBase;
    use generator::FixedBaseMul;
    use group::Group;
    let cpu = generator::CpuFixedBase;
    let mut rng = ChaCha20Rng::seed_from_u64(0xf1ed);
    let mut scalars: Vec<Fr> = (0..3000).map(|_| Fr::random(&mut rng)).collect();
    scalars.extend([Fr::ZERO, Fr::ONE, -Fr::ONE]);
    let mut power = Fr::ONE;
    for _ in 0..255 {
        power = power.double();
        scalars.push(power);
    }
    fn err(what: &str) -> impl Fn(ProverError) -> String + '_ {
        move |e| format!("{what}: {e}")
    }
    // The reference's points, or where the first one differs.
    fn same<P: PartialEq>(what: &str, got: Vec<P>, want: Vec<P>, s: &[Fr]) -> Result<(), String> {
        if got.len() != want.len() {
            return Err(format!(
                "{what}: {} points for {} scalars",
                got.len(),
                s.len()
            ));
        }
        match got.iter().zip(&want).position(|(g, w)| g != w) {
            None => Ok(()),
            Some(i) => Err(format!(
                "{what}: scalar {i} ({:?}) gives another point",
                s[i]
            )),
        }
    }
    // Counts that pick windows of 2 to 16 bits.
    for count in [1, 1000, 1 << 22] {
        let t = FixedBase::new(G1Projective::random(&mut rng), count);
        let what = format!("G1, {}-bit windows", t.window());
        let got = mul.g1(&t, &scalars).map_err(err(&what))?;
        same(
            &what,
            got,
            cpu.g1(&t, &scalars).map_err(err(&what))?,
            &scalars,
        )?;
        if !mul.g1(&t, &[]).map_err(err(&what))?.is_empty() {
            return Err(format!("{what}: points for no scalars"));
        }
    }
    for count in [1, 1 << 18] {
        let t = FixedBase::new(G2Projective::random(&mut rng), count);
        let what = format!("G2, {}-bit windows", t.window());
        let got = mul.g2(&t, &scalars).map_err(err(&what))?;
        same(
            &what,
            got,
            cpu.g2(&t, &scalars).map_err(err(&what))?,
            &scalars,
        )?;
    }
    for (case, shape) in standard_shapes().into_iter().enumerate() {
        let cs = crate::r1cs::record(RandomCircuit::new(shape, case as u64))
            .map_err(err("recording"))?;
        let key = |m: &dyn generator::FixedBaseMul| {
            let mut rng = ChaCha20Rng::seed_from_u64(case as u64);
            let pk = generator::generate_with(&cs, &mut rng, m).map_err(err("setup"))?;
            let mut bytes = Vec::new();
            pk.write_to(&mut bytes).map_err(|e| e.to_string())?;
            Ok::<_, String>(bytes)
        };
        if key(mul)? != key(&cpu)? {
            return Err(format!("shape {case}: the setup's .params bytes differ"));
        }
    }
    Ok(())
}
