//! Native witness of one SHA-256 compression (a full block of allocated bits under an allocated
//! state, the common case inside a label hash) against the gadget's witness-only synthesis;
//! the native side writes into a reused buffer, so this is compute only, no page faults.

use std::mem::MaybeUninit;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use criterion::{criterion_group, criterion_main, Criterion};
use cuzk_gadgets::boolean::{AllocatedBit, Boolean};
use cuzk_gadgets::native::bits::Word;
use cuzk_gadgets::native::{self, Count, Cursor};
use cuzk_gadgets::sha256::sha256_compression_function;
use cuzk_gadgets::uint32::UInt32;
use cuzk_pce::WitnessCs;

struct Compress([u32; 16], [u32; 8]);

impl Circuit<Fr> for &Compress {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut alloc = |v: u32| UInt32::alloc(&mut *cs, Some(v));
        let block: Vec<Boolean> = self
            .0
            .iter()
            .map(|&v| alloc(v).map(UInt32::into_bits_be))
            .collect::<Result<Vec<_>, _>>()?
            .concat();
        let state: Vec<UInt32> = self.1.iter().map(|&v| alloc(v)).collect::<Result<_, _>>()?;
        let state: [UInt32; 8] = state.try_into().expect("8 words");
        let _ = AllocatedBit::alloc(cs.namespace(|| "unused"), Some(true))?;
        sha256_compression_function(cs.namespace(|| "c"), &block, &state)?;
        Ok(())
    }
}

fn bench(c: &mut Criterion) {
    let words: [u32; 16] = std::array::from_fn(|i| (i as u32).wrapping_mul(0x9E37_79B9));
    let state: [u32; 8] = std::array::from_fn(|i| (i as u32 + 99).wrapping_mul(0x85EB_CA6B));
    let circuit = Compress(words, state);
    let block = words.map(Word::allocated);
    let current = state.map(Word::allocated);
    let mut count = Count(0);
    native::sha256::compress::<Fr>(&mut count, &block, &current);
    let mut buffer: Vec<MaybeUninit<Fr>> = (0..count.0).map(|_| MaybeUninit::uninit()).collect();

    let mut g = c.benchmark_group("sha256_compression_witness");
    g.bench_function("witness_only_synthesis", |b| {
        b.iter(|| WitnessCs::assign(&circuit).unwrap())
    });
    g.bench_function("native", |b| {
        b.iter(|| {
            let mut cursor = Cursor::new(&mut buffer);
            native::sha256::compress(&mut cursor, &block, &current);
            cursor.finish().unwrap();
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
