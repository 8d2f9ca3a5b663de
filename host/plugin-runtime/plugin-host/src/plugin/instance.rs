//! What a plugin runs in: its store (data, memory cap, WASI only where
//! imported) and its instance of either world or of an earlier package
//! version, made from the pre-linked `InstancePre`, with the export names as
//! failure reports give them and the typed calls of the life-cycle exports.

use wasmtime::component::TypedFunc;
use wasmtime::Store;
use wasmtime_wasi::WasiCtxBuilder;

use crate::bindings::analysis::AnalysisPlugin;
use crate::bindings::transform::TransformPlugin;
use crate::bindings::types as wit;
use crate::convert;
use crate::engine::{CompiledPlugin, PluginEngine, Pre};
use crate::env::{HostEnv, VERSION};
use crate::host::{OutputHost, ProfilerHost};
use crate::legacy::LegacyInstance;
use crate::sandbox::{deny_all_wasi_logged, MAX_CALL_COPY_BYTES};
use crate::spec::StageSpec;
use crate::state::PluginState;

/// The WIT export names, as failure reports name them.
pub(super) mod export {
    pub const CONFIGURE: &str = "configure";
    pub const INIT: &str = "init";
    pub const FINI: &str = "fini";
    pub const DELIVER_BATCH: &str = "deliver-batch";
    pub const TRANSFORM_BATCH: &str = "transform-batch";
    pub const ON_CALLBACK: &str = "on-callback";
    pub const ON_EXTERNAL_CORRELATION_REQUEST: &str = "on-external-correlation-request";
    pub const TAKE_PARTIAL: &str = "take-partial";
    pub const MERGE_PARTIAL: &str = "merge-partial";
}

/// A live instance of the plugin's component, by the world it implements.
pub(super) enum Instance {
    Analysis(Analysis),
    Transform(TransformPlugin),
    /// Either world, built against an earlier package version.
    Legacy(LegacyInstance),
}

impl Instance {
    /// Instantiates `pre` in `store` (no plugin code runs but the
    /// component's start functions).
    pub(super) fn new(pre: &Pre, store: &mut Store<PluginState>) -> wasmtime::Result<Instance> {
        match pre {
            Pre::Analysis(pre) => pre
                .instantiate(&mut *store)
                .and_then(|a| Analysis::new(store, a))
                .map(Instance::Analysis),
            Pre::Transform(pre) => pre.instantiate(store).map(Instance::Transform),
            Pre::Legacy(pre) => pre.instantiate(store).map(Instance::Legacy),
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
pub(super) struct Analysis {
    pub(super) plugin: AnalysisPlugin,
    deliver: DeliverBatch,
}

impl Analysis {
    fn new(store: &Store<PluginState>, plugin: AnalysisPlugin) -> wasmtime::Result<Analysis> {
        let func = *plugin.rocwasm_plugin_analysis().func_deliver_batch().func();
        let deliver = func.typed(store)?;
        Ok(Analysis { plugin, deliver })
    }

    /// Calls `deliver-batch` with the columns the plugin selected.
    pub(super) fn deliver(
        &self,
        store: &mut Store<PluginState>,
        info: &wit::DeliveryInfo,
        batch: &rocwasm_core::Batch,
    ) -> wasmtime::Result<()> {
        let view = convert::BatchView::project(batch, &store.data().delivery.projection);
        self.deliver.call(store, (info, view))
    }
}

/// The life-cycle exports of either world (two generated types, one shape).
pub(super) struct Lifecycle<'a>(&'a Instance);

pub(super) fn lifecycle(i: &Instance) -> Lifecycle<'_> {
    Lifecycle(i)
}

impl Lifecycle<'_> {
    pub(super) fn call_configure(
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

    pub(super) fn call_init(
        &self,
        s: &mut Store<PluginState>,
    ) -> wasmtime::Result<Result<(), String>> {
        match self.0 {
            Instance::Analysis(a) => a.plugin.rocwasm_plugin_lifecycle().call_init(s),
            Instance::Transform(t) => t.rocwasm_plugin_lifecycle().call_init(s),
            Instance::Legacy(l) => l.call_init(s),
        }
    }

    pub(super) fn call_fini(
        &self,
        s: &mut Store<PluginState>,
    ) -> wasmtime::Result<Vec<wit::SummaryTable>> {
        match self.0 {
            Instance::Analysis(a) => a.plugin.rocwasm_plugin_lifecycle().call_fini(s),
            Instance::Transform(t) => t.rocwasm_plugin_lifecycle().call_fini(s),
            Instance::Legacy(l) => l.call_fini(s),
        }
    }
}

pub(super) fn default_tool_info(name: &str) -> wit::ToolInfo {
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
pub(super) fn new_store(
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
