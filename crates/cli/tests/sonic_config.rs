//! `headroom sonic config …` end to end: every validation rule (seed 003's CLI section)
//! rejects with exit code 2, one error line, and leaves config_db.json byte-identical; valid
//! commands update exactly the entries they name.

use std::path::Path;
use std::process::Output;

mod common;
use common::{example, headroom};

use serde_json::{json, Value};

/// A temporary copy of the SN3700 example.
fn sn3700() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for f in ["config_db.json", "asic_table.json", "state_db.json"] {
        std::fs::copy(example("sn3700").join(f), tmp.path().join(f)).expect("copy");
    }
    tmp
}

/// `headroom sonic config --config-db config_db.json <args>` in `dir`.
fn config(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["sonic", "config", "--config-db", "config_db.json"];
    all.extend_from_slice(args);
    headroom(&all, dir)
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = config(dir, args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn doc(dir: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(dir.join("config_db.json")).expect("config_db.json"),
    )
    .expect("valid JSON")
}

/// Runs the command and checks: exit 2, stderr names `expect`, our errors are one line, no
/// panic, and config_db.json is byte-identical.
fn rejects_in(dir: &Path, args: &[&str], expect: &str) {
    let before = std::fs::read(dir.join("config_db.json")).expect("read");
    let o = config(dir, args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?} was accepted: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(
        err.contains(expect),
        "{args:?}: stderr lacks {expect:?}:\n{err}"
    );
    if !err.contains("For more information") {
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("error: "), "{err}");
    }
    let after = std::fs::read(dir.join("config_db.json")).expect("read");
    assert!(before == after, "{args:?}: the file changed on error");
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left");
}

fn rejects(args: &[&str], expect: &str) {
    let tmp = sn3700();
    rejects_in(tmp.path(), args, expect);
}

const PROFILE: [&str; 3] = ["buffer", "profile", "add"];

fn with<'a>(head: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    head.iter().chain(tail.iter()).copied().collect()
}

#[test]
fn profile_needs_headroom_parameters_or_dynamic_th() {
    rejects(&with(&PROFILE, &["p1"]), "give headroom parameters");
    rejects(
        &["buffer", "profile", "set", "ingress_lossy_profile"],
        "nothing to set",
    );
}

#[test]
fn profile_xon_is_mandatory_for_static_profiles() {
    rejects(
        &with(&PROFILE, &["p1", "--xoff", "30000", "--size", "60000"]),
        "--xon is mandatory",
    );
}

#[test]
fn profile_needs_xoff_or_size_without_shared_headroom_pool() {
    rejects(
        &with(&PROFILE, &["p1", "--xon", "18432"]),
        "give --xoff or --size",
    );
}

#[test]
fn profile_xon_plus_xoff_must_fit_size() {
    rejects(
        &with(
            &PROFILE,
            &["p1", "--xon", "18432", "--xoff", "40000", "--size", "50000"],
        ),
        "exceeds size 50000",
    );
    rejects(
        &with(&PROFILE, &["p1", "--xon", "18432", "--size", "1000"]),
        "smaller than xon",
    );
}

#[test]
fn profile_xoff_is_mandatory_with_shared_headroom_pool() {
    let tmp = sn3700();
    ok(
        tmp.path(),
        &[
            "buffer",
            "shared-headroom-pool",
            "over-subscribe-ratio",
            "2",
        ],
    );
    rejects_in(
        tmp.path(),
        &with(&PROFILE, &["p1", "--xon", "18432", "--size", "18432"]),
        "--xoff is mandatory",
    );
    // With xoff, size defaults to xon.
    ok(
        tmp.path(),
        &with(&PROFILE, &["p1", "--xon", "18432", "--xoff", "40000"]),
    );
    assert_eq!(
        doc(tmp.path())["BUFFER_PROFILE"]["p1"],
        json!({"pool": "ingress_lossless_pool", "xon": "18432", "xoff": "40000",
               "size": "18432", "dynamic_th": "0"})
    );
}

#[test]
fn profile_add_needs_a_new_name_and_an_ingress_pool() {
    rejects(
        &with(&PROFILE, &["ingress_lossy_profile", "--dynamic-th", "1"]),
        "already exists",
    );
    rejects(
        &with(&PROFILE, &["p1", "--dynamic-th", "1", "--pool", "nopool"]),
        "pool nopool does not exist in BUFFER_POOL",
    );
    rejects(
        &with(
            &PROFILE,
            &["p1", "--dynamic-th", "1", "--pool", "egress_lossy_pool"],
        ),
        "egress pool",
    );
    rejects(&with(&PROFILE, &["a|b", "--dynamic-th", "1"]), "not valid");
    rejects(
        &with(&PROFILE, &["p1", "--dynamic-th", "9"]),
        "9 is not in -8..=8",
    );
}

#[test]
fn profile_set_rules() {
    rejects(
        &["buffer", "profile", "set", "nope", "--dynamic-th", "1"],
        "does not exist",
    );
    rejects(
        &[
            "buffer",
            "profile",
            "set",
            "ingress_lossy_profile",
            "--pool",
            "ingress_lossless_pool",
        ],
        "cannot change",
    );
    let tmp = sn3700();
    ok(tmp.path(), &with(&PROFILE, &["th1", "--dynamic-th", "1"]));
    rejects_in(
        tmp.path(),
        &["buffer", "profile", "set", "th1", "--xon", "18432"],
        "only --dynamic-th can be set",
    );
}

#[test]
fn profile_in_use_cannot_be_removed() {
    rejects(
        &["buffer", "profile", "remove", "ingress_lossy_profile"],
        "is in use by BUFFER_PG|Ethernet0|0",
    );
    rejects(
        &["buffer", "profile", "remove", "q_lossy_profile"],
        "is in use by BUFFER_QUEUE|",
    );
    rejects(
        &["buffer", "profile", "remove", "ingress_lossless_profile"],
        "is in use by BUFFER_PORT_INGRESS_PROFILE_LIST|",
    );
    rejects(&["buffer", "profile", "remove", "nope"], "does not exist");
}

#[test]
fn shared_headroom_pool_bounds() {
    rejects(
        &["buffer", "shared-headroom-pool", "size", "34287552"],
        "must be less than the buffer size 34287552",
    );
    rejects(
        &[
            "buffer",
            "shared-headroom-pool",
            "over-subscribe-ratio",
            "33",
        ],
        "out of range [0, 32]",
    );
    // STATE_DB's mmu_size is the bound when given.
    let tmp = sn3700();
    std::fs::write(
        tmp.path().join("small.json"),
        r#"{"BUFFER_MAX_PARAM_TABLE": {"global": {"mmu_size": "1000000"}}}"#,
    )
    .expect("write");
    rejects_in(
        tmp.path(),
        &[
            "--state-db",
            "small.json",
            "buffer",
            "shared-headroom-pool",
            "size",
            "1000000",
        ],
        "STATE_DB BUFFER_MAX_PARAM_TABLE|global.mmu_size",
    );
}

const PG: [&str; 5] = ["interface", "buffer", "priority-group", "lossless", "add"];
const PG_SET: [&str; 5] = ["interface", "buffer", "priority-group", "lossless", "set"];
const PG_REMOVE: [&str; 5] = [
    "interface",
    "buffer",
    "priority-group",
    "lossless",
    "remove",
];

#[test]
fn pg_ranges_must_be_disjoint() {
    rejects(
        &with(&PG, &["Ethernet0", "4-5"]),
        "overlaps the existing PG 3-4 of Ethernet0",
    );
    rejects(
        &with(&PG, &["Ethernet0", "0"]),
        "overlaps the existing PG 0",
    );
}

#[test]
fn pg_map_must_be_well_formed_and_in_range() {
    rejects(&with(&PG, &["Ethernet0", "5-"]), "malformed");
    rejects(&with(&PG, &["Ethernet0", "6-5"]), "malformed");
    rejects(&with(&PG, &["Ethernet0", "x"]), "malformed");
    rejects(
        &with(&PG, &["Ethernet0", "8"]),
        "out of range: Ethernet0 has 8 priority groups",
    );
    rejects(
        &with(&PG, &["Ethernet1", "5"]),
        "port Ethernet1 does not exist in PORT",
    );
}

#[test]
fn pg_override_profile_must_be_lossless_ingress() {
    rejects(
        &with(&PG, &["Ethernet0", "5", "nope"]),
        "does not exist in BUFFER_PROFILE",
    );
    rejects(
        &with(&PG, &["Ethernet0", "5", "ingress_lossy_profile"]),
        "not lossless",
    );
    rejects(
        &with(&PG, &["Ethernet0", "5", "egress_lossless_profile"]),
        "egress profile",
    );
}

#[test]
fn pg_set_and_remove_need_an_existing_lossless_pg() {
    rejects(&with(&PG_SET, &["Ethernet0", "5-6"]), "has no PG 5-6");
    rejects(&with(&PG_SET, &["Ethernet0", "0"]), "is lossy");
    rejects(&with(&PG_REMOVE, &["Ethernet0", "3"]), "has no PG 3");
    rejects(&with(&PG_REMOVE, &["Ethernet0", "0"]), "is lossy");
    let tmp = sn3700();
    ok(tmp.path(), &with(&PG_REMOVE, &["Ethernet0"]));
    rejects_in(
        tmp.path(),
        &with(&PG_REMOVE, &["Ethernet0"]),
        "has no lossless PG",
    );
}

#[test]
fn cable_length_needs_the_unit_m() {
    let c = ["interface", "cable-length", "Ethernet0"];
    rejects(&with(&c, &["40"]), "has no unit: write 40m");
    rejects(&with(&c, &["2.5m"]), "whole number of metres");
    rejects(&with(&c, &["40km"]), "whole number of metres");
    rejects(&with(&c, &["m"]), "whole number of metres");
    rejects(&with(&c, &["05m"]), "leading zero: write 5m");
    rejects(
        &["interface", "cable-length", "Ethernet1", "5m"],
        "port Ethernet1 does not exist",
    );
}

#[test]
fn config_needs_a_file_or_redis() {
    let tmp = sn3700();
    let o = headroom(
        &[
            "sonic",
            "config",
            "interface",
            "cable-length",
            "Ethernet0",
            "5m",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--config-db FILE is required"));
    rejects_in(
        tmp.path(),
        &[
            "--redis",
            "redis://127.0.0.1:6379",
            "interface",
            "cable-length",
            "Ethernet0",
            "5m",
        ],
        "cannot be used with",
    );
}

#[test]
fn the_result_must_fit_the_buffer_when_the_asic_is_given() {
    let tmp = sn3700();
    // Ethernet0 at 5 m accumulates 198656 bytes (overhead 4096, lossy 19456, mirror 20480,
    // PG 0 19456, PGs 3-4 2 × 67584); at 40 m 208896.
    std::fs::write(
        tmp.path().join("limits.json"),
        r#"{"BUFFER_MAX_PARAM_TABLE": {"global": {"mmu_size": "34287552"},
             "Ethernet0": {"max_headroom_size": "200000"}}}"#,
    )
    .expect("write");
    let fit = [
        "--asic-table",
        "asic_table.json",
        "--state-db",
        "limits.json",
    ];
    rejects_in(
        tmp.path(),
        &with(&fit, &["interface", "cable-length", "Ethernet0", "40m"]),
        "Ethernet0 would fail the maximum-headroom check",
    );
    ok(
        tmp.path(),
        &with(&fit, &["interface", "cable-length", "Ethernet0", "3m"]),
    );
    assert_eq!(doc(tmp.path())["CABLE_LENGTH"]["AZURE"]["Ethernet0"], "3m");
}

#[test]
fn cable_length_updates_one_field_and_keeps_everything_else() {
    let tmp = sn3700();
    let before_text = std::fs::read_to_string(tmp.path().join("config_db.json")).expect("read");
    let before = doc(tmp.path());
    let out = ok(
        tmp.path(),
        &["interface", "cable-length", "Ethernet8", "300m"],
    );
    assert!(
        out.contains("set CABLE_LENGTH|AZURE.Ethernet8 = 300m (was 5m)"),
        "{out}"
    );
    let after_text = std::fs::read_to_string(tmp.path().join("config_db.json")).expect("read");
    let mut after = doc(tmp.path());
    assert_eq!(after["CABLE_LENGTH"]["AZURE"]["Ethernet8"], "300m");
    after["CABLE_LENGTH"]["AZURE"]["Ethernet8"] = json!("5m");
    assert_eq!(
        after, before,
        "nothing else changed (PORT_QOS_MAP, DEVICE_METADATA, …)"
    );
    // SONiC's `config save` format (4 spaces, sorted keys): a one-line textual change.
    let changed: Vec<_> = before_text
        .lines()
        .zip(after_text.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(before_text.lines().count(), after_text.lines().count());
    assert_eq!(
        changed,
        [(
            "            \"Ethernet8\": \"5m\",",
            "            \"Ethernet8\": \"300m\","
        )]
    );
}

#[test]
fn profile_and_pg_lifecycle() {
    let tmp = sn3700();
    let d = tmp.path();
    ok(
        d,
        &with(&PROFILE, &["p1", "--xon", "18432", "--xoff", "40000"]),
    );
    assert_eq!(
        doc(d)["BUFFER_PROFILE"]["p1"],
        json!({"pool": "ingress_lossless_pool", "xon": "18432", "xoff": "40000",
               "size": "58432", "dynamic_th": "0"})
    );
    ok(d, &with(&PROFILE, &["th1", "--dynamic-th", "-2"]));
    assert_eq!(
        doc(d)["BUFFER_PROFILE"]["th1"],
        json!({"pool": "ingress_lossless_pool", "dynamic_th": "-2", "headroom_type": "dynamic"})
    );
    ok(d, &with(&PG_SET, &["Ethernet0", "3-4", "p1"]));
    ok(d, &with(&PG, &["Ethernet0", "6", "th1"]));
    ok(d, &with(&PG, &["Ethernet8", "5-6"]));
    let v = doc(d);
    assert_eq!(v["BUFFER_PG"]["Ethernet0|3-4"], json!({"profile": "p1"}));
    assert_eq!(v["BUFFER_PG"]["Ethernet0|6"], json!({"profile": "th1"}));
    assert_eq!(v["BUFFER_PG"]["Ethernet8|5-6"], json!({"profile": "NULL"}));
    // Changing xoff re-deduces size = xon + xoff.
    ok(d, &["buffer", "profile", "set", "p1", "--xoff", "30000"]);
    assert_eq!(doc(d)["BUFFER_PROFILE"]["p1"]["size"], "48432");
    rejects_in(
        d,
        &["buffer", "profile", "remove", "p1"],
        "is in use by BUFFER_PG|Ethernet0|3-4",
    );
    ok(d, &with(&PG_SET, &["Ethernet0", "3-4"]));
    assert_eq!(
        doc(d)["BUFFER_PG"]["Ethernet0|3-4"],
        json!({"profile": "NULL"})
    );
    ok(d, &["buffer", "profile", "remove", "p1"]);
    assert!(doc(d)["BUFFER_PROFILE"].get("p1").is_none());
    ok(d, &with(&PG_REMOVE, &["Ethernet0", "6"]));
    assert!(doc(d)["BUFFER_PG"].get("Ethernet0|6").is_none());
    // The edited file still plans, with the th1 profile gone from use.
    let o = headroom(
        &[
            "sonic",
            "plan",
            "--config-db",
            "config_db.json",
            "--asic-table",
            "asic_table.json",
            "-q",
            "--out",
            "out",
        ],
        d,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn shared_headroom_pool_size_and_ratio() {
    let tmp = sn3700();
    let d = tmp.path();
    ok(d, &["buffer", "shared-headroom-pool", "size", "1048576"]);
    assert_eq!(
        doc(d)["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"],
        "1048576"
    );
    let out = ok(d, &["buffer", "shared-headroom-pool", "size", "0"]);
    assert!(out.contains("disabled"), "{out}");
    assert!(doc(d)["BUFFER_POOL"]["ingress_lossless_pool"]
        .get("xoff")
        .is_none());
    ok(
        d,
        &[
            "buffer",
            "shared_headroom_pool",
            "over_subscribe_ratio",
            "4",
        ],
    );
    assert_eq!(
        doc(d)["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]["AZURE"]["over_subscribe_ratio"],
        "4"
    );
    ok(
        d,
        &[
            "buffer",
            "shared-headroom-pool",
            "over-subscribe-ratio",
            "0",
        ],
    );
    assert_eq!(
        doc(d)["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]["AZURE"],
        json!({"default_dynamic_th": "0"})
    );
}

#[test]
fn multi_port_pg_keys_are_split_before_a_change() {
    let tmp = sn3700();
    let d = tmp.path();
    let mut v = doc(d);
    let pg = v["BUFFER_PG"].as_object_mut().expect("BUFFER_PG");
    pg.remove("Ethernet0|3-4");
    pg.remove("Ethernet8|3-4");
    pg.insert("Ethernet0,Ethernet8|3-4".into(), json!({"profile": "NULL"}));
    std::fs::write(
        d.join("config_db.json"),
        serde_json::to_string_pretty(&v).expect("json"),
    )
    .expect("write");
    ok(
        d,
        &with(&PROFILE, &["p1", "--xon", "18432", "--xoff", "40000"]),
    );
    ok(d, &with(&PG_SET, &["Ethernet8", "3-4", "p1"]));
    let v = doc(d);
    assert!(v["BUFFER_PG"].get("Ethernet0,Ethernet8|3-4").is_none());
    assert_eq!(v["BUFFER_PG"]["Ethernet0|3-4"], json!({"profile": "NULL"}));
    assert_eq!(v["BUFFER_PG"]["Ethernet8|3-4"], json!({"profile": "p1"}));
}
