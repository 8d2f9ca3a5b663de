//! The files of a process's durable buffers (`<stem>.<buffer>.halves`, next
//! to its journal `<stem>.journal`): the engine's halves in a shared file mapping (see
//! `rocwasm_core::buffer::durable`), read back after the process ended.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;

use rocwasm_core::buffer::durable::{self, Recovered};

/// A halves file's name ends with this.
pub const EXTENSION: &str = "halves";

/// The file for buffer `buffer` of the journal stem `stem` in `dir`.
pub fn path_in(dir: &Path, stem: &str, buffer: u64) -> PathBuf {
    dir.join(format!("{stem}.{buffer}.{EXTENSION}"))
}

/// The halves files of the journal stem `stem` in `dir`, in buffer order.
pub fn files_of(dir: &Path, stem: &str) -> std::io::Result<Vec<PathBuf>> {
    let prefix = format!("{stem}.");
    let mut out: Vec<(u64, PathBuf)> = Vec::new();
    for path in crate::files_in(dir)? {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(buffer) = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(&format!(".{EXTENSION}")))
            .and_then(|b| b.parse::<u64>().ok())
        else {
            continue;
        };
        out.push((buffer, path));
    }
    out.sort();
    Ok(out.into_iter().map(|(_, p)| p).collect())
}

/// The records a halves file still holds (see
/// `rocwasm_core::buffer::durable::recover`); an error names the file.
pub fn recover_file(path: &Path) -> Result<Recovered, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let words: Vec<AtomicU64> = bytes
        .chunks_exact(8)
        .map(|c| AtomicU64::new(u64::from_ne_bytes(c.try_into().expect("8 bytes"))))
        .collect();
    durable::recover(&words).map_err(|e| format!("{}: {e}", path.display()))
}
