//! Skip rebuilding a component whose inputs are unchanged.
//!
//! componentize-py and componentize-js take ~10–20 s per plugin, whatever
//! changed. So each build records a fingerprint of its inputs (the tool and
//! its version, the world, every file of the given directories) next to
//! its output in `target/`; the next build with the same fingerprint reuses
//! the output. The fingerprint is FNV-1a over paths and contents: cheap,
//! stable across Rust releases (unlike `DefaultHasher`), and a collision
//! only costs a stale build of a file someone just edited in a way that
//! happens to collide — accepted for a build cache.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A fingerprint of `tool` (name and version), `world` and `inputs`: files,
/// and directories (every file under them, `__pycache__` and
/// `node_modules` excluded).
pub fn fingerprint(tool: &str, world: &str, inputs: &[PathBuf]) -> Result<String> {
    let mut h = Fnv::new();
    h.write(tool.as_bytes());
    h.write(world.as_bytes());
    for input in inputs {
        let mut files = Vec::new();
        if input.is_file() {
            files.push(input.clone());
        } else {
            collect(input, &mut files)?;
        }
        files.sort();
        for file in files {
            let bytes =
                fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            h.write(file.to_string_lossy().as_bytes());
            h.write(&(bytes.len() as u64).to_le_bytes());
            h.write(&bytes);
        }
    }
    Ok(format!("{:016x}", h.0))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default();
        if name == "__pycache__" || name == "node_modules" {
            continue;
        }
        if path.is_dir() {
            collect(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

/// The output of an earlier build with this fingerprint, if there is one.
pub fn reuse(output: &Path, fingerprint: &str) -> Option<Vec<u8>> {
    let recorded = fs::read_to_string(stamp_path(output)).ok()?;
    if recorded.trim() != fingerprint {
        return None;
    }
    fs::read(output).ok()
}

/// Records that `output` was built from inputs with `fingerprint`.
pub fn record(output: &Path, fingerprint: &str) -> Result<()> {
    let stamp = stamp_path(output);
    fs::write(&stamp, fingerprint).with_context(|| format!("cannot write {}", stamp.display()))
}

fn stamp_path(output: &Path) -> PathBuf {
    output.with_extension("inputs")
}

/// 64-bit FNV-1a.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separate fields, so ("ab", "c") and ("a", "bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_follows_contents_tool_and_world() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir_all(src.join("__pycache__")).unwrap();
        fs::write(src.join("app.py"), "a = 1\n").unwrap();
        let dirs = [src.clone()];
        let first = fingerprint("tool 1", "w", &dirs).unwrap();
        assert_eq!(first, fingerprint("tool 1", "w", &dirs).unwrap());
        fs::write(src.join("__pycache__/app.pyc"), "noise").unwrap();
        assert_eq!(first, fingerprint("tool 1", "w", &dirs).unwrap());
        assert_ne!(first, fingerprint("tool 2", "w", &dirs).unwrap());
        assert_ne!(first, fingerprint("tool 1", "v", &dirs).unwrap());
        fs::write(src.join("app.py"), "a = 2\n").unwrap();
        let edited = fingerprint("tool 1", "w", &dirs).unwrap();
        assert_ne!(first, edited);

        let out = dir.path().join("p.wasm");
        assert_eq!(reuse(&out, &edited), None);
        fs::write(&out, b"wasm").unwrap();
        record(&out, &edited).unwrap();
        assert_eq!(reuse(&out, &edited).as_deref(), Some(&b"wasm"[..]));
        assert_eq!(reuse(&out, &first), None);
    }
}
