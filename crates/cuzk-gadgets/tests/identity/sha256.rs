use bellpepper::gadgets::sha256 as up;
use bellpepper::gadgets::uint32::UInt32 as Up;
use blstrs::Scalar as Fr;
use cuzk_gadgets::sha256 as ours;
use cuzk_gadgets::test_util::RecordingCs;
use cuzk_gadgets::uint32::UInt32;
use proptest::prelude::*;
use sha2::{Digest, Sha256};

use crate::harness::*;

fn bytes_to_specs(bytes: &[u8], allocated: bool) -> Vec<BitSpec> {
    cuzk_gadgets::multipack::bytes_to_bits(bytes)
        .into_iter()
        .map(|b| {
            if allocated {
                BitSpec::Is(Some(b))
            } else {
                BitSpec::Const(b)
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Padded hashing of messages of random length and random bit kinds (constants make many
    /// of the gadgets' shortcuts fire).
    #[test]
    fn padded(specs in (0..100usize).prop_flat_map(|n| prop::collection::vec(bit_spec(), n * 8))) {
        let (o, t) = compare(
            |cs| { let bits = ours_bits(cs, &specs)?; ours::sha256(cs, &bits) },
            |cs| { let bits = theirs_bits(cs, &specs)?; up::sha256(cs, &bits) },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(values(&o), up_values(&t));
        }
    }

    #[test]
    fn compression(block in prop::collection::vec(bit_spec(), 512), state in prop::collection::vec(word_spec(), 8), no_padding in any::<bool>()) {
        let (o, t) = compare(
            |cs| {
                let bits = ours_bits(cs, &block)?;
                if no_padding {
                    return ours::sha256_block_no_padding(cs, &bits);
                }
                let state: Vec<UInt32> = state.iter().enumerate().map(|(i, s)| ours_word(cs, i, s)).collect::<Result<_, _>>()?;
                let out = ours::sha256_compression_function(cs, &bits, &state.try_into().unwrap())?;
                Ok(out.iter().flat_map(|w| w.bits_le().to_vec()).collect())
            },
            |cs| {
                let bits = theirs_bits(cs, &block)?;
                if no_padding {
                    return up::sha256_block_no_padding(cs, &bits);
                }
                let state: Vec<Up> = state.iter().enumerate().map(|(i, s)| theirs_word(cs, i, s)).collect::<Result<_, _>>()?;
                let out = up::sha256_compression_function(cs, &bits, &state)?;
                Ok(out.into_iter().flat_map(Up::into_bits).collect())
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(values(&o), up_values(&t));
        }
    }

    /// The digest is SHA-256's, whether the message is allocated or constant.
    #[test]
    fn matches_sha2(bytes in prop::collection::vec(any::<u8>(), 0..80), allocated in any::<bool>()) {
        let mut cs = RecordingCs::<Fr>::new();
        let bits = ours_bits(&mut cs, &bytes_to_specs(&bytes, allocated)).unwrap();
        let digest = ours::sha256(&mut cs, &bits).unwrap();
        let expected = cuzk_gadgets::multipack::bytes_to_bits(&Sha256::digest(&bytes));
        prop_assert_eq!(values(&digest), expected.into_iter().map(Some).collect::<Vec<_>>());
        prop_assert!(cs.is_satisfied());
    }
}

#[test]
fn rejects_bad_lengths() {
    let mut cs = RecordingCs::<Fr>::new();
    let bits = vec![cuzk_gadgets::boolean::Boolean::Constant(true); 7];
    assert!(ours::sha256(&mut cs, &bits).is_err());
    assert!(ours::sha256_block_no_padding(&mut cs, &bits).is_err());
}
