//! `docs/ARCHITECTURE.md`'s flow diagram against the tree: every folder it
//! names exists, and every crate folder of the workspace is named in it, so
//! the picture a newcomer reads first cannot drift from the code. A unit
//! test (run by `cargo xtask test`) checks the real diagram.

use std::collections::BTreeSet;
use std::path::Path;

/// The first fenced block after the `## The data flow` heading.
fn flow_diagram(doc: &str) -> Option<&str> {
    let after = &doc[doc.find("## The data flow")?..];
    let start = after.find("```")? + 3;
    let body = &after[start..];
    let body = &body[body.find('\n')? + 1..];
    Some(&body[..body.find("```")?])
}

/// Path-like words of `text` (lower-case names joined by `/`, a trailing
/// `/` allowed), without the trailing `/`.
fn folder_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '/' || c == '-' || c == '_'))
        .filter(|w| w.contains('/') && w.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
        .map(|w| w.trim_end_matches('/').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The workspace members of the root `Cargo.toml`.
fn members(manifest: &str) -> Result<Vec<String>, String> {
    let value: toml::Table = manifest.parse().map_err(|e| format!("Cargo.toml: {e}"))?;
    value
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .ok_or("Cargo.toml has no [workspace] members")?
        .iter()
        .map(|m| {
            m.as_str()
                .map(str::to_string)
                .ok_or("a member is not a string".into())
        })
        .collect()
}

/// What is wrong with `doc`'s diagram for the tree at `root` (whose
/// workspace members are `members`): folders it names that do not exist,
/// crate folders it does not name. Empty when it tells the truth.
fn problems(doc: &str, members: &[String], root: &Path) -> Vec<String> {
    let Some(diagram) = flow_diagram(doc) else {
        return vec!["no fenced diagram after `## The data flow`".into()];
    };
    let named = folder_words(diagram);
    let mut out: Vec<String> = named
        .iter()
        .filter(|w| !root.join(w).is_dir())
        .map(|w| format!("the diagram names `{w}`, which is not a folder"))
        .collect();
    for m in members {
        // A top-level crate folder is written `name/`, a nested one `a/b`.
        let said = named.contains(m.as_str())
            || diagram.contains(&format!("{m}/"))
            || diagram.split_whitespace().any(|w| {
                w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '/' && c != '-') == m
            });
        if !said {
            out.push(format!("the diagram does not name the crate folder `{m}`"));
        }
    }
    out
}

/// Checks the repository's diagram; `Err` lists every problem.
pub fn check(root: &Path) -> Result<(), String> {
    let read = |p: &str| {
        std::fs::read_to_string(root.join(p)).map_err(|e| format!("cannot read {p}: {e}"))
    };
    let problems = problems(
        &read("docs/ARCHITECTURE.md")?,
        &members(&read("Cargo.toml")?)?,
        root,
    );
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "docs/ARCHITECTURE.md:\n  {}",
            problems.join("\n  ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn the_architecture_diagram_names_every_crate_folder_and_only_real_ones() {
        check(&root()).unwrap();
    }

    #[test]
    fn a_missing_crate_or_a_folder_that_is_not_there_is_reported() {
        let doc = "## The data flow\n\n```\nhost/launcher/cli ─> ids/ ─> host/nowhere\n```\n";
        let members = vec![
            "ids".to_string(),
            "host/launcher/cli".to_string(),
            "sim/hip".to_string(),
        ];
        let p = problems(doc, &members, &root());
        assert_eq!(
            p,
            [
                "the diagram names `host/nowhere`, which is not a folder",
                "the diagram does not name the crate folder `sim/hip`",
            ]
        );
    }
}
