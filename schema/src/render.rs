//! The schema as source text for the guest SDKs that are not Rust: a C
//! header, a Python module and a JavaScript module, each listing every
//! table and column with its ids and element type.
//!
//! Those files are committed (`plugins/c/include/rocwasm_schema.h`,
//! `plugins/python/rocwasm/schema.py`, `plugins/js/rocwasm_schema.js`) so a
//! plugin author's toolchain needs nothing of ours to build; `cargo xtask
//! gen-schema` writes them from [`crate::TABLES`], and the kit's tests
//! fail when a committed file differs from what these functions render.

use std::fmt::Write;

use crate::{Width, TABLES};

/// Where each rendered file lives in the repository, and its text.
pub fn files() -> [(&'static str, String); 3] {
    [
        ("plugins/c/include/rocwasm_schema.h", c_header()),
        ("plugins/python/rocwasm/schema.py", python()),
        ("plugins/js/rocwasm_schema.js", javascript()),
    ]
}

const GENERATED: &str = "Generated from the record schema (`schema/src/lib.rs`) by `cargo xtask gen-schema`: do not edit.";

/// `kernel_dispatches` → `KERNEL_DISPATCHES`.
fn upper(name: &str) -> String {
    name.to_ascii_uppercase()
}

/// The C header: one `#define` per table id and per column id
/// (`ROCWASM_KERNEL_DISPATCHES`, `ROCWASM_KERNEL_DISPATCHES_START`), and
/// each column's element type as `ROCWASM_KERNEL_DISPATCHES_START_TYPE`.
pub fn c_header() -> String {
    let mut s = String::new();
    let _ = writeln!(s, "/* {GENERATED} */");
    s.push_str(
        "/*\n * The record tables of a rocwasm batch and their permanent ids: a\n * table id, then each column's id within its table and its element type\n * (uint32_t or uint64_t). A packed batch names its columns by these ids\n * (see rocwasm.h, rocwasm_batch_column).\n */\n",
    );
    s.push_str("#ifndef ROCWASM_SCHEMA_H\n#define ROCWASM_SCHEMA_H\n\n");
    for t in TABLES {
        let table = format!("ROCWASM_{}", upper(t.field));
        let _ = writeln!(s, "/* `{}`: {} */", t.wit, t.row);
        let _ = writeln!(s, "#define {table} {}", t.id);
        for c in t.columns {
            let name = format!("{table}_{}", upper(c.field));
            let ty = match c.width {
                Width::U32 => "uint32_t",
                Width::U64 => "uint64_t",
            };
            let _ = writeln!(s, "#define {name} {}", c.id);
            let _ = writeln!(s, "#define {name}_TYPE {ty}");
        }
        s.push('\n');
    }
    s.push_str("#endif /* ROCWASM_SCHEMA_H */\n");
    s
}

/// The Python module: `TABLES`, a tuple of `(id, field, wit, columns)`
/// with `columns` a tuple of `(id, field, wit, typecode)` (`"I"` for
/// `u32`, `"Q"` for `u64`: `memoryview.cast` codes).
pub fn python() -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\"\"\"The record tables of a rocwasm batch and their permanent ids.\n\n{GENERATED}\n\"\"\"\n");
    s.push_str(
        "# (table id, field, WIT name, ((column id, field, WIT name, memoryview typecode), ...))\n",
    );
    s.push_str("TABLES = (\n");
    for t in TABLES {
        let _ = writeln!(s, "    ({}, \"{}\", \"{}\", (", t.id, t.field, t.wit);
        for c in t.columns {
            let code = match c.width {
                Width::U32 => "I",
                Width::U64 => "Q",
            };
            let _ = writeln!(
                s,
                "        ({}, \"{}\", \"{}\", \"{code}\"),",
                c.id, c.field, c.wit
            );
        }
        s.push_str("    )),\n");
    }
    s.push_str(")\n");
    s
}

/// The JavaScript module: `TABLES`, an array of `{id, field, wit,
/// columns}` with `columns` an array of `{id, field, wit, width}`
/// (`width` in bytes: 4 or 8).
pub fn javascript() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// The record tables of a rocwasm batch and their permanent ids.\n//\n// {GENERATED}\n"
    );
    s.push_str("export const TABLES = [\n");
    for t in TABLES {
        let _ = writeln!(
            s,
            "  {{ id: {}, field: \"{}\", wit: \"{}\", columns: [",
            t.id, t.field, t.wit
        );
        for c in t.columns {
            let _ = writeln!(
                s,
                "    {{ id: {}, field: \"{}\", wit: \"{}\", width: {} }},",
                c.id,
                c.field,
                c.wit,
                c.width.bytes()
            );
        }
        s.push_str("  ] },\n");
    }
    s.push_str("];\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_files_are_what_the_schema_renders() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for (path, text) in files() {
            let committed = std::fs::read_to_string(root.join(path)).unwrap_or_default();
            assert!(
                committed == text,
                "{path} is not what the schema renders: run `cargo xtask gen-schema` and commit it"
            );
        }
    }

    #[test]
    fn every_column_is_in_every_rendering() {
        let [(_, c), (_, py), (_, js)] = files();
        for t in TABLES {
            for col in t.columns {
                let define = format!(
                    "#define ROCWASM_{}_{} {}\n",
                    upper(t.field),
                    upper(col.field),
                    col.id
                );
                assert!(c.contains(&define), "{define}");
                assert!(py.contains(&format!("({}, \"{}\", \"{}\",", col.id, col.field, col.wit)));
                assert!(js.contains(&format!("{{ id: {}, field: \"{}\",", col.id, col.field)));
            }
        }
    }
}
