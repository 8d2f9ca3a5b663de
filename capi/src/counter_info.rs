//! `counters.h`: the counters of an agent and their descriptions.
//!
//! The counters are the definitions' for the agent's architecture
//! (`rocwasm_counters::Definitions::discover`: `$ROCPROFILER_METRICS_PATH`,
//! an installed ROCm's file, else rocwasm's own for gfx90a and gfx942).
//! Ids are numbered as the SDK numbers them: one count across the run's
//! architectures (each architecture's counters in the definitions' order),
//! so an id names one counter of one architecture. Whether the simulated
//! GPU can count one is told when it is collected (`rocwasm run --pmc`);
//! the C API's counter configurations and dispatch counting are not
//! implemented yet (`crate::unimplemented`).

use std::ffi::{c_char, c_void, CString};
use std::sync::OnceLock;

use rocwasm_core::{AgentType, Status};
use rocwasm_counters::{Body, Catalog, Definitions, Kind};

use crate::abi::Handle;
use crate::guard::guard;
use crate::state::engine_if_bound;
use crate::status::{Code, SUCCESS};

/// `ROCPROFILER_COUNTER_INFO_VERSION_0`.
const VERSION_0: u32 = 1;

/// `rocprofiler_counter_info_v0_t`: the id, four strings, then the two
/// one-bit fields in one byte (bit 0 `is_constant`, bit 1 `is_derived`).
#[repr(C)]
struct InfoV0 {
    id: Handle,
    name: *const c_char,
    description: *const c_char,
    block: *const c_char,
    expression: *const c_char,
    flags: u8,
}

/// One counter's strings, kept for the life of the process (tools keep
/// the pointers).
struct Strings {
    name: CString,
    description: CString,
    block: CString,
    expression: CString,
    flags: u8,
}

/// Each architecture's catalog, its first id, and its counters' strings.
struct Registry {
    archs: Vec<(String, u64, Catalog, Vec<Strings>)>,
}

fn c(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let defs = Definitions::discover(None).unwrap_or_else(|e| {
            eprintln!("rocwasm: {e}; the counters are rocwasm's own definitions");
            Definitions::shipped()
        });
        let mut names: Vec<String> = engine_if_bound()
            .map(|e| e.symbols().agents())
            .unwrap_or_default()
            .into_iter()
            .filter(|a| a.agent_type == AgentType::Gpu)
            .map(|a| a.name)
            .collect();
        names.sort();
        names.dedup();
        let mut base = 0u64;
        let mut archs = Vec::new();
        for arch in names {
            let catalog = defs.catalog(&arch, &[]);
            let strings = catalog
                .counters
                .iter()
                .map(|k| {
                    let (block, expression, flags) = match &k.kind {
                        Kind::Constant => ("", "", 1),
                        Kind::Defined(Body::Hardware { block, .. }) => (block.as_str(), "", 0),
                        Kind::Defined(Body::Derived { text, .. }) => ("", text.as_str(), 2),
                    };
                    Strings {
                        name: c(&k.name),
                        description: c(&k.description),
                        block: c(block),
                        expression: c(expression),
                        flags,
                    }
                })
                .collect();
            let n = catalog.counters.len() as u64;
            archs.push((arch, base, catalog, strings));
            base += n;
        }
        Registry { archs }
    })
}

/// The architecture of agent `id`, when it is a GPU the run knows.
fn arch_of(agent: u64) -> Option<String> {
    engine_if_bound()?
        .symbols()
        .agents()
        .into_iter()
        .find(|a| a.id == agent && a.agent_type == AgentType::Gpu)
        .map(|a| a.name)
}

/// `rocprofiler_iterate_agent_supported_counters`: calls `cb` once with
/// every counter of the agent's architecture (INVALID_ARGUMENT for an agent
/// that is no GPU of the run; NOT_IMPLEMENTED without definitions for its
/// architecture, where the SDK says `AGENT_ARCH_NOT_SUPPORTED`); returns
/// what `cb` returns.
///
/// # Safety
/// `cb` must be callable with the SDK's signature; `user_data` is passed
/// through.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_iterate_agent_supported_counters(
    agent_id: Handle,
    cb: Option<unsafe extern "C" fn(Handle, *mut Handle, usize, *mut c_void) -> Code>,
    user_data: *mut c_void,
) -> Code {
    let mut ids = Vec::new();
    let found = guard("rocprofiler_iterate_agent_supported_counters", || {
        cb.ok_or(Status::InvalidArgument)?;
        let arch = arch_of(agent_id.handle).ok_or(Status::InvalidArgument)?;
        let (_, base, catalog, _) = registry()
            .archs
            .iter()
            .find(|(a, ..)| *a == arch)
            .ok_or(Status::NotImplemented)?;
        if catalog.counters.is_empty() {
            return Err(Status::NotImplemented);
        }
        ids = (0..catalog.counters.len() as u64)
            .map(|i| Handle { handle: base + i })
            .collect();
        Ok(())
    });
    if found != SUCCESS {
        return found;
    }
    let Some(cb) = cb else { return found };
    // SAFETY: the tool's callback, with its own user data and a list that
    // outlives the call.
    unsafe { cb(agent_id, ids.as_mut_ptr(), ids.len(), user_data) }
}

/// `rocprofiler_query_counter_info`: version 0 (id, name, description,
/// block or expression, constant/derived); version 1, with the counter's
/// dimensions and instances, is not implemented yet.
///
/// # Safety
/// `info` must be NULL or point to a writable struct of the version asked.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_query_counter_info(
    counter_id: Handle,
    version: u32,
    info: *mut c_void,
) -> Code {
    guard("rocprofiler_query_counter_info", || {
        if info.is_null() {
            return Err(Status::InvalidArgument);
        }
        if version != VERSION_0 {
            return Err(Status::NotImplemented);
        }
        let id = counter_id.handle;
        let (base, strings) = registry()
            .archs
            .iter()
            .find(|(_, base, catalog, _)| {
                (*base..*base + catalog.counters.len() as u64).contains(&id)
            })
            .map(|(_, base, _, strings)| (*base, strings))
            .ok_or(Status::InvalidArgument)?;
        let s = &strings[(id - base) as usize];
        let out = InfoV0 {
            id: counter_id,
            name: s.name.as_ptr(),
            description: s.description.as_ptr(),
            block: s.block.as_ptr(),
            expression: s.expression.as_ptr(),
            flags: s.flags,
        };
        // SAFETY: checked non-null; the caller passes a writable
        // `rocprofiler_counter_info_v0_t`, whose layout `InfoV0` is.
        unsafe { std::ptr::write(info.cast::<InfoV0>(), out) };
        Ok(())
    })
}
