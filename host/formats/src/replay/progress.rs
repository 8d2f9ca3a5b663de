//! The progress bar of long replays: records read, against an estimate of
//! the total when the reader has one. Drawn on stderr only when it is a
//! terminal (indicatif hides it otherwise), so logs and pipes stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    total: Option<u64>,
}

impl Progress {
    /// No bar; readers may still record an estimated total.
    pub(crate) fn hidden() -> Self {
        Self {
            bar: None,
            total: None,
        }
    }

    pub(crate) fn new(total: Option<u64>) -> Self {
        let bar = match total {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        let template = if total.is_some() {
            "replay [{bar:40}] {pos}/{len} records ({per_sec}, eta {eta})"
        } else {
            "replay {spinner} {pos} records ({per_sec})"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        Self {
            bar: Some(bar),
            total,
        }
    }

    pub(crate) fn total(&self) -> Option<u64> {
        self.total
    }

    /// Readers call this while opening when they know (or estimate) the size.
    pub(crate) fn set_total(&mut self, total: u64) {
        self.total = Some(total);
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
    }

    pub(crate) fn set_records(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.set_position(n);
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
