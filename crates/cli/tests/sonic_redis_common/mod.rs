//! Shared helpers of the `sonic_redis_*` tests: a throw-away `redis-server` standing in for a
//! switch's Redis, loaded with the shipped `examples/sonic/` files (CONFIG_DB from
//! `config_db.json`, STATE_DB from `state_db.json` and, as buffermgrd writes it at start-up,
//! `asic_table.json`), and runs of the `headroom` binary.

#![allow(dead_code)]

#[path = "../common/mod.rs"]
mod common;
pub use common::{example, headroom, stderr, stdout};

use std::path::Path;
use std::process::Output;

use headroom_sonic::swss::testing::RedisServer;
use headroom_sonic::swss::{table, Db, DbConnection, Table, TableName};
use headroom_sonic::tables::raw::{self, RawDb};

/// The CONFIG_DB tables the tests compare: every table the CLI reads or writes (the daemon's
/// list) and the example's `PORT_QOS_MAP`, which no command may touch.
pub fn config_tables() -> Vec<&'static str> {
    let mut t = headroom_sonic::daemon::CONFIG_TABLES.to_vec();
    t.push("PORT_QOS_MAP");
    t
}

/// A temporary copy of an example's three files.
pub fn example_copy(name: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for f in ["config_db.json", "asic_table.json", "state_db.json"] {
        std::fs::copy(example(name).join(f), tmp.path().join(f)).expect("copy");
    }
    tmp
}

/// Asserts exit code 0 and returns stdout.
pub fn success(o: &Output, what: &str) -> String {
    assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(o));
    stdout(o)
}

/// A nested-format JSON file as a dump.
pub fn read_nested(path: &Path) -> RawDb {
    raw::from_nested_json(&std::fs::read_to_string(path).expect("read")).expect("nested JSON")
}

/// A switch's Redis: a `redis-server` on a free loopback port.
pub struct Switch {
    pub server: RedisServer,
    pub url: String,
}

impl Switch {
    /// Starts an empty server.
    pub fn empty() -> Switch {
        let server = RedisServer::start().expect("redis-server starts");
        let url = format!("redis://127.0.0.1:{}", server.port());
        Switch { server, url }
    }

    /// A server with the example's CONFIG_DB and STATE_DB (`asic_table.json` included when
    /// `with_asic`).
    pub fn with_example(name: &str, with_asic: bool) -> Switch {
        let s = Switch::empty();
        let dir = example(name);
        s.put(Db::Config, &read_nested(&dir.join("config_db.json")));
        s.put(Db::State, &read_nested(&dir.join("state_db.json")));
        if with_asic {
            let text = std::fs::read_to_string(dir.join("asic_table.json")).expect("read");
            s.put(
                Db::State,
                &raw::from_flat_json(&text, ':').expect("flat JSON"),
            );
        }
        s
    }

    /// Writes every entry of `dump` to database `db` (replacing the hashes).
    pub fn put(&self, db: Db, dump: &RawDb) {
        let conn = DbConnection::open(&self.server.endpoint(), db).expect("connect");
        let mut t = Table::new(conn);
        for (name, tab) in dump {
            let name = TableName::new(name.as_str()).expect("table name");
            for (k, f) in tab {
                t.replace(&name, k, f.clone());
            }
        }
        t.flush().expect("flush");
    }

    /// Deletes one entry of database `db`.
    pub fn del(&self, db: Db, table: &str, key: &str) {
        let conn = DbConnection::open(&self.server.endpoint(), db).expect("connect");
        let mut t = Table::new(conn);
        t.del(&TableName::new(table).expect("table name"), key);
        t.flush().expect("flush");
    }

    /// The content of `tables` of database `db`.
    pub fn dump(&self, db: Db, tables: &[&str]) -> RawDb {
        let mut conn = DbConnection::open(&self.server.endpoint(), db).expect("connect");
        let names: Vec<TableName> = tables
            .iter()
            .map(|t| TableName::new(*t).expect("table name"))
            .collect();
        let mut out = RawDb::new();
        for row in table::enumerate(&mut conn, &names).expect("enumerate") {
            out.entry(row.table.as_str().to_string())
                .or_default()
                .insert(row.key, row.fields);
        }
        out
    }

    /// CONFIG_DB (the tables of [`config_tables`]).
    pub fn config_db(&self) -> RawDb {
        self.dump(Db::Config, &config_tables())
    }

    /// `headroom sonic <args> --redis URL` (the URL appended at the end) in `dir`.
    pub fn sonic(&self, args: &[&str], dir: &Path) -> Output {
        let mut all = vec!["sonic"];
        all.extend_from_slice(args);
        all.extend(["--redis", self.url.as_str()]);
        headroom(&all, dir)
    }
}

/// A dump without empty entries (Redis has no empty hashes; a JSON file may keep `{}`).
pub fn non_empty(mut db: RawDb) -> RawDb {
    for t in db.values_mut() {
        t.retain(|_, f| !f.is_empty());
    }
    db.retain(|_, t| !t.is_empty());
    db
}
