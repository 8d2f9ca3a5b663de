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
//! dependency, see `host/plugin-runtime/plugin-host/Cargo.toml`) is one look away.

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
    for (package, demo, test) in &differing {
        eprintln!("{package}\n  demo build: {demo:?}\n  test build: {test:?}");
    }
    if !differing.is_empty() {
        bail!(
            "{} package(s) are built with other features by `cargo xtask demo` than by `cargo xtask test`, \
             so everything above them compiles twice; ask for the test build's features in a normal \
             dependency (see host/plugin-runtime/plugin-host/Cargo.toml)",
            differing.len()
        );
    }
    // The `cargo xtask` binary is built first, by a cargo call of its own:
    // what it shares with the demo's build must resolve the same way too.
    let xtask = resolve(&["-p", "xtask"], "normal,build")?;
    let own = xtask_own_builds(&xtask, &demo);
    for (package, extra) in &own {
        eprintln!("{package}\n  only the xtask binary builds it with: {extra:?}");
    }
    if !own.is_empty() {
        bail!(
            "{} package(s) are built with other features by the `cargo xtask` binary than by the \
             demo build, so both compile them; ask for the demo build's features in xtask/Cargo.toml",
            own.len()
        );
    }
    eprintln!(
        "check-features: the demo build's {} packages resolve as in the test build, \
         and the xtask binary's {} as in the demo build",
        demo.len(),
        xtask.len()
    );
    Ok(())
}

/// Packages the xtask binary's own source parsing (`check-layers`, the
/// generators) needs with span locations: built for it alone, by design.
const XTASK_ONLY: [&str; 2] = ["syn ", "proc-macro2 "];

/// `(package, feature sets)` the xtask binary builds that the demo build
/// shares the package of but never builds so: each is a second compile of
/// that package and of everything above it.
///
/// `cargo tree` does not tell a proc macro's dependencies from the
/// binary's, so this catches a feature set the xtask binary asks for that
/// the demo's build has nowhere, not one that the two builds have on
/// opposite sides (a proc macro's `serde_core` against the binary's); the
/// exact view is `cargo build --unit-graph` (nightly only), by which the
/// features in `xtask/Cargo.toml` were chosen.
fn xtask_own_builds(xtask: &Resolved, demo: &Resolved) -> Vec<(String, BTreeSet<String>)> {
    xtask
        .iter()
        .filter(|(package, _)| !XTASK_ONLY.iter().any(|p| package.starts_with(p)))
        .filter_map(|(package, features)| {
            let shared = demo.get(package)?;
            let extra: BTreeSet<String> = features.difference(shared).cloned().collect();
            (!extra.is_empty()).then(|| (package.clone(), extra))
        })
        .collect()
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
    fn a_feature_set_only_the_xtask_binary_builds_is_reported() {
        let demo =
            parse("semver v1.0.28|serde,std\nserde v1.0.229|alloc\nserde v1.0.229|alloc,std\n");
        let xtask =
            parse("semver v1.0.28|std\nserde v1.0.229|alloc,std\nsyn v3.0.9|full\nxtask v0.1.0|\n");
        let own = xtask_own_builds(&xtask, &demo);
        assert_eq!(own.len(), 1, "{own:?}");
        assert_eq!(own[0].0, "semver v1.0.28");
        assert!(own[0].1.contains("std"));
    }

    #[test]
    fn the_selection_keeps_only_the_packages() {
        assert_eq!(
            packages_of(&["-p", "a", "--lib", "-p", "b"]),
            vec!["-p", "a", "-p", "b"]
        );
    }
}
