//! The ROCm ≥ 6.2 path: `rocprofiler_set_api_table`.
//!
//! From ROCm 6.2 the runtimes register their dispatch tables with
//! rocprofiler-register, which hands them to a tool that exports
//! `rocprofiler_set_api_table(name, version, instance, tables, n)` before
//! the runtime uses them. What this build does with each:
//!
//! - `hip_compiler` and `hip`: `{size, function pointers}` in the slot order
//!   of [`crate::hip::table_slots`]. Every non-null slot the table's `size`
//!   covers whose function this library has a signature for (the 399 of
//!   ROCm 5.2's exports; 370 of the 6.x runtime slots, all checked against
//!   the 6.2 header's typedefs) is saved and replaced by that function's
//!   traced wrapper (`hip::by_table::<name>::from_table`), which forwards to
//!   the saved original. Slots of newer functions are left alone.
//! - `hsa`: the root `HsaApiTable`, handed to the same installer as `OnLoad`
//!   ([`crate::hsa::install`]); layouts other than ROCm 5.x's (major 1) are
//!   refused with a message, because writing slots of an unknown order would
//!   call the wrong functions.
//! - `roctx` and others: not touched (roctx is interposed by name).
//!
//! **One record per call.** On 6.x the exported HIP functions call through
//! these tables, so a call would pass the `LD_PRELOAD` interposer and then
//! the table wrapper. Once a function's slot is wrapped its interposer only
//! forwards. The runtime registers its tables inside its first API call,
//! which has already entered the interposer traced; that call's own trip
//! through the table ([`is_trampoline`]) is forwarded untraced.
//!
//! **No real ROCm ≥ 6.2 runtime here.** The simulated runtime dispatches
//! through 6.2-layout HIP tables and, with `ROCWASM_SIM_HIP_TABLES=1`,
//! registers them here when it is loaded (the `sim` test
//! `multi_kernel_through_rocm6_dispatch_tables`); registration from inside
//! a call, as a real runtime does it, and the table bounds are unit-tested
//! with synthetic tables below.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::hip::table_slots::{COMPILER_SLOTS, RUNTIME_SLOTS};

/// Bytes of the leading `size` field of the HIP tables.
const SIZE_FIELD: usize = 8;

/// One HIP function's dispatch-table wrapper (generated per function by
/// `hip_interposers!`).
pub struct TableEntry {
    /// The HIP function's name, as in the slot lists of
    /// [`crate::hip::table_slots`].
    pub name: &'static str,
    /// `by_table::<name>::from_table`.
    pub wrapper: *mut c_void,
    /// Where the wrapper finds the slot's original.
    pub original: &'static AtomicPtr<c_void>,
}

// SAFETY: `wrapper` is the address of a function, never dereferenced as
// data; sharing it between threads is sharing a constant.
unsafe impl Sync for TableEntry {}

/// A HIP dispatch table: `size` (bytes, covering itself) then function pointers.
struct HipTable {
    base: *mut u8,
    size: usize,
}

impl HipTable {
    /// # Safety
    /// `base` is null or points to a table readable for its own `size` bytes.
    unsafe fn new(base: *mut c_void) -> Option<Self> {
        if base.is_null() {
            return None;
        }
        // SAFETY: the first field is the size (caller's contract).
        let size = unsafe { *(base as *const u64) } as usize;
        Some(Self {
            base: base as *mut u8,
            size,
        })
    }

    /// Number of function slots `size` covers.
    fn slots(&self) -> usize {
        self.size.saturating_sub(SIZE_FIELD) / 8
    }

    fn slot(&self, i: usize) -> Option<*mut *mut c_void> {
        // SAFETY: in bounds per the check (slot i at 8 + 8·i).
        (i < self.slots()).then(|| unsafe { self.base.add(SIZE_FIELD + 8 * i) } as *mut *mut c_void)
    }
}

/// What wrapping one HIP table did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Wrapped {
    /// Slots the table's `size` covers.
    pub slots: usize,
    /// Slots now forwarding through a traced wrapper.
    pub wrapped: usize,
    /// Null slots (functions the runtime does not provide).
    pub empty: usize,
    /// Slots of functions this library has no signature for, or past the
    /// last slot it knows: left alone.
    pub unknown: usize,
}

fn entries_by_name() -> &'static HashMap<&'static str, &'static TableEntry> {
    static MAP: OnceLock<HashMap<&'static str, &'static TableEntry>> = OnceLock::new();
    MAP.get_or_init(|| {
        crate::hip::by_table::ENTRIES
            .iter()
            .map(|e| (e.name, e))
            .collect()
    })
}

/// Wraps every slot of `table` that its `size` covers, whose function is
/// named in `order` and has a wrapper here.
///
/// # Safety
/// `table` is null or a live HIP dispatch table laid out as `order` says.
unsafe fn wrap_table(table: *mut c_void, order: &[&str]) -> Wrapped {
    // SAFETY: caller's contract.
    let Some(t) = (unsafe { HipTable::new(table) }) else {
        return Wrapped::default();
    };
    let by_name = entries_by_name();
    let mut done = Wrapped {
        slots: t.slots(),
        ..Wrapped::default()
    };
    for i in 0..t.slots() {
        let entry = order.get(i).and_then(|name| by_name.get(name));
        let Some(entry) = entry else {
            done.unknown += 1;
            continue;
        };
        let Some(slot) = t.slot(i) else { break };
        // SAFETY: bounds-checked slot of a live table the runtime lets us rewrite.
        unsafe {
            let orig = slot.read();
            if orig.is_null() {
                done.empty += 1;
                continue;
            }
            if orig == entry.wrapper {
                // Registered twice: already ours.
                done.wrapped += 1;
                continue;
            }
            entry.original.store(orig, Ordering::Release);
            slot.write(entry.wrapper);
        }
        done.wrapped += 1;
    }
    done
}

/// The innermost traced call on the thread that registered a HIP table from
/// inside it (an interposed call in flight), or 0.
static TRAMPOLINE_CALL: AtomicU64 = AtomicU64::new(0);

/// Remembers the traced call in flight on this thread, if any, while its
/// runtime function registers the tables it is about to call through.
fn note_registering_call() {
    if let Some(id) = rocwasm_core::Profiler::innermost_call() {
        TRAMPOLINE_CALL.store(id, Ordering::Relaxed);
    }
}

/// True once, for the table wrapper that runs inside the interposed call
/// during which the runtime registered its tables: that call is traced
/// already. One relaxed load otherwise.
#[inline]
pub fn is_trampoline() -> bool {
    let id = TRAMPOLINE_CALL.load(Ordering::Relaxed);
    id != 0 && trampoline_of(id)
}

#[cold]
fn trampoline_of(id: u64) -> bool {
    rocwasm_core::Profiler::innermost_call() == Some(id)
        && TRAMPOLINE_CALL
            .compare_exchange(id, 0, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
}

/// What happened to one `rocprofiler_set_api_table` call (for messages and tests).
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The `hip_compiler` table (`HIP_COMPILER_API`) was wrapped.
    HipCompiler(Wrapped),
    /// The `hip` runtime table (`HIP_RUNTIME_API`) was wrapped.
    HipRuntime(Wrapped),
    /// The `hsa` root table went to [`crate::hsa::install`]: slots wrapped
    /// in the core and AMD extension tables, or why none were.
    Hsa(Result<(usize, usize), String>),
    /// Another library (roctx, …), or no table: nothing touched.
    Ignored,
}

/// Handles one registration.
///
/// # Safety
/// `tables` points to `n` table pointers of the library `name`.
pub unsafe fn set_api_table(name: &str, tables: *mut *mut c_void, n: u64) -> Outcome {
    if tables.is_null() || n == 0 {
        return Outcome::Ignored;
    }
    // SAFETY: n ≥ 1 table pointers (caller's contract).
    let first = unsafe { *tables };
    match name {
        "hip_compiler" => {
            note_registering_call();
            // SAFETY: the compiler table.
            Outcome::HipCompiler(unsafe { wrap_table(first, &COMPILER_SLOTS) })
        }
        "hip" => {
            note_registering_call();
            // SAFETY: the runtime table.
            Outcome::HipRuntime(unsafe { wrap_table(first, &RUNTIME_SLOTS) })
        }
        // SAFETY: the root HSA table.
        "hsa" => Outcome::Hsa(
            unsafe { crate::hsa::install(first as *mut crate::hsa::table::HsaApiTable) }
                .map_err(|e| e.to_string()),
        ),
        _ => Outcome::Ignored,
    }
}

/// The rocprofiler-register entry point. Returns 0 (success) always: a tool
/// problem must not stop the runtime.
///
/// # Safety
/// Called by rocprofiler-register with a library name and its tables.
#[no_mangle]
pub unsafe extern "C" fn rocprofiler_set_api_table(
    name: *const c_char,
    version: u64,
    instance: u64,
    tables: *mut *mut c_void,
    n: u64,
) -> i32 {
    if name.is_null() {
        return 0;
    }
    crate::lifecycle::ensure_started();
    // SAFETY: a C string from rocprofiler-register.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    // SAFETY: forwarded contract.
    let outcome = unsafe { set_api_table(&name, tables, n) };
    let debug = std::env::var_os("ROCWASM_DEBUG").is_some();
    match outcome {
        Outcome::Hsa(Err(e)) => eprintln!("rocwasm: {e}"),
        Outcome::HipCompiler(w) | Outcome::HipRuntime(w) if debug => eprintln!(
            "rocwasm: HIP table `{name}`: {} slots, {} traced, {} empty, {} left alone (functions this build has no signature for)",
            w.slots, w.wrapped, w.empty, w.unknown
        ),
        _ => {}
    }
    // Native tools that asked for these tables get them, wrapped.
    use rocwasm_capi::intercept_table::{notify, Table};
    let kind = match name.as_ref() {
        "hsa" => Some((Table::Hsa, 1)),
        "hip" => Some((Table::HipRuntime, 1)),
        "hip_compiler" => Some((Table::HipCompiler, 1)),
        "roctx" => Some((Table::Marker, 3)),
        _ => None,
    };
    if let Some((kind, _)) = kind.filter(|&(_, needed)| n >= needed && !tables.is_null()) {
        // SAFETY: `n` ≥ the tables this kind has (checked), from the caller.
        unsafe { notify(kind, version, instance, tables) };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hip::types;

    static PUSHED: AtomicU64 = AtomicU64::new(0);

    unsafe extern "C" fn fake_push(
        grid: types::Dim3,
        _block: types::Dim3,
        shared: usize,
        _s: *mut c_void,
    ) -> i32 {
        PUSHED.store(u64::from(grid.x) * 1000 + shared as u64, Ordering::SeqCst);
        42
    }

    /// A table whose `size` covers only 3 of its 9 slots.
    #[repr(C)]
    struct FakeCompilerTable {
        size: u64,
        slots: [usize; 9],
    }

    #[test]
    fn compiler_table_slots_are_bounded_by_size_and_forward() {
        let mut t = FakeCompilerTable {
            size: 8 + 3 * 8,
            slots: [0; 9],
        };
        t.slots[1] = fake_push as *const () as usize;
        for (i, s) in t.slots.iter_mut().enumerate() {
            if *s == 0 {
                *s = 0x1000 + i;
            }
        }
        let mut tables = [&mut t as *mut FakeCompilerTable as *mut c_void];
        // SAFETY: a synthetic table laid out like the runtime's.
        let outcome = unsafe { set_api_table("hip_compiler", tables.as_mut_ptr(), 1) };
        assert_eq!(
            outcome,
            Outcome::HipCompiler(Wrapped {
                slots: 3,
                wrapped: 3,
                empty: 0,
                unknown: 0
            })
        );
        let wrapper = |name: &str| entries_by_name()[name].wrapper as usize;
        assert_eq!(t.slots[0], wrapper("__hipPopCallConfiguration"));
        assert_eq!(t.slots[1], wrapper("__hipPushCallConfiguration"));
        assert_eq!(t.slots[2], wrapper("__hipRegisterFatBinary"));
        assert_eq!(t.slots[3], 0x1003, "slot 3 lies past `size`: untouched");
        assert_eq!(t.slots[8], 0x1008);
        // The installed wrapper forwards to the saved original.
        // SAFETY: calling our wrapper with plain values.
        let f: unsafe extern "C" fn(types::Dim3, types::Dim3, usize, *mut c_void) -> i32 =
            unsafe { std::mem::transmute(t.slots[1]) };
        // SAFETY: plain values for the wrapper's C signature.
        let r = unsafe {
            f(
                types::Dim3 { x: 7, y: 1, z: 1 },
                types::Dim3::default(),
                5,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(r, 42);
        assert_eq!(PUSHED.load(Ordering::SeqCst), 7005);
    }

    unsafe extern "C" fn fake_get_device(device: *mut c_void) -> i32 {
        // SAFETY: the test passes a valid `int *`.
        unsafe { *(device as *mut i32) = 7 };
        0
    }

    #[test]
    fn runtime_table_slots_follow_the_6x_order() {
        const SLOTS: usize = crate::hip::table_slots::RUNTIME_SLOTS_6_2;
        #[repr(C)]
        struct Fake62 {
            size: u64,
            slots: [usize; SLOTS],
        }
        let mut t = Box::new(Fake62 {
            size: (8 + 8 * SLOTS) as u64,
            slots: [0; SLOTS],
        });
        for (i, s) in t.slots.iter_mut().enumerate() {
            *s = 0x10_0000 + i;
        }
        let get_device = RUNTIME_SLOTS
            .iter()
            .position(|n| *n == "hipGetDevice")
            .unwrap();
        assert_eq!(get_device, 102, "hipGetDevice's slot in 6.2");
        t.slots[get_device] = fake_get_device as *const () as usize;
        // 6.2 leaves the external-semaphore graph slots null.
        for s in &mut t.slots[429..=436] {
            *s = 0;
        }
        let before = t.slots;
        let mut tables = [&mut *t as *mut Fake62 as *mut c_void];
        // SAFETY: a synthetic table laid out like 6.2's.
        let Outcome::HipRuntime(w) = (unsafe { set_api_table("hip", tables.as_mut_ptr(), 1) })
        else {
            panic!("not handled as the runtime table");
        };
        // Every slot: ours when the name has a signature here, else untouched.
        let ours: std::collections::HashSet<&str> =
            crate::hip::HIP_FUNCTIONS.iter().copied().collect();
        let (mut wrapped, mut empty, mut unknown) = (0, 0, 0);
        for (i, name) in RUNTIME_SLOTS[..SLOTS].iter().enumerate() {
            if !ours.contains(name) {
                unknown += 1;
                assert_eq!(
                    t.slots[i], before[i],
                    "slot {i} ({name}) has no signature here"
                );
            } else if before[i] == 0 {
                empty += 1;
                assert_eq!(t.slots[i], 0, "slot {i} ({name}) was null");
            } else {
                wrapped += 1;
                assert_eq!(
                    t.slots[i],
                    entries_by_name()[name].wrapper as usize,
                    "slot {i} ({name})"
                );
            }
        }
        assert_eq!(
            w,
            Wrapped {
                slots: SLOTS,
                wrapped,
                empty,
                unknown
            }
        );
        assert_eq!(wrapped + empty, 370, "the 5.2 functions among 6.2's slots");
        assert!(crate::hip::by_table::hipGetDevice::wrapped());
        // The wrapper forwards to the runtime's function from the slot.
        let f: unsafe extern "C" fn(*mut c_void) -> i32 =
            // SAFETY: slot 102 holds a `hipGetDevice` wrapper.
            unsafe { std::mem::transmute(t.slots[get_device]) };
        let mut device = -1i32;
        // SAFETY: a valid `int *`.
        assert_eq!(unsafe { f(&mut device as *mut i32 as *mut c_void) }, 0);
        assert_eq!(device, 7);
        // Registering the same table again changes nothing.
        let again = t.slots;
        // SAFETY: as above.
        let second = unsafe { set_api_table("hip", tables.as_mut_ptr(), 1) };
        assert_eq!(second, Outcome::HipRuntime(w));
        assert_eq!(t.slots, again);
        let mut device = -1i32;
        // SAFETY: as above.
        assert_eq!(unsafe { f(&mut device as *mut i32 as *mut c_void) }, 0);
        assert_eq!(device, 7, "still forwards to the runtime's, not to itself");
    }

    #[test]
    fn slot_order_facts() {
        assert_eq!(RUNTIME_SLOTS[0], "hipApiName");
        assert_eq!(RUNTIME_SLOTS[11], "hipChooseDevice");
        assert_eq!(RUNTIME_SLOTS[105], "hipGetDevicePropertiesR0600");
        assert_eq!(RUNTIME_SLOTS[215], "hipMalloc");
        assert_eq!(
            RUNTIME_SLOTS[390..427]
                .iter()
                .filter(|n| n.ends_with("_spt"))
                .count(),
            37
        );
        assert_eq!(RUNTIME_SLOTS[427], "hipGetStreamDeviceId");
        let unique: std::collections::HashSet<_> = RUNTIME_SLOTS.iter().collect();
        assert_eq!(unique.len(), RUNTIME_SLOTS.len(), "no name twice");
        assert_eq!(COMPILER_SLOTS[3], "__hipRegisterFunction");
    }

    #[test]
    fn the_registering_call_is_not_traced_twice() {
        use rocwasm_core::{BufferPolicy, BufferTracingKind, Domain, Profiler};
        let p = Profiler::new();
        let ctx = p.create_context().unwrap();
        let sink: std::sync::Arc<dyn rocwasm_core::BufferSink> =
            std::sync::Arc::new(|_: rocwasm_core::DeliveryInfo, _: rocwasm_core::Batch| {});
        let buf = p
            .create_buffer(ctx, 1 << 16, 1 << 15, BufferPolicy::Lossless, sink)
            .unwrap();
        p.configure_buffer_tracing(ctx, BufferTracingKind::HipRuntimeApi, &[], buf)
            .unwrap();
        p.start_context(ctx).unwrap();
        p.lock_configuration();
        let mut empty = FakeCompilerTable {
            size: 8,
            slots: [0; 9],
        };
        let mut tables = [&mut empty as *mut FakeCompilerTable as *mut c_void];
        assert!(!is_trampoline(), "nothing registered yet");
        // An interposed call during which the runtime registers its tables.
        let seen = p.trace_api(
            Domain::HipRuntimeApi,
            0,
            Vec::new,
            || {
                // SAFETY: a synthetic table with no slots.
                unsafe { set_api_table("hip", tables.as_mut_ptr(), 1) };
                // The call's own trip through the table, then another table
                // call inside it (a nested API call): only the first forwards.
                [is_trampoline(), is_trampoline()]
            },
            |_| String::new(),
        );
        assert_eq!(seen, [true, false]);
        assert!(!is_trampoline());
        // Registering outside any traced call marks nothing.
        // SAFETY: as above.
        unsafe { set_api_table("hip", tables.as_mut_ptr(), 1) };
        assert!(!is_trampoline());
        p.finalize();
    }

    #[test]
    fn unknown_hsa_layouts_are_refused() {
        use crate::hsa::table::{ApiTableVersion, HsaApiTable};
        let mut root = HsaApiTable {
            version: ApiTableVersion {
                major_id: 3,
                minor_id: 64,
                step_id: 0,
                reserved: 0,
            },
            core: std::ptr::null_mut(),
            amd_ext: std::ptr::null_mut(),
            finalizer_ext: std::ptr::null_mut(),
            image_ext: std::ptr::null_mut(),
        };
        let mut tables = [&mut root as *mut HsaApiTable as *mut c_void];
        // SAFETY: synthetic root table.
        let outcome = unsafe { set_api_table("hsa", tables.as_mut_ptr(), 1) };
        assert!(
            matches!(outcome, Outcome::Hsa(Err(ref e)) if e.contains("major 3")),
            "{outcome:?}"
        );
        assert_eq!(
            // SAFETY: null tables are ignored.
            unsafe { set_api_table("roctx", std::ptr::null_mut(), 0) },
            Outcome::Ignored
        );
    }
}
