//! `[collection]` and its flags: rocprofv3's `-P/--collection-period` in a
//! chain file.
//!
//! ```toml
//! [collection]
//! period = "1:2:0"        # -P/--collection-period START:STOP:REPEAT[;…]
//! period_unit = "msec"    # --collection-period-unit (default sec)
//! # selected_regions = true  # --selected-regions (not with `period`)
//! ```
//!
//! A flag replaces the chain file's value of the same option. What the
//! options mean, their syntax and their checks are
//! `rocwasm_plan::collection`'s; here they are only read, and a bad value
//! becomes a [`ConfigError`] at the value (chain file) or naming the flag.

use rocwasm_plan::{CollectionPlan, KernelOptionError};
use toml::Spanned;

use crate::error::ConfigError;
use crate::flags::TraceFlags;
use crate::model::Chain;
use crate::raw::RawCollection;
use crate::validate::Validator;

impl Validator<'_> {
    /// `[collection]`, checked; absent: every record kept.
    pub(crate) fn collection(
        &self,
        raw: Option<&Spanned<RawCollection>>,
    ) -> Result<CollectionPlan, ConfigError> {
        let Some(raw) = raw.map(Spanned::get_ref) else {
            return Ok(CollectionPlan::default());
        };
        let plan = CollectionPlan {
            period: raw.period.as_ref().map(|v| v.get_ref().clone()),
            period_unit: raw.period_unit.as_ref().map(|v| v.get_ref().clone()),
            selected_regions: raw.selected_regions.as_ref().is_some_and(|v| *v.get_ref()),
            ..CollectionPlan::default()
        };
        if let Err(e) = plan.check() {
            let (key, span) = if e.option == CollectionPlan::UNIT {
                ("period_unit", raw.period_unit.as_ref().map(Spanned::span))
            } else if e.option == CollectionPlan::SELECTED_REGIONS {
                (
                    "selected_regions",
                    raw.selected_regions.as_ref().map(Spanned::span),
                )
            } else {
                ("period", raw.period.as_ref().map(Spanned::span))
            };
            let span = span.unwrap_or_default();
            return Err(self.src.error(
                span,
                format!(
                    "bad `{key}` in [collection] (rocprofv3's {}) `{}`: {}",
                    e.option, e.value, e.reason
                ),
            ));
        }
        Ok(plan)
    }
}

impl Chain {
    /// Amends `[collection]` with the collection flags, then checks the result.
    pub(crate) fn apply_collection_flags(&mut self, flags: &TraceFlags) -> Result<(), ConfigError> {
        let c = &mut self.collection;
        if let Some(p) = &flags.collection_period {
            c.period = Some(p.clone());
        }
        if let Some(u) = &flags.collection_period_unit {
            c.period_unit = Some(u.clone());
        }
        c.selected_regions |= flags.selected_regions;
        for name in &flags.pmc {
            if !c.counters.contains(name) {
                c.counters.push(name.clone());
            }
        }
        if flags.counter_defs.is_some() {
            c.counter_defs = flags.counter_defs.clone();
        }
        c.check()
            .map_err(|e: KernelOptionError| ConfigError::Invalid {
                message: e.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_flags_reach_the_plan_and_bad_ones_name_the_flag() {
        let c = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            collection_period: Some("0:5:1".into()),
            collection_period_unit: Some("msec".into()),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.to_plan(&Default::default()).collection, c.collection);
        assert_eq!(c.collection.period.as_deref(), Some("0:5:1"));
        let e = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            collection_period: Some("1:2".into()),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("bad --collection-period `1:2`: "), "{e}");
        let c = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            selected_regions: true,
            ..Default::default()
        })
        .unwrap();
        assert!(c.to_plan(&Default::default()).collection.selected_regions);
        let e = Chain::from_flags(&TraceFlags {
            kernel_trace: true,
            selected_regions: true,
            collection_period: Some("0:1:0".into()),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("bad --selected-regions"), "{e}");
    }
}
