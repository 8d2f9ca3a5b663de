//! Which recordings a set of paths names: one per profiled process.
//!
//! `rocwasm replay` takes files, directories and whole trees (the output
//! root of an MPI job, `out/%rank%/…`, or one directory holding each
//! rank's database). [`discover`] turns them into [`Input`]s, each one
//! process's recording in one format:
//!
//! - a file is one recording (CSV, rocprofv3 JSON or a rocpd database);
//! - a directory holding CSV files is one recording (rocprofv3's CSV
//!   output is a directory of per-kind files), whatever else it holds;
//! - a directory without CSV files holding databases or JSON files: each
//!   of them is a recording (rocprofv3 writes `<pid>_results.db` per
//!   process);
//! - any other directory: its subdirectories, recursively, in name order.
//!
//! Symbolic links to directories are not followed (a tree may not loop).

use std::path::{Path, PathBuf};

use crate::replay::error::{ReplayError, Result};

/// One process's recording, as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The file or directory to open.
    pub path: PathBuf,
    /// How reports name it when the recording names no rank: its path
    /// below the argument that led to it (`0`, `node1/1234`), else the
    /// argument itself.
    pub label: String,
}

/// The recordings `paths` name, in argument order, each tree in name
/// order. A path that does not exist, or a directory with no recording in
/// or below it, is an error naming it.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<Input>> {
    let mut inputs = Vec::new();
    for root in paths {
        let meta = std::fs::metadata(root).map_err(|e| ReplayError::io(root, e))?;
        let before = inputs.len();
        if meta.is_dir() {
            walk(root, root, &mut inputs)?;
        } else {
            inputs.push(Input {
                path: root.clone(),
                label: root.display().to_string(),
            });
        }
        if inputs.len() == before {
            return Err(ReplayError::new(
                root,
                None,
                "no recording in or below this directory (no .csv, .db or .json file)",
            ));
        }
    }
    Ok(inputs)
}

fn walk(root: &Path, dir: &Path, inputs: &mut Vec<Input>) -> Result<()> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| ReplayError::io(dir, e))? {
        let entry = entry.map_err(|e| ReplayError::io(dir, e))?;
        let kind = entry.file_type().map_err(|e| ReplayError::io(dir, e))?;
        if kind.is_dir() {
            dirs.push(entry.path());
        } else if kind.is_file() {
            files.push(entry.path());
        }
    }
    files.sort();
    dirs.sort();
    let ext = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default()
    };
    let label = |p: &Path| match p.strip_prefix(root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => p.display().to_string(),
    };
    if files.iter().any(|f| ext(f) == "csv") {
        inputs.push(Input {
            path: dir.to_path_buf(),
            label: label(dir),
        });
        return Ok(());
    }
    let recordings: Vec<&PathBuf> = files
        .iter()
        .filter(|f| matches!(ext(f).as_str(), "db" | "rpd" | "json"))
        .collect();
    if !recordings.is_empty() {
        for f in recordings {
            inputs.push(Input {
                path: f.clone(),
                label: label(f),
            });
        }
        return Ok(());
    }
    for d in dirs {
        walk(root, &d, inputs)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_directories_and_files() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for (rel, _) in [
            ("job/0/kernel_trace.csv", ()),
            ("job/0/results.db", ()),
            ("job/1/kernel_trace.csv", ()),
            ("dbs/11_results.db", ()),
            ("dbs/12_results.db", ()),
            ("empty/nothing.txt", ()),
        ] {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let found = discover(&[root.join("job"), root.join("dbs/11_results.db")]).unwrap();
        let labels: Vec<&str> = found.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels[..2], ["0", "1"]);
        assert_eq!(found[0].path, root.join("job/0"));
        assert_eq!(found[2].path, root.join("dbs/11_results.db"));
        let dbs = discover(&[root.join("dbs")]).unwrap();
        assert_eq!(
            dbs.iter().map(|i| i.label.as_str()).collect::<Vec<_>>(),
            ["11_results.db", "12_results.db"]
        );
        let err = discover(&[root.join("empty")]).unwrap_err().to_string();
        assert!(err.contains("no recording"), "{err}");
        assert!(discover(&[root.join("missing")]).is_err());
    }
}
