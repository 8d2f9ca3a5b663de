//! The application only records, so a crash loses nothing it recorded:
//! `crash_after_kernels 300 MODE` (the simulated runtime) copies a buffer to
//! the device, launches 300 kernels, copies it back, synchronises, prints
//! `LAUNCHED kernels=300 copies=2`, waits 20 ms (the completion handlers'
//! moment, docs/ARCHITECTURE.md), then ends by `exit`, SIGSEGV, `abort` or
//! SIGKILL on itself. Under `rocwasm run --sim --kernel-trace
//! --memory-copy-trace --output-format csv,rocpd`, for each end:
//!
//! - `kernel_trace.csv` and rocpd's `rocpd_kernel_dispatch` hold all 300
//!   dispatches, `memory_copy_trace.csv` and `rocpd_memory_copy` both copies
//!   (after a kill they come from the journal and the durable buffer halves
//!   the launcher reads back);
//! - the summary (printed and in `rocwasm-summary.txt`) says how the
//!   application ended, and rocwasm exits as the application did;
//! - the journal directory is gone afterwards.
//!
//! The same with a plugin chain whose stages trace the dispatches (the
//! outputs then take them from the chain's buffer, also durable).
//!
//! Needs `cargo xtask build-sim` (and `cargo xtask build-plugins` for the
//! chain case); fails (never skips) with the command to run.

use std::path::Path;
use std::process::Command;

use rocwasm_tests::*;

const LAUNCHES: usize = 300;

/// (mode, rocwasm's exit code, what the summary says of the end).
const ENDS: &[(&str, i32, &str)] = &[
    ("exit", 0, "exited with status 0"),
    ("segv", 128 + 11, "was ended by signal 11 (SIGSEGV)"),
    ("abort", 128 + 6, "was ended by signal 6 (SIGABRT)"),
    ("kill", 128 + 9, "was ended by signal 9 (SIGKILL)"),
];

fn csv_rows(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().count().saturating_sub(1)
}

fn sql_count(db: &Path, table: &str) -> usize {
    let out = Command::new("sqlite3")
        .arg(db)
        .arg(format!("SELECT count(*) FROM {table};"))
        .output()
        .expect("the sqlite3 command-line tool runs (cargo xtask setup installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{table}: {e}"))
}

/// Runs the app ending in `mode` and checks every output and the summary.
fn check_end(dir: &Path, extra: &[&str], mode: &str, code: i32, said: &str) {
    let app = sim_dir().join("bin/crash_after_kernels");
    let out_dir = format!("out-{mode}");
    let launches = LAUNCHES.to_string();
    let mut args = vec!["run", "--sim"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--kernel-trace",
        "--memory-copy-trace",
        "--output-format",
        "csv,rocpd",
        "-d",
        &out_dir,
        "--",
    ]);
    let app = app.display().to_string();
    args.extend_from_slice(&[&app, &launches, mode]);
    let out = rocwasm(&args, dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = format!("mode {mode}\n--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert!(
        stdout.contains(&format!("LAUNCHED kernels={LAUNCHES} copies=2")),
        "{context}"
    );
    assert_eq!(out.status.code(), Some(code), "{context}");
    assert!(
        stdout.contains(said),
        "the summary names the end: {context}"
    );
    let out_dir = dir.join(&out_dir);
    assert_eq!(
        csv_rows(&out_dir.join("kernel_trace.csv")),
        LAUNCHES,
        "{context}"
    );
    assert_eq!(
        csv_rows(&out_dir.join("memory_copy_trace.csv")),
        2,
        "{context}"
    );
    let db = out_dir.join("results.db");
    assert_eq!(
        sql_count(&db, "rocpd_kernel_dispatch"),
        LAUNCHES,
        "{context}"
    );
    assert_eq!(sql_count(&db, "rocpd_memory_copy"), 2, "{context}");
    // Every dispatch is named (the symbols were journaled before the kill).
    let names = Command::new("sqlite3")
        .arg(&db)
        .arg("SELECT DISTINCT name FROM kernels;")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&names.stdout).trim(),
        "fill",
        "{context}"
    );
    let summary = std::fs::read_to_string(out_dir.join("rocwasm-summary.txt")).unwrap();
    assert!(summary.contains(said), "{summary}");
    let left: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".rocwasm-journal"))
        .collect();
    assert!(left.is_empty(), "journal left behind: {left:?}");
}

#[test]
fn every_recorded_dispatch_and_copy_survives_every_end() {
    let tmp = tempfile::tempdir().unwrap();
    for &(mode, code, said) in ENDS {
        check_end(tmp.path(), &[], mode, code, said);
    }
}

#[test]
fn a_killed_application_under_a_chain_keeps_its_records_too() {
    let tmp = tempfile::tempdir().unwrap();
    let chain = workspace().join("examples/chains/default.toml");
    let _ = plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]);
    let chain = chain.display().to_string();
    check_end(
        tmp.path(),
        &["-c", &chain],
        "kill",
        137,
        "was ended by signal 9 (SIGKILL)",
    );
}

/// `sh -c 'exec app'`: the shell's image starts a journal, the program it
/// `exec`s (same pid) a second one; the program's records are written once,
/// as the application's, and the empty image adds nothing.
#[test]
fn a_program_started_by_exec_keeps_its_records() {
    let tmp = tempfile::tempdir().unwrap();
    let app = sim_dir()
        .join("bin/crash_after_kernels")
        .display()
        .to_string();
    let script = format!("exec {app} 50 kill");
    let out = rocwasm(
        &[
            "run",
            "--sim",
            "--kernel-trace",
            "--output-format",
            "csv,rocpd",
            "-d",
            "out",
            "--",
            "/bin/sh",
            "-c",
            &script,
        ],
        tmp.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(137), "{out:?}");
    assert!(
        stdout.contains("was ended by signal 9 (SIGKILL)"),
        "{stdout}"
    );
    let dir = tmp.path().join("out");
    assert_eq!(csv_rows(&dir.join("kernel_trace.csv")), 50, "{stdout}");
    let db = dir.join("results.db");
    assert_eq!(sql_count(&db, "rocpd_kernel_dispatch"), 50);
    assert_eq!(
        sql_count(&db, "rocpd_info_process"),
        1,
        "one process in the database"
    );
}

/// A stage placed in the launcher (`placement = "rocwasm"`) reads the
/// journal: its results cover every dispatch of an application that was
/// killed, which an in-process stage's could not.
#[test]
fn a_stage_placed_in_the_launcher_covers_a_killed_application() {
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let out = killed_after_300_kernels(
        tmp.path(),
        r#"
version = 1

[[stage]]
name = "kernel-stats"
plugin = "kernel-stats"
domains = ["kernel_dispatch"]
placement = "rocwasm"
"#,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let context = format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    assert_eq!(out.status.code(), Some(137), "{context}");
    assert!(
        stdout.contains("[kernel-stats]"),
        "the stage's table: {context}"
    );
    let fill = stdout
        .lines()
        .find(|l| l.contains("fill"))
        .unwrap_or_else(|| panic!("no row for the kernel: {context}"));
    let cells: Vec<&str> = fill
        .split(['│', '┆'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(cells.get(1), Some(&"300"), "{fill}\n{context}");
}

/// A killed application with an in-process stage: the summary says its
/// tables are lost and names the placement that keeps them; a built-in
/// run says nothing of the SDK back end's losses.
#[test]
fn a_crash_with_in_process_stages_suggests_placing_them_in_the_launcher() {
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let out = killed_after_300_kernels(
        tmp.path(),
        "version = 1\n\n[[stage]]\nname = \"kernel-stats\"\nplugin = \"kernel-stats\"\ndomains = [\"kernel_dispatch\"]\n",
    );
    assert_eq!(out.status.code(), Some(137), "{out:?}");
    let summary = std::fs::read_to_string(tmp.path().join("out/rocwasm-summary.txt")).unwrap();
    assert!(
        summary.contains("the in-process stages' tables are missing (kernel-stats)")
            && summary.contains("placement = \"rocwasm\""),
        "{summary}"
    );
    assert!(!summary.contains("--backend rocprofiler-sdk"), "{summary}");
}

/// `rocwasm write-journal` on a directory no run left: one clear error.
#[test]
fn write_journal_refuses_a_directory_that_is_not_a_journal() {
    let tmp = tempfile::tempdir().unwrap();
    let out = rocwasm(&["write-journal", "."], tmp.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("plan.json") && stderr.contains("record journal directory"),
        "{stderr}"
    );
}

/// `rocwasm run --sim -c <chain> --output-format csv -d out --
/// crash_after_kernels 300 kill` in `dir`, the chain file holding `toml`:
/// the application is killed after its 300 kernels.
fn killed_after_300_kernels(dir: &std::path::Path, toml: &str) -> std::process::Output {
    let chain = dir.join("chain.toml");
    std::fs::write(&chain, toml).unwrap();
    let app = sim_dir()
        .join("bin/crash_after_kernels")
        .display()
        .to_string();
    rocwasm(
        &[
            "run",
            "--sim",
            "-c",
            chain.to_str().unwrap(),
            "--output-format",
            "csv",
            "-d",
            "out",
            "--",
            &app,
            "300",
            "kill",
        ],
        dir,
    )
}
