//! `deep-recursion` (test plugin): recurses without bound in the chosen
//! export (see `rocwasm-test-hostile` for `at`, `after`, `trace`), until the
//! Wasm call stack or the shadow stack in linear memory is exhausted — a trap
//! either way.

use std::hint::black_box;

use rocwasm_test_hostile::{Hostile, Misbehaviour};

#[derive(Default)]
struct DeepRecursion;

/// Not a tail call (the result is used after the call), with a frame the
/// optimiser cannot remove.
#[inline(never)]
#[allow(unconditional_recursion)]
fn descend(depth: u64) -> u64 {
    let frame = black_box([depth; 16]);
    let below = descend(black_box(depth + 1));
    below.wrapping_add(frame[(depth % 16) as usize])
}

impl Misbehaviour for DeepRecursion {
    fn misbehave(&mut self) -> ! {
        let r = descend(0);
        panic!("deep-recursion: returned {r}, which it cannot")
    }
}

rocwasm_plugin_sdk::export_analysis!(Hostile<DeepRecursion>);
