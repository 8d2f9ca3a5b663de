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
use crate::convert::{Projection, ProjectionError};
use crate::packed_world::{ColumnId, Selection};

/// The `delivery` imports of one plugin: its column projection and whether
/// it may still change.
#[derive(Debug)]
pub(crate) struct DeliveryHost {
    /// The stage name, for the warning a bad selection logs.
    plugin: Arc<str>,
    /// The columns `deliver-batch` sends (all of them until the plugin
    /// selects some).
    pub projection: Projection,
    /// The same for a 0.3.0 plugin, by the schema's ids.
    pub selection: Selection,
    /// The packed batch of a 0.3.0 plugin's last delivery, kept so the
    /// next one reuses its memory.
    pub packed: Vec<u8>,
    /// Pack as a host with a newer schema would (`HostEnv::newer_schema`).
    pub newer_schema: bool,
    locked: bool,
}

impl DeliveryHost {
    /// Every column, open to `select-columns` until [`Self::lock`].
    pub fn new(plugin: Arc<str>, newer_schema: bool) -> Self {
        DeliveryHost {
            plugin,
            projection: Projection::default(),
            selection: Selection::default(),
            packed: Vec::new(),
            newer_schema,
            locked: false,
        }
    }

    /// Called when batches start to flow: later `select-columns` calls fail.
    pub fn lock(&mut self) {
        self.locked = true;
    }

    /// `delivery.select-columns` of a 0.3.0 plugin: the columns' ids.
    pub fn select_ids(&mut self, table: &str, columns: &[String]) -> Result<Vec<ColumnId>, Status> {
        self.choose(|host| host.selection.select(table, columns))
    }

    /// A selection while it may still change: `configuration-locked` once
    /// batches flow, `invalid-argument` (and one warning naming the name)
    /// for a name the schema does not have.
    fn choose<T>(
        &mut self,
        select: impl FnOnce(&mut Self) -> Result<T, ProjectionError>,
    ) -> Result<T, Status> {
        if self.locked {
            return Err(Status::ConfigurationLocked);
        }
        select(self).map_err(|e| {
            tracing::warn!(plugin = &*self.plugin, "delivery.select-columns: {e}");
            Status::InvalidArgument
        })
    }
}

impl delivery::Host for DeliveryHost {
    fn select_columns(&mut self, table: String, columns: Vec<String>) -> Result<(), Status> {
        self.choose(|host| host.projection.select(&table, &columns))
    }
}
