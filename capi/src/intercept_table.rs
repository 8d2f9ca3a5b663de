//! `intercept_table.h`: tools may ask for the runtimes' API tables
//! (`rocprofiler_at_intercept_table_registration`) to wrap functions
//! themselves. The tool library hands every table it receives here
//! ([`notify`]): the HSA table from the runtime's `OnLoad`, and the HIP
//! runtime, HIP compiler and roctx tables that ROCm ≥ 6.2's
//! rocprofiler-register passes to `rocprofiler_set_api_table`. Tools see
//! each table after rocwasm's own wrappers were installed, so their wrappers
//! run first and call into rocwasm's, as with the SDK.
//!
//! A table that arrived before a tool registered (HIP's tables come when
//! the HIP library is loaded, before tools are configured) is handed to
//! that tool at once when it registers.

use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use rocwasm_core::Status;

use crate::abi::enums::rocprofiler_intercept_table as table;
use crate::guard::{guard, quietly};
use crate::status::Code;

/// `rocprofiler_intercept_library_cb_t`.
pub type TableCallback = unsafe extern "C-unwind" fn(
    kind: c_int,
    lib_version: u64,
    lib_instance: u64,
    tables: *mut *mut c_void,
    num_tables: u64,
    user_data: *mut c_void,
);

/// Which runtime table a notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The HSA root table (`HsaApiTable`).
    Hsa,
    /// HIP's runtime dispatch table.
    HipRuntime,
    /// HIP's compiler dispatch table.
    HipCompiler,
    /// roctx's core, control and name tables (three).
    Marker,
}

impl Table {
    /// The `rocprofiler_intercept_table_t` bits of the tables.
    fn bits(self) -> &'static [i64] {
        match self {
            Table::Hsa => &[table::ROCPROFILER_HSA_TABLE],
            Table::HipRuntime => &[table::ROCPROFILER_HIP_RUNTIME_TABLE],
            Table::HipCompiler => &[table::ROCPROFILER_HIP_COMPILER_TABLE],
            Table::Marker => &[
                table::ROCPROFILER_MARKER_CORE_TABLE,
                table::ROCPROFILER_MARKER_CONTROL_TABLE,
                table::ROCPROFILER_MARKER_NAME_TABLE,
            ],
        }
    }
}

/// A registration: callback, table mask, user data.
type Registration = (TableCallback, c_int, usize);
/// A table seen: its bit, version, instance and table pointer.
type Seen = (i64, u64, u64, usize);

static REGISTERED: Mutex<Vec<Registration>> = Mutex::new(Vec::new());
static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

fn call(reg: &Registration, seen: &Seen) {
    let (callback, mask, data) = *reg;
    let (bit, version, instance, ptr) = *seen;
    if i64::from(mask) & bit == 0 {
        return;
    }
    let mut tables = [ptr as *mut c_void];
    let tables = tables.as_mut_ptr();
    quietly("a native tool's intercept-table callback", || {
        crate::foreign::call_tool("a native tool's intercept-table callback", || {
            // SAFETY: the tool's callback with the documented arguments;
            // one table pointer, as the runtime handed it to us.
            unsafe {
                callback(
                    bit as c_int,
                    version,
                    instance,
                    tables,
                    1,
                    data as *mut c_void,
                )
            }
        });
    });
}

/// A runtime handed its tables (`tables[i]` belongs to the `i`-th bit of
/// `kind`); every registered tool whose mask includes a table gets it.
///
/// # Safety
/// `tables` must point to as many table pointers as `kind` has tables
/// (one, three for [`Table::Marker`]).
pub unsafe fn notify(kind: Table, version: u64, instance: u64, tables: *mut *mut c_void) {
    if tables.is_null() {
        return;
    }
    let regs = REGISTERED.lock().map(|r| r.clone()).unwrap_or_default();
    for (i, &bit) in kind.bits().iter().enumerate() {
        // SAFETY: guaranteed by the caller.
        let ptr = unsafe { *tables.add(i) } as usize;
        let seen = (bit, version, instance, ptr);
        SEEN.lock().unwrap_or_else(|e| e.into_inner()).push(seen);
        for reg in &regs {
            call(reg, &seen);
        }
    }
}

/// `rocprofiler_at_intercept_table_registration`: `callback` gets each
/// table of `libs` (a mask of `rocprofiler_intercept_table_t`), including
/// those that arrived before this call.
#[no_mangle]
pub extern "C" fn rocprofiler_at_intercept_table_registration(
    callback: Option<TableCallback>,
    libs: c_int,
    data: *mut c_void,
) -> Code {
    guard("rocprofiler_at_intercept_table_registration", || {
        let callback = callback.ok_or(Status::InvalidArgument)?;
        if libs == 0 {
            return Err(Status::InvalidArgument);
        }
        let reg = (callback, libs, data as usize);
        REGISTERED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(reg);
        let seen = SEEN.lock().map(|s| s.clone()).unwrap_or_default();
        for s in &seen {
            call(&reg, s);
        }
        Ok(())
    })
}
