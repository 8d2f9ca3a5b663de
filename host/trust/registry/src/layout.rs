//! A directory store: one OCI image layout per repository, the HPC way to
//! ship plugins (a shared filesystem every node mounts; no server).
//!
//! The layout is the OCI image-layout specification's:
//!
//! ```text
//! /srv/rocwasm/kernel-stats/
//!   oci-layout                  {"imageLayoutVersion":"1.0.0"}
//!   index.json                  the tags: one manifest descriptor per tag,
//!                               annotated org.opencontainers.image.ref.name
//!   blobs/sha256/<hex>          manifests, config blobs, components
//! ```
//!
//! so `oras cp --from-oci-layout` / `skopeo copy oci:` move it to and from
//! a registry. Every file is written to a temporary name in its directory
//! and renamed into place: a reader on another node sees the old or the new
//! `index.json`, never half of one. Pushes are not locked against each
//! other: two admins pushing at the same moment may lose one tag's update
//! (the last `index.json` rename wins); push from one place at a time.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use oci_client::manifest::{OciDescriptor, OciImageIndex, OciImageManifest, OciManifest};
use serde_json::Value;

use crate::artifact::{
    check_blob, sha256_digest, Artifact, Pushed, Resolved, CONFIG_MEDIA_TYPE, MANIFEST_MEDIA_TYPE,
    WASM_LAYER_MEDIA_TYPE,
};
use crate::reference::{DirRef, Target};
use crate::RegistryError;

/// A manifest larger than this is not a plugin's (ours are ~600 bytes).
const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// The annotation that names a tag in `index.json`.
const REF_NAME: &str = "org.opencontainers.image.ref.name";
const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";

/// One repository as an image-layout directory.
pub struct LayoutRepo {
    at: DirRef,
}

impl LayoutRepo {
    /// The repository at `at` (not touched until used).
    pub fn new(at: DirRef) -> LayoutRepo {
        LayoutRepo { at }
    }

    fn failed(&self, doing: &str, why: impl std::fmt::Display) -> RegistryError {
        RegistryError::Registry {
            location: format!("dir://{}{}", self.at.layout.display(), self.at.target),
            doing: doing.to_string(),
            why: why.to_string(),
        }
    }

    fn blob_path(&self, digest: &str) -> Result<PathBuf, RegistryError> {
        let digest = crate::reference::check_digest(digest)
            .map_err(|why| self.failed("reading the index", why))?;
        let hex = digest.trim_start_matches("sha256:");
        Ok(self.at.layout.join("blobs/sha256").join(hex))
    }

    /// Reads a blob of at most `limit` bytes and checks its digest.
    fn read_blob(&self, digest: &str, what: &str, limit: u64) -> Result<Vec<u8>, RegistryError> {
        let path = self.blob_path(digest)?;
        let doing = format!("reading the {what}");
        let len = fs::metadata(&path)
            .map_err(|e| self.failed(&doing, format!("{}: {e}", path.display())))?
            .len();
        if len > limit {
            return Err(self.failed(
                &doing,
                format!(
                    "{} is {len} bytes, more than the {limit} expected",
                    path.display()
                ),
            ));
        }
        let bytes =
            fs::read(&path).map_err(|e| self.failed(&doing, format!("{}: {e}", path.display())))?;
        check_blob(&bytes, digest).map_err(|why| self.failed(&doing, why))?;
        Ok(bytes)
    }

    /// Writes a blob unless an intact one is there already (a damaged one,
    /// from an interrupted copy, is replaced).
    fn write_blob(&self, bytes: &[u8]) -> Result<String, RegistryError> {
        let digest = sha256_digest(bytes);
        let path = self.blob_path(&digest)?;
        let intact = fs::read(&path).is_ok_and(|have| sha256_digest(&have) == digest);
        if !intact {
            write_atomically(&path, bytes).map_err(|e| self.failed("writing a blob", e))?;
        }
        Ok(digest)
    }

    fn index(&self) -> Result<OciImageIndex, RegistryError> {
        let path = self.at.layout.join("index.json");
        if !path.exists() {
            return Ok(OciImageIndex {
                schema_version: 2,
                media_type: Some(INDEX_MEDIA_TYPE.to_string()),
                manifests: Vec::new(),
                annotations: None,
                artifact_type: None,
            });
        }
        let text = fs::read(&path)
            .map_err(|e| self.failed("reading the index", format!("{}: {e}", path.display())))?;
        serde_json::from_slice(&text)
            .map_err(|e| self.failed("reading the index", format!("{}: {e}", path.display())))
    }

    /// Stores `artifact` and points the tag at it.
    pub fn push(&self, artifact: &Artifact) -> Result<Pushed, RegistryError> {
        let Target::Tag(tag) = &self.at.target else {
            return Err(self.failed("pushing", "push needs a tag, not a digest"));
        };
        fs::create_dir_all(self.at.layout.join("blobs/sha256"))
            .map_err(|e| self.failed("creating the store", e))?;
        let layout_file = self.at.layout.join("oci-layout");
        if !layout_file.exists() {
            write_atomically(&layout_file, br#"{"imageLayoutVersion":"1.0.0"}"#)
                .map_err(|e| self.failed("creating the store", e))?;
        }
        let component_digest = self.write_blob(&artifact.component)?;
        let config_digest = self.write_blob(&artifact.config)?;
        let manifest = OciImageManifest {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.to_string()),
            config: descriptor(CONFIG_MEDIA_TYPE, config_digest, artifact.config.len()),
            layers: vec![descriptor(
                WASM_LAYER_MEDIA_TYPE,
                component_digest.clone(),
                artifact.component.len(),
            )],
            annotations: Some(artifact.annotations.clone()),
            ..OciImageManifest::default()
        };
        let manifest_bytes =
            serde_json::to_vec(&OciManifest::Image(manifest)).expect("a manifest serialises");
        let manifest_digest = self.write_blob(&manifest_bytes)?;

        let mut index = self.index()?;
        index
            .manifests
            .retain(|m| m.annotations.as_ref().and_then(|a| a.get(REF_NAME)) != Some(tag));
        let mut entry = descriptor_entry(&manifest_digest, manifest_bytes.len());
        entry
            .annotations
            .get_or_insert_with(Default::default)
            .insert(REF_NAME.to_string(), tag.clone());
        index.manifests.push(entry);
        let index_bytes = serde_json::to_vec_pretty(&index).expect("an index serialises");
        write_atomically(&self.at.layout.join("index.json"), &index_bytes)
            .map_err(|e| self.failed("writing the index", e))?;
        Ok(Pushed {
            manifest_digest,
            component_digest,
        })
    }

    /// The digests the tag (or manifest digest) names.
    pub fn resolve(&self) -> Result<Resolved, RegistryError> {
        if !self.at.layout.join("oci-layout").is_file() {
            // Not there at all (an unmounted shared filesystem, a typo):
            // the store cannot be asked.
            return Err(RegistryError::Unreachable {
                location: format!("dir://{}{}", self.at.layout.display(), self.at.target),
                why: format!(
                    "{} is not an OCI image layout (no `oci-layout` file)",
                    self.at.layout.display()
                ),
            });
        }
        let manifest_digest = match &self.at.target {
            Target::Digest(d) => d.clone(),
            Target::Tag(tag) => {
                let index = self.index()?;
                let found = index
                    .manifests
                    .iter()
                    .find(|m| m.annotations.as_ref().and_then(|a| a.get(REF_NAME)) == Some(tag));
                match found {
                    Some(m) => m.digest.clone(),
                    None => {
                        return Err(self
                            .failed("resolving the tag", format!("no tag `{tag}` in the store")))
                    }
                }
            }
        };
        let bytes = self.read_blob(&manifest_digest, "manifest", MAX_MANIFEST_BYTES)?;
        let manifest: OciImageManifest =
            serde_json::from_slice(&bytes).map_err(|e| self.failed("reading the manifest", e))?;
        Resolved::from_layers(manifest_digest, &manifest.layers)
            .map_err(|why| self.failed("reading the manifest", why))
    }

    /// The component `resolved` names, its digest checked.
    pub fn fetch(&self, resolved: &Resolved) -> Result<Vec<u8>, RegistryError> {
        resolved
            .check_size()
            .map_err(|why| self.failed("reading the component", why))?;
        self.read_blob(
            &resolved.component_digest,
            "component",
            resolved.component_size,
        )
    }
}

fn descriptor(media_type: &str, digest: String, size: usize) -> OciDescriptor {
    OciDescriptor {
        media_type: media_type.to_string(),
        digest,
        size: size as i64,
        ..OciDescriptor::default()
    }
}

fn descriptor_entry(digest: &str, size: usize) -> oci_client::manifest::ImageIndexEntry {
    // Built through JSON: the entry type's optional fields vary between
    // oci-client versions; the JSON shape is the specification's.
    let v: Value = serde_json::json!({
        "mediaType": MANIFEST_MEDIA_TYPE,
        "digest": digest,
        "size": size,
    });
    serde_json::from_value(v).expect("a manifest descriptor deserialises")
}

/// Writes `bytes` to `path` through a temporary file in the same directory.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // Blobs and the index are readable by every user of the node (the store
    // is shared); write access is the directory's business.
    use std::os::unix::fs::PermissionsExt;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(0o644))?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
