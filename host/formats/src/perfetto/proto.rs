//! The track descriptors this sink writes, as hand-derived `prost` messages
//! (a subset of Perfetto's trace protos). Slices, the bulk of a trace, are
//! encoded field by field in [`super::wire`].
//!
//! Why by hand: generating from `.proto` files needs `protoc` at build time
//! (not installed on build nodes, and one more tool for every user), while
//! this subset is a dozen fields. Field numbers and types are those of
//! `protos/perfetto/trace/trace_packet.proto`,
//! `track_event/track_descriptor.proto`, `counter_descriptor.proto`,
//! `process_descriptor.proto` and `thread_descriptor.proto`, checked against the descriptors shipped in the
//! PyPI `perfetto` package; the test in `tests/perfetto_decode.rs` parses our
//! output with that decoder and rejects any unknown field.
//!
//! Oneof members (`TracePacket.data`, …) are plain optional fields here: the
//! wire format of a oneof is that of its members, and we never set two of
//! them.

/// `perfetto.protos.TracePacket` (subset). A trace file is the repeated field
/// 1 of `perfetto.protos.Trace`, one packet after another.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// The writer's sequence; incremental state (track descriptors) is
    /// scoped to it. Never 0.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// [`SEQ_INCREMENTAL_STATE_CLEARED`] on a sequence's first packet.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// Declares a track (process, thread, agent, queue, copy) before its
    /// first event.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
    /// Set on the first packet the sequence writes.
    #[prost(bool, optional, tag = "87")]
    pub first_packet_on_sequence: Option<bool>,
}

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;

/// `perfetto.protos.TrackDescriptor` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// The track's id, unique in the trace (derived from the process hash, so
    /// concatenated files do not collide).
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// The name shown for the track (`Agent 1 (gfx90a)`, `Queue 3`, …).
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// Makes this the track of a process.
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// Makes this the track of a thread.
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    /// The enclosing track (a thread or agent track's process, a queue's
    /// agent).
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// Makes this a counter track (memory allocated, scratch memory held).
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `perfetto.protos.CounterDescriptor` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    /// The values' unit ([`UNIT_SIZE_BYTES`]).
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
    /// False: each value is the track's value, not an increment.
    #[prost(bool, optional, tag = "5")]
    pub is_incremental: Option<bool>,
}

/// `CounterDescriptor.Unit.UNIT_SIZE_BYTES`.
pub const UNIT_SIZE_BYTES: i32 = 3;

/// `perfetto.protos.ProcessDescriptor` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    /// The process id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// The command line, program first.
    #[prost(string, repeated, tag = "2")]
    pub cmdline: Vec<String>,
    /// The program's file name.
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `perfetto.protos.ThreadDescriptor` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    /// The id of the process the thread belongs to.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// The OS thread id.
    #[prost(int64, optional, tag = "2")]
    pub tid: Option<i64>,
    /// The name shown for the thread (`thread <tid>`).
    #[prost(string, optional, tag = "5")]
    pub thread_name: Option<String>,
}
