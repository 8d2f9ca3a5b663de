//! Small process helpers shared by the xtask commands.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The workspace root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Runs a command to completion, failing with its command line when it fails.
pub fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    eprintln!("+ {shown}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}

/// The `cargo build` selection that builds what `cargo test --workspace
/// --exclude xtask` builds, with the same resolved features, plus the
/// libraries (cdylibs: the tool library, the simulated runtime) and binaries
/// the tests run.
///
/// Features matter: cargo resolves dependency features per invocation, and
/// `cargo test --workspace` turns on the dev-dependencies' features. A build
/// with another selection (`-p rocwasm`) resolves others, and the next
/// `cargo test` recompiles wasmtime and cranelift (minutes). With this
/// selection the test run after it compiles nothing. xtask stays out of it:
/// it is already built (it is what runs this), and in the workspace's
/// feature set it would be compiled a second time with its C-plugin crates
/// (~2 min of CPU); its own tests run with `cargo test -p xtask`, which
/// reuses the running build. The end-to-end tests' support library
/// (`tests/src/lib.rs`) builds with the same selection.
pub const TEST_BUILD: &[&str] = &[
    "--workspace",
    "--exclude",
    "xtask",
    "--lib",
    "--bins",
    "--tests",
];

/// What `cargo xtask demo` builds: the CLI, the tool library and the
/// simulated runtime, in one call. `cargo xtask check-features` makes sure
/// it resolves the same dependency features as [`TEST_BUILD`], so the
/// tests after the demo reuse every dependency it compiled.
pub const DEMO_BUILD: &[&str] = &[
    "-p",
    "rocwasm",
    "-p",
    "rocwasm-intercept",
    "-p",
    "sim-hsa",
    "-p",
    "sim-hip",
    "-p",
    "sim-roctx",
];

/// Runs the cargo that runs us (the host toolchain) in the workspace root.
pub fn cargo(args: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new(cargo).args(args).current_dir(root()))
}
