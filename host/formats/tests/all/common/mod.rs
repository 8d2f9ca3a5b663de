//! Shared helpers of the integration tests: write a sample run through sinks.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rocwasm_formats::synthetic::{sample_run, SampleRun};
use rocwasm_formats::{OperationNames, Sink};

pub fn write_run(
    run: &SampleRun,
    names: &OperationNames,
    sinks: &mut [Box<dyn Sink>],
) -> Vec<PathBuf> {
    let ctx = run.context(names);
    let mut files = Vec::new();
    for s in sinks.iter_mut() {
        s.begin(&ctx).unwrap();
    }
    for b in &run.batches {
        for s in sinks.iter_mut() {
            s.write_batch(b, &ctx).unwrap();
        }
    }
    for s in sinks.iter_mut() {
        files.extend(s.finish(&ctx).unwrap());
    }
    files
}

pub fn sample(seed: u64, launches: usize) -> (SampleRun, OperationNames) {
    let names = OperationNames::new();
    let run = sample_run(seed, launches, 97, &names);
    (run, names)
}

pub fn first_line(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string()
}
