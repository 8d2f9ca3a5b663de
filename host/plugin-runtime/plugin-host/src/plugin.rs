//! [`Plugin`]: one stage's instance, its store, and its failure policy.
//!
//! Each call sets the store's epoch deadline and runs; on an error it is
//! classified (`crate::failure::classify`: the cause, the export that was
//! running, the guest's Wasm backtrace) and the stage's [`FailurePolicy`]
//! applied. This file holds the plugin's state and the one way into its
//! instance; its child modules, each using only this file and the ones
//! before it:
//!
//! - `instance`: the store and the instance of either world (or of an
//!   earlier package version), and the export names failure reports give;
//! - `recovery`: after a failure, the poisoned instance dropped, the report
//!   filed, the policy applied, a fresh instance made;
//! - `lifecycle`: `configure`, `init`, `fini`;
//! - `merge`: a part's partial result instead of `fini`, and partials
//!   folded into a reducer (WIT 0.3.1);
//! - `delivery`: batches, transforms, callbacks and external-correlation
//!   requests.
//!
//! [`FailurePolicy`]: crate::failure::FailurePolicy

mod delivery;
mod instance;
mod lifecycle;
mod merge;
mod recovery;

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Store;

use crate::bindings::types as wit;
use crate::engine::{CompiledPlugin, PluginEngine};
use crate::env::HostEnv;
use crate::failure::{
    classify, CallResult, Failed, FailureAction, FailureCause, FailureLog, FailureReport,
};
use crate::host::{OutputHost, ProfilerHost, StageLink};
use crate::spec::StageSpec;
use crate::state::PluginState;
use instance::{new_store, Instance};
pub use merge::{PartEnd, Partial};

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
            spec.file_prefix.clone(),
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

    /// A new instance in the current store, under the call deadline.
    fn instantiate(&mut self) -> CallResult<Instance> {
        self.store
            .set_epoch_deadline(self.runtime.ticks(self.spec.limits.deadline));
        Instance::new(&self.compiled.pre, &mut self.store)
            .map_err(|e| classify(e, self.spec.limits.deadline, None))
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
