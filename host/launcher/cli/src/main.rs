//! `rocwasm`: a thin command-line layer over the rocwasm libraries.
//!
//! - `cli`: every argument (clap derive).
//! - `commands/`: one module per subcommand; logic lives in the libraries.
//! - `failure`: how errors become exit statuses and one `error:` line.
//! - `terminal`: the launcher library's console on stdout and stderr.
//!
//! `run` and `replay` are `rocwasm-launch`'s; their modules here only turn
//! the arguments into its requests.

mod cli;
mod commands;
mod failure;
mod terminal;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    init_logging(cli.verbose);
    match commands::dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(),
    }
}

/// Logs go to stderr; `RUST_LOG` wins over `-v`. In colour only on a
/// terminal, and never with `NO_COLOR` set (<https://no-color.org>).
fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(colour(
            std::io::IsTerminal::is_terminal(&std::io::stderr()),
            std::env::var_os("NO_COLOR"),
        ))
        .init();
}

/// Whether stderr gets ANSI colour: a terminal, and no `NO_COLOR` with a
/// value (an empty one does not count, as the convention says).
fn colour(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::colour;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".into())));
        assert!(!colour(true, Some("1".into())));
        assert!(!colour(false, None));
        assert!(!colour(false, Some("1".into())));
    }
}
