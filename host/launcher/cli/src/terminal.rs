//! The launcher library's console on this process's terminal: its text to
//! stdout and stderr as the library writes it, and a progress bar on
//! stderr while a replay reads several recordings (drawn only on a
//! terminal).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Standard output and error, and the bar of a long replay.
pub struct Terminal {
    out: std::io::Stdout,
    err: std::io::Stderr,
    bar: Option<ProgressBar>,
}

impl Terminal {
    pub fn new() -> Terminal {
        Terminal {
            out: std::io::stdout(),
            err: std::io::stderr(),
            bar: None,
        }
    }
}

impl rocwasm_launch::Console for Terminal {
    fn out(&mut self) -> &mut dyn std::io::Write {
        &mut self.out
    }

    fn err(&mut self) -> &mut dyn std::io::Write {
        &mut self.err
    }

    /// Records so far, of the total when every format tells it.
    fn progress_start(&mut self, recordings: usize, records: Option<u64>) {
        let bar = ProgressBar::with_draw_target(records, ProgressDrawTarget::stderr());
        let template = if records.is_some() {
            format!("replay {recordings} processes [{{bar:40}}] {{pos}}/{{len}} records ({{per_sec}}, eta {{eta}})")
        } else {
            format!("replay {recordings} processes {{spinner}} {{pos}} records ({{per_sec}})")
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        self.bar = Some(bar);
    }

    fn progress(&mut self, records: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(records);
        }
    }

    fn progress_end(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
