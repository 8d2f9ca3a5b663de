//! The `kernel-stats` plugin's aggregation compiled natively: records per
//! second of `rocwasm_stats::IdSums::add_durations` (the loop the plugin
//! runs on each delivered batch, `plugins/kernel-stats/src/aggregate.rs`)
//! over kernel-id, start and end columns shaped like the batches of
//! `cargo bench -p rocwasm-plugin-host --bench deliver` (8 kernel ids
//! interleaved), called directly: no delivery path, no Wasm. The reference
//! for that bench's Wasm figures.
//!
//! ```text
//! cargo bench -p rocwasm-formats --bench native_stats
//! cargo bench -p rocwasm-formats --bench native_stats -- --records 4096 --json
//! ```
//!
//! Timing as in the deliver bench: after a warm-up, 7 rounds of ≥ 0.15 s
//! (≥ 10 calls) per size, median and best round. `--json` prints one JSON
//! object (what `cargo xtask bench` reads). Timing lives here, never in tests.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rocwasm_stats::IdSums;

const COMMAND: &str = "cargo bench -p rocwasm-formats --bench native_stats";
const ROUNDS: usize = 7;

fn usage(msg: &str) -> ! {
    eprintln!("{msg}\nusage: {COMMAND} -- [--records R]... [--json]");
    std::process::exit(2)
}

fn main() {
    let mut sizes = Vec::new();
    let mut json = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--records" => sizes.push(
                args.next()
                    .and_then(|v| v.parse::<usize>().ok())
                    .filter(|&n| n > 0)
                    .unwrap_or_else(|| usage("--records needs a positive number")),
            ),
            "--json" => json = true,
            "--bench" => {}
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![256, 4096, 65536];
    }
    let mut rows = Vec::new();
    for &n in &sizes {
        let n64 = n as u64;
        let ids: Vec<u64> = (0..n64).map(|i| i % 8).collect();
        let start: Vec<u64> = (0..n64).map(|i| i * 100).collect();
        let end: Vec<u64> = (0..n64).map(|i| i * 100 + 50 + i % 7).collect();
        let mut sums = IdSums::new();
        for _ in 0..20 {
            sums.add_durations(black_box(&ids), black_box(&start), black_box(&end));
        }
        let mut per_call = Vec::new();
        for _ in 0..ROUNDS {
            let mut calls = 0u64;
            let t = Instant::now();
            while calls < 10 || t.elapsed() < Duration::from_millis(150) {
                sums.add_durations(black_box(&ids), black_box(&start), black_box(&end));
                calls += 1;
            }
            per_call.push(t.elapsed().as_nanos() as f64 / calls as f64);
        }
        black_box(sums.count());
        per_call.sort_by(f64::total_cmp);
        // records per ns × 1e9 = records/s
        let rate = n as f64 / per_call[ROUNDS / 2] * 1e9;
        let best = n as f64 / per_call[0] * 1e9;
        rows.push((n, rate, best));
    }
    if json {
        let rows: Vec<_> = rows
            .iter()
            .map(|(n, rate, best)| {
                serde_json::json!({ "records": n, "records_per_s": rate, "best_records_per_s": best })
            })
            .collect();
        println!("{}", serde_json::json!({ "sizes": rows }));
        return;
    }
    println!("{COMMAND}");
    println!("| records per call | M records/s median | best |");
    println!("|---|---|---|");
    for (n, rate, best) in rows {
        println!("| {n} | {:.1} | {:.1} |", rate / 1e6, best / 1e6);
    }
}
