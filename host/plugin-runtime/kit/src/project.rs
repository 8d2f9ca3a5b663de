//! A plugin project on disk: what `rocwasm plugin new` writes and what
//! `rocwasm plugin build` builds.
//!
//! A project is a directory with
//! - `rocwasm-plugin.toml`: `name` (the component's file name) and `world`;
//! - `wit/`: the WIT package it builds against ([`crate::wit`]);
//! - the sources, whose files tell the language ([`Lang::detect`]):
//!   `Cargo.toml` → Rust, `app.py` → Python, `plugin.js` → JavaScript,
//!   any `*.c` → C;
//! - for C, Python and JS, a copy of the language layer of this repository
//!   (`include/rocwasm.h`, the `rocwasm/` package, `rocwasm.js`), embedded
//!   in the binary so an installed rocwasm can write it.
//!
//! [`build`] writes the component to `target/<name>.wasm`, whatever the
//! language; intermediate files stay under `target/` too.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use crate::component::check_component;
use crate::{c, js, python, rust, wit};

/// The languages the kit builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// Rust with the rocwasm plugin SDK.
    Rust,
    /// C with `rocwasm.h`.
    C,
    /// Python with the `rocwasm` package (componentize-py).
    Python,
    /// JavaScript with `rocwasm.js` (componentize-js).
    Js,
}

impl Lang {
    /// Every language, in the order help texts list them.
    pub const ALL: [Lang; 4] = [Lang::Rust, Lang::C, Lang::Python, Lang::Js];

    /// `rust`, `c`, `python`, `js`.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::C => "c",
            Lang::Python => "python",
            Lang::Js => "js",
        }
    }

    /// The language called `name` (as [`Lang::name`] spells it).
    pub fn from_name(name: &str) -> Option<Lang> {
        Lang::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The language of the project in `dir`, from its files.
    pub fn detect(dir: &Path) -> Result<Lang> {
        if dir.join("Cargo.toml").is_file() {
            return Ok(Lang::Rust);
        }
        if dir.join("app.py").is_file() {
            return Ok(Lang::Python);
        }
        if dir.join("plugin.js").is_file() {
            return Ok(Lang::Js);
        }
        if dir.is_dir() && !c::c_files(dir)?.is_empty() {
            return Ok(Lang::C);
        }
        bail!(
            "{} is not a plugin project: no Cargo.toml (Rust), app.py (Python), plugin.js \
             (JavaScript) or .c file (C); `rocwasm plugin new NAME --lang LANG` writes one",
            dir.display()
        )
    }
}

/// `rocwasm-plugin.toml`.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// The component's name: `target/<name>.wasm`.
    pub name: String,
    /// `analysis-plugin` or `transform-plugin`.
    #[serde(default = "default_world")]
    pub world: String,
}

fn default_world() -> String {
    wit::WORLDS[0].to_string()
}

/// The manifest's file name.
pub const MANIFEST: &str = "rocwasm-plugin.toml";

impl Manifest {
    /// Reads `dir/rocwasm-plugin.toml`; without one, the directory's name
    /// and the analysis world.
    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST);
        let manifest = match fs::read_to_string(&path) {
            Ok(text) => toml::from_str::<Manifest>(&text)
                .with_context(|| format!("{} is not a valid plugin manifest", path.display()))?,
            Err(_) => Manifest {
                name: dir_name(dir)?,
                world: default_world(),
            },
        };
        check_name(&manifest.name)?;
        if !wit::BUILD_WORLDS.contains(&manifest.world.as_str()) {
            bail!(
                "{}: unknown world `{}` (expected {})",
                path.display(),
                manifest.world,
                wit::BUILD_WORLDS.join(", ")
            );
        }
        Ok(manifest)
    }
}

fn dir_name(dir: &Path) -> Result<String> {
    let dir = fs::canonicalize(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    Ok(dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plugin".into()))
}

/// A plugin name is a Cargo package name and a file name: lower-case
/// letters, digits and `-`, starting with a letter.
pub fn check_name(name: &str) -> Result<()> {
    let ok = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        bail!(
            "`{name}` cannot name a plugin: use lower-case letters, digits and `-`, \
             starting with a letter (e.g. `slow-kernels`)"
        );
    }
    Ok(())
}

mod templates;

pub use templates::{create, sdk_path, NewProject};

/// Builds the project in `dir` (language from its files, name and world
/// from its manifest) with the right toolchain; the path of the component,
/// `dir/target/<name>.wasm`. Python and JS tools are installed pinned into
/// `tools` when missing. A missing tool is a [`crate::MissingTool`] in the
/// error's chain.
pub fn build(dir: &Path, tools: &Path) -> Result<PathBuf> {
    let lang = Lang::detect(dir)?;
    let manifest = Manifest::read(dir)?;
    let target = dir.join("target");
    fs::create_dir_all(&target).with_context(|| format!("cannot create {}", target.display()))?;
    let out = target.join(format!("{}.wasm", manifest.name));
    let wit_dir = dir.join("wit");
    if !wit_dir.is_dir() {
        bail!(
            "{} has no wit/ directory: `rocwasm plugin wit --out {}` writes it",
            dir.display(),
            wit_dir.display()
        );
    }
    eprintln!(
        "building {} ({}, {})",
        manifest.name,
        lang.name(),
        manifest.world
    );
    let bytes = match lang {
        Lang::Rust => build_rust(dir, &manifest, &target)?,
        Lang::C => {
            let toolchain = c::Toolchain::find()?;
            let src = c::Sources {
                name: manifest.name.clone(),
                world: manifest.world.clone(),
                files: c::c_files(dir)?,
                includes: vec![dir.join("include")],
                werror: false,
            };
            c::build(&toolchain, &wit_dir, &src, &target.join("c"))?
        }
        Lang::Python => {
            let tools = python::ensure_tool(&tools.join("py-tools"), python::PYTHON)?;
            python::componentize(
                &tools,
                &python::Job {
                    wit: &wit_dir,
                    world: &manifest.world,
                    module: "app",
                    paths: vec![dir.to_path_buf()],
                    out: &out,
                },
            )
            .context("componentize-py could not build the plugin")?;
            read(&out)?
        }
        Lang::Js => {
            let cli = js::ensure_tool(&tools.join("js-tools"), ["node", "npm"])?;
            js::componentize(
                &cli,
                &dir.join("plugin.js"),
                &wit_dir,
                &manifest.world,
                &out,
            )
            .context("componentize-js could not build the plugin")?;
            read(&out)?
        }
    };
    check_component(&manifest.name, &bytes)?;
    if fs::read(&out).ok().as_deref() != Some(&bytes[..]) {
        fs::write(&out, &bytes).with_context(|| format!("cannot write {}", out.display()))?;
    }
    Ok(out)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// `cargo build --release` for wasm32 into `target/`; the bytes of the
/// project's cdylib.
fn build_rust(dir: &Path, manifest: &Manifest, target: &Path) -> Result<Vec<u8>> {
    let route = rust::Route::detect(dir)?;
    eprintln!("via the {} toolchain", route.describe());
    // Cargo's own directory: `target/` unless ROCWASM_CARGO_TARGET_DIR
    // names a shared one (the first build compiles std for wasm32, about a
    // minute; projects sharing a directory pay it once).
    let cargo_target = std::env::var_os("ROCWASM_CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| target.to_path_buf(), PathBuf::from);
    let mut cmd = route.cargo_build(dir, &cargo_target, true);
    let artifacts = rust::run_collecting_artifacts(&mut cmd)?;
    let wasm = match artifacts.iter().find(|(name, _)| *name == manifest.name) {
        Some((_, wasm)) => wasm,
        None => match artifacts.as_slice() {
            [(_, wasm)] => wasm,
            _ => bail!(
                "cargo built no cdylib named `{}` in {} (is `crate-type = [\"cdylib\"]` in \
                 Cargo.toml's [lib]?)",
                manifest.name,
                dir.display()
            ),
        },
    };
    read(wasm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_languages() {
        assert!(check_name("slow-kernels2").is_ok());
        for bad in ["", "Slow", "2x", "a_b", "a/b", "../x"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        for lang in Lang::ALL {
            assert_eq!(Lang::from_name(lang.name()), Some(lang));
        }
        let dir = tempfile::tempdir().unwrap();
        let err = Lang::detect(dir.path()).unwrap_err().to_string();
        assert!(err.contains("rocwasm plugin new"), "{err}");
        fs::write(dir.path().join("x.c"), "").unwrap();
        assert_eq!(Lang::detect(dir.path()).unwrap(), Lang::C);
    }
}
