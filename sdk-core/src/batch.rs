//! Columnar batches: what a buffer delivers and what crosses into a plugin.
//!
//! Why columns: lowering a `list<record>` into a Wasm component costs 35–50 ns
//! per record with wasmtime 48 (every field is stored separately), a record of
//! `list<u64>` columns about 1 ns. So a [`Batch`] is a struct of column tables,
//! one table per record family, each table a struct of `Vec`s of equal length.
//! The WIT `batch` record (`wit/types.wit`) has exactly the same shape, so the
//! host hands these vectors to the component without per-record work.
//!
//! Each table also has a row type (`ApiCall`, `KernelDispatch`, …) for code
//! that thinks in records: producers, tests, replay readers and output sinks.
//! Rows within one table keep the order in which they were produced.

use rocwasm_ids::ops::{allocation, copy, runtime_init, scratch};
use serde::{Deserialize, Serialize};

/// Declares a row struct and its column table with push/row/len/retain.
macro_rules! columns {
    (
        $(#[$meta:meta])*
        $row:ident / $table:ident {
            $($(#[$fmeta:meta])* $field:ident : $ty:ty,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
        pub struct $row {
            $($(#[$fmeta])* pub $field: $ty,)+
        }

        #[doc = concat!("Columns of [`", stringify!($row), "`] rows; every column has the same length.")]
        #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub struct $table {
            $($(#[$fmeta])* pub $field: Vec<$ty>,)+
        }

        impl $table {
            /// Column names, in declaration order (as in the WIT record).
            pub const COLUMNS: &'static [&'static str] = &[$(stringify!($field),)+];

            pub fn with_capacity(n: usize) -> Self {
                Self { $($field: Vec::with_capacity(n),)+ }
            }

            pub fn len(&self) -> usize {
                first_len!($(self.$field),+)
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// True when every column has the same length (always, unless a
            /// caller built the table by hand, e.g. from a plugin's reply).
            pub fn is_consistent(&self) -> bool {
                let n = self.len();
                true $(&& self.$field.len() == n)+
            }

            pub fn push(&mut self, row: $row) {
                $(self.$field.push(row.$field);)+
            }

            /// The row at `i`. Panics when `i >= len()`, like slice indexing.
            pub fn row(&self, i: usize) -> $row {
                $row { $($field: self.$field[i],)+ }
            }

            pub fn rows(&self) -> impl ExactSizeIterator<Item = $row> + '_ {
                (0..self.len()).map(move |i| self.row(i))
            }

            /// Keeps the rows for which `keep` returns true, preserving order.
            pub fn retain(&mut self, mut keep: impl FnMut(&$row) -> bool) {
                let mask: Vec<bool> = self.rows().map(|r| keep(&r)).collect();
                $(
                    let mut it = mask.iter();
                    self.$field.retain(|_| *it.next().unwrap());
                )+
            }

            /// Appends all rows of `other`.
            pub fn append(&mut self, other: &mut Self) {
                $(self.$field.append(&mut other.$field);)+
            }

            pub fn clear(&mut self) {
                $(self.$field.clear();)+
            }
        }

        impl FromIterator<$row> for $table {
            fn from_iter<I: IntoIterator<Item = $row>>(iter: I) -> Self {
                let mut t = Self::default();
                for r in iter {
                    t.push(r);
                }
                t
            }
        }
    };
}

macro_rules! first_len {
    ($first:expr $(, $rest:expr)*) => {
        $first.len()
    };
}

columns! {
    /// One HSA, HIP, marker (or other API-domain) call: the SDK's 64-byte API record.
    ApiCall / ApiCallColumns {
        /// A [`crate::BufferTracingKind`] number: which API domain.
        kind: u32,
        /// The operation within the kind (an index into the kind's operation names).
        operation: u32,
        correlation_id: u64,
        external_correlation_id: u64,
        /// Internal id of the enclosing call on the same thread, 0 at top level.
        ancestor: u64,
        thread_id: u64,
        start: u64,
        end: u64,
    }
}

columns! {
    /// A completed kernel dispatch (the SDK's 184-byte record with its dispatch info).
    KernelDispatch / KernelDispatchColumns {
        /// Internal correlation id of the API call that launched the kernel.
        correlation_id: u64,
        external_correlation_id: u64,
        /// The thread that launched the kernel (not the completion thread).
        thread_id: u64,
        start: u64,
        end: u64,
        agent_id: u64,
        queue_id: u64,
        stream_id: u64,
        kernel_id: u64,
        dispatch_id: u64,
        private_segment_size: u32,
        group_segment_size: u32,
        workgroup_x: u32,
        workgroup_y: u32,
        workgroup_z: u32,
        grid_x: u32,
        grid_y: u32,
        grid_z: u32,
    }
}

columns! {
    /// A completed asynchronous memory copy.
    MemoryCopy / MemoryCopyColumns {
        /// Direction: see [`crate::MemoryCopyDirection`].
        operation: u32,
        correlation_id: u64,
        external_correlation_id: u64,
        thread_id: u64,
        start: u64,
        end: u64,
        dst_agent_id: u64,
        src_agent_id: u64,
        stream_id: u64,
        bytes: u64,
        dst_address: u64,
        src_address: u64,
    }
}

columns! {
    /// A memory allocation or free.
    MemoryAllocation / MemoryAllocationColumns {
        /// See [`crate::MemoryAllocationOperation`].
        operation: u32,
        correlation_id: u64,
        external_correlation_id: u64,
        thread_id: u64,
        start: u64,
        end: u64,
        agent_id: u64,
        address: u64,
        allocation_size: u64,
    }
}

columns! {
    /// A scratch-memory event of a queue.
    ScratchMemory / ScratchMemoryColumns {
        /// See [`crate::ScratchMemoryOperation`].
        operation: u32,
        flags: u32,
        correlation_id: u64,
        external_correlation_id: u64,
        thread_id: u64,
        start: u64,
        end: u64,
        agent_id: u64,
        queue_id: u64,
        allocation_size: u64,
    }
}

columns! {
    /// An internal correlation id that no pending async record refers to any more.
    Retirement / RetirementColumns {
        timestamp: u64,
        correlation_id: u64,
    }
}

columns! {
    /// A runtime (HSA, HIP, marker, …) finished initialising.
    RuntimeInitialization / RuntimeInitializationColumns {
        /// See [`crate::RuntimeLibrary`].
        operation: u32,
        thread_id: u64,
        timestamp: u64,
        /// 10000·major + 100·minor + patch.
        version: u64,
        instance: u64,
    }
}

/// One delivery: every record family as columns.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Batch {
    pub api_calls: ApiCallColumns,
    pub kernel_dispatches: KernelDispatchColumns,
    pub memory_copies: MemoryCopyColumns,
    pub memory_allocations: MemoryAllocationColumns,
    pub scratch_memory: ScratchMemoryColumns,
    pub retirements: RetirementColumns,
    pub runtime_initializations: RuntimeInitializationColumns,
}

impl Batch {
    /// Total number of records across all tables.
    pub fn len(&self) -> usize {
        self.api_calls.len()
            + self.kernel_dispatches.len()
            + self.memory_copies.len()
            + self.memory_allocations.len()
            + self.scratch_memory.len()
            + self.retirements.len()
            + self.runtime_initializations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_consistent(&self) -> bool {
        self.api_calls.is_consistent()
            && self.kernel_dispatches.is_consistent()
            && self.memory_copies.is_consistent()
            && self.memory_allocations.is_consistent()
            && self.scratch_memory.is_consistent()
            && self.retirements.is_consistent()
            && self.runtime_initializations.is_consistent()
    }

    /// Appends every table of `other` to this batch.
    pub fn append(&mut self, other: &mut Batch) {
        self.api_calls.append(&mut other.api_calls);
        self.kernel_dispatches.append(&mut other.kernel_dispatches);
        self.memory_copies.append(&mut other.memory_copies);
        self.memory_allocations
            .append(&mut other.memory_allocations);
        self.scratch_memory.append(&mut other.scratch_memory);
        self.retirements.append(&mut other.retirements);
        self.runtime_initializations
            .append(&mut other.runtime_initializations);
    }
}

/// Operations of [`crate::BufferTracingKind::MemoryCopy`] records: the copy direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum MemoryCopyDirection {
    None = copy::NONE,
    HostToHost = copy::HOST_TO_HOST,
    HostToDevice = copy::HOST_TO_DEVICE,
    DeviceToHost = copy::DEVICE_TO_HOST,
    DeviceToDevice = copy::DEVICE_TO_DEVICE,
}

/// Operations of [`crate::BufferTracingKind::MemoryAllocation`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum MemoryAllocationOperation {
    None = allocation::NONE,
    Allocate = allocation::ALLOCATE,
    VmemAllocate = allocation::VMEM_ALLOCATE,
    Free = allocation::FREE,
    VmemFree = allocation::VMEM_FREE,
}

/// Operations of [`crate::BufferTracingKind::ScratchMemory`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum ScratchMemoryOperation {
    None = scratch::NONE,
    Alloc = scratch::ALLOC,
    Free = scratch::FREE,
    AsyncReclaim = scratch::ASYNC_RECLAIM,
}

/// Operations of [`crate::BufferTracingKind::RuntimeInitialization`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u32)]
pub enum RuntimeLibrary {
    None = runtime_init::NONE,
    Hsa = runtime_init::HSA,
    Hip = runtime_init::HIP,
    Marker = runtime_init::MARKER,
    Rccl = runtime_init::RCCL,
    Rocdecode = runtime_init::ROCDECODE,
    Rocjpeg = runtime_init::ROCJPEG,
}
