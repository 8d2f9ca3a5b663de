//! rocprofv3's `results.json` (`--output-format json`): the schema, the
//! writer, and what a reader may expect.
//!
//! # The format
//!
//! One JSON document, `[<name>_]results.json`, with one object per profiled
//! process under the top key `rocprofiler-sdk-tool`, laid out as rocprofv3's
//! JSON output of ROCprofiler-SDK 1.0 (ROCm 7.0):
//!
//! ```text
//! { "rocprofiler-sdk-tool": [ {
//!     "metadata": { pid, ppid, hostname, command, init_time, fini_time },
//!     "agents": [ { id: {handle}, type, node_id, logical_node_id, name, product_name } ],
//!     "strings": { "buffer_records": [ { kind: NAME, operations: [NAME…] } ] },   // index = kind number
//!     "code_objects": [ … ], "kernel_symbols": [ … ],
//!     "buffer_records": { kernel_dispatch, hip_api, hsa_api, marker_api, rccl_api,
//!                         memory_copy, memory_allocation, scratch_memory,
//!                         rocdecode_api, rocjpeg_api,
//!                         correlation_id_retirement, runtime_initialization }
//! } ] }
//! ```
//!
//! The last two categories are rocwasm's: rocprofv3 writes those kinds to
//! no file, and without them a JSON replay would lose a run's retired
//! correlation ids and runtime initialisations (readers skip a key they do
//! not know). OpenMP calls have no category; the writer says how many it
//! left out.
//!
//! Every object is a type of [`schema`], which both the writer
//! ([`JsonSink`]) and the reader ([`crate::replay`]) use. Records carry the
//! SDK's C field names (`correlation_id: {internal, external}`,
//! `start_timestamp`, `dispatch_info: {agent_id: {handle}, …}`) and kinds
//! and operations as numbers; the `strings` tables name them, which is how a
//! reader of another SDK version maps them (numbers shift between
//! releases). Operations registered under synthetic numbers (see
//! [`crate::names`]) are listed in a `synthetic_operations` array beside
//! `operations`. Unlike the CSV files, the JSON file keeps every field of
//! every record, the symbol tables and the agents.
//!
//! # Reading ([`crate::replay`])
//!
//! The document is parsed straight into the schema's types (never a generic
//! value tree). Tolerated, so that rocprofv3's files of older and newer
//! releases load:
//!
//! - any field missing, except `rocprofiler-sdk-tool` (defaults: 0, empty);
//!   unknown fields are ignored, field order does not matter;
//! - handles as `{"handle": n}` or as a bare number; external correlation
//!   ids and addresses as a bare number or as a handle;
//! - agent `type` as a number or a name (`"GPU"`); `logical_node_id`
//!   missing (then `node_id`); a code object's agent as `rocp_agent` or
//!   `agent_id`; a kernel's display name from `formatted_kernel_name`,
//!   `demangled_kernel_name`, `truncated_kernel_name` or `kernel_name`,
//!   the first that is not empty;
//! - kind and operation numbers of another SDK: mapped by name through the
//!   file's own `strings.buffer_records` when it has one, else taken as
//!   this build's numbers.
//!
//! Several processes are replayed one after another; the metadata is the
//! first process's.

mod fast;
pub(crate) mod reader;
pub mod schema;
mod writer;

pub use schema::Document;
pub use writer::JsonSink;
