//! rocprofv3's `-P/--collection-period` (with `--collection-period-unit`)
//! on the simulated runtime: a record is kept when it lies inside a
//! collection window counted from the run's start (`results.json`'s
//! `init_time`, the session start), in every output and the chain.
//!
//! The app is `multi_kernel` (8 threads × `vector_add`, `square`, `scale`,
//! `block_sum`: 32 dispatches, and their HIP calls). A live run's timing is
//! not ours to choose, so the exact window is shown on a replay of a live
//! recording (its timestamps are the run's); the live runs show a window
//! that excludes the whole run and one that covers it, each against the
//! run's start.
//!
//! The windows are checked on the HIP API records and the kernel
//! dispatches: the simulated runtime reports dispatch times in the system
//! domain (the host's `CLOCK_BOOTTIME`, as ROCr does), so each kernel lies
//! after the session start, inside the window of the launch it belongs to.
//!
//! Needs `cargo xtask build-sim` and `cargo xtask build-plugins`.

use std::path::Path;

use rocwasm_tests::*;

fn multi_kernel() -> String {
    sim_dir().join("bin/multi_kernel").to_str().unwrap().into()
}

/// `(start, end)` of every row of a trace CSV, sorted; none when
/// the file was not written.
fn spans(path: &Path) -> Vec<(u64, u64)> {
    if !path.exists() {
        return Vec::new();
    }
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (s, e) = (col("Start_Timestamp"), col("End_Timestamp"));
    let mut out: Vec<(u64, u64)> = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            (rec[s].parse().unwrap(), rec[e].parse().unwrap())
        })
        .collect();
    out.sort();
    out
}

/// The session start a run's `results.json` records.
fn init_time(dir: &Path) -> u64 {
    let text = std::fs::read_to_string(dir.join("results.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["rocprofiler-sdk-tool"][0]["metadata"]["init_time"]
        .as_u64()
        .unwrap()
}

/// `rocwasm run --sim --kernel-trace --stats --output-format csv,json` with
/// `flags`, into `cwd/out`; stdout and stderr.
fn run(cwd: &Path, out: &str, flags: &[&str]) -> String {
    plugins_dir(&["kernel-stats"]);
    let app = multi_kernel();
    let mut args = vec![
        "run",
        "--sim",
        "--kernel-trace",
        "--hip-trace",
        "--stats",
        "--output-format",
        "csv,json",
        "-d",
        out,
    ];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", &app]);
    let o = rocwasm(&args, cwd);
    assert_success(&o, &args.join(" "));
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Dispatches the chain's `kernel-stats` stage counted.
fn chain_calls(dir: &Path) -> u64 {
    let path = dir.join("kernel_stats.csv");
    if !path.exists() {
        return 0;
    }
    read_stats(&path).values().map(|s| s.calls).sum()
}

#[test]
fn a_live_period_keeps_only_records_inside_its_window() {
    let tmp = tempfile::tempdir().unwrap();
    // Collection starts an hour after the application: nothing is kept.
    let text = run(tmp.path(), "late", &["-P", "3600:1:1"]);
    let late = tmp.path().join("late");
    assert_eq!(spans(&late.join("kernel_trace.csv")), []);
    assert_eq!(spans(&late.join("hip_api_trace.csv")), []);
    assert_eq!(chain_calls(&late), 0, "the chain sees what the sinks see");
    let dropped = text
        .lines()
        .find_map(|l| l.split("collection period kept 0 of ").nth(1))
        .unwrap_or_else(|| panic!("no collection line: {text}"));
    assert!(
        dropped.contains("outside --collection-period `3600:1:1`"),
        "{text}"
    );
    // The first hour, in the unit rocprofv3 names: every HIP call of a run
    // without the option, each inside the window counted from the session
    // start.
    run(tmp.path(), "all", &[]);
    let all = spans(&tmp.path().join("all/hip_api_trace.csv"));
    let text = run(
        tmp.path(),
        "hour",
        &[
            "--collection-period",
            "0:1:0",
            "--collection-period-unit",
            "hour",
        ],
    );
    let hour = tmp.path().join("hour");
    let t0 = init_time(&hour);
    let kept = spans(&hour.join("hip_api_trace.csv"));
    assert!(!all.is_empty());
    assert_eq!(kept.len(), all.len(), "{text}");
    let close = t0 + 3_600_000_000_000;
    assert!(
        kept.iter().all(|&(s, e)| s >= t0 && e <= close),
        "{kept:?} from {t0}"
    );
    // Every one of the 32 dispatches, in the trace and in the chain.
    let kernels = spans(&hour.join("kernel_trace.csv"));
    assert_eq!(kernels.len(), 32, "{text}");
    assert!(
        kernels
            .iter()
            .all(|&(s, e)| t0 <= s && s <= e && e <= close),
        "{kernels:?} from {t0}"
    );
    assert_eq!(chain_calls(&hour), 32, "{text}");
    assert!(text.contains("collection period kept "), "{text}");
}

#[test]
fn a_replay_keeps_the_recordings_records_inside_the_window() {
    let tmp = tempfile::tempdir().unwrap();
    run(tmp.path(), "rec", &[]);
    let rec = tmp.path().join("rec");
    let t0 = init_time(&rec);
    let all = spans(&rec.join("hip_api_trace.csv"));
    assert!(all.len() > 40, "{all:?}");
    // A window from the 11th HIP call's start to the 30th's end, in ns from
    // the recorded start.
    let (open, close) = (all[10].0, all[29].1.max(all[10].0 + 1));
    let period = format!("{}:{}:1", open - t0, close - open);
    let want: Vec<(u64, u64)> = all
        .iter()
        .copied()
        .filter(|&(s, e)| s >= open && s < close && e <= close)
        .collect();
    assert!(!want.is_empty() && want.len() < all.len(), "{want:?}");
    let out = rocwasm(
        &[
            "replay",
            rec.join("results.json").to_str().unwrap(),
            "-P",
            &period,
            "--collection-period-unit",
            "nsec",
            "--output-format",
            "csv",
            "-d",
            "replayed",
        ],
        tmp.path(),
    );
    assert_success(&out, "replay");
    assert_eq!(spans(&tmp.path().join("replayed/hip_api_trace.csv")), want);
    let in_window = |spans: Vec<(u64, u64)>| -> Vec<(u64, u64)> {
        spans
            .into_iter()
            .filter(|&(s, e)| s >= open && s < close && e <= close)
            .collect()
    };
    assert_eq!(
        spans(&tmp.path().join("replayed/kernel_trace.csv")),
        in_window(spans(&rec.join("kernel_trace.csv")))
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("collection period kept "), "{stdout}");
    assert!(
        stdout.contains(&format!("outside --collection-period `{period}`")),
        "{stdout}"
    );
}

/// `[collection]` in a chain file; a flag replaces the file's value.
#[test]
fn a_chain_files_collection_table_gates_as_the_flag_does() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain.toml");
    std::fs::write(
        &chain,
        "version = 1\n\n[output]\nformats = [\"csv\"]\ntrace = [\"kernel_dispatch\", \"hip_runtime_api\"]\n\n\
         [collection]\nperiod = \"1:1:1\"\nperiod_unit = \"hour\"\n",
    )
    .unwrap();
    let app = multi_kernel();
    let rows = |extra: &[&str], out: &str| {
        let mut args = vec!["run", "--sim", "-c", chain.to_str().unwrap(), "-d", out];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", &app]);
        let o = rocwasm(&args, tmp.path());
        assert_success(&o, &args.join(" "));
        spans(&tmp.path().join(out).join("hip_api_trace.csv")).len()
    };
    assert_eq!(rows(&[], "file"), 0);
    assert!(rows(&["-P", "0:1:0"], "flag") > 0);
}

/// Bad values: one `error:` line naming the option and the value, status 2,
/// before the application starts.
#[test]
fn bad_values_are_one_error_naming_the_option() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = multi_kernel();
    for (flags, want) in [
        (
            &["-P", "1:2"][..],
            "error: bad --collection-period `1:2`: `1:2` is not START:STOP:REPEAT",
        ),
        (
            &["--collection-period", "1:0:0"][..],
            "error: bad --collection-period `1:0:0`: `1:0:0` collects for no time",
        ),
        (
            &["-P", "a:1:1"][..],
            "error: bad --collection-period `a:1:1`: `a` in `a:1:1` is not a whole number",
        ),
        (
            &["-P", "0:1:0", "--collection-period-unit", "days"][..],
            "error: bad --collection-period-unit `days`: not a unit",
        ),
    ] {
        let mut args = vec!["run", "--sim", "--kernel-trace"];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", &app]);
        let out = rocwasm(&args, tmp.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.starts_with(want), "{flags:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    let stderr = check_bad_chain(
        tmp.path(),
        "version = 1\n[output]\ntrace = [\"kernel_dispatch\"]\n[collection]\nperiod = \"1:x:0\"\n",
    );
    assert!(
        stderr.contains("bad.toml:5:")
            && stderr
                .contains("bad `period` in [collection] (rocprofv3's --collection-period) `1:x:0`"),
        "{stderr}"
    );
}
