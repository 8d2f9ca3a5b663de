//! Writing result files, and the summary-table type's helpers.
//!
//! A plugin cannot open files: it hands bytes to the host's `output`
//! interface, which places them in the directory the chain grants the stage
//! (no grant, no files: every call returns an error). Names are plain file
//! names such as `kernel_stats.csv`.
//!
//! [`CsvWriter`] builds RFC 4180 CSV in memory (kernel names contain commas,
//! so cells are quoted when they need it):
//!
//! ```
//! use rocwasm_plugin_sdk::output::CsvWriter;
//! let mut csv = CsvWriter::new(&["Name", "Calls"]);
//! csv.row(["void k<int, 2>(int*)", "3"]);
//! assert_eq!(csv.finish(), "Name,Calls\n\"void k<int, 2>(int*)\",3\n");
//! ```

use std::fmt::Display;

use crate::bindings::rocwasm::plugin::output as host;
use crate::types::SummaryTable;

/// Creates or replaces `name` in the granted output directory.
pub fn write(name: &str, contents: impl AsRef<[u8]>) -> Result<(), String> {
    host::write(name, contents.as_ref())
}

/// Appends to `name`, creating it if needed.
pub fn append(name: &str, contents: impl AsRef<[u8]>) -> Result<(), String> {
    host::append(name, contents.as_ref())
}

/// An in-memory CSV document with a fixed header.
#[derive(Debug, Clone)]
pub struct CsvWriter {
    text: String,
    columns: usize,
}

impl CsvWriter {
    /// Starts a document with this header line.
    pub fn new<S: AsRef<str>>(header: &[S]) -> Self {
        let mut w = CsvWriter {
            text: String::new(),
            columns: header.len(),
        };
        w.line(header.iter().map(|h| h.as_ref()));
        w
    }

    /// Appends one row. Rows shorter than the header are padded with empty
    /// cells and longer ones truncated, so the file always stays rectangular.
    pub fn row<I>(&mut self, cells: I)
    where
        I: IntoIterator,
        I::Item: Display,
    {
        let mut cells: Vec<String> = cells
            .into_iter()
            .take(self.columns)
            .map(|c| c.to_string())
            .collect();
        cells.resize(self.columns, String::new());
        self.line(cells.iter().map(String::as_str));
    }

    fn line<'a>(&mut self, cells: impl Iterator<Item = &'a str>) {
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                self.text.push(',');
            }
            push_cell(&mut self.text, cell);
        }
        self.text.push('\n');
    }

    /// The document so far.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The finished document.
    pub fn finish(self) -> String {
        self.text
    }

    /// Writes the document as `name` through the host.
    pub fn write_to(&self, name: &str) -> Result<(), String> {
        write(name, self.text.as_bytes())
    }
}

/// Quotes a cell when it contains a separator, a quote or a line break.
fn push_cell(out: &mut String, cell: &str) {
    if cell.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&cell.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(cell);
    }
}

impl SummaryTable {
    /// An empty table with a title and column names.
    pub fn new<S: AsRef<str>>(title: impl Into<String>, columns: &[S]) -> Self {
        SummaryTable {
            title: title.into(),
            columns: columns.iter().map(|c| c.as_ref().to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row of cells rendered with `Display`.
    pub fn push_row<I>(&mut self, cells: I)
    where
        I: IntoIterator,
        I::Item: Display,
    {
        self.rows
            .push(cells.into_iter().map(|c| c.to_string()).collect());
    }

    /// The table as CSV (header = the column names).
    pub fn to_csv(&self) -> String {
        let mut csv = CsvWriter::new(&self.columns);
        for row in &self.rows {
            csv.row(row);
        }
        csv.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_quoted_only_when_needed() {
        let mut csv = CsvWriter::new(&["a", "b", "c"]);
        csv.row(["plain", "has \"quote\"", "line\nbreak"]);
        csv.row([1, 2]);
        csv.row([1, 2, 3, 4]);
        assert_eq!(
            csv.finish(),
            "a,b,c\nplain,\"has \"\"quote\"\"\",\"line\nbreak\"\n1,2,\n1,2,3\n"
        );
    }

    #[test]
    fn summary_tables_render_as_csv() {
        let mut t = SummaryTable::new("T", &["Name", "N"]);
        t.push_row(["x,y", "1"]);
        assert_eq!(t.rows, vec![vec!["x,y".to_string(), "1".to_string()]]);
        assert_eq!(t.to_csv(), "Name,N\n\"x,y\",1\n");
    }
}
