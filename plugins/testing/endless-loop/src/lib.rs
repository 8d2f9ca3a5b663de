//! `endless-loop` (test plugin): never returns from the chosen export (see
//! `rocwasm-test-hostile` for `at`, `after`, `trace`). Only the host's
//! deadline (epoch interruption) stops it.

use std::hint::black_box;

use rocwasm_test_hostile::{Hostile, Misbehaviour};

#[derive(Default)]
struct EndlessLoop;

impl Misbehaviour for EndlessLoop {
    fn misbehave(&mut self) -> ! {
        let mut spins: u64 = 0;
        loop {
            // black_box: the optimiser must not prove the loop pointless.
            spins = black_box(spins.wrapping_add(1));
        }
    }
}

rocwasm_plugin_sdk::export_analysis!(Hostile<EndlessLoop>);
