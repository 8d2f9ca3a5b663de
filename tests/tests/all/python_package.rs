//! The Python package `rocwasm` (`host/launcher/python`), as a user gets
//! it: its wheel built by maturin, installed by pip (into a scratch
//! directory on `PYTHONPATH`), and its pytest suite run against this
//! build's CLI, plugins and simulated runtime:
//!
//! - `test_read.py`: every recording format into pyarrow, rows and types
//!   checked against rocprofv3's CSV, one clear error for a bad file;
//! - `test_chain.py`: a chain's files equal `rocwasm replay`'s, partials
//!   of two recordings merge, the site policy refuses an unsigned plugin;
//! - `test_dask.py`: a real `dask.distributed.LocalCluster` (2 worker
//!   processes, loopback) analyses a 64-rank `mpirun` job and its files
//!   equal `rocwasm replay`'s, again with a worker killed mid-run; a
//!   plugin that traps on one rank's data names that rank and the rest
//!   completes.
//!
//! Needs `cargo xtask setup` (maturin, pytest, dask, distributed, pyarrow,
//! openmpi-bin) and `cargo xtask build-plugins`, `build-sim`.

use std::process::Command;

use rocwasm_tests::*;

#[test]
fn the_python_packages_tests_pass() {
    plugins_dir(&[
        "kernel-stats",
        "api-stats",
        "memcpy-bandwidth",
        "merge-counter",
    ]);
    let sim = sim_dir();
    let bin = rocwasm_bin();
    let ws = workspace();
    let tmp = tempfile::tempdir().unwrap();
    let wheels = tmp.path().join("wheels");
    let built = Command::new("python3")
        .args(["-m", "maturin", "build", "--profile", "dev", "-o"])
        .arg(&wheels)
        .arg("-m")
        .arg(ws.join("host/launcher/python/Cargo.toml"))
        .env("CARGO_TARGET_DIR", ws.join("target"))
        .output()
        .expect("python3 runs (cargo xtask setup installs maturin)");
    let cargo_said = String::from_utf8_lossy(&built.stderr);
    assert!(
        built.status.success(),
        "maturin build failed:\n{cargo_said}"
    );
    // The wheel's build reuses the test build's wasmtime and Cranelift
    // (host/launcher/python/Cargo.toml says how): a second compile of them
    // costs CI minutes.
    for heavy in ["Compiling wasmtime v", "Compiling cranelift-codegen v"] {
        assert!(
            !cargo_said.contains(heavy),
            "the wheel's build compiled what the test build had built (`{heavy}…`): align the \
             features in host/launcher/python/Cargo.toml\n{cargo_said}"
        );
    }
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("maturin wrote a wheel");
    let site = tmp.path().join("site");
    let installed = Command::new("python3")
        .args(["-m", "pip", "install", "-q", "--no-deps", "--target"])
        .arg(&site)
        .arg(&wheel)
        .output()
        .unwrap();
    assert!(
        installed.status.success(),
        "pip install {} failed:\n{}",
        wheel.display(),
        String::from_utf8_lossy(&installed.stderr)
    );
    let out = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp"])
        .arg(tmp.path().join("pytest"))
        .arg(ws.join("host/launcher/python/tests"))
        .env("PYTHONPATH", &site)
        .env("ROCWASM_REPO", &ws)
        .env("ROCWASM_BIN", &bin)
        .env("ROCWASM_PLUGIN_PATH", ws.join("target/plugins"))
        .env("ROCWASM_SIM", &sim)
        .env_remove("ROCWASM_TEST_POLICY")
        .current_dir(tmp.path())
        .output()
        .expect("pytest runs (cargo xtask setup installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pytest failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" passed"), "{stdout}");
    assert!(
        !stdout.contains("skipped"),
        "no test may be skipped: {stdout}"
    );
}
