//! The schema of the rocprofv3 CSV trace files: which files there are, what
//! each is called and which columns its header lists, in order.
//!
//! This is the one place the column names are spelled. The writer
//! ([`super::CsvSink`]) writes [`TraceFile::header`] as the first line of
//! each file and then its fields in [`TraceFile::columns`] order; the reader
//! ([`crate::replay`]) finds each field by [`Column::spellings`] in whatever
//! header the file has, and recognises a file by [`TraceFile::from_path`] or
//! [`TraceFile::from_header`].

use std::path::Path;

/// One column of a rocprofv3 trace file.
///
/// A column means the same in every file that has it (`Correlation_Id`,
/// `Start_Timestamp`, …). Timestamps are nanoseconds; sizes are bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Column {
    /// The record's kind by name: `KERNEL_DISPATCH`, `MEMORY_COPY`,
    /// `MEMORY_ALLOCATION`, `SCRATCH_MEMORY`.
    Kind,
    /// The agent (GPU or CPU) by its logical node index. rocprofv3 may write
    /// it with a word before the number (`Agent 2`).
    AgentId,
    /// The HSA queue's id.
    QueueId,
    /// The HIP stream's id (0: the null stream, or none).
    StreamId,
    /// The OS thread id (`gettid`) of the thread that made the call or
    /// launched the dispatch.
    ThreadId,
    /// The dispatch's id, unique in the run.
    DispatchId,
    /// The kernel symbol's id, unique in the run.
    KernelId,
    /// The kernel's (demangled) name.
    KernelName,
    /// The internal correlation id: the API call that caused the record.
    CorrelationId,
    /// When the record began, in ns.
    StartTimestamp,
    /// When it ended, in ns.
    EndTimestamp,
    /// LDS per work-group in bytes: the dispatch's group segment. ROCm 6
    /// called it `Group_Segment_Size`.
    LdsBlockSize,
    /// Scratch per work-item in bytes: the dispatch's private segment. ROCm 6
    /// called it `Private_Segment_Size`.
    ScratchSize,
    /// Architectural vector registers of the kernel (also read as
    /// `Arch_VGPR_Count`).
    VgprCount,
    /// Accumulation vector registers of the kernel.
    AccumVgprCount,
    /// Scalar registers of the kernel.
    SgprCount,
    /// Work-group size, x.
    WorkgroupSizeX,
    /// Work-group size, y.
    WorkgroupSizeY,
    /// Work-group size, z.
    WorkgroupSizeZ,
    /// Grid size (work-items), x.
    GridSizeX,
    /// Grid size (work-items), y.
    GridSizeY,
    /// Grid size (work-items), z.
    GridSizeZ,
    /// The API call's tracing kind by name (`HIP_RUNTIME_API`,
    /// `HSA_CORE_API`, `MARKER_CORE_API`, …).
    Domain,
    /// The API function's name (`hipMemcpy`, `roctxRangePushA`, …).
    Function,
    /// The profiled process's id.
    ProcessId,
    /// A copy's direction by operation name (`MEMORY_COPY_HOST_TO_DEVICE`).
    Direction,
    /// A copy's source agent, as [`Column::AgentId`].
    SourceAgentId,
    /// A copy's destination agent, as [`Column::AgentId`].
    DestinationAgentId,
    /// A copy's size in bytes. rocprofv3 (ROCm 7.0) does not write it; a
    /// file that has it (as `Bytes` or `Size`) is read with it.
    Bytes,
    /// An allocation's or scratch event's operation by name
    /// (`MEMORY_ALLOCATION_ALLOCATE`, `SCRATCH_MEMORY_ALLOC`, …).
    Operation,
    /// Bytes allocated (or freed).
    AllocationSize,
    /// The allocation's address, in hex (`0x7f…`).
    Address,
    /// Scratch allocation flags (`hsa_amd_event_scratch_alloc_flag_t`).
    AllocFlags,
    /// Grid size in work-items, x·y·z.
    GridSize,
    /// Work-group size, x·y·z.
    WorkgroupSize,
    /// A hardware counter's name.
    CounterName,
    /// A hardware counter's value for the dispatch (summed over its instances).
    CounterValue,
}

impl Column {
    /// Every column, in declaration order (`Column as usize` indexes this
    /// array).
    pub const ALL: [Column; 37] = [
        Column::Kind,
        Column::AgentId,
        Column::QueueId,
        Column::StreamId,
        Column::ThreadId,
        Column::DispatchId,
        Column::KernelId,
        Column::KernelName,
        Column::CorrelationId,
        Column::StartTimestamp,
        Column::EndTimestamp,
        Column::LdsBlockSize,
        Column::ScratchSize,
        Column::VgprCount,
        Column::AccumVgprCount,
        Column::SgprCount,
        Column::WorkgroupSizeX,
        Column::WorkgroupSizeY,
        Column::WorkgroupSizeZ,
        Column::GridSizeX,
        Column::GridSizeY,
        Column::GridSizeZ,
        Column::Domain,
        Column::Function,
        Column::ProcessId,
        Column::Direction,
        Column::SourceAgentId,
        Column::DestinationAgentId,
        Column::Bytes,
        Column::Operation,
        Column::AllocationSize,
        Column::Address,
        Column::AllocFlags,
        Column::GridSize,
        Column::WorkgroupSize,
        Column::CounterName,
        Column::CounterValue,
    ];

    /// Every header name of this column: the one rocprofv3 (ROCm 7.0)
    /// writes first, then older or alternative spellings a reader accepts.
    pub const fn spellings(self) -> &'static [&'static str] {
        match self {
            Column::Kind => &["Kind"],
            Column::AgentId => &["Agent_Id"],
            Column::QueueId => &["Queue_Id"],
            Column::StreamId => &["Stream_Id"],
            Column::ThreadId => &["Thread_Id"],
            Column::DispatchId => &["Dispatch_Id"],
            Column::KernelId => &["Kernel_Id"],
            Column::KernelName => &["Kernel_Name"],
            Column::CorrelationId => &["Correlation_Id"],
            Column::StartTimestamp => &["Start_Timestamp"],
            Column::EndTimestamp => &["End_Timestamp"],
            Column::LdsBlockSize => &["LDS_Block_Size", "Group_Segment_Size"],
            Column::ScratchSize => &["Scratch_Size", "Private_Segment_Size"],
            Column::VgprCount => &["VGPR_Count", "Arch_VGPR_Count"],
            Column::AccumVgprCount => &["Accum_VGPR_Count"],
            Column::SgprCount => &["SGPR_Count"],
            Column::WorkgroupSizeX => &["Workgroup_Size_X"],
            Column::WorkgroupSizeY => &["Workgroup_Size_Y"],
            Column::WorkgroupSizeZ => &["Workgroup_Size_Z"],
            Column::GridSizeX => &["Grid_Size_X"],
            Column::GridSizeY => &["Grid_Size_Y"],
            Column::GridSizeZ => &["Grid_Size_Z"],
            Column::Domain => &["Domain"],
            Column::Function => &["Function"],
            Column::ProcessId => &["Process_Id"],
            Column::Direction => &["Direction"],
            Column::SourceAgentId => &["Source_Agent_Id"],
            Column::DestinationAgentId => &["Destination_Agent_Id"],
            Column::Bytes => &["Bytes", "Size"],
            Column::Operation => &["Operation"],
            Column::AllocationSize => &["Allocation_Size"],
            Column::Address => &["Address"],
            Column::AllocFlags => &["Alloc_Flags"],
            Column::GridSize => &["Grid_Size"],
            Column::WorkgroupSize => &["Workgroup_Size"],
            Column::CounterName => &["Counter_Name"],
            Column::CounterValue => &["Counter_Value"],
        }
    }

    /// The header name rocprofv3 (ROCm 7.0) writes.
    pub const fn name(self) -> &'static str {
        self.spellings()[0]
    }
}

/// The header names of `columns`, in order (for the `const` headers below).
const fn names<const N: usize>(columns: [Column; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = columns[i].name();
        i += 1;
    }
    out
}

/// `kernel_trace.csv`.
const KERNEL_TRACE: [Column; 22] = [
    Column::Kind,
    Column::AgentId,
    Column::QueueId,
    Column::StreamId,
    Column::ThreadId,
    Column::DispatchId,
    Column::KernelId,
    Column::KernelName,
    Column::CorrelationId,
    Column::StartTimestamp,
    Column::EndTimestamp,
    Column::LdsBlockSize,
    Column::ScratchSize,
    Column::VgprCount,
    Column::AccumVgprCount,
    Column::SgprCount,
    Column::WorkgroupSizeX,
    Column::WorkgroupSizeY,
    Column::WorkgroupSizeZ,
    Column::GridSizeX,
    Column::GridSizeY,
    Column::GridSizeZ,
];
const KERNEL_TRACE_NAMES: [&str; 22] = names(KERNEL_TRACE);

/// `hip_api_trace.csv`, `hsa_api_trace.csv`, `marker_api_trace.csv`.
const API_TRACE: [Column; 7] = [
    Column::Domain,
    Column::Function,
    Column::ProcessId,
    Column::ThreadId,
    Column::CorrelationId,
    Column::StartTimestamp,
    Column::EndTimestamp,
];
const API_TRACE_NAMES: [&str; 7] = names(API_TRACE);

/// `memory_copy_trace.csv`.
const MEMORY_COPY: [Column; 8] = [
    Column::Kind,
    Column::Direction,
    Column::StreamId,
    Column::SourceAgentId,
    Column::DestinationAgentId,
    Column::CorrelationId,
    Column::StartTimestamp,
    Column::EndTimestamp,
];
const MEMORY_COPY_NAMES: [&str; 8] = names(MEMORY_COPY);

/// `memory_allocation_trace.csv`.
const MEMORY_ALLOCATION: [Column; 8] = [
    Column::Kind,
    Column::Operation,
    Column::AgentId,
    Column::AllocationSize,
    Column::Address,
    Column::CorrelationId,
    Column::StartTimestamp,
    Column::EndTimestamp,
];
const MEMORY_ALLOCATION_NAMES: [&str; 8] = names(MEMORY_ALLOCATION);

/// `scratch_memory_trace.csv`.
const SCRATCH_MEMORY: [Column; 9] = [
    Column::Kind,
    Column::Operation,
    Column::AgentId,
    Column::QueueId,
    Column::ThreadId,
    Column::AllocFlags,
    Column::StartTimestamp,
    Column::EndTimestamp,
    Column::AllocationSize,
];
const SCRATCH_MEMORY_NAMES: [&str; 9] = names(SCRATCH_MEMORY);

/// `counter_collection.csv`: one row per dispatch and counter.
const COUNTER_COLLECTION: [Column; 19] = [
    Column::CorrelationId,
    Column::DispatchId,
    Column::AgentId,
    Column::QueueId,
    Column::ProcessId,
    Column::ThreadId,
    Column::GridSize,
    Column::KernelId,
    Column::KernelName,
    Column::WorkgroupSize,
    Column::LdsBlockSize,
    Column::ScratchSize,
    Column::VgprCount,
    Column::AccumVgprCount,
    Column::SgprCount,
    Column::CounterName,
    Column::CounterValue,
    Column::StartTimestamp,
    Column::EndTimestamp,
];
const COUNTER_COLLECTION_NAMES: [&str; 19] = names(COUNTER_COLLECTION);

/// The trace files rocprofv3 writes, by record family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TraceFile {
    /// `kernel_trace.csv`: one row per kernel dispatch (buffer kind
    /// `KERNEL_DISPATCH`).
    KernelTrace,
    /// `hip_api_trace.csv`: HIP runtime and compiler API calls.
    HipApi,
    /// `hsa_api_trace.csv`: HSA core, AMD extension, image and finalizer API
    /// calls.
    HsaApi,
    /// `marker_api_trace.csv`: roctx calls (marks, ranges, control, names).
    MarkerApi,
    /// `rccl_api_trace.csv`: RCCL collective-communication calls.
    RcclApi,
    /// `rocdecode_api_trace.csv`: rocDecode video-decoding calls.
    RocdecodeApi,
    /// `rocjpeg_api_trace.csv`: rocJPEG decoding calls.
    RocjpegApi,
    /// `memory_copy_trace.csv`: async copies (buffer kind `MEMORY_COPY`).
    MemoryCopy,
    /// `memory_allocation_trace.csv`: allocations and frees, virtual-memory
    /// ones included (buffer kind `MEMORY_ALLOCATION`).
    MemoryAllocation,
    /// `scratch_memory_trace.csv`: scratch-memory allocations, frees and
    /// async reclaims (buffer kind `SCRATCH_MEMORY`).
    ScratchMemory,
    /// `counter_collection.csv`: hardware counter values, one row per
    /// dispatch and counter (`--pmc`).
    CounterCollection,
}

impl TraceFile {
    /// Every trace file, in declaration order (`TraceFile as usize` indexes
    /// this array). A reader of a directory reads them in this order:
    /// kernels first, so that kernel names exist before anything else
    /// refers to them.
    pub const ALL: [TraceFile; 11] = [
        TraceFile::KernelTrace,
        TraceFile::HipApi,
        TraceFile::HsaApi,
        TraceFile::MarkerApi,
        TraceFile::RcclApi,
        TraceFile::RocdecodeApi,
        TraceFile::RocjpegApi,
        TraceFile::MemoryCopy,
        TraceFile::MemoryAllocation,
        TraceFile::ScratchMemory,
        TraceFile::CounterCollection,
    ];

    /// File name without the output-name prefix.
    pub fn file_name(self) -> &'static str {
        match self {
            TraceFile::KernelTrace => "kernel_trace.csv",
            TraceFile::HipApi => "hip_api_trace.csv",
            TraceFile::HsaApi => "hsa_api_trace.csv",
            TraceFile::MarkerApi => "marker_api_trace.csv",
            TraceFile::RcclApi => "rccl_api_trace.csv",
            TraceFile::RocdecodeApi => "rocdecode_api_trace.csv",
            TraceFile::RocjpegApi => "rocjpeg_api_trace.csv",
            TraceFile::MemoryCopy => "memory_copy_trace.csv",
            TraceFile::MemoryAllocation => "memory_allocation_trace.csv",
            TraceFile::ScratchMemory => "scratch_memory_trace.csv",
            TraceFile::CounterCollection => "counter_collection.csv",
        }
    }

    /// The file's table name, without extension: `kernel_trace`,
    /// `hip_api_trace`, … (the Parquet output names its files after it).
    pub fn stem(self) -> &'static str {
        let name = self.file_name();
        name.strip_suffix(".csv").unwrap_or(name)
    }

    /// The exact column set rocprofv3 (ROCm 7.0) writes, in order.
    pub fn columns(self) -> &'static [Column] {
        match self {
            TraceFile::KernelTrace => &KERNEL_TRACE,
            TraceFile::HipApi
            | TraceFile::HsaApi
            | TraceFile::MarkerApi
            | TraceFile::RcclApi
            | TraceFile::RocdecodeApi
            | TraceFile::RocjpegApi => &API_TRACE,
            TraceFile::MemoryCopy => &MEMORY_COPY,
            TraceFile::MemoryAllocation => &MEMORY_ALLOCATION,
            TraceFile::ScratchMemory => &SCRATCH_MEMORY,
            TraceFile::CounterCollection => &COUNTER_COLLECTION,
        }
    }

    /// The header line's names: [`Self::columns`] by [`Column::name`].
    pub fn header(self) -> &'static [&'static str] {
        match self {
            TraceFile::KernelTrace => &KERNEL_TRACE_NAMES,
            TraceFile::HipApi
            | TraceFile::HsaApi
            | TraceFile::MarkerApi
            | TraceFile::RcclApi
            | TraceFile::RocdecodeApi
            | TraceFile::RocjpegApi => &API_TRACE_NAMES,
            TraceFile::MemoryCopy => &MEMORY_COPY_NAMES,
            TraceFile::MemoryAllocation => &MEMORY_ALLOCATION_NAMES,
            TraceFile::ScratchMemory => &SCRATCH_MEMORY_NAMES,
            TraceFile::CounterCollection => &COUNTER_COLLECTION_NAMES,
        }
    }

    /// The columns every rocprofv3 version has written for this file and
    /// without which its rows mean nothing: a reader refuses a file that
    /// lacks one. Every other column may be missing (older column sets) and
    /// then reads as 0.
    pub fn required_columns(self) -> &'static [Column] {
        match self {
            TraceFile::KernelTrace => &[
                Column::KernelName,
                Column::StartTimestamp,
                Column::EndTimestamp,
            ],
            TraceFile::HipApi
            | TraceFile::HsaApi
            | TraceFile::MarkerApi
            | TraceFile::RcclApi
            | TraceFile::RocdecodeApi
            | TraceFile::RocjpegApi => &[
                Column::Function,
                Column::StartTimestamp,
                Column::EndTimestamp,
            ],
            TraceFile::MemoryCopy => &[
                Column::Direction,
                Column::StartTimestamp,
                Column::EndTimestamp,
            ],
            TraceFile::MemoryAllocation | TraceFile::ScratchMemory => &[
                Column::Operation,
                Column::StartTimestamp,
                Column::EndTimestamp,
            ],
            TraceFile::CounterCollection => &[
                Column::KernelName,
                Column::CounterName,
                Column::CounterValue,
            ],
        }
    }

    /// The files `batch` has rows for (each once, in [`Self::ALL`]'s order).
    pub fn of_batch(batch: &rocwasm_core::Batch) -> impl Iterator<Item = TraceFile> {
        let mut has = [false; TraceFile::ALL.len()];
        has[TraceFile::KernelTrace as usize] = !batch.kernel_dispatches.is_empty();
        has[TraceFile::MemoryCopy as usize] = !batch.memory_copies.is_empty();
        has[TraceFile::MemoryAllocation as usize] = !batch.memory_allocations.is_empty();
        has[TraceFile::ScratchMemory as usize] = !batch.scratch_memory.is_empty();
        has[TraceFile::CounterCollection as usize] = !batch.counter_samples.is_empty();
        // A batch holds few kinds, usually in runs: look a kind up once a run.
        let mut last = None;
        for &kind in &batch.api_calls.kind {
            if last != Some(kind) {
                last = Some(kind);
                if let Some(file) = TraceFile::of_api_kind(kind) {
                    has[file as usize] = true;
                }
            }
        }
        TraceFile::ALL.into_iter().filter(move |f| has[*f as usize])
    }

    /// The API-call files, in [`Self::ALL`]'s order: one column set
    /// ([`Self::columns`]), one file per API family.
    pub const API: [TraceFile; 6] = [
        TraceFile::HipApi,
        TraceFile::HsaApi,
        TraceFile::MarkerApi,
        TraceFile::RcclApi,
        TraceFile::RocdecodeApi,
        TraceFile::RocjpegApi,
    ];

    /// Whether this is one of the API-call files ([`Self::API`]).
    pub fn is_api(self) -> bool {
        Self::API.contains(&self)
    }

    /// The file for an API kind (`None` for kinds rocprofv3 has no CSV for:
    /// OpenMP (OMPT) calls, kinds this build does not know).
    pub fn of_api_kind(kind: u32) -> Option<TraceFile> {
        use rocwasm_core::ApiFamily;
        let kind = rocwasm_core::BufferTracingKind::from_raw(kind)?;
        Some(match ApiFamily::of(kind)? {
            ApiFamily::Hip => TraceFile::HipApi,
            ApiFamily::Hsa => TraceFile::HsaApi,
            ApiFamily::Marker => TraceFile::MarkerApi,
            ApiFamily::Rccl => TraceFile::RcclApi,
            ApiFamily::Rocdecode => TraceFile::RocdecodeApi,
            ApiFamily::Rocjpeg => TraceFile::RocjpegApi,
        })
    }

    /// Which file a path names, from its file name (with or without a prefix).
    pub fn from_path(path: &Path) -> Option<TraceFile> {
        let name = path.file_name()?.to_str()?;
        TraceFile::ALL
            .into_iter()
            .find(|f| name == f.file_name() || name.ends_with(&format!("_{}", f.file_name())))
    }

    /// Which file a header (its names, as written) belongs to, by the
    /// column only that family has; a header with `Function` is taken for
    /// the HIP API (the API files share one column set). `None` when no
    /// family's column is there.
    pub fn from_header<'a>(header: impl IntoIterator<Item = &'a str>) -> Option<TraceFile> {
        let header: Vec<&str> = header.into_iter().collect();
        let has = |c: Column| header.contains(&c.name());
        // Scratch files have `Allocation_Size` too: `Alloc_Flags` first.
        [
            (Column::CounterName, TraceFile::CounterCollection),
            (Column::KernelName, TraceFile::KernelTrace),
            (Column::Direction, TraceFile::MemoryCopy),
            (Column::AllocFlags, TraceFile::ScratchMemory),
            (Column::AllocationSize, TraceFile::MemoryAllocation),
            (Column::Function, TraceFile::HipApi),
        ]
        .into_iter()
        .find(|(c, _)| has(*c))
        .map(|(_, f)| f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_index_their_table_and_headers_follow_columns() {
        for (i, c) in Column::ALL.into_iter().enumerate() {
            assert_eq!(c as usize, i);
        }
        for f in TraceFile::ALL {
            let names: Vec<&str> = f.columns().iter().map(|c| c.name()).collect();
            assert_eq!(names, f.header(), "{f:?}");
            assert_eq!(format!("{}.csv", f.stem()), f.file_name());
            assert!(f.required_columns().iter().all(|c| f.columns().contains(c)));
            assert_eq!(
                TraceFile::from_header(f.header().iter().copied()),
                Some(match f {
                    TraceFile::HipApi
                    | TraceFile::HsaApi
                    | TraceFile::MarkerApi
                    | TraceFile::RcclApi
                    | TraceFile::RocdecodeApi
                    | TraceFile::RocjpegApi => TraceFile::HipApi,
                    other => other,
                })
            );
        }
        for (i, f) in TraceFile::ALL.into_iter().enumerate() {
            assert_eq!(f as usize, i);
        }
    }
}
