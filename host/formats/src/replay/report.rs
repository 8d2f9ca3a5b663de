//! What the readers read, mapped and could not map: the [`ReadReport`] of a
//! replay, so that no record is skipped without a word.
//!
//! Every reader counts, per file, the records it read and the records it
//! turned into batch rows, and files every record it could not map under a
//! [`Reason`] (with how many, the first lines and a few examples). Reasons
//! either lose records (an unknown kind, an unparsable field, a category of
//! `results.json` this build does not read) or only say that something was
//! not carried over (an operation name this build does not know, kept under
//! a synthetic number with its recorded name; a column nobody reads). A file
//! cut short (a run killed mid-write) has [`FileReport::damage`]: it was read
//! up to that line.
//!
//! `rocwasm replay` prints one line per reason on stderr and the counts in
//! its summary; with `--strict` ([`crate::ReplaySource::set_strict`]) the
//! first thing that loses or invents data is an error.

use std::fmt;
use std::path::{Path, PathBuf};

/// How many example lines and names an [`Issue`] keeps.
const EXAMPLES: usize = 3;

/// Why records, or part of them, were not mapped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    /// The record's domain (CSV `Domain`/`Kind`, JSON kind, rocpd category)
    /// names no kind this build knows: the record is skipped.
    UnknownKind {
        /// The name as recorded.
        name: String,
    },
    /// A field could not be read (not a number, too large): the record is
    /// skipped.
    UnparsableField {
        /// The column (CSV) or field (JSON) name.
        column: String,
    },
    /// A `buffer_records` category of `results.json` this build does not
    /// read: its records are skipped.
    UnknownCategory {
        /// The category key.
        name: String,
    },
    /// Operation names of a kind that this build's tables lack: the records
    /// are kept under synthetic operation numbers and keep their recorded
    /// names in every output.
    UnknownOperation {
        /// The kind the records were mapped to.
        kind: String,
    },
    /// A column of the file no reader uses: its values are not replayed.
    UnknownColumn {
        /// The column's header.
        name: String,
    },
    /// A file of a recording's directory that is not a trace file (its
    /// rows are counted): statistics and agent lists, which replay
    /// recomputes or does without, or data this build does not read
    /// (counter collection, PC samples).
    UnreadFile {
        /// What the file holds, in words.
        what: String,
        /// Whether its rows are data lost to the replay (counters,
        /// samples), rather than derived from the traces.
        loses: bool,
    },
    /// Values the recording holds for records that are replayed, which a
    /// batch has no place for (API call arguments): the records are
    /// replayed without them.
    NotCarried {
        /// What is left behind, in words.
        what: String,
    },
}

impl Reason {
    /// True when the records counted under this reason are not replayed at
    /// all (as opposed to replayed with something missing or renamed).
    pub fn loses_records(&self) -> bool {
        matches!(
            self,
            Reason::UnknownKind { .. }
                | Reason::UnparsableField { .. }
                | Reason::UnknownCategory { .. }
                | Reason::UnreadFile { loses: true, .. }
        )
    }

    /// True when `--strict` refuses a recording with this reason: everything
    /// except operation names kept under a synthetic number, which lose
    /// nothing (they are replayed, and named, as recorded).
    pub fn is_strict_error(&self) -> bool {
        !matches!(
            self,
            Reason::UnknownOperation { .. } | Reason::UnreadFile { loses: false, .. }
        )
    }
}

/// One reason in one file: how often, where first, a few examples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Why.
    pub reason: Reason,
    /// Records (or columns) concerned.
    pub count: u64,
    /// The first lines (CSV, JSON: the line of the document when known;
    /// rocpd: the row id), at most three.
    pub lines: Vec<u64>,
    /// The first distinct details (an operation name; the message of an
    /// unparsable field), at most three.
    pub examples: Vec<String>,
}

/// Where a file stops being readable: everything before it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The 1-based line where the damage is (the first line not read).
    pub line: Option<u64>,
    /// The column on that line, when known (JSON).
    pub column: Option<u64>,
    /// What is wrong there.
    pub message: String,
}

/// The counts of one file (a CSV file, `results.json`, a rocpd database).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// Records read (data rows, JSON records, database rows).
    pub read: u64,
    /// Records turned into batch rows.
    pub mapped: u64,
    /// What could not be mapped, by reason, in order of first occurrence.
    pub issues: Vec<Issue>,
    /// Set when the file was cut short or damaged: it was read up to there.
    pub damage: Option<Damage>,
}

impl FileReport {
    fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            read: 0,
            mapped: 0,
            issues: Vec::new(),
            damage: None,
        }
    }

    /// Records read but not replayed.
    pub fn lost(&self) -> u64 {
        self.issues
            .iter()
            .filter(|i| i.reason.loses_records())
            .map(|i| i.count)
            .sum()
    }

    /// The file's name for messages (its last component).
    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// Counts `count` records under `reason`, first seen at `line`.
    pub(crate) fn issue(
        &mut self,
        reason: Reason,
        line: Option<u64>,
        example: Option<&str>,
        count: u64,
    ) {
        let i = match self.issues.iter().position(|i| i.reason == reason) {
            Some(i) => i,
            None => {
                self.issues.push(Issue {
                    reason,
                    count: 0,
                    lines: Vec::new(),
                    examples: Vec::new(),
                });
                self.issues.len() - 1
            }
        };
        let issue = &mut self.issues[i];
        issue.count += count;
        if let Some(line) = line {
            if issue.lines.len() < EXAMPLES && !issue.lines.contains(&line) {
                issue.lines.push(line);
            }
        }
        if let Some(e) = example {
            if issue.examples.len() < EXAMPLES && !issue.examples.iter().any(|x| x == e) {
                issue.examples.push(e.to_string());
            }
        }
    }

    /// One line per reason, and the damage, each starting with the file's
    /// name: `hip_api_trace.csv: 17 record(s) of domain HIP_FOO_API not
    /// mapped (first at line 2)`.
    pub fn lines(&self) -> Vec<String> {
        let name = self.name();
        let mut out: Vec<String> = self.issues.iter().map(|i| format!("{name}: {i}")).collect();
        if let Some(d) = &self.damage {
            out.push(format!("{name}{}: {d}", d.at()));
        }
        out
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.count;
        match &self.reason {
            Reason::UnknownKind { name } => {
                write!(f, "{n} record(s) of domain {name} not mapped")?
            }
            Reason::UnparsableField { column } => write!(
                f,
                "{n} record(s) not mapped: field {column} could not be read"
            )?,
            Reason::UnknownCategory { name } => write!(
                f,
                "{n} record(s) of category {name} not mapped (this build does not read it)"
            )?,
            Reason::UnknownOperation { kind } => write!(
                f,
                "{n} record(s) of {kind} operations this build does not know, kept under new numbers with their recorded names"
            )?,
            Reason::UnknownColumn { name } => write!(f, "column {name} is not replayed")?,
            Reason::UnreadFile { what, loses: true } => write!(
                f,
                "{n} row(s) of {what} not replayed (this build does not read them)"
            )?,
            Reason::UnreadFile { what, loses: false } => {
                write!(f, "{n} row(s) of {what} not read")?
            }
            Reason::NotCarried { what } => write!(
                f,
                "{n} row(s) of {what} not replayed: a batch has no place for them, so the replayed \
                 records go without"
            )?,
        }
        let first = match &self.reason {
            // A column is a header matter: its line is always 1; a file
            // that is not read has no line of its own.
            Reason::UnknownColumn { .. }
            | Reason::UnreadFile { .. }
            | Reason::NotCarried { .. } => None,
            _ => self.lines.first(),
        };
        match (first, self.examples.as_slice()) {
            (Some(l), []) => write!(f, " (first at line {l})"),
            (Some(l), ex) => write!(f, " (first at line {l}: {})", ex.join(", ")),
            (None, []) => Ok(()),
            (None, ex) => write!(f, " ({})", ex.join(", ")),
        }
    }
}

impl Damage {
    /// `:LINE` or `:LINE:COLUMN`, to follow a file's name; empty when the
    /// place is not known.
    pub fn at(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!(":{l}:{c}"),
            (Some(l), None) => format!(":{l}"),
            _ => String::new(),
        }
    }
}

/// Displays as `MESSAGE; read up to line N` (or `; nothing read from it`).
impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        match self.line {
            Some(l) if l > 2 => write!(f, "; read up to line {}", l - 1),
            Some(_) => write!(f, "; no record before it"),
            None => Ok(()),
        }
    }
}

/// The counts of a whole replay, file by file in reading order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadReport {
    /// One entry per file read.
    pub files: Vec<FileReport>,
}

impl ReadReport {
    /// Records read in every file.
    pub fn read(&self) -> u64 {
        self.files.iter().map(|f| f.read).sum()
    }

    /// Records replayed.
    pub fn mapped(&self) -> u64 {
        self.files.iter().map(|f| f.mapped).sum()
    }

    /// Records read and not replayed.
    pub fn lost(&self) -> u64 {
        self.files.iter().map(FileReport::lost).sum()
    }

    /// Files cut short or damaged.
    pub fn damaged(&self) -> impl Iterator<Item = &FileReport> {
        self.files.iter().filter(|f| f.damage.is_some())
    }

    /// True when nothing was lost, renamed, ignored or damaged.
    pub fn is_clean(&self) -> bool {
        self.files
            .iter()
            .all(|f| f.issues.is_empty() && f.damage.is_none())
    }

    /// Every reason and damage, one line each, prefixed by the file's name.
    pub fn lines(&self) -> Vec<String> {
        self.files.iter().flat_map(FileReport::lines).collect()
    }

    /// The first thing `--strict` refuses, as the error it becomes.
    pub(crate) fn strict_error(&self) -> Option<crate::replay::ReplayError> {
        for f in &self.files {
            if let Some(i) = f.issues.iter().find(|i| i.reason.is_strict_error()) {
                let line = match i.reason {
                    Reason::UnknownColumn { .. } => Some(1),
                    _ => i.lines.first().copied(),
                };
                let what = match (&i.reason, i.examples.first()) {
                    (Reason::UnparsableField { .. }, Some(msg)) => msg.clone(),
                    (Reason::UnparsableField { column }, None) => {
                        format!("field {column} could not be read")
                    }
                    (Reason::UnknownKind { name }, _) => {
                        format!("a record of domain {name}, which names no kind this build knows")
                    }
                    (Reason::UnknownCategory { name }, _) => {
                        format!("records of category {name}, which this build does not read")
                    }
                    (Reason::UnknownColumn { name }, _) => {
                        format!("column {name}, which no record uses")
                    }
                    (Reason::UnknownOperation { .. }, _) => i.to_string(),
                    (Reason::UnreadFile { what, .. }, _) => {
                        format!("{what}, which this build does not read")
                    }
                    (Reason::NotCarried { what }, _) => {
                        format!("{what}, which a replay cannot carry")
                    }
                };
                return Some(crate::replay::ReplayError::new(
                    &f.path,
                    line,
                    format!("{what} (--strict)"),
                ));
            }
            if let Some(d) = &f.damage {
                let mut message = d.message.clone();
                if let Some(c) = d.column {
                    message = format!("column {c}: {message}");
                }
                return Some(crate::replay::ReplayError::new(
                    &f.path,
                    d.line,
                    format!("{message} (--strict refuses a damaged recording)"),
                ));
            }
        }
        None
    }

    /// The report of `path`, created on first use.
    pub(crate) fn file(&mut self, path: &Path) -> &mut FileReport {
        match self.files.iter().position(|f| f.path == path) {
            Some(i) => &mut self.files[i],
            None => {
                self.files.push(FileReport::new(path));
                self.files.last_mut().expect("just pushed")
            }
        }
    }
}

impl ReadReport {
    /// The counts alone, one line: `read N record(s) from F file(s): M
    /// replayed, L not mapped[, D file(s) cut short]` (the reasons are
    /// [`ReadReport::lines`]).
    pub fn counts(&self) -> String {
        let mut line = format!(
            "read {} record(s) from {} file(s): {} replayed, {} not mapped",
            self.read(),
            self.files.len(),
            self.mapped(),
            self.lost()
        );
        let damaged = self.damaged().count();
        if damaged > 0 {
            line.push_str(&format!(", {damaged} file(s) cut short"));
        }
        line
    }
}

impl fmt::Display for ReadReport {
    /// [`ReadReport::counts`] and one line per file with anything to say.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.counts())?;
        for file in &self.files {
            if file.issues.is_empty() && file.damage.is_none() {
                continue;
            }
            write!(
                f,
                "\n  {}: {} read, {} replayed",
                file.name(),
                file.read,
                file.mapped
            )?;
            for issue in &file.issues {
                write!(f, "\n    {issue}")?;
            }
            if let Some(d) = &file.damage {
                match d.at().strip_prefix(':') {
                    Some(at) => write!(f, "\n    cut short at line {at}: {d}")?,
                    None => write!(f, "\n    cut short: {d}")?,
                }
            }
        }
        Ok(())
    }
}
