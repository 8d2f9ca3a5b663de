//! The README and the guides in `docs/` cannot rot: every ```` ```sh ````
//! block of them runs as written, in order, each in a shell of its own
//! (`crate::guide::run_block`: bash with `set -euo pipefail`, `rocwasm` on
//! `PATH`, each `# expect: TEXT` line of a block checked against what it
//! printed).
//!
//! The convention, for every document: a ```` ```sh ```` block runs, and
//! a test runs it; a shell block that cannot run as written is fenced
//! ```` ```text ```` instead. Not run, so fenced `text`:
//!
//! - the README's quick start (`cargo xtask demo`, `cargo xtask test`): they
//!   install Debian packages as root and build for ten minutes and more,
//!   and `cargo xtask test` runs this very test; CI runs `cargo xtask test`
//!   itself (`.ci/run`), which [`the_readme_test_command_is_what_ci_runs`]
//!   holds to;
//! - commands that need a program of the reader's (`./app`, `tool.c`, a
//!   `CMakeLists.txt`): `docs/PARQUET.md`'s examples,
//!   `docs/NATIVE_TOOLS.md`'s build recipes;
//! - long measurements (`cargo xtask bench`, `docs/PERFORMANCE.md`) and
//!   build-time figures (`docs/BUILD_TIME.md`).
//!
//! `mpirun` lines run as written: the shell gets Open MPI's variables for
//! what a user types as flags only when needed (root in a CI container,
//! more ranks than cores; `crate::guide::run_block`).
//!
//! README blocks are written for the repository's root after `cargo xtask
//! demo` (`target/debug/rocwasm`, `target/sim/bin/multi_kernel`,
//! `examples/…`). They run here in an empty temporary directory that
//! stands in for it: `examples` links to the checkout's, and `target/`
//! holds links to the freshly built binaries (`debug`), the stock plugins
//! (`plugins`) and the simulated runtime with its samples (`sim`), so what
//! a block writes (`-d DIR`, keys, a plugin project) stays in the
//! temporary directory.
//!
//! `docs/FIRST_PLUGIN.md` and `docs/POLICY.md` are run by their own tests
//! (`guide.rs`, `site_policy.rs`), `docs/NATIVE_TOOLS.md`'s "A minimal
//! tool" by `native_tools.rs`; every other `sh` block of `docs/*.md` runs
//! here.

use std::path::{Path, PathBuf};

use rocwasm_tests::*;

/// An empty directory laid out like the repository's root after `cargo
/// xtask demo`, as far as the documents' commands look (see the module
/// docs).
fn repository_stand_in() -> tempfile::TempDir {
    let ws = workspace();
    let plugins = plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth", "report"]);
    let sim = sim_dir();
    let bin_dir = rocwasm_bin().parent().unwrap().to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    let link = |to: &Path, at: &str| std::os::unix::fs::symlink(to, tmp.path().join(at)).unwrap();
    std::fs::create_dir(tmp.path().join("target")).unwrap();
    link(&ws.join("examples"), "examples");
    link(&bin_dir, "target/debug");
    link(&plugins, "target/plugins");
    link(&sim, "target/sim");
    tmp
}

/// A document of the checkout.
fn read(rel: &str) -> String {
    std::fs::read_to_string(workspace().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Runs `doc`'s `sh` blocks in order in `dir`; returns what each printed.
fn run_blocks(doc: &str, name: &str, dir: &Path) -> Vec<String> {
    crate::guide::fenced(doc, "sh")
        .iter()
        .enumerate()
        .map(|(n, block)| crate::guide::run_block(block, dir, &format!("{name} block {}", n + 1)))
        .collect()
}

/// Every `sh` block of the README, from `PATH` and `rocwasm demo` to the
/// journeys, and what they left behind.
#[test]
fn every_runnable_block_of_the_readme_works() {
    let readme = read("README.md");
    let blocks = crate::guide::fenced(&readme, "sh");
    assert!(
        blocks.len() >= 12,
        "only {} sh blocks in README.md",
        blocks.len()
    );
    // The first profile comes first: getting `rocwasm` on PATH, the demo,
    // one `rocwasm run`.
    assert!(
        blocks[0].contains("export PATH=\"$PWD/target/debug:$PATH\""),
        "{}",
        blocks[0]
    );
    assert!(
        blocks[1].trim_start().starts_with("rocwasm demo"),
        "{}",
        blocks[1]
    );
    assert!(
        blocks[2].contains("rocwasm run --sim --sys-trace --stats -d "),
        "{}",
        blocks[2]
    );

    let root = repository_stand_in();
    let said = run_blocks(&readme, "README.md", root.path());

    // The PATH line names the demo's binary.
    let which = said[0].lines().next().unwrap_or_default();
    assert_eq!(
        Path::new(which),
        root.path().join("target/debug/rocwasm"),
        "{}",
        said[0]
    );
    // The demo's live run wrote its page; the first profile its files.
    let demo_runs: Vec<PathBuf> = glob_dirs(&root.path().join("rocwasm-demo"), 2);
    assert_eq!(demo_runs.len(), 1, "{demo_runs:?}");
    assert!(demo_runs[0].join("report.html").is_file(), "{}", said[1]);
    for file in [
        "kernel_trace.csv",
        "hip_api_trace.csv",
        "hsa_api_trace.csv",
        "kernel_stats.csv",
    ] {
        assert!(
            root.path().join("first-profile").join(file).is_file(),
            "first-profile/{file} missing:\n{}",
            said[2]
        );
    }
    // The journeys' artefacts.
    for rel in [
        "chained/report.html",
        "replayed/kernel_stats.csv",
        "my-plugin/rocwasm-plugin.toml",
        "store/my-stats/index.json",
        "libtool.so",
        "with-tool/kernel_trace.csv",
        "all/kernel_stats_by_rank.csv",
        "all.db",
        "out/3/kernel_trace.csv",
        "all-ranks/kernel_stats_by_rank.csv",
        "sdk-backend/kernel_trace.csv",
    ] {
        assert!(root.path().join(rel).exists(), "{rel} missing");
    }
    // The MPI block's four ranks, each in the replay's per-rank table.
    let by_rank =
        std::fs::read_to_string(root.path().join("all-ranks/kernel_stats_by_rank.csv")).unwrap();
    let ranks: std::collections::BTreeSet<&str> = by_rank
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').next())
        .collect();
    assert_eq!(
        ranks.into_iter().collect::<Vec<_>>(),
        ["\"0\"", "\"1\"", "\"2\"", "\"3\""],
        "{by_rank}"
    );
}

/// The subdirectories `depth` levels below `dir` (`rocwasm-demo/HOST/PID`).
fn glob_dirs(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut level = vec![dir.to_path_buf()];
    for _ in 0..depth {
        level = level
            .iter()
            .flat_map(|d| std::fs::read_dir(d).unwrap_or_else(|e| panic!("{}: {e}", d.display())))
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
    }
    level
}

/// The README's quick start is not run here (module docs), but its test
/// command is exactly the one CI runs, and neither command is in a block
/// this test would run.
#[test]
fn the_readme_test_command_is_what_ci_runs() {
    let readme = read("README.md");
    let quick = &readme[readme
        .find("## Quick start")
        .expect("a Quick start section")..];
    let quick = &quick[..quick[3..].find("\n## ").map_or(quick.len(), |n| n + 3)];
    let text = crate::guide::fenced(quick, "text");
    let commands: Vec<&str> = text
        .iter()
        .flat_map(|b| b.lines())
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        commands,
        ["cargo xtask demo", "cargo xtask test"],
        "{quick}"
    );
    let ci = read(".ci/run");
    assert!(
        ci.lines().any(|l| l.trim() == "cargo xtask test"),
        ".ci/run does not run `cargo xtask test`:\n{ci}"
    );
    for block in crate::guide::fenced(&readme, "sh") {
        assert!(
            !block.contains("cargo xtask"),
            "a runnable block builds:\n{block}"
        );
    }
}

/// Every `sh` block of `docs/*.md` that no other test runs (module docs).
#[test]
fn every_runnable_block_of_the_other_docs_works() {
    let docs = workspace().join("docs");
    let mut names: Vec<String> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    for name in names {
        let doc = read(&format!("docs/{name}"));
        let doc = match name.as_str() {
            // Run whole by guide.rs and site_policy.rs: they must have blocks
            // for those tests to run, or this list has gone stale.
            "FIRST_PLUGIN.md" | "POLICY.md" => {
                assert!(
                    !crate::guide::fenced(&doc, "sh").is_empty(),
                    "docs/{name} is said to be run by another test but has no sh block"
                );
                continue;
            }
            // Its minimal tool's section is native_tools.rs's.
            "NATIVE_TOOLS.md" => {
                let rest = without_section(&doc, "## A minimal tool");
                assert_ne!(rest, doc, "docs/{name} has a minimal tool section");
                rest
            }
            _ => doc,
        };
        if crate::guide::fenced(&doc, "sh").is_empty() {
            continue;
        }
        let root = repository_stand_in();
        run_blocks(&doc, &format!("docs/{name}"), root.path());
    }
}

/// `doc` without the section that `heading` opens (up to the next `## `).
fn without_section(doc: &str, heading: &str) -> String {
    let start = doc
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no `{heading}` section"));
    let rest = &doc[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |n| n + 3);
    format!("{}{}", &doc[..start + 1], &rest[end..])
}
