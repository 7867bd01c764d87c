//! The test cases of seed 003 ("Dynamically Headroom Calculation", section "Test cases"):
//! 19 positive and 3 negative cases, written against [`Switch`] so the same case runs on the
//! in-memory harness (`tests/bufmgr_seed003.rs`) and through the Redis daemon
//! (`tests/daemon_seed003.rs`). SN3800 / Spectrum-2, Mellanox model and zero profiles unless
//! stated. Function names carry the seed's numbering. References ("what a fresh start
//! computes") are always computed with the in-memory harness.

use std::time::Duration;

use super::*;
use headroom_sonic::bufmgr::{LogLevel, Output, PortState};
use headroom_sonic::model::Mellanox;
use headroom_sonic::render::render;
use headroom_sonic::tables::config::ConfigDb;
use headroom_sonic::tables::state::{AsicModel, StateDb};
use headroom_sonic::tables::RawDb;

const SPC2: AsicModel = AsicModel::Spectrum2;

fn three_ports<S: Switch>() -> S {
    start_sn3800_on(&[
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "5m"),
        port("Ethernet8", 50_000, "40m"),
    ])
}

fn assert_profile(h: &impl Switch, name: &str, speed: u64, cable: f64) {
    let want = mellanox(SPC2, speed, cable, 9100, 4, false);
    assert_eq!(profile_fields(h, name), Some(want), "{name}");
    assert_eq!(
        h.state()
            .get("BUFFER_PROFILE_TABLE")
            .and_then(|t| t.get(name))
            .and_then(|f| f.get("size"))
            .map(String::as_str),
        Some(want.2.to_string().as_str()),
        "STATE_DB mirror of {name}"
    );
}

fn assert_released(h: &impl Switch, name: &str) {
    assert!(!has_profile(h, name), "{name} still in APPL_DB");
    assert!(
        !h.state()
            .get("BUFFER_PROFILE_TABLE")
            .is_some_and(|t| t.contains_key(name)),
        "{name} still in STATE_DB"
    );
}

fn settle_ok(h: &mut impl Switch) {
    h.settle();
    assert_consistent(h);
    assert!(h.errors().is_empty(), "errors: {:?}", h.errors());
    assert!(h.manager().pending_items().is_empty());
    assert_pools_converged(h);
}

pub fn positive_01_increase_port_speed<S: Switch>() {
    let mut h: S = three_ports();
    let before = pool_field(&h, "ingress_lossless_pool", "size").expect("pool");
    h.config_set(
        "PORT",
        "Ethernet8",
        &[
            ("speed", "100000"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet8:3-4").as_deref(),
        Some("pg_lossless_100000_40m_profile")
    );
    assert_profile(&h, "pg_lossless_100000_40m_profile", 100_000, 40.0);
    assert_released(&h, "pg_lossless_50000_40m_profile");
    let after = pool_field(&h, "ingress_lossless_pool", "size").expect("pool");
    assert!(
        after < before,
        "more headroom, smaller pool: {before} -> {after}"
    );
}

pub fn positive_02_increase_cable_length<S: Switch>() {
    let mut h: S = three_ports();
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[
            ("Ethernet0", "300m"),
            ("Ethernet4", "5m"),
            ("Ethernet8", "40m"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_300m_profile")
    );
    assert_profile(&h, "pg_lossless_100000_300m_profile", 100_000, 300.0);
    // Still used by Ethernet4.
    assert_profile(&h, "pg_lossless_100000_5m_profile", 100_000, 5.0);
}

pub fn positive_03_decrease_port_speed<S: Switch>() {
    let mut h: S = three_ports();
    h.config_set(
        "PORT",
        "Ethernet0",
        &[
            ("speed", "25000"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_25000_5m_profile")
    );
    assert_profile(&h, "pg_lossless_25000_5m_profile", 25_000, 5.0);
    assert!(has_profile(&h, "pg_lossless_100000_5m_profile"));
}

pub fn positive_04_decrease_cable_length<S: Switch>() {
    let mut h: S = three_ports();
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[
            ("Ethernet0", "5m"),
            ("Ethernet4", "5m"),
            ("Ethernet8", "5m"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet8:3-4").as_deref(),
        Some("pg_lossless_50000_5m_profile")
    );
    assert_profile(&h, "pg_lossless_50000_5m_profile", 50_000, 5.0);
    assert_released(&h, "pg_lossless_50000_40m_profile");
}

pub fn positive_05_update_speed_and_cable_length_together<S: Switch>() {
    let mut h: S = three_ports();
    h.config_set(
        "PORT",
        "Ethernet8",
        &[
            ("speed", "100000"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[
            ("Ethernet0", "5m"),
            ("Ethernet4", "5m"),
            ("Ethernet8", "300m"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet8:3-4").as_deref(),
        Some("pg_lossless_100000_300m_profile")
    );
    assert_profile(&h, "pg_lossless_100000_300m_profile", 100_000, 300.0);
    // The intermediate (new speed, old cable) profile came and went.
    assert!(appl_sets(&h, "BUFFER_PROFILE_TABLE", "pg_lossless_100000_40m_profile") > 0);
    assert_released(&h, "pg_lossless_100000_40m_profile");
    assert_released(&h, "pg_lossless_50000_40m_profile");
}

pub fn positive_06_speed_cable_tuple_occurs_for_the_first_time<S: Switch>() {
    let mut h: S = three_ports();
    assert!(!has_profile(&h, "pg_lossless_100000_7m_profile"));
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[
            ("Ethernet0", "7m"),
            ("Ethernet4", "5m"),
            ("Ethernet8", "40m"),
        ],
    );
    settle_ok(&mut h);
    assert_profile(&h, "pg_lossless_100000_7m_profile", 100_000, 7.0);
    assert_eq!(
        h.appl_field(
            "BUFFER_PROFILE_TABLE",
            "pg_lossless_100000_7m_profile",
            "pool"
        ),
        Some("ingress_lossless_pool")
    );
    assert_eq!(
        h.appl_field(
            "BUFFER_PROFILE_TABLE",
            "pg_lossless_100000_7m_profile",
            "dynamic_th"
        ),
        Some("0")
    );
}

pub fn positive_07_tuple_referenced_once_then_no_longer<S: Switch>() {
    let mut h: S = three_ports();
    assert_profile(&h, "pg_lossless_50000_40m_profile", 50_000, 40.0);
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[
            ("Ethernet0", "5m"),
            ("Ethernet4", "5m"),
            ("Ethernet8", "10m"),
        ],
    );
    settle_ok(&mut h);
    assert_released(&h, "pg_lossless_50000_40m_profile");
    assert!(h.writes().iter().any(|o| matches!(o,
        Output::ApplDel { table, key } if table == "BUFFER_PROFILE_TABLE" && key == "pg_lossless_50000_40m_profile")));
}

fn shutdown(h: &mut impl Switch, port: &str, speed: &str) {
    h.config_set(
        "PORT",
        port,
        &[
            ("speed", speed),
            ("lanes", "0,1,2,3"),
            ("admin_status", "down"),
        ],
    );
}

pub fn positive_08_shutdown_a_port<S: Switch>() {
    let mut h: S = three_ports();
    let before = pool_field(&h, "ingress_lossless_pool", "size").expect("pool");
    shutdown(&mut h, "Ethernet8", "50000");
    settle_ok(&mut h);
    assert_eq!(
        h.manager().port_state("Ethernet8"),
        Some(PortState::AdminDown)
    );
    // PGs: removed, PG 0 gets the vendor's zero profile.
    assert_eq!(pg(&h, "Ethernet8:3-4"), None);
    assert_eq!(
        pg(&h, "Ethernet8:0").as_deref(),
        Some("ingress_lossy_pg_zero_profile")
    );
    // Queues: zero profile of their pool; the other supported queues the default one.
    let q = |k: &str| {
        h.appl_field("BUFFER_QUEUE_TABLE", k, "profile")
            .map(str::to_string)
    };
    assert_eq!(
        q("Ethernet8:0-2").as_deref(),
        Some("egress_lossy_zero_profile")
    );
    assert_eq!(
        q("Ethernet8:3-4").as_deref(),
        Some("egress_lossless_zero_profile")
    );
    assert_eq!(
        q("Ethernet8:5-6").as_deref(),
        Some("egress_lossy_zero_profile")
    );
    assert_eq!(
        q("Ethernet8:7-15").as_deref(),
        Some("egress_lossy_zero_profile")
    );
    assert_eq!(
        h.appl_field(
            "BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE",
            "Ethernet8",
            "profile_list"
        ),
        Some("ingress_lossless_zero_profile,ingress_lossy_zero_profile")
    );
    assert_eq!(
        h.appl_field(
            "BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE",
            "Ethernet8",
            "profile_list"
        ),
        Some("egress_lossless_zero_profile,egress_lossy_zero_profile")
    );
    // Zero pool and profiles are in APPL_DB; the port's dynamic profile is released.
    assert_eq!(pool_field(&h, "ingress_zero_pool", "size"), Some(0));
    assert!(has_profile(&h, "ingress_lossy_pg_zero_profile"));
    assert_released(&h, "pg_lossless_50000_40m_profile");
    let after = pool_field(&h, "ingress_lossless_pool", "size").expect("pool");
    assert!(after > before, "buffer reclaimed: {before} -> {after}");
}

pub fn positive_09_startup_a_port<S: Switch>() {
    let mut h: S = three_ports();
    let initial = h.appl().clone();
    shutdown(&mut h, "Ethernet8", "50000");
    settle_ok(&mut h);
    assert_ne!(h.appl(), &initial);
    h.config_set(
        "PORT",
        "Ethernet8",
        &[
            ("speed", "50000"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(h.manager().port_state("Ethernet8"), Some(PortState::Ready));
    // Everything is back, zero pool and profiles are gone (no port is down any more).
    assert_eq!(h.appl(), &initial);
}

pub fn positive_10_dynamic_profile_with_non_default_alpha<S: Switch>() {
    let mut h: S = three_ports();
    h.config_set(
        "BUFFER_PROFILE",
        "customize_profile_nondef_dynamic_th",
        &[
            ("pool", "ingress_lossless_pool"),
            ("dynamic_th", "3"),
            ("headroom_type", "dynamic"),
        ],
    );
    h.config_set(
        "BUFFER_PG",
        "Ethernet0|3-4",
        &[("profile", "customize_profile_nondef_dynamic_th")],
    );
    settle_ok(&mut h);
    let th3 = "pg_lossless_100000_5m_th3_profile";
    assert_eq!(pg(&h, "Ethernet0:3-4").as_deref(), Some(th3));
    assert_profile(&h, th3, 100_000, 5.0);
    assert_eq!(
        h.appl_field("BUFFER_PROFILE_TABLE", th3, "dynamic_th"),
        Some("3")
    );
    // The headroom_type: dynamic profile itself never reaches APPL_DB.
    assert!(!has_profile(&h, "customize_profile_nondef_dynamic_th"));
    // Changing its alpha renames the generated profile.
    h.config_set(
        "BUFFER_PROFILE",
        "customize_profile_nondef_dynamic_th",
        &[
            ("pool", "ingress_lossless_pool"),
            ("dynamic_th", "1"),
            ("headroom_type", "dynamic"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_5m_th1_profile")
    );
    assert_released(&h, th3);
    // No longer referenced: released.
    h.config_set("BUFFER_PG", "Ethernet0|3-4", &[("profile", "NULL")]);
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
    assert_released(&h, "pg_lossless_100000_5m_th1_profile");
    // Unreferenced, the configured profile can go.
    h.config_del("BUFFER_PROFILE", "customize_profile_nondef_dynamic_th");
    settle_ok(&mut h);
}

pub fn positive_11_non_default_lossless_pg<S: Switch>() {
    let mut h: S = three_ports();
    h.config_set("BUFFER_PG", "Ethernet0|6", &[("profile", "NULL")]);
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:6").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
}

fn add_override(h: &mut impl Switch) {
    h.config_set(
        "BUFFER_PROFILE",
        "pg_lossless_custom_profile",
        &[
            ("pool", "ingress_lossless_pool"),
            ("dynamic_th", "3"),
            ("xon", "18432"),
            ("xoff", "18432"),
            ("size", "36864"),
        ],
    );
}

pub fn positive_12_headroom_override_on_a_port<S: Switch>() {
    let mut h: S = three_ports();
    add_override(&mut h);
    h.config_set(
        "BUFFER_PG",
        "Ethernet0|3-4",
        &[("profile", "pg_lossless_custom_profile")],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_custom_profile")
    );
    let f = |n: &str| h.appl_field("BUFFER_PROFILE_TABLE", "pg_lossless_custom_profile", n);
    assert_eq!(
        (f("xon"), f("xoff"), f("size"), f("dynamic_th"), f("pool")),
        (
            Some("18432"),
            Some("18432"),
            Some("36864"),
            Some("3"),
            Some("ingress_lossless_pool")
        )
    );
}

pub fn positive_13_dynamic_and_override_on_the_same_port<S: Switch>() {
    // The seed's "Static calculation" example: 3-4 override, 6 dynamic.
    let mut h: S = three_ports();
    add_override(&mut h);
    h.config_set(
        "BUFFER_PG",
        "Ethernet0|3-4",
        &[("profile", "pg_lossless_custom_profile")],
    );
    h.config_set("BUFFER_PG", "Ethernet0|6", &[("profile", "NULL")]);
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_custom_profile")
    );
    assert_eq!(
        pg(&h, "Ethernet0:6").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
}

pub fn positive_14_remove_headroom_override_on_a_port<S: Switch>() {
    let mut h: S = three_ports();
    add_override(&mut h);
    for k in ["Ethernet0|3-4", "Ethernet0|6"] {
        h.config_set("BUFFER_PG", k, &[("profile", "pg_lossless_custom_profile")]);
    }
    settle_ok(&mut h);
    let before = pool_field(&h, "ingress_lossless_pool", "size").expect("pool");
    // `config interface buffer priority-group lossless remove Ethernet0`: every lossless PG.
    h.config_del("BUFFER_PG", "Ethernet0|3-4");
    h.config_del("BUFFER_PG", "Ethernet0|6");
    settle_ok(&mut h);
    assert_eq!(pg(&h, "Ethernet0:3-4"), None);
    assert_eq!(pg(&h, "Ethernet0:6"), None);
    assert_eq!(
        pg(&h, "Ethernet0:0").as_deref(),
        Some("ingress_lossy_profile")
    );
    // The override profile is configured: it stays.
    assert!(has_profile(&h, "pg_lossless_custom_profile"));
    let after = pool_field(&h, "ingress_lossless_pool", "size").expect("pool");
    assert!(after > before);
}

pub fn positive_15_remove_headroom_override_on_a_port_pg<S: Switch>() {
    let mut h: S = three_ports();
    add_override(&mut h);
    for k in ["Ethernet0|3-4", "Ethernet0|6"] {
        h.config_set("BUFFER_PG", k, &[("profile", "pg_lossless_custom_profile")]);
    }
    settle_ok(&mut h);
    h.config_del("BUFFER_PG", "Ethernet0|6");
    settle_ok(&mut h);
    assert_eq!(pg(&h, "Ethernet0:6"), None);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_custom_profile")
    );
    // `set` back to dynamic on the remaining PG.
    h.config_set("BUFFER_PG", "Ethernet0|3-4", &[("profile", "NULL")]);
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
}

pub fn positive_16_system_start_with_empty_config_db<S: Switch>() {
    let mut h = S::create(options(SPC2, true));
    h.advance(Duration::from_secs(300));
    assert!(h.appl().is_empty(), "nothing to write: {:?}", h.appl());
    assert!(h.state().contains_key("ASIC_TABLE"));
    assert!(!h.manager().pools_ready());
    assert!(h.errors().is_empty());
    // The configuration arrives later: same result as a start with it.
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 50_000, "40m"),
    ];
    let cfg = sn3800(&ports);
    h.load_config(&cfg);
    publish_state(&mut h, &["Ethernet0", "Ethernet4"], MMU_SN3800, None);
    h.port_init_done();
    settle_ok(&mut h);
    let fresh = start_sn3800(&ports);
    assert_eq!(h.appl(), &fresh.appl);
}

pub fn positive_17_system_start_with_a_legal_config_db<S: Switch>() {
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "300m"),
        port("Ethernet8", 25_000, "40m"),
    ];
    let mut h: S = start_sn3800_on(&ports);
    settle_ok(&mut h);
    assert!(h.manager().completely_initialized());
    assert_eq!(
        h.state()["WARM_RESTART_TABLE"]["buffermgrd"]["state"],
        "disabled"
    );
    // Same APPL_DB as the steady-state renderer (apart from the explicit `xoff: 0` buffermgrd
    // writes on ingress_lossless_pool).
    let cfg = ConfigDb::from_raw(h.config()).expect("config");
    let mut st = RawDb::new();
    st.insert("ASIC_TABLE".into(), h.state()["ASIC_TABLE"].clone());
    st.insert(
        "BUFFER_MAX_PARAM_TABLE".into(),
        h.state()["BUFFER_MAX_PARAM_TABLE"].clone(),
    );
    let state = StateDb::from_raw(&st).expect("state");
    let r = render(&cfg, &state, &Mellanox).expect("render");
    let mut mine = h.appl_typed().expect("appl");
    let ilp = mine.pools.get_mut("ingress_lossless_pool").expect("pool");
    assert_eq!(ilp.xoff, Some(0));
    ilp.xoff = None;
    assert_eq!(mine, r.appl);
}

/// The migrated CONFIG_DB of an older image: references in the pre-2021 `[TABLE|name]` form.
fn old_style(cfg: &RawDb) -> RawDb {
    let mut out = cfg.clone();
    for (table, entries) in out.iter_mut() {
        for fields in entries.values_mut() {
            for (f, v) in fields.iter_mut() {
                match (table.as_str(), f.as_str()) {
                    ("BUFFER_PROFILE", "pool") => *v = format!("[BUFFER_POOL|{v}]"),
                    ("BUFFER_PG" | "BUFFER_QUEUE", "profile") if v != "NULL" => {
                        *v = format!("[BUFFER_PROFILE|{v}]")
                    }
                    (_, "profile_list") => {
                        *v = v
                            .split(',')
                            .map(|p| format!("[BUFFER_PROFILE|{p}]"))
                            .collect::<Vec<_>>()
                            .join(",")
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

pub fn positive_18_system_start_from_old_image<S: Switch>() {
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 40_000, "300m"),
    ];
    let new = start_sn3800(&ports);
    let cfg = old_style(&sn3800(&ports));
    assert_ne!(cfg, sn3800(&ports));
    let mut old: S = start_on(options(SPC2, true), &cfg, MMU_SN3800, None);
    settle_ok(&mut old);
    assert_eq!(old.appl(), &new.appl);
}

pub fn positive_19_warm_reboot_from_old_image<S: Switch>() {
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "5m"),
    ];
    let cfg = old_style(&sn3800(&ports));
    // What the old image left in APPL_DB: a lookup-table profile and old pool sizes.
    let reference = start_sn3800(&ports);
    let mut preserved = reference.appl.clone();
    let prof = preserved
        .get_mut("BUFFER_PROFILE_TABLE")
        .and_then(|t| t.get_mut("pg_lossless_100000_5m_profile"))
        .expect("profile");
    prof.insert("xon".into(), "18432".into());
    prof.insert("xoff".into(), "30720".into());
    prof.insert("size".into(), "49152".into());
    for pool in [
        "ingress_lossless_pool",
        "ingress_lossy_pool",
        "egress_lossy_pool",
    ] {
        if let Some(p) = preserved
            .get_mut("BUFFER_POOL_TABLE")
            .and_then(|t| t.get_mut(pool))
        {
            p.insert("size".into(), "12345678".into());
        }
    }
    let mut opts = options(SPC2, true);
    opts.warm_reboot = true;
    opts.preserved_appl_db = preserved;
    let mut h = S::create(opts);
    assert_eq!(
        h.state()["WARM_RESTART_TABLE"]["buffermgrd"]["state"],
        "initialized"
    );
    // A warm start: STATE_DB survived (max params, MMU size) and config is replayed.
    publish_state(&mut h, &[], MMU_SN3800, None);
    h.load_config(&cfg);
    publish_state(&mut h, &["Ethernet0", "Ethernet4"], MMU_SN3800, None);
    h.port_init_done();
    h.settle();
    h.settle();
    assert_consistent(&h);
    assert!(h.errors().is_empty(), "{:?}", h.errors());
    assert!(h.manager().completely_initialized());
    let states: Vec<&str> = h
        .writes()
        .iter()
        .filter_map(|o| match o {
            Output::StateSet { table, fields, .. } if table == "WARM_RESTART_TABLE" => {
                fields.get("state").map(String::as_str)
            }
            _ => None,
        })
        .collect();
    assert_eq!(states, ["initialized", "replayed", "reconciled"]);
    // Headroom is recomputed from the configuration, not migrated.
    assert_profile(&h, "pg_lossless_100000_5m_profile", 100_000, 5.0);
    // Every dynamic pool was written exactly once, with its final size.
    // Pools: written once while replaying (sized from the preserved APPL_DB, so the switch
    // keeps its values), then once more after reconciliation because the old image's
    // headroom differs from the recomputed one; never in between.
    for pool in [
        "ingress_lossless_pool",
        "ingress_lossy_pool",
        "egress_lossy_pool",
    ] {
        let sizes: Vec<&str> = h
            .writes()
            .iter()
            .filter_map(|o| match o {
                Output::ApplSet { table, key, fields }
                    if table == "BUFFER_POOL_TABLE" && key == pool =>
                {
                    fields.get("size").map(String::as_str)
                }
                _ => None,
            })
            .collect();
        assert_eq!(sizes.len(), 2, "{pool}: {sizes:?}");
        assert_eq!(
            Some(sizes[1]),
            reference.appl_field("BUFFER_POOL_TABLE", pool, "size")
        );
    }
    assert_eq!(h.appl(), &reference.appl);
}

pub fn negative_01_headroom_override_with_unexisting_profile<S: Switch>() {
    let mut h: S = three_ports();
    h.config_set(
        "BUFFER_PG",
        "Ethernet0|3-4",
        &[("profile", "no_such_profile")],
    );
    h.settle();
    // Not applied, kept for a retry, logged.
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
    assert_eq!(
        h.manager().pending_items(),
        vec![("BUFFER_PG".to_string(), "Ethernet0|3-4".to_string())]
    );
    assert!(h.logs().iter().any(|(l, m)| *l == LogLevel::Warning
        && m.contains("BUFFER_PG|Ethernet0|3-4")
        && m.contains("no_such_profile")));
    // Once the profile exists the PG is applied.
    h.config_set(
        "BUFFER_PROFILE",
        "no_such_profile",
        &[
            ("pool", "ingress_lossless_pool"),
            ("dynamic_th", "0"),
            ("xon", "19456"),
            ("xoff", "40960"),
            ("size", "60416"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(pg(&h, "Ethernet0:3-4").as_deref(), Some("no_such_profile"));
}

pub fn negative_02_remove_a_referenced_profile<S: Switch>() {
    let mut h: S = three_ports();
    add_override(&mut h);
    h.config_set(
        "BUFFER_PG",
        "Ethernet0|3-4",
        &[("profile", "pg_lossless_custom_profile")],
    );
    settle_ok(&mut h);
    h.config_del("BUFFER_PROFILE", "pg_lossless_custom_profile");
    h.settle();
    assert!(
        has_profile(&h, "pg_lossless_custom_profile"),
        "still referenced"
    );
    assert_eq!(
        h.manager().pending_items(),
        vec![(
            "BUFFER_PROFILE".to_string(),
            "pg_lossless_custom_profile".to_string()
        )]
    );
    // A dynamically generated profile cannot be removed at all. (In Redis, deleting a
    // CONFIG_DB key that does not exist produces no keyspace event, so buffermgrd never sees
    // this removal and the error is only reachable by feeding the event directly.)
    h.config_del("BUFFER_PROFILE", "pg_lossless_100000_5m_profile");
    h.settle();
    assert!(has_profile(&h, "pg_lossless_100000_5m_profile"));
    if h.deletes_absent_rows() {
        assert!(h
            .errors()
            .iter()
            .any(|m| m.contains("dynamically generated")));
    }
    // When the reference goes, the pending removal completes.
    h.config_set("BUFFER_PG", "Ethernet0|3-4", &[("profile", "NULL")]);
    h.settle();
    assert!(!has_profile(&h, "pg_lossless_custom_profile"));
    assert!(h.manager().pending_items().is_empty());
}

pub fn negative_03_cable_length_exceeding_the_maximum_headroom<S: Switch>() {
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "5m"),
    ];
    let mut h: S = start_on(
        options(SPC2, true),
        &sn3800(&ports),
        MMU_SN3800,
        Some(300_000),
    );
    assert!(h.errors().is_empty());
    let before = h.appl().clone();
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[("Ethernet0", "2000m"), ("Ethernet4", "5m")],
    );
    h.settle();
    assert_consistent(&h);
    // Refused: APPL_DB unchanged, the computed profile released, an error names the port.
    assert_eq!(h.appl(), &before);
    assert!(!has_profile(&h, "pg_lossless_100000_2000m_profile"));
    let errs = h.errors();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("Ethernet0") && errs[0].contains("maximum headroom"));
    // A legal length is accepted afterwards.
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[("Ethernet0", "300m"), ("Ethernet4", "5m")],
    );
    h.settle();
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_300m_profile")
    );
}
