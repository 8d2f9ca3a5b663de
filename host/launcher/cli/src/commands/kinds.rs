//! `rocwasm kinds [--buffer|--callback] [KIND]`: the names chain files and
//! plugins use, straight from sdk-core's registry.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use rocwasm_config::domains;
use rocwasm_core::ops::{self, OperationKind};
use rocwasm_core::{BufferTracingKind, CallbackTracingKind};

use crate::cli::KindsArgs;
use crate::failure::{Failure, Result};

pub fn kinds(args: KindsArgs) -> Result {
    let (buffer, callback) = match (args.buffer, args.callback) {
        (false, false) => (true, true),
        flags => flags,
    };
    match &args.kind {
        None => {
            if buffer {
                print_kinds(
                    "buffer-tracing kinds",
                    BufferTracingKind::ALL,
                    BufferTracingKind::raw,
                    Some(("usable in chain `domains`", |k| {
                        domains::batch_table(k).map_or("no (not in batches)", |_| "yes")
                    })),
                );
            }
            if callback {
                print_kinds(
                    "callback-tracing kinds",
                    CallbackTracingKind::ALL,
                    CallbackTracingKind::raw,
                    None,
                );
            }
            if buffer {
                println!("domain aliases:");
                for (alias, kinds) in domains::ALIASES {
                    let names: Vec<_> = kinds
                        .iter()
                        .map(|k| k.name().to_ascii_lowercase())
                        .collect();
                    println!("  {alias:<12} {}", names.join(", "));
                }
            }
            Ok(())
        }
        Some(name) => {
            let found = if callback && !buffer {
                CallbackTracingKind::from_name(name)
                    .map(print_operations)
                    .is_some()
            } else if let Some(kinds) = domains::resolve(name) {
                kinds.into_iter().for_each(print_operations);
                true
            } else {
                // A callback-only kind (CODE_OBJECT) without --callback.
                CallbackTracingKind::from_name(name)
                    .map(print_operations)
                    .is_some()
            };
            if found {
                Ok(())
            } else {
                Err(Failure::usage(format!(
                    "unknown kind `{name}` (`rocwasm kinds` lists the kinds and aliases)"
                )))
            }
        }
    }
}

/// An extra column: its title and how to fill it.
type ExtraColumn<K> = (&'static str, fn(K) -> &'static str);

fn print_kinds<K: OperationKind>(
    title: &str,
    all: &[K],
    number: impl Fn(K) -> u32,
    extra: Option<ExtraColumn<K>>,
) {
    let mut table = Table::new();
    let mut header = vec!["#", "kind", "operations"];
    header.extend(extra.map(|(h, _)| h));
    table.load_preset(UTF8_FULL_CONDENSED).set_header(header);
    for &k in all {
        let mut row = vec![
            number(k).to_string(),
            k.kind_name().to_ascii_lowercase(),
            ops::operation_count(k).to_string(),
        ];
        row.extend(extra.map(|(_, f)| f(k).to_string()));
        table.add_row(row);
    }
    println!("{title}:\n{table}");
}

fn print_operations<K: OperationKind>(kind: K) {
    let ops: Vec<_> = ops::operations(kind).collect();
    println!(
        "{} ({} operations):",
        kind.kind_name().to_ascii_lowercase(),
        ops.len()
    );
    for (number, name) in ops {
        println!("  {number:>4}  {name}");
    }
}
