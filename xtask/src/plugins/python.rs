//! Python plugins: `plugins/python/<name>/app.py` → components in
//! `target/plugins/<name>.wasm`, with componentize-py.
//!
//! The recipe — componentize-py pinned at
//! [`rocwasm_kit::python::COMPONENTIZE_PY`], installed with `python3 -m pip
//! install --target` into a directory of its own (here `target/py-tools`),
//! run with that directory on `PYTHONPATH` — is [`rocwasm_kit::python`]'s,
//! shared with `rocwasm plugin build`. Here: the list of plugins, the module
//! search path (the plugin's directory, then `plugins/python/` for the
//! `rocwasm` package), and skipping a plugin whose inputs are unchanged
//! ([`super::stamp`]): a componentize run takes ~10–20 s.

use std::fs;

use anyhow::{Context, Result};
use rocwasm_kit::python::{componentize, ensure_tool, Job, COMPONENTIZE_PY, PYTHON};

use super::stamp;
use crate::util::root;

/// The Python plugins: directory under `plugins/python/` (= the
/// component's name) and the WIT world it implements.
pub const PYTHON_PLUGINS: &[(&str, &str)] = &[
    ("range-kernel-time", "analysis-plugin"),
    // A hostile test plugin: tries to leave the deny-all WASI sandbox
    // (files, directories, environment, TCP, UDP, DNS) and records what
    // happened; `tests/tests/all/wasi_escape.rs`.
    ("wasi-escape", "analysis-plugin"),
];

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
        let wit = root.join("wit");
        let job = Job {
            wit: &wit,
            world,
            module: "app",
            paths: vec![src.clone(), root.join("plugins/python")],
            out: &out,
        };
        componentize(tools, &job).with_context(|| {
            format!("componentize-py could not build the Python plugin `{name}`")
        })?;
        stamp::record(&out, &fp)?;
        built.push((name.to_string(), fs::read(&out)?));
    }
    Ok(built)
}
