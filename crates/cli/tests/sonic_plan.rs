//! `headroom sonic plan` and `headroom sonic show` end to end, on the shipped examples
//! (`examples/sonic/sn3700`: Spectrum-2, 32 ports; `examples/sonic/sn5600`: Spectrum-4, 64
//! ports with mixed speeds, lane counts and cable lengths).

use std::path::Path;
use std::process::Output;

mod common;
use common::{example, headroom, stderr, stdout};

/// Runs `plan` on an example into `out` (extra args appended); checks exit 0.
fn plan(name: &str, out: &Path, extra: &[&str]) -> Output {
    let dir = example(name);
    let out_s = out.to_str().expect("utf-8 path");
    let mut args = vec![
        "sonic",
        "plan",
        "--config-db",
        "config_db.json",
        "--asic-table",
        "asic_table.json",
        "--state-db",
        "state_db.json",
        "--out",
        out_s,
    ];
    args.extend_from_slice(extra);
    let o = headroom(&args, &dir);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    o
}

fn read_json(p: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(p).expect("output exists");
    serde_json::from_str(&text).expect("valid JSON")
}

fn field<'a>(db: &'a serde_json::Value, table: &str, key: &str, f: &str) -> &'a str {
    db[table][key][f]
        .as_str()
        .unwrap_or_else(|| panic!("{table}:{key}.{f} missing"))
}

fn number(db: &serde_json::Value, table: &str, key: &str, f: &str) -> u64 {
    field(db, table, key, f)
        .parse()
        .unwrap_or_else(|_| panic!("{table}:{key}.{f} is not a number"))
}

#[test]
fn plan_sn3700_writes_appl_and_state_db() {
    let tmp = tempfile::tempdir().expect("tempdir");
    plan("sn3700", tmp.path(), &["--quiet"]);
    let appl = read_json(&tmp.path().join("appl_db.json"));
    // sonic-buffer.md §4.5: Spectrum-2, 100G, 5 m, no shared headroom pool.
    let p = "pg_lossless_100000_5m_profile";
    assert_eq!(number(&appl, "BUFFER_PROFILE_TABLE", p, "xon"), 19456);
    assert_eq!(number(&appl, "BUFFER_PROFILE_TABLE", p, "xoff"), 48128);
    assert_eq!(number(&appl, "BUFFER_PROFILE_TABLE", p, "size"), 67584);
    assert_eq!(
        field(&appl, "BUFFER_PROFILE_TABLE", p, "pool"),
        "ingress_lossless_pool"
    );
    assert!(appl["BUFFER_PROFILE_TABLE"]["pg_lossless_200000_40m_profile"].is_object());
    assert_eq!(
        field(&appl, "BUFFER_PG_TABLE", "Ethernet0:3-4", "profile"),
        p
    );
    assert_eq!(
        field(&appl, "BUFFER_PG_TABLE", "Ethernet192:3-4", "profile"),
        "pg_lossless_200000_40m_profile"
    );
    assert_eq!(
        field(&appl, "BUFFER_PG_TABLE", "Ethernet0:0", "profile"),
        "ingress_lossy_profile"
    );
    assert_eq!(
        field(&appl, "BUFFER_QUEUE_TABLE", "Ethernet0:3-4", "profile"),
        "egress_lossless_profile"
    );
    assert_eq!(
        field(
            &appl,
            "BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE",
            "Ethernet0",
            "profile_list"
        ),
        "ingress_lossless_profile,ingress_lossy_profile"
    );
    // Admin-down Ethernet184 gets nothing.
    assert!(appl["BUFFER_PG_TABLE"].get("Ethernet184:3-4").is_none());
    // Pool sizes are numbers; the dynamic pools share what is left.
    let mmu = 34_287_552;
    assert_eq!(
        number(&appl, "BUFFER_POOL_TABLE", "egress_lossless_pool", "size"),
        mmu
    );
    let shared = number(&appl, "BUFFER_POOL_TABLE", "ingress_lossless_pool", "size");
    assert!(shared > 0 && shared < mmu / 2, "{shared}");
    for pool in ["ingress_lossy_pool", "egress_lossy_pool"] {
        assert_eq!(number(&appl, "BUFFER_POOL_TABLE", pool, "size"), shared);
    }

    let state = read_json(&tmp.path().join("state_db.json"));
    assert_eq!(state["BUFFER_POOL_TABLE"], appl["BUFFER_POOL_TABLE"]);
    assert_eq!(state["BUFFER_PROFILE_TABLE"], appl["BUFFER_PROFILE_TABLE"]);
    assert_eq!(
        field(&state, "ASIC_TABLE", "MELLANOX-SPECTRUM-2", "cell_size"),
        "144"
    );
    assert!(
        state.get("BUFFER_PG_TABLE").is_none(),
        "PGs are not mirrored"
    );
}

#[test]
fn plan_sn5600_mixed_speeds_and_lanes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    plan("sn5600", tmp.path(), &["--quiet"]);
    let appl = read_json(&tmp.path().join("appl_db.json"));
    for (pg, profile) in [
        ("Ethernet0:3-4", "pg_lossless_800000_40m_profile"),
        ("Ethernet256:3-4", "pg_lossless_400000_5m_8lane_profile"),
        ("Ethernet384:3-4", "pg_lossless_400000_300m_profile"),
        ("Ethernet448:3-4", "pg_lossless_100000_5m_profile"),
    ] {
        assert_eq!(field(&appl, "BUFFER_PG_TABLE", pg, "profile"), profile);
    }
    // sonic-buffer.md §4.5: Spectrum-4, 100G, 5 m.
    let p = "pg_lossless_100000_5m_profile";
    assert_eq!(number(&appl, "BUFFER_PROFILE_TABLE", p, "xoff"), 49152);
    assert_eq!(number(&appl, "BUFFER_PROFILE_TABLE", p, "size"), 68608);
    // 8-lane ports double the pipeline latency (xon).
    assert_eq!(
        number(
            &appl,
            "BUFFER_PROFILE_TABLE",
            "pg_lossless_400000_5m_8lane_profile",
            "xon"
        ),
        38912
    );
    assert_eq!(
        appl["BUFFER_PROFILE_TABLE"]
            .as_object()
            .map(|m| m.keys().filter(|k| k.starts_with("pg_lossless_")).count()),
        Some(4)
    );
    for pool in [
        "ingress_lossless_pool",
        "ingress_lossy_pool",
        "egress_lossy_pool",
    ] {
        assert!(number(&appl, "BUFFER_POOL_TABLE", pool, "size") > 10_000_000);
    }
    assert!(appl["BUFFER_PG_TABLE"].get("Ethernet504:3-4").is_none());
}

#[test]
fn plan_is_deterministic() {
    for name in ["sn3700", "sn5600"] {
        let (a, b) = (
            tempfile::tempdir().expect("tempdir"),
            tempfile::tempdir().expect("tempdir"),
        );
        let oa = plan(name, a.path(), &[]);
        let ob = plan(name, b.path(), &[]);
        for f in ["appl_db.json", "state_db.json"] {
            let x = std::fs::read(a.path().join(f)).expect("read");
            let y = std::fs::read(b.path().join(f)).expect("read");
            assert!(x == y, "{name}/{f} differs between runs");
        }
        let strip = |o: &Output| {
            stdout(o)
                .lines()
                .filter(|l| !l.starts_with("Wrote "))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(&oa), strip(&ob), "{name}: printed view differs");
    }
}

#[test]
fn plan_prints_show_views() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = stdout(&plan("sn3700", tmp.path(), &[]));
    for want in [
        "model mellanox, ASIC MELLANOX-SPECTRUM-2",
        "Pool: ingress_lossless_pool\n----  --------\nmode  dynamic\nsize  ",
        "Pool: egress_lossless_pool",
        "Profile: pg_lossless_100000_5m_profile\n",
        "xoff        48128",
        "Profile: q_lossy_profile",
        "Priority groups (APPL_DB BUFFER_PG_TABLE):",
        "Admin-down ports (no buffers reserved): Ethernet184",
        "Buffer accounting (bytes):",
        "mmu_size                                    34287552",
        "Maximum-headroom check: not evaluated",
    ] {
        assert!(out.contains(want), "stdout lacks {want:?}:\n{out}");
    }
    // The PG map sorts ports as SONiC does (Ethernet8 before Ethernet16 and Ethernet104).
    let pos = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s} missing"));
    assert!(pos("\nEthernet8 ") < pos("\nEthernet16 "));
    assert!(pos("\nEthernet16 ") < pos("\nEthernet104 "));
}

#[test]
fn plan_dsh_prints_the_dsh_plan() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = stdout(&plan("sn5600", tmp.path(), &["--model", "dsh"]));
    for want in [
        "model dsh",
        "DSH plan (bytes):",
        "insurance headroom (sum of eta, 62 ports)",
        "shared pool",
        "DSH thresholds per port",
        "Xqoff",
        "Xpoff",
    ] {
        assert!(out.contains(want), "stdout lacks {want:?}:\n{out}");
    }
    let appl = read_json(&tmp.path().join("appl_db.json"));
    // DSH PGs reserve only xon; eta is the headroom drawn from the shared pool.
    let p = &appl["BUFFER_PROFILE_TABLE"]["pg_lossless_100000_5m_profile"];
    assert_eq!(p["size"], p["xon"]);
}

#[test]
fn plan_generic_model() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = stdout(&plan("sn3700", tmp.path(), &["--model", "generic"]));
    assert!(out.contains("model generic"));
    let appl = read_json(&tmp.path().join("appl_db.json"));
    assert!(appl["BUFFER_PROFILE_TABLE"]["pg_lossless_100000_5m_profile"].is_object());
}

#[test]
fn plan_without_state_db_falls_back_to_the_egress_lossless_pool_size() {
    let (a, b) = (
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    );
    plan("sn3700", a.path(), &["--quiet"]);
    let o = headroom(
        &[
            "sonic",
            "plan",
            "--config-db",
            "config_db.json",
            "--asic-table",
            "asic_table.json",
            "--quiet",
            "--out",
            b.path().to_str().expect("utf-8"),
        ],
        &example("sn3700"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The example's mmu_size equals egress_lossless_pool.size, so the result is the same.
    assert_eq!(
        std::fs::read(a.path().join("appl_db.json")).expect("read"),
        std::fs::read(b.path().join("appl_db.json")).expect("read")
    );
}

#[test]
fn plan_with_a_gearbox_peripheral_table() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let gearbox = tmp.path().join("peripheral_table.json");
    std::fs::write(
        &gearbox,
        r#"{"PERIPHERAL_TABLE:MELLANOX-GEARBOX-3800": {"gearbox_delay": "400"},
            "PORT_PERIPHERAL_TABLE:global": {"gearbox_model": "MELLANOX-GEARBOX-3800"}}"#,
    )
    .expect("write");
    let out = tmp.path().join("out");
    plan(
        "sn3700",
        &out,
        &[
            "--quiet",
            "--peripheral-table",
            gearbox.to_str().expect("utf-8"),
        ],
    );
    let appl = read_json(&out.join("appl_db.json"));
    // The global gearbox delay adds 2 × 100G × 400 ns to the propagation delay but not to the
    // profile name (sonic-buffer.md §2.2, quirk §11.5).
    let p = "pg_lossless_100000_5m_profile";
    assert!(number(&appl, "BUFFER_PROFILE_TABLE", p, "xoff") > 48128);
    let state = read_json(&out.join("state_db.json"));
    assert_eq!(
        field(
            &state,
            "PERIPHERAL_TABLE",
            "MELLANOX-GEARBOX-3800",
            "gearbox_delay"
        ),
        "400"
    );
}

#[test]
fn plan_reports_ports_failing_the_headroom_check() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let limits = tmp.path().join("limits.json");
    // Ethernet0 accumulates 198656 bytes (sonic-buffer.md §6): over a 150000-byte limit.
    std::fs::write(
        &limits,
        r#"{"BUFFER_MAX_PARAM_TABLE": {"global": {"mmu_size": "34287552"},
            "Ethernet0": {"max_headroom_size": "150000"},
            "Ethernet8": {"max_headroom_size": "250000"}}}"#,
    )
    .expect("write");
    let o = headroom(
        &[
            "sonic",
            "plan",
            "--config-db",
            "config_db.json",
            "--asic-table",
            "asic_table.json",
            "--state-db",
            limits.to_str().expect("utf-8"),
            "--out",
            tmp.path().join("out").to_str().expect("utf-8"),
        ],
        &example("sn3700"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("Maximum-headroom check: 1 of 2 ports pass\n"),
        "{out}"
    );
    assert!(out.contains("Ethernet0  198656       150000"), "{out}");
}

/// Runs `args` in `dir`; checks exit code 2, one-line named errors, no panic.
fn rejects(args: &[&str], dir: &Path, expect: &[&str]) {
    let o = headroom(args, dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    for e in expect {
        assert!(err.contains(e), "stderr lacks {e:?}:\n{err}");
    }
}

#[test]
fn plan_rejects_bad_inputs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let ex = example("sn3700");
    for f in ["config_db.json", "asic_table.json", "state_db.json"] {
        std::fs::copy(ex.join(f), d.join(f)).expect("copy");
    }
    let base = [
        "sonic",
        "plan",
        "--config-db",
        "config_db.json",
        "--asic-table",
        "asic_table.json",
        "--out",
        "out",
    ];
    let text = std::fs::read_to_string(d.join("config_db.json")).expect("read");
    std::fs::write(
        d.join("bad_cable.json"),
        text.replacen("\"Ethernet0\": \"5m\"", "\"Ethernet0\": \"40\"", 1),
    )
    .expect("write");
    let mut a = base.to_vec();
    a[3] = "bad_cable.json";
    rejects(
        &a,
        d,
        &["bad_cable.json", "CABLE_LENGTH", "Ethernet0", "unit"],
    );

    std::fs::write(
        d.join("bad_pg.json"),
        text.replacen("\"Ethernet0|3-4\"", "\"Ethernet0|3-\"", 1),
    )
    .expect("write");
    a[3] = "bad_pg.json";
    rejects(&a, d, &["bad_pg.json", "BUFFER_PG", "3-"]);

    let mut a = base.to_vec();
    a[5] = "missing.json";
    rejects(&a, d, &["cannot read missing.json"]);

    std::fs::write(d.join("empty.json"), "{}").expect("write");
    a[5] = "empty.json";
    rejects(&a, d, &["empty.json: no ASIC_TABLE entry"]);

    std::fs::write(
        d.join("tiny_state.json"),
        r#"{"BUFFER_MAX_PARAM_TABLE": {"global": {"mmu_size": "1000000"}}}"#,
    )
    .expect("write");
    let mut a = base.to_vec();
    a.extend(["--state-db", "tiny_state.json"]);
    rejects(&a, d, &["exhausted"]);

    rejects(
        &["sonic", "plan", "--redis", "redis://127.0.0.1:1"],
        d,
        &["cannot connect to Redis at redis://127.0.0.1:1"],
    );
    assert!(!d.join("out").exists(), "nothing is written on error");
}

fn show(view: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "sonic",
        "show",
        "buffer",
        view,
        "--config-db",
        "config_db.json",
    ];
    args.extend_from_slice(extra);
    let o = headroom(&args, &example("sn3700"));
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn show_buffer_configuration_lists_configured_pools_and_profiles() {
    // Needs only CONFIG_DB.
    let out = show("configuration", &[]);
    for want in [
        "Lossless traffic pattern:",
        "default_dynamic_th       0",
        "Pool: ingress_lossless_pool\n----  -------\nmode  dynamic\ntype  ingress\n----  -------\n",
        "Pool: egress_lossless_pool\n----  --------\nmode  dynamic\nsize  34287552\ntype  egress\n",
        "Profile: ingress_lossy_profile\n----------  ------------------\ndynamic_th  3\npool        ingress_lossy_pool\nsize        0\n",
        "Profile: egress_lossy_profile",
    ] {
        assert!(out.contains(want), "stdout lacks {want:?}:\n{out}");
    }
    assert!(
        !out.contains("pg_lossless_"),
        "no generated profiles in the configuration view"
    );
}

#[test]
fn show_buffer_information_lists_sizes_and_generated_profiles() {
    let out = show(
        "information",
        &[
            "--asic-table",
            "asic_table.json",
            "--state-db",
            "state_db.json",
        ],
    );
    for want in [
        "Pool: ingress_lossless_pool\n----  --------\nmode  dynamic\nsize  ",
        "Profile: pg_lossless_100000_5m_profile",
        "Profile: pg_lossless_200000_40m_profile",
        "Ethernet0    100000  4      5m     3-4  pg_lossless_100000_5m_profile",
    ] {
        assert!(out.contains(want), "stdout lacks {want:?}:\n{out}");
    }
}
