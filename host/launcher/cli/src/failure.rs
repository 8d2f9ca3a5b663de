//! Errors → exit statuses: 0 success, 1 failure at run time, 2 bad usage or
//! configuration. Every error is printed as one `error:` line with its
//! context chain (`error: outer: inner: root cause`), never as a panic.

use std::process::ExitCode;

use rocwasm_config::ConfigError;
use rocwasm_launch::LaunchError;

/// Why a command failed, and so which status it exits with.
#[derive(Debug)]
pub enum Failure {
    /// The user asked for something invalid (bad chain file, unknown kind…): status 2.
    Usage(anyhow::Error),
    /// Something went wrong while doing what was asked: status 1.
    Runtime(anyhow::Error),
}

pub type Result<T = ()> = std::result::Result<T, Failure>;

impl Failure {
    pub fn usage(message: impl std::fmt::Display) -> Self {
        Failure::Usage(anyhow::anyhow!("{message}"))
    }

    pub fn runtime(message: impl std::fmt::Display) -> Self {
        Failure::Runtime(anyhow::anyhow!("{message}"))
    }

    /// Prints the error line and returns the exit status.
    pub fn report(self) -> ExitCode {
        let (error, code) = match self {
            Failure::Usage(e) => (e, 2),
            Failure::Runtime(e) => (e, 1),
        };
        eprintln!("error: {error:#}");
        ExitCode::from(code)
    }
}

/// A chain that does not load is the user's to fix: status 2. Its message
/// is already one complete line (`file:line:column: …`).
impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Self {
        Failure::Usage(anyhow::Error::new(e))
    }
}

/// Anything else that bubbles up is a failure at run time.
impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Runtime(e)
    }
}

/// The launcher library's errors keep their status: usage is 2, run time 1.
impl From<LaunchError> for Failure {
    fn from(e: LaunchError) -> Self {
        match e {
            LaunchError::Usage(e) => Failure::Usage(e),
            LaunchError::Runtime(e) => Failure::Runtime(e),
        }
    }
}
