//! The bench build: one `cargo build` of the tool library, the CLI and
//! every bench binary the table reads (plus the simulated runtime the HIP
//! and end-to-end rows run on), and where each artifact it made is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{ensure, Context, Result};

use super::sizes::Build;
use crate::util::root;

/// The packages of the release build: the tool library and the benches.
const PACKAGES: [&str; 4] = [
    "rocwasm-intercept",
    "rocwasm-core",
    "rocwasm-plugin-host",
    "rocwasm-formats",
];

/// The bench binaries the table reads, by name.
const BENCHES: [&str; 7] = [
    "producer",
    "deliver",
    "call_floor",
    "native_stats",
    "load",
    "writers",
    "ingest",
];

/// What the bench build made.
pub(super) struct Built {
    /// Bench executables by bench name (`deliver`, `load`, …).
    pub(super) benches: BTreeMap<String, PathBuf>,
    /// The tool library (`librocwasm_intercept.so`).
    pub(super) intercept: PathBuf,
    /// The `rocwasm` CLI.
    pub(super) rocwasm: PathBuf,
    /// The simulated runtime's libraries the HIP-call and end-to-end rows
    /// run on: optimised for [`Build::Release`] (`target/sim/lib-release`),
    /// the test build's for [`Build::Debug`] (`target/sim/lib`).
    pub(super) sim_lib: PathBuf,
}

impl Built {
    pub(super) fn bench(&self, name: &str) -> Result<&Path> {
        self.benches
            .get(name)
            .map(PathBuf::as_path)
            .with_context(|| format!("the bench build made no `{name}` bench"))
    }
}

/// One `cargo build` of the tool library, the CLI and every bench the
/// table reads: `--release` of just those packages into
/// `<root>/target/release`, or, for [`Build::Debug`], the test build's
/// selection plus the benches into `<root>/target/debug` (the same
/// selection resolves the same features, so nothing else recompiles).
pub(super) fn build(build: Build) -> Result<Built> {
    let root = root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--message-format=json-render-diagnostics"]);
    match build {
        Build::Release => {
            cmd.arg("--release")
                .args(PACKAGES.iter().flat_map(|p| ["-p", p]))
                .arg("--lib")
                .args(["-p", "rocwasm", "--bin", "rocwasm"]);
        }
        Build::Debug => {
            cmd.args(crate::util::TEST_BUILD);
        }
    }
    // By name: `--benches` would also build every library's unit tests as
    // benches.
    cmd.args(BENCHES.iter().flat_map(|b| ["--bench", b]))
        .arg("--target-dir")
        .arg(root.join("target"))
        .current_dir(&root)
        .stdout(Stdio::piped());
    eprintln!("+ {cmd:?}");
    let out = cmd.output().context("cannot start cargo")?;
    ensure!(
        out.status.success(),
        "the bench build failed ({}); see the compiler output above",
        out.status
    );
    let sim_lib = match build {
        Build::Release => crate::sim::build_release_libraries()
            .context("building the simulated runtime optimised")?,
        Build::Debug => root.join("target/sim/lib"),
    };
    let mut benches = BTreeMap::new();
    let mut intercept = None;
    let mut rocwasm = None;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let target = &msg["target"];
        let kinds = target["kind"].as_array().cloned().unwrap_or_default();
        // The debug selection also builds unit-test executables of the
        // same targets: never take one of those for the CLI.
        let test = msg["profile"]["test"].as_bool().unwrap_or(false);
        if kinds.iter().any(|k| k == "bin") && target["name"] == "rocwasm" && !test {
            rocwasm = msg["executable"].as_str().map(PathBuf::from);
        } else if kinds.iter().any(|k| k == "bench") {
            if let (Some(name), Some(exe)) = (target["name"].as_str(), msg["executable"].as_str()) {
                benches.insert(name.to_string(), PathBuf::from(exe));
            }
        } else if target["name"] == "rocwasm_intercept" {
            let so = msg["filenames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str())
                .find(|f| f.ends_with(".so"));
            intercept = so.map(PathBuf::from).or(intercept);
        }
    }
    Ok(Built {
        benches,
        intercept: intercept.context("the bench build made no librocwasm_intercept.so")?,
        rocwasm: rocwasm.context("the bench build made no rocwasm binary")?,
        sim_lib,
    })
}
