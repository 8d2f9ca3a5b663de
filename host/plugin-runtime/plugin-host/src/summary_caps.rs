//! What the host keeps of the summary tables a plugin's `fini` returns.
//!
//! A plugin may return any number of tables of any size; the host keeps at
//! most [`MAX_TABLES`] tables, [`MAX_COLUMNS`] columns and [`MAX_ROWS`] rows
//! a table, [`MAX_TEXT_BYTES`] bytes a cell, title or column name (cut on a
//! char boundary), and [`MAX_TOTAL_BYTES`] bytes of text over all tables of
//! one stage (rows past it are dropped). Anything cut is reported once, as
//! the stage's failure in `fini` with cause
//! [`FailureCause::Oversized`](crate::FailureCause::Oversized); what was kept
//! is printed and stored as usual, each cut table's title saying so.
//!
//! The tables are copied out of the guest before they are cut; that copy is
//! capped by [`MAX_CALL_COPY_BYTES`](crate::sandbox::MAX_CALL_COPY_BYTES):
//! a `fini` returning more than that traps and is reported as
//! [`FailureCause::Oversized`](crate::FailureCause::Oversized), its tables
//! lost, so the host never holds more than that of one stage's summary.

use crate::bindings::types::SummaryTable;

/// Tables kept per stage.
pub const MAX_TABLES: usize = 64;
/// Columns kept per table (and cells per row).
pub const MAX_COLUMNS: usize = 64;
/// Rows kept per table.
pub const MAX_ROWS: usize = 10_000;
/// Bytes kept of one cell, title or column name.
pub const MAX_TEXT_BYTES: usize = 1024;
/// Bytes of text kept over all tables of one stage.
pub const MAX_TOTAL_BYTES: usize = 8 << 20;

/// Cuts `tables` to the caps; returns what was cut, one clause per table
/// (empty: nothing was).
pub(crate) fn cap(tables: &mut Vec<SummaryTable>) -> Vec<String> {
    let mut cuts = Vec::new();
    if tables.len() > MAX_TABLES {
        cuts.push(format!("{} tables, kept {MAX_TABLES}", tables.len()));
        tables.truncate(MAX_TABLES);
        tables.shrink_to_fit();
    }
    let mut budget = MAX_TOTAL_BYTES;
    for t in tables.iter_mut() {
        let mut what = Vec::new();
        let mut texts_cut = 0usize;
        texts_cut += usize::from(cut_text(&mut t.title));
        if t.columns.len() > MAX_COLUMNS {
            what.push(format!("{} columns, kept {MAX_COLUMNS}", t.columns.len()));
            t.columns.truncate(MAX_COLUMNS);
        }
        for c in &mut t.columns {
            texts_cut += usize::from(cut_text(c));
        }
        budget =
            budget.saturating_sub(t.title.len() + t.columns.iter().map(String::len).sum::<usize>());
        let rows = t.rows.len();
        let mut kept = 0;
        let mut wide = 0usize;
        for row in t.rows.iter_mut().take(MAX_ROWS) {
            if row.len() > MAX_COLUMNS {
                wide += 1;
                row.truncate(MAX_COLUMNS);
            }
            for cell in row.iter_mut() {
                texts_cut += usize::from(cut_text(cell));
            }
            let bytes: usize = row.iter().map(String::len).sum();
            if bytes > budget {
                break;
            }
            budget -= bytes;
            kept += 1;
        }
        if kept < rows {
            what.push(format!("{rows} rows, kept {kept}"));
            t.rows.truncate(kept);
            t.rows.shrink_to_fit();
        }
        if wide > 0 {
            what.push(format!("{wide} row(s) wider than {MAX_COLUMNS} cells cut"));
        }
        if texts_cut > 0 {
            what.push(format!(
                "{texts_cut} text(s) longer than {MAX_TEXT_BYTES} bytes cut"
            ));
        }
        if !what.is_empty() {
            let clause = format!("table `{}`: {}", t.title, what.join(", "));
            t.title = format!("{} (cut by the host: {})", t.title, what.join(", "));
            cuts.push(clause);
        }
    }
    cuts
}

/// Cuts `s` to [`MAX_TEXT_BYTES`] on a char boundary; true if it did.
fn cut_text(s: &mut String) -> bool {
    if s.len() <= MAX_TEXT_BYTES {
        return false;
    }
    let mut end = MAX_TEXT_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.shrink_to_fit();
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: usize, cols: usize, cell: &str) -> SummaryTable {
        SummaryTable {
            title: "T".into(),
            columns: (0..cols).map(|i| format!("C{i}")).collect(),
            rows: vec![vec![cell.to_string(); cols]; rows],
        }
    }

    #[test]
    fn small_tables_pass_unchanged() {
        let mut t = vec![table(3, 2, "x")];
        assert!(cap(&mut t).is_empty());
        assert_eq!((t[0].title.as_str(), t[0].rows.len()), ("T", 3));
        assert_eq!(t[0].rows[2], vec!["x", "x"]);
    }

    #[test]
    fn rows_columns_cells_and_tables_are_cut_and_said() {
        let mut t = vec![table(
            MAX_ROWS + 5,
            MAX_COLUMNS + 1,
            &"é".repeat(MAX_TEXT_BYTES),
        )];
        let cuts = cap(&mut t);
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        assert!(cuts[0].contains("columns, kept 64"), "{cuts:?}");
        assert!(
            t[0].title.starts_with("T (cut by the host: "),
            "{}",
            t[0].title
        );
        assert!(t[0].rows.len() <= MAX_ROWS);
        assert!(t[0].rows.iter().all(|r| r.len() == MAX_COLUMNS));
        assert!(t[0].rows[0][0].len() <= MAX_TEXT_BYTES);
        let total: usize = t[0].rows.iter().flatten().map(String::len).sum();
        assert!(total <= MAX_TOTAL_BYTES, "{total}");

        let mut many: Vec<_> = (0..MAX_TABLES + 3).map(|_| table(1, 1, "x")).collect();
        let cuts = cap(&mut many);
        assert_eq!(many.len(), MAX_TABLES);
        assert_eq!(
            cuts,
            vec![format!("{} tables, kept {MAX_TABLES}", MAX_TABLES + 3)]
        );
    }
}
