//! Typed tables: parsing SONiC's encodings, and the errors for bad values.

use headroom_sonic::defaults::{mellanox_dynamic, DefaultOptions, DefaultPort};
use headroom_sonic::model::mellanox::Mellanox;
use headroom_sonic::model::{HeadroomArgs, HeadroomEnv};
use headroom_sonic::render::render;
use headroom_sonic::tables::appl::ApplDb;
use headroom_sonic::tables::config::{AdminStatus, ConfigDb, Port};
use headroom_sonic::tables::raw::{from_flat_json, from_nested_json, to_nested_json};
use headroom_sonic::tables::state::{AsicModel, StateDb};
use headroom_sonic::tables::{CableLength, IdRange, LookupError, PortIds, TableError, Threshold};
use headroom_sonic::validate::{validate, MAX_CABLE_METRES};
use proptest::prelude::*;

/// A small valid config_db.json in SONiC's nested format.
const CONFIG: &str = r#"{
  "DEVICE_METADATA": {"localhost": {"platform": "x86_64-mlnx_msn3800-r0", "hwsku": "ACS-MSN3800", "buffer_model": "dynamic", "type": "ToRRouter"}},
  "PORT": {
    "Ethernet0": {"lanes": "0,1,2,3", "speed": "100000", "admin_status": "up", "mtu": "9100"},
    "Ethernet4": {"lanes": "4,5,6,7,8,9,10,11", "speed": "400000", "admin_status": "up", "autoneg": "on", "adv_speeds": "200000,400000"},
    "Ethernet8": {"lanes": "12", "speed": "25000"}
  },
  "CABLE_LENGTH": {"AZURE": {"Ethernet0": "5m", "Ethernet4": "2.5m", "Ethernet8": "300m"}},
  "BUFFER_POOL": {
    "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "xoff": "0"},
    "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": "34287552"},
    "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "percentage": "40"}
  },
  "BUFFER_PROFILE": {
    "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"},
    "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"},
    "pg_override": {"pool": "[BUFFER_POOL|ingress_lossless_pool]", "xon": "19456", "xoff": "30000", "size": "49456", "dynamic_th": "0"},
    "th1": {"pool": "ingress_lossless_pool", "headroom_type": "dynamic", "dynamic_th": "1"}
  },
  "BUFFER_PG": {
    "Ethernet0,Ethernet4|3-4": {"profile": "NULL"},
    "Ethernet8|3": {},
    "Ethernet8|6": {"profile": "pg_override"},
    "Ethernet0|0": {"profile": "ingress_lossless_profile"}
  },
  "BUFFER_QUEUE": {"Ethernet0|0-2": {"profile": "egress_lossy_profile"}},
  "BUFFER_PORT_INGRESS_PROFILE_LIST": {"Ethernet0": {"profile_list": "ingress_lossless_profile"}},
  "BUFFER_PORT_EGRESS_PROFILE_LIST": {"Ethernet0": {"profile_list": "egress_lossy_profile"}},
  "DEFAULT_LOSSLESS_BUFFER_PARAMETER": {"AZURE": {"default_dynamic_th": "0", "over_subscribe_ratio": "2"}},
  "LOSSLESS_TRAFFIC_PATTERN": {"AZURE": {"mtu": "1024", "small_packet_percentage": "50"}},
  "VLAN": {"Vlan1000": {"vlanid": "1000", "members": ["Ethernet0", "Ethernet4"]}}
}"#;

fn parse(text: &str) -> Result<ConfigDb, Vec<TableError>> {
    let raw = from_nested_json(text).expect("valid JSON");
    ConfigDb::from_raw(&raw).map_err(|e| e.errors().to_vec())
}

/// Applies `edit` to the valid document (as JSON) and parses it.
fn parse_edited(edit: impl FnOnce(&mut serde_json::Value)) -> Result<ConfigDb, Vec<TableError>> {
    let mut v: serde_json::Value = serde_json::from_str(CONFIG).expect("json");
    edit(&mut v);
    parse(&v.to_string())
}

#[test]
fn valid_config_is_typed() {
    let db = parse(CONFIG).expect("valid");
    let e0 = &db.ports["Ethernet0"];
    assert_eq!(
        (e0.speed, e0.lane_count(), e0.mtu, e0.admin_status),
        (Some(100_000), 4, Some(9100), AdminStatus::Up)
    );
    let e4 = &db.ports["Ethernet4"];
    assert_eq!(e4.effective_speed(None), Some(400_000));
    assert_eq!(e4.lane_count(), 8);
    assert_eq!(
        db.ports["Ethernet8"].admin_status,
        AdminStatus::Down,
        "no admin_status = down"
    );
    assert_eq!(
        db.cable_length("Ethernet4").map(CableLength::metres),
        Some(2.5)
    );
    // Multi-port key split; `NULL` and a missing profile are dynamic.
    let pg = |p: &str, r: IdRange| db.pgs.get(&PortIds::new(p, r)).cloned();
    let r34 = IdRange::new(3, 4).expect("range");
    assert_eq!(pg("Ethernet0", r34).map(|p| p.profile), Some(None));
    assert_eq!(pg("Ethernet4", r34).map(|p| p.profile), Some(None));
    assert_eq!(
        pg("Ethernet8", IdRange::single(3)).map(|p| p.profile),
        Some(None)
    );
    assert_eq!(
        db.profiles["pg_override"].pool, "ingress_lossless_pool",
        "old [TABLE|name] reference syntax"
    );
    assert!(db.profiles["th1"].is_dynamic_headroom());
    assert_eq!(db.profiles["th1"].threshold, Some(Threshold::Dynamic(1)));
    assert_eq!(db.lossless_pg_count("Ethernet8"), 2);
    assert_eq!(db.lossless_pg_count("Ethernet0"), 2);
    assert_eq!(db.over_subscribe_ratio(), Some(2.0));
    assert_eq!(db.configured_shp_size(), None, "xoff 0 = not configured");
    assert!(db.shp_enabled());
    assert_eq!(db.pools["egress_lossy_pool"].percentage, Some(40.0));
    assert_eq!(db.platform(), Some("x86_64-mlnx_msn3800-r0"));
    assert_eq!(db.device_metadata["localhost"].other["type"], "ToRRouter");
    // Round trip through SONiC's encoding.
    assert_eq!(ConfigDb::from_raw(&db.to_raw()), Ok(db));
}

#[test]
fn unknown_profile_reference() {
    let errs = parse_edited(|v| v["BUFFER_PG"]["Ethernet8|6"]["profile"] = "pg_nonexistent".into())
        .expect_err("bad");
    assert_eq!(
        errs,
        [TableError::UnknownProfile {
            table: "BUFFER_PG".into(),
            key: "Ethernet8|6".into(),
            field: "profile".into(),
            profile: "pg_nonexistent".into(),
        }]
    );
    assert_eq!(
        errs[0].to_string(),
        "BUFFER_PG|Ethernet8|6: field `profile` refers to unknown profile \"pg_nonexistent\""
    );
    let errs = parse_edited(|v| {
        v["BUFFER_PORT_EGRESS_PROFILE_LIST"]["Ethernet0"]["profile_list"] =
            "egress_lossy_profile,nope".into()
    })
    .expect_err("bad");
    assert!(
        matches!(&errs[..], [TableError::UnknownProfile { table, field, profile, .. }]
        if table == "BUFFER_PORT_EGRESS_PROFILE_LIST" && field == "profile_list" && profile == "nope")
    );
    let errs = parse_edited(|v| v["BUFFER_QUEUE"]["Ethernet0|0-2"]["profile"] = "q".into())
        .expect_err("bad");
    assert!(
        matches!(&errs[..], [TableError::UnknownProfile { table, .. }] if table == "BUFFER_QUEUE")
    );
}

#[test]
fn malformed_pg_range() {
    for (key, range) in [
        ("Ethernet0|3-", "3-"),
        ("Ethernet0|-4", "-4"),
        ("Ethernet0|4-3", "4-3"),
        ("Ethernet0|x", "x"),
    ] {
        let errs = parse_edited(|v| v["BUFFER_PG"][key] = serde_json::json!({"profile": "NULL"}))
            .expect_err(key);
        assert!(
            matches!(&errs[..], [TableError::BadIdRange { table, key: k, range: r, .. }] if table == "BUFFER_PG" && k == key && r == range),
            "{key}: {errs:?}"
        );
    }
    let errs =
        parse_edited(|v| v["BUFFER_PG"]["Ethernet0|3-"] = serde_json::json!({})).expect_err("bad");
    assert_eq!(
        errs[0].to_string(),
        "BUFFER_PG|Ethernet0|3-: id range \"3-\" is malformed: a bound is missing (write `a` or `a-b`)"
    );
    let errs = parse_edited(|v| {
        v["BUFFER_QUEUE"]["Ethernet0"] = serde_json::json!({"profile": "egress_lossy_profile"})
    })
    .expect_err("bad");
    assert!(matches!(&errs[..], [TableError::BadKey { table, .. }] if table == "BUFFER_QUEUE"));
}

#[test]
fn cable_without_unit() {
    let errs =
        parse_edited(|v| v["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "40".into()).expect_err("bad");
    assert_eq!(
        errs,
        [TableError::CableWithoutUnit {
            table: "CABLE_LENGTH".into(),
            key: "AZURE".into(),
            field: "Ethernet0".into(),
            value: "40".into(),
        }]
    );
    assert!(errs[0]
        .to_string()
        .contains("has no unit (write e.g. \"40m\")"));
    let errs =
        parse_edited(|v| v["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "5km".into()).expect_err("bad");
    assert!(
        matches!(&errs[..], [TableError::BadCableLength { field, value, .. }] if field == "Ethernet0" && value == "5km")
    );
}

#[test]
fn non_numeric_speed() {
    let errs = parse_edited(|v| v["PORT"]["Ethernet0"]["speed"] = "100G".into()).expect_err("bad");
    assert_eq!(
        errs,
        [TableError::BadNumber {
            table: "PORT".into(),
            key: "Ethernet0".into(),
            field: "speed".into(),
            value: "100G".into(),
            expected: "a positive integer (Mb/s, e.g. 100000)",
        }]
    );
    assert_eq!(
        errs[0].to_string(),
        "PORT|Ethernet0: field `speed` = \"100G\" is not a positive integer (Mb/s, e.g. 100000)"
    );
    for (field, value) in [("mtu", "jumbo"), ("lanes", "0,a"), ("adv_speeds", "fast")] {
        let errs = parse_edited(|v| v["PORT"]["Ethernet4"][field] = value.into()).expect_err(field);
        assert!(
            matches!(&errs[..], [TableError::BadNumber { field: f, .. }] if f == field),
            "{field}: {errs:?}"
        );
    }
}

#[test]
fn other_bad_values() {
    // Unknown pool reference.
    let errs =
        parse_edited(|v| v["BUFFER_PROFILE"]["egress_lossy_profile"]["pool"] = "no_pool".into())
            .expect_err("bad");
    assert!(matches!(&errs[..], [TableError::UnknownPool { pool, .. }] if pool == "no_pool"));
    // An egress profile on a PG.
    let errs =
        parse_edited(|v| v["BUFFER_PG"]["Ethernet8|6"]["profile"] = "egress_lossy_profile".into())
            .expect_err("bad");
    assert!(matches!(
        &errs[..],
        [TableError::WrongDirection {
            actual: "egress",
            expected: "ingress",
            ..
        }]
    ));
    // Both kinds of threshold on one profile.
    let errs =
        parse_edited(|v| v["BUFFER_PROFILE"]["egress_lossy_profile"]["static_th"] = "9216".into())
            .expect_err("bad");
    assert!(
        matches!(&errs[..], [TableError::Inconsistent { key, reason, .. }]
            if key == "egress_lossy_profile" && reason.contains("both `dynamic_th` and `static_th`")),
        "{errs:?}"
    );
    // Enumerations.
    let errs = parse_edited(|v| v["BUFFER_POOL"]["egress_lossy_pool"]["type"] = "ingres".into())
        .expect_err("bad");
    assert!(
        matches!(&errs[..], [TableError::BadEnum { field, allowed: "ingress, egress, both", .. }] if field == "type")
    );
    let errs =
        parse_edited(|v| v["PORT"]["Ethernet0"]["admin_status"] = "UP".into()).expect_err("bad");
    assert!(matches!(&errs[..], [TableError::BadEnum { field, .. }] if field == "admin_status"));
    // Missing fields.
    let errs = parse_edited(|v| {
        v["BUFFER_PROFILE"]["egress_lossy_profile"]
            .as_object_mut()
            .map(|o| o.remove("pool"))
            .map(|_| ())
            .unwrap_or(())
    })
    .expect_err("bad");
    assert!(matches!(&errs[..], [TableError::MissingField { field, .. }] if field == "pool"));
    // Contradictions.
    let errs =
        parse_edited(|v| v["BUFFER_PROFILE"]["egress_lossy_profile"]["static_th"] = "1000".into())
            .expect_err("bad");
    assert!(matches!(&errs[..], [TableError::Inconsistent { .. }]));
    let errs = parse_edited(|v| {
        let o = &mut v["BUFFER_PROFILE"]["egress_lossy_profile"];
        o["static_th"] = "1000".into();
        o.as_object_mut().map(|o| o.remove("dynamic_th"));
    })
    .expect_err("bad");
    assert!(
        matches!(&errs[..], [TableError::Inconsistent { reason, .. }] if reason.contains("dynamic mode"))
    );
    // Ranges.
    let errs = parse_edited(|v| {
        v["LOSSLESS_TRAFFIC_PATTERN"]["AZURE"]["small_packet_percentage"] = "101".into()
    })
    .expect_err("bad");
    assert!(
        matches!(&errs[..], [TableError::BadNumber { field, .. }] if field == "small_packet_percentage")
    );
    let errs = parse_edited(|v| v["BUFFER_POOL"]["egress_lossy_pool"]["percentage"] = "150".into())
        .expect_err("bad");
    assert!(matches!(&errs[..], [TableError::BadNumber { field, .. }] if field == "percentage"));
    let errs = parse_edited(|v| {
        v["DEFAULT_LOSSLESS_BUFFER_PARAMETER"]["AZURE"]["over_subscribe_ratio"] = "two".into()
    })
    .expect_err("bad");
    assert!(
        matches!(&errs[..], [TableError::BadNumber { field, .. }] if field == "over_subscribe_ratio")
    );
}

#[test]
fn all_errors_are_reported() {
    let errs = parse_edited(|v| {
        v["PORT"]["Ethernet0"]["speed"] = "x".into();
        v["CABLE_LENGTH"]["AZURE"]["Ethernet4"] = "7".into();
        v["BUFFER_PG"]["Ethernet0|3-"] = serde_json::json!({});
    })
    .expect_err("bad");
    assert_eq!(errs.len(), 3, "{errs:?}");
    let raw = from_nested_json(
        r#"{"PORT": {"Ethernet0": {"speed": "x"}}, "CABLE_LENGTH": {"AZURE": {"Ethernet0": "7"}}}"#,
    )
    .expect("json");
    let msg = ConfigDb::from_raw(&raw).expect_err("bad").to_string();
    assert!(msg.starts_with("2 table errors:"), "{msg}");
}

/// The flat files of buffermgrd (`-a asic_table.json`, `-p peripheral_table.json`).
#[test]
fn state_db_from_flat_files() {
    let asic = r#"{"ASIC_TABLE:MELLANOX-SPECTRUM-2": {"cell_size": "144", "pipeline_latency": "19", "mac_phy_delay": "0.8",
        "peer_response_time": "3.8", "port_reserved_shp": "20", "port_max_shp": "8192"}}"#;
    let periph = r#"{"PERIPHERAL_TABLE:MELLANOX-GEARBOX-3800": {"gearbox_delay": "400"},
        "PORT_PERIPHERAL_TABLE:global": {"gearbox_model": "MELLANOX-GEARBOX-3800"}}"#;
    let mut raw = from_flat_json(asic, ':').expect("asic file");
    headroom_sonic::tables::raw::merge(
        &mut raw,
        &from_flat_json(periph, ':').expect("peripheral file"),
    );
    let db = StateDb::from_raw(&raw).expect("state");
    assert_eq!(db.asic(), Ok(&AsicModel::Spectrum2.params()));
    assert_eq!(db.gearbox_delay_ns(), 400.0);
    // A bad ASIC value names table, key and field.
    let bad = from_flat_json(&asic.replace("\"144\"", "\"big\""), ':').expect("json");
    let errs = StateDb::from_raw(&bad).expect_err("bad").errors().to_vec();
    assert!(
        matches!(&errs[..], [TableError::BadNumber { table, key, field, .. }]
        if table == "ASIC_TABLE" && key == "MELLANOX-SPECTRUM-2" && field == "cell_size")
    );
}

#[test]
fn appl_db_errors_name_the_table() {
    let raw = from_nested_json(r#"{"BUFFER_PROFILE_TABLE": {"p": {"size": "0"}}, "BUFFER_PG_TABLE": {"Ethernet0:3-": {"profile": "p"}}}"#)
        .expect("json");
    let errs = ApplDb::from_raw(&raw).expect_err("bad").errors().to_vec();
    assert_eq!(errs.len(), 2);
    assert!(errs.iter().any(|e| matches!(e, TableError::MissingField { table, field, .. } if table == "BUFFER_PROFILE_TABLE" && field == "pool")));
    assert!(errs
        .iter()
        .any(|e| matches!(e, TableError::BadIdRange { table, .. } if table == "BUFFER_PG_TABLE")));
    // Both kinds of threshold on one profile.
    let raw = from_nested_json(r#"{"BUFFER_PROFILE_TABLE": {"p": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "0", "static_th": "100"}}}"#)
        .expect("json");
    let errs = ApplDb::from_raw(&raw).expect_err("bad").errors().to_vec();
    assert!(
        matches!(&errs[..], [TableError::Inconsistent { table, key, .. }]
            if table == "BUFFER_PROFILE_TABLE" && key == "p"),
        "{errs:?}"
    );
}

/// The headroom plugin's arguments and environment come from the tables.
#[test]
fn plugin_inputs_from_tables() {
    let config = parse(CONFIG).expect("valid");
    let mut state = StateDb::with_asic(AsicModel::Spectrum2.params());
    let a = HeadroomArgs::for_port(&config, &state, "Ethernet4").expect("args");
    assert_eq!(
        a,
        HeadroomArgs {
            speed_mbps: 400_000,
            cable_m: 2.5,
            port_mtu: 9100,
            gearbox_delay_ns: 0.0,
            lane_count: 8
        }
    );
    let env = HeadroomEnv::from_tables(&config, &state).expect("env");
    assert!(env.shp_enabled);
    assert_eq!((env.lossless_mtu, env.small_packet_percentage), (1024, 50));
    assert_eq!(
        HeadroomArgs::for_port(&config, &state, "Ethernet99"),
        Err(LookupError::NoPort("Ethernet99".into()))
    );
    // Autoneg without advertised speeds falls back to STATE_DB supported speeds.
    let mut c2 = config.clone();
    if let Some(p) = c2.ports.get_mut("Ethernet4") {
        p.adv_speeds = None;
    }
    assert_eq!(
        HeadroomArgs::for_port(&c2, &state, "Ethernet4"),
        Err(LookupError::NoSpeed("Ethernet4".into()))
    );
    state
        .supported_speeds
        .insert("Ethernet4".into(), vec![100_000, 200_000]);
    assert_eq!(
        HeadroomArgs::for_port(&c2, &state, "Ethernet4").map(|a| a.speed_mbps),
        Ok(200_000)
    );
}

/// config_db.json text round trip of the default configuration.
#[test]
fn default_config_round_trips_through_json() {
    let ports: Vec<DefaultPort> = (0..3)
        .map(|i| DefaultPort {
            name: format!("Ethernet{}", 8 * i),
            port: Port::up(100_000, 4),
            cable: CableLength::parse("40m").expect("c"),
        })
        .collect();
    let db = mellanox_dynamic(
        &ports,
        &DefaultOptions::new("x86_64-mlnx_msn2700-r0", 13_945_824),
    );
    let text = to_nested_json(&db.to_raw());
    let back = ConfigDb::from_raw(&from_nested_json(&text).expect("json")).expect("valid");
    assert_eq!(back, db);
}

/// Values that have broken parsers before: too large for u64/i8/u16, negative, Lua-only
/// number forms, two-digit and reversed id ranges.
const NASTY: [&str; 14] = [
    "18446744073709551616",
    "99999999999999999999",
    "-1",
    "1e400",
    "nan",
    "0x7fffffffffffffff",
    "0",
    "",
    "9217",
    "10-11",
    "7-8",
    "4",
    "65535",
    "99999999999999999999m",
];

/// A CONFIG_DB edit: a field of an existing entry, or a new `BUFFER_PG`/`BUFFER_QUEUE` key.
#[derive(Clone, Debug)]
enum Edit {
    Field(&'static str, &'static str, &'static str, &'static str),
    Pg(&'static str, &'static str),
    Queue(&'static str, &'static str),
}

fn edit_strategy() -> impl Strategy<Value = Edit> {
    let value = prop::sample::select(NASTY.to_vec());
    let field = prop::sample::select(vec![
        ("PORT", "Ethernet0", "speed"),
        ("PORT", "Ethernet0", "mtu"),
        ("PORT", "Ethernet4", "lanes"),
        ("CABLE_LENGTH", "AZURE", "Ethernet0"),
        ("CABLE_LENGTH", "AZURE", "Ethernet12"),
        ("BUFFER_POOL", "egress_lossless_pool", "size"),
        ("BUFFER_POOL", "ingress_lossless_pool", "xoff"),
        ("BUFFER_POOL", "egress_lossy_pool", "percentage"),
        ("BUFFER_PROFILE", "pg_override", "xon"),
        ("BUFFER_PROFILE", "pg_override", "size"),
        ("BUFFER_PROFILE", "th1", "dynamic_th"),
        (
            "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
            "AZURE",
            "over_subscribe_ratio",
        ),
        (
            "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
            "AZURE",
            "default_dynamic_th",
        ),
        ("LOSSLESS_TRAFFIC_PATTERN", "AZURE", "mtu"),
    ]);
    let port = prop::sample::select(vec!["Ethernet0", "Ethernet8", "Ethernet1"]);
    prop_oneof![
        (field, value.clone()).prop_map(|((t, k, f), v)| Edit::Field(t, k, f, v)),
        (port.clone(), value.clone()).prop_map(|(p, v)| Edit::Pg(p, v)),
        (port, value).prop_map(|(p, v)| Edit::Queue(p, v)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Malformed and out-of-range CONFIG_DB values: typing, SONiC's validation and rendering
    /// never panic; what passes validation is within its bounds.
    #[test]
    fn nasty_values_never_panic(edits in prop::collection::vec(edit_strategy(), 1..6)) {
        let mut v: serde_json::Value = serde_json::from_str(CONFIG).expect("json");
        for e in &edits {
            match e {
                Edit::Field(t, k, f, val) => v[*t][*k][*f] = (*val).into(),
                Edit::Pg(p, ids) => v["BUFFER_PG"][format!("{p}|{ids}")] = serde_json::json!({}),
                Edit::Queue(p, ids) => {
                    v["BUFFER_QUEUE"][format!("{p}|{ids}")] =
                        serde_json::json!({"profile": "egress_lossy_profile"})
                }
            }
        }
        let Ok(config) = parse(&v.to_string()) else {
            return Ok(());
        };
        let Ok(()) = validate(&config, None) else {
            return Ok(());
        };
        for k in config.pgs.keys() {
            prop_assert!(k.ids.hi() < 8, "{k:?}");
            prop_assert!(config.ports.contains_key(&k.port));
            let mut others = config.pgs_of(&k.port).filter(|(o, _)| *o != k);
            prop_assert!(others.all(|(o, _)| !o.ids.overlaps(k.ids)), "{k:?}");
        }
        for m in config.cable_lengths.values() {
            prop_assert!(m.values().all(|c| c.metres() <= MAX_CABLE_METRES));
        }
        let state = StateDb::with_asic(AsicModel::Spectrum2.params());
        let _ = render(&config, &state, &Mellanox);
    }
}

#[test]
fn valid_config_passes_validation() {
    let config = parse(CONFIG).expect("typed");
    assert_eq!(validate(&config, None), Ok(()));
}
