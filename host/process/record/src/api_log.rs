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
    out: Mutex<Writer>,
    path: std::path::PathBuf,
}

/// The file and what could not be written to it.
struct Writer {
    file: BufWriter<File>,
    /// The first write or flush error, and the lines lost since.
    failed: Option<(String, u64)>,
}

impl Writer {
    fn failed(&mut self, e: std::io::Error, lines: u64) {
        match &mut self.failed {
            Some((_, lost)) => *lost += lines,
            None => self.failed = Some((e.to_string(), lines)),
        }
    }
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
            out: Mutex::new(Writer {
                file: BufWriter::new(file),
                failed: None,
            }),
            path,
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
        if let Err(e) = out.file.write_all(line.as_bytes()) {
            out.failed(e, 1);
        }
    }

    /// Flushes what is buffered; a sentence when lines were lost (a write
    /// or the flush failed: a full disk, a quota), for the run's problems.
    pub fn flush(&self) -> Option<String> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = out.file.flush() {
            // What the buffer held is lost with it (its size in lines is
            // not known; counted as one failure).
            out.failed(e, 0);
        }
        out.failed.as_ref().map(|(e, lost)| {
            format!(
                "{} is incomplete: writing it failed ({e}){}",
                self.path.display(),
                if *lost > 0 {
                    format!("; {lost} call line(s) lost")
                } else {
                    String::new()
                }
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::{CallbackTracingKind, ContextId, Correlation};

    /// A log on a file that cannot take its lines (`/dev/full` says
    /// ENOSPC to every write) reports it instead of losing them quietly.
    #[test]
    fn a_write_error_is_reported_with_the_lines_lost() {
        let log = ApiLog {
            out: Mutex::new(Writer {
                file: BufWriter::with_capacity(16, File::create("/dev/full").unwrap()),
                failed: None,
            }),
            path: "/dev/full".into(),
        };
        let call = CallbackRecord {
            context: ContextId(1),
            kind: CallbackTracingKind::HipRuntimeApi,
            operation: 1,
            phase: Some(CallbackPhase::Exit),
            correlation: Correlation::default(),
            thread_id: 1,
            timestamp: 0,
            payload: CallbackPayload::Api {
                args: Vec::new(),
                retval: Some("0".into()),
            },
        };
        for _ in 0..3 {
            log.record(&call);
        }
        let problem = log.flush().expect("the failure is reported");
        assert!(problem.contains("/dev/full is incomplete"), "{problem}");
        assert!(problem.contains("line(s) lost"), "{problem}");
    }
}
