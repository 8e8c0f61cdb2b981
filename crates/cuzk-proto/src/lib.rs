//! Generated types, clients and servers for `cuzk.v1` (Curio's `ProvingEngine`, field for field)
//! and `cuzk.diag.v1` (cuzk's own diagnostics).
//!
//! The `.proto` files live in `proto/`; `tests/wire.rs` pins the bytes of representative
//! messages so an accidental renumbering fails the build's tests.

#![allow(missing_debug_implementations)] // tonic's generated servers

pub mod v1 {
    tonic::include_proto!("cuzk.v1");
}

pub mod diag {
    pub mod v1 {
        tonic::include_proto!("cuzk.diag.v1");
    }
}

#[cfg(test)]
mod tests {
    /// Curio calls methods by path; these must never change.
    #[test]
    fn method_paths_are_curios() {
        let generated = include_str!(concat!(env!("OUT_DIR"), "/cuzk.v1.rs"));
        for m in [
            "SubmitProof",
            "AwaitProof",
            "Prove",
            "CancelProof",
            "GetStatus",
            "GetMetrics",
            "PreloadSRS",
            "EvictSRS",
        ] {
            let path = format!("\"/cuzk.v1.ProvingEngine/{m}\"");
            assert!(generated.contains(&path), "missing {path}");
        }
    }
}
