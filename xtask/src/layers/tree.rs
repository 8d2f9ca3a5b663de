//! Finding the crates under a directory and loading each one's module trees:
//! from `src/lib.rs`, `src/main.rs` and `src/bin/*` along `mod` declarations.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use syn::{Item, ItemMod};

use super::collect::{self, is_test_only, item_attrs, path_attr};
use super::model::{Module, Tree};

/// Everything found under a root.
pub struct Scan {
    /// Packages found (manifests with a `[package]`).
    pub crates: usize,
    pub trees: Vec<Tree>,
    /// `mod x;` declarations whose file is missing, and the like.
    pub warnings: Vec<String>,
}

/// Loads every crate under `root`, skipping `target` and hidden directories.
pub fn scan(root: &Path) -> Result<Scan> {
    let root = root
        .canonicalize()
        .with_context(|| format!("cannot open {}", root.display()))?;
    let mut crates = Vec::new();
    find_crates(&root, &mut crates)?;
    let mut scan = Scan {
        crates: crates.len(),
        trees: Vec::new(),
        warnings: Vec::new(),
    };
    for dir in crates {
        let src = dir.join("src");
        let roots = crate_roots(&src);
        for file in &roots {
            let mut label = relative(&root, &src);
            if roots.len() > 1 {
                label = format!("{label} ({})", relative(&src, file));
            }
            let mut loader = Loader {
                tree: Tree::new(label, relative(&src, file)),
                src: src.clone(),
                root: root.clone(),
                files: BTreeMap::from([(file.clone(), 0)]),
                warnings: &mut scan.warnings,
            };
            loader.load_file(0, file, true)?;
            scan.trees.push(loader.tree);
        }
    }
    Ok(scan)
}

/// Directories holding a `Cargo.toml` with a `[package]`, in path order.
fn find_crates(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let manifest = dir.join("Cargo.toml");
    if manifest.is_file() {
        let text = fs::read_to_string(&manifest)
            .with_context(|| format!("cannot read {}", manifest.display()))?;
        if text.lines().any(|l| l.trim() == "[package]") {
            out.push(dir.to_path_buf());
        }
    }
    for sub in subdirs(dir)? {
        find_crates(&sub, out)?;
    }
    Ok(())
}

/// Every `.rs` file under `root`, in path order, skipping `target` and
/// hidden directories as [`scan`] does (`cargo xtask check-facts` reads them all).
pub(crate) fn rust_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = fs::read_dir(root)
        .with_context(|| format!("cannot list {}", root.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    entries.sort();
    for path in entries {
        if path.extension().is_some_and(|ext| ext == "rs") && path.is_file() {
            files.push(path);
        }
    }
    for sub in subdirs(root)? {
        files.extend(rust_files(&sub)?);
    }
    Ok(files)
}

/// The directories below `dir` that a scan enters, in path order: neither
/// hidden nor `target`, and no symbolic links (`file_type` does not follow
/// them: no loops).
fn subdirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut subdirs = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if entry.file_type()?.is_dir() && !name.starts_with('.') && name != "target" {
            subdirs.push(entry.path());
        }
    }
    subdirs.sort();
    Ok(subdirs)
}

/// A crate's root files: `src/lib.rs`, `src/main.rs`, `src/bin/*.rs`,
/// `src/bin/*/main.rs`. Tests, benches, examples and `build.rs` are not
/// part of any of these trees.
fn crate_roots(src: &Path) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| src.join(name))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(entries) = fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter_map(|p| match p.extension() {
                Some(ext) if ext == "rs" && p.is_file() => Some(p),
                _ => Some(p.join("main.rs")).filter(|m| m.is_file()),
            })
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    roots
}

/// `path` relative to `base` if it is below it, else relative to nothing.
pub(crate) fn relative(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Where a module's `mod` declarations look for files.
struct Dirs {
    /// For `mod x;`: `x.rs` or `x/mod.rs` in here.
    children: PathBuf,
    /// For `#[path = "p"] mod x;`: `p` relative to here.
    path_base: PathBuf,
    /// For `include!("p")`: the directory of the file being read.
    file_dir: PathBuf,
}

struct Loader<'w> {
    tree: Tree,
    /// The root file's directory: reports name files relative to it.
    src: PathBuf,
    /// The scanned root: files outside `src` are named relative to it.
    root: PathBuf,
    /// Files loaded so far (canonical paths) to their index in the tree.
    files: BTreeMap<PathBuf, usize>,
    warnings: &'w mut Vec<String>,
}

impl Loader<'_> {
    /// Loads module `module` from `path`. `mod_rs` files (crate roots,
    /// `mod.rs`, `#[path]` files) keep their children beside them; `x.rs`
    /// keeps them in `x/`.
    fn load_file(&mut self, module: usize, path: &Path, mod_rs: bool) -> Result<()> {
        let text =
            fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let file =
            syn::parse_file(&text).with_context(|| format!("cannot parse {}", path.display()))?;
        if is_test_only(&file.attrs) {
            return Ok(()); // `#![cfg(test)]`
        }
        let dir = path.parent().expect("a file has a directory").to_path_buf();
        let children = match path.file_stem() {
            Some(stem) if !mod_rs => dir.join(stem),
            _ => dir.clone(),
        };
        let dirs = Dirs {
            children,
            path_base: dir.clone(),
            file_dir: dir,
        };
        self.load_items(module, &file.items, &dirs)
    }

    fn load_items(&mut self, module: usize, items: &[Item], dirs: &Dirs) -> Result<()> {
        for item in items {
            if is_test_only(item_attrs(item)) {
                continue;
            }
            match item {
                Item::Mod(m) => self.load_mod(module, m, dirs)?,
                Item::Macro(m) if m.mac.path.is_ident("include") => {
                    collect::item(&mut self.tree, module, item);
                    // A literal path: its items are this module's. (Paths
                    // built with `concat!(env!("OUT_DIR"), …)` are not read.)
                    if let Ok(lit) = m.mac.parse_body::<syn::LitStr>() {
                        self.include(module, &dirs.file_dir.join(lit.value()), dirs)?;
                    }
                }
                _ => collect::item(&mut self.tree, module, item),
            }
        }
        Ok(())
    }

    /// The items of `include!("…")`d `path`, into `module`.
    fn include(&mut self, module: usize, path: &Path, dirs: &Dirs) -> Result<()> {
        let text =
            fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let file =
            syn::parse_file(&text).with_context(|| format!("cannot parse {}", path.display()))?;
        let shown = self.display(&path.canonicalize()?);
        let first = self.tree.refs.len();
        let dirs = Dirs {
            file_dir: path.parent().expect("a file has a directory").to_path_buf(),
            children: dirs.children.clone(),
            path_base: dirs.path_base.clone(),
        };
        self.load_items(module, &file.items, &dirs)?;
        for r in &mut self.tree.refs[first..] {
            r.included.get_or_insert_with(|| shown.clone());
        }
        Ok(())
    }

    /// How reports name a file: relative to `src`, else to the root.
    fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.src) {
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => relative(&self.root, path),
        }
    }

    fn load_mod(&mut self, parent: usize, m: &ItemMod, dirs: &Dirs) -> Result<()> {
        let name = m.ident.to_string();
        let explicit = path_attr(&m.attrs);
        if let Some((_, items)) = &m.content {
            // Inline: its own module, in its parent's file.
            let file = self.tree.modules[parent].file;
            let child = self.add_module(parent, name.clone(), file);
            let inner = dirs.children.join(explicit.unwrap_or(name));
            let dirs = Dirs {
                children: inner.clone(),
                path_base: inner,
                file_dir: dirs.file_dir.clone(),
            };
            return self.load_items(child, items, &dirs);
        }
        let (path, mod_rs) = match explicit {
            Some(p) => (dirs.path_base.join(p), true),
            None => {
                let flat = dirs.children.join(format!("{name}.rs"));
                match flat.is_file() {
                    true => (flat, false),
                    false => (dirs.children.join(&name).join("mod.rs"), true),
                }
            }
        };
        let Ok(path) = path.canonicalize() else {
            let from = &self.tree.files[self.tree.modules[parent].file];
            let line = collect::line(m.ident.span());
            self.warnings.push(format!(
                "{}: {from}:{line}: no file for `mod {name};` ({}); skipped",
                self.tree.label,
                path.display()
            ));
            return Ok(());
        };
        if self.files.contains_key(&path) {
            return Ok(()); // the same file under two names: loaded once
        }
        let file = self.tree.files.len();
        let shown = self.display(&path);
        self.tree.files.push(shown);
        self.files.insert(path.clone(), file);
        let child = self.add_module(parent, name, file);
        self.load_file(child, &path, mod_rs)
    }

    fn add_module(&mut self, parent: usize, name: String, file: usize) -> usize {
        let id = self.tree.modules.len();
        self.tree.modules.push(Module::new(Some(parent), file));
        self.tree.modules[parent].children.insert(name, id);
        id
    }
}
