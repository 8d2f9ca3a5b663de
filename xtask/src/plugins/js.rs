//! JavaScript plugins: `plugins/js/<name>/plugin.js` → components in
//! `target/plugins/<name>.wasm`, with componentize-js.
//!
//! componentize-js embeds the StarlingMonkey (SpiderMonkey) engine,
//! evaluates the plugin module (and what it imports, such as
//! `plugins/js/rocwasm.js`) into a snapshot and writes an ~12 MB component
//! that imports WASI (the host links a deny-all WASI context for it).
//! `-d http fetch-event` disables the features that would import
//! `wasi:http`, which no host here provides.
//!
//! **The tool** is installed by this module, pinned ([`COMPONENTIZE_JS`]),
//! with the machine's `npm install` into the project-local
//! `target/js-tools` (never globally), and run with `node` (≥ 20). Only the
//! top-level package is pinned: its dependencies (jco, wizer, …) resolve
//! within componentize-js's own ranges. (A committed lock file and `npm ci`
//! were tried: npm 11 writes locks that `npm ci` then rejects for missing
//! optional packages of other platforms.) The install takes ~30 s; a componentize
//! run ~10–30 s, skipped when no input changed ([`super::stamp`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::stamp;
use crate::util::root;

/// The JS plugins: directory under `plugins/js/` (= the component's name)
/// and the WIT world it implements.
pub const JS_PLUGINS: &[(&str, &str)] = &[("copy-histogram", "analysis-plugin")];

/// The componentize-js release this project builds and tests with.
pub const COMPONENTIZE_JS: &str = "0.23.0";

const PACKAGE: &str = "@bytecodealliance/componentize-js";

/// The oldest Node.js major release componentize-js 0.23's dependencies
/// accept (`oxc-parser`: `engines.node >= 20`).
const MIN_NODE: u32 = 20;

/// Builds every JS plugin; `(name, component bytes)` for each.
pub fn build_all() -> Result<Vec<(String, Vec<u8>)>> {
    let root = root();
    let work = root.join("target/plugins-js");
    fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let mut cli = None;
    let mut built = Vec::new();
    for (name, world) in JS_PLUGINS {
        let src = root.join("plugins/js").join(name);
        let inputs = [
            src.clone(),
            root.join("plugins/js/rocwasm.js"),
            root.join("wit"),
        ];
        let fp = stamp::fingerprint(
            &format!("componentize-js {COMPONENTIZE_JS}"),
            world,
            &inputs,
        )?;
        let out = work.join(format!("{name}.wasm"));
        if let Some(bytes) = stamp::reuse(&out, &fp) {
            eprintln!("  {name}: inputs unchanged, reusing {}", out.display());
            built.push((name.to_string(), bytes));
            continue;
        }
        let cli = match &cli {
            Some(c) => c,
            None => cli.insert(ensure_tool(&root.join("target/js-tools"), ["node", "npm"])?),
        };
        let mut cmd = Command::new("node");
        cmd.arg(cli)
            .arg(src.join("plugin.js"))
            .arg("--wit")
            .arg(root.join("wit"))
            .args(["-n", world, "-d", "http", "fetch-event", "-o"])
            .arg(&out);
        crate::util::run(&mut cmd)
            .with_context(|| format!("componentize-js could not build the JS plugin `{name}`"))?;
        stamp::record(&out, &fp)?;
        built.push((name.to_string(), fs::read(&out)?));
    }
    Ok(built)
}

/// The componentize-js command-line script in `dir`, installing the pinned
/// release there (with `programs`: node and npm) when it is missing.
fn ensure_tool(dir: &Path, programs: [&str; 2]) -> Result<PathBuf> {
    let package = dir.join("node_modules").join(PACKAGE);
    let cli = package.join("src/cli.js");
    if installed_version(&package).as_deref() == Some(COMPONENTIZE_JS) && cli.is_file() {
        return Ok(cli);
    }
    let how = format!(
        "building the JS plugins needs Node.js ≥ {MIN_NODE} with npm (Debian: `apt-get install \
         nodejs npm`, or NodeSource's nodejs 20 on Debian 12), which installs \
         {PACKAGE}@{COMPONENTIZE_JS} into {} (by hand: `npm install --prefix {} \
         {PACKAGE}@{COMPONENTIZE_JS}`)",
        dir.display(),
        dir.display()
    );
    for tool in programs {
        let found = Command::new(tool).arg("--version").output();
        let version = match &found {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            _ => bail!("{how}: `{tool}` is not available on this machine"),
        };
        if tool == programs[0] {
            let major = version.trim_start_matches('v').split('.').next();
            if major.and_then(|m| m.parse::<u32>().ok()).unwrap_or(0) < MIN_NODE {
                bail!("{how}: `{tool}` is {version}");
            }
        }
    }
    eprintln!(
        "installing {PACKAGE}@{COMPONENTIZE_JS} into {}",
        dir.display()
    );
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut install = Command::new(programs[1]);
    install
        .args([
            "install",
            "--save-exact",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(dir)
        .arg(format!("{PACKAGE}@{COMPONENTIZE_JS}"));
    crate::util::run(&mut install).with_context(|| how.clone())?;
    if installed_version(&package).as_deref() != Some(COMPONENTIZE_JS) || !cli.is_file() {
        bail!(
            "{how}: npm finished but {} is not {COMPONENTIZE_JS}",
            package.display()
        );
    }
    Ok(cli)
}

/// The `version` of the package.json in `package`.
fn installed_version(package: &Path) -> Option<String> {
    let text = fs::read_to_string(package.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["version"].as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_node_or_npm_is_one_sentence_saying_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        for programs in [["node-not-here", "npm"], ["node", "npm-not-here"]] {
            let err = ensure_tool(&dir.path().join("tools"), programs).unwrap_err();
            assert_eq!(err.chain().count(), 1, "{err:#}");
            let err = err.to_string();
            let missing = if programs[0] == "node" {
                programs[1]
            } else {
                programs[0]
            };
            for needle in [
                "apt-get install nodejs npm".to_string(),
                "npm install --prefix".to_string(),
                "@bytecodealliance/componentize-js@0.23.0".to_string(),
                format!("`{missing}` is not available"),
            ] {
                assert!(err.contains(&needle), "{needle:?} not in: {err}");
            }
        }
    }
}
