//! Output path templates: `%hostname%/%pid%`, `run-%job%-%rank%`, `%env{USER}%`.
//!
//! Chain files are written once and used by every process of a job, so the
//! output directory and file prefix name the process they belong to. A
//! template is checked when the chain is loaded (an unknown `%key%` is a
//! config error with its column) and expanded when a process starts.
//!
//! | key | value |
//! |---|---|
//! | `%hostname%` | the node's host name |
//! | `%pid%`, `%ppid%` | this process's id and its parent's |
//! | `%rank%` | the MPI rank: `OMPI_COMM_WORLD_RANK`, `PMI_RANK`, `PMIX_RANK`, `SLURM_PROCID` or `MV2_COMM_WORLD_RANK`, else `0` |
//! | `%size%` | the number of ranks: `OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`, `SLURM_NTASKS` or `MV2_COMM_WORLD_SIZE`, else `1` |
//! | `%job%` | the batch job id: `SLURM_JOB_ID`, `PBS_JOBID`, `LSB_JOBID` or `FLUX_JOB_ID`, else `0` |
//! | `%env{NAME}%` | the environment variable `NAME` (empty when unset) |
//! | `%%` | a literal `%` |

use std::collections::HashMap;

/// Environment variables that carry the MPI rank, in the order they are tried.
pub const RANK_VARIABLES: &[&str] = &[
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
    "MV2_COMM_WORLD_RANK",
];
/// Environment variables that carry the number of ranks.
pub const SIZE_VARIABLES: &[&str] = &[
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "SLURM_NTASKS",
    "MV2_COMM_WORLD_SIZE",
];
/// Environment variables that carry a batch scheduler's job id.
pub const JOB_VARIABLES: &[&str] = &["SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID"];

/// The keys a template may use (besides `%env{NAME}%` and `%%`).
pub const KEYS: &[&str] = &["hostname", "pid", "ppid", "rank", "size", "job"];

/// A checked template; [`PathTemplate::expand`] fills it in for one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTemplate {
    text: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Hostname,
    Pid,
    Ppid,
    Rank,
    Size,
    Job,
    Env(String),
}

/// A template syntax error: the byte index in the template and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    /// Byte index of the offending `%` in the template.
    pub index: usize,
    /// What is wrong, as a sentence.
    pub message: String,
}

impl PathTemplate {
    /// Checks `text`; see the module documentation for the keys.
    pub fn parse(text: &str) -> Result<Self, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(pos) = rest.find('%') {
            literal.push_str(&rest[..pos]);
            let index = text.len() - rest.len() + pos;
            let after = &rest[pos + 1..];
            if let Some(tail) = after.strip_prefix('%') {
                literal.push('%');
                rest = tail;
                continue;
            }
            let Some(end) = after.find('%') else {
                return Err(TemplateError {
                    index,
                    message: format!(
                        "unterminated `%` in `{text}` (write `%%` for a literal percent sign)"
                    ),
                });
            };
            let key = &after[..end];
            let part = match key {
                "hostname" => Part::Hostname,
                "pid" => Part::Pid,
                "ppid" => Part::Ppid,
                "rank" => Part::Rank,
                "size" => Part::Size,
                "job" => Part::Job,
                _ => match key.strip_prefix("env{").and_then(|k| k.strip_suffix('}')) {
                    Some(name) if valid_env_name(name) => Part::Env(name.to_string()),
                    _ => {
                        return Err(TemplateError {
                            index,
                            message: format!(
                                "unknown key `%{key}%` in `{text}` (expected one of: %hostname%, %pid%, %ppid%, %rank%, %size%, %job%, %env{{NAME}}%, %%)"
                            ),
                        })
                    }
                },
            };
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(part);
            rest = &after[end + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(PathTemplate {
            text: text.to_string(),
            parts,
        })
    }

    /// A template that expands to `text` as it is (every `%` escaped).
    pub fn literal(text: &str) -> Self {
        PathTemplate {
            text: text.replace('%', "%%"),
            parts: vec![Part::Literal(text.to_string())],
        }
    }

    /// True when the template names the process (`%pid%`): each process
    /// gets a path of its own.
    pub fn names_pid(&self) -> bool {
        self.parts.contains(&Part::Pid)
    }

    /// The directory every process of a job shares: the template up to
    /// its first per-process key (`%hostname%`, `%pid%`, `%ppid%`,
    /// `%rank%`), cut back to the last `/` before it; `%job%`, `%size%` and
    /// `%env{NAME}%` stay (the same for a job's ranks). `out` for
    /// `out/r%rank%`, `runs/%env{EXP}%` for `runs/%env{EXP}%/%rank%`, `.`
    /// when the template starts with a per-process key, the template itself
    /// when it has none.
    pub fn shared_prefix(&self) -> PathTemplate {
        let per_process =
            |p: &Part| matches!(p, Part::Hostname | Part::Pid | Part::Ppid | Part::Rank);
        let Some(first) = self.parts.iter().position(per_process) else {
            return self.clone();
        };
        let mut parts: Vec<Part> = self.parts[..first].to_vec();
        // Back to the last `/` of the literals before the key.
        loop {
            match parts.pop() {
                Some(Part::Literal(s)) => match s.rfind('/') {
                    Some(0) if parts.is_empty() => {
                        parts.push(Part::Literal("/".into()));
                        break;
                    }
                    Some(i) => {
                        parts.push(Part::Literal(s[..i].to_string()));
                        break;
                    }
                    None => continue,
                },
                // A key with no `/` after it: the directory is before it.
                Some(_) => continue,
                None => break,
            }
        }
        if parts.is_empty() {
            parts.push(Part::Literal(".".into()));
        }
        let text = parts
            .iter()
            .map(|p| match p {
                Part::Literal(s) => s.replace('%', "%%"),
                Part::Hostname => "%hostname%".into(),
                Part::Pid => "%pid%".into(),
                Part::Ppid => "%ppid%".into(),
                Part::Rank => "%rank%".into(),
                Part::Size => "%size%".into(),
                Part::Job => "%job%".into(),
                Part::Env(n) => format!("%env{{{n}}}%"),
            })
            .collect();
        PathTemplate { text, parts }
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The template filled in for `process`.
    pub fn expand(&self, process: &ProcessInfo) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(s) => out.push_str(s),
                Part::Hostname => out.push_str(&process.hostname),
                Part::Pid => out.push_str(&process.pid.to_string()),
                Part::Ppid => out.push_str(&process.ppid.to_string()),
                Part::Rank => out.push_str(&process.rank()),
                Part::Size => out.push_str(&process.size()),
                Part::Job => out.push_str(&process.job()),
                Part::Env(name) => out.push_str(process.var(name).unwrap_or("")),
            }
        }
        out
    }
}

impl serde::Serialize for PathTemplate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for PathTemplate {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        PathTemplate::parse(&text).map_err(|e| serde::de::Error::custom(e.message))
    }
}

impl std::fmt::Display for PathTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn valid_env_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What templates are expanded with: one process's identity. A plain value
/// (not read behind the caller's back) so expansion is testable; kept in
/// a process's record journal so its launcher expands the same paths.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ProcessInfo {
    /// The node's host name.
    pub hostname: String,
    /// The process id.
    pub pid: u32,
    /// The parent's process id.
    pub ppid: u32,
    /// A snapshot of the environment.
    pub vars: HashMap<String, String>,
}

impl ProcessInfo {
    /// This process: its ids, host name and environment.
    pub fn current() -> Self {
        Self::of_pid(std::process::id())
    }

    /// This process's host name and environment, with `pid` as its id (a
    /// launcher names the child it started; a forked child, itself).
    pub fn of_pid(pid: u32) -> Self {
        ProcessInfo {
            hostname: hostname(),
            pid,
            ppid: if pid == std::process::id() {
                parent_pid()
            } else {
                std::process::id()
            },
            vars: std::env::vars().collect(),
        }
    }

    /// The environment variable `name`, if set.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    fn first_var(&self, names: &[&str], default: &str) -> String {
        names
            .iter()
            .find_map(|n| self.var(n).filter(|v| !v.is_empty()))
            .unwrap_or(default)
            .to_string()
    }

    /// The MPI rank, `0` outside MPI.
    pub fn rank(&self) -> String {
        self.first_var(RANK_VARIABLES, "0")
    }

    /// The number of ranks, `1` outside MPI.
    pub fn size(&self) -> String {
        self.first_var(SIZE_VARIABLES, "1")
    }

    /// The batch job id, `0` outside a batch job.
    pub fn job(&self) -> String {
        self.first_var(JOB_VARIABLES, "0")
    }
}

/// This node's name; the kernel's view, so no FFI is needed.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// The parent's pid from `/proc/self/stat` (field 4, after the `(comm)`
/// field, which may itself contain spaces and parentheses).
fn parent_pid() -> u32 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| {
            let after_comm = &stat[stat.rfind(')')? + 1..];
            after_comm.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(vars: &[(&str, &str)]) -> ProcessInfo {
        ProcessInfo {
            hostname: "node7".into(),
            pid: 4242,
            ppid: 1,
            vars: vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn expands_every_key() {
        let t = PathTemplate::parse(
            "out/%hostname%/%pid%-%ppid%/r%rank%of%size%-j%job%-%env{USER}%-100%%",
        )
        .unwrap();
        let p = process(&[
            ("SLURM_PROCID", "3"),
            ("SLURM_NTASKS", "8"),
            ("SLURM_JOB_ID", "77"),
            ("USER", "ada"),
        ]);
        assert_eq!(t.expand(&p), "out/node7/4242-1/r3of8-j77-ada-100%");
    }

    #[test]
    fn rank_variables_are_tried_in_order() {
        let t = PathTemplate::parse("%rank%").unwrap();
        assert_eq!(t.expand(&process(&[])), "0");
        assert_eq!(
            t.expand(&process(&[("PMI_RANK", "5"), ("SLURM_PROCID", "9")])),
            "5"
        );
        assert_eq!(
            t.expand(&process(&[
                ("OMPI_COMM_WORLD_RANK", "2"),
                ("PMI_RANK", "5")
            ])),
            "2"
        );
        assert_eq!(t.expand(&process(&[("MV2_COMM_WORLD_RANK", "6")])), "6");
        assert_eq!(t.expand(&process(&[("PMIX_RANK", "4")])), "4");
    }

    #[test]
    fn a_template_names_the_process_with_pid_only() {
        assert!(PathTemplate::parse("out/%hostname%/%pid%")
            .unwrap()
            .names_pid());
        for t in ["out", "out/%ppid%/%rank%", "%%pid%%", "%env{pid}%"] {
            assert!(!PathTemplate::parse(t).unwrap().names_pid(), "{t}");
        }
    }

    #[test]
    fn the_shared_prefix_stops_before_the_first_per_process_key() {
        let prefix = |t: &str| {
            let p = PathTemplate::parse(t).unwrap().shared_prefix();
            (p.as_str().to_string(), p.expand(&process(&[("EXP", "e1")])))
        };
        let both = |s: &str| (s.to_string(), s.to_string());
        assert_eq!(prefix("out/%rank%"), both("out"));
        assert_eq!(prefix("out/r%rank%/x"), both("out"));
        assert_eq!(prefix("/abs/%pid%"), both("/abs"));
        assert_eq!(prefix("/%rank%"), both("/"));
        assert_eq!(prefix("%hostname%/%pid%"), both("."));
        assert_eq!(prefix("plain/dir"), both("plain/dir"));
        assert_eq!(prefix("100%%/%rank%"), ("100%%".into(), "100%".into()));
        // Keys a job's ranks share stay, expanded.
        assert_eq!(
            prefix("runs/%env{EXP}%/%rank%"),
            ("runs/%env{EXP}%".into(), "runs/e1".into())
        );
        assert_eq!(
            prefix("jobs/%job%-%size%/r%rank%"),
            ("jobs/%job%-%size%".into(), "jobs/0-1".into())
        );
        assert_eq!(prefix("a/%job%%rank%"), both("a"));
    }

    #[test]
    fn unset_env_expands_empty() {
        let t = PathTemplate::parse("a%env{NOPE_NOT_SET}%b").unwrap();
        assert_eq!(t.expand(&process(&[])), "ab");
    }

    #[test]
    fn errors_point_at_the_percent() {
        let e = PathTemplate::parse("out/%hostnme%/x").unwrap_err();
        assert_eq!(e.index, 4);
        assert!(
            e.message.starts_with("unknown key `%hostnme%`"),
            "{}",
            e.message
        );
        let e = PathTemplate::parse("out/%pid%/50%").unwrap_err();
        assert_eq!(e.index, 12);
        assert!(e.message.starts_with("unterminated `%`"));
        assert!(PathTemplate::parse("%env{}%").is_err());
        assert!(PathTemplate::parse("%env{A-B}%").is_err());
    }

    #[test]
    fn current_process_has_an_identity() {
        let p = ProcessInfo::current();
        assert_eq!(p.pid, std::process::id());
        assert!(p.ppid > 0);
        assert!(!p.hostname.is_empty());
    }
}
