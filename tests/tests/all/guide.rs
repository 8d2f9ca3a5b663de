//! The "Write your first plugin" guide (`docs/FIRST_PLUGIN.md`) cannot rot:
//! every ```` ```sh ```` block of it runs here, in order, with bash
//! (`set -euo pipefail`) in one empty temporary directory, `rocwasm` on
//! `PATH` and `ROCWASM_REPO` set to this checkout. Each `# expect: TEXT`
//! line of a block must appear in what that block printed.
//!
//! The guide's Rust build shares `target/plugin-kit-rust` with
//! `tests/plugin_kit.rs` (`ROCWASM_CARGO_TARGET_DIR`), so the wasm32 std is
//! compiled once per checkout.

use std::process::Command;

use rocwasm_tests::*;

/// A document's blocks fenced with ```` ```LANG ````, in order.
pub(super) fn fenced(doc: &str, lang: &str) -> Vec<String> {
    let open = format!("```{lang}");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line.trim_end()) {
            (None, l) if l == open => current = Some(String::new()),
            (Some(_), "```") => blocks.push(current.take().unwrap()),
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(current.is_none(), "an unclosed ```{lang} block");
    blocks
}

/// The guide's `sh` blocks, in order.
fn blocks(guide: &str) -> Vec<String> {
    fenced(guide, "sh")
}

/// Runs a document's `sh` block as the module docs say (bash with `set
/// -euo pipefail` in `dir`, `rocwasm` on `PATH`, `ROCWASM_REPO`, the
/// plugins and a cache of its own), fails naming `what` unless it succeeds
/// and prints every `# expect: TEXT` of the block; returns what it printed.
pub(super) fn run_block(block: &str, dir: &std::path::Path, what: &str) -> String {
    let repo = workspace();
    let bin_dir = rocwasm_bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let target = repo.join("target");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("set -euo pipefail\n{block}"))
        .current_dir(dir)
        .env("PATH", &path)
        .env("ROCWASM_REPO", &repo)
        .env("ROCWASM_PLUGIN_PATH", target.join("plugins"))
        .env("ROCWASM_TOOLS_DIR", &target)
        .env("ROCWASM_CARGO_TARGET_DIR", target.join("plugin-kit-rust"))
        .env("XDG_CACHE_HOME", dir.join(".cache"))
        // `mpirun` lines run as the MPI test runs them: as root in CI
        // containers, more ranks than cores, loopback only.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .env("OMPI_MCA_plm_rsh_agent", "false")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{block}\n--- output:\n{said}",
        out.status
    );
    for expect in block
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# expect:"))
    {
        assert!(
            said.contains(expect.trim()),
            "{what} did not print `{}`:\n{block}\n--- output:\n{said}",
            expect.trim()
        );
    }
    said
}

#[test]
fn every_command_of_the_first_plugin_guide_works() {
    let repo = workspace();
    let guide = std::fs::read_to_string(repo.join("docs/FIRST_PLUGIN.md")).unwrap();
    let blocks = blocks(&guide);
    assert!(
        blocks.len() >= 6,
        "only {} sh blocks in the guide",
        blocks.len()
    );
    plugins_dir(&["kernel-stats"]);
    let tmp = tempfile::tempdir().unwrap();
    for (n, block) in blocks.iter().enumerate() {
        run_block(block, tmp.path(), &format!("guide block {}", n + 1));
    }
    // What the guide built and shipped is there.
    assert!(tmp
        .path()
        .join("slow-kernels/target/slow-kernels.wasm")
        .is_file());
    assert!(tmp.path().join("store/slow-kernels/index.json").is_file());
}

/// The guide's chain runs stock plugins in stages without an `output`
/// grant (a chain that wants only the summary tables). A stock plugin then
/// writes no file and says nothing above info level: every replay of the
/// guide's chain used to print `WARN kernel-stats: cannot write
/// kernel_stats.csv: no output directory is granted to this plugin`.
#[test]
fn the_guides_chain_without_output_grants_replays_without_warnings() {
    plugins_dir(&["kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    // As the guide's chain.toml, with the other stock plugins that write a
    // file beside their tables; no stage says `output`.
    std::fs::write(
        tmp.path().join("chain.toml"),
        r#"version = 1

[output]
summary = true

[[stage]]
name = "kernel-stats"
plugin = "kernel-stats"
domains = ["kernel_dispatch"]

[[stage]]
name = "api-stats"
plugin = "api-stats"
domains = ["hip"]

[[stage]]
name = "memcpy-bandwidth"
plugin = "memcpy-bandwidth"
domains = ["memory_copy"]
"#,
    )
    .unwrap();
    let sample = workspace().join("examples/traces/sample");
    let out = rocwasm(
        &[
            "replay",
            sample.to_str().unwrap(),
            "-c",
            "chain.toml",
            "-d",
            "replayed",
        ],
        tmp.path(),
    );
    assert_success(&out, "rocwasm replay -c chain.toml");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for table in [
        "Kernel dispatch statistics",
        "HIP API statistics",
        "Memory copies by direction",
    ] {
        assert!(
            stdout.contains(table),
            "the summary has no `{table}` table:\n{stdout}\n--- stderr\n{stderr}"
        );
    }
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR") || l.contains("cannot write"))
        .collect();
    assert!(
        complaints.is_empty(),
        "a stage without an output grant is not a problem, yet stderr says:\n{}",
        complaints.join("\n")
    );
    for file in [
        "kernel_stats.csv",
        "hip_api_stats.csv",
        "memcpy_bandwidth_by_direction.csv",
    ] {
        assert!(
            !tmp.path().join("replayed").join(file).exists(),
            "{file} was written without a grant"
        );
    }
}
