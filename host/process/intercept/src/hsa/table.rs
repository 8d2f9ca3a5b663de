//! The HSA API tables as `OnLoad` receives them, read and written only
//! through bounds-checked slot accessors.
//!
//! Every table starts with `ApiTableVersion {major_id, minor_id, step_id,
//! reserved}` (16 bytes) followed by function pointers; `minor_id` is the
//! table's size in bytes. Slot `n` (1-based, as the sdk-core registry numbers
//! HSA operations) lives at byte offset `16 + 8·(n − 1)` and exists only when
//! that offset + 8 ≤ `minor_id`. A runtime older than our headers has fewer
//! slots, a newer one more: reading past `minor_id` would be reading another
//! object, so [`Table::get`] and [`Table::set`] refuse.
//!
//! Which function sits in which slot depends on `major_id` (ROCm 6.0 reordered
//! the AMD extension table); [`crate::hsa::wrap`] knows the ROCm 5.x order
//! (major 1) generated from `hsa_api_trace.h`, and refuses other majors.

use std::ffi::c_void;

/// `ApiTableVersion`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApiTableVersion {
    /// The layout: which function sits in which slot. Only
    /// [`KNOWN_MAJOR`](crate::hsa::KNOWN_MAJOR) is wrapped.
    pub major_id: u32,
    /// The table's size in bytes, header included: bounds every slot access.
    pub minor_id: u32,
    /// The runtime's step (compatible-change) number; not used here.
    pub step_id: u32,
    /// Padding.
    pub reserved: u32,
}

/// Size of the version header; slot 1 starts here.
pub const HEADER: usize = std::mem::size_of::<ApiTableVersion>();

/// The root `HsaApiTable` of the 5.x layout (major 1): version + four child
/// pointers (48 bytes). Later majors append `tools_` and `pc_sampling_`.
#[repr(C)]
pub struct HsaApiTable {
    /// The root's header; `minor_id` says which child pointers exist.
    pub version: ApiTableVersion,
    /// `CoreApiTable`: `hsa_init`, queues, signals, executables, … (traced as
    /// `HSA_CORE_API`).
    pub core: *mut ApiTableVersion,
    /// `AmdExtTable`: the `hsa_amd_*` functions (traced as `HSA_AMD_EXT_API`).
    pub amd_ext: *mut ApiTableVersion,
    /// `FinalizerExtTable`: not wrapped.
    pub finalizer_ext: *mut ApiTableVersion,
    /// `ImageExtTable`: not wrapped.
    pub image_ext: *mut ApiTableVersion,
}

/// A child table: a pointer to its version header, trusted to be readable
/// for `minor_id` bytes (the runtime's promise).
#[derive(Debug, Clone, Copy)]
pub struct Table {
    base: *mut ApiTableVersion,
}

// SAFETY: a table is process-global runtime data; we only move the pointer.
unsafe impl Send for Table {}
// SAFETY: slots are written only while the runtime lets tools install
// (`OnLoad`, before any application call); afterwards they are only read.
unsafe impl Sync for Table {}

impl Table {
    /// The table at `base`; `None` when `base` is null.
    ///
    /// # Safety
    /// `base` is null or points to a table header followed by `minor_id` bytes.
    pub unsafe fn new(base: *mut ApiTableVersion) -> Option<Self> {
        (!base.is_null()).then_some(Self { base })
    }

    /// The table's version header, as the runtime filled it in.
    pub fn version(&self) -> ApiTableVersion {
        // SAFETY: `new`'s contract: the header is readable.
        unsafe { self.base.read() }
    }

    /// Number of slots the table's size covers.
    pub fn slot_count(&self) -> usize {
        slot_count(self.version().minor_id)
    }

    fn slot_ptr(&self, slot: usize) -> Option<*mut *mut c_void> {
        if slot == 0 || slot > self.slot_count() {
            return None;
        }
        // SAFETY: in bounds of the table per the check above.
        Some(unsafe { (self.base as *mut u8).add(HEADER + 8 * (slot - 1)) } as *mut *mut c_void)
    }

    /// The function in slot `slot`, `None` when the table is too small.
    pub fn get(&self, slot: usize) -> Option<*mut c_void> {
        // SAFETY: `slot_ptr` checked the bounds; slots are pointer-aligned.
        self.slot_ptr(slot).map(|p| unsafe { p.read() })
    }

    /// Replaces slot `slot`; false when the table is too small.
    // `f` is stored as a value, never dereferenced; the table's validity is
    // `new`'s (unsafe) contract.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn set(&self, slot: usize, f: *mut c_void) -> bool {
        match self.slot_ptr(slot) {
            Some(p) => {
                // SAFETY: bounds checked; `OnLoad` is the moment the runtime
                // lets tools rewrite its tables, before any application call.
                unsafe { p.write(f) };
                true
            }
            None => false,
        }
    }
}

/// Slots covered by a table of `size` bytes.
pub fn slot_count(size: u32) -> usize {
    (size as usize).saturating_sub(HEADER) / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C)]
    struct Fake {
        version: ApiTableVersion,
        slots: [usize; 4],
    }

    #[test]
    fn slots_are_bounded_by_minor_id() {
        // A table that claims 3 slots although 4 exist in memory.
        let mut t = Fake {
            version: ApiTableVersion {
                major_id: 1,
                minor_id: (HEADER + 3 * 8) as u32,
                ..Default::default()
            },
            slots: [1, 2, 3, 4],
        };
        // SAFETY: `t` is a valid header followed by more than minor_id bytes.
        let table = unsafe { Table::new(&mut t.version) }.unwrap();
        assert_eq!(table.slot_count(), 3);
        assert_eq!(table.get(0), None);
        assert_eq!(table.get(1), Some(std::ptr::dangling_mut::<c_void>()));
        assert_eq!(table.get(3), Some(3 as *mut c_void));
        assert_eq!(table.get(4), None, "slot 4 is past minor_id");
        assert!(!table.set(4, 9 as *mut c_void));
        assert!(table.set(2, 9 as *mut c_void));
        assert_eq!(t.slots, [1, 9, 3, 4]);
    }

    /// ROCm 5.2 sizes from FACTS §4: root 48 B, core 1016 B (125), amd_ext 400 B (48).
    #[test]
    fn rocm52_sizes() {
        assert_eq!(std::mem::size_of::<HsaApiTable>(), 48);
        assert_eq!(slot_count(1016), 125);
        assert_eq!(slot_count(400), 48);
    }
}
