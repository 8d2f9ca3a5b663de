//! `rocwasm-config`: the chain file, parsed and validated in one place.
//!
//! A chain file (TOML, documented for users in `examples/chains/README.md`)
//! says which plugins run, in which order, on which records, with which
//! limits, and where results go:
//!
//! ```toml
//! version = 1
//!
//! [output]
//! directory = "results/%hostname%/%pid%"
//! formats = ["csv", "rocpd"]
//!
//! [[stage]]
//! name = "kernels"
//! plugin = "kernel-stats"          # a stock plugin; or "plugins/mine.wasm"
//! domains = ["kernel_dispatch"]
//! output = true
//! ```
//!
//! [`Chain::load`] reads and checks a file; every problem is a
//! [`ConfigError`] that renders as one line with file, line and column.
//! [`Chain::from_flags`] builds the chain rocprofv3-style flags describe.
//!
//! Modules, in the order data flows through them: [`raw`](crate::raw) (serde
//! shapes) → `parse` (TOML, spans, serde messages) → `validate` (every
//! semantic check) → [`model`] (the validated chain) → [`plan`] (the
//! `RunPlan` a run executes). Helpers: [`units`], [`template`] (from
//! `rocwasm-plan`), [`domains`], [`operations`], [`resolve`], [`flags`],
//! [`summary`].

pub mod domains;
mod error;
pub mod flags;
pub mod model;
pub mod operations;
mod parse;
pub mod plan;
mod raw;
pub mod resolve;
pub mod summary;
pub mod units;
mod validate;

use std::path::{Path, PathBuf};

pub use error::{ConfigError, Location};
pub use flags::TraceFlags;
pub use model::*;
pub use plan::PlanOptions;
pub use summary::{ChainSummary, StageSummary};
pub use rocwasm_plan::template::{self, ProcessInfo};

/// How [`Chain::load`] treats plugin references.
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

impl Chain {
    /// Reads and validates the chain file at `path`. Errors name `path` as
    /// given, so relative paths stay short in messages.
    pub fn load(path: &Path, options: &LoadOptions) -> Result<Chain, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Chain::parse(&text, path, options)
    }

    /// Validates chain `text` as if read from `file` (used in messages, and
    /// its directory anchors relative paths).
    pub fn parse(text: &str, file: &Path, options: &LoadOptions) -> Result<Chain, ConfigError> {
        let src = error::Source { file, text };
        let raw = parse::parse(src)?;
        let base = file.parent().unwrap_or(Path::new("."));
        let base = if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        };
        validate::Validator { src, base, options }.chain(raw)
    }

    /// Every kind the chain's delivery needs: the union of the stages'
    /// domains and the output `trace`, in SDK order. The host configures one
    /// set of services and one buffer for these.
    pub fn domains(&self) -> Vec<BufferTracingKind> {
        let mut kinds: Vec<_> = self
            .stages
            .iter()
            .flat_map(|s| s.domains.iter().copied())
            .chain(self.output.trace.iter().copied())
            .collect();
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// Resolves stock plugin names that are still bare (chains built from
    /// flags, or loaded with `check_plugins = false`) against the chain's
    /// `plugin_path` and then `search`.
    pub fn resolve_plugins(&mut self, search: &[PathBuf]) -> Result<(), ConfigError> {
        let dirs: Vec<PathBuf> = self
            .settings
            .plugin_path
            .iter()
            .chain(search)
            .cloned()
            .collect();
        for stage in &mut self.stages {
            if stage.plugin.stock && stage.plugin.path.as_os_str() == stage.plugin.spec.as_str() {
                stage.plugin.path =
                    resolve::find_stock(&stage.plugin.spec, &dirs).ok_or_else(|| {
                        ConfigError::Invalid {
                            message: format!(
                                "stage `{}`: {}",
                                stage.name,
                                resolve::stock_not_found_message(&stage.plugin.spec)
                            ),
                        }
                    })?;
            }
        }
        Ok(())
    }

    /// The stage named `name`.
    pub fn stage(&self, name: &str) -> Option<&Stage> {
        self.stages.iter().find(|s| s.name == name)
    }
}
