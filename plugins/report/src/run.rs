//! The run's facts at the top of the page: program, arguments, runtime,
//! back end, GPUs, host and process — from what the host delivers to a
//! plugin, and saying so where it knows nothing.
//!
//! What a plugin learns: `tool-info` (live run or replay, the runtime's
//! version when the host knows it), each delivery's `process-info` (host
//! name, pid, rank, job), `run.describe-process` (WIT 0.3.1: each
//! process's command line and the back end that measured it, as far as the
//! run or the recording knows them), the agents (`symbols.agents`: GPU
//! architecture and product name) and, per kernel, its code object's URI.
//! The program is the command line's first word; without a command line
//! (rocprofv3's CSV files keep none) it is the file a kernel's code object
//! was loaded from (`file:///opt/app/bin/app#offset=…&size=…`, as ROCm
//! names code objects embedded in an executable); a code object loaded
//! from memory (`memory://…`) names none. What no source says, the page
//! says is not recorded, never "unknown".
//!
//! The simulated AMD runtime is recognised by its agents: its CPU agent is
//! `Simulated CPU` and its GPUs' default product name starts with
//! `Simulated`.

use std::collections::BTreeMap;

/// The process a delivery named.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Process {
    /// "" when the recording does not say.
    pub hostname: String,
    /// 0 when the recording does not say.
    pub pid: u32,
    pub rank: Option<u32>,
    pub job: Option<String>,
    /// The command line, program first (`run.describe-process`); empty
    /// when not known.
    pub command: Vec<String>,
    /// What measured the records (`builtin`, `rocprofiler-sdk`); "" when
    /// not known.
    pub back_end: String,
}

/// One agent of the host's table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agent {
    pub gpu: bool,
    /// The architecture (`gfx90a`) for a GPU.
    pub name: String,
    pub product: String,
}

/// What the plugin knows about the run.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Records come from a recording.
    pub replay: bool,
    /// `tool-info.runtime-version` (0: not known).
    pub runtime_version: u32,
    /// Runtime initialisations delivered: (`runtime_init` operation,
    /// version as 10000·major + 100·minor + patch).
    pub runtimes: Vec<(u32, u64)>,
    pub agents: Vec<Agent>,
    /// The URIs of the code objects of the kernels seen.
    pub code_object_uris: Vec<String>,
    /// The processes deliveries named, in order.
    pub processes: Vec<Process>,
    /// More processes than `processes` holds were named.
    pub processes_capped: bool,
}

/// What the page says for a fact the plugin interface does not carry.
pub const NOT_DELIVERED: &str = "not delivered to plugins";

/// What the page says for a fact neither the run nor the recording kept.
pub const NOT_RECORDED: &str = "not recorded";

/// `arg` as a POSIX shell reads it back: bare when it holds only safe
/// characters, else in single quotes.
pub fn shell_word(arg: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c);
    if !arg.is_empty() && arg.chars().all(safe) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

/// Distinct values in first-seen order.
fn distinct<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// The back end, as the page explains it.
fn back_end_text(name: &str) -> String {
    match name {
        "builtin" => "builtin (rocwasm's own interception of HIP, HSA and roctx)".to_string(),
        "rocprofiler-sdk" => {
            "rocprofiler-sdk (a rocprofiler-sdk library's services, rocwasm as its tool)"
                .to_string()
        }
        other => other.to_string(),
    }
}

/// `10000·major + 100·minor + patch` as `major.minor.patch`.
pub fn version(v: u64) -> String {
    format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
}

/// The file path of a `file://` URI (fragment and query cut, `%XX`
/// decoded); `None` for any other scheme.
pub fn file_of_uri(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let path = rest.split(['#', '?']).next().unwrap_or("");
    if path.is_empty() {
        return None;
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap() * 16 + hex(l).unwrap()) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// A library or a bare code-object file rather than a program.
fn is_library(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.ends_with(".so")
        || file.contains(".so.")
        || file.ends_with(".hsaco")
        || file.ends_with(".co")
}

/// The programs the code objects were loaded from: the distinct `file://`
/// paths that are not libraries, in first-seen order.
pub fn programs(uris: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for path in uris.iter().filter_map(|u| file_of_uri(u)) {
        if !is_library(&path) && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

fn is_simulated(agents: &[Agent]) -> bool {
    agents
        .iter()
        .any(|a| a.name.starts_with("Simulated") || a.product.starts_with("Simulated"))
}

/// The runtime: which one, and its version when delivered.
pub fn runtime(f: &Facts) -> String {
    let simulated = is_simulated(&f.agents);
    let named = f.agents.iter().any(|a| a.gpu && !a.product.is_empty());
    let which = match (f.replay, simulated, named) {
        (false, true, _) => "simulated AMD runtime".to_string(),
        (false, false, _) => "AMD ROCm runtime".to_string(),
        (true, true, _) => "replayed recording of a run on the simulated AMD runtime".to_string(),
        (true, false, true) => "replayed recording of a run on the AMD ROCm runtime".to_string(),
        (true, false, false) => {
            "replayed recording (the recording does not name its runtime)".to_string()
        }
    };
    let mut versions: Vec<String> = Vec::new();
    if f.runtime_version > 0 {
        versions.push(version(u64::from(f.runtime_version)));
    }
    for (op, v) in &f.runtimes {
        let lib = match *op {
            rocwasm_plugin_sdk::kind::runtime_init::HIP => "HIP",
            rocwasm_plugin_sdk::kind::runtime_init::HSA => "HSA",
            _ => continue,
        };
        let text = format!("{lib} {}", version(*v));
        if *v > 0 && !versions.contains(&text) {
            versions.push(text);
        }
    }
    if versions.is_empty() {
        if f.replay && !simulated && !named {
            // Nothing recorded about the runtime at all: one sentence.
            which
        } else {
            format!("{which} (version {NOT_DELIVERED})")
        }
    } else {
        format!("{which}, {}", versions.join(", "))
    }
}

/// The GPUs, grouped: `2 × gfx90a (AMD Instinct MI210)`.
pub fn gpus(agents: &[Agent]) -> String {
    let mut groups: BTreeMap<String, usize> = BTreeMap::new();
    for a in agents.iter().filter(|a| a.gpu) {
        let label = match (a.name.is_empty(), a.product.is_empty()) {
            (false, false) => format!("{} ({})", a.name, a.product),
            (false, true) => a.name.clone(),
            (true, false) => a.product.clone(),
            (true, true) => "name not recorded".to_string(),
        };
        *groups.entry(label).or_default() += 1;
    }
    if groups.is_empty() {
        return "none recorded".to_string();
    }
    groups
        .into_iter()
        .map(|(label, n)| {
            if n == 1 {
                label
            } else {
                format!("{n} × {label}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn process_label(p: &Process) -> String {
    let mut s = if p.pid == 0 {
        "pid not recorded".to_string()
    } else {
        format!("pid {}", p.pid)
    };
    if let Some(rank) = p.rank {
        s.push_str(&format!(", rank {rank}"));
    }
    if let Some(job) = &p.job {
        s.push_str(&format!(", job {job}"));
    }
    s
}

/// Most processes listed by name.
const PROCESSES_LISTED: usize = 8;

/// The metadata rows, in page order.
pub fn rows(f: &Facts) -> Vec<(String, String)> {
    let commands: Vec<&[String]> = distinct(
        f.processes
            .iter()
            .filter(|p| !p.command.is_empty())
            .map(|p| p.command.as_slice()),
    );
    let program = if !commands.is_empty() {
        distinct(commands.iter().map(|c| c[0].as_str())).join(", ")
    } else {
        let programs = programs(&f.code_object_uris);
        if programs.is_empty() {
            format!(
                "{NOT_RECORDED} (no command line was recorded, and no kernel's code object \
                 was loaded from a file)"
            )
        } else {
            format!(
                "{} (the file its GPU code objects were loaded from; no command line was \
                 recorded)",
                programs.join(", ")
            )
        }
    };
    let arguments = match commands.as_slice() {
        [] => format!("{NOT_RECORDED} (no command line was recorded)"),
        [one] if one.len() == 1 => "none".to_string(),
        [one] => one[1..]
            .iter()
            .map(|a| shell_word(a))
            .collect::<Vec<_>>()
            .join(" "),
        many => {
            let listed: Vec<String> = many
                .iter()
                .take(PROCESSES_LISTED)
                .map(|c| {
                    c.iter()
                        .map(|a| shell_word(a))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            let more = many.len().saturating_sub(PROCESSES_LISTED);
            let tail = if more > 0 {
                format!("; {more} more")
            } else {
                String::new()
            };
            format!("{} command lines: {}{tail}", many.len(), listed.join("; "))
        }
    };
    let back_ends = distinct(
        f.processes
            .iter()
            .filter(|p| !p.back_end.is_empty())
            .map(|p| p.back_end.as_str()),
    );
    let measured = back_ends
        .iter()
        .map(|b| back_end_text(b))
        .collect::<Vec<_>>()
        .join("; ");
    let backend = match (f.replay, back_ends.is_empty()) {
        (false, false) => measured,
        (true, false) => format!("{measured}; read back from a recording"),
        (false, true) => NOT_RECORDED.to_string(),
        (true, true) => {
            format!("{NOT_RECORDED}: the records were read from a recording that does not name it")
        }
    };
    let mut hosts: Vec<&str> = Vec::new();
    for p in &f.processes {
        if !p.hostname.is_empty() && !hosts.contains(&p.hostname.as_str()) {
            hosts.push(&p.hostname);
        }
    }
    let host = if hosts.is_empty() {
        "not recorded".to_string()
    } else {
        hosts.join(", ")
    };
    let process = match f.processes.as_slice() {
        [] => "not recorded".to_string(),
        [one] => process_label(one),
        many => {
            let mut listed: Vec<String> = many
                .iter()
                .take(PROCESSES_LISTED)
                .map(|p| {
                    if hosts.len() > 1 && !p.hostname.is_empty() {
                        format!("{} on {}", process_label(p), p.hostname)
                    } else {
                        process_label(p)
                    }
                })
                .collect();
            if many.len() > PROCESSES_LISTED {
                listed.push(format!("{} more", many.len() - PROCESSES_LISTED));
            }
            let more = if f.processes_capped { "more than " } else { "" };
            format!("{more}{} processes: {}", many.len(), listed.join("; "))
        }
    };
    vec![
        ("Program".to_string(), program),
        ("Arguments".to_string(), arguments),
        ("Runtime".to_string(), runtime(f)),
        ("Back end".to_string(), backend),
        ("GPUs".to_string(), gpus(&f.agents)),
        ("Host".to_string(), host),
        ("Process".to_string(), process),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(gpu: bool, name: &str, product: &str) -> Agent {
        Agent {
            gpu,
            name: name.into(),
            product: product.into(),
        }
    }

    fn row<'a>(rows: &'a [(String, String)], key: &str) -> &'a str {
        &rows.iter().find(|(k, _)| k == key).unwrap().1
    }

    #[test]
    fn the_program_is_the_file_its_code_objects_came_from() {
        let uris = [
            "file:///opt/app/bin/app#offset=8192&size=40960",
            "file:///opt/app/bin/app#offset=8192&size=40961",
            "file:///opt/rocm/lib/librocblas.so.0#offset=1&size=2",
            "file:///opt/rocm/lib/rocblas/library/Kernels.so-000-gfx90a.hsaco",
            "memory://4266#offset=0x7f00&size=100",
            "file:///home/me/my%20app#offset=1",
        ]
        .map(String::from);
        assert_eq!(programs(&uris), ["/opt/app/bin/app", "/home/me/my app"]);
        assert_eq!(programs(&uris[4..5]), Vec::<String>::new());
    }

    #[test]
    fn a_replay_says_what_it_knows_and_what_is_not_delivered() {
        let f = Facts {
            replay: true,
            agents: vec![
                agent(false, "AMD EPYC 7763", "AMD EPYC 7763"),
                agent(true, "gfx90a", "AMD Instinct MI210"),
                agent(true, "gfx90a", "AMD Instinct MI210"),
            ],
            code_object_uris: vec!["file:///opt/app/bin/app#offset=8192&size=40960".into()],
            processes: vec![Process {
                hostname: "node01".into(),
                pid: 4266,
                ..Default::default()
            }],
            ..Default::default()
        };
        let rows = rows(&f);
        assert!(row(&rows, "Program").starts_with("/opt/app/bin/app ("));
        assert!(row(&rows, "Arguments").starts_with(NOT_RECORDED));
        assert_eq!(
            row(&rows, "Runtime"),
            "replayed recording of a run on the AMD ROCm runtime (version not delivered to plugins)"
        );
        assert!(row(&rows, "Back end").starts_with("not recorded: the records were read"));
        assert_eq!(row(&rows, "GPUs"), "2 × gfx90a (AMD Instinct MI210)");
        assert_eq!(row(&rows, "Host"), "node01");
        assert_eq!(row(&rows, "Process"), "pid 4266");
        assert!(rows.iter().all(|(_, v)| !v.contains("unknown")));
    }

    #[test]
    fn a_live_run_on_the_simulated_runtime_is_named_so() {
        let f = Facts {
            agents: vec![
                agent(false, "Simulated CPU", "Simulated CPU"),
                agent(true, "gfx90a", "Simulated AMD Instinct MI210"),
            ],
            runtimes: vec![(rocwasm_plugin_sdk::kind::runtime_init::HIP, 50_201)],
            code_object_uris: vec!["memory://1#offset=1&size=2".into()],
            processes: vec![Process {
                hostname: "vm".into(),
                pid: 7,
                rank: Some(1),
                job: Some("42".into()),
                ..Default::default()
            }],
            ..Default::default()
        };
        let rows = rows(&f);
        assert_eq!(row(&rows, "Runtime"), "simulated AMD runtime, HIP 5.2.1");
        assert!(row(&rows, "Program").starts_with(NOT_RECORDED));
        assert_eq!(row(&rows, "Back end"), NOT_RECORDED);
        assert_eq!(row(&rows, "Process"), "pid 7, rank 1, job 42");
        let real = Facts {
            agents: vec![agent(true, "gfx942", "AMD Instinct MI300X")],
            runtime_version: 60_204,
            ..Default::default()
        };
        assert_eq!(runtime(&real), "AMD ROCm runtime, 6.2.4");
    }

    #[test]
    fn the_command_line_names_program_arguments_and_back_end() {
        let p = |pid, command: &[&str], back_end: &str| Process {
            hostname: "n".into(),
            pid,
            command: command.iter().map(|s| s.to_string()).collect(),
            back_end: back_end.into(),
            ..Default::default()
        };
        let live = Facts {
            processes: vec![p(1, &["/bin/app", "--size", "8", "a b", "it's"], "builtin")],
            code_object_uris: vec!["file:///other#offset=1".into()],
            ..Default::default()
        };
        let r = rows(&live);
        assert_eq!(row(&r, "Program"), "/bin/app");
        assert_eq!(row(&r, "Arguments"), r#"--size 8 'a b' 'it'\''s'"#);
        assert_eq!(
            row(&r, "Back end"),
            "builtin (rocwasm's own interception of HIP, HSA and roctx)"
        );
        let bare = Facts {
            processes: vec![p(1, &["/bin/app"], "rocprofiler-sdk")],
            ..Default::default()
        };
        let r = rows(&bare);
        assert_eq!(row(&r, "Arguments"), "none");
        assert!(row(&r, "Back end").starts_with("rocprofiler-sdk ("));
        // An MPI job's replay: one program, ranks with other arguments,
        // one back end, read back.
        let job = Facts {
            replay: true,
            processes: vec![
                p(1, &["./app", "0"], "builtin"),
                p(2, &["./app", "1"], "builtin"),
                p(3, &["./app", "0"], ""),
            ],
            ..Default::default()
        };
        let r = rows(&job);
        assert_eq!(row(&r, "Program"), "./app");
        assert_eq!(row(&r, "Arguments"), "2 command lines: ./app 0; ./app 1");
        assert_eq!(
            row(&r, "Back end"),
            "builtin (rocwasm's own interception of HIP, HSA and roctx); read back from a recording"
        );
    }

    #[test]
    fn a_csv_replay_records_little_and_the_page_says_so() {
        let f = Facts {
            replay: true,
            agents: vec![agent(true, "", "")],
            processes: vec![Process::default()],
            ..Default::default()
        };
        let rows = rows(&f);
        assert_eq!(
            row(&rows, "Runtime"),
            "replayed recording (the recording does not name its runtime)"
        );
        assert_eq!(row(&rows, "GPUs"), "name not recorded");
        assert_eq!(row(&rows, "Host"), "not recorded");
        assert_eq!(row(&rows, "Process"), "pid not recorded");
    }

    #[test]
    fn several_processes_are_listed_with_their_hosts() {
        let f = Facts {
            processes: (0..10)
                .map(|i| Process {
                    hostname: format!("n{}", i % 2),
                    pid: 100 + i,
                    rank: Some(i),
                    job: None,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let rows = rows(&f);
        assert_eq!(row(&rows, "Host"), "n0, n1");
        let p = row(&rows, "Process");
        assert!(
            p.starts_with("10 processes: pid 100, rank 0 on n0; pid 101, rank 1 on n1;"),
            "{p}"
        );
        assert!(p.ends_with("; 2 more"), "{p}");
    }
}
