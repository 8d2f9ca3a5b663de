//! Why a run or replay failed, and so which status a command exits with:
//! 2 for a request that cannot be honoured (a bad chain, a refused plan, a
//! path that does not exist), 1 for a failure while doing what was asked.

use rocwasm_config::ConfigError;

/// Why [`run`](crate::run), [`replay`](crate::replay) or
/// [`write_journal`](crate::write_journal) failed.
///
/// The message is the whole context chain, one line (`outer: inner: root
/// cause`, as `{:#}` prints an [`anyhow::Error`]); [`exit_code`] is the
/// status the `rocwasm` command exits with.
///
/// [`exit_code`]: LaunchError::exit_code
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The request is invalid (bad chain file, unknown kind, a plan the
    /// site policy refuses, …): status 2.
    #[error("{0:#}")]
    Usage(anyhow::Error),
    /// Something went wrong while doing what was asked: status 1.
    #[error("{0:#}")]
    Runtime(anyhow::Error),
}

impl LaunchError {
    /// A [`LaunchError::Usage`] saying `message`.
    pub fn usage(message: impl std::fmt::Display) -> Self {
        LaunchError::Usage(anyhow::anyhow!("{message}"))
    }

    /// A [`LaunchError::Runtime`] saying `message`.
    pub fn runtime(message: impl std::fmt::Display) -> Self {
        LaunchError::Runtime(anyhow::anyhow!("{message}"))
    }

    /// The exit status it stands for: 2 for usage, 1 at run time.
    pub fn exit_code(&self) -> u8 {
        match self {
            LaunchError::Usage(_) => 2,
            LaunchError::Runtime(_) => 1,
        }
    }

    /// The error with its context chain.
    pub fn into_error(self) -> anyhow::Error {
        match self {
            LaunchError::Usage(e) | LaunchError::Runtime(e) => e,
        }
    }
}

/// A chain that does not load is the user's to fix: status 2. Its message
/// is already one complete line (`file:line:column: …`).
impl From<ConfigError> for LaunchError {
    fn from(e: ConfigError) -> Self {
        LaunchError::Usage(anyhow::Error::new(e))
    }
}

/// Anything else that bubbles up is a failure at run time.
impl From<anyhow::Error> for LaunchError {
    fn from(e: anyhow::Error) -> Self {
        LaunchError::Runtime(e)
    }
}

/// This crate's results.
pub type Result<T, E = LaunchError> = std::result::Result<T, E>;
