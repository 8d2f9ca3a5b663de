//! `correlation-tagger`: gives every kernel dispatch an external correlation
//! id that names the roctx range it was launched in.
//!
//! It follows roctx ranges per thread through callback tracing of
//! `MARKER_CORE_API` (`roctxRangePushA` pushes its `message` argument,
//! `roctxRangePop` pops), and asks the host for external-correlation requests
//! of `KERNEL_DISPATCH` only, so no other API pays for it. On each request it
//! answers for the requesting thread's **innermost** open range:
//!
//! 1. `ranges.<name> = <value>` in the stage config: that value;
//! 2. otherwise `base + n`, where `n` is the range name's sequence number
//!    (1 for the first distinct name pushed in the run, 2 for the next, …;
//!    stable for the run, and across runs of a deterministic application);
//! 3. a thread with no open range gets `default` (a number), or — when
//!    `default` is absent or `none` — no answer, so the value pushed with
//!    `push-external-correlation-id` (or 0) stands.
//!
//! **Where it listens.** External correlation ids are per context (as in the
//! SDK): an answer lands only on the records of the context that asked. So
//! in a chain the tagger configures its request (and the range callbacks) on
//! the chain's shared context (`tool-info.chain-context`), whose buffer every
//! stage's `domains` are traced into: the dispatches the other stages see
//! carry its values, and each dispatch is asked about once. Alone (no chain
//! context) it uses a context of its own. If another stage already traces
//! marker callbacks on the chain context, it follows ranges on its own
//! context instead (one callback sink per kind and context).
//!
//! Config keys: `base` (default 1000), `default` (default `none`),
//! `ranges.<name>`. Start/stop ranges (`roctxRangeStartA`) are not nested and
//! are ignored.
//!
//! Report: `correlation_tags.csv` (when the stage has an output grant) and
//! a summary table with, per range, its
//! value and the requests answered with it, plus the requests left to the
//! pushed value; if the stage also receives kernel-dispatch batches, how many
//! carried one of its values.

mod tagger;

use rocwasm_plugin_sdk::names;
use rocwasm_plugin_sdk::prelude::*;

use tagger::{range_name, TagRule, Tagger};

const PUSH: &str = "roctxRangePushA";
const POP: &str = "roctxRangePop";

#[derive(Default)]
struct CorrelationTagger {
    /// `tool-info.chain-context`.
    chain_context: Option<u64>,
    tagger: Tagger,
    ops: OperationNames,
    tagged_dispatches_seen: u64,
    dispatches_seen: u64,
}

impl AnalysisPlugin for CorrelationTagger {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.chain_context = info.chain_context;
        true
    }

    fn init(&mut self) -> Result<(), String> {
        let rule = TagRule::from_entries(&config::entries())?;
        self.tagger = Tagger::new(rule);
        // Deliveries are only counted: one column of one table.
        kernel_dispatches::select(&["external_correlation_id"])
            .context("delivery.select-columns")?;
        delivery::receive_only(&[kernel_dispatches::NAME]).context("delivery.select-columns")?;

        // Only the two range calls, when the host names them; else all marker calls.
        let ops: Vec<u32> = [PUSH, POP]
            .iter()
            .filter_map(|n| names::find_callback_operation(callback::MARKER_CORE_API, n))
            .collect();
        let ops = if ops.len() == 2 { ops } else { Vec::new() };
        let mut own = None;
        let mut own_context = || -> Result<u64, String> {
            if own.is_none() {
                own = Some(profiler::create_context().context("create-context")?);
            }
            Ok(own.expect("just created"))
        };
        let requests = match self.chain_context {
            Some(chain) => chain,
            None => own_context()?,
        };
        let ranges =
            match profiler::configure_callback_tracing(requests, callback::MARKER_CORE_API, &ops) {
                Err(Status::ServiceAlreadyConfigured) if Some(requests) == self.chain_context => {
                    let ctx = own_context()?;
                    profiler::configure_callback_tracing(ctx, callback::MARKER_CORE_API, &ops)
                        .map(|_| ctx)
                }
                r => r.map(|_| requests),
            }
            .context("configure-callback-tracing(MARKER_CORE_API)")?;
        profiler::configure_external_correlation_request(
            requests,
            &[external_correlation::KERNEL_DISPATCH],
        )
        .context("configure-external-correlation-request(KERNEL_DISPATCH)")?;
        // The chain starts its own context; ours we start.
        if let Some(ctx) = own {
            profiler::start_context(ctx).context("start-context")?;
        }
        info!(
            "correlation-tagger: requests on context {requests}{}, ranges on context {ranges}",
            if Some(requests) == self.chain_context {
                " (the chain's)"
            } else {
                ""
            }
        );
        Ok(())
    }

    fn on_callback(&mut self, record: &CallbackRecord, user_data: u64) -> u64 {
        if record.kind != callback::MARKER_CORE_API || record.phase != Phase::Enter {
            return user_data;
        }
        match self.ops.callback_operation(record.kind, record.operation) {
            PUSH => {
                let name = match &record.payload {
                    CallbackPayload::Api(call) => range_name(&call.args),
                    _ => None,
                };
                self.tagger.push(record.thread_id, name.unwrap_or_default());
            }
            POP => self.tagger.pop(record.thread_id),
            _ => {}
        }
        user_data
    }

    fn on_external_correlation_request(
        &mut self,
        request: &ExternalCorrelationRequest,
    ) -> Option<u64> {
        if request.kind != external_correlation::KERNEL_DISPATCH {
            return None;
        }
        self.tagger.answer(request.thread_id)
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, batch: &Batch) {
        let ids = batch.kernel_dispatches().external_correlation_id;
        self.dispatches_seen += ids.len() as u64;
        self.tagged_dispatches_seen +=
            ids.iter().filter(|v| self.tagger.is_issued(**v)).count() as u64;
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let mut table = self.tagger.report();
        if self.dispatches_seen > 0 {
            table.title = format!(
                "{} ({} of {} delivered dispatches carried a tag)",
                table.title, self.tagged_dispatches_seen, self.dispatches_seen
            );
        }
        output::write_result("correlation-tagger", "correlation_tags.csv", table.to_csv());
        vec![table]
    }
}

rocwasm_plugin_sdk::export_analysis!(CorrelationTagger);
