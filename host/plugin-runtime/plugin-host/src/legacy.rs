//! Components driven by export name rather than through the typed world
//! bindings (`crate::bindings`, generated from 0.2.0): those of the current
//! package, 0.3.0 (`wit/`, `crate::packed_world`: batches as one packed
//! buffer, transforms that answer edits), and of 0.1.0, which the host
//! keeps loading (a plugin ecosystem cannot rebuild every plugin on every
//! release). 0.2.0 components go through the typed bindings.
//!
//! The released versions are frozen under `wit/legacy/`. What 0.2.0 changed
//! from 0.1.0 is one record: `delivery-info` gained `process` (the process
//! the batch's records were traced in). So:
//!
//! - **imports**: every host function has the same type in every version
//!   but 0.3.0's `delivery.select-columns`, so
//!   [`crate::state::add_to_linker`] links each host interface under each
//!   version's name (`rocwasm:plugin/log@0.1.0`), onto the same host
//!   struct. Component types are structural (our WIT has no resources), so
//!   the imports type-check against the same Rust functions.
//! - **exports**: the generated world bindings look exports up under the
//!   0.2.0 names, so the other versions are driven here: their exports are
//!   looked up once under their names ([`LegacyPre`]) and called through
//!   [`Func::typed`], which checks the Rust types against the component's
//!   structurally. Every export but `deliver-batch` and `transform-batch`
//!   has the same type in every version and is called with the bindings'
//!   Rust types; 0.1.0's two take [`DeliveryInfoV0_1_0`], 0.3.0's
//!   `deliver-batch` takes the packed bytes (`(&DeliveryInfo, &[u8])`) and
//!   its `transform-batch` answers [`BatchEdits`].
//!
//! `typed` checks the types on each call (the generated bindings check once
//! per instance): a small, constant cost per call, except on
//! `deliver-batch`, the frequent one, whose typed function is kept with the
//! instance (as `crate::plugin::instance` keeps 0.2.0's).

use wasmtime::component::{
    ComponentExportIndex, ComponentType, Func, Instance, InstancePre, Lower, TypedFunc,
};
use wasmtime::Store;

use crate::bindings::types as wit;
use crate::convert::{self, BatchView};
use crate::packed_world::{self, BatchEdits};
use crate::state::PluginState;
use crate::world::{WitVersion, World};

/// `delivery-info` as `rocwasm:plugin@0.1.0` declares it: today's without
/// `process`.
#[derive(Debug, Clone, Copy, ComponentType, Lower)]
#[component(record)]
pub(crate) struct DeliveryInfoV0_1_0 {
    context: u64,
    buffer: u64,
    #[component(name = "drop-count")]
    drop_count: u64,
}

impl From<&wit::DeliveryInfo> for DeliveryInfoV0_1_0 {
    fn from(i: &wit::DeliveryInfo) -> Self {
        DeliveryInfoV0_1_0 {
            context: i.context,
            buffer: i.buffer,
            drop_count: i.drop_count,
        }
    }
}

/// The export functions of a world, as indices into the component.
#[derive(Clone, Copy)]
struct Exports<T> {
    configure: T,
    init: T,
    fini: T,
    /// `deliver-batch` (analysis) or `transform-batch` (transform).
    batch: T,
    /// The analysis' `on-callback`.
    on_callback: Option<T>,
    /// The analysis' `on-external-correlation-request`.
    on_request: Option<T>,
    /// The analysis' `take-partial` and `merge-partial`, when it exports
    /// `merge` (0.3.1 on).
    merge: Option<(T, T)>,
}

/// A pre-linked component of another package version than the current.
pub(crate) struct LegacyPre {
    pre: InstancePre<PluginState>,
    version: WitVersion,
    world: World,
    exports: Exports<ComponentExportIndex>,
}

impl LegacyPre {
    /// Looks up the exports of `world` under `version`'s names; fails
    /// naming the one that is missing.
    pub(crate) fn new(
        pre: InstancePre<PluginState>,
        version: WitVersion,
        world: World,
    ) -> wasmtime::Result<LegacyPre> {
        let [lifecycle, deliveries] = version.required_exports(world);
        let component = pre.component();
        let interface = |name: &str| {
            component
                .get_export_index(None, name)
                .ok_or_else(|| wasmtime::format_err!("the component does not export `{name}`"))
        };
        let (lifecycle_idx, deliveries_idx) = (interface(lifecycle)?, interface(deliveries)?);
        let func = |iface: &ComponentExportIndex, iface_name: &str, name: &str| {
            component
                .get_export_index(Some(iface), name)
                .ok_or_else(|| {
                    wasmtime::format_err!("the component's `{iface_name}` has no `{name}`")
                })
        };
        // `merge` is optional: a component without it runs per process.
        let merge_name = version.run_and_merge().map(|(_, merge)| merge);
        let merge = match merge_name.and_then(|m| Some((m, component.get_export_index(None, m)?))) {
            Some((name, idx)) if world == World::Analysis => Some((
                func(&idx, name, "take-partial")?,
                func(&idx, name, "merge-partial")?,
            )),
            _ => None,
        };
        let exports = match world {
            World::Analysis => Exports {
                configure: func(&lifecycle_idx, lifecycle, "configure")?,
                init: func(&lifecycle_idx, lifecycle, "init")?,
                fini: func(&lifecycle_idx, lifecycle, "fini")?,
                batch: func(&deliveries_idx, deliveries, "deliver-batch")?,
                on_callback: Some(func(&deliveries_idx, deliveries, "on-callback")?),
                on_request: Some(func(
                    &deliveries_idx,
                    deliveries,
                    "on-external-correlation-request",
                )?),
                merge,
            },
            World::Transform => Exports {
                configure: func(&lifecycle_idx, lifecycle, "configure")?,
                init: func(&lifecycle_idx, lifecycle, "init")?,
                fini: func(&lifecycle_idx, lifecycle, "fini")?,
                batch: func(&deliveries_idx, deliveries, "transform-batch")?,
                on_callback: None,
                on_request: None,
                merge: None,
            },
        };
        Ok(LegacyPre {
            pre,
            version,
            world,
            exports,
        })
    }

    /// A fresh instance in `store`.
    pub(crate) fn instantiate(
        &self,
        store: &mut Store<PluginState>,
    ) -> wasmtime::Result<LegacyInstance> {
        let instance = self.pre.instantiate(&mut *store)?;
        let e = &self.exports;
        let mut func = |idx: &ComponentExportIndex| -> wasmtime::Result<Func> {
            instance
                .get_func(&mut *store, idx)
                .ok_or_else(|| wasmtime::format_err!("an export is not a function"))
        };
        let funcs = Exports {
            configure: func(&e.configure)?,
            init: func(&e.init)?,
            fini: func(&e.fini)?,
            batch: func(&e.batch)?,
            on_callback: e.on_callback.as_ref().map(&mut func).transpose()?,
            on_request: e.on_request.as_ref().map(&mut func).transpose()?,
            merge: match &e.merge {
                Some((take, fold)) => Some((func(take)?, func(fold)?)),
                None => None,
            },
        };
        let deliver = match (self.world, self.version) {
            (World::Analysis, v) if v.is_packed() => {
                Some(Deliver::Packed(funcs.batch.typed(&*store)?))
            }
            (World::Analysis, _) => Some(Deliver::Columns(funcs.batch.typed(&*store)?)),
            (World::Transform, _) => None,
        };
        Ok(LegacyInstance {
            _instance: instance,
            version: self.version,
            world: self.world,
            funcs,
            deliver,
        })
    }
}

/// `deliver-batch` of an analysis, type-checked once: 0.1.0's columns or
/// 0.3.0's packed buffer. The `'static` lifetimes only name the types
/// (see `crate::plugin::instance`'s `DeliverBatch`).
#[derive(Clone, Copy)]
enum Deliver {
    Columns(TypedFunc<(DeliveryInfoV0_1_0, BatchView<'static>), ()>),
    Packed(TypedFunc<(&'static wit::DeliveryInfo, &'static [u8]), ()>),
}

/// What `transform-batch` of a 0.3.0 transform returns.
type TransformReply = (BatchEdits,);

/// A live instance of another version's component: its export functions.
pub(crate) struct LegacyInstance {
    _instance: Instance,
    version: WitVersion,
    world: World,
    funcs: Exports<Func>,
    /// `deliver-batch`, type-checked once (an analysis only).
    deliver: Option<Deliver>,
}

impl LegacyInstance {
    /// The world it implements.
    pub(crate) fn world(&self) -> World {
        self.world
    }

    pub(crate) fn call_configure(
        &self,
        s: &mut Store<PluginState>,
        info: &wit::ToolInfo,
    ) -> wasmtime::Result<bool> {
        let f = self
            .funcs
            .configure
            .typed::<(&wit::ToolInfo,), (bool,)>(&*s)?;
        Ok(f.call(s, (info,))?.0)
    }

    pub(crate) fn call_init(
        &self,
        s: &mut Store<PluginState>,
    ) -> wasmtime::Result<Result<(), String>> {
        let f = self.funcs.init.typed::<(), (Result<(), String>,)>(&*s)?;
        Ok(f.call(s, ())?.0)
    }

    pub(crate) fn call_fini(
        &self,
        s: &mut Store<PluginState>,
    ) -> wasmtime::Result<Vec<wit::SummaryTable>> {
        let f = self
            .funcs
            .fini
            .typed::<(), (Vec<wit::SummaryTable>,)>(&*s)?;
        Ok(f.call(s, ())?.0)
    }

    /// `deliver-batch` with the columns the plugin selected: for 0.1.0 a
    /// projected view (see `crate::plugin::instance`'s `Analysis::deliver`),
    /// for 0.3.0 the packed buffer (kept in the store between deliveries).
    pub(crate) fn deliver(
        &self,
        s: &mut Store<PluginState>,
        info: &wit::DeliveryInfo,
        batch: &rocwasm_core::Batch,
    ) -> wasmtime::Result<()> {
        match self.deliver {
            Some(Deliver::Columns(f)) => {
                let view = BatchView::project(batch, &s.data().delivery.projection);
                f.call(s, (info.into(), view))
            }
            Some(Deliver::Packed(f)) => {
                let mut packed = std::mem::take(&mut s.data_mut().delivery.packed);
                packed_world::pack(
                    batch,
                    &s.data().delivery.selection,
                    s.data().delivery.newer_schema,
                    &mut packed,
                );
                let r = f.call(&mut *s, (info, &packed));
                s.data_mut().delivery.packed = packed;
                r
            }
            None => Err(wasmtime::format_err!("a transform has no `deliver-batch`")),
        }
    }

    /// `transform-batch`: the transform's batch (0.1.0), or its edits
    /// applied to `batch` (0.3.0); `Ok(Err(why))` when the edits do not fit
    /// the batch (a malformed reply).
    pub(crate) fn transform(
        &self,
        s: &mut Store<PluginState>,
        info: &wit::DeliveryInfo,
        batch: &rocwasm_core::Batch,
    ) -> wasmtime::Result<Result<rocwasm_core::Batch, String>> {
        if self.version.is_packed() {
            let f = self
                .funcs
                .batch
                .typed::<(&wit::DeliveryInfo, &[u8]), TransformReply>(&*s)?;
            let mut packed = std::mem::take(&mut s.data_mut().delivery.packed);
            packed_world::pack(
                batch,
                &s.data().delivery.selection,
                s.data().delivery.newer_schema,
                &mut packed,
            );
            let r = f.call(&mut *s, (info, &packed));
            s.data_mut().delivery.packed = packed;
            let (edits,) = r?;
            return Ok(packed_world::apply(batch, edits));
        }
        let f = self
            .funcs
            .batch
            .typed::<(DeliveryInfoV0_1_0, &wit::Batch), (wit::Batch,)>(&*s)?;
        let reply = f
            .call(s, (info.into(), &convert::batch_to_wit(batch.clone())))?
            .0;
        Ok(convert::legacy_reply(reply, batch))
    }

    /// `merge.take-partial`; `None` when the component does not export it.
    pub(crate) fn take_partial(
        &self,
        s: &mut Store<PluginState>,
    ) -> Option<wasmtime::Result<Result<Vec<u8>, String>>> {
        let (take, _) = self.funcs.merge?;
        Some((|| {
            let f = take.typed::<(), (Result<Vec<u8>, String>,)>(&*s)?;
            Ok(f.call(&mut *s, ())?.0)
        })())
    }

    /// `merge.merge-partial`; `None` when the component does not export it.
    pub(crate) fn merge_partial(
        &self,
        s: &mut Store<PluginState>,
        partial: &[u8],
    ) -> Option<wasmtime::Result<Result<(), String>>> {
        let (_, fold) = self.funcs.merge?;
        Some((|| {
            let f = fold.typed::<(&[u8],), (Result<(), String>,)>(&*s)?;
            Ok(f.call(&mut *s, (partial,))?.0)
        })())
    }

    /// `on-callback`; an analysis only (`None` for a transform).
    pub(crate) fn on_callback(
        &self,
        s: &mut Store<PluginState>,
        record: &wit::CallbackRecord,
        user_data: u64,
    ) -> Option<wasmtime::Result<u64>> {
        let func = self.funcs.on_callback?;
        Some((|| {
            let f = func.typed::<(&wit::CallbackRecord, u64), (u64,)>(&*s)?;
            Ok(f.call(&mut *s, (record, user_data))?.0)
        })())
    }

    /// `on-external-correlation-request`; an analysis only.
    pub(crate) fn on_request(
        &self,
        s: &mut Store<PluginState>,
        request: &wit::ExternalCorrelationRequest,
    ) -> Option<wasmtime::Result<Option<u64>>> {
        let func = self.funcs.on_request?;
        Some((|| {
            let f = func.typed::<(&wit::ExternalCorrelationRequest,), (Option<u64>,)>(&*s)?;
            Ok(f.call(&mut *s, (request,))?.0)
        })())
    }
}
