//! Vendor Lua headroom plugins through the daemon and a real `redis-server`: a small plugin
//! written for the test (reading `ASIC_TABLE` from STATE_DB and the lossless MTU from
//! CONFIG_DB with `SELECT`, as SONiC's plugins do, and returning `name:value` lines) replaces
//! the native model; a failing plugin defers the profile, which is computed once the plugin
//! can run.

mod bufmgr_common;
mod daemon_common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bufmgr_common::*;
use daemon_common::*;
use headroom_sonic::bufmgr::LogLevel;
use headroom_sonic::daemon::plugins::LuaHeadroom;
use headroom_sonic::daemon::reconcile::APPL_TABLES;
use headroom_sonic::daemon::ClockMode;
use headroom_sonic::swss::testing::RedisServer;
use headroom_sonic::swss::{Db, Endpoint};
use headroom_sonic::tables::state::AsicModel;

/// xon = 100 cells; xoff = speed (Gb/s) × cable (m) × 10 + lossless MTU; size = xon + xoff.
/// Fails while CONFIG_DB `DEVICE_METADATA|localhost` has `plugin_fails = yes`.
const PLUGIN: &str = r#"-- test headroom plugin
local speed = tonumber(ARGV[1])
local cable = tonumber(string.sub(ARGV[2], 1, -2))
redis.call('SELECT', 6)
local asic = redis.call('KEYS', 'ASIC_TABLE*')[1]
local cell = tonumber(redis.call('HGET', asic, 'cell_size'))
redis.call('SELECT', 4)
if redis.call('HGET', 'DEVICE_METADATA|localhost', 'plugin_fails') == 'yes' then
    return redis.error_reply('test plugin: told to fail')
end
local mtu = tonumber(redis.call('HGET', 'LOSSLESS_TRAFFIC_PATTERN|AZURE', 'mtu'))
local xon = cell * 100
local xoff = math.ceil(speed / 1000 * cable * 10) + mtu
return {'debug:computing ' .. KEYS[1], 'xon:' .. xon, 'xoff:' .. xoff, 'size:' .. (xon + xoff)}
"#;

fn profile(ep: &Endpoint, name: &str) -> Option<(String, String, String)> {
    let appl = dump(ep, Db::Appl, &APPL_TABLES);
    let f = appl.get("BUFFER_PROFILE_TABLE")?.get(name)?;
    Some((
        f.get("xon")?.clone(),
        f.get("xoff")?.clone(),
        f.get("size")?.clone(),
    ))
}

fn expect(speed_gbps: u64, cable_m: u64) -> (String, String, String) {
    let xon = 144 * 100; // Spectrum-2 cells
    let xoff = speed_gbps * cable_m * 10 + 1024;
    (xon.to_string(), xoff.to_string(), (xon + xoff).to_string())
}

#[test]
fn a_lua_headroom_plugin_replaces_the_model() {
    let server = RedisServer::start().expect("redis-server");
    let ep = server.endpoint();
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 50_000, "40m"),
    ];
    let mut cfg = sn3800(&ports);
    cfg.get_mut("DEVICE_METADATA")
        .and_then(|t| t.get_mut("localhost"))
        .expect("DEVICE_METADATA")
        .insert("plugin_fails".into(), "yes".into());
    populate(&ep, &cfg, MMU_SN3800);
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("buffer_headroom_test.lua"), PLUGIN).expect("write");
    let plugin = LuaHeadroom::from_dir(&ep, dir.path()).expect("plugin");
    assert_eq!(plugin.name(), "buffer_headroom_test");
    let mut opts = options(AsicModel::Spectrum2, true);
    opts.headroom_plugin = Some(Arc::new(plugin));
    let (handle, thread) = spawn_daemon(ep.clone(), opts, ClockMode::Real);
    let stop = Arc::new(AtomicBool::new(false));
    let orch = spawn_orchagent(ep.clone(), Arc::clone(&stop));

    // The plugin fails: the profiles are deferred, with a log line naming the plugin.
    eventually("a deferral naming the plugin", || {
        handle.with_status(|s| {
            s.logs
                .iter()
                .any(|(_, m)| m.contains("buffer_headroom_test") && m.contains("told to fail"))
        })
    });
    assert_eq!(profile(&ep, "pg_lossless_100000_5m_profile"), None);

    // Once it can run, its numbers are used.
    let mut w = Writer::open(&ep, Db::Config);
    let mut meta: Vec<(String, String)> = cfg["DEVICE_METADATA"]["localhost"]
        .iter()
        .map(|(f, v)| (f.clone(), v.clone()))
        .collect();
    for (f, v) in &mut meta {
        if f == "plugin_fails" {
            *v = "no".into();
        }
    }
    let meta: Vec<(&str, &str)> = meta.iter().map(|(f, v)| (f.as_str(), v.as_str())).collect();
    w.set("DEVICE_METADATA", "localhost", &meta);
    eventually("the plugin's profiles", || {
        profile(&ep, "pg_lossless_100000_5m_profile") == Some(expect(100, 5))
            && profile(&ep, "pg_lossless_50000_40m_profile") == Some(expect(50, 40))
    });
    // A new cable length: computed by the plugin as well.
    w.set(
        "CABLE_LENGTH",
        "AZURE",
        &[("Ethernet0", "300m"), ("Ethernet4", "40m")],
    );
    eventually("the new profile", || {
        profile(&ep, "pg_lossless_100000_300m_profile") == Some(expect(100, 300))
    });
    assert!(handle.with_status(|s| s.logs.iter().all(|(l, _)| *l != LogLevel::Error)));
    handle.stop();
    thread.join().expect("join").expect("daemon");
    stop.store(true, Ordering::Relaxed);
    orch.join().expect("orchagent");
}

#[test]
fn a_plugin_directory_needs_exactly_one_headroom_plugin() {
    let server = RedisServer::start().expect("redis-server");
    let ep = server.endpoint();
    let dir = tempfile::tempdir().expect("tempdir");
    let err = LuaHeadroom::from_dir(&ep, dir.path()).expect_err("empty dir");
    assert!(err.to_string().contains("found none"), "{err}");
    std::fs::write(dir.path().join("buffer_headroom_a.lua"), "return {}").expect("write");
    std::fs::write(dir.path().join("buffer_headroom_b.lua"), "return {}").expect("write");
    let err = LuaHeadroom::from_dir(&ep, dir.path()).expect_err("two plugins");
    assert!(err
        .to_string()
        .contains("buffer_headroom_a.lua, buffer_headroom_b.lua"));
    std::fs::remove_file(dir.path().join("buffer_headroom_b.lua")).expect("rm");
    std::fs::write(dir.path().join("buffer_headroom_a.lua"), "this is not lua(").expect("write");
    let err = LuaHeadroom::from_dir(&ep, dir.path()).expect_err("syntax error");
    assert!(
        err.to_string().contains("SCRIPT") || err.to_string().contains("rror"),
        "{err}"
    );
}
