//! `--parquet-layout hive`: the Parquet files of a job's ranks form one
//! Hive-partitioned dataset (`<root>/<table>/job=J/hostname=H/rank=R/
//! <pid>.parquet`) that pyarrow's datasets and DuckDB's `hive_partitioning`
//! read with `job`, `hostname` and `rank` as columns, each rank's rows
//! equal to its own CSV trace.
//!
//! Two runs stand for two ranks of one batch job (the variables Open MPI
//! and Slurm set); needs `cargo xtask build-sim`, python3 with pyarrow
//! and duckdb (`cargo xtask setup` installs them).

use std::collections::BTreeMap;
use std::process::Command;

use rocwasm_tests::*;

const READ: &str = r#"
import sys, json
import pyarrow.dataset as ds, pyarrow.parquet as pq, duckdb
root = sys.argv[1]
d = ds.dataset(root + "/kernel_trace", partitioning="hive")
t = d.to_table()
by_rank = {}
for r, j, h in zip(t.column("rank").to_pylist(), t.column("job").to_pylist(), t.column("hostname").to_pylist()):
    by_rank.setdefault(str(r), set()).add((str(j), h))
pa_counts = {r: 0 for r in by_rank}
for r in t.column("rank").to_pylist():
    pa_counts[str(r)] += 1
one_file = d.files[0]
file_columns = pq.read_schema(one_file).names
rows = duckdb.sql(
    f"SELECT rank, job, hostname, count(*) FROM read_parquet('{root}/kernel_trace/**/*.parquet', "
    "hive_partitioning = true) GROUP BY ALL ORDER BY rank"
).fetchall()
print(json.dumps({
    "pyarrow": pa_counts,
    "pyarrow_keys": {r: sorted(list(v)) for r, v in by_rank.items()},
    "duckdb": [[str(r), str(j), h, n] for r, j, h, n in rows],
    "file_columns": file_columns,
    "file": one_file,
}))
"#;

#[test]
fn pyarrow_and_duckdb_read_the_ranks_as_one_hive_dataset() {
    let tmp = tempfile::tempdir().unwrap();
    let app = sim_dir().join("bin").join("multi_kernel");
    let mut csv_rows = BTreeMap::new();
    for rank in ["0", "2"] {
        let threads = if rank == "2" { "2" } else { "1" };
        let args = [
            "run",
            "--sim",
            "--kernel-trace",
            "--output-format",
            "parquet,csv,rocpd",
            "--parquet-layout",
            "hive",
            "-d",
            "out/%rank%",
            "--",
            app.to_str().unwrap(),
            "--threads",
            threads,
        ];
        let out = rocwasm_with_env(
            &args,
            tmp.path(),
            &[("OMPI_COMM_WORLD_RANK", rank), ("SLURM_JOB_ID", "4242")],
        );
        assert_success(&out, &args.join(" "));
        let csv = std::fs::read_to_string(tmp.path().join(format!("out/{rank}/kernel_trace.csv")))
            .unwrap();
        csv_rows.insert(rank.to_string(), csv.lines().count() as u64 - 1);
        assert!(
            !tmp.path()
                .join(format!("out/{rank}/kernel_trace.parquet"))
                .exists(),
            "no flat file beside the dataset"
        );
    }
    assert_ne!(
        csv_rows["0"], csv_rows["2"],
        "the ranks differ: {csv_rows:?}"
    );

    let root = tmp.path().join("out");
    let out = Command::new("python3")
        .arg("-c")
        .arg(READ)
        .arg(&root)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "pyarrow/duckdb (cargo xtask setup installs them): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The host name rocwasm records (`/proc/sys/kernel/hostname`).
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();

    for (rank, rows) in &csv_rows {
        assert_eq!(got["pyarrow"][rank], *rows, "pyarrow, rank {rank}: {got}");
        assert_eq!(
            got["pyarrow_keys"][rank],
            serde_json::json!([["4242", host]]),
            "rank {rank}'s partition keys"
        );
    }
    let duck: Vec<(String, String, String, u64)> = got["duckdb"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
                r[2].as_str().unwrap().to_string(),
                r[3].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, String, String, u64)> = csv_rows
        .iter()
        .map(|(r, n)| (r.clone(), "4242".to_string(), host.to_string(), *n))
        .collect();
    assert_eq!(duck, want, "DuckDB, by rank");

    // The keys are the path's, not the file's; the rest of the identity is.
    let columns: Vec<&str> = got["file_columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(columns[0], "pid", "{columns:?}");
    assert!(!columns
        .iter()
        .any(|c| ["job", "hostname", "rank"].contains(c)));
    let file = got["file"].as_str().unwrap();
    assert!(
        file.contains(&format!("/kernel_trace/job=4242/hostname={host}/rank=")),
        "{file}"
    );

    // A replay of rank 2's database writes rank 2's partition (the rank and
    // job from the environment the database recorded) into another
    // dataset; a second replay into it finds the file there and refuses to
    // replace it.
    let db = tmp.path().join("out/2/results.db");
    let replay = |dir: &str| {
        let args = [
            "replay",
            db.to_str().unwrap(),
            "--output-format",
            "parquet",
            "--parquet-layout",
            "hive",
            "-d",
            dir,
        ];
        rocwasm(&args, tmp.path())
    };
    let out = replay("again");
    assert_success(&out, "a hive replay of rank 2's database");
    let again = tmp.path().join(format!(
        "again/kernel_trace/job=4242/hostname={host}/rank=2"
    ));
    assert!(
        std::fs::read_dir(&again).map(|d| d.count()).unwrap_or(0) == 1,
        "rank 2's partition in the replay's dataset: {}\n{}",
        again.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let out = replay("again");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("exists: the dataset already has a file of this process"),
        "{stderr}"
    );

    // Hive without Parquet output is a usage error.
    let args = [
        "replay",
        db.to_str().unwrap(),
        "--parquet-layout",
        "hive",
        "-d",
        "x",
    ];
    let out = rocwasm(&args, tmp.path());
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
