//! `late-configure` (test plugin): checks that configuration is locked after
//! `init`.
//!
//! In `init` it creates one context (allowed). In its first `deliver-batch`
//! (or first `on-callback`, whichever comes first) it tries every
//! configuring verb — on that context, so the only correct answer is
//! `configuration-locked`; also on the chain's context when it has one —
//! and writes the outcome to `late-configure.json`:
//!
//! ```json
//! {"phase": "deliver-batch",
//!  "attempts": [{"call": "create-context", "result": "configuration-locked"}, …],
//!  "all_locked": true}
//! ```
//!
//! `result` is `ok` or the status name. `fini` returns the same as a table.
//! Config key `trace`: buffer kinds to trace from `init` (comma-separated;
//! default `KERNEL_DISPATCH`), so its context has a service (the engine
//! refuses to start a context without one, as the SDK does) and it gets
//! deliveries of its own besides the chain's.

use rocwasm_plugin_sdk::prelude::*;
use serde_json::json;

#[derive(Default)]
struct LateConfigure {
    context: u64,
    /// `tool-info.chain-context`: configuring on it after init is locked too.
    chain_context: Option<u64>,
    attempts: Vec<(&'static str, String)>,
    phase: Option<&'static str>,
}

fn outcome<T>(r: Result<T, Status>) -> String {
    match r {
        Ok(_) => "ok".to_string(),
        Err(status) => status.name().to_string(),
    }
}

impl LateConfigure {
    fn try_everything(&mut self, phase: &'static str) {
        if self.phase.is_some() {
            return;
        }
        self.phase = Some(phase);
        let ctx = self.context;
        let buffer_policy = services::BufferOptions::default();
        self.attempts = vec![
            ("create-context", outcome(profiler::create_context())),
            (
                "create-buffer",
                outcome(profiler::create_buffer(
                    ctx,
                    buffer_policy.size,
                    buffer_policy.watermark,
                    buffer_policy.policy,
                )),
            ),
            (
                "create-callback-thread",
                outcome(profiler::create_callback_thread()),
            ),
            (
                "configure-buffer-tracing",
                outcome(profiler::configure_buffer_tracing(
                    ctx,
                    buffer::KERNEL_DISPATCH,
                    &[],
                    0,
                )),
            ),
            (
                "configure-callback-tracing",
                outcome(profiler::configure_callback_tracing(
                    ctx,
                    callback::HIP_RUNTIME_API,
                    &[],
                )),
            ),
            (
                "configure-external-correlation-request",
                outcome(profiler::configure_external_correlation_request(
                    ctx,
                    &[external_correlation::KERNEL_DISPATCH],
                )),
            ),
        ];
        if let Some(chain) = self.chain_context {
            self.attempts.push((
                "configure-external-correlation-request(chain-context)",
                outcome(profiler::configure_external_correlation_request(
                    chain,
                    &[external_correlation::KERNEL_DISPATCH],
                )),
            ));
        }
        let all_locked = self
            .attempts
            .iter()
            .all(|(_, r)| r == "configuration-locked");
        let report = json!({
            "phase": phase,
            "attempts": self.attempts.iter().map(|(c, r)| json!({"call": c, "result": r})).collect::<Vec<_>>(),
            "all_locked": all_locked,
        });
        if let Err(e) = output::write("late-configure.json", report.to_string()) {
            warn!("late-configure: cannot write late-configure.json: {e}");
        }
    }
}

impl AnalysisPlugin for LateConfigure {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.chain_context = info.chain_context;
        true
    }

    fn init(&mut self) -> Result<(), String> {
        self.context = profiler::create_context().context("create-context")?;
        let list = config::get("trace").unwrap_or_else(|| "KERNEL_DISPATCH".to_string());
        let kinds = parse_kind_list(&list, buffer_kind_by_name)?;
        if kinds.is_empty() {
            return Err("config key `trace`: name at least one buffer kind".to_string());
        }
        let options = services::BufferOptions::default();
        let buffer = profiler::create_buffer(
            self.context,
            options.size,
            options.watermark,
            options.policy,
        )
        .context("create-buffer")?;
        for kind in kinds {
            profiler::configure_buffer_tracing(self.context, kind, &[], buffer)
                .context("configure-buffer-tracing")?;
        }
        profiler::start_context(self.context).context("start-context")?;
        Ok(())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, _batch: &Batch) {
        self.try_everything("deliver-batch");
    }

    fn on_callback(&mut self, _record: &CallbackRecord, user_data: u64) -> u64 {
        self.try_everything("on-callback");
        user_data
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let mut table = SummaryTable::new(
            format!(
                "late-configure (tried in {})",
                self.phase.unwrap_or("nothing: no delivery")
            ),
            &["Call", "Result"],
        );
        for (call, result) in &self.attempts {
            table.push_row([*call, result.as_str()]);
        }
        vec![table]
    }
}

rocwasm_plugin_sdk::export_analysis!(LateConfigure);
