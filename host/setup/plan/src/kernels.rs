//! [`KernelPlan`]: which kernel dispatches a run keeps and how it names
//! kernels — rocprofv3's kernel options, resolved.
//!
//! | rocprofv3 option | chain file (`[kernels]`) | field |
//! |---|---|---|
//! | `--kernel-include-regex RE` | `include_regex = "RE"` | [`KernelPlan::include_regex`] |
//! | `--kernel-exclude-regex RE` | `exclude_regex = "RE"` | [`KernelPlan::exclude_regex`] |
//! | `--kernel-iteration-range R` | `iteration_range = "R"` | [`KernelPlan::iteration_range`] |
//! | `-T/--truncate-kernels` | `truncate = true` | [`KernelPlan::truncate`] |
//! | `-M/--mangled-kernels` | `mangled = true` | [`KernelPlan::mangled`] |
//! | `--kernel-rename` | `rename = true` | [`KernelPlan::rename`] |
//!
//! The meaning, as rocprofv3's: a dispatch is kept when its kernel's name
//! (as the outputs write it, so after `-T`/`-M`) matches the include
//! expression (anywhere in the name, `regex` search semantics; none given:
//! every name), does not match the exclude expression, and its iteration —
//! the how-manyth kept dispatch of a kernel of that name it is, counting
//! from 1 — lies in the iteration range. A dispatch not kept is dropped
//! from every output, stages included, and counted.
//!
//! Both the syntax checks ([`KernelPlan::compile`]) and the matching
//! ([`KernelFilters`]) live here, so the chain file, the flags and the run
//! that applies them read one definition.

use std::fmt;

use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// rocprofv3's kernel options. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelPlan {
    /// Keep only dispatches of kernels whose name matches (`--kernel-include-regex`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_regex: Option<String>,
    /// Drop dispatches of kernels whose name matches (`--kernel-exclude-regex`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_regex: Option<String>,
    /// Keep only these iterations of each kernel (`--kernel-iteration-range`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration_range: Option<IterationRange>,
    /// Cut kernel names before their argument list (`-T/--truncate-kernels`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncate: bool,
    /// Keep kernel names mangled (`-M/--mangled-kernels`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub mangled: bool,
    /// A dispatch takes the name of the innermost roctx range enclosing its
    /// launch on the launching thread (`--kernel-rename`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub rename: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A kernel option whose value cannot be used: names the option (as
/// rocprofv3 spells it) and the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelOptionError {
    /// The rocprofv3 option, e.g. `--kernel-include-regex`.
    pub option: &'static str,
    /// The value as given.
    pub value: String,
    /// Why it cannot be used, a sentence fragment.
    pub reason: String,
}

impl fmt::Display for KernelOptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad {} `{}`: {}", self.option, self.value, self.reason)
    }
}

impl std::error::Error for KernelOptionError {}

impl KernelPlan {
    /// The option names, as rocprofv3 spells them.
    pub const INCLUDE: &'static str = "--kernel-include-regex";
    /// See [`KernelPlan::INCLUDE`].
    pub const EXCLUDE: &'static str = "--kernel-exclude-regex";
    /// See [`KernelPlan::INCLUDE`].
    pub const ITERATIONS: &'static str = "--kernel-iteration-range";

    /// True when no option is set: every dispatch is kept, names as recorded.
    pub fn is_default(&self) -> bool {
        *self == KernelPlan::default()
    }

    /// True when some dispatches may be dropped or renamed.
    pub fn selects(&self) -> bool {
        self.include_regex.is_some()
            || self.exclude_regex.is_some()
            || self.iteration_range.is_some()
            || self.rename
    }

    /// The compiled expressions; an error names the option and its value.
    pub fn compile(&self) -> Result<KernelFilters, KernelOptionError> {
        let re = |option: &'static str, text: &Option<String>| {
            text.as_deref()
                .map(|t| {
                    Regex::new(t).map_err(|e| KernelOptionError {
                        option,
                        value: t.to_string(),
                        reason: format!(
                            "not a regular expression ({})",
                            e.to_string().lines().last().unwrap_or("").trim()
                        ),
                    })
                })
                .transpose()
        };
        Ok(KernelFilters {
            include: re(Self::INCLUDE, &self.include_regex)?,
            exclude: re(Self::EXCLUDE, &self.exclude_regex)?,
            iterations: self.iteration_range.clone(),
        })
    }
}

/// Why a dispatch was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Kept.
    Keep,
    /// Its name does not match `--kernel-include-regex`.
    NotIncluded,
    /// Its name matches `--kernel-exclude-regex`.
    Excluded,
    /// Its iteration is outside `--kernel-iteration-range`.
    OutsideIterations,
}

/// [`KernelPlan`]'s name filters, compiled ([`KernelPlan::compile`]).
#[derive(Debug, Clone)]
pub struct KernelFilters {
    include: Option<Regex>,
    exclude: Option<Regex>,
    iterations: Option<IterationRange>,
}

impl KernelFilters {
    /// The name filters' verdict on a kernel name (before iterations).
    pub fn by_name(&self, name: &str) -> Verdict {
        if self.include.as_ref().is_some_and(|r| !r.is_match(name)) {
            Verdict::NotIncluded
        } else if self.exclude.as_ref().is_some_and(|r| r.is_match(name)) {
            Verdict::Excluded
        } else {
            Verdict::Keep
        }
    }

    /// The iteration range's verdict on the `iteration`th (from 1)
    /// dispatch of a kernel that passed the name filters.
    pub fn by_iteration(&self, iteration: u64) -> Verdict {
        match &self.iterations {
            Some(r) if !r.contains(iteration) => Verdict::OutsideIterations,
            _ => Verdict::Keep,
        }
    }

    /// True when an iteration range is set (iterations must be counted).
    pub fn counts_iterations(&self) -> bool {
        self.iterations.is_some()
    }
}

/// rocprofv3's `--kernel-iteration-range`: iterations counted from 1,
/// written as numbers and inclusive `a-b` spans separated by commas, in
/// brackets or not: `[1-3]`, `[2,5-7]`, `6`, `[1-2],[4-4]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IterationRange {
    text: String,
    spans: Vec<(u64, u64)>,
}

impl IterationRange {
    /// Parses the rocprofv3 syntax; the error names the option and value.
    pub fn parse(text: &str) -> Result<IterationRange, KernelOptionError> {
        let fail = |reason: String| KernelOptionError {
            option: KernelPlan::ITERATIONS,
            value: text.to_string(),
            reason,
        };
        let inner: String = text
            .chars()
            .filter(|c| !matches!(c, '[' | ']') && !c.is_whitespace())
            .collect();
        let brackets_ok = {
            let mut depth = 0i32;
            text.chars().all(|c| {
                depth += match c {
                    '[' => 1,
                    ']' => -1,
                    _ => 0,
                };
                (0..=1).contains(&depth)
            }) && depth == 0
        };
        if !brackets_ok {
            return Err(fail("unbalanced brackets".into()));
        }
        if inner.is_empty() {
            return Err(fail(
                "no iterations given (expected e.g. `[1-3]` or `[2,5-7]`)".into(),
            ));
        }
        let number = |s: &str| {
            s.parse::<u64>().map_err(|_| {
                fail(format!(
                    "`{s}` is not an iteration number (expected e.g. `[1-3]` or `[2,5-7]`)"
                ))
            })
        };
        let mut spans = Vec::new();
        for item in inner.split(',') {
            let (a, b) = match item.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => {
                    let n = number(item)?;
                    (n, n)
                }
            };
            if a == 0 {
                return Err(fail("iterations count from 1".into()));
            }
            if b < a {
                return Err(fail(format!("the span `{item}` ends before it starts")));
            }
            spans.push((a, b));
        }
        Ok(IterationRange {
            text: text.to_string(),
            spans,
        })
    }

    /// True when iteration `n` (from 1) is in the range.
    pub fn contains(&self, n: u64) -> bool {
        self.spans.iter().any(|&(a, b)| (a..=b).contains(&n))
    }

    /// The range as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl Serialize for IterationRange {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for IterationRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        IterationRange::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iteration_ranges_in_rocprofv3_syntax() {
        let r = IterationRange::parse("[2,5-7]").unwrap();
        let kept: Vec<u64> = (1..=9).filter(|&n| r.contains(n)).collect();
        assert_eq!(kept, [2, 5, 6, 7]);
        let r = IterationRange::parse("[1-3]").unwrap();
        assert!(r.contains(1) && r.contains(3) && !r.contains(4));
        assert!(IterationRange::parse("6").unwrap().contains(6));
        let r = IterationRange::parse("[1-2],[4-4]").unwrap();
        assert!(r.contains(2) && !r.contains(3) && r.contains(4));
        assert_eq!(r.as_str(), "[1-2],[4-4]");
    }

    #[test]
    fn malformed_ranges_name_the_option_and_value() {
        for (bad, why) in [
            ("[1-", "unbalanced brackets"),
            ("[1-]", "`` is not an iteration number"),
            ("[3-1]", "ends before it starts"),
            ("[0-2]", "count from 1"),
            ("[a]", "`a` is not an iteration number"),
            ("[]", "no iterations given"),
            ("[[1]", "unbalanced"),
            ("1-2]", "unbalanced"),
        ] {
            let e = IterationRange::parse(bad).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("bad --kernel-iteration-range `{bad}`: ")),
                "{e}"
            );
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn name_filters_search_the_name() {
        let plan = KernelPlan {
            include_regex: Some("^(square|scale)".into()),
            exclude_regex: Some("scale".into()),
            ..KernelPlan::default()
        };
        let f = plan.compile().unwrap();
        assert_eq!(
            f.by_name("square(float const*, float*, int)"),
            Verdict::Keep
        );
        assert_eq!(f.by_name("scale(float*, float, int)"), Verdict::Excluded);
        assert_eq!(f.by_name("vector_add(float)"), Verdict::NotIncluded);
        let e = KernelPlan {
            exclude_regex: Some("(".into()),
            ..KernelPlan::default()
        }
        .compile()
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("bad --kernel-exclude-regex `(`: not a regular expression"),
            "{e}"
        );
    }

    #[test]
    fn the_plan_round_trips_and_omits_defaults() {
        let plan = KernelPlan {
            iteration_range: Some(IterationRange::parse("[2,5-7]").unwrap()),
            truncate: true,
            ..KernelPlan::default()
        };
        let json = serde_json::to_string(&plan).unwrap();
        assert_eq!(json, r#"{"iteration_range":"[2,5-7]","truncate":true}"#);
        assert_eq!(serde_json::from_str::<KernelPlan>(&json).unwrap(), plan);
        assert!(serde_json::from_str::<KernelPlan>(r#"{"iteration_range":"[x]"}"#).is_err());
    }
}
