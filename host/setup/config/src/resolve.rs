//! Finding a stage's component: a path next to the chain file, or a stock
//! plugin name looked up on the plugin search path.
//!
//! A `plugin` value starting with `oci://` or `dir://` is a **shipped**
//! plugin, pulled from a registry or directory store into the node's cache
//! (by the [`crate::PluginFetcher`] the caller provides). Otherwise it is a
//! **path** when it contains a `/` or ends in `.wasm`
//! (relative paths are relative to the chain file's directory), and a
//! **stock name** otherwise (`kernel-stats`). A stock name `N` is the first
//! `N.wasm` (or `N` with `-` replaced by `_`, as cargo names the artifacts)
//! found in, in order:
//!
//! 1. the chain's `[settings] plugin_path` directories;
//! 2. the directories in `ROCWASM_PLUGIN_PATH` (`:`-separated);
//! 3. next to the `rocwasm` binary: `<bin>/../plugins` (the build tree's
//!    `target/plugins`, where `cargo xtask build-plugins` puts them) and
//!    `<bin>/../lib/rocwasm/plugins` (an installed tree).
//!
//! Items 2 and 3 are [`standard_plugin_path`]; callers pass them in
//! [`crate::LoadOptions`].

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The environment variable with extra plugin directories.
pub const PLUGIN_PATH_VAR: &str = "ROCWASM_PLUGIN_PATH";

/// The schemes of shipped plugins.
pub const SHIPPED_SCHEMES: [&str; 2] = ["oci://", "dir://"];

pub(crate) enum Spec<'a> {
    Shipped(&'a str),
    Path(&'a str),
    Stock(&'a str),
    Invalid(String),
}

pub(crate) fn classify(spec: &str) -> Spec<'_> {
    if spec.is_empty() {
        return Spec::Invalid("the value is empty".into());
    }
    if SHIPPED_SCHEMES.iter().any(|s| spec.starts_with(s)) {
        return Spec::Shipped(spec);
    }
    if let Some((scheme, _)) = spec.split_once("://") {
        return Spec::Invalid(format!(
            "`{scheme}://` is not a plugin store (shipped plugins start with {})",
            SHIPPED_SCHEMES.join(" or ")
        ));
    }
    if spec.contains('/') || spec.ends_with(".wasm") {
        return Spec::Path(spec);
    }
    let ok = spec
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Spec::Stock(spec)
    } else {
        Spec::Invalid(format!(
            "`{spec}` is neither a path (containing `/` or ending in `.wasm`) nor a stock plugin name (lowercase letters, digits, `-`, `_`)"
        ))
    }
}

/// The first file for stock plugin `name` in `dirs`.
pub fn find_stock(name: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    let names = [
        format!("{name}.wasm"),
        format!("{}.wasm", name.replace('-', "_")),
    ];
    dirs.iter()
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
}

/// The error message for a stock plugin `name` found in no search directory
/// (shared by validation and loading).
pub(crate) fn stock_not_found_message(name: &str) -> String {
    format!(
        "stock plugin `{name}` not found on the plugin search path (build the stock plugins with `cargo xtask build-plugins`, or add their directory to {PLUGIN_PATH_VAR}); a path must contain `/` or end in `.wasm`"
    )
}

/// The lowercase hex SHA-256 of a file.
pub fn sha256_of(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

/// Search-path items 2 and 3 of the module documentation, for the process
/// whose executable is `exe` (usually `std::env::current_exe()`).
pub fn standard_plugin_path(exe: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os(PLUGIN_PATH_VAR)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if let Some(bin_dir) = exe.and_then(Path::parent) {
        dirs.push(bin_dir.join("../plugins"));
        dirs.push(bin_dir.join("../lib/rocwasm/plugins"));
    }
    dirs
}
