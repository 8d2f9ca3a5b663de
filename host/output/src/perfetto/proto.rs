//! The subset of Perfetto's trace protos this sink writes, as hand-derived
//! `prost` messages.
//!
//! Why by hand: generating from `.proto` files needs `protoc` at build time
//! (not installed on build nodes, and one more tool for every user), while
//! this subset is a dozen fields. Field numbers and types are those of
//! `protos/perfetto/trace/trace_packet.proto`, `track_event/track_event.proto`,
//! `track_event/track_descriptor.proto`, `process_descriptor.proto`,
//! `thread_descriptor.proto` and `debug_annotation.proto`, checked against
//! the descriptors shipped in the PyPI `perfetto` package; the test in
//! `tests/perfetto_decode.rs` parses our output with that decoder and rejects
//! any unknown field. Perfetto's protos are proto2, so repeated scalars are
//! written unpacked (`packed = "false"`), as its own encoder does.
//!
//! Oneof members (`TracePacket.data`, `TrackEvent.name_field`, …) are plain
//! optional fields here: the wire format of a oneof is that of its members,
//! and we never set two of them.

/// `perfetto.protos.TracePacket` (subset). A trace file is the repeated field
/// 1 of `perfetto.protos.Trace`, one packet after another.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// Event time in ns. Perfetto's default trace clock is `CLOCK_BOOTTIME`,
    /// the clock the records are in.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The writer's sequence; incremental state (track descriptors) is
    /// scoped to it. Never 0.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// A slice begin or end on a track.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
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

/// `perfetto.protos.TrackEvent.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum TrackEventType {
    /// Not set (proto default).
    Unspecified = 0,
    /// Opens a slice on the event's track.
    SliceBegin = 1,
    /// Closes the innermost open slice on the event's track.
    SliceEnd = 2,
    /// A zero-length event.
    Instant = 3,
}

/// `perfetto.protos.TrackEvent` (subset).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// Named arguments shown with the slice (`correlation_id`, `bytes`, …).
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// A [`TrackEventType`] as its `i32`.
    #[prost(enumeration = "TrackEventType", optional, tag = "9")]
    pub r#type: Option<i32>,
    /// The [`TrackDescriptor::uuid`] of the track the event is on.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// The record's kind name (`HIP_RUNTIME_API`, `KERNEL_DISPATCH`, …).
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    /// The slice's name: the function, kernel or copy direction.
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// Flows this event belongs to; events sharing an id are joined by an
    /// arrow (launch call → kernel or copy).
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    /// Flows that end at this event (unused by this sink).
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

/// `perfetto.protos.DebugAnnotation` (subset: named integer or string values).
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// An unsigned integer value.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// A text value.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
    /// The argument's name.
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
}

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
}

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
