//! Profiling under a real MPI launcher: Debian's Open MPI `mpirun` starts
//! four ranks, each `rocwasm run --sim … -- vector_add T` with its own
//! thread count, on this machine only (no network, no hostfile).
//!
//! Every rank runs its own launcher, so every rank has its own plan, tool
//! library session and outputs; `%rank%` in `-d` comes from Open MPI's
//! `OMPI_COMM_WORLD_RANK` in the profiled process. The counts each rank's
//! application prints (`COUNTS kernels=N`, tagged with the rank by
//! `--tag-output`) are the oracle for that rank's `kernel_trace.csv`.
//!
//! Needs `cargo xtask setup` (openmpi-bin; duckdb and pyarrow for the
//! Parquet test), `cargo xtask build-sim`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use rocwasm_tests::*;

const RANKS: u32 = 4;

/// `mpirun` with one app context per rank (MPMD, `:`-separated), rank `r`
/// running `rocwasm run EXTRA… -d out/%rank% -- vector_add r+1`.
fn mpirun(cwd: &Path, extra: &[&str]) -> Output {
    let app = sim_dir().join("bin/vector_add");
    let apps: Vec<Vec<String>> = (0..RANKS)
        .map(|r| vec![app.display().to_string(), (r + 1).to_string()])
        .collect();
    mpirun_apps(cwd, extra, &[], &apps)
}

/// `mpirun MCA… ` with rank `r` running `rocwasm run EXTRA… -d out/%rank%
/// -- APPS[r]…`.
fn mpirun_apps(cwd: &Path, extra: &[&str], mca: &[&str], apps: &[Vec<String>]) -> Output {
    let mpirun = Path::new("/usr/bin/mpirun");
    assert!(
        mpirun.is_file(),
        "{} is missing: Debian's openmpi-bin is not installed (run `cargo xtask setup`)",
        mpirun.display()
    );
    let bin = rocwasm_bin();
    let ws = workspace();
    let mut cmd = Command::new(mpirun);
    // Root in CI containers; more ranks than cores; each line tagged with
    // `[job,rank]<stdout>:`.
    cmd.args(["--allow-run-as-root", "--oversubscribe", "--tag-output"]);
    cmd.args(mca);
    for (rank, app) in apps.iter().enumerate() {
        if rank > 0 {
            cmd.arg(":");
        }
        cmd.args(["-np", "1"]).arg(&bin).args(["run", "--sim"]);
        cmd.args(extra);
        cmd.args(["-d", "out/%rank%", "--"]).args(app);
    }
    cmd.current_dir(cwd)
        .env_remove("RUST_LOG")
        .env_remove("LD_PRELOAD")
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("ROCPROFILER_REGISTER_LIBRARY")
        .env("ROCWASM_PLUGIN_PATH", ws.join("target/plugins"))
        .env("ROCWASM_SIM_LIB", ws.join("target/sim/lib"))
        // Loopback only: no remote launch agent is ever needed.
        .env("OMPI_MCA_plm_rsh_agent", "false")
        .output()
        .expect("mpirun runs")
}

/// Per rank, the `kernels=N` of the application's `COUNTS` line.
fn kernels_by_rank(stdout: &str) -> BTreeMap<u32, usize> {
    // `[1,2]<stdout>:COUNTS kernels=24 copies=…`, possibly after another
    // rank's unfinished line: mpirun forwards each rank's output in the
    // pieces it reads, so a long line of one rank can be cut by another's.
    const TAG: &str = "]<stdout>:COUNTS kernels=";
    let mut counts = BTreeMap::new();
    for line in stdout.lines() {
        for (at, _) in line.match_indices(TAG) {
            let Some(rank) = line[..at].rsplit(',').next().and_then(|r| r.parse().ok()) else {
                continue;
            };
            let rest = &line[at + TAG.len()..];
            if let Some(n) = rest.split_whitespace().next().and_then(|n| n.parse().ok()) {
                counts.insert(rank, n);
            }
        }
    }
    counts
}

/// The COUNTS lines are found where mpirun put them, even right after a
/// piece of another rank's line (seen in CI).
#[test]
fn counts_lines_are_read_even_after_a_cut_line() {
    let stdout = "[1,0]<stdout>:COUNTS kernels=3 copies=4\n\
                  [1,0]<stdout>:\u{2514}\u{2500}[1,2]<stdout>:COUNTS kernels=9 copies=12\n\
                  [1,1]<stdout>:DEVICES n=1\n";
    let counts = kernels_by_rank(stdout);
    assert_eq!(counts, BTreeMap::from([(0, 3), (2, 9)]));
}

/// Data rows of a CSV file (its header excluded).
fn rows(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().skip(1).filter(|l| !l.is_empty()).count()
}

#[test]
fn every_rank_writes_its_own_outputs_with_its_own_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = mpirun(tmp.path(), &["--kernel-trace"]);
    assert_success(&out, "mpirun -np 4 rocwasm run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let counts = kernels_by_rank(&stdout);
    assert_eq!(counts.len(), RANKS as usize, "COUNTS lines:\n{stdout}");
    for (rank, kernels) in &counts {
        let trace = tmp.path().join(format!("out/{rank}/kernel_trace.csv"));
        assert_eq!(rows(&trace), *kernels, "rank {rank}: {}", trace.display());
    }
    // Different thread counts, different work: no rank wrote another's file.
    let mut distinct: Vec<_> = counts.values().collect();
    distinct.dedup();
    assert_eq!(distinct.len(), RANKS as usize, "{counts:?}");

    all_ranks_replay_as_the_sum_of_single_rank_replays(tmp.path(), &counts);
}

/// `rocwasm replay out --stats --summary-by-rank` over the job's tree: its
/// per-rank statistics equal each rank replayed alone, and its totals per
/// kernel are their sums (calls, total time, min, max).
fn all_ranks_replay_as_the_sum_of_single_rank_replays(dir: &Path, counts: &BTreeMap<u32, usize>) {
    let mut singles = BTreeMap::new();
    for rank in counts.keys() {
        let out = rocwasm(
            &[
                "replay",
                &format!("out/{rank}"),
                "--stats",
                "-d",
                &format!("single/{rank}"),
            ],
            dir,
        );
        assert_success(&out, &format!("replay of rank {rank}"));
        let stats = read_stats(&dir.join(format!("single/{rank}/kernel_stats.csv")));
        let calls: u64 = stats.values().map(|s| s.calls).sum();
        assert_eq!(calls, counts[rank] as u64, "rank {rank}: {stats:?}");
        singles.insert(*rank, stats);
    }

    let out = rocwasm(
        &["replay", "out", "--stats", "--summary-by-rank", "-d", "all"],
        dir,
    );
    assert_success(&out, "replay of every rank");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("from {RANKS} process(es)")),
        "{stdout}"
    );
    assert!(stdout.contains("KERNEL_DISPATCH by rank"), "{stdout}");

    // Totals: the sum of the single-rank replays, kernel by kernel.
    let total = read_stats(&dir.join("all/kernel_stats.csv"));
    let mut want: BTreeMap<String, (u64, u64, u64, u64)> = BTreeMap::new();
    for stats in singles.values() {
        for (name, s) in stats {
            let e = want.entry(name.clone()).or_insert((0, 0, u64::MAX, 0));
            e.0 += s.calls;
            e.1 += s.total;
            e.2 = e.2.min(s.min);
            e.3 = e.3.max(s.max);
        }
    }
    let got: BTreeMap<String, (u64, u64, u64, u64)> = total
        .iter()
        .map(|(n, s)| (n.clone(), (s.calls, s.total, s.min, s.max)))
        .collect();
    assert_eq!(
        got, want,
        "all ranks' kernel_stats.csv vs the sum of the ranks'"
    );

    // Per rank: each rank's rows of kernel_stats_by_rank.csv are its own
    // replay's kernel_stats.csv.
    let text = std::fs::read_to_string(dir.join("all/kernel_stats_by_rank.csv")).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().unwrap().clone();
    assert_eq!(&header[0], "Rank");
    assert_eq!(&header[1], "Name");
    let mut by_rank: BTreeMap<u32, BTreeMap<String, (u64, u64)>> = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        let rank: u32 = rec[0]
            .parse()
            .unwrap_or_else(|_| panic!("rank {:?}", &rec[0]));
        by_rank.entry(rank).or_default().insert(
            rec[1].to_string(),
            (rec[2].parse().unwrap(), rec[3].parse().unwrap()),
        );
    }
    let singles: BTreeMap<u32, BTreeMap<String, (u64, u64)>> = singles
        .iter()
        .map(|(rank, stats)| {
            (
                *rank,
                stats
                    .iter()
                    .map(|(n, s)| (n.clone(), (s.calls, s.total)))
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        by_rank, singles,
        "kernel_stats_by_rank.csv vs the single-rank replays"
    );
}

/// One chain over every rank's `results.json` (a format that records the
/// process: host, pid, rank; rocprofv3's CSV files do not): the `recorder`
/// test plugin sees, in each batch's `delivery-info.process`, the rank
/// (and host and pid) the records came from, and per rank exactly that
/// rank's dispatches.
#[test]
fn one_chain_over_every_rank_sees_each_batchs_process() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = mpirun(dir, &["--kernel-trace", "--output-format", "json"]);
    assert_success(&out, "mpirun -np 4 rocwasm run --output-format json");
    let counts = kernels_by_rank(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(counts.len(), RANKS as usize, "{counts:?}");
    plugins_dir(&["recorder"]);
    let chain = dir.join("recorder.toml");
    std::fs::write(
        &chain,
        "version = 1\n\n[[stage]]\nname = \"recorder\"\nplugin = \"recorder\"\n\
         domains = [\"kernel_dispatch\"]\noutput = true\n",
    )
    .unwrap();
    let out = rocwasm(
        &[
            "replay",
            "out",
            "-c",
            chain.to_str().unwrap(),
            "-d",
            "recorded",
        ],
        dir,
    );
    assert_success(&out, "replay of every rank through the recorder");
    let text = std::fs::read_to_string(dir.join("recorded/recorder.json")).unwrap();
    let rec: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut seen: BTreeMap<u32, usize> = BTreeMap::new();
    for b in rec["batches"].as_array().unwrap() {
        let p = &b["process"];
        let rank = p["rank"]
            .as_u64()
            .unwrap_or_else(|| panic!("a batch without a rank: {b}")) as u32;
        assert!(p["pid"].as_u64().unwrap() > 0, "{b}");
        assert!(!p["hostname"].as_str().unwrap().is_empty(), "{b}");
        *seen.entry(rank).or_default() += b["kernel-dispatches"].as_u64().unwrap() as usize;
    }
    assert_eq!(seen, counts, "dispatches per rank, as the plugin saw them");
}

/// Rank 1's application dies of SIGSEGV while the others run. Open MPI
/// is told not to kill the job when one process fails (by default it
/// tears every rank down, which no profiler can prevent); the other ranks'
/// outputs are then complete: every dispatch their application counted is
/// in their trace, and their statistics and `results.json` are written.
#[test]
fn a_crashing_rank_leaves_the_others_outputs_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let app = sim_dir().join("bin/vector_add").display().to_string();
    let apps: Vec<Vec<String>> = (0..RANKS)
        .map(|r| match r {
            1 => ["/bin/sh", "-c", "touch rank-1-ran; kill -SEGV $$"]
                .map(String::from)
                .to_vec(),
            r => vec![app.clone(), (r + 1).to_string()],
        })
        .collect();
    let out = mpirun_apps(
        tmp.path(),
        &["--kernel-trace", "--stats", "--output-format", "csv,json"],
        &["--mca", "orte_abort_on_non_zero_status", "0"],
        &apps,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Rank 1 ran and died (under this setting Open MPI does not turn one
    // rank's failure into the job's exit status).
    assert!(
        tmp.path().join("rank-1-ran").is_file(),
        "{stdout}\n{stderr}"
    );
    assert!(
        !tmp.path().join("out/1/kernel_trace.csv").exists(),
        "rank 1 launched no kernel"
    );
    let counts = kernels_by_rank(&stdout);
    assert_eq!(
        counts.keys().copied().collect::<Vec<_>>(),
        [0, 2, 3],
        "{stdout}\n{stderr}"
    );
    for (rank, kernels) in &counts {
        let dir = tmp.path().join(format!("out/{rank}"));
        assert_eq!(rows(&dir.join("kernel_trace.csv")), *kernels, "rank {rank}");
        let stats = read_stats(&dir.join("kernel_stats.csv"));
        let calls: u64 = stats.values().map(|s| s.calls).sum();
        assert_eq!(calls, *kernels as u64, "rank {rank}: {stats:?}");
        let json = std::fs::read_to_string(dir.join("results.json")).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("rank {rank}'s results.json: {e}"));
        assert_eq!(
            doc["rocprofiler-sdk-tool"][0]["buffer_records"]["kernel_dispatch"]
                .as_array()
                .map_or(0, |a| a.len()),
            *kernels,
            "rank {rank}"
        );
    }
}

/// One of four ranks kills itself with SIGKILL after its kernels and copies
/// (`crash_after_kernels N kill`); the others exit. Every rank's outputs
/// hold every dispatch and both copies its application made: the killed
/// rank's come from its journal and durable buffers, written by its
/// launcher.
#[test]
fn a_rank_killed_after_its_kernels_leaves_its_outputs_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let app = sim_dir()
        .join("bin/crash_after_kernels")
        .display()
        .to_string();
    let launches = |r: u32| 20 * (r as usize + 1);
    let apps: Vec<Vec<String>> = (0..RANKS)
        .map(|r| {
            let end = if r == 2 { "kill" } else { "exit" };
            vec![app.clone(), launches(r).to_string(), end.to_string()]
        })
        .collect();
    let out = mpirun_apps(
        tmp.path(),
        &[
            "--kernel-trace",
            "--memory-copy-trace",
            "--output-format",
            "csv,rocpd",
        ],
        &["--mca", "orte_abort_on_non_zero_status", "0"],
        &apps,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("was ended by signal 9 (SIGKILL)"),
        "{stdout}\n{stderr}"
    );
    for r in 0..RANKS {
        let dir = tmp.path().join(format!("out/{r}"));
        assert_eq!(
            rows(&dir.join("kernel_trace.csv")),
            launches(r),
            "rank {r}\n{stdout}\n{stderr}"
        );
        assert_eq!(rows(&dir.join("memory_copy_trace.csv")), 2, "rank {r}");
        assert!(dir.join("results.db").is_file(), "rank {r}");
    }
}

#[test]
fn profile_mpi_ranks_profiles_only_the_listed_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let out = mpirun(
        tmp.path(),
        &["--kernel-trace", "--profile-mpi-ranks", "0,2"],
    );
    assert_success(&out, "mpirun … rocwasm run --profile-mpi-ranks 0,2");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Every rank ran its application to the end…
    assert_eq!(kernels_by_rank(&stdout).len(), RANKS as usize, "{stdout}");
    assert_eq!(
        stdout.matches("RESULT PASS").count(),
        RANKS as usize,
        "{stdout}"
    );
    // …and only ranks 0 and 2 were profiled.
    for rank in 0..RANKS {
        let dir = tmp.path().join(format!("out/{rank}"));
        assert_eq!(
            dir.join("kernel_trace.csv").is_file(),
            rank == 0 || rank == 2,
            "rank {rank}: {}",
            dir.display()
        );
    }
}

/// `--output-format csv,parquet` under `mpirun`: DuckDB and pyarrow (the
/// Python packages `cargo xtask setup` installs, real clients) read every
/// rank's Parquet files. pyarrow finds in each file the columns
/// `rocwasm_formats::parquet::schema` documents; DuckDB's SQL over all
/// ranks' `kernel_trace.parquet` at once gives, per kernel, the calls and
/// total nanoseconds of our own `--stats` (`kernel_stats.csv`), summed over
/// the ranks, and one process per rank with that rank's own count.
#[test]
fn duckdb_over_every_ranks_parquet_gives_our_kernel_statistics() {
    use rocwasm_formats::csv::TraceFile;
    use rocwasm_formats::parquet::schema;

    let tmp = tempfile::tempdir().unwrap();
    let out = mpirun(
        tmp.path(),
        &[
            "--kernel-trace",
            "--hip-trace",
            "--memory-copy-trace",
            "--stats",
            "--output-format",
            "csv,parquet",
        ],
    );
    assert_success(&out, "mpirun -np 4 rocwasm run --output-format csv,parquet");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let counts = kernels_by_rank(&stdout);
    assert_eq!(counts.len(), RANKS as usize, "COUNTS lines:\n{stdout}");

    let script = workspace().join("tests/python/read_parquet.py");
    let read = Command::new("python3")
        .arg(&script)
        .arg(tmp.path().join("out"))
        .output()
        .expect("python3 runs");
    assert_success(
        &read,
        "python3 tests/python/read_parquet.py (duckdb, pyarrow)",
    );
    let report: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();

    // pyarrow: every rank wrote its tables, each with the documented columns
    // and as many rows as the CSV file of the same table.
    let files = report["files"].as_object().unwrap();
    for rank in 0..RANKS {
        for file in [
            TraceFile::KernelTrace,
            TraceFile::HipApi,
            TraceFile::MemoryCopy,
        ] {
            let name = format!("{rank}/{}", schema::file_name(file));
            let f = files
                .get(&name)
                .unwrap_or_else(|| panic!("no {name} among {:?}", files.keys()));
            let want: Vec<String> = schema::schema(file)
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect();
            let got: Vec<String> = serde_json::from_value(f["columns"].clone()).unwrap();
            assert_eq!(got, want, "{name}");
            let csv = tmp.path().join(format!("out/{rank}/{}", file.file_name()));
            assert_eq!(f["rows"].as_u64().unwrap() as usize, rows(&csv), "{name}");
        }
    }
    for (name, f) in files {
        let stem = name.rsplit('/').next().unwrap();
        let file = TraceFile::ALL
            .into_iter()
            .find(|t| schema::file_name(*t) == stem)
            .unwrap_or_else(|| panic!("{name}: not a table rocwasm writes"));
        assert_eq!(
            f["columns"].as_array().unwrap().len(),
            schema::schema(file).fields().len()
        );
    }

    // DuckDB over all ranks = our statistics summed over the ranks.
    let mut ours: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for rank in 0..RANKS {
        let stats = read_stats(&tmp.path().join(format!("out/{rank}/kernel_stats.csv")));
        for (name, s) in stats {
            let e = ours.entry(name).or_default();
            e.0 += s.calls;
            e.1 += s.total;
        }
    }
    let sql: BTreeMap<String, (u64, u64)> = report["kernel_totals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = r[0].as_str().unwrap().to_string();
            (name, (r[1].as_u64().unwrap(), r[2].as_u64().unwrap()))
        })
        .collect();
    assert!(!sql.is_empty(), "{report}");
    assert_eq!(
        sql, ours,
        "DuckDB's per-kernel (calls, total ns) vs kernel_stats.csv"
    );

    // One process per rank, with that rank's own kernel count.
    let processes = report["processes"].as_array().unwrap();
    assert_eq!(processes.len(), RANKS as usize, "{report}");
    let mut pids = Vec::new();
    for p in processes {
        let rank = p[0].as_u64().unwrap() as u32;
        pids.push(p[1].as_u64().unwrap());
        assert!(!p[2].as_str().unwrap().is_empty(), "hostname: {p}");
        assert!(
            !p[3].as_str().unwrap().is_empty(),
            "job (`0` outside a batch job): {p}"
        );
        assert_eq!(
            p[4].as_u64().unwrap() as usize,
            counts[&rank],
            "rank {rank}: {p}"
        );
    }
    pids.sort();
    pids.dedup();
    assert_eq!(pids.len(), RANKS as usize, "{report}");
}
