//! [`Plugin`]: one stage's instance, its store, and its failure policy.
//!
//! Each call sets the store's epoch deadline, runs, and on an error works out
//! the cause (deadline, memory cap, stack, other trap), the export that was
//! running and the guest's Wasm backtrace, drops the poisoned instance with
//! its store, files one [`FailureReport`] and applies the stage's
//! [`FailurePolicy`]. A fresh instance comes from the pre-linked
//! `InstancePre` and a new store; it is `configure`d and `init`ed again (its
//! profiler setup replayed, see `crate::host::profiler`). Its in-memory state
//! is gone: a restarted analysis counts from zero. Its report counts the
//! records lost to the failure (`records_missed`), and its `fini` tables say
//! how many of the records offered to the stage the final instance never saw.
//!
//! A restart waits out its backoff. Records that arrive meanwhile from the
//! running application are missed; a batch handed over by a caller that can
//! wait ([`Pace::Caller`]: `Chain::deliver`, i.e. replay) waits instead, so
//! a replay loses only the batch that failed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::TypedFunc;
use wasmtime::{Store, Trap, WasmBacktrace};
use wasmtime_wasi::WasiCtxBuilder;

use crate::bindings::analysis::AnalysisPlugin;
use crate::bindings::transform::TransformPlugin;
use crate::bindings::types as wit;
use crate::convert;
use crate::engine::{CompiledPlugin, PluginEngine, Pre};
use crate::env::{HostEnv, VERSION};
use crate::failure::{
    Aborted, FailureAction, FailureCause, FailureLog, FailurePolicy, FailureReport,
};
use crate::host::{OutputHost, ProfilerHost, SetupMode, StageLink};
use crate::legacy::LegacyInstance;
use crate::sandbox::{
    deny_all_wasi_logged, MemoryCapExceeded, COPY_CAP_ERROR, MAX_CALL_COPY_BYTES,
};
use crate::spec::StageSpec;
use crate::state::PluginState;
use crate::summary_caps;
use crate::world::World;

/// Where a plugin is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Health {
    /// Has an instance and takes calls.
    Live,
    /// Failed; a fresh instance is made at the first call after `until`
    /// (at once for `skip`, after the backoff for `restart`).
    Waiting { until: Instant },
    /// Failed for good (or its `init` failed): never called again.
    Disabled,
    /// Its `configure` returned false: never initialised, never called.
    Declined,
    /// `fini` has run.
    Finished,
}

enum Instance {
    Analysis(Analysis),
    Transform(TransformPlugin),
    /// Either world, built against an earlier package version.
    Legacy(LegacyInstance),
}

/// One plugin instance in its sandbox, with its failure handling.
pub(crate) struct Plugin {
    name: Arc<str>,
    spec: StageSpec,
    compiled: Arc<CompiledPlugin>,
    runtime: Arc<PluginEngine>,
    env: HostEnv,
    store: Store<PluginState>,
    instance: Option<Instance>,
    health: Health,
    restarts: u32,
    /// The report that records missed while disabled/waiting are added to.
    open_report: Option<usize>,
    failures: FailureLog,
    tool_info: Option<wit::ToolInfo>,
    /// Records offered to the stage over the run (deliveries, transforms,
    /// callbacks), whether or not the plugin could take them.
    offered: u64,
    /// Records the current instance took without failing: what its
    /// summary covers (a fresh instance starts from zero).
    taken: u64,
}

/// The WIT export names, as failure reports name them.
mod export {
    pub const CONFIGURE: &str = "configure";
    pub const INIT: &str = "init";
    pub const FINI: &str = "fini";
    pub const DELIVER_BATCH: &str = "deliver-batch";
    pub const TRANSFORM_BATCH: &str = "transform-batch";
    pub const ON_CALLBACK: &str = "on-callback";
    pub const ON_EXTERNAL_CORRELATION_REQUEST: &str = "on-external-correlation-request";
}

/// A failed call: why, in which export, and where in the guest.
#[derive(Debug)]
struct Failed {
    cause: FailureCause,
    /// `None` while making an instance (no export was running).
    export: Option<&'static str>,
    /// The guest's frames, innermost first (see [`FailureReport::backtrace`]).
    backtrace: Vec<String>,
}

impl Failed {
    /// A failure the host found in what an export returned (no backtrace).
    fn returned(cause: FailureCause, export: &'static str) -> Failed {
        Failed {
            cause,
            export: Some(export),
            backtrace: Vec::new(),
        }
    }
}

type CallResult<T> = Result<T, Failed>;

/// Who waits when a batch arrives while the plugin waits out its restart
/// backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pace {
    /// The records come from the application as it runs (traced buffers,
    /// callbacks): nothing can wait, the records are missed (and counted).
    Live,
    /// The caller hands the batch over and waits for the chain
    /// (`Chain::deliver`: a replay, or a host that buffers elsewhere): the
    /// call waits out the backoff, then the fresh instance takes the batch.
    Caller,
}

impl Plugin {
    /// Instantiates `compiled` for `spec` (no plugin code runs but the
    /// component's start functions).
    pub(crate) fn new(
        runtime: Arc<PluginEngine>,
        compiled: Arc<CompiledPlugin>,
        spec: StageSpec,
        env: HostEnv,
        failures: FailureLog,
    ) -> anyhow::Result<Plugin> {
        let name: Arc<str> = spec.name.as_str().into();
        let profiler = ProfilerHost::new(env.profiler.clone(), spec.services);
        let output = OutputHost::new(
            name.clone(),
            spec.output_dir.clone(),
            spec.limits.output_bytes,
            env.output_claim.clone(),
        );
        let store = new_store(&runtime, &compiled, &spec, &env, profiler, output)?;
        let mut p = Plugin {
            name,
            spec,
            compiled,
            runtime,
            env,
            store,
            instance: None,
            health: Health::Live,
            restarts: 0,
            open_report: None,
            failures,
            tool_info: None,
            offered: 0,
            taken: 0,
        };
        p.instance = Some(
            p.instantiate()
                .map_err(|f| anyhow::anyhow!("instantiating `{}`: {}", p.name, f.cause))?,
        );
        Ok(p)
    }

    /// Connects the plugin's profiler imports to the stage that holds it
    /// (see [`StageLink`]); the link carries over into restarted instances.
    pub(crate) fn link_stage(&mut self, link: StageLink) {
        self.store.data_mut().profiler.link_stage(link);
    }

    fn instantiate(&mut self) -> CallResult<Instance> {
        self.store
            .set_epoch_deadline(self.runtime.ticks(self.spec.limits.deadline));
        let r = match &self.compiled.pre {
            Pre::Analysis(pre) => pre
                .instantiate(&mut self.store)
                .and_then(|a| Analysis::new(&self.store, a))
                .map(Instance::Analysis),
            Pre::Transform(pre) => pre.instantiate(&mut self.store).map(Instance::Transform),
            Pre::Legacy(pre) => pre.instantiate(&mut self.store).map(Instance::Legacy),
        };
        r.map_err(|e| classify(e, self.spec.limits.deadline, None))
    }

    /// Runs one call of `export` into the instance under `budget`.
    fn call<R>(
        &mut self,
        export: &'static str,
        budget: Duration,
        f: impl FnOnce(&mut Store<PluginState>, &Instance) -> wasmtime::Result<R>,
    ) -> CallResult<R> {
        let Some(inst) = self.instance.as_ref() else {
            return Err(Failed::returned(
                FailureCause::Trap("no live instance".into()),
                export,
            ));
        };
        self.store.set_epoch_deadline(self.runtime.ticks(budget));
        let r = f(&mut self.store, inst).map_err(|e| classify(e, budget, Some(export)));
        if let Some(cap) = self.store.data_mut().output.take_cap_hit() {
            self.refused(FailureCause::Oversized(cap), export);
        }
        if let Some(why) = self.store.data_mut().profiler.take_refusal() {
            self.refused(FailureCause::NotGranted(why), export);
        }
        r
    }

    /// Reports that the host refused what went over one of its caps; the
    /// plugin runs on (its policy does not apply).
    fn refused(&mut self, cause: FailureCause, export: &'static str) {
        self.failures.push(FailureReport {
            plugin: self.name.to_string(),
            export: Some(export),
            cause,
            action: FailureAction::Refused,
            policy: self.spec.failure,
            records_missed: 0,
            backtrace: Vec::new(),
        });
    }

    // ------------------------------------------------------------------
    // Life cycle
    // ------------------------------------------------------------------

    /// `configure`: false (or a failure) means the plugin is out of the run.
    pub(crate) fn configure(&mut self, info: wit::ToolInfo) -> Result<bool, Aborted> {
        self.tool_info = Some(info.clone());
        let r = self.call(export::CONFIGURE, self.spec.limits.deadline, |s, i| {
            lifecycle(i).call_configure(s, &info)
        });
        match r {
            Ok(true) => Ok(true),
            Ok(false) => {
                self.health = Health::Declined;
                self.instance = None;
                Ok(false)
            }
            Err(failed) => self.fail_for_good(failed).map(|_| false),
        }
    }

    /// `init`, with profiler configuration open for this plugin.
    pub(crate) fn init(&mut self) -> Result<(), Aborted> {
        self.store.data_mut().profiler.mode = SetupMode::Open;
        let r = self.call(export::INIT, self.spec.limits.deadline, |s, i| {
            lifecycle(i).call_init(s)
        });
        self.store.data_mut().profiler.mode = SetupMode::Locked;
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(msg)) => self.fail_for_good(Failed::returned(
                FailureCause::InitFailed(msg),
                export::INIT,
            )),
            Err(failed) => self.fail_for_good(failed),
        }
    }

    /// `fini`, exactly once, if the plugin has a live instance. When the
    /// instance's summary covers fewer records than the stage was offered
    /// (failures lost some, or a fresh instance started from zero), each
    /// table's title says how many it misses.
    /// What the current instance has used so far.
    pub(crate) fn metrics(&self) -> StageMetrics {
        StageMetrics {
            instructions: self
                .runtime
                .counts_instructions()
                .then(|| self.store.get_fuel().ok().map(|left| u64::MAX - left))
                .flatten(),
            peak_memory: self.store.data().limiter.peak() as u64,
        }
    }

    pub(crate) fn fini(&mut self) -> Result<Vec<wit::SummaryTable>, Aborted> {
        if !self.ready(Pace::Live) {
            self.close_report();
            return Ok(Vec::new());
        }
        let r = self.call(export::FINI, self.spec.limits.deadline, |s, i| {
            lifecycle(i).call_fini(s)
        });
        self.health = Health::Finished;
        self.instance = None;
        match r {
            Ok(mut tables) => {
                let cuts = summary_caps::cap(&mut tables);
                if !cuts.is_empty() {
                    let cause = FailureCause::Oversized(format!(
                        "summary {} (caps: {} tables, {} columns, {} rows, {} bytes a text, {} bytes in all)",
                        cuts.join("; "),
                        summary_caps::MAX_TABLES,
                        summary_caps::MAX_COLUMNS,
                        summary_caps::MAX_ROWS,
                        summary_caps::MAX_TEXT_BYTES,
                        summary_caps::MAX_TOTAL_BYTES,
                    ));
                    self.refused(cause, export::FINI);
                }
                let missing = self.offered.saturating_sub(self.taken);
                if missing > 0 {
                    for t in &mut tables {
                        t.title = incomplete_title(&t.title, missing, self.offered);
                    }
                }
                Ok(tables)
            }
            Err(failed) => {
                self.fail(failed, 0)?;
                self.health = Health::Finished;
                Ok(Vec::new())
            }
        }
    }

    // ------------------------------------------------------------------
    // Deliveries
    // ------------------------------------------------------------------

    /// Delivers a batch of the plugin's own buffers to an analysis
    /// (transforms ignore it).
    pub(crate) fn deliver(
        &mut self,
        info: &wit::DeliveryInfo,
        batch: &wit::Batch,
    ) -> Result<(), Aborted> {
        let n = convert::wit_len(batch) as u64;
        self.deliver_counted(info, batch, n, Pace::Live)
    }

    /// As [`Self::deliver`]; `records` is the batch's size (what is missed if
    /// the plugin cannot take it), `pace` who waits out a restart backoff.
    pub(crate) fn deliver_counted(
        &mut self,
        info: &wit::DeliveryInfo,
        batch: &wit::Batch,
        records: u64,
        pace: Pace,
    ) -> Result<(), Aborted> {
        self.offered += records;
        if !self.ready(pace) {
            self.miss(records);
            return Ok(());
        }
        self.store.data_mut().delivery.lock();
        let r = self.call(
            export::DELIVER_BATCH,
            self.spec.limits.deadline,
            |s, i| match i {
                Instance::Analysis(a) => a.deliver(s, info, batch),
                Instance::Legacy(l) if l.world() == World::Analysis => {
                    let view = convert::BatchView::project(batch, &s.data().delivery.projection);
                    l.deliver(s, info, view)
                }
                Instance::Transform(_) | Instance::Legacy(_) => Ok(()),
            },
        );
        match r {
            Ok(()) => {
                self.taken += records;
                Ok(())
            }
            Err(failed) => self.fail(failed, records),
        }
    }

    /// Runs a transform. `None` when it could not (the caller passes the
    /// input on unchanged).
    pub(crate) fn transform(
        &mut self,
        info: &wit::DeliveryInfo,
        batch: &wit::Batch,
        pace: Pace,
    ) -> Result<Option<wit::Batch>, Aborted> {
        let n = convert::wit_len(batch) as u64;
        self.offered += n;
        if !self.ready(pace) {
            self.miss(n);
            return Ok(None);
        }
        let r = self.call(
            export::TRANSFORM_BATCH,
            self.spec.limits.deadline,
            |s, i| match i {
                Instance::Transform(t) => t
                    .rocwasm_plugin_transform()
                    .call_transform_batch(s, info, batch)
                    .map(Some),
                Instance::Legacy(l) if l.world() == World::Transform => {
                    l.transform(s, info, batch).map(Some)
                }
                Instance::Analysis(_) | Instance::Legacy(_) => Ok(None),
            },
        );
        match r {
            Ok(Some(out)) if !convert::wit_consistent(&out) => {
                let cause = FailureCause::MalformedReply("columns of unequal length".into());
                self.fail(Failed::returned(cause, export::TRANSFORM_BATCH), n)?;
                Ok(None)
            }
            Ok(out) => {
                self.taken += n;
                Ok(out)
            }
            Err(failed) => {
                self.fail(failed, n)?;
                Ok(None)
            }
        }
    }

    /// A callback-tracing record; returns the new user data.
    pub(crate) fn on_callback(
        &mut self,
        record: &wit::CallbackRecord,
        user_data: u64,
    ) -> Result<u64, Aborted> {
        self.offered += 1;
        if !self.ready(Pace::Live) {
            self.miss(1);
            return Ok(user_data);
        }
        let budget = self.spec.limits.callback_deadline;
        let r = self.call(export::ON_CALLBACK, budget, |s, i| match i {
            Instance::Analysis(a) => a
                .plugin
                .rocwasm_plugin_analysis()
                .call_on_callback(s, record, user_data),
            Instance::Legacy(l) => l.on_callback(s, record, user_data).unwrap_or(Ok(user_data)),
            Instance::Transform(_) => Ok(user_data),
        });
        match r {
            Ok(v) => {
                self.taken += 1;
                Ok(v)
            }
            Err(failed) => self.fail(failed, 1).map(|_| user_data),
        }
    }

    /// An external-correlation request: `Some(v)` sets the id, `None` keeps the pushed one.
    pub(crate) fn on_external_correlation_request(
        &mut self,
        request: wit::ExternalCorrelationRequest,
    ) -> Result<Option<u64>, Aborted> {
        if !self.ready(Pace::Live) {
            return Ok(None);
        }
        let budget = self.spec.limits.callback_deadline;
        let r = self.call(
            export::ON_EXTERNAL_CORRELATION_REQUEST,
            budget,
            |s, i| match i {
                Instance::Analysis(a) => a
                    .plugin
                    .rocwasm_plugin_analysis()
                    .call_on_external_correlation_request(s, request),
                Instance::Legacy(l) => l.on_request(s, &request).unwrap_or(Ok(None)),
                Instance::Transform(_) => Ok(None),
            },
        );
        match r {
            Ok(v) => Ok(v),
            Err(failed) => self.fail(failed, 0).map(|_| None),
        }
    }

    // ------------------------------------------------------------------
    // Failure handling
    // ------------------------------------------------------------------

    /// True when the plugin can take a call now (reviving it if its wait
    /// is over; at [`Pace::Caller`], after waiting it out).
    fn ready(&mut self, pace: Pace) -> bool {
        match self.health {
            Health::Live => self.instance.is_some(),
            Health::Waiting { until } => {
                let now = Instant::now();
                if now < until {
                    if pace == Pace::Live {
                        return false;
                    }
                    std::thread::sleep(until - now);
                }
                self.revive()
            }
            _ => false,
        }
    }

    fn miss(&mut self, records: u64) {
        if let Some(i) = self.open_report {
            self.failures.add_missed(i, records);
        }
    }

    fn close_report(&mut self) {
        self.open_report = None;
    }

    /// Applies the policy after a failed call that lost `records`.
    fn fail(&mut self, failed: Failed, records: u64) -> Result<(), Aborted> {
        self.instance = None;
        let action = match self.spec.failure {
            FailurePolicy::Skip => FailureAction::Skipped,
            FailurePolicy::Disable => FailureAction::Disabled,
            FailurePolicy::Restart { max, .. } if self.restarts < max => FailureAction::Restarted {
                attempt: self.restarts + 1,
            },
            FailurePolicy::Restart { .. } => FailureAction::Disabled,
            FailurePolicy::Abort => FailureAction::Aborted,
        };
        self.record(failed, action, records)
    }

    /// A life-cycle failure: the plugin never started, so it is disabled
    /// (or the run aborted), never restarted.
    fn fail_for_good(&mut self, failed: Failed) -> Result<(), Aborted> {
        self.instance = None;
        let action = if self.spec.failure == FailurePolicy::Abort {
            FailureAction::Aborted
        } else {
            FailureAction::Disabled
        };
        self.record(failed, action, 0)
    }

    fn record(
        &mut self,
        failed: Failed,
        action: FailureAction,
        records: u64,
    ) -> Result<(), Aborted> {
        let report = FailureReport {
            plugin: self.name.to_string(),
            export: failed.export,
            cause: failed.cause,
            action,
            policy: self.spec.failure,
            records_missed: records,
            backtrace: failed.backtrace,
        };
        let index = self.failures.push(report.clone());
        match action {
            FailureAction::Skipped => {
                self.open_report = Some(index);
                self.health = Health::Waiting {
                    until: Instant::now(),
                };
            }
            FailureAction::Restarted { attempt } => {
                self.restarts = attempt;
                let backoff = match self.spec.failure {
                    FailurePolicy::Restart { backoff, .. } => backoff,
                    _ => Duration::ZERO,
                };
                let delay = backoff.saturating_mul(1 << (attempt - 1).min(16));
                self.open_report = Some(index);
                self.health = Health::Waiting {
                    until: Instant::now() + delay,
                };
            }
            FailureAction::Disabled => {
                self.open_report = Some(index);
                self.health = Health::Disabled;
            }
            FailureAction::Aborted => {
                self.open_report = Some(index);
                self.health = Health::Disabled;
                return Err(Aborted(Box::new(report)));
            }
            // Not from a failed call (see `Self::refused`).
            FailureAction::Refused => {}
        }
        Ok(())
    }

    /// A fresh store and instance, configured and initialised again. On
    /// failure the plugin is disabled (a plugin that cannot start again is
    /// not retried in a loop).
    fn revive(&mut self) -> bool {
        let profiler = self.store.data().profiler.for_restart();
        let output = self.store.data_mut().output.take();
        let store = new_store(
            &self.runtime,
            &self.compiled,
            &self.spec,
            &self.env,
            profiler,
            output,
        );
        let result = store
            .map_err(|e| Failed {
                cause: FailureCause::Instantiate(format!("{e:#}")),
                export: None,
                backtrace: Vec::new(),
            })
            .and_then(|store| {
                self.store = store;
                self.taken = 0;
                let inst = self.instantiate()?;
                self.instance = Some(inst);
                let info = self
                    .tool_info
                    .clone()
                    .unwrap_or_else(|| default_tool_info(&self.name));
                let ok = self.call(export::CONFIGURE, self.spec.limits.deadline, |s, i| {
                    lifecycle(i).call_configure(s, &info)
                })?;
                if !ok {
                    let cause = FailureCause::InitFailed("configure declined on restart".into());
                    return Err(Failed::returned(cause, export::CONFIGURE));
                }
                self.store.data_mut().profiler.mode = SetupMode::Replay { next: 0 };
                let r = self.call(export::INIT, self.spec.limits.deadline, |s, i| {
                    lifecycle(i).call_init(s)
                });
                self.store.data_mut().profiler.mode = SetupMode::Locked;
                r?.map_err(|e| Failed::returned(FailureCause::InitFailed(e), export::INIT))
            });
        match result {
            Ok(()) => {
                self.health = Health::Live;
                self.close_report();
                true
            }
            Err(failed) => {
                let _ = self.fail_for_good(failed);
                false
            }
        }
    }
}

/// `deliver-batch` as this host calls it: with a [`convert::BatchView`] of
/// the columns the plugin selected rather than the generated
/// `call_deliver_batch`'s whole `&Batch` (unselected columns go across as
/// empty lists and nothing is cloned). `typed` accepts the view because it
/// compares the two types structurally.
///
/// The `'static` lifetimes only name the type: wasmtime's `TypedFunc` is
/// covariant in its parameters (it copies them into the guest during the
/// call and keeps nothing), so it takes arguments of any shorter lifetime.
type DeliverBatch = TypedFunc<(&'static wit::DeliveryInfo, convert::BatchView<'static>), ()>;

/// An analysis instance with its `deliver-batch`, type-checked once here
/// rather than on every delivery (the check walks the batch's 64 columns:
/// 0.26 µs of a 1-record delivery's 4.8, measured by the deliver bench).
struct Analysis {
    plugin: AnalysisPlugin,
    deliver: DeliverBatch,
}

impl Analysis {
    fn new(store: &Store<PluginState>, plugin: AnalysisPlugin) -> wasmtime::Result<Analysis> {
        let func = *plugin.rocwasm_plugin_analysis().func_deliver_batch().func();
        let deliver = func.typed(store)?;
        Ok(Analysis { plugin, deliver })
    }

    /// Calls `deliver-batch` with the columns the plugin selected.
    fn deliver(
        &self,
        store: &mut Store<PluginState>,
        info: &wit::DeliveryInfo,
        batch: &wit::Batch,
    ) -> wasmtime::Result<()> {
        let view = convert::BatchView::project(batch, &store.data().delivery.projection);
        self.deliver.call(store, (info, view))
    }
}

/// The life-cycle exports of either world (two generated types, one shape).
struct Lifecycle<'a>(&'a Instance);

fn lifecycle(i: &Instance) -> Lifecycle<'_> {
    Lifecycle(i)
}

impl Lifecycle<'_> {
    fn call_configure(
        &self,
        s: &mut Store<PluginState>,
        info: &wit::ToolInfo,
    ) -> wasmtime::Result<bool> {
        match self.0 {
            Instance::Analysis(a) => a.plugin.rocwasm_plugin_lifecycle().call_configure(s, info),
            Instance::Transform(t) => t.rocwasm_plugin_lifecycle().call_configure(s, info),
            Instance::Legacy(l) => l.call_configure(s, info),
        }
    }

    fn call_init(&self, s: &mut Store<PluginState>) -> wasmtime::Result<Result<(), String>> {
        match self.0 {
            Instance::Analysis(a) => a.plugin.rocwasm_plugin_lifecycle().call_init(s),
            Instance::Transform(t) => t.rocwasm_plugin_lifecycle().call_init(s),
            Instance::Legacy(l) => l.call_init(s),
        }
    }

    fn call_fini(&self, s: &mut Store<PluginState>) -> wasmtime::Result<Vec<wit::SummaryTable>> {
        match self.0 {
            Instance::Analysis(a) => a.plugin.rocwasm_plugin_lifecycle().call_fini(s),
            Instance::Transform(t) => t.rocwasm_plugin_lifecycle().call_fini(s),
            Instance::Legacy(l) => l.call_fini(s),
        }
    }
}

pub(crate) fn default_tool_info(name: &str) -> wit::ToolInfo {
    wit::ToolInfo {
        version: VERSION,
        runtime_version: 0,
        priority: 0,
        name: name.into(),
        replay: false,
        domains: Vec::new(),
        chain_context: None,
    }
}

/// A store for one instance of `compiled` as stage `spec`: its data, the
/// memory cap as its limiter, and (only if the component imports WASI) the
/// deny-all WASI context.
fn new_store(
    runtime: &PluginEngine,
    compiled: &CompiledPlugin,
    spec: &StageSpec,
    env: &HostEnv,
    profiler: ProfilerHost,
    output: OutputHost,
) -> anyhow::Result<Store<PluginState>> {
    let wasi = if compiled.surface.imports_wasi() {
        deny_all_wasi_logged(&spec.name, spec.limits.log_per_second)?
    } else {
        WasiCtxBuilder::new().build()
    };
    let state = PluginState::new(spec, env, profiler, output, wasi);
    let mut store = Store::new(runtime.engine(), state);
    store.limiter(|s| &mut s.limiter);
    store.set_hostcall_fuel(MAX_CALL_COPY_BYTES);
    if runtime.counts_instructions() {
        store.set_fuel(u64::MAX)?;
    }
    Ok(store)
}

/// A summary table's title when the instance that wrote it saw only part of
/// what the stage was offered.
fn incomplete_title(title: &str, missing: u64, offered: u64) -> String {
    format!("{title} (incomplete: {missing} of {offered} record(s) missed after plugin failures)")
}

/// Works out why a call of `export` failed, with the guest's backtrace.
fn classify(e: wasmtime::Error, budget: Duration, export: Option<&'static str>) -> Failed {
    let trace = e.downcast_ref::<WasmBacktrace>();
    let backtrace = trace.map(frames).unwrap_or_default();
    let cause = if let Some(m) = e.downcast_ref::<MemoryCapExceeded>() {
        FailureCause::MemoryCap {
            limit: m.limit,
            requested: m.requested,
        }
    } else {
        match e.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => FailureCause::Deadline(budget),
            Some(Trap::StackOverflow) => FailureCause::StackOverflow,
            // `wasm trap: wasm `unreachable` …` without the first `wasm trap`:
            // the cause already reads `trap: …`.
            Some(t) => {
                let text = t.to_string();
                FailureCause::Trap(
                    text.strip_prefix("wasm trap: ")
                        .unwrap_or(&text)
                        .to_string(),
                )
            }
            None => {
                // The error's own messages, without the backtrace's (it is
                // reported frame by frame).
                let bt = trace.map(|t| t.to_string());
                let chain: Vec<String> = e
                    .chain()
                    .map(|c| c.to_string())
                    .filter(|c| Some(c) != bt.as_ref())
                    .collect();
                if chain.iter().any(|c| c.contains(COPY_CAP_ERROR)) {
                    FailureCause::Oversized(format!(
                        "the call copied more than {MAX_CALL_COPY_BYTES} bytes out of the guest"
                    ))
                } else {
                    FailureCause::Trap(chain.join(": "))
                }
            }
        }
    };
    Failed {
        cause,
        export,
        backtrace,
    }
}

/// One line per frame, innermost first: `module!function` (Rust names
/// demangled), then the source
/// location when the component carries debug info (and
/// `WASMTIME_BACKTRACE_DETAILS=1`).
fn frames(trace: &WasmBacktrace) -> Vec<String> {
    trace
        .frames()
        .iter()
        .map(|frame| {
            // Rust symbols demangled without their hash; other names as they are.
            let func = match frame.func_name() {
                Some(name) => format!("{:#}", rustc_demangle::demangle(name)),
                None => format!("<wasm function {}>", frame.func_index()),
            };
            let mut line = match frame.module().name() {
                Some(module) => format!("{module}!{func}"),
                None => func,
            };
            let at = frame.symbols().iter().find_map(|s| {
                let file = s.file()?;
                Some(match s.line() {
                    Some(l) => format!("{file}:{l}"),
                    None => file.to_string(),
                })
            });
            if let Some(at) = at {
                line.push_str(" at ");
                line.push_str(&at);
            }
            line
        })
        .collect()
}

/// What one stage's instance used: Wasm instructions executed (with
/// [`crate::EngineConfig::consume_fuel`]; else `None`) and its peak linear
/// memory. A restarted instance starts from zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageMetrics {
    /// Wasm instructions executed (wasmtime fuel units).
    pub instructions: Option<u64>,
    /// The most linear memory held at once, in bytes.
    pub peak_memory: u64,
}
