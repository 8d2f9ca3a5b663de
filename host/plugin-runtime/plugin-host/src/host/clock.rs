//! The `clock` interface: the host's clock, the one the records' timestamps
//! come from (`rocwasm_core::clock`), so a plugin can relate "now" to them.

use crate::bindings::analysis::rocwasm::plugin::clock;

/// The `clock` imports of one plugin. Stateless: every plugin reads the
/// same process-wide clock.
#[derive(Debug, Default)]
pub(crate) struct ClockHost;

impl clock::Host for ClockHost {
    fn now(&mut self) -> u64 {
        rocwasm_core::clock::now()
    }
}
