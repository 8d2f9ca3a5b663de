//! One producer per output file, through `Outputs`: sinks and stages share
//! the run's registry, a stage's statistics file stands and the statistics
//! sink writes no copy, and a refused claim is reported among the errors
//! while the refused writer's other files are still written.

use crate::common;

use rocwasm_formats::{CsvSink, JsonSink, Outputs, Producer, StatsSink};

#[test]
fn each_file_has_one_producer_and_refusals_are_reported() {
    let (run, names) = common::sample(5, 200);
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Outputs::from_sinks(vec![
        Box::new(CsvSink::new(dir.path(), None)),
        Box::new(JsonSink::new(dir.path(), None)),
        Box::new(StatsSink::new(dir.path(), None)),
    ]);
    let ctx = run.context(&names);
    outputs.begin(&ctx);
    let stage = outputs.claims().for_stages();

    // A stage that takes a trace file's name before the CSV sink writes it.
    stage(&dir.path().join("hip_api_trace.csv"), "squatter").unwrap();
    for batch in &run.batches {
        outputs.write_batch(batch, &ctx);
    }
    // A stage that wants a file the host already writes.
    let refused = stage(&dir.path().join("results.json"), "squatter").unwrap_err();
    assert_eq!(
        refused,
        "results.json: already written by the host's JSON sink; stage `squatter` may not write it too"
    );
    // The stock kernel-stats stage writing its file in `fini`, before the
    // sinks finish.
    let kernel_stats = dir.path().join("kernel_stats.csv");
    stage(&kernel_stats, "kernel-stats").unwrap();
    std::fs::write(&kernel_stats, "the stage's file\n").unwrap();

    let summary = outputs.finish(&ctx);
    let errors: Vec<String> = summary.errors.iter().map(|e| format!("{e:#}")).collect();
    assert_eq!(
        errors,
        [
            "hip_api_trace.csv: already written by stage `squatter`; \
             the host's CSV sink may not write it too",
            "results.json: already written by the host's JSON sink; \
             stage `squatter` may not write it too",
        ]
    );
    // Left to the stage: listed with it once, not a note.
    assert_eq!(
        summary.left_to_stages,
        [(kernel_stats.clone(), Producer::Stage("kernel-stats".into()))]
    );
    assert!(summary.notes.is_empty(), "{:?}", summary.notes);
    // The stage's file stands; the sink's other files are written.
    assert_eq!(
        std::fs::read_to_string(&kernel_stats).unwrap(),
        "the stage's file\n"
    );
    let written: Vec<String> = summary
        .files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for file in ["kernel_trace.csv", "results.json", "domain_stats.csv"] {
        assert!(written.iter().any(|w| w == file), "{file} in {written:?}");
    }
    for file in ["hip_api_trace.csv", "kernel_stats.csv"] {
        assert!(!written.iter().any(|w| w == file), "{file} in {written:?}");
    }
    assert!(!dir.path().join("hip_api_trace.csv").exists());
    // The terminal summary still has the kernel table.
    assert!(summary.stats.render_summary(5).contains("KERNEL_DISPATCH"));
}
