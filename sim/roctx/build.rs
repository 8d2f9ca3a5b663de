//! Gives the library its real SONAME and the version node `ROCTX_4.1`.

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("roctx.map");
    // The library exports the roctx core API and the profiler control
    // calls, the SDK's MARKER_CORE_API and MARKER_CONTROL_API operations
    // (rocwasm-ids holds the lists).
    let names = rocwasm_ids::ops::MARKER_CORE_API
        .iter()
        .chain(rocwasm_ids::ops::MARKER_CONTROL_API);
    let globals: String = names.map(|n| format!("    {n};\n")).collect();
    std::fs::write(
        &out,
        format!("ROCTX_4.1 {{\n  global:\n{globals}  local: *;\n}};\n"),
    )
    .unwrap();
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        out.display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libroctx64.so.4");
}
