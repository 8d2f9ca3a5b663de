//! Reading one module's items: the names it defines and imports, and every
//! path written in it (in `use` trees, code, types, patterns and macro
//! arguments). Items under `#[cfg(test)]` are skipped: test code may reach
//! anywhere.

use proc_macro2::{Spacing, Span, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, ImplItem, Item, Meta, Token, UseTree, Visibility};

use super::model::{Ref, RefKind, Tree};

/// Records `item`, written in module `module`, into `tree`. `mod` items are
/// the loader's business and must not be passed here.
pub fn item(tree: &mut Tree, module: usize, item: &Item) {
    if let Some(name) = defined_name(item) {
        tree.modules[module].defs.insert(name);
    }
    let mut paths = Paths { tree, module };
    match item {
        Item::Use(u) => paths.use_item(u),
        _ => paths.visit_item(item),
    }
}

/// True when the attributes make the item exist only in test builds
/// (`#[cfg(test)]`, `#[cfg(all(test, …))]`).
pub fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.parse_args::<Meta>().is_ok_and(|m| requires_test(&m))
    })
}

/// The value of a `#[path = "…"]` attribute.
pub fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// The attributes of any item.
pub fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// 1-based line of a span.
pub fn line(span: Span) -> usize {
    span.start().line
}

fn requires_test(meta: &Meta) -> bool {
    let list = |m: &syn::MetaList| {
        m.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            .map(|p| p.into_iter().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    match meta {
        Meta::Path(p) => p.is_ident("test"),
        Meta::List(m) if m.path.is_ident("all") => list(m).iter().any(requires_test),
        Meta::List(m) if m.path.is_ident("any") => {
            let preds = list(m);
            !preds.is_empty() && preds.iter().all(requires_test)
        }
        _ => false,
    }
}

fn defined_name(item: &Item) -> Option<String> {
    let ident = match item {
        Item::Const(i) => &i.ident,
        Item::Enum(i) => &i.ident,
        Item::Fn(i) => &i.sig.ident,
        Item::Macro(i) => i.ident.as_ref()?,
        Item::Static(i) => &i.ident,
        Item::Struct(i) => &i.ident,
        Item::Trait(i) => &i.ident,
        Item::TraitAlias(i) => &i.ident,
        Item::Type(i) => &i.ident,
        Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// Collects the paths of one module's items into the tree.
struct Paths<'t> {
    tree: &'t mut Tree,
    module: usize,
}

impl Paths<'_> {
    fn push(&mut self, segs: Vec<String>, line: usize, kind: RefKind) {
        self.tree.refs.push(Ref {
            module: self.module,
            segs,
            line,
            kind,
            included: None,
        });
    }

    /// A `use` item: one reference and one imported name per leaf.
    fn use_item(&mut self, u: &syn::ItemUse) {
        if u.leading_colon.is_some() {
            return; // `use ::other_crate::…`
        }
        let reexport = !matches!(u.vis, Visibility::Inherited);
        let mut leaves = Vec::new();
        flatten(&u.tree, &mut Vec::new(), &mut leaves);
        for leaf in leaves {
            let module = &mut self.tree.modules[self.module];
            match &leaf.name {
                _ if leaf.glob => module.globs.push(leaf.segs.clone()),
                Some(name) => {
                    module.imports.insert(name.clone(), leaf.segs.clone());
                }
                None => {}
            }
            let kind = RefKind::Use {
                reexport,
                glob: leaf.glob,
            };
            self.push(leaf.segs, leaf.line, kind);
        }
    }

    /// Paths inside a macro's arguments or a `macro_rules!` body, which syn
    /// leaves as tokens: `a::b` sequences of two or more segments not
    /// preceded by `.`, `::` (a path into another crate) or `$` (a
    /// metavariable), except `$crate::a::b`, which counts as `crate::a::b`
    /// written where the macro is defined. A single `:` before a path is a
    /// field's or a fragment's (`$field: crate::a::f(…)`, `S { x: a::X }`):
    /// the path after it counts.
    fn tokens(&mut self, tokens: TokenStream) {
        let toks: Vec<TokenTree> = tokens.into_iter().collect();
        let punct = |i: usize, c: char| matches!(toks.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
        // `::` is two `:` tokens, the first joined to the second.
        let path_sep_before = |i: usize| {
            i >= 2
                && punct(i - 1, ':')
                && matches!(&toks[i - 2], TokenTree::Punct(p) if p.as_char() == ':' && p.spacing() == Spacing::Joint)
        };
        let mut i = 0;
        while i < toks.len() {
            match &toks[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(first) => {
                    let dollar_crate = i > 0 && punct(i - 1, '$') && first == "crate";
                    let after_prefix = i > 0
                        && !dollar_crate
                        && (punct(i - 1, '$') || punct(i - 1, '.') || path_sep_before(i));
                    let mut segs = vec![first.to_string()];
                    while punct(i + 1, ':') && punct(i + 2, ':') {
                        match toks.get(i + 3) {
                            Some(TokenTree::Ident(next)) => segs.push(next.to_string()),
                            _ => break,
                        }
                        i += 3;
                    }
                    if segs.len() > 1 && !after_prefix {
                        self.push(segs, line(first.span()), RefKind::Code);
                    }
                }
                TokenTree::Punct(_) | TokenTree::Literal(_) => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if is_test_only(item_attrs(item)) {
            return;
        }
        match item {
            // A `use` inside a function body: scoped to the block, but it is
            // written in this module and counts as its import.
            Item::Use(u) => self.use_item(u),
            // An exported macro is expanded in other crates: its paths
            // (`$crate::…` included) are theirs, not this module's.
            Item::Macro(m) if m.attrs.iter().any(|a| a.path().is_ident("macro_export")) => {}
            _ => visit::visit_item(self, item),
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        let attrs = match item {
            ImplItem::Const(i) => &i.attrs,
            ImplItem::Fn(i) => &i.attrs,
            ImplItem::Type(i) => &i.attrs,
            ImplItem::Macro(i) => &i.attrs,
            _ => return visit::visit_impl_item(self, item),
        };
        if !is_test_only(attrs) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() {
            if let Some(first) = path.segments.first() {
                let segs = path.segments.iter().map(|s| s.ident.to_string()).collect();
                self.push(segs, line(first.ident.span()), RefKind::Code);
            }
        }
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        self.tokens(mac.tokens.clone());
    }
}

/// One leaf of a `use` tree.
struct Leaf {
    /// The path up to the leaf (for a glob, up to the `*`).
    segs: Vec<String>,
    /// The name it brings into scope (none for globs and `as _`).
    name: Option<String>,
    glob: bool,
    line: usize,
}

fn flatten(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Leaf>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            flatten(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) => out.push(named(prefix, &n.ident, None)),
        UseTree::Rename(r) => {
            let mut leaf = named(prefix, &r.ident, Some(r.rename.to_string()));
            if r.rename == "_" {
                leaf.name = None;
            }
            out.push(leaf);
        }
        UseTree::Glob(g) => out.push(Leaf {
            segs: prefix.clone(),
            name: None,
            glob: true,
            line: line(g.star_token.spans[0]),
        }),
        UseTree::Group(g) => {
            for item in &g.items {
                flatten(item, prefix, out);
            }
        }
    }
}

/// The leaf `prefix::ident` (or `prefix` itself for `prefix::{self}`).
fn named(prefix: &[String], ident: &syn::Ident, rename: Option<String>) -> Leaf {
    let mut segs = prefix.to_vec();
    if ident != "self" {
        segs.push(ident.to_string());
    }
    Leaf {
        name: rename.or_else(|| segs.last().cloned()),
        segs,
        glob: false,
        line: line(ident.span()),
    }
}
