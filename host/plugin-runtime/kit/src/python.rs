//! Python plugins: a module `app` → a component, with componentize-py.
//!
//! componentize-py (a wheel from PyPI with its own CPython-for-wasm inside)
//! generates the world's bindings (`wit_world`), snapshots the interpreter
//! with the plugin's modules imported, and writes an ~18 MB component that
//! imports WASI (the host links a deny-all WASI context for it). Modules
//! are searched in the given directories, in order (the plugin's own, then
//! the one holding the `rocwasm` layer package).
//!
//! **The tool** is installed pinned ([`COMPONENTIZE_PY`]) into a directory
//! of its own with the machine's `python3 -m pip install --target` (no
//! virtualenv, nothing global; on Debian 12 a plain `pip install` is refused
//! as an "externally managed environment", `--target` is not), and run as
//! `python3 -c` with that directory on `PYTHONPATH`. The install takes ~5 s;
//! a componentize run ~10–20 s.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::missing::MissingTool;
use crate::process::run;

/// The componentize-py release this project builds and tests with.
pub const COMPONENTIZE_PY: &str = "0.25.1";

/// The interpreter that installs and runs componentize-py: the machine's.
pub const PYTHON: &str = "python3";

/// Runs componentize-py's command line from the `--target` install.
const LAUNCHER: &str =
    "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())";

/// What to componentize.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The WIT package directory.
    pub wit: &'a Path,
    /// The world (`analysis-plugin`).
    pub world: &'a str,
    /// The top-level module (`app`).
    pub module: &'a str,
    /// Module search path, in order.
    pub paths: Vec<PathBuf>,
    /// The component to write.
    pub out: &'a Path,
}

/// Builds `job` with the componentize-py installed in `tools` (see
/// [`ensure_tool`]).
pub fn componentize(tools: &Path, job: &Job) -> Result<()> {
    let mut cmd = Command::new(PYTHON);
    cmd.env("PYTHONPATH", tools)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args(["-c", LAUNCHER, "-d"])
        .arg(job.wit)
        .args(["-w", job.world, "componentize", job.module]);
    for p in &job.paths {
        cmd.arg("-p").arg(p);
    }
    cmd.arg("-o").arg(job.out);
    run(&mut cmd)
}

/// `dir` with componentize-py [`COMPONENTIZE_PY`] installed in it,
/// installing it with `python`'s pip when missing. A missing interpreter
/// or pip is a [`MissingTool`].
pub fn ensure_tool(dir: &Path, python: &str) -> Result<PathBuf> {
    let marker = dir.join(format!("componentize_py-{COMPONENTIZE_PY}.dist-info"));
    let by_hand = format!(
        "python3 -m pip install --target {} componentize-py=={COMPONENTIZE_PY}",
        dir.display()
    );
    // The interpreter runs componentize-py too: check it even when the
    // tool is installed.
    let installed = marker.is_dir();
    if installed && crate::process::which(python).is_some() {
        return Ok(dir.to_path_buf());
    }
    let pip = Command::new(python)
        .args(["-m", "pip", "--version"])
        .output();
    if !matches!(&pip, Ok(o) if o.status.success()) {
        return Err(MissingTool::new(
            format!("{python} -m pip"),
            "building Python plugins (componentize-py)",
            format!("apt-get install python3 python3-pip (then rocwasm installs componentize-py {COMPONENTIZE_PY} itself: {by_hand})"),
        )
        .into());
    }
    eprintln!(
        "installing componentize-py {COMPONENTIZE_PY} into {}",
        dir.display()
    );
    if dir.exists() {
        // An older pin or a broken install: start clean (it is our directory).
        fs::remove_dir_all(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
    }
    let mut install = Command::new(python);
    install
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
            "--target",
        ])
        .arg(dir)
        .arg(format!("componentize-py=={COMPONENTIZE_PY}"));
    run(&mut install)
        .with_context(|| format!("installing componentize-py failed (by hand: {by_hand})"))?;
    if !marker.is_dir() {
        bail!(
            "pip finished but {} is missing (by hand: {by_hand})",
            marker.display()
        );
    }
    Ok(dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_python_is_one_sentence_saying_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let err = ensure_tool(&dir.path().join("tools"), "python3-not-installed-here").unwrap_err();
        assert_eq!(err.chain().count(), 1, "{err:#}");
        assert!(MissingTool::find(&err).is_some());
        let err = err.to_string();
        for needle in [
            "apt-get install python3 python3-pip",
            "python3 -m pip install --target",
            "componentize-py==0.25.1",
            "`python3-not-installed-here -m pip`",
        ] {
            assert!(err.contains(needle), "{needle:?} not in: {err}");
        }
    }
}
