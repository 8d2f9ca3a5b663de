//! Compiles the one C++ file of the C API: the try/catch every call into a
//! native tool passes through (`shim/catching.cpp`, `src/foreign.rs`).

fn main() {
    println!("cargo:rerun-if-changed=shim/catching.cpp");
    cc::Build::new()
        .cpp(true)
        .file("shim/catching.cpp")
        .flag_if_supported("-std=c++17")
        .compile("rocwasm_capi_catching");
}
