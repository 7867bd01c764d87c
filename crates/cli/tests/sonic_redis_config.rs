//! `headroom sonic config … --redis URL` against a real `redis-server`: CONFIG_DB (db 4)
//! loaded from the shipped SN3700 example; valid commands change exactly the entries they name
//! (and give the same CONFIG_DB as the same command on the config_db.json file); invalid ones
//! exit with code 2, one error line, and leave CONFIG_DB untouched (seed 003's CLI rules).

mod sonic_redis_common;

use headroom_sonic::swss::Db;
use headroom_sonic::tables::raw::{Fields, RawDb};
use sonic_redis_common::{example_copy, headroom, non_empty, read_nested, stderr, Switch};

/// `config interface buffer priority-group lossless …`.
const LOSSLESS: [&str; 4] = ["interface", "buffer", "priority-group", "lossless"];

fn with<'a>(head: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    head.iter().chain(tail).copied().collect()
}

fn fields(pairs: &[(&str, &str)]) -> Fields {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn entry(db: &RawDb, table: &str, key: &str) -> Option<Fields> {
    db.get(table).and_then(|t| t.get(key)).cloned()
}

/// `headroom sonic config <args> --redis URL`; asserts success and returns stdout.
fn ok(s: &Switch, args: &[&str]) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut all = vec!["config"];
    all.extend_from_slice(args);
    let o = s.sonic(&all, tmp.path());
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs the command and checks: exit 2, stderr names `expect`, one `error:` line, no panic,
/// and CONFIG_DB exactly as before.
fn rejects(s: &Switch, args: &[&str], expect: &str) {
    let before = s.config_db();
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut all = vec!["config"];
    all.extend_from_slice(args);
    let o = s.sonic(&all, tmp.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?} was accepted: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(
        err.contains(expect),
        "{args:?}: stderr lacks {expect:?}:\n{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        s.config_db() == before,
        "{args:?}: CONFIG_DB changed on error"
    );
}

#[test]
fn cable_length_changes_one_field_in_config_db() {
    let s = Switch::with_example("sn3700", true);
    let before = s.config_db();
    let out = ok(&s, &["interface", "cable-length", "Ethernet0", "40m"]);
    assert!(out.contains("CONFIG_DB at redis://127.0.0.1:"), "{out}");
    assert!(
        out.contains("set CABLE_LENGTH|AZURE.Ethernet0 = 40m (was 5m)"),
        "{out}"
    );
    let mut expect = before.clone();
    expect
        .get_mut("CABLE_LENGTH")
        .and_then(|t| t.get_mut("AZURE"))
        .expect("CABLE_LENGTH|AZURE")
        .insert("Ethernet0".into(), "40m".into());
    assert_eq!(s.config_db(), expect);
    // Setting the same value again writes nothing and succeeds.
    ok(&s, &["interface", "cable-length", "Ethernet0", "40m"]);
    assert_eq!(s.config_db(), expect);
}

#[test]
fn profile_and_pg_lifecycle_in_config_db() {
    let s = Switch::with_example("sn3700", true);
    ok(
        &s,
        &[
            "buffer", "profile", "add", "p1", "--xon", "18432", "--xoff", "30000",
        ],
    );
    let db = s.config_db();
    assert_eq!(
        entry(&db, "BUFFER_PROFILE", "p1"),
        Some(fields(&[
            ("pool", "ingress_lossless_pool"),
            ("xon", "18432"),
            ("xoff", "30000"),
            ("size", "48432"),
            ("dynamic_th", "0"),
        ]))
    );
    ok(&s, &with(&LOSSLESS, &["add", "Ethernet0", "6", "p1"]));
    assert_eq!(
        entry(&s.config_db(), "BUFFER_PG", "Ethernet0|6"),
        Some(fields(&[("profile", "p1")]))
    );
    rejects(
        &s,
        &["buffer", "profile", "remove", "p1"],
        "profile p1 is in use by BUFFER_PG|Ethernet0|6",
    );
    ok(
        &s,
        &[
            "buffer", "profile", "set", "p1", "--xon", "18432", "--xoff", "40000",
        ],
    );
    assert_eq!(
        entry(&s.config_db(), "BUFFER_PROFILE", "p1").and_then(|f| f.get("size").cloned()),
        Some("58432".into())
    );
    // Dynamic headroom <-> override on the existing PG.
    ok(&s, &with(&LOSSLESS, &["set", "Ethernet0", "6"]));
    assert_eq!(
        entry(&s.config_db(), "BUFFER_PG", "Ethernet0|6"),
        Some(fields(&[("profile", "NULL")]))
    );
    ok(&s, &with(&LOSSLESS, &["remove", "Ethernet0", "6"]));
    assert_eq!(entry(&s.config_db(), "BUFFER_PG", "Ethernet0|6"), None);
    ok(&s, &["buffer", "profile", "remove", "p1"]);
    assert_eq!(entry(&s.config_db(), "BUFFER_PROFILE", "p1"), None);
    // A dynamic_th-only profile is a headroom_type dynamic profile.
    ok(
        &s,
        &["buffer", "profile", "add", "th1", "--dynamic-th", "1"],
    );
    assert_eq!(
        entry(&s.config_db(), "BUFFER_PROFILE", "th1"),
        Some(fields(&[
            ("pool", "ingress_lossless_pool"),
            ("dynamic_th", "1"),
            ("headroom_type", "dynamic"),
        ]))
    );
}

#[test]
fn shared_headroom_pool_in_config_db() {
    let s = Switch::with_example("sn3700", true);
    ok(&s, &["buffer", "shared-headroom-pool", "size", "1000000"]);
    assert_eq!(
        entry(&s.config_db(), "BUFFER_POOL", "ingress_lossless_pool"),
        Some(fields(&[
            ("mode", "dynamic"),
            ("type", "ingress"),
            ("xoff", "1000000"),
        ]))
    );
    // With the shared headroom pool xoff is mandatory.
    rejects(
        &s,
        &["buffer", "profile", "add", "p2", "--xon", "18432"],
        "--xoff is mandatory",
    );
    ok(&s, &["buffer", "shared-headroom-pool", "size", "0"]);
    assert_eq!(
        entry(&s.config_db(), "BUFFER_POOL", "ingress_lossless_pool"),
        Some(fields(&[("mode", "dynamic"), ("type", "ingress")]))
    );
    ok(
        &s,
        &[
            "buffer",
            "shared-headroom-pool",
            "over-subscribe-ratio",
            "2",
        ],
    );
    assert_eq!(
        entry(&s.config_db(), "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE"),
        Some(fields(&[
            ("default_dynamic_th", "0"),
            ("over_subscribe_ratio", "2")
        ]))
    );
    // The bound is STATE_DB's mmu_size, read from the same Redis.
    rejects(
        &s,
        &["buffer", "shared-headroom-pool", "size", "34287552"],
        "STATE_DB BUFFER_MAX_PARAM_TABLE|global.mmu_size",
    );
    rejects(
        &s,
        &[
            "buffer",
            "shared-headroom-pool",
            "over-subscribe-ratio",
            "33",
        ],
        "out of range [0, 32]",
    );
}

#[test]
fn seed_rules_reject_and_leave_config_db_untouched() {
    let s = Switch::with_example("sn3700", true);
    const ADD: [&str; 3] = ["buffer", "profile", "add"];
    rejects(&s, &with(&ADD, &["p1"]), "give headroom parameters");
    rejects(
        &s,
        &with(&ADD, &["p1", "--xoff", "30000", "--size", "60000"]),
        "--xon is mandatory",
    );
    rejects(
        &s,
        &with(
            &ADD,
            &["p1", "--xon", "18432", "--xoff", "40000", "--size", "50000"],
        ),
        "exceeds size 50000",
    );
    rejects(
        &s,
        &with(
            &ADD,
            &["ingress_lossy_profile", "--xon", "1", "--xoff", "1"],
        ),
        "already exists",
    );
    rejects(
        &s,
        &with(
            &ADD,
            &[
                "p1",
                "--xon",
                "18432",
                "--xoff",
                "1",
                "--pool",
                "egress_lossy_pool",
            ],
        ),
        "egress pool",
    );
    rejects(
        &s,
        &["buffer", "profile", "set", "nope", "--dynamic-th", "1"],
        "does not exist",
    );
    rejects(
        &s,
        &["buffer", "profile", "remove", "ingress_lossy_profile"],
        "is in use by",
    );
    rejects(
        &s,
        &with(&LOSSLESS, &["add", "Ethernet0", "4-5"]),
        "PG ranges must be disjoint",
    );
    rejects(
        &s,
        &with(&LOSSLESS, &["add", "Ethernet0", "3-"]),
        "malformed",
    );
    rejects(
        &s,
        &with(&LOSSLESS, &["add", "Ethernet0", "8"]),
        "out of range",
    );
    rejects(
        &s,
        &with(&LOSSLESS, &["add", "Ethernet999", "6"]),
        "does not exist in PORT",
    );
    rejects(
        &s,
        &with(
            &LOSSLESS,
            &["add", "Ethernet0", "6", "egress_lossy_profile"],
        ),
        "egress profile",
    );
    rejects(
        &s,
        &with(&LOSSLESS, &["set", "Ethernet0", "5"]),
        "has no PG 5",
    );
    rejects(
        &s,
        &with(&LOSSLESS, &["remove", "Ethernet0", "0"]),
        "is lossy",
    );
    rejects(
        &s,
        &["interface", "cable-length", "Ethernet0", "40"],
        "has no unit",
    );
    rejects(
        &s,
        &["interface", "cable-length", "Ethernet999", "40m"],
        "does not exist in PORT",
    );
}

#[test]
fn fit_check_uses_the_switch_state_db() {
    // ASIC_TABLE and max_headroom_size come from STATE_DB: Ethernet0 at 40 m needs 208896
    // bytes of headroom (5 m: 198656).
    let s = Switch::with_example("sn3700", true);
    let mut limit = RawDb::new();
    limit
        .entry("BUFFER_MAX_PARAM_TABLE".into())
        .or_default()
        .insert(
            "Ethernet0".into(),
            fields(&[
                ("max_headroom_size", "200000"),
                ("max_priority_groups", "8"),
                ("max_queues", "8"),
            ]),
        );
    s.put(Db::State, &limit);
    rejects(
        &s,
        &["interface", "cable-length", "Ethernet0", "40m"],
        "Ethernet0 would fail the maximum-headroom check",
    );
    ok(&s, &["interface", "cable-length", "Ethernet8", "40m"]);
    // Without ASIC_TABLE in STATE_DB (and no --asic-table) there is no fit check.
    let bare = Switch::with_example("sn3700", false);
    bare.put(Db::State, &limit);
    ok(&bare, &["interface", "cable-length", "Ethernet0", "40m"]);
}

#[test]
fn multi_port_pg_keys_are_split_in_one_transaction() {
    let s = Switch::with_example("sn3700", true);
    s.del(Db::Config, "BUFFER_PG", "Ethernet0|3-4");
    s.del(Db::Config, "BUFFER_PG", "Ethernet8|3-4");
    let mut multi = RawDb::new();
    multi.entry("BUFFER_PG".into()).or_default().insert(
        "Ethernet0,Ethernet8|3-4".into(),
        fields(&[("profile", "NULL")]),
    );
    s.put(Db::Config, &multi);
    ok(&s, &with(&LOSSLESS, &["remove", "Ethernet0", "3-4"]));
    let db = s.config_db();
    assert_eq!(entry(&db, "BUFFER_PG", "Ethernet0,Ethernet8|3-4"), None);
    assert_eq!(entry(&db, "BUFFER_PG", "Ethernet0|3-4"), None);
    assert_eq!(
        entry(&db, "BUFFER_PG", "Ethernet8|3-4"),
        Some(fields(&[("profile", "NULL")]))
    );
}

/// The same command sequence on the config_db.json file and on Redis gives the same CONFIG_DB.
#[test]
fn file_and_redis_backends_agree() {
    let s = Switch::with_example("sn3700", true);
    let tmp = example_copy("sn3700");
    let d = tmp.path();
    let commands: [&[&str]; 9] = [
        &["interface", "cable-length", "Ethernet8", "300m"],
        &[
            "buffer", "profile", "add", "p1", "--xon", "18432", "--size", "60000",
        ],
        &["buffer", "profile", "add", "th2", "--dynamic-th", "2"],
        &with(&LOSSLESS, &["add", "Ethernet8", "5-6", "p1"]),
        &with(&LOSSLESS, &["set", "Ethernet8", "3-4", "th2"]),
        &with(&LOSSLESS, &["remove", "Ethernet16"]),
        &[
            "buffer",
            "shared-headroom-pool",
            "over-subscribe-ratio",
            "3",
        ],
        &["buffer", "shared-headroom-pool", "size", "2000000"],
        &["buffer", "profile", "set", "th2", "--dynamic-th", "1"],
    ];
    let state = [
        "--asic-table",
        "asic_table.json",
        "--state-db",
        "state_db.json",
    ];
    for c in commands {
        let mut file_args = vec!["sonic", "config", "--config-db", "config_db.json"];
        file_args.extend_from_slice(&state);
        file_args.extend_from_slice(c);
        let o = headroom(&file_args, d);
        assert_eq!(o.status.code(), Some(0), "file {c:?}: {}", stderr(&o));
        let file_out = String::from_utf8_lossy(&o.stdout).replace("config_db.json: ", "");
        let redis_out = ok(&s, c).replace(&format!("CONFIG_DB at {}: ", s.url), "");
        assert_eq!(file_out, redis_out, "{c:?}");
        assert_eq!(
            non_empty(read_nested(&d.join("config_db.json"))),
            s.config_db(),
            "after {c:?}"
        );
    }
}

#[test]
fn unreachable_or_malformed_redis_is_one_error_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (url, expect) in [
        (
            "redis://127.0.0.1:1",
            "cannot connect to Redis at redis://127.0.0.1:1",
        ),
        ("redis://127.0.0.1:6379/4", "invalid Redis URL"),
        ("http://x", "invalid Redis URL"),
    ] {
        let o = headroom(
            &[
                "sonic",
                "config",
                "--redis",
                url,
                "interface",
                "cable-length",
                "Ethernet0",
                "5m",
            ],
            tmp.path(),
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(expect), "{url}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn malformed_config_db_is_reported_and_not_written() {
    let s = Switch::with_example("sn3700", true);
    let mut bad = RawDb::new();
    bad.entry("BUFFER_PG".into())
        .or_default()
        .insert("Ethernet0|3-".into(), fields(&[("profile", "NULL")]));
    s.put(Db::Config, &bad);
    rejects(
        &s,
        &["interface", "cable-length", "Ethernet0", "40m"],
        "CONFIG_DB at redis://",
    );
}
