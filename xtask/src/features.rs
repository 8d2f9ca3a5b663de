//! `cargo xtask check-features`: every build of the workspace resolves the
//! same features for the dependencies it shares with the test build.
//!
//! Cargo resolves features per invocation: `cargo build -p rocwasm` leaves
//! out what the dev-dependencies of `cargo test --workspace` turn on. When a
//! shared dependency's feature set differs, every crate above it is
//! compiled twice — once for the demo, again for the tests — and for
//! wasmtime and Cranelift that is minutes on two cores. This check runs
//! `cargo tree` for the demo's selection ([`crate::util::DEMO_BUILD`]) and
//! for the test build's, and fails naming each package whose features
//! differ, so the fix (asking for the same features in a normal
//! dependency, see `host/plugin-host/Cargo.toml`) is one look away.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::util::{root, DEMO_BUILD};

/// `package id → the feature sets it is built with` (a package can be built
/// twice, for the host and as a build dependency).
type Resolved = BTreeMap<String, BTreeSet<String>>;

/// Fails when a package of the demo build is resolved with other features
/// than in the test build.
pub fn check() -> Result<()> {
    let demo = resolve(&packages_of(DEMO_BUILD), "normal,build")?;
    let test = resolve(&["--workspace", "--exclude", "xtask"], "normal,build,dev")?;
    let differing = differences(&demo, &test);
    if differing.is_empty() {
        eprintln!(
            "check-features: the demo build's {} packages resolve as in the test build",
            demo.len()
        );
        return Ok(());
    }
    for (package, demo, test) in &differing {
        eprintln!("{package}\n  demo build: {demo:?}\n  test build: {test:?}");
    }
    bail!(
        "{} package(s) are built with other features by `cargo xtask demo` than by `cargo xtask test`, \
         so everything above them compiles twice; ask for the test build's features in a normal \
         dependency (see host/plugin-host/Cargo.toml)",
        differing.len()
    )
}

/// The `-p NAME` arguments of a cargo build selection.
fn packages_of<'a>(selection: &[&'a str]) -> Vec<&'a str> {
    selection
        .windows(2)
        .filter(|w| w[0] == "-p")
        .flat_map(|w| ["-p", w[1]])
        .collect()
}

fn resolve(selection: &[&str], edges: &str) -> Result<Resolved> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .arg("tree")
        .args(selection)
        .args(["-e", edges, "--prefix", "none", "-f", "{p}|{f}"])
        .current_dir(root())
        .output()
        .context("cannot run cargo tree")?;
    if !out.status.success() {
        bail!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(parse(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `cargo tree -f '{p}|{f}' --prefix none` lines.
fn parse(text: &str) -> Resolved {
    let mut resolved = Resolved::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        let package = package
            .trim_end_matches(" (*)")
            .trim_end_matches(" (proc-macro)")
            .to_string();
        // `cargo tree` appends ` (*)` after the features of a repeated node.
        let features = features.trim_end_matches(" (*)").to_string();
        resolved.entry(package).or_default().insert(features);
    }
    resolved
}

/// `(package, demo's feature sets, test's)` for each shared package that differs.
fn differences(
    demo: &Resolved,
    test: &Resolved,
) -> Vec<(String, BTreeSet<String>, BTreeSet<String>)> {
    demo.iter()
        .filter_map(|(package, features)| {
            let other = test.get(package)?;
            (other != features).then(|| (package.clone(), features.clone(), other.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_feature_turned_on_only_by_the_tests_is_a_difference() {
        let demo = parse("object v0.39.1|elf,std\ncrc32fast v1.5.4|std\nfoo v1.0.0|\n");
        let test = parse(
            "object v0.39.1|elf,std (*)\ncrc32fast v1.5.4|default,std\nfoo v1.0.0|\npng v0.18.1|\n",
        );
        let found = differences(&demo, &test);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "crc32fast v1.5.4");
    }

    #[test]
    fn the_selection_keeps_only_the_packages() {
        assert_eq!(
            packages_of(&["-p", "a", "--lib", "-p", "b"]),
            vec!["-p", "a", "-p", "b"]
        );
    }
}
