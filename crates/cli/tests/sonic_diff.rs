//! `headroom sonic diff` end to end: a CONFIG_DB change (made with `headroom sonic config`) and
//! what it changes in APPL_DB.

use std::path::Path;

mod common;
use common::{example, headroom};

/// A temporary copy of the SN3700 example with `new.json` = `config_db.json` after `change`
/// (a `headroom sonic config` command line).
fn changed(change: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for f in ["config_db.json", "asic_table.json", "state_db.json"] {
        std::fs::copy(example("sn3700").join(f), tmp.path().join(f)).expect("copy");
    }
    std::fs::copy(
        tmp.path().join("config_db.json"),
        tmp.path().join("new.json"),
    )
    .expect("copy");
    if !change.is_empty() {
        let mut args = vec!["sonic", "config", "--config-db", "new.json"];
        args.extend_from_slice(change);
        let o = headroom(&args, tmp.path());
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    tmp
}

fn diff(dir: &Path, json: bool) -> String {
    let mut args = vec![
        "sonic",
        "diff",
        "--config-db",
        "config_db.json",
        "--config-db-new",
        "new.json",
        "--asic-table",
        "asic_table.json",
        "--state-db",
        "state_db.json",
    ];
    if json {
        args.push("--json");
    }
    let o = headroom(&args, dir);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn diff_after_a_cable_length_change() {
    let tmp = changed(&["interface", "cable-length", "Ethernet0", "40m"]);
    let text = diff(tmp.path(), false);
    for want in [
        "Profiles created (1):",
        "pg_lossless_100000_40m_profile",
        "PG map changes (1):",
        "Ethernet0:3-4  pg_lossless_100000_5m_profile  pg_lossless_100000_40m_profile",
        "Pools:",
        "ingress_lossless_pool",
        "-5120",
        "lossless PG headroom",
        "+10240",
    ] {
        assert!(text.contains(want), "diff lacks {want:?}:\n{text}");
    }
    // The old profile is still used by the other 5 m ports: not removed.
    assert!(!text.contains("Profiles removed"), "{text}");

    let j: serde_json::Value = serde_json::from_str(&diff(tmp.path(), true)).expect("JSON");
    assert_eq!(j["changed"], true);
    let p = &j["profiles"]["created"]["pg_lossless_100000_40m_profile"];
    // One port's PGs 3-4 grow from 67584 to 72704 bytes each: 10240 more headroom, shared by
    // the two dynamic ingress pools' halves.
    assert_eq!(p["size"], "72704");
    assert_eq!(
        j["pgs"]["changed"]["Ethernet0:3-4"]["after"],
        "pg_lossless_100000_40m_profile"
    );
    let pool = &j["pools"]["ingress_lossless_pool"]["size"];
    assert_eq!(pool["change"], -5120);
    assert_eq!(
        pool["before"].as_i64().expect("number") - 5120,
        pool["after"].as_i64().expect("number")
    );
    assert_eq!(j["pools"]["egress_lossless_pool"]["size"]["change"], 0);
    assert_eq!(j["accounting"]["lossless PG headroom"]["change"], 10240);
}

#[test]
fn diff_of_identical_configurations_is_empty() {
    let tmp = changed(&[]);
    let text = diff(tmp.path(), false);
    assert!(text.starts_with("No changes to APPL_DB."), "{text}");
    let j: serde_json::Value = serde_json::from_str(&diff(tmp.path(), true)).expect("JSON");
    assert_eq!(j["changed"], false);
    assert_eq!(j["pools"]["ingress_lossless_pool"]["size"]["change"], 0);
}

#[test]
fn diff_after_enabling_the_shared_headroom_pool() {
    let tmp = changed(&[
        "buffer",
        "shared-headroom-pool",
        "over-subscribe-ratio",
        "2",
    ]);
    let j: serde_json::Value = serde_json::from_str(&diff(tmp.path(), true)).expect("JSON");
    // Profiles now reserve only xon; the small-packet compensation is dropped (§4.3 step 9).
    let m = &j["profiles"]["modified"]["pg_lossless_100000_5m_profile"];
    assert_eq!(m["size"]["before"], "67584");
    assert_eq!(m["size"]["after"], "19456");
    assert_eq!(m["xoff"]["after"], "46080");
    let x = &j["pools"]["ingress_lossless_pool"]["xoff"];
    assert_eq!(x["before"], serde_json::Value::Null);
    assert!(x["after"].as_u64().expect("shared headroom pool size") > 0);
    let text = diff(tmp.path(), false);
    assert!(text.contains("Profiles modified (2):"), "{text}");
}

#[test]
fn diff_after_removing_lossless_pgs_removes_the_profile() {
    let tmp = changed(&[]);
    // All eight 200G uplinks: half without PG argument (all lossless PGs), half naming 3-4.
    for (i, port) in ["192", "200", "208", "216", "224", "232", "240", "248"]
        .iter()
        .enumerate()
    {
        let port = format!("Ethernet{port}");
        let mut args = vec![
            "sonic",
            "config",
            "--config-db",
            "new.json",
            "interface",
            "buffer",
            "priority-group",
            "lossless",
            "remove",
            &port,
        ];
        if i >= 4 {
            args.push("3-4");
        }
        let o = headroom(&args, tmp.path());
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let text = diff(tmp.path(), false);
    assert!(text.contains("Profiles removed (1):\n"), "{text}");
    assert!(text.contains("pg_lossless_200000_40m_profile"), "{text}");
    assert!(
        text.contains("Ethernet248:3-4  pg_lossless_200000_40m_profile  -"),
        "{text}"
    );
}
