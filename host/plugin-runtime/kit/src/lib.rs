//! The plugin kit: everything it takes to turn a plugin's source into a
//! rocwasm component, in one place for both of its users —
//! `rocwasm plugin new/build/wit` (a plugin author's project, anywhere) and
//! `cargo xtask build-plugins` (this repository's own plugins).
//!
//! - [`wit`]: the versioned WIT package, embedded in the binary, so an
//!   installed `rocwasm` can hand it to wit-bindgen, componentize-py or jco;
//! - one module per guest language, each the single home of its toolchain
//!   recipe: [`rust`] (rustup's wasm32 target, or Debian's rustc with
//!   `-Zbuild-std`, linked by `wasm-component-ld`), [`c`] (wit-bindgen-c
//!   in-process, clang-14 + wasi-libc, `wit-component`), [`python`]
//!   (componentize-py) and [`js`] (componentize-js), the last two installed
//!   pinned into a tools directory ([`tools_dir`]);
//! - [`missing`]: when a tool is absent, the one error that names it and the
//!   command that installs it (the CLI exits with status 2 on it);
//! - [`project`]: a plugin project on disk — the templates `plugin new`
//!   writes, the language detection and the build `plugin build` runs;
//! - [`component`]: the cheap check that a file is a component;
//! - [`expect`]: a project's test, the summary tables a plugin must return
//!   on its trace (`rocwasm plugin test --expect`).
//!
//! The crate runs processes and writes files; it never downloads anything
//! itself (pip and npm do, when installing the pinned Python and JS tools).

#![forbid(unsafe_code)]

pub mod c;
pub mod component;
pub mod expect;
pub mod js;
pub mod missing;
pub mod project;
pub mod python;
pub mod rust;
pub mod wit;

mod process;

use std::path::PathBuf;

pub use missing::MissingTool;

/// Where `rocwasm plugin build` keeps the pinned Python and JS tools:
/// `$ROCWASM_TOOLS_DIR`, else `$XDG_CACHE_HOME/rocwasm/tools`, else
/// `~/.cache/rocwasm/tools`. Each tool gets a subdirectory (`py-tools`,
/// `js-tools`), the same layout as the repository's `target/`.
pub fn tools_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ROCWASM_TOOLS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("rocwasm/tools")
}
