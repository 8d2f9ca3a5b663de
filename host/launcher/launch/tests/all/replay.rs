//! `rocwasm_launch::replay` of `examples/traces/sample` through
//! `examples/chains/default.toml`.

use rocwasm_config::TraceFlags;
use rocwasm_launch::{replay, Captured, Install, ReplayRequest};

use crate::{assert_written, csv_rows, workspace};

/// The default chain's stages, in order.
const STAGES: [&str; 4] = ["kernel-stats", "api-stats", "memcpy-bandwidth", "report"];

#[test]
fn the_sample_trace_replays_through_the_default_chain() {
    let ws = workspace();
    let plugins = rocwasm_tests::plugins_dir(&STAGES);
    let out = tempfile::tempdir().unwrap();
    let request = ReplayRequest {
        paths: vec![ws.join("examples/traces/sample")],
        chain: Some(ws.join("examples/chains/default.toml")),
        flags: TraceFlags {
            output_directory: Some(out.path().display().to_string()),
            ..TraceFlags::default()
        },
        install: Install::default().with_plugin_dir(plugins),
        ..ReplayRequest::default()
    };
    let mut console = Captured::new();
    let outcome = replay(&request, &mut console)
        .unwrap_or_else(|e| panic!("replay failed: {e}\n{}", console.err_text()));
    let (said, noted) = (console.out_text(), console.err_text());
    outcome
        .verdict()
        .unwrap_or_else(|e| panic!("{e}\n--- stdout\n{said}\n--- stderr\n{noted}"));

    // Every record of the recording went through the chain.
    assert!(outcome.records > 0, "{outcome:?}");
    assert!(outcome.batches > 0, "{outcome:?}");
    assert_eq!(outcome.processes, 1);
    let stages: Vec<&str> = outcome
        .report
        .plugins
        .tables
        .iter()
        .map(|(stage, _)| stage.as_str())
        .collect();
    assert_eq!(stages, STAGES, "the report names the chain's stages");
    assert!(
        outcome
            .report
            .plugins
            .tables
            .iter()
            .any(|(stage, tables)| stage == "kernel-stats" && !tables.is_empty()),
        "kernel-stats printed no table"
    );
    assert!(outcome.report.plugins.problems.is_empty(), "{noted}");

    // The sinks' files and the plugins', all in the requested directory.
    assert!(outcome.dir.starts_with(out.path()), "{outcome:?}");
    assert_written(&outcome.files);
    let named = |name: &str| {
        outcome
            .files
            .iter()
            .find(|f| {
                f.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(name))
            })
            .unwrap_or_else(|| panic!("no {name} among {:?}", outcome.files))
    };
    assert!(csv_rows(named("kernel_trace.csv")) > 0);
    named("results.db");
    named("report.html");
    named("kernel_stats.csv");

    // What `rocwasm replay` prints: the count line, each stage's table,
    // the files written.
    assert!(
        said.starts_with(&format!(
            "replayed {} record(s) in {} batch(es) from ",
            outcome.records, outcome.batches
        )),
        "{said}"
    );
    assert!(said.contains("through 4 stage(s)"), "{said}");
    assert!(
        said.contains(&format!("outputs in {}:", outcome.dir.display())),
        "{said}"
    );
    for stage in ["kernel-stats", "api-stats"] {
        assert!(said.contains(stage), "no {stage} table: {said}");
    }
}

/// A request the CLI would refuse with status 2 fails before anything is
/// written, with the CLI's message.
#[test]
fn a_chain_that_does_not_load_is_a_usage_error() {
    let out = tempfile::tempdir().unwrap();
    let chain = out.path().join("bad.toml");
    std::fs::write(&chain, "version = 1\n[[stage]]\nname = \"x\"\n").unwrap();
    let request = ReplayRequest {
        paths: vec![workspace().join("examples/traces/sample")],
        chain: Some(chain.clone()),
        install: Install::default(),
        ..ReplayRequest::default()
    };
    let mut console = Captured::new();
    let e = replay(&request, &mut console).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(
        e.to_string().starts_with(&chain.display().to_string()),
        "{e}"
    );
    assert!(console.out.is_empty() && console.err.is_empty());
}

#[test]
fn a_request_with_no_recording_is_a_usage_error() {
    let request = ReplayRequest {
        paths: Vec::new(),
        install: Install::default(),
        ..ReplayRequest::default()
    };
    let mut console = Captured::new();
    let e = replay(&request, &mut console).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e}");
    assert!(e.to_string().contains("no recording to replay"), "{e}");
}
