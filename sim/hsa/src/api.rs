//! Which Rust function fills each table slot.
//!
//! Memory-order variants (`_relaxed`, `_scacquire`, `_screlease`,
//! `_scacq_screl`) of signal and queue-index operations share one
//! implementation that is at least as strong as any of them. A slot with no
//! implementation gets [`unsupported`], which returns `HSA_STATUS_ERROR`
//! (images, finalizer, IPC, SVM, signal groups, legacy code objects…).
//!
//! The tables are built from [`implementation`] when the library is loaded
//! (the constructor below), so that every trampoline has a target before any
//! call can arrive.

use crate::table::{self, unsupported};
use crate::{agent, copy, core, loader, memory, queue, signal};

fn base_name(slot: &str) -> &str {
    if slot.starts_with("hsa_signal_") || slot.starts_with("hsa_queue_") {
        for suffix in ["_scacq_screl", "_scacquire", "_screlease", "_relaxed"] {
            if let Some(base) = slot.strip_suffix(suffix) {
                return base;
            }
        }
    }
    slot
}

/// The implementation of table slot `slot` (e.g. `hsa_queue_create`).
pub fn implementation(slot: &str) -> *const () {
    macro_rules! pick {
        ($($f:path),* $(,)?) => {
            match base_name(slot) {
                $(name if name == last_segment(stringify!($f)) => $f as *const (),)*
                _ => unsupported as *const (),
            }
        };
    }
    pick!(
        core::hsa_init,
        core::hsa_shut_down,
        core::hsa_system_extension_supported,
        core::hsa_system_major_extension_supported,
        core::hsa_system_get_extension_table,
        core::hsa_system_get_major_extension_table,
        core::hsa_extension_get_name,
        core::hsa_status_string,
        agent::hsa_system_get_info,
        agent::hsa_iterate_agents,
        agent::hsa_agent_get_info,
        agent::hsa_agent_iterate_isas,
        agent::hsa_isa_get_info_alt,
        agent::hsa_isa_from_name,
        agent::hsa_agent_iterate_regions,
        agent::hsa_region_get_info,
        agent::hsa_amd_agent_iterate_memory_pools,
        agent::hsa_amd_memory_pool_get_info,
        agent::hsa_amd_agent_memory_pool_get_info,
        memory::hsa_amd_memory_pool_allocate,
        memory::hsa_amd_memory_pool_free,
        memory::hsa_memory_allocate,
        memory::hsa_memory_free,
        memory::hsa_memory_register,
        memory::hsa_memory_deregister,
        memory::hsa_memory_copy,
        memory::hsa_amd_memory_fill,
        memory::hsa_amd_agents_allow_access,
        memory::hsa_amd_memory_lock,
        memory::hsa_amd_memory_unlock,
        signal::hsa_signal_create,
        signal::hsa_amd_signal_create,
        signal::hsa_signal_destroy,
        signal::hsa_signal_load,
        signal::hsa_signal_store,
        signal::hsa_signal_silent_store,
        signal::hsa_signal_add,
        signal::hsa_signal_subtract,
        signal::hsa_signal_and,
        signal::hsa_signal_or,
        signal::hsa_signal_xor,
        signal::hsa_signal_exchange,
        signal::hsa_signal_cas,
        signal::hsa_signal_wait,
        signal::hsa_amd_signal_wait_any,
        signal::hsa_amd_signal_async_handler,
        queue::hsa_queue_create,
        queue::hsa_queue_destroy,
        queue::hsa_queue_inactivate,
        queue::hsa_queue_load_read_index,
        queue::hsa_queue_load_write_index,
        queue::hsa_queue_store_write_index,
        queue::hsa_queue_store_read_index,
        queue::hsa_queue_cas_write_index,
        queue::hsa_queue_add_write_index,
        queue::hsa_amd_queue_intercept_create,
        queue::hsa_amd_queue_intercept_register,
        queue::hsa_amd_queue_cu_set_mask,
        queue::hsa_amd_queue_set_priority,
        queue::hsa_amd_profiling_set_profiler_enabled,
        queue::hsa_amd_profiling_get_dispatch_time,
        queue::hsa_amd_profiling_convert_tick_to_system_domain,
        copy::hsa_amd_memory_async_copy,
        copy::hsa_amd_memory_async_copy_rect,
        copy::hsa_amd_profiling_async_copy_enable,
        copy::hsa_amd_profiling_get_async_copy_time,
        loader::hsa_code_object_reader_create_from_memory,
        loader::hsa_code_object_reader_create_from_file,
        loader::hsa_code_object_reader_destroy,
        loader::hsa_executable_create,
        loader::hsa_executable_create_alt,
        loader::hsa_executable_load_agent_code_object,
        loader::hsa_executable_freeze,
        loader::hsa_executable_destroy,
        loader::hsa_executable_get_info,
        loader::hsa_executable_validate,
        loader::hsa_executable_validate_alt,
        loader::hsa_executable_get_symbol,
        loader::hsa_executable_get_symbol_by_name,
        loader::hsa_executable_iterate_symbols,
        loader::hsa_executable_iterate_agent_symbols,
        loader::hsa_executable_symbol_get_info,
    )
}

fn last_segment(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path).trim()
}

/// Builds the tables when the library is loaded, so that every trampoline
/// has a target before any call can arrive.
extern "C" fn on_library_load() {
    let _ = table::build_live(implementation);
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_library_load;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_order_variants_share_an_implementation() {
        assert_eq!(base_name("hsa_signal_wait_scacquire"), "hsa_signal_wait");
        assert_eq!(
            base_name("hsa_queue_add_write_index_scacq_screl"),
            "hsa_queue_add_write_index"
        );
        assert_eq!(
            implementation("hsa_signal_load_relaxed"),
            implementation("hsa_signal_load_scacquire")
        );
        assert_ne!(implementation("hsa_queue_create"), unsupported as *const ());
        assert_eq!(
            implementation("hsa_ext_image_create"),
            unsupported as *const ()
        );
    }

    #[test]
    fn every_listed_implementation_names_a_real_slot() {
        // A typo in the pick! list would silently leave a slot unsupported.
        let all: Vec<&str> = crate::table::LAYOUTS[0]
            .tables
            .iter()
            .flat_map(|t| t.slots.iter().copied())
            .collect();
        for slot in &all {
            let _ = implementation(slot);
        }
        for must in [
            "hsa_amd_queue_intercept_create",
            "hsa_amd_queue_intercept_register",
            "hsa_amd_memory_async_copy",
            "hsa_system_get_major_extension_table",
            "hsa_executable_freeze",
            "hsa_amd_profiling_get_dispatch_time",
        ] {
            assert!(all.contains(&must), "{must} missing from the layout");
            assert_ne!(implementation(must), unsupported as *const (), "{must}");
        }
    }
}
