//! `decliner` (test plugin): returns `false` from `configure`. A host that
//! honours that never calls it again; if it does, every later call appends
//! its export name as a line to `decliner-called.txt`, and `init` fails with
//! an error saying so. No config keys.

use rocwasm_plugin_sdk::prelude::*;

#[derive(Default)]
struct Decliner;

fn called(export: &str) {
    let _ = output::append("decliner-called.txt", format!("{export}\n"));
    error!("decliner: {export} was called after configure declined");
}

impl AnalysisPlugin for Decliner {
    fn configure(&mut self, _info: &ToolInfo) -> bool {
        false
    }

    fn init(&mut self) -> Result<(), String> {
        called("init");
        Err("decliner was initialised although configure declined".to_string())
    }

    fn deliver_batch(&mut self, _info: &DeliveryInfo, _batch: &Batch) {
        called("deliver-batch");
    }

    fn on_callback(&mut self, _record: &CallbackRecord, user_data: u64) -> u64 {
        called("on-callback");
        user_data
    }

    fn on_external_correlation_request(
        &mut self,
        _request: &ExternalCorrelationRequest,
    ) -> Option<u64> {
        called("on-external-correlation-request");
        None
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        called("fini");
        Vec::new()
    }
}

rocwasm_plugin_sdk::export_analysis!(Decliner);
