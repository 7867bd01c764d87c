//! Subscription threads: one per subscribed database, each owning a
//! [`KeyspaceSubscriber`] and forwarding its events to the daemon's single channel, so the
//! run loop blocks on one receiver for every database and for its controls.
//!
//! Invariants:
//! - Per database, batches are forwarded in the order the subscriber produced them.
//! - After a connection loss the thread reports [`Msg::Lost`], resyncs with exponential
//!   backoff until it succeeds (or the daemon stops), then forwards the resync's differences
//!   in one batch marked `resynced` — possibly empty, so the run loop always learns that the
//!   database came back.
//! - The thread checks the stop flag at least every [`FORWARD_POLL`] and exits when it is
//!   set or when the daemon's receiver is gone.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::swss::{ChangeEvent, Db, KeyspaceSubscriber};

use super::{Backoff, Msg};

/// How long a subscription thread blocks on its subscriber before checking the stop flag.
pub const FORWARD_POLL: Duration = Duration::from_millis(100);

/// What a subscription thread forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Filter {
    /// Every event.
    All,
    /// Only the SET of `PORT_TABLE:PortInitDone` (APPL_DB), as [`Msg::PortInitDone`] (and
    /// an empty `resynced` batch after a resync); the thread ends after forwarding it.
    PortInitDone,
}

/// Starts the thread for `sub`.
pub(super) fn spawn(
    mut sub: KeyspaceSubscriber,
    filter: Filter,
    tx: Sender<Msg>,
    stop: Arc<AtomicBool>,
    round_trips: Arc<AtomicU64>,
    backoff: Backoff,
) -> std::io::Result<JoinHandle<()>> {
    let db = sub.db();
    std::thread::Builder::new()
        .name(format!("bufmgrd-sub@{}", db.id()))
        .spawn(move || {
            let mut counted = sub.data_connection().round_trips();
            let mut resynced = false;
            while !stop.load(Ordering::Relaxed) {
                let polled = sub.poll(FORWARD_POLL);
                let rt = sub.data_connection().round_trips();
                round_trips.fetch_add(rt.saturating_sub(counted), Ordering::Relaxed);
                counted = rt;
                match polled {
                    Ok(events) => {
                        if events.is_empty() && !resynced {
                            continue;
                        }
                        if !forward(db, filter, events, std::mem::take(&mut resynced), &tx) {
                            return;
                        }
                    }
                    Err(e) if e.is_connection_error() => {
                        if tx
                            .send(Msg::Lost {
                                db,
                                detail: e.to_string(),
                            })
                            .is_err()
                        {
                            return;
                        }
                        if !resync(&mut sub, &stop, backoff.clone()) {
                            return;
                        }
                        // The resync re-subscribed on fresh connections.
                        counted = sub.data_connection().round_trips();
                        resynced = true;
                    }
                    Err(e) => {
                        tracing::warn!(db = %db, error = %e, "keyspace event could not be read; continuing");
                    }
                }
            }
        })
}

/// Forwards one batch; returns false when the daemon is gone or the thread is done.
fn forward(
    db: Db,
    filter: Filter,
    events: Vec<ChangeEvent>,
    resynced: bool,
    tx: &Sender<Msg>,
) -> bool {
    match filter {
        Filter::All => tx
            .send(Msg::Events {
                db,
                events,
                resynced,
            })
            .is_ok(),
        Filter::PortInitDone => {
            // The run loop must learn that this subscription is back, as for the others.
            if resynced
                && tx
                    .send(Msg::Events {
                        db,
                        events: Vec::new(),
                        resynced,
                    })
                    .is_err()
            {
                return false;
            }
            let seen = events
                .iter()
                .any(|e| matches!(e, ChangeEvent::Set { key, .. } if key == "PortInitDone"));
            if seen {
                let _ = tx.send(Msg::PortInitDone);
                return false;
            }
            true
        }
    }
}

/// Resyncs until it succeeds (true) or the daemon stops (false).
fn resync(sub: &mut KeyspaceSubscriber, stop: &AtomicBool, mut backoff: Backoff) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        match sub.resync() {
            Ok(()) => return true,
            Err(e) => {
                let wait = backoff.next_delay();
                tracing::debug!(db = %sub.db(), error = %e, retry_in = ?wait, "resubscription failed");
                if !sleep_unless_stopped(stop, wait) {
                    return false;
                }
            }
        }
    }
}

/// Sleeps `d` in slices of at most [`FORWARD_POLL`]; false if the stop flag was set.
pub(super) fn sleep_unless_stopped(stop: &AtomicBool, d: Duration) -> bool {
    let mut left = d;
    while !left.is_zero() {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let step = left.min(FORWARD_POLL);
        std::thread::sleep(step);
        left -= step;
    }
    !stop.load(Ordering::Relaxed)
}
