//! The on-disk cache of compiled components.
//!
//! Compiling a component is expensive (15 ms for a Rust plugin, ~7 s for a
//! componentize-py one); loading a compiled artifact is cheap (0.1–3 ms). So
//! the runtime stores each compiled component under a key made of
//!
//! - the SHA-256 of the `.wasm` bytes (what was compiled),
//! - the engine's `precompile_compatibility_hash` (wasmtime version, target,
//!   compiler flags and tunables: what it was compiled *for*),
//!
//! and loads it with `Component::deserialize_file` on the next run. (The
//! digest of an unchanged file is itself remembered, see
//! [`digest_memo`](crate::digest_memo), and so is the checksum of an
//! artifact once checked: a warm load reads neither the `.wasm` nor the
//! artifact, only maps it.)
//!
//! # Why a cache file is trusted only if this host wrote it
//!
//! A compiled artifact is native machine code. `deserialize_file` checks the
//! wasmtime version and configuration but cannot check that the code is what
//! compiling the digest's Wasm would produce: deserializing a file *is*
//! running native code from it, with none of the sandbox's guarantees. So a
//! cache file is accepted only when
//!
//! 1. it lives in a cache directory owned by the current user and writable by
//!    nobody else (else another user could plant one),
//! 2. the file itself is owned by the current user and not group/other
//!    writable, is a regular file and not a symlink,
//! 3. its name is exactly the key computed here from the Wasm bytes we are
//!    about to run and from this engine; a file copied from another machine
//!    or engine therefore has a key nobody asks for, and the key includes
//!    this machine's id (`/etc/machine-id`) so a shared home directory does
//!    not share artifacts between machines,
//! 4. its sidecar `.xxh3` (written with it) holds the XXH3-128 checksum of
//!    the artifact's bytes, which rejects truncated, half-replaced or altered
//!    files.
//!
//! The checksum is for integrity, not trust: the sidecar is written by the
//! same user (or root) as the artifact, so no hash, cryptographic or not,
//! would stop whoever may write one from rewriting both; rules 1–3 are the
//! trust boundary. A non-cryptographic hash is then the right tool: on the
//! 50 MB artifacts of Python and JS plugins SHA-256 took most of a warm
//! load, XXH3 a few milliseconds (`cargo bench -p rocwasm-plugin-host
//! --bench load`). A private cache also remembers each checked artifact's
//! checksum in its digest memo, with the file's device, inode, size and
//! times; an artifact whose `stat` still matches is not read again
//! (truncating, replacing or altering it changes its size or `ctime`).
//! Artifacts stored with the older `.sha256` sidecar are not found under
//! the new name and are compiled again once.
//!
//! # The site cache
//!
//! A node's admins may keep a **site cache** (the site policy's `[cache]
//! site`), filled by running rocwasm as root (any `rocwasm run` or `replay`
//! of the plugins compiles into it), read by every user, written by none: it is trusted
//! when the directory and each file are owned by root and writable by
//! nobody else (mode `0755`/`0644`), with rules 3 and 4 above. Users' own
//! misses go to their private cache, never to the site's.
//!
//! Files are written to a temporary name and renamed into place, so a reader
//! never sees a partial file. Anything that fails these checks is ignored
//! (and recompiled), never deleted: the user may want to look at it.

use std::fs;
use std::hash::Hasher;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use twox_hash::XxHash3_128;
use wasmtime::component::Component;
use wasmtime::Engine;

use crate::digest_memo::DigestMemo;
use crate::owned_files::{current_uid, writable_by_alone, write_atomically};

/// Why [`ComponentCache::load_checked`] loaded nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// No artifact for this digest and engine.
    Absent,
    /// The file or its directory may be written by someone else, or is not
    /// a regular file (the module docs' rules 1 and 2): not even read.
    Untrusted(String),
    /// Its bytes are not those its checksum was written for (rule 4):
    /// truncated, half replaced or altered. Never handed to wasmtime.
    Checksum,
    /// Trusted and intact, but wasmtime refused it.
    Unloadable(String),
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Miss::Absent => f.write_str("no such artifact"),
            Miss::Untrusted(why) => f.write_str(why),
            Miss::Checksum => f.write_str("checksum mismatch"),
            Miss::Unloadable(why) => write!(f, "wasmtime cannot load it: {why}"),
        }
    }
}

/// A directory of compiled components for one engine.
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: PathBuf,
    engine_key: String,
    owner: Owner,
}

/// Whose files a cache trusts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// The current user's private cache (mode `0700`/`0600`).
    ThisUser,
    /// The site cache: root's, readable by all (mode `0755`/`0644`).
    Root,
}

impl Owner {
    fn uid(self) -> u32 {
        match self {
            Owner::ThisUser => current_uid(),
            Owner::Root => 0,
        }
    }
}

impl ComponentCache {
    /// Opens (creating it with mode 0700 if needed) the cache in `dir`.
    pub fn open(dir: impl Into<PathBuf>, engine: &Engine) -> Result<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir)
            .with_context(|| format!("creating cache directory {}", dir.display()))?;
        let meta = fs::symlink_metadata(&dir)?;
        if meta.uid() == current_uid() && meta.permissions().mode() & 0o077 != 0 {
            // Ours but too open: tighten rather than give up.
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))?;
        }
        Ok(ComponentCache {
            dir,
            engine_key: engine_key(engine),
            owner: Owner::ThisUser,
        })
    }

    /// Opens the site cache in `dir` (see the module docs): it must exist,
    /// be root's and be writable by nobody else; otherwise it is not used
    /// (the error says why). Only root stores into it.
    pub fn open_site(dir: impl Into<PathBuf>, engine: &Engine) -> Result<Self> {
        let dir = dir.into();
        let meta =
            fs::symlink_metadata(&dir).with_context(|| format!("site cache {}", dir.display()))?;
        if !meta.is_dir() || meta.uid() != 0 || meta.permissions().mode() & 0o022 != 0 {
            anyhow::bail!(
                "site cache {} is not a directory owned by root and writable by root only",
                dir.display()
            );
        }
        Ok(ComponentCache {
            dir,
            engine_key: engine_key(engine),
            owner: Owner::Root,
        })
    }

    /// Whether this process may store into the cache (its own, or the site
    /// cache when running as root).
    pub fn writable(&self) -> bool {
        self.owner == Owner::ThisUser || current_uid() == 0
    }

    /// The default location: `$ROCWASM_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/rocwasm/components`, else `~/.cache/rocwasm/components`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(d) = std::env::var_os("ROCWASM_CACHE_DIR") {
            return Some(PathBuf::from(d));
        }
        rocwasm_plan::dirs::cache_home().map(|d| d.join("components"))
    }

    /// The directory the compiled components are stored in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The artifact path for a Wasm digest (hex SHA-256).
    pub fn path_for(&self, digest: &str) -> PathBuf {
        self.dir.join(format!("{digest}-{}.cwasm", self.engine_key))
    }

    /// Loads the compiled component for `digest`, if a trustworthy one
    /// exists; a file that exists and is not used is logged with the reason.
    pub fn load(&self, engine: &Engine, digest: &str) -> Option<Component> {
        match self.load_checked(engine, digest) {
            Ok(c) => Some(c),
            Err(Miss::Absent) => None,
            Err(why) => {
                let path = self.path_for(digest);
                tracing::warn!(path = %path.display(), "ignoring cache file: {why}");
                None
            }
        }
    }

    /// [`Self::load`], saying why nothing was loaded.
    pub fn load_checked(&self, engine: &Engine, digest: &str) -> Result<Component, Miss> {
        let path = self.path_for(digest);
        if !path.exists() {
            return Err(Miss::Absent);
        }
        self.check_trusted(&path)?;
        // SAFETY: `deserialize_file` runs native code from the file. We only
        // get here for a file this user's host wrote into a directory only
        // this user can write, under the key of exactly these Wasm bytes and
        // this engine, with a matching checksum (see the module docs). The
        // file is memory-mapped; nobody else can modify it while mapped.
        // The one `unsafe` of the plugin host: wasmtime offers no safe way
        // to load precompiled code, and compiling every run costs seconds.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize_file(engine, &path) };
        loaded.map_err(|e| Miss::Unloadable(format!("{e:#}")))
    }

    /// Stores a compiled component atomically (temp file + rename).
    pub fn store(&self, digest: &str, component: &Component) -> Result<()> {
        anyhow::ensure!(self.writable(), "only root stores into the site cache");
        let bytes = component.serialize()?;
        let path = self.path_for(digest);
        // The site cache is read by every user; a private one by its owner.
        let mode = match self.owner {
            Owner::ThisUser => 0o600,
            Owner::Root => 0o644,
        };
        write_atomically(
            &path.with_extension("cwasm.xxh3"),
            checksum_text(XxHash3_128::oneshot(&bytes)).as_bytes(),
            mode,
        )?;
        write_atomically(&path, &bytes, mode)
    }

    fn check_trusted(&self, path: &Path) -> Result<(), Miss> {
        self.check_owner_and_checksum(path)
            .map_err(|why| match why {
                Some(why) => Miss::Untrusted(why),
                None => Miss::Checksum,
            })
    }

    /// `Err(Some(why))` for a file not to be trusted, `Err(None)` for one
    /// whose bytes do not match the checksum written with it.
    fn check_owner_and_checksum(&self, path: &Path) -> Result<(), Option<String>> {
        let uid = self.owner.uid();
        let whose = match self.owner {
            Owner::ThisUser => "this user",
            Owner::Root => "root",
        };
        let dir = fs::symlink_metadata(&self.dir).map_err(|e| Some(e.to_string()))?;
        if !writable_by_alone(&dir, uid) {
            return Err(Some(format!(
                "cache directory is not writable by {whose} alone"
            )));
        }
        let meta = fs::symlink_metadata(path).map_err(|e| Some(e.to_string()))?;
        if !meta.file_type().is_file() || !writable_by_alone(&meta, uid) {
            return Err(Some(format!(
                "not a regular file writable by {whose} alone"
            )));
        }
        let want = fs::read_to_string(path.with_extension("cwasm.xxh3"))
            .map_err(|e| Some(e.to_string()))?;
        let want = want.trim();
        let mut file = fs::File::open(path).map_err(|e| Some(e.to_string()))?;
        let opened = file.metadata().map_err(|e| Some(e.to_string()))?;
        if (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
            return Err(Some("replaced while being checked".into()));
        }
        // A private cache remembers the checksum of an artifact it has
        // checked, with what `stat` said of it (as it remembers plugin
        // digests): a file whose device, inode, size and times are unchanged
        // has not been truncated, replaced or altered, so a warm load need
        // not read all of a 50 MB artifact again. The site cache keeps no memo.
        let memo = match self.owner {
            Owner::ThisUser => Some(DigestMemo::artifact_checksums(&self.dir)),
            Owner::Root => None,
        };
        if memo.as_ref().and_then(|m| m.get(&opened)).as_deref() == Some(want) {
            return Ok(());
        }
        let have = file_checksum(&mut file).map_err(|e| Some(e.to_string()))?;
        if want != have {
            return Err(None);
        }
        if let Some(memo) = memo {
            memo.remember(path, &opened, &have);
        }
        Ok(())
    }
}

/// The sidecar's text for a checksum.
fn checksum_text(sum: u128) -> String {
    format!("{sum:032x}")
}

/// The checksum of a file's bytes, read in 1 MiB pieces (no copy of the
/// whole artifact in memory).
fn file_checksum(file: &mut fs::File) -> std::io::Result<String> {
    use std::io::Read;
    let mut hasher = XxHash3_128::new();
    let mut piece = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut piece)? {
            0 => return Ok(checksum_text(hasher.finish_128())),
            n => hasher.write(&piece[..n]),
        }
    }
}

/// Hex SHA-256 of the Wasm bytes: the identity of a plugin.
pub fn digest(wasm: &[u8]) -> String {
    hex::encode(Sha256::digest(wasm))
}

/// A short hex key for this engine's compilation environment and this machine.
fn engine_key(engine: &Engine) -> String {
    struct ShaHasher(Sha256);
    impl Hasher for ShaHasher {
        fn finish(&self) -> u64 {
            0 // unused: we finalise the SHA-256 itself
        }
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }
    }
    let mut h = ShaHasher(Sha256::new());
    std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut h);
    h.0.update(fs::read("/etc/machine-id").unwrap_or_default());
    hex::encode(&h.0.finalize()[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAT: &str = "(component)";

    /// A private cache in a fresh directory (kept alive by the first
    /// value), and the digest of [`WAT`], not stored yet.
    fn empty_cache(engine: &Engine) -> (tempfile::TempDir, ComponentCache, String) {
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::open(dir.path().join("c"), engine).unwrap();
        (dir, cache, digest(WAT.as_bytes()))
    }

    fn store_wat(engine: &Engine, cache: &ComponentCache, d: &str) {
        let c = Component::new(engine, wat::parse_str(WAT).unwrap()).unwrap();
        cache.store(d, &c).unwrap();
    }

    /// Flips the artifact's last byte, in place.
    fn tamper(p: &Path) {
        let mut bytes = fs::read(p).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        fs::write(p, bytes).unwrap();
    }

    #[test]
    fn stores_and_reloads_and_rejects_tampering() {
        let engine = Engine::default();
        let (_dir, cache, d) = empty_cache(&engine);
        assert!(cache.load(&engine, &d).is_none(), "empty cache");
        store_wat(&engine, &cache, &d);
        assert!(cache.load(&engine, &d).is_some(), "reload");
        // A different digest is a different file.
        assert!(cache.load(&engine, &digest(b"other")).is_none());
        // Tampering with the artifact is detected by the checksum.
        tamper(&cache.path_for(&d));
        assert!(cache.load(&engine, &d).is_none(), "tampered file accepted");
    }

    /// A component whose function `f` returns a constant: the constant's
    /// bytes appear in the compiled code (an immediate operand).
    const CONSTANT: u32 = 0x1234_5678;
    const RETURNS_CONSTANT: &str = r#"(component
        (core module $m (func (export "f") (result i32) i32.const 0x12345678))
        (core instance $i (instantiate $m))
        (func (export "f") (result u32) (canon lift (core func $i "f"))))"#;

    fn call_f(engine: &Engine, c: &Component) -> u32 {
        let mut store = wasmtime::Store::new(engine, ());
        let linker = wasmtime::component::Linker::<()>::new(engine);
        let instance = linker.instantiate(&mut store, c).unwrap();
        let f = instance
            .get_typed_func::<(), (u32,)>(&mut store, "f")
            .unwrap();
        f.call(&mut store, ()).unwrap().0
    }

    /// A byte of machine code changed in the artifact: wasmtime's own
    /// checks would load it (and run the altered code, as the second half
    /// shows), so it is the checksum that refuses it.
    #[test]
    fn altered_code_is_refused_by_the_checksum_not_by_wasmtime() {
        let engine = Engine::default();
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::open(dir.path().join("c"), &engine).unwrap();
        let d = digest(RETURNS_CONSTANT.as_bytes());
        let c = Component::new(&engine, wat::parse_str(RETURNS_CONSTANT).unwrap()).unwrap();
        assert_eq!(call_f(&engine, &c), CONSTANT);
        cache.store(&d, &c).unwrap();
        let loaded = cache.load_checked(&engine, &d).unwrap();
        assert_eq!(call_f(&engine, &loaded), CONSTANT);

        // The constant, as the code holds it: once, in the text.
        let path = cache.path_for(&d);
        let mut bytes = fs::read(&path).unwrap();
        let needle = CONSTANT.to_le_bytes();
        let at: Vec<usize> = bytes
            .windows(4)
            .enumerate()
            .filter(|(_, w)| *w == needle)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(at.len(), 1, "the constant appears once in the code");
        bytes[at[0]] ^= 0x01; // 0x12345678 becomes 0x12345679
        fs::write(&path, &bytes).unwrap();
        assert_eq!(
            cache.load_checked(&engine, &d).err(),
            Some(Miss::Checksum),
            "the altered artifact is refused by its checksum"
        );

        // Whoever also rewrites the checksum (the artifact's owner: see the
        // module docs) gets the altered code loaded and run: nothing but
        // the checksum stood in the way.
        let sum = checksum_text(XxHash3_128::oneshot(&bytes));
        fs::write(path.with_extension("cwasm.xxh3"), sum).unwrap();
        let altered = cache.load_checked(&engine, &d).unwrap();
        assert_eq!(call_f(&engine, &altered), CONSTANT ^ 0x01);
    }

    #[test]
    fn a_checked_artifact_is_remembered_and_tampering_is_still_caught() {
        let engine = Engine::default();
        let (_dir, cache, d) = empty_cache(&engine);
        store_wat(&engine, &cache, &d);
        let p = cache.path_for(&d);
        let memo = DigestMemo::artifact_checksums(cache.dir());
        let sum = fs::read_to_string(p.with_extension("cwasm.xxh3")).unwrap();

        // Just written: checked by reading it, but not remembered (racy).
        assert!(cache.load(&engine, &d).is_some());
        assert_eq!(memo.get(&fs::metadata(&p).unwrap()), None);

        // Settled: the next check remembers its checksum.
        std::thread::sleep(crate::digest_memo::SETTLED + std::time::Duration::from_millis(100));
        assert!(cache.load(&engine, &d).is_some());
        assert_eq!(
            memo.get(&fs::metadata(&p).unwrap()).as_deref(),
            Some(sum.trim())
        );
        assert!(cache.load(&engine, &d).is_some(), "loaded on the memo");

        // Altered in place, same size and inode: its ctime moved on, so the
        // memo no longer vouches for it and the checksum catches it.
        let before = fs::metadata(&p).unwrap();
        tamper(&p);
        let after = fs::metadata(&p).unwrap();
        assert_eq!((after.ino(), after.len()), (before.ino(), before.len()));
        assert!(cache.load(&engine, &d).is_none(), "tampered file accepted");
    }

    #[test]
    fn the_site_cache_is_roots_and_read_only_for_others() {
        let engine = Engine::default();
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("site");
        fs::create_dir(&site).unwrap();
        fs::set_permissions(&site, fs::Permissions::from_mode(0o755)).unwrap();
        let wasm = wat::parse_str(WAT).unwrap();
        let d = digest(&wasm);
        if current_uid() != 0 {
            // Not root's: never a site cache.
            let e = ComponentCache::open_site(&site, &engine).unwrap_err();
            assert!(format!("{e:#}").contains("owned by root"), "{e:#}");
            return;
        }
        // Root fills it: files readable by all, trusted.
        let cache = ComponentCache::open_site(&site, &engine).unwrap();
        cache
            .store(&d, &Component::new(&engine, &wasm).unwrap())
            .unwrap();
        let mode = fs::metadata(cache.path_for(&d))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
        assert!(cache.load(&engine, &d).is_some());
        // A file some other user put there is never loaded.
        let path = cache.path_for(&d);
        std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
        assert!(
            cache.load(&engine, &d).is_none(),
            "a non-root file was trusted"
        );
        std::os::unix::fs::chown(&path, Some(0), None).unwrap();
        assert!(cache.load(&engine, &d).is_some());
        // A directory others may write to is no site cache at all.
        fs::set_permissions(&site, fs::Permissions::from_mode(0o775)).unwrap();
        assert!(ComponentCache::open_site(&site, &engine).is_err());
        assert!(
            cache.load(&engine, &d).is_none(),
            "a group-writable site dir was trusted"
        );
    }

    #[test]
    fn a_world_writable_file_is_not_trusted() {
        let engine = Engine::default();
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::open(dir.path(), &engine).unwrap();
        let wasm = wat::parse_str(WAT).unwrap();
        let d = digest(&wasm);
        cache
            .store(&d, &Component::new(&engine, &wasm).unwrap())
            .unwrap();
        fs::set_permissions(cache.path_for(&d), fs::Permissions::from_mode(0o666)).unwrap();
        assert!(cache.load(&engine, &d).is_none());
    }
}
