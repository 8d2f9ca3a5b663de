//! Agents, code objects and kernel symbols: the lookup tables that records
//! refer to by id (`agent_id`, `kernel_id`, `code_object_id`).
//!
//! Interception fills them from the HSA loader; replay fills them from the
//! recorded trace. Plugins query them through the host instead of keeping
//! their own copy.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};

use crate::naming::KernelNaming;

/// What kind of device an agent is (the SDK's `rocprofiler_agent_type_t`,
/// without its `NONE`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum AgentType {
    /// A host CPU (an HSA CPU agent).
    Cpu,
    /// A GPU (an HSA GPU agent).
    Gpu,
}

/// One agent (HSA's word for a device) that records name by
/// [`AgentInfo::id`], as the SDK's `rocprofiler_agent_t` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// The id that records' `agent_id` fields hold. Interception numbers the
    /// HSA agents in the runtime's enumeration order from 0 (the runtime
    /// lists CPUs first); replay keeps the trace's ids. Not the HSA handle.
    pub id: u64,
    /// Logical node index as rocprofv3 prints it (`Agent_Id` column).
    pub node_id: u32,
    /// CPU or GPU.
    pub agent_type: AgentType,
    /// e.g. `gfx90a` for a GPU, the CPU model name for a CPU.
    pub name: String,
    /// The marketing name (HSA's `AMD_AGENT_INFO_PRODUCT_NAME`), e.g.
    /// `AMD Instinct MI210`.
    pub product_name: String,
    /// What the runtime reported of the hardware; all zero where the source
    /// did not say (replayed traces record none of it).
    #[serde(default)]
    pub properties: AgentProperties,
}

/// An agent's hardware as the HSA runtime reports it (`hsa_agent_get_info`),
/// the subset rocprofiler-sdk's agent struct carries that HSA can answer.
/// Zero means "not reported".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentProperties {
    /// Compute units (`HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT`); for a CPU,
    /// its cores.
    pub compute_units: u32,
    /// SIMDs per compute unit (`HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU`).
    pub simds_per_cu: u32,
    /// Work-items per wavefront (`HSA_AGENT_INFO_WAVEFRONT_SIZE`).
    pub wavefront_size: u32,
    /// Wavefronts a compute unit can hold (`HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU`).
    pub max_waves_per_cu: u32,
    /// Peak engine clock in MHz (`HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY`).
    pub max_clock_mhz: u32,
    /// Largest work-group (`HSA_AGENT_INFO_WORKGROUP_MAX_SIZE`).
    pub workgroup_max_size: u32,
    /// Largest work-group per dimension (`HSA_AGENT_INFO_WORKGROUP_MAX_DIM`).
    pub workgroup_max_dim: [u32; 3],
    /// Largest grid (`HSA_AGENT_INFO_GRID_MAX_SIZE`).
    pub grid_max_size: u32,
    /// Largest grid per dimension (`HSA_AGENT_INFO_GRID_MAX_DIM`).
    pub grid_max_dim: [u32; 3],
    /// The PCI device id (`HSA_AMD_AGENT_INFO_CHIP_ID`).
    pub chip_id: u32,
    /// PCI bus, device and function (`HSA_AMD_AGENT_INFO_BDFID`).
    pub location_id: u32,
    /// Bytes of the agent's largest global memory pool (device memory for a
    /// GPU).
    pub local_memory_bytes: u64,
    /// The runtime's UUID text (`HSA_AMD_AGENT_INFO_UUID`), e.g. `GPU-…`.
    pub uuid: String,
}

/// How a code object was handed to the loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CodeObjectStorage {
    /// Unknown: the loader reported no storage type (the SDK's
    /// `CODE_OBJECT_STORAGE_TYPE_NONE`), or the trace did not record it.
    None,
    /// Loaded from a file (`CODE_OBJECT_STORAGE_TYPE_FILE`).
    File {
        /// The file descriptor in the profiled process at load time (it
        /// may have been closed since).
        fd: i32,
    },
    /// Loaded from host memory (`CODE_OBJECT_STORAGE_TYPE_MEMORY`), e.g. a
    /// fat binary embedded in the application.
    Memory {
        /// Host address of the code object's bytes at load time.
        base: u64,
        /// Their length in bytes.
        size: u64,
    },
}

/// A code object loaded onto one agent: the SDK's
/// `rocprofiler_callback_tracing_code_object_load_data_t`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeObject {
    /// Unique in the run; what [`KernelSymbol::code_object_id`] refers to.
    pub id: u64,
    /// The agent it was loaded onto ([`AgentInfo::id`]).
    pub agent_id: u64,
    /// Where the loader read it from, e.g.
    /// `file:///path/app#offset=4096&size=8192` or
    /// `memory://<pid>#offset=0x7f…&size=8192`.
    pub uri: String,
    /// Device address of the lowest loaded segment.
    pub load_base: u64,
    /// Bytes of the contiguous allocation holding the loaded segments.
    pub load_size: u64,
    /// Load address minus the virtual address the code object's ELF
    /// specifies: add it to an ELF address to get the device address.
    pub load_delta: i64,
    /// What the loader read the code object from.
    pub storage: CodeObjectStorage,
}

/// A kernel of a loaded code object: the SDK's
/// `rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t`.
/// Sizes are in bytes; the register counts are what the hardware allocates
/// (rocprofv3's `SGPR_Count`, `VGPR_Count`, `Accum_VGPR_Count`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSymbol {
    /// Matches `KernelDispatch::kernel_id`.
    pub id: u64,
    /// The code object defining the kernel ([`CodeObject::id`]); 0 for a
    /// kernel known only from HIP's host-side registration.
    pub code_object_id: u64,
    /// The mangled name, as the code object has it.
    pub name: String,
    /// The demangled name (equal to `name` when it is not a mangled C++ name).
    pub demangled_name: String,
    /// The handle that appears in the AQL packet's `kernel_object`: the
    /// device address of the kernel descriptor; 0 when unknown.
    pub kernel_object: u64,
    /// Bytes of the kernel-argument segment a dispatch must supply.
    pub kernarg_segment_size: u32,
    /// Required alignment of that segment, in bytes.
    pub kernarg_segment_alignment: u32,
    /// Static group (LDS) memory per work-group, in bytes.
    pub group_segment_size: u32,
    /// Static private (scratch) memory per work-item, in bytes.
    pub private_segment_size: u32,
    /// Scalar registers allocated per wavefront.
    pub sgpr_count: u32,
    /// Architectural vector registers allocated per work-item.
    pub arch_vgpr_count: u32,
    /// Accumulation vector registers (AGPRs, for matrix instructions)
    /// allocated per work-item; 0 on GPUs without them.
    pub accum_vgpr_count: u32,
    /// Byte offset from the kernel descriptor to the kernel's first
    /// instruction (from the descriptor; 0 when unknown).
    pub kernel_code_entry_byte_offset: i64,
    /// The kernel's address: for a symbol from the HSA loader the same as
    /// `kernel_object`; for a kernel known only from HIP's registration, the
    /// host stub function's address.
    pub kernel_address: u64,
}

impl KernelSymbol {
    /// The name the outputs write and the kernel options match: the
    /// demangled name, else the mangled one, else [`unknown_kernel_name`].
    pub fn display_name(&self) -> String {
        if !self.demangled_name.is_empty() {
            self.demangled_name.clone()
        } else if !self.name.is_empty() {
            self.name.clone()
        } else {
            unknown_kernel_name(self.id)
        }
    }
}

/// The name written for a kernel id no symbol describes.
pub fn unknown_kernel_name(id: u64) -> String {
    format!("kernel_{id}")
}

/// A concurrent id → info table. Kernel names stay valid until finalization,
/// so entries are never removed while a run is live (an unload leaves them in
/// place).
#[derive(Debug, Default)]
pub struct SymbolTable {
    agents: RwLock<BTreeMap<u64, AgentInfo>>,
    code_objects: RwLock<BTreeMap<u64, CodeObject>>,
    kernels: RwLock<BTreeMap<u64, KernelSymbol>>,
    /// How inserted kernels are named (`-T`, `-M`).
    naming: RwLock<KernelNaming>,
    /// (kernel id, new name) → the renamed kernel's id (`--kernel-rename`).
    renames: RwLock<HashMap<(u64, String), u64>>,
    /// Every insertion in order (which entry; its value is in the maps): a
    /// reader that follows the table (the record journal) reads each
    /// insertion once ([`SymbolTable::inserted_since`]) instead of copying
    /// the whole table each time it grows.
    log: RwLock<Vec<SymbolKey>>,
    /// Marker messages: each distinct text's operation number
    /// ([`rocwasm_ids::ops::MARKER_MESSAGE_BASE`] up), both ways.
    markers: RwLock<Markers>,
    /// Hardware counter names: each distinct name's id (a counter sample's
    /// `counter_id`), both ways, ids from 1.
    counters: RwLock<Markers>,
}

/// Marker messages by text and by operation number.
#[derive(Debug, Default)]
struct Markers {
    by_text: HashMap<Arc<str>, u32>,
    by_op: BTreeMap<u32, Arc<str>>,
}

/// Which entry of a [`SymbolTable`] an insertion added or replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKey {
    /// An agent, by id.
    Agent(u64),
    /// A code object, by id.
    CodeObject(u64),
    /// A kernel symbol, by id.
    Kernel(u64),
    /// A marker message, by its operation number.
    Marker(u32),
    /// A counter name, by its id.
    Counter(u32),
}

/// The entries a table gained (or replaced) since a reader's cursor, each
/// once, with its value now.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InsertedSymbols {
    /// Agents added or replaced.
    pub agents: Vec<AgentInfo>,
    /// Code objects added or replaced.
    pub code_objects: Vec<CodeObject>,
    /// Kernel symbols added or replaced.
    pub kernels: Vec<KernelSymbol>,
    /// Marker messages interned: (operation number, text).
    pub markers: Vec<(u32, String)>,
    /// Counter names interned: (id, name).
    pub counters: Vec<(u32, String)>,
}

impl InsertedSymbols {
    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
            && self.code_objects.is_empty()
            && self.kernels.is_empty()
            && self.markers.is_empty()
            && self.counters.is_empty()
    }
}

/// Renamed kernels' ids start here, far above any id a runtime or a
/// recording hands out, so they never collide with one.
pub const RENAMED_KERNEL_IDS: u64 = 1 << 48;

impl SymbolTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `agent`, replacing any entry with the same id.
    pub fn insert_agent(&self, agent: AgentInfo) {
        let key = SymbolKey::Agent(agent.id);
        write(&self.agents).insert(agent.id, agent);
        self.logged(key);
    }

    /// Appends `key` to the insertion log (after the entry is in its map,
    /// so a reader that sees the key finds the entry).
    fn logged(&self, key: SymbolKey) {
        write(&self.log).push(key);
    }

    /// What was inserted since `cursor` (0 for everything), each entry once
    /// with its value now, and the cursor for the next call. Costs what was
    /// inserted, not the table's size.
    pub fn inserted_since(&self, cursor: usize) -> (InsertedSymbols, usize) {
        let keys: Vec<SymbolKey> = {
            let log = read(&self.log);
            log.get(cursor..).unwrap_or_default().to_vec()
        };
        let next = cursor + keys.len();
        let mut seen = std::collections::HashSet::new();
        let mut out = InsertedSymbols::default();
        // The newest insertion of an entry stands for the earlier ones.
        for key in keys.into_iter().rev() {
            if !seen.insert(key) {
                continue;
            }
            match key {
                SymbolKey::Agent(id) => out.agents.extend(self.agent(id)),
                SymbolKey::CodeObject(id) => out.code_objects.extend(self.code_object(id)),
                SymbolKey::Kernel(id) => out.kernels.extend(self.kernel(id)),
                SymbolKey::Marker(op) => out
                    .markers
                    .extend(self.marker(op).map(|t| (op, t.to_string()))),
                SymbolKey::Counter(id) => out
                    .counters
                    .extend(self.counter_name(id).map(|t| (id, t.to_string()))),
            }
        }
        out.agents.reverse();
        out.code_objects.reverse();
        out.kernels.reverse();
        out.markers.reverse();
        out.counters.reverse();
        (out, next)
    }

    /// The operation number of marker message `text` (a
    /// `MARKER_CORE_RANGE_API` record's operation), interned the first time
    /// it is seen. A known message costs one read lock and a hash lookup.
    pub fn intern_marker(&self, text: &str) -> u32 {
        if let Some(&op) = read(&self.markers).by_text.get(text) {
            return op;
        }
        let op = {
            let mut m = write(&self.markers);
            if let Some(&op) = m.by_text.get(text) {
                return op;
            }
            // After the highest number in use: a recording's journal may
            // have inserted numbers of its own (`insert_marker`).
            let base = rocwasm_ids::ops::MARKER_MESSAGE_BASE;
            let op = m
                .by_op
                .last_key_value()
                .map_or(base, |(&k, _)| (k + 1).max(base));
            let text: Arc<str> = Arc::from(text);
            m.by_text.insert(text.clone(), op);
            m.by_op.insert(op, text);
            op
        };
        self.logged(SymbolKey::Marker(op));
        op
    }

    /// Adds marker message `text` under `op` (a recording's journal).
    pub fn insert_marker(&self, op: u32, text: &str) {
        {
            let mut m = write(&self.markers);
            let text: Arc<str> = Arc::from(text);
            m.by_text.entry(text.clone()).or_insert(op);
            m.by_op.insert(op, text);
        }
        self.logged(SymbolKey::Marker(op));
    }

    /// Every marker message, by operation number.
    pub fn markers(&self) -> Vec<(u32, Arc<str>)> {
        read(&self.markers)
            .by_op
            .iter()
            .map(|(op, t)| (*op, t.clone()))
            .collect()
    }

    /// The marker message of operation `op` of `MARKER_CORE_RANGE_API`.
    pub fn marker(&self, op: u32) -> Option<Arc<str>> {
        read(&self.markers).by_op.get(&op).cloned()
    }

    /// The id of hardware counter `name` (a counter sample's
    /// `counter_id`), interned the first time it is seen; ids start at 1.
    pub fn intern_counter(&self, name: &str) -> u32 {
        if let Some(&id) = read(&self.counters).by_text.get(name) {
            return id;
        }
        let id = {
            let mut c = write(&self.counters);
            if let Some(&id) = c.by_text.get(name) {
                return id;
            }
            let id = c.by_op.last_key_value().map_or(1, |(&k, _)| k + 1);
            let name: Arc<str> = Arc::from(name);
            c.by_text.insert(name.clone(), id);
            c.by_op.insert(id, name);
            id
        };
        self.logged(SymbolKey::Counter(id));
        id
    }

    /// Adds counter name `name` under `id` (a recording's journal).
    pub fn insert_counter(&self, id: u32, name: &str) {
        {
            let mut c = write(&self.counters);
            let name: Arc<str> = Arc::from(name);
            c.by_text.entry(name.clone()).or_insert(id);
            c.by_op.insert(id, name);
        }
        self.logged(SymbolKey::Counter(id));
    }

    /// The name of counter `id`.
    pub fn counter_name(&self, id: u32) -> Option<Arc<str>> {
        read(&self.counters).by_op.get(&id).cloned()
    }

    /// Every counter name, by id.
    pub fn counters(&self) -> Vec<(u32, Arc<str>)> {
        read(&self.counters)
            .by_op
            .iter()
            .map(|(id, t)| (*id, t.clone()))
            .collect()
    }

    /// Adds `co`, replacing any entry with the same id.
    pub fn insert_code_object(&self, co: CodeObject) {
        let key = SymbolKey::CodeObject(co.id);
        write(&self.code_objects).insert(co.id, co);
        self.logged(key);
    }

    /// Adds `k`, named as [`SymbolTable::set_naming`] says, replacing any
    /// entry with the same id.
    pub fn insert_kernel(&self, k: KernelSymbol) {
        let k = self.named(k);
        self.insert_kernel_as_named(k);
    }

    /// Adds `k` with the display name it has (a symbol another table
    /// already named), replacing any entry with the same id.
    pub fn insert_kernel_as_named(&self, k: KernelSymbol) {
        let key = SymbolKey::Kernel(k.id);
        write(&self.kernels).insert(k.id, k);
        self.logged(key);
    }

    /// Names the kernels inserted from now on as `naming` says (set it
    /// before the first kernel arrives).
    pub fn set_naming(&self, naming: KernelNaming) {
        *write(&self.naming) = naming;
    }

    /// `k` named as this table names kernels (what [`Self::insert_kernel`]
    /// stores).
    pub fn named(&self, mut k: KernelSymbol) -> KernelSymbol {
        k.demangled_name = read(&self.naming).display_name(&k.name, &k.demangled_name);
        k
    }

    /// The id of kernel `id` renamed `name` (`--kernel-rename`): a copy of
    /// its symbol under a new id from [`RENAMED_KERNEL_IDS`] on, whose
    /// display name is `name`; the same id for the same pair every time.
    /// `None` when `id` is not in the table.
    pub fn renamed_kernel(&self, id: u64, name: &str) -> Option<u64> {
        let key = (id, name.to_string());
        if let Some(&renamed) = read(&self.renames).get(&key) {
            return Some(renamed);
        }
        let mut symbol = self.kernel(id)?;
        let mut renames = write(&self.renames);
        if let Some(&renamed) = renames.get(&key) {
            return Some(renamed);
        }
        let renamed = RENAMED_KERNEL_IDS + renames.len() as u64;
        symbol.id = renamed;
        symbol.demangled_name = name.to_string();
        renames.insert(key, renamed);
        write(&self.kernels).insert(renamed, symbol);
        self.logged(SymbolKey::Kernel(renamed));
        Some(renamed)
    }

    /// The agent with this id, if known (a copy).
    pub fn agent(&self, id: u64) -> Option<AgentInfo> {
        read(&self.agents).get(&id).cloned()
    }

    /// The code object with this id, if known (a copy).
    pub fn code_object(&self, id: u64) -> Option<CodeObject> {
        read(&self.code_objects).get(&id).cloned()
    }

    /// The kernel symbol with this id, if known (a copy).
    pub fn kernel(&self, id: u64) -> Option<KernelSymbol> {
        read(&self.kernels).get(&id).cloned()
    }

    /// Every agent, in id order.
    pub fn agents(&self) -> Vec<AgentInfo> {
        read(&self.agents).values().cloned().collect()
    }

    /// Every code object, in id order.
    pub fn code_objects(&self) -> Vec<CodeObject> {
        read(&self.code_objects).values().cloned().collect()
    }

    /// Every kernel symbol, in id order.
    pub fn kernels(&self) -> Vec<KernelSymbol> {
        read(&self.kernels).values().cloned().collect()
    }
}

// A poisoned lock here means a panic while inserting a plain value; the map is
// still consistent, so recover the guard rather than propagate the panic.
fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(id: u64, code_object_id: u64) -> KernelSymbol {
        KernelSymbol {
            id,
            code_object_id,
            name: format!("k{id}"),
            ..KernelSymbol::default()
        }
    }

    /// A reader following the table gets each insertion once; an entry the
    /// table replaced (same id, more known) again, with its new value.
    #[test]
    fn a_reader_gets_each_insertion_once_and_replacements_again() {
        let t = SymbolTable::new();
        t.insert_kernel(kernel(1, 0));
        t.insert_kernel(kernel(2, 0));
        let (first, cursor) = t.inserted_since(0);
        assert_eq!(first.kernels, vec![kernel(1, 0), kernel(2, 0)]);
        let (nothing, same) = t.inserted_since(cursor);
        assert!(nothing.is_empty());
        assert_eq!(same, cursor);
        t.insert_kernel(kernel(2, 7));
        t.insert_kernel(kernel(2, 8));
        t.insert_code_object(CodeObject {
            id: 7,
            agent_id: 1,
            uri: "file:///k.co".into(),
            load_base: 0,
            load_size: 0,
            load_delta: 0,
            storage: CodeObjectStorage::None,
        });
        let (again, _) = t.inserted_since(cursor);
        assert_eq!(again.kernels, vec![kernel(2, 8)], "the newest value, once");
        assert_eq!(again.code_objects.len(), 1);
    }
}
