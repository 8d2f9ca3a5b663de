//! [`SummaryPlan`]: rocprofv3's end-of-run summaries of the tracing data,
//! resolved.
//!
//! | rocprofv3 option | chain file (`[summary]`) | field |
//! |---|---|---|
//! | `-S/--summary` | `all = true` | [`SummaryPlan::all`] |
//! | `--summary-groups REGEX [REGEX…]` | `groups = ["…"]` | [`SummaryPlan::groups`] |
//! | `--summary-output-file NAME` | `output_file = "…"` | [`SummaryPlan::output_file`] |
//! | `-u/--summary-units UNIT` | `units = "…"` | [`SummaryPlan::units`] |
//!
//! The meaning, as rocprofv3's: `-S` prints one table of every traced
//! domain's statistics together (`ROCPROFV3 SUMMARY`: per name, its domain,
//! calls, total, average, share of the table's total, min, max, standard
//! deviation); `--summary-groups` one such table per regular expression,
//! over the domains whose name (`KERNEL_DISPATCH`, `HIP_API`, `HSA_API`,
//! `MARKER_API`, `MEMORY_COPY`) the expression matches whole
//! (`KERNEL_DISPATCH|MEMORY_COPY`, `.*_API`). The summary goes to stderr
//! unless `--summary-output-file` says `stdout`, `stderr` or a file name (the
//! file is `<dir>/[<prefix>_]<name>.txt`); times are in nanoseconds unless
//! `--summary-units` says `sec`, `msec` or `usec`.
//!
//! The checks ([`SummaryPlan::check`]) and the domain matching
//! ([`SummaryPlan::group_matchers`]) live here, so the chain file, the flags
//! and the run that prints the summary read one definition.

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::kernels::KernelOptionError;

/// rocprofv3's summary options. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryPlan {
    /// `-S/--summary`: one summary of every traced domain.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all: bool,
    /// `--summary-groups`: one summary per expression, of the domains it
    /// matches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// `--summary-output-file`: `stdout`, `stderr` (the default) or a file
    /// name in the output directory (`.txt` added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_file: Option<String>,
    /// `-u/--summary-units`: `sec`, `msec`, `usec` or `nsec` (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<String>,
}

/// Where the summary goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryDestination {
    /// The process's standard output.
    Stdout,
    /// The process's standard error (rocprofv3's default).
    Stderr,
    /// `<dir>/[<prefix>_]<name>.txt`.
    File(String),
}

impl SummaryPlan {
    /// The option names, as rocprofv3 spells them.
    pub const ALL: &'static str = "-S/--summary";
    /// See [`SummaryPlan::ALL`].
    pub const GROUPS: &'static str = "--summary-groups";
    /// See [`SummaryPlan::ALL`].
    pub const OUTPUT_FILE: &'static str = "--summary-output-file";
    /// See [`SummaryPlan::ALL`].
    pub const UNITS: &'static str = "--summary-units";

    /// True when no option is set.
    pub fn is_default(&self) -> bool {
        *self == SummaryPlan::default()
    }

    /// True when a summary is printed at the end (`-S` or a group).
    pub fn prints(&self) -> bool {
        self.all || !self.groups.is_empty()
    }

    /// Checks every option; an error names the option and its value.
    pub fn check(&self) -> Result<(), KernelOptionError> {
        self.unit()?;
        self.group_matchers()?;
        self.destination()?;
        Ok(())
    }

    /// The unit's name and nanoseconds per unit.
    pub fn unit(&self) -> Result<(&str, u64), KernelOptionError> {
        let unit = self.units.as_deref().unwrap_or("nsec");
        let ns = crate::units::ns_per(unit, &["sec", "msec", "usec", "nsec"]).ok_or_else(|| {
            KernelOptionError {
                option: Self::UNITS,
                value: unit.to_string(),
                reason: "not a unit (expected sec, msec, usec or nsec)".into(),
            }
        })?;
        Ok((unit, ns))
    }

    /// One matcher per `--summary-groups` expression: it matches a domain
    /// name whole, as rocprofv3's `std::regex_match`.
    pub fn group_matchers(&self) -> Result<Vec<Regex>, KernelOptionError> {
        self.groups
            .iter()
            .map(|g| {
                Regex::new(&format!("^(?:{g})$")).map_err(|e| KernelOptionError {
                    option: Self::GROUPS,
                    value: g.clone(),
                    reason: format!(
                        "not a regular expression ({})",
                        e.to_string().lines().last().unwrap_or_default().trim()
                    ),
                })
            })
            .collect()
    }

    /// Where the summary goes (`stdout`/`stderr` in any case, as rocprofv3).
    pub fn destination(&self) -> Result<SummaryDestination, KernelOptionError> {
        let Some(name) = &self.output_file else {
            return Ok(SummaryDestination::Stderr);
        };
        let fail = |reason: &str| KernelOptionError {
            option: Self::OUTPUT_FILE,
            value: name.clone(),
            reason: reason.into(),
        };
        Ok(match name.to_ascii_lowercase().as_str() {
            "stdout" => SummaryDestination::Stdout,
            "stderr" => SummaryDestination::Stderr,
            "" => return Err(fail("an empty file name")),
            _ if name.contains('/') => {
                return Err(fail(
                    "a file name cannot contain `/` (the file goes to the output directory)",
                ))
            }
            _ => SummaryDestination::File(name.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_match_domain_names_whole() {
        let plan = SummaryPlan {
            groups: vec!["KERNEL_DISPATCH|MEMORY_COPY".into(), ".*_API".into()],
            ..Default::default()
        };
        let m = plan.group_matchers().unwrap();
        assert!(m[0].is_match("KERNEL_DISPATCH") && m[0].is_match("MEMORY_COPY"));
        assert!(!m[0].is_match("HIP_API") && !m[0].is_match("XKERNEL_DISPATCH"));
        assert!(m[1].is_match("HIP_API") && m[1].is_match("MARKER_API"));
        assert!(!m[1].is_match("MEMORY_COPY"));
        assert!(plan.prints() && plan.check().is_ok());
    }

    #[test]
    fn bad_values_name_the_option_and_value() {
        for (plan, want) in [
            (
                SummaryPlan {
                    groups: vec!["*._API".into()],
                    ..Default::default()
                },
                "bad --summary-groups `*._API`: not a regular expression",
            ),
            (
                SummaryPlan {
                    units: Some("min".into()),
                    ..Default::default()
                },
                "bad --summary-units `min`: not a unit",
            ),
            (
                SummaryPlan {
                    output_file: Some("a/b".into()),
                    ..Default::default()
                },
                "bad --summary-output-file `a/b`: a file name cannot contain `/`",
            ),
        ] {
            let e = plan.check().unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
        let p = SummaryPlan {
            output_file: Some("STDOUT".into()),
            units: Some("msec".into()),
            ..Default::default()
        };
        assert_eq!(p.destination().unwrap(), SummaryDestination::Stdout);
        assert_eq!(p.unit().unwrap(), ("msec", 1_000_000));
        assert_eq!(
            SummaryPlan::default().destination().unwrap(),
            SummaryDestination::Stderr
        );
    }
}
