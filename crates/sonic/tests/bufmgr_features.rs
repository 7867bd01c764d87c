//! Buffer manager behaviour beyond the seed's list: profile naming (`_mtu`, `_th`, `_8lane`),
//! autoneg, `0m` cables, disjoint PG ranges, malformed entries, the shared-headroom-pool
//! toggle table of seed 003 with the ordering waits of sonic-buffer.md §7.9, warm reboot,
//! admin-down ports, port removal and the retry/timer schedule.

mod bufmgr_common;

use std::time::Duration;

use bufmgr_common::*;
use headroom_sonic::bufmgr::harness::Harness;
use headroom_sonic::bufmgr::{BufferManager, Input, LogLevel, Output, PortState};
use headroom_sonic::tables::state::AsicModel;

const SPC2: AsicModel = AsicModel::Spectrum2;

fn two_ports() -> Harness {
    start_sn3800(&[
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "5m"),
    ])
}

fn settle_ok(h: &mut Harness) {
    h.settle();
    assert_consistent(h);
    assert!(h.errors().is_empty(), "errors: {:?}", h.errors());
    assert!(h.manager().pending_items().is_empty());
    assert_pools_converged(h);
}

#[test]
fn mtu_change_adds_the_mtu_suffix() {
    let mut h = two_ports();
    h.config_set(
        "PORT",
        "Ethernet0",
        &[
            ("speed", "100000"),
            ("mtu", "1500"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    settle_ok(&mut h);
    let name = "pg_lossless_100000_5m_mtu1500_profile";
    assert_eq!(pg(&h, "Ethernet0:3-4").as_deref(), Some(name));
    assert_eq!(
        profile_fields(&h, name),
        Some(mellanox(SPC2, 100_000, 5.0, 1500, 4, false))
    );
    // Removing the field reverts to 9100 (and the default name).
    h.config_set(
        "PORT",
        "Ethernet0",
        &[
            ("speed", "100000"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
    assert!(!has_profile(&h, name));
}

#[test]
fn eight_lane_ports_get_8lane_profiles_on_sn5000_and_sn4000() {
    let eight = |name, speed| P {
        lanes: 8,
        ..port(name, speed, "5m")
    };
    let ports = [
        eight("Ethernet0", 100_000),
        eight("Ethernet8", 400_000),
        eight("Ethernet16", 800_000),
        port("Ethernet24", 100_000, "5m"),
    ];
    let mmu = 158_229_504;
    let cfg = config_for(&ports, "x86_64-nvidia_sn5600-r0", mmu, None);
    let mut h = start(options(AsicModel::Spectrum4, true), &cfg, mmu, None);
    settle_ok(&mut h);
    let spc4 = AsicModel::Spectrum4;
    for (key, name, speed, lanes) in [
        (
            "Ethernet0:3-4",
            "pg_lossless_100000_5m_8lane_profile",
            100_000,
            8,
        ),
        (
            "Ethernet8:3-4",
            "pg_lossless_400000_5m_8lane_profile",
            400_000,
            8,
        ),
        (
            "Ethernet16:3-4",
            "pg_lossless_800000_5m_profile",
            800_000,
            8,
        ),
        (
            "Ethernet24:3-4",
            "pg_lossless_100000_5m_profile",
            100_000,
            4,
        ),
    ] {
        assert_eq!(pg(&h, key).as_deref(), Some(name));
        assert_eq!(
            profile_fields(&h, name),
            Some(mellanox(spc4, speed, 5.0, 9100, lanes, false)),
            "{name}"
        );
    }
    // SN4700: 400G ports are 8-lane anyway, no suffix; 100G 8-lane ports get one.
    let ports = [eight("Ethernet0", 400_000), eight("Ethernet8", 100_000)];
    let mmu = 60_817_392;
    let cfg = config_for(&ports, "x86_64-mlnx_msn4700-r0", mmu, None);
    let h = start(options(AsicModel::Spectrum3, true), &cfg, mmu, None);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_400000_5m_profile")
    );
    assert_eq!(
        pg(&h, "Ethernet8:3-4").as_deref(),
        Some("pg_lossless_100000_5m_8lane_profile")
    );
}

#[test]
fn autoneg_ports_use_advertised_or_supported_speeds() {
    let mut h = two_ports();
    h.config_set(
        "PORT",
        "Ethernet0",
        &[
            ("speed", "100000"),
            ("autoneg", "on"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    h.settle();
    // No advertised nor supported speeds: the port cannot be ready (its PG keeps the
    // profile it had, as in SONiC).
    assert_eq!(
        h.manager().port_state("Ethernet0"),
        Some(PortState::Initializing)
    );
    h.state_set(
        "PORT_TABLE",
        "Ethernet0",
        &[("supported_speeds", "10000,25000,50000")],
    );
    settle_ok(&mut h);
    assert_eq!(h.manager().port_state("Ethernet0"), Some(PortState::Ready));
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_50000_5m_profile")
    );
    h.config_set(
        "PORT",
        "Ethernet0",
        &[
            ("speed", "100000"),
            ("autoneg", "on"),
            ("adv_speeds", "10000,25000"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "up"),
        ],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_25000_5m_profile")
    );
    assert!(!has_profile(&h, "pg_lossless_50000_5m_profile"));
}

#[test]
fn cable_0m_removes_the_lossless_pgs() {
    let mut h = two_ports();
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[("Ethernet0", "0m"), ("Ethernet4", "5m")],
    );
    settle_ok(&mut h);
    assert_eq!(pg(&h, "Ethernet0:3-4"), None);
    assert_eq!(
        pg(&h, "Ethernet0:0").as_deref(),
        Some("ingress_lossy_profile")
    );
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[("Ethernet0", "5m"), ("Ethernet4", "5m")],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
}

#[test]
fn lossless_pg_ranges_must_be_disjoint() {
    let mut h = two_ports();
    h.config_set("BUFFER_PG", "Ethernet4|4-5", &[("profile", "NULL")]);
    h.settle();
    assert_eq!(pg(&h, "Ethernet4:4-5"), None);
    let errs = h.errors();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("overlaps") && errs[0].contains("3-4"),
        "{}",
        errs[0]
    );
    // Logged once, retried quietly.
    h.settle();
    assert_eq!(h.errors().len(), 1);
    h.config_set("BUFFER_PG", "Ethernet4|5-6", &[("profile", "NULL")]);
    h.settle();
    assert_eq!(
        pg(&h, "Ethernet4:5-6").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
    // The rejected range is withdrawn; a range that overlaps only a removed one is applied.
    h.config_del("BUFFER_PG", "Ethernet4|4-5");
    h.config_set("BUFFER_PG", "Ethernet4|2-3", &[("profile", "NULL")]);
    h.settle();
    assert_eq!(pg(&h, "Ethernet4:2-3"), None);
    h.config_del("BUFFER_PG", "Ethernet4|3-4");
    h.settle();
    assert_eq!(
        pg(&h, "Ethernet4:2-3").as_deref(),
        Some("pg_lossless_100000_5m_profile")
    );
    assert_eq!(pg(&h, "Ethernet4:3-4"), None);
    assert!(h.manager().pending_items().is_empty());
    assert_consistent(&h);
}

#[test]
fn malformed_entries_are_logged_and_do_not_stop_the_manager() {
    let mut h = two_ports();
    let before = h.appl.clone();
    type Bad<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a str);
    let bad: [Bad; 8] = [
        (
            "PORT",
            "Ethernet0",
            &[("speed", "fast"), ("admin_status", "up")],
            "speed",
        ),
        (
            "BUFFER_PG",
            "Ethernet0|3-4",
            &[("profil", "NULL")],
            "unexpected field `profil`",
        ),
        ("BUFFER_PG", "Ethernet0|3-", &[("profile", "NULL")], "3-"),
        (
            "BUFFER_POOL",
            "ingress_lossless_pool",
            &[("type", "ingres"), ("mode", "dynamic")],
            "ingres",
        ),
        (
            "BUFFER_PROFILE",
            "p_static_th",
            &[("pool", "ingress_lossless_pool"), ("static_th", "1000")],
            "dynamic mode",
        ),
        (
            "BUFFER_PROFILE",
            "p_egress_lossless",
            &[
                ("pool", "egress_lossy_pool"),
                ("xon", "1"),
                ("xoff", "2"),
                ("size", "3"),
                ("dynamic_th", "0"),
            ],
            "egress pool",
        ),
        (
            "BUFFER_QUEUE",
            "Ethernet0|0-2",
            &[("profile", "ingress_lossy_profile")],
            "egress expected",
        ),
        (
            "LOSSLESS_TRAFFIC_PATTERN",
            "AZURE",
            &[("mtu", "1024")],
            "small_packet_percentage",
        ),
    ];
    for (table, key, fields, needle) in bad {
        let n = h.errors().len();
        h.config_set(table, key, fields);
        h.settle();
        let errs = h.errors();
        assert_eq!(errs.len(), n + 1, "{table}|{key}: {errs:?}");
        assert!(
            errs[n].contains(key.split('|').next().unwrap_or(key)) && errs[n].contains(needle),
            "{table}|{key}: {}",
            errs[n]
        );
    }
    h.feed(Input::state_set(
        "BUFFER_MAX_PARAM_TABLE",
        "global",
        &[("mmu_size", "0")],
    ));
    assert!(h.errors().last().is_some_and(|m| m.contains("mmu_size")));
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[("Ethernet0", "40"), ("Ethernet4", "40m")],
    );
    h.settle();
    assert!(h
        .errors()
        .last()
        .is_some_and(|m| m.contains("Ethernet0") && m.contains("no unit")));
    // The valid part was applied, the malformed ones changed nothing.
    assert_eq!(
        pg(&h, "Ethernet4:3-4").as_deref(),
        Some("pg_lossless_100000_40m_profile")
    );
    assert_eq!(
        pg(&h, "Ethernet0:3-4"),
        before["BUFFER_PG_TABLE"]
            .get("Ethernet0:3-4")
            .and_then(|f| f.get("profile"))
            .cloned()
    );
    assert!(h.manager().pending_items().is_empty());
    assert_consistent(&h);
}

// --- Shared headroom pool: the toggle table of seed 003 -------------------------------------

const SHP_SIZE: &str = "1048576";

fn set_ratio(h: &mut Harness, ratio: Option<&str>) {
    let mut f = vec![("default_dynamic_th", "0")];
    if let Some(r) = ratio {
        f.push(("over_subscribe_ratio", r));
    }
    h.config_set("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", &f);
}

fn set_shp_size(h: &mut Harness, size: Option<&str>) {
    let mut f = vec![("type", "ingress"), ("mode", "dynamic")];
    if let Some(s) = size {
        f.push(("xoff", s));
    }
    h.config_set("BUFFER_POOL", "ingress_lossless_pool", &f);
}

/// Writes of generated profiles since write `since`.
fn profile_rewrites(h: &Harness, since: usize) -> usize {
    h.writes[since..]
        .iter()
        .filter(|o| {
            matches!(o, Output::ApplSet { table, key, .. }
            if table == "BUFFER_PROFILE_TABLE" && key.starts_with("pg_lossless_"))
        })
        .count()
}

const P: &str = "pg_lossless_100000_5m_profile";

fn assert_shp_profiles(h: &Harness, shp: bool) {
    assert_eq!(
        profile_fields(h, P),
        Some(mellanox(SPC2, 100_000, 5.0, 9100, 4, shp))
    );
    let size = profile_fields(h, P).map(|p| p.2);
    if shp {
        assert_eq!(
            size,
            Some(19456),
            "size = xon with the shared headroom pool"
        );
    }
}

fn ilp_xoff(h: &Harness) -> Option<u64> {
    pool_field(h, "ingress_lossless_pool", "xoff")
}

/// The shared headroom pool size the pool algorithm computes for the current state.
fn computed_shp(h: &Harness) -> Option<u64> {
    expected_pools(h)
        .get("ingress_lossless_pool")
        .and_then(|p| p.shp)
}

#[test]
fn shp_disabled_then_ratio_configured() {
    let mut h = two_ports();
    assert_eq!(ilp_xoff(&h), Some(0));
    let n = h.writes.len();
    set_ratio(&mut h, Some("2"));
    settle_ok(&mut h);
    assert_shp_profiles(&h, true);
    let shp = ilp_xoff(&h).expect("xoff");
    assert_eq!(Some(shp), computed_shp(&h));
    assert!(shp != 0 && shp != 655_360);
    // Ordering: the pool's xoff (the 655360 placeholder, profiles still size = xon + xoff)
    // reached APPL_DB before the first profile was rewritten.
    let first_pool = h.writes[n..].iter().position(|o| matches!(o,
        Output::ApplSet { table, fields, .. } if table == "BUFFER_POOL_TABLE" && fields.get("xoff").map(String::as_str) == Some("655360")));
    let first_profile = h.writes[n..].iter().position(|o| {
        matches!(o,
        Output::ApplSet { table, key, .. } if table == "BUFFER_PROFILE_TABLE" && key == P)
    });
    assert!(
        first_pool.is_some() && first_pool < first_profile,
        "{first_pool:?} {first_profile:?}"
    );
}

#[test]
fn shp_disabled_then_size_configured() {
    let mut h = two_ports();
    let n = h.writes.len();
    set_shp_size(&mut h, Some(SHP_SIZE));
    settle_ok(&mut h);
    assert_shp_profiles(&h, true);
    assert_eq!(ilp_xoff(&h), Some(1_048_576));
    let first_pool = h.writes[n..].iter().position(|o| matches!(o,
        Output::ApplSet { table, fields, .. } if table == "BUFFER_POOL_TABLE" && fields.get("xoff").map(String::as_str) == Some(SHP_SIZE)));
    let first_profile = h.writes[n..].iter().position(|o| {
        matches!(o,
        Output::ApplSet { table, key, .. } if table == "BUFFER_PROFILE_TABLE" && key == P)
    });
    assert!(first_pool.is_some() && first_pool < first_profile);
}

#[test]
fn shp_by_size_then_ratio_configured_or_removed_no_action() {
    let mut h = two_ports();
    set_shp_size(&mut h, Some(SHP_SIZE));
    settle_ok(&mut h);
    let n = h.writes.len();
    set_ratio(&mut h, Some("2"));
    settle_ok(&mut h);
    assert_eq!(profile_rewrites(&h, n), 0);
    assert_eq!(ilp_xoff(&h), Some(1_048_576));
    set_ratio(&mut h, None);
    settle_ok(&mut h);
    assert_eq!(profile_rewrites(&h, n), 0);
    assert_eq!(ilp_xoff(&h), Some(1_048_576));
    assert_shp_profiles(&h, true);
}

#[test]
fn shp_by_size_then_size_removed_disables() {
    let mut h = two_ports();
    set_shp_size(&mut h, Some(SHP_SIZE));
    settle_ok(&mut h);
    let n = h.writes.len();
    set_shp_size(&mut h, None);
    settle_ok(&mut h);
    assert!(profile_rewrites(&h, n) > 0);
    assert_shp_profiles(&h, false);
    assert_eq!(ilp_xoff(&h), Some(0));
}

#[test]
fn shp_by_ratio_then_size_configured_programs_the_size() {
    let mut h = two_ports();
    set_ratio(&mut h, Some("2"));
    settle_ok(&mut h);
    let by_ratio = ilp_xoff(&h);
    let n = h.writes.len();
    set_shp_size(&mut h, Some(SHP_SIZE));
    settle_ok(&mut h);
    assert_eq!(profile_rewrites(&h, n), 0);
    assert_eq!(ilp_xoff(&h), Some(1_048_576));
    // "SHP size removed: won't happen" — if it does, the ratio's size comes back.
    set_shp_size(&mut h, None);
    settle_ok(&mut h);
    assert_eq!(profile_rewrites(&h, n), 0);
    assert_eq!(ilp_xoff(&h), by_ratio);
    assert_shp_profiles(&h, true);
}

#[test]
fn shp_by_ratio_then_ratio_removed_disables() {
    let mut h = two_ports();
    set_ratio(&mut h, Some("2"));
    settle_ok(&mut h);
    let n = h.writes.len();
    set_ratio(&mut h, None);
    settle_ok(&mut h);
    assert!(profile_rewrites(&h, n) > 0);
    assert_shp_profiles(&h, false);
    assert_eq!(ilp_xoff(&h), Some(0));
}

#[test]
fn shp_toggle_waits_for_orchagent_and_fails_after_30_polls() {
    let mut h = two_ports();
    h.orchagent = false;
    set_ratio(&mut h, Some("2"));
    assert!(h.manager().waiting_for_orchagent());
    // Blocked: a cable change waits too.
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[("Ethernet0", "40m"), ("Ethernet4", "5m")],
    );
    h.advance(Duration::from_secs(10));
    assert_eq!(pg(&h, "Ethernet0:3-4").as_deref(), Some(P));
    h.advance(Duration::from_secs(25));
    assert!(!h.manager().waiting_for_orchagent());
    let errs = h.errors();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].contains("shared headroom pool toggle failed"));
    // The queued change went through afterwards; the profiles were not refreshed.
    h.settle();
    assert_eq!(
        pg(&h, "Ethernet0:3-4").as_deref(),
        Some("pg_lossless_100000_40m_profile")
    );
    assert_eq!(
        profile_fields(&h, P).map(|p| p.2),
        Some(mellanox(SPC2, 100_000, 5.0, 9100, 4, false).2)
    );
}

#[test]
fn shp_toggle_resumes_when_orchagent_confirms() {
    let mut h = two_ports();
    h.orchagent = false;
    set_ratio(&mut h, Some("2"));
    assert!(h.manager().waiting_for_orchagent());
    h.advance(Duration::from_secs(5));
    h.feed(Input::ApplStateSet {
        table: "BUFFER_POOL_TABLE".into(),
        key: "ingress_lossless_pool".into(),
        fields: headroom_sonic::bufmgr::to_fields(&[("xoff", "655360")]),
    });
    assert!(!h.manager().waiting_for_orchagent());
    h.settle();
    assert_shp_profiles(&h, true);
    assert!(h.errors().is_empty());
}

// --- Warm reboot ------------------------------------------------------------------------------

#[test]
fn warm_reboot_of_the_same_image_writes_each_pool_once_and_skips_the_check() {
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "300m"),
    ];
    let cfg = sn3800(&ports);
    let reference = start_sn3800(&ports);
    let mut opts = options(SPC2, true);
    opts.warm_reboot = true;
    opts.preserved_appl_db = reference.appl.clone();
    let mut h = Harness::new(opts).expect("manager");
    // A maximum headroom that the configuration exceeds: not checked while replaying.
    publish_state(&mut h, &[], MMU_SN3800, None);
    h.load_config(&cfg);
    publish_state(
        &mut h,
        &["Ethernet0", "Ethernet4"],
        MMU_SN3800,
        Some(150_000),
    );
    h.port_init_done();
    h.settle();
    assert!(h.manager().completely_initialized());
    assert!(h.errors().is_empty(), "{:?}", h.errors());
    assert_eq!(h.appl, reference.appl);
    for pool in [
        "ingress_lossless_pool",
        "ingress_lossy_pool",
        "egress_lossy_pool",
    ] {
        assert_eq!(appl_sets(&h, "BUFFER_POOL_TABLE", pool), 1, "{pool}");
    }
    // Initialised: the check is back.
    h.config_set(
        "CABLE_LENGTH",
        "AZURE",
        &[("Ethernet0", "300m"), ("Ethernet4", "300m")],
    );
    h.settle();
    assert_eq!(h.errors().len(), 1, "{:?}", h.errors());
    assert_eq!(pg(&h, "Ethernet0:3-4").as_deref(), Some(P));
}

// --- Other flows ------------------------------------------------------------------------------

#[test]
fn headroom_override_update_is_checked_and_moves_the_pools() {
    let ports = [
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "5m"),
    ];
    let mut h = start(
        options(SPC2, true),
        &sn3800(&ports),
        MMU_SN3800,
        Some(300_000),
    );
    let set = |h: &mut Harness, size: &str| {
        h.config_set(
            "BUFFER_PROFILE",
            "custom",
            &[
                ("pool", "ingress_lossless_pool"),
                ("dynamic_th", "0"),
                ("xon", "18432"),
                ("xoff", "18432"),
                ("size", size),
            ],
        );
    };
    set(&mut h, "36864");
    h.config_set("BUFFER_PG", "Ethernet0|3-4", &[("profile", "custom")]);
    settle_ok(&mut h);
    let before = pool_field(&h, "ingress_lossless_pool", "size").expect("pool");
    set(&mut h, "73728");
    settle_ok(&mut h);
    assert_eq!(
        h.appl_field("BUFFER_PROFILE_TABLE", "custom", "size"),
        Some("73728")
    );
    assert!(pool_field(&h, "ingress_lossless_pool", "size").expect("pool") < before);
    // Too big for Ethernet0: refused, APPL_DB keeps the previous values.
    set(&mut h, "200000");
    h.settle();
    assert_eq!(
        h.appl_field("BUFFER_PROFILE_TABLE", "custom", "size"),
        Some("73728")
    );
    assert!(h
        .errors()
        .iter()
        .any(|m| m.contains("custom") && m.contains("maximum headroom")));
}

#[test]
fn lossy_pg_replacing_a_dynamic_one_releases_its_profile() {
    let mut h = start_sn3800(&[
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 50_000, "5m"),
    ]);
    h.config_set(
        "BUFFER_PG",
        "Ethernet4|3-4",
        &[("profile", "ingress_lossy_profile")],
    );
    settle_ok(&mut h);
    assert_eq!(
        pg(&h, "Ethernet4:3-4").as_deref(),
        Some("ingress_lossy_profile")
    );
    assert!(!has_profile(&h, "pg_lossless_50000_5m_profile"));
}

#[test]
fn admin_down_port_is_reclaimed_once_its_maxima_are_known() {
    let mut h = two_ports();
    // A new port, down, without BUFFER_MAX_PARAM yet.
    h.config_set(
        "PORT",
        "Ethernet8",
        &[("speed", "100000"), ("lanes", "0,1,2,3")],
    );
    h.config_set(
        "BUFFER_QUEUE",
        "Ethernet8|0-2",
        &[("profile", "q_lossy_profile")],
    );
    h.settle();
    assert_eq!(
        h.manager().port_state("Ethernet8"),
        Some(PortState::AdminDown)
    );
    // Not reclaimed yet (zero profiles are loaded by the first reclaim): nothing written.
    assert!(h
        .appl
        .values()
        .all(|t| t.keys().all(|k| !k.starts_with("Ethernet8"))));
    h.state_set(
        "BUFFER_MAX_PARAM_TABLE",
        "Ethernet8",
        &[("max_priority_groups", "8"), ("max_queues", "16")],
    );
    h.settle();
    assert_eq!(
        h.appl_field("BUFFER_QUEUE_TABLE", "Ethernet8:0-2", "profile"),
        Some("egress_lossy_zero_profile")
    );
    assert_eq!(
        h.appl_field("BUFFER_QUEUE_TABLE", "Ethernet8:3-15", "profile"),
        Some("egress_lossy_zero_profile")
    );
    assert_eq!(
        pg(&h, "Ethernet8:0").as_deref(),
        Some("ingress_lossy_pg_zero_profile")
    );
    // Removing the port: retried while it has a queue, then its zero items go.
    h.config_del("PORT", "Ethernet8");
    h.settle();
    assert_eq!(
        h.manager().pending_items(),
        vec![("PORT".to_string(), "Ethernet8".to_string())]
    );
    h.config_del("BUFFER_QUEUE", "Ethernet8|0-2");
    h.settle();
    assert!(h.manager().pending_items().is_empty());
    assert!(
        h.appl
            .values()
            .all(|t| t.keys().all(|k| !k.starts_with("Ethernet8"))),
        "{:?}",
        h.appl
    );
    // No port is down any more... but zero profiles are only unloaded on admin up or removal.
    assert!(!has_profile(&h, "ingress_lossy_pg_zero_profile"));
    assert_consistent(&h);
}

#[test]
fn retries_and_timers_follow_sonic() {
    let mut m = BufferManager::new(options(SPC2, false)).expect("manager");
    while m.poll_output().is_some() {}
    assert_eq!(
        m.poll_timeout(),
        Some(Duration::from_secs(10)),
        "periodic timer"
    );
    let t = Duration::from_millis(2500);
    m.handle(
        t,
        Input::config_set(
            "BUFFER_PROFILE",
            "p",
            &[
                ("pool", "ingress_lossy_pool"),
                ("size", "0"),
                ("dynamic_th", "3"),
            ],
        ),
    );
    assert_eq!(
        m.pending_items(),
        vec![("BUFFER_PROFILE".to_string(), "p".to_string())]
    );
    assert_eq!(
        m.poll_timeout(),
        Some(t + Duration::from_secs(1)),
        "select timeout"
    );
    let logs: Vec<Output> = std::iter::from_fn(|| m.poll_output()).collect();
    assert!(logs.iter().any(|o| matches!(o, Output::Log { level: LogLevel::Warning, message } if message.contains("ingress_lossy_pool"))));
    // The pool arrives: the item is retried on the next select timeout.
    m.handle(
        t,
        Input::config_set(
            "BUFFER_POOL",
            "ingress_lossy_pool",
            &[("type", "ingress"), ("mode", "dynamic")],
        ),
    );
    assert_eq!(m.pending_items().len(), 1);
    m.handle_timeout(t + Duration::from_secs(1));
    assert!(m.pending_items().is_empty());
    // Nothing reaches APPL_DB before the pools are ready (first timer tick).
    assert!(m.appl_db().is_empty());
    m.handle_timeout(Duration::from_secs(10));
    assert!(m.pools_ready());
    assert_eq!(m.poll_timeout(), Some(Duration::from_secs(20)));
}
