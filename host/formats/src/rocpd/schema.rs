//! The rocpd schema (version 3): every table, its columns and their SQL
//! declarations, defined once. The writer ([`super::RocpdSink`]) creates the
//! tables and inserts rows through these names; the reader
//! ([`crate::replay`]) selects through them.
//!
//! # Layout
//!
//! Each run adds per-run tables `<base>_<uuid>` (`rocpd_region_0a1b…`) and
//! (re)creates plain views `<base>` (`rocpd_region`) as the `UNION ALL` of
//! every run in the file, so that ranks or repeated runs writing one file
//! merge. Each table is a module below: [`kernel_dispatch::TABLE`] is the
//! base name, [`kernel_dispatch::AGENT_ID`] a column, and every column's
//! docs give its SQL declaration.
//!
//! Table and column names follow rocprofv3's rocpd databases (ROCm 7.0) so
//! that queries written for them work here, e.g.
//!
//! ```sql
//! SELECT s.display_name, k.end - k.start
//! FROM rocpd_kernel_dispatch k
//! JOIN rocpd_info_kernel_symbol s ON s.id = k.kernel_id AND s.guid = k.guid;
//! ```
//!
//! Ids are per run; every row carries its run's `guid`, so joins across a
//! merged file match on `(id, guid)`.
//!
//! # Foreign keys
//!
//! Every table, column and foreign key is rocpd's (rocprofiler-sdk's
//! `rocpd_tables.sql`, schema version 3), and the per-run tables declare
//! the foreign keys (a column marked `=> "parent"` below references
//! `parent_<uuid>.id`; [`foreign_keys`] lists them all). rocpd's views join
//! on exactly these keys, with `INNER JOIN`s, so a record whose key does not
//! resolve vanishes from them. What the ids are, as rocprofv3 writes them:
//!
//! | column | references | value |
//! |---|---|---|
//! | `nid` | `rocpd_info_node.id` | the run's node row |
//! | `pid` (not in `rocpd_info_process`) | `rocpd_info_process.id` | the process row, whose `id` is the OS pid |
//! | `tid` (not in `rocpd_info_thread`) | `rocpd_info_thread.id` | the thread row, whose `id` is the OS thread id |
//! | `agent_id`, `src_agent_id`, `dst_agent_id` | `rocpd_info_agent.id` | the agent |
//! | `queue_id`, `stream_id` | `rocpd_info_queue.id`, `rocpd_info_stream.id` | the queue / stream handle (0: the default one) |
//! | `kernel_id` | `rocpd_info_kernel_symbol.id` | the kernel id of the dispatch record |
//! | `code_object_id` | `rocpd_info_code_object.id` | the code object defining the kernel |
//! | `name_id`, `region_name_id`, `category_id` | `rocpd_string.id` | an interned string (`region_name_id` of a dispatch: the enclosing region's name, `""` for none) |
//! | `event_id` | `rocpd_event.id` | the record's event |
//!
//! A writer may insert rows in any order as long as `PRAGMA foreign_keys`
//! is off on its connection (SQLite's default, but not rusqlite's bundled
//! build's); the finished file must pass `PRAGMA foreign_key_check`.
//!
//! The event of a record holds its correlation as rocprofv3 does:
//! `stack_id` = the internal correlation id, `parent_stack_id` = its
//! ancestor (an async record's own internal id), `correlation_id` = the
//! external correlation id. (rocwasm databases written before this have
//! `stack_id` NULL, the internal id in `correlation_id` and the external
//! one in `extdata`.)
//!
//! Besides names, the schema fixes a few values: agent `type`
//! ([`AGENT_CPU`], [`AGENT_GPU`]), code object `storage_type`
//! ([`STORAGE_FILE`], [`STORAGE_MEMORY`]), how allocation and scratch
//! operations become `rocpd_memory_allocate`'s `type` and `level`
//! ([`MemoryOperation`]) and the `extdata` JSON ([`EventExtdata`]).
//!
//! # Columns left NULL, and why
//!
//! What rocprofv3's writer fills is filled (the info tables' structs in
//! `extdata`, from which rocpd's `code_objects` and `kernel_symbols` views
//! read sizes, storage, entry offsets and names; the node's `uname`
//! fields; rocwasm also fills `rocpd_info_code_object.storage_type`, which
//! rocprofv3 keeps in `extdata` only). These stay NULL or empty:
//! - `rocpd_memory_copy.queue_id`: the SDK's memory-copy record names no
//!   queue (a copy is the runtime's, not a user queue's), and rocprofv3
//!   writes none either;
//! - `rocpd_info_process.extdata`: rocprofv3 writes its own options there
//!   (its tool's configuration); rocwasm's options are not rocprofv3's, so
//!   it stays `{}` (the run's command line is in `command`, the
//!   application's environment in `environment`, as rocprofv3 writes it);
//! - `rocpd_arg` of a replay: a recording's arguments have no place in a
//!   batch, so a database written by `rocwasm replay` has none (the
//!   replay's report counts the rows it did not read). A live run with
//!   `--api-args` fills it (without, it stays empty: recording them costs
//!   a traced call several times its tracing, docs/PERFORMANCE.md): one
//!   row per argument of each traced API call (`position` from 0,
//!   the C `type` as the API's header spells it, `name`, `value` as text),
//!   as rocprofv3 does; a roctx range (a marker record) carries its
//!   message in `extdata` instead. Calls whose records were still in the
//!   application's buffers when it was killed have no arguments.
//!
//! # Reading
//!
//! A reader takes each run's tables ([`run_suffixes`]); a database with the
//! plain names as tables and no per-run suffix ([`has_plain_tables`], as
//! some rocprofv3 versions write) is one run. Nullable columns read as 0 or
//! empty; an `extdata` that is not the JSON expected reads as empty.

use rocwasm_core::ops::{allocation, scratch};
use rusqlite::Connection;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

/// Declares the tables: one module per table with its base name, a constant
/// per column and the column list with declarations; then [`TABLES`] and
/// the DDL list.
macro_rules! tables {
    ($(
        $(#[$tmeta:meta])*
        $module:ident = $table:literal {
            $( $(#[$cmeta:meta])* $name:ident = $column:literal $decl:literal $(=> $parent:literal)?, )+
        }
    )+) => {
        $(
            $(#[$tmeta])*
            pub mod $module {
                #[doc = concat!("`", $table, "`: the base name (per-run tables are `", $table, "_<uuid>`, the view over every run is `", $table, "`).")]
                pub const TABLE: &str = $table;
                $(
                    #[doc = concat!("`", $column, " ", $decl, "`", "\n\n")]
                    $(#[doc = concat!("References `", $parent, ".id` (foreign key).\n\n")])?
                    $(#[$cmeta])*
                    pub const $name: &str = $column;
                )+
                /// Every column and its SQL declaration, in table order
                /// (`{guid}` stands for the run's guid).
                pub const COLUMNS: &[(&str, &str)] = &[$(($column, $decl)),+];
                /// The foreign keys: each column and the base name of the
                /// table whose `id` it references (in the same run).
                pub const FOREIGN_KEYS: &[(&str, &str)] = &[$($(($column, $parent),)?)+];
            }
        )+

        /// Base names of the per-run tables, in creation order.
        pub const TABLES: &[&str] = &[$($table),+];

        /// Every table with its columns and foreign keys, in creation order.
        const SCHEMA: &[(&str, &[(&str, &str)], &[(&str, &str)])] =
            &[$(($table, $module::COLUMNS, $module::FOREIGN_KEYS)),+];

        /// Every foreign key of the schema: `(table, column, parent table)`,
        /// base names, in creation order.
        pub fn foreign_keys() -> Vec<(&'static str, &'static str, &'static str)> {
            SCHEMA
                .iter()
                .flat_map(|(t, _, fks)| fks.iter().map(move |(c, p)| (*t, *c, *p)))
                .collect()
        }
    };
}

tables! {
    /// `rocpd_metadata`: key/value facts of the run (`schema_version`,
    /// `uuid`, `guid`).
    metadata = "rocpd_metadata" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        TAG = "tag" "TEXT NOT NULL",
        VALUE = "value" "TEXT NOT NULL",
    }
    /// `rocpd_string`: interned strings (function names, copy directions,
    /// categories), referred to by `name_id`, `category_id`.
    string = "rocpd_string" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        STRING = "string" "TEXT NOT NULL UNIQUE ON CONFLICT ABORT",
    }
    /// `rocpd_info_node`: the machine (one per run).
    info_node = "rocpd_info_node" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        HASH = "hash" "BIGINT NOT NULL UNIQUE",
        MACHINE_ID = "machine_id" "TEXT NOT NULL UNIQUE",
        SYSTEM_NAME = "system_name" "TEXT",
        HOSTNAME = "hostname" "TEXT",
        RELEASE = "release" "TEXT",
        VERSION = "version" "TEXT",
        HARDWARE_NAME = "hardware_name" "TEXT",
        DOMAIN_NAME = "domain_name" "TEXT",
    }
    /// `rocpd_info_process`: the profiled process (one per run).
    info_process = "rocpd_info_process" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PPID = "ppid" "INTEGER",
        PID = "pid" "INTEGER NOT NULL",
        INIT = "init" "BIGINT",
        FINI = "fini" "BIGINT",
        START = "start" "BIGINT",
        END = "end" "BIGINT",
        /// The command line, arguments separated by spaces.
        COMMAND = "command" "TEXT",
        ENVIRONMENT = "environment" "JSONB NOT NULL DEFAULT '{}'",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_info_thread`: threads; records' `tid` columns are this table's
    /// `id`, the OS thread id is its `tid`.
    info_thread = "rocpd_info_thread" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PPID = "ppid" "INTEGER",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        TID = "tid" "INTEGER NOT NULL",
        NAME = "name" "TEXT",
        START = "start" "BIGINT",
        END = "end" "BIGINT",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_info_agent`: CPUs and GPUs; `id` is the agent's handle.
    info_agent = "rocpd_info_agent" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        /// [`super::AGENT_CPU`] or [`super::AGENT_GPU`].
        TYPE = "type" "TEXT CHECK (type IN ('CPU', 'GPU'))",
        ABSOLUTE_INDEX = "absolute_index" "INTEGER",
        /// The node index rocprofv3 prints for the agent.
        LOGICAL_INDEX = "logical_index" "INTEGER",
        TYPE_INDEX = "type_index" "INTEGER",
        UUID = "uuid" "INTEGER",
        NAME = "name" "TEXT",
        MODEL_NAME = "model_name" "TEXT",
        VENDOR_NAME = "vendor_name" "TEXT",
        PRODUCT_NAME = "product_name" "TEXT",
        USER_NAME = "user_name" "TEXT",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_info_queue`: HSA queues records refer to.
    info_queue = "rocpd_info_queue" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        NAME = "name" "TEXT",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_info_stream`: HIP streams records refer to.
    info_stream = "rocpd_info_stream" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        NAME = "name" "TEXT",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_info_pmc`: hardware counters, one row per (agent, counter) a
    /// run counted.
    info_pmc = "rocpd_info_pmc" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        AGENT_ID = "agent_id" "INTEGER" => "rocpd_info_agent",
        TARGET_ARCH = "target_arch" "TEXT CHECK (target_arch IN ('CPU', 'GPU'))",
        EVENT_CODE = "event_code" "INT",
        INSTANCE_ID = "instance_id" "INTEGER",
        NAME = "name" "TEXT NOT NULL",
        SYMBOL = "symbol" "TEXT NOT NULL",
        DESCRIPTION = "description" "TEXT",
        LONG_DESCRIPTION = "long_description" "TEXT DEFAULT ''",
        COMPONENT = "component" "TEXT",
        UNITS = "units" "TEXT DEFAULT ''",
        VALUE_TYPE = "value_type" "TEXT CHECK (value_type IN ('ABS', 'ACCUM', 'RELATIVE'))",
        BLOCK = "block" "TEXT",
        EXPRESSION = "expression" "TEXT",
        IS_CONSTANT = "is_constant" "INTEGER",
        IS_DERIVED = "is_derived" "INTEGER",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_info_code_object`: loaded code objects.
    info_code_object = "rocpd_info_code_object" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        AGENT_ID = "agent_id" "INTEGER" => "rocpd_info_agent",
        URI = "uri" "TEXT",
        LOAD_BASE = "load_base" "BIGINT",
        LOAD_SIZE = "load_size" "BIGINT",
        LOAD_DELTA = "load_delta" "BIGINT",
        /// [`super::STORAGE_FILE`], [`super::STORAGE_MEMORY`] or NULL.
        STORAGE_TYPE = "storage_type" "TEXT CHECK (storage_type IN ('FILE', 'MEMORY'))",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_info_kernel_symbol`: kernels; `id` is the run's kernel id.
    info_kernel_symbol = "rocpd_info_kernel_symbol" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        CODE_OBJECT_ID = "code_object_id" "INTEGER NOT NULL" => "rocpd_info_code_object",
        /// The (mangled) symbol name.
        KERNEL_NAME = "kernel_name" "TEXT",
        /// The demangled name.
        DISPLAY_NAME = "display_name" "TEXT",
        KERNEL_OBJECT = "kernel_object" "INTEGER",
        KERNARG_SEGMENT_SIZE = "kernarg_segment_size" "INTEGER",
        KERNARG_SEGMENT_ALIGNMENT = "kernarg_segment_alignment" "INTEGER",
        GROUP_SEGMENT_SIZE = "group_segment_size" "INTEGER",
        PRIVATE_SEGMENT_SIZE = "private_segment_size" "INTEGER",
        SGPR_COUNT = "sgpr_count" "INTEGER",
        ARCH_VGPR_COUNT = "arch_vgpr_count" "INTEGER",
        ACCUM_VGPR_COUNT = "accum_vgpr_count" "INTEGER",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_track`: timeline tracks (a thread's marks, named by their
    /// category).
    track = "rocpd_track" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER" => "rocpd_info_process",
        TID = "tid" "INTEGER" => "rocpd_info_thread",
        NAME_ID = "name_id" "INTEGER" => "rocpd_string",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_event`: one per record; holds its category (the kind's name)
    /// and correlation ids (see the module docs).
    event = "rocpd_event" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        /// A `rocpd_string` id: the record's kind name (`HIP_RUNTIME_API`).
        CATEGORY_ID = "category_id" "INTEGER" => "rocpd_string",
        /// The internal correlation id (NULL in older rocwasm databases).
        STACK_ID = "stack_id" "INTEGER",
        /// The ancestor's internal correlation id (an async record's own).
        PARENT_STACK_ID = "parent_stack_id" "INTEGER",
        /// The external correlation id (in older rocwasm databases, whose
        /// `stack_id` is NULL: the internal one).
        CORRELATION_ID = "correlation_id" "INTEGER",
        CALL_STACK = "call_stack" "JSONB NOT NULL DEFAULT '{}'",
        LINE_INFO = "line_info" "JSONB NOT NULL DEFAULT '{}'",
        /// `{}`, a marker's `{"message": …}`; older rocwasm databases:
        /// [`super::EventExtdata`] as JSON.
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_arg`: API call arguments (a live run's; not a replay's).
    arg = "rocpd_arg" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        EVENT_ID = "event_id" "INTEGER NOT NULL" => "rocpd_event",
        POSITION = "position" "INTEGER NOT NULL",
        TYPE = "type" "TEXT NOT NULL",
        NAME = "name" "TEXT NOT NULL",
        VALUE = "value" "TEXT",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_pmc_event`: counter values, one row per counter sample,
    /// pointing at its dispatch's event.
    pmc_event = "rocpd_pmc_event" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        EVENT_ID = "event_id" "INTEGER" => "rocpd_event",
        PMC_ID = "pmc_id" "INTEGER NOT NULL" => "rocpd_info_pmc",
        VALUE = "value" "REAL DEFAULT 0.0",
        EXTDATA = "extdata" "JSONB DEFAULT '{}'",
    }
    /// `rocpd_region`: API calls and markers; `name_id` is the function's
    /// name.
    region = "rocpd_region" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        TID = "tid" "INTEGER NOT NULL" => "rocpd_info_thread",
        START = "start" "BIGINT NOT NULL",
        END = "end" "BIGINT NOT NULL",
        NAME_ID = "name_id" "INTEGER NOT NULL" => "rocpd_string",
        EVENT_ID = "event_id" "INTEGER" => "rocpd_event",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_sample`: instantaneous events on a track (markers' marks,
    /// whose start is their end).
    sample = "rocpd_sample" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        TRACK_ID = "track_id" "INTEGER NOT NULL" => "rocpd_track",
        TIMESTAMP = "timestamp" "BIGINT NOT NULL",
        EVENT_ID = "event_id" "INTEGER" => "rocpd_event",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_kernel_dispatch`: kernel dispatches.
    kernel_dispatch = "rocpd_kernel_dispatch" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        TID = "tid" "INTEGER" => "rocpd_info_thread",
        AGENT_ID = "agent_id" "INTEGER NOT NULL" => "rocpd_info_agent",
        /// A `rocpd_info_kernel_symbol` id.
        KERNEL_ID = "kernel_id" "INTEGER NOT NULL" => "rocpd_info_kernel_symbol",
        DISPATCH_ID = "dispatch_id" "INTEGER NOT NULL",
        QUEUE_ID = "queue_id" "INTEGER NOT NULL" => "rocpd_info_queue",
        STREAM_ID = "stream_id" "INTEGER NOT NULL" => "rocpd_info_stream",
        START = "start" "BIGINT NOT NULL",
        END = "end" "BIGINT NOT NULL",
        PRIVATE_SEGMENT_SIZE = "private_segment_size" "INTEGER",
        GROUP_SEGMENT_SIZE = "group_segment_size" "INTEGER",
        WORKGROUP_SIZE_X = "workgroup_size_x" "INTEGER NOT NULL",
        WORKGROUP_SIZE_Y = "workgroup_size_y" "INTEGER NOT NULL",
        WORKGROUP_SIZE_Z = "workgroup_size_z" "INTEGER NOT NULL",
        GRID_SIZE_X = "grid_size_x" "INTEGER NOT NULL",
        GRID_SIZE_Y = "grid_size_y" "INTEGER NOT NULL",
        GRID_SIZE_Z = "grid_size_z" "INTEGER NOT NULL",
        REGION_NAME_ID = "region_name_id" "INTEGER" => "rocpd_string",
        EVENT_ID = "event_id" "INTEGER" => "rocpd_event",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_memory_copy`: async copies; `name_id` is the direction's name.
    memory_copy = "rocpd_memory_copy" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        TID = "tid" "INTEGER" => "rocpd_info_thread",
        START = "start" "BIGINT NOT NULL",
        END = "end" "BIGINT NOT NULL",
        NAME_ID = "name_id" "INTEGER NOT NULL" => "rocpd_string",
        DST_AGENT_ID = "dst_agent_id" "INTEGER" => "rocpd_info_agent",
        DST_ADDRESS = "dst_address" "INTEGER",
        SRC_AGENT_ID = "src_agent_id" "INTEGER" => "rocpd_info_agent",
        SRC_ADDRESS = "src_address" "INTEGER",
        /// Bytes copied.
        SIZE = "size" "INTEGER NOT NULL",
        QUEUE_ID = "queue_id" "INTEGER" => "rocpd_info_queue",
        STREAM_ID = "stream_id" "INTEGER" => "rocpd_info_stream",
        REGION_NAME_ID = "region_name_id" "INTEGER" => "rocpd_string",
        EVENT_ID = "event_id" "INTEGER" => "rocpd_event",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
    /// `rocpd_memory_allocate`: allocations, frees and scratch events (see
    /// [`MemoryOperation`]).
    memory_allocate = "rocpd_memory_allocate" {
        ID = "id" "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        GUID = "guid" "TEXT NOT NULL DEFAULT '{guid}'",
        NID = "nid" "INTEGER NOT NULL" => "rocpd_info_node",
        PID = "pid" "INTEGER NOT NULL" => "rocpd_info_process",
        TID = "tid" "INTEGER" => "rocpd_info_thread",
        AGENT_ID = "agent_id" "INTEGER" => "rocpd_info_agent",
        TYPE = "type" "TEXT CHECK (type IN ('ALLOC', 'FREE', 'REALLOC', 'RECLAIM'))",
        LEVEL = "level" "TEXT CHECK (level IN ('REAL', 'VIRTUAL', 'SCRATCH'))",
        START = "start" "BIGINT NOT NULL",
        END = "end" "BIGINT NOT NULL",
        ADDRESS = "address" "INTEGER",
        SIZE = "size" "INTEGER NOT NULL",
        QUEUE_ID = "queue_id" "INTEGER" => "rocpd_info_queue",
        STREAM_ID = "stream_id" "INTEGER" => "rocpd_info_stream",
        EVENT_ID = "event_id" "INTEGER" => "rocpd_event",
        EXTDATA = "extdata" "JSONB NOT NULL DEFAULT '{}'",
    }
}

/// `rocpd_info_agent.type` of a CPU.
pub const AGENT_CPU: &str = "CPU";
/// `rocpd_info_agent.type` of a GPU.
pub const AGENT_GPU: &str = "GPU";
/// `rocpd_info_code_object.storage_type` of a code object read from a file.
pub const STORAGE_FILE: &str = "FILE";
/// `rocpd_info_code_object.storage_type` of a code object in memory.
pub const STORAGE_MEMORY: &str = "MEMORY";

/// `rocpd_memory_allocate.level` of ordinary memory.
const LEVEL_REAL: &str = "REAL";
/// `rocpd_memory_allocate.level` of HSA virtual memory (`hsa_amd_vmem_*`).
const LEVEL_VIRTUAL: &str = "VIRTUAL";
/// `rocpd_memory_allocate.level` of scratch events.
const LEVEL_SCRATCH: &str = "SCRATCH";
/// `rocpd_memory_allocate.type` of an allocation.
const TYPE_ALLOC: &str = "ALLOC";
/// `rocpd_memory_allocate.type` of a free.
const TYPE_FREE: &str = "FREE";
/// `rocpd_memory_allocate.type` of an asynchronous scratch reclaim.
const TYPE_RECLAIM: &str = "RECLAIM";

/// The operation of a `rocpd_memory_allocate` row: a memory allocation
/// operation (`MEMORY_ALLOCATION` kind) or a scratch one (`SCRATCH_MEMORY`),
/// as stored in its `type` and `level` columns.
///
/// | operation | `type` | `level` |
/// |---|---|---|
/// | `MEMORY_ALLOCATION_ALLOCATE` / `_FREE` | `ALLOC` / `FREE` | `REAL` |
/// | `MEMORY_ALLOCATION_VMEM_ALLOCATE` / `_VMEM_FREE` | `ALLOC` / `FREE` | `VIRTUAL` |
/// | `SCRATCH_MEMORY_ALLOC` / `_FREE` / `_ASYNC_RECLAIM` | `ALLOC` / `FREE` / `RECLAIM` | `SCRATCH` |
///
/// Any other operation is written with a NULL `type` (level `REAL`, or
/// `SCRATCH`) and reads back as the kind's `NONE`; so does a row of type
/// `REALLOC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryOperation {
    /// A `MEMORY_ALLOCATION` operation number.
    Allocation(u32),
    /// A `SCRATCH_MEMORY` operation number.
    Scratch(u32),
}

impl MemoryOperation {
    /// The row's `type` and `level`.
    pub fn type_and_level(self) -> (Option<&'static str>, &'static str) {
        match self {
            MemoryOperation::Allocation(op) => match op {
                allocation::ALLOCATE => (Some(TYPE_ALLOC), LEVEL_REAL),
                allocation::VMEM_ALLOCATE => (Some(TYPE_ALLOC), LEVEL_VIRTUAL),
                allocation::FREE => (Some(TYPE_FREE), LEVEL_REAL),
                allocation::VMEM_FREE => (Some(TYPE_FREE), LEVEL_VIRTUAL),
                _ => (None, LEVEL_REAL),
            },
            MemoryOperation::Scratch(op) => {
                let ty = match op {
                    scratch::ALLOC => Some(TYPE_ALLOC),
                    scratch::FREE => Some(TYPE_FREE),
                    scratch::ASYNC_RECLAIM => Some(TYPE_RECLAIM),
                    _ => None,
                };
                (ty, LEVEL_SCRATCH)
            }
        }
    }

    /// The operation of a row with this `type` and `level` (a NULL or
    /// unknown level is ordinary memory).
    pub fn from_type_and_level(ty: Option<&str>, level: Option<&str>) -> MemoryOperation {
        if level == Some(LEVEL_SCRATCH) {
            return MemoryOperation::Scratch(match ty {
                Some(TYPE_ALLOC) => scratch::ALLOC,
                Some(TYPE_FREE) => scratch::FREE,
                Some(TYPE_RECLAIM) => scratch::ASYNC_RECLAIM,
                _ => scratch::NONE,
            });
        }
        let virtual_memory = level == Some(LEVEL_VIRTUAL);
        MemoryOperation::Allocation(match (ty, virtual_memory) {
            (Some(TYPE_ALLOC), false) => allocation::ALLOCATE,
            (Some(TYPE_ALLOC), true) => allocation::VMEM_ALLOCATE,
            (Some(TYPE_FREE), false) => allocation::FREE,
            (Some(TYPE_FREE), true) => allocation::VMEM_FREE,
            _ => allocation::NONE,
        })
    }
}

/// An `extdata` JSON object of rocwasm's: `rocpd_memory_allocate.extdata`
/// of a scratch event (`{"flags": N}`, as rocprofv3 writes it, where `N`
/// may also be a numeric string), and `rocpd_event.extdata` of databases
/// written by older rocwasm versions (which also held the external
/// correlation id here). Written only when not empty (the column's default
/// is `{}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EventExtdata {
    /// The record's external correlation id; absent when 0.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub external: u64,
    /// Scratch events' allocation flags; absent for other records.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "lenient")]
    pub flags: Option<u64>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Any value; a string holding a number reads as that number, one of
/// another type as the default (as `0` for a negative or fractional id).
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => match s.trim().parse::<u64>() {
            Ok(n) => serde_json::Value::from(n),
            Err(_) => serde_json::Value::String(s),
        },
        v => v,
    };
    Ok(serde_json::from_value(value).unwrap_or_default())
}

impl EventExtdata {
    /// The JSON to store, `None` when there is nothing to store.
    pub fn to_json(&self) -> Option<String> {
        (*self != EventExtdata::default())
            .then(|| serde_json::to_string(self).expect("plain numbers serialize"))
    }

    /// The column's value read back: `{}`, NULL or anything that is not a
    /// JSON object reads as empty.
    pub fn parse(json: Option<&str>) -> EventExtdata {
        match json.filter(|j| *j != "{}").map(serde_json::from_str) {
            Some(Ok(value @ serde_json::Value::Object(_))) => {
                serde_json::from_value(value).unwrap_or_default()
            }
            _ => EventExtdata::default(),
        }
    }
}

/// `"a"."b", "a"."c"`: the `columns` of table alias `alias`, quoted, for a
/// select list.
pub fn column_list(alias: &str, columns: &[&str]) -> String {
    columns
        .iter()
        .map(|c| format!("{alias}.\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `INSERT INTO "<table><suffix>" ("c1", …) VALUES (?1, …)`: one parameter
/// per column, in order.
pub fn insert_sql(table: &str, suffix: &str, columns: &[&str]) -> String {
    insert(table, suffix, columns, "INSERT")
}

/// As [`insert_sql`], but a row whose primary key exists is left alone.
pub fn insert_or_ignore_sql(table: &str, suffix: &str, columns: &[&str]) -> String {
    insert(table, suffix, columns, "INSERT OR IGNORE")
}

fn insert(table: &str, suffix: &str, columns: &[&str], verb: &str) -> String {
    let names: Vec<String> = columns.iter().map(|c| format!("\"{c}\"")).collect();
    let params: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    format!(
        "{verb} INTO \"{table}{suffix}\" ({}) VALUES ({})",
        names.join(", "),
        params.join(", ")
    )
}

/// Creates the tables of the run with `suffix` (e.g. `_0a1b…`).
pub fn create_run_tables(conn: &Connection, suffix: &str, guid: &str) -> rusqlite::Result<()> {
    let mut ddl = String::new();
    for (table, columns, foreign_keys) in SCHEMA {
        let columns = columns
            .iter()
            .map(|(name, decl)| format!("\"{name}\" {}", decl.replace("{guid}", guid)))
            .chain(foreign_keys.iter().map(|(column, parent)| {
                format!(
                    "FOREIGN KEY (\"{column}\") REFERENCES \"{parent}{suffix}\" (\"id\") ON UPDATE CASCADE"
                )
            }))
            .collect::<Vec<String>>();
        ddl.push_str(&format!(
            "CREATE TABLE \"{table}{suffix}\" ({});\n",
            columns.join(", ")
        ));
    }
    conn.execute_batch(&ddl)
}

/// Every table of the file, oldest first, with whether it is a table (not
/// a view).
fn master_tables(conn: &Connection) -> rusqlite::Result<Vec<(String, bool)>> {
    let mut stmt = conn.prepare("SELECT name, type FROM sqlite_master ORDER BY rowid")?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)? == "table"))
    })?;
    rows.collect()
}

/// Every run suffix present in the file (`_<uuid>` of each per-run
/// `rocpd_metadata` table), oldest first.
pub fn run_suffixes(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let prefix = format!("{}_", metadata::TABLE);
    Ok(master_tables(conn)?
        .into_iter()
        .filter(|(name, table)| *table && name.starts_with(&prefix))
        .map(|(name, _)| name[metadata::TABLE.len()..].to_string())
        .collect())
}

/// Whether the file has the plain names as tables (`rocpd_metadata`, …
/// without a run suffix), as some rocprofv3 versions write: one run whose
/// suffix is `""`.
pub fn has_plain_tables(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(master_tables(conn)?
        .into_iter()
        .any(|(name, table)| table && name == metadata::TABLE))
}

/// (Re)creates the plain views so that each unions every run's table.
pub fn create_views(conn: &Connection) -> rusqlite::Result<()> {
    let suffixes = run_suffixes(conn)?;
    let tables: std::collections::HashSet<String> = master_tables(conn)?
        .into_iter()
        .filter(|(_, table)| *table)
        .map(|(name, _)| name)
        .collect();
    let mut sql = String::new();
    for base in TABLES {
        sql.push_str(&format!("DROP VIEW IF EXISTS \"{base}\";\n"));
        // Runs written before a table joined the schema do not have it.
        let selects: Vec<String> = suffixes
            .iter()
            .filter(|s| tables.contains(&format!("{base}{s}")))
            .map(|s| format!("SELECT * FROM \"{base}{s}\""))
            .collect();
        if selects.is_empty() {
            // No run of the file has this table (written before it joined
            // the schema): an empty view with its columns, so the data
            // views over it still work.
            let columns = SCHEMA
                .iter()
                .find(|(t, _, _)| t == base)
                .map(|(_, cols, _)| {
                    cols.iter()
                        .map(|(c, _)| format!("NULL AS \"{c}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            sql.push_str(&format!(
                "CREATE VIEW \"{base}\" AS SELECT {columns} WHERE 0;\n"
            ));
            continue;
        }
        sql.push_str(&format!(
            "CREATE VIEW \"{base}\" AS {};\n",
            selects.join(" UNION ALL ")
        ));
    }
    // rocprofv3's data and summary views (`kernels`, `regions`,
    // `memory_copies`, `top_kernels`, …) over the plain views above.
    sql.push_str(VIEWS);
    conn.execute_batch(&sql)
}

/// The data and summary views every rocpd file we write or merge carries,
/// as rocprofv3's do (`views.sql` says which and how).
pub const VIEWS: &str = include_str!("views.sql");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_operations_read_back_as_written() {
        for op in [
            allocation::ALLOCATE,
            allocation::VMEM_ALLOCATE,
            allocation::FREE,
            allocation::VMEM_FREE,
            allocation::NONE,
        ] {
            let (ty, level) = MemoryOperation::Allocation(op).type_and_level();
            assert_eq!(
                MemoryOperation::from_type_and_level(ty, Some(level)),
                MemoryOperation::Allocation(op)
            );
        }
        for op in [
            scratch::ALLOC,
            scratch::FREE,
            scratch::ASYNC_RECLAIM,
            scratch::NONE,
        ] {
            let (ty, level) = MemoryOperation::Scratch(op).type_and_level();
            assert_eq!(
                MemoryOperation::from_type_and_level(ty, Some(level)),
                MemoryOperation::Scratch(op)
            );
        }
    }

    #[test]
    fn tables_accept_every_value_the_schema_names() {
        let conn = Connection::open_in_memory().unwrap();
        // Values only: these rows refer to no node or process.
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        create_run_tables(&conn, "_x", "g").unwrap();
        for ty in [AGENT_CPU, AGENT_GPU] {
            conn.execute(
                &insert_sql(
                    info_agent::TABLE,
                    "_x",
                    &[info_agent::NID, info_agent::PID, info_agent::TYPE],
                ),
                rusqlite::params![1, 1, ty],
            )
            .unwrap();
        }
        for st in [STORAGE_FILE, STORAGE_MEMORY] {
            conn.execute(
                &insert_sql(
                    info_code_object::TABLE,
                    "_x",
                    &[
                        info_code_object::NID,
                        info_code_object::PID,
                        info_code_object::STORAGE_TYPE,
                    ],
                ),
                rusqlite::params![1, 1, st],
            )
            .unwrap();
        }
        let ops = [
            allocation::ALLOCATE,
            allocation::VMEM_FREE,
            allocation::NONE,
        ]
        .map(MemoryOperation::Allocation)
        .into_iter()
        .chain([scratch::ASYNC_RECLAIM, scratch::NONE].map(MemoryOperation::Scratch));
        for op in ops {
            let (ty, level) = op.type_and_level();
            let m = memory_allocate::TABLE;
            conn.execute(
                &insert_sql(
                    m,
                    "_x",
                    &[
                        memory_allocate::NID,
                        memory_allocate::PID,
                        memory_allocate::TYPE,
                        memory_allocate::LEVEL,
                        memory_allocate::START,
                        memory_allocate::END,
                        memory_allocate::SIZE,
                    ],
                ),
                rusqlite::params![1, 1, ty, level, 0, 0, 0],
            )
            .unwrap();
        }
        let guid: String = conn
            .query_row("SELECT guid FROM \"rocpd_info_agent_x\"", [], |r| r.get(0))
            .unwrap();
        assert_eq!(guid, "g");
        assert_eq!(run_suffixes(&conn).unwrap(), ["_x"]);
        assert!(!has_plain_tables(&conn).unwrap());
    }

    #[test]
    fn extdata_round_trips_and_tolerates() {
        let e = EventExtdata {
            external: 7,
            flags: Some(2),
        };
        assert_eq!(e.to_json().as_deref(), Some("{\"external\":7,\"flags\":2}"));
        assert_eq!(EventExtdata::parse(e.to_json().as_deref()), e);
        assert_eq!(EventExtdata::default().to_json(), None);
        assert_eq!(
            EventExtdata::parse(Some("{\"external\":\"x\",\"flags\":3}")),
            EventExtdata {
                external: 0,
                flags: Some(3)
            }
        );
        assert_eq!(EventExtdata::parse(Some("[1]")), EventExtdata::default());
        assert_eq!(EventExtdata::parse(None), EventExtdata::default());
    }
}
