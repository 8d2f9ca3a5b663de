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
                        Job::Deliver { buffer, epoch, end } => buffer.deliver(epoch, end),
                        Job::Stop => break,
                    }
                }
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
