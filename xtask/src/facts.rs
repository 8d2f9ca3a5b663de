//! `cargo xtask check-facts`: every kind and operation number, and every list
//! of operation names, is defined in `rocwasm-ids` and nowhere else.
//!
//! ROCprofiler-SDK's numbers are facts of its ABI: `KERNEL_DISPATCH` is
//! buffer-tracing kind 11 and callback-tracing kind 12, a host-to-device copy
//! is operation 2, `hsa_queue_create` is slot 8 of the HSA core table. The
//! engine, the interception library, the simulated runtime, the output
//! writers and the plugins (built for wasm32, in a workspace of their own)
//! all need them, and a second copy anywhere drifts the day the SDK
//! renumbers (it has). So `rocwasm-ids` holds them once, and this check
//! reads every `.rs` file of the repository except those of `ids/` (both
//! workspaces, `sim/`, `xtask/`, build scripts, `tests/`, `#[cfg(test)]`
//! code; not `target/` or hidden directories) and fails on:
//!
//! 1. an integer `const` or `static` with a literal value named after a kind
//!    (`const KERNEL_DISPATCH: u32 = 11`, also with one of the prefixes
//!    `BUFFER_`, `CALLBACK_`, `EXTERNAL_CORRELATION_`, `KIND_`, `OP_`,
//!    `ROCPROFILER_BUFFER_TRACING_`, `ROCPROFILER_CALLBACK_TRACING_`), a
//!    callback phase or buffer policy (`CALLBACK_PHASE_ENTER`,
//!    `BUFFER_POLICY_LOSSLESS`: these need the prefix), or an event
//!    operation (`HOST_TO_DEVICE`, `MEMORY_COPY_HOST_TO_DEVICE`,
//!    `SCRATCH_FREE`). One-word operation names (`FREE`, `LOAD`, `CREATE`,
//!    `HIP`…) are everyday words: they count only when the constant's
//!    module, type, function, file path or doc comment names the kind
//!    (`scratch`, "code object"), or when the same module, `impl` or
//!    function defines two of that kind's operations;
//! 2. an enum variant with a literal discriminant named after a kind
//!    (`KernelDispatch = 11`; when the number is not one of the kind's, only
//!    in an enum named `…Kind`/`…Tracing…` or with two kind variants), a
//!    phase (`Enter = 1` in a `…Phase` enum), a policy (in a `…Policy` enum)
//!    or an event operation (`HostToDevice = 2`, one-word names as above,
//!    the enum counting as the module). `HostToDevice = copy::HOST_TO_DEVICE`
//!    is the way to write such an enum;
//! 3. a `match` arm from an integer literal to a string that names a kind
//!    (`11 => "KERNEL_DISPATCH"`, under the same condition as enum variants)
//!    or an event operation (`2 => "HOST_TO_DEVICE"`; one-word names when
//!    two arms of the match name that kind's operations), or, when two arms
//!    of the match do, operations of an API list (`3 => "roctxRangePop"`);
//!    and the same arms the other way round (`Some("FREE") => 2`);
//! 4. an array or slice literal in a `const`, `static` or `let` of at least
//!    three names (strings, or `(name, number)` pairs) of which at least
//!    three, and more than half, are the names of one list of `rocwasm-ids`
//!    (HIP runtime API, HIP dispatch table slots, HSA table slots, roctx
//!    markers, an event kind's operations): a second copy of a name list.
//!    Records with more than one string (a function's name and signature)
//!    are not names.
//!
//! Literals inside `assert*!` and `debug_assert*!` macros are test data
//! (`assert_eq!(copy::HOST_TO_DEVICE, 2)`) and are not read. Other macros'
//! arguments are read when they parse as expressions or items (`vec![…]`,
//! `thread_local! { … }`).
//!
//! # Fixing a finding
//!
//! Each finding says what to use instead. Kinds: `rocwasm_ids::kind::buffer`,
//! `callback`, `external_correlation` (raw `u32`s) or the enums
//! (`BufferTracingKind::from_raw(n).map(|k| k.name())` instead of a `match`);
//! event operations: `rocwasm_ids::ops::copy::HOST_TO_DEVICE`,
//! `copy::short_name(op)`, `rocwasm_ids::operation_name(kind, op)`; lists:
//! `rocwasm_ids::ops::HIP_RUNTIME_API`, `rocwasm_ids::hsa_table::*`,
//! `rocwasm_ids::hip_table::*`. An enum that must exist keeps its variants
//! and takes the numbers from ids: `HostToDevice = copy::HOST_TO_DEVICE`.
//! Another ABI's numbers that share a name (`hipMemcpyKind`'s
//! `hipMemcpyHostToDevice` = 1) get that ABI's name
//! (`HIP_MEMCPY_HOST_TO_DEVICE`). There is no allow-list.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use rocwasm_ids::kind::{buffer, callback, external_correlation, phase};
use rocwasm_ids::ops::{
    allocation, code_object, copy, hip_stream, kernel_dispatch, runtime_init, scratch,
};
use rocwasm_ids::{hip_table, hsa_table, ops, BufferPolicy};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, Expr, Lit, Pat, Token, Type};

use crate::layers::collect::line;
use crate::layers::tree::{relative, rust_files};

/// Checks every `.rs` file under `root` outside `ids/`; prints each finding
/// and fails if there is one.
pub fn check(root: &Path) -> Result<()> {
    let scan = scan(root)?;
    for finding in &scan.findings {
        println!("{finding}");
    }
    if !scan.findings.is_empty() {
        bail!(
            "{} fact(s) defined outside rocwasm-ids; see above",
            scan.findings.len()
        );
    }
    println!(
        "facts: {} files, every kind and operation number lives in rocwasm-ids",
        scan.files
    );
    Ok(())
}

/// What a scan found.
struct Scan {
    /// `.rs` files read.
    files: usize,
    findings: Vec<Finding>,
}

/// One fact defined outside rocwasm-ids.
#[derive(Debug)]
struct Finding {
    /// Relative to the scanned root.
    file: String,
    line: usize,
    /// What is there and what to use instead.
    text: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.text)
    }
}

/// Reads every `.rs` file under `root` except those under `root/ids`.
fn scan(root: &Path) -> Result<Scan> {
    let root = root
        .canonicalize()
        .with_context(|| format!("cannot open {}", root.display()))?;
    let ids = root.join("ids");
    let facts = Facts::new();
    let mut scan = Scan {
        files: 0,
        findings: Vec::new(),
    };
    for path in rust_files(&root)? {
        if path.starts_with(&ids) {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let file =
            syn::parse_file(&text).with_context(|| format!("cannot parse {}", path.display()))?;
        let shown = relative(&root, &path);
        scan.files += 1;
        let found = FileFacts::read(&facts, &shown, &file);
        scan.findings
            .extend(found.into_iter().map(|(line, text)| Finding {
                file: shown.clone(),
                line,
                text,
            }));
    }
    Ok(scan)
}

// ---------------------------------------------------------------------------
// What rocwasm-ids defines, in the shapes the rules look for.

/// One of the kind enums' `u32` tables.
struct KindTable {
    /// `rocwasm_ids::kind::<module>`.
    module: &'static str,
    /// `buffer-tracing kind`.
    what: &'static str,
    /// The enum, for messages about `match`es: `BufferTracingKind`.
    enum_name: &'static str,
    entries: &'static [(u32, &'static str)],
}

const KIND_TABLES: [KindTable; 3] = [
    KindTable {
        module: "buffer",
        what: "buffer-tracing kind",
        enum_name: "BufferTracingKind",
        entries: buffer::TABLE,
    },
    KindTable {
        module: "callback",
        what: "callback-tracing kind",
        enum_name: "CallbackTracingKind",
        entries: callback::TABLE,
    },
    KindTable {
        module: "external_correlation",
        what: "external-correlation kind",
        enum_name: "ExternalCorrelationKind",
        entries: external_correlation::TABLE,
    },
];

/// Prefixes stripped from a constant's name (or a `match` arm's string)
/// before comparing it with kind and operation names, and the kind table
/// the prefix implies, if any.
const PREFIXES: [(&str, Option<usize>); 9] = [
    ("ROCPROFILER_BUFFER_TRACING_", Some(0)),
    ("ROCPROFILER_CALLBACK_TRACING_", Some(1)),
    ("ROCPROFILER_EXTERNAL_CORRELATION_REQUEST_", Some(2)),
    ("ROCPROFILER_", None),
    ("BUFFER_", Some(0)),
    ("CALLBACK_", Some(1)),
    ("EXTERNAL_CORRELATION_", Some(2)),
    ("KIND_", None),
    ("OP_", None),
];

/// Callback phases and buffer policies have everyday names (`ENTER`,
/// `DISCARD`): they count only with one of these prefixes, or in an enum
/// whose name contains the word.
struct Prefixed {
    prefixes: &'static [&'static str],
    /// Word an enum's name must contain for its variants to count.
    enum_word: &'static str,
    what: &'static str,
    /// (SCREAMING name, what to use instead)
    entries: Vec<(&'static str, String)>,
}

/// An event kind's operations: `rocwasm_ids::ops::<module>`.
struct EventOps {
    module: &'static str,
    /// `MEMORY_COPY`.
    kind: String,
    /// `memory_copy`, for matching context.
    kind_lower: String,
    /// `memory-copy operation`.
    what: String,
    /// Short names (`HOST_TO_DEVICE`), entry `i` is operation `i + 1`.
    shorts: Vec<&'static str>,
    names: &'static [&'static str],
}

/// A list of operation names.
struct NameList {
    path: String,
    names: HashSet<&'static str>,
    /// For event kinds, the short names count too.
    shorts: HashSet<&'static str>,
}

struct Facts {
    phase: Prefixed,
    policy: Prefixed,
    events: Vec<EventOps>,
    lists: Vec<NameList>,
}

type ShortName = fn(u32) -> Option<&'static str>;

impl Facts {
    fn new() -> Self {
        let event_modules: [(&'static str, &'static [&'static str], ShortName); 7] = [
            ("copy", copy::NAMES, copy::short_name),
            (
                "kernel_dispatch",
                kernel_dispatch::NAMES,
                kernel_dispatch::short_name,
            ),
            ("allocation", allocation::NAMES, allocation::short_name),
            ("scratch", scratch::NAMES, scratch::short_name),
            (
                "runtime_init",
                runtime_init::NAMES,
                runtime_init::short_name,
            ),
            ("code_object", code_object::NAMES, code_object::short_name),
            ("hip_stream", hip_stream::NAMES, hip_stream::short_name),
        ];
        let events: Vec<EventOps> = event_modules
            .into_iter()
            .map(|(module, names, short_name)| {
                let shorts: Vec<&'static str> = (1..=names.len() as u32)
                    .map(|op| short_name(op).expect("every operation has a short name"))
                    .collect();
                // `MEMORY_COPY_HOST_TO_HOST` minus `_HOST_TO_HOST`.
                let kind = names[0]
                    .strip_suffix(shorts[0])
                    .and_then(|k| k.strip_suffix('_'))
                    .expect("an operation name is <KIND>_<SHORT>")
                    .to_string();
                let kind_lower = kind.to_lowercase();
                EventOps {
                    module,
                    what: format!("{} operation", kind_lower.replace('_', "-")),
                    kind,
                    kind_lower,
                    shorts,
                    names,
                }
            })
            .collect();
        let mut lists: Vec<NameList> = [
            ("ops::HIP_RUNTIME_API", &ops::HIP_RUNTIME_API[..]),
            ("hip_table::RUNTIME_SLOTS", &hip_table::RUNTIME_SLOTS[..]),
            ("hip_table::COMPILER_SLOTS", &hip_table::COMPILER_SLOTS[..]),
            ("hsa_table::CORE_API_TABLE", &hsa_table::CORE_API_TABLE[..]),
            ("hsa_table::AMD_EXT_TABLE", &hsa_table::AMD_EXT_TABLE[..]),
            (
                "hsa_table::IMAGE_EXT_TABLE",
                &hsa_table::IMAGE_EXT_TABLE[..],
            ),
            (
                "hsa_table::FINALIZER_EXT_TABLE",
                &hsa_table::FINALIZER_EXT_TABLE[..],
            ),
            ("ops::MARKER_CORE_API", ops::MARKER_CORE_API),
            ("ops::MARKER_CONTROL_API", ops::MARKER_CONTROL_API),
            ("ops::MARKER_NAME_API", ops::MARKER_NAME_API),
            ("ops::MARKER_CORE_RANGE_API", ops::MARKER_CORE_RANGE_API),
        ]
        .into_iter()
        .map(|(path, names)| NameList {
            path: format!("rocwasm_ids::{path}"),
            names: names.iter().copied().collect(),
            shorts: HashSet::new(),
        })
        .collect();
        lists.extend(events.iter().map(|e| NameList {
            path: format!("rocwasm_ids::ops::{}::NAMES", e.module),
            names: e.names.iter().copied().collect(),
            shorts: e.shorts.iter().copied().collect(),
        }));
        // Exhaustive: a policy added to ids does not compile until it is here.
        let policy = |p: BufferPolicy| match p {
            BufferPolicy::Lossless => ("LOSSLESS", "rocwasm_ids::BufferPolicy::Lossless"),
            BufferPolicy::Discard => ("DISCARD", "rocwasm_ids::BufferPolicy::Discard"),
        };
        Facts {
            phase: Prefixed {
                prefixes: &["ROCPROFILER_CALLBACK_PHASE_", "CALLBACK_PHASE_", "PHASE_"],
                enum_word: "phase",
                what: "callback phase",
                entries: phase::TABLE
                    .iter()
                    .map(|&(_, name)| (name, format!("rocwasm_ids::kind::phase::{name}")))
                    .collect(),
            },
            policy: Prefixed {
                prefixes: &["ROCPROFILER_BUFFER_POLICY_", "BUFFER_POLICY_", "POLICY_"],
                enum_word: "policy",
                what: "buffer policy",
                entries: [BufferPolicy::Lossless, BufferPolicy::Discard]
                    .into_iter()
                    .map(|p| {
                        let (name, path) = policy(p);
                        (name, path.to_string())
                    })
                    .collect(),
            },
            events,
            lists,
        }
    }

    /// The kind tables naming `name` (a SCREAMING name, prefixes allowed),
    /// in table order, only the one a prefix implies if it does:
    /// `(table, number in that table)`.
    fn kinds(&self, name: &str) -> Vec<(usize, u32)> {
        let mut found = Vec::new();
        for (rest, implied) in strip_prefixes(name) {
            for (t, table) in KIND_TABLES.iter().enumerate() {
                if implied.is_some_and(|i| i != t) {
                    continue;
                }
                if let Some(&(n, _)) = table.entries.iter().find(|(_, k)| *k == rest) {
                    if !found.iter().any(|&(ft, _)| ft == t) {
                        found.push((t, n));
                    }
                }
            }
        }
        found
    }

    /// The event operations `name` (SCREAMING, prefixes allowed) names.
    fn operations(&self, name: &str) -> Vec<OpMatch> {
        let mut found = Vec::new();
        for (rest, _) in strip_prefixes(name) {
            for (e, ops) in self.events.iter().enumerate() {
                for (i, &short) in ops.shorts.iter().enumerate() {
                    let full = rest.len() > short.len()
                        && rest.ends_with(short)
                        && rest[..rest.len() - short.len()]
                            .strip_suffix('_')
                            .is_some_and(|head| {
                                head == ops.kind || head.eq_ignore_ascii_case(ops.module)
                            });
                    let bare = rest == short;
                    if (full || bare) && !found.iter().any(|m: &OpMatch| m.event == e && m.op == i)
                    {
                        found.push(OpMatch {
                            event: e,
                            op: i,
                            full,
                            // A multi-word short name is distinctive enough.
                            strong: full || short.contains('_'),
                        });
                    }
                }
            }
        }
        found
    }

    /// The phase or policy `name` names with one of its prefixes, or (in an
    /// enum whose name has the word) without.
    fn prefixed(&self, name: &str, enum_name: Option<&str>) -> Option<(&Prefixed, &str)> {
        [&self.phase, &self.policy].into_iter().find_map(|p| {
            let bare = enum_name.is_some_and(|e| e.to_lowercase().contains(p.enum_word));
            let rest = p
                .prefixes
                .iter()
                .find_map(|pre| name.strip_prefix(pre))
                .or(bare.then_some(name))?;
            let (_, instead) = p.entries.iter().find(|(n, _)| *n == rest)?;
            Some((p, instead.as_str()))
        })
    }
}

/// `name` itself and `name` without each matching prefix, with the kind
/// table the prefix implies (`ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH`
/// gives `KERNEL_DISPATCH` of the buffer table, `OP_MEMORY_COPY_…` gives
/// `MEMORY_COPY_…`).
fn strip_prefixes(name: &str) -> Vec<(&str, Option<usize>)> {
    let mut out = vec![(name, None)];
    for (prefix, implied) in PREFIXES {
        if let Some(rest) = name.strip_prefix(prefix) {
            out.push((rest, implied));
        }
    }
    out
}

/// A name that names an event operation.
#[derive(Clone, Copy)]
struct OpMatch {
    /// Index into [`Facts::events`].
    event: usize,
    /// Index into its `shorts` (operation `op + 1`).
    op: usize,
    /// `MEMORY_COPY_HOST_TO_DEVICE`, not just `HOST_TO_DEVICE`.
    full: bool,
    /// Counts without context.
    strong: bool,
}

// ---------------------------------------------------------------------------
// Reading one file.

/// Something in a group (a module's constants, an enum's variants, a
/// `match`'s arms) that may name an event operation.
struct Candidate {
    line: usize,
    /// `const HOST_TO_DEVICE = 2`, `enum variant HostToDevice = 2`,
    /// `match arm 2 => "HOST_TO_DEVICE"`.
    shown: String,
    matches: Vec<OpMatch>,
    /// Enclosing names and doc comment, lowercase snake.
    context: String,
    how: How,
}

/// A `match` arm between numbers and a name.
struct NameArm<'a> {
    /// The numbers, each with the line to report.
    numbers: Vec<(u128, usize)>,
    name: &'a syn::LitStr,
    /// Name → number (`Some("FREE") => 2`).
    reverse: bool,
}

/// Which rule found a candidate: decides the message.
#[derive(Clone, Copy)]
enum How {
    Constant,
    Variant,
    /// Number → name.
    Arm,
    /// Name → number.
    ReverseArm,
}

/// The findings of one file.
struct FileFacts<'a> {
    facts: &'a Facts,
    /// Enclosing path components, modules, types, traits and functions,
    /// lowercase snake.
    context: Vec<String>,
    /// The current module, `impl`, trait or function: constants are grouped by it.
    scope: usize,
    scopes: usize,
    /// Integer constants with literal values naming operations, by scope.
    constants: BTreeMap<usize, Vec<Candidate>>,
    /// Inside the value of a `const`, `static` or `let`.
    in_binding: usize,
    findings: Vec<(usize, String)>,
}

impl<'a> FileFacts<'a> {
    fn read(facts: &'a Facts, shown: &str, file: &syn::File) -> Vec<(usize, String)> {
        let path = shown.strip_suffix(".rs").unwrap_or(shown);
        let context = path
            .split(['/', '\\'])
            .filter(|c| !matches!(*c, "src" | "mod" | "lib" | "main"))
            .map(snake)
            .collect();
        let mut reader = FileFacts {
            facts,
            context,
            scope: 0,
            scopes: 1,
            constants: BTreeMap::new(),
            in_binding: 0,
            findings: Vec::new(),
        };
        reader.visit_file(file);
        let constants = std::mem::take(&mut reader.constants);
        for group in constants.values() {
            reader.operations_in(group);
        }
        reader.findings.sort();
        reader.findings.dedup();
        reader.findings
    }

    /// Visits `f` inside a new scope named `name`.
    fn scoped(&mut self, name: &str, f: impl FnOnce(&mut Self)) {
        let outer = self.scope;
        self.scope = self.scopes;
        self.scopes += 1;
        self.context.push(snake(name));
        f(self);
        self.context.pop();
        self.scope = outer;
    }

    fn context_with(&self, attrs: &[Attribute]) -> String {
        let mut text = self.context.join("/");
        text.push('/');
        text.push_str(&doc(attrs));
        text
    }

    /// Rule 1: `const NAME: <integer> = <literal>` (or `static`).
    fn constant(
        &mut self,
        keyword: &str,
        attrs: &[Attribute],
        ident: &syn::Ident,
        ty: &Type,
        value: &Expr,
    ) {
        let Some(number) = int_literal(value) else {
            return;
        };
        if !is_integer(ty) {
            return;
        }
        let name = ident.to_string();
        let line = line(ident.span());
        let shown = format!("{keyword} {name} = {number}");
        if let Some(&(t, n)) = self.kind_for_number(&name, number).first() {
            let table = &KIND_TABLES[t];
            let (_, sdk) = table.entries.iter().find(|(v, _)| *v == n).expect("listed");
            self.findings.push((
                line,
                format!(
                    "{shown} defines a {} number; use rocwasm_ids::kind::{}::{sdk}",
                    table.what, table.module
                ),
            ));
            return;
        }
        if let Some((p, instead)) = self.facts.prefixed(&name, None) {
            let what = p.what;
            let instead = instead.to_string();
            self.findings.push((
                line,
                format!("{shown} defines a {what} number; use {instead}"),
            ));
            return;
        }
        let matches = self.facts.operations(&name);
        if !matches.is_empty() {
            let candidate = Candidate {
                line,
                shown,
                matches,
                context: self.context_with(attrs),
                how: How::Constant,
            };
            self.constants
                .entry(self.scope)
                .or_default()
                .push(candidate);
        }
    }

    /// The kind tables naming `name`; the one whose number is `number`
    /// first, unless a prefix chose the table.
    fn kind_for_number(&self, name: &str, number: u128) -> Vec<(usize, u32)> {
        let mut kinds = self.facts.kinds(name);
        let prefixed = strip_prefixes(name).iter().any(|(_, t)| t.is_some());
        if !prefixed {
            kinds.sort_by_key(|&(_, n)| u128::from(n) != number);
        }
        kinds
    }

    /// Reports the candidates of one group that name an operation: strong
    /// names always, one-word names when their context names the kind or
    /// the group holds two of its operations.
    fn operations_in(&mut self, group: &[Candidate]) {
        let mut per_event: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
        for m in group.iter().flat_map(|c| &c.matches) {
            per_event.entry(m.event).or_default().insert(m.op);
        }
        for c in group {
            let chosen = c.matches.iter().find(|m| {
                let e = &self.facts.events[m.event];
                m.strong
                    || per_event[&m.event].len() >= 2
                    || c.context.contains(e.module)
                    || c.context.contains(&e.kind_lower)
            });
            let Some(m) = chosen else { continue };
            let e = &self.facts.events[m.event];
            let short = e.shorts[m.op];
            let text = match c.how {
                How::Constant => format!(
                    "{} defines a {} number; use rocwasm_ids::ops::{}::{short}",
                    c.shown, e.what, e.module
                ),
                How::Variant => format!(
                    "{} defines a {} number; use rocwasm_ids::ops::{}::{short} as the discriminant",
                    c.shown, e.what, e.module
                ),
                How::Arm if m.full => format!(
                    "{} names a {} by its number; use rocwasm_ids::ops::{}::NAMES \
                     (or rocwasm_ids::operation_name)",
                    c.shown, e.what, e.module
                ),
                How::Arm => format!(
                    "{} names a {} by its number; use rocwasm_ids::ops::{}::short_name",
                    c.shown, e.what, e.module
                ),
                How::ReverseArm => format!(
                    "{} numbers a {} by its name; use rocwasm_ids::ops::{}::{short}",
                    c.shown, e.what, e.module
                ),
            };
            self.findings.push((c.line, text));
        }
    }

    /// Rule 2: enum variants with literal discriminants.
    fn enumeration(&mut self, item: &syn::ItemEnum) {
        let enum_name = item.ident.to_string();
        let variants: Vec<(&syn::Variant, u128)> = item
            .variants
            .iter()
            .filter_map(|v| Some((v, int_literal(&v.discriminant.as_ref()?.1)?)))
            .collect();
        let kind_variants = variants
            .iter()
            .filter(|(v, _)| {
                !self
                    .facts
                    .kinds(&screaming(&v.ident.to_string()))
                    .is_empty()
            })
            .count();
        let kind_enum = {
            let lower = enum_name.to_lowercase();
            lower.contains("kind") || lower.contains("tracing")
        };
        let mut candidates = Vec::new();
        let context = format!("{}/{}", self.context_with(&item.attrs), snake(&enum_name));
        for (v, number) in variants {
            let variant = v.ident.to_string();
            let name = screaming(&variant);
            let line = line(v.ident.span());
            let shown = format!("enum variant {variant} = {number}");
            let kinds = self.kind_for_number(&name, number);
            if let Some(&(t, n)) = kinds.first() {
                if u128::from(n) == number || kind_variants >= 2 || kind_enum {
                    let table = &KIND_TABLES[t];
                    let (_, sdk) = table.entries.iter().find(|(v, _)| *v == n).expect("listed");
                    self.findings.push((
                        line,
                        format!(
                            "{shown} defines a {} number; use rocwasm_ids::{} \
                             (or rocwasm_ids::kind::{}::{sdk} as the discriminant)",
                            table.what, table.enum_name, table.module
                        ),
                    ));
                    continue;
                }
            }
            if let Some((p, instead)) = self.facts.prefixed(&name, Some(&enum_name)) {
                let text = format!("{shown} defines a {} number; use {instead}", p.what);
                self.findings.push((line, text));
                continue;
            }
            let matches = self.facts.operations(&name);
            if !matches.is_empty() {
                candidates.push(Candidate {
                    line,
                    shown,
                    matches,
                    context: format!("{context}/{}", doc(&v.attrs)),
                    how: How::Variant,
                });
            }
        }
        self.operations_in(&candidates);
    }

    /// Rule 3: `match` arms from integer literals to names, and back.
    fn arms(&mut self, m: &syn::ExprMatch) {
        let arms: Vec<NameArm> = m
            .arms
            .iter()
            .filter_map(|arm| {
                if let Some(name) = pattern_string(&arm.pat) {
                    let number = int_result(&arm.body)?;
                    let numbers = vec![(number, line(name.span()))];
                    return Some(NameArm {
                        numbers,
                        name,
                        reverse: true,
                    });
                }
                let numbers = pattern_numbers(&arm.pat);
                let name = string_result(&arm.body)?;
                (!numbers.is_empty()).then_some(NameArm {
                    numbers,
                    name,
                    reverse: false,
                })
            })
            .collect();
        if arms.is_empty() {
            return;
        }
        let kind_arms = arms
            .iter()
            .filter(|a| !self.facts.kinds(&a.name.value().to_uppercase()).is_empty())
            .count();
        let mut per_list: BTreeMap<usize, usize> = BTreeMap::new();
        for arm in &arms {
            let value = arm.name.value();
            for (i, list) in self.facts.lists.iter().enumerate() {
                // Event kinds' names are operations' names: handled below.
                if list.shorts.is_empty() && list.names.contains(value.as_str()) {
                    *per_list.entry(i).or_default() += 1;
                }
            }
        }
        let context = self.context.join("/");
        let mut candidates = Vec::new();
        for &NameArm {
            ref numbers,
            name,
            reverse,
        } in &arms
        {
            let value = name.value();
            // rocprofv3's files write kinds in lowercase: `kernel_dispatch`.
            let upper = value.to_uppercase();
            for &(number, line) in numbers {
                let shown = match reverse {
                    false => format!("match arm {number} => {value:?}"),
                    true => format!("match arm {value:?} => {number}"),
                };
                let kinds = self.kind_for_number(&upper, number);
                if let Some(&(t, n)) = kinds.first() {
                    if u128::from(n) == number || kind_arms >= 2 {
                        let table = &KIND_TABLES[t];
                        let text = match reverse {
                            false => format!(
                                "{shown} names a {} by its number; use rocwasm_ids::{}::from_raw(n).map(|k| k.name())",
                                table.what, table.enum_name
                            ),
                            true => format!(
                                "{shown} numbers a {} by its name; use rocwasm_ids::{}::from_name(name)",
                                table.what, table.enum_name
                            ),
                        };
                        self.findings.push((line, text));
                        continue;
                    }
                }
                let matches = self.facts.operations(&upper);
                if !matches.is_empty() {
                    candidates.push(Candidate {
                        line,
                        shown,
                        matches,
                        context: context.clone(),
                        how: if reverse { How::ReverseArm } else { How::Arm },
                    });
                    continue;
                }
                let list = per_list
                    .iter()
                    .filter(|&(_, &count)| count >= 2)
                    .map(|(&i, _)| &self.facts.lists[i])
                    .find(|l| l.names.contains(value.as_str()));
                if let Some(list) = list {
                    let text = match reverse {
                        false => format!(
                            "{shown} names an operation of {} by its number; use rocwasm_ids::operation_name",
                            list.path
                        ),
                        true => format!(
                            "{shown} numbers an operation of {} by its name; use rocwasm_ids::operation_by_name",
                            list.path
                        ),
                    };
                    self.findings.push((line, text));
                }
            }
        }
        self.operations_in(&candidates);
    }

    /// Rule 4: a literal list of names (`[…]`, `vec![…]`, starting on
    /// `line`) that copies one of ids's lists.
    fn array<'e>(&mut self, elems: impl IntoIterator<Item = &'e Expr>, line: usize) {
        let strings: Vec<String> = elems
            .into_iter()
            .filter_map(|e| match unparen(e) {
                // `("HOST_TO_DEVICE", 2)` is a name with its number; a tuple
                // with more (`("__hipRegisterVar", "void", &[…])`) is a record
                // about the function, not a copy of a list.
                Expr::Tuple(t) => {
                    let mut strings = t.elems.iter().filter_map(string_literal);
                    let name = strings.next()?;
                    let rest_numbers = t
                        .elems
                        .iter()
                        .all(|e| string_literal(e).is_some() || int_literal(e).is_some());
                    (strings.next().is_none() && rest_numbers).then_some(name)
                }
                other => string_literal(other),
            })
            .map(|s| s.value())
            .collect();
        if strings.len() < 3 {
            return;
        }
        let best = self
            .facts
            .lists
            .iter()
            .map(|list| {
                let hits = strings
                    .iter()
                    .filter(|s| list.names.contains(s.as_str()) || list.shorts.contains(s.as_str()))
                    .count();
                (hits, list)
            })
            .fold(
                None,
                |best: Option<(usize, &NameList)>, (hits, list)| match best {
                    Some((b, _)) if b >= hits => best,
                    _ => Some((hits, list)),
                },
            );
        if let Some((hits, list)) = best {
            if hits >= 3 && hits * 2 > strings.len() {
                self.findings.push((
                    line,
                    format!(
                        "a list of {} names, {hits} of them from {}, copies an operation-name list; use {}",
                        strings.len(),
                        list.path,
                        list.path
                    ),
                ));
            }
        }
    }

    /// In a binding's value: arrays there are name lists.
    fn binding(&mut self, value: &Expr) {
        self.in_binding += 1;
        self.visit_expr(value);
        self.in_binding -= 1;
    }
}

impl<'ast> Visit<'ast> for FileFacts<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        self.scoped(&m.ident.to_string(), |s| visit::visit_item_mod(s, m));
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let name = match &*i.self_ty {
            Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.scoped(&name.unwrap_or_default(), |s| visit::visit_item_impl(s, i));
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.scoped(&t.ident.to_string(), |s| visit::visit_item_trait(s, t));
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.scoped(&f.sig.ident.to_string(), |s| visit::visit_item_fn(s, f));
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.scoped(&f.sig.ident.to_string(), |s| {
            visit::visit_impl_item_fn(s, f)
        });
    }

    fn visit_item_const(&mut self, c: &'ast syn::ItemConst) {
        self.constant("const", &c.attrs, &c.ident, &c.ty, &c.expr);
        self.binding(&c.expr);
    }

    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        self.constant("static", &s.attrs, &s.ident, &s.ty, &s.expr);
        self.binding(&s.expr);
    }

    fn visit_impl_item_const(&mut self, c: &'ast syn::ImplItemConst) {
        self.constant("const", &c.attrs, &c.ident, &c.ty, &c.expr);
        self.binding(&c.expr);
    }

    fn visit_trait_item_const(&mut self, c: &'ast syn::TraitItemConst) {
        if let Some((_, value)) = &c.default {
            self.constant("const", &c.attrs, &c.ident, &c.ty, value);
            self.binding(value);
        }
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        self.visit_pat(&l.pat);
        if let Some(init) = &l.init {
            self.binding(&init.expr);
            if let Some((_, diverge)) = &init.diverge {
                self.visit_expr(diverge);
            }
        }
    }

    fn visit_item_enum(&mut self, e: &'ast syn::ItemEnum) {
        self.enumeration(e);
        visit::visit_item_enum(self, e);
    }

    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        self.arms(m);
        visit::visit_expr_match(self, m);
    }

    fn visit_expr_array(&mut self, a: &'ast syn::ExprArray) {
        if self.in_binding > 0 {
            self.array(&a.elems, line(a.bracket_token.span.open()));
        }
        visit::visit_expr_array(self, a);
    }

    fn visit_item_macro(&mut self, m: &'ast syn::ItemMacro) {
        // `macro_rules!` bodies are token patterns, not code.
        if !m.mac.path.is_ident("macro_rules") {
            self.visit_macro(&m.mac);
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let name = mac
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if name.starts_with("assert") || name.starts_with("debug_assert") {
            return; // test data
        }
        let parser = Punctuated::<Expr, Token![,]>::parse_terminated;
        if let Ok(exprs) = mac.parse_body_with(parser) {
            if name == "vec" && self.in_binding > 0 {
                let at = mac.path.segments.last().map_or(0, |s| line(s.ident.span()));
                self.array(&exprs, at);
            }
            for e in &exprs {
                self.visit_expr(e);
            }
        } else if let Ok(file) = mac.parse_body::<syn::File>() {
            self.visit_file(&file);
        }
    }
}

// ---------------------------------------------------------------------------
// Syntax helpers.

/// `e` without parentheses and invisible groups.
fn unparen(mut e: &Expr) -> &Expr {
    loop {
        match e {
            Expr::Paren(p) => e = &p.expr,
            Expr::Group(g) => e = &g.expr,
            _ => return e,
        }
    }
}

/// The value of an integer literal, also parenthesised or cast (`11 as u32`).
fn int_literal(e: &Expr) -> Option<u128> {
    match unparen(e) {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        Expr::Cast(c) => int_literal(&c.expr),
        _ => None,
    }
}

fn string_literal(e: &Expr) -> Option<&syn::LitStr> {
    match unparen(e) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        _ => None,
    }
}

/// The string a `match` arm evaluates to: `"X"`, `{ "X" }`, `Some("X")`
/// or `Ok("X")`.
fn string_result(e: &Expr) -> Option<&syn::LitStr> {
    match unparen(e) {
        Expr::Block(b) => match b.block.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => string_result(e),
            _ => None,
        },
        Expr::Call(c) if c.args.len() == 1 => match unparen(&c.func) {
            Expr::Path(p) if p.path.is_ident("Some") || p.path.is_ident("Ok") => {
                string_literal(&c.args[0])
            }
            _ => None,
        },
        other => string_literal(other),
    }
}

/// The integer a `match` arm evaluates to: `2`, `{ 2 }`, `Some(2)`.
fn int_result(e: &Expr) -> Option<u128> {
    match unparen(e) {
        Expr::Block(b) => match b.block.stmts.as_slice() {
            [syn::Stmt::Expr(e, None)] => int_result(e),
            _ => None,
        },
        Expr::Call(c) if c.args.len() == 1 => match unparen(&c.func) {
            Expr::Path(p) if p.path.is_ident("Some") || p.path.is_ident("Ok") => {
                int_literal(&c.args[0])
            }
            _ => None,
        },
        other => int_literal(other),
    }
}

/// The string a pattern matches: `"X"`, `Some("X")`.
fn pattern_string(p: &Pat) -> Option<&syn::LitStr> {
    match p {
        Pat::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        Pat::TupleStruct(t) if t.elems.len() == 1 && t.path.is_ident("Some") => {
            pattern_string(&t.elems[0])
        }
        Pat::Paren(p) => pattern_string(&p.pat),
        _ => None,
    }
}

/// Integer literals of a pattern (`2`, `2 | 3`) with their lines.
fn pattern_numbers(p: &Pat) -> Vec<(u128, usize)> {
    match p {
        Pat::Lit(l) => match &l.lit {
            Lit::Int(i) => i
                .base10_parse()
                .ok()
                .map(|n| vec![(n, line(i.span()))])
                .unwrap_or_default(),
            _ => Vec::new(),
        },
        Pat::Or(o) => o.cases.iter().flat_map(pattern_numbers).collect(),
        Pat::Paren(p) => pattern_numbers(&p.pat),
        _ => Vec::new(),
    }
}

/// An integer type: a primitive or a C alias (`c_int`, `libc::c_uint`).
fn is_integer(ty: &Type) -> bool {
    const INTEGERS: [&str; 24] = [
        "u8",
        "u16",
        "u32",
        "u64",
        "u128",
        "usize",
        "i8",
        "i16",
        "i32",
        "i64",
        "i128",
        "isize",
        "c_char",
        "c_schar",
        "c_uchar",
        "c_short",
        "c_ushort",
        "c_int",
        "c_uint",
        "c_long",
        "c_ulong",
        "c_longlong",
        "c_ulonglong",
        "size_t",
    ];
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| INTEGERS.contains(&s.ident.to_string().as_str())),
        Type::Paren(p) => is_integer(&p.elem),
        Type::Group(g) => is_integer(&g.elem),
        _ => false,
    }
}

/// The text of the `///` comments, lowercase snake (`memory_copy`).
fn doc(attrs: &[Attribute]) -> String {
    let mut text = String::new();
    for attr in attrs {
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if nv.path.is_ident("doc") {
                if let Some(s) = string_literal(&nv.value) {
                    text.push_str(&s.value());
                    text.push(' ');
                }
            }
        }
    }
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// `HostToDevice` → `HOST_TO_DEVICE`; `HSACoreApi` → `HSA_CORE_API`;
/// `HOST_TO_DEVICE` stays.
fn screaming(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev != '_'
                && (prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next_lower))
            {
                out.push('_');
            }
        }
        out.extend(c.to_uppercase());
    }
    out
}

/// `ScratchOps` → `scratch_ops`; `memcpy-bandwidth` → `memcpy_bandwidth`.
fn snake(name: &str) -> String {
    screaming(name).to_lowercase().replace('-', "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with `files`, scanned.
    fn scanned(files: &[(&str, &str)]) -> Scan {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        scan(dir.path()).unwrap()
    }

    /// The findings in `files`, as `file:line: text` lines.
    fn findings(files: &[(&str, &str)]) -> Vec<String> {
        let scan = scanned(files);
        assert_eq!(scan.files, files.len());
        scan.findings.iter().map(ToString::to_string).collect()
    }

    fn one(path: &str, text: &str) -> Vec<String> {
        findings(&[(path, text)])
    }

    #[test]
    fn a_kind_constant_is_reported_with_its_table_and_line() {
        let text = "//! Kinds.\n\npub const KERNEL_DISPATCH: u32 = 11;\n";
        assert_eq!(
            one("host/x/src/y.rs", text),
            ["host/x/src/y.rs:3: const KERNEL_DISPATCH = 11 defines a buffer-tracing kind number; \
              use rocwasm_ids::kind::buffer::KERNEL_DISPATCH"]
        );
        // The number picks the table; a prefix chooses it.
        let text =
            "const KIND_KERNEL_DISPATCH: u64 = 12;\nstatic CALLBACK_HIP_RUNTIME_API: usize = 99;\n";
        assert_eq!(
            one("a.rs", text),
            [
                "a.rs:1: const KIND_KERNEL_DISPATCH = 12 defines a callback-tracing kind number; \
                 use rocwasm_ids::kind::callback::KERNEL_DISPATCH",
                "a.rs:2: static CALLBACK_HIP_RUNTIME_API = 99 defines a callback-tracing kind number; \
                 use rocwasm_ids::kind::callback::HIP_RUNTIME_API",
            ]
        );
    }

    #[test]
    fn operation_constants_are_reported_and_everyday_words_need_context() {
        let text = "mod memory {\n    const HOST_TO_DEVICE: std::ffi::c_int = 2;\n}\n";
        assert_eq!(
            one("sim/m.rs", text),
            [
                "sim/m.rs:2: const HOST_TO_DEVICE = 2 defines a memory-copy operation number; \
              use rocwasm_ids::ops::copy::HOST_TO_DEVICE"
            ]
        );
        // One everyday word alone is nothing; two of a kind are a copy.
        assert!(one("a.rs", "const FREE: u32 = 3;\nconst LOAD: u32 = 1;\n").is_empty());
        let text = "impl Stream {\n    const CREATE: u32 = 1;\n    const DESTROY: u32 = 2;\n}\n";
        let found = one("a.rs", text);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("a.rs:2: const CREATE = 1 defines a hip-stream operation number; use rocwasm_ids::ops::hip_stream::CREATE"));
        // So is one whose module or doc names the kind.
        let text = "mod scratch {\n    pub const FREE: u32 = 2;\n}\n/// The code object was loaded.\nconst LOAD: u8 = 1;\n";
        assert_eq!(
            one("a.rs", text),
            [
                "a.rs:2: const FREE = 2 defines a scratch-memory operation number; use rocwasm_ids::ops::scratch::FREE",
                "a.rs:5: const LOAD = 1 defines a code-object operation number; use rocwasm_ids::ops::code_object::LOAD",
            ]
        );
        // Full names count anywhere; so do phases and policies with their prefix.
        let text = "const MEMORY_ALLOCATION_FREE: u32 = 3;\nconst CALLBACK_PHASE_ENTER: u32 = 1;\nconst BUFFER_POLICY_DISCARD: u32 = 1;\nconst ENTER: u32 = 1;\n";
        let found = one("a.rs", text);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].contains(
            ":1: const MEMORY_ALLOCATION_FREE = 3 defines a memory-allocation operation number"
        ));
        assert!(found[1].contains(":2: const CALLBACK_PHASE_ENTER = 1 defines a callback phase number; use rocwasm_ids::kind::phase::ENTER"));
        assert!(found[2].contains(":3: const BUFFER_POLICY_DISCARD = 1 defines a buffer policy number; use rocwasm_ids::BufferPolicy::Discard"));
    }

    #[test]
    fn enum_variants_with_literal_discriminants_are_reported() {
        let text =
            "#[repr(u32)]\nenum Kind {\n    HipRuntimeApi = 5,\n    KernelDispatch = 11,\n}\n\
                    enum Direction {\n    HostToHost = 1,\n    HostToDevice = 2,\n}\n";
        let found = one("a.rs", text);
        assert_eq!(
            found,
            [
                "a.rs:3: enum variant HipRuntimeApi = 5 defines a buffer-tracing kind number; use rocwasm_ids::BufferTracingKind (or rocwasm_ids::kind::buffer::HIP_RUNTIME_API as the discriminant)",
                "a.rs:4: enum variant KernelDispatch = 11 defines a buffer-tracing kind number; use rocwasm_ids::BufferTracingKind (or rocwasm_ids::kind::buffer::KERNEL_DISPATCH as the discriminant)",
                "a.rs:7: enum variant HostToHost = 1 defines a memory-copy operation number; use rocwasm_ids::ops::copy::HOST_TO_HOST as the discriminant",
                "a.rs:8: enum variant HostToDevice = 2 defines a memory-copy operation number; use rocwasm_ids::ops::copy::HOST_TO_DEVICE as the discriminant",
            ]
        );
        // Another ABI's enum sharing one name is not a kind enum.
        let text = "enum PacketType {\n    Invalid = 1,\n    KernelDispatch = 2,\n    BarrierAnd = 3,\n}\n";
        assert!(one("a.rs", text).is_empty());
        // Two runtimes in one enum are runtime-initialization operations.
        let text =
            "enum Runtime {\n    Hsa = 1,\n    Hip = 2,\n}\nenum Phase {\n    Enter = 1,\n}\n";
        let found = one("a.rs", text);
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(found[0].contains(
            "a.rs:2: enum variant Hsa = 1 defines a runtime-initialization operation number"
        ));
        assert!(found[2].contains("a.rs:6: enum variant Enter = 1 defines a callback phase number"));
    }

    #[test]
    fn match_arms_from_numbers_to_names_are_reported() {
        let text = "fn direction(op: u64) -> &'static str {\n    match op {\n        2 => \"HOST_TO_DEVICE\",\n        3 | 4 => { \"DEVICE_TO_HOST\" }\n        _ => \"?\",\n    }\n}\n\
                    fn kind(k: u32) -> Option<&'static str> {\n    match k {\n        11 => Some(\"KERNEL_DISPATCH\"),\n        _ => None,\n    }\n}\n\
                    fn marker(op: u32) -> &'static str {\n    match op {\n        1 => \"roctxMarkA\",\n        3 => \"roctxRangePop\",\n        _ => \"\",\n    }\n}\n";
        let found = one("tests/t.rs", text);
        assert_eq!(found.len(), 6, "{found:?}");
        assert_eq!(found[0], "tests/t.rs:3: match arm 2 => \"HOST_TO_DEVICE\" names a memory-copy operation by its number; use rocwasm_ids::ops::copy::short_name");
        assert!(found[1].starts_with("tests/t.rs:4: match arm 3 => \"DEVICE_TO_HOST\""));
        assert!(found[2].starts_with("tests/t.rs:4: match arm 4 => \"DEVICE_TO_HOST\""));
        assert_eq!(found[3], "tests/t.rs:10: match arm 11 => \"KERNEL_DISPATCH\" names a buffer-tracing kind by its number; use rocwasm_ids::BufferTracingKind::from_raw(n).map(|k| k.name())");
        assert!(found[4].starts_with("tests/t.rs:16: match arm 1 => \"roctxMarkA\" names an operation of rocwasm_ids::ops::MARKER_CORE_API"));
        assert!(found[5].starts_with("tests/t.rs:17: match arm 3 => \"roctxRangePop\""));
        // Name to number is the same fact.
        let text = "fn op(ty: Option<&str>) -> u32 {\n    match ty {\n        Some(\"ALLOC\") => 1,\n        Some(\"FREE\") => 2,\n        Some(\"RECLAIM\") => 3,\n        _ => 0,\n    }\n}\n";
        assert_eq!(
            one("a.rs", text),
            [
                "a.rs:3: match arm \"ALLOC\" => 1 numbers a scratch-memory operation by its name; use rocwasm_ids::ops::scratch::ALLOC",
                "a.rs:4: match arm \"FREE\" => 2 numbers a scratch-memory operation by its name; use rocwasm_ids::ops::scratch::FREE",
            ]
        );
        // One everyday word is not a name; an unrelated match is nothing.
        let text = "fn f(x: u32) -> &'static str {\n    match x {\n        1 => \"FREE\",\n        2 => \"busy\",\n        _ => \"\",\n    }\n}\n";
        assert!(one("a.rs", text).is_empty());
    }

    #[test]
    fn copies_of_name_lists_are_reported() {
        let text = "const CORE: &[&str] = &[\n    \"hsa_init\",\n    \"hsa_shut_down\",\n    \"hsa_system_get_info\",\n    \"something_else\",\n];\n\
                    fn f() {\n    let names = vec![\"roctxMarkA\", \"roctxRangePushA\", \"roctxRangePop\"];\n    let few = [\"hipMalloc\", \"hipFree\"];\n    let mixed = [\"hipMalloc\", \"hipFree\", \"hipMemcpy\", \"a\", \"b\", \"c\"];\n}\n\
                    static DIRS: [(&str, u32); 3] = [(\"HOST_TO_HOST\", 1), (\"HOST_TO_DEVICE\", 2), (\"DEVICE_TO_HOST\", 3)];\n";
        let found = one("plugins/p/src/lib.rs", text);
        // Signatures keyed by name are records, not a list of names.
        let records = "const UNDECLARED: &[(&str, &str, &[&str])] = &[\n    (\"__hipRegisterVar\", \"void\", &[]),\n    (\"__hipRegisterFunction\", \"void\", &[]),\n    (\"__hipRegisterFatBinary\", \"void **\", &[]),\n];\n";
        assert!(one("a.rs", records).is_empty());
        assert_eq!(
            found,
            [
                "plugins/p/src/lib.rs:1: a list of 4 names, 3 of them from rocwasm_ids::hsa_table::CORE_API_TABLE, copies an operation-name list; use rocwasm_ids::hsa_table::CORE_API_TABLE",
                "plugins/p/src/lib.rs:8: a list of 3 names, 3 of them from rocwasm_ids::ops::MARKER_CORE_API, copies an operation-name list; use rocwasm_ids::ops::MARKER_CORE_API",
                "plugins/p/src/lib.rs:12: a list of 3 names, 3 of them from rocwasm_ids::ops::copy::NAMES, copies an operation-name list; use rocwasm_ids::ops::copy::NAMES",
            ]
        );
    }

    #[test]
    fn using_the_ids_constants_is_clean() {
        let text = "use rocwasm_ids::kind::buffer;\nuse rocwasm_ids::ops::copy;\n\n\
                    pub const KERNEL_DISPATCH: u32 = rocwasm_ids::kind::buffer::KERNEL_DISPATCH;\n\
                    const MEMCPY: u32 = buffer::MEMORY_COPY;\n\
                    #[repr(u32)]\npub enum Direction {\n    HostToDevice = copy::HOST_TO_DEVICE,\n    DeviceToHost = copy::DEVICE_TO_HOST,\n}\n\
                    fn name(op: u32) -> &'static str {\n    copy::short_name(op).unwrap_or(\"?\")\n}\n\
                    const HIP_MEMCPY_HOST_TO_DEVICE: i32 = 1;\nconst NAMES: &[&str] = rocwasm_ids::ops::copy::NAMES;\n";
        assert_eq!(one("host/x/src/y.rs", text), Vec::<String>::new());
    }

    #[test]
    fn test_data_in_asserts_is_clean_but_tests_are_read() {
        let text = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        assert_eq!(rocwasm_ids::ops::copy::HOST_TO_DEVICE, 2);\n        \
                    assert_eq!(names(), [\"hsa_init\", \"hsa_shut_down\", \"hsa_system_get_info\"]);\n        \
                    assert!(matches!(op, 2), \"{}\", match 11 { 11 => \"KERNEL_DISPATCH\", _ => \"\" });\n    }\n}\n";
        assert_eq!(one("tests/t.rs", text), Vec::<String>::new());
        // The same outside an assert is a finding, in a test module too.
        let text = "#[cfg(test)]\nmod tests {\n    const DEVICE_TO_DEVICE: u32 = 4;\n}\n";
        assert_eq!(one("src/t.rs", text).len(), 1);
    }

    #[test]
    fn ids_target_and_hidden_directories_are_not_read() {
        let bad = "pub const KERNEL_DISPATCH: u32 = 11;\n";
        let scan = scanned(&[
            ("ids/src/kind.rs", bad),
            ("target/debug/build/x/out/gen.rs", bad),
            (".git/x.rs", bad),
            ("plugins/target/wasm32/gen.rs", bad),
            ("ok.rs", "fn main() {}\n"),
        ]);
        assert_eq!(scan.files, 1);
        assert!(scan.findings.is_empty(), "{:?}", scan.findings);
    }

    #[test]
    fn check_fails_with_a_count_and_passes_clean() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "const HOST_TO_DEVICE: u32 = 2;\n").unwrap();
        let err = check(dir.path()).unwrap_err().to_string();
        assert_eq!(err, "1 fact(s) defined outside rocwasm-ids; see above");
        std::fs::write(dir.path().join("a.rs"), "const X: u32 = 2;\n").unwrap();
        check(dir.path()).unwrap();
    }

    #[test]
    fn names_convert() {
        assert_eq!(screaming("HostToDevice"), "HOST_TO_DEVICE");
        assert_eq!(screaming("HSACoreApi"), "HSA_CORE_API");
        assert_eq!(screaming("HOST_TO_DEVICE"), "HOST_TO_DEVICE");
        assert_eq!(screaming("Rocjpeg2"), "ROCJPEG2");
        assert_eq!(snake("memcpy-bandwidth"), "memcpy_bandwidth");
    }
}
