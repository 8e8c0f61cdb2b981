//! End to end, WindowPoSt and WinningPoSt as Curio asks for them: fresh 2 KiB sectors sealed
//! by upstream with random ticket, miner and randomness; vanilla proofs from upstream's
//! `generate_single_vanilla_proof`; cuzk proves them through the daemon (one `Prove` per
//! WindowPoSt partition, over the real gRPC API) and through `cuzk prove`; upstream's
//! `verify_window_post` (on the merged partition proofs) and `verify_winning_post` accept them,
//! with parameters from upstream's own random setup.

mod common;

use common::*;
use cuzk_daemon::client::Target;
use cuzk_proto::v1::await_proof_response::Status as AwaitStatus;
use cuzk_proto::v1::{self as pb, Priority, ProofKind};
use cuzk_upstream_tools::post::{self as upstream, prover_id};
use cuzk_upstream_tools::Sealed;
use rand::{Rng, SeedableRng};
use tonic::Code;

struct Deadline {
    sectors: Vec<Sealed>,
    randomness: [u8; 32],
    miner_id: u64,
}

impl Deadline {
    /// Three fresh sectors (two WindowPoSt partitions, the second short), sorted by id.
    fn seal() -> Deadline {
        let mut rng = rand::rngs::StdRng::from_entropy();
        let mut sectors: Vec<Sealed> = (0..3)
            .map(|_| cuzk_upstream_tools::seal_sector("2KiB", &mut rng).unwrap())
            .collect();
        sectors.sort_by_key(|s| s.info.sector_id);
        Deadline {
            sectors,
            randomness: cuzk_upstream_tools::fr_bytes(&mut rng),
            miner_id: rng.gen_range(1000..10_000_000),
        }
    }

    fn all(&self) -> Vec<&Sealed> {
        self.sectors.iter().collect()
    }

    fn prover_id(&self) -> [u8; 32] {
        prover_id(self.miner_id)
    }

    fn vanilla(&self, id: u64, sectors: &[&Sealed]) -> Vec<Vec<u8>> {
        upstream::vanilla_proofs(id, sectors, &self.randomness, &self.prover_id()).unwrap()
    }

    /// The partitions' sectors: two per WindowPoSt partition at 2 KiB.
    fn partitions(&self) -> Vec<Vec<Vec<u8>>> {
        let vanilla = self.vanilla(WINDOW, &self.all());
        vanilla.chunks(2).map(<[_]>::to_vec).collect()
    }

    fn request(
        &self,
        kind: ProofKind,
        id: u64,
        partition: u32,
        vanilla: Vec<Vec<u8>>,
    ) -> pb::SubmitProofRequest {
        pb::SubmitProofRequest {
            proof_kind: kind as i32,
            registered_proof: id,
            priority: Priority::Normal as i32,
            vanilla_proofs: vanilla,
            randomness: self.randomness.to_vec(),
            partition_index: partition,
            miner_id: self.miner_id,
            ..Default::default()
        }
    }

    fn window_verdict(&self, proofs: &[Vec<u8>]) -> bool {
        upstream::verify_window(
            WINDOW,
            &self.all(),
            &self.randomness,
            &self.prover_id(),
            proofs,
        )
        .unwrap()
    }

    fn winning_verdict(&self, proof: &[u8]) -> bool {
        upstream::verify_winning(
            WINNING,
            &self.sectors[0],
            &self.randomness,
            &self.prover_id(),
            proof,
        )
        .unwrap()
    }
}

fn completed(r: pb::AwaitProofResponse) -> Vec<u8> {
    assert_eq!(r.status, AwaitStatus::Completed as i32, "{r:?}");
    assert_eq!(r.proof.len(), 192);
    r.proof
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_and_winning_post_through_the_daemon_verify_upstream() {
    let params = params_dir();
    ensure_post_params(&params);
    let d = Deadline::seal();
    let tmp = tempfile::tempdir().unwrap();
    let daemon = Daemon::start(tmp.path(), &[], &[]);
    let target = Target {
        addr: daemon.addr(),
        ..Default::default()
    };

    let mut proofs = Vec::new();
    for (k, vanilla) in d.partitions().into_iter().enumerate() {
        let req = d.request(ProofKind::WindowPostPartition, WINDOW, k as u32, vanilla);
        proofs.push(completed(prove_rpc(&target, req).await.unwrap()));
    }
    assert!(d.window_verdict(&proofs), "upstream verify_window_post");
    proofs.swap(0, 1);
    assert!(
        !d.window_verdict(&proofs),
        "partitions out of order must not verify"
    );

    let winning = d.vanilla(WINNING, &d.all()[..1]);
    let mut req = d.request(ProofKind::WinningPost, WINNING, 0, winning);
    req.priority = Priority::Critical as i32;
    let proof = completed(prove_rpc(&target, req).await.unwrap());
    assert!(d.winning_verdict(&proof), "upstream verify_winning_post");

    // Refusals name the field, and the daemon keeps serving.
    let good = d.request(
        ProofKind::WindowPostPartition,
        WINDOW,
        0,
        d.partitions().remove(0),
    );
    let mut short = good.clone();
    short.randomness.pop();
    let mut winning_type = good.clone();
    winning_type.registered_proof = WINNING;
    let mut other_randomness = good.clone();
    other_randomness.randomness[0] ^= 1;
    let mut garbage = good.clone();
    garbage.vanilla_proofs[1].truncate(50);
    for (req, names) in [
        (short, "randomness"),
        (winning_type, "registered_proof"),
        (other_randomness, "inclusion_proofs[0]"),
        (garbage, "vanilla_proofs[1]"),
    ] {
        let e = prove_rpc(&target, req).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains(names), "{names}: {}", e.message());
    }
    let again = completed(prove_rpc(&target, good).await.unwrap());
    assert_eq!(again.len(), 192);
}

/// `cuzk prove window-post | winning-post` from the vanilla proof files, through the
/// in-process engine; upstream verifies the results.
#[test]
fn cli_proves_window_and_winning_post_and_upstream_verifies() {
    let params = params_dir();
    ensure_post_params(&params);
    let d = Deadline::seal();
    let tmp = tempfile::tempdir().unwrap();
    let hex: String = d.randomness.iter().map(|b| format!("{b:02x}")).collect();
    let miner = d.miner_id.to_string();
    let run = |kind: &str, proof: u64, partition: usize, vanilla: &[Vec<u8>]| {
        let mut args = vec![
            "prove".to_string(),
            kind.into(),
            "--registered-proof".into(),
            proof.to_string(),
            "--randomness".into(),
            hex.clone(),
            "--miner-id".into(),
            miner.clone(),
            "--params".into(),
            params.display().to_string(),
        ];
        for (i, v) in vanilla.iter().enumerate() {
            let f = tmp.path().join(format!("{kind}-{partition}-{i}.bin"));
            std::fs::write(&f, v).unwrap();
            args.extend(["--vanilla".into(), f.display().to_string()]);
        }
        if kind == "window-post" {
            args.extend(["--partition-index".into(), partition.to_string()]);
        }
        cli_prove(
            args,
            &tmp.path().join(format!("{kind}-{partition}.proof")),
            kind,
        )
    };
    let proofs: Vec<Vec<u8>> = d
        .partitions()
        .iter()
        .enumerate()
        .map(|(k, v)| run("window-post", WINDOW, k, v))
        .collect();
    assert!(d.window_verdict(&proofs));
    let winning = run(
        "winning-post",
        WINNING,
        0,
        &d.vanilla(WINNING, &d.all()[..1]),
    );
    assert!(d.winning_verdict(&winning));
}

/// `cuzk pce extract --out <dir>` writes the file the engine looks for beside the parameters,
/// the same bytes as `--out <file>`.
#[test]
fn pce_extract_into_a_directory_takes_the_engines_file_name() {
    use cuzk_circuits::{CircuitShape, PostShape, RegisteredPostProof};
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("winning.pce");
    let dir = tmp.path().join("params");
    std::fs::create_dir(&dir).unwrap();
    for out in [&file, &dir] {
        let o = cuzk(&[
            "pce",
            "extract",
            "winning-post",
            "--sector-size",
            "2KiB",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let shape = PostShape::new(RegisteredPostProof::from_id(WINNING).unwrap());
    let named = dir.join(shape.pce_file_name());
    assert_eq!(
        std::fs::read(&named).unwrap(),
        std::fs::read(&file).unwrap()
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}
