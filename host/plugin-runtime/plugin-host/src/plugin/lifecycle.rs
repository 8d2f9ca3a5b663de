//! A plugin's life cycle: `configure` (may decline the run), `init` (with
//! profiler configuration open for it) and `fini` once at the end, whose
//! summary tables are cut to [`crate::summary_caps`] and say how many of
//! the records offered to the stage the final instance never saw.

use super::instance::{export, lifecycle};
use super::{Health, Pace, Plugin};
use crate::bindings::types as wit;
use crate::failure::{Aborted, Failed, FailureCause};
use crate::host::SetupMode;
use crate::summary_caps;

impl Plugin {
    /// `configure`: false (or a failure) means the plugin is out of the run.
    pub(crate) fn configure(&mut self, info: wit::ToolInfo) -> Result<bool, Aborted> {
        self.tool_info = Some(info.clone());
        let r = self.call(export::CONFIGURE, self.spec.limits.deadline, |s, i| {
            lifecycle(i).call_configure(s, &info)
        });
        match r {
            Ok(true) => Ok(true),
            Ok(false) => {
                self.health = Health::Declined;
                self.instance = None;
                Ok(false)
            }
            Err(failed) => self.fail_for_good(failed).map(|_| false),
        }
    }

    /// `init`, with profiler configuration open for this plugin.
    pub(crate) fn init(&mut self) -> Result<(), Aborted> {
        self.store.data_mut().profiler.mode = SetupMode::Open;
        let r = self.call(export::INIT, self.spec.limits.deadline, |s, i| {
            lifecycle(i).call_init(s)
        });
        self.store.data_mut().profiler.mode = SetupMode::Locked;
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(msg)) => self.fail_for_good(Failed::returned(
                FailureCause::InitFailed(msg),
                export::INIT,
            )),
            Err(failed) => self.fail_for_good(failed),
        }
    }

    /// `fini`, exactly once, if the plugin has a live instance. When the
    /// instance's summary covers fewer records than the stage was offered
    /// (failures lost some, or a fresh instance started from zero), each
    /// table's title says how many it misses.
    pub(crate) fn fini(&mut self) -> Result<Vec<wit::SummaryTable>, Aborted> {
        if !self.ready(Pace::Live) {
            self.close_report();
            return Ok(Vec::new());
        }
        let r = self.call(export::FINI, self.spec.limits.deadline, |s, i| {
            lifecycle(i).call_fini(s)
        });
        self.health = Health::Finished;
        self.instance = None;
        match r {
            Ok(mut tables) => {
                let cuts = summary_caps::cap(&mut tables);
                if !cuts.is_empty() {
                    let cause = FailureCause::Oversized(format!(
                        "summary {} (caps: {} tables, {} columns, {} rows, {} bytes a text, {} bytes in all)",
                        cuts.join("; "),
                        summary_caps::MAX_TABLES,
                        summary_caps::MAX_COLUMNS,
                        summary_caps::MAX_ROWS,
                        summary_caps::MAX_TEXT_BYTES,
                        summary_caps::MAX_TOTAL_BYTES,
                    ));
                    self.refused(cause, export::FINI);
                }
                let missing = self.offered.saturating_sub(self.taken);
                if missing > 0 {
                    for t in &mut tables {
                        t.title = incomplete_title(&t.title, missing, self.offered);
                    }
                }
                Ok(tables)
            }
            Err(failed) => {
                self.fail(failed, 0)?;
                self.health = Health::Finished;
                Ok(Vec::new())
            }
        }
    }
}

/// A summary table's title when the instance that wrote it saw only part of
/// what the stage was offered.
fn incomplete_title(title: &str, missing: u64, offered: u64) -> String {
    format!("{title} (incomplete: {missing} of {offered} record(s) missed after plugin failures)")
}
