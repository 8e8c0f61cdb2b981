//! `cuzk demo`, the README's first command: every kind the engine serves (PoRep C2, WindowPoSt,
//! WinningPoSt, SnapDeals) proved from the bundled 2 KiB fixtures through one in-process
//! engine, each proof verified.

mod common;

use common::*;
use cuzk_circuits::SealShape;

#[test]
fn demo_proves_and_verifies_every_kind() {
    let shared = params_dir();
    ensure_params(&shared);
    // Its own folder, so that the keys the demo makes race no other test's: the 2 KiB PoRep
    // key (a minute to make) linked in, the PoSt and SnapDeals keys made by the demo.
    let dir = tempfile::tempdir_in(shared.parent().unwrap()).unwrap();
    for name in SealShape::from_sector_size("2KiB")
        .unwrap()
        .file_names()
        .unwrap()
    {
        std::fs::hard_link(shared.join(&name), dir.path().join(&name)).unwrap();
    }
    let run = cuzk(&["demo", "--params", dir.path().to_str().unwrap()]);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let proved: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("demo: ") && l.ends_with("proved and verified (192 bytes)"))
        .collect();
    assert_eq!(proved.len(), 5, "{out}");
    for what in [
        "PoRep C2",
        "WindowPoSt partition 0",
        "WindowPoSt partition 1",
        "WinningPoSt",
        "SnapDeals",
    ] {
        assert!(proved.iter().any(|l| l.contains(what)), "{what}: {out}");
    }
}
