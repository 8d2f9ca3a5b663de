//! Markers as rocprofv3's `--marker-trace` records them: what the
//! application marked (`MARKER_CORE_RANGE_API`), not the roctx calls. A C
//! program on the simulated runtime marks twice, nests push/pop ranges on
//! two threads, runs a start/stop range across them and leaves one range
//! open; every output holds one record per mark and per closed range, named
//! by its message, from its push to its pop; the open range is counted in
//! the run's summary; a replay of the CSV gives the same rows.
//!
//! Needs `cargo xtask build-sim` and a C compiler.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rocwasm_tests::*;

const PROGRAM: &str = r#"
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
typedef int hipError_t;
extern hipError_t hipMalloc(void** p, size_t n);
extern hipError_t hipFree(void* p);
extern void roctxMarkA(const char* message);
extern int roctxRangePushA(const char* message);
extern int roctxRangePop(void);
extern unsigned long roctxRangeStartA(const char* message);
extern void roctxRangeStop(unsigned long id);

static unsigned long across;

static void* worker(void* arg) {
    (void) arg;
    roctxRangePushA("worker outer");
    roctxRangePushA("worker inner");
    roctxRangePop();
    roctxRangePop();
    roctxRangeStop(across);
    return NULL;
}

int main(void) {
    void* p = NULL;
    if (hipMalloc(&p, 64) != 0) return 1;
    hipFree(p);
    roctxMarkA("mark one");
    roctxRangePushA("main outer");
    roctxRangePushA("main inner");
    roctxMarkA("mark two");
    roctxRangePop();
    across = roctxRangeStartA("across threads");
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    roctxRangePop();
    roctxRangePushA("left open");
    puts("MARKERS DONE");
    return 0;
}
"#;

/// The program, built against the simulated HIP and roctx.
pub(super) fn program(dir: &Path) -> PathBuf {
    let source = dir.join("markers.c");
    std::fs::write(&source, PROGRAM).unwrap();
    let app = dir.join("markers");
    let lib = sim_dir().join("lib");
    super::native_tools::run_ok(
        Command::new(super::native_tools::program("cc", "gcc"))
            .arg(&source)
            .arg("-o")
            .arg(&app)
            .arg(lib.join("libamdhip64.so.5"))
            .arg(lib.join("libroctx64.so.4"))
            .arg(format!("-Wl,-rpath-link,{}", lib.display()))
            .arg("-lpthread")
            .env_remove("LD_LIBRARY_PATH"),
        "cc markers.c <the simulated libamdhip64 and libroctx64>",
    );
    app
}

/// One marker record as a file shows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Marker {
    name: String,
    thread: u64,
    start: u64,
    end: u64,
}

/// The MARKER_CORE_RANGE_API rows of a `marker_api_trace.csv`, by name.
fn csv_markers(path: &Path) -> BTreeMap<String, Vec<Marker>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (d, f, t, s, e) = (
        col("Domain"),
        col("Function"),
        col("Thread_Id"),
        col("Start_Timestamp"),
        col("End_Timestamp"),
    );
    let mut out: BTreeMap<String, Vec<Marker>> = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        assert_eq!(&rec[d], "MARKER_CORE_RANGE_API", "{rec:?}");
        out.entry(rec[f].to_string()).or_default().push(Marker {
            name: rec[f].to_string(),
            thread: rec[t].parse().unwrap(),
            start: rec[s].parse().unwrap(),
            end: rec[e].parse().unwrap(),
        });
    }
    out
}

const MARKS: [&str; 2] = ["mark one", "mark two"];
const RANGES: [&str; 5] = [
    "across threads",
    "main inner",
    "main outer",
    "worker inner",
    "worker outer",
];

#[test]
fn marker_trace_records_marks_and_ranges_by_their_message() {
    sim_dir();
    let tmp = tempfile::tempdir().unwrap();
    let app = program(tmp.path());
    let args = [
        "run",
        "--sim",
        "--marker-trace",
        "--output-format",
        "csv,json,rocpd,pftrace",
        "-d",
        "out",
        "--",
        app.to_str().unwrap(),
    ];
    let o = rocwasm(&args, tmp.path());
    assert_success(&o, &args.join(" "));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("MARKERS DONE"), "{text}");
    assert!(
        text.contains("1 marker range(s) were still open"),
        "the open range is counted: {text}"
    );
    let out = tmp.path().join("out");

    // CSV: one row per mark and per closed range, named by the message.
    let csv = csv_markers(&out.join("marker_api_trace.csv"));
    let mut names: Vec<&str> = MARKS.iter().chain(&RANGES).copied().collect();
    names.sort();
    assert_eq!(csv.keys().map(String::as_str).collect::<Vec<_>>(), names);
    assert!(csv.values().all(|v| v.len() == 1), "{csv:#?}");
    let one = |n: &str| csv[n][0].clone();
    for m in MARKS {
        assert_eq!(one(m).start, one(m).end, "a mark is a point: {m}");
    }
    for r in RANGES {
        assert!(one(r).end > one(r).start, "{r}: {:?}", one(r));
    }
    let within = |inner: &str, outer: &str| {
        let (i, o) = (one(inner), one(outer));
        assert!(
            o.start <= i.start && i.end <= o.end,
            "{inner} within {outer}: {i:?} {o:?}"
        );
    };
    within("main inner", "main outer");
    within("mark two", "main inner");
    within("worker inner", "worker outer");
    within("worker outer", "across threads");
    within("across threads", "main outer");
    let main = one("main outer").thread;
    assert_eq!(one("across threads").thread, main, "the start's thread");
    assert_eq!(one("main inner").thread, main);
    assert_ne!(one("worker outer").thread, main);
    assert_eq!(one("worker inner").thread, one("worker outer").thread);

    // rocpd: AMD's markers summary (the message from the event's extdata,
    // over regions and samples of a MARKER_ category) finds the same.
    let db = out.join("results.db");
    let summary = |table: &str| -> BTreeMap<String, u64> {
        sqlite3(
            &db,
            &format!(
                "SELECT JSON_EXTRACT(e.extdata, '$.message') AS m, count(*) FROM {table} x \
                 JOIN rocpd_event e ON e.id = x.event_id \
                 JOIN rocpd_string c ON c.id = e.category_id \
                 WHERE c.string LIKE 'MARKER_%' GROUP BY m ORDER BY m;"
            ),
        )
        .lines()
        .map(|l| {
            let (name, n) = l.rsplit_once('|').unwrap();
            (name.to_string(), n.parse().unwrap())
        })
        .collect()
    };
    let regions = summary("rocpd_region");
    let samples = summary("rocpd_sample");
    assert_eq!(
        regions.keys().map(String::as_str).collect::<Vec<_>>(),
        RANGES,
        "regions: the closed ranges"
    );
    assert_eq!(
        samples.keys().map(String::as_str).collect::<Vec<_>>(),
        MARKS,
        "samples: the marks"
    );
    assert!(regions.values().chain(samples.values()).all(|&n| n == 1));
    // AMD's `rocpd summary` reads them through this view.
    let amd = sqlite3(
        &db,
        "SELECT JSON_EXTRACT(extdata, '$.message') AS marker_name, count(*) \
         FROM regions_and_samples WHERE category LIKE 'MARKER_%' \
         GROUP BY marker_name ORDER BY marker_name;",
    );
    let mut both: Vec<String> = regions
        .iter()
        .chain(&samples)
        .map(|(m, n)| format!("{m}|{n}"))
        .collect();
    both.sort();
    assert_eq!(amd.lines().collect::<Vec<_>>(), both, "the markers view");
    let outer = one("main outer");
    assert_eq!(
        sqlite3(
            &db,
            "SELECT r.start, r.end FROM rocpd_region r JOIN rocpd_event e ON e.id = r.event_id \
             WHERE JSON_EXTRACT(e.extdata, '$.message') = 'main outer';"
        )
        .trim(),
        format!("{}|{}", outer.start, outer.end)
    );

    // JSON and Perfetto name them by their message too.
    let json = std::fs::read_to_string(out.join("results.json")).unwrap();
    let pftrace = std::fs::read(out.join("results.pftrace")).unwrap();
    for n in &names {
        assert!(json.contains(&format!("\"{n}\"")), "results.json lacks {n}");
        assert!(
            pftrace.windows(n.len()).any(|w| w == n.as_bytes()),
            "results.pftrace lacks {n}"
        );
    }
    // The open range has no slice (its message is in results.json's string
    // table, as rocprofv3 keeps every message it saw).
    assert!(!pftrace.windows(9).any(|w| w == b"left open"));

    // A replay of the CSV gives the same rows.
    let replayed = rocwasm(
        &[
            "replay",
            out.join("marker_api_trace.csv").to_str().unwrap(),
            "--output-format",
            "csv",
            "-d",
            "replayed",
        ],
        tmp.path(),
    );
    assert_success(&replayed, "rocwasm replay <the run's CSV>");
    let again = csv_markers(&tmp.path().join("replayed/marker_api_trace.csv"));
    assert_eq!(again, csv);
}

/// `--stats`: the marker statistics (the `api-stats` stage, which names
/// operations through the plugin host) are per message, as rocprofv3's.
#[test]
fn marker_stats_are_per_message() {
    sim_dir();
    plugins_dir(&["api-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    let app = program(tmp.path());
    let args = [
        "run",
        "--sim",
        "--marker-trace",
        "--stats",
        "-d",
        "out",
        "--",
        app.to_str().unwrap(),
    ];
    let o = rocwasm(&args, tmp.path());
    assert_success(&o, &args.join(" "));
    let stats = read_stats(&tmp.path().join("out/marker_api_stats.csv"));
    let mut names: Vec<&str> = MARKS.iter().chain(&RANGES).copied().collect();
    names.sort();
    assert_eq!(stats.keys().map(String::as_str).collect::<Vec<_>>(), names);
    assert!(stats.values().all(|s| s.calls == 1));
    assert_eq!(stats["mark one"].total, 0, "a mark lasts nothing");
    assert!(stats["main outer"].total > stats["main inner"].total);
}
