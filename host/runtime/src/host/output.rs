//! The `output` interface: files in the directory the chain grants a plugin.
//!
//! A plugin names files, the host places them. A name must be a plain file
//! name: no `/`, no `\`, not `.` or `..`, no NUL, not empty, at most 255
//! bytes. Files are opened with `O_NOFOLLOW`, so a symlink planted in the
//! directory cannot redirect a write elsewhere. The bytes a plugin writes in
//! one run are capped.
//!
//! The granted directory is usually the run's output directory, which the
//! host's sinks write too. So before a stage first writes a name, the run's
//! [`OutputClaim`] is asked whether that file is free: a name another
//! producer writes (the CSV sink's `kernel_trace.csv`, another stage's file)
//! is refused with the claim's sentence — `kernel_trace.csv: already written
//! by the host's CSV sink; stage `recorder` may not write it too` — and the
//! file is not touched. The run reports the refusal too, so a plugin that
//! ignores the error does not make it silent. (A plugin importing WASI also
//! sees the directory as its `out` preopen; writes through WASI bypass this
//! interface and its checks.)

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use crate::bindings::analysis::rocwasm::plugin::output;
use crate::chain::OutputClaim;
use crate::state::PluginState;

#[derive(Debug)]
pub(crate) struct OutputGrant {
    dir: Option<PathBuf>,
    cap: u64,
    written: u64,
    /// Names the run's claim check granted already (asked once per name).
    claimed: HashSet<String>,
}

impl OutputGrant {
    pub fn new(dir: Option<PathBuf>, cap: u64) -> Self {
        OutputGrant {
            dir,
            cap,
            written: 0,
            claimed: HashSet::new(),
        }
    }

    /// Writes (or appends to) `name` for `stage`, once `claim` (if any)
    /// grants the file.
    fn write(
        &mut self,
        claim: Option<(&OutputClaim, &str)>,
        name: &str,
        contents: &[u8],
        append: bool,
    ) -> Result<(), String> {
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
        if let Some((claim, stage)) = claim {
            if !self.claimed.contains(name) {
                claim(&dir.join(name), stage)?;
                self.claimed.insert(name.to_string());
            }
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
        let claim = self.env.output_claim.as_ref().map(|c| (c, &*self.name));
        self.output.write(claim, &name, &contents, false)
    }
    fn append(&mut self, name: String, contents: Vec<u8>) -> Result<(), String> {
        let claim = self.env.output_claim.as_ref().map(|c| (c, &*self.name));
        self.output.write(claim, &name, &contents, true)
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
            assert!(g.write(None, bad, b"x", false).is_err(), "{bad:?} accepted");
        }
        g.write(None, "a.csv", b"12345", false).unwrap();
        g.write(None, "a.csv", b"678", true).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("a.csv")).unwrap(),
            b"12345678"
        );
        assert!(
            g.write(None, "b", b"abc", false).is_err(),
            "cap not enforced"
        );
        let mut none = OutputGrant::new(None, 10);
        assert!(none.write(None, "a", b"x", false).is_err());
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
        assert!(g.write(None, "link", b"evil", false).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }

    #[test]
    fn a_file_the_claim_refuses_is_not_touched_and_the_refusal_is_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let host_file = dir.path().join("kernel_trace.csv");
        std::fs::write(&host_file, b"\"Kind\",...\n").unwrap();
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let claim: OutputClaim = {
            let asked = asked.clone();
            std::sync::Arc::new(move |path: &std::path::Path, stage: &str| {
                asked.lock().unwrap().push(path.to_path_buf());
                match path.file_name().and_then(|n| n.to_str()) {
                    Some("kernel_trace.csv") => Err(format!(
                        "kernel_trace.csv: already written by the host's CSV sink; \
                         stage `{stage}` may not write it too"
                    )),
                    _ => Ok(()),
                }
            })
        };
        let mut g = OutputGrant::new(Some(dir.path().to_path_buf()), 100);
        let refused = g
            .write(Some((&claim, "recorder")), "kernel_trace.csv", b"{}", false)
            .unwrap_err();
        assert_eq!(
            refused,
            "kernel_trace.csv: already written by the host's CSV sink; \
             stage `recorder` may not write it too"
        );
        assert_eq!(std::fs::read(&host_file).unwrap(), b"\"Kind\",...\n");
        // A free name is asked about once, then written and appended to.
        g.write(Some((&claim, "recorder")), "recorder.json", b"{", false)
            .unwrap();
        g.write(Some((&claim, "recorder")), "recorder.json", b"}", true)
            .unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("recorder.json")).unwrap(),
            b"{}"
        );
        assert_eq!(
            *asked.lock().unwrap(),
            [host_file, dir.path().join("recorder.json")]
        );
    }
}
