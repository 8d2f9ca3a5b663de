//! The tool library carries only what runs in the application:
//! interception, the engine, the journal and durable halves, the
//! in-process plugin runtime and the policy check. No output format (SQLite,
//! Arrow/Parquet, protobuf), registry client or trace reader is in its
//! dependency tree (`cargo tree -p rocwasm-intercept -e normal`).

use std::process::Command;

use rocwasm_tests::workspace;

/// Crates that write or read an output format, or talk to a registry.
const NOT_IN_THE_APPLICATION: &[&str] = &[
    "rusqlite",
    "libsqlite3-sys",
    "parquet",
    "arrow",
    "arrow-array",
    "prost",
    "oci-client",
    "reqwest",
    "csv",
    "rocwasm-formats",
    "rocwasm-registry",
    "rocwasm-pipeline",
];

#[test]
fn the_tool_librarys_dependency_tree_has_no_output_format() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "-p",
            "rocwasm-intercept",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .current_dir(workspace())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    // What must be there: the assertion below reads the right tree.
    for needed in [
        "rocwasm-record",
        "rocwasm-journal",
        "wasmtime",
        "rocwasm-capi",
    ] {
        assert!(names.contains(&needed), "{needed} missing from\n{tree}");
    }
    let found: Vec<&&str> = NOT_IN_THE_APPLICATION
        .iter()
        .filter(|c| names.contains(c))
        .collect();
    assert!(found.is_empty(), "in the tool library: {found:?}\n{tree}");
}
