//! The committed fixtures in `examples/traces/sample/` (written by our sinks
//! from the deterministic sample run) still replay, in every format, to the
//! statistics of that run.
//!
//! Regenerate them with `ROCWASM_REGEN_FIXTURES=1 cargo test -p
//! rocwasm-formats --test replay -- fixtures`.

use std::path::PathBuf;

use rocwasm_formats::replay::{open_with, ReplayOptions};
use rocwasm_formats::synthetic::{sample_run, SampleRun};
use rocwasm_formats::{
    CsvSink, JsonSink, OperationNames, PerfettoSink, RocpdSink, Sink, StatsAccumulator,
    StatsReport, StatsSink,
};

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/traces/sample")
}

fn sample() -> (SampleRun, OperationNames) {
    let names = OperationNames::new();
    (sample_run(2024, 80, 64, &names), names)
}

fn regenerate(dir: &PathBuf) {
    let (run, names) = sample();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let name = Some("sample".to_string());
    let mut sinks: Vec<Box<dyn Sink>> = vec![
        Box::new(CsvSink::new(dir, name.clone())),
        Box::new(JsonSink::new(dir, name.clone())),
        Box::new(RocpdSink::new(dir, name.clone())),
        Box::new(PerfettoSink::new(dir, name.clone())),
        Box::new(StatsSink::new(dir, name)),
    ];
    let ctx = run.context(&names);
    for s in &mut sinks {
        s.begin(&ctx).unwrap();
    }
    for b in &run.batches {
        for s in &mut sinks {
            s.write_batch(b, &ctx).unwrap();
        }
    }
    for s in &mut sinks {
        s.finish(&ctx).unwrap();
    }
}

fn replay(path: PathBuf) -> (StatsReport, u64) {
    let mut src = open_with(
        &path,
        &ReplayOptions {
            chunk_rows: 100,
            progress: false,
            names: None,
        },
    )
    .unwrap();
    let mut acc = StatsAccumulator::new();
    for b in src.by_ref() {
        acc.add_batch(&b.unwrap());
    }
    (acc.report(src.symbols(), src.names()), src.records())
}

#[test]
fn committed_fixtures_replay_to_the_sample_statistics() {
    let dir = fixture_dir();
    if std::env::var_os("ROCWASM_REGEN_FIXTURES").is_some() {
        regenerate(&dir);
    }
    let (run, names) = sample();
    let mut acc = StatsAccumulator::new();
    run.batches.iter().for_each(|b| acc.add_batch(b));
    let want = acc.report(&run.symbols, &names);
    let records: u64 = run.batches.iter().map(|b| b.len() as u64).sum();
    assert!(
        (200..1000).contains(&records),
        "a few hundred rows: {records}"
    );

    for path in [
        dir.clone(),
        dir.join("sample_results.json"),
        dir.join("sample_results.db"),
    ] {
        let (got, n) = replay(path.clone());
        assert_eq!(got, want, "{}", path.display());
        assert_eq!(n, records, "{}", path.display());
    }
}
