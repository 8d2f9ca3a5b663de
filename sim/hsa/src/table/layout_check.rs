//! Checks the Rust table layouts and C struct definitions against the real
//! ROCm 5.2 headers: a C++ program including `hsa_api_trace.h` prints
//! `sizeof`/`offsetof` for every table and slot we define, and the test
//! compares them with what the Rust side computes. Needs g++ and Debian's
//! `libhsa-runtime-dev` (installed by `cargo xtask setup`); fails if absent.

use std::fmt::Write as _;
use std::mem::{offset_of, size_of};
use std::process::Command;

use super::*;
use crate::ffi::*;

const HEADER: &str = "/usr/include/hsa/hsa_api_trace.h";

/// Compiles and runs `body` (statements printing `name value` lines).
fn run_cxx(body: &str) -> Vec<(String, u64)> {
    assert!(
        std::path::Path::new(HEADER).exists(),
        "{HEADER} is missing: install libhsa-runtime-dev (cargo xtask setup) to check table layouts"
    );
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("sim-hsa-layout-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.cpp");
    let exe = dir.join("layout");
    let program = format!(
        "#include <cstdio>\n#include <cstddef>\n#include <hsa/hsa_api_trace.h>\n#include <hsa/hsa_ven_amd_loader.h>\n\
         #define P(name, expr) std::printf(\"%s %zu\\n\", name, (size_t)(expr))\nint main() {{\n{body}\nreturn 0;\n}}\n"
    );
    std::fs::write(&src, program).unwrap();
    let out = Command::new("g++")
        .args([
            "-std=c++17",
            "-D__HIP_PLATFORM_AMD__",
            "-DAMD_INTERNAL_BUILD",
            "-I/usr/include/hsa",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("g++ must be installed to check layouts against the real headers");
    assert!(
        out.status.success(),
        "compiling the layout probe failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

fn compare(expected_by_rust: Vec<(String, u64)>, body: &str) {
    let actual = run_cxx(body);
    assert_eq!(actual.len(), expected_by_rust.len());
    let mismatches: Vec<String> = expected_by_rust
        .iter()
        .zip(&actual)
        .filter(|(r, c)| r != c)
        .map(|(r, c)| format!("{}: rust {} vs header {}", r.0, r.1, c.1))
        .collect();
    assert!(
        mismatches.is_empty(),
        "layout mismatches:\n{}",
        mismatches.join("\n")
    );
}

#[test]
fn rocm5_tables_match_hsa_api_trace_h() {
    let layout = &LAYOUTS[0];
    let tables = build(layout, crate::api::implementation);
    let mut rust = Vec::new();
    let mut body = String::new();
    let root_size = u64::from(
        // SAFETY: `root` is the live, initialised root table.
        unsafe { (*tables.root()).version.minor_id },
    );
    rust.push(("sizeof(HsaApiTable)".to_string(), root_size));
    writeln!(body, "P(\"sizeof(HsaApiTable)\", sizeof(HsaApiTable));").unwrap();
    for (field, offset) in [
        ("core_", offset_of!(HsaApiTable, core)),
        ("amd_ext_", offset_of!(HsaApiTable, amd_ext)),
        ("finalizer_ext_", offset_of!(HsaApiTable, finalizer_ext)),
        ("image_ext_", offset_of!(HsaApiTable, image_ext)),
    ] {
        rust.push((format!("HsaApiTable::{field}"), offset as u64));
        writeln!(
            body,
            "P(\"HsaApiTable::{field}\", offsetof(HsaApiTable, {field}));"
        )
        .unwrap();
    }
    let c_names = [
        "CoreApiTable",
        "AmdExtTable",
        "FinalizerExtTable",
        "ImageExtTable",
    ];
    for ((t, c), base) in layout.tables.iter().zip(c_names).zip(tables.children) {
        // SAFETY: each child starts with its version header.
        let version = unsafe { *(base as *const ApiTableVersion) };
        rust.push((format!("sizeof({c})"), u64::from(version.minor_id)));
        writeln!(body, "P(\"sizeof({c})\", sizeof({c}));").unwrap();
        rust.push((format!("{c}.major"), u64::from(version.major_id)));
        let major_macro = match c {
            "CoreApiTable" => "HSA_CORE_API_TABLE_MAJOR_VERSION",
            "AmdExtTable" => "HSA_AMD_EXT_API_TABLE_MAJOR_VERSION",
            "FinalizerExtTable" => "HSA_FINALIZER_API_TABLE_MAJOR_VERSION",
            _ => "HSA_IMAGE_API_TABLE_MAJOR_VERSION",
        };
        writeln!(body, "P(\"{c}.major\", {major_macro});").unwrap();
        for name in t.slots {
            let address = tables.slot_address(name).unwrap() as u64;
            rust.push((format!("{c}::{name}"), address - base as u64));
            writeln!(body, "P(\"{c}::{name}\", offsetof({c}, {name}_fn));").unwrap();
        }
    }
    rust.push(("root.major".to_string(), u64::from(layout.root_major)));
    writeln!(body, "P(\"root.major\", HSA_API_TABLE_MAJOR_VERSION);").unwrap();
    compare(rust, &body);
    // The sizes the brief quotes for ROCm 5.2, as a guard on the probe itself.
    assert_eq!(root_size, 48);
}

#[test]
fn c_structs_match_hsa_h() {
    macro_rules! probe {
        ($rust:ty, $c:literal, [$($field:ident => $cfield:literal),*]) => {{
            let mut rust = vec![(format!("sizeof({})", $c), size_of::<$rust>() as u64)];
            let mut body = format!("P(\"sizeof({0})\", sizeof({0}));\n", $c);
            $(
                rust.push((format!("{}.{}", $c, $cfield), offset_of!($rust, $field) as u64));
                body += &format!("P(\"{0}.{1}\", offsetof({0}, {1}));\n", $c, $cfield);
            )*
            (rust, body)
        }};
    }
    let parts = [
        probe!(hsa_queue_t, "hsa_queue_t", [type_ => "type", features => "features", base_address => "base_address",
            doorbell_signal => "doorbell_signal", size => "size", id => "id"]),
        probe!(hsa_kernel_dispatch_packet_t, "hsa_kernel_dispatch_packet_t", [header => "header", setup => "setup",
            workgroup_size_x => "workgroup_size_x", workgroup_size_z => "workgroup_size_z", grid_size_x => "grid_size_x",
            grid_size_z => "grid_size_z", private_segment_size => "private_segment_size",
            group_segment_size => "group_segment_size", kernel_object => "kernel_object",
            kernarg_address => "kernarg_address", completion_signal => "completion_signal"]),
        probe!(hsa_barrier_and_packet_t, "hsa_barrier_and_packet_t", [header => "header", dep_signal => "dep_signal",
            completion_signal => "completion_signal"]),
        probe!(hsa_amd_profiling_dispatch_time_t, "hsa_amd_profiling_dispatch_time_t", [start => "start", end => "end"]),
        probe!(hsa_amd_profiling_async_copy_time_t, "hsa_amd_profiling_async_copy_time_t", [start => "start", end => "end"]),
        probe!(LoaderTable, "hsa_ven_amd_loader_1_03_pfn_t", [
            query_host_address => "hsa_ven_amd_loader_query_host_address",
            query_segment_descriptors => "hsa_ven_amd_loader_query_segment_descriptors",
            query_executable => "hsa_ven_amd_loader_query_executable",
            executable_iterate_loaded_code_objects => "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
            loaded_code_object_get_info => "hsa_ven_amd_loader_loaded_code_object_get_info",
            code_object_reader_create_from_file_with_offset_size => "hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size",
            iterate_executables => "hsa_ven_amd_loader_iterate_executables"]),
        probe!(ApiTableVersion, "ApiTableVersion", [major_id => "major_id", minor_id => "minor_id", step_id => "step_id"]),
    ];
    let mut rust = Vec::new();
    let mut body = String::new();
    for (r, b) in parts {
        rust.extend(r);
        body += &b;
    }
    // Enum values the simulation relies on.
    for (name, value) in [
        (
            "HSA_EXTENSION_AMD_LOADER",
            u64::from(HSA_EXTENSION_AMD_LOADER),
        ),
        (
            "HSA_PACKET_TYPE_KERNEL_DISPATCH",
            u64::from(HSA_PACKET_TYPE_KERNEL_DISPATCH),
        ),
        (
            "HSA_PACKET_TYPE_BARRIER_AND",
            u64::from(HSA_PACKET_TYPE_BARRIER_AND),
        ),
        (
            "HSA_AMD_AGENT_INFO_PRODUCT_NAME",
            u64::from(HSA_AMD_AGENT_INFO_PRODUCT_NAME),
        ),
        (
            "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT",
            u64::from(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT),
        ),
        (
            "HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI",
            u64::from(LOADED_CODE_OBJECT_INFO_URI),
        ),
        (
            "HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE",
            u64::from(LOADED_CODE_OBJECT_INFO_LOAD_BASE),
        ),
        (
            "HSA_STATUS_ERROR_INVALID_MEMORY_POOL",
            u64::from(HSA_STATUS_ERROR_INVALID_MEMORY_POOL),
        ),
    ] {
        rust.push((name.to_string(), value));
        body += &format!("P(\"{name}\", {name});\n");
    }
    compare(rust, &body);
}

#[test]
fn every_export_has_a_slot_in_rocm5() {
    let tables = tables();
    for (export, slot) in EXPORTS.iter() {
        assert!(
            tables.slot_address(slot).is_some(),
            "{export} -> {slot} has no slot"
        );
    }
    assert_eq!(
        EXPORTS.len(),
        223,
        "exports through tables (224 minus the one direct export)"
    );
}
