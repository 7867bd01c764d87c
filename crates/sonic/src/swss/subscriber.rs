//! A SubscriberStateTable-compatible reader of CONFIG_DB / STATE_DB tables: initial
//! enumeration, then keyspace notifications, each resolved by re-reading the hash.
//!
//! How it works: a dedicated pub/sub connection, owned by a background thread,
//! `PSUBSCRIBE`s `__keyspace@<db>__:<TABLE><sep>*` for every table and forwards each
//! notification (channel, event name) over an in-process channel. [`KeyspaceSubscriber::poll`]
//! drains the forwarded notifications and resolves them on a second (data) connection:
//! event `del` (also `expired`, `evicted`, `rename_from`, which remove the key without a
//! `del` event) becomes [`ChangeEvent::Del`]; any other event re-reads the whole hash and
//! becomes [`ChangeEvent::Set`] with all current fields, or nothing if the key no longer
//! exists or is not a hash (as SubscriberStateTable does; a `del` event follows in that
//! case). All hashes of one poll are read with one pipeline (1 round trip).
//!
//! Invariants:
//! - The subscription is established *before* the enumeration, so no change is missed;
//!   a change may be reported twice (once by the enumeration, once by its notification),
//!   and a SET always carries the hash as read at poll time, never older data.
//! - Per key, events are delivered in notification order.
//! - Connection loss of either connection is detected (the listener sees EOF or an I/O
//!   error immediately; the data connection on its next request): [`KeyspaceSubscriber::poll`]
//!   first delivers the events resolved before the loss, then returns
//!   [`SwssError::SubscriptionLost`] until [`KeyspaceSubscriber::resync`] succeeds.
//! - [`KeyspaceSubscriber::resync`] reconnects, re-applies the keyspace-notification
//!   configuration (a restarted server has lost it), re-subscribes, re-enumerates, and queues
//!   a DEL for every key previously delivered as present but now absent, then a SET for every
//!   present key. After delivering those the consumer's view equals the database.
//! - The background thread holds no lock and exits within [`LISTENER_POLL`] of the
//!   subscriber being dropped or resynced (it is joined).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::conn::{DbConnection, Endpoint};
use super::error::{Result, SwssError};
use super::keys::{Db, Fields, TableName};
use super::table::{enumerate, read_hashes};

/// How often the listener thread checks whether it should stop.
pub const LISTENER_POLL: Duration = Duration::from_millis(50);

/// A change of one row of a subscribed table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeEvent {
    /// The row exists with these fields (all of them, as currently in the database).
    Set {
        /// The table.
        table: TableName,
        /// The object key.
        key: String,
        /// All fields of the hash (never empty).
        fields: Fields,
    },
    /// The row was deleted.
    Del {
        /// The table.
        table: TableName,
        /// The object key.
        key: String,
    },
}

impl ChangeEvent {
    /// The table of the changed row.
    pub fn table(&self) -> &TableName {
        match self {
            ChangeEvent::Set { table, .. } | ChangeEvent::Del { table, .. } => table,
        }
    }

    /// The object key of the changed row.
    pub fn key(&self) -> &str {
        match self {
            ChangeEvent::Set { key, .. } | ChangeEvent::Del { key, .. } => key,
        }
    }
}

/// Options of a [`KeyspaceSubscriber`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriberOptions {
    /// Whether to enable the needed `notify-keyspace-events` flags on (re)subscription
    /// (see [`DbConnection::ensure_keyspace_events`]). Default true.
    pub configure_keyspace_events: bool,
    /// Maximum notifications resolved per [`KeyspaceSubscriber::poll`]. Default 1024.
    pub max_batch: usize,
}

impl Default for SubscriberOptions {
    fn default() -> Self {
        SubscriberOptions {
            configure_keyspace_events: true,
            max_batch: 1024,
        }
    }
}

/// What the listener thread forwards.
enum Notice {
    /// A keyspace notification: channel name and event name.
    Event { channel: String, event: String },
    /// The pub/sub connection failed; the thread has exited.
    Lost(String),
}

/// The background pub/sub listener.
struct Listener {
    stop: Arc<AtomicBool>,
    rx: Receiver<Notice>,
    handle: Option<JoinHandle<()>>,
}

impl Listener {
    /// Starts the thread and waits until every pattern is subscribed.
    fn start(endpoint: &Endpoint, db: Db, patterns: Vec<String>) -> Result<Listener> {
        let client = endpoint.client(db)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let thread_endpoint = endpoint.clone();
        let thread_stop = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name(format!("swss-keyspace@{}", db.id()))
            .spawn(move || {
                listen(
                    &thread_endpoint,
                    &client,
                    &patterns,
                    &tx,
                    &ready_tx,
                    &thread_stop,
                )
            })
            .map_err(|e| SwssError::SubscriptionLost {
                detail: format!("cannot spawn listener thread: {e}"),
            })?;
        let mut listener = Listener {
            stop,
            rx,
            handle: Some(handle),
        };
        let wait = endpoint.timeout.saturating_mul(2);
        match ready_rx.recv_timeout(wait) {
            Ok(Ok(())) => Ok(listener),
            Ok(Err(e)) => {
                listener.shutdown();
                Err(e)
            }
            Err(_) => {
                listener.shutdown();
                Err(SwssError::Timeout {
                    what: "keyspace subscription",
                    waited: wait,
                })
            }
        }
    }

    /// Asks the thread to stop and joins it.
    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Body of the listener thread.
fn listen(
    endpoint: &Endpoint,
    client: &redis::Client,
    patterns: &[String],
    tx: &Sender<Notice>,
    ready: &SyncSender<Result<()>>,
    stop: &AtomicBool,
) {
    let mut conn = match endpoint.connect(client) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut pubsub = conn.as_pubsub();
    for p in patterns {
        if let Err(e) = pubsub.psubscribe(p) {
            let _ = ready.send(Err(SwssError::redis("PSUBSCRIBE", e)));
            return;
        }
    }
    if let Err(e) = pubsub.set_read_timeout(Some(LISTENER_POLL)) {
        let _ = ready.send(Err(SwssError::redis("set read timeout", e)));
        return;
    }
    if ready.send(Ok(())).is_err() {
        return;
    }
    while !stop.load(Ordering::Relaxed) {
        match pubsub.get_message() {
            Ok(msg) => {
                let notice = Notice::Event {
                    channel: msg.get_channel_name().to_owned(),
                    event: msg.get_payload().unwrap_or_default(),
                };
                if tx.send(notice).is_err() {
                    return;
                }
            }
            Err(e) if e.is_timeout() => {}
            Err(e) => {
                let _ = tx.send(Notice::Lost(e.to_string()));
                return;
            }
        }
    }
}

/// How a keyspace event is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolution {
    /// The key is gone.
    Deleted,
    /// Re-read the hash.
    Reread,
}

fn classify(event: &str) -> Resolution {
    match event {
        "del" | "expired" | "evicted" | "rename_from" => Resolution::Deleted,
        _ => Resolution::Reread,
    }
}

/// Subscribes to tables of CONFIG_DB or STATE_DB (see the module docs).
pub struct KeyspaceSubscriber {
    endpoint: Endpoint,
    db: Db,
    tables: Vec<TableName>,
    options: SubscriberOptions,
    data: DbConnection,
    listener: Option<Listener>,
    queued: VecDeque<ChangeEvent>,
    known: BTreeMap<TableName, BTreeSet<String>>,
    lost: Option<String>,
}

impl std::fmt::Debug for KeyspaceSubscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyspaceSubscriber")
            .field("db", &self.db)
            .field("tables", &self.tables)
            .field("queued", &self.queued.len())
            .field("lost", &self.lost)
            .finish()
    }
}

impl KeyspaceSubscriber {
    /// Subscribes to `tables` of `db` with default options; the existing rows are queued as
    /// SET events for the first [`KeyspaceSubscriber::poll`].
    ///
    /// Cost: connect twice (data + pub/sub), 1–2 round trips for the keyspace configuration,
    /// 1 per pattern on the pub/sub connection, and ≤ 2 for the enumeration.
    pub fn subscribe(endpoint: &Endpoint, db: Db, tables: &[TableName]) -> Result<Self> {
        Self::subscribe_with(endpoint, db, tables, SubscriberOptions::default())
    }

    /// [`KeyspaceSubscriber::subscribe`] with explicit options.
    pub fn subscribe_with(
        endpoint: &Endpoint,
        db: Db,
        tables: &[TableName],
        options: SubscriberOptions,
    ) -> Result<Self> {
        let data = DbConnection::open(endpoint, db)?;
        let mut tables = tables.to_vec();
        tables.sort();
        tables.dedup();
        let mut sub = KeyspaceSubscriber {
            endpoint: endpoint.clone(),
            db,
            tables,
            options,
            data,
            listener: None,
            queued: VecDeque::new(),
            known: BTreeMap::new(),
            lost: Some("not subscribed yet".to_owned()),
        };
        sub.establish()?;
        Ok(sub)
    }

    /// The database subscribed to.
    pub fn db(&self) -> Db {
        self.db
    }

    /// The subscribed tables (sorted, deduplicated).
    pub fn tables(&self) -> &[TableName] {
        &self.tables
    }

    /// The data connection (for its round-trip counter).
    pub fn data_connection(&self) -> &DbConnection {
        &self.data
    }

    /// False once a connection loss was detected, until [`KeyspaceSubscriber::resync`]
    /// succeeds.
    pub fn is_connected(&self) -> bool {
        self.lost.is_none()
    }

    /// Number of events queued for the next poll (from a (re)enumeration).
    pub fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Object keys of `table` as delivered so far (present according to the events).
    pub fn known_keys(&self, table: &TableName) -> impl Iterator<Item = &str> + '_ {
        self.known
            .get(table)
            .into_iter()
            .flatten()
            .map(String::as_str)
    }

    /// Returns the next batch of events: queued enumeration events at once if any; else
    /// waits up to `timeout` for a notification, then resolves it and every other
    /// notification already received (up to [`SubscriberOptions::max_batch`]). An empty
    /// vector means the timeout expired.
    ///
    /// Errors: [`SwssError::SubscriptionLost`] after a connection loss (call
    /// [`KeyspaceSubscriber::resync`]); a Redis error of the hash reads (a connection error
    /// also marks the subscription lost).
    pub fn poll(&mut self, timeout: Duration) -> Result<Vec<ChangeEvent>> {
        if !self.queued.is_empty() {
            let events: Vec<ChangeEvent> = self.queued.drain(..).collect();
            self.track(&events);
            return Ok(events);
        }
        if let Some(detail) = &self.lost {
            return Err(SwssError::SubscriptionLost {
                detail: detail.clone(),
            });
        }
        let Some(listener) = &self.listener else {
            return Err(self.mark_lost("no listener".to_owned()));
        };
        let first = match listener.rx.recv_timeout(timeout) {
            Ok(n) => n,
            Err(RecvTimeoutError::Timeout) => return Ok(Vec::new()),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(self.mark_lost("listener thread ended".to_owned()))
            }
        };
        let mut notices = vec![first];
        while notices.len() < self.options.max_batch.max(1) {
            match listener.rx.try_recv() {
                Ok(n) => notices.push(n),
                Err(_) => break,
            }
        }

        let prefix = self.db.keyspace_prefix();
        let mut parsed: Vec<(TableName, String, Resolution)> = Vec::with_capacity(notices.len());
        let mut lost = None;
        for n in notices {
            match n {
                Notice::Lost(detail) => {
                    lost = Some(detail);
                    break;
                }
                Notice::Event { channel, event } => {
                    let Some(redis_key) = channel.strip_prefix(&prefix) else {
                        continue;
                    };
                    let Ok((table, key)) = self.db.split_key(redis_key) else {
                        continue;
                    };
                    if self.tables.binary_search(&table).is_ok() {
                        parsed.push((table, key, classify(&event)));
                    }
                }
            }
        }

        let rows: Vec<(&TableName, &str)> = parsed
            .iter()
            .filter(|(_, _, r)| *r == Resolution::Reread)
            .map(|(t, k, _)| (t, k.as_str()))
            .collect();
        let hashes = match read_hashes(&mut self.data, &rows) {
            Ok(h) => h,
            Err(e) => {
                if e.is_connection_error() {
                    self.mark_lost(e.to_string());
                }
                return Err(e);
            }
        };
        let mut hashes = hashes.into_iter();
        let mut events = Vec::with_capacity(parsed.len());
        for (table, key, resolution) in parsed {
            match resolution {
                Resolution::Deleted => events.push(ChangeEvent::Del { table, key }),
                Resolution::Reread => {
                    if let Some(Some(fields)) = hashes.next() {
                        events.push(ChangeEvent::Set { table, key, fields });
                    }
                }
            }
        }
        if let Some(detail) = lost {
            let err = self.mark_lost(detail);
            if events.is_empty() {
                return Err(err);
            }
        }
        self.track(&events);
        Ok(events)
    }

    /// Reconnects, resubscribes and re-enumerates (see the module invariants); the
    /// resulting DEL/SET events are returned by the next [`KeyspaceSubscriber::poll`].
    /// On error the subscriber stays disconnected and `resync` may be called again.
    pub fn resync(&mut self) -> Result<()> {
        self.listener = None;
        self.lost = Some("resync in progress".to_owned());
        self.data.reconnect()?;
        self.establish()
    }

    /// Configures notifications, starts the listener, enumerates and queues the diff.
    fn establish(&mut self) -> Result<()> {
        if self.options.configure_keyspace_events {
            self.data.ensure_keyspace_events()?;
        }
        let patterns = self
            .tables
            .iter()
            .map(|t| self.db.keyspace_pattern(t))
            .collect();
        let listener = Listener::start(&self.endpoint, self.db, patterns)?;
        let entries = enumerate(&mut self.data, &self.tables)?;
        let present: BTreeSet<(&TableName, &str)> =
            entries.iter().map(|e| (&e.table, e.key.as_str())).collect();
        let mut queued = VecDeque::with_capacity(entries.len());
        for (table, keys) in &self.known {
            for key in keys {
                if !present.contains(&(table, key.as_str())) {
                    queued.push_back(ChangeEvent::Del {
                        table: table.clone(),
                        key: key.clone(),
                    });
                }
            }
        }
        queued.extend(entries.into_iter().map(|e| ChangeEvent::Set {
            table: e.table,
            key: e.key,
            fields: e.fields,
        }));
        self.queued = queued;
        self.listener = Some(listener);
        self.lost = None;
        Ok(())
    }

    /// Records the subscription as lost, stops the listener, and returns the error to
    /// report.
    fn mark_lost(&mut self, detail: String) -> SwssError {
        self.listener = None;
        self.lost = Some(detail.clone());
        SwssError::SubscriptionLost { detail }
    }

    /// Updates the set of keys known present with delivered events.
    fn track(&mut self, events: &[ChangeEvent]) {
        for e in events {
            match e {
                ChangeEvent::Set { table, key, .. } => {
                    self.known
                        .entry(table.clone())
                        .or_default()
                        .insert(key.clone());
                }
                ChangeEvent::Del { table, key } => {
                    if let Some(keys) = self.known.get_mut(table) {
                        keys.remove(key);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_classification() {
        for e in ["del", "expired", "evicted", "rename_from"] {
            assert_eq!(classify(e), Resolution::Deleted);
        }
        for e in ["hset", "hdel", "hincrby", "rename_to", "restore"] {
            assert_eq!(classify(e), Resolution::Reread);
        }
    }
}
