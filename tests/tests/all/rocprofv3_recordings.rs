//! Replays of recordings made by AMD's rocprofv3 itself
//! (`examples/traces/rocprofv3/`, see its README: the example outputs
//! rocprofiler-sdk's documentation publishes, from real GPUs and several
//! ROCm versions), not rows typed into a test nor our own writers' files.
//!
//! Every claim is checked against the recorded files, read here with the
//! `csv` crate independently of rocwasm's reader:
//! - each file replays, and the trace file rocwasm writes back holds the
//!   same rows, every shared column equal (agent labels `Agent 4` read as
//!   their number, addresses as numbers); the one exception is named;
//! - the statistics of a genuine kernel trace equal those computed here;
//! - versioned HIP entry points keep their recorded names (issue 31.5);
//! - operations this build does not know keep their recorded names, and
//!   a published file's missing last line end is reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use rocwasm_tests::*;

fn recordings() -> PathBuf {
    workspace().join("examples/traces/rocprofv3")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A CSV file as its header and rows.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// A field as compared: `Agent 4` → `4`, `0x00ff` → `255`, text as is.
fn normal(column: &str, value: &str) -> String {
    let v = if column.ends_with("Agent_Id") {
        value.trim_start_matches(|c: char| !c.is_ascii_digit())
    } else {
        value
    };
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).map_or(v.to_string(), |n| n.to_string()),
        None => v.to_string(),
    }
}

/// Replays `file` (in `examples/traces/rocprofv3`) into `<tmp>/<out>`.
fn replay(file: &str, tmp: &Path, out: &str, extra: &[&str]) -> Output {
    let input = recordings().join(file);
    let mut args = vec!["replay", input.to_str().unwrap(), "-d", out];
    args.extend_from_slice(extra);
    rocwasm(&args, tmp)
}

/// The columns rocwasm does not write back as recorded, and why:
/// - `Domain`: rocprofv3 6.4+ names the API domains after the kinds with
///   arguments (`HIP_RUNTIME_API_EXT`); rocwasm's records carry none and
///   write the plain kind (`HIP_RUNTIME_API`), as earlier versions did;
/// - `Guid`: the rocpd module's export column, reported as not replayed.
const NOT_COMPARED: [&str; 2] = ["Domain", "Guid"];

#[test]
fn every_recording_replays_row_for_row() {
    let cases = [
        ("hip_trace.csv", "hip_api_trace.csv"),
        ("hip_runtime_trace.csv", "hip_api_trace.csv"),
        ("hip_compile_trace.csv", "hip_api_trace.csv"),
        ("hsa_api_trace.csv", "hsa_api_trace.csv"),
        ("hsa_core_api_trace.csv", "hsa_api_trace.csv"),
        ("kernel_trace.csv", "kernel_trace.csv"),
        ("kernel_trace_truncated.csv", "kernel_trace.csv"),
        ("marker_api_trace.csv", "marker_api_trace.csv"),
        ("memory_copy_trace.csv", "memory_copy_trace.csv"),
        ("memory_allocation_trace.csv", "memory_allocation_trace.csv"),
        ("rccl_trace.csv", "rccl_api_trace.csv"),
        ("rocdecode_api_trace.csv", "rocdecode_api_trace.csv"),
        ("rocjpeg_api_trace.csv", "rocjpeg_api_trace.csv"),
        ("rocpd-to-csv.csv", "hip_api_trace.csv"),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (i, (input, written)) in cases.into_iter().enumerate() {
        let dir = format!("out{i}");
        let out = replay(input, tmp.path(), &dir, &["--output-format", "csv"]);
        assert_success(&out, &format!("replaying {input}"));
        let (in_header, mut in_rows) = read_csv(&recordings().join(input));
        let (out_header, out_rows) = read_csv(&tmp.path().join(&dir).join(written));
        // Two published files lack their last line end (edited for the
        // documentation, it seems): a reader cannot tell such a line from
        // one cut short mid-number, so it is reported and not read.
        let bytes = std::fs::read(recordings().join(input)).unwrap();
        if bytes.last() != Some(&b'\n') {
            let (_, stderr) = text(&out);
            assert!(
                stderr.contains(&format!(
                    "{input}:{}: the last line has no line end",
                    in_rows.len() + 1
                )),
                "{input}: the unterminated last line is reported: {stderr}"
            );
            in_rows.pop();
        }
        assert_eq!(
            out_rows.len(),
            in_rows.len(),
            "{input}: rows written back to {written}"
        );
        let shared: Vec<(usize, usize, &str)> = in_header
            .iter()
            .enumerate()
            .filter(|(_, c)| !NOT_COMPARED.contains(&c.as_str()))
            .map(|(i, c)| {
                let o = out_header
                    .iter()
                    .position(|h| h == c)
                    .unwrap_or_else(|| panic!("{input}: {written} has no column {c}"));
                (i, o, c.as_str())
            })
            .collect();
        for (n, (a, b)) in in_rows.iter().zip(&out_rows).enumerate() {
            for &(i, o, column) in &shared {
                // A free names no agent in the recording: the replay gives
                // it the agent of the memory it frees, as a live run does
                // (checked in `frees_take_the_agent_of_their_allocation`).
                if column == "Agent_Id" && a[i].is_empty() {
                    continue;
                }
                assert_eq!(
                    normal(column, &b[o]),
                    normal(column, &a[i]),
                    "{input}: row {} column {column}",
                    n + 2
                );
            }
        }
    }
}

#[test]
fn frees_take_the_agent_of_their_allocation() {
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(
        "memory_allocation_trace.csv",
        tmp.path(),
        "out",
        &["--output-format", "csv"],
    );
    assert_success(&out, "replaying the allocations");
    let (_, input) = read_csv(&recordings().join("memory_allocation_trace.csv"));
    let (header, rows) = read_csv(&tmp.path().join("out/memory_allocation_trace.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (op, agent, address) = (col("Operation"), col("Agent_Id"), col("Address"));
    // address → the agent number of its allocation, from the recording.
    let mut allocated = BTreeMap::new();
    for r in &input {
        if r[0] == "MEMORY_ALLOCATION" && r[1] == "MEMORY_ALLOCATION_ALLOCATE" {
            allocated.insert(normal("Address", &r[4]), normal("Agent_Id", &r[2]));
        }
    }
    let frees: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[op] == "MEMORY_ALLOCATION_FREE")
        .collect();
    assert_eq!(frees.len(), 2, "{rows:?}");
    for r in frees {
        assert_eq!(
            Some(&r[agent]),
            allocated.get(&normal("Address", &r[address])),
            "{r:?}"
        );
    }
}

#[test]
fn kernel_statistics_of_a_recording_equal_the_ones_computed_here() {
    let tmp = tempfile::tempdir().unwrap();
    for file in ["kernel_trace.csv", "kernel_trace_truncated.csv"] {
        let out = replay(file, tmp.path(), file, &["--stats"]);
        assert_success(&out, file);
        let want = stats_of(&kernel_durations(&recordings().join(file)));
        assert_eq!(want.len(), 4, "{file}: four kernels");
        let got = read_stats(&tmp.path().join(file).join("kernel_stats.csv"));
        assert_same_stats(&got, &want, file);
    }
}

#[test]
fn versioned_hip_operations_keep_their_recorded_names() {
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(
        "hip_runtime_trace.csv",
        tmp.path(),
        "out",
        &["--stats", "--output-format", "csv,json,rocpd"],
    );
    assert_success(&out, "replaying hip_runtime_trace.csv");
    let (stdout, stderr) = text(&out);
    // A known operation of its own: nothing to report, nothing renamed.
    assert!(!stderr.contains("does not know"), "{stderr}");
    let name = "hipGetDevicePropertiesR0600";
    let recorded = |column: &str| {
        let (h, rows) = read_csv(&recordings().join("hip_runtime_trace.csv"));
        let c = h.iter().position(|x| x == column).unwrap();
        rows.iter().find(|r| r[1] == name).unwrap()[c]
            .parse::<u64>()
            .unwrap()
    };
    let duration = recorded("End_Timestamp") - recorded("Start_Timestamp");

    // The statistics (the host's and the api-stats plugin's tables).
    let stats = read_stats(&tmp.path().join("out/hip_api_stats.csv"));
    let row = stats
        .get(name)
        .unwrap_or_else(|| panic!("no {name} row in {stats:?}"));
    assert_eq!((row.calls, row.total), (1, duration));
    assert!(!stats.contains_key("hipGetDeviceProperties"), "{stats:?}");
    assert!(stdout.contains(name), "{stdout}");
    // The trace file, the JSON and the database.
    let trace = std::fs::read_to_string(tmp.path().join("out/hip_api_trace.csv")).unwrap();
    assert_eq!(trace.matches(&format!("\"{name}\"")).count(), 1, "{trace}");
    let json = std::fs::read_to_string(tmp.path().join("out/results.json")).unwrap();
    assert!(
        json.contains(&format!("\"{name}\"")),
        "no {name} in results.json"
    );
    let db = tmp.path().join("out/results.db");
    let q = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg(format!(
            "select count(*) from regions where name = '{name}'"
        ))
        .output()
        .expect("sqlite3");
    assert_eq!(String::from_utf8_lossy(&q.stdout).trim(), "1", "{q:?}");
}

#[test]
fn unknown_operations_keep_their_names_and_a_cut_line_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let out = replay("rccl_trace.csv", tmp.path(), "rccl", &[]);
    assert_success(&out, "replaying rccl_trace.csv");
    let (stdout, stderr) = text(&out);
    assert!(
        stderr.contains("21 record(s) of RCCL_API operations this build does not know, kept under new numbers with their recorded names"),
        "{stderr}"
    );
    let (_, input) = read_csv(&recordings().join("rccl_trace.csv"));
    let mut calls: BTreeMap<String, u64> = BTreeMap::new();
    for r in &input {
        *calls.entry(r[1].clone()).or_default() += 1;
    }
    let stats = read_stats(&tmp.path().join("rccl/rccl_api_stats.csv"));
    let got: BTreeMap<String, u64> = stats.iter().map(|(k, s)| (k.clone(), s.calls)).collect();
    assert_eq!(got, calls, "{stdout}");

    // The published scratch file lacks its last line end: the line is not
    // read, and that is said (and refused under --strict).
    let out = replay("scratch_memory_trace.csv", tmp.path(), "scratch", &[]);
    assert_success(&out, "replaying scratch_memory_trace.csv");
    let (stdout, stderr) = text(&out);
    assert!(
        stderr.contains("scratch_memory_trace.csv:3: the last line has no line end"),
        "{stderr}"
    );
    assert!(stdout.contains("1 file(s) cut short"), "{stdout}");
    let (_, rows) = read_csv(&tmp.path().join("scratch/scratch_memory_trace.csv"));
    assert_eq!(rows.len(), 1);
    let out = replay(
        "scratch_memory_trace.csv",
        tmp.path(),
        "strict",
        &["--strict"],
    );
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
}

/// A directory as rocprofv3 leaves it: traces beside counter values and
/// statistics. The traces and rocprofv3's own counter_collection.csv
/// replay (its counters come out as rocwasm writes them); the statistics
/// are named with their rows, as recomputed.
#[test]
fn the_files_beside_the_traces_are_counted_and_said() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for (from, to) in [
        ("kernel_trace.csv", "199_kernel_trace.csv"),
        ("counter_collection.csv", "199_counter_collection.csv"),
        ("hip_api_stats.csv", "199_hip_api_stats.csv"),
    ] {
        std::fs::copy(recordings().join(from), run.join(to)).unwrap();
    }
    let rows = |file: &str| read_csv(&recordings().join(file)).1.len();
    let out = rocwasm(&["replay", "run", "-d", "out", "-f", "csv"], tmp.path());
    assert_success(&out, "replaying the directory");
    let (stdout, stderr) = text(&out);
    assert!(!stderr.contains("counter collection"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "199_hip_api_stats.csv: {} row(s) of statistics (recomputed from the traces by --stats) not read",
            rows("hip_api_stats.csv")
        )),
        "{stderr}"
    );
    // AMD's published counter_collection.csv ends without a line end: its
    // last line reads as cut short, and is said.
    assert!(
        stderr.contains("199_counter_collection.csv:5: the last line has no line end"),
        "{stderr}"
    );
    let (kernels, counters) = (rows("kernel_trace.csv"), rows("counter_collection.csv") - 1);
    assert!(
        stdout.contains(&format!("{} replayed, 0 not mapped", kernels + counters)),
        "{stdout}"
    );
    // AMD's rows, written back: the same kernels, counters and values.
    let (header, mut amd) = read_csv(&recordings().join("counter_collection.csv"));
    amd.pop();
    let (header2, ours) = read_csv(&tmp.path().join("out/counter_collection.csv"));
    assert_eq!(header, header2);
    let col = |h: &[String], name: &str| h.iter().position(|c| c == name).unwrap();
    let pick = |h: &[String], rows: &[Vec<String>]| -> Vec<Vec<String>> {
        let cols = [
            "Dispatch_Id",
            "Kernel_Name",
            "Grid_Size",
            "Workgroup_Size",
            "Counter_Name",
            "Counter_Value",
            "Start_Timestamp",
        ];
        let mut out: Vec<Vec<String>> = rows
            .iter()
            .map(|r| cols.iter().map(|c| r[col(h, c)].clone()).collect())
            .collect();
        out.sort();
        out
    };
    assert_eq!(pick(&header, &amd), pick(&header2, &ours));
    // The cut line is a loss --strict refuses.
    let out = rocwasm(&["replay", "run", "--strict", "-d", "strict"], tmp.path());
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
}
