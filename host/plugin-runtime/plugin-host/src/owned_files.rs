//! Files only their owner may write: the trust rule, and the atomic write,
//! that the [compiled-component cache](crate::cache) and the
//! [digest memo](crate::digest_memo) kept beside it share.
//!
//! A file there is believed only when it and its directory are owned by the
//! expected user and writable by nobody else; files are written to a
//! temporary name and renamed into place, so a reader never sees a partial
//! one.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use anyhow::{Context, Result};

/// Whether the file or directory `meta` describes is owned by `uid` and
/// writable by nobody else.
pub(crate) fn writable_by_alone(meta: &fs::Metadata, uid: u32) -> bool {
    meta.uid() == uid && meta.permissions().mode() & 0o022 == 0
}

/// Writes `bytes` to `path` with `mode` through a temporary file renamed
/// into place, so that a reader never sees a partial file.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(&tmp)
        .with_context(|| format!("writing {}", tmp.display()))?;
    f.write_all(bytes)?;
    // The umask may have narrowed `mode`; a site file must be readable.
    f.set_permissions(fs::Permissions::from_mode(mode))?;
    f.sync_all()?;
    fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))
}

/// The effective user id of this process.
pub(crate) fn current_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}
