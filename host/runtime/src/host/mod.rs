//! The host side of the WIT imports, implemented on `PluginState`.
//!
//! One file per concern: `profiler` (the SDK verbs, delegating to the
//! `rocwasm_core` engine), `output` (files in the granted directory),
//! `delivery` (the columns a plugin is sent), `names` (kinds and
//! operations), and here the small ones: `symbols`, `clock`, `log`, `config`.

mod delivery;
mod names;
mod output;
mod profiler;

use std::time::Instant;

pub(crate) use delivery::DeliveryChoice;
pub use names::OperationNameTable;
pub(crate) use output::OutputGrant;
pub(crate) use profiler::{ProfilerLink, SetupMode};

use crate::bindings::analysis::rocwasm::plugin::{clock, config, log, symbols};
use crate::bindings::types::{self as wit, LogLevel};
use crate::convert;
use crate::state::PluginState;

impl wit::Host for PluginState {}

impl symbols::Host for PluginState {
    fn agents(&mut self) -> Vec<wit::Agent> {
        self.env
            .profiler
            .symbols()
            .agents()
            .into_iter()
            .map(convert::agent_to_wit)
            .collect()
    }
    fn lookup_agent(&mut self, id: u64) -> Option<wit::Agent> {
        self.env
            .profiler
            .symbols()
            .agent(id)
            .map(convert::agent_to_wit)
    }
    fn lookup_code_object(&mut self, id: u64) -> Option<wit::CodeObject> {
        self.env
            .profiler
            .symbols()
            .code_object(id)
            .map(convert::code_object_to_wit)
    }
    fn lookup_kernel_symbol(&mut self, id: u64) -> Option<wit::KernelSymbol> {
        self.env
            .profiler
            .symbols()
            .kernel(id)
            .map(convert::kernel_symbol_to_wit)
    }
    fn kernel_names(&mut self, ids: Vec<u64>) -> Vec<String> {
        ids.iter()
            .map(|id| {
                self.env
                    .profiler
                    .symbols()
                    .kernel(*id)
                    .map(|k| k.demangled_name)
                    .unwrap_or_default()
            })
            .collect()
    }
}

impl clock::Host for PluginState {
    fn now(&mut self) -> u64 {
        rocwasm_core::clock::now()
    }
}

impl config::Host for PluginState {
    fn get(&mut self, key: String) -> Option<String> {
        self.config.get(&key).cloned()
    }
    fn entries(&mut self) -> Vec<(String, String)> {
        self.config
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl log::Host for PluginState {
    fn log(&mut self, level: LogLevel, message: String) {
        let Some(dropped) = self.log.admit() else {
            return;
        };
        let name = &*self.name;
        let msg = truncate(&message, 4096);
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

/// A token bucket: `rate` messages per second, bursts up to `rate`. A noisy
/// plugin must not flood the host's log (or slow the run by logging).
#[derive(Debug)]
pub(crate) struct LogGate {
    rate: f64,
    tokens: f64,
    last: Instant,
    dropped: u64,
}

impl LogGate {
    pub fn new(per_second: u32) -> Self {
        let rate = per_second.max(1) as f64;
        LogGate {
            rate,
            tokens: rate,
            last: Instant::now(),
            dropped: 0,
        }
    }

    /// `Some(dropped since the last admitted message)` if this one may be
    /// logged, `None` if it is dropped.
    pub fn admit(&mut self) -> Option<u64> {
        let now = Instant::now();
        self.tokens =
            (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate).min(self.rate);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Some(std::mem::take(&mut self.dropped))
        } else {
            self.dropped += 1;
            None
        }
    }

    /// Messages dropped and not yet mentioned.
    #[cfg(test)]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_gate_drops_beyond_the_burst_and_counts() {
        let mut g = LogGate::new(3);
        let admitted = (0..10).filter(|_| g.admit().is_some()).count();
        // The burst is 3; at most one more token can trickle in meanwhile.
        assert!((3..=4).contains(&admitted), "{admitted}");
        assert_eq!(g.dropped() as usize, 10 - admitted);
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
