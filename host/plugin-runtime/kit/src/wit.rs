//! The WIT package `rocwasm:plugin@0.3.2`, embedded in the binary.
//!
//! The files of the repository's `wit/` are compiled in with
//! `include_str!`, so an installed `rocwasm` (no source tree near it) can
//! still write the exact contract it loads plugins against, for the guest
//! tools to generate bindings from: `rocwasm plugin wit --out DIR`, and the
//! `wit/` of every project `rocwasm plugin new` writes.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

/// The package's name and version, as `package` in `types.wit` declares it.
pub const PACKAGE: &str = "rocwasm:plugin@0.3.2";

/// The two worlds a plugin can implement, which `plugin new` has templates
/// for.
pub const WORLDS: [&str; 2] = ["analysis-plugin", "transform-plugin"];

/// Every world a project may build (`world` in its manifest): the two, and
/// `mergeable-analysis-plugin`, an analysis that also exports `merge`
/// (0.3.2; the Rust template is one, through the SDK).
pub const BUILD_WORLDS: [&str; 3] = [
    "analysis-plugin",
    "transform-plugin",
    "mergeable-analysis-plugin",
];

/// `(file name, contents)` of every file of the package.
pub const FILES: &[(&str, &str)] = &[
    ("host.wit", include_str!("../../../../wit/host.wit")),
    ("types.wit", include_str!("../../../../wit/types.wit")),
    ("worlds.wit", include_str!("../../../../wit/worlds.wit")),
];

/// Writes the package into `dir` (created if needed); returns the paths
/// written. An existing identical file is left untouched.
pub fn write(dir: &Path) -> Result<Vec<std::path::PathBuf>> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    for (name, text) in FILES {
        let path = dir.join(name);
        if fs::read_to_string(&path).ok().as_deref() != Some(*text) {
            fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        }
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_package_is_the_repositorys_and_parses() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../wit");
        let mut names: Vec<String> = fs::read_dir(&repo)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".wit"))
            .collect();
        names.sort();
        let embedded: Vec<&str> = FILES.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, embedded, "wit/ gained or lost a file: update FILES");

        let dir = tempfile::tempdir().unwrap();
        write(dir.path()).unwrap();
        let mut resolve = wit_parser::Resolve::default();
        let (pkg, _) = resolve.push_dir(dir.path()).unwrap();
        assert_eq!(resolve.packages[pkg].name.to_string(), PACKAGE);
        for world in BUILD_WORLDS {
            resolve.select_world(&[pkg], Some(world)).unwrap();
        }
    }
}
