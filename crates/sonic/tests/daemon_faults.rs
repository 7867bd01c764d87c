//! Fault tests of the daemon against a real `redis-server` (real clock, fast start, an
//! orchagent stand-in consuming continuously):
//! - Redis killed (SIGKILL) and restarted on the same port while cable lengths are being
//!   changed. Persistence: an RDB snapshot (`SAVE`) taken just before the kill, loaded by the
//!   restarted server, as a crashed Redis with RDB persistence would; the changes made
//!   between the snapshot and the crash are lost with it, and the writer retries the ones it
//!   could not make while the server was down. Afterwards APPL_DB (as orchagent consumed it)
//!   and the STATE_DB mirrors equal what a fresh start computes on the CONFIG_DB that Redis
//!   ends up with.
//! - Redis restarted empty (no persistence) and the configuration reloaded as SONiC's
//!   `config reload` does, after the daemon has already reconciled with the empty server:
//!   the end state again equals a fresh start on the reloaded configuration.
//! - Connections killed (`CLIENT KILL`) with Redis keeping its data: the daemon resubscribes,
//!   reconciles, and writes nothing when nothing changed; a change made while it was
//!   disconnected is applied.
//! - Malformed CONFIG_DB entries leave an error log line naming the entry and the daemon
//!   carries on.
//!
//! Waits are for conditions with generous deadlines; no duration is asserted.

mod bufmgr_common;
mod daemon_common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bufmgr_common::*;
use daemon_common::*;
use headroom_sonic::bufmgr::LogLevel;
use headroom_sonic::daemon::reconcile::APPL_TABLES;
use headroom_sonic::daemon::{ClockMode, CONFIG_TABLES};
use headroom_sonic::swss::testing::RedisServer;
use headroom_sonic::swss::{Db, DbConnection, Endpoint};
use headroom_sonic::tables::state::AsicModel;
use headroom_sonic::tables::RawDb;

const SPC2: AsicModel = AsicModel::Spectrum2;
const LENGTHS: [&str; 6] = ["5m", "10m", "40m", "100m", "300m", "7m"];

fn eight_ports() -> Vec<P> {
    const NAMES: [&str; 8] = [
        "Ethernet0",
        "Ethernet4",
        "Ethernet8",
        "Ethernet12",
        "Ethernet16",
        "Ethernet20",
        "Ethernet24",
        "Ethernet28",
    ];
    NAMES
        .iter()
        .enumerate()
        .map(|(i, n)| port(n, if i % 2 == 0 { 100_000 } else { 50_000 }, "5m"))
        .collect()
}

/// APPL_DB buffer tables as consumed by orchagent.
fn appl(ep: &Endpoint) -> RawDb {
    dump(ep, Db::Appl, &APPL_TABLES)
}

/// The profile of a PG in the consumed APPL_DB.
fn pg_profile(ep: &Endpoint, key: &str) -> Option<String> {
    appl(ep)
        .get("BUFFER_PG_TABLE")?
        .get(key)?
        .get("profile")
        .cloned()
}

/// The STATE_DB mirrors.
fn mirrors(db: &RawDb) -> RawDb {
    db.iter()
        .filter(|(t, _)| *t == "BUFFER_POOL_TABLE" || *t == "BUFFER_PROFILE_TABLE")
        .map(|(t, e)| (t.clone(), e.clone()))
        .collect()
}

/// Waits until APPL_DB and the mirrors equal a fresh start on the CONFIG_DB Redis holds now;
/// asserts with a readable diff at the deadline.
fn assert_converges_to_fresh_start(ep: &Endpoint) {
    let reference = || {
        let cfg = dump(ep, Db::Config, &CONFIG_TABLES);
        let h = start(options(SPC2, true), &cfg, MMU_SN3800, None);
        (h.appl.clone(), mirrors(&h.state))
    };
    let converged =
        headroom_sonic::swss::testing::wait_for(DEADLINE, Duration::from_millis(50), || {
            let (want, want_state) = reference();
            (appl(ep) == want
                && mirrors(&dump(ep, Db::State, &[])) == want_state
                && pending_appl_keys(ep) == 0)
                .then_some(())
        });
    if converged.is_none() {
        let (want, want_state) = reference();
        assert_eq!(appl(ep), want, "APPL_DB vs a fresh start");
        assert_eq!(mirrors(&dump(ep, Db::State, &[])), want_state, "mirrors");
        panic!("APPL_DB keys still pending");
    }
}

/// Sets one port's cable length, retrying while Redis is unreachable; returns the number of
/// failed attempts.
fn set_cable(conn: &mut DbConnection, port: &str, len: &str) -> usize {
    for failed in 0..3000 {
        let r: Result<(), _> = conn.query(
            "HSET",
            redis::cmd("HSET")
                .arg("CABLE_LENGTH|AZURE")
                .arg(port)
                .arg(len),
        );
        if r.is_ok() {
            return failed;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("Redis did not come back");
}

/// Eight ports configured and the daemon converged on them.
fn start_eight_ports(ep: &Endpoint) -> (Vec<P>, Running) {
    let ports = eight_ports();
    populate(ep, &sn3800(&ports), MMU_SN3800);
    let d = Running::start(ep);
    assert_converges_to_fresh_start(ep);
    (ports, d)
}

struct Running {
    handle: headroom_sonic::daemon::DaemonHandle,
    thread: Option<std::thread::JoinHandle<Result<(), headroom_sonic::daemon::DaemonError>>>,
    orch_stop: Arc<AtomicBool>,
    orch: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    fn start(ep: &Endpoint) -> Running {
        let (handle, thread) = spawn_daemon(ep.clone(), options(SPC2, true), ClockMode::Real);
        let orch_stop = Arc::new(AtomicBool::new(false));
        let orch = spawn_orchagent(ep.clone(), Arc::clone(&orch_stop));
        Running {
            handle,
            thread: Some(thread),
            orch_stop,
            orch: Some(orch),
        }
    }

    fn daemon_alive(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.handle.stop();
        self.orch_stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let r = t.join();
            assert!(
                matches!(r, Ok(Ok(()))) || std::thread::panicking(),
                "daemon ended with {r:?}"
            );
        }
        if let Some(t) = self.orch.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn redis_killed_and_restarted_while_cables_change_converges_to_a_fresh_start() {
    const BEFORE_SAVE: usize = 40;
    const AFTER_RESTART: usize = 40;
    let mut server = RedisServer::start().expect("redis-server");
    let ep = server.endpoint();
    let (ports, d) = start_eight_ports(&ep);

    // The writer keeps changing cables until 40 changes after the restart, so the kill
    // always happens while it is writing.
    let done = Arc::new(AtomicUsize::new(0));
    let restarted = Arc::new(AtomicBool::new(false));
    let writer = {
        let ep = ep.clone();
        let done = Arc::clone(&done);
        let restarted = Arc::clone(&restarted);
        let names: Vec<&'static str> = ports.iter().map(|p| p.name).collect();
        std::thread::spawn(move || {
            let mut conn = DbConnection::open(&ep, Db::Config).expect("connect");
            let (mut after, mut retries) = (0, 0);
            for i in 0.. {
                let port = names[i % names.len()];
                let len = LENGTHS[(i * 7 / names.len()) % LENGTHS.len()];
                retries += set_cable(&mut conn, port, len);
                done.store(i + 1, Ordering::SeqCst);
                if restarted.load(Ordering::SeqCst) {
                    after += 1;
                    if after >= AFTER_RESTART {
                        break;
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            retries
        })
    };
    eventually("changes under way", || {
        done.load(Ordering::SeqCst) >= BEFORE_SAVE
    });
    // The snapshot, then the crash.
    let mut c = DbConnection::open(&ep, Db::Config).expect("connect");
    let _: () = c.query("SAVE", &redis::cmd("SAVE")).expect("SAVE");
    drop(c);
    server.restart().expect("restart");
    restarted.store(true, Ordering::SeqCst);
    let retries = writer.join().expect("writer");
    eprintln!(
        "{} cable changes written, {retries} writes retried while Redis was down",
        done.load(Ordering::SeqCst)
    );

    assert_converges_to_fresh_start(&ep);
    assert!(d.daemon_alive());
    let (losses, reconciles) = d
        .handle
        .with_status(|s| (s.connection_losses, s.reconciles));
    assert!(losses >= 1, "the loss was noticed");
    assert!(
        reconciles >= 2,
        "start-up and after the restart: {reconciles}"
    );
    let errors: Vec<String> = d.handle.with_status(|s| {
        s.logs
            .iter()
            .filter(|(l, _)| *l == LogLevel::Error)
            .map(|(_, m)| m.clone())
            .collect()
    });
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn lost_connections_resubscribe_without_rewriting_and_keep_changes_made_meanwhile() {
    let server = RedisServer::start().expect("redis-server");
    let ep = server.endpoint();
    let (_, d) = start_eight_ports(&ep);
    let idle = |d: &Running| {
        d.handle
            .with_status(|s| s.lost.is_empty() && !s.reconcile_pending)
    };
    eventually("idle", || idle(&d));
    let (ops, reconciles) = d.handle.with_status(|s| (s.appl_ops, s.reconciles));

    let mut admin = DbConnection::open(&ep, Db::Config).expect("connect");
    let kill = |admin: &mut DbConnection| {
        for kind in ["pubsub", "normal"] {
            let _: i64 = admin
                .query(
                    "CLIENT KILL",
                    redis::cmd("CLIENT")
                        .arg("KILL")
                        .arg("TYPE")
                        .arg(kind)
                        .arg("SKIPME")
                        .arg("yes"),
                )
                .expect("CLIENT KILL");
        }
    };
    // Nothing changed: resubscribed, reconciled, nothing written.
    kill(&mut admin);
    eventually("reconciled after the loss", || {
        d.handle.with_status(|s| s.reconciles > reconciles) && idle(&d)
    });
    assert_eq!(
        d.handle.with_status(|s| s.appl_ops),
        ops,
        "nothing rewritten"
    );
    assert_eq!(pending_appl_keys(&ep), 0);

    // A change made while the daemon is disconnected is not lost.
    let reconciles = d.handle.with_status(|s| s.reconciles);
    kill(&mut admin);
    let _ = set_cable(&mut admin, "Ethernet0", "300m");
    eventually("the change is applied", || {
        pg_profile(&ep, "Ethernet0:3-4").as_deref() == Some("pg_lossless_100000_300m_profile")
    });
    eventually("reconciled", || {
        d.handle.with_status(|s| s.reconciles > reconciles) && idle(&d)
    });
    assert_converges_to_fresh_start(&ep);
    assert!(d.daemon_alive());
}

#[test]
fn malformed_entries_are_logged_and_the_daemon_carries_on() {
    let server = RedisServer::start().expect("redis-server");
    let ep = server.endpoint();
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "5m"),
        port("Ethernet8", 50_000, "40m"),
    ];
    populate(&ep, &sn3800(&ports), MMU_SN3800);
    let d = Running::start(&ep);
    assert_converges_to_fresh_start(&ep);

    let mut w = Writer::open(&ep, Db::Config);
    w.set(
        "PORT",
        "Ethernet0",
        &[
            ("speed", "fast"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    w.set("BUFFER_PG", "Ethernet4|3-", &[("profile", "NULL")]);
    w.set(
        "CABLE_LENGTH",
        "AZURE",
        &[
            ("Ethernet0", "5m"),
            ("Ethernet4", "forty"),
            ("Ethernet8", "300m"),
        ],
    );
    let logged = |needle: &'static str| {
        let h = d.handle.clone();
        move || {
            h.with_status(|s| {
                s.logs
                    .iter()
                    .any(|(l, m)| *l == LogLevel::Error && m.contains(needle))
            })
        }
    };
    eventually("a log line for the bad speed", logged("PORT|Ethernet0"));
    eventually("a log line for the bad PG range", logged("Ethernet4|3-"));
    eventually("a log line for the bad cable", logged("forty"));
    // The valid part of the cable entry applies, and the daemon keeps working.
    eventually("Ethernet8 on 300 m", || {
        pg_profile(&ep, "Ethernet8:3-4").as_deref() == Some("pg_lossless_50000_300m_profile")
    });
    w.set(
        "PORT",
        "Ethernet0",
        &[
            ("speed", "25000"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    eventually("Ethernet0 at 25G", || {
        pg_profile(&ep, "Ethernet0:3-4").as_deref() == Some("pg_lossless_25000_5m_profile")
    });
    assert!(d.daemon_alive());
}

#[test]
fn redis_restarted_empty_then_reloaded_converges_to_a_fresh_start() {
    // No persistence: the restarted server is empty, and the configuration comes back as
    // SONiC's `config reload` brings it (CONFIG_DB, then what orchagent publishes), in one
    // transaction per database. The daemon sees the empty databases first (and removes
    // everything), then the reloaded ones; it must end where a fresh start on the reloaded
    // configuration ends.
    let mut server = RedisServer::start().expect("redis-server");
    let ep = server.endpoint();
    let (ports, d) = start_eight_ports(&ep);
    let mut changed = ports.clone();
    changed[0].cable = "300m";
    changed[1].speed = 100_000;
    let reconciles = d.handle.with_status(|s| s.reconciles);
    std::fs::remove_file(server.dir().join("dump.rdb")).ok();
    server.restart().expect("restart");
    // Let the daemon see the empty server first: it resubscribes and reconciles.
    eventually("reconciled with the empty server", || {
        d.handle
            .with_status(|s| s.reconciles > reconciles && s.lost.is_empty() && !s.reconcile_pending)
    });
    populate(&ep, &sn3800(&changed), MMU_SN3800);
    assert_converges_to_fresh_start(&ep);
    assert!(d.daemon_alive());
}
