//! Is a file a component? The first eight bytes tell: a component's
//! preamble is the Wasm magic, then version 0x0d and layer 1; a core module
//! has version 1, layer 0. A core module is the usual mistake (the linker
//! was `wasm-ld`, not `wasm-component-ld`), so it gets its own message.

use anyhow::{bail, Result};

/// The preamble of a component.
pub const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
/// The preamble of a core module.
pub const CORE_MODULE_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/// Fails unless `bytes` start with the component preamble.
pub fn check_component(name: &str, bytes: &[u8]) -> Result<()> {
    if bytes.starts_with(&COMPONENT_PREAMBLE) {
        return Ok(());
    }
    if bytes.starts_with(&CORE_MODULE_PREAMBLE) {
        bail!(
            "plugin `{name}` was linked as a core Wasm module, not a component: \
             the linker was not wasm-component-ld (check the route printed above)"
        );
    }
    bail!(
        "plugin `{name}` is not a Wasm component (first bytes {:02x?})",
        &bytes[..bytes.len().min(8)]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_check_tells_components_from_modules() {
        assert!(check_component("x", &[0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0, 7]).is_ok());
        let err = check_component("x", &CORE_MODULE_PREAMBLE)
            .unwrap_err()
            .to_string();
        assert!(err.contains("core Wasm module"), "{err}");
        assert!(check_component("x", b"ELF").is_err());
    }
}
