//! The `profiler` interface: the SDK verbs, delegating to the shared
//! `rocwasm_core::Profiler`.
//!
//! Per plugin, the host adds three rules on top of the engine's:
//!
//! - **Configuration only in `init`.** Outside its `init` a plugin's
//!   configuration calls return `configuration-locked` (the engine itself
//!   locks once every plugin's `init` is done). Starting and stopping
//!   contexts, flushing and pushing correlation ids are allowed any time.
//! - **Isolation.** A plugin sees only the contexts and buffers it created;
//!   other ids are `context-not-found` / `buffer-not-found`, so one plugin
//!   cannot stop or flush another's.
//! - **The chain's context.** One exception: the chain's shared context
//!   (`tool-info.chain-context`), which carries the buffer every stage's
//!   `domains` are traced into. A plugin may configure callback tracing and
//!   external-correlation requests on it (so that, as in the SDK, its answers
//!   land on the records of the context that buffers them), push and pop
//!   external ids on it and ask whether it is active. Everything else on it
//!   (start, stop, buffers, buffer tracing) is the chain's: `context-not-found`.
//! - **Granted services only.** Callback tracing and external-correlation
//!   requests run plugin code on the application's threads; a stage the
//!   chain or the site policy does not grant them ([`Services`]) gets
//!   `error` from those verbs, and the refusal is reported once.
//! - **Restart replay.** When a failed plugin is restarted (see
//!   [`crate::FailurePolicy::Restart`]) its fresh instance runs `init` again,
//!   after the engine is locked. Its configuration calls are then answered
//!   from the log of its first `init`: the n-th call gets the n-th answer if
//!   it is the same verb, so the new instance learns the same context and
//!   buffer ids, and the engine's sinks (which point at the stage, not at an
//!   instance) keep delivering to it.
//!
//! The sinks given to the engine deliver to the stage that holds the
//! plugin, not to the plugin's current instance: the stage hands them over
//! as a [`StageLink`] once the plugin is in place, and they outlive any
//! restart.

use std::sync::Arc;

use rocwasm_core::{
    BufferId, BufferPolicy, BufferSink, BufferTracingKind, CallbackSink, CallbackThreadId,
    CallbackTracingKind, Client, ContextId, ExternalCorrelationKind, ExternalCorrelationSink,
    Profiler, Status,
};

use crate::bindings::analysis::rocwasm::plugin::profiler as wit_profiler;
use crate::bindings::types as wit;
use crate::convert::status_to_wit;
use crate::spec::Services;

/// Where this plugin is in its configuration life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetupMode {
    /// Before `init` or after it: configuration calls are locked.
    Locked,
    /// During the first `init`: calls go to the engine and are logged.
    Open,
    /// During a restart's `init`: calls are answered from the log.
    Replay { next: usize },
}

/// What the profiler imports need of the stage that holds the plugin: the
/// chain's shared context and the engine's way back to the stage.
///
/// The stage makes it (`crate::stage`) and the plugin's store keeps it, so
/// the host side of the interface never names the stage. The sinks hold
/// the stage weakly: the engine may outlive the chain, and must not keep
/// plugins alive.
#[derive(Clone)]
pub(crate) struct StageLink {
    /// The chain's shared context (`tool-info.chain-context`), if the chain
    /// has one: the one context of another owner a plugin may act on.
    pub chain_context: Option<ContextId>,
    /// Delivers the plugin's own buffers to its stage.
    pub buffers: Arc<dyn BufferSink>,
    /// Hands callback-tracing records to its stage.
    pub callbacks: Arc<dyn CallbackSink>,
    /// Asks its stage for external correlation ids.
    pub requests: Arc<dyn ExternalCorrelationSink>,
}

/// The `profiler` imports of one plugin: the shared engine, the plugin's
/// setup mode and log, its [`Client`] (what it owns), and its link to its
/// stage.
pub(crate) struct ProfilerHost {
    profiler: Arc<Profiler>,
    /// `None` until the plugin's stage links itself in, which happens before
    /// any `init`: setup verbs that need sinks are locked until then.
    stage: Option<StageLink>,
    /// Where the plugin is in its configuration life; the plugin opens and
    /// closes it around `init`.
    pub mode: SetupMode,
    log: Vec<(&'static str, Result<u64, Status>)>,
    /// What the plugin owns in the engine; a restarted instance shares it.
    client: Arc<Client>,
    /// The synchronous services this stage is granted.
    services: Services,
    /// The first refusal of a service not granted, until the plugin takes
    /// it to report (once per run).
    refusal: Option<String>,
    refusal_reported: bool,
}

impl ProfilerHost {
    /// A plugin acting on `profiler`, owning nothing yet, configuration
    /// locked, allowed the `services` its stage is granted.
    pub fn new(profiler: Arc<Profiler>, services: Services) -> Self {
        ProfilerHost {
            profiler,
            stage: None,
            mode: SetupMode::Locked,
            log: Vec::new(),
            client: Client::new(),
            services,
            refusal: None,
            refusal_reported: false,
        }
    }

    /// The first refusal of a service the stage is not granted, once.
    pub fn take_refusal(&mut self) -> Option<String> {
        self.refusal.take()
    }

    /// `Err(error)` when `granted` is false, noting the refusal.
    fn granted(
        &mut self,
        granted: bool,
        verb: &str,
        what: &str,
        key: &str,
    ) -> Result<(), wit::Status> {
        if granted {
            return Ok(());
        }
        if !self.refusal_reported {
            self.refusal_reported = true;
            self.refusal = Some(format!(
                "`{verb}` refused: this stage is not granted {what} (the chain's `{key} = false`, or the site policy's `[capabilities] {key} = false`)"
            ));
        }
        Err(wit::Status::Error)
    }

    /// Connects the plugin to the stage that holds it.
    pub fn link_stage(&mut self, link: StageLink) {
        self.stage = Some(link);
    }

    /// Carries what the first `init` set up into a restarted instance.
    pub fn for_restart(&self) -> Self {
        ProfilerHost {
            profiler: self.profiler.clone(),
            stage: self.stage.clone(),
            mode: SetupMode::Locked,
            log: self.log.clone(),
            client: self.client.clone(),
            services: self.services,
            refusal: None,
            // Reported once per run, not once per instance.
            refusal_reported: self.refusal_reported,
        }
    }

    /// Runs one configuration verb according to the mode.
    fn setup(
        &mut self,
        verb: &'static str,
        run: impl FnOnce(&mut Self) -> Result<u64, Status>,
    ) -> Result<u64, Status> {
        match self.mode {
            SetupMode::Locked => Err(Status::ConfigurationLocked),
            SetupMode::Open => {
                let r = run(self);
                self.log.push((verb, r));
                r
            }
            SetupMode::Replay { next } => match self.log.get(next) {
                Some(&(v, r)) if v == verb => {
                    self.mode = SetupMode::Replay { next: next + 1 };
                    r
                }
                _ => Err(Status::ConfigurationLocked),
            },
        }
    }

    fn context(&self, id: u64) -> Result<ContextId, Status> {
        self.client.context(ContextId(id))
    }

    /// A context of this plugin's, or the chain's shared one (for the verbs
    /// that may act on it, see the module docs).
    fn shared_context(&self, id: u64) -> Result<ContextId, Status> {
        let chain = self.stage.as_ref().and_then(|s| s.chain_context);
        match chain {
            Some(c) if c.0 == id => Ok(c),
            _ => self.context(id),
        }
    }

    fn buffer(&self, id: u64) -> Result<BufferId, Status> {
        self.client.buffer(BufferId(id))
    }

    /// The stage's link, for the verbs that give the engine a sink.
    fn link(&self) -> Result<&StageLink, Status> {
        self.stage.as_ref().ok_or(Status::ConfigurationLocked)
    }
}

fn w<T>(r: Result<T, Status>) -> Result<T, wit::Status> {
    r.map_err(status_to_wit)
}

impl wit_profiler::Host for ProfilerHost {
    fn create_context(&mut self) -> Result<u64, wit::Status> {
        w(self.setup("create-context", |l| {
            Ok(l.client.create_context(&l.profiler)?.0)
        }))
    }

    fn start_context(&mut self, context: u64) -> Result<(), wit::Status> {
        w(self
            .context(context)
            .and_then(|c| self.profiler.start_context(c)))
    }

    fn stop_context(&mut self, context: u64) -> Result<(), wit::Status> {
        w(self
            .context(context)
            .and_then(|c| self.profiler.stop_context(c)))
    }

    fn is_context_active(&mut self, context: u64) -> Result<bool, wit::Status> {
        w(self
            .shared_context(context)
            .and_then(|c| self.profiler.is_context_active(c)))
    }

    fn create_buffer(
        &mut self,
        context: u64,
        size: u64,
        watermark: u64,
        policy: wit::BufferPolicy,
    ) -> Result<u64, wit::Status> {
        let policy = match policy {
            wit::BufferPolicy::Lossless => BufferPolicy::Lossless,
            wit::BufferPolicy::Discard => BufferPolicy::Discard,
        };
        w(self.setup("create-buffer", |l| {
            let ctx = l.context(context)?;
            let sink = l.link()?.buffers.clone();
            Ok(l.client
                .create_buffer(&l.profiler, ctx, size, watermark, policy, sink)?
                .0)
        }))
    }

    fn flush_buffer(&mut self, buffer: u64) -> Result<(), wit::Status> {
        // The records reach this plugin right after the current call returns:
        // a component instance cannot be re-entered while it is running.
        w(self
            .buffer(buffer)
            .and_then(|b| self.profiler.flush_buffer(b)))
    }

    fn create_callback_thread(&mut self) -> Result<u64, wit::Status> {
        w(self.setup("create-callback-thread", |l| {
            Ok(l.client.create_callback_thread(&l.profiler)?.0)
        }))
    }

    fn assign_callback_thread(&mut self, buffer: u64, thread: u64) -> Result<(), wit::Status> {
        w(self
            .setup("assign-callback-thread", |l| {
                let b = l.buffer(buffer)?;
                let thread = CallbackThreadId(thread);
                if thread != CallbackThreadId::DEFAULT && !l.client.owns_thread(thread) {
                    return Err(Status::ThreadNotFound);
                }
                l.profiler.assign_callback_thread(b, thread).map(|_| 0)
            })
            .map(drop))
    }

    fn configure_buffer_tracing(
        &mut self,
        context: u64,
        kind: u32,
        operations: Vec<u32>,
        buffer: u64,
    ) -> Result<(), wit::Status> {
        w(self
            .setup("configure-buffer-tracing", |l| {
                let ctx = l.context(context)?;
                let b = l.buffer(buffer)?;
                let kind = BufferTracingKind::from_raw(kind).ok_or(Status::KindNotFound)?;
                l.profiler
                    .configure_buffer_tracing(ctx, kind, &operations, b)
                    .map(|_| 0)
            })
            .map(drop))
    }

    fn configure_callback_tracing(
        &mut self,
        context: u64,
        kind: u32,
        operations: Vec<u32>,
    ) -> Result<(), wit::Status> {
        let granted = self.services.callbacks_granted();
        self.granted(
            granted,
            "configure-callback-tracing",
            "callback tracing",
            "callbacks",
        )?;
        w(self
            .setup("configure-callback-tracing", |l| {
                let ctx = l.shared_context(context)?;
                let kind = CallbackTracingKind::from_raw(kind).ok_or(Status::KindNotFound)?;
                l.profiler
                    .configure_callback_tracing(ctx, kind, &operations, l.link()?.callbacks.clone())
                    .map(|_| 0)
            })
            .map(drop))
    }

    fn configure_external_correlation_request(
        &mut self,
        context: u64,
        kinds: Vec<u32>,
    ) -> Result<(), wit::Status> {
        let granted = self.services.external_correlation_granted();
        self.granted(
            granted,
            "configure-external-correlation-request",
            "external-correlation requests",
            "external_correlation",
        )?;
        w(self
            .setup("configure-external-correlation-request", |l| {
                let ctx = l.shared_context(context)?;
                let kinds = kinds
                    .iter()
                    .map(|k| ExternalCorrelationKind::from_raw(*k).ok_or(Status::KindNotFound))
                    .collect::<Result<Vec<_>, _>>()?;
                l.profiler
                    .configure_external_correlation_request(ctx, &kinds, l.link()?.requests.clone())
                    .map(|_| 0)
            })
            .map(drop))
    }

    fn push_external_correlation_id(
        &mut self,
        context: u64,
        thread_id: u64,
        value: u64,
    ) -> Result<(), wit::Status> {
        w(self.shared_context(context).and_then(|c| {
            self.profiler
                .push_external_correlation_id(c, thread_id, value)
        }))
    }

    fn pop_external_correlation_id(
        &mut self,
        context: u64,
        thread_id: u64,
    ) -> Result<u64, wit::Status> {
        w(self
            .shared_context(context)
            .and_then(|c| self.profiler.pop_external_correlation_id(c, thread_id)))
    }
}
