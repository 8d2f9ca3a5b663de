//! Durable halves for a journaled run: each output buffer's halves in a
//! file of the journal directory, mapped shared (`<stem>.<buffer>.halves`,
//! see `rocwasm_journal::halves`). What the engine stores there is in the
//! kernel's page cache at once, so the launcher reads it back after this
//! process died, whatever killed it.
//!
//! The mapping is never unmapped: the buffer's words must stay valid for
//! the rest of the process (the engine keeps `&'static` slices), and the
//! files are removed by the launcher once it has read them.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;

use rocwasm_core::buffer::durable::HEADER_WORDS;
use rocwasm_core::buffer::DurableMemory;
use rocwasm_core::{BufferId, ContextId};

/// Maps buffers' halves into files of `dir`.
pub struct MappedHalves {
    /// The journal directory.
    pub dir: PathBuf,
    /// The journal's stem, which the files' names start with.
    pub stem: String,
}

impl DurableMemory for MappedHalves {
    fn words(
        &self,
        buffer: BufferId,
        _context: ContextId,
        half_bytes: u64,
    ) -> Option<&'static [AtomicU64]> {
        let words = HEADER_WORDS + 2 * (half_bytes / 8) as usize;
        let bytes = words * 8;
        let path = rocwasm_journal::halves::path_in(&self.dir, &self.stem, buffer.0);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|f| f.set_len(bytes as u64).map(|()| f));
        let file = match file {
            Ok(f) => f,
            Err(e) => {
                eprintln!(
                    "rocwasm: cannot create {} ({e}); that buffer's records are lost if the process is killed",
                    path.display()
                );
                return None;
            }
        };
        // SAFETY: a new shared mapping of a file we just sized to `bytes`;
        // no Rust object aliases it. The file descriptor may be closed
        // afterwards (the mapping keeps the file).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            eprintln!(
                "rocwasm: cannot map {}: {}; that buffer's records are lost if the process is killed",
                path.display(),
                std::io::Error::last_os_error()
            );
            let _ = std::fs::remove_file(&path);
            return None;
        }
        // SAFETY: the mapping is page-aligned (so aligned for AtomicU64),
        // `bytes` long, zero-filled (a new file reads as zeros), and never
        // unmapped, so the slice is valid for 'static; AtomicU64 has the
        // size and layout of u64 and every bit pattern is valid; all access
        // goes through atomics.
        Some(unsafe { std::slice::from_raw_parts(p as *const AtomicU64, words) })
    }
}
