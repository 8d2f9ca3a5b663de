//! Remembered digests: the SHA-256 of a `.wasm` file (and the XXH3 checksum
//! of a compiled artifact the [cache](crate::cache) has checked), kept with
//! what `stat` says about the file, so that a warm load need not read and
//! hash it.
//!
//! A plugin's identity (and half of its key in the [compiled-component
//! cache](crate::cache)) is the SHA-256 of its bytes. For a Rust plugin of
//! 150 kB that is nothing; a componentize-py plugin is 18 MB and a
//! componentize-js one 12 MB, and reading and hashing them was half of a warm
//! load. Git's index answers the same question the same way: a file whose
//! device, inode, size, modification time and status-change time (both to
//! the nanosecond) are what they were has the content it had. The
//! status-change time (`ctime`) is the strong part: no user can set it, and
//! every write, truncation, rename onto the path or `touch` moves it.
//!
//! Two rules keep the shortcut exact:
//!
//! - **Racy files are not remembered.** The kernel stamps times from a
//!   coarse clock (a few milliseconds), so a file written twice within one
//!   tick can keep its times. A file is remembered only once its `ctime` is
//!   [`SETTLED`] in the past (git's "racily clean" rule); a plugin built a
//!   moment ago is hashed on each load until then.
//! - **The entry must match entirely**: all five values, or the file is read
//!   and hashed again (and the entry replaced). An inode number reused by a
//!   new file comes with the new file's `ctime`.
//!
//! The memo lives in the user's private cache directory, `digests/`, one
//! small file per plugin file or checked artifact (named by its device and
//! inode, so any path to it, relative or not, finds it; its first line says
//! which of the two it remembers), trusted under the cache's own rules (a
//! directory owned by this user and writable by nobody else, entries owned
//! by this user): whoever could forge an entry could as well plant a
//! compiled artifact. The site cache keeps no memo. A memo that cannot be
//! read or written is only a slower load, never an error.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::owned_files::{current_uid, writable_by_alone, write_atomically};

/// How old a file's last change must be before its digest is remembered.
pub const SETTLED: Duration = Duration::from_secs(2);

/// The digests of one kind remembered in one cache directory.
#[derive(Debug, Clone)]
pub struct DigestMemo {
    dir: PathBuf,
    what: Remembered,
}

/// What a memo remembers. Its entries say it on their first line, so an
/// entry of one kind is never taken for the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Remembered {
    /// A plugin file's SHA-256: its identity.
    PluginDigest,
    /// A compiled artifact's XXH3-128 checksum (see [`crate::cache`]).
    ArtifactChecksum,
}

impl Remembered {
    /// The entry format's name and version.
    fn format(self) -> &'static str {
        match self {
            Remembered::PluginDigest => "rocwasm-digest 1",
            Remembered::ArtifactChecksum => "rocwasm-artifact-checksum 1",
        }
    }

    /// Hex digits of a value.
    fn digits(self) -> usize {
        match self {
            Remembered::PluginDigest => 64,
            Remembered::ArtifactChecksum => 32,
        }
    }
}

/// What `stat` said about a file, as the memo compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(meta: &fs::Metadata) -> Stamp {
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Whether the file last changed at least [`SETTLED`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let Ok(now) = now.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let changed = Duration::new(
            u64::try_from(self.ctime.0).unwrap_or(u64::MAX),
            u32::try_from(self.ctime.1).unwrap_or(0),
        );
        changed.saturating_add(SETTLED) <= now
    }

    /// The stamp as an entry's second line.
    fn line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {}\n",
            self.dev, self.ino, self.size, self.mtime.0, self.mtime.1, self.ctime.0, self.ctime.1
        )
    }
}

impl DigestMemo {
    /// The plugin digests remembered in the (private) cache directory
    /// `cache_dir`.
    pub fn new(cache_dir: &Path) -> DigestMemo {
        DigestMemo {
            dir: cache_dir.join("digests"),
            what: Remembered::PluginDigest,
        }
    }

    /// The checksums of compiled artifacts remembered in the (private)
    /// cache directory `cache_dir` (beside its plugin digests: entries are
    /// named by the file's device and inode, and say which kind they are).
    pub fn artifact_checksums(cache_dir: &Path) -> DigestMemo {
        DigestMemo {
            what: Remembered::ArtifactChecksum,
            ..DigestMemo::new(cache_dir)
        }
    }

    /// The entry's text: the format's name and version, the stamp, then the
    /// digest, each on a line.
    fn entry(&self, stamp: &Stamp, digest: &str) -> String {
        format!("{}{digest}\n", self.header(stamp))
    }

    fn header(&self, stamp: &Stamp) -> String {
        format!("{}\n{}", self.what.format(), stamp.line())
    }

    /// The remembered digest of the file whose metadata (taken from the
    /// open file) is `meta`, if the entry matches it entirely.
    pub fn get(&self, meta: &fs::Metadata) -> Option<String> {
        let stamp = Stamp::of(meta);
        let entry = self.entry_path(&stamp);
        if !self.trusted(&entry) {
            return None;
        }
        let text = fs::read_to_string(&entry).ok()?;
        let digest = text
            .strip_prefix(&self.header(&stamp))?
            .strip_suffix('\n')?;
        (digest.len() == self.what.digits() && digest.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| digest.to_string())
    }

    /// Remembers `digest` for the file at `path` (metadata `meta`, taken
    /// from the open file before its bytes were read), unless the file
    /// changed too recently.
    pub fn remember(&self, path: &Path, meta: &fs::Metadata, digest: &str) {
        let stamp = Stamp::of(meta);
        if !stamp.settled(SystemTime::now()) {
            return;
        }
        if let Err(e) = self.write(&stamp, &self.entry(&stamp, digest)) {
            tracing::debug!("not remembering the digest of {}: {e:#}", path.display());
        }
    }

    fn write(&self, stamp: &Stamp, text: &str) -> anyhow::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        write_atomically(&self.entry_path(stamp), text.as_bytes(), 0o600)
    }

    /// Whether an entry may be believed: the memo directory and the entry
    /// are this user's and writable by nobody else.
    fn trusted(&self, entry: &Path) -> bool {
        let uid = current_uid();
        let ours = |p: &Path, regular: bool| {
            fs::symlink_metadata(p).is_ok_and(|m| {
                writable_by_alone(&m, uid)
                    && if regular {
                        m.file_type().is_file()
                    } else {
                        m.is_dir()
                    }
            })
        };
        ours(&self.dir, false) && ours(entry, true)
    }

    /// One entry per file, named by its device and inode.
    fn entry_path(&self, stamp: &Stamp) -> PathBuf {
        self.dir.join(format!("{:x}-{:x}", stamp.dev, stamp.ino))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::PermissionsExt;
    use std::time::UNIX_EPOCH;

    /// The first moment at which a file with metadata `meta` is settled.
    fn settled_at(meta: &fs::Metadata) -> SystemTime {
        let stamp = Stamp::of(meta);
        UNIX_EPOCH + Duration::new(stamp.ctime.0 as u64, stamp.ctime.1 as u32) + SETTLED
    }

    fn plugin(dir: &Path, bytes: &[u8]) -> (PathBuf, fs::Metadata) {
        let path = dir.join("p.wasm");
        fs::write(&path, bytes).unwrap();
        let meta = fs::metadata(&path).unwrap();
        (path, meta)
    }

    #[test]
    fn a_settled_file_is_remembered_and_any_change_forgets_it() {
        let dir = tempfile::tempdir().unwrap();
        let memo = DigestMemo::new(&dir.path().join("cache"));
        let (path, meta) = plugin(dir.path(), b"\0asm\x0d\0\x01\0one");
        let digest = hex::encode(Sha256::digest(fs::read(&path).unwrap()));

        // Just written: racy, so not remembered.
        memo.remember(&path, &meta, &digest);
        assert_eq!(memo.get(&meta), None);

        // Settled (written as `remember` does once the file is old enough).
        let stamp = Stamp::of(&meta);
        let at = settled_at(&meta);
        assert!(stamp.settled(at));
        assert!(!stamp.settled(at - Duration::from_millis(1)));
        memo.write(&stamp, &memo.entry(&stamp, &digest)).unwrap();
        assert_eq!(memo.get(&meta), Some(digest.clone()));

        // Rewritten in place with the same size: its times move on.
        std::thread::sleep(Duration::from_millis(20));
        fs::write(&path, b"\0asm\x0d\0\x01\0two").unwrap();
        let rewritten = fs::metadata(&path).unwrap();
        assert_eq!((rewritten.len(), rewritten.ino()), (meta.len(), meta.ino()));
        assert_eq!(memo.get(&rewritten), None);
    }

    /// A memo in a fresh directory and a just-written empty component: the
    /// directory (kept alive), the memo, and the file's stamp.
    fn fixture() -> (tempfile::TempDir, DigestMemo, Stamp) {
        let dir = tempfile::tempdir().unwrap();
        let memo = DigestMemo::new(&dir.path().join("cache"));
        let (_, meta) = plugin(dir.path(), b"\0asm\x0d\0\x01\0");
        (dir, memo, Stamp::of(&meta))
    }

    #[test]
    fn an_entry_others_could_write_is_not_believed() {
        let (dir, memo, stamp) = fixture();
        let meta = fs::metadata(dir.path().join("p.wasm")).unwrap();
        let digest = "ab".repeat(32);
        memo.write(&stamp, &memo.entry(&stamp, &digest)).unwrap();
        assert_eq!(memo.get(&meta), Some(digest));
        let entry = memo.entry_path(&stamp);
        fs::set_permissions(&entry, fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(memo.get(&meta), None);
        fs::set_permissions(&entry, fs::Permissions::from_mode(0o600)).unwrap();
        fs::set_permissions(&memo.dir, fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(memo.get(&meta), None);
    }

    #[test]
    fn an_entry_of_one_kind_is_not_taken_for_the_other() {
        let (dir, memo, stamp) = fixture();
        let meta = fs::metadata(dir.path().join("p.wasm")).unwrap();
        let checksums = DigestMemo::artifact_checksums(&dir.path().join("cache"));
        memo.write(&stamp, &memo.entry(&stamp, &"ab".repeat(32)))
            .unwrap();
        assert_eq!(checksums.get(&meta), None);
        checksums
            .write(&stamp, &checksums.entry(&stamp, &"ef".repeat(16)))
            .unwrap();
        assert_eq!(checksums.get(&meta), Some("ef".repeat(16)));
        assert_eq!(memo.get(&meta), None);
    }

    #[test]
    fn a_damaged_entry_is_ignored() {
        let (dir, memo, stamp) = fixture();
        let meta = fs::metadata(dir.path().join("p.wasm")).unwrap();
        let full = memo.entry(&stamp, &"cd".repeat(32));
        memo.write(&stamp, &full[..full.len() - 10]).unwrap();
        assert_eq!(memo.get(&meta), None);
    }
}
