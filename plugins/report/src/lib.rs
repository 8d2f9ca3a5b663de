//! `report`: one self-contained `report.html` that people look at.
//!
//! The page (inline CSS and SVG; no scripts, nothing fetched when it is
//! viewed) has five sections:
//!
//! - `meta`: what the plugin knows of the run — the program (from its
//!   kernels' code objects), its arguments, the runtime (simulated AMD
//!   runtime, AMD ROCm runtime or a replayed recording) and its version,
//!   the back end, the GPUs, host and process, each fact the plugin
//!   interface does not deliver said to be so ([`run`]); then rocwasm's
//!   version, the stage name, records per table, batches, records the host
//!   dropped, the time span;
//! - `timeline`: kernel dispatches per (agent, queue) and memory copies per
//!   stream, one SVG rect each, time on x from the first kernel or copy to
//!   the last (labelled as time since the run's first record), each at
//!   least 3 px wide so the shortest stay visible. Only the `max_intervals`
//!   longest are kept (default 5000), and the page says how many of how
//!   many it draws;
//! - `top-kernels` and `top-apis`: the `top` (default 15) kernels and API
//!   functions by total time, as bar charts;
//! - `bandwidth`: copies, bytes, time and GB/s per copy direction.
//!
//! Memory is bounded: per-kernel, per-function and per-direction sums are
//! aggregated as batches arrive, and the timeline holds at most
//! `2 × max_intervals` intervals at any time (see [`model`]).
//!
//! Records: kernel dispatches, memory copies and API calls — whichever the
//! stage's `domains` deliver. With no `domains`, `init` traces kernel
//! dispatches, memory copies and the HIP APIs itself.
//!
//! Config keys: `file` (default `report.html`), `max_intervals` (default
//! 5000), `top` (default 15). The stage needs `output = true`.

pub mod html;
pub mod model;
pub mod run;

use rocwasm_plugin_sdk::prelude::*;
use rocwasm_plugin_sdk::{symbols, types};

use html::{Bar, Direction, Page};
use model::Model;

struct Report {
    info: Option<ToolInfo>,
    file: String,
    top: usize,
    model: Model,
}

impl Default for Report {
    fn default() -> Self {
        Report {
            info: None,
            file: "report.html".to_string(),
            top: 15,
            model: Model::new(5000),
        }
    }
}

/// Most kernel ids whose code objects are looked up for the program's name.
const CODE_OBJECT_LOOKUPS: usize = 256;

/// The URIs of the code objects of `kernel_ids`' kernels, each code object
/// once (two host calls per kernel id, at most [`CODE_OBJECT_LOOKUPS`]).
fn code_object_uris(kernel_ids: &[u64]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut uris = Vec::new();
    for &id in kernel_ids.iter().take(CODE_OBJECT_LOOKUPS) {
        let Some(symbol) = symbols::lookup_kernel_symbol(id) else {
            continue;
        };
        if !seen.insert(symbol.code_object_id) {
            continue;
        }
        if let Some(co) = symbols::lookup_code_object(symbol.code_object_id) {
            uris.push(co.uri);
        }
    }
    uris
}

/// The host's agents, as [`run`] reads them.
/// `p` with the command line and back end the host knows of it.
fn described(mut p: run::Process) -> run::Process {
    let info = types::ProcessInfo {
        hostname: p.hostname.clone(),
        pid: p.pid,
        rank: p.rank,
        job: p.job.clone(),
    };
    if let Some(d) = rocwasm_plugin_sdk::run::describe(&info) {
        p.command = d.command;
        p.back_end = d.back_end;
    }
    p
}

fn agents() -> Vec<run::Agent> {
    symbols::agents()
        .into_iter()
        .map(|a| run::Agent {
            gpu: matches!(a.agent_type, types::AgentType::Gpu),
            name: a.name,
            product: a.product_name,
        })
        .collect()
}

/// The `n` largest sums, labelled.
fn top_bars<K: Copy>(
    sums: impl Iterator<Item = (K, model::Sum)>,
    n: usize,
    mut label: impl FnMut(K) -> String,
) -> Vec<Bar> {
    let mut all: Vec<(K, model::Sum)> = sums.collect();
    all.sort_by(|a, b| {
        b.1.total_ns
            .cmp(&a.1.total_ns)
            .then(b.1.calls.cmp(&a.1.calls))
    });
    all.truncate(n);
    all.into_iter()
        .map(|(k, s)| Bar {
            label: label(k),
            calls: s.calls,
            total_ns: s.total_ns,
        })
        .collect()
}

fn direction_name(op: u32) -> String {
    copy::short_name(op)
        .map(str::to_string)
        .unwrap_or_else(|| format!("DIRECTION_{op}"))
}

impl Report {
    fn page(&mut self) -> Page {
        let m = &mut self.model;
        // Kernel ids in order: the code objects' lookups and the names below.
        let mut ids: Vec<u64> = m.kernels.keys().copied().collect();
        ids.sort_unstable();
        let facts = run::Facts {
            replay: self.info.as_ref().is_some_and(|i| i.replay),
            runtime_version: self.info.as_ref().map_or(0, |i| i.runtime_version),
            runtimes: m.runtimes.clone(),
            agents: agents(),
            code_object_uris: code_object_uris(&ids),
            processes: m.processes.iter().cloned().map(described).collect(),
            processes_capped: m.processes_capped,
        };
        let mut meta = run::rows(&facts);
        if let Some(info) = &self.info {
            meta.push(("rocwasm".to_string(), run::version(info.version.into())));
            meta.push(("Stage".to_string(), info.name.clone()));
        }
        meta.push(("Records".to_string(), m.record_count().to_string()));
        for (table, n) in m.records.iter().filter(|(_, n)| *n > 0) {
            meta.push((format!("· {table}"), n.to_string()));
        }
        meta.push(("Batches".to_string(), m.batches.to_string()));
        meta.push((
            "Records dropped by the host".to_string(),
            m.dropped.to_string(),
        ));
        meta.push(("Kernel ids".to_string(), m.kernels.len().to_string()));
        if let Some((a, b)) = m.span {
            meta.push(("Time span".to_string(), html::human_ns(b - a)));
            meta.push(("First timestamp (ns)".to_string(), a.to_string()));
            meta.push(("Last timestamp (ns)".to_string(), b.to_string()));
        }

        // Kernel names: the top kernels' and the drawn intervals' only.
        let mut names = KernelNames::new();
        names.resolve(&ids);
        // Rows per kernel *name*, as kernel-stats: the same kernel on two
        // agents (or reloaded) has two ids.
        let mut by_name: std::collections::HashMap<&str, model::Sum> = Default::default();
        for (id, sum) in &m.kernels {
            let e = by_name.entry(names.name(*id)).or_default();
            e.calls += sum.calls;
            e.total_ns = e.total_ns.saturating_add(sum.total_ns);
        }
        let kernels = top_bars(by_name.into_iter(), self.top, str::to_string);
        let mut ops = OperationNames::new();
        let apis = top_bars(
            m.apis.iter().map(|(k, s)| (*k, *s)),
            self.top,
            |(kind, op)| {
                let name = ops.buffer_operation(kind, op).to_string();
                match api_domain(kind) {
                    Some("hip") | None => name,
                    Some(domain) => format!("{name} ({domain})"),
                }
            },
        );
        let mut directions: Vec<Direction> = m
            .copies
            .iter()
            .map(|(op, c)| Direction {
                name: direction_name(*op),
                copies: c.time.calls,
                bytes: c.bytes,
                total_ns: c.time.total_ns,
            })
            .collect();
        directions.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.name.cmp(&b.name)));

        let mut agents = std::collections::HashMap::new();
        let seen = m.timeline_seen;
        let limit = m.limit;
        let span = m.span;
        let intervals = m
            .timeline()
            .iter()
            .map(|i| {
                html::draw(
                    i,
                    &mut |a| {
                        agents
                            .entry(a)
                            .or_insert_with(|| symbols::agent_label(a))
                            .clone()
                    },
                    &mut |id| names.name(id).to_string(),
                    &mut direction_name,
                )
            })
            .collect();
        Page {
            meta,
            span,
            intervals,
            seen,
            limit,
            kernels,
            apis,
            directions,
        }
    }
}

impl AnalysisPlugin for Report {
    fn configure(&mut self, info: &ToolInfo) -> bool {
        self.info = Some(info.clone());
        true
    }

    fn init(&mut self) -> Result<(), String> {
        self.file = config::get_or("file", "report.html".to_string())?;
        if self.file.is_empty() {
            return Err("report: config key `file` is empty; name the page to write".to_string());
        }
        self.top = config::get_or("top", 15usize)?;
        self.model = Model::new(config::get_or("max_intervals", 5000usize)?);
        // Only what the page reads: the host packs and copies no other column.
        for (table, columns) in model::COLUMNS {
            select_columns(table, columns).context("delivery.select-columns")?;
        }
        if self.info.as_ref().is_some_and(|i| i.domains.is_empty()) {
            services::trace_buffers(&[
                buffer::KERNEL_DISPATCH,
                buffer::MEMORY_COPY,
                buffer::HIP_RUNTIME_API,
                buffer::HIP_COMPILER_API,
            ])?;
        }
        Ok(())
    }

    fn deliver_batch(&mut self, info: &DeliveryInfo, batch: &Batch) {
        self.model.add(batch, info.drop_count);
        self.model.saw_process(&info.process);
    }

    fn fini(&mut self) -> Vec<SummaryTable> {
        let page = self.page();
        let doc = html::render(&page);
        match output::try_write(&self.file, &doc) {
            Ok(()) => info!(
                "report: wrote {} ({} bytes, {} of {} intervals drawn)",
                self.file,
                doc.len(),
                page.intervals.len(),
                page.seen
            ),
            // The page is all this plugin makes: a stage without a grant
            // is a chain that forgot `output = true`, worth a warning.
            Err(OutputError::NotGranted) => warn!(
                "report: the stage has no output directory, so {} is not written; \
                 give it `output = true` in the chain file",
                self.file
            ),
            Err(e) => warn!("report: cannot write {}: {e}", self.file),
        }
        Vec::new()
    }
}

rocwasm_plugin_sdk::export_analysis!(Report);
