//! The chain file as serde reads it: structure and basic types only.
//!
//! Every struct denies unknown keys, and every value keeps its span so
//! [`crate::validate`] can report the line and column of a bad value. Values
//! with several accepted shapes (a size as `"4MiB"` or an integer, the
//! `output` grant as a boolean or a name) stay [`toml::Value`]s here and are
//! checked by hand, so their messages say what was expected.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

pub type S<T> = Spanned<T>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawChain {
    /// Checked on the parsed tree before serde runs (see `parse`); kept
    /// here so `deny_unknown_fields` accepts it.
    #[allow(dead_code)]
    pub version: Option<S<i64>>,
    pub settings: Option<S<RawSettings>>,
    pub output: Option<S<RawOutput>>,
    pub kernels: Option<S<RawKernels>>,
    pub collection: Option<S<RawCollection>>,
    pub summary: Option<S<RawSummary>>,
    #[serde(default)]
    pub stage: Vec<S<RawStage>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCollection {
    pub period: Option<S<String>>,
    pub period_unit: Option<S<String>>,
    pub selected_regions: Option<S<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSummary {
    pub all: Option<S<bool>>,
    pub groups: Option<S<Vec<String>>>,
    pub output_file: Option<S<String>>,
    pub units: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKernels {
    pub include_regex: Option<S<String>>,
    pub exclude_regex: Option<S<String>>,
    pub iteration_range: Option<S<String>>,
    pub truncate: Option<S<bool>>,
    pub mangled: Option<S<bool>>,
    pub rename: Option<S<bool>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSettings {
    pub backend: Option<S<String>>,
    pub buffer: Option<S<RawBuffer>>,
    pub delivery_threads: Option<S<i64>>,
    pub plugin_cache: Option<S<String>>,
    pub plugin_path: Option<Vec<S<String>>>,
    pub limits: Option<S<RawLimits>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBuffer {
    pub size: Option<S<toml::Value>>,
    pub watermark: Option<S<toml::Value>>,
    pub policy: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOutput {
    pub directory: Option<S<String>>,
    pub file_prefix: Option<S<String>>,
    pub formats: Option<Vec<S<String>>>,
    pub trace: Option<Vec<S<String>>>,
    pub summary: Option<S<bool>>,
    pub write: Option<S<String>>,
    pub api_args: Option<S<bool>>,
    pub parquet_layout: Option<S<String>>,
}

/// A stage's `operations` table: domain name → operation names, spans kept.
pub type RawOperations = BTreeMap<S<String>, Vec<S<String>>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStage {
    pub name: Option<S<String>>,
    pub plugin: Option<S<String>>,
    pub sha256: Option<S<String>>,
    pub kind: Option<S<String>>,
    pub domains: Option<Vec<S<String>>>,
    pub operations: Option<S<RawOperations>>,
    pub config: Option<S<toml::Table>>,
    pub limits: Option<S<RawLimits>>,
    pub on_failure: Option<S<String>>,
    pub max_restarts: Option<S<i64>>,
    pub restart_backoff: Option<S<String>>,
    pub output: Option<S<toml::Value>>,
    pub callbacks: Option<S<bool>>,
    pub external_correlation: Option<S<bool>>,
    pub placement: Option<S<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub memory: Option<S<toml::Value>>,
    pub deadline: Option<S<toml::Value>>,
    pub callback_deadline: Option<S<toml::Value>>,
    pub output: Option<S<toml::Value>>,
}
