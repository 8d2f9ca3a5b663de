//! `PluginState`: the data of one plugin's `Store`, which the host imports
//! (in `crate::host`) act on.

use std::collections::BTreeMap;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::chain::HostEnv;
use crate::host::{DeliveryChoice, LogGate, OutputGrant, ProfilerLink};
use crate::sandbox::MemoryCap;

pub(crate) struct PluginState {
    /// The stage name, for logs and reports.
    pub name: Arc<str>,
    pub limiter: MemoryCap,
    pub config: Arc<BTreeMap<String, String>>,
    pub output: OutputGrant,
    pub log: LogGate,
    pub env: HostEnv,
    pub profiler: ProfilerLink,
    /// The columns `deliver-batch` sends (`delivery.select-columns`).
    pub delivery: DeliveryChoice,
    /// Only used when the component imports WASI (then it is deny-all).
    pub wasi: WasiCtx,
    pub table: ResourceTable,
}

impl WasiView for PluginState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
