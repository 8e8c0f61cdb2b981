use bellpepper::gadgets::multipack as up;
use cuzk_gadgets::multipack as ours;
use proptest::prelude::*;

use crate::harness::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pack(specs in prop::collection::vec(bit_spec(), 0..600), private in any::<bool>()) {
        let (o, t) = compare(
            |cs| {
                let bits = ours_bits(cs, &specs)?;
                if private {
                    ours::pack_bits(cs, &bits).map(|n| n.get_value())
                } else {
                    ours::pack_into_inputs(cs, &bits).map(|()| None)
                }
            },
            |cs| {
                let bits = theirs_bits(cs, &specs)?;
                if private {
                    up::pack_bits(cs, &bits).map(|n| n.get_value())
                } else {
                    up::pack_into_inputs(cs, &bits).map(|()| None)
                }
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o, t);
        }
    }

    #[test]
    fn native(bytes in prop::collection::vec(any::<u8>(), 0..100)) {
        let bits = ours::bytes_to_bits(&bytes);
        prop_assert_eq!(&bits, &up::bytes_to_bits(&bytes));
        prop_assert_eq!(ours::bytes_to_bits_le(&bytes), up::bytes_to_bits_le(&bytes));
        prop_assert_eq!(
            ours::compute_multipacking::<blstrs::Scalar>(&bits),
            up::compute_multipacking::<blstrs::Scalar>(&bits)
        );
    }
}
