//! rocprofv3's CSV trace files (`--output-format csv`): the schema, the
//! writer, and what a reader may expect.
//!
//! # The format
//!
//! One file per record family in the output directory, named
//! `[<name>_]<family>.csv` (`kernel_trace.csv`, `hip_api_trace.csv`,
//! `memory_copy_trace.csv`, …; `<name>` is the `-o` output name). The first
//! line is the header; every other line is one record. The header of each
//! file and the meaning of each column are those of rocprofv3 as shipped
//! with ROCm 7.0 and are defined once, in [`columns`]: [`TraceFile`] names
//! the files and lists their [`Column`]s in order.
//!
//! The dialect is rocprofv3's: comma-separated, text fields (header names
//! included) in double quotes with a `"` inside doubled, numbers bare, `\n`
//! after every line, no trailing comma. Timestamps are nanoseconds on the
//! records' clock; kinds, API functions, copy directions and allocation
//! operations are written by **name** (`HIP_RUNTIME_API`, `hipMemcpy`,
//! `MEMORY_COPY_HOST_TO_DEVICE`), never by number, because numbers shift
//! between SDK releases; agents are written by their logical node index;
//! addresses in hex (`0x7f00…`). Kernel names are the demangled names.
//!
//! What the files do not carry: copy sizes and addresses, external
//! correlation ids, API call ancestors, the thread of copies and
//! allocations, the correlation id of scratch events, code objects and
//! agents' names. A replayed CSV trace reads those as 0 (or as
//! placeholders: `agent 2`).
//!
//! # Reading ([`crate::replay`])
//!
//! The reader finds every field by its header name ([`Column::spellings`]),
//! never by position, which is what lets it read the column sets older
//! rocprofv3 versions wrote:
//!
//! - ROCm 6.x kernel traces without `Stream_Id`, with
//!   `Private_Segment_Size` / `Group_Segment_Size` for `Scratch_Size` /
//!   `LDS_Block_Size` and without register counts; the earliest layout
//!   without `Thread_Id` and `Dispatch_Id` either. A missing column reads as
//!   0; only [`TraceFile::required_columns`] must be there.
//! - Agents as a bare number or with a word before it (`Agent 2`, `GPU 1`).
//! - Numbers in decimal, negative, or hex with `0x`; an empty field is 0.
//! - A `Domain` of `HIP_API`/`HIP` or `HSA_API`/`HSA`, or one this build
//!   does not know: the file's family decides. Operation names with or
//!   without their kind's prefix (`HOST_TO_DEVICE`).
//! - Names this build does not know (a newer HIP's functions) are kept
//!   under synthetic operation numbers (see [`crate::names`]).
//! - A file's family comes from its name ([`TraceFile::from_path`]) or,
//!   failing that, from its header ([`TraceFile::from_header`]).

pub(crate) mod reader;
pub mod schema;
mod writer;

pub use schema::{Column, TraceFile};
pub use writer::CsvSink;
