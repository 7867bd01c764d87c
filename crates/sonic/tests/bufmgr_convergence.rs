//! Convergence of the buffer manager:
//! - a fresh start on a CONFIG_DB converges to the same APPL_DB (and STATE_DB pool/profile
//!   mirrors) as any history of changes that ends in that CONFIG_DB (property test);
//! - on the default configurations, the converged APPL_DB equals the steady state of
//!   [`headroom_sonic::render`] (the renderer omits the `xoff: 0` buffermgrd writes on
//!   `ingress_lossless_pool` and the zero profiles of admin-down ports; with zero profiles
//!   off, admin-down ports agree too).

mod bufmgr_common;

use std::time::Duration;

use bufmgr_common::*;
use headroom_sonic::bufmgr::harness::Harness;
use headroom_sonic::model::Mellanox;
use headroom_sonic::render::render;
use headroom_sonic::tables::appl::ApplDb;
use headroom_sonic::tables::config::ConfigDb;
use headroom_sonic::tables::state::{AsicModel, StateDb};
use headroom_sonic::tables::RawDb;
use proptest::prelude::*;

fn rendered(h: &Harness) -> ApplDb {
    let cfg = ConfigDb::from_raw(&h.config).expect("config");
    let mut st = RawDb::new();
    for t in ["ASIC_TABLE", "BUFFER_MAX_PARAM_TABLE"] {
        st.insert(t.into(), h.state[t].clone());
    }
    let state = StateDb::from_raw(&st).expect("state");
    render(&cfg, &state, &Mellanox).expect("render").appl
}

/// The manager's APPL_DB without the `xoff: 0` of a disabled shared headroom pool.
fn normalized(h: &Harness) -> ApplDb {
    let mut a = h.appl_typed().expect("appl");
    if let Some(p) = a.pools.get_mut("ingress_lossless_pool") {
        if p.xoff == Some(0) {
            p.xoff = None;
        }
    }
    a
}

fn converged(h: &Harness) {
    assert_consistent(h);
    assert!(h.errors().is_empty(), "{:?}", h.errors());
    assert!(h.manager().pending_items().is_empty());
    assert!(h.manager().completely_initialized());
}

#[test]
fn default_configs_agree_with_render() {
    type Case = (AsicModel, &'static str, u64, Vec<P>, Option<f64>);
    let cases: Vec<Case> = vec![
        (
            AsicModel::Spectrum2,
            SN3800,
            MMU_SN3800,
            vec![
                port("Ethernet0", 100_000, "5m"),
                port("Ethernet4", 100_000, "300m"),
                port("Ethernet8", 25_000, "40m"),
                port("Ethernet12", 10_000, "2.5m"),
            ],
            None,
        ),
        (
            AsicModel::Spectrum2,
            SN3800,
            MMU_SN3800,
            vec![
                port("Ethernet0", 100_000, "5m"),
                port("Ethernet4", 50_000, "40m"),
            ],
            Some(2.0),
        ),
        (
            AsicModel::Spectrum1,
            "x86_64-mlnx_msn2700-r0",
            13_945_824,
            vec![
                port("Ethernet0", 100_000, "5m"),
                port("Ethernet4", 40_000, "300m"),
            ],
            None,
        ),
        (
            AsicModel::Spectrum3,
            "x86_64-mlnx_msn4700-r0",
            60_817_392,
            vec![
                P {
                    lanes: 8,
                    ..port("Ethernet0", 400_000, "40m")
                },
                P {
                    lanes: 8,
                    ..port("Ethernet8", 100_000, "5m")
                },
            ],
            None,
        ),
        (
            AsicModel::Spectrum4,
            "x86_64-nvidia_sn5600-r0",
            158_229_504,
            vec![
                P {
                    lanes: 8,
                    ..port("Ethernet0", 800_000, "5m")
                },
                P {
                    lanes: 8,
                    ..port("Ethernet8", 400_000, "40m")
                },
            ],
            None,
        ),
    ];
    for (asic, platform, mmu, ports, ratio) in cases {
        let cfg = config_for(&ports, platform, mmu, ratio);
        let h = start(options(asic, true), &cfg, mmu, None);
        converged(&h);
        let want = rendered(&h);
        let got = if ratio.is_some() {
            h.appl_typed().expect("appl")
        } else {
            normalized(&h)
        };
        assert_eq!(got, want, "{asic:?} {platform}");
    }
}

#[test]
fn admin_down_ports_agree_with_render_without_zero_profiles() {
    let mut ports = vec![
        port("Ethernet0", 100_000, "5m"),
        port("Ethernet4", 100_000, "40m"),
    ];
    ports[1].up = false;
    let cfg = sn3800(&ports);
    let mut h = start(options(AsicModel::Spectrum2, false), &cfg, MMU_SN3800, None);
    converged(&h);
    assert_eq!(normalized(&h), rendered(&h));
    // Going down later reclaims the same way.
    h.config_set(
        "PORT",
        "Ethernet0",
        &[
            ("speed", "100000"),
            ("lanes", "0,1,2,3"),
            ("admin_status", "down"),
        ],
    );
    h.settle();
    converged(&h);
    assert_eq!(normalized(&h), rendered(&h));
    assert!(!h.appl.contains_key("BUFFER_PG_TABLE"));
}

// --- Property: history vs fresh start ---------------------------------------------------------

const PORTS: [&str; 3] = ["Ethernet0", "Ethernet4", "Ethernet8"];

#[derive(Clone, Copy, Debug)]
enum Choice {
    Null,
    Custom,
    Th,
    Lossy,
}

#[derive(Clone, Debug)]
enum Op {
    Speed(usize, u64),
    Mtu(usize, Option<u32>),
    Admin(usize, bool),
    Cable(usize, &'static str),
    Pg34(usize, Choice),
    Pg6(usize, Option<Choice>),
    Custom(usize),
    Alpha(i8),
    Ratio(Option<&'static str>),
    ShpSize(Option<&'static str>),
}

fn choice() -> impl Strategy<Value = Choice> {
    prop_oneof![
        Just(Choice::Null),
        Just(Choice::Custom),
        Just(Choice::Th),
        Just(Choice::Lossy)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let p = 0..PORTS.len();
    prop_oneof![
        (
            p.clone(),
            prop::sample::select(vec![10_000u64, 25_000, 50_000, 100_000])
        )
            .prop_map(|(i, s)| Op::Speed(i, s)),
        (
            p.clone(),
            prop::option::of(prop::sample::select(vec![1500u32, 4096, 9100]))
        )
            .prop_map(|(i, m)| Op::Mtu(i, m)),
        (p.clone(), any::<bool>()).prop_map(|(i, u)| Op::Admin(i, u)),
        (
            p.clone(),
            prop::sample::select(vec!["5m", "40m", "300m", "0m", "2.5m"])
        )
            .prop_map(|(i, c)| Op::Cable(i, c)),
        (p.clone(), choice()).prop_map(|(i, c)| Op::Pg34(i, c)),
        (p, prop::option::of(choice())).prop_map(|(i, c)| Op::Pg6(i, c)),
        (0usize..2).prop_map(Op::Custom),
        (1i8..4).prop_map(Op::Alpha),
        prop::option::of(prop::sample::select(vec!["1", "2", "4"])).prop_map(Op::Ratio),
        prop::option::of(prop::sample::select(vec!["1048576", "2097152"])).prop_map(Op::ShpSize),
    ]
}

struct Model {
    speed: [u64; 3],
    mtu: [Option<u32>; 3],
    up: [bool; 3],
    cable: [&'static str; 3],
}

fn write_port(h: &mut Harness, m: &Model, i: usize) {
    let speed = m.speed[i].to_string();
    let mtu = m.mtu[i].map(|x| x.to_string());
    let mut f = vec![
        ("speed", speed.as_str()),
        ("lanes", "0,1,2,3"),
        ("admin_status", if m.up[i] { "up" } else { "down" }),
    ];
    if let Some(x) = &mtu {
        f.push(("mtu", x.as_str()));
    }
    h.config_set("PORT", PORTS[i], &f);
}

fn pg_fields(c: Choice) -> &'static str {
    match c {
        Choice::Null => "NULL",
        Choice::Custom => "custom",
        Choice::Th => "th_profile",
        Choice::Lossy => "ingress_lossy_profile",
    }
}

fn base_config() -> RawDb {
    let mut cfg = sn3800(&[
        port(PORTS[0], 100_000, "5m"),
        port(PORTS[1], 50_000, "40m"),
        port(PORTS[2], 25_000, "300m"),
    ]);
    let profiles = cfg.entry("BUFFER_PROFILE".into()).or_default();
    profiles.insert(
        "custom".into(),
        headroom_sonic::bufmgr::to_fields(&[
            ("pool", "ingress_lossless_pool"),
            ("dynamic_th", "0"),
            ("xon", "18432"),
            ("xoff", "18432"),
            ("size", "36864"),
        ]),
    );
    profiles.insert(
        "th_profile".into(),
        headroom_sonic::bufmgr::to_fields(&[
            ("pool", "ingress_lossless_pool"),
            ("dynamic_th", "1"),
            ("headroom_type", "dynamic"),
        ]),
    );
    cfg
}

fn apply(h: &mut Harness, m: &mut Model, op: &Op) {
    match *op {
        Op::Speed(i, s) => {
            m.speed[i] = s;
            write_port(h, m, i);
        }
        Op::Mtu(i, x) => {
            m.mtu[i] = x;
            write_port(h, m, i);
        }
        Op::Admin(i, u) => {
            m.up[i] = u;
            write_port(h, m, i);
        }
        Op::Cable(i, c) => {
            m.cable[i] = c;
            let f: Vec<(&str, &str)> = PORTS.iter().copied().zip(m.cable.iter().copied()).collect();
            h.config_set("CABLE_LENGTH", "AZURE", &f);
        }
        Op::Pg34(i, c) => {
            h.config_set(
                "BUFFER_PG",
                &format!("{}|3-4", PORTS[i]),
                &[("profile", pg_fields(c))],
            );
        }
        Op::Pg6(i, Some(c)) => {
            h.config_set(
                "BUFFER_PG",
                &format!("{}|6", PORTS[i]),
                &[("profile", pg_fields(c))],
            );
        }
        Op::Pg6(i, None) => h.config_del("BUFFER_PG", &format!("{}|6", PORTS[i])),
        Op::Custom(v) => {
            let (xoff, size) = [("18432", "36864"), ("30720", "50176")][v];
            h.config_set(
                "BUFFER_PROFILE",
                "custom",
                &[
                    ("pool", "ingress_lossless_pool"),
                    ("dynamic_th", "0"),
                    ("xon", "19456"),
                    ("xoff", xoff),
                    ("size", size),
                ],
            );
        }
        Op::Alpha(a) => {
            let a = a.to_string();
            h.config_set(
                "BUFFER_PROFILE",
                "th_profile",
                &[
                    ("pool", "ingress_lossless_pool"),
                    ("dynamic_th", &a),
                    ("headroom_type", "dynamic"),
                ],
            );
        }
        Op::Ratio(r) => {
            let mut f = vec![("default_dynamic_th", "0")];
            if let Some(r) = r {
                f.push(("over_subscribe_ratio", r));
            }
            h.config_set("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "AZURE", &f);
        }
        Op::ShpSize(s) => {
            let mut f = vec![("type", "ingress"), ("mode", "dynamic")];
            if let Some(s) = s {
                f.push(("xoff", s));
            }
            h.config_set("BUFFER_POOL", "ingress_lossless_pool", &f);
        }
    }
}

fn mirrors(h: &Harness) -> RawDb {
    let mut out = RawDb::new();
    for t in ["BUFFER_POOL_TABLE", "BUFFER_PROFILE_TABLE"] {
        if let Some(x) = h.state.get(t) {
            out.insert(t.into(), x.clone());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn fresh_start_equals_incremental_history(
        ops in prop::collection::vec((op(), 0u64..12), 1..25)
    ) {
        let cfg = base_config();
        let mut h = start(options(AsicModel::Spectrum2, true), &cfg, MMU_SN3800, None);
        let mut m = Model {
            speed: [100_000, 50_000, 25_000],
            mtu: [None; 3],
            up: [true; 3],
            cable: ["5m", "40m", "300m"],
        };
        for (op, dt) in &ops {
            apply(&mut h, &mut m, op);
            h.advance(Duration::from_secs(*dt));
        }
        h.settle();
        h.settle();
        converged(&h);
        assert_pools_converged(&h);

        let mut fresh = start(options(AsicModel::Spectrum2, true), &h.config, MMU_SN3800, None);
        fresh.settle();
        converged(&fresh);
        prop_assert_eq!(&fresh.appl, &h.appl);
        prop_assert_eq!(mirrors(&fresh), mirrors(&h));
    }
}
