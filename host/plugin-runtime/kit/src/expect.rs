//! A plugin project's test: the summary tables a plugin must return on a
//! recorded trace, as `rocwasm plugin test PLUGIN --trace TRACE --expect
//! FILE` checks them.
//!
//! The file is TOML, one `[[table]]` per table the plugin must return:
//!
//! ```toml
//! [[table]]
//! title = "Kernel dispatches"
//! columns = ["Dispatches", "TotalNs"]
//! rows = [["4", "6500"]]
//! ```
//!
//! Each expected table must be among the plugin's tables (found by title)
//! with exactly these columns and rows, cell by cell as text; tables the
//! file does not name are not checked. `rocwasm plugin new` writes such a
//! file with a small trace next to it (`test/`), so a new project has a
//! test that passes before the author changes anything.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

/// One summary table: what a plugin returned, or what the test expects.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Table {
    /// The table's title, as the plugin's `fini` returns it.
    pub title: String,
    /// Column headers.
    pub columns: Vec<String>,
    /// Rows of cells, as text.
    #[serde(default)]
    pub rows: Vec<Vec<String>>,
}

/// The expectation file: the tables, in any order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// `[[table]]`.
    #[serde(rename = "table", default)]
    pub tables: Vec<Table>,
}

impl Expected {
    /// Reads and parses `path`; a malformed file is an error naming the
    /// file, the line and column, and the key.
    pub fn read(path: &Path) -> Result<Expected> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let expected: Expected = toml::from_str(&text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let (line, col) = line_col(&text, s.start);
                    format!(":{line}:{col}")
                })
                .unwrap_or_default();
            anyhow::anyhow!("{}{at}: {}", path.display(), e.message())
        })?;
        if expected.tables.is_empty() {
            anyhow::bail!(
                "{}: no [[table]]: the file must name at least one table the plugin returns",
                path.display()
            );
        }
        Ok(expected)
    }

    /// What differs between this expectation and the tables a plugin
    /// returned, one sentence per difference (empty: the test passes).
    pub fn differences(&self, got: &[Table]) -> Vec<String> {
        let mut out = Vec::new();
        for want in &self.tables {
            let Some(have) = got.iter().find(|t| t.title == want.title) else {
                let titles: Vec<&str> = got.iter().map(|t| t.title.as_str()).collect();
                out.push(format!(
                    "no table titled `{}` (the plugin returned {titles:?})",
                    want.title
                ));
                continue;
            };
            if have.columns != want.columns {
                out.push(format!(
                    "table `{}`: columns {:?}, expected {:?}",
                    want.title, have.columns, want.columns
                ));
                continue;
            }
            if have.rows.len() != want.rows.len() {
                out.push(format!(
                    "table `{}`: {} row(s), expected {}",
                    want.title,
                    have.rows.len(),
                    want.rows.len()
                ));
            }
            for (i, (h, w)) in have.rows.iter().zip(&want.rows).enumerate() {
                if h != w {
                    out.push(format!(
                        "table `{}` row {}: {h:?}, expected {w:?}",
                        want.title,
                        i + 1
                    ));
                }
            }
        }
        out
    }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(title: &str, rows: &[&[&str]]) -> Table {
        Table {
            title: title.into(),
            columns: vec!["A".into(), "B".into()],
            rows: rows
                .iter()
                .map(|r| r.iter().map(|c| c.to_string()).collect())
                .collect(),
        }
    }

    #[test]
    fn equal_tables_pass_and_each_difference_is_named() {
        let expected = Expected {
            tables: vec![table("t", &[&["1", "2"]])],
        };
        assert!(expected
            .differences(&[table("other", &[]), table("t", &[&["1", "2"]])])
            .is_empty());
        let d = expected.differences(&[table("t", &[&["1", "3"]])]);
        assert_eq!(d, [r#"table `t` row 1: ["1", "3"], expected ["1", "2"]"#]);
        let d = expected.differences(&[table("u", &[])]);
        assert!(d[0].starts_with("no table titled `t`"), "{d:?}");
        let d = expected.differences(&[table("t", &[&["1", "2"], &["3", "4"]])]);
        assert_eq!(d, ["table `t`: 2 row(s), expected 1"]);
    }

    #[test]
    fn a_malformed_file_names_its_line_column_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("expected.toml");
        std::fs::write(
            &path,
            "[[table]]\ntitle = \"t\"\ncolumns = [\"A\"]\nrow = []\n",
        )
        .unwrap();
        let err = Expected::read(&path).unwrap_err().to_string();
        assert!(err.contains("expected.toml:4:1"), "{err}");
        assert!(err.contains("row"), "{err}");
        std::fs::write(&path, "").unwrap();
        let err = Expected::read(&path).unwrap_err().to_string();
        assert!(err.contains("no [[table]]"), "{err}");
    }
}
