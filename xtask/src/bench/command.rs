//! Running the bench programs: their output, or their failure, which
//! becomes the `not measured: <reason>` rows of the group that ran them.

use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use super::table::{Row, Target};
use crate::util::root;

/// The first line of an error chain, for a `not measured:` cell.
pub(super) fn why(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    let line = text.lines().next().unwrap_or_default();
    line.chars().take(160).collect()
}

/// `figures` as not-measured rows when `measured` failed.
pub(super) fn or_unmeasured(measured: Result<Vec<Row>>, figures: &[(&str, &[Target])]) -> Vec<Row> {
    measured.unwrap_or_else(|e| {
        let why = why(&e);
        eprintln!("bench: {why}");
        figures
            .iter()
            .map(|(f, targets)| {
                let mut r = Row::not_measured(*f, why.clone());
                r.targets = targets.to_vec();
                r
            })
            .collect()
    })
}

/// Runs a program to completion and returns its stdout; its stderr is
/// shown when it fails.
pub(super) fn output(cmd: &mut Command) -> Result<String> {
    output_and_errors(cmd).map(|(out, _)| out)
}

/// As [`output`], with the program's stderr too.
pub(super) fn output_and_errors(cmd: &mut Command) -> Result<(String, String)> {
    let shown = format!("{cmd:?}");
    eprintln!("+ {shown}");
    let out = cmd
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot start {shown}"))?;
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        bail!(
            "{} failed ({}): {}",
            cmd.get_program().to_string_lossy(),
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        );
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), err))
}
