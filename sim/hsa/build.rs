//! Generates, from the checked-in list in `tables/` (the slot order itself is
//! `rocwasm_ids::hsa_table`):
//! - `exports.rs`: one trampoline per exported function (see `table::trampoline`);
//! - `rocr.map`: the version script giving every export the node `ROCR_1`,
//!   passed to the linker with the SONAME `libhsa-runtime64.so.1`.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tables");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=tables/exports.txt");

    let exports = std::fs::read_to_string(dir.join("exports.txt")).expect("tables/exports.txt");
    let mut tramp = String::from("trampolines! {\n");
    let mut map = String::from("ROCR_1 {\n  global:\n");
    let mut id = 0usize;
    for line in exports
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let mut parts = line.split_whitespace();
        let name = parts.next().unwrap();
        let slot = parts.next().unwrap_or(name);
        writeln!(map, "    {name};").unwrap();
        if slot != "-" {
            writeln!(tramp, "    ({id}, {name}, {slot:?}),").unwrap();
            id += 1;
        }
    }
    tramp.push_str("}\n");
    map.push_str("  local: *;\n};\n");
    std::fs::write(out.join("exports.rs"), tramp).unwrap();
    let script = out.join("rocr.map");
    std::fs::write(&script, map).unwrap();
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        script.display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-runtime64.so.1");
}
