//! `recorder` (test plugin): records everything the host hands it and
//! writes it as JSON, for the runtime's life-cycle and correlation tests.
//!
//! Output: `recorder.json` (config `file`), written in `fini` — and after
//! every call when `write-every-call = true`, so a test can read it even if
//! the run never reaches `fini`. Its top-level keys:
//!
//! | key | content |
//! |---|---|
//! | `tool_info` | what `configure` received (`version`, `runtime_version`, `priority`, `name`, `replay`, `domains`) |
//! | `replay` | `tool_info.replay`, or `null` if configure never ran |
//! | `lifecycle` | the order of calls, run-length encoded: `[{"call":"configure","count":1}, {"call":"init","count":1}, {"call":"deliver-batch","count":3}, {"call":"fini","count":1}]` |
//! | `calls` | calls per export |
//! | `setup` | `[{"call": "configure-buffer-tracing(KERNEL_DISPATCH)", "result": "ok" or status}]` for the services it set up in `init` |
//! | `batches` | per delivery: `context`, `buffer`, `drop_count`, `process` (`hostname`, `pid`, `rank`, `job`), and the row count of each table (`api-calls`, `kernel-dispatches`, …); the first 10 000 |
//! | `totals` | rows per table over all deliveries, and `drop_count` |
//! | `api_calls_by_kind` | API-call rows per buffer-kind name |
//! | `external_correlation_ids` | per table (`kernel-dispatches`, `memory-copies`, and `api-calls/<KIND>`), a map from external correlation id to the number of rows carrying it |
//! | `callbacks` | `total`, `enter`, `exit`, `none`, `by_kind` (callback-kind names), `user_data_ok` / `user_data_mismatch` (EXIT got back what ENTER returned, or not) and `exit_without_enter` |
//! | `requests` | external-correlation requests: `total`, `by_kind`, `answered`, and the first 10 000 as `{thread_id, context, kind, operation, internal}` |
//!
//! Config keys:
//! - `trace`, `callbacks`, `requests`: comma-separated kind names to set up
//!   in `init` (buffer tracing, callback tracing, external-correlation
//!   requests), all on one context; `buffer-size`, `watermark`, `policy`
//!   (`lossless`/`discard`) for the buffer;
//! - `answer`: reply to requests — `none` (default: the pushed value stands),
//!   `internal` (the request's internal correlation id) or a number;
//! - `user-data`: what `on-callback` returns at ENTER — `internal`
//!   (default: the record's internal correlation id) or a number;
//! - `file`, `write-every-call`;
//! - `trap-on-correlation-id`: `deliver-batch` traps (a panic) on a batch
//!   holding a kernel dispatch with this correlation id, before recording
//!   it. The trigger is in the records, not in the instance, so a restarted
//!   instance takes every later batch: the restart tests' plugin.
//!
//! `fini` returns a table of calls per export.

mod recording;

use rocwasm_plugin_sdk::prelude::*;
use rocwasm_plugin_sdk::services::BufferOptions;
use rocwasm_plugin_sdk::types::BufferPolicy;

use recording::{Answer, Recording};

#[derive(Default)]
struct Recorder {
    rec: Recording,
    file: String,
    write_every_call: bool,
    trap_on: Option<u64>,
}

impl Recorder {
    fn flush(&self) {
        if let Err(e) = output::write(&self.file, self.rec.to_json().to_string()) {
            warn!("recorder: cannot write {}: {e}", self.file);
        }
    }

    fn after_call(&self) {
        if self.write_every_call {
            self.flush();
        }
    }

    fn set_up_services(&mut self) -> Result<(), String> {
        let trace = parse_kind_list(
            &config::get("trace").unwrap_or_default(),
            buffer_kind_by_name,
        )?;
        let callbacks = parse_kind_list(
            &config::get("callbacks").unwrap_or_default(),
            callback_kind_by_name,
        )?;
        let requests = parse_kind_list(
            &config::get("requests").unwrap_or_default(),
            external_correlation_kind_by_name,
        )?;
        if trace.is_empty() && callbacks.is_empty() && requests.is_empty() {
            return Ok(());
        }
        let defaults = BufferOptions::default();
        let size = config::get_or("buffer-size", defaults.size)?;
        let watermark = config::get_or("watermark", defaults.watermark)?;
        let policy = match config::get("policy").as_deref() {
            None | Some("lossless") => BufferPolicy::Lossless,
            Some("discard") => BufferPolicy::Discard,
            Some(other) => {
                return Err(format!(
                    "config key `policy`: `{other}` is not lossless or discard"
                ))
            }
        };

        let context = profiler::create_context();
        self.rec.setup("create-context", &context);
        let context = context.map_err(|s| format!("create-context: {}", s.name()))?;
        if !trace.is_empty() {
            let buffer = profiler::create_buffer(context, size, watermark, policy);
            self.rec.setup("create-buffer", &buffer);
            let buffer = buffer.map_err(|s| format!("create-buffer: {}", s.name()))?;
            for kind in trace {
                let r = profiler::configure_buffer_tracing(context, kind, &[], buffer);
                self.rec.setup(
                    &format!(
                        "configure-buffer-tracing({})",
                        buffer_kind_name(kind).unwrap_or("?")
                    ),
                    &r,
                );
            }
        }
        for kind in callbacks {
            let r = profiler::configure_callback_tracing(context, kind, &[]);
            self.rec.setup(
                &format!(
                    "configure-callback-tracing({})",
                    callback_kind_name(kind).unwrap_or("?")
                ),
                &r,
            );
        }
        if !requests.is_empty() {
            let r = profiler::configure_external_correlation_request(context, &requests);
            self.rec.setup("configure-external-correlation-request", &r);
        }
        let r = profiler::start_context(context);
        self.rec.setup("start-context", &r);
        Ok(())
    }
}

impl AnalysisPlugin for Recorder {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.file = config::get("file").unwrap_or_else(|| "recorder.json".to_string());
        self.write_every_call = config::get_bool("write-every-call", false).unwrap_or(false);
        self.trap_on = config::get("trap-on-correlation-id").and_then(|v| v.parse().ok());
        self.rec.answer = config::get("answer")
            .map(|a| Answer::parse(&a))
            .unwrap_or(Answer::None);
        self.rec.user_data = config::get("user-data")
            .map(|a| Answer::parse(&a))
            .unwrap_or(Answer::Internal);
        self.rec.configure(info);
        self.after_call();
        true
    }

    fn init(&mut self) -> Result<(), String> {
        self.rec.call("init");
        let result = self.set_up_services();
        self.after_call();
        result
    }

    fn deliver_batch(&mut self, info: &DeliveryInfo, batch: &Batch) {
        if let Some(id) = self.trap_on {
            if batch.kernel_dispatches().correlation_id.contains(&id) {
                panic!("recorder: trap-on-correlation-id {id}");
            }
        }
        self.rec.batch(info, batch);
        self.after_call();
    }

    fn on_callback(&mut self, record: &CallbackRecord, user_data: u64) -> u64 {
        let out = self.rec.callback(record, user_data);
        self.after_call();
        out
    }

    fn on_external_correlation_request(
        &mut self,
        request: &ExternalCorrelationRequest,
    ) -> Option<u64> {
        let out = self.rec.request(request);
        self.after_call();
        out
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        self.rec.call("fini");
        self.flush();
        vec![self.rec.summary()]
    }
}

rocwasm_plugin_sdk::export_analysis!(Recorder);
