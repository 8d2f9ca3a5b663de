//! `cargo xtask <command>`: everything that is more than one `cargo` call.
//!
//! The README's two commands are `cargo xtask demo` and `cargo xtask test`;
//! both first make sure the machine has what they need (see [`setup`]), so a
//! fresh Debian 12 machine with a Rust toolchain runs them as they are.

mod architecture;
mod bench;
mod facts;
mod features;
mod intercept;
mod layers;
mod names;
mod plugins;
mod setup;
mod sim;
mod util;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "rocwasm build orchestration")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Install the Debian packages the project needs (idempotent; apt-get as root or via sudo).
    Setup,
    /// Build the Wasm plugins (plugins/) into target/plugins/*.wasm (installing their toolchains first, as `setup` does).
    BuildPlugins {
        /// Build in debug mode (faster compile, slower plugins).
        #[arg(long)]
        debug: bool,
    },
    /// Regenerate rocwasm-ids's operation-name and HSA slot lists from the Debian ROCm 5.2 headers and libraries.
    GenNames,
    /// Regenerate host/process/intercept's HIP interposers from the Debian ROCm 5.2 headers and library.
    GenIntercept,
    /// Build the simulated AMD runtime and the sample applications into target/sim/.
    BuildSim,
    /// Build rocwasm's rocprofiler-sdk (the tool library, whose SONAME is librocprofiler-sdk.so.1) and print its prefix (include/, lib/, CMake and pkg-config files).
    BuildSdk,
    /// Build everything and run the demo on the simulated GPU with the default chain.
    Demo,
    /// Build the Python package `rocwasm` (host/launcher/python: PyO3, the
    /// stable ABI, Python ≥ 3.9) into a wheel with maturin, and print the
    /// `pip install` line.
    Wheel {
        /// A debug build (faster to build, slower to run).
        #[arg(long)]
        debug: bool,
        /// Where to write the wheel.
        #[arg(long, value_name = "DIR", default_value = "target/wheels")]
        out: PathBuf,
    },
    /// Run the project's benchmarks (release build) and print one table of figures against their references and targets.
    Bench {
        /// Small sizes: every row, rougher figures, well under 2 minutes after the build.
        #[arg(long)]
        quick: bool,
        /// Only the groups of rows whose name contains this text (e.g.
        /// `load`, `writers`, `kit`); the others are not measured.
        #[arg(long, value_name = "GROUP")]
        only: Option<String>,
        /// Leave out the groups of rows whose name contains this text
        /// (repeatable). CI leaves out `plugin kit`: the tests build and
        /// test the same kit samples in every language.
        #[arg(long, value_name = "GROUP")]
        skip: Vec<String>,
        /// Measure the test build (`target/debug`, what `cargo xtask test`
        /// built) instead of a release build: no second compile of the
        /// workspace, figures not representative. CI runs `--quick
        /// --debug-build` so the command cannot rot.
        #[arg(long)]
        debug_build: bool,
        /// Exit with status 1 when any row could not be measured (what CI
        /// wants: a bench that broke is a failure, not a `not measured` cell).
        #[arg(long)]
        all_rows: bool,
    },
    /// Build everything, run every test and the structure checks (check-layers, check-facts).
    Test,
    /// Fail if `cargo xtask demo` would build a dependency with other features than `cargo xtask test` (so it compiles twice).
    CheckFeatures,
    /// Fail if any crate has an import cycle between its modules, or (for the
    /// repository) docs/ARCHITECTURE.md's flow diagram names a folder that is
    /// not there or misses a crate folder.
    CheckLayers {
        /// Check the crates under this directory instead of the repository.
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Write the record schema's C header, Python module and JS module for
    /// the guest SDKs (plugins/c/include/rocwasm_schema.h, …) from
    /// `rocwasm-schema`; the schema's tests fail while a committed one differs.
    GenSchema,
    /// Fail if a kind or operation number, or a list of operation names, is defined outside rocwasm-ids.
    CheckFacts {
        /// Check the `.rs` files under this directory instead of the repository.
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Setup => setup::ensure_packages(),
        Command::BuildPlugins { debug } => {
            // The C, Python and JS toolchains (and Node.js on this
            // process's PATH): as `test` and `bench` have them.
            setup::ensure_packages()?;
            plugins::build(!debug).map(|_| ())
        }
        Command::GenNames => names::generate(),
        Command::GenIntercept => intercept::generate(),
        Command::BuildSim => sim::build().map(|_| ()),
        Command::BuildSdk => {
            // The demo's selection: the same features as every other build.
            sim::build_with(util::DEMO_BUILD)?;
            util::cargo(&["run", "-q", "-p", "rocwasm", "--", "sdk", "prefix"])
        }
        Command::Wheel { debug, out } => wheel(debug, &out),
        Command::Demo => {
            setup::ensure_demo_packages()?;
            // Only the plugins the demo's chain runs.
            plugins::build_only(true, &demo_chain_plugins()?)?;
            // The simulated runtime, the CLI and the tool library `rocwasm
            // run` injects, in one cargo call whose features are the test
            // build's (`cargo xtask check-features`), so a later `cargo
            // xtask test` compiles only test code.
            sim::build_with(util::DEMO_BUILD)?;
            util::cargo(&["run", "-q", "-p", "rocwasm", "--", "demo"])
        }
        Command::Test => {
            setup::ensure_packages()?;
            // Two builds at once, in their own target directories: the
            // plugins (wasm32; their C, Python and JS toolchains run one
            // process each, leaving a core idle) beside one build of the
            // whole workspace, with the features `cargo test` resolves: the
            // simulated runtime, the `rocwasm` binary and the tool library
            // that the end-to-end tests run and inject (`cargo test` alone
            // never builds a cdylib), and every test. Both must finish
            // before a test runs.
            let (plugins, workspace) = std::thread::scope(|s| {
                let plugins = s.spawn(|| plugins::build(true));
                let workspace = sim::build_with(util::TEST_BUILD);
                (plugins.join(), workspace)
            });
            plugins
                .map_err(|_| anyhow::anyhow!("the plugin build panicked"))?
                .context("building the plugins")?;
            workspace.context("building the workspace")?;
            // The plugins' pure logic (statistics, filters, config parsing)
            // is unit-tested natively, in their own workspace and target
            // directory: beside the workspace's tests (which wait on the
            // processes they start as much as they compute), its output
            // kept and printed after theirs.
            let (host, plugins) = std::thread::scope(|s| {
                let plugins = s.spawn(test_plugins_natively);
                let host = util::cargo(&[
                    "test",
                    "--workspace",
                    "--exclude",
                    "xtask",
                    "--no-fail-fast",
                ]);
                (host, plugins.join())
            });
            let plugins =
                plugins.map_err(|_| anyhow::anyhow!("the plugins' native tests panicked"))?;
            let xtask = util::cargo(&["test", "-p", "xtask", "--no-fail-fast"]);
            // The structure rules (docs/ARCHITECTURE.md): reported after the
            // tests so a broken rule never hides a test result.
            let layers = layers::check(&util::root())
                .and(architecture::check(&util::root()).map_err(anyhow::Error::msg));
            let facts = facts::check(&util::root());
            let features = features::check();
            host.and(xtask)
                .and(plugins)
                .and(layers)
                .and(facts)
                .and(features)
        }
        Command::Bench {
            quick,
            only,
            skip,
            debug_build,
            all_rows,
        } => bench::run(
            quick,
            bench::Groups {
                only: only.as_deref(),
                skip: &skip,
            },
            if debug_build {
                bench::Build::Debug
            } else {
                bench::Build::Release
            },
            all_rows,
        ),
        Command::CheckFeatures => features::check(),
        Command::CheckLayers { root: Some(root) } => layers::check(&root),
        // The repository's own tree: its architecture diagram too.
        Command::CheckLayers { root: None } => layers::check(&util::root())
            .and(architecture::check(&util::root()).map_err(anyhow::Error::msg)),
        Command::CheckFacts { root } => facts::check(&root.unwrap_or_else(util::root)),
        Command::GenSchema => {
            for (path, text) in rocwasm_schema::render::files() {
                let path = util::root().join(path);
                std::fs::write(&path, text)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
                println!("wrote {}", path.display());
            }
            Ok(())
        }
    }
}

/// The stock plugins `examples/chains/default.toml` (the demo's chain) runs:
/// its stages' `plugin` values.
fn demo_chain_plugins() -> Result<Vec<String>> {
    let path = util::root().join("examples/chains/default.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let chain: toml::Table =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let names: Vec<String> = chain
        .get("stage")
        .and_then(|s| s.as_array())
        .into_iter()
        .flatten()
        .filter_map(|stage| stage.get("plugin")?.as_str().map(str::to_string))
        .collect();
    anyhow::ensure!(!names.is_empty(), "{} names no plugin", path.display());
    Ok(names)
}

/// Runs the plugins workspace's unit tests for the host target, in a target
/// directory of their own (never the wasm32 one, never the host workspace's).
/// (Runs beside the workspace's tests: its output is printed when it ends,
/// in one piece.)
fn test_plugins_natively() -> Result<()> {
    let root = util::root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args(["test", "--no-fail-fast"])
        .current_dir(root.join("plugins"))
        .env("CARGO_TARGET_DIR", root.join("target/plugins-native"));
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| anyhow::anyhow!("cannot start {shown}: {e}"))?;
    eprintln!(
        "+ {shown}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    anyhow::ensure!(out.status.success(), "{shown} failed with {}", out.status);
    Ok(())
}

/// The stock plugins the wheel carries (`rocwasm/plugins/`), so a chain
/// naming them by name runs wherever the package is installed.
const WHEEL_PLUGINS: [&str; 7] = [
    "kernel-stats",
    "counter-stats",
    "api-stats",
    "memcpy-bandwidth",
    "correlation-tagger",
    "kernel-filter",
    "report",
];

/// `cargo xtask wheel`: maturin builds the Python package's wheel, with
/// the stock plugins in it.
fn wheel(debug: bool, out: &std::path::Path) -> Result<()> {
    setup::ensure_packages()?;
    let root = util::root();
    let names: Vec<String> = WHEEL_PLUGINS.iter().map(|s| s.to_string()).collect();
    let built = plugins::build_only(true, &names)?;
    let shipped = root.join("host/launcher/python/rocwasm/plugins");
    std::fs::create_dir_all(&shipped)?;
    for name in WHEEL_PLUGINS {
        let file = format!("{name}.wasm");
        std::fs::copy(built.join(&file), shipped.join(&file))
            .with_context(|| format!("copying {file} into the package"))?;
    }
    let out = root.join(out);
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-m", "maturin", "build", "-o"])
        .arg(&out)
        .arg("-m")
        .arg(root.join("host/launcher/python/Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target"));
    if debug {
        cmd.args(["--profile", "dev"]);
    } else {
        cmd.arg("--release");
    }
    let status = cmd.status()?;
    anyhow::ensure!(status.success(), "maturin build failed ({status})");
    let wheel = std::fs::read_dir(&out)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok())
        .ok_or_else(|| anyhow::anyhow!("maturin wrote no wheel into {}", out.display()))?;
    println!("built {}", wheel.display());
    println!(
        "install it with: python3 -m pip install '{}[dask]'",
        wheel.display()
    );
    Ok(())
}
