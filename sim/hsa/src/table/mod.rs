//! The HSA API tables: what tools receive in `OnLoad` and what every exported
//! `hsa_*` function jumps through.
//!
//! The real runtime exports thin trampolines: `hsa_queue_create` loads the
//! `hsa_queue_create_fn` slot of the core table and calls it. A tool that
//! rewrites a slot in `OnLoad` therefore sees every caller, including other
//! runtime libraries (HIP) that call the exported symbol. This module builds
//! those tables once, when the library is loaded (an `.init_array`
//! constructor in `api`, which knows the implementations, so no call can
//! come first), in the layout chosen by
//! `ROCWASM_SIM_HSA_LAYOUT` (only `rocm5`, major 1, exists today). A table is
//! a version header `{major_id, minor_id = size in bytes, step_id, reserved}`
//! followed by function pointers; slot order comes from a [`Layout`].
//!
//! To add the ROCm 6.x layout (major 2), add its slot order to
//! `rocwasm_ids::hsa_table` and a [`Layout`] to [`LAYOUTS`]: the trampolines
//! find their slot by name, not position.

#[cfg(test)]
mod layout_check;
mod trampoline;

use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use crate::ffi::{hsa_status_t, HSA_STATUS_ERROR};
use trampoline::DISPATCH;

pub use trampoline::{EXPORTS, EXPORT_COUNT};

/// The function of last resort: "generic error". It fills every slot that
/// has no implementation (see `api`) and every export whose slot the
/// selected layout lacks.
///
/// # Safety
/// Always safe to call: it takes no arguments and touches nothing (it is
/// `unsafe` to match the slots' function-pointer type).
pub unsafe extern "C" fn unsupported() -> hsa_status_t {
    HSA_STATUS_ERROR
}

/// Slot names of the ROCm 5.x tables (`rocwasm_ids::hsa_table`).
pub mod rocm5 {
    pub use rocwasm_ids::hsa_table::{
        AMD_EXT_TABLE as AMD_EXT, CORE_API_TABLE as CORE, FINALIZER_EXT_TABLE as FINALIZER_EXT,
        IMAGE_EXT_TABLE as IMAGE_EXT,
    };
}

/// `ApiTableVersion`: the first member of every table.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiTableVersion {
    /// The table's major version: tables of different majors have
    /// incompatible slot orders (the [`Layout`]'s `root_major` for the root,
    /// [`TableLayout::major`] for a child).
    pub major_id: u32,
    /// The size of the whole table in bytes, header included: a tool reads
    /// no slot beyond it.
    pub minor_id: u32,
    /// The step (patch) version; always 0 here.
    pub step_id: u32,
    /// Unused padding; always 0.
    pub reserved: u32,
}

/// `HsaApiTable` (root) of the 5.x layout: 48 bytes.
#[repr(C)]
pub struct HsaApiTable {
    /// The root's own header: the layout's root major, `minor_id` = 48.
    pub version: ApiTableVersion,
    /// The core table (`CoreApiTable`: `hsa_init`, queues, signals, …),
    /// reached through its version header.
    pub core: *mut ApiTableVersion,
    /// The AMD extension table (`AmdExtTable`: `hsa_amd_*`).
    pub amd_ext: *mut ApiTableVersion,
    /// The finalizer extension table (`FinalizerExtTable`).
    pub finalizer_ext: *mut ApiTableVersion,
    /// The image extension table (`ImageExtTable`).
    pub image_ext: *mut ApiTableVersion,
}

/// One child table's place in a layout.
pub struct TableLayout {
    /// The child table's `major_id`.
    pub major: u32,
    /// Slot names (the API function each slot holds, e.g. `hsa_init`) in
    /// table order: slot `i` is the pointer-sized word `2 + i` of the table,
    /// after the 16-byte header.
    pub slots: &'static [&'static str],
}

/// A complete table layout, selected by the root major id.
pub struct Layout {
    /// The name `ROCWASM_SIM_HSA_LAYOUT` selects it by, e.g. `rocm5`.
    pub name: &'static str,
    /// The root table's `major_id` (also accepted by
    /// `ROCWASM_SIM_HSA_LAYOUT`).
    pub root_major: u32,
    /// core, amd_ext, finalizer_ext, image_ext.
    pub tables: [TableLayout; 4],
}

/// Every layout the simulated runtime can build; the first is the default.
pub static LAYOUTS: &[Layout] = &[Layout {
    name: "rocm5",
    root_major: 1,
    tables: [
        TableLayout {
            major: 1,
            slots: &rocm5::CORE,
        },
        TableLayout {
            major: 1,
            slots: &rocm5::AMD_EXT,
        },
        TableLayout {
            major: 1,
            slots: &rocm5::FINALIZER_EXT,
        },
        TableLayout {
            major: 1,
            slots: &rocm5::IMAGE_EXT,
        },
    ],
}];

/// The live tables: heap memory that tools may rewrite in place.
pub struct Tables {
    /// The layout the tables were built in (chosen once, at load).
    pub layout: &'static Layout,
    root: *mut HsaApiTable,
    children: [*mut usize; 4],
}

// SAFETY: the tables are written once while being built (before any other
// thread can see them) and afterwards only by tools through the raw pointer,
// which is the C protocol; Rust code only reads slot addresses.
unsafe impl Send for Tables {}
// SAFETY: see `Send`.
unsafe impl Sync for Tables {}

static TABLES: OnceLock<Tables> = OnceLock::new();

impl Tables {
    /// The root table handed to tools.
    pub fn root(&self) -> *mut HsaApiTable {
        self.root
    }

    /// Address of the slot `name`, if this layout has it.
    pub fn slot_address(&self, name: &str) -> Option<*mut usize> {
        self.layout
            .tables
            .iter()
            .zip(self.children)
            .find_map(|(t, base)| {
                let index = t.slots.iter().position(|s| *s == name)?;
                // SAFETY: `base` points to a table of 2 header words plus
                // `t.slots.len()` slots, and `index` is below that length.
                Some(unsafe { base.add(2 + index) })
            })
    }

    /// The function currently in slot `name` (possibly a tool's wrapper).
    pub fn slot(&self, name: &str) -> Option<usize> {
        // SAFETY: the address is inside the live table; slots are
        // pointer-sized and aligned, and tools write them only during OnLoad.
        self.slot_address(name)
            .map(|p| unsafe { p.read_volatile() })
    }
}

/// Selects the layout named by `ROCWASM_SIM_HSA_LAYOUT` (`rocm5` or its
/// root major `1`), defaulting to the first.
fn selected_layout() -> &'static Layout {
    let wanted = std::env::var("ROCWASM_SIM_HSA_LAYOUT").unwrap_or_default();
    if wanted.is_empty() {
        return &LAYOUTS[0];
    }
    LAYOUTS
        .iter()
        .find(|l| l.name == wanted || l.root_major.to_string() == wanted)
        .unwrap_or_else(|| {
            eprintln!(
                "sim-hsa: unknown ROCWASM_SIM_HSA_LAYOUT={wanted:?}; using {}",
                LAYOUTS[0].name
            );
            &LAYOUTS[0]
        })
}

fn build(layout: &'static Layout, implementation: fn(&str) -> *const ()) -> Tables {
    let mut children = [std::ptr::null_mut(); 4];
    for (child, t) in children.iter_mut().zip(&layout.tables) {
        let mut words = vec![0usize; 2 + t.slots.len()];
        let version = ApiTableVersion {
            major_id: t.major,
            minor_id: (words.len() * 8) as u32,
            step_id: 0,
            reserved: 0,
        };
        words[0] = version.major_id as usize | (version.minor_id as usize) << 32;
        words[1] = 0;
        for (slot, name) in words[2..].iter_mut().zip(t.slots) {
            *slot = implementation(name) as usize;
        }
        *child = Box::leak(words.into_boxed_slice()).as_mut_ptr();
    }
    let root = Box::leak(Box::new(HsaApiTable {
        version: ApiTableVersion {
            major_id: layout.root_major,
            minor_id: std::mem::size_of::<HsaApiTable>() as u32,
            step_id: 0,
            reserved: 0,
        },
        core: children[0].cast(),
        amd_ext: children[1].cast(),
        finalizer_ext: children[2].cast(),
        image_ext: children[3].cast(),
    }));
    Tables {
        layout,
        root,
        children,
    }
}

/// Builds the live tables, each slot filled with `implementation(slot)`, and
/// points every trampoline at its slot; later calls return the same tables.
/// Called by the library constructor (`api`), before any call can arrive.
pub fn build_live(implementation: fn(&str) -> *const ()) -> &'static Tables {
    TABLES.get_or_init(|| {
        let tables = build(selected_layout(), implementation);
        for (dispatch, (_, slot)) in DISPATCH.iter().zip(EXPORTS) {
            // A function this layout lacks jumps to "not supported".
            let address = tables
                .slot_address(slot)
                .unwrap_or_else(|| std::ptr::addr_of!(UNSUPPORTED_SLOT).cast_mut().cast());
            dispatch.store(address as usize, Ordering::Release);
        }
        tables
    })
}

/// The live tables, built by [`build_live`] when the library was loaded.
pub fn tables() -> &'static Tables {
    TABLES
        .get()
        .expect("sim-hsa: the API tables are built when the library is loaded")
}

/// A slot holding the "not supported" function, for exports whose slot is
/// missing from the selected layout.
static UNSUPPORTED_SLOT: unsafe extern "C" fn() -> hsa_status_t = unsupported;
