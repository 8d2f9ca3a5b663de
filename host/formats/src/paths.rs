//! Output file naming as rocprofv3 does it: `<dir>/<name>_<stem>` when an
//! output name (`-o`) is given, `<dir>/<stem>` otherwise.

use std::path::{Path, PathBuf};

/// `<dir>/<name>_<file>` or `<dir>/<file>`; `file` includes the extension.
pub fn output_path(dir: &Path, name: Option<&str>, file: &str) -> PathBuf {
    match name.filter(|n| !n.is_empty()) {
        Some(n) => dir.join(format!("{n}_{file}")),
        None => dir.join(file),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_only_when_given() {
        let d = Path::new("/out");
        assert_eq!(
            output_path(d, Some("run1"), "kernel_trace.csv"),
            Path::new("/out/run1_kernel_trace.csv")
        );
        assert_eq!(
            output_path(d, None, "kernel_trace.csv"),
            Path::new("/out/kernel_trace.csv")
        );
        assert_eq!(
            output_path(d, Some(""), "results.json"),
            Path::new("/out/results.json")
        );
    }
}
