//! Embeds the rocprofiler-sdk headers (`capi/include/`) into the binary, so
//! `rocwasm sdk prefix` can write an SDK prefix wherever rocwasm is
//! installed, without the source tree.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let include = manifest
        .join("../../../capi/include")
        .canonicalize()
        .unwrap();
    println!("cargo:rerun-if-changed={}", include.display());
    let mut files = Vec::new();
    walk(&include, &mut files);
    files.sort();
    let mut out = String::from("/// `(path under include/, bytes)` of every header.\npub const HEADERS: &[(&str, &[u8])] = &[\n");
    for f in files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f
            .strip_prefix(&include)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let _ = writeln!(
            out,
            "    ({rel:?}, include_bytes!({:?})),",
            f.display().to_string()
        );
    }
    out.push_str("];\n");
    std::fs::write(
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("sdk_headers.rs"),
        out,
    )
    .unwrap();
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "h" || x == "hpp") {
            out.push(p);
        }
    }
}
