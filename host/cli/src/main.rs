//! `rocwasm`: a thin command-line layer over the rocwasm libraries.
//!
//! - `cli`: every argument (clap derive).
//! - `commands/`: one module per subcommand; logic lives in the libraries.
//! - `failure`: how errors become exit statuses and one `error:` line.
//! - `stages`: chain stages → the plugin runtime's stage specs.

mod cli;
mod commands;
mod failure;

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

/// Logs go to stderr; `RUST_LOG` wins over `-v`.
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
        .init();
}
