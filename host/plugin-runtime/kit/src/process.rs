//! Small process helpers: finding a program on `PATH`, running a command
//! and failing with its command line.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The first `program` on `PATH`, if any.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Runs a command to completion (its output goes to our stderr), failing
/// with its command line when it fails.
pub fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    eprintln!("+ {shown}");
    let status = cmd
        .stdout(std::process::Stdio::inherit())
        .status()
        .with_context(|| format!("cannot start {shown}"))?;
    if !status.success() {
        bail!("{shown} failed with {status}");
    }
    Ok(())
}
