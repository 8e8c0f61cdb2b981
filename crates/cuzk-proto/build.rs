//! Compiles the protobuf definitions with the vendored `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    std::env::set_var("PROTOC", protoc);
    let files = [
        "proto/cuzk/v1/proving.proto",
        "proto/cuzk/diag/v1/trace.proto",
    ];
    tonic_build::configure().compile_protos(&files, &["proto"])?;
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    Ok(())
}
