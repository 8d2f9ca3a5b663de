//! The Perfetto trace parses with Perfetto's own protobuf decoder (PyPI
//! `perfetto`), has no field the schema does not know, resolves every
//! interned name as a trace processor would (on its own packet sequence,
//! after the sequence's state was cleared, in a packet that says it needs
//! that state), names every slice as the records do, draws memory
//! allocations and scratch memory as counter tracks with the values the
//! records give, and two processes' traces concatenate into one that still
//! parses with summed counts.

use crate::common;

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::process::Command;

use rocwasm_core::BufferTracingKind;
use rocwasm_formats::stats::kernel_display_name;
use rocwasm_formats::{OperationNames, PerfettoSink};

const CHECK: &str = r#"
import sys
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent
from google.protobuf import unknown_fields

def unknown(msg):
    n = len(unknown_fields.UnknownFieldSet(msg))
    for field, value in msg.ListFields():
        if field.message_type is None:
            continue
        if field.is_repeated if hasattr(field, 'is_repeated') else field.label == field.LABEL_REPEATED:
            n += sum(unknown(v) for v in value)
        else:
            n += unknown(value)
    return n

trace = Trace.FromString(open(sys.argv[1], 'rb').read())
tracks, slices, ends, flows, seqs, procs, threads = 0, 0, 0, {}, set(), 0, 0
# Interned strings per sequence: (names, categories, argument names); a
# sequence has state only once a packet of it cleared it.
state, unresolved, names = {}, 0, set()
# Counter tracks by uuid: their names, and their (timestamp, value)s.
counter_names, counter_values = {}, {}
CLEARED, NEEDS = 1, 2
for p in trace.packet:
    seq = p.trusted_packet_sequence_id
    seqs.add(seq)
    if p.sequence_flags & CLEARED:
        state[seq] = ({}, {}, {})
    if p.HasField('interned_data'):
        if seq not in state:
            unresolved += 1
            continue
        d = p.interned_data
        for table, entries in zip(state[seq], (d.event_names, d.event_categories, d.debug_annotation_names)):
            for e in entries:
                table[e.iid] = e.name
    if p.HasField('track_descriptor') and p.track_descriptor.HasField('counter'):
        counter_names[p.track_descriptor.uuid] = p.track_descriptor.name
    if p.HasField('track_descriptor'):
        tracks += 1
        procs += p.track_descriptor.HasField('process')
        threads += p.track_descriptor.HasField('thread')
    if p.HasField('track_event'):
        e = p.track_event
        if e.type == TrackEvent.TYPE_SLICE_BEGIN:
            slices += 1
            ev_names, cats, args = state.get(seq, ({}, {}, {}))
            ok = (seq in state and p.sequence_flags & NEEDS
                  and e.name_iid in ev_names
                  and len(e.category_iids) == 1 and e.category_iids[0] in cats
                  and all(a.name_iid in args for a in e.debug_annotations))
            if ok:
                names.add(ev_names[e.name_iid])
            else:
                unresolved += 1
        elif e.type == TrackEvent.TYPE_SLICE_END:
            ends += 1
        elif e.type == TrackEvent.TYPE_COUNTER:
            counter_values.setdefault(e.track_uuid, []).append((p.timestamp, e.counter_value))
        for f in e.flow_ids:
            flows[f] = flows.get(f, 0) + 1
linked = sum(1 for c in flows.values() if c >= 2)
print("names=" + "|".join(sorted(names)))
# Each counter track's last value in time, by name (values of a track
# written out of order would still be read in time order).
last = sorted(f"{counter_names.get(u, '?')}={max(v)[1]}" for u, v in counter_values.items())
print("counters=" + "|".join(last) + f" events={sum(len(v) for v in counter_values.values())}")
print(f"packets={len(trace.packet)} unknown={unknown(trace)} unresolved={unresolved} tracks={tracks} processes={procs} threads={threads} slices={slices} ends={ends} flows={linked} sequences={len(seqs)}")
"#;

/// Perfetto's decoder must import: `cargo xtask setup` (and so `cargo
/// xtask test`) installs it with the protobuf runtime its schema needs
/// (`PYTHON_PACKAGES` in `xtask/src/setup.rs`, the one place that knows).
fn ensure_perfetto_module() {
    let out = Command::new("python3")
        .args([
            "-c",
            "import perfetto.protos.perfetto.trace.perfetto_trace_pb2",
        ])
        .output()
        .expect("python3 is needed for the Perfetto decoder test");
    assert!(
        out.status.success(),
        "Perfetto's Python decoder does not import (run `cargo xtask setup`): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn decode(path: &Path) -> String {
    ensure_perfetto_module();
    let out = Command::new("python3")
        .arg("-c")
        .arg(CHECK)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "decoder failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The slice names the trace must resolve to: every call's function, every
/// kernel's name, every copy's direction.
fn expected_names(run: &rocwasm_formats::synthetic::SampleRun, names: &OperationNames) -> String {
    let copy = BufferTracingKind::MemoryCopy.raw();
    let mut all = BTreeSet::new();
    for b in &run.batches {
        for a in b.api_calls.rows() {
            all.insert(names.name(a.kind, a.operation).to_string());
        }
        for k in b.kernel_dispatches.rows() {
            all.insert(kernel_display_name(&run.symbols, k.kernel_id));
        }
        for c in b.memory_copies.rows() {
            all.insert(names.name(copy, c.operation).to_string());
        }
    }
    format!("names={}", all.into_iter().collect::<Vec<_>>().join("|"))
}

/// What the trace must contain, computed from the batches.
fn expected(run: &rocwasm_formats::synthetic::SampleRun) -> (usize, usize, usize, usize) {
    let mut threads = HashSet::new();
    let mut agents = HashSet::new();
    let mut queues = HashSet::new();
    let mut copy_tracks = HashSet::new();
    let mut slices = 0;
    let mut async_ids = HashSet::new();
    for b in &run.batches {
        for a in b.api_calls.rows() {
            threads.insert(a.thread_id);
            slices += 1;
        }
        for k in b.kernel_dispatches.rows() {
            agents.insert(k.agent_id);
            queues.insert((k.agent_id, k.queue_id));
            async_ids.insert(k.correlation_id);
            slices += 1;
        }
        for c in b.memory_copies.rows() {
            agents.insert(c.dst_agent_id);
            copy_tracks.insert((c.dst_agent_id, c.operation, c.stream_id));
            async_ids.insert(c.correlation_id);
            slices += 1;
        }
    }
    let tracks = 1 + threads.len() + agents.len() + queues.len() + copy_tracks.len();
    (tracks, threads.len(), slices, async_ids.len())
}

/// The counter tracks the trace must draw, each track's last value, and
/// the number of counter events, computed from the records: bytes
/// allocated on each agent (an allocation adds its size, a free takes away
/// the size of the earlier allocation of its address), and the scratch
/// memory each agent holds at the end (the last scratch record's size, 0
/// after a free or reclaim).
fn expected_counters(run: &rocwasm_formats::synthetic::SampleRun) -> (String, usize) {
    use std::collections::{BTreeMap, HashMap};
    let agent_name = |id: u64| {
        let a = run
            .symbols
            .agent(id)
            .expect("the sample describes its agents");
        format!("Agent [{}] (GPU)", a.node_id)
    };
    let mut allocs: Vec<_> = run
        .batches
        .iter()
        .flat_map(|b| b.memory_allocations.rows())
        .collect();
    allocs.sort_by_key(|m| m.start);
    let mut live = HashMap::new();
    let mut last: BTreeMap<String, u64> = BTreeMap::new();
    let mut events = 0;
    for m in allocs {
        match m.operation {
            1 | 2 => {
                live.insert(m.address, (m.agent_id, m.allocation_size));
                *last
                    .entry(format!("ALLOCATE BYTES on {}", agent_name(m.agent_id)))
                    .or_default() += m.allocation_size;
                events += 1;
            }
            _ => {
                if let Some((agent, size)) = live.remove(&m.address) {
                    *last
                        .entry(format!("ALLOCATE BYTES on {}", agent_name(agent)))
                        .or_default() -= size;
                    events += 1;
                }
            }
        }
    }
    let mut scratch: Vec<_> = run
        .batches
        .iter()
        .flat_map(|b| b.scratch_memory.rows())
        .collect();
    scratch.sort_by_key(|s| s.start);
    for s in scratch {
        let held = if s.operation == 1 {
            s.allocation_size
        } else {
            0
        };
        last.insert(
            format!("SCRATCH MEMORY on {}", agent_name(s.agent_id)),
            held,
        );
        events += 1;
    }
    let line = last
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("|");
    (format!("counters={line} events={events}"), last.len())
}

#[test]
fn perfetto_decoder_parses_and_two_traces_concatenate() {
    let dir = tempfile::tempdir().unwrap();
    let (a, names_a) = common::sample(21, 120);
    let (b, names_b) = common::sample(22, 80);
    let pa = dir.path().join("a.pftrace");
    let pb = dir.path().join("b.pftrace");
    common::write_run(&a, &names_a, &mut [Box::new(PerfettoSink::at_path(&pa))]);
    common::write_run(&b, &names_b, &mut [Box::new(PerfettoSink::at_path(&pb))]);

    let (ta, tha, sa, fa) = expected(&a);
    let (tb, thb, sb, fb) = expected(&b);
    let (counters_a, counter_tracks_a) = expected_counters(&a);
    let (_, counter_tracks_b) = expected_counters(&b);
    assert!(counter_tracks_a >= 2, "{counters_a}");
    let (ta, tb) = (ta + counter_tracks_a, tb + counter_tracks_b);
    let got_a = decode(&pa);
    assert!(
        got_a.lines().any(|l| l == counters_a),
        "got {got_a}\nwant the line {counters_a}"
    );
    let want_a = format!(
        "unknown=0 unresolved=0 tracks={ta} processes=1 threads={tha} slices={sa} ends={sa} flows={fa} sequences=1"
    );
    assert!(got_a.ends_with(&want_a), "got {got_a}\nwant …{want_a}");
    let names_line = got_a.lines().next().unwrap();
    assert_eq!(names_line, expected_names(&a, &names_a));
    assert!(names_line.contains("hipLaunchKernel"), "{names_line}");
    let got_b = decode(&pb);
    assert!(
        got_b.contains(&format!("slices={sb} ends={sb} flows={fb}")),
        "{got_b}"
    );

    // `cat a b > ab`: one trace with both processes, nothing lost or merged.
    let ab = dir.path().join("ab.pftrace");
    let mut bytes = std::fs::read(&pa).unwrap();
    bytes.extend(std::fs::read(&pb).unwrap());
    std::fs::write(&ab, bytes).unwrap();
    let got = decode(&ab);
    let want = format!(
        "unknown=0 unresolved=0 tracks={} processes=2 threads={} slices={} ends={} flows={} sequences=2",
        ta + tb,
        tha + thb,
        sa + sb,
        sa + sb,
        fa + fb
    );
    assert!(got.ends_with(&want), "got {got}\nwant …{want}");
    eprintln!("concatenated trace: {got}");
}
