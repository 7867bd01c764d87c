//! The daemon on a throw-away `redis-server` as a [`Switch`]: inputs are written to Redis
//! (CONFIG_DB hashes as SONiC's `ConfigDBConnector` writes them: `HSET` the fields, `HDEL` the
//! ones dropped), the daemon (manual clock, so timers behave exactly as in the in-memory
//! harness) is waited for until it has fed them, and an orchagent stand-in consumes APPL_DB
//! and confirms in APPL_STATE_DB. The views are read back from Redis after every step.
//!
//! Every wait is bounded by [`DEADLINE`] (generous: the machine may be loaded) and only
//! waits for a condition; nothing asserts a duration.
#![allow(dead_code)]

use std::thread::JoinHandle;
use std::time::Duration;

use headroom_sonic::bufmgr::{BufferManager, LogLevel, Options, Output};
use headroom_sonic::daemon::orchagent::Orchagent;
use headroom_sonic::daemon::reconcile::APPL_TABLES;
use headroom_sonic::daemon::{
    ClockMode, Daemon, DaemonError, DaemonHandle, DaemonOptions, FedView, APPL_STATE_TABLES,
};
use headroom_sonic::swss::testing::{wait_for, RedisServer};
use headroom_sonic::swss::{Db, DbConnection, Endpoint, Table, TableName};
use headroom_sonic::tables::RawDb;

use crate::bufmgr_common::Switch;

/// Upper bound of every wait.
pub const DEADLINE: Duration = Duration::from_secs(60);
/// Poll step of the waits.
pub const STEP: Duration = Duration::from_millis(5);

/// Writes rows of one database.
pub struct Writer {
    conn: DbConnection,
}

impl Writer {
    /// A writer on `db` of `endpoint`.
    pub fn open(endpoint: &Endpoint, db: Db) -> Writer {
        Writer {
            conn: DbConnection::open(endpoint, db).expect("connect"),
        }
    }

    /// Sets the hash to exactly `fields` (`HSET` + `HDEL` of the others, one transaction).
    pub fn set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]) {
        let rk = self
            .conn
            .db()
            .redis_key(&TableName::new(table).expect("table"), key);
        let old: Vec<String> = self
            .conn
            .query("HKEYS", redis::cmd("HKEYS").arg(&rk))
            .expect("HKEYS");
        let mut pipe = redis::pipe();
        pipe.atomic();
        pipe.cmd("HSET").arg(&rk);
        for (f, v) in fields {
            pipe.arg(*f).arg(*v);
        }
        pipe.ignore();
        let gone: Vec<&String> = old
            .iter()
            .filter(|o| !fields.iter().any(|(f, _)| f == o))
            .collect();
        if !gone.is_empty() {
            pipe.cmd("HDEL").arg(&rk).arg(gone).ignore();
        }
        let _: () = self.conn.query_pipeline("HSET/HDEL", &pipe).expect("write");
    }

    /// Deletes a row.
    pub fn del(&mut self, table: &str, key: &str) {
        let rk = self
            .conn
            .db()
            .redis_key(&TableName::new(table).expect("table"), key);
        let _: () = self
            .conn
            .query("DEL", redis::cmd("DEL").arg(rk))
            .expect("DEL");
    }

    /// Writes a whole dump in one transaction, tables and keys in order.
    pub fn load(&mut self, db: &RawDb) {
        let mut pipe = redis::pipe();
        pipe.atomic();
        for (table, entries) in db {
            let t = TableName::new(table.as_str()).expect("table");
            for (key, fields) in entries {
                pipe.cmd("HSET").arg(self.conn.db().redis_key(&t, key));
                for (f, v) in fields {
                    pipe.arg(f).arg(v);
                }
                pipe.ignore();
            }
        }
        let _: () = self.conn.query_pipeline("load", &pipe).expect("load");
    }

    /// The connection.
    pub fn conn(&mut self) -> &mut DbConnection {
        &mut self.conn
    }
}

/// Every hash of `tables` in database `db` (all tables when `tables` is empty).
pub fn dump(endpoint: &Endpoint, db: Db, tables: &[&str]) -> RawDb {
    let mut conn = DbConnection::open(endpoint, db).expect("connect");
    let names: Vec<TableName> = if tables.is_empty() {
        let keys: Vec<String> = conn
            .query("KEYS", redis::cmd("KEYS").arg("*"))
            .expect("KEYS");
        let mut names: Vec<TableName> = keys
            .iter()
            .filter_map(|k| db.split_key(k).ok().map(|(t, _)| t))
            .collect();
        names.sort();
        names.dedup();
        names
    } else {
        tables
            .iter()
            .map(|t| TableName::new(*t).expect("table"))
            .collect()
    };
    let mut out = RawDb::new();
    for e in Table::new(conn).enumerate(&names).expect("enumerate") {
        out.entry(e.table.as_str().to_owned())
            .or_default()
            .insert(e.key, e.fields);
    }
    out
}

/// A daemon thread on `endpoint`.
pub fn spawn_daemon(
    endpoint: Endpoint,
    opts: Options,
    clock: ClockMode,
) -> (DaemonHandle, JoinHandle<Result<(), DaemonError>>) {
    let mut o = DaemonOptions::new(endpoint, opts);
    o.clock = clock;
    o.fast_start = clock == ClockMode::Real;
    o.record = true;
    let d = Daemon::new(o).expect("daemon");
    let h = d.handle();
    let t = d.spawn().expect("spawn");
    assert!(
        wait_for(DEADLINE, STEP, || h
            .with_status(|s| s.started)
            .then_some(()))
        .is_some(),
        "daemon did not start"
    );
    (h, t)
}

/// The daemon with manual clock, a Redis server and an orchagent stand-in.
pub struct RedisSwitch {
    pub server: RedisServer,
    pub handle: DaemonHandle,
    thread: Option<JoinHandle<Result<(), DaemonError>>>,
    orch: Orchagent,
    config_w: Writer,
    state_w: Writer,
    appl_w: Writer,
    want: FedView,
    appl: RawDb,
    state: RawDb,
    writes: Vec<Output>,
    logs: Vec<(LogLevel, String)>,
    mgr: BufferManager,
}

impl RedisSwitch {
    /// Waits until the daemon has fed everything written, flushes, lets orchagent consume
    /// (feeding its confirmations back), and refreshes the views.
    fn sync(&mut self) {
        let want = self.want.clone();
        let ok = wait_for(DEADLINE, STEP, || {
            self.handle
                .with_status(|s| {
                    s.fed.config == want.config
                        && s.fed.state == want.state
                        && s.fed.port_init_done == want.port_init_done
                })
                .then_some(())
        });
        assert!(ok.is_some(), "daemon did not feed the inputs in time");
        self.barrier(Duration::ZERO);
    }

    /// Advances the daemon's clock, then consumes until quiet, and refreshes the views.
    fn barrier(&mut self, by: Duration) {
        assert!(self.handle.advance(by, DEADLINE), "daemon did not answer");
        for _ in 0..100 {
            if self.orch.consume().expect("consume") == 0 {
                break;
            }
            let ep = self.server.endpoint();
            let ok = wait_for(DEADLINE, STEP, || {
                let confirmed = dump(&ep, Db::ApplState, &APPL_STATE_TABLES);
                self.handle
                    .with_status(|s| s.fed.appl_state == confirmed)
                    .then_some(())
            });
            assert!(ok.is_some(), "daemon did not feed orchagent's responses");
            assert!(
                self.handle.advance(Duration::ZERO, DEADLINE),
                "daemon did not answer"
            );
        }
        self.refresh();
    }

    fn refresh(&mut self) {
        let ep = self.server.endpoint();
        self.appl = dump(&ep, Db::Appl, &APPL_TABLES);
        self.state = dump(&ep, Db::State, &[]);
        let (writes, logs) = self
            .handle
            .with_status(|s| (s.outputs.clone(), s.logs.clone()));
        self.writes = writes;
        self.logs = logs;
        self.mgr = self
            .handle
            .inspect(|m| m.clone(), DEADLINE)
            .expect("daemon answers");
    }
}

impl Drop for RedisSwitch {
    fn drop(&mut self) {
        self.handle.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Switch for RedisSwitch {
    fn create(opts: Options) -> Self {
        let server = RedisServer::start().expect("redis-server");
        let ep = server.endpoint();
        let mut appl_w = Writer::open(&ep, Db::Appl);
        // What a warm reboot leaves: the consumed APPL_DB.
        appl_w.load(&opts.preserved_appl_db);
        let mgr = BufferManager::new(opts.clone()).expect("manager");
        let (handle, thread) = spawn_daemon(ep.clone(), opts, ClockMode::Manual);
        let mut s = RedisSwitch {
            orch: Orchagent::connect(&ep).expect("orchagent"),
            config_w: Writer::open(&ep, Db::Config),
            state_w: Writer::open(&ep, Db::State),
            appl_w,
            server,
            handle,
            thread: Some(thread),
            want: FedView::default(),
            appl: RawDb::new(),
            state: RawDb::new(),
            writes: Vec::new(),
            logs: Vec::new(),
            mgr,
        };
        s.barrier(Duration::ZERO);
        s
    }

    fn config_set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]) {
        self.config_w.set(table, key, fields);
        set(&mut self.want.config, table, key, fields);
        self.sync();
    }

    fn config_del(&mut self, table: &str, key: &str) {
        self.config_w.del(table, key);
        if let Some(t) = self.want.config.get_mut(table) {
            t.remove(key);
            if t.is_empty() {
                self.want.config.remove(table);
            }
        }
        self.sync();
    }

    fn state_set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]) {
        self.state_w.set(table, key, fields);
        set(&mut self.want.state, table, key, fields);
        self.sync();
    }

    fn port_init_done(&mut self) {
        self.appl_w
            .set("PORT_TABLE", "PortInitDone", &[("lanes", "0")]);
        self.want.port_init_done = true;
        self.sync();
    }

    fn load_config(&mut self, db: &RawDb) {
        self.config_w.load(db);
        for (t, entries) in db {
            for (k, f) in entries {
                self.want
                    .config
                    .entry(t.clone())
                    .or_default()
                    .insert(k.clone(), f.clone());
            }
        }
        self.sync();
    }

    fn advance(&mut self, d: Duration) {
        self.barrier(d);
    }

    fn manager(&self) -> &BufferManager {
        &self.mgr
    }
    fn appl(&self) -> &RawDb {
        &self.appl
    }
    fn state(&self) -> &RawDb {
        &self.state
    }
    fn config(&self) -> &RawDb {
        &self.want.config
    }
    fn writes(&self) -> &[Output] {
        &self.writes
    }
    fn logs(&self) -> &[(LogLevel, String)] {
        &self.logs
    }
    fn deletes_absent_rows(&self) -> bool {
        false
    }
}

fn set(db: &mut RawDb, table: &str, key: &str, fields: &[(&str, &str)]) {
    db.entry(table.to_owned())
        .or_default()
        .insert(key.to_owned(), headroom_sonic::bufmgr::to_fields(fields));
}

/// Writes what a populated switch has before buffermgrd starts: CONFIG_DB `config`,
/// STATE_DB `BUFFER_MAX_PARAM_TABLE` (MMU size, per-port maxima) and APPL_DB
/// `PORT_TABLE:PortInitDone`.
pub fn populate(endpoint: &Endpoint, config: &RawDb, mmu: u64) {
    Writer::open(endpoint, Db::Config).load(config);
    let mut state = RawDb::new();
    let mut put = |key: &str, fields: &[(&str, &str)]| {
        state
            .entry("BUFFER_MAX_PARAM_TABLE".to_owned())
            .or_default()
            .insert(key.to_owned(), headroom_sonic::bufmgr::to_fields(fields));
    };
    put("global", &[("mmu_size", &mmu.to_string())]);
    for port in config.get("PORT").into_iter().flat_map(|t| t.keys()) {
        put(port, &[("max_priority_groups", "8"), ("max_queues", "16")]);
    }
    Writer::open(endpoint, Db::State).load(&state);
    Writer::open(endpoint, Db::Appl).set("PORT_TABLE", "PortInitDone", &[("lanes", "0")]);
}

/// An orchagent stand-in consuming continuously on its own thread (errors, e.g. while Redis
/// restarts, are retried) until `stop` is set.
pub fn spawn_orchagent(
    endpoint: Endpoint,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut orch = loop {
            match Orchagent::connect(&endpoint) {
                Ok(o) => break o,
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            match orch.consume() {
                Ok(0) => std::thread::sleep(Duration::from_millis(2)),
                Ok(_) => {}
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    })
}

/// Waits until `probe` holds (bounded by [`DEADLINE`]).
pub fn eventually(what: &str, mut probe: impl FnMut() -> bool) {
    assert!(
        wait_for(DEADLINE, Duration::from_millis(20), || probe()
            .then_some(()))
        .is_some(),
        "timed out waiting for {what}"
    );
}

/// Number of keys with pending ProducerStateTable operations in the APPL_DB buffer tables.
pub fn pending_appl_keys(endpoint: &Endpoint) -> usize {
    let mut conn = DbConnection::open(endpoint, Db::Appl).expect("connect");
    APPL_TABLES
        .iter()
        .map(|t| {
            let n: usize = conn
                .query("SCARD", redis::cmd("SCARD").arg(format!("{t}_KEY_SET")))
                .expect("SCARD");
            n
        })
        .sum()
}
