//! AMD's `rocpd summary` on rocwasm's databases agrees with rocwasm's own
//! statistics (`--stats`), table by table, on a live run's database and on
//! a merged one.
//!
//! The queries are written here from what AMD's rocpd tool does
//! (`rocpd/summary.py` in rocprofiler-sdk: every view with a `duration`
//! column summarised per `name`; one view per region category family,
//! `regions_and_samples WHERE category LIKE 'HIP_%'`; markers named
//! `JSON_EXTRACT(extdata, '$.message')` over `regions_and_samples WHERE
//! category LIKE 'MARKER_%'`; count, sum, minimum and maximum of
//! `duration` per name). Compared with the `*_stats.csv` files of the same
//! run: calls, total, minimum and maximum per name, exactly.
//!
//! Needs `cargo xtask build-sim`, a C compiler and the sqlite3 CLI.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rocwasm_tests::*;

/// A summary row: calls, total, minimum and maximum duration (ns).
type Row = (u64, u64, u64, u64);

/// AMD's summary of the rows `from` selects, grouped by `name`.
fn summary(db: &Path, name: &str, from: &str) -> BTreeMap<String, Row> {
    let sql = format!(
        "SELECT {name} AS n, count(*), sum(duration), min(duration), max(duration) \
         FROM {from} GROUP BY n ORDER BY n;"
    );
    sqlite3(db, &sql)
        .lines()
        .map(|l| {
            // sqlite3's `|` separator; a name may hold one, the numbers not.
            let f: Vec<&str> = l.rsplitn(5, '|').collect();
            assert_eq!(f.len(), 5, "{l:?} of {sql}");
            let n = |i: usize| -> u64 { f[i].parse().unwrap_or_else(|_| panic!("{l:?}")) };
            (f[4].to_string(), (n(3), n(2), n(1), n(0)))
        })
        .collect()
}

/// The summaries AMD's tool prints for the tables compared here.
fn kernels(db: &Path) -> BTreeMap<String, Row> {
    summary(db, "name", "kernels")
}
fn memory_copies(db: &Path) -> BTreeMap<String, Row> {
    summary(db, "name", "memory_copies")
}
fn hip(db: &Path) -> BTreeMap<String, Row> {
    summary(
        db,
        "name",
        "regions_and_samples WHERE category LIKE 'HIP_%'",
    )
}
fn markers(db: &Path) -> BTreeMap<String, Row> {
    summary(
        db,
        "JSON_EXTRACT(extdata, '$.message')",
        "regions_and_samples WHERE category LIKE 'MARKER_%'",
    )
}

/// A `*_stats.csv` file as summary rows.
fn stats(path: &Path) -> BTreeMap<String, Row> {
    read_stats(path)
        .into_iter()
        .map(|(n, s)| (n, (s.calls, s.total, s.min, s.max)))
        .collect()
}

/// Summary rows of several processes as one: calls and totals add up,
/// minimum of minima, maximum of maxima.
fn combined(parts: &[BTreeMap<String, Row>]) -> BTreeMap<String, Row> {
    let mut out: BTreeMap<String, Row> = BTreeMap::new();
    for part in parts {
        for (name, &(c, t, lo, hi)) in part {
            let e = out.entry(name.clone()).or_insert((0, 0, u64::MAX, 0));
            *e = (e.0 + c, e.1 + t, e.2.min(lo), e.3.max(hi));
        }
    }
    out
}

/// `rocwasm run --sim` of `app` with every domain compared here traced,
/// `--stats`, rocpd and CSV, into `cwd/dir`.
fn run(app: &Path, cwd: &Path, dir: &str) -> PathBuf {
    let args = [
        "run",
        "--sim",
        "--kernel-trace",
        "--hip-runtime-trace",
        "--memory-copy-trace",
        "--marker-trace",
        "--stats",
        "--output-format",
        "rocpd,csv",
        "-d",
        dir,
        "--",
        app.to_str().unwrap(),
    ];
    let out = rocwasm(&args, cwd);
    assert_success(&out, &args.join(" "));
    cwd.join(dir)
}

/// The four summaries of `db` against the statistics files of the runs
/// in `dirs` (calls and totals added up over the runs); a table with no
/// statistics file in any run must be empty in the database too. Returns
/// how many tables had rows.
fn check(db: &Path, dirs: &[PathBuf], which: &str) -> usize {
    let mut compared = 0;
    for (table, got, file) in [
        ("kernels", kernels(db), "kernel_stats.csv"),
        ("memory copies", memory_copies(db), "memory_copy_stats.csv"),
        ("HIP calls", hip(db), "hip_api_stats.csv"),
        ("markers", markers(db), "marker_api_stats.csv"),
    ] {
        let parts: Vec<_> = dirs
            .iter()
            .map(|d| d.join(file))
            .filter(|p| p.exists())
            .map(|p| stats(&p))
            .collect();
        let want = combined(&parts);
        assert_eq!(got, want, "{which}: AMD's {table} summary vs {file}");
        compared += usize::from(!want.is_empty());
    }
    compared
}

/// The sample program of the markers test, which also allocates, copies
/// and launches nothing: kernels and copies come from `multi_kernel`.
fn programs(dir: &Path) -> (PathBuf, PathBuf) {
    (
        super::markers::program(dir),
        sim_dir().join("bin").join("multi_kernel"),
    )
}

#[test]
fn amds_summaries_of_a_live_runs_database_equal_its_statistics() {
    let tmp = tempfile::tempdir().unwrap();
    let (marking, multi) = programs(tmp.path());
    let k = run(&multi, tmp.path(), "kernels");
    let m = run(&marking, tmp.path(), "marking");
    // multi_kernel: kernels, copies, HIP calls and its roctx ranges; the
    // marking program: HIP calls and markers.
    assert_eq!(
        check(
            &k.join("results.db"),
            std::slice::from_ref(&k),
            "multi_kernel"
        ),
        4
    );
    assert_eq!(
        check(&m.join("results.db"), std::slice::from_ref(&m), "markers"),
        2
    );
}

#[test]
fn amds_summaries_of_a_merged_database_add_up_the_processes() {
    let tmp = tempfile::tempdir().unwrap();
    let (marking, multi) = programs(tmp.path());
    let dirs = vec![
        run(&multi, tmp.path(), "p1"),
        run(&multi, tmp.path(), "p2"),
        run(&marking, tmp.path(), "p3"),
    ];
    let merged = tmp.path().join("merged.db");
    let mut args = vec!["merge".to_string()];
    args.extend(
        dirs.iter()
            .map(|d| d.join("results.db").display().to_string()),
    );
    args.extend(["-o".to_string(), merged.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = rocwasm(&args, tmp.path());
    assert_success(&out, "rocwasm merge");
    assert_eq!(check(&merged, &dirs, "merged"), 4);
}
