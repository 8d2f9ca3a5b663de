//! `cargo xtask check-layers`: no import cycle between the modules of a crate.
//!
//! Layers run one way. A crate's modules form layers when every dependency
//! between two of its files points the same way: `stats.rs` may use
//! `model.rs`, and then `model.rs` may not use `stats.rs`, not even through a
//! third file. A cycle means neither file can be read, tested or changed
//! without the other, and it tends to grow: once two modules know each other,
//! everything either of them knows is reachable from both. This check finds
//! every cycle, in every crate under the root (the host workspace and the
//! plugins workspace alike), and fails if there is one. There is no
//! allow-list.
//!
//! # What is a module, what is an edge
//!
//! A crate's module tree starts at `src/lib.rs`, `src/main.rs` and
//! `src/bin/*` (each a tree of its own) and follows `mod x;` to `x.rs` or
//! `x/mod.rs` (or to a `#[path = "…"]`); what a module `include!`s with a
//! literal path is part of it. Files under `tests/`, `benches/`,
//! `examples/` and `build.rs` are in no tree. The graph's nodes are files;
//! an inline `mod x { … }` belongs to its file.
//!
//! An edge `a.rs → b.rs` is any path written in `a.rs` that names an item of
//! a module in `b.rs`: a `use` (`use crate::b::X`, `use super::X`,
//! `use super::b::*`), a path in code, a type, a pattern or a macro's
//! arguments (`crate::b::f()`, `b::X::new()` for a child module `b`,
//! `format!("{}", b::NAME)`, `S { x: crate::b::X }` inside `vec![…]`;
//! `crate::b::f()` or `$crate::b::f()` in a `macro_rules!` body, also
//! after a field's `$field: `, which counts for the file defining the macro
//! unless it is `#[macro_export]`ed for other crates), or a name imported
//! by a `use`. A path leads to the deepest module it names:
//! `crate::hsa::agents::Agent` to `hsa/agents.rs`, `super::Thing` from
//! `hsa/agents.rs` to `hsa/mod.rs`. Imports and re-exports are followed to
//! the module that defines the item: if `lib.rs` says `pub use a::Y;`, then
//! `use crate::Y` in `b.rs` is an edge to `a.rs`, not to `lib.rs`.
//!
//! Not edges:
//! - a file's references to itself;
//! - `mod child;` and a `pub use child::X;` (or `pub(crate) use`) in a
//!   parent: re-exporting its own descendants is a facade, not a use (an
//!   inline `pub mod prelude { pub use crate::…; }` in `lib.rs` re-exports
//!   the root file's descendants: a facade too). The parent's own code using
//!   `X`, or a private `use child::X`, is an edge;
//! - anything under `#[cfg(test)]` (test code may reach anywhere);
//! - paths to other crates, the standard library, local variables; and
//!   macros used by name without a path (`#[macro_use]`/textual scope),
//!   which this check does not see.
//!
//! # Fixing a reported cycle
//!
//! Each cycle is one line naming its files and every dependency between
//! them, each at the first place one file uses the other, e.g.
//! `host/formats/src: cycle between csv_sink.rs and stats.rs (csv_sink.rs:12
//! uses stats::KernelStats; stats.rs:40 uses csv_sink::write_row)`. Decide
//! which module is the lower layer and make the other edge go away:
//! - move the shared item down: to the module that should own it, or to a
//!   new small module both use (a `mod.rs` holding types its children need
//!   while calling into them is the usual case: move the types to a child);
//! - or turn the upward call around: the lower module takes a closure, a
//!   trait object or a value as a parameter instead of calling up.
//!
//! Re-exporting through a parent does not hide a cycle: the edge goes to the
//! file that defines the item.

pub(crate) mod collect;
mod graph;
mod model;
pub(crate) mod tree;

use std::path::Path;

use anyhow::{bail, Result};

use graph::Edge;
use model::Tree;

/// Checks every crate under `root`; prints each cycle and fails if any.
pub fn check(root: &Path) -> Result<()> {
    let scan = tree::scan(root)?;
    for warning in &scan.warnings {
        eprintln!("layers: warning: {warning}");
    }
    let cycles = cycle_lines(&scan.trees);
    for line in &cycles {
        println!("{line}");
    }
    if !cycles.is_empty() {
        bail!(
            "{} import cycle(s) between modules; see above",
            cycles.len()
        );
    }
    let modules: usize = scan.trees.iter().map(|t| t.files.len()).sum();
    println!(
        "layers: {} crates, {modules} modules, no import cycles",
        scan.crates
    );
    Ok(())
}

/// One line per cycle, in tree order.
fn cycle_lines(trees: &[Tree]) -> Vec<String> {
    let mut lines = Vec::new();
    for tree in trees {
        let edges = graph::edges(tree);
        let pairs: Vec<(usize, usize)> = edges.iter().map(|e| (e.from, e.to)).collect();
        for files in graph::cycles(tree.files.len(), &pairs) {
            lines.push(describe(tree, &files, &edges));
        }
    }
    lines
}

/// `label: cycle between a.rs and b.rs (a.rs:1 uses b::X; b.rs:2 uses super::a::Y)`.
fn describe(tree: &Tree, files: &[usize], edges: &[Edge]) -> String {
    let name = |f: usize| tree.files[f].as_str();
    let mut names: Vec<&str> = files.iter().map(|&f| name(f)).collect();
    names.sort_unstable();
    let list = match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    };
    let mut inside: Vec<&Edge> = edges
        .iter()
        .filter(|e| files.contains(&e.from) && files.contains(&e.to))
        .collect();
    inside.sort_by_key(|e| (name(e.from), e.line, name(e.to)));
    let uses: Vec<String> = inside
        .iter()
        .map(|e| {
            let file = e.included.as_deref().unwrap_or(name(e.from));
            let mut s = format!("{file}:{} uses {}", e.line, e.text);
            if e.indirect {
                s.push_str(&format!(" (in {})", name(e.to)));
            }
            s
        })
        .collect();
    format!("{}: cycle between {list} ({})", tree.label, uses.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crate at the root of a new directory with `files` under `src/`.
    fn plant(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let manifest = "[package]\nname = \"planted\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
        std::fs::write(dir.path().join("Cargo.toml"), manifest).unwrap();
        for (path, text) in files {
            let path = dir.path().join("src").join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn cycles_in(files: &[(&str, &str)]) -> Vec<String> {
        let dir = plant(files);
        cycle_lines(&tree::scan(dir.path()).unwrap().trees)
    }

    const LIB: &str = "mod a;\nmod b;\nmod c;\n";
    const A: &str = "use crate::b::X;\npub struct Y;\npub fn f(_: X) {}\n";
    const B: &str = "pub struct X;\n\npub fn g() -> super::a::Y {\n    super::a::Y\n}\n";
    const C: &str = "pub fn h() {}\n";

    #[test]
    fn a_cycle_between_two_modules_is_reported_with_its_edges() {
        let cycles = cycles_in(&[("lib.rs", LIB), ("a.rs", A), ("b.rs", B), ("c.rs", C)]);
        assert_eq!(
            cycles,
            ["src: cycle between a.rs and b.rs (a.rs:1 uses crate::b::X; b.rs:3 uses super::a::Y)"]
        );
    }

    #[test]
    fn check_fails_on_a_cycle_and_passes_without() {
        let dir = plant(&[("lib.rs", LIB), ("a.rs", A), ("b.rs", B), ("c.rs", C)]);
        let err = check(dir.path()).unwrap_err().to_string();
        assert_eq!(err, "1 import cycle(s) between modules; see above");
        let clean = plant(&[
            ("lib.rs", LIB),
            ("a.rs", A),
            ("b.rs", "pub struct X;\n"),
            ("c.rs", C),
        ]);
        check(clean.path()).unwrap();
    }

    /// A cycle made only of `name: crate::path` references (a field, a
    /// parameter, a `let` with a type, a closure argument) is found, and
    /// fails the check.
    #[test]
    fn typed_names_are_references_and_a_planted_cycle_of_them_fails() {
        let lib = "mod a;\nmod b;\n";
        let a = "pub struct A {\n    pub b: crate::b::B,\n}\n";
        let b = "pub struct B;\n\npub fn f(a: &crate::a::A) -> usize {\n    0\n}\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b)]);
        assert_eq!(
            cycles,
            ["src: cycle between a.rs and b.rs (a.rs:2 uses crate::b::B; b.rs:3 uses crate::a::A)"]
        );
        for b in [
            "pub struct B;\npub fn g() {\n    let _x: Option<crate::a::A> = None;\n}\n",
            "pub struct B;\npub fn g() {\n    let _f = |_a: crate::a::A| ();\n}\n",
            "pub struct B;\npub struct W(pub crate::a::A);\n",
            "pub struct B;\npub enum E {\n    V { a: crate::a::A },\n}\n",
        ] {
            let dir = plant(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b)]);
            let err = check(dir.path()).expect_err(b).to_string();
            assert_eq!(err, "1 import cycle(s) between modules; see above", "{b}");
        }
    }

    #[test]
    fn one_way_uses_are_no_cycle() {
        let b = "pub struct X;\npub fn g() -> crate::c::H { crate::c::H }\n";
        let cycles = cycles_in(&[
            ("lib.rs", LIB),
            ("a.rs", A),
            ("b.rs", b),
            ("c.rs", "pub struct H;\n"),
        ]);
        assert!(cycles.is_empty(), "{cycles:?}");
    }

    #[test]
    fn test_code_may_reach_anywhere() {
        let b = "pub struct X;\n\n#[cfg(test)]\nmod tests {\n    use crate::a::*;\n}\n\
                 #[cfg(test)]\nfn helper() -> super::a::Y { super::a::Y }\n";
        let cycles = cycles_in(&[("lib.rs", LIB), ("a.rs", A), ("b.rs", b), ("c.rs", C)]);
        assert!(cycles.is_empty(), "{cycles:?}");
        // Unless it is not test code.
        let b = "pub struct X;\n\nmod inner {\n    use crate::a::*;\n}\n";
        let cycles = cycles_in(&[("lib.rs", LIB), ("a.rs", A), ("b.rs", b), ("c.rs", C)]);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert!(cycles[0].contains("b.rs:4 uses crate::a::*"), "{cycles:?}");
    }

    #[test]
    fn a_facade_re_export_is_not_a_cycle() {
        // lib.rs re-exports a's Y; a uses it through the root: a's own item.
        let lib = "mod a;\nmod b;\npub use a::Y;\n";
        let a = "pub struct Y;\npub fn f() -> crate::Y { crate::Y }\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("a.rs", a), ("b.rs", "use crate::Y;\n")]);
        assert!(cycles.is_empty(), "{cycles:?}");
    }

    #[test]
    fn re_exports_lead_to_the_defining_file() {
        // b reaches a's Y through lib.rs's re-export: still an edge to a.rs.
        let lib = "mod a;\nmod b;\npub use a::Y;\n";
        let a = "pub struct Y;\nuse crate::b::X;\n";
        let b = "pub struct X;\nuse crate::Y;\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b)]);
        assert_eq!(
            cycles,
            ["src: cycle between a.rs and b.rs (a.rs:2 uses crate::b::X; b.rs:2 uses crate::Y (in a.rs))"]
        );
    }

    #[test]
    fn a_parent_using_what_it_re_exports_is_an_edge() {
        let lib = "mod a;\npub use a::Y;\npub struct Config;\npub fn make() -> Y { Y }\n";
        let a = "pub struct Y;\npub fn f(_: &crate::Config) {}\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("a.rs", a)]);
        assert_eq!(
            cycles,
            ["src: cycle between a.rs and lib.rs (a.rs:2 uses crate::Config; lib.rs:4 uses Y (in a.rs))"]
        );
    }

    #[test]
    fn mod_rs_path_attributes_and_macros_are_followed() {
        let lib = "mod hsa;\n#[path = \"other/thing.rs\"]\nmod thing;\n";
        let hsa =
            "mod agents;\npub struct Agent;\npub fn list() { println!(\"{}\", agents::COUNT); }\n";
        let agents =
            "pub const COUNT: u32 = 1;\npub fn first() -> super::Agent { crate::thing::make() }\n";
        let thing = "pub fn make() -> crate::hsa::Agent { crate::hsa::Agent }\n";
        let cycles = cycles_in(&[
            ("lib.rs", lib),
            ("hsa/mod.rs", hsa),
            ("hsa/agents.rs", agents),
            ("other/thing.rs", thing),
        ]);
        assert_eq!(
            cycles,
            [
                "src: cycle between hsa/agents.rs, hsa/mod.rs and other/thing.rs \
              (hsa/agents.rs:2 uses super::Agent; hsa/agents.rs:2 uses crate::thing::make; \
              hsa/mod.rs:3 uses agents::COUNT; other/thing.rs:1 uses crate::hsa::Agent)"
            ]
        );
    }

    #[test]
    fn macro_bodies_and_included_files_count() {
        let a = "macro_rules! call_b {\n    () => { $crate::b::g() };\n}\npub struct Y;\n";
        let b = "include!(\"b_gen.rs\");\n";
        let generated = "pub fn g() -> crate::a::Y { crate::a::Y }\n";
        let cycles = cycles_in(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", a),
            ("b.rs", b),
            ("b_gen.rs", generated),
        ]);
        assert_eq!(
            cycles,
            ["src: cycle between a.rs and b.rs (a.rs:2 uses crate::b::g; b_gen.rs:1 uses crate::a::Y)"]
        );
    }

    #[test]
    fn exported_macros_belong_to_their_callers() {
        // The macro's `$crate::b` is expanded in other crates: lib.rs does
        // not use b.rs, so b.rs may use lib.rs.
        let lib = "mod b;\npub struct Config;\n\n#[macro_export]\nmacro_rules! call_b {\n    () => { $crate::b::g() };\n}\n";
        let b = "pub fn g(_: &crate::Config) {}\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("b.rs", b)]);
        assert!(cycles.is_empty(), "{cycles:?}");
        // Without `#[macro_export]`, it is expanded here.
        let lib = lib.replace("#[macro_export]\n", "");
        let cycles = cycles_in(&[("lib.rs", &lib), ("b.rs", b)]);
        assert_eq!(
            cycles,
            ["src: cycle between b.rs and lib.rs (b.rs:1 uses crate::Config; lib.rs:5 uses crate::b::g)"]
        );
    }

    /// `a.rs`'s `macro_rules!` body names `crate::b::column` after a
    /// field's `:` (as `rocwasm-core`'s `columns!` did): the macro is
    /// expanded in `a.rs`, so `a.rs` uses `b.rs`, and with `b.rs` using
    /// `a.rs` that is a cycle, which fails the check.
    #[test]
    fn a_planted_cycle_through_a_macro_body_fails_the_check() {
        let lib = "mod a;\nmod b;\n";
        let a = "macro_rules! table {\n    ($($field:ident),+) => {\n        \
                 pub struct T { $(pub $field: Vec<u64>,)+ }\n        \
                 impl T {\n            pub fn decode(bytes: &[u8]) -> T {\n                \
                 T { $($field: crate::b::column(bytes),)+ }\n            }\n        }\n    };\n}\n\
                 table!(x, y);\n";
        let b = "pub fn column(_: &[u8]) -> Vec<u64> { Vec::new() }\n\
                 pub fn len(t: &crate::a::T) -> usize { t.x.len() }\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b)]);
        assert_eq!(
            cycles,
            ["src: cycle between a.rs and b.rs (a.rs:6 uses crate::b::column; b.rs:2 uses crate::a::T)"]
        );
        let dir = plant(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b)]);
        let err = check(dir.path()).unwrap_err().to_string();
        assert_eq!(err, "1 import cycle(s) between modules; see above");

        // The same body naming a lower module (`c.rs`, which uses neither):
        // one way, no cycle.
        let lib = "mod a;\nmod b;\nmod c;\n";
        let a = a.replace("crate::b::column", "crate::c::column");
        let b = "pub fn len(t: &crate::a::T) -> usize { t.x.len() }\n";
        let c = "pub fn column(_: &[u8]) -> Vec<u64> { Vec::new() }\n";
        let files = [("lib.rs", lib), ("a.rs", &a), ("b.rs", b), ("c.rs", c)];
        assert!(cycles_in(&files).is_empty());
        check(plant(&files).path()).unwrap();
    }

    /// A macro invocation's arguments are paths of the module invoking it,
    /// after a field's `:` too; a path after `::` is another crate's.
    #[test]
    fn field_paths_in_macro_arguments_count() {
        let lib = "mod a;\nmod b;\n";
        let a = "pub struct Y;\npub fn f() {\n    let _ = vec![crate::b::X { y: 0 }];\n}\n";
        let b = "pub struct X { pub y: u8 }\n\
                 pub fn g() {\n    let _ = format!(\"{:?}\", S { y: crate::a::Y });\n}\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b)]);
        assert_eq!(
            cycles,
            ["src: cycle between a.rs and b.rs (a.rs:3 uses crate::b::X; b.rs:3 uses crate::a::Y)"]
        );
        let b = "pub struct X { pub y: u8 }\n\
                 pub fn g() {\n    let _ = format!(\"{:?}\", S { y: ::a::Y });\n}\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b)]);
        assert!(cycles.is_empty(), "{cycles:?}");
    }

    #[test]
    fn a_prelude_in_the_root_file_is_a_facade() {
        let lib = "mod a;\nmod b;\npub mod prelude {\n    pub use crate::a::Y;\n    pub use crate::b::X;\n}\n";
        let a = "pub struct Y;\npub fn f(_: crate::b::X) {}\n";
        let b = "use crate::prelude::*;\npub struct X;\n";
        let cycles = cycles_in(&[("lib.rs", lib), ("a.rs", a), ("b.rs", b)]);
        assert!(cycles.is_empty(), "{cycles:?}");
    }

    #[test]
    fn target_and_hidden_directories_are_skipped() {
        let dir = plant(&[("lib.rs", "")]);
        for skipped in ["target/cyclic", ".hidden/cyclic"] {
            let src = dir.path().join(skipped).join("src");
            std::fs::create_dir_all(&src).unwrap();
            std::fs::write(
                src.parent().unwrap().join("Cargo.toml"),
                "[package]\nname = \"x\"\n",
            )
            .unwrap();
            for (file, text) in [("lib.rs", LIB), ("a.rs", A), ("b.rs", B), ("c.rs", C)] {
                std::fs::write(src.join(file), text).unwrap();
            }
        }
        let scan = tree::scan(dir.path()).unwrap();
        assert_eq!(scan.crates, 1);
        assert!(cycle_lines(&scan.trees).is_empty());
    }

    #[test]
    fn tarjan_finds_each_cycle_once() {
        let edges = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (5, 5)];
        assert_eq!(graph::cycles(6, &edges), [vec![0, 1, 2], vec![3, 4]]);
    }
}
