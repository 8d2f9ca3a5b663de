//! `cargo xtask build-plugins`: the Rust plugins in `plugins/` → components
//! in `target/plugins/<plugin-name>.wasm`.
//!
//! `plugins/` is its own Cargo workspace built for `wasm32-unknown-unknown`
//! into its own target directory (`plugins/target`), never the host's: the
//! two may use different compilers. The toolchain recipes — which route
//! (rustup's wasm32 target, or Debian's rustc with `-Zbuild-std`), which
//! linker, which flags — live in [`rocwasm_kit`] (`host/plugin-runtime/kit`), shared with
//! `rocwasm plugin build`; this module decides *what* to build and where it
//! goes, and installs the Debian packages ([`crate::setup`]) when the kit
//! reports a tool missing, which the CLI never does.
//!
//! Every `cdylib` of the workspace is a plugin; its artifact is
//! checked to be a component (not a core module) and copied under its
//! package name. The C plugins of `plugins/c/` are built after them by
//! [`c`] (clang-14 + wasi-libc, bindings and component made in-process),
//! then the Python plugins of `plugins/python/` by [`python`]
//! (componentize-py) and the JS plugins of `plugins/js/` by [`js`]
//! (componentize-js), each tool pinned and installed under `target/` by
//! xtask itself, each plugin rebuilt only when its inputs changed
//! ([`stamp`]).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use rocwasm_kit::component::check_component;
use rocwasm_kit::rust::{run_collecting_artifacts, Route};

use crate::util::root;

mod c;
mod js;
mod python;
mod stamp;

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

/// Builds only the Rust plugins `names` (package names, as the chain files
/// name stock plugins) into `<root>/target/plugins`: what `cargo xtask demo`
/// needs for its chain, without the C, Python and JS toolchains or the
/// test plugins.
pub fn build_only(release: bool, names: &[String]) -> Result<PathBuf> {
    let out_dir = root().join("target/plugins");
    let started = Instant::now();
    let workspace = root().join("plugins");
    let route = detect_route(&workspace)?;
    let packages: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut cmd =
        route.cargo_build_packages(&workspace, &workspace.join("target"), release, &packages);
    let artifacts = run_collecting_artifacts(&mut cmd)?;
    fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
    for name in names {
        let (_, wasm) = artifacts
            .iter()
            .find(|(artifact, _)| artifact == name)
            .with_context(|| format!("the plugin workspace has no Rust plugin `{name}`"))?;
        let bytes = fs::read(wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
        install(name.clone(), &bytes, &out_dir)?;
    }
    eprintln!(
        "built {} plugin component(s) ({}) in {:.1} s: {}",
        names.len(),
        if release { "release" } else { "debug" },
        started.elapsed().as_secs_f64(),
        names.join(", ")
    );
    Ok(out_dir)
}

/// Builds and copies; the list of plugins built, sorted by name.
pub fn build_all(release: bool, out_dir: &Path) -> Result<Vec<BuiltPlugin>> {
    let workspace = root().join("plugins");
    let route = detect_route(&workspace)?;
    eprintln!("building plugins via the {} toolchain", route.describe());

    let mut cmd = route.cargo_build(&workspace, &workspace.join("target"), release);
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

/// The kit's route for this machine, installing the Debian packages
/// first when it reports a tool missing.
fn detect_route(workspace: &Path) -> Result<Route> {
    match Route::detect(workspace) {
        Ok(route) => Ok(route),
        Err(missing) => {
            eprintln!("{missing}; installing packages");
            crate::setup::ensure_packages()?;
            Ok(Route::detect(workspace)?)
        }
    }
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
