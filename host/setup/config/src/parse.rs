//! TOML text → [`RawChain`], with serde's messages rewritten to say where.
//!
//! serde reports *what* went wrong and the span of the offending key or
//! value, but not which table it sits in. We parse the document once into
//! toml's spanned tree, find the key or value with the error's span, and
//! name its table the way a user reads the file: `[settings.buffer]`,
//! `[[stage]] #2`. The format version is checked on that tree too, before
//! serde runs, so a file written for a newer rocwasm gets "newer version",
//! not "unknown key".

use std::ops::Range;

use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::error::{ConfigError, Source};
use crate::model::FORMAT_VERSION;
use crate::raw::RawChain;

/// Parses and type-checks the chain text. Semantic checks come after, in
/// [`crate::validate`].
pub(crate) fn parse(src: Source<'_>) -> Result<RawChain, ConfigError> {
    let tree = DeTable::parse(src.text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        src.error(span, format!("invalid TOML: {}", first_line(e.message())))
    })?;
    check_version(src, &tree)?;
    let deserializer = toml::de::Deserializer::from(tree.clone());
    RawChain::deserialize(deserializer).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let path = find_path(tree.get_ref(), &span).unwrap_or_default();
        src.error(span, rewrite(e.message(), &path))
    })
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s).trim_end()
}

/// `version = 1` must be present and not newer than [`FORMAT_VERSION`].
fn check_version(src: Source<'_>, tree: &Spanned<DeTable<'_>>) -> Result<(), ConfigError> {
    let Some((_, value)) = tree
        .get_ref()
        .iter()
        .find(|(k, _)| k.get_ref() == "version")
    else {
        return Err(src.error(
            0..0,
            format!("missing `version = {FORMAT_VERSION}` at the top of the chain file"),
        ));
    };
    let version = match value.get_ref() {
        DeValue::Integer(i) => i.as_str().parse::<i64>().ok(),
        _ => None,
    };
    match version {
        Some(FORMAT_VERSION) => Ok(()),
        Some(v) if v > FORMAT_VERSION => Err(src.error(
            value.span(),
            format!(
                "chain format version {v} is newer than this rocwasm reads (version {FORMAT_VERSION}); upgrade rocwasm"
            ),
        )),
        _ => Err(src.error(
            value.span(),
            format!("unsupported chain format version (expected `version = {FORMAT_VERSION}`)"),
        )),
    }
}

/// One step from the document root to a key or value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// The path to the key or value whose span is exactly `span`.
fn find_path(table: &DeTable<'_>, span: &Range<usize>) -> Option<Vec<Seg>> {
    for (key, value) in table.iter() {
        let seg = Seg::Key(key.get_ref().to_string());
        if key.span() == *span || value.span() == *span && !value.get_ref().is_table() {
            return Some(vec![seg]);
        }
        if let Some(mut rest) = find_in_value(value, span) {
            rest.insert(0, seg);
            return Some(rest);
        }
    }
    None
}

fn find_in_value(value: &Spanned<DeValue<'_>>, span: &Range<usize>) -> Option<Vec<Seg>> {
    match value.get_ref() {
        DeValue::Table(t) => find_path(t, span),
        DeValue::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            if item.span() == *span && !item.get_ref().is_table() {
                return Some(vec![Seg::Index(i)]);
            }
            let mut rest = find_in_value(item, span)?;
            rest.insert(0, Seg::Index(i));
            Some(rest)
        }),
        _ => None,
    }
}

/// How a user names the table at `path`: `[settings.buffer]`, `[[stage]] #2`,
/// the `limits` table of `[[stage]] #2`.
pub(crate) fn table_name(path: &[Seg]) -> String {
    match path {
        [] => "at the top level".to_string(),
        [Seg::Key(s), Seg::Index(i), rest @ ..] if s == "stage" => {
            let stage = format!("[[stage]] #{}", i + 1);
            match rest {
                [] => format!("in {stage}"),
                _ => format!("in `{}` of {stage}", dotted(rest)),
            }
        }
        _ => format!("in [{}]", dotted(path)),
    }
}

fn dotted(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The subject and the table of the thing at `path`: for a key
/// `stage[1].name` that is (`name`, `in [[stage]] #2`); for an array item
/// `stage[0].domains[2]` it is (`domains` item 3, `in [[stage]] #1`).
fn subject(path: &[Seg]) -> (String, String) {
    match path {
        [parent @ .., Seg::Key(k), Seg::Index(i)] => {
            (format!("`{k}` item {}", i + 1), table_name(parent))
        }
        [parent @ .., Seg::Key(k)] => (format!("`{k}`"), table_name(parent)),
        _ => ("value".to_string(), table_name(path)),
    }
}

/// Rewrites serde's message into ours. Unrecognised messages keep their text
/// and gain the table.
fn rewrite(message: &str, path: &[Seg]) -> String {
    let message = first_line(message);
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (key, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let parent = path.split_last().map_or(path, |(_, p)| p);
        let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        let expected = if names.is_empty() {
            "this table takes no keys".to_string()
        } else {
            format!("expected one of: {}", names.join(", "))
        };
        return format!("unknown key `{key}` {} ({expected})", table_name(parent));
    }
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            let (what, table) = subject(path);
            return format!(
                "wrong type for {what} {table}: expected {}, found {}",
                type_words(expected),
                type_words(found)
            );
        }
    }
    if message.starts_with("invalid value: ") || message.starts_with("invalid length ") {
        let (what, table) = subject(path);
        return format!(
            "invalid {what} {table}: {}",
            message.trim_start_matches("invalid value: ")
        );
    }
    let (what, table) = subject(path);
    format!("{message} ({what} {table})")
}

/// serde's type words → TOML's.
fn type_words(s: &str) -> String {
    let s = s.trim();
    let words = [
        ("i64", "an integer"),
        ("u32", "an integer"),
        ("a sequence", "an array"),
        ("sequence", "an array"),
        ("a map", "a table"),
        ("map", "a table"),
        ("struct ", "a table"),
        ("a boolean", "a boolean (true or false)"),
        ("floating point", "a float"),
        ("integer", "integer"),
    ];
    for (from, to) in words {
        if s == from || (from.ends_with(' ') && s.starts_with(from)) {
            return to.to_string();
        }
    }
    if let Some(rest) = s.strip_prefix("floating point ") {
        return format!("float {rest}");
    }
    if let Some(rest) = s.strip_prefix("struct ") {
        let _ = rest;
        return "a table".to_string();
    }
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_read_like_the_file() {
        let k = |s: &str| Seg::Key(s.into());
        assert_eq!(table_name(&[]), "at the top level");
        assert_eq!(
            table_name(&[k("settings"), k("buffer")]),
            "in [settings.buffer]"
        );
        assert_eq!(table_name(&[k("stage"), Seg::Index(1)]), "in [[stage]] #2");
        assert_eq!(
            table_name(&[k("stage"), Seg::Index(0), k("limits")]),
            "in `limits` of [[stage]] #1"
        );
    }
}
