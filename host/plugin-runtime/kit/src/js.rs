//! JavaScript plugins: an ES module → a component, with componentize-js.
//!
//! componentize-js embeds the StarlingMonkey (SpiderMonkey) engine,
//! evaluates the plugin module (and what it imports, such as the
//! `rocwasm.js` layer) into a snapshot and writes an ~12 MB component that
//! imports WASI (the host links a deny-all WASI context for it).
//! `-d http fetch-event` disables the features that would import
//! `wasi:http`, which no host here provides.
//!
//! **The tool** is installed pinned ([`COMPONENTIZE_JS`]) with the machine's
//! `npm install --prefix` into a directory of its own (never globally), and
//! run with `node` (≥ [`MIN_NODE`]). Only the top-level package is pinned:
//! its dependencies (jco, wizer, …) resolve within componentize-js's own
//! ranges. The install takes ~30 s; a componentize run ~10–30 s.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::missing::MissingTool;
use crate::process::run;

/// The componentize-js release this project builds and tests with.
pub const COMPONENTIZE_JS: &str = "0.23.0";

/// The npm package.
pub const PACKAGE: &str = "@bytecodealliance/componentize-js";

/// The oldest Node.js major release componentize-js 0.23's dependencies
/// accept (`oxc-parser`: `engines.node >= 20`).
pub const MIN_NODE: u32 = 20;

/// Builds the component of `module` (the world `world` of the WIT package
/// in `wit`) into `out`, with the componentize-js script `cli` (see
/// [`ensure_tool`]).
pub fn componentize(cli: &Path, module: &Path, wit: &Path, world: &str, out: &Path) -> Result<()> {
    let mut cmd = Command::new("node");
    cmd.arg(cli)
        .arg(module)
        .arg("--wit")
        .arg(wit)
        .args(["-n", world, "-d", "http", "fetch-event", "-o"])
        .arg(out);
    run(&mut cmd)
}

/// The componentize-js command-line script in `dir`, installing the pinned
/// release there (with `programs`: node and npm) when it is missing. A
/// missing or too old node, or a missing npm, is a [`MissingTool`].
pub fn ensure_tool(dir: &Path, programs: [&str; 2]) -> Result<PathBuf> {
    let package = dir.join("node_modules").join(PACKAGE);
    let cli = package.join("src/cli.js");
    // node runs componentize-js too: check it even when the tool is installed.
    if installed_version(&package).as_deref() == Some(COMPONENTIZE_JS)
        && cli.is_file()
        && crate::process::which(programs[0]).is_some()
    {
        return Ok(cli);
    }
    let by_hand = format!(
        "npm install --prefix {} {PACKAGE}@{COMPONENTIZE_JS}",
        dir.display()
    );
    let missing = |tool: String| -> anyhow::Error {
        MissingTool::new(
            tool,
            "building JS plugins (componentize-js)",
            format!(
                "apt-get install nodejs npm (Node.js ≥ {MIN_NODE}: on Debian 12, NodeSource's \
                 nodejs 20); then rocwasm installs {PACKAGE}@{COMPONENTIZE_JS} itself: {by_hand}"
            ),
        )
        .into()
    };
    for tool in programs {
        let found = Command::new(tool).arg("--version").output();
        let version = match &found {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            _ => return Err(missing(tool.to_string())),
        };
        if tool == programs[0] {
            let major = version.trim_start_matches('v').split('.').next();
            if major.and_then(|m| m.parse::<u32>().ok()).unwrap_or(0) < MIN_NODE {
                return Err(missing(format!(
                    "{tool} ≥ {MIN_NODE} (this one is {version})"
                )));
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
    run(&mut install)
        .with_context(|| format!("installing componentize-js failed (by hand: {by_hand})"))?;
    if installed_version(&package).as_deref() != Some(COMPONENTIZE_JS) || !cli.is_file() {
        bail!(
            "npm finished but {} is not {COMPONENTIZE_JS} (by hand: {by_hand})",
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
            assert!(MissingTool::find(&err).is_some());
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
                format!("`{missing}`"),
            ] {
                assert!(err.contains(&needle), "{needle:?} not in: {err}");
            }
        }
    }
}
