//! [`Chain::summary`]: what a chain will run, as rows for a table.
//!
//! The rows are plain strings so any front end can lay them out (the CLI
//! draws them with comfy-table); [`ChainSummary`]'s `Display` is a plain
//! aligned rendering for logs.

use std::fmt;

use crate::model::*;
use crate::units::{format_duration, format_size};

/// Host-wide facts and one row per stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainSummary {
    /// The chain file, or `command-line flags`.
    pub source: String,
    /// `key: value` lines about settings and outputs.
    pub settings: Vec<(String, String)>,
    /// One row per stage, in chain order.
    pub stages: Vec<StageSummary>,
}

/// One stage, every column already rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSummary {
    /// Position in the chain, from 1 (the `#` column).
    pub index: usize,
    /// The stage's `name`.
    pub name: String,
    /// The world: `analysis` or `transform`.
    pub kind: String,
    /// The `plugin` value; for a resolved stock name, followed by the file
    /// found in parentheses.
    pub plugin: String,
    /// The delivered kinds in lowercase SDK names, `(all of the chain's)`
    /// when the stage names none, then `; <kind> only: <operations>` per
    /// operation filter.
    pub domains: String,
    /// Memory cap and deadline, e.g. `64MiB, 500ms`.
    pub limits: String,
    /// The failure policy, e.g. `disable` or `restart (≤3, 100ms)`.
    pub on_failure: String,
    /// The output grant: `-` (none), `run dir` or `run dir/<name>`.
    pub output: String,
}

impl StageSummary {
    /// Column titles, in the order of [`StageSummary::cells`].
    pub const HEADERS: [&'static str; 8] = [
        "#",
        "stage",
        "kind",
        "plugin",
        "domains",
        "limits",
        "on failure",
        "output",
    ];

    /// The row's cells, in the order of [`StageSummary::HEADERS`].
    pub fn cells(&self) -> [String; 8] {
        [
            self.index.to_string(),
            self.name.clone(),
            self.kind.clone(),
            self.plugin.clone(),
            self.domains.clone(),
            self.limits.clone(),
            self.on_failure.clone(),
            self.output.clone(),
        ]
    }
}

impl Chain {
    /// A summary of what this chain will run.
    pub fn summary(&self) -> ChainSummary {
        let kinds = |ks: &[BufferTracingKind]| {
            if ks.is_empty() {
                "-".to_string()
            } else {
                ks.iter()
                    .map(|k| k.name().to_ascii_lowercase())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        let b = &self.settings.buffer;
        let settings = vec![
            ("output directory".into(), self.output.directory.to_string()),
            (
                "file prefix".into(),
                self.output.file_prefix.as_ref().map_or_else(
                    || "none (files keep their plain names)".to_string(),
                    |p| p.to_string(),
                ),
            ),
            (
                "formats".into(),
                self.output
                    .formats
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            ("traced to files".into(), kinds(&self.output.trace)),
            (
                "summary tables".into(),
                if self.output.summary { "yes" } else { "no" }.into(),
            ),
            (
                "buffer".into(),
                format!(
                    "{} (watermark {}, {})",
                    format_size(b.size),
                    format_size(b.watermark),
                    match b.policy {
                        BufferPolicy::Lossless => "lossless",
                        BufferPolicy::Discard => "discard",
                    }
                ),
            ),
            (
                "delivery threads".into(),
                self.settings.delivery_threads.to_string(),
            ),
            ("domains configured".into(), kinds(&self.domains())),
        ];
        let stages = self
            .stages
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mut domains = if s.domains.is_empty() {
                    "(all of the chain's)".to_string()
                } else {
                    kinds(&s.domains)
                };
                for (k, ops) in &s.operations {
                    let names: Vec<_> = ops.iter().map(|o| o.name.as_str()).collect();
                    domains.push_str(&format!(
                        "; {} only: {}",
                        k.name().to_ascii_lowercase(),
                        names.join(", ")
                    ));
                }
                let plugin =
                    if s.plugin.stock && s.plugin.path.as_os_str() != s.plugin.spec.as_str() {
                        format!("{} ({})", s.plugin.spec, s.plugin.path.display())
                    } else {
                        s.plugin.spec.clone()
                    };
                StageSummary {
                    index: i + 1,
                    name: s.name.clone(),
                    kind: s.world.name().to_string(),
                    plugin,
                    domains,
                    limits: format!(
                        "{}, {}",
                        format_size(s.limits.memory_bytes),
                        format_duration(s.limits.deadline)
                    ),
                    on_failure: match s.on_failure {
                        FailurePolicy::Restart {
                            max: max_restarts,
                            backoff,
                        } => {
                            format!("restart (≤{max_restarts}, {})", format_duration(backoff))
                        }
                        p => p.name().to_string(),
                    },
                    output: match &s.output {
                        OutputGrant::None => "-".to_string(),
                        OutputGrant::RunDirectory => "run dir".to_string(),
                        OutputGrant::Subdirectory(d) => format!("run dir/{d}"),
                    },
                }
            })
            .collect();
        ChainSummary {
            source: self
                .file
                .as_ref()
                .map_or("command-line flags".to_string(), |f| {
                    f.display().to_string()
                }),
            settings,
            stages,
        }
    }
}

impl fmt::Display for ChainSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "chain: {}", self.source)?;
        for (k, v) in &self.settings {
            writeln!(f, "  {k}: {v}")?;
        }
        let rows: Vec<[String; 8]> = std::iter::once(StageSummary::HEADERS.map(String::from))
            .chain(self.stages.iter().map(StageSummary::cells))
            .collect();
        let mut widths = [0usize; 8];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for row in &rows {
            let line: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            writeln!(f, "  {}", line.join("  ").trim_end())?;
        }
        Ok(())
    }
}
