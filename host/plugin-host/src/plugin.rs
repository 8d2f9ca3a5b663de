//! [`Plugin`]: one stage's instance, its store, and its failure policy.
//!
//! Each call sets the store's epoch deadline, runs, and on an error works out
//! the cause (deadline, memory cap, stack, other trap), drops the poisoned
//! instance with its store, files one [`FailureReport`] and applies the
//! stage's [`FailurePolicy`]. A fresh instance comes from the pre-linked
//! `InstancePre` and a new store; it is `configure`d and `init`ed again (its
//! profiler setup replayed, see `crate::host::profiler`). Its in-memory state
//! is gone: a restarted analysis counts from zero, which its report says
//! (`records_missed`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{Store, Trap};
use wasmtime_wasi::WasiCtxBuilder;

use crate::bindings::analysis::AnalysisPlugin;
use crate::bindings::transform::TransformPlugin;
use crate::bindings::types as wit;
use crate::convert;
use crate::env::{HostEnv, VERSION};
use crate::failure::{
    Aborted, FailureAction, FailureCause, FailureLog, FailurePolicy, FailureReport,
};
use crate::host::{OutputHost, ProfilerHost, SetupMode, StageLink};
use crate::engine::{CompiledPlugin, Pre, PluginEngine};
use crate::sandbox::{deny_all_wasi, MemoryCapExceeded};
use crate::spec::StageSpec;
use crate::state::PluginState;

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
    Analysis(AnalysisPlugin),
    Transform(TransformPlugin),
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
}

type CallResult<T> = Result<T, FailureCause>;

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
        let profiler = ProfilerHost::new(env.profiler.clone());
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
        };
        p.instance = Some(
            p.instantiate()
                .map_err(|c| anyhow::anyhow!("instantiating `{}`: {c}", p.name))?,
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
            Pre::Analysis(pre) => pre.instantiate(&mut self.store).map(Instance::Analysis),
            Pre::Transform(pre) => pre.instantiate(&mut self.store).map(Instance::Transform),
        };
        r.map_err(|e| classify(e, self.spec.limits.deadline))
    }

    /// Runs one call into the instance under `budget`.
    fn call<R>(
        &mut self,
        budget: Duration,
        f: impl FnOnce(&mut Store<PluginState>, &Instance) -> wasmtime::Result<R>,
    ) -> CallResult<R> {
        let Some(inst) = self.instance.as_ref() else {
            return Err(FailureCause::Trap("no live instance".into()));
        };
        self.store.set_epoch_deadline(self.runtime.ticks(budget));
        f(&mut self.store, inst).map_err(|e| classify(e, budget))
    }

    // ------------------------------------------------------------------
    // Life cycle
    // ------------------------------------------------------------------

    /// `configure`: false (or a failure) means the plugin is out of the run.
    pub(crate) fn configure(&mut self, info: wit::ToolInfo) -> Result<bool, Aborted> {
        self.tool_info = Some(info.clone());
        let r = self.call(self.spec.limits.deadline, |s, i| {
            lifecycle(i).call_configure(s, &info)
        });
        match r {
            Ok(true) => Ok(true),
            Ok(false) => {
                self.health = Health::Declined;
                self.instance = None;
                Ok(false)
            }
            Err(cause) => self.fail_for_good(cause).map(|_| false),
        }
    }

    /// `init`, with profiler configuration open for this plugin.
    pub(crate) fn init(&mut self) -> Result<(), Aborted> {
        self.store.data_mut().profiler.mode = SetupMode::Open;
        let r = self.call(self.spec.limits.deadline, |s, i| lifecycle(i).call_init(s));
        self.store.data_mut().profiler.mode = SetupMode::Locked;
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(msg)) => self.fail_for_good(FailureCause::InitFailed(msg)),
            Err(cause) => self.fail_for_good(cause),
        }
    }

    /// `fini`, exactly once, if the plugin has a live instance.
    pub(crate) fn fini(&mut self) -> Result<Vec<wit::SummaryTable>, Aborted> {
        if !self.ready() {
            self.close_report();
            return Ok(Vec::new());
        }
        let r = self.call(self.spec.limits.deadline, |s, i| lifecycle(i).call_fini(s));
        self.health = Health::Finished;
        self.instance = None;
        match r {
            Ok(tables) => Ok(tables),
            Err(cause) => {
                self.fail(cause, 0)?;
                self.health = Health::Finished;
                Ok(Vec::new())
            }
        }
    }

    // ------------------------------------------------------------------
    // Deliveries
    // ------------------------------------------------------------------

    /// Delivers a batch to an analysis (transforms ignore it).
    pub(crate) fn deliver(
        &mut self,
        info: wit::DeliveryInfo,
        batch: &wit::Batch,
    ) -> Result<(), Aborted> {
        let n = convert::wit_len(batch) as u64;
        self.deliver_counted(info, batch, n)
    }

    /// As [`Self::deliver`]; `missed` is what to count if the plugin cannot take it.
    pub(crate) fn deliver_counted(
        &mut self,
        info: wit::DeliveryInfo,
        batch: &wit::Batch,
        missed: u64,
    ) -> Result<(), Aborted> {
        if !self.ready() {
            self.miss(missed);
            return Ok(());
        }
        self.store.data_mut().delivery.lock();
        let r = self.call(self.spec.limits.deadline, |s, i| match i {
            Instance::Analysis(a) => deliver_view(s, a, info, batch),
            Instance::Transform(_) => Ok(()),
        });
        match r {
            Ok(()) => Ok(()),
            Err(cause) => self.fail(cause, missed),
        }
    }

    /// Runs a transform. `None` when it could not (the caller passes the
    /// input on unchanged).
    pub(crate) fn transform(
        &mut self,
        info: wit::DeliveryInfo,
        batch: &wit::Batch,
    ) -> Result<Option<wit::Batch>, Aborted> {
        let n = convert::wit_len(batch) as u64;
        if !self.ready() {
            self.miss(n);
            return Ok(None);
        }
        let r = self.call(self.spec.limits.deadline, |s, i| match i {
            Instance::Transform(t) => t
                .rocwasm_plugin_transform()
                .call_transform_batch(s, info, batch)
                .map(Some),
            Instance::Analysis(_) => Ok(None),
        });
        match r {
            Ok(Some(out)) if !convert::wit_consistent(&out) => {
                self.fail(
                    FailureCause::MalformedReply("columns of unequal length".into()),
                    n,
                )?;
                Ok(None)
            }
            Ok(out) => Ok(out),
            Err(cause) => {
                self.fail(cause, n)?;
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
        if !self.ready() {
            self.miss(1);
            return Ok(user_data);
        }
        let r = self.call(self.spec.limits.callback_deadline, |s, i| match i {
            Instance::Analysis(a) => a
                .rocwasm_plugin_analysis()
                .call_on_callback(s, record, user_data),
            Instance::Transform(_) => Ok(user_data),
        });
        match r {
            Ok(v) => Ok(v),
            Err(cause) => self.fail(cause, 1).map(|_| user_data),
        }
    }

    /// An external-correlation request: `Some(v)` sets the id, `None` keeps the pushed one.
    pub(crate) fn on_external_correlation_request(
        &mut self,
        request: wit::ExternalCorrelationRequest,
    ) -> Result<Option<u64>, Aborted> {
        if !self.ready() {
            return Ok(None);
        }
        let r = self.call(self.spec.limits.callback_deadline, |s, i| match i {
            Instance::Analysis(a) => a
                .rocwasm_plugin_analysis()
                .call_on_external_correlation_request(s, request),
            Instance::Transform(_) => Ok(None),
        });
        match r {
            Ok(v) => Ok(v),
            Err(cause) => self.fail(cause, 0).map(|_| None),
        }
    }

    // ------------------------------------------------------------------
    // Failure handling
    // ------------------------------------------------------------------

    /// True when the plugin can take a call now (reviving it if its wait is over).
    fn ready(&mut self) -> bool {
        match self.health {
            Health::Live => self.instance.is_some(),
            Health::Waiting { until } if Instant::now() >= until => self.revive(),
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
    fn fail(&mut self, cause: FailureCause, records: u64) -> Result<(), Aborted> {
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
        self.record(cause, action, records)
    }

    /// A life-cycle failure: the plugin never started, so it is disabled
    /// (or the run aborted), never restarted.
    fn fail_for_good(&mut self, cause: FailureCause) -> Result<(), Aborted> {
        self.instance = None;
        let action = if self.spec.failure == FailurePolicy::Abort {
            FailureAction::Aborted
        } else {
            FailureAction::Disabled
        };
        self.record(cause, action, 0)
    }

    fn record(
        &mut self,
        cause: FailureCause,
        action: FailureAction,
        records: u64,
    ) -> Result<(), Aborted> {
        let report = FailureReport {
            plugin: self.name.to_string(),
            cause,
            action,
            records_missed: records,
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
                return Err(Aborted(report));
            }
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
            .map_err(|e| FailureCause::Instantiate(format!("{e:#}")))
            .and_then(|store| {
                self.store = store;
                let inst = self.instantiate()?;
                self.instance = Some(inst);
                let info = self
                    .tool_info
                    .clone()
                    .unwrap_or_else(|| default_tool_info(&self.name));
                let ok = self.call(self.spec.limits.deadline, |s, i| {
                    lifecycle(i).call_configure(s, &info)
                })?;
                if !ok {
                    return Err(FailureCause::InitFailed(
                        "configure declined on restart".into(),
                    ));
                }
                self.store.data_mut().profiler.mode = SetupMode::Replay { next: 0 };
                let r = self.call(self.spec.limits.deadline, |s, i| lifecycle(i).call_init(s));
                self.store.data_mut().profiler.mode = SetupMode::Locked;
                r?.map_err(FailureCause::InitFailed)
            });
        match result {
            Ok(()) => {
                self.health = Health::Live;
                self.close_report();
                true
            }
            Err(cause) => {
                let _ = self.fail_for_good(cause);
                false
            }
        }
    }
}

/// Calls `deliver-batch` with the columns the plugin selected.
///
/// The generated `call_deliver_batch` lowers a whole `&Batch`; this lowers a
/// [`convert::BatchView`] of the same component type instead (checked by
/// `typed`, which compares the two types structurally), so unselected columns
/// go across as empty lists and nothing is cloned.
fn deliver_view(
    store: &mut Store<PluginState>,
    plugin: &AnalysisPlugin,
    info: wit::DeliveryInfo,
    batch: &wit::Batch,
) -> wasmtime::Result<()> {
    let func = *plugin.rocwasm_plugin_analysis().func_deliver_batch().func();
    let typed = func.typed::<(wit::DeliveryInfo, convert::BatchView<'_>), ()>(&*store)?;
    let view = convert::BatchView::project(batch, &store.data().delivery.projection);
    typed.call(store, (info, view))
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
            Instance::Analysis(a) => a.rocwasm_plugin_lifecycle().call_configure(s, info),
            Instance::Transform(t) => t.rocwasm_plugin_lifecycle().call_configure(s, info),
        }
    }

    fn call_init(&self, s: &mut Store<PluginState>) -> wasmtime::Result<Result<(), String>> {
        match self.0 {
            Instance::Analysis(a) => a.rocwasm_plugin_lifecycle().call_init(s),
            Instance::Transform(t) => t.rocwasm_plugin_lifecycle().call_init(s),
        }
    }

    fn call_fini(&self, s: &mut Store<PluginState>) -> wasmtime::Result<Vec<wit::SummaryTable>> {
        match self.0 {
            Instance::Analysis(a) => a.rocwasm_plugin_lifecycle().call_fini(s),
            Instance::Transform(t) => t.rocwasm_plugin_lifecycle().call_fini(s),
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
        deny_all_wasi(spec.output_dir.as_deref())?
    } else {
        WasiCtxBuilder::new().build()
    };
    let state = PluginState::new(spec, env, profiler, output, wasi);
    let mut store = Store::new(runtime.engine(), state);
    store.limiter(|s| &mut s.limiter);
    Ok(store)
}

/// Works out why a call failed.
fn classify(e: wasmtime::Error, budget: Duration) -> FailureCause {
    if let Some(m) = e.downcast_ref::<MemoryCapExceeded>() {
        return FailureCause::MemoryCap {
            limit: m.limit,
            requested: m.requested,
        };
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => FailureCause::Deadline(budget),
        Some(Trap::StackOverflow) => FailureCause::StackOverflow,
        Some(t) => FailureCause::Trap(t.to_string()),
        None => FailureCause::Trap(format!("{e:#}")),
    }
}
