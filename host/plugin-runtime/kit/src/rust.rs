//! Rust plugins: a Cargo workspace → components, built for
//! `wasm32-unknown-unknown` and linked by `wasm-component-ld`, so what
//! cargo writes is already a component importing only what its WIT world
//! names (no WASI adapter, no wasm-tools). Two routes, chosen per machine
//! by [`Route::detect`]:
//!
//! - **rustup**: when the rustup toolchain (as the workspace selects it)
//!   has the `wasm32-unknown-unknown` target installed, its own `cargo`,
//!   with the `wasm-component-ld` of its sysroot;
//! - **Debian** (machines where rustup cannot download targets): Debian's
//!   rustc 1.96 with its std source, `-Zbuild-std` (allowed on a stable
//!   compiler by `RUSTC_BOOTSTRAP=1`), Debian's `wasm-component-ld` and
//!   `wasm-ld-22`.
//!
//! The build runs with a scrubbed environment ([`scrubbed`]): variables
//! an outer cargo set (`RUSTC`, `RUSTFLAGS`, `CARGO_TARGET_DIR`,
//! `RUSTUP_TOOLCHAIN`, build-script variables…) would point the inner one
//! at the wrong compiler or directory. Every `cdylib` artifact is a plugin;
//! [`run_collecting_artifacts`] reads them from cargo's JSON messages.

use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{ensure, Context, Result};

use crate::missing::MissingTool;
use crate::process::which;

/// The target every Rust plugin is built for.
pub const TARGET: &str = "wasm32-unknown-unknown";
const HOST_TRIPLE: &str = "x86_64-unknown-linux-gnu";

/// The Debian packages of the Debian route.
pub const DEBIAN_PACKAGES: &str = "rustc-web cargo-web rust-web-src rust-web-llvm lld-22";

/// How to invoke cargo for `wasm32-unknown-unknown` on this machine.
#[derive(Debug, Clone)]
pub enum Route {
    /// rustup's cargo, with the target installed.
    Rustup {
        /// `wasm-component-ld` (the toolchain's, else on PATH, else Debian's).
        component_ld: PathBuf,
        /// `wasm-ld` for it to call, when not its default.
        wasm_ld: Option<PathBuf>,
    },
    /// Debian's cargo and rustc with `-Zbuild-std`.
    Debian {
        /// Debian's `wasm-component-ld`.
        component_ld: PathBuf,
        /// `wasm-ld-22` (or the newest `wasm-ld-N`).
        wasm_ld: PathBuf,
    },
}

impl Route {
    /// The route this machine offers for building `workspace`, or the
    /// missing tool and how to install it.
    pub fn detect(workspace: &Path) -> Result<Route, MissingTool> {
        Self::rustup(workspace)
            .or_else(Self::debian)
            .ok_or_else(|| {
                MissingTool::new(
                    "a Rust toolchain for wasm32-unknown-unknown",
                    "building Rust plugins",
                    format!(
                        "rustup target add {TARGET} (or, on Debian 12: \
                     apt-get install {DEBIAN_PACKAGES})"
                    ),
                )
            })
    }

    /// The rustup route, if rustup's toolchain (as the workspace selects
    /// it) has the wasm target and a component linker.
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

    /// One line for the log: which route, which linker.
    pub fn describe(&self) -> String {
        match self {
            Route::Rustup { component_ld, .. } => {
                format!("rustup (linker {})", component_ld.display())
            }
            Route::Debian { wasm_ld, .. } => {
                format!("Debian rustc + build-std (wasm-ld {})", wasm_ld.display())
            }
        }
    }

    /// `cargo build --workspace` of `workspace` for the wasm target into
    /// `target_dir`, with JSON messages on stdout (for
    /// [`run_collecting_artifacts`]).
    pub fn cargo_build(&self, workspace: &Path, target_dir: &Path, release: bool) -> Command {
        self.cargo_build_packages(workspace, target_dir, release, &[])
    }

    /// As [`Route::cargo_build`], of the named packages only (all of the
    /// workspace when `packages` is empty).
    pub fn cargo_build_packages(
        &self,
        workspace: &Path,
        target_dir: &Path,
        release: bool,
        packages: &[&str],
    ) -> Command {
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
                "--target",
                TARGET,
                "--message-format=json-render-diagnostics",
            ])
            .env("CARGO_TARGET_DIR", target_dir)
            .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER", component_ld);
        if packages.is_empty() {
            cmd.arg("--workspace");
        }
        for package in packages {
            cmd.args(["-p", package]);
        }
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

/// A command without the variables an outer cargo exports for its own
/// build; `CARGO_HOME` and network/registry settings stay.
pub fn scrubbed(mut cmd: Command) -> Command {
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
pub fn run_collecting_artifacts(cmd: &mut Command) -> Result<Vec<(String, PathBuf)>> {
    let shown = format!("{cmd:?}");
    eprintln!("+ {shown}");
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {shown}"))?;
    let stdout = child
        .stdout
        .take()
        .context("cargo's standard output was not captured")?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
