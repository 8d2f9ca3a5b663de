//! The `log` interface: a plugin's messages go to the host's `tracing` log,
//! tagged with the stage name, at most 4096 bytes each (a longer message is
//! cut and says from how many bytes) and rate-limited per plugin
//! ([`LogGate`]), so a noisy plugin can neither flood the host's log nor slow
//! the run down by logging. What one message may copy into the host at all
//! is capped by `sandbox::MAX_CALL_COPY_BYTES`.

use std::sync::Arc;

use crate::bindings::analysis::rocwasm::plugin::log;
use crate::bindings::types::LogLevel;
use crate::guest_log::LogGate;

/// The longest message logged; longer ones are cut at a char boundary.
const MAX_MESSAGE: usize = 4096;

/// The `log` imports of one plugin: its stage name and its rate limit.
#[derive(Debug)]
pub(crate) struct LogHost {
    plugin: Arc<str>,
    gate: LogGate,
}

impl LogHost {
    /// Logs for stage `plugin`, at most `per_second` messages a second
    /// (bursts of as many).
    pub fn new(plugin: Arc<str>, per_second: u32) -> Self {
        LogHost {
            plugin,
            gate: LogGate::new(per_second),
        }
    }
}

impl log::Host for LogHost {
    fn log(&mut self, level: LogLevel, message: String) {
        let Some(dropped) = self.gate.admit() else {
            return;
        };
        let name = &*self.plugin;
        let cut = truncate(&message, MAX_MESSAGE);
        let msg = if cut.len() < message.len() {
            std::borrow::Cow::Owned(format!("{cut} [… cut from {} bytes]", message.len()))
        } else {
            std::borrow::Cow::Borrowed(cut)
        };
        if dropped > 0 {
            tracing::warn!(
                plugin = name,
                "{dropped} log message(s) dropped (rate limit)"
            );
        }
        match level {
            LogLevel::Trace => tracing::trace!(plugin = name, "{msg}"),
            LogLevel::Debug => tracing::debug!(plugin = name, "{msg}"),
            LogLevel::Info => tracing::info!(plugin = name, "{msg}"),
            LogLevel::Warn => tracing::warn!(plugin = name, "{msg}"),
            LogLevel::Error => tracing::error!(plugin = name, "{msg}"),
        }
    }
}

/// `s` cut to at most `max` bytes, on a char boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
