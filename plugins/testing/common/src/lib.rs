//! Scaffolding for the hostile test plugins (`trap`, `endless-loop`,
//! `memory-bomb`, `deep-recursion`): a well-behaved analysis plugin that
//! misbehaves in one chosen export, on one chosen call.
//!
//! Config keys shared by all of them:
//! - `at`: the export that misbehaves — `configure`, `init`, `deliver-batch`
//!   (default), `on-callback`, `on-external-correlation-request` or `fini`;
//! - `after`: misbehave on this call of that export, 1-based (default 1), so
//!   a test can check that earlier calls went through (and, with a restart
//!   policy, that a fresh instance starts counting again);
//! - `trace`: comma-separated buffer kinds (`KERNEL_DISPATCH,HIP_RUNTIME_API`)
//!   to trace from `init` when the chain sets up nothing for the stage.
//!
//! Until it misbehaves the plugin accepts `configure`, passes callback user
//! data through and answers no external-correlation request.

use rocwasm_plugin_sdk::prelude::*;

/// An export of the analysis world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    Configure,
    Init,
    DeliverBatch,
    OnCallback,
    OnExternalCorrelationRequest,
    Fini,
}

impl Export {
    pub fn parse(name: &str) -> Option<Export> {
        Some(match name.trim() {
            "configure" => Export::Configure,
            "init" => Export::Init,
            "deliver-batch" => Export::DeliverBatch,
            "on-callback" => Export::OnCallback,
            "on-external-correlation-request" => Export::OnExternalCorrelationRequest,
            "fini" => Export::Fini,
            _ => return None,
        })
    }
}

/// When to misbehave: the `after`-th call of export `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trigger {
    pub at: Export,
    pub after: u64,
    calls: u64,
}

impl Trigger {
    pub fn new(at: Export, after: u64) -> Trigger {
        Trigger {
            at,
            after: after.max(1),
            calls: 0,
        }
    }

    /// Parses `at` and `after` (absent = `deliver-batch`, 1).
    pub fn parse(at: Option<&str>, after: Option<&str>) -> Result<Trigger, String> {
        let at = match at {
            None => Export::DeliverBatch,
            Some(name) => Export::parse(name)
                .ok_or_else(|| format!("config key `at`: unknown export `{name}`"))?,
        };
        let after = match after {
            None => 1,
            Some(raw) => config::parse_value("after", raw)?,
        };
        Ok(Trigger::new(at, after))
    }

    /// Counts a call of `export`; true when this is the one to misbehave on.
    pub fn hit(&mut self, export: Export) -> bool {
        if export != self.at {
            return false;
        }
        self.calls += 1;
        self.calls == self.after
    }
}

/// What a hostile plugin does when triggered. It never returns.
pub trait Misbehaviour: Default + 'static {
    fn misbehave(&mut self) -> !;
}

/// The well-behaved plugin around a [`Misbehaviour`]. Export it with
/// `rocwasm_plugin_sdk::export_analysis!(Hostile<MyMisbehaviour>)`.
#[derive(Default)]
pub struct Hostile<M> {
    trigger: Option<Trigger>,
    misbehaviour: M,
}

impl<M: Misbehaviour> Hostile<M> {
    fn check(&mut self, export: Export) {
        let trigger = self.trigger.get_or_insert_with(|| {
            Trigger::parse(
                config::get("at").as_deref(),
                config::get("after").as_deref(),
            )
            .unwrap_or_else(|e| {
                warn!("{e}; misbehaving in deliver-batch");
                Trigger::new(Export::DeliverBatch, 1)
            })
        });
        if trigger.hit(export) {
            self.misbehaviour.misbehave();
        }
    }
}

impl<M: Misbehaviour> AnalysisPlugin for Hostile<M> {
    fn configure(&mut self, _info: &ToolInfo) -> bool {
        self.check(Export::Configure);
        true
    }

    fn init(&mut self) -> Result<(), String> {
        self.check(Export::Init);
        if let Some(list) = config::get("trace") {
            let kinds = parse_kind_list(&list, buffer_kind_by_name)
                .map_err(|e| format!("config key `trace`: {e}"))?;
            services::trace_buffers(&kinds)?;
        }
        Ok(())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, _batch: &Batch) {
        self.check(Export::DeliverBatch);
    }

    fn on_callback(&mut self, _record: &CallbackRecord, user_data: u64) -> u64 {
        self.check(Export::OnCallback);
        user_data
    }

    fn on_external_correlation_request(
        &mut self,
        _request: &ExternalCorrelationRequest,
    ) -> Option<u64> {
        self.check(Export::OnExternalCorrelationRequest);
        None
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        self.check(Export::Fini);
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_on_the_chosen_call_of_the_chosen_export_only() {
        let mut t = Trigger::parse(Some("fini"), Some("2")).unwrap();
        assert!(!t.hit(Export::DeliverBatch));
        assert!(!t.hit(Export::Fini));
        assert!(t.hit(Export::Fini));
        assert!(!t.hit(Export::Fini), "only once");
        let mut d = Trigger::parse(None, None).unwrap();
        assert_eq!(d.at, Export::DeliverBatch);
        assert!(d.hit(Export::DeliverBatch));
    }

    #[test]
    fn bad_trigger_config_is_reported() {
        assert!(Trigger::parse(Some("sometimes"), None)
            .unwrap_err()
            .contains("sometimes"));
        assert!(Trigger::parse(None, Some("x"))
            .unwrap_err()
            .contains("after"));
        assert_eq!(Trigger::parse(None, Some("0")).unwrap().after, 1);
    }
}
