//! [`LoadOptions`]: how a chain file's plugin references are treated.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::resolve;

/// Makes a shipped plugin (`oci://…`, `dir://…`) a local file. The chain
/// crate parses and validates; fetching (network, the node's cache) lives in
/// `rocwasm-registry`, which the CLI plugs in here.
pub trait PluginFetcher: Send + Sync {
    /// Fetches `reference`; `pin` is the stage's `sha256` (lowercase hex)
    /// when the chain gives one. The error is a sentence without the chain
    /// file's position (the caller adds it).
    fn fetch(&self, reference: &str, pin: Option<&str>) -> Result<PathBuf, String>;
}

/// A shared [`PluginFetcher`].
#[derive(Clone)]
pub struct Fetcher(pub Arc<dyn PluginFetcher>);

impl fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fetcher")
    }
}

/// How [`Chain::load`](crate::Chain::load) treats plugin references.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Directories searched for stock plugin names, after the chain's own
    /// `[settings] plugin_path`. Usually [`resolve::standard_plugin_path`].
    pub plugin_path: Vec<PathBuf>,
    /// Check that plugin files exist, resolve stock names and verify
    /// `sha256` digests (default). Off, plugin values are only checked for
    /// form and stock names stay unresolved.
    pub check_plugins: bool,
    /// Pulls shipped plugins; `None`: a chain naming one is refused with a
    /// message saying this command cannot pull.
    pub fetcher: Option<Fetcher>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            plugin_path: Vec::new(),
            check_plugins: true,
            fetcher: None,
        }
    }
}

impl LoadOptions {
    /// The standard search path for a program whose executable is `exe`.
    pub fn standard(exe: Option<&Path>) -> Self {
        LoadOptions {
            plugin_path: resolve::standard_plugin_path(exe),
            check_plugins: true,
            fetcher: None,
        }
    }
}
