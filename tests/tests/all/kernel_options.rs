//! rocprofv3's kernel options on the simulated runtime, each shown in
//! every output of a live `rocwasm run --sim --kernel-trace --stats
//! --output-format csv,json,rocpd,pftrace -- multi_kernel` (8 threads,
//! each launching `vector_add`, `square`, `scale`, `block_sum` once inside
//! a roctx range `kernels`: 32 dispatches, 8 per kernel):
//!
//! - `kernel_trace.csv` (CSV), `results.json` (JSON), `results.db` (rocpd,
//!   joined as rocpd's views join), `results.pftrace` (Perfetto: the names
//!   its strings hold);
//! - `kernel_stats.csv`, written by the chain's `kernel-stats` stage (the
//!   chain sees what the sinks see), and the summary line that counts
//!   what the selection dropped;
//! - the same options from a chain file's `[kernels]` table, and bad values
//!   as one error naming the option, status 2.
//!
//! Needs `cargo xtask build-sim` and `cargo xtask build-plugins`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rocwasm_tests::*;

/// Dispatches per kernel name, as each output has them.
#[derive(Debug)]
struct Seen {
    csv: BTreeMap<String, u64>,
    json: BTreeMap<String, u64>,
    rocpd: BTreeMap<String, u64>,
    /// `kernel_stats.csv` of the chain's `kernel-stats` stage: Calls per name.
    chain: BTreeMap<String, u64>,
    pftrace: Vec<u8>,
    /// stdout and stderr of `rocwasm run`.
    text: String,
}

impl Seen {
    /// Every output holds exactly `want` (name → dispatches); Perfetto's
    /// strings name each kept kernel and none of `absent`.
    fn assert_all(&self, want: &[(&str, u64)], absent: &[&str]) {
        let want: BTreeMap<String, u64> = want.iter().map(|(n, c)| (n.to_string(), *c)).collect();
        assert_eq!(self.csv, want, "kernel_trace.csv");
        assert_eq!(self.json, want, "results.json");
        assert_eq!(self.rocpd, want, "results.db");
        assert_eq!(self.chain, want, "kernel_stats.csv of the chain");
        for name in want.keys() {
            assert!(
                contains(&self.pftrace, name),
                "results.pftrace lacks {name}"
            );
        }
        for name in absent {
            assert!(!contains(&self.pftrace, name), "results.pftrace has {name}");
        }
    }
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn multi_kernel() -> String {
    sim_dir().join("bin/multi_kernel").to_str().unwrap().into()
}

/// `rocwasm run --sim --kernel-trace --stats` with every format, `flags`
/// added, in a fresh directory; what each output holds.
fn run(flags: &[&str]) -> Seen {
    sim_dir();
    plugins_dir(&["kernel-stats"]);
    let app = multi_kernel();
    let tmp = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "--sim",
        "--kernel-trace",
        "--stats",
        "--output-format",
        "csv,json,rocpd,pftrace",
        "-d",
        "out",
    ];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--", &app]);
    let out = rocwasm(&args, tmp.path());
    assert_success(&out, &format!("rocwasm {}", args.join(" ")));
    let dir = tmp.path().join("out");
    Seen {
        csv: kernel_durations(&dir.join("kernel_trace.csv"))
            .into_iter()
            .map(|(n, d)| (n, d.len() as u64))
            .collect(),
        json: json_counts(&dir.join("results.json")),
        rocpd: rocpd_counts(&dir.join("results.db")),
        chain: read_stats(&dir.join("kernel_stats.csv"))
            .into_iter()
            .map(|(n, s)| (n, s.calls))
            .collect(),
        pftrace: std::fs::read(dir.join("results.pftrace")).unwrap(),
        text: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// Dispatches per kernel name in a rocprofv3 `results.json`.
fn json_counts(path: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tool = &doc["rocprofiler-sdk-tool"][0];
    let names: BTreeMap<u64, String> = tool["kernel_symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["kernel_id"].as_u64().unwrap(),
                k["formatted_kernel_name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut counts = BTreeMap::new();
    for d in tool["buffer_records"]["kernel_dispatch"]
        .as_array()
        .unwrap()
    {
        let id = d["dispatch_info"]["kernel_id"].as_u64().unwrap();
        *counts.entry(names[&id].clone()).or_insert(0) += 1;
    }
    counts
}

/// Dispatches per kernel name in a rocpd database, joined as rocpd's
/// `kernels` view joins symbols.
fn rocpd_counts(db: &Path) -> BTreeMap<String, u64> {
    sqlite3(
        db,
        "SELECT S.display_name, count(*) FROM rocpd_kernel_dispatch K \
         JOIN rocpd_info_kernel_symbol S ON S.id = K.kernel_id AND S.guid = K.guid \
         GROUP BY 1 ORDER BY 1;",
    )
    .lines()
    .map(|l| {
        let (name, n) = l.rsplit_once('|').unwrap();
        (name.to_string(), n.parse().unwrap())
    })
    .collect()
}

const VECTOR_ADD: &str = "vector_add(float const*, float const*, float*, int)";
const SQUARE: &str = "square(float const*, float*, int)";
const SCALE: &str = "scale(float*, float, int)";
const BLOCK_SUM: &str = "block_sum(float const*, float*, int)";

#[test]
fn without_options_every_output_has_all_32_dispatches() {
    let seen = run(&[]);
    seen.assert_all(
        &[(BLOCK_SUM, 8), (SCALE, 8), (SQUARE, 8), (VECTOR_ADD, 8)],
        &[],
    );
    assert!(!seen.text.contains("kernel selection"), "{}", seen.text);
}

#[test]
fn include_regex_keeps_only_matching_kernels_in_every_output() {
    let seen = run(&["--kernel-include-regex", "^(square|scale)"]);
    seen.assert_all(&[(SCALE, 8), (SQUARE, 8)], &["vector_add", "block_sum"]);
    assert!(
        seen.text.contains(
            "kernel selection kept 16 of 32 kernel dispatch(es); dropped 16 not matching \
             --kernel-include-regex `^(square|scale)`"
        ),
        "{}",
        seen.text
    );
}

#[test]
fn exclude_regex_drops_matching_kernels_from_every_output() {
    let seen = run(&["--kernel-exclude-regex", "sum|add"]);
    seen.assert_all(&[(SCALE, 8), (SQUARE, 8)], &["vector_add", "block_sum"]);
    assert!(
        seen.text
            .contains("dropped 16 matching --kernel-exclude-regex `sum|add`"),
        "{}",
        seen.text
    );
}

#[test]
fn iteration_range_keeps_those_iterations_of_each_kernel() {
    let seen = run(&[
        "--kernel-iteration-range",
        "[2,5-7]",
        "--kernel-exclude-regex",
        "^block",
    ]);
    seen.assert_all(&[(SCALE, 4), (SQUARE, 4), (VECTOR_ADD, 4)], &["block_sum"]);
    assert!(
        seen.text.contains(
            "kept 12 of 32 kernel dispatch(es); dropped 8 matching --kernel-exclude-regex \
             `^block`, 12 outside --kernel-iteration-range `[2,5-7]`"
        ),
        "{}",
        seen.text
    );
}

#[test]
fn truncate_kernels_cuts_names_before_the_argument_list() {
    let seen = run(&["-T"]);
    seen.assert_all(
        &[
            ("block_sum", 8),
            ("scale", 8),
            ("square", 8),
            ("vector_add", 8),
        ],
        &["vector_add(", "square("],
    );
    // The name filters see the names the outputs write.
    let seen = run(&["--truncate-kernels", "--kernel-include-regex", "^scale$"]);
    seen.assert_all(&[("scale", 8)], &["square"]);
}

#[test]
fn mangled_kernels_keeps_the_code_objects_names() {
    let seen = run(&["-M"]);
    seen.assert_all(
        &[
            ("_Z10vector_addPKfS0_Pfi", 8),
            ("_Z5scalePffi", 8),
            ("_Z6squarePKfPfi", 8),
            ("_Z9block_sumPKfPfi", 8),
        ],
        &["vector_add(", "scale("],
    );
}

#[test]
fn kernel_rename_names_dispatches_after_their_roctx_range() {
    let seen = run(&["--kernel-rename"]);
    // Every launch is inside `roctxRangePushA("kernels")`.
    seen.assert_all(&[("kernels", 32)], &[VECTOR_ADD, SQUARE]);
    assert!(
        seen.text
            .contains("32 renamed after their roctx range (--kernel-rename)"),
        "{}",
        seen.text
    );
}

/// The same options from a chain file; a flag replaces the file's value.
#[test]
fn a_chain_files_kernels_table_selects_as_the_flags_do() {
    sim_dir();
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let chain = tmp.path().join("chain.toml");
    std::fs::write(
        &chain,
        r#"version = 1

[output]
formats = ["csv"]
trace = ["kernel_dispatch"]

[kernels]
include_regex = "^(square|scale)"
iteration_range = "[1-3]"
truncate = true
"#,
    )
    .unwrap();
    let app = multi_kernel();
    let chain_arg = chain.to_str().unwrap();
    let rows = |extra: &[&str], out: &str| -> BTreeMap<String, usize> {
        let mut args = vec!["run", "--sim", "-c", chain_arg, "-d", out];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", &app]);
        let o = rocwasm(&args, tmp.path());
        assert_success(&o, &args.join(" "));
        kernel_durations(&tmp.path().join(out).join("kernel_trace.csv"))
            .into_iter()
            .map(|(n, d)| (n, d.len()))
            .collect()
    };
    assert_eq!(
        rows(&[], "file"),
        [("scale".to_string(), 3), ("square".to_string(), 3)].into()
    );
    assert_eq!(
        rows(&["--kernel-include-regex", "vector"], "flag"),
        [("vector_add".to_string(), 3)].into()
    );
}

/// Bad values: one `error:` line naming the option and the value, status 2,
/// before the application starts.
#[test]
fn bad_values_are_one_error_naming_the_option() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = multi_kernel();
    for (flag, value, want) in [
        (
            "--kernel-include-regex",
            "(unclosed",
            "error: bad --kernel-include-regex `(unclosed`: not a regular expression",
        ),
        (
            "--kernel-exclude-regex",
            "[z-a]",
            "error: bad --kernel-exclude-regex `[z-a]`: not a regular expression",
        ),
        (
            "--kernel-iteration-range",
            "[3-1]",
            "error: bad --kernel-iteration-range `[3-1]`: the span `3-1` ends before it starts",
        ),
        (
            "--kernel-iteration-range",
            "[1-x]",
            "error: bad --kernel-iteration-range `[1-x]`: `x` is not an iteration number",
        ),
    ] {
        let out = rocwasm(
            &["run", "--sim", "--kernel-trace", flag, value, "--", &app],
            tmp.path(),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.starts_with(want), "{flag} {value}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("DEVICES"),
            "the application must not start"
        );
    }
    let stderr = check_bad_chain(
        tmp.path(),
        "version = 1\n[output]\ntrace = [\"kernel_dispatch\"]\n[kernels]\ninclude_regex = \"(\"\n",
    );
    assert!(
        stderr.contains("bad.toml:5:")
            && stderr.contains(
                "bad `include_regex` in [kernels] (rocprofv3's --kernel-include-regex) `(`"
            ),
        "{stderr}"
    );
}

/// A replay passes the recording through the same selection.
#[test]
fn a_replay_selects_as_a_live_run_does() {
    let seen_dir: PathBuf;
    let tmp = tempfile::tempdir().unwrap();
    {
        sim_dir();
        let app = multi_kernel();
        let out = rocwasm(
            &["run", "--sim", "--kernel-trace", "-d", "rec", "--", &app],
            tmp.path(),
        );
        assert_success(&out, "recording");
        seen_dir = tmp.path().join("rec");
    }
    let out = rocwasm(
        &[
            "replay",
            seen_dir.to_str().unwrap(),
            "--kernel-include-regex",
            "^vector",
            "--kernel-iteration-range",
            "[1-2]",
            "-T",
            "-d",
            "replayed",
        ],
        tmp.path(),
    );
    assert_success(&out, "replay");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("kernel selection kept 2 of 32 kernel dispatch(es)"),
        "{stdout}"
    );
    let counts: BTreeMap<String, usize> =
        kernel_durations(&tmp.path().join("replayed/kernel_trace.csv"))
            .into_iter()
            .map(|(n, d)| (n, d.len()))
            .collect();
    assert_eq!(counts, [("vector_add".to_string(), 2)].into());
}
