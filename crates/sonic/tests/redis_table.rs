//! Plain Table writes (STATE_DB mirrors) and the redis-server test harness itself.
//! Set `HEADROOM_SKIP_REDIS_TESTS=1` to skip.

use std::time::Duration;

use headroom_sonic::swss::testing::{wait_for, RedisServer};
use headroom_sonic::swss::{Db, DbConnection, Endpoint, Fields, Table, TableName};

fn server() -> Option<RedisServer> {
    if std::env::var_os("HEADROOM_SKIP_REDIS_TESTS").is_some() {
        eprintln!("HEADROOM_SKIP_REDIS_TESTS set: skipping");
        return None;
    }
    Some(RedisServer::start().expect("start redis-server"))
}

fn fields(pairs: &[(&str, &str)]) -> Fields {
    pairs
        .iter()
        .map(|(f, v)| ((*f).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn state_db_table_writes_use_pipe_keys_and_one_transaction() {
    let Some(server) = server() else { return };
    let pools = TableName::new("BUFFER_POOL_TABLE").expect("name");
    let profiles = TableName::new("BUFFER_PROFILE_TABLE").expect("name");
    let mut state =
        Table::new(DbConnection::open(&server.endpoint(), Db::State).expect("STATE_DB"));
    assert_eq!(state.db(), Db::State);
    assert_eq!(state.flush().expect("empty flush"), 0);

    state.set(
        &pools,
        "ingress_lossless_pool",
        [("size", "1000"), ("type", "ingress"), ("xoff", "10")],
    );
    state.set(
        &profiles,
        "pg_lossless_100000_5m_profile",
        [("xon", "19456")],
    );
    state.set(
        &profiles,
        "pg_lossless_100000_5m_profile",
        [("xoff", "18432")],
    );
    assert_eq!(state.pending(), 3);
    assert_eq!(
        state.get(&pools, "ingress_lossless_pool").expect("get"),
        None,
        "not flushed yet"
    );
    assert_eq!(state.flush().expect("flush"), 1);
    assert_eq!(state.pending(), 0);

    // Raw layout: `TABLE|key` hashes in database 6.
    let mut raw = DbConnection::open(&server.endpoint(), Db::State).expect("raw");
    let h: Fields = raw
        .query(
            "HGETALL",
            redis::cmd("HGETALL").arg("BUFFER_PROFILE_TABLE|pg_lossless_100000_5m_profile"),
        )
        .expect("HGETALL");
    assert_eq!(h, fields(&[("xon", "19456"), ("xoff", "18432")]));
    let mut appl = DbConnection::open(&server.endpoint(), Db::Appl).expect("APPL_DB");
    let n: i64 = appl.query("DBSIZE", &redis::cmd("DBSIZE")).expect("DBSIZE");
    assert_eq!(n, 0, "nothing written to other databases");

    // replace drops fields not given; del removes the key.
    state.replace(
        &pools,
        "ingress_lossless_pool",
        [("size", "2000"), ("type", "ingress")],
    );
    state.del(&profiles, "pg_lossless_100000_5m_profile");
    assert_eq!(state.flush().expect("flush"), 1);
    assert_eq!(
        state.get(&pools, "ingress_lossless_pool").expect("get"),
        Some(fields(&[("size", "2000"), ("type", "ingress")]))
    );
    assert_eq!(
        state
            .get(&profiles, "pg_lossless_100000_5m_profile")
            .expect("get"),
        None
    );
    assert_eq!(state.keys(&pools).expect("keys"), ["ingress_lossless_pool"]);
    assert_eq!(state.keys(&profiles).expect("keys"), Vec::<String>::new());
}

#[test]
fn harness_restart_keeps_the_port_and_empties_the_server() {
    let Some(mut server) = server() else { return };
    let port = server.port();
    let endpoint = server.endpoint();
    assert!(matches!(
        &endpoint.address,
        headroom_sonic::swss::Address::Tcp { host, .. } if host == "127.0.0.1"
    ));
    let mut conn = DbConnection::open(&endpoint, Db::Config).expect("connect");
    let _: () = conn
        .query("SET", redis::cmd("SET").arg("k").arg("v"))
        .expect("SET");
    let save: Vec<String> = conn
        .query("CONFIG GET", redis::cmd("CONFIG").arg("GET").arg("save"))
        .expect("CONFIG GET");
    assert_eq!(save[1], "", "persistence disabled");

    server.restart().expect("restart");
    assert_eq!(server.port(), port);
    assert_eq!(server.restarts(), 1);
    let v: Option<String> = conn
        .query("GET", redis::cmd("GET").arg("k"))
        .expect("GET after restart");
    assert_eq!(v, None, "fresh server");
    assert_eq!(conn.reconnects(), 1);

    server.kill();
    assert!(conn.ping().is_err());
    assert!(!conn.is_connected());
    server.restart().expect("restart after kill");
    let ok = wait_for(Duration::from_secs(2), Duration::from_millis(10), || {
        conn.ping().ok()
    });
    assert!(ok.is_some());
}

#[test]
fn harness_servers_are_independent() {
    let Some(a) = server() else { return };
    let Some(b) = server() else { return };
    assert_ne!(a.port(), b.port());
    assert_ne!(a.dir(), b.dir());
    let dir = a.dir().to_owned();
    drop(a);
    assert!(!dir.exists(), "temp dir removed on drop");
    let mut conn = DbConnection::open(&b.endpoint(), Db::Appl).expect("connect b");
    conn.ping().expect("b still up");
}

#[test]
fn unix_socket_endpoint_reaches_the_same_server() {
    let Some(server) = server() else { return };
    let t = TableName::new("PORT_TABLE").expect("name");
    let mut over_unix = Table::new(
        DbConnection::open(&Endpoint::unix(server.unix_socket()), Db::State).expect("unix socket"),
    );
    over_unix.set(&t, "Ethernet0", [("supported_speeds", "100000,400000")]);
    over_unix.flush().expect("flush");
    let mut over_tcp = Table::new(DbConnection::open(&server.endpoint(), Db::State).expect("tcp"));
    assert_eq!(
        over_tcp.get(&t, "Ethernet0").expect("get"),
        Some(fields(&[("supported_speeds", "100000,400000")]))
    );
}
