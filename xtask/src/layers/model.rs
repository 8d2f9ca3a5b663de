//! What the loader builds and the graph reads: one module tree of a crate and
//! the references written in each of its modules.

use std::collections::{BTreeMap, BTreeSet};

/// One module tree: a crate's library, or one of its binaries.
pub struct Tree {
    /// How reports name the tree: its root file's directory relative to the
    /// scanned root (`host/formats/src`), plus the root file when a crate has
    /// more than one tree (`host/launcher/cli/src (main.rs)`).
    pub label: String,
    /// Its source files as reports name them (relative to the root file's
    /// directory); index 0 is the root file.
    pub files: Vec<String>,
    /// Its modules; index 0 is the crate root. An inline `mod x { … }` is a
    /// module of its own that lives in its parent's file.
    pub modules: Vec<Module>,
    /// Every path written in the tree that may name one of its modules.
    pub refs: Vec<Ref>,
}

impl Tree {
    /// A tree with only its root module, in its root file.
    pub fn new(label: String, root_file: String) -> Tree {
        Tree {
            label,
            files: vec![root_file],
            modules: vec![Module::new(None, 0)],
            refs: Vec::new(),
        }
    }
}

/// One module and the names it declares.
pub struct Module {
    pub parent: Option<usize>,
    /// Index into [`Tree::files`].
    pub file: usize,
    /// Child modules by name (declared with `mod`, in a file or inline).
    pub children: BTreeMap<String, usize>,
    /// Names of items defined here: types, functions, constants, traits, macros.
    pub defs: BTreeSet<String>,
    /// Names brought into scope by `use` (public or not), each to the path as
    /// written, relative to this module.
    pub imports: BTreeMap<String, Vec<String>>,
    /// Paths of glob imports (`use x::*`), as written.
    pub globs: Vec<Vec<String>>,
}

impl Module {
    pub fn new(parent: Option<usize>, file: usize) -> Module {
        Module {
            parent,
            file,
            children: BTreeMap::new(),
            defs: BTreeSet::new(),
            imports: BTreeMap::new(),
            globs: Vec::new(),
        }
    }
}

/// A path written in a module: in code (`stats::KernelStats::new`) or one leaf
/// of a `use` tree (`use super::{a::X, b::*}` gives `super::a::X` and `super::b`).
pub struct Ref {
    /// The module it is written in.
    pub module: usize,
    /// Its segments as written, without generic arguments.
    pub segs: Vec<String>,
    /// 1-based line in the module's file, or in `included`.
    pub line: usize,
    pub kind: RefKind,
    /// The file it is written in when that is not the module's own file but
    /// one the module pulls in with `include!("…")`.
    pub included: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    /// A path in code, a type, a pattern or a macro invocation.
    Code,
    /// A leaf of a `use` tree; `reexport` when the `use` is `pub`/`pub(…)`,
    /// `glob` when the leaf is `*` (then `segs` stops before it).
    Use { reexport: bool, glob: bool },
}

impl Ref {
    /// The path as the developer wrote it.
    pub fn text(&self) -> String {
        let path = self.segs.join("::");
        match self.kind {
            RefKind::Use { glob: true, .. } => format!("{path}::*"),
            _ => path,
        }
    }
}
