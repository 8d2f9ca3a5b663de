//! The rocpd database opens with the `sqlite3` command-line tool and answers
//! the queries rocpd users write; two runs merge into one file.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use rocwasm_formats::{RocpdSink, StatsAccumulator, StatsDomain};

fn sqlite3(db: &Path, sql: &str) -> String {
    let out = Command::new("sqlite3")
        .arg("-readonly")
        .arg(db)
        .arg(sql)
        .output()
        .expect("the sqlite3 CLI is installed by `cargo xtask setup`");
    assert!(
        out.status.success(),
        "sqlite3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const KERNEL_QUERY: &str = "SELECT s.display_name, count(*), sum(k.\"end\" - k.start) \
     FROM rocpd_kernel_dispatch k \
     JOIN rocpd_info_kernel_symbol s ON s.id = k.kernel_id AND s.guid = k.guid \
     GROUP BY s.display_name ORDER BY s.display_name;";

fn parse(out: &str) -> BTreeMap<String, (u64, u64)> {
    out.lines()
        .map(|l| {
            let f: Vec<&str> = l.rsplitn(3, '|').collect();
            (
                f[2].to_string(),
                (f[1].parse().unwrap(), f[0].parse().unwrap()),
            )
        })
        .collect()
}

#[test]
fn sqlite3_joins_dispatches_to_kernel_names_and_durations() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let (run, names) = common::sample(7, 300);
    common::write_run(&run, &names, &mut [Box::new(RocpdSink::at_path(&db))]);

    let mut acc = StatsAccumulator::new();
    run.batches.iter().for_each(|b| acc.add_batch(b));
    let want: BTreeMap<String, (u64, u64)> = acc
        .report(&run.symbols, &names)
        .table(StatsDomain::Kernel)
        .iter()
        .map(|r| (r.name.clone(), (r.calls, r.total_ns)))
        .collect();
    let got = parse(&sqlite3(&db, KERNEL_QUERY));
    assert_eq!(got, want);
    assert!(got.keys().any(|k| k.starts_with("vectorAdd(")));

    // Schema version and the per-run tables behind the views.
    assert_eq!(
        sqlite3(
            &db,
            "SELECT value FROM rocpd_metadata WHERE tag = 'schema_version';"
        )
        .trim(),
        "3"
    );
    let tables = sqlite3(
        &db,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_region_%';",
    );
    assert_eq!(tables.lines().count(), 1, "{tables}");

    // API regions with names, and the category of their events.
    let hip = sqlite3(
        &db,
        "SELECT count(*) FROM rocpd_region r JOIN rocpd_string n ON n.id = r.name_id AND n.guid = r.guid \
         JOIN rocpd_event e ON e.id = r.event_id AND e.guid = r.guid \
         JOIN rocpd_string c ON c.id = e.category_id AND c.guid = e.guid \
         WHERE n.string = 'hipLaunchKernel' AND c.string = 'HIP_RUNTIME_API';",
    );
    assert_eq!(hip.trim(), "300");
    let copies = sqlite3(
        &db,
        "SELECT count(*), sum(size) > 0 FROM rocpd_memory_copy;",
    );
    let n_copies: usize = run.batches.iter().map(|b| b.memory_copies.len()).sum();
    assert_eq!(copies.trim(), format!("{n_copies}|1"));
}

#[test]
fn a_second_run_merges_into_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("merged.db");
    let (a, names_a) = common::sample(11, 40);
    let (b, names_b) = common::sample(12, 60);
    common::write_run(&a, &names_a, &mut [Box::new(RocpdSink::at_path(&db))]);
    common::write_run(&b, &names_b, &mut [Box::new(RocpdSink::at_path(&db))]);
    assert_eq!(
        sqlite3(&db, "SELECT count(*) FROM rocpd_kernel_dispatch;").trim(),
        "100"
    );
    assert_eq!(
        sqlite3(
            &db,
            "SELECT count(DISTINCT guid) FROM rocpd_kernel_dispatch;"
        )
        .trim(),
        "2"
    );
    assert_eq!(
        sqlite3(&db, "SELECT count(*) FROM rocpd_info_process;").trim(),
        "2"
    );
    // The join still pairs every dispatch with exactly one symbol.
    let joined = parse(&sqlite3(&db, KERNEL_QUERY));
    assert_eq!(joined.values().map(|(n, _)| n).sum::<u64>(), 100);
}
