//! The outputs of a run from its record journals, once the application has
//! ended (or while it runs, `--write-during-run`), and `rocwasm
//! write-journal` for journals a run left behind.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};

use anyhow::Context;
use rocwasm_pipeline::{FromJournal, JournalOutputs};
use rocwasm_plan::RunPlan;

use crate::console::Console;
use crate::error::{LaunchError, Result};
use crate::exit::describe_exit;

/// What [`write_outputs`] did.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// The application's own summary (its last image's), when its journal
    /// was written; printed as it was.
    pub own_summary: Option<String>,
    /// Every journal written, in the order of their files.
    pub processes: Vec<FromJournal>,
    /// The journal directory, when it is kept (a journal could not be
    /// written, or `ROCWASM_KEEP_JOURNAL`).
    pub kept: Option<PathBuf>,
}

impl Written {
    /// True when the application's own summary was printed: false when it
    /// left no journal (it never started profiling).
    pub fn printed(&self) -> bool {
        self.own_summary.is_some()
    }
}

/// `rocwasm write-journal DIR`: the outputs of every journal in `dir`, as
/// the plan saved beside them says; what each journal's process wrote.
pub fn write_journal(dir: &Path, console: &mut dyn Console) -> Result<Vec<FromJournal>> {
    let plan = RunPlan::load(&dir.join(RunPlan::JOURNAL_PLAN_FILE)).map_err(|e| {
        LaunchError::usage(format!(
            "{e} (is {} a record journal directory that `rocwasm run` left?)",
            dir.display()
        ))
    })?;
    let journals = rocwasm_journal::journals_in(dir)
        .with_context(|| format!("cannot read {}", dir.display()))
        .map_err(LaunchError::Runtime)?;
    if journals.is_empty() {
        return Err(LaunchError::usage(format!(
            "{}: no journal (*.journal) in it",
            dir.display()
        )));
    }
    let now = rocwasm_core::clock::now();
    let written = write_outputs(&plan, dir, None, now, false, BTreeMap::new(), console);
    if dir.exists() {
        return Err(LaunchError::runtime(format!(
            "some outputs could not be written; {} is kept",
            dir.display()
        )));
    }
    Ok(written.processes)
}

/// Writes every process's outputs from its journal and prints the
/// application's summary (with `tables`, the stages' tables too; without,
/// only its `rocwasm:` lines). `app`: the application's pid and how it
/// ended, when this launcher started it. The journal directory is removed
/// when every journal was written.
pub(crate) fn write_outputs(
    plan: &RunPlan,
    journal: &Path,
    app: Option<(u32, ExitStatus)>,
    ended_ns: u64,
    tables: bool,
    mut following: BTreeMap<PathBuf, JournalOutputs>,
    console: &mut dyn Console,
) -> Written {
    let mut written = Written::default();
    let journals = match rocwasm_journal::journals_in(journal) {
        Ok(j) => j,
        Err(e) => {
            errln!(
                console,
                "rocwasm: cannot read the record journal directory {}: {e}",
                journal.display()
            );
            return written;
        }
    };
    let app_pid = app.map(|(pid, _)| pid);
    let ended =
        app.map(|(pid, status)| format!("the application (pid {pid}) {}", describe_exit(status)));
    let stem_of = |p: &Path| {
        p.file_stem()
            .and_then(|s| s.to_str())
            .and_then(rocwasm_journal::parse_stem)
    };
    // The application's own summary is its last image's (after an `exec`).
    let last_image_of_app = journals
        .iter()
        .rfind(|p| app_pid.is_some() && stem_of(p).map(|(pid, _)| pid) == app_pid);
    let mut kept = false;
    for (i, path) in journals.iter().enumerate() {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if size >= 64 << 20 {
            errln!(
                console,
                "rocwasm: writing the output files from {} MB of journaled records…",
                size >> 20
            );
        }
        let own = Some(path) == last_image_of_app;
        let pid = stem_of(path).map(|(pid, _)| pid);
        // An image that `exec`ed another program before recording anything
        // (`sh -c 'exec app'`): the next image's journal is the process's.
        let later_image = journals[i + 1..]
            .iter()
            .any(|p| stem_of(p).map(|(q, _)| q) == pid);
        if later_image
            && !following.contains_key(path)
            && !rocwasm_pipeline::journal_holds_records(path)
        {
            continue;
        }
        let said = ended.as_deref().filter(|_| own);
        let result = match following.remove(path) {
            Some(outputs) => outputs.finish(said, ended_ns),
            None => rocwasm_pipeline::write_from_journal(plan, path, said, ended_ns),
        };
        match result {
            Ok(w) if own => {
                if tables {
                    out!(console, "{}", w.summary);
                } else {
                    for line in w.summary.lines().filter(|l| l.starts_with("rocwasm:")) {
                        outln!(console, "{line}");
                    }
                }
                written.own_summary = Some(w.summary.clone());
                written.processes.push(w);
            }
            Ok(w) => {
                outln!(
                    console,
                    "rocwasm: process {} ({}): outputs and summary in {}",
                    w.pid,
                    if w.finished {
                        "finished"
                    } else {
                        "did not finish profiling"
                    },
                    w.dir.display()
                );
                written.processes.push(w);
            }
            Err(e) => {
                errln!(console, "rocwasm: {e:#}");
                kept = true;
            }
        }
    }
    // For a bug report: the journals as the processes left them.
    let kept = kept || std::env::var_os("ROCWASM_KEEP_JOURNAL").is_some();
    if kept {
        errln!(
            console,
            "rocwasm: the record journal is kept in {} (`rocwasm write-journal {}` writes the outputs again once the cause is fixed)",
            journal.display(),
            journal.display()
        );
        written.kept = Some(journal.to_path_buf());
    } else if let Err(e) = std::fs::remove_dir_all(journal) {
        errln!(console, "rocwasm: cannot remove {}: {e}", journal.display());
    }
    if let Some(ended) = ended.filter(|_| !written.printed() && !journals.is_empty()) {
        outln!(console, "rocwasm: {ended}");
    }
    written
}

/// Waits for `child` while writing what each journal of `dir` holds, every
/// 100 ms (`--write-during-run`); `open` keeps each journal's outputs for
/// [`write_outputs`] to finish. A journal that cannot be read further is
/// not followed any more; its end reports why.
pub(crate) fn follow(
    plan: &RunPlan,
    dir: &Path,
    child: &mut Child,
    open: &mut BTreeMap<PathBuf, JournalOutputs>,
) -> std::io::Result<ExitStatus> {
    let mut failed = BTreeSet::new();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        for path in rocwasm_journal::journals_in(dir).unwrap_or_default() {
            if failed.contains(&path) {
                continue;
            }
            if !open.contains_key(&path) {
                // A journal whose header or metadata is not written yet
                // fails to open: tried again at the next round.
                if let Ok(Some(outputs)) = JournalOutputs::open(plan, &path) {
                    open.insert(path.clone(), outputs);
                }
            }
            if let Some(outputs) = open.get_mut(&path) {
                if outputs
                    .pump()
                    .and_then(|_| outputs.retry_incomplete())
                    .is_err()
                {
                    // Not followed any more: its end (`write_outputs`)
                    // meets the error again and reports it.
                    failed.insert(path);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Prints the summary the tool library wrote in `dir` (a run whose
/// application left no journal); with `tables` false, only its
/// `rocwasm:` lines (files written, problems), not the stages' tables
/// (which stay in the file). Its text, when there is one.
pub(crate) fn print_summary(
    dir: &Path,
    tables: bool,
    status: ExitStatus,
    console: &mut dyn Console,
) -> Option<String> {
    let path = dir.join(RunPlan::SUMMARY_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            if tables {
                out!(console, "{text}");
            } else {
                for line in text.lines().filter(|l| l.starts_with("rocwasm:")) {
                    outln!(console, "{line}");
                }
            }
            Some(text)
        }
        Err(_) if status.signal().is_some() => {
            errln!(
                console,
                "rocwasm: the application {} before it started profiling: no outputs in {}",
                describe_exit(status),
                dir.display()
            );
            None
        }
        Err(e) => {
            errln!(
                console,
                "rocwasm: no summary at {} ({e}); the application may not have used the AMD runtime",
                path.display()
            );
            None
        }
    }
}
