//! `cuzk-vs-supraseal` links supraseal-c2 and cuzk-gpu, two static libraries that each compile
//! sppark's headers, and sppark defines a few functions in them (its radix-sort kernel, its GPU
//! table) outside templates. The copies are the same code from the one sppark in Cargo.lock, so
//! the linker may keep either.
fn main() {
    if std::env::var_os("CARGO_FEATURE_SUPRASEAL").is_some() {
        println!("cargo:rustc-link-arg-bin=cuzk-vs-supraseal=-Wl,--allow-multiple-definition");
    }
}
