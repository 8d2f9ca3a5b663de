//! Loading a chain: [`Chain::load`] and [`Chain::parse`] drive the stages
//! (`parse` → `validate` → model), and the chain's own queries.
//!
//! Below the crate root, so that the root is only a facade; the options
//! live in `options`, which `validate` reads too.

use std::path::{Path, PathBuf};

use crate::options::LoadOptions;

use rocwasm_core::BufferTracingKind;

use crate::error::{self, ConfigError};
use crate::model::{Chain, Stage};
use crate::{parse, resolve, validate};

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
