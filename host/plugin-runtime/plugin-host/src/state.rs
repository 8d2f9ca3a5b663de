//! [`PluginState`]: the data of one plugin's `Store`, and how the host
//! imports are linked to it.
//!
//! The store data is a set of independent parts: the memory cap, one small
//! host struct per WIT interface (`crate::host`), and the deny-all WASI
//! context. [`add_to_linker`] links each interface to its own part with
//! wasmtime's projection (`add_to_linker::<_, HasSelf<OutputHost>>(linker,
//! |s| &mut s.output)`), so a host call borrows only the part its interface
//! owns.

use std::sync::Arc;

use anyhow::Result;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::StoreContextMut;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::bindings::analysis::rocwasm::plugin::{
    clock, config, delivery, log, names, output, profiler, symbols,
};
use crate::bindings::types;
use crate::env::HostEnv;
use crate::host::{
    ClockHost, ConfigHost, DeliveryHost, LogHost, NamesHost, OutputHost, ProcessDetails,
    ProcessInfo, ProfilerHost, RunHost, SymbolsHost,
};
use crate::packed_world::ColumnId;
use crate::sandbox::MemoryCap;
use crate::spec::StageSpec;
use crate::world::World;

/// The data of one plugin's store: what its host imports act on.
pub(crate) struct PluginState {
    /// The store's memory limiter (`Store::limiter`).
    pub limiter: MemoryCap,
    /// `profiler` (analyses only).
    pub profiler: ProfilerHost,
    /// `delivery` (analyses only): the columns `deliver-batch` sends.
    pub delivery: DeliveryHost,
    /// `names`.
    pub names: NamesHost,
    /// `symbols`.
    pub symbols: SymbolsHost,
    /// `clock`.
    pub clock: ClockHost,
    /// `log`.
    pub log: LogHost,
    /// `output`: carried over into a restarted instance's store.
    pub output: OutputHost,
    /// `config`.
    pub config: ConfigHost,
    /// `run` (0.3.1 on).
    pub run: RunHost,
    /// Only used when the component imports WASI (then it is deny-all).
    pub wasi: WasiCtx,
    /// WASI's resources.
    pub table: ResourceTable,
}

impl PluginState {
    /// The store data of stage `spec` acting on `env`, with `profiler` and
    /// `output` given (fresh for a new plugin, carried over for a restarted
    /// one) and `wasi` as the sandbox made it.
    pub fn new(
        spec: &StageSpec,
        env: &HostEnv,
        profiler: ProfilerHost,
        output: OutputHost,
        wasi: WasiCtx,
    ) -> Self {
        let name: Arc<str> = spec.name.as_str().into();
        PluginState {
            limiter: MemoryCap::new(spec.limits.memory_usize()),
            profiler,
            delivery: DeliveryHost::new(name.clone(), env.newer_schema),
            names: NamesHost::new(env.operation_names.clone()).with_markers(env.profiler.clone()),
            symbols: SymbolsHost::new(env.profiler.clone()),
            clock: ClockHost,
            log: LogHost::new(name, spec.limits.log_per_second),
            output,
            config: ConfigHost::new(spec.config.clone()),
            run: RunHost::new(env.processes.clone()),
            wasi,
            table: ResourceTable::new(),
        }
    }
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// `types` has no functions, only the types the other interfaces share;
/// its (empty) instance is still linked, as the generated world linker does.
impl types::Host for PluginState {}

/// Links the host imports of `world` into `linker`, each interface to its
/// own part of the store data. Both worlds import `types`, `names`,
/// `symbols`, `clock`, `log`, `output` and `config`; an analysis also
/// `profiler` and `delivery` (and from 0.3.0 on a transform `delivery`
/// too). (WASI is linked separately, for components that import it.)
///
/// Each interface is linked under its current (0.3.2) name and again under
/// its `rocwasm:plugin@0.3.1`, `@0.3.0`, `@0.2.0` and `@0.1.0` names (`legacy`
/// explains why one host function serves them all), in the order
/// `bindings::names` lists them; 0.3.x's `delivery`, whose `select-columns`
/// answers ids, has a function of its own ([`select_columns_v0_3_0`]), and
/// `run` (0.3.1 on) and 0.3.2's `symbols.counter-names` are linked by hand
/// ([`describe_process`], [`counter_names`]).
pub(crate) fn add_to_linker(linker: &mut Linker<PluginState>, world: World) -> Result<()> {
    use crate::bindings::names::{self as current, v0_1_0, v0_2_0, v0_3_0, v0_3_1};
    for run in [current::RUN, v0_3_1::RUN] {
        linker
            .instance(run)?
            .func_wrap("describe-process", describe_process)?;
    }
    for (version, common, profiler_name, delivery_name) in [
        (
            current::VERSION,
            current::COMMON_IMPORTS,
            current::PROFILER,
            current::DELIVERY,
        ),
        (
            v0_3_1::VERSION,
            v0_3_1::COMMON_IMPORTS,
            v0_3_1::PROFILER,
            v0_3_1::DELIVERY,
        ),
        (
            v0_3_0::VERSION,
            v0_3_0::COMMON_IMPORTS,
            v0_3_0::PROFILER,
            v0_3_0::DELIVERY,
        ),
        (
            v0_2_0::VERSION,
            v0_2_0::COMMON_IMPORTS,
            v0_2_0::PROFILER,
            v0_2_0::DELIVERY,
        ),
        (
            v0_1_0::VERSION,
            v0_1_0::COMMON_IMPORTS,
            v0_1_0::PROFILER,
            v0_1_0::DELIVERY,
        ),
    ] {
        let [types_name, names_name, symbols_name, clock_name, log_name, output_name, config_name] =
            common;
        types::add_to_linker_instance::<_, HasSelf<PluginState>>(
            &mut linker.instance(types_name)?,
            |s| s,
        )?;
        names::add_to_linker_instance::<_, HasSelf<NamesHost>>(
            &mut linker.instance(names_name)?,
            |s| &mut s.names,
        )?;
        {
            let mut symbols_instance = linker.instance(symbols_name)?;
            symbols::add_to_linker_instance::<_, HasSelf<SymbolsHost>>(
                &mut symbols_instance,
                |s| &mut s.symbols,
            )?;
            if version == current::VERSION {
                symbols_instance.func_wrap("counter-names", counter_names)?;
            }
        }
        clock::add_to_linker_instance::<_, HasSelf<ClockHost>>(
            &mut linker.instance(clock_name)?,
            |s| &mut s.clock,
        )?;
        log::add_to_linker_instance::<_, HasSelf<LogHost>>(&mut linker.instance(log_name)?, |s| {
            &mut s.log
        })?;
        output::add_to_linker_instance::<_, HasSelf<OutputHost>>(
            &mut linker.instance(output_name)?,
            |s| &mut s.output,
        )?;
        config::add_to_linker_instance::<_, HasSelf<ConfigHost>>(
            &mut linker.instance(config_name)?,
            |s| &mut s.config,
        )?;
        if world == World::Analysis {
            profiler::add_to_linker_instance::<_, HasSelf<ProfilerHost>>(
                &mut linker.instance(profiler_name)?,
                |s| &mut s.profiler,
            )?;
        }
        if [current::VERSION, v0_3_1::VERSION, v0_3_0::VERSION].contains(&version) {
            linker
                .instance(delivery_name)?
                .func_wrap("select-columns", select_columns_v0_3_0)?;
        } else if world == World::Analysis {
            delivery::add_to_linker_instance::<_, HasSelf<DeliveryHost>>(
                &mut linker.instance(delivery_name)?,
                |s| &mut s.delivery,
            )?;
        }
    }
    Ok(())
}

/// `symbols.counter-names` of `rocwasm:plugin@0.3.2`.
fn counter_names(
    store: StoreContextMut<'_, PluginState>,
    (ids,): (Vec<u32>,),
) -> wasmtime::Result<(Vec<String>,)> {
    Ok((store.data().symbols.counter_names(&ids),))
}

/// `run.describe-process` of `rocwasm:plugin@0.3.1` and later.
fn describe_process(
    store: StoreContextMut<'_, PluginState>,
    (process,): (ProcessInfo,),
) -> wasmtime::Result<(Option<ProcessDetails>,)> {
    Ok((store.data().run.describe_process(&process),))
}

/// What `delivery.select-columns` returns in 0.3.0.
type SelectReply = Result<Vec<ColumnId>, types::Status>;

/// `delivery.select-columns` of `rocwasm:plugin@0.3.x`: the columns' ids.
fn select_columns_v0_3_0(
    mut store: StoreContextMut<'_, PluginState>,
    (table, columns): (String, Vec<String>),
) -> wasmtime::Result<(SelectReply,)> {
    Ok((store.data_mut().delivery.select_ids(&table, &columns),))
}
