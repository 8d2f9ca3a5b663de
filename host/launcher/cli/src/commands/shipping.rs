//! `rocwasm plugin push FILE REF` / `rocwasm plugin pull REF`, and the
//! fetcher that lets a chain name `plugin = "oci://…"` (see
//! `rocwasm-registry` for the artifact layout, the stores and the cache).

use std::path::Path;

use rocwasm_registry::{Artifact, Location, PullCache, RegistryError, Store};

use crate::failure::{Failure, Result};

/// A malformed reference or a refused pin is the user's to fix (status 2);
/// a store that cannot be reached or answers badly is a failure (status 1).
fn failure(e: RegistryError) -> Failure {
    match e {
        RegistryError::Reference { .. }
        | RegistryError::NotAComponent { .. }
        | RegistryError::PinMismatch { .. } => Failure::usage(e),
        _ => Failure::runtime(e),
    }
}

fn cache() -> Result<PullCache> {
    PullCache::default_dir()
        .map(PullCache::new)
        .ok_or_else(|| Failure::usage("no plugin cache directory: set HOME or XDG_CACHE_HOME"))
}

pub fn push(file: &Path, reference: &str, plain_http: bool) -> Result {
    let location = Location::parse(reference).map_err(failure)?;
    let bytes = std::fs::read(file)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", file.display())))?;
    let title = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string());
    let artifact = Artifact::new(bytes, &title).map_err(failure)?;
    let store = Store::open(&location, plain_http).map_err(failure)?;
    let pushed = store.push(&artifact).map_err(failure)?;
    println!("pushed:    {location}");
    println!(
        "component: {} (pin it with sha256 = \"{}\")",
        pushed.component_digest,
        bare(&pushed.component_digest)
    );
    println!("manifest:  {}", pushed.manifest_digest);
    Ok(())
}

pub fn pull(reference: &str, pin: Option<&str>, out: Option<&Path>, plain_http: bool) -> Result {
    let location = Location::parse(reference).map_err(failure)?;
    let pulled = cache()?.pull(&location, pin, plain_http).map_err(failure)?;
    if pulled.replaced_damaged {
        eprintln!("warning: the cached copy of {} was damaged (its digest did not match) and was fetched again", pulled.component_digest);
    }
    if let Some(why) = &pulled.store_unavailable {
        eprintln!("warning: {why}; the pinned component is in this node's cache");
    }
    println!(
        "pulled:    {location}{}",
        if pulled.from_cache {
            " (from this node's cache)"
        } else {
            ""
        }
    );
    println!("component: {}", pulled.component_digest);
    if let Some(m) = &pulled.manifest_digest {
        println!("manifest:  {m}");
    }
    println!("file:      {}", pulled.path.display());
    if let Some(out) = out {
        std::fs::copy(&pulled.path, out)
            .map_err(|e| Failure::runtime(format!("cannot copy to {}: {e}", out.display())))?;
        println!("copied to: {}", out.display());
    }
    Ok(())
}

/// `sha256:abc…` → `abc…`, as a chain's `sha256` key spells it.
fn bare(digest: &str) -> &str {
    digest.strip_prefix("sha256:").unwrap_or(digest)
}

/// The fetcher chain loading uses (`rocwasm_registry::fetcher`).
pub fn fetcher() -> Option<rocwasm_config::Fetcher> {
    rocwasm_registry::fetcher()
}
