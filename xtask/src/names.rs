//! `cargo xtask gen-names`: regenerates `sdk-core/src/names/*.txt`, the
//! operation-name lists of the API kinds, from the Debian ROCm 5.2 packages.
//!
//! The lists are committed, so sdk-core never needs ROCm installed; run this
//! only to refresh them. Each file has one function name per line; line `i`
//! (from 0) is operation `i + 1`, because operation 0 is `NONE` in every kind.
//!
//! - HIP runtime API: the `hip*` functions `libamdhip64.so.5` exports (dynamic
//!   symbol table, defined `FUNC`s, version suffix stripped), sorted by name:
//!   ROCm 5.2 has no HIP dispatch table whose order we could follow.
//! - HIP compiler API: the nine `__hip*` entry points, in the order of the
//!   ROCm ≥ 6.1 compiler dispatch table (fixed list, checked against the library).
//! - HSA: the function-pointer fields of `CoreApiTable`, `AmdExtTable`,
//!   `ImageExtTable` and `FinalizerExtTable` in `hsa_api_trace.h`, in header
//!   order. So the operation number equals the 1-based slot index in the table
//!   (slot `n` sits at byte offset `16 + 8·(n-1)`, after the version header),
//!   which the HSA table wrappers rely on.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};

// The HIP compiler dispatch table order (FACTS §4).
use crate::table_slots::COMPILER_SLOTS as HIP_COMPILER_API;
use crate::util::root;

const HIP_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";
const HSA_TRACE_HEADER: &str = "/usr/include/hsa/hsa_api_trace.h";

/// (output file, C struct in `hsa_api_trace.h`)
const HSA_TABLES: [(&str, &str); 4] = [
    ("hsa_core_api.txt", "CoreApiTable"),
    ("hsa_amd_ext_api.txt", "AmdExtTable"),
    ("hsa_image_ext_api.txt", "ImageExtTable"),
    ("hsa_finalize_ext_api.txt", "FinalizerExtTable"),
];

pub fn generate() -> Result<()> {
    let out = root().join("sdk-core/src/names");
    fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;

    let exported = exported_functions(Path::new(HIP_LIBRARY))?;
    let hip: Vec<String> = exported
        .iter()
        .filter(|n| n.starts_with("hip"))
        .cloned()
        .collect();
    ensure!(
        hip.len() > 300,
        "only {} hip* functions in {HIP_LIBRARY}",
        hip.len()
    );
    write_list(&out.join("hip_runtime_api.txt"), &hip)?;

    for name in HIP_COMPILER_API {
        ensure!(
            exported.contains(name),
            "{HIP_LIBRARY} does not export {name}"
        );
    }
    let compiler: Vec<String> = HIP_COMPILER_API.iter().map(|s| s.to_string()).collect();
    write_list(&out.join("hip_compiler_api.txt"), &compiler)?;

    let header = fs::read_to_string(HSA_TRACE_HEADER).with_context(|| {
        format!("cannot read {HSA_TRACE_HEADER} (cargo xtask setup installs it)")
    })?;
    for (file, table) in HSA_TABLES {
        let names = table_slots(&header, table)?;
        write_list(&out.join(file), &names)?;
    }
    Ok(())
}

/// Defined functions in the dynamic symbol table, without version suffixes.
fn exported_functions(lib: &Path) -> Result<BTreeSet<String>> {
    let output = Command::new("readelf")
        .args(["--dyn-syms", "-W"])
        .arg(lib)
        .output()
        .context("cannot run readelf (binutils)")?;
    ensure!(
        output.status.success(),
        "readelf failed on {}",
        lib.display()
    );
    let text = String::from_utf8_lossy(&output.stdout);
    // Columns: Num: Value Size Type Bind Vis Ndx Name
    Ok(text
        .lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            (cols.len() >= 8 && cols[3] == "FUNC" && cols[6] != "UND")
                .then(|| cols[7].split('@').next().unwrap_or_default().to_string())
        })
        .filter(|n| !n.is_empty())
        .collect())
}

/// The `decltype(name)` fields of `struct <table> { … };`, in order.
fn table_slots(header: &str, table: &str) -> Result<Vec<String>> {
    let open = format!("struct {table} {{");
    let start = header
        .find(&open)
        .with_context(|| format!("no `{open}` in {HSA_TRACE_HEADER}"))?;
    let body = &header[start + open.len()..];
    let body = &body[..body.find("};").context("unterminated table struct")?];
    let mut names = Vec::new();
    for line in body.lines() {
        let code = line.split("//").next().unwrap_or_default();
        if code.trim_start().starts_with('#') {
            bail!("{table} has a preprocessor conditional; the slot order would be ambiguous");
        }
        if let Some(rest) = code.split("decltype(").nth(1) {
            let name = rest.split(')').next().unwrap_or_default().trim();
            ensure!(!name.is_empty(), "cannot parse `{line}` in {table}");
            names.push(name.to_string());
        }
    }
    ensure!(!names.is_empty(), "{table} has no function slots");
    Ok(names)
}

fn write_list(path: &Path, names: &[String]) -> Result<()> {
    let mut text = names.join("\n");
    text.push('\n');
    fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("wrote {} ({} operations)", path.display(), names.len());
    Ok(())
}
