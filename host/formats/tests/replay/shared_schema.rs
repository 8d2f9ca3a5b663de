//! Writer and reader agree through each format's one schema
//! (`rocwasm_formats::{csv, json, rocpd::schema}`): a run written by the sink
//! and read back by the reader gives back every field the format carries,
//! record for record.

use std::path::Path;

use rocwasm_core::{ApiCall, Batch, KernelDispatch, MemoryAllocation, MemoryCopy, ScratchMemory};
use rocwasm_formats::replay::{open_with, ReplayOptions, ReplaySource};
use rocwasm_formats::synthetic::{sample_run, SampleRun};
use rocwasm_formats::{CsvSink, JsonSink, OperationNames, RocpdSink, Sink};

fn sample() -> (SampleRun, OperationNames) {
    let names = OperationNames::new();
    let run = sample_run(11, 300, 128, &names);
    (run, names)
}

fn write(run: &SampleRun, names: &OperationNames, sink: &mut dyn Sink) {
    let ctx = run.context(names);
    sink.begin(&ctx).unwrap();
    for b in &run.batches {
        sink.write_batch(b, &ctx).unwrap();
    }
    sink.finish(&ctx).unwrap();
}

/// Every record of the trace at `path`, in one batch.
fn read_all(path: &Path) -> (Batch, ReplaySource) {
    let mut src = open_with(
        path,
        &ReplayOptions {
            chunk_rows: 97,
            progress: false,
            names: None,
        },
    )
    .unwrap();
    let mut all = Batch::default();
    while let Some(mut b) = src.next_batch().unwrap() {
        all.append(&mut b);
    }
    (all, src)
}

fn original(run: &SampleRun) -> Batch {
    let mut all = Batch::default();
    for b in &run.batches {
        all.append(&mut b.clone());
    }
    all
}

/// Rows in a canonical order: readers return the families (and the API
/// files of a CSV directory) one after another, not interleaved as written.
fn sorted<T: std::fmt::Debug>(rows: impl Iterator<Item = T>) -> Vec<String> {
    let mut v: Vec<String> = rows.map(|r| format!("{r:?}")).collect();
    v.sort();
    v
}

#[test]
fn csv_reader_reads_every_column_the_writer_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = sample();
    write(
        &run,
        &names,
        &mut CsvSink::new(dir.path(), Some("s".into())),
    );
    let (got, src) = read_all(dir.path());
    let want = original(&run);
    // CSV writes agents by logical node index, and has no column for the
    // fields set to 0 here (see `rocwasm_formats::csv`).
    let node = |id: u64| u64::from(run.symbols.agent(id).unwrap().node_id);
    assert_eq!(
        sorted(got.kernel_dispatches.rows()),
        sorted(want.kernel_dispatches.rows().map(|k| KernelDispatch {
            external_correlation_id: 0,
            agent_id: node(k.agent_id),
            ..k
        }))
    );
    assert_eq!(
        sorted(got.api_calls.rows()),
        sorted(want.api_calls.rows().map(|a| ApiCall {
            external_correlation_id: 0,
            ancestor: 0,
            ..a
        }))
    );
    assert_eq!(
        sorted(got.memory_copies.rows()),
        sorted(want.memory_copies.rows().map(|c| MemoryCopy {
            external_correlation_id: 0,
            thread_id: 0,
            src_agent_id: node(c.src_agent_id),
            dst_agent_id: node(c.dst_agent_id),
            bytes: 0,
            src_address: 0,
            dst_address: 0,
            ..c
        }))
    );
    assert_eq!(
        sorted(got.memory_allocations.rows()),
        sorted(want.memory_allocations.rows().map(|m| MemoryAllocation {
            external_correlation_id: 0,
            thread_id: 0,
            agent_id: node(m.agent_id),
            ..m
        }))
    );
    assert_eq!(
        sorted(got.scratch_memory.rows()),
        sorted(want.scratch_memory.rows().map(|s| ScratchMemory {
            external_correlation_id: 0,
            correlation_id: 0,
            agent_id: node(s.agent_id),
            ..s
        }))
    );
    assert!(!got.scratch_memory.is_empty() && !got.memory_allocations.is_empty());
    // Kernel names and register counts come back as symbols.
    for k in run.symbols.kernels() {
        let r = src.symbols().kernel(k.id).unwrap();
        assert_eq!(
            (
                r.demangled_name.as_str(),
                r.arch_vgpr_count,
                r.accum_vgpr_count,
                r.sgpr_count
            ),
            (
                k.demangled_name.as_str(),
                k.arch_vgpr_count,
                k.accum_vgpr_count,
                k.sgpr_count
            )
        );
    }
}

#[test]
fn json_reader_reads_every_record_the_writer_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = sample();
    write(&run, &names, &mut JsonSink::new(dir.path(), None));
    let path = dir.path().join("results.json");

    // The file is exactly the schema: parsed into the schema's types and
    // written back, no key is lost and none is added.
    let text = std::fs::read_to_string(&path).unwrap();
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    let typed: rocwasm_formats::json::Document = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), raw);

    let (got, src) = read_all(&path);
    let want = original(&run);
    assert_eq!(sorted(got.api_calls.rows()), sorted(want.api_calls.rows()));
    assert_eq!(
        sorted(got.kernel_dispatches.rows()),
        sorted(want.kernel_dispatches.rows())
    );
    assert_eq!(
        sorted(got.memory_copies.rows()),
        sorted(want.memory_copies.rows())
    );
    assert_eq!(
        sorted(got.memory_allocations.rows()),
        sorted(want.memory_allocations.rows())
    );
    assert_eq!(
        sorted(got.scratch_memory.rows()),
        sorted(want.scratch_memory.rows())
    );
    assert_eq!(src.meta(), &run.meta);
    assert_eq!(src.symbols().kernels(), run.symbols.kernels());
    assert_eq!(src.symbols().agents(), run.symbols.agents());
    assert_eq!(src.symbols().code_objects(), run.symbols.code_objects());
}

#[test]
fn rocpd_reader_reads_every_record_the_writer_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (run, names) = sample();
    let path = dir.path().join("results.db");
    write(&run, &names, &mut RocpdSink::at_path(&path));
    let (got, src) = read_all(&path);
    let want = original(&run);
    // The ancestor is the region event's `parent_stack_id`.
    assert_eq!(sorted(got.api_calls.rows()), sorted(want.api_calls.rows()));
    assert_eq!(
        sorted(got.kernel_dispatches.rows()),
        sorted(want.kernel_dispatches.rows())
    );
    assert_eq!(
        sorted(got.memory_copies.rows()),
        sorted(want.memory_copies.rows())
    );
    assert_eq!(
        sorted(got.memory_allocations.rows()),
        sorted(want.memory_allocations.rows())
    );
    assert_eq!(
        sorted(got.scratch_memory.rows()),
        sorted(want.scratch_memory.rows())
    );
    let meta = src.meta();
    assert_eq!(
        (meta.pid, meta.ppid, &meta.hostname, &meta.command),
        (
            run.meta.pid,
            run.meta.ppid,
            &run.meta.hostname,
            &run.meta.command
        )
    );
    assert_eq!(
        (meta.start_ns, meta.end_ns),
        (run.meta.start_ns, run.meta.end_ns)
    );
    let kernels = src.symbols().kernels();
    assert_eq!(kernels.len(), run.symbols.kernels().len());
    for k in run.symbols.kernels() {
        let r = kernels.iter().find(|r| r.id == k.id).unwrap();
        assert_eq!((&r.name, &r.demangled_name), (&k.name, &k.demangled_name));
        assert_eq!(
            (r.group_segment_size, r.private_segment_size, r.sgpr_count),
            (k.group_segment_size, k.private_segment_size, k.sgpr_count)
        );
    }
}
