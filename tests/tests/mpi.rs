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
//! Needs `cargo xtask setup` (openmpi-bin), `cargo xtask build-sim`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use rocwasm_tests::*;

const RANKS: u32 = 4;

/// `mpirun` with one app context per rank (MPMD, `:`-separated), rank `r`
/// running `rocwasm run EXTRA… -d out/%rank% -- vector_add r+1`.
fn mpirun(cwd: &Path, extra: &[&str]) -> Output {
    let mpirun = Path::new("/usr/bin/mpirun");
    assert!(
        mpirun.is_file(),
        "{} is missing: Debian's openmpi-bin is not installed (run `cargo xtask setup`)",
        mpirun.display()
    );
    let app = sim_dir().join("bin/vector_add");
    let bin = rocwasm_bin();
    let ws = workspace();
    let mut cmd = Command::new(mpirun);
    // Root in CI containers; more ranks than cores; each line tagged with
    // `[job,rank]<stdout>:`.
    cmd.args(["--allow-run-as-root", "--oversubscribe", "--tag-output"]);
    for rank in 0..RANKS {
        if rank > 0 {
            cmd.arg(":");
        }
        cmd.args(["-np", "1"]).arg(&bin).args(["run", "--sim"]);
        cmd.args(extra);
        cmd.args(["-d", "out/%rank%", "--"])
            .arg(&app)
            .arg((rank + 1).to_string());
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
    let mut counts = BTreeMap::new();
    for line in stdout.lines() {
        // `[1,2]<stdout>:COUNTS kernels=24 copies=…`
        let Some((tag, text)) = line.split_once("]<stdout>:") else {
            continue;
        };
        let Some(rank) = tag.rsplit(',').next().and_then(|r| r.parse().ok()) else {
            continue;
        };
        if let Some(rest) = text.strip_prefix("COUNTS kernels=") {
            let n = rest.split_whitespace().next().unwrap().parse().unwrap();
            counts.insert(rank, n);
        }
    }
    counts
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
