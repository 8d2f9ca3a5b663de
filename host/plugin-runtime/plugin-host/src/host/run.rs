//! The `run` interface (new in `rocwasm:plugin@0.3.1`): what the host
//! knows of the processes deliveries name, beyond `process-info`: the
//! command line and the back end that measured them.
//!
//! The host's typed bindings are generated from 0.2.0, which has no `run`,
//! so this interface's two records are declared here with wasmtime's
//! derives (the component model matches records by shape and field
//! names) and its one function is linked by name
//! (`crate::state::add_to_linker`).

use wasmtime::component::{ComponentType, Lift, Lower};

use crate::env::{Processes, TracedProcess};

/// `types.process-info`, as `describe-process` takes it.
#[derive(Debug, Clone, ComponentType, Lift, Lower)]
#[component(record)]
pub(crate) struct ProcessInfo {
    hostname: String,
    pid: u32,
    rank: Option<u32>,
    job: Option<String>,
}

/// `run.process-details`.
#[derive(Debug, Clone, PartialEq, Eq, ComponentType, Lift, Lower)]
#[component(record)]
pub(crate) struct ProcessDetails {
    command: Vec<String>,
    #[component(name = "back-end")]
    back_end: String,
}

impl From<TracedProcess> for ProcessDetails {
    fn from(p: TracedProcess) -> Self {
        ProcessDetails {
            command: p.command,
            back_end: p.back_end,
        }
    }
}

/// The `run` imports of one plugin: the run's process table, shared with
/// the code that adds a replay's recordings as it reads them.
#[derive(Debug, Clone)]
pub(crate) struct RunHost {
    processes: Processes,
}

impl RunHost {
    pub fn new(processes: Processes) -> Self {
        RunHost { processes }
    }

    /// `describe-process`: the process a delivery named by `process`'s
    /// host name and pid; none for one no delivery named.
    pub fn describe_process(&self, process: &ProcessInfo) -> Option<ProcessDetails> {
        self.processes
            .find(&process.hostname, process.pid)
            .map(ProcessDetails::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_found_by_host_and_pid_and_no_other() {
        let processes = Processes::new(TracedProcess {
            hostname: "n1".into(),
            pid: 10,
            command: vec!["./app".into(), "--size".into(), "8".into()],
            back_end: "builtin".into(),
            ..Default::default()
        });
        processes.add(TracedProcess {
            hostname: "n2".into(),
            pid: 10,
            ..Default::default()
        });
        let host = RunHost::new(processes);
        let ask = |hostname: &str, pid| ProcessInfo {
            hostname: hostname.into(),
            pid,
            rank: None,
            job: None,
        };
        assert_eq!(
            host.describe_process(&ask("n1", 10)),
            Some(ProcessDetails {
                command: vec!["./app".into(), "--size".into(), "8".into()],
                back_end: "builtin".into(),
            })
        );
        let other = host.describe_process(&ask("n2", 10)).unwrap();
        assert!(other.command.is_empty() && other.back_end.is_empty());
        assert_eq!(host.describe_process(&ask("n1", 11)), None);
    }
}
