//! The plugin chain inside the application, on Debian's real libamdhip64
//! (no GPU: every `hipGetDeviceCount` returns 100, and is traced):
//!
//! - the application's signal handling is untouched (no SIGSEGV/SIGBUS/
//!   SIGILL/SIGFPE handler appears, its own SIGSEGV handler works) while a
//!   chain runs;
//! - every exit path finishes the chain: `api-stats` counts exactly the calls
//!   the program made after `exit()` from a worker, SIGTERM mid-run, and in
//!   the parent of a `fork()` (the child gets its own run without plugins);
//! - a plugin that traps leaves the application's status and the other
//!   stage's results unchanged, and is reported with a `rocwasm:` prefix.
//!
//! Plugins come from `target/plugins` (`cargo xtask build-plugins`); when
//! they are missing the tests fail with that command.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

use crate::common::*;

macro_rules! require_real_hip {
    () => {
        if !real_hip_installed() {
            panic!("Debian's libamdhip64-5 / libamdhip64-dev are not installed: run `cargo xtask setup`");
        }
    };
}

/// `target/plugins/<name>.wasm`, or a failure naming the command that builds it.
fn plugin(name: &str) -> PathBuf {
    let p = target_profile_dir()
        .parent()
        .unwrap()
        .join("plugins")
        .join(format!("{name}.wasm"));
    assert!(
        p.is_file(),
        "{} is missing: run `cargo xtask build-plugins`",
        p.display()
    );
    p
}

/// One run-file stage tracing HIP_RUNTIME_API for `wasm`, with `config`.
fn stage(name: &str, wasm: &Path, config: &str) -> String {
    format!(
        r#"{{"name":"{name}","wasm":"{}","world":"analysis","domains":["HIP_RUNTIME_API"],
            "config":{{{config}}},
            "limits":{{"memory_bytes":67108864,"deadline_ns":1000000000,"callback_deadline_ns":50000000,
                      "output_bytes":1048576,"log_per_second":100}},
            "failure":{{"policy":"disable"}},"output":"run-directory"}}"#,
        wasm.display()
    )
}

/// A run file for HIP_RUNTIME_API with `stages` in the chain.
fn chain_run_file(dir: &Path, stages: &[String]) -> PathBuf {
    let extra = format!(
        r#","stages":[{}],"plugin_cache":"{}""#,
        stages.join(","),
        dir.join("cache").display()
    );
    run_file_with_buffer(dir, &["HIP_RUNTIME_API"], 65536, 4096, &extra)
}

fn api_stats_stage() -> String {
    stage("api-stats", &plugin("api-stats"), "")
}

/// `hipGetDeviceCount`'s row of `hip_api_stats.csv` (written by api-stats
/// in the process), as its call count.
fn stats_calls(dir: &Path) -> u64 {
    let rows = csv_rows(&dir.join("hip_api_stats.csv"));
    let row = rows
        .iter()
        .find(|r| r["Name"] == "hipGetDeviceCount")
        .unwrap_or_else(|| panic!("no hipGetDeviceCount in {}", dir.display()));
    row["Calls"].parse().unwrap()
}

fn summary(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("rocwasm-summary.txt")).unwrap_or_default()
}

#[test]
fn the_applications_signal_handlers_stay_its_own() {
    require_real_hip!();
    let dir = scratch("chain-signals");
    let exe = build_c("exit_paths", &dir);
    let run = chain_run_file(&dir, &[api_stats_stage()]);
    let child = traced(&exe, &run, None)
        .args(["signals", "3"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for sig in ["SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE"] {
        assert!(
            stdout.contains(&format!("{sig} default")),
            "{sig}: no handler from the tool or wasmtime:\n{stdout}"
        );
    }
    assert!(stdout.contains("caught own SIGSEGV"), "{stdout}");
    // The chain did run in this process.
    let o = out_dir(&dir, pid);
    assert_eq!(stats_calls(&o), 3);
    assert!(summary(&o).contains("[api-stats] HIP API statistics"));
}

#[test]
fn exit_from_a_worker_finishes_the_chain() {
    require_real_hip!();
    let dir = scratch("chain-worker-exit");
    let exe = build_c("exit_paths", &dir);
    let run = chain_run_file(&dir, &[api_stats_stage()]);
    let child = traced(&exe, &run, None)
        .args(["worker-exit", "200"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(stats_calls(&out_dir(&dir, pid)), 200);
}

#[test]
fn sigterm_finishes_the_chain() {
    require_real_hip!();
    let dir = scratch("chain-sigterm");
    let exe = build_c("exit_paths", &dir);
    let run = chain_run_file(&dir, &[api_stats_stage()]);
    let mut child = traced(&exe, &run, None)
        .args(["sigterm", "120"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM));
    assert_eq!(stats_calls(&out_dir(&dir, pid)), 120);
}

#[test]
fn a_forked_child_runs_no_plugins_and_leaves_the_parents_alone() {
    require_real_hip!();
    let dir = scratch("chain-fork");
    let exe = build_c("exit_paths", &dir);
    let run = chain_run_file(&dir, &[api_stats_stage()]);
    let child = traced(&exe, &run, None)
        .args(["fork", "10", "20", "30"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let child_pid: u32 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("child "))
        .expect("the child reports its pid")
        .trim()
        .parse()
        .unwrap();
    let parent = out_dir(&dir, pid);
    assert_eq!(
        stats_calls(&parent),
        10 + 30,
        "the parent's plugin saw its calls only"
    );
    let child_dir = out_dir(&dir, child_pid);
    assert!(!child_dir.join("hip_api_stats.csv").exists());
    let rows = csv_rows(&child_dir.join("hip_api_trace.csv"));
    assert_eq!(rows.len(), 20, "the child's own trace");
    assert!(
        summary(&child_dir).contains("plugins run in the parent process only"),
        "{}",
        summary(&child_dir)
    );
}

#[test]
fn a_trapping_stage_is_reported_and_the_others_carry_on() {
    require_real_hip!();
    let dir = scratch("chain-trap");
    let exe = build_c("exit_paths", &dir);
    let trap = stage(
        "trap",
        &plugin("trap"),
        r#""at":"deliver-batch","how":"unreachable""#,
    );
    let run = chain_run_file(&dir, &[trap, api_stats_stage()]);
    let child = traced(&exe, &run, None)
        .args(["worker-exit", "300"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(5), "the application's status");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.trim(), "worker made 300 calls");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("rocwasm: plugin `trap`"), "{stderr}");
    let o = out_dir(&dir, pid);
    assert!(summary(&o).contains("rocwasm: plugin `trap`"));
    assert_eq!(stats_calls(&o), 300, "api-stats saw every call");
}

#[test]
fn a_chain_that_cannot_start_leaves_profiling_on_without_plugins() {
    require_real_hip!();
    let dir = scratch("chain-missing");
    let exe = build_c("exit_paths", &dir);
    let missing = stage("ghost", &dir.join("no-such-plugin.wasm"), "");
    let run = chain_run_file(&dir, &[missing]);
    let child = traced(&exe, &run, None)
        .args(["worker-exit", "40"])
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(5), "the application's status");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rocwasm: the plugin chain cannot start") && stderr.contains("ghost"),
        "{stderr}"
    );
    // The sinks trace what the chain would have: every call is there.
    let o = out_dir(&dir, pid);
    let rows = csv_rows(&o.join("hip_api_trace.csv"));
    let calls = rows
        .iter()
        .filter(|r| r["Function"] == "hipGetDeviceCount")
        .count();
    assert_eq!(calls, 40);
    assert!(summary(&o).contains("the plugin chain cannot start"));
}
