//! A mirror on a thread of its own: for callers that are not async themselves (the CLI's
//! `serve`, the demo, the benchmark). The thread runs its own single-threaded tokio runtime;
//! [`MirrorThread::start`] returns once the mirror has started (its initial copy made, when
//! one was needed) or failed to, and [`MirrorThread::stop`] stops it cleanly (confirming what
//! is durable) and waits for the thread.

use crate::apply::{Mirror, MirrorError, MirrorHandle, MirrorOptions};
use plexus::Database;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

pub struct MirrorThread {
    handle: MirrorHandle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<Result<(), MirrorError>>>,
}

impl MirrorThread {
    /// Starts `Mirror::start(db, options)` on a new thread and waits until it has started.
    pub fn start(db: Arc<Database>, options: MirrorOptions) -> Result<MirrorThread, MirrorError> {
        let (started_tx, started_rx) = mpsc::channel();
        let (stop, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("plexus-mirror".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                runtime.block_on(async move {
                    let mirror = match Mirror::start(db, options).await {
                        Ok(mirror) => mirror,
                        Err(e) => {
                            let _ = started_tx.send(None);
                            return Err(e);
                        }
                    };
                    let _ = started_tx.send(Some(mirror.handle()));
                    mirror
                        .run_until(async move {
                            let _ = stop_rx.await;
                        })
                        .await
                })
            })?;
        match started_rx.recv() {
            Ok(Some(handle)) => Ok(MirrorThread {
                handle,
                stop: Some(stop),
                thread: Some(thread),
            }),
            // the thread ended before starting: its result says why
            _ => match thread.join() {
                Ok(Err(e)) => Err(e),
                Ok(Ok(())) => unreachable!("a mirror that did not start returns its error"),
                Err(_) => Err(MirrorError::Panicked),
            },
        }
    }

    /// The running mirror's status.
    pub fn handle(&self) -> &MirrorHandle {
        &self.handle
    }

    /// Whether the mirror has stopped by itself (a fatal error: [`MirrorThread::stop`]
    /// returns it).
    pub fn has_stopped(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Stops the mirror cleanly and returns how it ended.
    pub fn stop(mut self) -> Result<(), MirrorError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), MirrorError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take() {
            Some(thread) => thread.join().map_err(|_| MirrorError::Panicked)?,
            None => Ok(()),
        }
    }
}

impl Drop for MirrorThread {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
