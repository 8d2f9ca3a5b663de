//! The node's cache of pulled components, and [`pull`]: a reference (and
//! maybe a pinned digest) in, a local file whose digest was checked out.
//!
//! The cache is content-addressed: `<dir>/sha256/<hex>.wasm` holds the
//! component whose SHA-256 is `<hex>`. A file is used only after hashing it
//! again, so a tampered or truncated entry is detected, reported and
//! fetched anew, never run (the digest is the identity the policy and the
//! signature checks speak about).
//!
//! Every pull asks the store what the reference names now: a tag may move,
//! and a chain that **pins** a digest (`sha256 =`) is refused when its tag
//! now names another component ([`RegistryError::PinMismatch`]). When the
//! store cannot be asked at all (compute nodes often have no route to the
//! registry), a pinned component already in the cache is used, with a
//! warning: the pin guarantees the bytes are the vetted ones, so the login
//! node's first pull serves the compute nodes. An unpinned reference needs
//! the store.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::artifact::sha256_digest;
use crate::reference::Location;
use crate::store::Store;
use crate::RegistryError;

/// Where pulled components are kept on this node.
#[derive(Debug, Clone)]
pub struct PullCache {
    dir: PathBuf,
}

/// A component pulled (or found in the cache).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// The cached file.
    pub path: PathBuf,
    /// `sha256:` digest of the component.
    pub component_digest: String,
    /// The manifest it was resolved through; `None` when a pinned
    /// component came from the cache without asking the store.
    pub manifest_digest: Option<String>,
    /// True when no bytes were downloaded.
    pub from_cache: bool,
    /// Cache entries that failed their digest check and were replaced.
    pub replaced_damaged: bool,
    /// Why the store could not be asked, when a pinned component was taken
    /// from the cache without it (a compute node without a route to the
    /// registry, a registry down): the caller warns with this.
    pub store_unavailable: Option<String>,
}

impl PullCache {
    /// The cache in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> PullCache {
        PullCache { dir: dir.into() }
    }

    /// `$XDG_CACHE_HOME/rocwasm/pulled`, else `~/.cache/rocwasm/pulled`:
    /// per user, as the compiled-component cache.
    pub fn default_dir() -> Option<PathBuf> {
        rocwasm_plan::dirs::cache_home().map(|d| d.join("pulled"))
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entry(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
        self.dir.join("sha256").join(format!("{hex}.wasm"))
    }

    /// The cached file for `digest` if present and intact; `Err(())` when
    /// present but damaged.
    fn lookup(&self, digest: &str) -> Result<Option<PathBuf>, ()> {
        let path = self.entry(digest);
        match fs::read(&path) {
            Ok(bytes) if sha256_digest(&bytes) == digest => Ok(Some(path)),
            Ok(_) => Err(()),
            Err(_) => Ok(None),
        }
    }

    fn store(&self, digest: &str, bytes: &[u8]) -> Result<PathBuf, RegistryError> {
        let path = self.entry(digest);
        let io = |e: std::io::Error| RegistryError::Io {
            what: format!("writing {} into the plugin cache", path.display()),
            source: e,
        };
        let dir = path.parent().expect("entries live in sha256/");
        fs::create_dir_all(dir).map_err(io)?;
        make_private(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        tmp.write_all(bytes).map_err(io)?;
        tmp.persist(&path).map_err(|e| io(e.error))?;
        Ok(path)
    }

    /// Pulls `location` into the cache. `pin` is the component digest the
    /// chain expects (`sha256:` + hex, or bare hex); a store that names
    /// another component is refused before anything is downloaded.
    pub fn pull(
        &self,
        location: &Location,
        pin: Option<&str>,
        plain_http: bool,
    ) -> Result<Pulled, RegistryError> {
        let pin = pin
            .map(|p| {
                let p = if p.starts_with("sha256:") {
                    p.to_string()
                } else {
                    format!("sha256:{p}")
                };
                crate::reference::check_digest(&p).map_err(|why| RegistryError::Reference {
                    reference: location.to_string(),
                    why: format!("the pinned digest: {why}"),
                })
            })
            .transpose()?;
        let mut replaced_damaged = false;
        // The pinned component, if this node has it intact.
        let cached_pin = match pin.as_deref().map(|p| self.lookup(p)) {
            Some(Ok(found)) => found,
            Some(Err(())) => {
                replaced_damaged = true;
                None
            }
            None => None,
        };
        let resolved = match Store::open(location, plain_http).and_then(|s| Ok((s.resolve()?, s))) {
            Ok(found) => found,
            Err(e) => {
                // Only a store that cannot be asked at all lets a pinned
                // copy run: a store that answers (no such tag, refused,
                // malformed) is heard.
                let (RegistryError::Unreachable { .. }, Some(path), Some(pin)) =
                    (&e, cached_pin, &pin)
                else {
                    return Err(e);
                };
                return Ok(Pulled {
                    path,
                    component_digest: pin.clone(),
                    manifest_digest: None,
                    from_cache: true,
                    replaced_damaged: false,
                    store_unavailable: Some(e.to_string()),
                });
            }
        };
        let (resolved, store) = resolved;
        if let Some(pin) = &pin {
            if &resolved.component_digest != pin {
                return Err(RegistryError::PinMismatch {
                    location: location.to_string(),
                    pinned: pin.clone(),
                    found: resolved.component_digest,
                });
            }
        }
        let (path, from_cache) = match self.lookup(&resolved.component_digest) {
            Ok(Some(path)) => (path, true),
            found => {
                replaced_damaged |= found.is_err();
                let bytes = store.fetch(&resolved)?;
                (self.store(&resolved.component_digest, &bytes)?, false)
            }
        };
        Ok(Pulled {
            path,
            component_digest: resolved.component_digest,
            manifest_digest: Some(resolved.manifest_digest),
            from_cache,
            replaced_damaged,
            store_unavailable: None,
        })
    }
}

/// Makes the per-user pull cache `dir` readable by its owner only (nobody
/// else reads what this user pulled), or refuses to use it: a cache that
/// cannot be made private is not written into.
fn make_private(dir: &Path) -> Result<(), RegistryError> {
    use std::os::unix::fs::PermissionsExt;
    let refused = |e: std::io::Error| RegistryError::Io {
        what: format!(
            "making the plugin cache {} private (mode 0700) before storing into it",
            dir.display()
        ),
        source: e,
    };
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(refused)?;
    let mode = fs::metadata(dir).map_err(refused)?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(refused(std::io::Error::other(format!(
            "its mode is still {:o}",
            mode & 0o777
        ))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_that_cannot_be_made_private_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let gone = tmp.path().join("not-there");
        let err = make_private(&gone).unwrap_err().to_string();
        assert!(err.contains("making the plugin cache"), "{err}");
        assert!(err.contains("not-there"), "{err}");
        // A directory it can make private is fine, and ends 0700.
        make_private(tmp.path()).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(tmp.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn a_pin_must_be_a_sha256_digest() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PullCache::new(dir.path());
        let at = Location::parse("dir:///nonexistent/store:1").unwrap();
        for bad in ["../../etc/passwd", "sha256:xyz", "abc"] {
            let e = cache.pull(&at, Some(bad), false).unwrap_err().to_string();
            assert!(e.contains("the pinned digest"), "{bad}: {e}");
        }
    }
}
