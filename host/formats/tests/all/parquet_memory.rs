//! The Parquet writer's memory stays bounded: 10 M records written through
//! [`ParquetSink`] leave a peak resident set far below the records' size.
//!
//! The records are the synthetic sample run (kernel dispatches, HIP/HSA/
//! marker calls, copies, allocations, scratch events) generated once,
//! about 64 k records, and written again and again with timestamps and ids
//! moved on each time, so the test itself holds one copy of them while the
//! writer sees a 10 M-record run. The peak is this process's `VmHWM`
//! (`/proc/self/status`) of a process that runs this test alone: the test
//! starts the test binary again with only itself selected (and
//! [`CHILD`] set), so the other tests of the binary never share its peak.
//! The bound is the figure `docs/PARQUET.md` gives.

use std::path::Path;

use rocwasm_core::Batch;
use rocwasm_formats::synthetic::sample_run;
use rocwasm_formats::{OperationNames, ParquetSink, Sink};

const RECORDS: u64 = 10_000_000;
/// The bound on the peak resident set `docs/PARQUET.md` states.
const PEAK_BOUND_MIB: u64 = 200;

/// This process's peak resident set in KiB (`VmHWM`).
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Bytes one record of each table takes in a batch (its columns' widths).
fn batch_bytes(b: &Batch) -> u64 {
    let rows = |n: usize, width: u64| n as u64 * width;
    rows(b.api_calls.len(), 2 * 4 + 6 * 8)
        + rows(b.kernel_dispatches.len(), 10 * 8 + 8 * 4)
        + rows(b.memory_copies.len(), 4 + 11 * 8)
        + rows(b.memory_allocations.len(), 4 + 8 * 8)
        + rows(b.scratch_memory.len(), 2 * 4 + 8 * 8)
        + rows(b.counter_samples.len(), 10 * 8 + 9 * 4)
}

/// `b` moved `shift` ns later, its correlation and dispatch ids `ids` on.
fn shifted(b: &Batch, shift: u64, ids: u64) -> Batch {
    let mut b = b.clone();
    let t = |v: &mut Vec<u64>, by: u64| v.iter_mut().for_each(|x| *x += by);
    let a = &mut b.api_calls;
    t(&mut a.start, shift);
    t(&mut a.end, shift);
    t(&mut a.correlation_id, ids);
    let k = &mut b.kernel_dispatches;
    t(&mut k.start, shift);
    t(&mut k.end, shift);
    t(&mut k.correlation_id, ids);
    t(&mut k.dispatch_id, ids);
    let c = &mut b.memory_copies;
    t(&mut c.start, shift);
    t(&mut c.end, shift);
    t(&mut c.correlation_id, ids);
    let p = &mut b.counter_samples;
    t(&mut p.start, shift);
    t(&mut p.end, shift);
    t(&mut p.correlation_id, ids);
    t(&mut p.dispatch_id, ids);
    b
}

fn rows_in(path: &Path) -> u64 {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    reader.metadata().file_metadata().num_rows() as u64
}

/// Set in the child process that measures.
const CHILD: &str = "ROCWASM_PARQUET_MEMORY_CHILD";

#[test]
fn ten_million_records_keep_the_peak_resident_set_bounded() {
    if std::env::var_os(CHILD).is_some() {
        return measure();
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "parquet_memory::ten_million_records_keep_the_peak_resident_set_bounded",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("cannot start the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the measuring process failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("1 passed"),
        "the measuring process ran no test:\n{stdout}"
    );
}

/// The measurement, in the child process.
fn measure() {
    let names = OperationNames::new();
    let run = sample_run(7, 15_000, 16_384, &names);
    let per_pass: u64 = run.batches.iter().map(|b| b.len() as u64).sum();
    let span = run.meta.end_ns - run.meta.start_ns;
    let dir = tempfile::tempdir().unwrap();
    let ctx = run.context(&names);
    let before_mib = peak_rss_kib() / 1024;
    let mut sink = ParquetSink::new(dir.path(), None);
    sink.begin(&ctx).unwrap();
    let (mut written, mut data_bytes, mut pass) = (0u64, 0u64, 0u64);
    'outer: loop {
        for b in &run.batches {
            let b = shifted(b, pass * span, pass * 10_000_000);
            written += b.len() as u64;
            data_bytes += batch_bytes(&b);
            sink.write_batch(&b, &ctx).unwrap();
            if written >= RECORDS {
                break 'outer;
            }
        }
        pass += 1;
    }
    let files = sink.finish(&ctx).unwrap();
    let peak_mib = peak_rss_kib() / 1024;
    let on_disk: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    let rows: u64 = files.iter().map(|f| rows_in(f)).sum();
    println!(
        "{written} records ({per_pass} per pass, {} passes): {} MiB as batch columns, \
         {} MiB of Parquet in {} files, peak RSS {peak_mib} MiB ({before_mib} MiB before writing)",
        pass + 1,
        data_bytes >> 20,
        on_disk >> 20,
        files.len()
    );
    assert_eq!(files.len(), 7, "{files:?}");
    // API calls of kinds without a trace table are not written (as in CSV);
    // the sample run has none, so every record is a row.
    assert_eq!(rows, written);
    assert!(
        peak_mib < PEAK_BOUND_MIB,
        "peak RSS {peak_mib} MiB ≥ {PEAK_BOUND_MIB} MiB for {written} records ({} MiB of data)",
        data_bytes >> 20
    );
    assert!(
        peak_mib * 4 < data_bytes >> 20,
        "the peak is not well under the data size"
    );
}
