//! The fixed-size wire form of a buffered record.
//!
//! A producer must do as little as possible: it copies a record into the
//! buffer as a handful of 64-bit words and leaves. The callback thread later
//! decodes the words into the columns of a [`Batch`]. Words (not bytes) because
//! the buffer is an array of `AtomicU64` — that is how we share memory between
//! threads without `unsafe`; a relaxed atomic store compiles to a plain `mov`.
//!
//! Each record is charged its ROCprofiler-SDK size (64 B for an API call,
//! 184 B for a kernel dispatch, …) against the buffer's size and watermark, so
//! a buffer of N bytes holds as many records as the SDK's would. The encoding
//! always fits inside that charge.
//!
//! The first word is a header: `family << 56 | kind << 32 | operation`.
//!
//! Each family's wire form is a fixed-size array ([`Encode<N>`]): the buffer's
//! copy loop then has a constant length and compiles to `N` plain stores, with
//! no scratch array to clear and no length to carry around. The forms are
//! derived from the record schema (`encode_tables!`): the family is the
//! table's schema id, `kind` and `operation` ride in the header, and every
//! other column takes one word, in schema order.

use std::sync::atomic::{
    AtomicU64,
    Ordering::{Acquire, Relaxed},
};

use crossbeam_utils::Backoff;

use crate::batch::*;

/// A record as a producer hands it to a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// An API call of any `*_API` kind; charged 64 B, delivered in
    /// [`Batch::api_calls`].
    Api(ApiCall),
    /// A completed kernel dispatch; charged 184 B, delivered in
    /// [`Batch::kernel_dispatches`].
    KernelDispatch(KernelDispatch),
    /// A completed async memory copy; charged 96 B, delivered in
    /// [`Batch::memory_copies`].
    MemoryCopy(MemoryCopy),
    /// An allocation or free; charged 88 B, delivered in
    /// [`Batch::memory_allocations`].
    MemoryAllocation(MemoryAllocation),
    /// A scratch-memory event; charged 96 B, delivered in
    /// [`Batch::scratch_memory`].
    ScratchMemory(ScratchMemory),
    /// A retired correlation id; charged 32 B, delivered in
    /// [`Batch::retirements`].
    Retirement(Retirement),
    /// A runtime's initialisation; charged 72 B, delivered in
    /// [`Batch::runtime_initializations`].
    RuntimeInitialization(RuntimeInitialization),
    /// One counter's value for a dispatch; charged 160 B (the SDK's 40-byte
    /// counter record with its share of the dispatch's header), delivered
    /// in [`Batch::counter_samples`].
    CounterSample(CounterSample),
}

// The families: each table's schema id (`rocwasm_schema`), which the
// header's top byte carries (`a_familys_number_is_its_tables_schema_id`).
const API: u64 = 1;
const DISPATCH: u64 = 2;
const COPY: u64 = 3;
const ALLOC: u64 = 4;
const SCRATCH: u64 = 5;
const RETIRE: u64 = 6;
const INIT: u64 = 7;
const COUNTER: u64 = 8;

/// The SDK record size of each family, in bytes (FACTS §1).
const fn sdk_size(family: u64) -> u64 {
    match family {
        API => 64,
        DISPATCH => 184,
        COPY => 96,
        ALLOC => 88,
        SCRATCH => 96,
        RETIRE => 32,
        INIT => 72,
        COUNTER => 160,
        _ => 0,
    }
}

#[inline(always)]
const fn header(family: u64, kind: u32, op: u32) -> u64 {
    family << 56 | (kind as u64 & 0xff_ffff) << 32 | op as u64
}

impl Record {
    fn family(&self) -> u64 {
        match self {
            Record::Api(_) => API,
            Record::KernelDispatch(_) => DISPATCH,
            Record::MemoryCopy(_) => COPY,
            Record::MemoryAllocation(_) => ALLOC,
            Record::ScratchMemory(_) => SCRATCH,
            Record::Retirement(_) => RETIRE,
            Record::RuntimeInitialization(_) => INIT,
            Record::CounterSample(_) => COUNTER,
        }
    }

    /// Bytes this record is charged in a buffer (its SDK size).
    pub fn byte_size(&self) -> u64 {
        sdk_size(self.family())
    }

    /// Hands the record's words to `sink` as a fixed-size array, so the
    /// sink's copy loop has a constant length and unrolls into plain stores.
    #[inline(always)]
    pub(crate) fn encode_into<S: WordSink>(&self, sink: S) -> S::Output {
        match self {
            Record::Api(r) => sink.put(r),
            Record::KernelDispatch(r) => sink.put(r),
            Record::MemoryCopy(r) => sink.put(r),
            Record::MemoryAllocation(r) => sink.put(r),
            Record::ScratchMemory(r) => sink.put(r),
            Record::Retirement(r) => sink.put(r),
            Record::RuntimeInitialization(r) => sink.put(r),
            Record::CounterSample(r) => sink.put(r),
        }
    }

    /// The record's words, for tests.
    #[cfg(test)]
    pub(crate) fn encode(&self) -> Vec<u64> {
        struct ToVec;
        impl WordSink for ToVec {
            type Output = Vec<u64>;
            fn put<const N: usize, T: Encode<N>>(self, r: &T) -> Vec<u64> {
                r.words().to_vec()
            }
        }
        self.encode_into(ToVec)
    }
}

/// One record family's wire form: `N` words, charged `BYTES` in a buffer.
pub(crate) trait Encode<const N: usize>: Sized {
    /// The SDK size of the record (≥ `8 * N`).
    const BYTES: u64;
    fn words(&self) -> [u64; N];
    /// The inverse of [`Encode::words`] (the header's family is already known).
    fn from_words(w: &[u64; N]) -> Self;
}

#[inline(always)]
fn kind_of(header: u64) -> u32 {
    ((header >> 32) & 0xff_ffff) as u32
}

#[inline(always)]
fn op_of(header: u64) -> u32 {
    header as u32
}

/// Receives a record's words from [`Record::encode_into`].
pub(crate) trait WordSink {
    type Output;
    fn put<const N: usize, T: Encode<N>>(self, record: &T) -> Self::Output;
}

/// A column value as a word of the wire form, and back.
trait Word: Copy {
    fn to_word(self) -> u64;
    fn from_word(w: u64) -> Self;
}

impl Word for u64 {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self
    }
    #[inline(always)]
    fn from_word(w: u64) -> u64 {
        w
    }
}

impl Word for u32 {
    #[inline(always)]
    fn to_word(self) -> u64 {
        self as u64
    }
    #[inline(always)]
    fn from_word(w: u64) -> u32 {
        w as u32
    }
}

/// Words a column takes after the header: none for `kind` and `operation`
/// (they live in the header), one for any other.
macro_rules! body_words {
    (kind) => {
        0
    };
    (operation) => {
        0
    };
    ($field:ident) => {
        1
    };
}

/// Stores a column: `kind` and `operation` into the header's parts, any
/// other into the next word.
macro_rules! put_word {
    (kind, $v:expr, $w:ident, $i:ident, $kind:ident, $op:ident) => {
        $kind = $v
    };
    (operation, $v:expr, $w:ident, $i:ident, $kind:ident, $op:ident) => {
        $op = $v
    };
    ($field:ident, $v:expr, $w:ident, $i:ident, $kind:ident, $op:ident) => {{
        $w[$i] = Word::to_word($v);
        $i += 1;
    }};
}

/// Loads a column back: the inverse of `put_word!`.
macro_rules! take_word {
    (kind, $ty:ty, $w:ident, $i:ident) => {
        kind_of($w[0])
    };
    (operation, $ty:ty, $w:ident, $i:ident) => {
        op_of($w[0])
    };
    ($field:ident, $ty:ty, $w:ident, $i:ident) => {{
        let v = <$ty as Word>::from_word($w[$i]);
        $i += 1;
        v
    }};
}

/// Every table's wire form, from the schema (`rocwasm_schema::record_tables!`):
/// the header (`family`: the table's id; `kind` and `operation` when the
/// table has those columns), then one word per other column in schema
/// order. A table whose words would not fit its SDK size fails to compile.
macro_rules! encode_tables {
    ($($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
        $(#[$rdoc:meta])* $row:ident / $cols:ident:
        $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
    }),+ $(,)?) => {$(
        impl $row {
            /// Words of the wire form: the header and one per column not in it.
            const WORDS: usize = 1 $(+ body_words!($field))+;
        }

        const _: () = assert!(
            sdk_size($tid) >= 8 * $row::WORDS as u64,
            concat!("the wire form of ", stringify!($row), " does not fit its SDK size (sdk_size)")
        );

        impl Encode<{ $row::WORDS }> for $row {
            const BYTES: u64 = sdk_size($tid);

            #[inline(always)]
            #[allow(unused_assignments, unused_mut)]
            fn words(&self) -> [u64; $row::WORDS] {
                let mut w = [0u64; $row::WORDS];
                let mut i = 1;
                let (mut kind, mut op) = (0u32, 0u32);
                $(put_word!($field, self.$field, w, i, kind, op);)+
                w[0] = header($tid, kind, op);
                w
            }

            #[inline(always)]
            #[allow(unused_assignments)]
            fn from_words(w: &[u64; $row::WORDS]) -> Self {
                let mut i = 1;
                $row { $($field: take_word!($field, $ty, w, i),)+ }
            }
        }
    )+};
}

rocwasm_schema::record_tables!(encode_tables);

/// The family of a chunk marker: the first word of a chunk a producer
/// thread reserved for its own records (see `buffer::chunks`), `CHUNK << 56 |
/// the chunk's length in bytes`. Not a record.
const CHUNK: u64 = 0xc;

/// The marker word of a chunk of `bytes` (marker included).
pub(crate) const fn chunk_marker(bytes: u64) -> u64 {
    CHUNK << 56 | bytes
}

/// Decodes the records in the first `end_bytes` of `words` (as written by a
/// buffer: each at an offset advancing by the previous record's SDK size)
/// into a new batch, and zeroes the words it read.
///
/// A header is never zero, so a zero header means the producer that reserved
/// the place has not finished copying: wait for it. Its release store of the
/// header, read here with acquire, makes the record's other words visible.
/// Inside a chunk a zero header ends the chunk instead: the buffer calls this
/// only once no producer can still store into the chunks (`Slots::quiesce`).
/// Zeroing every word read leaves the region all zero again, which is what
/// the next use of the words relies on.
///
/// Two passes: the first reads only the headers (waiting where needed) to
/// count each family, so every column is allocated once at its final size
/// instead of growing (and copying) as rows arrive.
pub(crate) fn decode(words: &[AtomicU64], end_bytes: u64) -> Batch {
    decode_in(words, end_bytes, Mode::Take)
}

/// As [`decode`], leaving the words as they are (a durable buffer zeroes
/// them after its sink has the records).
pub(crate) fn decode_keep(words: &[AtomicU64], end_bytes: u64) -> Batch {
    decode_in(words, end_bytes, Mode::Keep)
}

/// The records a process that died left in a half: as [`decode`], but a
/// zero header outside a chunk (a record whose writer died before
/// committing it) ends the walk instead of being waited for, and so does
/// anything that is not a whole record. The words are left as they are.
pub(crate) fn recover(words: &[AtomicU64], end_bytes: u64) -> Batch {
    decode_in(words, end_bytes, Mode::Recover)
}

/// How [`decode_in`] treats the words.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Wait at zero headers; zero what was read.
    Take,
    /// Wait at zero headers; leave the words.
    Keep,
    /// Stop at zero headers and at anything damaged; leave the words.
    Recover,
}

fn decode_in(words: &[AtomicU64], end_bytes: u64, mode: Mode) -> Batch {
    let end = ((end_bytes / 8) as usize).min(words.len());
    let wait = mode != Mode::Recover;
    let whole = |family: u64, pos: usize| {
        let size = sdk_size(family) as usize / 8;
        size != 0 && pos + size <= end
    };
    let mut counts = [0usize; 9];
    walk(words, end, wait, false, |family, pos| {
        if !whole(family, pos) {
            return false; // corrupt: the second pass reports it
        }
        counts[family as usize] += 1;
        true
    });
    let mut batch = Batch {
        api_calls: ApiCallColumns::with_capacity(counts[API as usize]),
        kernel_dispatches: KernelDispatchColumns::with_capacity(counts[DISPATCH as usize]),
        memory_copies: MemoryCopyColumns::with_capacity(counts[COPY as usize]),
        memory_allocations: MemoryAllocationColumns::with_capacity(counts[ALLOC as usize]),
        scratch_memory: ScratchMemoryColumns::with_capacity(counts[SCRATCH as usize]),
        retirements: RetirementColumns::with_capacity(counts[RETIRE as usize]),
        runtime_initializations: RuntimeInitializationColumns::with_capacity(counts[INIT as usize]),
        counter_samples: CounterSampleColumns::with_capacity(counts[COUNTER as usize]),
    };
    let zero = mode == Mode::Take;
    walk(words, end, wait, zero, |family, pos| {
        if mode == Mode::Recover && !whole(family, pos) {
            return false;
        }
        let at = &words[pos..];
        match family {
            API => batch.api_calls.push(load(at, zero)),
            DISPATCH => batch.kernel_dispatches.push(load(at, zero)),
            COPY => batch.memory_copies.push(load(at, zero)),
            ALLOC => batch.memory_allocations.push(load(at, zero)),
            SCRATCH => batch.scratch_memory.push(load(at, zero)),
            RETIRE => batch.retirements.push(load(at, zero)),
            INIT => batch.runtime_initializations.push(load(at, zero)),
            COUNTER => batch.counter_samples.push(load(at, zero)),
            // Only the buffer writes these words and it writes whole records;
            // anything else is a bug in the buffer protocol.
            other => panic!("corrupt buffer record family {other} at byte {}", pos * 8),
        }
        true
    });
    batch
}

/// Calls `visit(family, word index)` for each record in the first `end`
/// words, in order, until it returns false. At a zero header outside
/// chunks it waits (`wait`, module docs of `buffer`) or stops; with
/// `zero_markers`, clears the chunk markers it passes (`visit` clears the
/// records).
fn walk(
    words: &[AtomicU64],
    end: usize,
    wait: bool,
    zero_markers: bool,
    mut visit: impl FnMut(u64, usize) -> bool,
) {
    let mut pos = 0;
    while pos < end {
        let backoff = Backoff::new();
        let header = loop {
            match words[pos].load(Acquire) {
                0 if wait => backoff.snooze(),
                0 => return,
                h => break h,
            }
        };
        let family = header >> 56;
        if family == CHUNK {
            let stop = (pos + (header & 0xffff_ffff) as usize / 8).min(end);
            if zero_markers {
                words[pos].store(0, Relaxed);
            }
            let mut at = pos + 1;
            while at < stop {
                let h = words[at].load(Acquire);
                let size = sdk_size(h >> 56) as usize / 8;
                if h == 0 || !visit(h >> 56, at) {
                    break;
                }
                at += size;
            }
            pos = stop.max(pos + 1);
            continue;
        }
        if !visit(family, pos) {
            return;
        }
        pos += sdk_size(family) as usize / 8;
    }
}

/// Reads one record of family `T` from the start of `words`, zeroing its
/// words when `zero`.
#[inline(always)]
fn load<const N: usize, T: Encode<N>>(words: &[AtomicU64], zero: bool) -> T {
    let slots: &[AtomicU64; N] = words[..N].try_into().expect("a range of N words");
    T::from_words(&slots.each_ref().map(|w| {
        let v = w.load(Relaxed);
        if zero {
            w.store(0, Relaxed);
        }
        v
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row of every table, each column of the schema set to a value of
    /// its own (full-width, but `kind`, which the header keeps in 24 bits).
    fn one_row_of_every_table() -> Batch {
        use rocwasm_schema::{ColumnMut, TABLES};
        let mut b = Batch::default();
        b.api_calls.push(ApiCall::default());
        b.kernel_dispatches.push(KernelDispatch::default());
        b.memory_copies.push(MemoryCopy::default());
        b.memory_allocations.push(MemoryAllocation::default());
        b.scratch_memory.push(ScratchMemory::default());
        b.retirements.push(Retirement::default());
        b.runtime_initializations
            .push(RuntimeInitialization::default());
        b.counter_samples.push(CounterSample::default());
        let mut n = 0u32;
        for t in TABLES {
            for c in t.columns {
                n += 1;
                match b.column_mut(t.id, c.id).expect("a schema column") {
                    ColumnMut::U32(v) if c.wit == "kind" => v[0] = n,
                    ColumnMut::U32(v) => v[0] = u32::MAX - n,
                    ColumnMut::U64(v) => v[0] = u64::MAX - u64::from(n),
                }
            }
        }
        assert_eq!(b.len(), TABLES.len(), "one row of every table");
        b
    }

    #[test]
    fn a_familys_number_is_its_tables_schema_id() {
        use rocwasm_schema::TableSchema;
        for (family, table) in [
            (API, "api-calls"),
            (DISPATCH, "kernel-dispatches"),
            (COPY, "memory-copies"),
            (ALLOC, "memory-allocations"),
            (SCRATCH, "scratch-memory"),
            (RETIRE, "retirements"),
            (INIT, "runtime-initializations"),
        ] {
            assert_eq!(
                Some(family),
                TableSchema::by_wit_name(table).map(|t| u64::from(t.id))
            );
        }
    }

    #[test]
    fn every_family_round_trips_within_its_sdk_size() {
        let b = one_row_of_every_table();
        let records: Vec<Record> = b
            .api_calls
            .rows()
            .map(Record::Api)
            .chain(b.kernel_dispatches.rows().map(Record::KernelDispatch))
            .chain(b.memory_copies.rows().map(Record::MemoryCopy))
            .chain(b.memory_allocations.rows().map(Record::MemoryAllocation))
            .chain(b.scratch_memory.rows().map(Record::ScratchMemory))
            .chain(b.retirements.rows().map(Record::Retirement))
            .chain(
                b.runtime_initializations
                    .rows()
                    .map(Record::RuntimeInitialization),
            )
            .collect();
        let mut mem: Vec<u64> = Vec::new();
        let mut total = 0;
        for r in &records {
            let w = r.encode();
            assert!(
                w.len() as u64 * 8 <= r.byte_size(),
                "{r:?} does not fit its SDK size"
            );
            mem.extend_from_slice(&w);
            mem.resize((total + r.byte_size()) as usize / 8, 0);
            total += r.byte_size();
        }
        let mem: Vec<AtomicU64> = mem.into_iter().map(AtomicU64::new).collect();
        let batch = decode(&mem, total);
        assert_eq!(batch.len(), records.len());
        assert!(
            mem.iter().all(|w| w.load(Relaxed) == 0),
            "decoding leaves the words zero for their next use"
        );
        assert!(batch.is_consistent());
        let expected: Vec<Record> = records.to_vec();
        let decoded: Vec<Record> = batch
            .api_calls
            .rows()
            .map(Record::Api)
            .chain(batch.kernel_dispatches.rows().map(Record::KernelDispatch))
            .chain(batch.memory_copies.rows().map(Record::MemoryCopy))
            .chain(
                batch
                    .memory_allocations
                    .rows()
                    .map(Record::MemoryAllocation),
            )
            .chain(batch.scratch_memory.rows().map(Record::ScratchMemory))
            .chain(batch.retirements.rows().map(Record::Retirement))
            .chain(
                batch
                    .runtime_initializations
                    .rows()
                    .map(Record::RuntimeInitialization),
            )
            .collect();
        assert_eq!(decoded, expected);
    }
}
