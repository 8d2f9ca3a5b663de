//! The launcher's side of the record journal (see [`crate::journal`]):
//! each process's outputs written from its journal, however the process
//! ended — a replay of the journal through the plan's sinks, plus the
//! records its durable halves still held, and a summary that says how the
//! process ended.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use rocwasm_core::buffer::durable::Recovered;
use rocwasm_core::SymbolTable;
use rocwasm_journal::{halves, Frame, JournalReader};
use rocwasm_plan::RunPlan;

use rocwasm_formats::OutputSummary;
use rocwasm_plan::Placement;
use rocwasm_record::journal::SdkState;
use rocwasm_record::live::write_audit;
use rocwasm_record::stages::placed;
use rocwasm_record::{admit_under_policy, JournalMeta, ProcessEnd};

use crate::pipeline::{Pipeline, Recording};
use crate::replay::TraceNames;
use crate::sinks::registry_names;

/// The summary file's text: the stages' tables, the process's lines, then
/// what was written (the sinks' files, then the stages', each with its
/// stage; each file once) and what went wrong. `ended` is how the process
/// ended, when the launcher knows it.
///
/// One table per domain: with `stats` (`--stats`) the statistics stages
/// print theirs, and the host's statistics (the same numbers) are shown
/// only when no stage printed a table (the stages failed, or the process
/// died with them). Without `stats` no statistics table at all: a trace
/// flag alone prints no summary, as rocprofv3 prints one only with
/// `-S`/`-D`.
pub fn summary_text(
    end: &ProcessEnd,
    outputs: &OutputSummary,
    stage_files: &[(PathBuf, String)],
    stats: bool,
    ended: Option<&str>,
) -> String {
    let mut text = end.plugin_text.clone();
    if stats && end.no_plugin_tables {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&outputs.stats.render_summary(10));
    }
    text.push('\n');
    for line in end.lines.iter().chain(ended.map(str::to_string).as_ref()) {
        text.push_str(&format!("rocwasm: {line}\n"));
    }
    for p in &end.problems {
        text.push_str(&format!("rocwasm: {p}\n"));
    }
    for f in &outputs.files {
        text.push_str(&format!("rocwasm: wrote {}\n", f.display()));
    }
    // The plugins' files, each with its writer (a statistics file a stage
    // wrote instead of the host's sink, the designed outcome of `--stats`,
    // among them).
    for (f, stage) in stage_files {
        if !outputs.files.contains(f) {
            text.push_str(&format!(
                "rocwasm: wrote {} (stage `{stage}`)\n",
                f.display()
            ));
        }
    }
    for e in &outputs.errors {
        text.push_str(&format!("rocwasm: output error: {e:#}\n"));
    }
    for note in end.notes.iter().chain(&outputs.notes) {
        text.push_str(&format!("rocwasm: {note}\n"));
    }
    text
}

/// What [`write_from_journal`] did.
#[derive(Debug)]
pub struct FromJournal {
    /// The process whose journal it was.
    pub pid: u32,
    /// Its output directory (the summary file is there).
    pub dir: PathBuf,
    /// The summary file's text.
    pub summary: String,
    /// The files written: the sinks', then the stages' (in the launcher
    /// and, as the process reported them, in the process), each once.
    pub files: Vec<PathBuf>,
    /// Records read from the journal's batches.
    pub journaled: u64,
    /// Records recovered from the durable halves.
    pub recovered: u64,
    /// True when the process reached its normal end of run.
    pub finished: bool,
}

/// True when the journal at `path` holds a record (in a batch frame or its
/// durable halves) or its process's end: false for a process image that
/// `exec`ed another program before recording anything (the next image's
/// journal has the process's records). An unreadable journal counts as
/// holding records, so that writing it reports why.
pub fn journal_holds_records(path: &Path) -> bool {
    let Ok(mut reader) = JournalReader::open(path) else {
        return true;
    };
    loop {
        match reader.next_frame() {
            Ok(Some(Frame::Batch(b))) if !b.is_empty() => return true,
            Ok(Some(Frame::End(_))) | Err(_) => return true,
            Ok(Some(_)) => {}
            Ok(None) => break,
        }
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    halves::files_of(dir, stem).map_or(true, |files| {
        files
            .iter()
            .any(|f| halves::recover_file(f).map_or(true, |r| !r.batch.is_empty()))
    })
}

/// Writes the outputs of the process whose journal is `path`, as `plan`
/// (the launcher's plan) says: every batch of the journal, then the records
/// its durable halves still hold, through the plan's sinks; then the
/// summary file. `ended` says how the process ended when the launcher knows
/// (its own child); `ended_ns` is when the launcher saw it end (the run's
/// end time when the process did not reach its own).
pub fn write_from_journal(
    plan: &RunPlan,
    path: &Path,
    ended: Option<&str>,
    ended_ns: u64,
) -> Result<FromJournal> {
    let mut outputs = JournalOutputs::open(plan, path)?.ok_or_else(|| {
        anyhow::anyhow!(
            "{}: empty (the process ended before its profiling started)",
            path.display()
        )
    })?;
    outputs.pump()?;
    outputs.finish(ended, ended_ns)
}

/// The outputs of one process written from its journal as it grows (the
/// launcher's `--write-during-run`), or all at once
/// ([`write_from_journal`]): [`JournalOutputs::pump`] writes what the
/// journal holds so far, [`JournalOutputs::finish`] the rest once the
/// process has ended.
pub struct JournalOutputs {
    plan: RunPlan,
    path: PathBuf,
    reader: JournalReader,
    head: JournalMeta,
    pipeline: Pipeline,
    journaled: u64,
    end: Option<ProcessEnd>,
}

impl JournalOutputs {
    /// Opens the journal at `path` and the outputs of its process; `None`
    /// while it holds no metadata frame yet (a process that is starting).
    pub fn open(plan: &RunPlan, path: &Path) -> Result<Option<JournalOutputs>> {
        let mut reader = JournalReader::open(path)?;
        let head = match reader.next_frame()? {
            Some(Frame::Meta(json)) => serde_json::from_slice::<JournalMeta>(&json)
                .with_context(|| format!("{}: the metadata frame", path.display()))?,
            Some(_) => bail!("{}: the first frame is not the metadata", path.display()),
            None => return Ok(None),
        };
        let names = Arc::new(registry_names());
        let recording = Recording {
            meta: head.meta.clone(),
            names: names.clone(),
            plugin_names: Arc::new(TraceNames(names)),
            symbols: Arc::new(SymbolTable::new()),
        };
        // The stages placed in the launcher (the others ran in the
        // process), and no filter: the process applied them (a kernel
        // iteration range counted twice would keep other dispatches).
        let mut writer_plan = placed(plan, Placement::Rocwasm);
        // Where the process wrote its own files (a forked child's run has
        // a directory of its own).
        if let Some(dir) = &head.output_directory {
            writer_plan.output.directory = dir.clone();
        }
        writer_plan.kernels = Default::default();
        writer_plan.collection = Default::default();
        writer_plan.journal = None;
        writer_plan.api_log = false;
        let mut pipeline = Pipeline::start(writer_plan, &head.process, recording, Vec::new())
            .with_context(|| format!("writing the outputs of process {}", head.meta.pid))?;
        pipeline.skip_audit();
        // The journal also holds what the launcher's stages trace: the
        // sinks keep the outputs' kinds, exactly (none when none).
        pipeline.write_only(&plan.output.kinds);
        Ok(Some(JournalOutputs {
            plan: plan.clone(),
            path: path.to_path_buf(),
            reader,
            head,
            pipeline,
            journaled: 0,
            end: None,
        }))
    }

    /// The process whose journal this is.
    pub fn pid(&self) -> u32 {
        self.head.meta.pid
    }

    /// Writes every whole frame the journal holds now; a frame still being
    /// written is read again at the next call. Returns the records written.
    pub fn pump(&mut self) -> Result<u64> {
        let before = self.journaled;
        let profiler = self.pipeline.profiler().clone();
        while let Some(frame) = self.reader.next_frame()? {
            match frame {
                Frame::Meta(_) => {}
                Frame::Symbols(s) => s.insert_into(profiler.symbols()),
                Frame::Args(args) => self.pipeline.call_args(&args),
                Frame::Batch(b) => {
                    self.journaled += b.len() as u64;
                    self.pipeline.deliver(*b)?;
                }
                Frame::End(json) => {
                    self.end = Some(
                        serde_json::from_slice(&json)
                            .with_context(|| format!("{}: the end frame", self.path.display()))?,
                    )
                }
            }
        }
        Ok(self.journaled - before)
    }

    /// Reads a frame found incomplete again at the next [`Self::pump`] (the
    /// process may still be writing it).
    pub fn retry_incomplete(&mut self) -> Result<()> {
        Ok(self.reader.retry_incomplete()?)
    }

    /// The process has ended (`ended`, `ended_ns`: see
    /// [`write_from_journal`]): the last frames, the records its durable
    /// halves still hold, the outputs closed, the summary file written.
    pub fn finish(mut self, ended: Option<&str>, ended_ns: u64) -> Result<FromJournal> {
        self.pump()?;
        let (plan, head, path) = (&self.plan, &self.head, &self.path);
        // The process's own directory (a forked child's differs from the plan's).
        let process_dir = head.output_directory.as_ref().map_or_else(
            || plan.run_dir(&head.process),
            |t| PathBuf::from(t.expand(&head.process)),
        );
        let pipeline = self.pipeline;
        let (journaled, end) = (self.journaled, self.end);
        let mut problems = Vec::new();
        if let Some(bytes) = self.reader.cut_short() {
            problems.push(format!(
                "the journal's last frame was cut short when the process died ({bytes} bytes): the records in it are lost"
            ));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut recovered = 0u64;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        for file in halves::files_of(dir, stem)? {
            match halves::recover_file(&file) {
                Ok(Recovered { batch, .. }) if !batch.is_empty() => {
                    recovered += batch.len() as u64;
                    pipeline.deliver(batch)?;
                }
                Ok(_) => {}
                Err(e) => problems.push(format!("cannot read the buffer file {e}")),
            }
        }
        if let Some(end) = &end {
            pipeline.claim_stage_files(&end.stage_files);
        }
        let finished = end.is_some();
        if !finished {
            // The process never wrote its audit line: write it here, with
            // the whole plan it ran and how it ended.
            let failures = vec![ended.map_or_else(
                || format!("process {} did not reach its end of run", head.meta.pid),
                str::to_string,
            )];
            match admit_under_policy(plan) {
                Ok(admission) => problems.extend(write_audit(
                    plan,
                    &admission,
                    &process_dir,
                    false,
                    &failures,
                )),
                Err(e) => problems.push(format!("no audit line: {e:#}")),
            }
        }
        let mut end = end.unwrap_or_else(|| ProcessEnd {
            no_plugin_tables: true,
            lines: lost_lines(plan, dir, head.meta.pid, journaled + recovered),
            end_ns: ended_ns,
            ..ProcessEnd::default()
        });
        if recovered > 0 {
            end.lines.push(format!(
                "{recovered} records not yet delivered when the process ended were read back from its buffers"
            ));
        }
        end.problems.extend(problems);
        let mut meta = head.meta.clone();
        meta.end_ns = end.end_ns.max(meta.start_ns);
        pipeline.set_meta(meta);
        let dir = pipeline.dir().to_path_buf();
        let report = pipeline
            .finish()
            .expect("a journal's pipeline is finished once, here");
        end.problems.extend(report.problems);
        // The stages that ran here: their tables after the process's.
        let launcher_text = report.plugins.render();
        if !launcher_text.is_empty() {
            if !end.plugin_text.is_empty() {
                end.plugin_text.push('\n');
            }
            end.plugin_text.push_str(&launcher_text);
        }
        end.no_plugin_tables &= report.plugins.tables.iter().all(|(_, t)| t.is_empty());
        let summary = summary_text(
            &end,
            &report.outputs,
            &report.stage_files,
            plan.output.stats,
            ended,
        );
        let mut files = report.outputs.files.clone();
        for (f, _) in &report.stage_files {
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the output directory {}", dir.display()))?;
        let file = dir.join(RunPlan::SUMMARY_FILE);
        std::fs::write(&file, &summary)
            .with_context(|| format!("cannot write {}", file.display()))?;
        Ok(FromJournal {
            pid: head.meta.pid,
            dir,
            summary,
            files,
            journaled,
            recovered,
            finished,
        })
    }
}

/// What a process that never reached its end of run lost: the in-process
/// stages' tables (with the placement that keeps them), and under the
/// rocprofiler-sdk back end the records the SDK's buffer still held
/// (`kept`: the records read from the journal and the buffer files).
fn lost_lines(plan: &RunPlan, journal_dir: &Path, pid: u32, kept: u64) -> Vec<String> {
    let in_process: Vec<&str> = plan
        .stages
        .iter()
        .filter(|s| s.placement == Placement::Application)
        .map(|s| s.name.as_str())
        .collect();
    let mut lines = vec![if in_process.is_empty() {
        format!("pid {pid} did not reach its end of run: the in-process stages' tables are missing")
    } else {
        format!(
            "pid {pid} did not reach its end of run: the in-process stages' tables are missing \
             ({}); a stage with placement = \"rocwasm\" in the chain file runs in the launcher \
             on the record journal and keeps its tables when the application crashes \
             (docs/ARCHITECTURE.md)",
            in_process.join(", ")
        )
    }];
    if let Some(state) = SdkState::read(journal_dir, pid) {
        lines.push(state.loss_sentence(kept));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_formats::{StatRow, StatsDomain};

    /// The host's statistics over one kernel, as the sinks leave them.
    fn outputs() -> OutputSummary {
        let mut outputs = OutputSummary::default();
        outputs.stats.tables.insert(
            StatsDomain::Kernel,
            vec![StatRow {
                name: "vector_add".into(),
                calls: 2,
                total_ns: 8,
                average_ns: 4.0,
                percentage: 100.0,
                min_ns: 4,
                max_ns: 4,
                stddev: 0.0,
            }],
        );
        outputs
    }

    fn host_tables(text: &str) -> usize {
        text.matches("KERNEL_DISPATCH (1 distinct)").count()
    }

    #[test]
    fn stats_print_one_table_per_domain_and_a_trace_flag_alone_none() {
        let staged = ProcessEnd {
            plugin_text: "[kernel-stats] Kernel dispatch statistics (1 row(s))\n".into(),
            no_plugin_tables: false,
            ..ProcessEnd::default()
        };
        let bare = ProcessEnd {
            no_plugin_tables: true,
            ..ProcessEnd::default()
        };
        // --stats: the stage's table, not the host's copy of it.
        let text = summary_text(&staged, &outputs(), &[], true, None);
        assert_eq!(text.matches("Kernel dispatch statistics").count(), 1);
        assert_eq!(host_tables(&text), 0, "{text}");
        // --stats whose stages printed nothing (failed, or died with the
        // process): the host's tables stand in, once.
        assert_eq!(
            host_tables(&summary_text(&bare, &outputs(), &[], true, None)),
            1
        );
        // --kernel-trace alone (no --stats, no stage tables): no summary
        // table, as rocprofv3 without -S/-D.
        let text = summary_text(&bare, &outputs(), &[], false, None);
        assert_eq!(host_tables(&text), 0, "{text}");
        assert!(!text.contains("Name"), "{text}");
    }

    #[test]
    fn every_file_written_is_listed_once_the_stages_with_their_names() {
        let mut outputs = outputs();
        outputs.files = vec!["/o/kernel_trace.csv".into()];
        let stage_files = vec![
            (PathBuf::from("/o/kernel_stats.csv"), "kernel-stats".into()),
            (PathBuf::from("/o/report.html"), "report".into()),
            (PathBuf::from("/o/bw/by_agents.csv"), "bw".into()),
        ];
        let text = summary_text(&ProcessEnd::default(), &outputs, &stage_files, false, None);
        let wrote: Vec<&str> = text.lines().filter(|l| l.contains(" wrote ")).collect();
        assert_eq!(
            wrote,
            [
                "rocwasm: wrote /o/kernel_trace.csv",
                "rocwasm: wrote /o/kernel_stats.csv (stage `kernel-stats`)",
                "rocwasm: wrote /o/report.html (stage `report`)",
                "rocwasm: wrote /o/bw/by_agents.csv (stage `bw`)",
            ],
            "{text}"
        );
    }
}
