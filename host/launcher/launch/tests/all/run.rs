//! `rocwasm_launch::run` of the simulated runtime's `multi_kernel` sample
//! with `--kernel-trace --output-format csv`.

use rocwasm_config::TraceFlags;
use rocwasm_launch::{run, Captured, Install, Measurer, RunRequest, Runtime, TOOL_LIB};
use rocwasm_plan::{Backend, OutputFormat};

use crate::{assert_written, csv_rows};

#[test]
fn a_sample_program_runs_on_the_simulated_gpu_with_its_kernels_traced() {
    let sim = rocwasm_tests::sim_dir();
    // The tool library, built fresh beside the binary the end-to-end tests
    // build (the binary itself is not run).
    let tool = rocwasm_tests::rocwasm_bin().with_file_name(TOOL_LIB);
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let request = RunRequest {
        program: sim.join("bin/multi_kernel").display().to_string(),
        args: vec!["--threads".into(), "2".into()],
        flags: TraceFlags {
            kernel_trace: true,
            output_directory: Some(dir.display().to_string()),
            output_formats: Some(vec![OutputFormat::Csv]),
            ..TraceFlags::default()
        },
        runtime: Runtime::Simulated,
        backend: Some(Backend::Builtin),
        install: Install::default()
            .with_tool_library(tool)
            .with_sim_libs(sim.join("lib")),
        ..RunRequest::default()
    };
    let mut console = Captured::new();
    let outcome = run(&request, &mut console)
        .unwrap_or_else(|e| panic!("run failed: {e}\n{}", console.err_text()));
    let (said, noted) = (console.out_text(), console.err_text());
    let both = format!("--- stdout\n{said}\n--- stderr\n{noted}");

    assert!(outcome.status.success(), "{}\n{both}", outcome.ended());
    assert_eq!(outcome.exit_code(), 0);
    assert!(outcome.profiled);
    assert_eq!(outcome.measured_by, Some(Measurer::Builtin));
    assert!(
        noted.contains("rocwasm: back end: builtin (rocwasm's interception)"),
        "{both}"
    );

    // The application's own outputs, written from its journal.
    assert_eq!(outcome.dir.as_deref(), Some(dir.as_path()), "{both}");
    let own = outcome
        .processes
        .iter()
        .find(|p| p.pid == outcome.pid)
        .unwrap_or_else(|| panic!("no outputs of the application: {outcome:?}\n{both}"));
    assert!(own.finished, "{both}");
    assert!(own.journaled > 0, "{own:?}");
    let trace = dir.join("kernel_trace.csv");
    assert_written(std::slice::from_ref(&trace));
    assert!(csv_rows(&trace) > 0, "{} has no rows", trace.display());

    // The summary, as printed: it names the file and how the application
    // ended; the journal directory is gone.
    let summary = outcome.summary.as_deref().expect("a summary");
    assert!(said.contains(summary.trim()), "{both}");
    assert!(
        summary.contains(&format!("rocwasm: wrote {}", trace.display())),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "the application (pid {}) exited with status 0",
            outcome.pid
        )),
        "{summary}"
    );
    assert_eq!(outcome.journal_kept, None);
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".rocwasm-journal"))
        .collect();
    assert!(left.is_empty(), "journal directories left: {left:?}");
}
