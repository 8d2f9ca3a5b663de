//! `api_calls.txt`: every traced API call with its arguments and return
//! value, one line per call (written at EXIT):
//!
//! `<tid> <correlation> <kind> <operation>(<name>: <type> = <value>, …) -> <retval>`
//!
//! Buffer records (the SDK's API record) carry no return value; this log is
//! how a run shows the runtime's real status codes (e.g. `hipGetDeviceCount
//! -> 100` with no GPU), and what the tests read.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use rocwasm_core::{CallbackPayload, CallbackPhase, CallbackRecord};

/// The open `api_calls.txt`; lines are written at each call's EXIT.
pub struct ApiLog {
    out: Mutex<BufWriter<File>>,
}

impl ApiLog {
    /// Creates `dir` and the log file in it.
    pub fn new(dir: &Path) -> Result<Self, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join(rocwasm_plan::RunPlan::API_LOG_FILE);
        let file =
            File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(Self {
            out: Mutex::new(BufWriter::new(file)),
        })
    }

    /// Writes the line of one API call (EXIT records only).
    pub fn record(&self, r: &CallbackRecord) {
        if r.phase != Some(CallbackPhase::Exit) {
            return;
        }
        let CallbackPayload::Api { args, retval } = &r.payload else {
            return;
        };
        let name = rocwasm_core::operation_name(r.kind, r.operation).unwrap_or("?");
        let args: Vec<String> = args
            .iter()
            .map(|a| format!("{}: {} = {}", a.name, a.type_name, a.value))
            .collect();
        let line = format!(
            "{} {} {} {}({}) -> {}\n",
            r.thread_id,
            r.correlation.internal,
            r.kind.name(),
            name,
            args.join(", "),
            retval.as_deref().unwrap_or("")
        );
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.write_all(line.as_bytes());
    }

    /// Flushes what is buffered.
    pub fn flush(&self) {
        let _ = self.out.lock().unwrap_or_else(|e| e.into_inner()).flush();
    }
}
