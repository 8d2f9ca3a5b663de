//! `trap` (test plugin): traps in the chosen export (see
//! `rocwasm-test-hostile` for `at`, `after`, `trace`).
//!
//! Config key `how`: `panic` (default; the SDK logs the message, then the
//! component traps) or `unreachable` (a bare `unreachable` instruction).

use rocwasm_plugin_sdk::config;
use rocwasm_test_hostile::{Hostile, Misbehaviour};

#[derive(Default)]
struct Trap;

impl Misbehaviour for Trap {
    fn misbehave(&mut self) -> ! {
        match config::get("how").as_deref() {
            #[cfg(target_arch = "wasm32")]
            Some("unreachable") => core::arch::wasm32::unreachable(),
            _ => panic!("trap: deliberate panic"),
        }
    }
}

rocwasm_plugin_sdk::export_analysis!(Hostile<Trap>);
