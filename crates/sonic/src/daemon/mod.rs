//! `bufmgrd`: the buffer manager state machine ([`BufferManager`]) driven from Redis, as a
//! drop-in for SONiC's buffermgrd in dynamic mode (sonic-buffer.md §1, §7).
//!
//! Wiring:
//! - **Inputs**: CONFIG_DB (db 4) tables [`CONFIG_TABLES`], STATE_DB (db 6) tables
//!   [`STATE_TABLES`] and APPL_STATE_DB (db 14) tables [`APPL_STATE_TABLES`] through
//!   [`KeyspaceSubscriber`]s (keyspace notifications `__keyspace@4__:<TABLE>|*`, initial
//!   enumeration, hash re-read per event), plus APPL_DB `PORT_TABLE:PortInitDone`. One thread
//!   per database forwards events to a single channel (`forward.rs`); the run loop blocks on
//!   that channel with a timeout equal to the manager's [`BufferManager::poll_timeout`], so
//!   the daemon sleeps until an event or a timer of the state machine is due (no polling).
//! - **Outputs**: APPL_DB through one [`ProducerStateTable`] (every APPL_DB write of a burst
//!   — all events already received plus the timers due — goes out in one atomic flush, 1
//!   round trip), STATE_DB mirrors through one [`Table`] (one `MULTI`/`EXEC`), log lines
//!   through `tracing` (target `bufmgrd`).
//! - **Faults**: a failed flush, a resubscription after a connection loss, and start-up
//!   all lead to a *reconciliation* ([`reconcile`]): once every subscription is back, the
//!   daemon reads APPL_DB as orchagent will see it and the STATE_DB mirrors, and writes only
//!   the differences from the manager's mirror. Subscriptions resync with exponential
//!   backoff and feed only what differs from what was already fed.
//!
//! Invariants:
//! - **Fed view**: [`FedView`] holds every CONFIG_DB / STATE_DB / APPL_STATE_DB row as last
//!   fed to the manager; an event that leaves a row as fed (a SET with the same fields, a DEL
//!   of an absent row) is not fed again. So a resync, or a notification of a change the
//!   initial enumeration already delivered, produces no input and no write. (buffermgrd
//!   would reprocess an unchanged hash that is written again; here re-writing an identical
//!   entry is a no-op.)
//! - **No lost, duplicated or partial writes**: while a reconciliation is pending, outputs
//!   are not sent (the manager's mirror already holds them); after it, APPL_DB as consumed
//!   by orchagent equals [`BufferManager::appl_db`] and the mirrors equal
//!   [`BufferManager::state_db`]. A flush is one atomic script / transaction, so orchagent
//!   never sees part of one.
//! - **Time**: the manager's clock is [`ClockMode::Real`] (monotonic time since start, plus
//!   the jumps below) or [`ClockMode::Manual`] (moves only by [`DaemonHandle::advance`]; for
//!   tests, which then see exactly the timer behaviour of [`crate::bufmgr::harness`]). With
//!   `fast_start`, after the initial enumeration, when `PortInitDone` appears, and after
//!   inputs while the buffer pools are not ready, the clock jumps to the next periodic tick,
//!   and again while a tick still writes something: buffermgrd would do the same work at its
//!   next 10 s ticks; the result is the same, only sooner.
//! - **Stoppable**: [`DaemonHandle::stop`] sets a shared flag and wakes the run loop, which
//!   returns after the current burst; every thread it started ends within
//!   100 ms plus the subscriber's listener poll.
//!
//! Plugins: a vendor headroom plugin (`buffer_headroom_<vendor>.lua`) can replace the
//! native model ([`plugins::LuaHeadroom`] as [`Options::headroom_plugin`]); the pool and
//! check computations are always the native ones ([`crate::pool`], [`crate::check`]), which
//! reproduce SONiC's plugins. Cold start: whatever APPL_DB holds from an earlier run is
//! reconciled (stale keys deleted, missing ones written) rather than assumed empty.
//!
//! Submodules: [`reconcile`] (effective APPL_DB read and the diffs), [`plugins`] (Lua
//! headroom plugins), [`orchagent`] (an orchagent stand-in for tests and benchmarks),
//! [`mod@bench`] (the benchmark behind `headroom sonic bufmgrd --bench`).

pub mod bench;
mod forward;
pub mod orchagent;
pub mod plugins;
pub mod reconcile;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::bufmgr::{BufMgrError, BufferManager, Input, LogLevel, Options, Output, TIMER_PERIOD};
use crate::swss::{
    ChangeEvent, Db, DbConnection, Endpoint, KeyspaceSubscriber, ProducerStateTable, SwssError,
    Table, TableName,
};
use crate::tables::RawDb;

use reconcile::{appl_diff, state_diff, ApplReader, APPL_TABLES, OWNED_STATE_TABLES};

/// CONFIG_DB tables the daemon subscribes to (buffermgrd's consumers plus the tables its
/// plugins read) and STATE_DB tables (published by orchagent): the manager's inputs.
pub use crate::bufmgr::{CONFIG_TABLES, STATE_TABLES};
/// APPL_STATE_DB tables the daemon subscribes to (orchagent's responses, §7.9).
pub const APPL_STATE_TABLES: [&str; 2] = ["BUFFER_POOL_TABLE", "BUFFER_PROFILE_TABLE"];

/// Log lines kept in [`Status::logs`] when not recording everything.
pub const LOG_KEEP: usize = 1000;

/// Most periodic ticks a fast start runs at once (see [`DaemonOptions::fast_start`]).
const FAST_TICKS: usize = 4;

/// Upper bound on timer firings per wake-up (each firing moves every due timer forward, so
/// this is only a guard against a manager bug).
const MAX_TIMER_STEPS: usize = 100_000;

/// Errors of the daemon.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The buffer manager cannot start (ASIC/peripheral tables missing or invalid).
    #[error(transparent)]
    Manager(#[from] BufMgrError),
    /// The Redis URL is not `redis://HOST[:PORT]` or `unix://PATH`.
    #[error("invalid Redis URL {url:?}: {reason}")]
    BadUrl {
        /// The URL.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A thread could not be started.
    #[error("cannot start a daemon thread: {0}")]
    Thread(#[source] std::io::Error),
    /// A Redis operation failed where the daemon cannot retry (reading the ASIC tables from
    /// STATE_DB before start).
    #[error(transparent)]
    Redis(#[from] SwssError),
}

/// Parses `redis://HOST[:PORT][/0]` (port 6379 by default) or `unix://PATH` /
/// `redis+unix://PATH` into an [`Endpoint`] with the default timeout.
pub fn endpoint_from_url(url: &str) -> Result<Endpoint, DaemonError> {
    let bad = |reason| DaemonError::BadUrl {
        url: url.to_owned(),
        reason,
    };
    if let Some(path) = url
        .strip_prefix("unix://")
        .or_else(|| url.strip_prefix("redis+unix://"))
    {
        if path.is_empty() {
            return Err(bad("empty socket path"));
        }
        return Ok(Endpoint::unix(path));
    }
    let rest = url
        .strip_prefix("redis://")
        .ok_or_else(|| bad("expected redis://HOST[:PORT] or unix://PATH"))?;
    let (hostport, db) = rest.split_once('/').unwrap_or((rest, ""));
    if !(db.is_empty() || db == "0") {
        return Err(bad(
            "a database number cannot be chosen: SONiC's ids are fixed",
        ));
    }
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().map_err(|_| bad("invalid port"))?),
        None => (hostport, 6379),
    };
    if host.is_empty() {
        return Err(bad("empty host"));
    }
    Ok(Endpoint::tcp(host, port))
}

/// How the manager's clock runs (see the module invariants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockMode {
    /// Monotonic real time since start (plus explicit jumps).
    Real,
    /// Moves only by [`DaemonHandle::advance`].
    Manual,
}

/// Exponential backoff between reconnection attempts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// First delay.
    pub min: Duration,
    /// Largest delay.
    pub max: Duration,
    next: Duration,
}

impl Backoff {
    /// Delays from `min` doubling up to `max`.
    pub fn new(min: Duration, max: Duration) -> Backoff {
        Backoff {
            min,
            max: max.max(min),
            next: min,
        }
    }

    /// The next delay (then doubles it, up to the maximum).
    pub fn next_delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (self.next * 2).min(self.max);
        d
    }

    /// Back to the first delay.
    pub fn reset(&mut self) {
        self.next = self.min;
    }
}

/// How a daemon is started.
#[derive(Clone, Debug)]
pub struct DaemonOptions {
    /// The Redis server.
    pub endpoint: Endpoint,
    /// The manager's options (model, hardware tables, zero profiles, warm start…); `start`
    /// and `preserved_appl_db` are set by the daemon (a warm start reads APPL_DB).
    pub manager: Options,
    /// The manager's clock.
    pub clock: ClockMode,
    /// After the initial enumeration and when `PortInitDone` appears, run the periodic
    /// timer at once, again while a tick still writes something (real clock only; see the
    /// module invariants).
    pub fast_start: bool,
    /// Keep every output and log line in [`Status`] (tests).
    pub record: bool,
    /// Reconnection backoff.
    pub backoff: Backoff,
}

impl DaemonOptions {
    /// Real clock, fast start, no recording, backoff 50 ms doubling to 2 s.
    pub fn new(endpoint: Endpoint, manager: Options) -> DaemonOptions {
        DaemonOptions {
            endpoint,
            manager,
            clock: ClockMode::Real,
            fast_start: true,
            record: false,
            backoff: Backoff::new(Duration::from_millis(50), Duration::from_secs(2)),
        }
    }
}

/// The rows fed to the manager so far (see the module invariants).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FedView {
    /// CONFIG_DB.
    pub config: RawDb,
    /// STATE_DB (subscribed tables).
    pub state: RawDb,
    /// APPL_STATE_DB (subscribed tables).
    pub appl_state: RawDb,
    /// `PortInitDone` was fed.
    pub port_init_done: bool,
}

/// What the daemon did so far (shared with [`DaemonHandle`]).
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// The rows fed.
    pub fed: FedView,
    /// Inputs fed to the manager.
    pub events_fed: u64,
    /// Events dropped because the row was already as fed.
    pub events_skipped: u64,
    /// Successful flushes (including reconciliations).
    pub flushes: u64,
    /// APPL_DB operations written.
    pub appl_ops: u64,
    /// STATE_DB operations written.
    pub state_ops: u64,
    /// Completed reconciliations.
    pub reconciles: u64,
    /// Connection losses reported by subscriptions or flushes.
    pub connection_losses: u64,
    /// Databases whose subscription is currently lost.
    pub lost: BTreeSet<Db>,
    /// Round trips of the write connection(s).
    pub write_round_trips: u64,
    /// When the last flush succeeded.
    pub last_flush: Option<Instant>,
    /// Whether a reconciliation is pending (writes are held back).
    pub reconcile_pending: bool,
    /// Log lines: all of them when recording, else the last [`LOG_KEEP`] errors and warnings.
    pub logs: Vec<(LogLevel, String)>,
    /// Every database write the manager asked for, in order (only when recording).
    pub outputs: Vec<Output>,
    /// The run loop is past its start-up (connected, initial enumeration fed).
    pub started: bool,
}

/// A control or event message to the run loop.
pub(crate) enum Msg {
    /// Events of one database.
    Events {
        db: Db,
        events: Vec<ChangeEvent>,
        resynced: bool,
    },
    /// A subscription lost its connection.
    Lost { db: Db, detail: String },
    /// APPL_DB `PORT_TABLE:PortInitDone` appeared.
    PortInitDone,
    /// Stop.
    Stop,
    /// Move the clock forward, run due timers, flush, then acknowledge.
    Advance { by: Duration, ack: SyncSender<()> },
    /// Run a closure on the manager after the current burst.
    Inspect(InspectJob),
}

/// A closure run on the manager by [`DaemonHandle::inspect`].
pub(crate) type InspectJob = Box<dyn FnOnce(&BufferManager) + Send>;

struct Shared {
    status: Mutex<Status>,
    sub_round_trips: Arc<AtomicU64>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Status> {
        // A panic while holding the lock leaves plain counters; they stay usable.
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Controls a running daemon from other threads (cheap to clone).
#[derive(Clone)]
pub struct DaemonHandle {
    tx: Sender<Msg>,
    stop: Arc<AtomicBool>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for DaemonHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaemonHandle")
            .field("stopped", &self.is_stopped())
            .finish()
    }
}

impl DaemonHandle {
    /// Asks the daemon to stop (idempotent; safe from a signal-handling thread).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.tx.send(Msg::Stop);
    }

    /// Whether a stop was requested.
    pub fn is_stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Runs `f` on the status.
    pub fn with_status<R>(&self, f: impl FnOnce(&Status) -> R) -> R {
        f(&self.shared.lock())
    }

    /// Total Redis round trips: writes, reconciliation reads and subscription hash reads
    /// (the subscription handshakes are not counted).
    pub fn round_trips(&self) -> u64 {
        self.with_status(|s| s.write_round_trips)
            + self.shared.sub_round_trips.load(Ordering::Relaxed)
    }

    /// Moves the manager's clock forward by `by` (running the timers due on the way, in
    /// order), flushes, and waits up to `timeout` for the daemon to confirm. `by` zero is a
    /// barrier: everything sent before was processed and flushed. False on timeout.
    pub fn advance(&self, by: Duration, timeout: Duration) -> bool {
        let (ack, done) = mpsc::sync_channel(1);
        if self.tx.send(Msg::Advance { by, ack }).is_err() {
            return false;
        }
        done.recv_timeout(timeout).is_ok()
    }

    /// Runs `f` on the manager (after the burst being processed) and returns its result,
    /// or `None` if the daemon did not answer within `timeout`.
    pub fn inspect<R: Send + 'static>(
        &self,
        f: impl FnOnce(&BufferManager) -> R + Send + 'static,
        timeout: Duration,
    ) -> Option<R> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job = Box::new(move |m: &BufferManager| {
            let _ = tx.send(f(m));
        });
        self.tx.send(Msg::Inspect(job)).ok()?;
        rx.recv_timeout(timeout).ok()
    }
}

/// The daemon (see the module docs): create it, take a [`DaemonHandle`], then
/// [`Daemon::run`] it (blocking) or [`Daemon::spawn`] it.
pub struct Daemon {
    opts: DaemonOptions,
    rx: Receiver<Msg>,
    handle: DaemonHandle,
}

impl std::fmt::Debug for Daemon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Daemon")
            .field("endpoint", &self.opts.endpoint)
            .finish()
    }
}

impl Daemon {
    /// Checks the options (the manager must be able to start) without connecting.
    pub fn new(opts: DaemonOptions) -> Result<Daemon, DaemonError> {
        BufferManager::new(opts.manager.clone())?;
        let (tx, rx) = mpsc::channel();
        let handle = DaemonHandle {
            tx,
            stop: Arc::new(AtomicBool::new(false)),
            shared: Arc::new(Shared {
                status: Mutex::new(Status::default()),
                sub_round_trips: Arc::new(AtomicU64::new(0)),
            }),
        };
        Ok(Daemon { opts, rx, handle })
    }

    /// A handle to control the daemon.
    pub fn handle(&self) -> DaemonHandle {
        self.handle.clone()
    }

    /// Runs the daemon on a new thread.
    pub fn spawn(self) -> Result<JoinHandle<Result<(), DaemonError>>, DaemonError> {
        std::thread::Builder::new()
            .name("bufmgrd".into())
            .spawn(move || self.run())
            .map_err(DaemonError::Thread)
    }

    /// Runs until stopped: connects (retrying with backoff), subscribes, feeds the initial
    /// enumeration, reconciles, then processes events and timers.
    pub fn run(self) -> Result<(), DaemonError> {
        let stop = Arc::clone(&self.handle.stop);
        let _guard = StopOnDrop(Arc::clone(&stop));
        let Some(mut rt) = Runtime::connect(self.opts, &self.rx, self.handle)? else {
            return Ok(());
        };
        rt.main_loop(&self.rx)
    }
}

/// Sets the stop flag when the run loop ends, however it ends, so every thread it started
/// exits.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The manager's clock.
struct Clock {
    mode: ClockMode,
    origin: Instant,
    skew: Duration,
}

impl Clock {
    fn now(&self) -> Duration {
        match self.mode {
            ClockMode::Real => self.origin.elapsed() + self.skew,
            ClockMode::Manual => self.skew,
        }
    }
}

/// The connected daemon.
struct Runtime {
    opts: DaemonOptions,
    handle: DaemonHandle,
    mgr: BufferManager,
    clock: Clock,
    producer: ProducerStateTable,
    state: Table,
    reader: ApplReader,
    backoff: Backoff,
    need_reconcile: bool,
    reconcile_due: Option<Instant>,
    lost: BTreeSet<Db>,
    threads: Vec<JoinHandle<()>>,
}

/// The subscriptions and connections of one start-up attempt.
struct Connections {
    producer: ProducerStateTable,
    state: Table,
    subs: Vec<(KeyspaceSubscriber, forward::Filter)>,
    preserved: RawDb,
}

fn table_names(names: &[&str]) -> Result<Vec<TableName>, SwssError> {
    names.iter().map(|n| TableName::new(*n)).collect()
}

impl Connections {
    fn open(opts: &DaemonOptions, reader: &mut ApplReader) -> Result<Connections, SwssError> {
        let ep = &opts.endpoint;
        let mut producer = ProducerStateTable::new(DbConnection::open(ep, Db::Appl)?);
        let state = Table::new(DbConnection::open(ep, Db::State)?);
        let preserved = if opts.manager.warm_reboot {
            reader.read(producer.connection(), &APPL_TABLES)?
        } else {
            RawDb::new()
        };
        let subs = vec![
            (
                KeyspaceSubscriber::subscribe(ep, Db::Config, &table_names(&CONFIG_TABLES)?)?,
                forward::Filter::All,
            ),
            (
                KeyspaceSubscriber::subscribe(ep, Db::State, &table_names(&STATE_TABLES)?)?,
                forward::Filter::All,
            ),
            (
                KeyspaceSubscriber::subscribe(
                    ep,
                    Db::ApplState,
                    &table_names(&APPL_STATE_TABLES)?,
                )?,
                forward::Filter::All,
            ),
            (
                KeyspaceSubscriber::subscribe(ep, Db::Appl, &table_names(&["PORT_TABLE"])?)?,
                forward::Filter::PortInitDone,
            ),
        ];
        Ok(Connections {
            producer,
            state,
            subs,
            preserved,
        })
    }
}

impl Runtime {
    /// Connects with backoff; `None` if stopped meanwhile.
    fn connect(
        opts: DaemonOptions,
        rx: &Receiver<Msg>,
        handle: DaemonHandle,
    ) -> Result<Option<Runtime>, DaemonError> {
        let mut backoff = opts.backoff.clone();
        let mut reader = ApplReader::default();
        let conns = loop {
            if handle.is_stopped() {
                return Ok(None);
            }
            match Connections::open(&opts, &mut reader) {
                Ok(c) => break c,
                Err(e) => {
                    let wait = backoff.next_delay();
                    tracing::warn!(target: "bufmgrd", error = %e, retry_in = ?wait, "cannot connect to Redis; retrying");
                    // Wait for the backoff, or a stop.
                    match rx.recv_timeout(wait) {
                        Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return Ok(None),
                        _ => {}
                    }
                }
            }
        };
        backoff.reset();
        // buffermgrd writes its -a/-p tables to STATE_DB before anything else: a Lua plugin
        // reads ASIC_TABLE there (the reconciliation then finds them as wanted).
        let mut conns = conns;
        for (table, entries) in &opts.manager.hardware_tables {
            let name = TableName::new(table.as_str()).map_err(DaemonError::Redis)?;
            for (key, fields) in entries {
                conns.state.replace(&name, key, fields.clone());
            }
        }
        if let Err(e) = conns.state.flush() {
            conns.state.discard();
            tracing::warn!(target: "bufmgrd", error = %e, "hardware tables not written yet; the reconciliation will");
        }
        let mut mopts = opts.manager.clone();
        mopts.start = Duration::ZERO;
        mopts.preserved_appl_db = conns.preserved;
        let mgr = BufferManager::new(mopts)?;
        let mut rt = Runtime {
            clock: Clock {
                mode: opts.clock,
                origin: Instant::now(),
                skew: Duration::ZERO,
            },
            opts,
            handle,
            mgr,
            producer: conns.producer,
            state: conns.state,
            reader,
            backoff,
            need_reconcile: true,
            reconcile_due: Some(Instant::now()),
            lost: BTreeSet::new(),
            threads: Vec::new(),
        };
        // The initial enumeration, fed in table order: CONFIG_DB, STATE_DB, APPL_STATE_DB.
        let mut fed = 0usize;
        let mut subs = Vec::new();
        for (mut sub, filter) in conns.subs {
            let events = sub.poll(Duration::ZERO).unwrap_or_default();
            match filter {
                forward::Filter::All => {
                    let db = sub.db();
                    fed += events.len();
                    for e in in_dependency_order(events) {
                        rt.feed(db, e);
                    }
                    subs.push((sub, filter));
                }
                forward::Filter::PortInitDone => {
                    let seen = events.iter().any(
                        |e| matches!(e, ChangeEvent::Set { key, .. } if key == "PortInitDone"),
                    );
                    if seen {
                        rt.port_init_done(false);
                    } else {
                        subs.push((sub, filter));
                    }
                }
            }
        }
        for (sub, filter) in subs {
            let t = forward::spawn(
                sub,
                filter,
                rt.handle.tx.clone(),
                Arc::clone(&rt.handle.stop),
                Arc::clone(&rt.handle.shared.sub_round_trips),
                rt.opts.backoff.clone(),
            )
            .map_err(DaemonError::Thread)?;
            rt.threads.push(t);
        }
        rt.run_timers();
        rt.drain_outputs();
        if rt.opts.fast_start && rt.opts.clock == ClockMode::Real {
            rt.fast_forward();
        }
        rt.try_reconcile();
        rt.handle.shared.lock().started = true;
        tracing::info!(target: "bufmgrd", endpoint = ?rt.opts.endpoint.address, entries = fed, port_init_done = rt.handle.shared.lock().fed.port_init_done, "started");
        Ok(Some(rt))
    }

    fn main_loop(&mut self, rx: &Receiver<Msg>) -> Result<(), DaemonError> {
        let mut acks: Vec<SyncSender<()>> = Vec::new();
        let mut inspects: Vec<InspectJob> = Vec::new();
        loop {
            if self.handle.is_stopped() {
                break;
            }
            let wait = self.wait_time();
            let first = match wait {
                Some(w) => match rx.recv_timeout(w) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => break,
                },
            };
            let mut stop = false;
            let fed_before = self.handle.with_status(|s| s.events_fed);
            if let Some(m) = first {
                stop |= !self.on_msg(m, &mut acks, &mut inspects);
                // The rest of the burst.
                while let Ok(m) = rx.try_recv() {
                    stop |= !self.on_msg(m, &mut acks, &mut inspects);
                }
            }
            self.run_timers();
            self.drain_outputs();
            // Pools not ready (start-up, or every pool was removed and comes back, as after a
            // config reload): the next periodic tick would make them ready; run it now.
            if self.opts.fast_start
                && self.clock.mode == ClockMode::Real
                && !self.mgr.pools_ready()
                && self.handle.with_status(|s| s.events_fed) > fed_before
            {
                self.fast_forward();
            }
            if self.need_reconcile
                && self.lost.is_empty()
                && self.reconcile_due.is_some_and(|d| d <= Instant::now())
            {
                self.try_reconcile();
            }
            for f in inspects.drain(..) {
                f(&self.mgr);
            }
            for a in acks.drain(..) {
                let _ = a.send(());
            }
            if stop {
                break;
            }
        }
        tracing::info!(target: "bufmgrd", "stopping");
        self.handle.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        Ok(())
    }

    /// How long the loop may block: until the manager's next timer (real clock) or the next
    /// reconciliation attempt; `None` = until a message.
    fn wait_time(&self) -> Option<Duration> {
        let mut wait = match self.clock.mode {
            ClockMode::Real => self
                .mgr
                .poll_timeout()
                .map(|t| t.saturating_sub(self.clock.now())),
            ClockMode::Manual => None,
        };
        if self.need_reconcile && self.lost.is_empty() {
            if let Some(due) = self.reconcile_due {
                let w = due.saturating_duration_since(Instant::now());
                wait = Some(wait.map_or(w, |x| x.min(w)));
            }
        }
        wait
    }

    /// Handles one message; false for a stop.
    fn on_msg(
        &mut self,
        msg: Msg,
        acks: &mut Vec<SyncSender<()>>,
        inspects: &mut Vec<InspectJob>,
    ) -> bool {
        match msg {
            Msg::Events {
                db,
                events,
                resynced,
            } => {
                let n = events.len();
                let events = if resynced {
                    in_dependency_order(events)
                } else {
                    events
                };
                for e in events {
                    self.feed(db, e);
                }
                if resynced {
                    self.lost.remove(&db);
                    self.handle.shared.lock().lost.remove(&db);
                    tracing::info!(target: "bufmgrd", db = %db, events = n, "subscription re-established; reconciling");
                    self.schedule_reconcile(Duration::ZERO);
                }
            }
            Msg::Lost { db, detail } => {
                tracing::warn!(target: "bufmgrd", db = %db, %detail, "subscription lost; resubscribing");
                self.lost.insert(db);
                let mut st = self.handle.shared.lock();
                st.lost.insert(db);
                st.connection_losses += 1;
            }
            Msg::PortInitDone => self.port_init_done(true),
            Msg::Stop => return false,
            Msg::Advance { by, ack } => {
                self.clock.skew += by;
                acks.push(ack);
            }
            Msg::Inspect(f) => inspects.push(f),
        }
        true
    }

    fn schedule_reconcile(&mut self, after: Duration) {
        self.need_reconcile = true;
        self.reconcile_due = Some(Instant::now() + after);
        self.handle.shared.lock().reconcile_pending = true;
    }

    fn port_init_done(&mut self, jump: bool) {
        {
            let mut st = self.handle.shared.lock();
            if st.fed.port_init_done {
                return;
            }
            st.fed.port_init_done = true;
            st.events_fed += 1;
        }
        tracing::info!(target: "bufmgrd", "PortInitDone");
        self.mgr.handle(self.clock.now(), Input::PortInitDone);
        if jump && self.opts.fast_start && self.clock.mode == ClockMode::Real {
            self.run_timers();
            self.drain_outputs();
            self.fast_forward();
        }
    }

    /// Fast start: runs the periodic timer at once, again as long as a tick still writes
    /// something (buffermgrd needs two ticks to settle the pools after its first
    /// computation), at most [`FAST_TICKS`] times. A tick that writes nothing ends it, so a
    /// deferral counted in ticks (the extra zero profiles) still takes its real time.
    fn fast_forward(&mut self) {
        for _ in 0..FAST_TICKS {
            self.jump_to_next_tick();
            self.run_timers();
            if self.drain_outputs() == 0 {
                break;
            }
        }
    }

    /// Moves the clock to the next multiple of the timer period (the next periodic tick).
    fn jump_to_next_tick(&mut self) {
        let now = self.clock.now();
        let p = TIMER_PERIOD.as_nanos().max(1);
        let next = (now.as_nanos() / p + 1) * p;
        let next = Duration::from_nanos(u64::try_from(next).unwrap_or(u64::MAX));
        self.clock.skew += next.saturating_sub(now);
    }

    /// Feeds one event unless the row is already as fed (see the module invariants).
    fn feed(&mut self, db: Db, ev: ChangeEvent) {
        let input = {
            let mut st = self.handle.shared.lock();
            let st = &mut *st;
            let view = match db {
                Db::Config => &mut st.fed.config,
                Db::State => &mut st.fed.state,
                Db::ApplState => &mut st.fed.appl_state,
                Db::Appl => return,
            };
            let input = match ev {
                ChangeEvent::Set { table, key, fields } => {
                    let t = view.entry(table.as_str().to_owned()).or_default();
                    if t.get(&key) == Some(&fields) {
                        st.events_skipped += 1;
                        return;
                    }
                    t.insert(key.clone(), fields.clone());
                    let table = table.as_str().to_owned();
                    match db {
                        Db::Config => Input::ConfigSet { table, key, fields },
                        Db::State => Input::StateSet { table, key, fields },
                        _ => Input::ApplStateSet { table, key, fields },
                    }
                }
                ChangeEvent::Del { table, key } => {
                    let name = table.as_str();
                    let removed = view.get_mut(name).and_then(|t| t.remove(&key)).is_some();
                    if view.get(name).is_some_and(|t| t.is_empty()) {
                        view.remove(name);
                    }
                    if !removed {
                        st.events_skipped += 1;
                        return;
                    }
                    let table = name.to_owned();
                    match db {
                        Db::Config => Input::ConfigDel { table, key },
                        Db::State => Input::StateDel { table, key },
                        _ => Input::ApplStateDel { table, key },
                    }
                }
            };
            st.events_fed += 1;
            input
        };
        self.mgr.handle(self.clock.now(), input);
    }

    /// Runs every timer due at the current time, in order.
    fn run_timers(&mut self) {
        let now = self.clock.now();
        for _ in 0..MAX_TIMER_STEPS {
            match self.mgr.poll_timeout() {
                Some(t) if t <= now => self.mgr.handle_timeout(t),
                _ => break,
            }
        }
    }

    /// Drains the manager's outputs: logs them, queues the writes (unless a reconciliation
    /// is pending) and flushes them in one APPL_DB script and one STATE_DB transaction.
    /// Returns the number of writes the manager asked for.
    fn drain_outputs(&mut self) -> usize {
        let record = self.opts.record;
        let mut writes = 0usize;
        let mut queued = (0u64, 0u64);
        while let Some(o) = self.mgr.poll_output() {
            if let Output::Log { level, message } = &o {
                log_line(*level, message);
                let mut st = self.handle.shared.lock();
                if record || *level <= LogLevel::Warning {
                    st.logs.push((*level, message.clone()));
                    if !record && st.logs.len() > LOG_KEEP {
                        let excess = st.logs.len() - LOG_KEEP;
                        st.logs.drain(..excess);
                    }
                }
                continue;
            }
            writes += 1;
            if !self.need_reconcile {
                if let Err(e) = self.queue(&o) {
                    tracing::error!(target: "bufmgrd", error = %e, "output not written");
                }
                match &o {
                    Output::ApplSet { .. } | Output::ApplDel { .. } => queued.0 += 1,
                    _ => queued.1 += 1,
                }
            }
            if record {
                self.handle.shared.lock().outputs.push(o);
            }
        }
        if self.need_reconcile || queued == (0, 0) {
            return writes;
        }
        match self.flush() {
            Ok(()) => {
                let mut st = self.handle.shared.lock();
                st.appl_ops += queued.0;
                st.state_ops += queued.1;
            }
            Err(e) => {
                self.producer.discard();
                self.state.discard();
                let wait = self.backoff.next_delay();
                tracing::warn!(target: "bufmgrd", error = %e, retry_in = ?wait, "write failed; will reconcile with Redis");
                self.handle.shared.lock().connection_losses += 1;
                self.schedule_reconcile(wait);
            }
        }
        writes
    }

    fn queue(&mut self, o: &Output) -> Result<(), SwssError> {
        match o {
            Output::ApplSet { table, key, fields } => {
                self.producer
                    .set(&TableName::new(table.as_str())?, key, fields.clone());
            }
            Output::ApplDel { table, key } => {
                self.producer.del(&TableName::new(table.as_str())?, key);
            }
            Output::StateSet { table, key, fields } => {
                self.state
                    .replace(&TableName::new(table.as_str())?, key, fields.clone());
            }
            Output::StateDel { table, key } => {
                self.state.del(&TableName::new(table.as_str())?, key);
            }
            Output::Log { .. } => {}
        }
        Ok(())
    }

    /// Flushes both write queues, counting round trips.
    fn flush(&mut self) -> Result<(), SwssError> {
        let before = self.write_round_trips();
        let r = self.producer.flush().and_then(|_| self.state.flush());
        let used = self.write_round_trips() - before;
        let mut st = self.handle.shared.lock();
        st.write_round_trips += used;
        if r.is_ok() {
            st.flushes += 1;
            st.last_flush = Some(Instant::now());
        }
        r.map(|_| ())
    }

    fn write_round_trips(&mut self) -> u64 {
        self.producer.connection().round_trips() + self.state.connection().round_trips()
    }

    /// Reads Redis and writes the differences from the manager's mirror.
    fn try_reconcile(&mut self) {
        if !self.need_reconcile || !self.lost.is_empty() {
            return;
        }
        match self.reconcile() {
            Ok((a, s)) => {
                self.need_reconcile = false;
                self.reconcile_due = None;
                self.backoff.reset();
                let mut st = self.handle.shared.lock();
                st.reconciles += 1;
                st.reconcile_pending = false;
                st.appl_ops += a as u64;
                st.state_ops += s as u64;
                drop(st);
                tracing::info!(target: "bufmgrd", appl_ops = a, state_ops = s, "reconciled APPL_DB and STATE_DB with the buffer manager");
            }
            Err(e) => {
                self.producer.discard();
                self.state.discard();
                let wait = self.backoff.next_delay();
                tracing::warn!(target: "bufmgrd", error = %e, retry_in = ?wait, "reconciliation failed; retrying");
                self.reconcile_due = Some(Instant::now() + wait);
            }
        }
    }

    fn reconcile(&mut self) -> Result<(usize, usize), SwssError> {
        let before = self.write_round_trips();
        let result = self.reconcile_inner();
        let used = self.write_round_trips() - before;
        self.handle.shared.lock().write_round_trips += used;
        result
    }

    fn reconcile_inner(&mut self) -> Result<(usize, usize), SwssError> {
        let actual = self.reader.read(self.producer.connection(), &APPL_TABLES)?;
        let desired = self.mgr.appl_db();
        let ops = appl_diff(&desired, &actual, &APPL_TABLES);
        let desired_state = self.mgr.state_db();
        let names: BTreeSet<&str> = desired_state
            .keys()
            .map(String::as_str)
            .chain(OWNED_STATE_TABLES)
            .collect();
        let tables: Vec<TableName> = names
            .into_iter()
            .map(TableName::new)
            .collect::<Result<_, _>>()?;
        let mut actual_state = RawDb::new();
        for e in self.state.enumerate(&tables)? {
            actual_state
                .entry(e.table.as_str().to_owned())
                .or_default()
                .insert(e.key, e.fields);
        }
        let sops = state_diff(&desired_state, &actual_state);
        for o in ops.iter().chain(&sops) {
            self.queue(o)?;
        }
        self.producer.flush()?;
        self.state.flush()?;
        let mut st = self.handle.shared.lock();
        st.flushes += 1;
        st.last_flush = Some(Instant::now());
        Ok((ops.len(), sops.len()))
    }
}

/// Orders a batch of a (re)enumeration so that few items need a retry: deletions first,
/// dependants before what they depend on; then sets, dependencies first (pools before
/// profiles before PGs). Within a table the subscriber's order is kept.
fn in_dependency_order(mut events: Vec<ChangeEvent>) -> Vec<ChangeEvent> {
    let rank = |t: &TableName| match t.as_str() {
        "DEVICE_METADATA" => 0,
        "LOSSLESS_TRAFFIC_PATTERN" => 1,
        "BUFFER_POOL" => 2,
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER" => 3,
        "PORT" => 4,
        "CABLE_LENGTH" => 5,
        "BUFFER_PROFILE" => 6,
        "BUFFER_PG" => 7,
        "BUFFER_QUEUE" => 8,
        _ => 9,
    };
    events.sort_by_key(|e| match e {
        ChangeEvent::Del { table, .. } => (0, 9 - rank(table)),
        ChangeEvent::Set { table, .. } => (1, rank(table)),
    });
    events
}

/// Emits a manager log line through `tracing` (Error → error, Warning → warn, Notice →
/// info, Info → debug).
fn log_line(level: LogLevel, message: &str) {
    match level {
        LogLevel::Error => tracing::error!(target: "bufmgrd", "{message}"),
        LogLevel::Warning => tracing::warn!(target: "bufmgrd", "{message}"),
        LogLevel::Notice => tracing::info!(target: "bufmgrd", "{message}"),
        LogLevel::Info => tracing::debug!(target: "bufmgrd", "{message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let e = endpoint_from_url("redis://127.0.0.1:6380").expect("url");
        assert_eq!(e, Endpoint::tcp("127.0.0.1", 6380));
        assert_eq!(
            endpoint_from_url("redis://localhost/0").expect("url"),
            Endpoint::tcp("localhost", 6379)
        );
        assert_eq!(
            endpoint_from_url("unix:///var/run/redis/redis.sock").expect("url"),
            Endpoint::unix("/var/run/redis/redis.sock")
        );
        for bad in [
            "http://x",
            "redis://:1",
            "redis://h:x",
            "redis://h/4",
            "unix://",
        ] {
            assert!(endpoint_from_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn backoff_doubles_to_the_maximum() {
        let mut b = Backoff::new(Duration::from_millis(50), Duration::from_millis(150));
        let d: Vec<u128> = (0..4).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(d, [50, 100, 150, 150]);
        b.reset();
        assert_eq!(b.next_delay(), Duration::from_millis(50));
    }
}
