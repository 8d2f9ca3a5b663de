//! Agents, code objects and kernel symbols: the lookup tables that records
//! refer to by id (`agent_id`, `kernel_id`, `code_object_id`).
//!
//! Interception fills them from the HSA loader; replay fills them from the
//! recorded trace. Plugins query them through the host instead of keeping
//! their own copy.

use std::collections::BTreeMap;
use std::sync::RwLock;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum AgentType {
    Cpu,
    Gpu,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub id: u64,
    /// Logical node index as rocprofv3 prints it (`Agent_Id` column).
    pub node_id: u32,
    pub agent_type: AgentType,
    /// e.g. `gfx90a` for a GPU, the CPU model name for a CPU.
    pub name: String,
    pub product_name: String,
}

/// How a code object was handed to the loader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CodeObjectStorage {
    None,
    File { fd: i32 },
    Memory { base: u64, size: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeObject {
    pub id: u64,
    pub agent_id: u64,
    pub uri: String,
    pub load_base: u64,
    pub load_size: u64,
    pub load_delta: i64,
    pub storage: CodeObjectStorage,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSymbol {
    /// Matches `KernelDispatch::kernel_id`.
    pub id: u64,
    pub code_object_id: u64,
    /// The mangled name, as the code object has it.
    pub name: String,
    /// The demangled name (equal to `name` when it is not a mangled C++ name).
    pub demangled_name: String,
    /// The handle that appears in the AQL packet's `kernel_object`.
    pub kernel_object: u64,
    pub kernarg_segment_size: u32,
    pub kernarg_segment_alignment: u32,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
    pub sgpr_count: u32,
    pub arch_vgpr_count: u32,
    pub accum_vgpr_count: u32,
    pub kernel_code_entry_byte_offset: i64,
    pub kernel_address: u64,
}

/// A concurrent id → info table. Kernel names stay valid until finalization,
/// so entries are never removed while a run is live (unload only marks them).
#[derive(Debug, Default)]
pub struct SymbolTable {
    agents: RwLock<BTreeMap<u64, AgentInfo>>,
    code_objects: RwLock<BTreeMap<u64, CodeObject>>,
    kernels: RwLock<BTreeMap<u64, KernelSymbol>>,
}

impl SymbolTable {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert_agent(&self, agent: AgentInfo) {
        write(&self.agents).insert(agent.id, agent);
    }

    pub fn insert_code_object(&self, co: CodeObject) {
        write(&self.code_objects).insert(co.id, co);
    }

    pub fn insert_kernel(&self, k: KernelSymbol) {
        write(&self.kernels).insert(k.id, k);
    }

    pub fn agent(&self, id: u64) -> Option<AgentInfo> {
        read(&self.agents).get(&id).cloned()
    }

    pub fn code_object(&self, id: u64) -> Option<CodeObject> {
        read(&self.code_objects).get(&id).cloned()
    }

    pub fn kernel(&self, id: u64) -> Option<KernelSymbol> {
        read(&self.kernels).get(&id).cloned()
    }

    pub fn agents(&self) -> Vec<AgentInfo> {
        read(&self.agents).values().cloned().collect()
    }

    pub fn code_objects(&self) -> Vec<CodeObject> {
        read(&self.code_objects).values().cloned().collect()
    }

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
