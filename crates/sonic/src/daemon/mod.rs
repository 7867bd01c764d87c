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
mod runtime;

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
use runtime::Runtime;

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
