//! The `output` interface: files in the directory the chain grants a plugin.
//!
//! A plugin names files, the host places them. A name must be a plain file
//! name: no `/`, no `\`, not `.` or `..`, no NUL, not empty, at most 255
//! bytes. Files are opened with `O_NOFOLLOW`, so a symlink planted in the
//! directory cannot redirect a write elsewhere. The bytes a plugin writes in
//! one run are capped.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use crate::bindings::analysis::rocwasm::plugin::output;
use crate::state::PluginState;

#[derive(Debug)]
pub(crate) struct OutputGrant {
    dir: Option<PathBuf>,
    cap: u64,
    written: u64,
}

impl OutputGrant {
    pub fn new(dir: Option<PathBuf>, cap: u64) -> Self {
        OutputGrant {
            dir,
            cap,
            written: 0,
        }
    }

    fn write(&mut self, name: &str, contents: &[u8], append: bool) -> Result<(), String> {
        let dir = self
            .dir
            .as_ref()
            .ok_or("no output directory is granted to this plugin")?;
        check_name(name)?;
        let len = contents.len() as u64;
        if self.written.saturating_add(len) > self.cap {
            return Err(format!(
                "output cap of {} bytes reached ({} written, {} more asked)",
                self.cap, self.written, len
            ));
        }
        let mut opts = OpenOptions::new();
        opts.create(true).custom_flags(libc::O_NOFOLLOW).mode(0o644);
        if append {
            opts.append(true);
        } else {
            opts.write(true).truncate(true);
        }
        let mut f = opts
            .open(dir.join(name))
            .map_err(|e| format!("{name}: {e}"))?;
        f.write_all(contents).map_err(|e| format!("{name}: {e}"))?;
        self.written += len;
        Ok(())
    }
}

fn check_name(name: &str) -> Result<(), String> {
    let bad = name.is_empty()
        || name.len() > 255
        || name == "."
        || name == ".."
        || name.contains(['/', '\\', '\0']);
    if bad {
        Err(format!(
            "invalid output file name {name:?}: a plain file name is required"
        ))
    } else {
        Ok(())
    }
}

impl output::Host for PluginState {
    fn write(&mut self, name: String, contents: Vec<u8>) -> Result<(), String> {
        self.output.write(&name, &contents, false)
    }
    fn append(&mut self, name: String, contents: Vec<u8>) -> Result<(), String> {
        self.output.write(&name, &contents, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_escapes_and_enforces_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut g = OutputGrant::new(Some(dir.path().to_path_buf()), 10);
        for bad in ["", ".", "..", "../x", "/etc/passwd", "a/b", "a\0b", "a\\b"] {
            assert!(g.write(bad, b"x", false).is_err(), "{bad:?} accepted");
        }
        g.write("a.csv", b"12345", false).unwrap();
        g.write("a.csv", b"678", true).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("a.csv")).unwrap(),
            b"12345678"
        );
        assert!(g.write("b", b"abc", false).is_err(), "cap not enforced");
        let mut none = OutputGrant::new(None, 10);
        assert!(none.write("a", b"x", false).is_err());
    }

    #[test]
    fn does_not_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("outside");
        std::fs::write(&target, b"keep").unwrap();
        let granted = dir.path().join("granted");
        std::fs::create_dir(&granted).unwrap();
        std::os::unix::fs::symlink(&target, granted.join("link")).unwrap();
        let mut g = OutputGrant::new(Some(granted), 100);
        assert!(g.write("link", b"evil", false).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }
}
