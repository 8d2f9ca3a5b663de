//! What a running plugin is handed: batches of its own buffers (analyses),
//! batches to transform (transforms), callback-tracing records and
//! external-correlation requests. Each counts the records offered to the
//! stage; what the plugin cannot take (it is disabled or waits out a
//! restart) is missed and added to its open failure report.

use super::instance::{export, Instance};
use super::{Pace, Plugin};
use rocwasm_core::Batch;

use crate::bindings::types as wit;
use crate::convert;
use crate::failure::{Aborted, Failed, FailureCause};
use crate::world::World;

impl Plugin {
    /// Delivers a batch of the plugin's own buffers to an analysis
    /// (transforms ignore it).
    pub(crate) fn deliver(
        &mut self,
        info: &wit::DeliveryInfo,
        batch: &Batch,
    ) -> Result<(), Aborted> {
        let n = batch.len() as u64;
        self.deliver_counted(info, batch, n, Pace::Live)
    }

    /// As [`Self::deliver`]; `records` is the batch's size (what is missed if
    /// the plugin cannot take it), `pace` who waits out a restart backoff.
    pub(crate) fn deliver_counted(
        &mut self,
        info: &wit::DeliveryInfo,
        batch: &Batch,
        records: u64,
        pace: Pace,
    ) -> Result<(), Aborted> {
        self.offered += records;
        if !self.ready(pace) {
            self.miss(records);
            return Ok(());
        }
        self.store.data_mut().delivery.lock();
        let r = self.call(
            export::DELIVER_BATCH,
            self.spec.limits.deadline,
            |s, i| match i {
                Instance::Analysis(a) => a.deliver(s, info, batch),
                Instance::Legacy(l) if l.world() == World::Analysis => l.deliver(s, info, batch),
                Instance::Transform(_) | Instance::Legacy(_) => Ok(()),
            },
        );
        match r {
            Ok(()) => {
                self.taken += records;
                Ok(())
            }
            Err(failed) => self.fail(failed, records),
        }
    }

    /// Runs a transform. `None` when it could not (the caller passes the
    /// input on unchanged).
    pub(crate) fn transform(
        &mut self,
        info: &wit::DeliveryInfo,
        batch: &Batch,
        pace: Pace,
    ) -> Result<Option<Batch>, Aborted> {
        let n = batch.len() as u64;
        self.offered += n;
        if !self.ready(pace) {
            self.miss(n);
            return Ok(None);
        }
        // A 0.3.0 transform chooses its columns too, until batches flow.
        self.store.data_mut().delivery.lock();
        let r = self.call(
            export::TRANSFORM_BATCH,
            self.spec.limits.deadline,
            |s, i| match i {
                // 0.2.0's transform takes and returns its WIT batch: the
                // tables it knows, copied; the others pass by unchanged.
                Instance::Transform(t) => t
                    .rocwasm_plugin_transform()
                    .call_transform_batch(s, info, &convert::batch_to_wit(batch.clone()))
                    .map(|b| Some(convert::legacy_reply(b, batch))),
                Instance::Legacy(l) if l.world() == World::Transform => {
                    l.transform(s, info, batch).map(Some)
                }
                Instance::Analysis(_) | Instance::Legacy(_) => Ok(None),
            },
        );
        match r {
            Ok(Some(Err(why))) => {
                let cause = FailureCause::MalformedReply(why);
                self.fail(Failed::returned(cause, export::TRANSFORM_BATCH), n)?;
                Ok(None)
            }
            Ok(Some(Ok(out))) if !out.is_consistent() => {
                let cause = FailureCause::MalformedReply("columns of unequal length".into());
                self.fail(Failed::returned(cause, export::TRANSFORM_BATCH), n)?;
                Ok(None)
            }
            Ok(Some(Ok(out))) => {
                self.taken += n;
                Ok(Some(out))
            }
            Ok(None) => {
                self.taken += n;
                Ok(None)
            }
            Err(failed) => {
                self.fail(failed, n)?;
                Ok(None)
            }
        }
    }

    /// A callback-tracing record; returns the new user data.
    pub(crate) fn on_callback(
        &mut self,
        record: &wit::CallbackRecord,
        user_data: u64,
    ) -> Result<u64, Aborted> {
        self.offered += 1;
        if !self.ready(Pace::Live) {
            self.miss(1);
            return Ok(user_data);
        }
        let budget = self.spec.limits.callback_deadline;
        let r = self.call(export::ON_CALLBACK, budget, |s, i| match i {
            Instance::Analysis(a) => a
                .plugin
                .rocwasm_plugin_analysis()
                .call_on_callback(s, record, user_data),
            Instance::Legacy(l) => l.on_callback(s, record, user_data).unwrap_or(Ok(user_data)),
            Instance::Transform(_) => Ok(user_data),
        });
        match r {
            Ok(v) => {
                self.taken += 1;
                Ok(v)
            }
            Err(failed) => self.fail(failed, 1).map(|_| user_data),
        }
    }

    /// An external-correlation request: `Some(v)` sets the id, `None` keeps the pushed one.
    pub(crate) fn on_external_correlation_request(
        &mut self,
        request: wit::ExternalCorrelationRequest,
    ) -> Result<Option<u64>, Aborted> {
        if !self.ready(Pace::Live) {
            return Ok(None);
        }
        let budget = self.spec.limits.callback_deadline;
        let r = self.call(
            export::ON_EXTERNAL_CORRELATION_REQUEST,
            budget,
            |s, i| match i {
                Instance::Analysis(a) => a
                    .plugin
                    .rocwasm_plugin_analysis()
                    .call_on_external_correlation_request(s, request),
                Instance::Legacy(l) => l.on_request(s, &request).unwrap_or(Ok(None)),
                Instance::Transform(_) => Ok(None),
            },
        );
        match r {
            Ok(v) => Ok(v),
            Err(failed) => self.fail(failed, 0).map(|_| None),
        }
    }
}
