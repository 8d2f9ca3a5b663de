//! The HSA API tables' slot order, a fact of the ABI.
//!
//! A runtime hands a tool (`OnLoad`, or `rocprofiler_set_api_table` from
//! ROCm 6.2) an `HsaApiTable` whose members point at four child tables:
//! `CoreApiTable`, `AmdExtTable`, `FinalizerExtTable` and `ImageExtTable`.
//! Each child is a version header `{major_id, minor_id = size in bytes,
//! step_id, reserved}` (16 bytes) followed by function pointers in the order
//! of `hsa_api_trace.h`; slot `n` (from 1) sits at byte offset `16 + 8·(n-1)`,
//! and a slot exists only if it ends within `minor_id` bytes.
//!
//! The lists below are those of ROCm 5.x (table major version 1), generated
//! from Debian's ROCm 5.2 `hsa_api_trace.h` by `cargo xtask gen-names`. They
//! are also the HSA kinds' operation names: operation `n` is slot `n`.

pub use crate::generated::hsa_api_tables::{
    AMD_EXT_TABLE, CORE_API_TABLE, FINALIZER_EXT_TABLE, IMAGE_EXT_TABLE,
};

/// The root table's major version of the ROCm 5.x layout.
pub const ROCM5_ROOT_MAJOR: u32 = 1;
/// Bytes of a table's version header, before slot 1.
pub const HEADER_BYTES: usize = 16;

/// The byte offset of 1-based slot `slot` in a child table.
pub const fn slot_offset(slot: usize) -> usize {
    HEADER_BYTES + 8 * (slot - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocm5_tables_have_the_header_sizes() {
        assert_eq!(CORE_API_TABLE.len(), 125);
        assert_eq!(AMD_EXT_TABLE.len(), 48);
        assert_eq!(IMAGE_EXT_TABLE.len(), 13);
        assert_eq!(FINALIZER_EXT_TABLE.len(), 6);
        assert_eq!(CORE_API_TABLE[0], "hsa_init");
        assert_eq!(AMD_EXT_TABLE[15], "hsa_amd_memory_async_copy");
        assert_eq!(slot_offset(1), 16);
        assert_eq!(slot_offset(8), 72);
    }
}
