//! Where rocwasm keeps a user's caches: `$XDG_CACHE_HOME/rocwasm`, else
//! `~/.cache/rocwasm` (an empty `XDG_CACHE_HOME` counts as unset, as the
//! XDG base-directory specification says). The compiled-component cache
//! (`components/`) and the pulled-plugin cache (`pulled/`) live under it.

use std::path::PathBuf;

/// `$XDG_CACHE_HOME/rocwasm` or `~/.cache/rocwasm`; `None` without either
/// variable.
pub fn cache_home() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("rocwasm"))
}
