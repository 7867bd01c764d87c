//! `headroom sonic bufmgrd` as a process: against a throw-away `redis-server` loaded with the
//! shipped SN3700 example it fills APPL_DB and stops cleanly on SIGTERM; bad arguments are one
//! error line and exit code 2. Waits are for conditions with generous deadlines.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use headroom_sonic::daemon::orchagent::Orchagent;
use headroom_sonic::swss::testing::{wait_for, RedisServer};
use headroom_sonic::swss::{Db, DbConnection, Table, TableName};
use headroom_sonic::tables::raw::{self, RawDb};

const DEADLINE: Duration = Duration::from_secs(60);

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/sonic/sn3700")
        .join(file)
}

fn load(server: &RedisServer, db: Db, dump: &RawDb) {
    let mut t = Table::new(DbConnection::open(&server.endpoint(), db).expect("connect"));
    for (table, entries) in dump {
        let name = TableName::new(table.as_str()).expect("table");
        for (key, fields) in entries {
            t.set(&name, key, fields.clone());
        }
    }
    t.flush().expect("load");
}

fn nested(file: &str) -> RawDb {
    raw::from_nested_json(&std::fs::read_to_string(example(file)).expect("read")).expect("json")
}

#[test]
fn bufmgrd_fills_appl_db_and_stops_on_sigterm() {
    let server = RedisServer::start().expect("redis-server");
    load(&server, Db::Config, &nested("config_db.json"));
    load(&server, Db::State, &nested("state_db.json"));
    let mut init = RawDb::new();
    init.entry("PORT_TABLE".into()).or_default().insert(
        "PortInitDone".into(),
        [("lanes".to_string(), "0".to_string())].into(),
    );
    load(&server, Db::Appl, &init);
    let mut child = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["sonic", "bufmgrd", "--redis"])
        .arg(format!("redis://127.0.0.1:{}", server.port()))
        .arg("--asic-table")
        .arg(example("asic_table.json"))
        .args(["--zero-profiles", "mellanox"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn headroom");
    let config = nested("config_db.json");
    // Dynamic lossless PGs of admin-up ports (an admin-down port gets zero profiles).
    let up = |key: &str| {
        let port = key.split('|').next().unwrap_or_default();
        config["PORT"]
            .get(port)
            .is_some_and(|f| f.get("admin_status").is_some_and(|s| s == "up"))
    };
    let lossless: Vec<String> = config["BUFFER_PG"]
        .iter()
        .filter(|(k, f)| up(k) && f.get("profile").is_some_and(|p| p == "NULL"))
        .map(|(k, _)| k.replace('|', ":"))
        .collect();
    assert!(!lossless.is_empty());
    let mut orch = Orchagent::connect(&server.endpoint()).expect("orchagent");
    let filled = wait_for(DEADLINE, Duration::from_millis(50), || {
        orch.consume().expect("consume");
        let appl = orch.appl();
        let ok = appl.contains_key("BUFFER_POOL_TABLE")
            && lossless.iter().all(|k| {
                appl.get("BUFFER_PG_TABLE")
                    .and_then(|t| t.get(k))
                    .and_then(|f| f.get("profile"))
                    .is_some_and(|p| {
                        p.starts_with("pg_lossless_")
                            && appl
                                .get("BUFFER_PROFILE_TABLE")
                                .is_some_and(|t| t.contains_key(p))
                    })
            });
        ok.then_some(())
    });
    if filled.is_none() {
        let _ = child.kill();
        let out = child.wait_with_output().expect("wait");
        panic!(
            "APPL_DB not filled; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let exited = wait_for(DEADLINE, Duration::from_millis(20), || {
        child.try_wait().expect("try_wait")
    });
    let Some(exit) = exited else {
        let _ = child.kill();
        panic!("bufmgrd did not stop on SIGTERM");
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    assert!(exit.success(), "{exit}: {stderr}");
    assert!(stderr.contains("SIGTERM"), "{stderr}");
    assert!(
        !stderr.contains('\x1b'),
        "no colour codes in logs that go to a pipe: {stderr:?}"
    );
}

fn run_bad(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(["sonic", "bufmgrd"])
        .args(args)
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bufmgrd_bad_arguments_are_one_line_and_exit_2() {
    let (code, err) = run_bad(&["--redis", "http://127.0.0.1"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: invalid Redis URL"), "{err}");

    let (code, err) = run_bad(&[
        "--redis",
        "redis://127.0.0.1:1",
        "--asic-table",
        "/nonexistent/asic_table.json",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/asic_table.json"), "{err}");

    let (code, err) = run_bad(&[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--redis"), "{err}");
}
