//! Replay errors: always the file, and the line (or row) when there is one.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with a recorded trace. Displays as
/// `kernel_trace.csv:1234: column End_Timestamp: "12x" is not a number`.
#[derive(Debug)]
pub struct ReplayError {
    /// The file the problem is in: within a directory of CSV files the
    /// offending file, or the directory itself when the problem is its own
    /// (unreadable, no trace files).
    pub path: PathBuf,
    /// 1-based line (CSV, JSON) or row id (rocpd), when known.
    pub line: Option<u64>,
    /// What is wrong, without the file and line prefix.
    pub message: String,
}

impl ReplayError {
    /// An error in `path`, at `line` when known.
    pub(crate) fn new(path: &Path, line: Option<u64>, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// `path` could not be read.
    pub(crate) fn io(path: &Path, e: std::io::Error) -> Self {
        Self::new(path, None, e.to_string())
    }

    /// `path` could not be read as a rocpd (SQLite) database.
    pub(crate) fn sqlite(path: &Path, e: rusqlite::Error) -> Self {
        Self::new(path, None, format!("not a readable rocpd database: {e}"))
    }
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ReplayError {}

/// The result of every replay operation.
pub type Result<T> = std::result::Result<T, ReplayError>;
