//! Python plugins: `plugins/python/<name>/app.py` → components in
//! `target/plugins/<name>.wasm`, with componentize-py.
//!
//! componentize-py (a wheel from PyPI with its own CPython-for-wasm inside)
//! generates the world's bindings (`wit_world`), snapshots the interpreter
//! with the plugin's modules imported, and writes an ~18 MB component that
//! imports WASI (the host links a deny-all WASI context for it). The
//! module search path is the plugin's directory, then `plugins/python/`
//! (the `rocwasm` package).
//!
//! **The tool** is installed by this module, pinned
//! ([`COMPONENTIZE_PY`]), into `target/py-tools` with the machine's
//! `python3 -m pip install --target` (no virtualenv, nothing global; on
//! Debian 12 a plain `pip install` is refused as an "externally managed
//! environment", `--target` is not), and run as `python3 -c` with that
//! directory on `PYTHONPATH`. The install takes ~5 s; a componentize run
//! ~10–20 s, skipped when no input changed ([`super::stamp`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::stamp;
use crate::util::root;

/// The Python plugins: directory under `plugins/python/` (= the
/// component's name) and the WIT world it implements.
pub const PYTHON_PLUGINS: &[(&str, &str)] = &[
    ("range-kernel-time", "analysis-plugin"),
    // A hostile test plugin: tries to leave the deny-all WASI sandbox
    // (files, directories, environment, TCP, UDP, DNS) and records what
    // happened; `tests/tests/wasi_escape.rs`.
    ("wasi-escape", "analysis-plugin"),
];

/// The componentize-py release this project builds and tests with.
pub const COMPONENTIZE_PY: &str = "0.25.1";

/// The interpreter that installs and runs componentize-py: the machine's.
const PYTHON: &str = "python3";

/// Runs componentize-py's command line from the `--target` install.
const LAUNCHER: &str =
    "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())";

/// Builds every Python plugin; `(name, component bytes)` for each.
pub fn build_all() -> Result<Vec<(String, Vec<u8>)>> {
    let root = root();
    let work = root.join("target/plugins-py");
    fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let mut tools = None;
    let mut built = Vec::new();
    for (name, world) in PYTHON_PLUGINS {
        let src = root.join("plugins/python").join(name);
        let inputs = [
            src.clone(),
            root.join("plugins/python/rocwasm"),
            root.join("wit"),
        ];
        let fp = stamp::fingerprint(
            &format!("componentize-py {COMPONENTIZE_PY}"),
            world,
            &inputs,
        )?;
        let out = work.join(format!("{name}.wasm"));
        if let Some(bytes) = stamp::reuse(&out, &fp) {
            eprintln!("  {name}: inputs unchanged, reusing {}", out.display());
            built.push((name.to_string(), bytes));
            continue;
        }
        let tools = match &tools {
            Some(t) => t,
            None => tools.insert(ensure_tool(&root.join("target/py-tools"), PYTHON)?),
        };
        let mut cmd = Command::new(PYTHON);
        cmd.env("PYTHONPATH", tools)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .args(["-c", LAUNCHER, "-d"])
            .arg(root.join("wit"))
            .args(["-w", world, "componentize", "app", "-p"])
            .arg(&src)
            .arg("-p")
            .arg(root.join("plugins/python"))
            .arg("-o")
            .arg(&out);
        crate::util::run(&mut cmd).with_context(|| {
            format!("componentize-py could not build the Python plugin `{name}`")
        })?;
        stamp::record(&out, &fp)?;
        built.push((name.to_string(), fs::read(&out)?));
    }
    Ok(built)
}

/// `dir` with componentize-py [`COMPONENTIZE_PY`] installed in it, installing
/// it with `python`'s pip when missing.
fn ensure_tool(dir: &Path, python: &str) -> Result<PathBuf> {
    let marker = dir.join(format!("componentize_py-{COMPONENTIZE_PY}.dist-info"));
    if marker.is_dir() {
        return Ok(dir.to_path_buf());
    }
    let how = format!(
        "building the Python plugins needs python3 with pip (Debian: `apt-get install python3 \
         python3-pip`), which installs componentize-py {COMPONENTIZE_PY} into {} \
         (by hand: `python3 -m pip install --target {} componentize-py=={COMPONENTIZE_PY}`)",
        dir.display(),
        dir.display()
    );
    let pip = Command::new(python)
        .args(["-m", "pip", "--version"])
        .output();
    if !matches!(&pip, Ok(o) if o.status.success()) {
        bail!("{how}: `{python} -m pip` is not available on this machine");
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
    crate::util::run(&mut install).with_context(|| how.clone())?;
    if !marker.is_dir() {
        bail!("{how}: pip finished but {} is missing", marker.display());
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
        let err = err.to_string();
        for needle in [
            "apt-get install python3 python3-pip",
            "python3 -m pip install --target",
            "componentize-py==0.25.1",
            "`python3-not-installed-here -m pip` is not available",
        ] {
            assert!(err.contains(needle), "{needle:?} not in: {err}");
        }
    }
}
