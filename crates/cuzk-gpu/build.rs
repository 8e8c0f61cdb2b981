//! Compiles `cuda/` with nvcc when the `cuda` feature is on; does nothing otherwise.
//!
//! nvcc comes from `NVCC`, then `PATH`, then `.cuda/` at the workspace root (where
//! `tools/install-cuda.sh` puts the pip CUDA 13.0 compiler). Code is generated for every
//! architecture in `CUZK_CUDA_ARCHS` (default `80,89,90,120`) that this nvcc supports, and
//! always explicitly for sm_90 (H100/H200).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const DEFAULT_ARCHS: &str = "80,89,90,120";

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cuzk_cuda)");
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=CUZK_CUDA_ARCHS");
    let cuda_dir = workspace_root().join("cuda");
    println!("cargo:rerun-if-changed={}", cuda_dir.display());
    if env::var_os("CARGO_FEATURE_CUDA").is_none() {
        return;
    }

    let nvcc = find_nvcc().unwrap_or_else(|| {
        panic!(
            "the `cuda` feature needs nvcc: set NVCC, put nvcc on PATH, or run \
             tools/install-cuda.sh (installs the pip CUDA 13.0 compiler into .cuda/)"
        )
    });
    let supported = supported_archs(&nvcc);
    let wanted = env::var("CUZK_CUDA_ARCHS").unwrap_or_else(|_| DEFAULT_ARCHS.into());
    let mut archs: Vec<String> = wanted
        .split(',')
        .map(|a| a.trim().to_string())
        .filter(|a| supported.contains(a))
        .collect();
    if !archs.iter().any(|a| a == "90") {
        archs.push("90".into());
    }

    let sppark = env::var("DEP_SPPARK_ROOT").expect("sppark exports its header root");
    let blst = env::var("DEP_BLST_C_SRC").expect("blst exports its source directory");
    // cc picks nvcc up from NVCC; kernels are always optimised (debug info would add -G).
    env::set_var("NVCC", &nvcc);
    let mut build = cc::Build::new();
    build
        .cuda(true)
        .cudart("static")
        .debug(false)
        .opt_level(3)
        .flag("-std=c++17")
        .flag("-Xcompiler")
        .flag("-Wno-unused-function")
        .define("FEATURE_BLS12_381", None)
        .define("__ADX__", None)
        .define("TAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE", None)
        .include(&sppark)
        .include(&blst)
        // One translation unit (it includes sppark's GPU table), so nvcc needs no relocatable
        // device code: with two files cc adds --device-c, and sppark's MSM kernels then fail
        // to launch ("invalid device function").
        .file(cuda_dir.join("cuzk_gpu.cu"));
    for arch in &archs {
        build
            .flag("-gencode")
            .flag(format!("arch=compute_{arch},code=sm_{arch}"));
    }
    build.compile("cuzk_gpu_cuda");
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-cfg=cuzk_cuda");
    println!("cargo:ARCHS={}", archs.join(","));
}

fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    manifest.ancestors().nth(2).unwrap().to_path_buf()
}

fn runs(nvcc: &Path) -> bool {
    Command::new(nvcc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn find_nvcc() -> Option<PathBuf> {
    let candidates = [
        env::var_os("NVCC").map(PathBuf::from),
        Some(PathBuf::from("nvcc")),
        Some(workspace_root().join(".cuda/nvidia/cu13/bin/nvcc")),
    ];
    candidates.into_iter().flatten().find(|p| runs(p))
}

/// The `compute_XX` architectures nvcc can generate code for, as `XX`.
fn supported_archs(nvcc: &Path) -> Vec<String> {
    let out = Command::new(nvcc)
        .arg("--list-gpu-arch")
        .output()
        .expect("nvcc --list-gpu-arch");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("compute_").map(str::to_string))
        .collect()
}
