//! Lua plugins against a real `redis-server`: SCRIPT LOAD / EVALSHA with KEYS and ARGV,
//! `name:value` parsing, cross-database reads, and reload on NOSCRIPT after `SCRIPT FLUSH`
//! and after a server restart. Set `HEADROOM_SKIP_REDIS_TESTS=1` to skip.

use headroom_sonic::swss::testing::RedisServer;
use headroom_sonic::swss::{Db, DbConnection, LuaPlugin, SwssError, Table, TableName};

fn server() -> Option<RedisServer> {
    if std::env::var_os("HEADROOM_SKIP_REDIS_TESTS").is_some() {
        eprintln!("HEADROOM_SKIP_REDIS_TESTS set: skipping");
        return None;
    }
    Some(RedisServer::start().expect("start redis-server"))
}

/// A tiny headroom-like plugin: KEYS[1] = profile, ARGV = speed, cable.
const TOY_HEADROOM: &str = r#"
local speed = tonumber(ARGV[1])
local cable = tonumber(string.sub(ARGV[2], 1, -2))
local ret = {}
table.insert(ret, "xon:" .. (speed / 100))
table.insert(ret, "xoff:" .. (speed / 100 + cable * 10))
table.insert(ret, "debug:profile " .. KEYS[1])
table.insert(ret, "pool:ingress_lossless_pool:" .. (cable * 2))
return ret
"#;

/// Reads CONFIG_DB and STATE_DB itself, like the vendor plugins do.
const CROSS_DB: &str = r#"
redis.call('SELECT', 4)
local mtu = redis.call('HGET', 'LOSSLESS_TRAFFIC_PATTERN|AZURE', 'mtu')
redis.call('SELECT', 6)
local cell = redis.call('HGET', 'ASIC_TABLE|MELLANOX-SPECTRUM-3', 'cell_size')
return {"mtu:" .. mtu, "cell_size:" .. cell}
"#;

/// No KEYS / no ARGV.
const NONE: &[&str] = &[];

fn appl(server: &RedisServer) -> DbConnection {
    DbConnection::open(&server.endpoint(), Db::Appl).expect("connect APPL_DB")
}

#[test]
fn plugin_load_evalsha_and_name_value_parsing() {
    let Some(server) = server() else { return };
    let mut conn = appl(&server);
    let mut plugin = LuaPlugin::new("toy_headroom", TOY_HEADROOM);
    assert_eq!(plugin.sha().len(), 40);

    let before = conn.round_trips();
    plugin.load(&mut conn).expect("SCRIPT LOAD");
    assert_eq!(conn.round_trips() - before, 1);
    let exists: Vec<i64> = conn
        .query(
            "SCRIPT EXISTS",
            redis::cmd("SCRIPT").arg("EXISTS").arg(plugin.sha()),
        )
        .expect("SCRIPT EXISTS");
    assert_eq!(exists, [1]);

    let before = conn.round_trips();
    let out = plugin
        .call(
            &mut conn,
            &["pg_lossless_100000_5m_profile"],
            &["100000", "5m"],
        )
        .expect("EVALSHA");
    assert_eq!(conn.round_trips() - before, 1);
    assert_eq!(out.value("xon"), Some("1000"));
    assert_eq!(out.value("xoff"), Some("1050"));
    let pool = out.get("pool").expect("pool line");
    assert_eq!(pool.values, ["ingress_lossless_pool", "10"]);
    assert_eq!(out.debug, ["profile pg_lossless_100000_5m_profile"]);
    assert_eq!(out.entries.len(), 3);
}

#[test]
fn first_call_without_load_costs_one_round_trip() {
    let Some(server) = server() else { return };
    let mut conn = appl(&server);
    let mut plugin = LuaPlugin::new("toy", "return {'result:true'}");
    let before = conn.round_trips();
    let out = plugin.call(&mut conn, NONE, NONE).expect("call");
    assert_eq!(
        conn.round_trips() - before,
        1,
        "SCRIPT LOAD pipelined with EVALSHA"
    );
    assert_eq!(out.value("result"), Some("true"));
}

#[test]
fn plugin_selects_other_databases_without_affecting_the_caller() {
    let Some(server) = server() else { return };
    let mut config =
        Table::new(DbConnection::open(&server.endpoint(), Db::Config).expect("CONFIG_DB"));
    config.set(
        &TableName::new("LOSSLESS_TRAFFIC_PATTERN").expect("name"),
        "AZURE",
        [("mtu", "1024")],
    );
    config.flush().expect("flush");
    let mut state =
        Table::new(DbConnection::open(&server.endpoint(), Db::State).expect("STATE_DB"));
    state.set(
        &TableName::new("ASIC_TABLE").expect("name"),
        "MELLANOX-SPECTRUM-3",
        [("cell_size", "144")],
    );
    state.flush().expect("flush");

    let mut conn = appl(&server);
    let mut plugin = LuaPlugin::new("cross_db", CROSS_DB);
    let out = plugin.call(&mut conn, NONE, NONE).expect("call");
    assert_eq!(out.value("mtu"), Some("1024"));
    assert_eq!(out.value("cell_size"), Some("144"));

    // The caller's connection is still on APPL_DB.
    let _: () = conn
        .query("SET", redis::cmd("SET").arg("marker").arg("appl"))
        .expect("SET");
    let mut appl_check = appl(&server);
    let marker: Option<String> = appl_check
        .query("GET", redis::cmd("GET").arg("marker"))
        .expect("GET");
    assert_eq!(marker.as_deref(), Some("appl"));
}

#[test]
fn noscript_after_script_flush_and_restart_reloads() {
    let Some(mut server) = server() else { return };
    let mut conn = appl(&server);
    let mut plugin = LuaPlugin::new("toy_headroom", TOY_HEADROOM);
    plugin.load(&mut conn).expect("load");

    let _: () = conn
        .query("SCRIPT FLUSH", redis::cmd("SCRIPT").arg("FLUSH"))
        .expect("SCRIPT FLUSH");
    let before = conn.round_trips();
    let out = plugin
        .call(&mut conn, &["p"], &["25000", "40m"])
        .expect("call after flush");
    assert_eq!(
        conn.round_trips() - before,
        2,
        "NOSCRIPT, then pipelined load + call"
    );
    assert_eq!(out.value("xon"), Some("250"));

    server.restart().expect("restart");
    let before = conn.round_trips();
    let out = plugin
        .call(&mut conn, &["p"], &["50000", "40m"])
        .expect("call after restart");
    assert_eq!(
        conn.round_trips() - before,
        3,
        "broken socket, reconnect + NOSCRIPT, pipelined load + call"
    );
    assert_eq!(out.value("xon"), Some("500"));
    assert_eq!(conn.reconnects(), 1);
}

#[test]
fn plugin_errors_are_reported() {
    let Some(server) = server() else { return };
    let mut conn = appl(&server);
    let mut failing = LuaPlugin::new("failing", "return redis.call('HGET', nil, 'x')");
    let err = failing
        .call(&mut conn, NONE, NONE)
        .expect_err("runtime error");
    assert!(matches!(err, SwssError::Redis { .. }), "{err}");
    assert!(!err.is_connection_error());

    let mut syntax = LuaPlugin::new("syntax", "return {");
    let err = syntax.load(&mut conn).expect_err("syntax error");
    assert!(!err.is_connection_error(), "{err}");

    let mut integer = LuaPlugin::new("integer", "return 7");
    let err = integer.call(&mut conn, NONE, NONE).expect_err("not lines");
    assert!(matches!(err, SwssError::UnexpectedReply { .. }), "{err}");

    // The connection is still usable.
    conn.ping().expect("PING");
}

#[test]
fn plugin_from_file_is_named_after_its_stem() {
    let Some(server) = server() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("buffer_check_headroom_toy.lua");
    std::fs::write(&path, "return {'result:true', 'debug:ok'}").expect("write");
    let mut plugin = LuaPlugin::from_file(&path).expect("read plugin");
    assert_eq!(plugin.name(), "buffer_check_headroom_toy");
    let mut conn = appl(&server);
    let out = plugin
        .call(&mut conn, &["Ethernet0"], &["p", "0", "0", "0"])
        .expect("call");
    assert_eq!(out.value("result"), Some("true"));
    assert_eq!(out.debug, ["ok"]);
    let err = LuaPlugin::from_file(dir.path().join("missing.lua")).expect_err("missing");
    assert!(matches!(err, SwssError::PluginFile { .. }));
}
