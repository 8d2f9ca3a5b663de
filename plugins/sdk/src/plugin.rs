//! The traits a plugin implements, and the glue the export macros use.
//!
//! A component's exports are free functions; a plugin wants state. The
//! export macros keep one instance of the plugin type (created with
//! `Default` on the first call) and route every export to its methods. Every
//! method has a default, so a plugin implements only what it uses.
//!
//! The host never calls into one instance concurrently (a component instance
//! is not reentrant), so `&mut self` is always safe to hand out.

use crate::types::{
    CallbackRecord, DeliveryInfo, ExternalCorrelationRequest, SummaryTable, ToolInfo,
};
use crate::{Batch, Edits};

/// An analysis plugin (world `analysis-plugin`). Export it with
/// [`export_analysis!`](crate::export_analysis).
pub trait AnalysisPlugin: Default + 'static {
    /// Called once, first. Return `false` to decline: nothing else is called.
    fn configure(&mut self, info: &ToolInfo) -> bool {
        let _ = info;
        true
    }

    /// Create contexts, buffers and services here: afterwards they are locked.
    /// An error disables the plugin and is reported with its text.
    fn init(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Buffered records, as columns read in place, on a delivery thread.
    fn deliver_batch(&mut self, info: &DeliveryInfo, batch: &Batch) {
        let _ = (info, batch);
    }

    /// A callback-tracing record, on the application thread. `user_data` is 0
    /// at ENTER; what ENTER returns comes back at EXIT. By default it is
    /// passed through unchanged.
    fn on_callback(&mut self, record: &CallbackRecord, user_data: u64) -> u64 {
        let _ = record;
        user_data
    }

    /// Return `Some(v)` to set the external correlation id of the record
    /// about to be created, `None` to let the pushed value stand.
    fn on_external_correlation_request(
        &mut self,
        request: &ExternalCorrelationRequest,
    ) -> Option<u64> {
        let _ = request;
        None
    }

    /// Called once, after the last delivery. Returns summary tables.
    fn fini(&mut self) -> Vec<SummaryTable> {
        Vec::new()
    }
}

/// An analysis whose results merge (world `mergeable-analysis-plugin`,
/// WIT 0.3.1): many instances, each over part of the records, fold into
/// the result one instance gives. Export it with
/// [`export_mergeable_analysis!`](crate::export_mergeable_analysis).
///
/// A *part* ends with [`take_partial`](Self::take_partial) instead of
/// `fini`; a *reducer* takes [`merge_partial`](Self::merge_partial) once
/// per partial and ends with `fini` (or `take_partial`, for a tree of
/// merges). The merge must be exact, associative and commutative: `rocwasm
/// plugin test` splits a trace at random points, merges the parts in
/// random trees and requires the tables of one pass. [`crate::partial`]
/// writes and reads the bytes; `rocwasm-stats`' [`Series`](crate::stats::Series)
/// merge exactly (integer sums).
pub trait MergeablePlugin: AnalysisPlugin {
    /// This instance's result so far, as bytes (in place of `fini`).
    fn take_partial(&mut self) -> Result<Vec<u8>, String>;

    /// Folds in a partial another instance took.
    fn merge_partial(&mut self, partial: &[u8]) -> Result<(), String>;
}

/// A transform stage (world `transform-plugin`): a batch in, a batch out.
/// Export it with [`export_transform!`](crate::export_transform).
pub trait TransformPlugin: Default + 'static {
    /// Called once, first. Return `false` to decline.
    fn configure(&mut self, info: &ToolInfo) -> bool {
        let _ = info;
        true
    }

    /// Read configuration here. Transforms configure no services.
    fn init(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Says in `edits` what the following stages see instead of `batch`:
    /// rows to keep, columns to replace ([`Edits`]). By default nothing
    /// changes.
    fn transform_batch(&mut self, info: &DeliveryInfo, batch: &Batch, edits: &mut Edits) {
        let _ = (info, batch, edits);
    }

    /// Called once, after the last batch. Returns summary tables.
    fn fini(&mut self) -> Vec<SummaryTable> {
        Vec::new()
    }
}

/// Installs, once, a panic hook that logs the panic through the host before
/// the component traps: on `wasm32-unknown-unknown` a panic otherwise shows
/// up only as an anonymous `unreachable` trap.
#[doc(hidden)]
pub fn install_panic_hook() {
    #[cfg(target_arch = "wasm32")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| {
                crate::log::log(crate::log::Level::Error, &format!("plugin {info}"));
            }));
        });
    }
}

/// The batch `deliver-batch` or `transform-batch` received; `None`, with an
/// error logged, when the host's buffer is not one (a host bug: the call
/// does nothing rather than trap).
#[doc(hidden)]
pub fn read_batch(bytes: Vec<u8>) -> Option<Batch> {
    match Batch::from_bytes(bytes) {
        Ok(b) => Some(b),
        Err(e) => {
            crate::log::log(
                crate::log::Level::Error,
                &format!("rocwasm-plugin-sdk: the host sent a batch this SDK cannot read ({e}); it is skipped"),
            );
            None
        }
    }
}
