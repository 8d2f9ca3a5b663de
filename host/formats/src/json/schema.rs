//! The schema of `results.json`: one set of serde types that the writer
//! ([`super::JsonSink`]) serializes and the reader ([`crate::replay`])
//! deserializes.
//!
//! Field names are the SDK's C field names, as rocprofv3 writes them.
//! Writing, every field is written, in declaration order (the header
//! objects' fields are declared alphabetically: the order rocwasm has always
//! written them in). Reading, the order does not matter, unknown fields are
//! ignored and every field except the top-level `rocprofiler-sdk-tool` key
//! is optional (`#[serde(default)]`), so that the layouts of older and newer
//! rocprofv3 releases load; handles are accepted both as `{"handle": n}`
//! and as a bare number ([`Handle`]; numbers written bare, such as
//! addresses, accept the wrapped form too). Fields the reader has no use
//! for (the C structs' `size`, the `kind` of records whose category says
//! it, `metadata.tool`) accept any value: a value of another type reads as
//! 0 or empty rather than failing the file.

use rocwasm_core::ApiFamily;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

/// The whole file: one [`Process`] per profiled process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The processes, under the key `rocprofiler-sdk-tool`. Required: a
    /// JSON file without it is not a rocprofv3 trace.
    #[serde(rename = "rocprofiler-sdk-tool")]
    pub tool: Vec<Process>,
}

impl Document {
    /// The key of [`Document::tool`], for a writer that frames the document
    /// by hand.
    pub const TOOL_FIELD: &'static str = "rocprofiler-sdk-tool";
}

/// One process: its metadata, symbol tables, name tables and records.
///
/// The writer streams this object: [`Process::HEADER_FIELDS`] are
/// serialized one by one, then [`Process::RECORDS_FIELD`] is assembled from
/// the per-category record files (see [`super::JsonSink`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Process {
    /// Who, where, when.
    pub metadata: Metadata,
    /// The agents (CPUs and GPUs) records refer to by handle.
    pub agents: Vec<Agent>,
    /// The counters `callback_records.counter_collection` refers to by id.
    pub counters: Vec<CounterInfo>,
    /// The names of kind and operation numbers.
    pub strings: Strings,
    /// Code objects loaded by the process.
    pub code_objects: Vec<CodeObject>,
    /// Kernel symbols, referred to by `dispatch_info.kernel_id`.
    pub kernel_symbols: Vec<KernelSymbol>,
    /// Hardware counter values (dispatch counting), per dispatch.
    pub callback_records: CallbackRecords,
    /// The records, by category.
    pub buffer_records: Records,
}

impl Process {
    /// The keys of the fields before [`Self::CALLBACK_FIELD`], in order.
    pub const HEADER_FIELDS: [&'static str; 6] = [
        "metadata",
        "agents",
        "counters",
        "strings",
        "code_objects",
        "kernel_symbols",
    ];
    /// The key of the callback records object, before the records.
    pub const CALLBACK_FIELD: &'static str = "callback_records";
    /// The key of the records object, the last field.
    pub const RECORDS_FIELD: &'static str = "buffer_records";
}

/// The process's identity and the run's time span (`metadata`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Metadata {
    /// The command line, program first.
    pub command: Vec<String>,
    /// Run end, ns.
    pub fini_time: u64,
    /// The host's name.
    pub hostname: String,
    /// Run start, ns.
    pub init_time: u64,
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// MPI-style rank, `null` when none.
    pub rank: Option<u32>,
    /// The tool that wrote the file (`rocwasm`; absent in rocprofv3's).
    #[serde(deserialize_with = "lenient")]
    pub tool: String,
}

/// A handle (`rocprofiler_agent_id_t`, `rocprofiler_queue_id_t`, …):
/// written as `{"handle": n}`, read from that or from a bare number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "HandleOrNumber")]
pub struct Handle {
    /// The id.
    pub handle: u64,
}

impl From<u64> for Handle {
    fn from(handle: u64) -> Self {
        Handle { handle }
    }
}

/// The two ways files write a handle.
#[derive(Deserialize)]
#[serde(untagged)]
enum HandleOrNumber {
    Number(u64),
    Handle { handle: u64 },
}

impl From<HandleOrNumber> for Handle {
    fn from(h: HandleOrNumber) -> Self {
        match h {
            HandleOrNumber::Number(handle) | HandleOrNumber::Handle { handle } => Handle { handle },
        }
    }
}

/// A number written bare that some files wrap as a handle.
fn number_or_handle<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    HandleOrNumber::deserialize(d).map(|h| Handle::from(h).handle)
}

/// A field the reader does not use (sizes of C structs, kinds implied by
/// the category, the writing tool): any value is accepted, one of another
/// type reads as the default, so that it can never make a file unreadable.
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let value = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// `type` of an [`Agent`]: `rocprofiler_agent_type_t`'s CPU.
pub const AGENT_TYPE_CPU: u64 = 1;
/// `type` of an [`Agent`]: `rocprofiler_agent_type_t`'s GPU.
pub const AGENT_TYPE_GPU: u64 = 2;

/// One entry of `agents`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Agent {
    /// The handle records use.
    pub id: Handle,
    /// The node index rocprofv3 prints; preferred over `node_id` when
    /// present.
    pub logical_node_id: Option<u32>,
    /// The agent's name (`gfx90a`, the CPU's model).
    pub name: String,
    /// The KFD node id.
    pub node_id: u32,
    /// Marketing name (`AMD Instinct MI210`).
    pub product_name: String,
    /// Size of the C struct (read leniently; written as this build's).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// [`AGENT_TYPE_CPU`] or [`AGENT_TYPE_GPU`]; read also as a name
    /// (`"GPU"`), any other value meaning CPU (see [`Agent::is_gpu`]).
    #[serde(rename = "type")]
    pub agent_type: serde_json::Value,
    /// Hardware figures under the SDK agent struct's own field names, as
    /// rocprofv3 writes them; left out when not reported (0).
    #[serde(flatten)]
    pub hardware: AgentHardware,
}

/// The hardware fields of an [`Agent`] (rocprofiler-sdk's agent struct
/// names); each omitted from output when 0 and read leniently.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentHardware {
    /// Compute units.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub cu_count: u32,
    /// CPU cores (CPU agents).
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub cpu_cores_count: u32,
    /// SIMDs per compute unit.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub simd_per_cu: u32,
    /// Work-items per wavefront.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub wave_front_size: u32,
    /// Wavefronts per compute unit.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub max_waves_per_cu: u32,
    /// Peak engine clock, MHz.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub max_engine_clk_fcompute: u32,
    /// Largest work-group.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub workgroup_max_size: u32,
    /// Largest grid.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub grid_max_size: u32,
    /// PCI device id.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub device_id: u32,
    /// PCI bus/device/function.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient")]
    pub location_id: u32,
    /// Device memory, bytes.
    #[serde(skip_serializing_if = "is_zero_u64", deserialize_with = "lenient")]
    pub local_mem_size: u64,
}

impl AgentHardware {
    /// The fields of `p`, a CPU's compute units as its cores.
    pub fn from(p: &rocwasm_core::AgentProperties, agent_type: &rocwasm_core::AgentType) -> Self {
        let cpu = *agent_type == rocwasm_core::AgentType::Cpu;
        AgentHardware {
            cu_count: if cpu { 0 } else { p.compute_units },
            cpu_cores_count: if cpu { p.compute_units } else { 0 },
            simd_per_cu: p.simds_per_cu,
            wave_front_size: p.wavefront_size,
            max_waves_per_cu: p.max_waves_per_cu,
            max_engine_clk_fcompute: p.max_clock_mhz,
            workgroup_max_size: p.workgroup_max_size,
            grid_max_size: p.grid_max_size,
            device_id: p.chip_id,
            location_id: p.location_id,
            local_mem_size: p.local_memory_bytes,
        }
    }

    /// Back to the engine's properties (the fields a JSON file carries).
    pub fn properties(&self) -> rocwasm_core::AgentProperties {
        rocwasm_core::AgentProperties {
            compute_units: self.cu_count.max(self.cpu_cores_count),
            simds_per_cu: self.simd_per_cu,
            wavefront_size: self.wave_front_size,
            max_waves_per_cu: self.max_waves_per_cu,
            max_clock_mhz: self.max_engine_clk_fcompute,
            workgroup_max_size: self.workgroup_max_size,
            grid_max_size: self.grid_max_size,
            chip_id: self.device_id,
            location_id: self.location_id,
            local_memory_bytes: self.local_mem_size,
            ..Default::default()
        }
    }
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}

impl Agent {
    /// The engine's agent as rocprofiler-sdk's agent struct is written
    /// (`results.json`'s `agents`, rocpd's `rocpd_info_agent.extdata`).
    pub fn of(a: &rocwasm_core::AgentInfo) -> Self {
        Agent {
            id: Handle::from(a.id),
            logical_node_id: Some(a.node_id),
            name: a.name.clone(),
            node_id: a.node_id,
            product_name: a.product_name.clone(),
            size: struct_size::agent(),
            agent_type: match a.agent_type {
                rocwasm_core::AgentType::Cpu => AGENT_TYPE_CPU,
                rocwasm_core::AgentType::Gpu => AGENT_TYPE_GPU,
            }
            .into(),
            hardware: AgentHardware::from(&a.properties, &a.agent_type),
        }
    }

    /// Whether `type` says GPU, as a number or a name.
    pub fn is_gpu(&self) -> bool {
        match &self.agent_type {
            serde_json::Value::Number(n) => n.as_u64() == Some(AGENT_TYPE_GPU),
            serde_json::Value::String(s) => s.eq_ignore_ascii_case("GPU"),
            _ => false,
        }
    }
}

/// `strings`: name tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Strings {
    /// One entry per buffer-tracing kind number of the SDK that wrote the
    /// file (index = kind number).
    pub buffer_records: Vec<KindNames>,
}

/// The names of one kind and its operations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KindNames {
    /// The kind's name (`HIP_RUNTIME_API`; `NONE` for unused numbers).
    pub kind: String,
    /// Operation names, index = operation number.
    pub operations: Vec<String>,
    /// Operations registered under synthetic numbers (names the writing
    /// build did not know); rocwasm only, absent when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub synthetic_operations: Vec<SyntheticOperation>,
}

/// An operation under a synthetic number (see [`crate::names`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyntheticOperation {
    /// Its name.
    pub name: String,
    /// Its number.
    pub operation: u32,
}

/// `code_objects[]` storage: none.
pub const STORAGE_NONE: u32 = 0;
/// `code_objects[]` storage: a file descriptor (`storage_file`).
pub const STORAGE_FILE: u32 = 1;
/// `code_objects[]` storage: memory (`memory_base`, `memory_size`).
pub const STORAGE_MEMORY: u32 = 2;

/// One entry of `code_objects`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CodeObject {
    /// The agent, as some files name it; read when `rocp_agent` is absent,
    /// never written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<Handle>,
    /// The code object's id.
    pub code_object_id: u64,
    /// Load address.
    pub load_base: u64,
    /// Load delta (signed).
    pub load_delta: i64,
    /// Loaded size in bytes.
    pub load_size: u64,
    /// With [`STORAGE_MEMORY`]: where the code object is.
    pub memory_base: u64,
    /// With [`STORAGE_MEMORY`]: its size.
    pub memory_size: u64,
    /// The agent it is loaded on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rocp_agent: Option<Handle>,
    /// Size of the C struct (read leniently; written as this build's).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// With [`STORAGE_FILE`]: the file descriptor (else -1).
    pub storage_file: i32,
    /// [`STORAGE_NONE`], [`STORAGE_FILE`] or [`STORAGE_MEMORY`].
    pub storage_type: u32,
    /// The code object's URI (`file:///…#offset=…&size=…`).
    pub uri: String,
}

impl CodeObject {
    /// The engine's code object as rocprofiler-sdk's load record is
    /// written (`results.json`, rocpd's `rocpd_info_code_object.extdata`).
    pub fn of(c: &rocwasm_core::CodeObject) -> Self {
        use rocwasm_core::CodeObjectStorage as S;
        let (storage_type, storage_file, memory_base, memory_size) = match c.storage {
            S::None => (STORAGE_NONE, -1, 0, 0),
            S::File { fd } => (STORAGE_FILE, fd, 0, 0),
            S::Memory { base, size } => (STORAGE_MEMORY, -1, base, size),
        };
        CodeObject {
            agent_id: None,
            code_object_id: c.id,
            load_base: c.load_base,
            load_delta: c.load_delta,
            load_size: c.load_size,
            memory_base,
            memory_size,
            rocp_agent: Some(Handle::from(c.agent_id)),
            size: struct_size::code_object(),
            storage_file,
            storage_type,
            uri: c.uri.clone(),
        }
    }

    /// The agent: `rocp_agent`, else `agent_id`, else 0.
    pub fn agent(&self) -> u64 {
        self.rocp_agent.or(self.agent_id).unwrap_or_default().handle
    }
}

/// One entry of `kernel_symbols`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KernelSymbol {
    /// Accumulation vector registers.
    pub accum_vgpr_count: u32,
    /// Architectural vector registers.
    pub arch_vgpr_count: u32,
    /// The code object it belongs to.
    pub code_object_id: u64,
    /// Demangled name.
    pub demangled_kernel_name: String,
    /// Name as rocprofv3 prints it (demangled, maybe truncated).
    pub formatted_kernel_name: String,
    /// LDS per work-group, bytes.
    pub group_segment_size: u32,
    /// Kernel argument alignment.
    pub kernarg_segment_alignment: u32,
    /// Kernel argument size, bytes.
    pub kernarg_segment_size: u32,
    /// The kernel's address.
    pub kernel_address: Handle,
    /// Offset of the entry point in the kernel code object.
    pub kernel_code_entry_byte_offset: i64,
    /// The symbol's id, referred to by `dispatch_info.kernel_id`.
    pub kernel_id: u64,
    /// The (mangled) symbol name.
    pub kernel_name: String,
    /// The kernel object handle.
    pub kernel_object: u64,
    /// Scratch per work-item, bytes.
    pub private_segment_size: u32,
    /// Scalar registers.
    pub sgpr_count: u32,
    /// Size of the C struct (read leniently; written as this build's).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// Demangled name without arguments.
    pub truncated_kernel_name: String,
}

impl KernelSymbol {
    /// The engine's kernel symbol as rocprofv3 writes it: the SDK's
    /// register record plus the formatted, demangled and truncated names
    /// (`results.json`, rocpd's `rocpd_info_kernel_symbol.extdata`).
    pub fn of(k: &rocwasm_core::KernelSymbol) -> Self {
        KernelSymbol {
            accum_vgpr_count: k.accum_vgpr_count,
            arch_vgpr_count: k.arch_vgpr_count,
            code_object_id: k.code_object_id,
            demangled_kernel_name: k.demangled_name.clone(),
            formatted_kernel_name: k.display_name(),
            group_segment_size: k.group_segment_size,
            kernarg_segment_alignment: k.kernarg_segment_alignment,
            kernarg_segment_size: k.kernarg_segment_size,
            kernel_address: Handle::from(k.kernel_address),
            kernel_code_entry_byte_offset: k.kernel_code_entry_byte_offset,
            kernel_id: k.id,
            kernel_name: k.name.clone(),
            kernel_object: k.kernel_object,
            private_segment_size: k.private_segment_size,
            sgpr_count: k.sgpr_count,
            size: struct_size::kernel_symbol(),
            truncated_kernel_name: rocwasm_core::truncate_kernel_name(&k.demangled_name)
                .to_string(),
        }
    }
}

/// The `size` fields: the C structs' sizes as this build's headers lay
/// them out (`rocprofiler-sdk-sys`, checked against AMD's ABI table), as
/// rocprofv3 writes its own SDK's.
mod struct_size {
    use rocprofiler_sdk_sys::{c_sizeof, CodeObjectLoadData, KernelSymbolRegisterData};

    pub(super) fn agent() -> u32 {
        c_sizeof("rocprofiler_agent_v0_t").unwrap_or(0) as u32
    }

    pub(super) fn code_object() -> u32 {
        std::mem::size_of::<CodeObjectLoadData>() as u32
    }

    pub(super) fn kernel_symbol() -> u32 {
        std::mem::size_of::<KernelSymbolRegisterData>() as u32
    }
}

/// The `buffer_records` object: one array per category, in
/// [`CATEGORIES`] order.
///
/// Read by hand ([`Records`]'s `Deserialize`) rather than derived: a
/// category this build does not know (rocprofv3 adds some with new ROCm
/// releases) must be counted, not silently dropped, and counting its
/// elements with `IgnoredAny` costs no memory, where a catch-all
/// `#[serde(flatten)]` map would buffer the whole object.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Records {
    /// Kernel dispatches.
    pub kernel_dispatch: Vec<DispatchRecord>,
    /// HIP runtime and compiler API calls.
    pub hip_api: Vec<ApiRecord>,
    /// HSA API calls (all tables).
    pub hsa_api: Vec<ApiRecord>,
    /// roctx calls.
    pub marker_api: Vec<ApiRecord>,
    /// RCCL calls.
    pub rccl_api: Vec<ApiRecord>,
    /// Async memory copies.
    pub memory_copy: Vec<CopyRecord>,
    /// Memory allocations and frees.
    pub memory_allocation: Vec<AllocationRecord>,
    /// Scratch-memory events.
    pub scratch_memory: Vec<ScratchRecord>,
    /// rocDecode calls.
    pub rocdecode_api: Vec<ApiRecord>,
    /// rocJPEG calls.
    pub rocjpeg_api: Vec<ApiRecord>,
    /// Retired correlation ids (rocwasm's category: see [`category`]).
    pub correlation_id_retirement: Vec<RetirementRecord>,
    /// Runtime initialisations (rocwasm's category: see [`category`]).
    pub runtime_initialization: Vec<RuntimeInitRecord>,
    /// Categories this build does not read, with how many records each
    /// held (never written).
    #[serde(skip)]
    pub unread: Vec<(String, u64)>,
}

impl<'de> Deserialize<'de> for Records {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Records;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of record arrays by category")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Records, A::Error> {
                let mut r = Records::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        category::KERNEL_DISPATCH => r.kernel_dispatch = map.next_value()?,
                        category::HIP_API => r.hip_api = map.next_value()?,
                        category::HSA_API => r.hsa_api = map.next_value()?,
                        category::MARKER_API => r.marker_api = map.next_value()?,
                        category::RCCL_API => r.rccl_api = map.next_value()?,
                        category::MEMORY_COPY => r.memory_copy = map.next_value()?,
                        category::MEMORY_ALLOCATION => r.memory_allocation = map.next_value()?,
                        category::SCRATCH_MEMORY => r.scratch_memory = map.next_value()?,
                        category::ROCDECODE_API => r.rocdecode_api = map.next_value()?,
                        category::ROCJPEG_API => r.rocjpeg_api = map.next_value()?,
                        category::CORRELATION_ID_RETIREMENT => {
                            r.correlation_id_retirement = map.next_value()?
                        }
                        category::RUNTIME_INITIALIZATION => {
                            r.runtime_initialization = map.next_value()?
                        }
                        _ => {
                            let n = map.next_value::<Count>()?.0;
                            r.unread.push((key, n));
                        }
                    }
                }
                Ok(r)
            }
        }
        d.deserialize_map(Visit)
    }
}

/// How many elements an array holds (0 for anything else), read without
/// keeping them.
struct Count(u64);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Count;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Count, A::Error> {
                let mut n = 0;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Count(n))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Count, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Count(0))
            }
            fn visit_unit<E>(self) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Count, E> {
                Ok(Count(0))
            }
            fn visit_str<E>(self, _: &str) -> Result<Count, E> {
                Ok(Count(0))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// The keys of [`Records`], one constant per category: rocprofv3's, and
/// two of rocwasm's own for the record kinds rocprofv3 writes to no file
/// (retired correlation ids, runtime initialisations), so that nothing a
/// run recorded is missing from its JSON; a reader that does not know a
/// key skips it.
pub mod category {
    use rocwasm_core::ApiFamily;

    /// Kernel dispatches.
    pub const KERNEL_DISPATCH: &str = "kernel_dispatch";
    /// HIP API calls ([`ApiFamily::category`]).
    pub const HIP_API: &str = ApiFamily::Hip.category();
    /// HSA API calls.
    pub const HSA_API: &str = ApiFamily::Hsa.category();
    /// roctx calls.
    pub const MARKER_API: &str = ApiFamily::Marker.category();
    /// RCCL calls.
    pub const RCCL_API: &str = ApiFamily::Rccl.category();
    /// Async memory copies.
    pub const MEMORY_COPY: &str = "memory_copy";
    /// Allocations and frees.
    pub const MEMORY_ALLOCATION: &str = "memory_allocation";
    /// Scratch-memory events.
    pub const SCRATCH_MEMORY: &str = "scratch_memory";
    /// rocDecode calls.
    pub const ROCDECODE_API: &str = ApiFamily::Rocdecode.category();
    /// rocJPEG calls.
    pub const ROCJPEG_API: &str = ApiFamily::Rocjpeg.category();
    /// Retired internal correlation ids (rocwasm's).
    pub const CORRELATION_ID_RETIREMENT: &str = "correlation_id_retirement";
    /// Runtime initialisations (rocwasm's).
    pub const RUNTIME_INITIALIZATION: &str = "runtime_initialization";
}

/// The keys of [`Records`], in file order.
pub const CATEGORIES: [&str; 12] = [
    category::KERNEL_DISPATCH,
    category::HIP_API,
    category::HSA_API,
    category::MARKER_API,
    category::RCCL_API,
    category::MEMORY_COPY,
    category::MEMORY_ALLOCATION,
    category::SCRATCH_MEMORY,
    category::ROCDECODE_API,
    category::ROCJPEG_API,
    category::CORRELATION_ID_RETIREMENT,
    category::RUNTIME_INITIALIZATION,
];

/// The `buffer_records` category of an API kind (`None` for API kinds
/// rocprofv3 has no category for: OpenMP calls, unknown kinds).
pub fn api_category(kind: u32) -> Option<&'static str> {
    Some(ApiFamily::of_raw(kind)?.category())
}

/// The correlation ids of an asynchronous record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Correlation {
    /// Internal correlation id: the API call that caused the record.
    pub internal: u64,
    /// The tool's external correlation id (0: none); read also as a handle.
    #[serde(deserialize_with = "number_or_handle")]
    pub external: u64,
}

/// The correlation ids of an API call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApiCorrelation {
    /// Internal correlation id of the call.
    pub internal: u64,
    /// The tool's external correlation id (0: none); read also as a handle.
    #[serde(deserialize_with = "number_or_handle")]
    pub external: u64,
    /// The enclosing call's internal id (0 at top level).
    pub ancestor: u64,
}

/// A grid or work-group size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Dim3 {
    /// x.
    pub x: u32,
    /// y.
    pub y: u32,
    /// z.
    pub z: u32,
}

/// An API call (`rocprofiler_buffer_tracing_*_api_record_t`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ApiRecord {
    /// Size of the C record ([`ApiRecord::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// Kind number, in the writing SDK's numbering (see [`Strings`]).
    pub kind: u32,
    /// Operation number, likewise.
    pub operation: u32,
    /// Correlation ids.
    pub correlation_id: ApiCorrelation,
    /// Call start, ns.
    pub start_timestamp: u64,
    /// Call end, ns.
    pub end_timestamp: u64,
    /// OS thread id of the caller.
    pub thread_id: u64,
}

impl ApiRecord {
    /// `sizeof` the SDK's API record.
    pub const SIZE: u32 = 64;
}

/// A kernel dispatch (`rocprofiler_buffer_tracing_kernel_dispatch_record_t`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DispatchRecord {
    /// Size of the C record ([`DispatchRecord::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// Kind number (not read: the category says it).
    #[serde(deserialize_with = "lenient")]
    pub kind: u32,
    /// Operation number (always `KERNEL_DISPATCH_COMPLETE` in buffers; not
    /// read).
    #[serde(deserialize_with = "lenient")]
    pub operation: u32,
    /// Correlation ids.
    pub correlation_id: Correlation,
    /// OS thread id of the launching thread.
    pub thread_id: u64,
    /// Kernel start, ns.
    pub start_timestamp: u64,
    /// Kernel end, ns.
    pub end_timestamp: u64,
    /// HIP stream.
    pub stream_id: Handle,
    /// What was dispatched where.
    pub dispatch_info: DispatchInfo,
}

impl DispatchRecord {
    /// `sizeof` the SDK's kernel-dispatch record.
    pub const SIZE: u32 = 184;
}

/// One counter (`counters`): rocprofv3 writes `rocprofiler_counter_info_v1_t`
/// with the agent it was collected on. rocwasm's ids are its run's counter
/// ids (one per name); it writes no dimensions or instances (its values
/// are summed over the instances).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CounterInfo {
    /// The agent.
    pub agent_id: Handle,
    /// The id `counter_collection`'s values name.
    pub id: Handle,
    /// 1 for a constant of the agent.
    #[serde(deserialize_with = "lenient")]
    pub is_constant: u8,
    /// 1 for a derived counter.
    #[serde(deserialize_with = "lenient")]
    pub is_derived: u8,
    /// The counter's name.
    pub name: String,
    /// Its description.
    #[serde(deserialize_with = "lenient")]
    pub description: String,
    /// Its hardware block (empty when derived).
    #[serde(deserialize_with = "lenient")]
    pub block: String,
    /// Its expression (empty when not derived).
    #[serde(deserialize_with = "lenient")]
    pub expression: String,
    /// Its dimensions (not read).
    #[serde(deserialize_with = "lenient")]
    pub dimensions: Vec<serde_json::Value>,
    /// Its instances (not read).
    #[serde(deserialize_with = "lenient")]
    pub instances: Vec<serde_json::Value>,
}

/// `callback_records`: what rocprofv3 collects by callback.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CallbackRecords {
    /// One record per counted dispatch.
    pub counter_collection: Vec<CounterCollectionRecord>,
}

impl CallbackRecords {
    /// The key of [`CallbackRecords::counter_collection`].
    pub const COUNTER_COLLECTION: &'static str = "counter_collection";
}

/// A dispatch's counter values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CounterCollectionRecord {
    /// The thread that launched the kernel.
    pub thread_id: u64,
    /// The dispatch (`rocprofiler_dispatch_counting_service_data_t`).
    pub dispatch_data: DispatchData,
    /// Each counter's value.
    pub records: Vec<CounterValue>,
    /// The stream (0: none).
    pub stream_id: Handle,
}

/// `dispatch_data` of a [`CounterCollectionRecord`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DispatchData {
    /// Size of the C struct ([`DispatchData::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// The launching call's correlation ids.
    pub correlation_id: Correlation,
    /// Kernel start, ns.
    pub start_timestamp: u64,
    /// Kernel end, ns.
    pub end_timestamp: u64,
    /// The dispatch.
    pub dispatch_info: DispatchInfo,
}

impl DispatchData {
    /// `sizeof(rocprofiler_dispatch_counting_service_data_t)`.
    pub const SIZE: u32 = 168;
}

/// One counter's value in a [`CounterCollectionRecord`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CounterValue {
    /// The counter ([`CounterInfo::id`]).
    pub counter_id: Handle,
    /// The value (summed over the counter's instances).
    pub value: f64,
}

/// `dispatch_info` of a [`DispatchRecord`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DispatchInfo {
    /// Size of the C struct ([`DispatchInfo::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// The GPU.
    pub agent_id: Handle,
    /// The HSA queue.
    pub queue_id: Handle,
    /// The kernel symbol.
    pub kernel_id: u64,
    /// The dispatch's id.
    pub dispatch_id: u64,
    /// Scratch per work-item, bytes.
    pub private_segment_size: u32,
    /// LDS per work-group, bytes.
    pub group_segment_size: u32,
    /// Work-group size.
    pub workgroup_size: Dim3,
    /// Grid size.
    pub grid_size: Dim3,
}

impl DispatchInfo {
    /// The `dispatch_info` of a dispatch (of its record, or of its counter
    /// samples).
    pub fn of(d: &rocwasm_core::KernelDispatch) -> DispatchInfo {
        DispatchInfo {
            size: DispatchInfo::SIZE,
            agent_id: Handle::from(d.agent_id),
            queue_id: Handle::from(d.queue_id),
            kernel_id: d.kernel_id,
            dispatch_id: d.dispatch_id,
            private_segment_size: d.private_segment_size,
            group_segment_size: d.group_segment_size,
            workgroup_size: Dim3 {
                x: d.workgroup_x,
                y: d.workgroup_y,
                z: d.workgroup_z,
            },
            grid_size: Dim3 {
                x: d.grid_x,
                y: d.grid_y,
                z: d.grid_z,
            },
        }
    }

    /// `sizeof` the SDK's dispatch info.
    pub const SIZE: u32 = 128;
}

/// An async memory copy (`rocprofiler_buffer_tracing_memory_copy_record_t`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CopyRecord {
    /// Size of the C record ([`CopyRecord::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// Kind number (not read: the category says it).
    #[serde(deserialize_with = "lenient")]
    pub kind: u32,
    /// The direction, in the writing SDK's numbering.
    pub operation: u32,
    /// Correlation ids.
    pub correlation_id: Correlation,
    /// OS thread id.
    pub thread_id: u64,
    /// Copy start, ns.
    pub start_timestamp: u64,
    /// Copy end, ns.
    pub end_timestamp: u64,
    /// Destination agent.
    pub dst_agent_id: Handle,
    /// Source agent.
    pub src_agent_id: Handle,
    /// Bytes copied.
    pub bytes: u64,
    /// Destination address; read also as a handle.
    #[serde(deserialize_with = "number_or_handle")]
    pub dst_address: u64,
    /// Source address; read also as a handle.
    #[serde(deserialize_with = "number_or_handle")]
    pub src_address: u64,
    /// HIP stream.
    pub stream_id: Handle,
}

impl CopyRecord {
    /// `sizeof` the SDK's memory-copy record.
    pub const SIZE: u32 = 96;
}

/// An allocation or free (`rocprofiler_buffer_tracing_memory_allocation_record_t`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AllocationRecord {
    /// Size of the C record ([`AllocationRecord::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// Kind number (not read: the category says it).
    #[serde(deserialize_with = "lenient")]
    pub kind: u32,
    /// The operation, in the writing SDK's numbering.
    pub operation: u32,
    /// Correlation ids.
    pub correlation_id: Correlation,
    /// OS thread id.
    pub thread_id: u64,
    /// Start, ns.
    pub start_timestamp: u64,
    /// End, ns.
    pub end_timestamp: u64,
    /// The agent whose memory it is.
    pub agent_id: Handle,
    /// Address; read also as a handle.
    #[serde(deserialize_with = "number_or_handle")]
    pub address: u64,
    /// Bytes.
    pub allocation_size: u64,
}

impl AllocationRecord {
    /// `sizeof` the SDK's memory-allocation record.
    pub const SIZE: u32 = 88;
}

/// A scratch-memory event (`rocprofiler_buffer_tracing_scratch_memory_record_t`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScratchRecord {
    /// Size of the C record ([`ScratchRecord::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// Kind number (not read: the category says it).
    #[serde(deserialize_with = "lenient")]
    pub kind: u32,
    /// The operation, in the writing SDK's numbering.
    pub operation: u32,
    /// Correlation ids.
    pub correlation_id: Correlation,
    /// The GPU.
    pub agent_id: Handle,
    /// The queue the scratch belongs to.
    pub queue_id: Handle,
    /// OS thread id.
    pub thread_id: u64,
    /// Start, ns.
    pub start_timestamp: u64,
    /// End, ns.
    pub end_timestamp: u64,
    /// `hsa_amd_event_scratch_alloc_flag_t` bits.
    pub flags: u32,
    /// Bytes.
    pub allocation_size: u64,
}

impl ScratchRecord {
    /// `sizeof` the SDK's scratch-memory record.
    pub const SIZE: u32 = 96;
}

/// A retired internal correlation id
/// (`rocprofiler_buffer_tracing_correlation_id_retirement_record_t`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetirementRecord {
    /// Size of the C record ([`RetirementRecord::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// Kind number (not read: the category says it).
    #[serde(deserialize_with = "lenient")]
    pub kind: u32,
    /// When the id retired, ns.
    pub timestamp: u64,
    /// The retired id.
    pub internal_correlation_id: u64,
}

impl RetirementRecord {
    /// `sizeof` the SDK's retirement record.
    pub const SIZE: u32 = 32;
}

/// A runtime's initialisation
/// (`rocprofiler_buffer_tracing_runtime_initialization_record_t`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RuntimeInitRecord {
    /// Size of the C record ([`RuntimeInitRecord::SIZE`]).
    #[serde(deserialize_with = "lenient")]
    pub size: u32,
    /// Kind number (not read: the category says it).
    #[serde(deserialize_with = "lenient")]
    pub kind: u32,
    /// Which runtime (HSA, HIP, marker, …), in the SDK's numbering.
    pub operation: u32,
    /// Correlation ids (zero: an initialisation belongs to no call).
    pub correlation_id: Correlation,
    /// OS thread id.
    pub thread_id: u64,
    /// When, ns.
    pub timestamp: u64,
    /// 10000·major + 100·minor + patch.
    pub version: u64,
    /// Which initialisation of the library in the process.
    pub instance: u64,
}

impl RuntimeInitRecord {
    /// `sizeof` the SDK's runtime-initialisation record.
    pub const SIZE: u32 = 72;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys the writer frames by hand are the structs' field names, in
    /// the structs' order.
    #[test]
    fn hand_written_keys_are_the_field_names() {
        let process = serde_json::to_string(&Process::default()).unwrap();
        let mut at = 0;
        for key in Process::HEADER_FIELDS
            .iter()
            .chain(&[Process::RECORDS_FIELD])
        {
            let found = process[at..]
                .find(&format!("\"{key}\":"))
                .unwrap_or_else(|| panic!("{key} missing or out of order in {process}"));
            at += found + 1;
        }
        let records = serde_json::to_string(&Records::default()).unwrap();
        let want: Vec<String> = CATEGORIES.iter().map(|c| format!("\"{c}\":[]")).collect();
        assert_eq!(records, format!("{{{}}}", want.join(",")));
        let doc = serde_json::to_string(&Document { tool: Vec::new() }).unwrap();
        assert_eq!(doc, format!("{{\"{}\":[]}}", Document::TOOL_FIELD));
    }

    #[test]
    fn handles_and_addresses_read_bare_or_wrapped() {
        let a: CopyRecord = serde_json::from_str(
            r#"{"dst_agent_id": 5, "src_agent_id": {"handle": 6}, "dst_address": {"handle": 7}, "src_address": 8}"#,
        )
        .unwrap();
        assert_eq!((a.dst_agent_id.handle, a.src_agent_id.handle), (5, 6));
        assert_eq!((a.dst_address, a.src_address), (7, 8));
        // Fields nobody reads never fail a file.
        let d: DispatchRecord =
            serde_json::from_str(r#"{"size": "big", "kind": null, "thread_id": 4}"#).unwrap();
        assert_eq!((d.size, d.kind, d.thread_id), (0, 0, 4));
        let c: CodeObject = serde_json::from_str(r#"{"agent_id": 3}"#).unwrap();
        assert_eq!(c.agent(), 3);
        let c: CodeObject =
            serde_json::from_str(r#"{"agent_id": 3, "rocp_agent": {"handle": 0}}"#).unwrap();
        assert_eq!(c.agent(), 0);
    }
}
