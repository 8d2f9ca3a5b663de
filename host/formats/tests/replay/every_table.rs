//! Every format, given records of every table and kind: each record is in
//! the file (read back by the format's own reader; Parquet by its tables'
//! row counts; Perfetto by Perfetto's decoder: slices per category and
//! counter values on the memory tracks), or the format says, in its notes,
//! how many of that kind it left out. A kind nobody writes and nobody
//! mentions fails here.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use rocwasm_core::{ApiCall, Batch, BufferTracingKind as K, Retirement, RuntimeInitialization};
use rocwasm_formats::csv::TraceFile;
use rocwasm_formats::replay::{open_with, ReplayOptions};
use rocwasm_formats::synthetic::{sample_run, SampleRun};
use rocwasm_formats::{
    kind_name, CsvSink, JsonSink, OperationNames, ParquetSink, PerfettoSink, RocpdSink, Sink,
};

/// Records per kind.
type Counts = BTreeMap<u32, u64>;

/// The key counter samples are counted under (they have no kind of their
/// own).
const COUNTERS: u32 = u32::MAX;

fn label(kind: u32) -> String {
    if kind == COUNTERS {
        "counter sample".into()
    } else {
        kind_name(kind).to_string()
    }
}

/// The sample run's records in one batch, with the kinds the sample has
/// none of added: OpenMP and RCCL calls, retired correlation ids, a runtime
/// initialisation.
fn every_table(run: &SampleRun) -> Batch {
    let mut all = Batch::default();
    for b in &run.batches {
        let mut b = b.clone();
        all.append(&mut b);
    }
    for (kind, n) in [(K::Ompt, 3), (K::RcclApi, 2)] {
        for i in 0..n {
            all.api_calls.push(ApiCall {
                kind: kind.raw(),
                operation: 1,
                correlation_id: 900_000 + i,
                thread_id: 1,
                start: run.meta.start_ns + 10,
                end: run.meta.start_ns + 20,
                ..Default::default()
            });
        }
    }
    for i in 0..2 {
        all.retirements.push(Retirement {
            timestamp: run.meta.start_ns + 30 + i,
            correlation_id: i + 1,
        });
    }
    all.runtime_initializations.push(RuntimeInitialization {
        timestamp: run.meta.start_ns + 1,
        operation: 2,
        ..Default::default()
    });
    all
}

/// Records per kind of `b`.
fn counts(b: &Batch) -> Counts {
    let mut c = Counts::new();
    for &k in &b.api_calls.kind {
        *c.entry(k).or_default() += 1;
    }
    for (kind, n) in [
        (K::KernelDispatch, b.kernel_dispatches.len()),
        (K::MemoryCopy, b.memory_copies.len()),
        (K::MemoryAllocation, b.memory_allocations.len()),
        (K::ScratchMemory, b.scratch_memory.len()),
        (K::CorrelationIdRetirement, b.retirements.len()),
        (K::RuntimeInitialization, b.runtime_initializations.len()),
    ] {
        if n > 0 {
            *c.entry(kind.raw()).or_default() += n as u64;
        }
    }
    if !b.counter_samples.is_empty() {
        *c.entry(COUNTERS).or_default() += b.counter_samples.len() as u64;
    }
    c
}

/// Writes `batch` with `sink`; the sink's notes.
fn write(
    run: &SampleRun,
    names: &OperationNames,
    batch: &Batch,
    mut sink: Box<dyn Sink>,
) -> Vec<String> {
    let ctx = run.context(names);
    sink.begin(&ctx).unwrap();
    sink.write_batch(batch, &ctx).unwrap();
    sink.finish(&ctx).unwrap();
    sink.notes()
}

/// How many records of `kind` the notes say were left out (a sentence
/// starting with the count and naming the kind, or, for allocations, the
/// frees no track could take).
fn said(notes: &[String], kind: u32) -> u64 {
    if kind == COUNTERS {
        return notes
            .iter()
            .filter_map(|n| {
                let (count, rest) = n.split_once(' ')?;
                rest.starts_with("counter sample(s) are not in")
                    .then(|| count.parse::<u64>().ok())
                    .flatten()
            })
            .sum();
    }
    let name = kind_name(kind);
    notes
        .iter()
        .filter_map(|n| {
            let (count, rest) = n.split_once(' ')?;
            let mentions = rest.starts_with(&format!("{name} record(s)"))
                || (kind == K::MemoryAllocation.raw() && rest.starts_with("memory free(s)"));
            mentions.then(|| count.parse::<u64>().ok()).flatten()
        })
        .sum()
}

/// Every kind sent is kept or said, exactly.
fn check(format: &str, sent: &Counts, kept: &Counts, notes: &[String]) {
    for (&kind, &n) in sent {
        let k = kept.get(&kind).copied().unwrap_or(0);
        let s = said(notes, kind);
        assert_eq!(
            k + s,
            n,
            "{format}: {n} {} record(s) sent, {k} in the file, {s} said left out; notes {notes:?}",
            label(kind)
        );
    }
    for (&kind, &k) in kept {
        assert!(
            sent.contains_key(&kind),
            "{format}: {k} {} record(s) invented",
            label(kind)
        );
    }
}

/// Records per kind read back from `path` by the replay reader.
fn replayed(path: &Path) -> Counts {
    let opts = ReplayOptions {
        chunk_rows: 100_000,
        progress: false,
        names: None,
    };
    let mut src = open_with(path, &opts).unwrap();
    let mut c = Counts::new();
    while let Some(b) = src.next_batch().unwrap() {
        for (k, n) in counts(&b) {
            *c.entry(k).or_default() += n;
        }
    }
    c
}

const PERFETTO_COUNTS: &str = r#"
import sys
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent
trace = Trace.FromString(open(sys.argv[1], 'rb').read())
cats, counter_tracks, out = {}, {}, {}
for p in trace.packet:
    seq = p.trusted_packet_sequence_id
    if p.HasField('interned_data'):
        for e in p.interned_data.event_categories:
            cats[(seq, e.iid)] = e.name
    if p.HasField('track_descriptor') and p.track_descriptor.HasField('counter'):
        counter_tracks[p.track_descriptor.uuid] = p.track_descriptor.name.split(' on ')[0]
    if p.HasField('track_event'):
        e = p.track_event
        if e.type == TrackEvent.TYPE_SLICE_BEGIN:
            key = cats[(seq, e.category_iids[0])]
        elif e.type == TrackEvent.TYPE_COUNTER:
            key = counter_tracks[e.track_uuid]
        else:
            continue
        out[key] = out.get(key, 0) + 1
for k, v in sorted(out.items()):
    print(f"{k}={v}")
"#;

/// Records per kind in a Perfetto trace: slices by category (the kind's
/// name); counter values on the memory tracks (one per allocation, paired
/// free or scratch record).
fn perfetto_counts(path: &Path) -> Counts {
    let out = Command::new("python3")
        .arg("-c")
        .arg(PERFETTO_COUNTS)
        .arg(path)
        .output()
        .expect("python3 with Perfetto's decoder (cargo xtask setup)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let by_name: BTreeMap<String, u64> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.parse().unwrap()))
        .collect();
    let mut c = Counts::new();
    // Hardware counters: their tracks are named after the counters.
    let samples: u64 = ["SQ_WAVES", "GPU_UTIL"]
        .iter()
        .filter_map(|n| by_name.get(*n))
        .sum();
    if samples > 0 {
        c.insert(COUNTERS, samples);
    }
    for kind in K::ALL {
        let key = match kind {
            K::MemoryAllocation => "ALLOCATE BYTES".to_string(),
            K::ScratchMemory => "SCRATCH MEMORY".to_string(),
            k => kind_name(k.raw()).to_string(),
        };
        if let Some(&n) = by_name.get(&key) {
            c.insert(kind.raw(), n);
        }
    }
    c
}

/// Records per kind in Parquet files: each table's rows, shared among the
/// kinds it holds (the API tables hold one family's kinds, counted by the
/// batch: a table's rows must equal the sum sent of its kinds).
fn parquet_counts(dir: &Path, sent: &Counts) -> Counts {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let mut c = Counts::new();
    for file in TraceFile::ALL {
        let path = dir.join(file.file_name().replace(".csv", ".parquet"));
        let rows = match std::fs::File::open(&path) {
            Ok(f) => SerializedFileReader::new(f)
                .unwrap()
                .metadata()
                .file_metadata()
                .num_rows() as u64,
            Err(_) => 0,
        };
        let kinds: Vec<u32> = sent
            .keys()
            .copied()
            .filter(|&k| match file {
                TraceFile::KernelTrace => k == K::KernelDispatch.raw(),
                TraceFile::MemoryCopy => k == K::MemoryCopy.raw(),
                TraceFile::MemoryAllocation => k == K::MemoryAllocation.raw(),
                TraceFile::ScratchMemory => k == K::ScratchMemory.raw(),
                TraceFile::CounterCollection => k == COUNTERS,
                api => k != COUNTERS && TraceFile::of_api_kind(k) == Some(api),
            })
            .collect();
        let want: u64 = kinds.iter().map(|k| sent[k]).sum();
        assert_eq!(
            rows,
            want,
            "{}: rows vs the records of its kinds",
            path.display()
        );
        for k in kinds {
            c.insert(k, sent[&k]);
        }
    }
    c
}

#[test]
fn every_format_writes_every_tables_records_or_says_how_many_it_left_out() {
    let names = OperationNames::new();
    let run = sample_run(7, 60, 1 << 20, &names).with_counter_samples();
    let batch = every_table(&run);
    let sent = counts(&batch);
    // Every table has rows.
    assert!(
        [
            K::KernelDispatch,
            K::MemoryCopy,
            K::MemoryAllocation,
            K::ScratchMemory,
            K::CorrelationIdRetirement,
            K::RuntimeInitialization,
            K::HipRuntimeApi,
            K::Ompt,
        ]
        .iter()
        .all(|k| sent.contains_key(&k.raw()))
            && sent.contains_key(&COUNTERS),
        "{sent:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);

    let notes = write(&run, &names, &batch, Box::new(CsvSink::new(d("csv"), None)));
    check("CSV", &sent, &replayed(&d("csv")), &notes);

    let notes = write(
        &run,
        &names,
        &batch,
        Box::new(JsonSink::new(d("json"), None)),
    );
    check(
        "JSON",
        &sent,
        &replayed(&d("json").join("results.json")),
        &notes,
    );

    let notes = write(
        &run,
        &names,
        &batch,
        Box::new(RocpdSink::new(d("rocpd"), None)),
    );
    check(
        "rocpd",
        &sent,
        &replayed(&d("rocpd").join("results.db")),
        &notes,
    );

    let notes = write(
        &run,
        &names,
        &batch,
        Box::new(ParquetSink::new(d("parquet"), None)),
    );
    check(
        "Parquet",
        &sent,
        &parquet_counts(&d("parquet"), &sent),
        &notes,
    );

    let notes = write(
        &run,
        &names,
        &batch,
        Box::new(PerfettoSink::new(d("pftrace"), None)),
    );
    check(
        "Perfetto",
        &sent,
        &perfetto_counts(&d("pftrace").join("results.pftrace")),
        &notes,
    );
}
