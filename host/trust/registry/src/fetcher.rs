//! The [`Fetcher`] chain loading uses to pull shipped plugins (`oci://…`,
//! `dir://…`) into this node's cache, verified against their digest: the
//! CLI's and the Python package's (so a Dask worker pulls and verifies the
//! plugins a chain names by content digest, as `rocwasm run` does).

use std::path::PathBuf;
use std::sync::Arc;

use rocwasm_config::{Fetcher, PluginFetcher};

use crate::{Location, PullCache};

/// Pulls the shipped plugins a chain names into this node's cache.
struct CacheFetcher {
    cache: PullCache,
}

impl PluginFetcher for CacheFetcher {
    fn fetch(&self, reference: &str, pin: Option<&str>) -> Result<PathBuf, String> {
        let location = Location::parse(reference).map_err(|e| e.to_string())?;
        let pulled = self
            .cache
            .pull(&location, pin, false)
            .map_err(|e| e.to_string())?;
        if pulled.replaced_damaged {
            eprintln!("rocwasm: the cached copy of {reference} was damaged and was fetched again");
        }
        if let Some(why) = &pulled.store_unavailable {
            eprintln!(
                "rocwasm: warning: {why}; running the pinned component from this node's cache"
            );
        }
        Ok(pulled.path)
    }
}

/// The fetcher over this node's pull cache ([`PullCache::default_dir`]);
/// `None` without a cache directory (a chain naming a shipped plugin then
/// says it cannot be pulled).
pub fn fetcher() -> Option<Fetcher> {
    let cache = PullCache::new(PullCache::default_dir()?);
    Some(Fetcher(Arc::new(CacheFetcher { cache })))
}
