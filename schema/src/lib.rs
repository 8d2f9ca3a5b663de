//! `rocwasm-schema`: the record tables a batch carries, declared once.
//!
//! A batch (what a buffer delivers and what crosses into a plugin) is a set
//! of column tables: API calls, kernel dispatches, memory copies, … Each
//! table's name, columns, element types, WIT names, permanent ids and the
//! columns that carry agent or kernel ids are written **once**, in
//! [`record_tables!`], and everything per-table elsewhere is derived from
//! that list:
//!
//! - the engine's row and column types and its `Batch` (`rocwasm-core`,
//!   through `rocwasm_core::batch_tables!`);
//! - the plugin host's conversion into the WIT batch and its projection
//!   (whose field names the compiler checks against `wit/types.wit`);
//! - the Rust plugin SDK's typed rows;
//! - the data form of the same list, [`TABLES`], for code that walks the
//!   schema at run time (the rank remap, the packed buffer's readers).
//!
//! A consumer writes a macro that takes the list and passes it to
//! `rocwasm_schema::record_tables!(its_macro)`; a new table or column is
//! then one entry here, and each consumer that must handle every table
//! either derives it or fails to compile until it does (see
//! `docs/ADDING_A_RECORD_KIND.md`).
//!
//! # Ids are permanent
//!
//! Table and column ids are numbers of this schema, not positions: an id
//! is never reused or renumbered, and a new column gets the next free id of
//! its table. They name columns in the packed buffer ([`packed`]), so a
//! reader built against an older schema still reads every column it knows
//! in a newer host's buffer.
//!
//! # The packed form
//!
//! [`packed`] is the byte layout of `rocwasm:plugin@0.3.0`'s batch: a header
//! naming each column by its ids, then the columns' values, 8-byte aligned,
//! so a reader hands out `&[u64]`/`&[u32]` slices into the buffer without
//! copying. `docs/WIT.md` says why this shape (it is the cheapest one the
//! `call_floor` bench measured).

#![forbid(unsafe_code)]

pub mod packed;
pub mod render;
mod tables;

pub use tables::{ColumnMut, ColumnRef, ColumnSchema, Element, Role, TableSchema, Width, TABLES};

/// The record tables, in batch order: calls `$callback!` with the whole
/// list.
///
/// Each table is written
/// `#[doc] field = id "wit-name" { #[doc] Row / Columns: columns }` and each
/// column `#[doc] id field: type = "wit-name"`, optionally followed by
/// `@agent` (the column holds an agent id of the symbol table),
/// `@kernel` (a kernel-symbol id) or `@counter` (a counter-name id). The first set of docs describes the
/// table (a batch field), the second its row. `record_tables!([path::cb] tokens)`
/// calls `path::cb!` with `tokens` before the list.
///
/// ```
/// macro_rules! count_columns {
///     ($($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
///         $(#[$rdoc:meta])* $row:ident / $cols:ident:
///         $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
///     }),+ $(,)?) => {
///         const COUNTS: &[(&str, usize)] = &[$((stringify!($table), [$($cid),+].len())),+];
///     };
/// }
/// rocwasm_schema::record_tables!(count_columns);
/// assert_eq!(COUNTS[1], ("kernel_dispatches", 18));
/// ```
#[macro_export]
macro_rules! record_tables {
    ($callback:ident) => {
        $crate::record_tables! { [$callback] }
    };
    // `record_tables!([path::to::cb] tokens…)` calls a macro by path and
    // passes the tokens before the list, for a consumer that reshapes the
    // list for another macro. (A path as tokens, not a `path` fragment:
    // only so can the call stand in an expression.)
    ([$($callback:tt)*] $($pass:tt)*) => {
        $($callback)*! {
            $($pass)*
            /// HSA, HIP, marker and other API calls (every `*_API` buffer kind).
            api_calls = 1 "api-calls" {
                /// One HSA, HIP, marker (or other API-domain) call: the SDK's 64-byte API record.
                ApiCall / ApiCallColumns:
                /// The buffer-tracing kind number: which API domain.
                1 kind: u32 = "kind",
                /// The operation within the kind (an index into the kind's operation names).
                2 operation: u32 = "operation",
                /// Internal correlation id of this call: unique in the run; the
                /// async records the call launches and its retirement record carry it.
                3 correlation_id: u64 = "correlation-id",
                /// The tool's external correlation id for this call in the buffer's
                /// context: a request sink's answer, else the top of the thread's
                /// pushed stack (the main thread's when that is empty); 0 when none.
                4 external_correlation_id: u64 = "external-correlation-id",
                /// Internal id of the enclosing call on the same thread, 0 at top level.
                5 ancestor: u64 = "ancestor",
                /// Kernel thread id (`gettid`) of the calling thread (rocprofv3's `Thread_Id`).
                6 thread_id: u64 = "thread-id",
                /// When the call began: `CLOCK_BOOTTIME` nanoseconds.
                7 start: u64 = "start",
                /// When the call returned, on the same clock; never before `start`.
                8 end: u64 = "end",
            },
            /// Completed kernel dispatches (`KERNEL_DISPATCH`).
            kernel_dispatches = 2 "kernel-dispatches" {
                /// A completed kernel dispatch (the SDK's 184-byte record with its dispatch info).
                KernelDispatch / KernelDispatchColumns:
                /// Internal correlation id of the API call that launched the kernel.
                1 correlation_id: u64 = "correlation-id",
                /// The external id the launching call had in the buffer's context,
                /// taken at launch (0 when none).
                2 external_correlation_id: u64 = "external-correlation-id",
                /// The thread that launched the kernel (not the completion thread).
                3 thread_id: u64 = "thread-id",
                /// When the GPU started the kernel: `CLOCK_BOOTTIME` nanoseconds (the
                /// runtime converts device timestamps to that clock).
                4 start: u64 = "start",
                /// When the GPU finished the kernel, on the same clock.
                5 end: u64 = "end",
                /// The GPU that ran it: an agent id of the symbol table (not the
                /// HSA agent handle).
                6 agent_id: u64 = "agent-id" @agent,
                /// The HSA queue's `hsa_queue_t::id` (unique per process) the
                /// dispatch packet was written to.
                7 queue_id: u64 = "queue-id",
                /// The HIP stream (rocprofv3's `Stream_Id`); 0 when unknown: live
                /// interception leaves it 0, replay takes it from the trace.
                8 stream_id: u64 = "stream-id",
                /// Which kernel: a kernel-symbol id of the symbol table; 0 when
                /// the packet's kernel object matched no known symbol.
                9 kernel_id: u64 = "kernel-id" @kernel,
                /// Number of this dispatch, unique in the run.
                10 dispatch_id: u64 = "dispatch-id",
                /// Private (scratch) memory per work-item in bytes, from the AQL packet.
                11 private_segment_size: u32 = "private-segment-size",
                /// Group (LDS) memory per work-group in bytes, from the AQL packet.
                12 group_segment_size: u32 = "group-segment-size",
                /// Work-group size along x, in work-items (AQL `workgroup_size_x`).
                13 workgroup_x: u32 = "workgroup-x",
                /// Work-group size along y, in work-items (1 for a 1-D launch).
                14 workgroup_y: u32 = "workgroup-y",
                /// Work-group size along z, in work-items (1 for 1-D and 2-D launches).
                15 workgroup_z: u32 = "workgroup-z",
                /// Grid size along x in work-items, not work-groups (AQL
                /// `grid_size_x`; HIP's `gridDim.x · blockDim.x`).
                16 grid_x: u32 = "grid-x",
                /// Grid size along y, in work-items.
                17 grid_y: u32 = "grid-y",
                /// Grid size along z, in work-items.
                18 grid_z: u32 = "grid-z",
            },
            /// Completed async memory copies (`MEMORY_COPY`).
            memory_copies = 3 "memory-copies" {
                /// A completed asynchronous memory copy.
                MemoryCopy / MemoryCopyColumns:
                /// Direction: a memory-copy operation number (host to device, …).
                1 operation: u32 = "operation",
                /// Internal correlation id of the API call that started the copy
                /// (e.g. `hipMemcpyAsync`).
                2 correlation_id: u64 = "correlation-id",
                /// The external id the starting call had in the buffer's context (0
                /// when none).
                3 external_correlation_id: u64 = "external-correlation-id",
                /// The thread that started the copy (not the completion thread).
                4 thread_id: u64 = "thread-id",
                /// When the copy engine started: `CLOCK_BOOTTIME` nanoseconds.
                5 start: u64 = "start",
                /// When the copy completed, on the same clock.
                6 end: u64 = "end",
                /// The agent whose memory receives the data (a CPU agent for host
                /// memory).
                7 dst_agent_id: u64 = "dst-agent-id" @agent,
                /// The agent whose memory the data comes from.
                8 src_agent_id: u64 = "src-agent-id" @agent,
                /// The HIP stream (rocprofv3's `Stream_Id`); 0 when unknown.
                9 stream_id: u64 = "stream-id",
                /// Bytes copied.
                10 bytes: u64 = "bytes",
                /// First destination byte, a virtual address of the process; 0 when
                /// the source does not record it (rocprofv3's CSV).
                11 dst_address: u64 = "dst-address",
                /// First source byte, a virtual address of the process; 0 when
                /// unknown.
                12 src_address: u64 = "src-address",
            },
            /// Allocations and frees (`MEMORY_ALLOCATION`).
            memory_allocations = 4 "memory-allocations" {
                /// A memory allocation or free.
                MemoryAllocation / MemoryAllocationColumns:
                /// A memory-allocation operation number (allocate, free, …).
                1 operation: u32 = "operation",
                /// Internal id of the traced API call the event happened in (e.g.
                /// `hipMalloc`); 0 outside any traced call.
                2 correlation_id: u64 = "correlation-id",
                /// The external id of the buffer's context on the calling thread (0
                /// when none).
                3 external_correlation_id: u64 = "external-correlation-id",
                /// The thread that allocated or freed.
                4 thread_id: u64 = "thread-id",
                /// When the runtime call began: `CLOCK_BOOTTIME` nanoseconds.
                5 start: u64 = "start",
                /// When it returned (equal to `start` for an instant event such as a free).
                6 end: u64 = "end",
                /// The agent owning the memory.
                7 agent_id: u64 = "agent-id" @agent,
                /// Start of the allocated (or freed) range, a virtual address.
                8 address: u64 = "address",
                /// Size of the range in bytes; a free repeats the size of the
                /// allocation it releases (0 when that allocation was not seen).
                9 allocation_size: u64 = "allocation-size",
            },
            /// Scratch-memory events (`SCRATCH_MEMORY`).
            scratch_memory = 5 "scratch-memory" {
                /// A scratch-memory event of a queue.
                ScratchMemory / ScratchMemoryColumns:
                /// A scratch-memory operation number (alloc, free, async reclaim).
                1 operation: u32 = "operation",
                /// The runtime's `rocprofiler_scratch_alloc_flag_t` bits for this
                /// event (0: none).
                2 flags: u32 = "flags",
                /// Internal id of the traced call the event happened in; 0 outside
                /// any traced call.
                3 correlation_id: u64 = "correlation-id",
                /// The external id of the buffer's context on the reporting thread (0
                /// when none).
                4 external_correlation_id: u64 = "external-correlation-id",
                /// The thread that reported the event.
                5 thread_id: u64 = "thread-id",
                /// When the event began: `CLOCK_BOOTTIME` nanoseconds.
                6 start: u64 = "start",
                /// When it ended, on the same clock.
                7 end: u64 = "end",
                /// The GPU whose scratch memory changed.
                8 agent_id: u64 = "agent-id" @agent,
                /// The HSA queue (`hsa_queue_t::id`) the scratch belongs to.
                9 queue_id: u64 = "queue-id",
                /// Bytes of scratch allocated, freed or reclaimed.
                10 allocation_size: u64 = "allocation-size",
            },
            /// Retired internal correlation ids (`CORRELATION_ID_RETIREMENT`).
            retirements = 6 "retirements" {
                /// An internal correlation id that no pending async record refers to any more.
                Retirement / RetirementColumns:
                /// When the id retired: `CLOCK_BOOTTIME` nanoseconds.
                1 timestamp: u64 = "timestamp",
                /// The retired internal correlation id: no record produced later
                /// refers to it.
                2 correlation_id: u64 = "correlation-id",
            },
            /// Runtime initialisations (`RUNTIME_INITIALIZATION`).
            runtime_initializations = 7 "runtime-initializations" {
                /// A runtime (HSA, HIP, marker, …) finished initialising.
                RuntimeInitialization / RuntimeInitializationColumns:
                /// Which runtime library: a runtime-initialization operation number.
                1 operation: u32 = "operation",
                /// The thread on which the runtime reported its initialisation.
                2 thread_id: u64 = "thread-id",
                /// When: `CLOCK_BOOTTIME` nanoseconds.
                3 timestamp: u64 = "timestamp",
                /// 10000·major + 100·minor + patch.
                4 version: u64 = "version",
                /// The SDK's `instance`: which initialisation of this runtime library
                /// in the process the record reports (interception reports 0).
                5 instance: u64 = "instance",
            },
            /// Hardware counter values of kernel dispatches (dispatch counting).
            counter_samples = 8 "counter-samples" {
                /// One counter's value for one kernel dispatch, summed over the
                /// counter's instances (a row of rocprofv3's `counter_collection.csv`),
                /// with the dispatch it was counted for.
                CounterSample / CounterSampleColumns:
                /// Internal correlation id of the API call that launched the kernel.
                1 correlation_id: u64 = "correlation-id",
                /// The launching call's external id in the buffer's context (0 when none).
                2 external_correlation_id: u64 = "external-correlation-id",
                /// The thread that launched the kernel.
                3 thread_id: u64 = "thread-id",
                /// When the GPU started the kernel: `CLOCK_BOOTTIME` nanoseconds.
                4 start: u64 = "start",
                /// When the kernel completed, on the same clock.
                5 end: u64 = "end",
                /// The GPU agent that ran it.
                6 agent_id: u64 = "agent-id" @agent,
                /// The HSA queue it was dispatched on.
                7 queue_id: u64 = "queue-id",
                /// The kernel symbol.
                8 kernel_id: u64 = "kernel-id" @kernel,
                /// The dispatch's id, as its kernel-dispatch record has it.
                9 dispatch_id: u64 = "dispatch-id",
                /// Scratch memory per work-item, in bytes.
                10 private_segment_size: u32 = "private-segment-size",
                /// Group (LDS) memory per work-group, in bytes.
                11 group_segment_size: u32 = "group-segment-size",
                /// Work-group size, x.
                12 workgroup_x: u32 = "workgroup-x",
                /// Work-group size, y.
                13 workgroup_y: u32 = "workgroup-y",
                /// Work-group size, z.
                14 workgroup_z: u32 = "workgroup-z",
                /// Grid size in work-items, x.
                15 grid_x: u32 = "grid-x",
                /// Grid size in work-items, y.
                16 grid_y: u32 = "grid-y",
                /// Grid size in work-items, z.
                17 grid_z: u32 = "grid-z",
                /// The counter: a counter-name id of the run's symbol table.
                18 counter_id: u32 = "counter-id" @counter,
                /// The value: an IEEE-754 double's bits (`f64::from_bits`).
                19 value: u64 = "value",
            },
        }
    };
}
