//! The bulk-status queue: jobs accepted with 202 and applied afterwards.
//!
//! `POST /orders/bulk-status` validates synchronously, then [`BulkQueue::enqueue`]s
//! a [`BulkJob`] and answers 202. One worker task applies jobs in arrival order:
//! it waits while the queue is paused, sleeps the configured apply delay, then
//! applies each order id, skipping unknown ids and ids for which the target
//! status is not viable.
//!
//! [`BulkControl`] is what tests see: a `pending` count (incremented before the
//! 202 is sent, decremented after a job is applied) they can wait on, and a
//! pause switch to observe the "queued but not yet applied" state without any
//! sleeping.

use std::{sync::Arc, time::Duration};

use chrono::NaiveDate;
use tokio::sync::{mpsc, watch};

use crate::{
    clock,
    store::{ChangeError, StatusChange, Store},
};

/// One accepted bulk request.
#[derive(Debug, Clone)]
pub(crate) struct BulkJob {
    /// Order ids in request order.
    pub order_ids: Vec<i64>,
    /// The change to apply to each.
    pub change: StatusChange,
    /// A due date to set on each order that changed status, if given.
    pub due_date: Option<NaiveDate>,
}

/// Shared state of the queue: pending count and pause switch.
#[derive(Debug)]
pub(crate) struct BulkControl {
    /// Jobs accepted but not yet fully applied.
    pending: watch::Sender<usize>,
    /// While `true`, the worker applies nothing.
    paused: watch::Sender<bool>,
}

impl BulkControl {
    /// Number of jobs accepted but not yet applied.
    pub fn pending(&self) -> usize {
        *self.pending.borrow()
    }

    /// Resolves once no job is pending.
    pub async fn wait_idle(&self) {
        let mut rx = self.pending.subscribe();
        // `self` keeps the sender alive, so waiting cannot fail.
        let _ = rx.wait_for(|&pending| pending == 0).await;
    }

    /// Stops (`true`) or resumes (`false`) applying jobs.
    pub fn set_paused(&self, paused: bool) {
        self.paused.send_replace(paused);
    }
}

/// The handlers' side of the queue.
#[derive(Debug, Clone)]
pub(crate) struct BulkQueue {
    /// Feeds the worker.
    tx: mpsc::UnboundedSender<BulkJob>,
    /// Shared with the worker and the [`crate::Sandbox`] handle.
    control: Arc<BulkControl>,
}

impl BulkQueue {
    /// Starts the worker on the current runtime. It stops once every
    /// `BulkQueue` clone is dropped (the server has shut down).
    pub fn spawn(store: Arc<Store>, apply_delay: Duration) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let control = Arc::new(BulkControl {
            pending: watch::Sender::new(0),
            paused: watch::Sender::new(false),
        });
        tokio::spawn(run_worker(rx, store, Arc::clone(&control), apply_delay));
        Self { tx, control }
    }

    /// The shared control.
    pub fn control(&self) -> Arc<BulkControl> {
        Arc::clone(&self.control)
    }

    /// Queues a job; the pending count includes it before this returns.
    pub fn enqueue(&self, job: BulkJob) {
        self.control.pending.send_modify(|pending| *pending += 1);
        if self.tx.send(job).is_err() {
            // The worker is gone (runtime shutting down): nothing will apply it.
            tracing::warn!("bulk worker stopped; dropping job");
            self.control.pending.send_modify(|pending| *pending -= 1);
        }
    }
}

/// Applies jobs one by one until the queue closes.
async fn run_worker(
    mut rx: mpsc::UnboundedReceiver<BulkJob>,
    store: Arc<Store>,
    control: Arc<BulkControl>,
    apply_delay: Duration,
) {
    let mut paused = control.paused.subscribe();
    while let Some(job) = rx.recv().await {
        let _ = paused.wait_for(|&is_paused| !is_paused).await;
        if !apply_delay.is_zero() {
            tokio::time::sleep(apply_delay).await;
        }
        apply(&store, &job);
        control.pending.send_modify(|pending| *pending -= 1);
    }
}

/// Applies one job to the store.
fn apply(store: &Store, job: &BulkJob) {
    let mut applied = 0usize;
    for &id in &job.order_ids {
        match store.change_status(id, &job.change) {
            Ok(()) => {
                applied += 1;
                if let Some(due) = job.due_date {
                    store.update(id, |record| {
                        record.set_due_date(Some(due), None, clock::now())
                    });
                }
            }
            Err(ChangeError::NotFound) => tracing::debug!(id, "bulk: skipping unknown order"),
            Err(ChangeError::NotViable) => tracing::debug!(
                id,
                status = job.change.status.code,
                "bulk: skipping order for which the status is not viable"
            ),
        }
    }
    tracing::info!(
        applied,
        skipped = job.order_ids.len() - applied,
        status = job.change.status.code,
        "bulk status update applied"
    );
}
