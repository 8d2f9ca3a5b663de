//! `cargo xtask build-plugins`: the Rust plugins in `plugins/` → components
//! in `target/plugins/<plugin-name>.wasm`.
//!
//! `plugins/` is its own Cargo workspace built for `wasm32-unknown-unknown`
//! into its own target directory (`plugins/target`), never the host's: the
//! two may use different compilers. Two routes, chosen per machine:
//!
//! - **rustup**: when the rustup toolchain has the `wasm32-unknown-unknown`
//!   target installed, its own `cargo`, linked by `wasm-component-ld` (shipped
//!   in the toolchain's sysroot) so the output is already a component.
//! - **Debian** (these machines: rustup here cannot download targets): Debian's
//!   rustc 1.96 with its std source, `-Zbuild-std` (allowed on a stable
//!   compiler by `RUSTC_BOOTSTRAP=1`), Debian's `wasm-component-ld` and
//!   `wasm-ld-22`. Missing packages are installed through [`crate::setup`].
//!
//! Either way every `cdylib` of the workspace is a plugin; its artifact is
//! checked to be a component (not a core module) and copied under its
//! package name. The C plugins of `plugins/c/` are built after them by
//! [`c`] (clang-14 + wasi-libc, bindings and component made in-process),
//! then the Python plugins of `plugins/python/` by [`python`]
//! (componentize-py) and the JS plugins of `plugins/js/` by [`js`]
//! (componentize-js), each tool pinned and installed under `target/` by
//! xtask itself, each plugin rebuilt only when its inputs changed
//! ([`stamp`]).
//! The inner cargo runs with a scrubbed environment: variables
//! the outer `cargo xtask` set (`RUSTC`, `RUSTFLAGS`, `CARGO_TARGET_DIR`,
//! `RUSTUP_TOOLCHAIN`, build-script variables…) would point it at the wrong
//! compiler or directory.

use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};

use crate::util::root;

mod c;
mod js;
mod python;
mod stamp;

const TARGET: &str = "wasm32-unknown-unknown";
const HOST_TRIPLE: &str = "x86_64-unknown-linux-gnu";
/// A component's preamble: magic, then version 0x0d and layer 1 (a core
/// module has version 1, layer 0).
const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
const CORE_MODULE_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/// One built plugin.
#[derive(Debug, Clone)]
pub struct BuiltPlugin {
    /// Package name, kebab-case (`kernel-stats`).
    pub name: String,
    /// `target/plugins/<name>.wasm`.
    pub path: PathBuf,
    pub size: u64,
}

/// Builds every plugin and returns the directory holding the `.wasm` files
/// (`<root>/target/plugins`).
pub fn build(release: bool) -> Result<PathBuf> {
    let out_dir = root().join("target/plugins");
    let started = Instant::now();
    let plugins = build_all(release, &out_dir)?;
    for p in &plugins {
        eprintln!(
            "  {:<28} {:>9}  {}",
            format!("{}.wasm", p.name),
            human_size(p.size),
            p.path.display()
        );
    }
    eprintln!(
        "built {} plugin component(s) ({}) in {:.1} s",
        plugins.len(),
        if release { "release" } else { "debug" },
        started.elapsed().as_secs_f64()
    );
    Ok(out_dir)
}

/// Builds and copies; the list of plugins built, sorted by name.
pub fn build_all(release: bool, out_dir: &Path) -> Result<Vec<BuiltPlugin>> {
    let workspace = root().join("plugins");
    let route = Route::detect(&workspace)?;
    eprintln!("building plugins via the {} toolchain", route.describe());

    let mut cmd = route.cargo_build(&workspace, release);
    let artifacts = run_collecting_artifacts(&mut cmd)?;
    ensure!(
        !artifacts.is_empty(),
        "the plugin workspace built no cdylib (.wasm) artifacts"
    );

    fs::create_dir_all(out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    let mut built = Vec::new();
    for (name, wasm) in artifacts {
        let bytes = fs::read(&wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
        built.push(install(name, &bytes, out_dir)?);
    }
    for (name, bytes) in c::build_all()? {
        built.push(install(name, &bytes, out_dir)?);
    }
    for (name, bytes) in python::build_all()?.into_iter().chain(js::build_all()?) {
        built.push(install(name, &bytes, out_dir)?);
    }
    built.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(built)
}

/// Checks that `bytes` are a component and writes them to `<out_dir>/<name>.wasm`.
fn install(name: String, bytes: &[u8], out_dir: &Path) -> Result<BuiltPlugin> {
    check_component(&name, bytes)?;
    let dest = out_dir.join(format!("{name}.wasm"));
    // Leave an identical file untouched so that compiled-component caches
    // and make-like consumers keyed on mtime stay valid.
    if fs::read(&dest).ok().as_deref() != Some(bytes) {
        fs::write(&dest, bytes).with_context(|| format!("cannot write {}", dest.display()))?;
    }
    Ok(BuiltPlugin {
        name,
        path: dest,
        size: bytes.len() as u64,
    })
}

/// Fails unless `bytes` start with the component preamble.
pub fn check_component(name: &str, bytes: &[u8]) -> Result<()> {
    if bytes.starts_with(&COMPONENT_PREAMBLE) {
        return Ok(());
    }
    if bytes.starts_with(&CORE_MODULE_PREAMBLE) {
        bail!(
            "plugin `{name}` was linked as a core Wasm module, not a component: \
             the linker was not wasm-component-ld (check the route printed above)"
        );
    }
    bail!(
        "plugin `{name}` is not a Wasm component (first bytes {:02x?})",
        &bytes[..bytes.len().min(8)]
    )
}

/// How to invoke cargo for `wasm32-unknown-unknown` on this machine.
enum Route {
    Rustup {
        component_ld: PathBuf,
        wasm_ld: Option<PathBuf>,
    },
    Debian {
        component_ld: PathBuf,
        wasm_ld: PathBuf,
    },
}

impl Route {
    fn detect(workspace: &Path) -> Result<Route> {
        if let Some(route) = Self::rustup(workspace) {
            return Ok(route);
        }
        match Self::debian() {
            Some(route) => Ok(route),
            None => {
                eprintln!("the Debian Rust toolchain for wasm is incomplete; installing packages");
                crate::setup::ensure_packages()?;
                Self::debian().context(
                    "no wasm toolchain: neither a rustup toolchain with the wasm32-unknown-unknown \
                     target nor Debian's rustc/cargo/rust-src/wasm-component-ld/wasm-ld-22 \
                     (run `cargo xtask setup`)",
                )
            }
        }
    }

    /// The rustup route, if rustup's toolchain (as the plugin workspace
    /// selects it) has the wasm target and a component linker.
    fn rustup(workspace: &Path) -> Option<Route> {
        let installed = scrubbed(Command::new("rustup"))
            .args(["target", "list", "--installed"])
            .current_dir(workspace)
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        if !String::from_utf8_lossy(&installed.stdout)
            .lines()
            .any(|l| l.trim() == TARGET)
        {
            return None;
        }
        let sysroot = scrubbed(Command::new("rustc"))
            .args(["--print", "sysroot"])
            .current_dir(workspace)
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
        let bin = sysroot.join("lib/rustlib").join(HOST_TRIPLE).join("bin");
        let component_ld = [bin.join("wasm-component-ld")]
            .into_iter()
            .chain(which("wasm-component-ld"))
            .chain([debian_component_ld()])
            .find(|p| p.is_file());
        let Some(component_ld) = component_ld else {
            eprintln!(
                "warning: rustup has {TARGET} but no wasm-component-ld was found; \
                 falling back to the Debian route"
            );
            return None;
        };
        let wasm_ld = [bin.join("gcc-ld/wasm-ld")]
            .into_iter()
            .chain(which("wasm-ld"))
            .find(|p| p.is_file());
        Some(Route::Rustup {
            component_ld,
            wasm_ld,
        })
    }

    fn debian() -> Option<Route> {
        let ready = [
            "/usr/bin/cargo",
            "/usr/bin/rustc",
            "/usr/lib/rustlib/src/rust/library/Cargo.lock",
        ]
        .iter()
        .all(|p| Path::new(p).is_file());
        let component_ld = debian_component_ld();
        let wasm_ld = debian_wasm_ld()?;
        (ready && component_ld.is_file()).then_some(Route::Debian {
            component_ld,
            wasm_ld,
        })
    }

    fn describe(&self) -> String {
        match self {
            Route::Rustup { component_ld, .. } => {
                format!("rustup (linker {})", component_ld.display())
            }
            Route::Debian { wasm_ld, .. } => {
                format!("Debian rustc + build-std (wasm-ld {})", wasm_ld.display())
            }
        }
    }

    fn cargo_build(&self, workspace: &Path, release: bool) -> Command {
        let (program, component_ld, wasm_ld) = match self {
            Route::Rustup {
                component_ld,
                wasm_ld,
            } => ("cargo", component_ld, wasm_ld.as_ref()),
            Route::Debian {
                component_ld,
                wasm_ld,
            } => ("/usr/bin/cargo", component_ld, Some(wasm_ld)),
        };
        let mut cmd = scrubbed(Command::new(program));
        cmd.current_dir(workspace)
            .args([
                "build",
                "--workspace",
                "--target",
                TARGET,
                "--message-format=json-render-diagnostics",
            ])
            .env("CARGO_TARGET_DIR", workspace.join("target"))
            .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", component_ld);
        if release {
            cmd.arg("--release");
        }
        // No WASI adapter: the plugins import only what their WIT world names.
        let mut rustflags = vec!["-C link-arg=--wasi-adapter=none".to_string()];
        if let Some(wasm_ld) = wasm_ld {
            rustflags.push(format!("-C link-arg=--wasm-ld-path={}", wasm_ld.display()));
        }
        cmd.env(
            "CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS",
            rustflags.join(" "),
        );
        if let Route::Debian { .. } = self {
            cmd.args(["-Zbuild-std=std,panic_abort"])
                .env("RUSTC", "/usr/bin/rustc")
                .env("RUSTC_BOOTSTRAP", "1");
        }
        cmd
    }
}

fn debian_component_ld() -> PathBuf {
    Path::new("/usr/lib/rustlib")
        .join(HOST_TRIPLE)
        .join("bin/wasm-component-ld")
}

/// `/usr/bin/wasm-ld-22`, else the newest `/usr/bin/wasm-ld-N`, else `wasm-ld` on PATH.
fn debian_wasm_ld() -> Option<PathBuf> {
    let preferred = PathBuf::from("/usr/bin/wasm-ld-22");
    if preferred.is_file() {
        return Some(preferred);
    }
    let mut versioned: Vec<(u32, PathBuf)> = fs::read_dir("/usr/bin")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let v: u32 = name.strip_prefix("wasm-ld-")?.parse().ok()?;
            Some((v, e.path()))
        })
        .collect();
    versioned.sort();
    versioned.pop().map(|(_, p)| p).or_else(|| which("wasm-ld"))
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// A command without the variables the outer cargo (running xtask) exports
/// for its own build; `CARGO_HOME` and network/registry settings stay.
fn scrubbed(mut cmd: Command) -> Command {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if leaks_from_outer_cargo(key) {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn leaks_from_outer_cargo(key: &str) -> bool {
    const KEEP: &[&str] = &[
        "CARGO_HOME",
        "CARGO_NET_",
        "CARGO_HTTP_",
        "CARGO_REGISTRIES_",
        "CARGO_REGISTRY_",
        "CARGO_TERM_",
    ];
    const DROP: &[&str] = &[
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_BOOTSTRAP",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "RUSTDOC",
        "RUSTUP_TOOLCHAIN",
        "OUT_DIR",
        "TARGET",
        "HOST",
        "PROFILE",
        "OPT_LEVEL",
        "DEBUG",
        "NUM_JOBS",
    ];
    if KEEP
        .iter()
        .any(|k| key == *k || (k.ends_with('_') && key.starts_with(k)))
    {
        return false;
    }
    key == "CARGO" || key.starts_with("CARGO_") || key.starts_with("__CARGO") || DROP.contains(&key)
}

/// Runs cargo with JSON messages on stdout (diagnostics are rendered to
/// stderr as usual) and returns `(kebab-case package name, .wasm path)` for
/// every cdylib artifact.
fn run_collecting_artifacts(cmd: &mut Command) -> Result<Vec<(String, PathBuf)>> {
    let shown = format!("{cmd:?}");
    eprintln!("+ {shown}");
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {shown}"))?;
    let stdout = child.stdout.take().expect("stdout was piped");
    let mut artifacts = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.context("reading cargo's output")?;
        if let Some(artifact) = cdylib_artifact(&line) {
            artifacts.push(artifact);
        }
    }
    let status = child
        .wait()
        .with_context(|| format!("waiting for {shown}"))?;
    ensure!(
        status.success(),
        "building the plugins failed ({status}); see the compiler output above"
    );
    Ok(artifacts)
}

/// Parses one cargo JSON message; `Some` for a cdylib's `.wasm` artifact.
fn cdylib_artifact(line: &str) -> Option<(String, PathBuf)> {
    let msg: serde_json::Value = serde_json::from_str(line).ok()?;
    if msg["reason"] != "compiler-artifact" {
        return None;
    }
    let target = &msg["target"];
    let is_cdylib = target["crate_types"]
        .as_array()?
        .iter()
        .any(|t| t == "cdylib");
    if !is_cdylib {
        return None;
    }
    let wasm = msg["filenames"]
        .as_array()?
        .iter()
        .filter_map(|f| f.as_str())
        .find(|f| Path::new(f).extension() == Some(OsStr::new("wasm")))?;
    let name = target["name"].as_str()?.replace('_', "-");
    Some((name, PathBuf::from(wasm)))
}

fn human_size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_check_tells_components_from_modules() {
        assert!(check_component("x", &[0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0, 7]).is_ok());
        let err = check_component("x", &CORE_MODULE_PREAMBLE)
            .unwrap_err()
            .to_string();
        assert!(err.contains("core Wasm module"), "{err}");
        assert!(check_component("x", b"ELF").is_err());
    }

    #[test]
    fn outer_cargo_variables_are_scrubbed_but_settings_kept() {
        for key in [
            "RUSTC",
            "RUSTFLAGS",
            "CARGO_TARGET_DIR",
            "CARGO_PKG_NAME",
            "CARGO",
            "RUSTUP_TOOLCHAIN",
            "CARGO_ENCODED_RUSTFLAGS",
        ] {
            assert!(leaks_from_outer_cargo(key), "{key}");
        }
        for key in [
            "CARGO_HOME",
            "CARGO_NET_OFFLINE",
            "CARGO_HTTP_TIMEOUT",
            "PATH",
            "HOME",
        ] {
            assert!(!leaks_from_outer_cargo(key), "{key}");
        }
    }

    #[test]
    fn artifacts_are_read_from_cargo_json() {
        let line = r#"{"reason":"compiler-artifact","target":{"name":"kernel_stats","crate_types":["cdylib"]},"filenames":["/t/kernel_stats.wasm"]}"#;
        assert_eq!(
            cdylib_artifact(line),
            Some(("kernel-stats".into(), PathBuf::from("/t/kernel_stats.wasm")))
        );
        let lib = r#"{"reason":"compiler-artifact","target":{"name":"sdk","crate_types":["lib"]},"filenames":["/t/libsdk.rlib"]}"#;
        assert_eq!(cdylib_artifact(lib), None);
        assert_eq!(cdylib_artifact("not json"), None);
    }
}
