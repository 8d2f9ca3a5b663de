//! What a call into a component costs before any plugin code runs: the
//! floor under every delivery, and what a batch's *shape* adds to it.
//!
//! The component is written here as text: its functions do nothing, and
//! its `realloc` is a bump allocator (cheaper than any real guest's), so
//! each row is a lower bound for a plugin built from the published WIT.
//! Rows, each one call of [`PluginEngine`]'s engine (the configuration every
//! plugin runs under: epoch interruption on):
//!
//! - `nothing`: `func(x: u64)`, no memory touched: the call itself.
//! - `3 lists`: `func(a: list<u64>, b: list<u64>, c: list<u64>)`, each list
//!   `--records` long: the three columns `kernel-stats` reads, alone.
//! - `64 lists`: a record of 64 `list<u64>` fields, three of them
//!   `--records` long and 61 empty: today's `types.batch` (64 columns,
//!   there nested in 7 table records) as the host lowers it for
//!   `kernel-stats`, where every empty list still costs a call into the
//!   guest's `realloc`.
//! - `64 option lists`: the same record with `option<list<u64>>` fields,
//!   three `some`, 61 `none`: what a batch would cost if an unread column
//!   were `none`, which the canonical ABI lowers without a guest call.
//!
//! Shapes a new package version could take (issue 46; `docs/WIT.md`), each
//! carrying only the three columns read:
//! - `3 variant columns`: `func(b: list<column>)` with
//!   `variant column { u64s(list<u64>), u32s(list<u32>) }`, three `u64s`:
//!   the columns a plugin selected, pushed in its selection order.
//! - `3 packed`: `func(b: list<u8>)`, the three columns' bytes in one list
//!   (a header would say where each starts): one guest allocation.
//! - `3 pulled`: `func(n: u64)` whose guest calls an imported
//!   `column: func(i: u32) -> list<u64>` three times (a pull-style batch
//!   resource's accessors; the host hands out `Arc<[u64]>`s, no copy on
//!   its side).
//!
//! ```text
//! cargo bench -p rocwasm-plugin-host --bench call_floor                     # 1 and 256 records
//! cargo bench -p rocwasm-plugin-host --bench call_floor -- --records 4096
//! ```
//!
//! Timing as in the deliver bench: after a warm-up, 7 rounds of ≥ 0.15 s
//! each; the median round and the best one.

use std::time::{Duration, Instant};

use rocwasm_plugin_host::{EngineConfig, PluginEngine};
use std::sync::Arc;

use wasmtime::component::{Component, ComponentType, Linker, Lower, TypedFunc};
use wasmtime::{Store, StoreContextMut};

const COMMAND: &str = "cargo bench -p rocwasm-plugin-host --bench call_floor";
const ROUNDS: usize = 7;
/// The columns a batch has (`types.batch`: 8 + 18 + 12 + 9 + 10 + 2 + 5).
const COLUMNS: usize = 64;
/// The columns `kernel-stats` reads.
const READ: usize = 3;

/// The arguments of `three`.
type ThreeLists<'a> = (&'a [u64], &'a [u64], &'a [u64]);

/// Declares the two record shapes over the same 64 field names (component
/// names default to the Rust field names, which are valid WIT labels).
macro_rules! shapes {
    ($($f:ident)*) => {
        /// A record of 64 `list<u64>`.
        #[derive(ComponentType, Lower)]
        #[component(record)]
        struct Lists<'a> {
            $($f: &'a [u64],)*
        }

        /// A record of 64 `option<list<u64>>`.
        #[derive(ComponentType, Lower)]
        #[component(record)]
        struct OptionLists<'a> {
            $($f: Option<&'a [u64]>,)*
        }

        /// The field names, in order.
        const FIELDS: &[&str] = &[$(stringify!($f)),*];

        impl<'a> Lists<'a> {
            /// `read` in the first fields, the others empty.
            fn new(read: &[&'a [u64]]) -> Self {
                let mut cols = read.iter().copied().chain(std::iter::repeat(&[][..]));
                Lists { $($f: cols.next().unwrap_or_default(),)* }
            }
        }

        impl<'a> OptionLists<'a> {
            /// `read` in the first fields, the others `none`.
            fn new(read: &[&'a [u64]]) -> Self {
                let mut cols = read.iter().copied().map(Some).chain(std::iter::repeat(None));
                OptionLists { $($f: cols.next().flatten(),)* }
            }
        }
    };
}

shapes! {
    c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 c12 c13 c14 c15
    c16 c17 c18 c19 c20 c21 c22 c23 c24 c25 c26 c27 c28 c29 c30 c31
    c32 c33 c34 c35 c36 c37 c38 c39 c40 c41 c42 c43 c44 c45 c46 c47
    c48 c49 c50 c51 c52 c53 c54 c55 c56 c57 c58 c59 c60 c61 c62 c63
}

/// The component: its exports over core modules whose functions return at
/// once (`take` resets the bump allocator for the next call). Memory and
/// `realloc` live in a module of their own, so the host's `column` import
/// can be lowered into that memory before the main module is instantiated
/// with it. The memory holds the three columns of `records` records, with
/// room to spare for the arguments' own records.
fn component_text(records: usize) -> String {
    let pages = (2 * READ * 8 * records).div_ceil(64 << 10) + 1;
    let fields = |ty: &str| -> String {
        FIELDS
            .iter()
            .map(|f| format!("(field \"{f}\" {ty}) "))
            .collect()
    };
    let (lists, options) = (fields("(list u64)"), fields("(option (list u64))"));
    format!(
        r#"(component
  (import "column" (func $column (param "i" u32) (result (list u64))))
  (core module $mem
    (memory (export "memory") {pages})
    (global $top (export "top") (mut i32) (i32.const 16))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $p i32)
      (local.set $p (i32.and
        (i32.add (global.get $top) (i32.sub (local.get 2) (i32.const 1)))
        (i32.sub (i32.const 0) (local.get 2))))
      (global.set $top (i32.add (local.get $p) (local.get 3)))
      (local.get $p))
  )
  (core instance $mi (instantiate $mem))
  (core func $lowered (canon lower (func $column)
    (memory (core memory $mi "memory")) (realloc (core func $mi "realloc"))))
  (core module $m
    (import "host" "column" (func $col (param i32 i32)))
    (import "mem" "top" (global $top (mut i32)))
    (func (export "nothing") (param i64))
    (func (export "three") (param i32 i32 i32 i32 i32 i32)
      (global.set $top (i32.const 16)))
    (func (export "take") (param i32)
      (global.set $top (i32.const 16)))
    (func (export "take2") (param i32 i32)
      (global.set $top (i32.const 16)))
    (func (export "pull") (param i64)
      (call $col (i32.const 0) (i32.const 0))
      (call $col (i32.const 1) (i32.const 0))
      (call $col (i32.const 2) (i32.const 0))
      (global.set $top (i32.const 16)))
  )
  (core instance $i (instantiate $m
    (with "host" (instance (export "column" (func $lowered))))
    (with "mem" (instance $mi))))
  (type $lists' (record {lists}))
  (export $lists "list-columns" (type $lists'))
  (type $options' (record {options}))
  (export $options "option-columns" (type $options'))
  (type $column' (variant (case "u64s" (list u64)) (case "u32s" (list u32))))
  (export $columnv "column" (type $column'))
  (func (export "nothing") (param "x" u64) (canon lift (core func $i "nothing")))
  (func (export "three") (param "a" (list u64)) (param "b" (list u64)) (param "c" (list u64))
    (canon lift (core func $i "three") (memory (core memory $mi "memory")) (realloc (core func $mi "realloc"))))
  (func (export "lists") (param "b" $lists)
    (canon lift (core func $i "take") (memory (core memory $mi "memory")) (realloc (core func $mi "realloc"))))
  (func (export "option-lists") (param "b" $options)
    (canon lift (core func $i "take") (memory (core memory $mi "memory")) (realloc (core func $mi "realloc"))))
  (func (export "variant-columns") (param "b" (list $columnv))
    (canon lift (core func $i "take2") (memory (core memory $mi "memory")) (realloc (core func $mi "realloc"))))
  (func (export "packed") (param "b" (list u8))
    (canon lift (core func $i "take2") (memory (core memory $mi "memory")) (realloc (core func $mi "realloc"))))
  (func (export "pull") (param "n" u64) (canon lift (core func $i "pull")))
)"#
    )
}

/// The host's columns of the `3 pulled` shape, handed out without a copy.
type Columns = Vec<Arc<[u64]>>;

/// A column of the `3 variant columns` shape.
#[derive(ComponentType, Lower)]
#[component(variant)]
enum Column<'a> {
    #[component(name = "u64s")]
    U64s(&'a [u64]),
    /// A 32-bit column (kinds, operations): part of the type, not sent here.
    #[allow(dead_code)]
    #[component(name = "u32s")]
    U32s(&'a [u32]),
}

fn main() {
    let mut sizes = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--records" => match args.next().and_then(|v| v.parse().ok()) {
                Some(n) => sizes.push(n),
                None => usage("--records needs a number"),
            },
            // `cargo bench` passes `--bench` to every harness.
            "--bench" => {}
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    if sizes.is_empty() {
        sizes = vec![1, 256];
    }

    let rt = PluginEngine::new(EngineConfig {
        cache_dir: None,
        ..Default::default()
    })
    .expect("engine");
    let engine = rt.engine();
    let most = sizes.iter().copied().max().unwrap_or(1);
    let bytes = wat::parse_str(component_text(most)).expect("the component text parses");
    let component = Component::new(engine, &bytes).expect("the component compiles");
    // The host side of `3 pulled`: the columns as shared slices.
    let mut store: Store<Columns> = Store::new(engine, Vec::new());
    // The engine interrupts on epochs (a plugin's deadline); nothing here
    // runs long enough to need one.
    store.set_epoch_deadline(u64::MAX / 2);
    let mut linker = Linker::new(engine);
    linker
        .root()
        .func_wrap(
            "column",
            |cx: StoreContextMut<'_, Columns>, (i,): (u32,)| {
                let col = cx
                    .data()
                    .get(i as usize)
                    .cloned()
                    .unwrap_or_else(|| Arc::from([]));
                Ok((col,))
            },
        )
        .expect("the column import");
    let instance = linker
        .instantiate(&mut store, &component)
        .expect("instantiating");

    let nothing: TypedFunc<(u64,), ()> = instance
        .get_typed_func(&mut store, "nothing")
        .expect("nothing");
    let three: TypedFunc<ThreeLists<'_>, ()> =
        instance.get_typed_func(&mut store, "three").expect("three");
    let lists: TypedFunc<(Lists<'_>,), ()> =
        instance.get_typed_func(&mut store, "lists").expect("lists");
    let options: TypedFunc<(OptionLists<'_>,), ()> = instance
        .get_typed_func(&mut store, "option-lists")
        .expect("option-lists");
    let variants: TypedFunc<(&[Column<'_>],), ()> = instance
        .get_typed_func(&mut store, "variant-columns")
        .expect("variant-columns");
    let packed: TypedFunc<(&[u8],), ()> = instance
        .get_typed_func(&mut store, "packed")
        .expect("packed");
    let pull: TypedFunc<(u64,), ()> = instance.get_typed_func(&mut store, "pull").expect("pull");

    println!("{COMMAND}");
    println!(
        "an empty component function called with each shape; {READ} of {COLUMNS} columns \
         hold the records; median and best of {ROUNDS} rounds of ≥ 0.15 s per row"
    );
    println!();
    println!(
        "| {:>8} | {:<18} | {:>12} | {:>12} |",
        "records", "arguments", "ns/call med", "ns/call best"
    );
    println!("|{:-<10}|{:-<20}|{:-<14}|{:-<14}|", "", "", "", "");
    for &n in &sizes {
        let column: Vec<u64> = (0..n as u64).collect();
        let read = [&column[..], &column[..], &column[..]];
        let bytes: Vec<u8> = read
            .iter()
            .flat_map(|c| c.iter().flat_map(|v| v.to_le_bytes()))
            .collect();
        let shared: Arc<[u64]> = Arc::from(&column[..]);
        *store.data_mut() = vec![shared.clone(), shared.clone(), shared];
        let mut row = |label: &str, call: &mut dyn FnMut(&mut Store<Columns>)| {
            let (median, best) = time(&mut store, call);
            println!("| {n:>8} | {label:<18} | {median:>12.0} | {best:>12.0} |");
        };
        row("nothing", &mut |s| {
            nothing.call(s, (n as u64,)).expect("call")
        });
        row("3 lists", &mut |s| {
            three.call(s, (read[0], read[1], read[2])).expect("call")
        });
        row("64 lists", &mut |s| {
            lists.call(s, (Lists::new(&read),)).expect("call")
        });
        row("64 option lists", &mut |s| {
            options.call(s, (OptionLists::new(&read),)).expect("call")
        });
        let columns = read.map(Column::U64s);
        row("3 variant columns", &mut |s| {
            variants.call(s, (&columns[..],)).expect("call")
        });
        row("3 packed", &mut |s| {
            packed.call(s, (&bytes[..],)).expect("call")
        });
        row("3 pulled", &mut |s| {
            pull.call(s, (n as u64,)).expect("call")
        });
    }
}

/// Median and best ns per call of `call`, over [`ROUNDS`] rounds.
fn time<T>(store: &mut Store<T>, call: &mut dyn FnMut(&mut Store<T>)) -> (f64, f64) {
    for _ in 0..1000 {
        call(store);
    }
    let mut per_call = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let (start, mut calls) = (Instant::now(), 0u64);
        while calls < 10 || start.elapsed() < Duration::from_millis(150) {
            for _ in 0..100 {
                call(store);
            }
            calls += 100;
        }
        per_call.push(start.elapsed().as_nanos() as f64 / calls as f64);
    }
    per_call.sort_by(f64::total_cmp);
    (per_call[ROUNDS / 2], per_call[0])
}

fn usage(msg: &str) -> ! {
    eprintln!("{msg}\nusage: {COMMAND} -- [--records R]...");
    std::process::exit(2)
}
