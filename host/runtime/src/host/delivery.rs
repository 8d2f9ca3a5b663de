//! The `delivery` interface: a plugin chooses the columns it is sent.
//!
//! The choice is kept in the plugin's store ([`DeliveryChoice`]) and read by
//! `Plugin::deliver_counted` when it lowers a batch (see
//! `crate::convert::BatchView::project`). It is open until the first
//! delivery; a restarted instance has a fresh store and declares again in its
//! `init`.

use crate::bindings::analysis::rocwasm::plugin::delivery;
use crate::bindings::types::Status;
use crate::convert::Projection;
use crate::state::PluginState;

/// One plugin's column projection and whether it may still change.
#[derive(Debug, Default)]
pub(crate) struct DeliveryChoice {
    pub projection: Projection,
    locked: bool,
}

impl DeliveryChoice {
    /// Called when batches start to flow: later `select-columns` calls fail.
    pub fn lock(&mut self) {
        self.locked = true;
    }
}

impl delivery::Host for PluginState {
    fn select_columns(&mut self, table: String, columns: Vec<String>) -> Result<(), Status> {
        if self.delivery.locked {
            return Err(Status::ConfigurationLocked);
        }
        self.delivery
            .projection
            .select(&table, &columns)
            .map_err(|e| {
                tracing::warn!(plugin = &*self.name, "delivery.select-columns: {e}");
                Status::InvalidArgument
            })
    }
}
