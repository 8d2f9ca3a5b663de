//! rocprofv3's `-S/--summary`, `--summary-groups`, `--summary-output-file`
//! and `-u/--summary-units` on the simulated runtime (and one replay): the
//! summaries' calls and totals equal an independent count of the trace
//! files the same run wrote.
//!
//! Needs `cargo xtask build-sim`.

use std::collections::BTreeMap;
use std::path::Path;

use rocwasm_tests::*;

fn multi_kernel() -> String {
    sim_dir().join("bin/multi_kernel").to_str().unwrap().into()
}

/// `rocwasm run --sim FLAGS -d OUT -- multi_kernel`; (stdout, stderr).
fn run(cwd: &Path, out: &str, flags: &[&str]) -> (String, String) {
    let app = multi_kernel();
    let mut args = vec!["run", "--sim"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-d", out, "--", &app]);
    let o = rocwasm(&args, cwd);
    assert_success(&o, &args.join(" "));
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The tables of a summary text: label → rows, each row its cells.
fn tables(text: &str) -> BTreeMap<String, Vec<Vec<String>>> {
    let mut out: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    let mut label = None;
    for line in text.lines() {
        if let Some(l) = line
            .strip_prefix("ROCPROFV3 ")
            .and_then(|l| l.strip_suffix(':'))
        {
            label = Some(l.to_string());
            out.entry(l.to_string()).or_default();
        } else if let (Some(l), Some(row)) = (&label, line.strip_prefix("| ")) {
            if !row.starts_with("NAME ") {
                let cells = row.split('|').map(|c| c.trim().to_string()).collect();
                out.get_mut(l).unwrap().push(cells);
            }
        } else if !line.starts_with('|') && !line.is_empty() {
            label = None;
        }
    }
    out
}

/// Per domain of a summary table: (calls, total duration) summed over its
/// rows; durations read as `f64` in the table's unit.
fn per_domain(rows: &[Vec<String>]) -> BTreeMap<String, (u64, f64)> {
    let mut out: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for r in rows {
        let e = out.entry(r[1].clone()).or_default();
        e.0 += r[2].parse::<u64>().unwrap();
        e.1 += r[3].parse::<f64>().unwrap();
    }
    out
}

/// (rows, Σ End − Start in ns) of a trace CSV.
fn trace_totals(path: &Path) -> (u64, u64) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let (s, e) = (col("Start_Timestamp"), col("End_Timestamp"));
    let (mut n, mut total) = (0, 0);
    for rec in r.records() {
        let rec = rec.unwrap();
        let (a, b): (u64, u64) = (rec[s].parse().unwrap(), rec[e].parse().unwrap());
        n += 1;
        total += b.saturating_sub(a);
    }
    (n, total)
}

/// `-S`: one table of every traced domain, on stderr; its calls and
/// nanoseconds per domain are the trace files' rows and durations.
#[test]
fn summary_totals_equal_the_trace_files() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let (_, stderr) = run(
        tmp.path(),
        "out",
        &["--kernel-trace", "--hip-trace", "--memory-copy-trace", "-S"],
    );
    let t = tables(&stderr);
    let rows = t
        .get("SUMMARY")
        .unwrap_or_else(|| panic!("no ROCPROFV3 SUMMARY:\n{stderr}"));
    let got = per_domain(rows);
    let dir = tmp.path().join("out");
    for (domain, file) in [
        ("KERNEL_DISPATCH", "kernel_trace.csv"),
        ("HIP_API", "hip_api_trace.csv"),
        ("MEMORY_COPY", "memory_copy_trace.csv"),
    ] {
        let (n, ns) = trace_totals(&dir.join(file));
        assert!(n > 0, "{file}");
        let (calls, total) = got[domain];
        assert_eq!(
            (calls, total as u64),
            (n, ns),
            "{domain} vs {file}:\n{stderr}"
        );
    }
    assert_eq!(got.len(), 3, "only the traced domains: {got:?}");
    let percent: f64 = rows.iter().map(|r| r[5].parse::<f64>().unwrap()).sum();
    assert!((percent - 100.0).abs() < 0.01, "{percent}");
    // Busiest first.
    let totals: Vec<u64> = rows.iter().map(|r| r[3].parse().unwrap()).collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{totals:?}");
    // Per kernel: the dispatches of each name.
    let mut per_kernel: BTreeMap<String, u64> = BTreeMap::new();
    let mut r = csv::Reader::from_path(dir.join("kernel_trace.csv")).unwrap();
    let name = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "Kernel_Name")
        .unwrap();
    for rec in r.records() {
        *per_kernel
            .entry(rec.unwrap()[name].to_string())
            .or_default() += 1;
    }
    let summarized: BTreeMap<String, u64> = rows
        .iter()
        .filter(|r| r[1] == "KERNEL_DISPATCH")
        .map(|r| (r[0].clone(), r[2].parse().unwrap()))
        .collect();
    assert_eq!(summarized, per_kernel);
    // No summary without the option.
    let (_, plain) = run(tmp.path(), "plain", &["--kernel-trace"]);
    assert!(!plain.contains("ROCPROFV3"), "{plain}");
}

/// `--summary-groups`: a table per expression, of the domains it matches;
/// `-u usec` scales the times; `--summary-output-file NAME` writes
/// `NAME.txt` in the output directory (after `-o`'s prefix).
#[test]
fn summary_groups_units_and_output_file() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let (stdout, stderr) = run(
        tmp.path(),
        "out",
        &[
            "--kernel-trace",
            "--hip-trace",
            "--memory-copy-trace",
            "--summary-groups",
            "KERNEL_DISPATCH|MEMORY_COPY",
            ".*_API",
            "-u",
            "usec",
            "--summary-output-file",
            "sums",
            "-o",
            "run",
        ],
    );
    assert!(!stderr.contains("ROCPROFV3"), "went to the file: {stderr}");
    let dir = tmp.path().join("out");
    let file = dir.join("run_sums.txt");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    assert!(
        stdout.contains(&format!("wrote {}", file.display())),
        "{stdout}"
    );
    let t = tables(&text);
    assert_eq!(
        t.keys().collect::<Vec<_>>(),
        ["HIP_API SUMMARY", "KERNEL_DISPATCH + MEMORY_COPY SUMMARY"],
        "{text}"
    );
    assert!(text.contains("DURATION (usec)"), "{text}");
    let group = per_domain(&t["KERNEL_DISPATCH + MEMORY_COPY SUMMARY"]);
    for (domain, f) in [
        ("KERNEL_DISPATCH", "run_kernel_trace.csv"),
        ("MEMORY_COPY", "run_memory_copy_trace.csv"),
    ] {
        let (n, ns) = trace_totals(&dir.join(f));
        let (calls, usec) = group[domain];
        assert_eq!(calls, n, "{domain}");
        assert!(
            (usec * 1000.0 - ns as f64).abs() <= 1.0 + ns as f64 * 1e-9,
            "{domain}: {usec} usec vs {ns} ns"
        );
    }
    assert_eq!(
        per_domain(&t["HIP_API SUMMARY"])["HIP_API"].0,
        trace_totals(&dir.join("run_hip_api_trace.csv")).0
    );
}

/// `[summary]` in a chain file, to stdout; and a replay prints the same
/// kind of summary of its recording.
#[test]
fn a_chain_files_summary_table_and_a_replay() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain.toml");
    std::fs::write(
        &chain,
        "version = 1\n[output]\nformats = [\"csv\"]\ntrace = [\"kernel_dispatch\"]\n[summary]\nall = true\noutput_file = \"stdout\"\n",
    )
    .unwrap();
    let (stdout, _) = run(tmp.path(), "out", &["-c", chain.to_str().unwrap()]);
    let rows = &tables(&stdout)["SUMMARY"];
    let (n, ns) = trace_totals(&tmp.path().join("out/kernel_trace.csv"));
    assert_eq!(
        per_domain(rows)["KERNEL_DISPATCH"],
        (n, ns as f64),
        "{stdout}"
    );

    let sample = workspace().join("examples/traces/sample");
    let out = rocwasm(
        &[
            "replay",
            sample.to_str().unwrap(),
            "-d",
            "replayed",
            "--output-format",
            "csv",
            "-S",
            "--summary-output-file",
            "stdout",
        ],
        tmp.path(),
    );
    assert_success(&out, "replay -S");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let got = per_domain(&tables(&stdout)["SUMMARY"]);
    let (n, ns) = trace_totals(&tmp.path().join("replayed/kernel_trace.csv"));
    assert_eq!(got["KERNEL_DISPATCH"], (n, ns as f64), "{stdout}");
}

/// Bad values: one `error:` line naming the option and the value, status 2.
#[test]
fn bad_summary_options_are_one_error() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = multi_kernel();
    for (flags, want) in [
        (&["--kernel-trace", "-u", "hour"][..], "error: bad --summary-units `hour`: not a unit"),
        (
            &["--kernel-trace", "--summary-groups", "*._API"][..],
            "error: bad --summary-groups `*._API`: not a regular expression",
        ),
        (
            &["--kernel-trace", "-S", "--summary-output-file", "a/b"][..],
            "error: bad --summary-output-file `a/b`: a file name cannot contain `/`",
        ),
        (&["--stats", "-S"][..], "error: -S/--summary and --summary-groups summarize the traced domains, and nothing is traced"),
    ] {
        let mut args = vec!["run", "--sim"];
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
        "version = 1\n[output]\ntrace = [\"kernel_dispatch\"]\n[summary]\nall = true\nunits = \"days\"\n",
    );
    assert!(
        stderr.contains("bad.toml:6:")
            && stderr.contains("bad `units` in [summary] (rocprofv3's --summary-units) `days`"),
        "{stderr}"
    );
}
