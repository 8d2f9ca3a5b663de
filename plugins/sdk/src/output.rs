//! Writing result files, and the summary-table type's helpers.
//!
//! A plugin cannot open files: it hands bytes to the host's `output`
//! interface, which places them in the directory the chain grants the stage
//! (no grant, no files: every call returns an error). Names are plain file
//! names such as `kernel_stats.csv`.
//!
//! A stage gets a directory only when its `[[stage]]` says `output = true`
//! (or names a subdirectory); a chain that only wants the summary tables
//! leaves it out. The WIT interface has no call that asks about the
//! grant: the first write's answer tells ([`NOT_GRANTED`]). [`try_write`]
//! and [`try_append`] turn that answer into [`OutputError::NotGranted`]
//! (and, once it came, no longer call the host), so a plugin can tell "the
//! chain wants no files" from a write that failed. A plugin that returns
//! the same data as a summary table writes with [`write_result`], which is
//! silent about a missing grant (one info-level line) and warns about
//! anything else: what every stock plugin does.
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

use std::fmt::{self, Display};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::bindings::rocwasm::plugin::output as host;
use crate::types::SummaryTable;

/// The host's answer to every `output` call of a stage the chain grants no
/// output directory (WIT `output` interface: "Without a grant every
/// call fails").
pub const NOT_GRANTED: &str = "no output directory is granted to this plugin";

/// Why the host wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputError {
    /// The chain grants this stage no output directory: it wants no files
    /// from it. Not a failure; the same for every later call of the run.
    NotGranted,
    /// The host refused or failed this write (a name that is not a plain
    /// file name, the stage's byte cap, a file another producer writes, an
    /// I/O error): its sentence.
    Refused(String),
}

impl OutputError {
    /// Classifies the host's error sentence.
    pub fn from_host(message: String) -> Self {
        if message == NOT_GRANTED {
            OutputError::NotGranted
        } else {
            OutputError::Refused(message)
        }
    }
}

impl Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputError::NotGranted => f.write_str(NOT_GRANTED),
            OutputError::Refused(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for OutputError {}

impl From<OutputError> for String {
    fn from(e: OutputError) -> String {
        e.to_string()
    }
}

/// Set once the host answered [`NOT_GRANTED`]: a stage's grant does not
/// change while its instance lives, so later writes are not even tried.
static NOT_GRANTED_SEEN: AtomicBool = AtomicBool::new(false);
/// Set once [`write_result`] said so (one line per instance).
static NOT_GRANTED_SAID: AtomicBool = AtomicBool::new(false);

/// Whether the stage may write files: `Some(false)` once the host answered
/// that it grants no output directory, `None` while no write told (the
/// interface cannot be asked without writing).
pub fn granted() -> Option<bool> {
    NOT_GRANTED_SEEN.load(Ordering::Relaxed).then_some(false)
}

fn call(
    name: &str,
    contents: &[u8],
    f: impl FnOnce(&str, &[u8]) -> Result<(), String>,
) -> Result<(), OutputError> {
    if NOT_GRANTED_SEEN.load(Ordering::Relaxed) {
        return Err(OutputError::NotGranted);
    }
    f(name, contents).map_err(|message| {
        let e = OutputError::from_host(message);
        if e == OutputError::NotGranted {
            NOT_GRANTED_SEEN.store(true, Ordering::Relaxed);
        }
        e
    })
}

/// Creates or replaces `name` in the granted output directory.
pub fn try_write(name: &str, contents: impl AsRef<[u8]>) -> Result<(), OutputError> {
    call(name, contents.as_ref(), host::write)
}

/// Appends to `name`, creating it if needed.
pub fn try_append(name: &str, contents: impl AsRef<[u8]>) -> Result<(), OutputError> {
    call(name, contents.as_ref(), host::append)
}

/// [`try_write`] with the host's sentence as the error.
pub fn write(name: &str, contents: impl AsRef<[u8]>) -> Result<(), String> {
    try_write(name, contents).map_err(String::from)
}

/// [`try_append`] with the host's sentence as the error.
pub fn append(name: &str, contents: impl AsRef<[u8]>) -> Result<(), String> {
    try_append(name, contents).map_err(String::from)
}

/// Writes `name`, a file holding what the plugin also returns as a summary
/// table, the way the stock plugins do; `true` when it was written.
///
/// Without an output grant the chain asked for the tables only: nothing is
/// written and, once per plugin instance, an info-level line says so
/// (`plugin` names the plugin in it). Any other refusal is a warning naming
/// the file and the host's reason.
pub fn write_result(plugin: &str, name: &str, contents: impl AsRef<[u8]>) -> bool {
    match try_write(name, contents) {
        Ok(()) => true,
        Err(OutputError::NotGranted) => {
            if !NOT_GRANTED_SAID.swap(true, Ordering::Relaxed) {
                crate::info!(
                    "{plugin}: the stage has no output directory (no `output` in its chain \
                     stage), so no files; its tables are in the summary"
                );
            }
            false
        }
        Err(e) => {
            crate::warn!("{plugin}: cannot write {name}: {e}");
            false
        }
    }
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
    fn the_hosts_no_grant_answer_is_its_own_variant() {
        assert_eq!(
            OutputError::from_host(NOT_GRANTED.to_string()),
            OutputError::NotGranted
        );
        let cap = "output cap of 10 bytes reached (0 written, 11 more asked)";
        assert_eq!(
            OutputError::from_host(cap.to_string()),
            OutputError::Refused(cap.to_string())
        );
        // The host's sentence survives the conversion back to a string.
        assert_eq!(String::from(OutputError::NotGranted), NOT_GRANTED);
    }

    #[test]
    fn no_grant_is_remembered_and_not_asked_again() {
        let mut calls = 0;
        let mut host = |_: &str, _: &[u8]| {
            calls += 1;
            Err(NOT_GRANTED.to_string())
        };
        assert_eq!(granted(), None);
        assert_eq!(call("a.csv", b"x", &mut host), Err(OutputError::NotGranted));
        assert_eq!(call("b.csv", b"x", &mut host), Err(OutputError::NotGranted));
        assert_eq!(calls, 1, "the host is asked once");
        assert_eq!(granted(), Some(false));
    }

    #[test]
    fn summary_tables_render_as_csv() {
        let mut t = SummaryTable::new("T", &["Name", "N"]);
        t.push_row(["x,y", "1"]);
        assert_eq!(t.rows, vec![vec!["x,y".to_string(), "1".to_string()]]);
        assert_eq!(t.to_csv(), "Name,N\n\"x,y\",1\n");
    }
}
