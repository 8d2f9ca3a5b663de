//! Shared helpers of the simulated runtime's end-to-end tests: the built
//! artefacts (through the same code as `cargo xtask build-sim`), running a
//! sample against the simulated libraries, and parsing its report lines.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `<root>/target/sim`, built once per test process with `cargo xtask
/// build-sim` (or taken from `ROCWASM_SIM_DIR`). Panics with the build's
/// output if it cannot be built: these tests never pass without artefacts.
pub fn sim_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("ROCWASM_SIM_DIR") {
            return PathBuf::from(dir);
        }
        let root = workspace_root();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args(["run", "-q", "-p", "xtask", "--", "build-sim"])
            .env_remove("LD_LIBRARY_PATH")
            .current_dir(&root)
            .output()
            .expect("cannot run cargo to build the simulated runtime");
        assert!(
            out.status.success(),
            "`cargo xtask build-sim` failed; the simulated runtime and samples are required:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dir = root.join("target/sim");
        for f in [
            "lib/libamdhip64.so.5",
            "lib/libhsa-runtime64.so.1",
            "lib/libroctx64.so.4",
            "bin/vector_add",
            "bin/multi_kernel",
        ] {
            assert!(dir.join(f).exists(), "build-sim did not produce {f}");
        }
        dir
    })
}

/// Runs a sample from `bin/` on the simulated runtime.
pub fn run_sample(name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    sample_command(None, name, args, env)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"))
}

/// [`run_sample`] under coreutils' `timeout`: a sample still running after
/// `seconds` is killed and the test fails saying so, instead of hanging.
pub fn run_sample_within(seconds: u32, name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = sample_command(Some(seconds), name, args, env)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name} under timeout: {e}"));
    assert!(
        !matches!(out.status.code(), Some(124 | 137)),
        "{name} {args:?} did not finish within {seconds} s (hung?); stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The command that runs sample `name` against the simulated runtime, with
/// only `env`'s tool and scenario settings, optionally under `timeout`.
fn sample_command(within: Option<u32>, name: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
    let dir = sim_dir();
    let program = dir.join("bin").join(name);
    let mut cmd = match within {
        Some(seconds) => {
            let mut c = Command::new("timeout");
            c.args(["--kill-after=5", &seconds.to_string()])
                .arg(program);
            c
        }
        None => Command::new(program),
    };
    cmd.args(args)
        .env("LD_LIBRARY_PATH", dir.join("lib"))
        .env_remove("HSA_TOOLS_LIB")
        .env_remove("ROCWASM_SIM_SCENARIO")
        .env_remove("ROCWASM_SIM_DEVICES");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `key=value` fields of the first line starting with `tag `.
pub fn fields(text: &str, tag: &str) -> HashMap<String, String> {
    let line = text
        .lines()
        .find(|l| l.starts_with(&format!("{tag} ")))
        .unwrap_or_else(|| panic!("no {tag} line in:\n{text}"));
    line_fields(line)
}

pub fn line_fields(line: &str) -> HashMap<String, String> {
    line.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub fn num(map: &HashMap<String, String>, key: &str) -> u64 {
    map.get(key)
        .unwrap_or_else(|| panic!("no {key} in {map:?}"))
        .parse()
        .unwrap()
}

/// A scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-tests-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles the test HSA tool (against the real hsa_api_trace.h).
pub fn build_tool(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/test_tool.cpp");
    let lib = dir.join("libtest_tool.so");
    let out = Command::new("g++")
        .args([
            "-std=c++17",
            "-shared",
            "-fPIC",
            "-O1",
            "-DAMD_INTERNAL_BUILD",
            "-I/usr/include/hsa",
        ])
        .arg(&src)
        .arg("-o")
        .arg(&lib)
        .output()
        .expect("g++ is required to build the test HSA tool");
    assert!(
        out.status.success(),
        "building the test tool failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}
