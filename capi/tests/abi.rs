//! ABI check of our rocprofiler-sdk C headers (`capi/include`) against AMD's.
//!
//! `capi/abi/abi_facts.c` prints, for every public type of the headers, its size,
//! alignment, field offsets/sizes, bit-field positions and every enumerator value
//! (plus a few macros), one `kind<TAB>name<TAB>value` line each.  The same program,
//! compiled against AMD's newest rocprofiler-sdk headers (`develop` at 1b1610f),
//! produced `capi/abi/amd-rocprofiler-sdk-develop-1b1610f.tsv`.  Here it is compiled
//! against ours with the system C compiler and its output must equal that table, fact
//! for fact.
//!
//! `capi/abi/amd-rocprofiler-sdk-1.0.tsv` (the ROCm 7.0 release's headers, which our
//! headers followed before) stays as the record of what tools built against ROCm 7.0
//! see: `rocm_7_0_tools_keep_their_layouts` allows only the changes AMD made since
//! (listed there), so a 7.0-built tool keeps working against our library.
//!
//! Needs a C compiler (`$CC`, default `cc`) and, for the stand-alone header check,
//! a C++17 compiler (`$CXX`, default `c++`).  Uses only `std`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tool(var: &str, default: &str) -> String {
    std::env::var(var)
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// A scratch directory unique to this test process and `tag`.
fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rocwasm-capi-abi-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `kind\tname` -> value, in file order of first appearance; panics on duplicates.
fn parse_facts(text: &str, origin: &str) -> (Vec<String>, BTreeMap<String, String>) {
    let mut order = Vec::new();
    let mut map = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut parts = line.splitn(3, '\t');
        let (Some(kind), Some(name), Some(value)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!("{origin}:{}: malformed fact line {line:?}", i + 1);
        };
        let key = format!("{kind}\t{name}");
        assert!(
            map.insert(key.clone(), value.to_string()).is_none(),
            "{origin}:{}: duplicate fact {key:?}",
            i + 1
        );
        order.push(key);
    }
    (order, map)
}

/// Compiles `abi_facts.c` against `capi/include` with `extra` flags, runs it and
/// returns its output.
fn measure_ours(tag: &str, extra: &[&str]) -> String {
    let root = crate_root();
    let dir = scratch(tag);
    let exe = dir.join("abi_facts");
    let cc = tool("CC", "cc");
    let out = Command::new(&cc)
        .arg("-std=c11")
        .arg("-w")
        .arg("-I")
        .arg(root.join("include"))
        .args(extra)
        .arg(root.join("abi/abi_facts.c"))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run C compiler `{cc}`: {e}"));
    assert!(
        out.status.success(),
        "compiling capi/abi/abi_facts.c against capi/include failed ({cc} {extra:?}):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe)
        .output()
        .expect("cannot run the compiled abi_facts program");
    assert!(run.status.success(), "abi_facts exited with {}", run.status);
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout).expect("abi_facts printed non-UTF-8 output")
}

/// The table our headers follow: AMD's newest headers.
const AMD_TABLE: &str = "amd-rocprofiler-sdk-develop-1b1610f.tsv";
/// The ROCm 7.0 release's table (what our headers followed before).
const ROCM_7_0_TABLE: &str = "amd-rocprofiler-sdk-1.0.tsv";

fn read_table(name: &str) -> (Vec<String>, BTreeMap<String, String>) {
    let table = crate_root().join("abi").join(name);
    let text = std::fs::read_to_string(&table)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", table.display()));
    parse_facts(&text, name)
}

fn compare_with_amd(tag: &str, extra: &[&str]) {
    let (amd_order, amd) = read_table(AMD_TABLE);
    let ours_text = measure_ours(tag, extra);
    let (ours_order, ours) = parse_facts(&ours_text, "abi_facts output");

    // The table is large; an empty or truncated run must not pass.
    assert!(
        amd.len() > 2000,
        "the AMD table has only {} facts",
        amd.len()
    );

    let mut problems = Vec::new();
    for key in &amd_order {
        match ours.get(key) {
            None => problems.push(format!("missing in ours: {key}\tAMD={}", amd[key])),
            Some(v) if *v != amd[key] => {
                problems.push(format!("differs: {key}\tAMD={}\tours={v}", amd[key]))
            }
            Some(_) => {}
        }
    }
    for key in &ours_order {
        if !amd.contains_key(key) {
            problems.push(format!("not in AMD table: {key}\tours={}", ours[key]));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} ABI facts disagree with AMD's rocprofiler-sdk headers ({AMD_TABLE}, {tag}):\n{}\n\
         (if capi/include changed on purpose, regenerate capi/abi/abi_facts.c with \
         capi/abi/gen_abi_facts.py and re-measure AMD's headers as capi/include/README.md says)",
        problems.len(),
        amd.len(),
        problems.join("\n")
    );
}

/// Default configuration: whatever HSA/hsakmt headers the machine has (normally none).
#[test]
fn abi_matches_amd_rocprofiler_sdk() {
    compare_with_amd("default", &[]);
}

/// The stand-alone definitions of the HSA/hsakmt types, even where ROCm is installed.
#[test]
fn abi_matches_amd_without_system_hsa() {
    compare_with_amd(
        "standalone",
        &[
            "-DROCPROFILER_SDK_USE_SYSTEM_HSA=0",
            "-DROCPROFILER_SDK_USE_SYSTEM_HSAKMT=0",
        ],
    );
}

/// What changed between the ROCm 7.0 headers and the newest ones, fact by fact: a
/// fact of the 7.0 table may differ from (or be missing in) the newest table only if
/// it is listed here. Structs may grow at their end (`sizeof` only grows, and no
/// member of a 7.0 struct moves), so a tool built with the 7.0 headers reads every
/// field it knows where it was; enumerator values never change.
const CHANGED_SINCE_ROCM_7_0: &[&str] = &[
    // rocprofiler_uuid_t: an 8-byte union { uint64_t value; void* bytes; } became
    // struct { uint8_t bytes[16]; } (the agent struct's last member).
    "alignof\trocprofiler_uuid_t",
    "sizeof\trocprofiler_uuid_t",
    "fieldsize\trocprofiler_uuid_t.bytes",
    "fieldsize\trocprofiler_uuid_t.value",
    "offsetof\trocprofiler_uuid_t.value",
    "fieldsize\trocprofiler_agent_v0_t.uuid",
    // rocprofiler_counter_info_v1_t (experimental): a leading `size`, and the instance
    // ids became dimension-instance structs.
    "offsetof\trocprofiler_counter_info_v1_t.id",
    "offsetof\trocprofiler_counter_info_v1_t.name",
    "offsetof\trocprofiler_counter_info_v1_t.description",
    "offsetof\trocprofiler_counter_info_v1_t.block",
    "offsetof\trocprofiler_counter_info_v1_t.expression",
    "offsetof\trocprofiler_counter_info_v1_t.dimensions_count",
    "offsetof\trocprofiler_counter_info_v1_t.dimensions",
    "bitfield\trocprofiler_counter_info_v1_t.is_constant",
    "bitfield\trocprofiler_counter_info_v1_t.is_derived",
    "offsetof\trocprofiler_counter_info_v1_t.instance_ids_count",
    "offsetof\trocprofiler_counter_info_v1_t.instance_ids",
    "fieldsize\trocprofiler_counter_info_v1_t.instance_ids_count",
    "fieldsize\trocprofiler_counter_info_v1_t.instance_ids",
    // The "no context" handle: UINT64_MAX before, 0 now (no context has either).
    "macro\tROCPROFILER_CONTEXT_NONE.handle",
];

/// A tool built against the ROCm 7.0 headers keeps its layouts: every fact of the 7.0
/// table is unchanged in the table we follow, but for AMD's listed changes and
/// structs grown at their end.
#[test]
fn rocm_7_0_tools_keep_their_layouts() {
    let (old_order, old) = read_table(ROCM_7_0_TABLE);
    let (_, new) = read_table(AMD_TABLE);
    let mut problems = Vec::new();
    for key in &old_order {
        if CHANGED_SINCE_ROCM_7_0.contains(&key.as_str()) {
            continue;
        }
        let was = &old[key];
        match new.get(key) {
            None => problems.push(format!("gone: {key}\t7.0={was}")),
            Some(now) if now == was => {}
            Some(now) if key.starts_with("sizeof\t") => {
                let grew = matches!(
                    (was.parse::<u64>(), now.parse::<u64>()),
                    (Ok(a), Ok(b)) if b > a
                );
                if !grew {
                    problems.push(format!("shrank: {key}\t7.0={was}\tnow={now}"));
                }
            }
            Some(now) => problems.push(format!("changed: {key}\t7.0={was}\tnow={now}")),
        }
    }
    for key in CHANGED_SINCE_ROCM_7_0 {
        assert!(
            old.contains_key(*key),
            "CHANGED_SINCE_ROCM_7_0 lists {key:?}, which the 7.0 table does not have"
        );
    }
    assert!(
        problems.is_empty(),
        "{} facts of {ROCM_7_0_TABLE} changed in {AMD_TABLE} beyond AMD's known changes:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn headers(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            headers(&p, out);
        } else if p.extension().is_some_and(|e| e == "h" || e == "hpp") {
            out.push(p);
        }
    }
}

/// Every header compiles on its own, as C11 (the `.h` files) and as C++17 (all),
/// with no HIP/HSA headers needed (`cxx/serialization*.hpp` need cereal's, as AMD's do;
/// `cxx/perfetto.hpp` uses Perfetto's only when it finds them).
#[test]
fn every_header_compiles_alone() {
    let include = crate_root().join("include");
    let mut all = Vec::new();
    headers(&include, &mut all);
    all.sort();
    assert!(
        all.len() > 40,
        "only {} headers found under {}",
        all.len(),
        include.display()
    );
    let dir = scratch("alone");
    let cc = tool("CC", "cc");
    let cxx = tool("CXX", "c++");
    let mut failures = Vec::new();
    for h in &all {
        let rel = h
            .strip_prefix(&include)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let src = dir.join("one.c");
        std::fs::write(&src, format!("#include <{rel}>\n")).unwrap();
        let mut runs = Vec::new();
        if rel.ends_with(".h") {
            runs.push((cc.as_str(), vec!["-std=c11", "-x", "c"]));
        }
        runs.push((cxx.as_str(), vec!["-std=c++17", "-x", "c++"]));
        for (compiler, flags) in runs {
            let out = Command::new(compiler)
                .args(&flags)
                .args([
                    "-fsyntax-only",
                    "-Wall",
                    "-Werror",
                    "-DROCPROFILER_SDK_USE_SYSTEM_HSA=0",
                    "-DROCPROFILER_SDK_USE_SYSTEM_HSAKMT=0",
                ])
                .arg("-I")
                .arg(&include)
                .arg(&src)
                .output()
                .unwrap_or_else(|e| panic!("cannot run `{compiler}`: {e}"));
            if !out.status.success() {
                let stderr = String::from_utf8_lossy(&out.stderr);
                // cxx/serialization*.hpp are cereal serializers: they need its headers.
                let hint = if stderr.contains("cereal/") {
                    "\n(cereal's headers are missing: install libcereal-dev, or run `cargo xtask setup`)"
                } else {
                    ""
                };
                failures.push(format!(
                    "{rel} ({compiler} {}):\n{stderr}{hint}",
                    flags.join(" "),
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} header compiles failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `cxx/serialization.hpp` instantiates for every type it declares a `save` of: each
/// is written to and read back from cereal's JSON archives and written to its binary
/// archive (compiled only; nothing is linked or run).
#[test]
fn serializers_instantiate_for_every_type() {
    let include = crate_root().join("include");
    let save = std::fs::read_to_string(include.join("rocprofiler-sdk/cxx/serialization/save.hpp"))
        .expect("cxx/serialization/save.hpp");
    let types: Vec<&str> = save
        .lines()
        .filter_map(|l| l.strip_prefix("save(ArchiveT& ar, const "))
        .filter_map(|l| l.strip_suffix("& data)"))
        .filter(|t| !t.contains("::"))
        .collect();
    assert!(types.len() > 100, "only {} types in save.hpp", types.len());
    let mut src = String::from(
        "#include <rocprofiler-sdk/cxx/serialization.hpp>\n#include <sstream>\n\
         template <typename T> void round_trip() {\n\
         T value{};\n std::stringstream text;\n\
         { cereal::JSONOutputArchive out{text}; out(cereal::make_nvp(\"v\", value)); }\n\
         T back{};\n { cereal::JSONInputArchive in{text}; in(cereal::make_nvp(\"v\", back)); }\n\
         std::stringstream bytes;\n { cereal::BinaryOutputArchive out{bytes}; out(value); }\n}\n\
         void every_type() {\n",
    );
    for t in &types {
        src.push_str(&format!("    round_trip<{t}>();\n"));
    }
    src.push_str("}\n");
    let dir = scratch("serialize");
    let file = dir.join("every_type.cpp");
    std::fs::write(&file, src).unwrap();
    let cxx = tool("CXX", "c++");
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-c", "-Wall", "-Werror"])
        .args([
            "-DROCPROFILER_SDK_USE_SYSTEM_HSA=0",
            "-DROCPROFILER_SDK_USE_SYSTEM_HSAKMT=0",
        ])
        .arg("-I")
        .arg(&include)
        .arg(&file)
        .arg("-o")
        .arg(dir.join("every_type.o"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{cxx}`: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "instantiating the serializers of {} types failed (cereal's headers: libcereal-dev, \
         `cargo xtask setup`):\n{}",
        types.len(),
        String::from_utf8_lossy(&out.stderr)
    );
}
