//! The `output` interface: files in the directory the chain grants a plugin.
//!
//! A plugin names files, the host places them. A name must be a plain file
//! name: no `/`, no `\`, not `.` or `..`, no NUL, not empty, at most 255
//! bytes. When the run names its files with a prefix (rocprofv3's `-o
//! myrun`, given explicitly) and the grant is the run's output directory,
//! the file is `<prefix>_<name>` (`myrun_kernel_stats.csv`), as the host's
//! sinks name theirs; the plugin never sees the prefix. Files are opened with `O_NOFOLLOW`, so a symlink planted in the
//! directory cannot redirect a write elsewhere. The bytes a plugin writes in
//! one run are capped: a write that would pass the cap is refused (the
//! plugin gets the error and runs on) and the first refusal is reported once
//! as the stage's failure (`FailureCause::Oversized`, action `Refused`).
//!
//! The granted directory is usually the run's output directory, which the
//! host's sinks write too. So before a stage first writes a name, the run's
//! [`OutputClaim`] is asked whether that file is free: a name another
//! producer writes (the CSV sink's `kernel_trace.csv`, another stage's file)
//! is refused with the claim's sentence — `kernel_trace.csv: already written
//! by the host's CSV sink; stage `recorder` may not write it too` — and the
//! file is not touched. The run reports the refusal too, so a plugin that
//! ignores the error does not make it silent. A plugin importing WASI gets
//! no preopened directory ([`crate::sandbox::deny_all_wasi`]), so this
//! interface, its claims and its quota are the only way to a file.

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::bindings::analysis::rocwasm::plugin::output;
use crate::env::OutputClaim;

/// The `output` imports of one plugin: the directory it is granted, how
/// much it may still write there, and the run's check of the names it writes.
pub(crate) struct OutputHost {
    /// The stage name, which the claim check is asked about.
    plugin: Arc<str>,
    dir: Option<PathBuf>,
    /// Put, with `_`, before every name the plugin writes (the run's
    /// explicit file prefix).
    prefix: Option<String>,
    cap: u64,
    written: u64,
    /// The run's check of output files; `None`: every free name is granted.
    claim: Option<OutputClaim>,
    /// Names the run's claim check granted already (asked once per name).
    claimed: HashSet<String>,
    /// The first cap refusal, until the plugin host takes it to report.
    cap_hit: Option<String>,
    /// Whether a cap refusal was reported already (once per run).
    cap_reported: bool,
}

impl OutputHost {
    /// Stage `plugin` may write up to `cap` bytes into `dir` (`None`: every
    /// write fails), each name as `<prefix>_<name>` when there is a
    /// `prefix`, each new file checked by `claim` first.
    pub fn new(
        plugin: Arc<str>,
        dir: Option<PathBuf>,
        prefix: Option<String>,
        cap: u64,
        claim: Option<OutputClaim>,
    ) -> Self {
        OutputHost {
            plugin,
            dir,
            prefix: prefix.filter(|p| !p.is_empty()),
            cap,
            written: 0,
            claim,
            claimed: HashSet::new(),
            cap_hit: None,
            cap_reported: false,
        }
    }

    /// Moves the grant out, leaving one that grants nothing. A restarted
    /// instance takes it over: the bytes already written still count
    /// against the cap, and claimed names are not asked about again.
    pub fn take(&mut self) -> Self {
        let nothing = OutputHost::new(self.plugin.clone(), None, None, 0, None);
        std::mem::replace(self, nothing)
    }

    /// The first cap refusal of the run, once: to be reported.
    pub fn take_cap_hit(&mut self) -> Option<String> {
        self.cap_hit.take()
    }

    /// Writes (or appends to) `name`, once the claim (if any) grants the file.
    fn write_file(&mut self, name: &str, contents: &[u8], append: bool) -> Result<(), String> {
        let dir = self
            .dir
            .as_ref()
            .ok_or("no output directory is granted to this plugin")?;
        check_name(name)?;
        let len = contents.len() as u64;
        if self.written.saturating_add(len) > self.cap {
            let msg = format!(
                "output cap of {} bytes reached ({} written, {} more asked)",
                self.cap, self.written, len
            );
            if !self.cap_reported {
                self.cap_reported = true;
                self.cap_hit = Some(format!("{msg}; this and later writes over it refused"));
            }
            return Err(msg);
        }
        let path = match &self.prefix {
            Some(prefix) => dir.join(format!("{prefix}_{name}")),
            None => dir.join(name),
        };
        if let Some(claim) = &self.claim {
            if !self.claimed.contains(name) {
                claim(&path, &self.plugin)?;
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
        let mut f = opts.open(&path).map_err(|e| format!("{name}: {e}"))?;
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

impl output::Host for OutputHost {
    fn write(&mut self, name: String, contents: Vec<u8>) -> Result<(), String> {
        self.write_file(&name, &contents, false)
    }
    fn append(&mut self, name: String, contents: Vec<u8>) -> Result<(), String> {
        self.write_file(&name, &contents, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A grant of `cap` bytes in `dir` for stage `recorder`.
    fn grant(dir: Option<&std::path::Path>, cap: u64, claim: Option<OutputClaim>) -> OutputHost {
        OutputHost::new(
            "recorder".into(),
            dir.map(|d| d.to_path_buf()),
            None,
            cap,
            claim,
        )
    }

    #[test]
    fn rejects_escapes_and_enforces_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut g = grant(Some(dir.path()), 10, None);
        for bad in ["", ".", "..", "../x", "/etc/passwd", "a/b", "a\0b", "a\\b"] {
            assert!(g.write_file(bad, b"x", false).is_err(), "{bad:?} accepted");
        }
        g.write_file("a.csv", b"12345", false).unwrap();
        g.write_file("a.csv", b"678", true).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("a.csv")).unwrap(),
            b"12345678"
        );
        assert!(
            g.write_file("b", b"abc", false).is_err(),
            "cap not enforced"
        );
        let mut none = grant(None, 10, None);
        assert!(none.write_file("a", b"x", false).is_err());
    }

    #[test]
    fn does_not_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("outside");
        std::fs::write(&target, b"keep").unwrap();
        let granted = dir.path().join("granted");
        std::fs::create_dir(&granted).unwrap();
        std::os::unix::fs::symlink(&target, granted.join("link")).unwrap();
        let mut g = grant(Some(&granted), 100, None);
        assert!(g.write_file("link", b"evil", false).is_err());
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
        let mut g = grant(Some(dir.path()), 100, Some(claim));
        let refused = g.write_file("kernel_trace.csv", b"{}", false).unwrap_err();
        assert_eq!(
            refused,
            "kernel_trace.csv: already written by the host's CSV sink; \
             stage `recorder` may not write it too"
        );
        assert_eq!(std::fs::read(&host_file).unwrap(), b"\"Kind\",...\n");
        // A free name is asked about once, then written and appended to.
        g.write_file("recorder.json", b"{", false).unwrap();
        g.write_file("recorder.json", b"}", true).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("recorder.json")).unwrap(),
            b"{}"
        );
        assert_eq!(
            *asked.lock().unwrap(),
            [host_file, dir.path().join("recorder.json")]
        );
    }

    #[test]
    fn a_prefix_names_every_file_and_its_claim_but_not_the_plugins_name() {
        let dir = tempfile::tempdir().unwrap();
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let claim: OutputClaim = {
            let asked = asked.clone();
            std::sync::Arc::new(move |path: &std::path::Path, _stage: &str| {
                asked.lock().unwrap().push(path.to_path_buf());
                Ok(())
            })
        };
        let mut g = OutputHost::new(
            "kernel-stats".into(),
            Some(dir.path().to_path_buf()),
            Some("myrun".into()),
            100,
            Some(claim),
        );
        g.write_file("kernel_stats.csv", b"a", false).unwrap();
        g.write_file("kernel_stats.csv", b"b", true).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("myrun_kernel_stats.csv")).unwrap(),
            b"ab"
        );
        assert!(!dir.path().join("kernel_stats.csv").exists());
        // The claim is asked about the file as written, once.
        assert_eq!(
            *asked.lock().unwrap(),
            [dir.path().join("myrun_kernel_stats.csv")]
        );
        // The name the plugin gives is still checked as it is.
        assert!(g.write_file("../x", b"x", false).is_err());
        // An empty prefix is none.
        let mut plain = OutputHost::new(
            "report".into(),
            Some(dir.path().to_path_buf()),
            Some(String::new()),
            100,
            None,
        );
        plain.write_file("report.html", b"<p>", false).unwrap();
        assert!(dir.path().join("report.html").is_file());
    }
}
