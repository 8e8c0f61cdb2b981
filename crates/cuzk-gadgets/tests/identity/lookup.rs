use bellpepper::gadgets::lookup as up;
use blstrs::Scalar as Fr;
use cuzk_gadgets::lookup as ours;
use proptest::prelude::*;

use crate::harness::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn lookup3(specs in prop::collection::vec(bit_spec(), 3), coords in prop::collection::vec((scalar(), scalar()), 8), negation in any::<bool>()) {
        let coords: Vec<(Fr, Fr)> = coords;
        let (o, t) = compare(
            |cs| {
                let bits = ours_bits(cs, &specs)?;
                if negation {
                    ours::lookup3_xy_with_conditional_negation(cs, &bits, &coords[..4])
                        .map(|(x, y)| (x.get_value(), y.get_value()))
                } else {
                    ours::lookup3_xy(cs, &bits, &coords).map(|(x, y)| (x.get_value(), y.get_value()))
                }
            },
            |cs| {
                let bits = theirs_bits(cs, &specs)?;
                if negation {
                    up::lookup3_xy_with_conditional_negation(cs, &bits, &coords[..4])
                        .map(|(x, y)| (x.get_value(), y.get_value()))
                } else {
                    up::lookup3_xy(cs, &bits, &coords).map(|(x, y)| (x.get_value(), y.get_value()))
                }
            },
        );
        if let (Ok(o), Ok(t)) = (o, t) {
            prop_assert_eq!(o, t);
        }
    }
}

#[test]
fn rejects_bad_lengths() {
    let mut cs = cuzk_gadgets::test_util::RecordingCs::<Fr>::new();
    let bits = [cuzk_gadgets::boolean::Boolean::Constant(true); 3];
    assert!(ours::lookup3_xy(&mut cs, &bits[..2], &[(Fr::from(1), Fr::from(2)); 8]).is_err());
    assert!(ours::lookup3_xy_with_conditional_negation(
        &mut cs,
        &bits,
        &[(Fr::from(1), Fr::from(2)); 3]
    )
    .is_err());
}
