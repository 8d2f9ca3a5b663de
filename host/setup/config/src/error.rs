//! [`ConfigError`]: every problem with a chain file, rendered as one line.
//!
//! The line has the shape compilers use, so editors and terminals can jump to it:
//!
//! ```text
//! chain.toml:12:9: unknown key `domians` in [[stage]] #2 (expected one of: name, plugin, …)
//! ```
//!
//! Lines and columns are 1-based; columns count characters, not bytes. The
//! CLI prints the line after `error: ` and exits with code 2.

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;

/// A position in a chain file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, counted in characters (not bytes).
    pub column: usize,
}

impl Location {
    /// The 1-based line and character column of byte `offset` in `source`.
    pub fn of_offset(source: &str, offset: usize) -> Self {
        let offset = floor_char_boundary(source, offset.min(source.len()));
        let before = &source[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Why a chain could not be loaded or is invalid.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The chain file itself could not be read.
    #[error("{}: cannot read chain file: {source}", path.display())]
    Read {
        /// The chain file as the user named it.
        path: PathBuf,
        /// The I/O error from reading it.
        #[source]
        source: std::io::Error,
    },
    /// A problem at a place in the file (syntax, unknown key, wrong type,
    /// unknown kind, missing plugin, …).
    #[error("{}:{}:{}: {message}", file.display(), at.line, at.column)]
    At {
        /// The chain file as the user named it.
        file: PathBuf,
        /// Where the problem starts: the offending key or value, or the
        /// offending character inside a plain string.
        at: Location,
        /// What is wrong, one sentence without the position prefix.
        message: String,
    },
    /// A problem with no place in a file, e.g. a chain built from
    /// command-line flags.
    #[error("{message}")]
    Invalid {
        /// What is wrong, one sentence.
        message: String,
    },
}

impl ConfigError {
    /// The message without the file and position prefix.
    pub fn message(&self) -> String {
        match self {
            ConfigError::Read { source, .. } => format!("cannot read chain file: {source}"),
            ConfigError::At { message, .. } | ConfigError::Invalid { message } => message.clone(),
        }
    }

    /// Where in the file the problem is, when it has a place.
    pub fn location(&self) -> Option<Location> {
        match self {
            ConfigError::At { at, .. } => Some(*at),
            _ => None,
        }
    }
}

/// Builds [`ConfigError`]s for one source text: the file name and the text
/// are needed to turn byte spans into lines and columns.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub file: &'a std::path::Path,
    pub text: &'a str,
}

impl Source<'_> {
    /// An error at the start of `span`.
    pub fn error(&self, span: Range<usize>, message: impl fmt::Display) -> ConfigError {
        ConfigError::At {
            file: self.file.to_path_buf(),
            at: Location::of_offset(self.text, span.start),
            message: message.to_string(),
        }
    }

    /// An error at byte `index` of a string value whose literal occupies
    /// `span`. Points at the exact character when the literal is a plain
    /// `"…"` or `'…'` string without escapes, else at the literal's start.
    pub fn error_in_string(
        &self,
        span: Range<usize>,
        value: &str,
        index: usize,
        message: impl fmt::Display,
    ) -> ConfigError {
        let raw = self.text.get(span.clone()).unwrap_or("");
        let plain = raw.len() == value.len() + 2
            && (raw.starts_with('"') || raw.starts_with('\''))
            && &raw[1..raw.len() - 1] == value;
        let offset = if plain {
            span.start + 1 + index
        } else {
            span.start
        };
        self.error(offset..offset, message)
    }
}
