//! Malformed vanilla proofs are typed errors that name the field, never panics.

use std::path::Path;

use cuzk_circuits::{C1Input, PorepError, SealShape};
use proptest::prelude::*;
use serde_json::Value;

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/porep/2KiB/c1.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Parses `c1` and builds partition 0's circuit: the error text, if any.
fn outcome(c1: &Value) -> Result<(), String> {
    let bytes = serde_json::to_vec(c1).unwrap();
    let c1 = C1Input::parse(&bytes).map_err(|e| e.to_string())?;
    let shape = SealShape::new(c1.registered_proof).map_err(|e| e.to_string())?;
    shape
        .partition_circuit(&c1, 0)
        .map(drop)
        .map_err(|e| e.to_string())
}

fn challenge(c1: &mut Value, j: usize) -> &mut Value {
    &mut c1["vanilla_proofs"]["StackedDrg2KiBV1"][0][j]
}

fn single(proof: &mut Value) -> &mut Value {
    &mut proof["data"]["Single"]
}

fn rejects(mutate: impl FnOnce(&mut Value), expected: &[&str]) {
    let mut c1 = fixture();
    mutate(&mut c1);
    let err = outcome(&c1).expect_err("a malformed C1 output was accepted");
    for part in expected {
        assert!(
            err.contains(part),
            "error {err:?} does not mention {part:?}"
        );
    }
}

#[test]
fn the_fixture_is_accepted() {
    outcome(&fixture()).unwrap();
}

#[test]
fn a_short_comm_d_path_is_named() {
    rejects(
        |c1| {
            let path = &mut single(&mut challenge(c1, 0)["comm_d_proofs"])["path"]["path"];
            path.as_array_mut().unwrap().pop();
        },
        &["challenge 0, comm_d_proofs", "5 levels", "has 6"],
    );
}

#[test]
fn a_level_of_the_wrong_arity_is_named() {
    rejects(
        |c1| {
            let path = &mut single(&mut challenge(c1, 1)["comm_r_last_proof"])["path"]["path"];
            path[0]["hashes"].as_array_mut().unwrap().pop();
        },
        &["challenge 1, comm_r_last_proof", "level 0", "6 siblings"],
    );
}

#[test]
fn an_index_past_the_arity_is_named() {
    rejects(
        |c1| {
            let proof = &mut challenge(c1, 0)["replica_column_proofs"]["drg_parents"][4];
            single(&mut proof["inclusion_proof"])["path"]["path"][1]["index"] = 8.into();
        },
        &["drg_parents[4].inclusion_proof", "index 8"],
    );
}

#[test]
fn a_path_to_another_node_is_named() {
    rejects(
        |c1| {
            let path = &mut single(&mut challenge(c1, 0)["comm_d_proofs"])["path"]["path"];
            let index = path[0]["index"].as_u64().unwrap();
            path[0]["index"] = (1 - index).into();
        },
        &["comm_d_proofs", "leads to node"],
    );
}

#[test]
fn a_short_column_is_named() {
    rejects(
        |c1| {
            let col = &mut challenge(c1, 0)["replica_column_proofs"]["exp_parents"][7]["column"];
            col["rows"].as_array_mut().unwrap().pop();
        },
        &["exp_parents[7]", "1 rows", "2 layers"],
    );
}

#[test]
fn a_missing_parent_is_named() {
    rejects(
        |c1| {
            let parents = &mut challenge(c1, 1)["replica_column_proofs"]["drg_parents"];
            parents.as_array_mut().unwrap().pop();
        },
        &["challenge 1, drg_parents", "5 parents, expected 6"],
    );
}

#[test]
fn a_non_canonical_field_element_is_named() {
    rejects(
        |c1| {
            let root = &mut single(&mut challenge(c1, 0)["comm_r_last_proof"])["root"];
            *root = serde_json::json!(vec![0xffu8; 32]);
        },
        &["comm_r_last_proof.root", "not a canonical field element"],
    );
    rejects(
        |c1| c1["comm_d"] = serde_json::json!(vec![0xffu8; 32]),
        &["comm_d", "canonical"],
    );
}

#[test]
fn inconsistent_challenge_nodes_are_named() {
    rejects(
        |c1| {
            let node = &mut challenge(c1, 0)["labeling_proofs"][1]["node"];
            *node = (node.as_u64().unwrap() + 1).into();
        },
        &["labeling_proofs[1]", "the challenge is"],
    );
    rejects(
        |c1| {
            let node = &mut challenge(c1, 1)["replica_column_proofs"]["c_x"]["column"]["index"];
            *node = (node.as_u64().unwrap() ^ 1).into();
        },
        &["c_x.column.index"],
    );
}

#[test]
fn a_challenge_outside_the_sector_is_named() {
    rejects(
        |c1| {
            let proof = challenge(c1, 0);
            for l in proof["labeling_proofs"].as_array_mut().unwrap() {
                l["node"] = 64.into();
            }
            proof["encoding_proof"]["node"] = 64.into();
        },
        &["labeling_proofs[0].node", "outside the sector's 64 nodes"],
    );
}

#[test]
fn comm_c_must_agree_across_challenges() {
    rejects(
        |c1| {
            let c_x = &mut challenge(c1, 1)["replica_column_proofs"]["c_x"]["inclusion_proof"];
            single(c_x)["root"] = serde_json::json!(vec![1u8; 32]);
        },
        &["challenge 1", "differs from challenge 0"],
    );
}

#[test]
fn wrong_counts_and_variants_are_typed() {
    rejects(
        |c1| {
            let p = c1["vanilla_proofs"]["StackedDrg2KiBV1"][0].as_array_mut();
            p.unwrap().pop();
        },
        &["1 challenge proofs, expected 2"],
    );
    rejects(
        |c1| c1["vanilla_proofs"]["StackedDrg2KiBV1"] = serde_json::json!([]),
        &["0 partitions"],
    );
    rejects(
        |c1| {
            let v = c1["vanilla_proofs"]["StackedDrg2KiBV1"].take();
            c1["vanilla_proofs"] = serde_json::json!({ "StackedDrg8MiBV1": v });
        },
        &["StackedDrg8MiBV1", "needs StackedDrg2KiBV1"],
    );
    rejects(
        |c1| challenge(c1, 0)["surprise"] = 1.into(),
        &["unknown field `surprise`"],
    );
}

#[test]
fn errors_are_typed_not_strings() {
    let mut c1 = fixture();
    challenge(&mut c1, 0)["labeling_proofs"]
        .as_array_mut()
        .unwrap()
        .pop();
    let parsed = C1Input::parse(&serde_json::to_vec(&c1).unwrap()).unwrap();
    let shape = SealShape::new(parsed.registered_proof).unwrap();
    match shape.partition_circuit(&parsed, 0) {
        Err(PorepError::Vanilla(e)) => {
            assert_eq!(e.at, "partition 0, challenge 0, labeling_proofs");
            assert_eq!(e.reason, "1 labeling proofs, the sector has 2 layers");
        }
        other => panic!("expected a vanilla error, got {other:?}"),
    }
}

/// Every number in the document, by its JSON pointer.
fn numbers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Number(_) => out.push(at),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| numbers(x, format!("{at}/{i}"), out)),
        Value::Object(o) => o
            .iter()
            .for_each(|(k, x)| numbers(x, format!("{at}/{k}"), out)),
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any one number replaced by any other value: an error or a circuit, never a panic.
    #[test]
    fn any_single_change_is_handled(pick in any::<prop::sample::Index>(), value in prop_oneof![
        any::<u8>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        Just(Value::from(-1)),
        Just(Value::Null),
        Just(Value::from("0")),
    ]) {
        let mut c1 = fixture();
        let mut all = Vec::new();
        numbers(&c1, String::new(), &mut all);
        let at = pick.get(&all).clone();
        *c1.pointer_mut(&at).unwrap() = value;
        let _ = outcome(&c1);
    }
}
