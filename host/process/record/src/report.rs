//! What the chain leaves at the end of a run: every stage's `fini` tables
//! (one comfy-table each, like the host's `--stats` tables), then what went
//! wrong, one `rocwasm:` line each. A live run writes it into
//! `rocwasm-summary.txt`; `rocwasm replay` prints it.

use comfy_table::{presets::UTF8_FULL_CONDENSED, ColumnConstraint, ContentArrangement, Table};
use rocwasm_plugin_host::{Chain, ChainOutcome, FailureReport, SummaryTable};

/// What the end of a chain leaves for the summary.
#[derive(Debug, Default)]
pub struct PluginReport {
    /// Per stage in chain order, its `fini` tables.
    pub tables: Vec<(String, Vec<SummaryTable>)>,
    /// Failure reports, declined stages, a chain that could not start or
    /// finish: each one line, without the `rocwasm:` prefix.
    pub problems: Vec<String>,
    /// How many of the problems are failures (a plugin failed, or an
    /// `abort` policy stopped the chain) rather than notes (a stage that
    /// declined in `configure`).
    pub failed: usize,
}

impl PluginReport {
    /// Finishes `chain` (each stage's `fini`, once; the engine is finalized
    /// first, so every buffered record is delivered) and reports it; no
    /// chain, an empty report.
    pub fn finish_chain(chain: Option<Chain>) -> PluginReport {
        match chain {
            Some(chain) => {
                let before = chain.failures();
                match chain.finish() {
                    Ok(outcome) => PluginReport::finished(outcome),
                    Err(e) => PluginReport::stopped(&before, &e),
                }
            }
            None => PluginReport::default(),
        }
    }

    /// A chain that finished: its tables, declined stages and failures.
    pub fn finished(outcome: ChainOutcome) -> PluginReport {
        PluginReport {
            tables: outcome.summaries,
            failed: outcome.failures.len(),
            problems: outcome
                .declined
                .iter()
                .map(|name| {
                    format!("stage `{name}` declined to run (its configure returned false)")
                })
                .chain(outcome.failures.iter().map(|f| f.to_string()))
                .collect(),
        }
    }

    /// An `abort` policy stopped the chain (`error`): the failures reported
    /// before, then why it stopped.
    pub fn stopped(before: &[FailureReport], error: &anyhow::Error) -> PluginReport {
        PluginReport {
            tables: Vec::new(),
            failed: before.len() + 1,
            problems: before
                .iter()
                .map(|f| f.to_string())
                .chain([format!("the plugin chain stopped: {error:#}")])
                .collect(),
        }
    }

    /// The tables, then the problems.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (stage, tables) in &self.tables {
            for t in tables {
                out.push_str(&render_table(stage, t));
                out.push('\n');
            }
        }
        for p in &self.problems {
            out.push_str("rocwasm: ");
            out.push_str(p);
            out.push('\n');
        }
        out
    }
}

/// `[stage] title (n row(s))` over the table. Rows shorter than the header
/// are padded: a plugin's table is its own business, not a reason to panic.
pub fn render_table(stage: &str, t: &SummaryTable) -> String {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(120)
        .set_header(t.columns.clone());
    for row in &t.rows {
        let mut row = row.clone();
        if row.len() < t.columns.len() {
            row.resize(t.columns.len(), String::new());
        }
        table.add_row(row);
    }
    // The first column names the row (a kernel, an API function): it is
    // never wrapped, so a name can be read, and searched for, whole; the
    // other columns give way to fit the width.
    if let Some(first) = table.column_mut(0) {
        first.set_constraint(ColumnConstraint::ContentWidth);
    }
    format!("[{stage}] {} ({} row(s))\n{table}", t.title, t.rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> SummaryTable {
        SummaryTable {
            title: "Kernel statistics".into(),
            columns: vec!["Name".into(), "Calls".into()],
            rows: vec![vec!["vector_add".into(), "4".into()], vec!["short".into()]],
        }
    }

    #[test]
    fn tables_then_problems() {
        let report = PluginReport {
            tables: vec![("kernel-stats".into(), vec![table()])],
            problems: vec!["plugin `trap`: trap: unreachable".into()],
            failed: 1,
        };
        let text = report.render();
        let head = text
            .find("[kernel-stats] Kernel statistics (2 row(s))")
            .unwrap();
        let cell = text.find("vector_add").unwrap();
        let problem = text.find("rocwasm: plugin `trap`").unwrap();
        assert!(head < cell && cell < problem, "{text}");
        assert!(text.contains("Calls"), "{text}");
    }

    #[test]
    fn a_row_name_is_never_wrapped() {
        // Eight wide columns do not fit 120 characters: the others give way.
        let name = "hipGetDevicePropertiesR0600";
        let wide = "604282271.601172".to_string();
        let t = SummaryTable {
            title: "HIP API statistics".into(),
            columns: [
                "Name", "Calls", "Total", "Average", "Percent", "Min", "Max", "StdDev",
            ]
            .map(String::from)
            .to_vec(),
            rows: vec![[name.to_string()]
                .into_iter()
                .chain(std::iter::repeat_n(wide, 7))
                .collect()],
        };
        let text = render_table("api-stats", &t);
        assert!(text.contains(name), "{text}");
    }
}
