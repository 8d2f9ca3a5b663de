//! `[summary]` and its flags: rocprofv3's end-of-run summaries in a chain
//! file.
//!
//! ```toml
//! [summary]
//! all = true                                # -S/--summary
//! groups = ["KERNEL_DISPATCH|MEMORY_COPY"]  # --summary-groups
//! output_file = "stdout"                    # --summary-output-file (default stderr)
//! units = "usec"                            # -u/--summary-units (default nsec)
//! ```
//!
//! A flag replaces the chain file's value of the same option (`-S` turns
//! `all` on; groups given as flags replace the file's). What the options
//! mean and their checks are `rocwasm_plan::summary`'s; here they are only
//! read, and a bad value becomes a [`ConfigError`] at the value (chain file)
//! or naming the flag. A live run's summary needs traced domains: `rocwasm
//! run` refuses a chain that prints one but traces nothing for the host's
//! outputs ([`Chain::check_summary_has_data`]), as rocprofv3 refuses
//! `--summary` without a tracing option (a replay summarizes its recording).

use rocwasm_plan::SummaryPlan;
use toml::Spanned;

use crate::error::ConfigError;
use crate::flags::TraceFlags;
use crate::model::Chain;
use crate::raw::RawSummary;
use crate::validate::Validator;

impl Validator<'_> {
    /// `[summary]`, checked; absent: no summary.
    pub(crate) fn summaries(
        &self,
        raw: Option<&Spanned<RawSummary>>,
    ) -> Result<SummaryPlan, ConfigError> {
        let Some(raw) = raw.map(Spanned::get_ref) else {
            return Ok(SummaryPlan::default());
        };
        let plan = SummaryPlan {
            all: raw.all.as_ref().is_some_and(|v| *v.get_ref()),
            groups: raw
                .groups
                .as_ref()
                .map(|v| v.get_ref().clone())
                .unwrap_or_default(),
            output_file: raw.output_file.as_ref().map(|v| v.get_ref().clone()),
            units: raw.units.as_ref().map(|v| v.get_ref().clone()),
        };
        if let Err(e) = plan.check() {
            let (key, span) = match e.option {
                SummaryPlan::GROUPS => ("groups", raw.groups.as_ref().map(Spanned::span)),
                SummaryPlan::UNITS => ("units", raw.units.as_ref().map(Spanned::span)),
                _ => ("output_file", raw.output_file.as_ref().map(Spanned::span)),
            };
            return Err(self.src.error(
                span.unwrap_or_default(),
                format!(
                    "bad `{key}` in [summary] (rocprofv3's {}) `{}`: {}",
                    e.option, e.value, e.reason
                ),
            ));
        }
        Ok(plan)
    }
}

impl Chain {
    /// Amends `[summary]` with the summary flags, then checks the result.
    pub(crate) fn apply_summary_flags(&mut self, flags: &TraceFlags) -> Result<(), ConfigError> {
        let s = &mut self.summary;
        s.all |= flags.summary;
        if !flags.summary_groups.is_empty() {
            s.groups = flags.summary_groups.clone();
        }
        if let Some(f) = &flags.summary_output_file {
            s.output_file = Some(f.clone());
        }
        if let Some(u) = &flags.summary_units {
            s.units = Some(u.clone());
        }
        s.check().map_err(|e| ConfigError::Invalid {
            message: e.to_string(),
        })
    }

    /// A live run's summary needs something to summarize: refused when
    /// one is asked for and the host's outputs trace nothing.
    pub fn check_summary_has_data(&self) -> Result<(), ConfigError> {
        if self.summary.prints() && self.output.trace.is_empty() {
            return Err(ConfigError::Invalid {
                message: format!(
                    "{} and {} summarize the traced domains, and nothing is traced: add a tracing option (e.g. --kernel-trace, --hip-trace, -s) or `trace` in [output]",
                    SummaryPlan::ALL,
                    SummaryPlan::GROUPS
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_flags_reach_the_plan_and_bad_ones_name_the_flag() {
        let c = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            summary: true,
            summary_groups: vec!["KERNEL_DISPATCH|MEMORY_COPY".into()],
            summary_units: Some("usec".into()),
            summary_output_file: Some("stdout".into()),
            ..Default::default()
        })
        .unwrap();
        let plan = c.to_plan(&Default::default()).summary;
        assert!(plan.all && plan.prints());
        assert_eq!(plan.groups, ["KERNEL_DISPATCH|MEMORY_COPY"]);
        assert_eq!(plan.units.as_deref(), Some("usec"));
        let e = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            summary_units: Some("hour".into()),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("bad --summary-units `hour`: "), "{e}");
        let e = Chain::from_flags(&TraceFlags {
            stats: true,
            summary: true,
            ..Default::default()
        })
        .unwrap()
        .check_summary_has_data()
        .unwrap_err()
        .to_string();
        assert!(e.contains("nothing is traced"), "{e}");
    }
}
