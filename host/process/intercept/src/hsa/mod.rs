//! HSA: the API tables handed to `OnLoad`.
//!
//! The runtime loads the libraries named in `HSA_TOOLS_LIB` (and, from ROCm
//! 5.7, any loaded library exporting `HSA_AMD_TOOL_PRIORITY`) during
//! `hsa_init` and calls their `OnLoad(table, runtime_version,
//! failed_tool_count, failed_tool_names)`. The exported `hsa_*` functions
//! jump through these tables, so a rewritten slot sees every caller — the
//! application and the HIP runtime alike.
//!
//! The layout is chosen by the root `major_id`: only ROCm 5.x (major 1) is
//! known here, generated from `hsa_api_trace.h`; any other major leaves the
//! tables untouched (with a message), because writing slots of an unknown
//! order would call the wrong functions. Each slot is bounds-checked against
//! its table's `minor_id` ([`table`]).
//!
//! Debian's real ROCm 5.2 never reaches `OnLoad` without a GPU (`hsa_init`
//! fails first); the simulated runtime (`sim/hsa`) exercises this path.

pub mod agents;
pub mod copy;
pub mod counters;
pub mod kernel_descriptor;
pub mod loader;
pub mod memory;
pub mod originals;
pub mod queue;
pub mod rt;
pub mod table;
#[macro_use]
pub mod wrap;

use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use rocwasm_core::BufferTracingKind;

use table::{HsaApiTable, Table};

/// The table layout this build knows (ROCm 5.x).
pub const KNOWN_MAJOR: u32 = 1;

/// Makes ROCm ≥ 5.7 treat this library as a tool even without `HSA_TOOLS_LIB`.
#[no_mangle]
#[used]
pub static HSA_AMD_TOOL_PRIORITY: u32 = 50;

static LOADED: AtomicBool = AtomicBool::new(false);

/// Why the tables were not (fully) wrapped.
#[derive(Debug, PartialEq, Eq)]
pub enum InstallError {
    /// The root table pointer was null.
    Null,
    /// A table (`root`, `core` or `amd_ext`) has a layout `major_id` other
    /// than [`KNOWN_MAJOR`]: nothing is wrapped.
    UnknownMajor(&'static str, u32),
    /// The named table is absent: the root's size does not cover the child
    /// pointers, or a child pointer is null.
    TooSmall(&'static str),
}

impl std::fmt::Display for InstallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstallError::Null => write!(f, "the runtime passed no table"),
            InstallError::UnknownMajor(t, m) => {
                write!(f, "{t} table layout major {m} is not known (this build knows {KNOWN_MAJOR}); HSA is not traced")
            }
            InstallError::TooSmall(t) => write!(f, "the root table has no {t} table"),
        }
    }
}

/// Wraps the tables; returns the number of slots wrapped per table.
///
/// # Safety
/// `root` is null or the runtime's live `HsaApiTable`.
pub unsafe fn install(root: *mut HsaApiTable) -> Result<(usize, usize), InstallError> {
    if root.is_null() {
        return Err(InstallError::Null);
    }
    // SAFETY: the root header is readable per the caller's contract.
    let version = unsafe { (*root).version };
    if version.major_id != KNOWN_MAJOR {
        return Err(InstallError::UnknownMajor("root", version.major_id));
    }
    // The child pointers exist only if the root's size covers them.
    let covers = |offset: usize| offset + 8 <= version.minor_id as usize;
    if !covers(16) || !covers(24) {
        return Err(InstallError::TooSmall("core/amd_ext"));
    }
    // SAFETY: the runtime's child tables, each a header plus minor_id bytes.
    let core = unsafe { Table::new((*root).core) }.ok_or(InstallError::TooSmall("core"))?;
    // SAFETY: as above, the AMD extension table.
    let amd = unsafe { Table::new((*root).amd_ext) }.ok_or(InstallError::TooSmall("amd_ext"))?;
    if core.version().major_id != KNOWN_MAJOR {
        return Err(InstallError::UnknownMajor("core", core.version().major_id));
    }
    if amd.version().major_id != KNOWN_MAJOR {
        return Err(InstallError::UnknownMajor(
            "amd_ext",
            amd.version().major_id,
        ));
    }
    Ok((
        wrap::core_api::install(&core),
        wrap::amd_ext_api::install(&amd),
    ))
}

/// The HSA tool entry point.
///
/// # Safety
/// Called by the HSA runtime with its live API table.
#[no_mangle]
pub unsafe extern "C" fn OnLoad(
    table: *mut HsaApiTable,
    runtime_version: u64,
    _failed_tool_count: u64,
    _failed_tool_names: *const *const c_char,
) -> bool {
    if LOADED.swap(true, Ordering::AcqRel) {
        return true; // loaded twice (HSA_TOOLS_LIB and HSA_AMD_TOOL_PRIORITY)
    }
    crate::lifecycle::ensure_started();
    // SAFETY: forwarded runtime table.
    match unsafe { install(table) } {
        Ok((core, amd)) => {
            RUNTIME_VERSION.store(runtime_version, Ordering::Release);
            if std::env::var_os("ROCWASM_DEBUG").is_some() {
                eprintln!("rocwasm: HSA runtime {runtime_version}: wrapped {core} core and {amd} amd_ext slots");
            }
            if let Some(s) = crate::session::active() {
                announce(s);
            }
            // Native tools that asked for the HSA table get it, wrapped.
            let mut tables = [table as *mut c_void];
            // SAFETY: one table pointer, the runtime's root table.
            unsafe {
                rocwasm_capi::intercept_table::notify(
                    rocwasm_capi::intercept_table::Table::Hsa,
                    runtime_version,
                    0,
                    tables.as_mut_ptr(),
                )
            };
        }
        Err(e) => eprintln!("rocwasm: {e}"),
    }
    true
}

/// The runtime version `OnLoad` received (0 before).
static RUNTIME_VERSION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Set once the session heard of the runtime ([`announce`]).
static ANNOUNCED: AtomicBool = AtomicBool::new(false);

/// Tells session `s`, once, that the runtime is up: copy timing is turned
/// on if it traces copies, and the runtime's initialisation is recorded.
/// `OnLoad` calls it when a session is live; a session that starts later
/// (its start may itself start the runtime, for native tools' agents)
/// calls it through [`session_started`].
fn announce(s: &crate::session::Session) {
    if ANNOUNCED.swap(true, Ordering::AcqRel) {
        return;
    }
    // Every context that configured copy tracing, started or not, as the
    // SDK does: one started after the runtime came up gets timed copies.
    if s.configured(BufferTracingKind::MemoryCopy) {
        // SAFETY: a plain runtime setting.
        if unsafe { rt::hsa_amd_profiling_async_copy_enable(true) } != Some(0) {
            eprintln!("rocwasm: cannot enable async copy profiling; copies are not timed");
        }
    }
    s.runtime_initialized(
        rocwasm_core::RuntimeLibrary::Hsa,
        RUNTIME_VERSION.load(Ordering::Acquire),
    );
}

/// A session was published: if the runtime came up before it, announce it.
pub fn session_started(s: &crate::session::Session) {
    if rt::tables_installed() {
        announce(s);
    }
}

/// Called by the runtime at `hsa_shut_down`. Records already produced stay;
/// the session is finalized at process exit, not here, because HIP may keep
/// running after its runtime shut HSA down.
#[no_mangle]
pub extern "C" fn OnUnload() {}

#[cfg(test)]
mod tests {
    use super::table::{ApiTableVersion, HsaApiTable, HEADER};
    use super::*;

    static INIT_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

    extern "C" fn fake_hsa_init() -> i32 {
        INIT_CALLS.fetch_add(1, Ordering::SeqCst);
        0
    }

    /// A child table of ROCm 5.2's size: header, then `N` slots.
    #[repr(C)]
    struct Child<const N: usize> {
        version: ApiTableVersion,
        slots: [usize; N],
    }

    impl<const N: usize> Child<N> {
        fn new(first: usize) -> Box<Self> {
            let mut slots = [0; N];
            for (i, s) in slots.iter_mut().enumerate() {
                *s = first + i;
            }
            Box::new(Child {
                version: ApiTableVersion {
                    major_id: KNOWN_MAJOR,
                    minor_id: (HEADER + 8 * N) as u32,
                    ..Default::default()
                },
                slots,
            })
        }
    }

    #[test]
    fn installing_the_same_tables_twice_changes_nothing() {
        let mut core = Child::<125>::new(0x1000);
        core.slots[0] = fake_hsa_init as *const () as usize; // slot 1: hsa_init
        let mut amd = Child::<48>::new(0x2000);
        let mut root = HsaApiTable {
            version: ApiTableVersion {
                major_id: KNOWN_MAJOR,
                minor_id: std::mem::size_of::<HsaApiTable>() as u32,
                ..Default::default()
            },
            core: &mut core.version,
            amd_ext: &mut amd.version,
            finalizer_ext: std::ptr::null_mut(),
            image_ext: std::ptr::null_mut(),
        };
        // SAFETY: synthetic tables laid out like ROCm 5.2's.
        let first = unsafe { install(&mut root) }.unwrap();
        assert_eq!(first, (125, 48));
        let after_first = (core.slots, amd.slots);
        // SAFETY: as above; OnLoad and rocprofiler-register hand over one table.
        let second = unsafe { install(&mut root) }.unwrap();
        assert_eq!(second, first);
        assert_eq!((core.slots, amd.slots), after_first, "slots unchanged");
        assert_eq!(
            wrap::core_api::original(1),
            fake_hsa_init as *const () as *mut std::ffi::c_void,
            "the saved original is still the runtime's"
        );
        // The installed wrapper reaches the runtime's function exactly once.
        let init: extern "C" fn() -> i32 =
            // SAFETY: slot 1 holds the `hsa_init` wrapper.
            unsafe { std::mem::transmute(core.slots[0]) };
        assert_ne!(core.slots[0], fake_hsa_init as *const () as usize);
        assert_eq!(init(), 0);
        assert_eq!(INIT_CALLS.load(Ordering::SeqCst), 1);
    }
}
