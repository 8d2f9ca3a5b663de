//! The ROCm ≥ 6.2 path: `rocprofiler_set_api_table`.
//!
//! From ROCm 6.2 the runtimes register their dispatch tables with
//! rocprofiler-register, which hands them to a tool that exports
//! `rocprofiler_set_api_table(name, version, instance, tables, n)` before
//! the runtime uses them. What this build does with each:
//!
//! - `hip_compiler`: the HIP compiler table `{size, 9 function pointers}`
//!   (order known: FACTS §4). Every slot the table's `size` covers is saved
//!   and replaced by a traced wrapper that forwards to the saved original.
//! - `hip`: the runtime table `{size, fn pointers in header order}` (452 in
//!   6.2). Its slot order is that of ROCm 6.x's `hip_api_trace.hpp`, which
//!   this machine does not have (Debian ships 5.2), so its slots are left
//!   alone; the HIP runtime API stays covered by `LD_PRELOAD` interposition,
//!   which works on 6.x as well. The table's size is still read, bounds-checked.
//! - `hsa`: the root `HsaApiTable`, handed to the same installer as `OnLoad`
//!   ([`crate::hsa::install`]); layouts other than ROCm 5.x's (major 1) are
//!   refused with a message, because writing slots of an unknown order would
//!   call the wrong functions.
//! - `roctx` and others: not touched (roctx is interposed by name).
//!
//! Known gap: on 6.x the exported HIP functions trampoline through these
//! tables, so with `LD_PRELOAD` also active a compiler-API call would be seen
//! twice (interposer, then table wrapper); a real 6.x run should suppress one
//! of the two (e.g. a per-thread "inside the interposer" mark).
//!
//! **Not run end to end here**: no ROCm ≥ 6.2 runtime exists on these
//! machines and the simulated runtime implements the 5.x `OnLoad` path. The
//! table handling is unit-tested with synthetic tables.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

use rocwasm_core::BufferTracingKind;

use crate::hip::types;
use crate::tracer::{api_call, ApiOp};

/// Bytes of the leading `size` field of the HIP tables.
const SIZE_FIELD: usize = 8;

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

macro_rules! compiler_table {
    ($($index:literal $name:ident($($arg:ident: $ty:ty = $cty:literal),*) -> $ret:ty;)*) => {
        /// The originals of the compiler table, by slot index.
        static SAVED: [AtomicPtr<c_void>; 9] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 9];

        /// Wrappers, in the compiler table's order.
        const WRAPPERS: [*mut c_void; 9] = [$($name as *mut c_void),*];

        $(
            #[allow(non_snake_case)]
            unsafe extern "C" fn $name($($arg: $ty),*) -> $ret {
                static OP: ApiOp = ApiOp::new(BufferTracingKind::HipCompilerApi, stringify!($name));
                let next = SAVED[$index].load(Ordering::Acquire);
                if next.is_null() {
                    return <$ret as crate::next::Missing>::missing();
                }
                // SAFETY: the runtime's function of this slot, same signature.
                let real: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(next) };
                api_call(&OP, &|_a: &mut crate::args::ArgList| { $(_a.push(stringify!($arg), $cty, &$arg);)* },
                    || unsafe { real($($arg),*) })
            }
        )*
    };
}

compiler_table! {
    0 __hipPopCallConfiguration(gridDim: *mut c_void = "dim3 *", blockDim: *mut c_void = "dim3 *", sharedMem: *mut c_void = "size_t *", stream: *mut c_void = "hipStream_t *") -> i32;
    1 __hipPushCallConfiguration(gridDim: types::Dim3 = "dim3", blockDim: types::Dim3 = "dim3", sharedMem: usize = "size_t", stream: *mut c_void = "hipStream_t") -> i32;
    2 __hipRegisterFatBinary(data: *const c_void = "const void *") -> *mut c_void;
    3 __hipRegisterFunction(modules: *mut c_void = "void **", hostFunction: *const c_void = "const void *", deviceFunction: *mut c_char = "char *", deviceName: *const c_char = "const char *", threadLimit: u32 = "unsigned int", tid: *mut c_void = "void *", bid: *mut c_void = "void *", blockDim: *mut c_void = "dim3 *", gridDim: *mut c_void = "dim3 *", wSize: *mut c_void = "int *") -> ();
    4 __hipRegisterManagedVar(hipModule: *mut c_void = "void *", pointer: *mut c_void = "void **", init_value: *mut c_void = "void *", name: *const c_char = "const char *", size: usize = "size_t", align: u32 = "unsigned int") -> ();
    5 __hipRegisterSurface(modules: *mut c_void = "void **", var: *mut c_void = "void *", hostVar: *mut c_char = "char *", deviceVar: *mut c_char = "char *", r#type: i32 = "int", ext: i32 = "int") -> ();
    6 __hipRegisterTexture(modules: *mut c_void = "void **", var: *mut c_void = "void *", hostVar: *mut c_char = "char *", deviceVar: *mut c_char = "char *", r#type: i32 = "int", norm: i32 = "int", ext: i32 = "int") -> ();
    7 __hipRegisterVar(modules: *mut c_void = "void **", var: *mut c_void = "void *", hostVar: *mut c_char = "char *", deviceVar: *mut c_char = "char *", ext: i32 = "int", size: usize = "size_t", constant: i32 = "int", global: i32 = "int") -> ();
    8 __hipUnregisterFatBinary(modules: *mut c_void = "void **") -> ();
}

/// Wraps every slot of a compiler table that its `size` covers; returns how many.
///
/// # Safety
/// `table` is null or a live HIP compiler dispatch table.
unsafe fn install_compiler(table: *mut c_void) -> usize {
    // SAFETY: caller's contract.
    let Some(t) = (unsafe { HipTable::new(table) }) else {
        return 0;
    };
    let mut wrapped = 0;
    for (i, wrapper) in WRAPPERS.iter().enumerate() {
        let Some(slot) = t.slot(i) else { break };
        // SAFETY: bounds-checked slot of a live table the runtime lets us rewrite.
        unsafe {
            let orig = slot.read();
            if orig.is_null() {
                continue;
            }
            SAVED[i].store(orig, Ordering::Release);
            slot.write(*wrapper);
        }
        wrapped += 1;
    }
    wrapped
}

/// What happened to one `rocprofiler_set_api_table` call (for messages and tests).
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    HipCompiler { wrapped: usize },
    HipRuntime { slots: usize },
    Hsa(Result<(usize, usize), String>),
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
        // SAFETY: the compiler table.
        "hip_compiler" => Outcome::HipCompiler {
            wrapped: unsafe { install_compiler(first) },
        },
        // SAFETY: the runtime table; only its size is read.
        "hip" => Outcome::HipRuntime {
            slots: unsafe { HipTable::new(first) }.map_or(0, |t| t.slots()),
        },
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
    _version: u64,
    _instance: u64,
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
    match unsafe { set_api_table(&name, tables, n) } {
        Outcome::Hsa(Err(e)) => eprintln!("rocwasm: {e}"),
        Outcome::HipRuntime { slots } if std::env::var_os("ROCWASM_DEBUG").is_some() => eprintln!(
            "rocwasm: HIP runtime table with {slots} slots left to LD_PRELOAD interposition (6.x slot order unknown here)"
        ),
        _ => {}
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

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
        assert_eq!(outcome, Outcome::HipCompiler { wrapped: 3 });
        assert_eq!(t.slots[0], WRAPPERS[0] as usize);
        assert_eq!(t.slots[1], WRAPPERS[1] as usize);
        assert_eq!(t.slots[2], WRAPPERS[2] as usize);
        assert_eq!(t.slots[3], 0x1003, "slot 3 lies past `size`: untouched");
        assert_eq!(t.slots[8], 0x1008);
        // The installed wrapper forwards to the saved original.
        // SAFETY: calling our wrapper with plain values.
        let f: unsafe extern "C" fn(types::Dim3, types::Dim3, usize, *mut c_void) -> i32 =
            unsafe { std::mem::transmute(t.slots[1]) };
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

    #[test]
    fn runtime_table_is_only_measured() {
        #[repr(C)]
        struct Fake {
            size: u64,
            slots: [usize; 4],
        }
        let mut t = Fake {
            size: 8 + 4 * 8,
            slots: [1, 2, 3, 4],
        };
        let mut tables = [&mut t as *mut Fake as *mut c_void];
        // SAFETY: synthetic table.
        assert_eq!(
            unsafe { set_api_table("hip", tables.as_mut_ptr(), 1) },
            Outcome::HipRuntime { slots: 4 }
        );
        assert_eq!(t.slots, [1, 2, 3, 4]);
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
        // SAFETY: null tables are ignored.
        assert_eq!(
            unsafe { set_api_table("roctx", std::ptr::null_mut(), 0) },
            Outcome::Ignored
        );
    }
}
