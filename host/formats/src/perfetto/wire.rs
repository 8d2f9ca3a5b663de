//! The packets written for every slice, encoded field by field with
//! `prost`'s wire primitives instead of through message structs.
//!
//! Why not the [`super::proto`] structs here: a slice is two packets, and
//! building a `TracePacket` with its `TrackEvent` and annotations allocated
//! every name, category and argument (`String`s and `Vec`s dropped right
//! after encoding) and had `prost` compute each nested length twice; that was
//! most of the writer's time. The fields of a slice are all integers and
//! interned ids (see [`Interner`]), so their lengths are known before a byte
//! is written and one packet is one pass over a reused buffer. The field
//! numbers are Perfetto's (`trace_packet.proto`, `track_event.proto`,
//! `debug_annotation.proto`, `interned_data.proto`); the decoder test parses
//! what this writes with Perfetto's own schema and resolves every interned
//! id.

use prost::encoding::{encoded_len_varint, key_len, WireType};
use rustc_hash::FxHashMap as HashMap;

// `TracePacket` fields.
const PACKET_TIMESTAMP: u32 = 8;
const PACKET_SEQUENCE_ID: u32 = 10;
const PACKET_TRACK_EVENT: u32 = 11;
const PACKET_INTERNED_DATA: u32 = 12;
const PACKET_SEQUENCE_FLAGS: u32 = 13;
/// `TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`: the packet uses
/// interned ids, which only mean something after the sequence's state was
/// cleared (the first packet does that).
const SEQ_NEEDS_INCREMENTAL_STATE: u64 = 2;

// `TrackEvent` fields.
const EVENT_CATEGORY_IIDS: u32 = 3;
const EVENT_DEBUG_ANNOTATIONS: u32 = 4;
const EVENT_TYPE: u32 = 9;
const EVENT_NAME_IID: u32 = 10;
const EVENT_TRACK_UUID: u32 = 11;
const EVENT_COUNTER_VALUE: u32 = 30;
const EVENT_DOUBLE_COUNTER_VALUE: u32 = 44;
const EVENT_FLOW_IDS: u32 = 47;
const TYPE_SLICE_BEGIN: u64 = 1;
const TYPE_SLICE_END: u64 = 2;
const TYPE_COUNTER: u64 = 4;

// `DebugAnnotation` fields.
const ARG_NAME_IID: u32 = 1;
const ARG_UINT: u32 = 3;
const ARG_STRING: u32 = 6;

// `InternedData` fields (each a repeated `{ iid = 1, name = 2 }` message).
const INTERNED_CATEGORIES: u32 = 1;
const INTERNED_EVENT_NAMES: u32 = 2;
const INTERNED_ARG_NAMES: u32 = 3;

/// A slice argument's name; its interned id is its discriminant.
#[derive(Clone, Copy)]
#[repr(u64)]
pub(crate) enum Arg {
    CorrelationId = 1,
    KernelId = 2,
    DispatchId = 3,
    Grid = 4,
    Workgroup = 5,
    Bytes = 6,
}

impl Arg {
    /// Every argument, interned together in a sequence's first slice.
    const ALL: [Arg; 6] = [
        Arg::CorrelationId,
        Arg::KernelId,
        Arg::DispatchId,
        Arg::Grid,
        Arg::Workgroup,
        Arg::Bytes,
    ];

    /// The name shown with the slice.
    fn name(self) -> &'static str {
        match self {
            Arg::CorrelationId => "correlation_id",
            Arg::KernelId => "kernel_id",
            Arg::DispatchId => "dispatch_id",
            Arg::Grid => "grid",
            Arg::Workgroup => "workgroup",
            Arg::Bytes => "bytes",
        }
    }
}

/// Appends `v` as a protobuf varint.
///
/// Why not `prost::encoding::encode_varint`: it appends byte by byte through
/// `BufMut`, with a capacity check for each, and was a tenth of the writer's
/// profile (timestamps take 5 to 8 bytes). This gathers the bytes in an
/// array and appends them at once.
fn encode_varint(mut v: u64, buf: &mut Vec<u8>) {
    let mut bytes = [0u8; 10];
    let mut n = 0;
    while v >= 0x80 {
        bytes[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    bytes[n] = v as u8;
    buf.extend_from_slice(&bytes[..=n]);
}

/// Appends a field key: the tag and wire type as one varint.
fn encode_key(tag: u32, wire_type: WireType, buf: &mut Vec<u8>) {
    encode_varint(u64::from(tag) << 3 | wire_type as u64, buf);
}

fn varint_len(tag: u32, v: u64) -> usize {
    key_len(tag) + encoded_len_varint(v)
}

fn varint(buf: &mut Vec<u8>, tag: u32, v: u64) {
    encode_key(tag, WireType::Varint, buf);
    encode_varint(v, buf);
}

fn bytes_len(tag: u32, n: usize) -> usize {
    key_len(tag) + encoded_len_varint(n as u64) + n
}

fn bytes(buf: &mut Vec<u8>, tag: u32, b: &[u8]) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(b.len() as u64, buf);
    buf.extend_from_slice(b);
}

/// One kind of interned string (event names or categories): each distinct
/// string gets the next iid, from 1, and its `{ iid, name }` entry goes into
/// the interned data of the next packet written.
#[derive(Default)]
pub(crate) struct Interner {
    ids: HashMap<String, u64>,
}

impl Interner {
    fn intern(&mut self, s: &str, field: u32, new: &mut Vec<u8>) -> u64 {
        if let Some(&iid) = self.ids.get(s) {
            return iid;
        }
        let iid = self.ids.len() as u64 + 1;
        self.ids.insert(s.to_owned(), iid);
        interned_entry(new, field, iid, s);
        iid
    }
}

/// Appends one `{ iid = 1, name = 2 }` entry as field `field` of
/// `InternedData`.
fn interned_entry(new: &mut Vec<u8>, field: u32, iid: u64, name: &str) {
    let len = varint_len(1, iid) + bytes_len(2, name.len());
    encode_key(field, WireType::LengthDelimited, new);
    encode_varint(len as u64, new);
    varint(new, 1, iid);
    bytes(new, 2, name.as_bytes());
}

/// Encodes slice packets into the writer's buffer: the track event being
/// built, the interned entries not yet written, and the interners.
#[derive(Default)]
pub(crate) struct SliceEncoder {
    event: Vec<u8>,
    /// `InternedData` fields for the next packet.
    new_interned: Vec<u8>,
    names: Interner,
    categories: Interner,
    args_interned: bool,
    /// Text of a string argument, reused.
    text: String,
}

impl SliceEncoder {
    /// The iid of an event (slice) name.
    pub(crate) fn name(&mut self, s: &str) -> u64 {
        self.names
            .intern(s, INTERNED_EVENT_NAMES, &mut self.new_interned)
    }

    /// The iid of a category.
    pub(crate) fn category(&mut self, s: &str) -> u64 {
        self.categories
            .intern(s, INTERNED_CATEGORIES, &mut self.new_interned)
    }

    /// Starts a slice-begin event; add its arguments, then [`Self::write`].
    pub(crate) fn begin(&mut self, track: u64, category: u64, name: u64, flow: Option<u64>) {
        let e = &mut self.event;
        e.clear();
        varint(e, EVENT_TYPE, TYPE_SLICE_BEGIN);
        varint(e, EVENT_TRACK_UUID, track);
        varint(e, EVENT_CATEGORY_IIDS, category);
        varint(e, EVENT_NAME_IID, name);
        if let Some(f) = flow {
            // A repeated fixed64 of a proto2 message: unpacked, as
            // Perfetto's own encoder writes it.
            encode_key(EVENT_FLOW_IDS, WireType::SixtyFourBit, e);
            e.extend_from_slice(&f.to_le_bytes());
        }
    }

    /// Starts the slice-end event of `track`'s innermost open slice.
    pub(crate) fn end(&mut self, track: u64) {
        let e = &mut self.event;
        e.clear();
        varint(e, EVENT_TYPE, TYPE_SLICE_END);
        varint(e, EVENT_TRACK_UUID, track);
    }

    /// Starts a counter event: `track` (a counter track) has `value` from
    /// the event's time on. Then [`Self::write`].
    pub(crate) fn counter(&mut self, track: u64, value: u64) {
        let e = &mut self.event;
        e.clear();
        varint(e, EVENT_TYPE, TYPE_COUNTER);
        varint(e, EVENT_TRACK_UUID, track);
        // int64 on the wire: the same varint for a value below 2^63.
        varint(e, EVENT_COUNTER_VALUE, value.min(i64::MAX as u64));
    }

    /// Starts a counter event with a floating-point value (a hardware
    /// counter's). Then [`Self::write`].
    pub(crate) fn double_counter(&mut self, track: u64, value: f64) {
        let e = &mut self.event;
        e.clear();
        varint(e, EVENT_TYPE, TYPE_COUNTER);
        varint(e, EVENT_TRACK_UUID, track);
        encode_key(EVENT_DOUBLE_COUNTER_VALUE, WireType::SixtyFourBit, e);
        e.extend_from_slice(&value.to_le_bytes());
    }

    /// An unsigned integer argument of the event begun.
    pub(crate) fn uint_arg(&mut self, name: Arg, v: u64) {
        let e = &mut self.event;
        let len = varint_len(ARG_NAME_IID, name as u64) + varint_len(ARG_UINT, v);
        encode_key(EVENT_DEBUG_ANNOTATIONS, WireType::LengthDelimited, e);
        encode_varint(len as u64, e);
        varint(e, ARG_NAME_IID, name as u64);
        varint(e, ARG_UINT, v);
    }

    /// A `XxYxZ` argument of the event begun (grid and workgroup sizes).
    pub(crate) fn dims_arg(&mut self, name: Arg, x: u32, y: u32, z: u32) {
        let mut b = itoa::Buffer::new();
        self.text.clear();
        self.text.push_str(b.format(x));
        self.text.push('x');
        self.text.push_str(b.format(y));
        self.text.push('x');
        self.text.push_str(b.format(z));
        let e = &mut self.event;
        let len = varint_len(ARG_NAME_IID, name as u64) + bytes_len(ARG_STRING, self.text.len());
        encode_key(EVENT_DEBUG_ANNOTATIONS, WireType::LengthDelimited, e);
        encode_varint(len as u64, e);
        varint(e, ARG_NAME_IID, name as u64);
        bytes(e, ARG_STRING, self.text.as_bytes());
    }

    /// Appends the event built as one `Trace.packet` at `timestamp`, with the
    /// interned entries its ids need.
    pub(crate) fn write(&mut self, out: &mut Vec<u8>, sequence_id: u32, timestamp: u64) {
        if !self.args_interned {
            self.args_interned = true;
            for arg in Arg::ALL {
                interned_entry(
                    &mut self.new_interned,
                    INTERNED_ARG_NAMES,
                    arg as u64,
                    arg.name(),
                );
            }
        }
        let mut len = varint_len(PACKET_TIMESTAMP, timestamp)
            + varint_len(PACKET_SEQUENCE_ID, u64::from(sequence_id))
            + bytes_len(PACKET_TRACK_EVENT, self.event.len())
            + varint_len(PACKET_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
        if !self.new_interned.is_empty() {
            len += bytes_len(PACKET_INTERNED_DATA, self.new_interned.len());
        }
        // Field 1 (`Trace.packet`), length-delimited.
        out.push(0x0a);
        encode_varint(len as u64, out);
        varint(out, PACKET_TIMESTAMP, timestamp);
        varint(out, PACKET_SEQUENCE_ID, u64::from(sequence_id));
        bytes(out, PACKET_TRACK_EVENT, &self.event);
        varint(out, PACKET_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
        if !self.new_interned.is_empty() {
            bytes(out, PACKET_INTERNED_DATA, &self.new_interned);
            self.new_interned.clear();
        }
    }
}
