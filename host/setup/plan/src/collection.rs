//! [`CollectionPlan`]: when a run collects — rocprofv3's
//! `-P/--collection-period` (with `--collection-period-unit`), resolved.
//!
//! | rocprofv3 option | chain file (`[collection]`) | field |
//! |---|---|---|
//! | `-P/--collection-period START:STOP:REPEAT[;…]` | `period = "…"` | [`CollectionPlan::period`] |
//! | `--collection-period-unit UNIT` | `period_unit = "…"` | [`CollectionPlan::period_unit`] |
//! | `--selected-regions` | `selected_regions = true` | [`CollectionPlan::selected_regions`] |
//!
//! The meaning, as rocprofv3's: from the start of the application (the
//! session start; a replay's recorded start), wait START, collect for STOP,
//! and do so REPEAT times (0: forever); several periods separated by `;`
//! follow one another. Times are in seconds unless `--collection-period-unit`
//! says `hour`, `min`, `sec`, `msec`, `usec` or `nsec`. A record is kept
//! when its timestamps (start and end) lie inside one collection window;
//! every other record is dropped from every output, stages included, and
//! counted.
//!
//! `--selected-regions`, as rocprofv3's: the run starts paused and records
//! only between `roctxProfilerResume` and `roctxProfilerPause` (process-wide,
//! whatever thread id is passed); what is not recorded is counted. It needs
//! the live application (a recording keeps no pause state), and it does not
//! combine with a collection period (rocprofv3 then ignores the pause and
//! resume calls; here that is an error, [`CollectionPlan::check`]).
//!
//! The syntax checks ([`CollectionPlan::windows`]) and the membership test
//! ([`Windows::contains`]) live here, so the chain file, the flags and the
//! run that applies them read one definition.

use serde::{Deserialize, Serialize};

use crate::kernels::KernelOptionError;

/// rocprofv3's collection-period options. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectionPlan {
    /// `-P/--collection-period`, as written (`START:STOP:REPEAT[;…]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<String>,
    /// `--collection-period-unit` (`sec` when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_unit: Option<String>,
    /// `--selected-regions`: record only between `roctxProfilerResume` and
    /// `roctxProfilerPause`, starting paused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selected_regions: bool,
    /// `--pmc`: hardware counters to count for every kernel dispatch, as
    /// given (`NAME` or `NAME:device=N`), checked by the launcher.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<String>,
    /// `--counter-defs`: the counter definitions file (absolute), else
    /// rocwasm's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_defs: Option<String>,
}

/// One `START:STOP:REPEAT` period, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Period {
    delay: u64,
    duration: u64,
    /// 0: forever.
    repeat: u64,
}

/// The collection windows of a run, measured from its start
/// ([`CollectionPlan::windows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windows {
    origin: u64,
    periods: Vec<Period>,
}

impl CollectionPlan {
    /// The option names, as rocprofv3 spells them.
    pub const PERIOD: &'static str = "--collection-period";
    /// See [`CollectionPlan::PERIOD`].
    pub const UNIT: &'static str = "--collection-period-unit";
    /// See [`CollectionPlan::PERIOD`].
    pub const SELECTED_REGIONS: &'static str = "--selected-regions";

    /// Checks every option ([`CollectionPlan::windows`], and that
    /// `--selected-regions` comes without a period); an error names the
    /// option and its value.
    pub fn check(&self) -> Result<(), KernelOptionError> {
        self.windows(0)?;
        if self.selected_regions && self.period.is_some() {
            return Err(KernelOptionError {
                option: Self::SELECTED_REGIONS,
                value: "true".into(),
                reason: format!(
                    "it cannot be combined with {} (rocprofv3 would ignore roctxProfilerPause/Resume); choose one",
                    Self::PERIOD
                ),
            });
        }
        Ok(())
    }

    /// True when no option is set: every record is kept.
    pub fn is_default(&self) -> bool {
        *self == CollectionPlan::default()
    }

    /// Nanoseconds per unit of `--collection-period-unit`.
    fn unit_ns(&self) -> Result<u64, KernelOptionError> {
        let unit = self.period_unit.as_deref().unwrap_or("sec");
        crate::units::ns_per(unit, &["hour", "min", "sec", "msec", "usec", "nsec"]).ok_or_else(
            || KernelOptionError {
                option: Self::UNIT,
                value: unit.to_string(),
                reason: "not a unit (expected hour, min, sec, msec, usec or nsec)".into(),
            },
        )
    }

    /// Checks the options: `None` when no period is set, else the windows
    /// of a run that started at `origin` (ns). An error names the option
    /// and its value.
    pub fn windows(&self, origin: u64) -> Result<Option<Windows>, KernelOptionError> {
        let unit = self.unit_ns()?;
        let Some(text) = &self.period else {
            return Ok(None);
        };
        let fail = |reason: String| KernelOptionError {
            option: Self::PERIOD,
            value: text.clone(),
            reason,
        };
        let mut periods = Vec::new();
        for item in text.split(';').map(str::trim) {
            let fields: Vec<&str> = item.split(':').collect();
            let [delay, duration, repeat] = fields[..] else {
                return Err(fail(format!(
                    "`{item}` is not START:STOP:REPEAT (e.g. `1:2:0`, periods separated by `;`)"
                )));
            };
            let number = |s: &str, what: &str| {
                s.trim()
                    .parse::<u64>()
                    .map_err(|_| fail(format!("`{s}` in `{item}` is not a whole number ({what})")))
            };
            let scaled = |n: u64, what: &str| {
                n.checked_mul(unit)
                    .ok_or_else(|| fail(format!("{what} in `{item}` is too long")))
            };
            let period = Period {
                delay: scaled(number(delay, "the delay")?, "the delay")?,
                duration: scaled(number(duration, "the duration")?, "the duration")?,
                repeat: number(repeat, "the repeat count")?,
            };
            if period.duration == 0 {
                return Err(fail(format!("`{item}` collects for no time (STOP is 0)")));
            }
            // One cycle, and every repeat of it, must fit in the clock's
            // range: `contains` then cannot overflow.
            let cycle = period.delay.checked_add(period.duration);
            if cycle
                .and_then(|c| c.checked_mul(period.repeat.max(1)))
                .is_none()
            {
                return Err(fail(format!("`{item}` is too long (past 2^64 ns)")));
            }
            periods.push(period);
        }
        Ok(Some(Windows { origin, periods }))
    }
}

impl Windows {
    /// The same windows for a run that started at `origin` (ns).
    pub fn with_origin(&self, origin: u64) -> Windows {
        Windows {
            origin,
            periods: self.periods.clone(),
        }
    }

    /// True when `[start, end]` (ns, the run's clock) lies inside one
    /// collection window: it starts in `[open, close)` and ends by `close`.
    pub fn contains(&self, start: u64, end: u64) -> bool {
        let (Some(mut s), Some(mut e)) = (
            start.checked_sub(self.origin),
            end.max(start).checked_sub(self.origin),
        ) else {
            return false;
        };
        for p in &self.periods {
            // Checked when parsed: a cycle and all its repeats fit in u64,
            // and a cycle is never 0 (its duration is not).
            let cycle = p.delay.saturating_add(p.duration).max(1);
            let k = s / cycle;
            if p.repeat == 0 || k < p.repeat {
                let from = k.saturating_mul(cycle).saturating_add(p.delay);
                return s >= from && e <= from.saturating_add(p.duration);
            }
            // Past this period: the next one starts where it ended.
            let done = p.repeat.saturating_mul(cycle);
            s = s.saturating_sub(done);
            e = e.saturating_sub(done);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(period: &str, unit: Option<&str>) -> CollectionPlan {
        CollectionPlan {
            period: Some(period.into()),
            period_unit: unit.map(Into::into),
            ..Default::default()
        }
    }

    #[test]
    fn windows_follow_rocprofv3s_periods() {
        // 2 ns wait, 3 ns collect, twice; then 1 ns wait, 1 ns collect, forever.
        let w = plan("2:3:2;1:1:0", Some("nsec"))
            .windows(100)
            .unwrap()
            .unwrap();
        let kept: Vec<u64> = (95..125).filter(|&t| w.contains(t, t)).collect();
        assert_eq!(
            kept,
            [102, 103, 104, 107, 108, 109, 111, 113, 115, 117, 119, 121, 123]
        );
        assert!(w.contains(102, 105) && !w.contains(104, 107));
        let w = plan("1:1:1", None).windows(0).unwrap().unwrap();
        assert!(w.contains(1_000_000_000, 2_000_000_000));
        assert!(!w.contains(2_000_000_001, 2_000_000_001));
        assert_eq!(CollectionPlan::default().windows(0).unwrap(), None);
    }

    #[test]
    fn selected_regions_do_not_combine_with_a_period() {
        let mut p = plan("1:1:0", None);
        assert!(p.check().is_ok());
        p.selected_regions = true;
        let e = p.check().unwrap_err().to_string();
        assert!(
            e.starts_with(
                "bad --selected-regions `true`: it cannot be combined with --collection-period"
            ),
            "{e}"
        );
        p.period = None;
        assert!(p.check().is_ok());
    }

    #[test]
    fn bad_values_name_the_option_and_value() {
        for (p, unit, want) in [
            (
                "1:2",
                None,
                "bad --collection-period `1:2`: `1:2` is not START:STOP:REPEAT",
            ),
            (
                "1:x:0",
                None,
                "bad --collection-period `1:x:0`: `x` in `1:x:0` is not a whole number",
            ),
            (
                "1:0:0",
                None,
                "bad --collection-period `1:0:0`: `1:0:0` collects for no time",
            ),
            (
                "1:1:0",
                Some("days"),
                "bad --collection-period-unit `days`: not a unit",
            ),
            (
                "10000000000:10000000000:0",
                None,
                "bad --collection-period `10000000000:10000000000:0`: `10000000000:10000000000:0` is too long",
            ),
            (
                "9223372036854775808:9223372036854775808:0",
                Some("nsec"),
                "bad --collection-period `9223372036854775808:9223372036854775808:0`: `9223372036854775808:9223372036854775808:0` is too long",
            ),
            (
                "1:1:18446744073709551615",
                Some("nsec"),
                "bad --collection-period `1:1:18446744073709551615`: `1:1:18446744073709551615` is too long",
            ),
        ] {
            let e = plan(p, unit).windows(0).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
    }
}
