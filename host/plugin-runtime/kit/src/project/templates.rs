//! The files `rocwasm plugin new` writes, embedded in the binary: one
//! sample analysis per language (kernel dispatches and their total GPU
//! time, as a summary table), its test (`test/`: a small trace and the
//! tables expected on it), a README (build, test, ship), the manifest,
//! the WIT package, and the language layer (`rocwasm.h`, the `rocwasm`
//! Python package, `rocwasm.js`) copied from this repository's `plugins/`.
//!
//! Templates are plain files under `host/plugin-runtime/kit/templates/` with `{{name}}`
//! (the plugin's name) and, for Rust, `{{sdk}}` (the SDK's path) to fill in.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::{check_name, Lang, MANIFEST};
use crate::wit;

const README_COMMON: &str = include_str!("../../templates/README.common.md");
const GITIGNORE: &str = include_str!("../../templates/gitignore");

/// Every project's test (see [`crate::expect`]): a small recorded trace
/// and the tables the sample plugin returns on it, per world.
const TEST_TRACE: (&str, &str) = (
    "test/trace/kernel_trace.csv",
    include_str!("../../templates/test/trace/kernel_trace.csv"),
);
const EXPECTED_ANALYSIS: &str = include_str!("../../templates/test/expected.analysis.toml");
const EXPECTED_TRANSFORM: &str = include_str!("../../templates/test/expected.transform.toml");

const RUST: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../../templates/rust/Cargo.toml"),
    ),
    ("README.md", include_str!("../../templates/rust/README.md")),
];
const RUST_ANALYSIS: &str = include_str!("../../templates/rust/src/lib.rs");
const RUST_TRANSFORM: &str = include_str!("../../templates/rust/src/transform.rs");

const C: &[(&str, &str)] = &[
    ("plugin.c", include_str!("../../templates/c/plugin.c")),
    ("README.md", include_str!("../../templates/c/README.md")),
    (
        "include/rocwasm.h",
        include_str!("../../../../../plugins/c/include/rocwasm.h"),
    ),
    (
        "include/rocwasm_schema.h",
        include_str!("../../../../../plugins/c/include/rocwasm_schema.h"),
    ),
];

const PYTHON: &[(&str, &str)] = &[
    ("app.py", include_str!("../../templates/python/app.py")),
    (
        "README.md",
        include_str!("../../templates/python/README.md"),
    ),
    (
        "rocwasm/__init__.py",
        include_str!("../../../../../plugins/python/rocwasm/__init__.py"),
    ),
    (
        "rocwasm/host.py",
        include_str!("../../../../../plugins/python/rocwasm/host.py"),
    ),
    (
        "rocwasm/names.py",
        include_str!("../../../../../plugins/python/rocwasm/names.py"),
    ),
    (
        "rocwasm/plugin.py",
        include_str!("../../../../../plugins/python/rocwasm/plugin.py"),
    ),
    (
        "rocwasm/rows.py",
        include_str!("../../../../../plugins/python/rocwasm/rows.py"),
    ),
    (
        "rocwasm/schema.py",
        include_str!("../../../../../plugins/python/rocwasm/schema.py"),
    ),
    (
        "rocwasm/table.py",
        include_str!("../../../../../plugins/python/rocwasm/table.py"),
    ),
];

const JS: &[(&str, &str)] = &[
    ("plugin.js", include_str!("../../templates/js/plugin.js")),
    ("README.md", include_str!("../../templates/js/README.md")),
    (
        "rocwasm.js",
        include_str!("../../../../../plugins/js/rocwasm.js"),
    ),
    (
        "rocwasm_schema.js",
        include_str!("../../../../../plugins/js/rocwasm_schema.js"),
    ),
];

/// What to write.
#[derive(Debug, Clone)]
pub struct NewProject {
    /// The directory to create (must not exist, or be empty).
    pub dir: PathBuf,
    /// The plugin's name.
    pub name: String,
    /// Its language.
    pub lang: Lang,
    /// `analysis-plugin` or `transform-plugin`.
    pub world: String,
    /// For Rust: the SDK's directory (see [`sdk_path`]).
    pub sdk: Option<PathBuf>,
}

/// The plugin SDK a Rust project should depend on: `$ROCWASM_SDK`, else
/// the `plugins/sdk` of the source tree this rocwasm was built from, when
/// it is still there.
pub fn sdk_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("ROCWASM_SDK").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../plugins/sdk");
    fs::canonicalize(built_from)
        .ok()
        .filter(|p| p.join("Cargo.toml").is_file())
}

/// Writes the project; the files written, relative to its directory.
pub fn create(p: &NewProject) -> Result<Vec<PathBuf>> {
    check_name(&p.name)?;
    if !wit::WORLDS.contains(&p.world.as_str()) {
        bail!(
            "unknown world `{}` (expected {})",
            p.world,
            wit::WORLDS.join(" or ")
        );
    }
    let transform = p.world == wit::WORLDS[1];
    if transform && p.lang != Lang::Rust {
        bail!(
            "the transform template exists for Rust only so far: use `--lang rust`, or start \
             from the analysis template (the C, Python and JS layers target the analysis world)"
        );
    }
    if fs::read_dir(&p.dir).is_ok_and(|mut d| d.next().is_some()) {
        bail!("{} already exists and is not empty", p.dir.display());
    }
    let mut files: Vec<(String, String)> = Vec::new();
    let fill = |text: &str, sdk: &str| text.replace("{{name}}", &p.name).replace("{{sdk}}", sdk);
    let sdk_text;
    let (own, sdk): (&[(&str, &str)], &str) = match p.lang {
        Lang::Rust => {
            let Some(sdk) = &p.sdk else {
                bail!(
                    "a Rust plugin needs the rocwasm plugin SDK, and this rocwasm does not know \
                     where it is: set ROCWASM_SDK to the `plugins/sdk` directory of a rocwasm \
                     source tree"
                );
            };
            sdk_text = sdk.display().to_string();
            let lib = if transform {
                RUST_TRANSFORM
            } else {
                RUST_ANALYSIS
            };
            files.push(("src/lib.rs".into(), fill(lib, &sdk_text)));
            // The SDK workspace's lock file pins versions known to build
            // with its toolchains; cargo drops what this project does not use.
            if let Ok(lock) = fs::read_to_string(sdk.join("../Cargo.lock")) {
                files.push(("Cargo.lock".into(), lock));
            }
            (RUST, &sdk_text)
        }
        Lang::C => (C, ""),
        Lang::Python => (PYTHON, ""),
        Lang::Js => (JS, ""),
    };
    for (path, text) in own {
        let mut text = fill(text, sdk);
        if *path == "README.md" {
            text.push_str(&fill(README_COMMON, sdk));
        }
        files.push((path.to_string(), text));
    }
    // The Rust and Python analysis templates merge (WIT 0.3.1's `merge`):
    // their projects build the world that exports it.
    let world = if !transform && matches!(p.lang, Lang::Rust | Lang::Python) {
        wit::BUILD_WORLDS[2]
    } else {
        p.world.as_str()
    };
    files.push((
        MANIFEST.into(),
        format!(
            "# Read by `rocwasm plugin build`: the component is target/<name>.wasm.\n\
             name = \"{}\"\nworld = \"{}\"\n",
            p.name, world
        ),
    ));
    files.push((".gitignore".into(), GITIGNORE.into()));
    files.push((TEST_TRACE.0.into(), TEST_TRACE.1.into()));
    let expected = if transform {
        EXPECTED_TRANSFORM
    } else {
        EXPECTED_ANALYSIS
    };
    files.push(("test/expected.toml".into(), fill(expected, sdk)));
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = p.dir.join(&rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(PathBuf::from(rel));
    }
    for path in wit::write(&p.dir.join("wit"))? {
        if let Some(file) = path.file_name() {
            written.push(Path::new("wit").join(file));
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Manifest;

    #[test]
    fn every_language_writes_a_detectable_project_with_its_layer() {
        let root = tempfile::tempdir().unwrap();
        for lang in Lang::ALL {
            let dir = root.path().join(lang.name());
            let files = create(&NewProject {
                dir: dir.clone(),
                name: "demo".into(),
                lang,
                world: "analysis-plugin".into(),
                sdk: Some(PathBuf::from("/sdk")),
            })
            .unwrap();
            assert_eq!(Lang::detect(&dir).unwrap(), lang);
            let m = Manifest::read(&dir).unwrap();
            let world = match lang {
                Lang::Rust | Lang::Python => "mergeable-analysis-plugin",
                Lang::C | Lang::Js => "analysis-plugin",
            };
            assert_eq!((m.name.as_str(), m.world.as_str()), ("demo", world));
            assert!(
                files.contains(&PathBuf::from("wit/worlds.wit")),
                "{files:?}"
            );
            let readme = fs::read_to_string(dir.join("README.md")).unwrap();
            assert!(
                readme.contains("rocwasm plugin test target/demo.wasm"),
                "{readme}"
            );
            assert!(!readme.contains("{{"), "{readme}");
            assert!(dir.join("test/trace/kernel_trace.csv").is_file());
            let expected = crate::expect::Expected::read(&dir.join("test/expected.toml")).unwrap();
            assert_eq!(expected.tables[0].columns, ["Dispatches", "TotalNs"]);
        }
        let cargo = fs::read_to_string(root.path().join("rust/Cargo.toml")).unwrap();
        assert!(
            cargo.contains("rocwasm-plugin-sdk = { path = \"/sdk\" }"),
            "{cargo}"
        );
        assert!(root.path().join("c/include/rocwasm.h").is_file());
        assert!(root.path().join("python/rocwasm/plugin.py").is_file());
        assert!(root.path().join("js/rocwasm.js").is_file());
    }

    #[test]
    fn refusals_read_as_sentences() {
        let root = tempfile::tempdir().unwrap();
        let mut p = NewProject {
            dir: root.path().to_path_buf(),
            name: "demo".into(),
            lang: Lang::C,
            world: "transform-plugin".into(),
            sdk: None,
        };
        let err = create(&p).unwrap_err().to_string();
        assert!(err.contains("Rust only"), "{err}");
        p.world = "analysis-plugin".into();
        fs::write(root.path().join("x"), "").unwrap();
        let err = create(&p).unwrap_err().to_string();
        assert!(err.contains("not empty"), "{err}");
        p.lang = Lang::Rust;
        p.dir = root.path().join("fresh");
        let err = create(&p).unwrap_err().to_string();
        assert!(err.contains("ROCWASM_SDK"), "{err}");
    }
}
