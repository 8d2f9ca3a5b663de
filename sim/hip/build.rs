//! Build-time generation for the simulated `libamdhip64.so.5`:
//!
//! 1. The export list: every function Debian's real `libamdhip64.so.5`
//!    exports, with its version node (`hip_4.2` … `hip_5.2`), read from the
//!    real library with `readelf` when it is installed, else from the
//!    checked-in `exports.txt` (a test keeps the two equal).
//! 2. `stubs.rs`: an assembly thunk per export, jumping to the function of
//!    that name in `src/` (any `pub extern "C" fn NAME` whose NAME is an
//!    export) or to a generated stub returning `hipErrorNotSupported`, so no
//!    program fails to load.
//! 3. The version script with the real node chain (`hip_4.3 { … } hip_4.2;`)
//!    and the SONAME.
//! 4. A link stub `libhsa-runtime64.so` (SONAME `libhsa-runtime64.so.1`,
//!    node `ROCR_1`) defining the `hsa_*` functions `src/hsa.rs` declares, so
//!    the library gets a real `DT_NEEDED` on the HSA runtime and its calls go
//!    through the exported (tool-interceptable) symbols at run time.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const REAL_LIB: &str = "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5";

/// The slot order of HIP's dispatch tables (ROCm ≥ 6.1), an ABI fact the
/// tool needs too: the one list, in `rocwasm-ids`.
use rocwasm_ids::hip_table as table_slots;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=exports.txt");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed={REAL_LIB}");

    let exports =
        real_exports().unwrap_or_else(|| checked_in_exports(&manifest.join("exports.txt")));
    let wanted: BTreeSet<&str> = exports.iter().map(|(n, _)| n.as_str()).collect();
    let implemented = implemented_functions(&manifest.join("src"), &wanted);

    // One assembly thunk per export, jumping to the implementation or to a
    // generated "not supported" stub. Exports are assembly symbols rather
    // than `#[no_mangle]` functions because rustc puts its own exports in an
    // anonymous version script, which would strip the `hip_*` versions.
    //
    // Exports that have a slot in ROCm 6.2's HIP dispatch tables jump through
    // the table instead (see `src/dispatch.rs`), whose slot holds the same
    // target unless a tool replaced it.
    let slot_of = |names: &'static [&'static str]| -> BTreeMap<&'static str, usize> {
        names.iter().enumerate().map(|(i, n)| (*n, i)).collect()
    };
    let compiler_slot = slot_of(&table_slots::COMPILER_SLOTS);
    let runtime_slot = slot_of(&table_slots::RUNTIME_SLOTS[..table_slots::RUNTIME_SLOTS_6_2]);
    // Slots of functions this library does not export (6.x-only ones).
    let absent = "crate::dispatch::not_in_this_runtime".to_string();
    let mut compiler_words = vec![absent.clone(); table_slots::COMPILER_SLOTS.len()];
    let mut runtime_words = vec![absent; table_slots::RUNTIME_SLOTS_6_2];
    let mut stubs = String::new();
    for (i, (name, _)) in exports.iter().enumerate() {
        let target = match implemented.get(name) {
            Some(path) => path.clone(),
            None => {
                writeln!(
                    stubs,
                    "pub extern \"C\" fn stub_{i}() -> crate::error::hipError_t {{ crate::error::unsupported({name:?}) }}"
                )
                .unwrap();
                format!("stub_{i}")
            }
        };
        let through = if let Some(&slot) = compiler_slot.get(name.as_str()) {
            compiler_words[slot] = target.clone();
            Some(("COMPILER_TABLE", slot))
        } else if let Some(&slot) = runtime_slot.get(name.as_str()) {
            runtime_words[slot] = target.clone();
            Some(("RUNTIME_TABLE", slot))
        } else {
            None
        };
        match through {
            // The slot after the size word: offset 8 · (slot + 1).
            Some((table, slot)) => writeln!(
                stubs,
                "core::arch::global_asm!(\".globl {name}\", \".type {name},@function\", \"{name}:\", \"jmp qword ptr [rip + {{t}} + {}]\", \".size {name}, . - {name}\", t = sym {table});",
                8 * (slot + 1)
            ),
            None => writeln!(
                stubs,
                "core::arch::global_asm!(\".globl {name}\", \".type {name},@function\", \"{name}:\", \"jmp {{f}}@PLT\", \".size {name}, . - {name}\", f = sym {target});"
            ),
        }
        .unwrap();
    }
    for (table, words) in [
        ("COMPILER_TABLE", &compiler_words),
        ("RUNTIME_TABLE", &runtime_words),
    ] {
        let n = words.len() + 1;
        writeln!(
            stubs,
            "pub(crate) static {table}: crate::dispatch::Table<{n}> = crate::dispatch::Table::new([{} as *const (),",
            8 * n
        )
        .unwrap();
        for w in words {
            writeln!(stubs, "    {w} as *const (),").unwrap();
        }
        writeln!(stubs, "]);").unwrap();
    }
    std::fs::write(out.join("stubs.rs"), stubs).unwrap();

    // Version script: nodes in version order, each inheriting the previous.
    let mut by_node: BTreeMap<(u32, u32), Vec<&str>> = BTreeMap::new();
    for (name, node) in &exports {
        by_node.entry(parse_node(node)).or_default().push(name);
    }
    let mut script = String::new();
    let mut previous: Option<String> = None;
    let count = by_node.len();
    for (i, ((major, minor), names)) in by_node.iter().enumerate() {
        let node = format!("hip_{major}.{minor}");
        writeln!(script, "{node} {{\n  global:").unwrap();
        for n in names {
            writeln!(script, "    \"{n}\";").unwrap();
        }
        if i + 1 == count {
            writeln!(script, "  local: *;").unwrap();
        }
        match &previous {
            Some(p) => writeln!(script, "}} {p};").unwrap(),
            None => writeln!(script, "}};").unwrap(),
        }
        previous = Some(node);
    }
    let map = out.join("hip.map");
    std::fs::write(&map, script).unwrap();
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--version-script={}",
        map.display()
    );
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libamdhip64.so.5");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,$ORIGIN");

    build_hsa_link_stub(&manifest.join("src/hsa.rs"), &out);
}

fn parse_node(node: &str) -> (u32, u32) {
    let v = node.trim_start_matches("hip_");
    let (a, b) = v.split_once('.').unwrap_or((v, "0"));
    (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
}

/// `(name, node)` for every defined function of the real library.
fn real_exports() -> Option<Vec<(String, String)>> {
    if !Path::new(REAL_LIB).exists() {
        return None;
    }
    let out = Command::new("readelf")
        .args(["--dyn-syms", "-W", REAL_LIB])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut list: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 8
                || f[3] != "FUNC"
                || f[6] == "UND"
                || !(f[4] == "GLOBAL" || f[4] == "WEAK")
            {
                return None;
            }
            let (name, node) = f[7].split_once('@')?;
            Some((name.to_string(), node.trim_start_matches('@').to_string()))
        })
        .collect();
    list.sort();
    Some(list)
}

fn checked_in_exports(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).expect("sim/hip/exports.txt");
    let mut list: Vec<(String, String)> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(' ')
                .map(|(a, b)| (a.to_string(), b.trim().to_string()))
        })
        .collect();
    list.sort();
    list
}

/// Exported names implemented in `src/`: every `pub extern "C" fn NAME`
/// whose NAME is an export, mapped to its Rust path (`crate::module::NAME`).
fn implemented_functions(dir: &Path, wanted: &BTreeSet<&str>) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let module = if stem == "lib" {
            "crate".to_string()
        } else {
            format!("crate::{stem}")
        };
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let Some(i) = line.find("pub extern \"C\" fn ") else {
                continue;
            };
            let rest = &line[i + "pub extern \"C\" fn ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if wanted.contains(name.as_str()) {
                found.insert(name.clone(), format!("{module}::{name}"));
            }
        }
    }
    found
}

fn build_hsa_link_stub(decls: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", decls.display());
    let text = std::fs::read_to_string(decls).unwrap();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for line in text.lines() {
        if let Some(i) = line.find("fn hsa_") {
            let name: String = line[i + 3..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.insert(name);
        }
    }
    let c: String = names
        .iter()
        .map(|n| format!("void {n}(void) {{}}\n"))
        .collect();
    let map: String = format!(
        "ROCR_1 {{\n  global:\n{}  local: *;\n}};\n",
        names
            .iter()
            .map(|n| format!("    {n};\n"))
            .collect::<String>()
    );
    std::fs::write(out.join("hsa_stub.c"), c).unwrap();
    std::fs::write(out.join("hsa_stub.map"), map).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(out.join("libhsa-runtime64.so"))
        .arg(out.join("hsa_stub.c"))
        .arg("-Wl,-soname,libhsa-runtime64.so.1")
        .arg(format!(
            "-Wl,--version-script={}",
            out.join("hsa_stub.map").display()
        ))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cc} to build the HSA link stub: {e}"));
    assert!(status.success(), "building the HSA link stub failed");
    std::fs::copy(
        out.join("libhsa-runtime64.so"),
        out.join("libhsa-runtime64.so.1"),
    )
    .unwrap();
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=dylib=hsa-runtime64");
}
