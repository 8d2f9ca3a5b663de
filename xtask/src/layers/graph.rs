//! From references to file→file edges, and from edges to cycles.

use std::collections::btree_map::{BTreeMap, Entry};

use super::model::{RefKind, Tree};

/// One dependency of a file on another, at the first place it is written.
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub line: usize,
    /// The file the line is in, when not `from` itself (an `include!`d file).
    pub included: Option<String>,
    /// The path as written.
    pub text: String,
    /// True when the path does not name `to`'s module itself (it goes
    /// through an import or a re-export): reports then say where it leads.
    pub indirect: bool,
}

/// The tree's file→file edges, one per pair of files (the first written).
pub fn edges(tree: &Tree) -> Vec<Edge> {
    let resolver = Resolver { tree };
    let mut first: BTreeMap<(usize, usize), Edge> = BTreeMap::new();
    for r in &tree.refs {
        let here = &tree.modules[r.module];
        if r.kind == RefKind::Code && r.segs.len() == 1 && !here.imports.contains_key(&r.segs[0]) {
            continue; // a local name, or a module named alone (not a path to anything)
        }
        let Some((target, _)) = resolver.resolve(r.module, &r.segs, 0) else {
            continue; // another crate, the prelude, a local variable
        };
        let direct = resolver.direct(r.module, &r.segs);
        if let (RefKind::Use { reexport: true, .. }, Some(d)) = (r.kind, direct) {
            if resolver.is_below(d, resolver.file_module(r.module)) {
                continue; // `pub use child::X`: a facade's re-export
            }
        }
        let (from, to) = (here.file, tree.modules[target].file);
        if from == to {
            continue;
        }
        let edge = Edge {
            from,
            to,
            line: r.line,
            included: r.included.clone(),
            text: r.text(),
            indirect: direct.map(|d| tree.modules[d].file) != Some(to),
        };
        match first.entry((from, to)) {
            Entry::Vacant(slot) => {
                slot.insert(edge);
            }
            Entry::Occupied(mut slot) if edge.line < slot.get().line => {
                slot.insert(edge);
            }
            Entry::Occupied(_) => {}
        }
    }
    first.into_values().collect()
}

/// Follows paths through the module tree, its imports and re-exports.
struct Resolver<'t> {
    tree: &'t Tree,
}

/// Imports may refer to each other (and, in broken code, in a loop).
const MAX_DEPTH: u32 = 16;

impl Resolver<'_> {
    /// The module that defines what `segs` (written in module `m`) names,
    /// and whether it names that module itself; `None` when it is not in
    /// this crate.
    fn resolve(&self, m: usize, segs: &[String], depth: u32) -> Option<(usize, bool)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (first, rest) = segs.split_first()?;
        let modules = &self.tree.modules;
        let start = match first.as_str() {
            "crate" => 0,
            "self" => m,
            "super" => return self.walk(modules[m].parent?, rest, depth),
            name => {
                if let Some(&child) = modules[m].children.get(name) {
                    child
                } else {
                    let target = modules[m].imports.get(name)?;
                    match self.resolve(m, target, depth + 1)? {
                        (module, true) => module,
                        item => return Some(item), // `Type::assoc`, `Enum::Variant`
                    }
                }
            }
        };
        self.walk(start, rest, depth)
    }

    /// Descends from module `m` along `rest`.
    fn walk(&self, mut m: usize, rest: &[String], depth: u32) -> Option<(usize, bool)> {
        for (k, seg) in rest.iter().enumerate() {
            let module = &self.tree.modules[m];
            if seg == "super" {
                m = module.parent?;
                continue;
            }
            if let Some(&child) = module.children.get(seg) {
                m = child;
                continue;
            }
            if module.defs.contains(seg) {
                return Some((m, false));
            }
            if let Some(target) = module.imports.get(seg) {
                // An import or re-export: on to where the name is defined.
                return match self.resolve(m, target, depth + 1)? {
                    (next, true) => self.walk(next, &rest[k + 1..], depth + 1),
                    item => Some(item),
                };
            }
            for glob in &module.globs {
                if let Some((g, true)) = self.resolve(m, glob, depth + 1) {
                    if self.declares(g, seg) {
                        return self.walk(g, &rest[k..], depth + 1);
                    }
                }
            }
            return Some((m, false)); // not found (a macro, a variant): this module
        }
        Some((m, true))
    }

    /// The deepest module `segs` names by module names alone (no imports
    /// followed), if it starts at a module at all.
    fn direct(&self, m: usize, segs: &[String]) -> Option<usize> {
        let modules = &self.tree.modules;
        let (mut cur, mut rest) = match segs.split_first()? {
            (first, rest) if first == "crate" => (0, rest),
            (first, rest) if first == "self" => (m, rest),
            (first, _) if first == "super" => (m, segs),
            (first, rest) => (*modules[m].children.get(first)?, rest),
        };
        while let Some((seg, tail)) = rest.split_first() {
            match seg.as_str() {
                "super" => cur = modules[cur].parent?,
                name => match modules[cur].children.get(name) {
                    Some(&child) => cur = child,
                    None => break,
                },
            }
            rest = tail;
        }
        Some(cur)
    }

    /// The outermost module of `m`'s file (`m` itself unless `m` is inline).
    fn file_module(&self, mut m: usize) -> usize {
        let modules = &self.tree.modules;
        while let Some(p) = modules[m]
            .parent
            .filter(|&p| modules[p].file == modules[m].file)
        {
            m = p;
        }
        m
    }

    /// Whether module `m` is `ancestor` or below it.
    fn is_below(&self, mut m: usize, ancestor: usize) -> bool {
        loop {
            if m == ancestor {
                return true;
            }
            match self.tree.modules[m].parent {
                Some(p) => m = p,
                None => return false,
            }
        }
    }

    fn declares(&self, m: usize, name: &str) -> bool {
        let module = &self.tree.modules[m];
        module.children.contains_key(name)
            || module.defs.contains(name)
            || module.imports.contains_key(name)
    }
}

/// Strongly connected components of the graph with `nodes` nodes and
/// `edges` (from, to), in Tarjan's algorithm; only those with more than one
/// node (the cycles), each sorted, in order of their smallest node.
///
/// Written out rather than taken from `petgraph`: it is forty lines, and the
/// module graphs are small enough for the recursive form.
pub fn cycles(nodes: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    struct Tarjan<'a> {
        next: Vec<Vec<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: &'a mut Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.counter);
            self.low[v] = self.counter;
            self.counter += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for w in self.next[v].clone() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut scc = Vec::new();
                loop {
                    let w = self.stack.pop().expect("v is on the stack");
                    self.on_stack[w] = false;
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort_unstable();
                    self.out.push(scc);
                }
            }
        }
    }
    let mut next = vec![Vec::new(); nodes];
    for &(from, to) in edges {
        next[from].push(to);
    }
    let mut out = Vec::new();
    let mut t = Tarjan {
        next,
        index: vec![None; nodes],
        low: vec![0; nodes],
        on_stack: vec![false; nodes],
        stack: Vec::new(),
        counter: 0,
        out: &mut out,
    };
    for v in 0..nodes {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    out.sort();
    out
}
