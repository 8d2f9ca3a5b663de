//! [`Summaries`]: rocprofv3's `-S/--summary` and `--summary-groups` at the
//! end of a run, live or replayed.
//!
//! The tables are computed from the run's statistics (the always-on
//! accumulator every batch the sinks write passes, `OutputSummary::stats`)
//! by `rocwasm_formats::summary`, and go where `--summary-output-file` says:
//! the process's stderr (rocprofv3's default), its stdout, or
//! `<dir>/[<prefix>_]<name>.txt`. A file is claimed in the run's registry
//! when the run starts, so a stage that writes the same name is refused
//! before it writes, and the file is listed among the outputs.

use std::io::Write;
use std::path::PathBuf;

use rocwasm_formats::{output_path, OutputClaims, OutputSummary, Producer};
use rocwasm_plan::{SummaryDestination, SummaryPlan};

/// The summaries of one run. See the module documentation.
pub struct Summaries {
    plan: SummaryPlan,
    destination: Destination,
}

enum Destination {
    Stdout,
    Stderr,
    File(PathBuf),
}

/// This output in claims and messages.
const PRODUCER: Producer = Producer::Sink("summary");

impl Summaries {
    /// `None` when `plan` prints no summary. A file destination is claimed
    /// in `claims` now; an error (a sentence) when it cannot be, or when an
    /// option is bad.
    pub fn new(
        plan: &SummaryPlan,
        dir: &std::path::Path,
        prefix: Option<&str>,
        claims: &OutputClaims,
    ) -> Result<Option<Summaries>, String> {
        if !plan.prints() {
            return Ok(None);
        }
        plan.check().map_err(|e| e.to_string())?;
        let destination = match plan.destination().map_err(|e| e.to_string())? {
            SummaryDestination::Stdout => Destination::Stdout,
            SummaryDestination::Stderr => Destination::Stderr,
            SummaryDestination::File(name) => {
                let path = output_path(dir, prefix, &format!("{name}.txt"));
                claims.claim(&path, &PRODUCER).map_err(|e| e.to_string())?;
                Destination::File(path)
            }
        };
        Ok(Some(Summaries {
            plan: plan.clone(),
            destination,
        }))
    }

    /// Writes the summaries of `outputs`' statistics where they go; a file
    /// written is added to `outputs.files`, a failure to `outputs.errors`.
    pub fn emit(&self, outputs: &mut OutputSummary) {
        let text = match outputs.stats.rocprofv3_summaries(&self.plan) {
            Ok(t) => t,
            Err(e) => {
                outputs.errors.push(anyhow::anyhow!("summary: {e}"));
                return;
            }
        };
        match &self.destination {
            Destination::Stdout => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
            }
            Destination::Stderr => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
            }
            Destination::File(path) => {
                let written = path
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(path, text.trim_start()));
                match written {
                    Ok(()) => outputs.files.push(path.clone()),
                    Err(e) => outputs.errors.push(anyhow::anyhow!(
                        "summary output: cannot write {}: {e}",
                        path.display()
                    )),
                }
            }
        }
    }
}
