//! Callback threads: the threads that decode buffers and call tools' sinks.
//!
//! One default thread serves every buffer; tools may create more during
//! initialization and assign buffers to them, so that a slow tool does not
//! delay another tool's deliveries. Each thread owns an unbounded job queue;
//! producers only ever `send` to it (never wait on it).

use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{JoinHandle, ThreadId};

use crossbeam_channel::{unbounded, Sender};

use crate::buffer::{mark_callback_thread, Job, Route};
use crate::callback::CallbackThreadId;
use crate::kind::Status;

pub(crate) struct CallbackThread {
    id: CallbackThreadId,
    sender: Sender<Job>,
    os_thread: Arc<OnceLock<ThreadId>>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

impl CallbackThread {
    pub(crate) fn spawn(id: CallbackThreadId) -> Result<CallbackThread, Status> {
        let (sender, receiver) = unbounded::<Job>();
        let os_thread = Arc::new(OnceLock::new());
        let os = Arc::clone(&os_thread);
        let handle = std::thread::Builder::new()
            .name(format!("rocwasm-cb-{}", id.0))
            .spawn(move || {
                let _ = os.set(std::thread::current().id());
                mark_callback_thread();
                while let Ok(job) = receiver.recv() {
                    match job {
                        Job::Deliver(delivery) => delivery.run(),
                        Job::Stop => break,
                    }
                }
                // Dropping the last receiver closes the channel and drops
                // what is still queued behind `Stop` (a flush racing with
                // finalization): those deliveries release their waiters.
                drop(receiver);
            })
            .map_err(|_| Status::Error)?;
        // `flush` compares against the thread id; make it known before use.
        let _ = os_thread.set(handle.thread().id());
        Ok(CallbackThread {
            id,
            sender,
            os_thread,
            handle: Mutex::new(Some(handle)),
        })
    }

    pub(crate) fn route(&self) -> Route {
        Route {
            thread: self.id,
            sender: self.sender.clone(),
            os_thread: Arc::clone(&self.os_thread),
        }
    }

    /// Stops the thread after the jobs already queued; joins it unless called
    /// from the thread itself.
    pub(crate) fn stop(&self) {
        let _ = self.sender.send(Job::Stop);
        let handle = self.handle.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = handle {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;
    use crate::batch::{ApiCall, Batch};
    use crate::buffer::Buffer;
    use crate::callback::{BufferId, ContextId, DeliveryInfo};
    use crate::kind::BufferPolicy;
    use crate::record::Record;

    fn record() -> Record {
        Record::Api(ApiCall {
            kind: 5,
            operation: 1,
            correlation_id: 1,
            thread_id: 1,
            ..ApiCall::default()
        })
    }

    /// A delivery queued behind `Stop` (a flush racing with finalize stopping
    /// the thread) never runs; whoever waits for it must still be released.
    #[test]
    fn a_delivery_queued_behind_stop_releases_its_waiters() {
        let t = CallbackThread::spawn(CallbackThreadId(7)).unwrap();
        let (entered_tx, entered) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let (entered_tx, release_rx) = (Mutex::new(entered_tx), Mutex::new(release_rx));
        let sink = Arc::new(move |_: DeliveryInfo, _: Batch| {
            let _ = entered_tx.lock().unwrap().send(());
            let _ = release_rx.lock().unwrap().recv();
        });
        let buffer = Buffer::new(
            BufferId(1),
            ContextId(1),
            4096,
            0,
            BufferPolicy::Lossless,
            sink,
            t.route(),
            None,
        )
        .unwrap();
        // Watermark 0: delivered at once; the sink holds the thread.
        buffer.push(&record());
        entered.recv().unwrap();
        t.sender.send(Job::Stop).unwrap();
        // Swapped out and queued behind `Stop`.
        buffer.push(&record());
        assert_eq!(buffer.epoch(), 2);
        release.send(()).unwrap();

        let (done_tx, done) = mpsc::channel();
        let b = Arc::clone(&buffer);
        std::thread::spawn(move || done_tx.send(b.flush()));
        // Generous: only a flush that waits forever reaches it.
        let flushed = done.recv_timeout(Duration::from_secs(60));
        assert_eq!(
            flushed,
            Ok(Ok(())),
            "flush waited for a delivery that never runs"
        );
        t.stop();
    }
}
