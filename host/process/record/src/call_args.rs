//! Arguments of API calls for the outputs that write them: rocpd's
//! `rocpd_arg`, one row per argument of each call, as rocprofv3 writes it.
//!
//! Buffer records carry no arguments (rendering them costs more than most
//! calls), so a run that asks for them (`--api-args`, with rocpd among its
//! outputs) subscribes to the API kinds' callbacks on its own context
//! ([`crate::own::OwnContext::calls`]):
//! at each call's ENTER the interception's rendered arguments are kept
//! here by the call's internal correlation id, and the journal writes them
//! ([`crate::journal::JournalSink`], an `Args` frame) just before each
//! batch. A call's record is buffered when the call returns, after its
//! ENTER, so its arguments always precede it in the journal.
//!
//! Arguments of calls whose records are still in the engine's buffers when
//! the process is killed are lost with the process (their records are
//! kept by the buffers' durable halves); the rocpd file then has those
//! calls without arguments.

use std::sync::Mutex;

use rocwasm_core::{CallbackPayload, CallbackPhase, CallbackRecord};
use rocwasm_journal::{CallArg, CallArgs};

/// Arguments of calls not journaled yet.
#[derive(Default)]
pub struct PendingArgs {
    calls: Mutex<Vec<CallArgs>>,
}

impl PendingArgs {
    /// Keeps the arguments of a call at its ENTER (other phases and
    /// records are ignored).
    pub fn record(&self, r: &CallbackRecord) {
        if r.phase != Some(CallbackPhase::Enter) {
            return;
        }
        let CallbackPayload::Api { args, .. } = &r.payload else {
            return;
        };
        let call = CallArgs {
            correlation_id: r.correlation.internal,
            args: args
                .iter()
                .map(|a| CallArg {
                    type_name: a.type_name.clone(),
                    name: a.name.clone(),
                    value: a.value.clone(),
                })
                .collect(),
        };
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(call);
    }

    /// Everything kept so far, which is then forgotten.
    pub fn take(&self) -> Vec<CallArgs> {
        std::mem::take(&mut *self.calls.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocwasm_core::{Argument, CallbackTracingKind, ContextId, Correlation};

    fn call(phase: CallbackPhase, id: u64) -> CallbackRecord {
        CallbackRecord {
            context: ContextId(1),
            kind: CallbackTracingKind::HipRuntimeApi,
            operation: 1,
            phase: Some(phase),
            correlation: Correlation {
                internal: id,
                ..Correlation::default()
            },
            thread_id: 1,
            timestamp: 0,
            payload: CallbackPayload::Api {
                args: vec![Argument::new("sizeBytes", "size_t", "64")],
                retval: None,
            },
        }
    }

    #[test]
    fn a_call_is_kept_once_at_its_enter_and_taken_once() {
        let pending = PendingArgs::default();
        pending.record(&call(CallbackPhase::Enter, 7));
        pending.record(&call(CallbackPhase::Exit, 7));
        let taken = pending.take();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].correlation_id, 7);
        assert_eq!(
            taken[0].args,
            [CallArg {
                type_name: "size_t".into(),
                name: "sizeBytes".into(),
                value: "64".into()
            }]
        );
        assert!(pending.take().is_empty());
    }
}
