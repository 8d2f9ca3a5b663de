//! Support for rocwasm's end-to-end tests (`tests/tests/*.rs`).
//!
//! - Artefacts: the `rocwasm` binary and the tool library (built once per
//!   test process with `cargo build`, so a test never runs a stale binary),
//!   the stock plugins (`target/plugins`, from `cargo xtask build-plugins`)
//!   and the simulated runtime with its samples (`target/sim`, from `cargo
//!   xtask build-sim`). Missing plugins or sim make the test **fail** with
//!   the command to run; nothing is skipped silently.
//! - Statistics: rocprofv3 `*_stats.csv` files read by column name, an
//!   independent oracle computing the same statistics from raw durations,
//!   and a comparison with a tolerance for the files' decimal rounding.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The source tree.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("workspace root")
}

/// The cargo profile directory this test binary was built into
/// (`<target>/<profile>/deps/<test>` → `<target>/<profile>`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in <target>/<profile>/deps")
        .to_path_buf()
}

/// The `rocwasm` binary and `librocwasm_intercept.so`, freshly built into
/// the same target directory and profile as the tests.
///
/// Built with the selection `cargo xtask test` builds with
/// (`xtask/src/util.rs`, `TEST_BUILD`): the same resolved dependency
/// features as `cargo test --workspace --exclude xtask`, so after `cargo xtask test` this is
/// a no-op, and it never makes the next test run recompile wasmtime.
pub fn rocwasm_bin() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile = profile_dir();
            let target = profile.parent().expect("target dir");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args([
                "build",
                "-q",
                "--workspace",
                "--exclude",
                "xtask",
                "--lib",
                "--bins",
                "--tests",
            ])
            .env("CARGO_TARGET_DIR", target)
            .current_dir(workspace());
            if profile.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let out = cmd.output().expect("cannot run cargo build");
            assert!(
                out.status.success(),
                "`cargo build --workspace --exclude xtask --lib --bins --tests` failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let bin = profile.join("rocwasm");
            assert!(bin.is_file(), "{} was not built", bin.display());
            bin
        })
        .clone()
}

/// `<workspace>/target/plugins`, checked to hold `names`. Fails (never
/// skips) with the command that builds them.
pub fn plugins_dir(names: &[&str]) -> PathBuf {
    let dir = workspace().join("target/plugins");
    for name in names {
        let p = dir.join(format!("{name}.wasm"));
        assert!(
            p.is_file(),
            "{} is missing: run `cargo xtask build-plugins` first (`cargo xtask test` does)",
            p.display()
        );
    }
    dir
}

/// `<workspace>/target/sim`, checked to hold the simulated runtime and the
/// hipcc-built sample. Fails (never skips) with the command that builds them.
pub fn sim_dir() -> PathBuf {
    let dir = workspace().join("target/sim");
    for rel in [
        "lib/libamdhip64.so.5",
        "lib/libhsa-runtime64.so.1",
        "bin/multi_kernel",
    ] {
        let p = dir.join(rel);
        assert!(
            p.is_file(),
            "{} is missing: run `cargo xtask build-sim` first (`cargo xtask test` does)",
            p.display()
        );
    }
    dir
}

/// Runs `rocwasm ARGS` in `cwd` with a clean, explicit environment: plugins
/// from `target/plugins`, the simulated runtime from `target/sim/lib`.
pub fn rocwasm(args: &[&str], cwd: &Path) -> Output {
    rocwasm_with_env(args, cwd, &[])
}

/// `rocwasm run --sim FLAGS… -d OUT -- <the simulated runtime's bin/APP>
/// ARGS…` in `cwd`, with `env` added: a live run of one of the sample
/// programs on the simulated GPU.
pub fn run_sim_app(
    flags: &[&str],
    out: &str,
    app: &str,
    app_args: &[&str],
    cwd: &Path,
    env: &[(&str, &str)],
) -> Output {
    let app = sim_dir().join("bin").join(app);
    let app = app.to_str().expect("a UTF-8 workspace path");
    let mut args = vec!["run", "--sim"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-d", out, "--", app]);
    args.extend_from_slice(app_args);
    rocwasm_with_env(&args, cwd, env)
}

/// How long one `rocwasm` command of a test may run: the longest (a live
/// run of a debug build under tracing) takes seconds. A command still running
/// after this is killed, with the application it runs, and the test fails
/// saying it hung, instead of hanging the whole test run.
pub const COMMAND_LIMIT_SECS: u32 = 600;

/// coreutils' `timeout`, found on this process's `PATH` once: a test may
/// give rocwasm a `PATH` without it, and a program named without a
/// directory is looked up on the child's `PATH`.
fn timeout_program() -> &'static Path {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    FOUND.get_or_init(|| {
        std::env::var_os("PATH")
            .and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|dir| dir.join("timeout"))
                    .find(|p| p.is_file())
            })
            .unwrap_or_else(|| PathBuf::from("/usr/bin/timeout"))
    })
}

/// [`rocwasm`] with extra environment variables.
pub fn rocwasm_with_env(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let ws = workspace();
    let started = std::time::Instant::now();
    // coreutils' `timeout` signals its whole process group: rocwasm and the
    // application it started.
    let out = Command::new(timeout_program())
        .args(["--kill-after=10", &COMMAND_LIMIT_SECS.to_string()])
        .arg(rocwasm_bin())
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .env_remove("LD_PRELOAD")
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("ROCPROFILER_REGISTER_LIBRARY")
        .env("ROCWASM_PLUGIN_PATH", ws.join("target/plugins"))
        .env("ROCWASM_SIM_LIB", ws.join("target/sim/lib"))
        .envs(env.iter().copied())
        .output()
        .expect("rocwasm runs");
    // 124/137 is also how rocwasm passes on an application that was
    // killed: only a command that ran for the whole limit hung.
    assert!(
        !(matches!(out.status.code(), Some(124 | 137))
            && started.elapsed().as_secs() >= u64::from(COMMAND_LIMIT_SECS)),
        "`rocwasm {}` did not finish within {COMMAND_LIMIT_SECS} s (hung?)\n--- stdout\n{}\n--- stderr\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `rocwasm check --no-plugins` of a chain file holding `toml`, written
/// as `bad.toml` in `dir`: it must fail with status 2; its stderr.
pub fn check_bad_chain(dir: &Path, toml: &str) -> String {
    let chain = dir.join("bad.toml");
    std::fs::write(&chain, toml).unwrap();
    let out = rocwasm(&["check", "--no-plugins", chain.to_str().unwrap()], dir);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    stderr
}

/// Asserts a zero exit status, showing both streams otherwise.
pub fn assert_success(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed with {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One row of a statistics table.
#[derive(Debug, Clone, PartialEq)]
pub struct Stat {
    /// `Calls`: how many records the row aggregates.
    pub calls: u64,
    /// `TotalDurationNs`: the durations' sum, in nanoseconds.
    pub total: u64,
    /// `AverageNs`: `total / calls`, in nanoseconds.
    pub average: f64,
    /// `Percentage`: this row's share of the table's total duration (0–100).
    pub percentage: f64,
    /// `MinNs`: the shortest duration, in nanoseconds.
    pub min: u64,
    /// `MaxNs`: the longest duration, in nanoseconds.
    pub max: u64,
    /// `StdDev`: the sample standard deviation (divisor n − 1; 0 for one
    /// call), in nanoseconds.
    pub stddev: f64,
}

/// The `sqlite3` command-line tool's answer to `sql` on `db`, opened read
/// only, without its trailing newline; the test fails with sqlite3's
/// message when the query does.
pub fn sqlite3(db: &Path, sql: &str) -> String {
    let out = Command::new("sqlite3")
        .arg("-readonly")
        .arg(db)
        .arg(sql)
        .output()
        .expect("the sqlite3 CLI is installed by `cargo xtask setup`");
    assert!(
        out.status.success(),
        "sqlite3 failed on {sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A rocprofv3 statistics file (`Name,Calls,TotalDurationNs,AverageNs,
/// Percentage,MinNs,MaxNs,StdDev`), read by column name, keyed by name.
pub fn read_stats(path: &Path) -> BTreeMap<String, Stat> {
    let mut r = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let header = r.headers().expect("header").clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{}: no column {name} in {header:?}", path.display()))
    };
    let c = [
        "Name",
        "Calls",
        "TotalDurationNs",
        "AverageNs",
        "Percentage",
        "MinNs",
        "MaxNs",
        "StdDev",
    ]
    .map(col);
    let mut out = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let int = |i: usize| -> u64 {
            rec[c[i]]
                .parse()
                .unwrap_or_else(|_| panic!("{}: not an integer: {:?}", path.display(), &rec[c[i]]))
        };
        let float = |i: usize| -> f64 {
            rec[c[i]]
                .parse()
                .unwrap_or_else(|_| panic!("{}: not a number: {:?}", path.display(), &rec[c[i]]))
        };
        let stat = Stat {
            calls: int(1),
            total: int(2),
            average: float(3),
            percentage: float(4),
            min: int(5),
            max: int(6),
            stddev: float(7),
        };
        let name = rec[c[0]].to_string();
        assert!(
            out.insert(name.clone(), stat).is_none(),
            "{}: {name} appears twice",
            path.display()
        );
    }
    out
}

/// The statistics of raw durations per name, computed here (sample
/// standard deviation, percentage of the grand total), independently of
/// every statistics implementation under test.
pub fn stats_of(durations: &BTreeMap<String, Vec<u64>>) -> BTreeMap<String, Stat> {
    let grand: u64 = durations.values().flatten().sum();
    durations
        .iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|(name, d)| {
            let n = d.len() as f64;
            let total: u64 = d.iter().sum();
            let mean = total as f64 / n;
            let var = if d.len() > 1 {
                d.iter().map(|x| (*x as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0)
            } else {
                0.0
            };
            let stat = Stat {
                calls: d.len() as u64,
                total,
                average: mean,
                percentage: total as f64 * 100.0 / grand as f64,
                min: *d.iter().min().unwrap(),
                max: *d.iter().max().unwrap(),
                stddev: var.sqrt(),
            };
            (name.clone(), stat)
        })
        .collect()
}

/// Equal names, equal integers, and floats equal up to the decimals the
/// statistics files keep: six for averages and deviations, two for
/// percentages from 1 % up (rocprofv3's format, `rocwasm-stats`).
pub fn assert_same_stats(got: &BTreeMap<String, Stat>, want: &BTreeMap<String, Stat>, what: &str) {
    let names = |m: &BTreeMap<String, Stat>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(got), names(want), "{what}: kernel names differ");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 + 1e-9 * b.abs();
    let close_percentage = |a: f64, b: f64| (a - b).abs() <= 0.005 + 1e-9 * b.abs();
    for (name, w) in want {
        let g = &got[name];
        assert_eq!(
            (g.calls, g.total, g.min, g.max),
            (w.calls, w.total, w.min, w.max),
            "{what}: {name}: calls/total/min/max"
        );
        assert!(
            close(g.average, w.average),
            "{what}: {name}: average {g:?} vs {w:?}"
        );
        assert!(
            close(g.stddev, w.stddev),
            "{what}: {name}: stddev {g:?} vs {w:?}"
        );
        assert!(
            close_percentage(g.percentage, w.percentage),
            "{what}: {name}: percentage {g:?} vs {w:?}"
        );
    }
}

/// Kernel durations per name from a rocprofv3 `kernel_trace.csv`
/// (`Kernel_Name`, `Start_Timestamp`, `End_Timestamp`, by column name).
pub fn kernel_durations(path: &Path) -> BTreeMap<String, Vec<u64>> {
    let mut r = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let header = r.headers().expect("header").clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{}: no column {name}", path.display()))
    };
    let (name, start, end) = (
        col("Kernel_Name"),
        col("Start_Timestamp"),
        col("End_Timestamp"),
    );
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let s: u64 = rec[start].parse().expect("start");
        let e: u64 = rec[end].parse().expect("end");
        out.entry(rec[name].to_string()).or_default().push(e - s);
    }
    out
}
