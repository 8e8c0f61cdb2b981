//! Replays every saved fuzzing input through its harness: the minimised corpora in
//! `fuzz/corpus/<target>/` and the inputs that once crashed, in `fuzz/regressions/<target>/`.
//! A harness that panics on any of them fails this test, naming the file.

use std::path::Path;

#[test]
fn corpora_and_regressions_replay_without_panics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut replayed = 0;
    for (name, harness) in cuzk_fuzz::TARGETS {
        for folder in ["corpus", "regressions"] {
            let Ok(dir) = std::fs::read_dir(root.join(folder).join(name)) else {
                continue;
            };
            for entry in dir.flatten() {
                let data = std::fs::read(entry.path()).unwrap();
                let path = entry.path().display().to_string();
                std::panic::catch_unwind(|| harness(&data))
                    .unwrap_or_else(|_| panic!("{name} panicked on {path}"));
                replayed += 1;
            }
        }
    }
    // The corpora are committed: an empty replay means they went missing.
    assert!(
        replayed >= 4,
        "only {replayed} saved inputs found under {}",
        root.display()
    );
}
