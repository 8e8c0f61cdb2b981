//! Merkle trees known only where proofs open them, for random but consistent requests at
//! sizes no test can seal: every opening of one tree reaches the same root, so the request
//! passes every check and satisfies the circuit.
//!
//! - [`BlockTree`]: leaves constant on aligned blocks, so every subtree inside a block is
//!   uniform and any leaf can be opened after a few thousand hashes.
//! - [`SparseTree`]: only the given leaves are known; every other node a path needs is a
//!   random value, fixed once, and the nodes on the given leaves' paths are hashed.

use std::collections::{BTreeMap, HashMap};

use blstrs::Scalar as Fr;
use cuzk_gadgets::por::TreeShape;
use ff::{Field, PrimeField};
use rand_core::RngCore;

use crate::vanilla::random::from_levels;
use crate::vanilla::{Element, MerkleProof};

/// A tree whose leaves are constant on aligned blocks of `block` leaves; node values by
/// (level, index), memoised.
pub(crate) struct BlockTree<'a> {
    arities: Vec<usize>,
    hash: &'a dyn Fn(&[Fr]) -> Fr,
    /// The leaf value of block `b`.
    leaf: &'a dyn Fn(u64) -> Fr,
    block: u64,
    /// Uniform subtrees: (level, block) → value.
    uniform: HashMap<(usize, u64), Fr>,
    nodes: HashMap<(usize, u64), Fr>,
}

impl<'a> BlockTree<'a> {
    pub(crate) fn new(
        arities: Vec<usize>,
        hash: &'a dyn Fn(&[Fr]) -> Fr,
        block: u64,
        leaf: &'a dyn Fn(u64) -> Fr,
    ) -> Self {
        BlockTree {
            arities,
            hash,
            leaf,
            block,
            uniform: HashMap::new(),
            nodes: HashMap::new(),
        }
    }

    /// Leaves under one node of `level`.
    fn span(&self, level: usize) -> u64 {
        self.arities[..level].iter().map(|&a| a as u64).product()
    }

    pub(crate) fn node(&mut self, level: usize, index: u64) -> Fr {
        let span = self.span(level);
        if span <= self.block {
            return self.uniform(level, index * span / self.block);
        }
        if let Some(v) = self.nodes.get(&(level, index)) {
            return *v;
        }
        let a = self.arities[level - 1] as u64;
        let children: Vec<Fr> = (index * a..(index + 1) * a)
            .map(|i| self.node(level - 1, i))
            .collect();
        let v = (self.hash)(&children);
        self.nodes.insert((level, index), v);
        v
    }

    fn uniform(&mut self, level: usize, block: u64) -> Fr {
        if level == 0 {
            return (self.leaf)(block);
        }
        if let Some(v) = self.uniform.get(&(level, block)) {
            return *v;
        }
        let below = self.uniform(level - 1, block);
        let v = (self.hash)(&vec![below; self.arities[level - 1]]);
        self.uniform.insert((level, block), v);
        v
    }

    pub(crate) fn root(&mut self) -> Fr {
        self.node(self.arities.len(), 0)
    }

    /// The opening of leaf `leaf`, split into the parts of a tree of `shape`.
    pub(crate) fn proof(&mut self, shape: TreeShape, leaf: u64) -> MerkleProof {
        let levels: Vec<Element> = (0..self.arities.len())
            .map(|l| {
                let (a, index) = (self.arities[l] as u64, leaf / self.span(l));
                let first = index - index % a;
                Element {
                    hashes: (first..first + a)
                        .filter(|&i| i != index)
                        .map(|i| self.node(l, i).to_repr())
                        .collect(),
                    index: (index % a) as usize,
                }
            })
            .collect();
        let (root, value) = (self.root(), self.node(0, leaf));
        from_levels(shape, levels, root.to_repr(), value.to_repr())
    }
}

/// A field element whose bytes are a valid SHA-256 tree node (top two bits clear).
pub(crate) fn fr32(rng: &mut impl RngCore) -> Fr {
    let mut repr = Fr::random(&mut *rng).to_repr();
    repr[31] &= 0x3f;
    Fr::from_repr(repr).expect("below 2^254")
}

/// A tree of which only some leaves are known: the nodes their paths need are hashed, every
/// sibling off those paths is random.
pub(crate) struct SparseTree {
    arities: Vec<usize>,
    /// levels[l]: the known nodes of level l (0 = leaves), by index.
    levels: Vec<BTreeMap<u64, Fr>>,
}

impl SparseTree {
    /// The tree over `leaves` (index, value); a repeated index keeps its first value.
    pub(crate) fn new(
        arities: Vec<usize>,
        leaves: impl IntoIterator<Item = (u64, Fr)>,
        hash: &dyn Fn(&[Fr]) -> Fr,
        rng: &mut impl RngCore,
    ) -> Self {
        let mut levels: Vec<BTreeMap<u64, Fr>> = vec![BTreeMap::new()];
        for (i, v) in leaves {
            levels[0].entry(i).or_insert(v);
        }
        for &a in &arities {
            let a = a as u64;
            let below = levels.last_mut().expect("a level");
            let parents: Vec<u64> = below.keys().map(|i| i / a).collect();
            let mut above = BTreeMap::new();
            for p in parents {
                if above.contains_key(&p) {
                    continue;
                }
                let children: Vec<Fr> = (p * a..(p + 1) * a)
                    .map(|i| *below.entry(i).or_insert_with(|| Fr::random(&mut *rng)))
                    .collect();
                above.insert(p, hash(&children));
            }
            levels.push(above);
        }
        SparseTree { arities, levels }
    }

    pub(crate) fn root(&self) -> Fr {
        *self
            .levels
            .last()
            .and_then(|l| l.values().next())
            .expect("a tree over at least one leaf")
    }

    /// The opening of known leaf `leaf`, split into the parts of a tree of `shape`.
    ///
    /// # Panics
    /// If `leaf` was not one of the tree's leaves.
    pub(crate) fn proof(&self, shape: TreeShape, leaf: u64) -> MerkleProof {
        let mut index = leaf;
        let path = self
            .arities
            .iter()
            .enumerate()
            .map(|(l, &a)| {
                let a = a as u64;
                let first = index / a * a;
                let e = Element {
                    hashes: (first..first + a)
                        .filter(|&i| i != index)
                        .map(|i| self.levels[l][&i].to_repr())
                        .collect(),
                    index: (index - first) as usize,
                };
                index /= a;
                e
            })
            .collect();
        from_levels(
            shape,
            path,
            self.root().to_repr(),
            self.levels[0][&leaf].to_repr(),
        )
    }
}
