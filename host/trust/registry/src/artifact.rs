//! A plugin as an OCI artifact: the layout the CNCF's Wasm OCI artifact
//! specification defines and wasm-pkg-tools (`wkg oci push`), Spin and
//! wasmCloud use, so their tools can list, copy and pull what we push.
//!
//! - the **manifest** is an OCI image manifest
//!   (`application/vnd.oci.image.manifest.v1+json`);
//! - its **config** blob has media type `application/vnd.wasm.config.v0+json`
//!   and says `architecture: "wasm"`, `os: "wasip2"`, the layer digests and
//!   the component's top-level imports and exports, so a registry browser or
//!   an admin sees what a plugin needs before pulling it;
//! - exactly **one layer**, `application/wasm`: the component's bytes,
//!   unchanged, so the layer digest *is* the file's SHA-256 (what a chain's
//!   `sha256 =` pins) and an embedded signature travels with it.

use std::collections::BTreeMap;

use oci_client::manifest::OciDescriptor;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::RegistryError;

/// The manifest's media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config blob's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The manifest annotation naming the file the component came from.
pub const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";

/// The config blob.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// RFC 3339 creation time.
    pub created: String,
    /// Always `wasm`.
    pub architecture: String,
    /// `wasip2` for a component.
    pub os: String,
    /// The digests of the manifest's layers, in order.
    pub layer_digests: Vec<String>,
    /// What the component imports and exports.
    pub component: ComponentInfo,
}

/// The `component` object of [`WasmConfig`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ComponentInfo {
    /// Top-level exports (`rocwasm:plugin/analysis@0.1.0`, …).
    pub exports: Vec<String>,
    /// Top-level imports.
    pub imports: Vec<String>,
    /// The world it targets, when known (`rocwasm:plugin/analysis-plugin@0.1.0`).
    pub target: Option<String>,
}

/// A component ready to push: its bytes, its config blob and their digests.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The component.
    pub component: Vec<u8>,
    /// `sha256:` digest of [`Artifact::component`] (the layer digest).
    pub component_digest: String,
    /// The serialised config blob.
    pub config: Vec<u8>,
    /// Manifest annotations.
    pub annotations: BTreeMap<String, String>,
}

impl Artifact {
    /// Packages `component` (a Wasm component, checked) under the file name
    /// `title`.
    pub fn new(component: Vec<u8>, title: &str) -> Result<Artifact, RegistryError> {
        const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
        if !component.starts_with(&COMPONENT_PREAMBLE) {
            return Err(RegistryError::NotAComponent {
                what: title.to_string(),
            });
        }
        let interfaces =
            rocwasm_policy::interfaces(&component).map_err(|e| RegistryError::NotAComponent {
                what: format!("{title} ({e})"),
            })?;
        let component_digest = sha256_digest(&component);
        let target = world_of(&interfaces.exports);
        let config = WasmConfig {
            created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            architecture: "wasm".into(),
            os: "wasip2".into(),
            layer_digests: vec![component_digest.clone()],
            component: ComponentInfo {
                exports: interfaces.exports,
                imports: interfaces.imports,
                target,
            },
        };
        let config = serde_json::to_vec(&config).expect("the config serialises");
        let annotations = BTreeMap::from([(TITLE_ANNOTATION.to_string(), title.to_string())]);
        Ok(Artifact {
            component,
            component_digest,
            config,
            annotations,
        })
    }
}

/// The rocwasm world a component's exports make it, if any.
fn world_of(exports: &[String]) -> Option<String> {
    let version = |e: &str| e.rsplit_once('@').map(|(_, v)| v.to_string());
    exports.iter().find_map(|e| {
        let world = if e.starts_with("rocwasm:plugin/analysis@") {
            "analysis-plugin"
        } else if e.starts_with("rocwasm:plugin/transform@") {
            "transform-plugin"
        } else {
            return None;
        };
        Some(format!("rocwasm:plugin/{world}@{}", version(e)?))
    })
}

/// `sha256:` + lowercase hex of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The largest component a store hands out (a componentize-py plugin is
/// ~18 MB; a registry offering more is refused before downloading it).
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// What a push stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// `sha256:` digest of the manifest (what `NAME@sha256:…` pins).
    pub manifest_digest: String,
    /// `sha256:` digest of the component (what a chain's `sha256 =` pins).
    pub component_digest: String,
}

/// What a reference points at, read without downloading the component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// `sha256:` digest of the manifest.
    pub manifest_digest: String,
    /// `sha256:` digest of the component layer.
    pub component_digest: String,
    /// Its size in bytes, as the manifest says.
    pub component_size: u64,
}

impl Resolved {
    /// What a manifest with digest `manifest_digest` and these `layers`
    /// names: its one component layer.
    pub(crate) fn from_layers(
        manifest_digest: String,
        layers: &[OciDescriptor],
    ) -> Result<Resolved, String> {
        let layer = component_layer(layers)?;
        // Digests from a store name files in the node's cache: only
        // `sha256:` + 64 hex digits may come through.
        let manifest_digest = crate::reference::check_digest(&manifest_digest)
            .map_err(|why| format!("the manifest's digest: {why}"))?;
        let component_digest = crate::reference::check_digest(&layer.digest)
            .map_err(|why| format!("the component layer's digest: {why}"))?;
        Ok(Resolved {
            manifest_digest,
            component_digest,
            component_size: layer.size as u64,
        })
    }

    /// Refuses a component larger than [`MAX_COMPONENT_BYTES`] before any
    /// byte of it is read.
    pub(crate) fn check_size(&self) -> Result<(), String> {
        if self.component_size > MAX_COMPONENT_BYTES {
            return Err(format!(
                "it is {} bytes, more than the {MAX_COMPONENT_BYTES} a plugin may have",
                self.component_size
            ));
        }
        Ok(())
    }
}

/// The one `application/wasm` layer of a manifest.
pub(crate) fn component_layer(layers: &[OciDescriptor]) -> Result<&OciDescriptor, String> {
    let wasm: Vec<_> = layers
        .iter()
        .filter(|l| l.media_type == WASM_LAYER_MEDIA_TYPE)
        .collect();
    match wasm.as_slice() {
        [one] if layers.len() == 1 => {
            if one.size < 0 {
                return Err(format!(
                    "the component layer has a negative size ({})",
                    one.size
                ));
            }
            Ok(one)
        }
        _ => {
            let types: Vec<_> = layers.iter().map(|l| l.media_type.as_str()).collect();
            Err(format!(
                "a plugin artifact has exactly one `{WASM_LAYER_MEDIA_TYPE}` layer; this manifest has [{}]",
                types.join(", ")
            ))
        }
    }
}

/// Checks that `bytes` have digest `expected`.
pub(crate) fn check_blob(bytes: &[u8], expected: &str) -> Result<(), String> {
    let actual = sha256_digest(bytes);
    if actual == expected {
        Ok(())
    } else {
        Err(format!(
            "its content has digest {actual}, not the {expected} the manifest names"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_module_is_not_an_artifact() {
        let core = b"\0asm\x01\0\0\0".to_vec();
        let e = Artifact::new(core, "m.wasm").unwrap_err().to_string();
        assert!(
            e.contains("m.wasm") && e.contains("not a Wasm component"),
            "{e}"
        );
    }

    #[test]
    fn worlds_are_read_from_exports() {
        assert_eq!(
            world_of(&[
                "rocwasm:plugin/lifecycle@0.1.0".into(),
                "rocwasm:plugin/analysis@0.1.0".into()
            ]),
            Some("rocwasm:plugin/analysis-plugin@0.1.0".into())
        );
        assert_eq!(world_of(&["wasi:cli/run@0.2.0".into()]), None);
    }
}
