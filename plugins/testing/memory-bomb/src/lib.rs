//! `memory-bomb` (test plugin): allocates and touches memory until the
//! allocator fails, in the chosen export (see `rocwasm-test-hostile` for `at`,
//! `after`, `trace`). Under the host's memory cap `memory.grow` fails (or the
//! host traps it); Rust's allocation-failure handler then aborts, i.e. traps.
//!
//! Config key `chunk-bytes`: bytes per allocation (default 1 MiB).

use std::hint::black_box;

use rocwasm_plugin_sdk::config;
use rocwasm_test_hostile::{Hostile, Misbehaviour};

#[derive(Default)]
struct MemoryBomb {
    hoard: Vec<Vec<u8>>,
}

impl Misbehaviour for MemoryBomb {
    fn misbehave(&mut self) -> ! {
        let chunk: usize = config::get_or("chunk-bytes", 1 << 20)
            .unwrap_or(1 << 20)
            .max(4096);
        loop {
            let mut block = vec![0u8; chunk];
            // Touch every page so the memory is really committed.
            for page in block.iter_mut().step_by(4096) {
                *page = 1;
            }
            self.hoard.push(black_box(block));
        }
    }
}

rocwasm_plugin_sdk::export_analysis!(Hostile<MemoryBomb>);
