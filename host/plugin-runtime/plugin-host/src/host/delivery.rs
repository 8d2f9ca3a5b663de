//! The `delivery` interface: a plugin chooses the columns it is sent.
//!
//! The choice is kept in the plugin's store ([`DeliveryHost`]) and read by
//! `Plugin::deliver_counted` when it lowers a batch (see
//! `crate::convert::BatchView::project`). It is open until the first
//! delivery; a restarted instance has a fresh store and declares again in its
//! `init`.

use std::sync::Arc;

use crate::bindings::analysis::rocwasm::plugin::delivery;
use crate::bindings::types::Status;
use crate::convert::Projection;

/// The `delivery` imports of one plugin: its column projection and whether
/// it may still change.
#[derive(Debug)]
pub(crate) struct DeliveryHost {
    /// The stage name, for the warning a bad selection logs.
    plugin: Arc<str>,
    /// The columns `deliver-batch` sends (all of them until the plugin
    /// selects some).
    pub projection: Projection,
    locked: bool,
}

impl DeliveryHost {
    /// Every column, open to `select-columns` until [`Self::lock`].
    pub fn new(plugin: Arc<str>) -> Self {
        DeliveryHost {
            plugin,
            projection: Projection::default(),
            locked: false,
        }
    }

    /// Called when batches start to flow: later `select-columns` calls fail.
    pub fn lock(&mut self) {
        self.locked = true;
    }
}

impl delivery::Host for DeliveryHost {
    fn select_columns(&mut self, table: String, columns: Vec<String>) -> Result<(), Status> {
        if self.locked {
            return Err(Status::ConfigurationLocked);
        }
        self.projection.select(&table, &columns).map_err(|e| {
            tracing::warn!(plugin = &*self.plugin, "delivery.select-columns: {e}");
            Status::InvalidArgument
        })
    }
}
