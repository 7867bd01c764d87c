//! The daemon benchmark (`headroom sonic bufmgrd --bench`): a 64-port Spectrum-4 (SN5600)
//! switch with 3 lossless PGs per port on a throw-away `redis-server` on loopback.
//!
//! Measured, with an orchagent stand-in that wakes on the ProducerStateTable channels and
//! consumes (so "APPL_DB reflects it" means orchagent has popped it):
//! - **startup**: from `Daemon::spawn` on a populated CONFIG_DB / STATE_DB (with
//!   `PortInitDone`) to the consumed APPL_DB being complete (equal to the in-memory fresh
//!   start);
//! - **changes**: cable-length changes of one port at a time, each written to CONFIG_DB and
//!   waited for until the port's PGs point to the new profile in the consumed APPL_DB:
//!   latency p50/p99/max (write → consumed, and write → daemon flush);
//! - **burst**: the same number of changes written back to back, until APPL_DB reflects the
//!   last one;
//! - Redis round trips of the daemon in each phase ([`DaemonHandle::round_trips`]).
//!
//! Invariants: nothing here asserts a duration; every wait is bounded ([`WAIT_LIMIT`]).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::bufmgr::harness::Harness;
use crate::bufmgr::{to_fields, Options, ZeroProfiles};
use crate::defaults::{mellanox_dynamic, DefaultOptions, DefaultPort};
use crate::model::{Mellanox, Model};
use crate::swss::testing::{HarnessError, RedisServer};
use crate::swss::{Db, DbConnection, SwssError, Table, TableName};
use crate::tables::config::Port;
use crate::tables::state::AsicModel;
use crate::tables::{CableLength, RawDb};

use super::orchagent::Orchagent;
use super::reconcile::APPL_TABLES;
use super::{Daemon, DaemonError, DaemonHandle, DaemonOptions};

/// Upper bound of every wait of the benchmark.
pub const WAIT_LIMIT: Duration = Duration::from_secs(120);

/// SN5600 buffer size (sonic-buffer.md §2.3).
const MMU_SN5600: u64 = 158_229_504;
/// Cable lengths cycled through.
const LENGTHS: [&str; 6] = ["5m", "10m", "20m", "40m", "100m", "300m"];

/// Errors of the benchmark.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The throw-away `redis-server` did not start.
    #[error(transparent)]
    Server(#[from] HarnessError),
    /// A Redis operation of the benchmark failed.
    #[error(transparent)]
    Redis(#[from] SwssError),
    /// The daemon failed.
    #[error(transparent)]
    Daemon(#[from] DaemonError),
    /// A condition was not reached within [`WAIT_LIMIT`].
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
}

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct BenchOptions {
    /// Ports (400G, 8 lanes).
    pub ports: usize,
    /// Lossless PG entries per port (`|3`, `|4`, `|2`, …).
    pub lossless_pgs: usize,
    /// Cable-length changes.
    pub changes: usize,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            ports: 64,
            lossless_pgs: 3,
            changes: 1000,
        }
    }
}

/// Latency percentiles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    /// Median.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Maximum.
    pub max: Duration,
}

impl Latency {
    fn of(mut v: Vec<Duration>) -> Latency {
        if v.is_empty() {
            return Latency::default();
        }
        v.sort();
        let at = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1];
        Latency {
            p50: at(0.50),
            p99: at(0.99),
            max: v[v.len() - 1],
        }
    }
}

/// The figures measured.
#[derive(Clone, Debug, Default)]
pub struct BenchReport {
    /// The options run.
    pub ports: usize,
    /// Lossless PG entries per port.
    pub lossless_pgs: usize,
    /// APPL_DB keys at startup.
    pub appl_keys: usize,
    /// Startup: spawn → complete consumed APPL_DB.
    pub startup: Duration,
    /// Round trips of the daemon during startup.
    pub startup_round_trips: u64,
    /// The same startup computed in memory (the state machine alone, no Redis), for
    /// comparison.
    pub startup_in_memory: Duration,
    /// Changes made one at a time.
    pub changes: usize,
    /// Wall time of the one-at-a-time changes.
    pub changes_wall: Duration,
    /// Write → consumed by orchagent.
    pub latency: Latency,
    /// Write → daemon flush.
    pub flush_latency: Latency,
    /// Round trips of the daemon for the one-at-a-time changes.
    pub changes_round_trips: u64,
    /// The same changes applied to the state machine alone, in memory (CPU cost of the
    /// computation itself).
    pub in_memory_latency: Latency,
    /// Burst: first write → last change consumed.
    pub burst_wall: Duration,
    /// Round trips of the daemon for the burst.
    pub burst_round_trips: u64,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "bufmgrd benchmark: SN5600 (Spectrum-4), {} x 400G ports, {} lossless PGs per port, Mellanox model, redis-server on loopback",
            self.ports, self.lossless_pgs
        )?;
        writeln!(
            f,
            "startup (populated CONFIG_DB -> complete APPL_DB, {} keys, as consumed by orchagent): {:.1} ms, {} round trips (the state machine alone, in memory: {:.1} ms)",
            self.appl_keys,
            ms(self.startup),
            self.startup_round_trips,
            ms(self.startup_in_memory)
        )?;
        let per = |rt: u64| rt as f64 / self.changes.max(1) as f64;
        writeln!(
            f,
            "{} cable-length changes, one at a time: wall {:.1} ms; CONFIG_DB write -> APPL_DB consumed: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; write -> daemon flush: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {} round trips ({:.1} per change); the state machine alone, in memory: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            self.changes,
            ms(self.changes_wall),
            ms(self.latency.p50),
            ms(self.latency.p99),
            ms(self.latency.max),
            ms(self.flush_latency.p50),
            ms(self.flush_latency.p99),
            ms(self.flush_latency.max),
            self.changes_round_trips,
            per(self.changes_round_trips),
            ms(self.in_memory_latency.p50),
            ms(self.in_memory_latency.p99),
            ms(self.in_memory_latency.max)
        )?;
        write!(
            f,
            "{} cable-length changes in one burst: {:.1} ms until APPL_DB reflects the last; {} round trips ({:.2} per change)",
            self.changes,
            ms(self.burst_wall),
            self.burst_round_trips,
            per(self.burst_round_trips)
        )
    }
}

/// What the orchagent thread watches for.
enum Expect {
    /// The consumed APPL_DB equals this.
    Full(RawDb),
    /// Every PG of `port` references a profile with cable `len`.
    Cable {
        port: String,
        len: String,
        pgs: Vec<String>,
    },
}

impl Expect {
    fn met(&self, appl: &RawDb) -> bool {
        match self {
            Expect::Full(want) => appl == want,
            Expect::Cable { port, len, pgs } => {
                let marker = format!("_{len}_");
                pgs.iter().all(|pg| {
                    appl.get("BUFFER_PG_TABLE")
                        .and_then(|t| t.get(&format!("{port}:{pg}")))
                        .and_then(|f| f.get("profile"))
                        .is_some_and(|p| {
                            p.contains(&marker)
                                && appl
                                    .get("BUFFER_PROFILE_TABLE")
                                    .is_some_and(|t| t.contains_key(p))
                        })
                })
            }
        }
    }
}

/// The benchmark configuration: CONFIG_DB, the manager options and the port names.
pub fn config(opts: &BenchOptions) -> (RawDb, Options, Vec<String>) {
    // The lengths are literals that parse, so no port is left out.
    let ports: Vec<DefaultPort> = (0..opts.ports)
        .filter_map(|i| {
            Some(DefaultPort {
                name: format!("Ethernet{}", i * 8),
                port: Port::up(400_000, 8),
                cable: CableLength::parse(if i % 2 == 0 { "5m" } else { "40m" }).ok()?,
            })
        })
        .collect();
    let d = DefaultOptions::new("x86_64-nvidia_sn5600-r0", MMU_SN5600);
    let mut raw = mellanox_dynamic(&ports, &d).to_raw();
    let pgs: Vec<String> = ["3", "4", "2", "1", "5", "6"]
        .iter()
        .take(opts.lossless_pgs.clamp(1, 6))
        .map(|s| s.to_string())
        .collect();
    if let Some(t) = raw.get_mut("BUFFER_PG") {
        let lossless: Vec<String> = t
            .iter()
            .filter(|(_, f)| f.get("profile").is_some_and(|p| p == "NULL"))
            .map(|(k, _)| k.clone())
            .collect();
        for k in lossless {
            t.remove(&k);
        }
        for p in &ports {
            for pg in &pgs {
                t.insert(
                    format!("{}|{pg}", p.name),
                    to_fields(&[("profile", "NULL")]),
                );
            }
        }
    }
    let mut o = Options::new(Model::Mellanox(Mellanox), AsicModel::Spectrum4);
    o.zero_profiles = Some(ZeroProfiles::mellanox());
    (raw, o, ports.into_iter().map(|p| p.name).collect())
}

/// The STATE_DB orchagent publishes for `ports`.
fn state_inputs(ports: &[String]) -> RawDb {
    let mut s = RawDb::new();
    let t = s.entry("BUFFER_MAX_PARAM_TABLE".to_owned()).or_default();
    t.insert(
        "global".into(),
        to_fields(&[("mmu_size", &MMU_SN5600.to_string())]),
    );
    for p in ports {
        t.insert(
            p.clone(),
            to_fields(&[("max_priority_groups", "8"), ("max_queues", "16")]),
        );
    }
    s
}

/// Writes a dump into `db` in one transaction.
fn load(conn: &mut DbConnection, db: &RawDb) -> Result<(), SwssError> {
    let mut t = Table::new(DbConnection::open(conn.endpoint(), conn.db())?);
    for (table, entries) in db {
        let name = TableName::new(table.as_str())?;
        for (key, fields) in entries {
            t.set(&name, key, fields.clone());
        }
    }
    t.flush().map(|_| ())
}

/// The in-memory fresh start: what APPL_DB must become.
fn expected(cfg: &RawDb, opts: Options, ports: &[String]) -> Result<RawDb, DaemonError> {
    Ok(fresh_start(cfg, opts, ports)?.appl)
}

/// The in-memory fresh start.
fn fresh_start(cfg: &RawDb, opts: Options, ports: &[String]) -> Result<Harness, DaemonError> {
    let mut h = Harness::new(opts)?;
    h.load_config(cfg);
    for (table, entries) in state_inputs(ports) {
        for (key, fields) in entries {
            h.feed(crate::bufmgr::Input::StateSet {
                table: table.clone(),
                key,
                fields,
            });
        }
    }
    h.port_init_done();
    h.settle();
    Ok(h)
}

/// The expectation the orchagent thread checks after each consume, and the last consumed
/// APPL_DB (so an expectation already met when set is reported at once).
struct Watch {
    inner: Mutex<WatchInner>,
}

#[derive(Default)]
struct WatchInner {
    expect: Option<(Expect, mpsc::SyncSender<Instant>)>,
    latest: RawDb,
}

impl Watch {
    fn set(&self, e: Expect) -> mpsc::Receiver<Instant> {
        let (tx, rx) = mpsc::sync_channel(1);
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if e.met(&g.latest) {
            let _ = tx.send(Instant::now());
        } else {
            g.expect = Some((e, tx));
        }
        rx
    }

    fn check(&self, appl: &RawDb) {
        let now = Instant::now();
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if g.expect.as_ref().is_some_and(|(e, _)| e.met(appl)) {
            if let Some((_, tx)) = g.expect.take() {
                let _ = tx.send(now);
            }
        }
        g.latest.clone_from(appl);
    }
}

/// The orchagent thread: wakes on the APPL_DB channels, consumes, checks the expectation.
fn orchagent_thread(
    server: &RedisServer,
    watch: Arc<Watch>,
    stop: Arc<AtomicBool>,
) -> Result<std::thread::JoinHandle<()>, BenchError> {
    let ep = server.endpoint();
    let mut orch = Orchagent::connect(&ep)?;
    let client = ep.client(Db::Appl)?;
    let mut conn = ep.connect(&client)?;
    let t = std::thread::spawn(move || {
        let mut ps = conn.as_pubsub();
        for t in APPL_TABLES {
            if ps.subscribe(format!("{t}_CHANNEL@0")).is_err() {
                return;
            }
        }
        if ps
            .set_read_timeout(Some(Duration::from_millis(50)))
            .is_err()
        {
            return;
        }
        let mut first = true;
        while !stop.load(Ordering::Relaxed) {
            let woke = match ps.get_message() {
                Ok(_) => true,
                Err(e) if e.is_timeout() => false,
                Err(_) => return,
            };
            if woke || first {
                first = false;
                if matches!(orch.consume(), Ok(n) if n > 0) {
                    watch.check(orch.appl());
                }
            }
        }
    });
    Ok(t)
}

fn wait(rx: &mpsc::Receiver<Instant>, what: &'static str) -> Result<Instant, BenchError> {
    rx.recv_timeout(WAIT_LIMIT)
        .map_err(|_| BenchError::Timeout(what))
}

/// Runs the benchmark (see the module docs).
pub fn run(opts: BenchOptions) -> Result<BenchReport, BenchError> {
    let server = RedisServer::start()?;
    let ep = server.endpoint();
    let (cfg, mopts, ports) = config(&opts);
    let t = Instant::now();
    let want = expected(&cfg, mopts.clone(), &ports)?;
    let in_memory = t.elapsed();
    let pgs: Vec<String> = cfg
        .get("BUFFER_PG")
        .map(|t| {
            t.iter()
                .filter(|(k, f)| {
                    k.starts_with(&format!("{}|", ports[0]))
                        && f.get("profile").is_some_and(|p| p == "NULL")
                })
                .filter_map(|(k, _)| k.split_once('|').map(|(_, pg)| pg.to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let mut config_conn = DbConnection::open(&ep, Db::Config)?;
    load(&mut config_conn, &cfg)?;
    load(
        &mut DbConnection::open(&ep, Db::State)?,
        &state_inputs(&ports),
    )?;
    let mut appl_init = RawDb::new();
    appl_init
        .entry("PORT_TABLE".to_owned())
        .or_default()
        .insert("PortInitDone".into(), to_fields(&[("lanes", "0")]));
    load(&mut DbConnection::open(&ep, Db::Appl)?, &appl_init)?;

    let watch = Arc::new(Watch {
        inner: Mutex::new(WatchInner::default()),
    });
    let stop = Arc::new(AtomicBool::new(false));
    let orch = orchagent_thread(&server, Arc::clone(&watch), Arc::clone(&stop))?;
    let mut report = BenchReport {
        ports: opts.ports,
        lossless_pgs: pgs.len(),
        appl_keys: want.values().map(|t| t.len()).sum(),
        startup_in_memory: in_memory,
        changes: opts.changes,
        ..BenchReport::default()
    };

    // Startup.
    let rx = watch.set(Expect::Full(want));
    let t0 = Instant::now();
    let mopts_ref = mopts.clone();
    let daemon = Daemon::new(DaemonOptions::new(ep.clone(), mopts))?;
    let handle = daemon.handle();
    let thread = daemon.spawn()?;
    let result = (|| {
        let done = wait(&rx, "the startup APPL_DB")?;
        report.startup = done - t0;
        report.startup_round_trips = handle.round_trips();
        measure_changes(
            &mut report,
            &cfg,
            mopts_ref.clone(),
            &handle,
            &watch,
            &mut config_conn,
            &ports,
            &pgs,
        )
    })();
    handle.stop();
    stop.store(true, Ordering::Relaxed);
    let joined = thread.join();
    let _ = orch.join();
    result?;
    match joined {
        Ok(r) => r?,
        Err(_) => return Err(BenchError::Timeout("the daemon thread (it panicked)")),
    }
    Ok(report)
}

fn hset(conn: &mut DbConnection, port: &str, len: &str) -> Result<(), SwssError> {
    conn.query(
        "HSET",
        redis::cmd("HSET")
            .arg("CABLE_LENGTH|AZURE")
            .arg(port)
            .arg(len),
    )
}

#[allow(clippy::too_many_arguments)]
fn measure_changes(
    report: &mut BenchReport,
    base: &RawDb,
    mopts: Options,
    handle: &DaemonHandle,
    watch: &Watch,
    conn: &mut DbConnection,
    ports: &[String],
    pgs: &[String],
) -> Result<(), BenchError> {
    let mut current: Vec<usize> = (0..ports.len())
        .map(|i| if i % 2 == 0 { 0 } else { 3 })
        .collect();
    let next_len = |i: usize, current: &mut Vec<usize>| {
        let p = i % ports.len();
        current[p] = (current[p] + 1 + i / ports.len() % 2) % LENGTHS.len();
        (p, LENGTHS[current[p]])
    };
    // The state machine alone on the same changes.
    let mut h = fresh_start(base, mopts.clone(), ports)?;
    let mut mem = Vec::with_capacity(report.changes);
    let mut shadow = current.clone();
    for i in 0..report.changes {
        let (p, len) = next_len(i, &mut shadow);
        let mut cables = h
            .config
            .get("CABLE_LENGTH")
            .and_then(|t| t.get("AZURE"))
            .cloned()
            .unwrap_or_default();
        cables.insert(ports[p].clone(), len.to_owned());
        let t = Instant::now();
        h.feed(crate::bufmgr::Input::ConfigSet {
            table: "CABLE_LENGTH".into(),
            key: "AZURE".into(),
            fields: cables,
        });
        mem.push(t.elapsed());
    }
    report.in_memory_latency = Latency::of(mem);
    drop(h);

    let mut lat = Vec::with_capacity(report.changes);
    let mut flush_lat = Vec::with_capacity(report.changes);
    let rt0 = handle.round_trips();
    let start = Instant::now();
    for i in 0..report.changes {
        let (p, len) = next_len(i, &mut current);
        let rx = watch.set(Expect::Cable {
            port: ports[p].clone(),
            len: len.to_owned(),
            pgs: pgs.to_vec(),
        });
        let flushes = handle.with_status(|s| s.flushes);
        let t = Instant::now();
        hset(conn, &ports[p], len)?;
        let seen = wait(&rx, "a cable-length change in APPL_DB")?;
        lat.push(seen - t);
        let flushed = handle.with_status(|s| (s.flushes > flushes).then_some(s.last_flush));
        if let Some(Some(f)) = flushed {
            flush_lat.push(f.saturating_duration_since(t));
        }
    }
    report.changes_wall = start.elapsed();
    report.changes_round_trips = handle.round_trips() - rt0;
    report.latency = Latency::of(lat);
    report.flush_latency = Latency::of(flush_lat);

    // The burst: every change written back to back (pipelined, one command each so each
    // makes its own keyspace event), until the consumed APPL_DB equals a fresh start on the
    // final CONFIG_DB.
    let mut pipe = redis::pipe();
    for i in 0..report.changes {
        let (p, len) = next_len(i, &mut current);
        pipe.cmd("HSET")
            .arg("CABLE_LENGTH|AZURE")
            .arg(&ports[p])
            .arg(len)
            .ignore();
    }
    let mut cfg = base.clone();
    let cables = cfg
        .entry("CABLE_LENGTH".to_owned())
        .or_default()
        .entry("AZURE".to_owned())
        .or_default();
    for (p, c) in current.iter().enumerate() {
        cables.insert(ports[p].clone(), LENGTHS[*c].to_owned());
    }
    let rx = watch.set(Expect::Full(expected(&cfg, mopts, ports)?));
    let rt0 = handle.round_trips();
    let t = Instant::now();
    let _: () = conn.query_pipeline("burst", &pipe)?;
    let done = wait(&rx, "the burst in APPL_DB")?;
    report.burst_wall = done.saturating_duration_since(t);
    report.burst_round_trips = handle.round_trips() - rt0;
    Ok(())
}
