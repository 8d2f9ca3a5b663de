//! Where a command's text goes while it works.
//!
//! `rocwasm run` prints as it goes: a note before the application starts,
//! each process's summary as its outputs are written, the journal's fate.
//! `rocwasm replay` prints its report once the chain is done. The library
//! writes that text to a [`Console`] (the CLI's is its stdout and stderr, a
//! test's is [`Captured`]); the outcome it returns carries the same facts
//! as values.

use std::io::Write;

/// Standard output and standard error of a command, and the progress of a
/// long replay.
///
/// Writes that fail are ignored (a closed pipe must not stop the outputs
/// from being written).
pub trait Console {
    /// Where the results go: summaries, tables, the files written.
    fn out(&mut self) -> &mut dyn Write;
    /// Where notes and problems go (`rocwasm: …` lines).
    fn err(&mut self) -> &mut dyn Write;
    /// Several recordings start being read: `recordings` of them, `records`
    /// records in all when every format tells its count. Nothing by
    /// default.
    fn progress_start(&mut self, recordings: usize, records: Option<u64>) {
        let _ = (recordings, records);
    }
    /// Records read so far.
    fn progress(&mut self, records: u64) {
        let _ = records;
    }
    /// Reading is over (the bar, if any, goes away).
    fn progress_end(&mut self) {}
}

/// A [`Console`] that keeps everything in memory, for tests and for
/// callers that print elsewhere.
#[derive(Debug, Default)]
pub struct Captured {
    /// What went to standard output.
    pub out: Vec<u8>,
    /// What went to standard error.
    pub err: Vec<u8>,
}

impl Captured {
    /// An empty console.
    pub fn new() -> Captured {
        Captured::default()
    }

    /// Standard output as text.
    pub fn out_text(&self) -> String {
        String::from_utf8_lossy(&self.out).into_owned()
    }

    /// Standard error as text.
    pub fn err_text(&self) -> String {
        String::from_utf8_lossy(&self.err).into_owned()
    }
}

impl Console for Captured {
    fn out(&mut self) -> &mut dyn Write {
        &mut self.out
    }

    fn err(&mut self) -> &mut dyn Write {
        &mut self.err
    }
}

/// `print!` to a console's standard output.
macro_rules! out {
    ($console:expr, $($arg:tt)*) => {{
        let _ = ::std::write!($console.out(), $($arg)*);
    }};
}

/// `println!` to a console's standard output.
macro_rules! outln {
    ($console:expr, $($arg:tt)*) => {{
        let _ = ::std::writeln!($console.out(), $($arg)*);
    }};
}

/// `eprintln!` to a console's standard error.
macro_rules! errln {
    ($console:expr, $($arg:tt)*) => {{
        let _ = ::std::writeln!($console.err(), $($arg)*);
    }};
}
