//! The audit line: one JSON object per run that says exactly what ran.
//!
//! Written at the end of every run (live or replay) into the output
//! directory as [`AUDIT_FILE`], and appended to the site log when the
//! policy names one (`[audit] log`). Fields:
//!
//! - `time` (Unix seconds), `host`, `pid`, `uid`, `command`, `replay`;
//! - `policy`: the policy file and its `sha256:` digest, or `null`;
//! - `plugins`: per stage its file, the store reference it was pulled from
//!   (`source`, for shipped plugins), plugin digest, signer key ids, how it
//!   was admitted, whether it imports WASI, and what it was granted (memory,
//!   deadlines, output grant and quota, traced domains, callback tracing and
//!   external-correlation requests);
//! - `failures`: every plugin failure and refused output, one sentence each.
//!
//! One line, written with one `write` on a file opened for appending, so
//! concurrent runs on a node do not interleave their lines.

use std::io::Write;
use std::path::Path;

use rocwasm_plan::{OutputGrant, RunPlan};
use serde::Serialize;

use crate::admit::{Admission, AdmittedBy};

/// The audit line's file in the output directory.
pub const AUDIT_FILE: &str = "rocwasm-audit.jsonl";

#[derive(Serialize)]
struct Line<'a> {
    time: u64,
    host: String,
    pid: u32,
    uid: u32,
    command: &'a [String],
    replay: bool,
    policy: Option<PolicyRef<'a>>,
    plugins: Vec<Plugin<'a>>,
    failures: &'a [String],
}

#[derive(Serialize)]
struct PolicyRef<'a> {
    file: &'a Path,
    digest: &'a str,
}

#[derive(Serialize)]
struct Plugin<'a> {
    stage: &'a str,
    wasm: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
    digest: &'a str,
    signers: &'a [String],
    admitted_by: &'a AdmittedBy,
    wasi: bool,
    memory_bytes: u64,
    deadline_ns: u128,
    callback_deadline_ns: u128,
    output: Option<String>,
    output_bytes: u64,
    domains: Vec<&'static str>,
    callbacks: bool,
    external_correlation: bool,
}

/// The run's audit line (no trailing newline).
pub fn line(plan: &RunPlan, admission: &Admission, replay: bool, failures: &[String]) -> String {
    let plugins = admission
        .plugins
        .iter()
        .map(|a| {
            let stage = plan.stages.iter().find(|s| s.name == a.stage);
            Plugin {
                stage: &a.stage,
                wasm: &a.wasm,
                source: stage.and_then(|s| s.source.as_deref()),
                digest: &a.digest,
                signers: &a.signers,
                admitted_by: &a.admitted_by,
                wasi: a.wasi,
                memory_bytes: stage.map_or(0, |s| s.limits.memory_bytes),
                deadline_ns: stage.map_or(0, |s| s.limits.deadline.as_nanos()),
                callback_deadline_ns: stage.map_or(0, |s| s.limits.callback_deadline.as_nanos()),
                output: stage.and_then(|s| match &s.output {
                    OutputGrant::None => None,
                    OutputGrant::RunDirectory => Some(".".into()),
                    OutputGrant::Subdirectory(d) => Some(d.clone()),
                }),
                output_bytes: stage.map_or(0, |s| s.limits.output_bytes),
                domains: stage
                    .map_or_else(Vec::new, |s| s.domains.iter().map(|k| k.name()).collect()),
                callbacks: a.services.callbacks_granted(),
                external_correlation: a.services.external_correlation_granted(),
            }
        })
        .collect();
    let line = Line {
        time: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        host: rocwasm_plan::ProcessInfo::current().hostname,
        pid: std::process::id(),
        uid: real_uid(),
        command: &plan.command,
        replay,
        policy: admission
            .policy
            .as_ref()
            .map(|(file, digest)| PolicyRef { file, digest }),
        plugins,
        failures,
    };
    serde_json::to_string(&line).expect("the audit line serializes")
}

/// Writes `line` into `dir`'s [`AUDIT_FILE`] and appends it to the site
/// log, if any; each failure is returned as a sentence.
pub fn write(line: &str, dir: &Path, site_log: Option<&Path>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut record = line.to_string();
    record.push('\n');
    let own = dir.join(AUDIT_FILE);
    if let Err(e) = std::fs::write(&own, &record) {
        problems.push(format!(
            "cannot write the audit line to {}: {e}",
            own.display()
        ));
    }
    if let Some(log) = site_log {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .and_then(|mut f| f.write_all(record.as_bytes()));
        if let Err(e) = appended {
            problems.push(format!(
                "cannot append the audit line to the site log {}: {e}",
                log.display()
            ));
        }
    }
    problems
}

/// The real user id of this process.
fn real_uid() -> u32 {
    rustix::process::getuid().as_raw()
}
