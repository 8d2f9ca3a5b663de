//! Counter definitions files in rocprofiler-sdk's schema.
//!
//! The current schema (`counters-schema-version: 1`):
//!
//! ```yaml
//! rocprofiler-sdk:
//!   counters-schema-version: 1
//!   counters:
//!     - name: SQ_WAVES
//!       description: Waves sent to the shader sequencers.
//!       properties: []
//!       definitions:
//!         - architectures: [gfx90a, gfx942]
//!           block: SQ
//!           event: 4
//!     - name: Wavefronts
//!       description: Waves launched.
//!       definitions:
//!         - architectures: [gfx90a]
//!           expression: reduce(SQ_WAVES,sum)
//! ```
//!
//! The older form (a map from counter name to `architectures:` keyed by
//! `"gfx90a/gfx942"`-style groups, and `description`) is read too. Every
//! expression is parsed when the file is read; one that does not parse is
//! an error naming the file, the counter, its architectures and the
//! position.

use std::collections::BTreeSet;
use std::path::Path;

use serde_norway::Value;

use crate::expr::{self, Expr, ExprError};

/// How one counter is defined on some architectures.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A hardware counter: an event of a block.
    Hardware {
        /// The block (`SQ`, `TCC`, …).
        block: String,
        /// The event number within the block.
        event: u64,
    },
    /// A derived counter: an expression over other counters.
    Derived {
        /// The expression as written.
        text: String,
        /// It, parsed.
        expr: Expr,
    },
}

/// A counter's definition for a set of architectures.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchDefinition {
    /// The architectures (`gfx90a`, …) it applies to.
    pub architectures: Vec<String>,
    /// What it is there.
    pub body: Body,
}

/// One counter of a definitions file.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterDefinition {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its definitions, per group of architectures.
    pub definitions: Vec<ArchDefinition>,
}

/// A definitions file, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Definitions {
    /// Where it came from (for messages).
    pub source: String,
    /// Its counters, in file order.
    pub counters: Vec<CounterDefinition>,
}

/// Why a definitions file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DefsError {
    /// The file could not be read.
    #[error("cannot read counter definitions {file}: {error}")]
    Read {
        /// The file.
        file: String,
        /// The I/O error (in the message, so not a `source`).
        error: std::io::Error,
    },
    /// Not YAML.
    #[error("counter definitions {file}: {error}")]
    Yaml {
        /// The file.
        file: String,
        /// The YAML parser's error, with its line and column.
        error: serde_norway::Error,
    },
    /// YAML, but not in the schema.
    #[error("counter definitions {file}: {what}")]
    Schema {
        /// The file.
        file: String,
        /// What is wrong, naming the counter and key.
        what: String,
    },
    /// An expression that does not parse.
    #[error("{0}")]
    Expression(Box<BadExpression>),
}

/// An expression of a definitions file that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("counter definitions {file}: counter {counter} ({archs}): expression {text:?} {error}")]
pub struct BadExpression {
    /// The file.
    pub file: String,
    /// The counter.
    pub counter: String,
    /// Its architectures, `/`-joined.
    pub archs: String,
    /// The expression.
    pub text: String,
    /// Where and why.
    pub error: ExprError,
}

/// The definitions rocwasm ships for the simulated agents (gfx90a,
/// gfx942): the counters the simulated GPU models and the derived
/// counters over them, written from rocprofiler-sdk's public facts.
pub const SHIPPED: &str = include_str!("../defs/counter_defs.yaml");

impl Definitions {
    /// The definitions rocwasm ships ([`SHIPPED`]).
    pub fn shipped() -> Definitions {
        Definitions::parse(SHIPPED, "<rocwasm's counter_defs.yaml>")
            .expect("the shipped counter definitions parse (a unit test checks)")
    }

    /// The definitions a run uses, the first that exists: `explicit` (a
    /// `--counter-defs FILE`); `$ROCPROFILER_METRICS_PATH/counter_defs.yaml`
    /// (rocprofiler-sdk's variable: a missing file there is an error); an
    /// installed ROCm's `share/rocprofiler-sdk/counter_defs.yaml` (under
    /// `$ROCM_PATH`, else `/opt/rocm`); else [`Definitions::shipped`].
    pub fn discover(explicit: Option<&Path>) -> Result<Definitions, DefsError> {
        if let Some(path) = explicit {
            return Definitions::read(path);
        }
        if let Some(dir) = std::env::var_os("ROCPROFILER_METRICS_PATH").filter(|d| !d.is_empty()) {
            let path = std::path::PathBuf::from(dir).join("counter_defs.yaml");
            if !path.is_file() {
                return Err(DefsError::Read {
                    file: path.display().to_string(),
                    error: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "ROCPROFILER_METRICS_PATH names a directory that has no counter_defs.yaml",
                    ),
                });
            }
            return Definitions::read(&path);
        }
        let rocm = std::env::var_os("ROCM_PATH")
            .filter(|d| !d.is_empty())
            .map_or_else(
                || std::path::PathBuf::from("/opt/rocm"),
                std::path::PathBuf::from,
            );
        let installed = rocm.join("share/rocprofiler-sdk/counter_defs.yaml");
        if installed.is_file() {
            return Definitions::read(&installed);
        }
        Ok(Definitions::shipped())
    }

    /// Reads a definitions file.
    pub fn read(path: &Path) -> Result<Definitions, DefsError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|error| DefsError::Read {
            file: file.clone(),
            error,
        })?;
        Definitions::parse(&text, &file)
    }

    /// Parses definitions; `file` names them in errors.
    pub fn parse(text: &str, file: &str) -> Result<Definitions, DefsError> {
        let value: Value = serde_norway::from_str(text).map_err(|error| DefsError::Yaml {
            file: file.into(),
            error,
        })?;
        let schema = |what: String| DefsError::Schema {
            file: file.into(),
            what,
        };
        let counters = match value.get("rocprofiler-sdk") {
            Some(root) => parse_v1(root, &schema)?,
            None => parse_v0(&value, &schema)?,
        };
        let mut seen = BTreeSet::new();
        let mut out = Vec::with_capacity(counters.len());
        for (name, description, raw) in counters {
            if !seen.insert(name.clone()) {
                return Err(schema(format!("counter {name} is defined twice")));
            }
            let mut definitions = Vec::new();
            for (architectures, block, event, expression) in raw {
                let body = match (block, event, expression) {
                    (Some(block), Some(event), None) => Body::Hardware { block, event },
                    (None, None, Some(text)) => {
                        let expr = expr::parse(&text).map_err(|error| {
                            DefsError::Expression(Box::new(BadExpression {
                                file: file.into(),
                                counter: name.clone(),
                                archs: architectures.join("/"),
                                text: text.clone(),
                                error,
                            }))
                        })?;
                        Body::Derived { text, expr }
                    }
                    _ => {
                        return Err(schema(format!(
                            "counter {name} ({}): a definition has either `block` and `event` or `expression`",
                            architectures.join("/")
                        )))
                    }
                };
                definitions.push(ArchDefinition {
                    architectures,
                    body,
                });
            }
            out.push(CounterDefinition {
                name,
                description,
                definitions,
            });
        }
        Ok(Definitions {
            source: file.into(),
            counters: out,
        })
    }

    /// Adds `other`'s counters; one with a name already here replaces its
    /// definitions for the architectures `other` names.
    pub fn extend(&mut self, other: Definitions) {
        for counter in other.counters {
            match self.counters.iter_mut().find(|c| c.name == counter.name) {
                Some(mine) => {
                    for def in counter.definitions {
                        for d in &mut mine.definitions {
                            d.architectures.retain(|a| !def.architectures.contains(a));
                        }
                        mine.definitions.retain(|d| !d.architectures.is_empty());
                        mine.definitions.push(def);
                    }
                    if !counter.description.is_empty() {
                        mine.description = counter.description;
                    }
                }
                None => self.counters.push(counter),
            }
        }
    }

    /// Every architecture some counter is defined for.
    pub fn architectures(&self) -> BTreeSet<&str> {
        self.counters
            .iter()
            .flat_map(|c| &c.definitions)
            .flat_map(|d| d.architectures.iter().map(String::as_str))
            .collect()
    }
}

type Raw = (Vec<String>, Option<String>, Option<u64>, Option<String>);
type RawCounter = (String, String, Vec<Raw>);

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn definition(
    name: &str,
    architectures: Vec<String>,
    d: &Value,
    schema: &dyn Fn(String) -> DefsError,
) -> Result<Raw, DefsError> {
    let Value::Mapping(map) = d else {
        return Err(schema(format!(
            "counter {name}: a definition is not a mapping"
        )));
    };
    for key in map.keys() {
        let key = key.as_str().unwrap_or("?");
        if !matches!(
            key,
            "architectures" | "block" | "event" | "expression" | "description"
        ) {
            return Err(schema(format!(
                "counter {name}: unknown key {key:?} in a definition (architectures, block, event, expression)"
            )));
        }
    }
    let block = d.get("block").and_then(text_of);
    let event = match d.get("event") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| schema(format!("counter {name}: `event` is not a whole number")))?,
        ),
    };
    let expression = d.get("expression").and_then(text_of);
    Ok((architectures, block, event, expression))
}

fn parse_v1(
    root: &Value,
    schema: &dyn Fn(String) -> DefsError,
) -> Result<Vec<RawCounter>, DefsError> {
    if let Some(v) = root.get("counters-schema-version") {
        if v.as_u64() != Some(1) {
            return Err(schema(format!(
                "counters-schema-version {v:?}: only version 1 is known"
            )));
        }
    }
    let Some(Value::Sequence(list)) = root.get("counters") else {
        return Err(schema("`rocprofiler-sdk.counters` is not a list".into()));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(text_of)
            .ok_or_else(|| schema(format!("counter #{}: no `name`", i + 1)))?;
        let description = c.get("description").and_then(text_of).unwrap_or_default();
        let Some(Value::Sequence(defs)) = c.get("definitions") else {
            return Err(schema(format!(
                "counter {name}: `definitions` is not a list"
            )));
        };
        let mut raw = Vec::new();
        for d in defs {
            let archs: Vec<String> = match d.get("architectures") {
                Some(Value::Sequence(a)) => a.iter().filter_map(text_of).collect(),
                _ => {
                    return Err(schema(format!(
                        "counter {name}: a definition has no `architectures` list"
                    )))
                }
            };
            raw.push(definition(&name, archs, d, schema)?);
        }
        out.push((name, description, raw));
    }
    Ok(out)
}

fn parse_v0(
    root: &Value,
    schema: &dyn Fn(String) -> DefsError,
) -> Result<Vec<RawCounter>, DefsError> {
    let Value::Mapping(map) = root else {
        return Err(schema(
            "neither `rocprofiler-sdk:` (schema 1) nor a map of counters (schema 0)".into(),
        ));
    };
    let mut out = Vec::new();
    for (name, c) in map {
        let Some(name) = text_of(name) else { continue };
        if name == "schema-version" {
            continue;
        }
        let description = c.get("description").and_then(text_of).unwrap_or_default();
        let Some(Value::Mapping(archs)) = c.get("architectures") else {
            return Err(schema(format!(
                "counter {name}: `architectures` is not a map"
            )));
        };
        let mut raw = Vec::new();
        for (group, d) in archs {
            let group = text_of(group).unwrap_or_default();
            let list: Vec<String> = group.split('/').map(str::to_string).collect();
            raw.push(definition(&name, list, d, schema)?);
        }
        out.push((name, description, raw));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_parses_and_covers_both_agents() {
        let d = Definitions::parse(SHIPPED, "shipped").unwrap();
        let archs = d.architectures();
        assert!(
            archs.contains("gfx90a") && archs.contains("gfx942"),
            "{archs:?}"
        );
    }

    #[test]
    fn both_schemas_read_the_same() {
        let v1 = "rocprofiler-sdk:\n  counters-schema-version: 1\n  counters:\n  - name: A\n    description: d\n    properties: []\n    definitions:\n    - architectures: [gfx90a, gfx942]\n      block: SQ\n      event: 4\n  - name: B\n    description: e\n    definitions:\n    - architectures: [gfx90a]\n      expression: reduce(A,sum)\n";
        let v0 = "schema-version: 0\nA:\n  architectures:\n    gfx90a/gfx942:\n      block: SQ\n      event: 4\n  description: d\nB:\n  architectures:\n    gfx90a:\n      expression: reduce(A,sum)\n  description: e\n";
        let a = Definitions::parse(v1, "x").unwrap();
        let b = Definitions::parse(v0, "x").unwrap();
        assert_eq!(a.counters, b.counters);
    }

    #[test]
    fn a_bad_expression_names_file_counter_and_position() {
        let text = "rocprofiler-sdk:\n  counters:\n  - name: Bad\n    description: x\n    definitions:\n    - architectures: [gfx90a]\n      expression: 100*reduce(A,mean)\n";
        let e = Definitions::parse(text, "defs.yaml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "counter definitions defs.yaml: counter Bad (gfx90a): expression \"100*reduce(A,mean)\" \
             at position 13: \"mean\" is not a reduction (sum, avr, min or max)"
        );
        let e = Definitions::parse("a: [", "y.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("counter definitions y.yaml: ") && e.contains("line"),
            "{e}"
        );
        let text = "rocprofiler-sdk:\n  counters:\n  - name: C\n    definitions:\n    - architectures: [gfx90a]\n      block: SQ\n";
        let e = Definitions::parse(text, "z.yaml").unwrap_err().to_string();
        assert!(e.contains("counter C (gfx90a)"), "{e}");
    }
}
