//! [`LoadOptions`]: how a chain file's plugin references are treated.

use std::path::{Path, PathBuf};

use crate::resolve;

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
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            plugin_path: Vec::new(),
            check_plugins: true,
        }
    }
}

impl LoadOptions {
    /// The standard search path for a program whose executable is `exe`.
    pub fn standard(exe: Option<&Path>) -> Self {
        LoadOptions {
            plugin_path: resolve::standard_plugin_path(exe),
            check_plugins: true,
        }
    }
}
