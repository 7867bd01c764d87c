//! `headroom sonic plan|show|diff --redis URL` against a real `redis-server` loaded with the
//! shipped examples: the same data give the same `appl_db.json` / `state_db.json` and the same
//! views as the file backend; `show buffer information` shows what STATE_DB/APPL_DB hold when
//! something is deployed.

mod sonic_redis_common;

use headroom_sonic::swss::Db;
use headroom_sonic::tables::raw::RawDb;
use sonic_redis_common::{example_copy, headroom, read_nested, stderr, success, Switch};

const FILES: [&str; 6] = [
    "--asic-table",
    "asic_table.json",
    "--state-db",
    "state_db.json",
    "--config-db",
    "config_db.json",
];

/// `plan` on the files and on Redis; returns (file appl_db, redis appl_db, file state_db,
/// redis state_db, file stdout, redis stdout).
fn plans(example: &str, s: &Switch, redis_extra: &[&str]) -> [String; 6] {
    let tmp = example_copy(example);
    let d = tmp.path();
    let mut file = vec!["sonic", "plan", "--out", "file"];
    file.extend_from_slice(&FILES);
    let file_out = success(&headroom(&file, d), "plan --config-db");
    let mut redis = vec!["plan", "--out", "redis"];
    redis.extend_from_slice(redis_extra);
    let redis_out = success(&s.sonic(&redis, d), "plan --redis");
    let read = |p: &str| std::fs::read_to_string(d.join(p)).expect(p);
    [
        read("file/appl_db.json"),
        read("redis/appl_db.json"),
        read("file/state_db.json"),
        read("redis/state_db.json"),
        file_out,
        redis_out,
    ]
}

#[test]
fn plan_from_redis_equals_plan_from_files() {
    for example in ["sn3700", "sn5600"] {
        let s = Switch::with_example(example, true);
        let [fa, ra, fs, rs, fo, ro] = plans(example, &s, &[]);
        assert!(fa == ra, "{example}: appl_db.json differs");
        assert!(fs == rs, "{example}: state_db.json differs");
        // The printed plan differs only in the name of the CONFIG_DB.
        let label = format!("CONFIG_DB at {}", s.url);
        assert_eq!(
            fo.replace("config_db.json", "X"),
            ro.replace(&label, "X").replace("redis/", "file/"),
            "{example}"
        );
    }
}

#[test]
fn plan_from_redis_takes_the_asic_file_when_state_db_has_none() {
    let s = Switch::with_example("sn3700", false);
    let [fa, ra, fs, rs, ..] = plans("sn3700", &s, &["--asic-table", "asic_table.json"]);
    assert!(fa == ra, "appl_db.json differs");
    assert!(fs == rs, "state_db.json differs");
    // Without either, the ASIC is missing: one error line, exit 2, nothing written.
    let tmp = tempfile::tempdir().expect("tempdir");
    let o = s.sonic(&["plan", "--out", "out"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ASIC_TABLE"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1);
    assert!(!tmp.path().join("out").exists());
}

#[test]
fn plan_from_redis_follows_config_db_changes() {
    let s = Switch::with_example("sn3700", true);
    let tmp = example_copy("sn3700");
    let d = tmp.path();
    let cfg = ["interface", "cable-length", "Ethernet0", "300m"];
    let mut c = vec!["config"];
    c.extend_from_slice(&cfg);
    success(&s.sonic(&c, d), "config --redis");
    let mut f = vec!["sonic", "config", "--config-db", "config_db.json"];
    f.extend_from_slice(&cfg);
    success(&headroom(&f, d), "config --config-db");
    let [fa, ra, ..] = plans_in(d, &s);
    assert!(fa == ra, "appl_db.json differs after the change");
    assert!(ra.contains("pg_lossless_100000_300m_profile"));
}

fn plans_in(d: &std::path::Path, s: &Switch) -> [String; 2] {
    let mut file = vec!["sonic", "plan", "--quiet", "--out", "file"];
    file.extend_from_slice(&FILES);
    success(&headroom(&file, d), "plan --config-db");
    success(
        &s.sonic(&["plan", "--quiet", "--out", "redis"], d),
        "plan --redis",
    );
    let read = |p: &str| std::fs::read_to_string(d.join(p)).expect(p);
    [read("file/appl_db.json"), read("redis/appl_db.json")]
}

#[test]
fn show_configuration_reads_config_db() {
    let s = Switch::with_example("sn3700", true);
    let tmp = example_copy("sn3700");
    let d = tmp.path();
    let file = success(
        &headroom(
            &[
                "sonic",
                "show",
                "buffer",
                "configuration",
                "--config-db",
                "config_db.json",
            ],
            d,
        ),
        "show --config-db",
    );
    let redis = success(
        &s.sonic(&["show", "buffer", "configuration"], d),
        "show --redis",
    );
    assert_eq!(file, redis);
    assert!(redis.contains("Pool: ingress_lossless_pool"));
}

#[test]
fn show_information_shows_what_is_deployed() {
    let s = Switch::with_example("sn3700", true);
    let tmp = example_copy("sn3700");
    let d = tmp.path();
    let mut file_args = vec!["sonic", "show", "buffer", "information"];
    file_args.extend_from_slice(&FILES);
    let file = success(&headroom(&file_args, d), "show --config-db");

    // Nothing deployed yet: computed, with a note on stderr.
    let o = s.sonic(&["show", "buffer", "information"], d);
    assert_eq!(success(&o, "show --redis"), file);
    assert!(stderr(&o).contains("no BUFFER_POOL_TABLE or BUFFER_PROFILE_TABLE"));

    // Deploy the plan as buffermgrd would: mirrors in STATE_DB, PGs in APPL_DB.
    let mut plan = vec!["sonic", "plan", "--quiet", "--out", "plan"];
    plan.extend_from_slice(&FILES);
    success(&headroom(&plan, d), "plan");
    let appl = read_nested(&d.join("plan/appl_db.json"));
    let mut mirrors = RawDb::new();
    for t in ["BUFFER_POOL_TABLE", "BUFFER_PROFILE_TABLE"] {
        mirrors.insert(t.into(), appl[t].clone());
    }
    s.put(Db::State, &mirrors);
    s.put(Db::Appl, &appl);
    let o = s.sonic(&["show", "buffer", "information"], d);
    assert_eq!(success(&o, "show --redis"), file);
    assert!(!stderr(&o).contains("note:"), "{}", stderr(&o));

    // It shows STATE_DB as it is, not a computation.
    let mut changed = RawDb::new();
    let mut p = mirrors["BUFFER_PROFILE_TABLE"]["pg_lossless_100000_5m_profile"].clone();
    p.insert("xoff".into(), "12345".into());
    changed
        .entry("BUFFER_PROFILE_TABLE".into())
        .or_default()
        .insert("pg_lossless_100000_5m_profile".into(), p);
    s.put(Db::State, &changed);
    let out = success(
        &s.sonic(&["show", "buffer", "information"], d),
        "show --redis",
    );
    assert!(out.contains("xoff        12345"), "{out}");
    assert!(!file.contains("12345"));
}

#[test]
fn diff_from_redis_equals_diff_from_files() {
    let s = Switch::with_example("sn3700", true);
    let tmp = example_copy("sn3700");
    let d = tmp.path();
    std::fs::copy(d.join("config_db.json"), d.join("new.json")).expect("copy");
    let o = headroom(
        &[
            "sonic",
            "config",
            "--config-db",
            "new.json",
            "interface",
            "cable-length",
            "Ethernet0",
            "40m",
        ],
        d,
    );
    success(&o, "config new.json");
    let mut file = vec!["sonic", "diff", "--config-db-new", "new.json", "--json"];
    file.extend_from_slice(&FILES);
    let f = success(&headroom(&file, d), "diff --config-db");
    let r = success(
        &s.sonic(&["diff", "--config-db-new", "new.json", "--json"], d),
        "diff --redis",
    );
    assert_eq!(f, r);
    assert!(r.contains("pg_lossless_100000_40m_profile"));
}

#[test]
fn malformed_state_db_names_redis() {
    let s = Switch::with_example("sn3700", true);
    let mut bad = RawDb::new();
    bad.entry("BUFFER_MAX_PARAM_TABLE".into())
        .or_default()
        .insert(
            "global".into(),
            [("mmu_size".to_string(), "lots".to_string())].into(),
        );
    s.put(Db::State, &bad);
    let tmp = tempfile::tempdir().expect("tempdir");
    let o = s.sonic(&["plan", "--out", "out"], tmp.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("STATE_DB at {}", s.url)), "{err}");
    assert!(err.contains("mmu_size"), "{err}");
    assert!(!tmp.path().join("out").exists());
}
