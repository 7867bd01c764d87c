//! The maximum-headroom check (sonic-buffer.md §6), steady-state rendering and the DSH plan.

use headroom_sonic::check::{check_headroom, CheckError, CheckRequest};
use headroom_sonic::defaults::{mellanox_dynamic, DefaultOptions, DefaultPort};
use headroom_sonic::model::dsh::{plan_from_tables, Dsh};
use headroom_sonic::model::Mellanox;
use headroom_sonic::pool::PoolOutcome;
use headroom_sonic::render::render;
use headroom_sonic::tables::appl::{ApplDb, ApplTable};
use headroom_sonic::tables::config::{BufferPg, BufferProfile, ConfigDb, HeadroomType, Port};
use headroom_sonic::tables::state::{AsicModel, PortMaxParams, StateDb};
use headroom_sonic::tables::{CableLength, Fields, IdRange, PortIds, Threshold};

const MMU: u64 = 34_287_552;
const PROFILE: &str = "pg_lossless_100000_5m_profile";

/// One Spectrum-2 port Ethernet0, 100G 5m, default PGs (0 lossy, 3-4 dynamic).
fn one_port(
    lanes: u32,
    ratio: Option<f64>,
    asic: AsicModel,
    max_headroom: Option<u64>,
) -> (ConfigDb, StateDb, ApplDb) {
    let ports = [DefaultPort {
        name: "Ethernet0".into(),
        port: Port::up(100_000, lanes),
        cable: CableLength::parse("5m").expect("c"),
    }];
    let opts = DefaultOptions {
        over_subscribe_ratio: ratio,
        ..DefaultOptions::new("x86_64-mlnx_msn3800-r0", MMU)
    };
    let config = mellanox_dynamic(&ports, &opts);
    let mut state = StateDb {
        mmu_size: Some(MMU),
        ..StateDb::with_asic(asic.params())
    };
    state.port_max.insert(
        "Ethernet0".into(),
        PortMaxParams {
            max_headroom_size: max_headroom,
            ..Default::default()
        },
    );
    let appl = render(&config, &state, &Mellanox).expect("renders").appl;
    (config, state, appl)
}

fn request(pg: Option<IdRange>, appl: &ApplDb) -> CheckRequest {
    let p = &appl.profiles[PROFILE];
    CheckRequest {
        port: "Ethernet0".into(),
        profile: PROFILE.into(),
        size: p.size.unwrap_or(0),
        xon: p.xon,
        xoff: p.xoff,
        new_pg: pg,
    }
}

#[test]
fn passing_and_failing_check() {
    // ACC = 4096 + 19456 (lossy) + 20480 (mirror) + PG 0 (size 0 -> 19456) + 2 x 67584.
    let acc = 4096.0 + 19456.0 + 20480.0 + 19456.0 + 2.0 * 67584.0;
    let (config, state, appl) = one_port(4, None, AsicModel::Spectrum2, Some(200_000));
    assert_eq!(appl.profiles[PROFILE].size, Some(67584));
    let r34 = IdRange::new(3, 4).expect("range");
    let ok = check_headroom(&request(Some(r34), &appl), &config, &state, &appl).expect("evaluates");
    assert_eq!(ok.accumulated, acc);
    assert!(ok.passed);
    assert_eq!(ok.pgs[&IdRange::single(0)].size, 19456.0);
    // Adding lossless PG 6 with the same profile exceeds 200000.
    let bad = check_headroom(
        &request(Some(IdRange::single(6)), &appl),
        &config,
        &state,
        &appl,
    )
    .expect("evaluates");
    assert_eq!(bad.accumulated, acc + 67584.0);
    assert!(!bad.passed);
    // The comparison is strict: max_headroom_size must exceed the accumulated headroom.
    let (config, state, appl) = one_port(4, None, AsicModel::Spectrum2, Some(acc as u64));
    assert!(
        !check_headroom(&request(None, &appl), &config, &state, &appl)
            .expect("evaluates")
            .passed
    );
    // No max_headroom_size published: always passes.
    let (config, state, appl) = one_port(4, None, AsicModel::Spectrum2, None);
    let r = check_headroom(
        &request(Some(IdRange::new(0, 7).expect("r")), &appl),
        &config,
        &state,
        &appl,
    )
    .expect("evaluates");
    assert!(r.passed && r.max_headroom_size.is_none());
}

#[test]
fn eight_lane_port_uses_2pl_minus_1() {
    let (config, state, appl) = one_port(8, None, AsicModel::Spectrum2, Some(10_000_000));
    let r = check_headroom(&request(None, &appl), &config, &state, &appl).expect("evaluates");
    let lossy = (2.0 * 19.0 - 1.0) * 1024.0;
    let size = appl.profiles[PROFILE].size.unwrap_or(0) as f64;
    assert_eq!(
        r.accumulated,
        4096.0 + lossy + 2.0 * 20480.0 + lossy + 2.0 * size
    );
}

#[test]
fn shared_headroom_limit() {
    // SHP on (APPL_DB pool xoff != 0): profile size = xon, each PG adds xoff to PORT_SHP.
    let (config, state, appl) = one_port(4, Some(2.0), AsicModel::Spectrum2, Some(10_000_000));
    assert!(appl.shp_size().is_some());
    let xoff = appl.profiles[PROFILE].xoff.unwrap_or(0) as f64;
    let r = check_headroom(&request(None, &appl), &config, &state, &appl).expect("evaluates");
    assert!(r.shp_on);
    assert_eq!(r.port_shp, 2.0 * xoff);
    assert_eq!(r.shp_limit, Some((8192.0 + 20.0) * 144.0));
    assert!(r.passed);
    // A smaller per-port SHP limit fails.
    let mut small = state.clone();
    if let Some(a) = small.asic_table.get_mut("MELLANOX-SPECTRUM-2") {
        a.port_max_shp = Some(600.0);
    }
    let r = check_headroom(&request(None, &appl), &config, &small, &appl).expect("evaluates");
    assert_eq!(r.shp_limit, Some(620.0 * 144.0));
    assert!(r.port_shp > 620.0 * 144.0 && !r.passed);
    // The VS ASIC has no SHP limits: only the maximum-headroom part is evaluated.
    let (config, state, appl) = one_port(4, Some(2.0), AsicModel::Vs, Some(10_000_000));
    let r = check_headroom(&request(None, &appl), &config, &state, &appl).expect("evaluates");
    assert_eq!((r.shp_on, r.shp_limit, r.passed), (true, None, true));
}

#[test]
fn pending_producer_state_is_overlaid() {
    let (config, state, mut appl) = one_port(4, None, AsicModel::Spectrum2, Some(10_000_000));
    let base = check_headroom(&request(None, &appl), &config, &state, &appl)
        .expect("evaluates")
        .accumulated;
    // PG 3-4 pending deletion: not counted.
    appl.pending
        .entry(ApplTable::Pg)
        .or_default()
        .del_set
        .insert("Ethernet0:3-4".into());
    let r = check_headroom(&request(None, &appl), &config, &state, &appl).expect("evaluates");
    assert_eq!(r.accumulated, base - 2.0 * 67584.0);
    // A staged PG 8-15 (8 PGs, not the plugin's -2) on a staged profile.
    let mut pg = Fields::new();
    pg.insert("profile".into(), "staged_profile".into());
    appl.pending
        .entry(ApplTable::Pg)
        .or_default()
        .staged
        .insert("Ethernet0:8-15".into(), pg);
    let mut prof = Fields::new();
    prof.insert("size".into(), "1000".into());
    appl.pending
        .entry(ApplTable::Profile)
        .or_default()
        .staged
        .insert("staged_profile".into(), prof);
    let r = check_headroom(&request(None, &appl), &config, &state, &appl).expect("evaluates");
    assert_eq!(r.accumulated, base - 2.0 * 67584.0 + 8.0 * 1000.0);
    assert_eq!(r.pgs[&IdRange::new(8, 15).expect("r")].count, 8);
    // A PG on a profile with no size anywhere is an error.
    appl.pgs.insert(
        PortIds::new("Ethernet0", IdRange::single(7)),
        "ghost".into(),
    );
    assert!(matches!(
        check_headroom(&request(None, &appl), &config, &state, &appl),
        Err(CheckError::NoProfileSize { profile, .. }) if profile == "ghost"
    ));
}

#[test]
fn render_names_and_skips() {
    let ports: Vec<DefaultPort> = [
        ("Ethernet0", 4, "5m"),
        ("Ethernet8", 8, "5m"),
        ("Ethernet16", 4, "0m"),
        ("Ethernet24", 4, "40m"),
    ]
    .iter()
    .map(|(n, l, c)| DefaultPort {
        name: (*n).into(),
        port: Port::up(400_000, *l),
        cable: CableLength::parse(c).expect("c"),
    })
    .collect();
    let mut config = mellanox_dynamic(
        &ports,
        &DefaultOptions::new("x86_64-nvidia_sn5600-r0", 158_229_504),
    );
    // A headroom_type dynamic profile with dynamic_th 1 on Ethernet24's PGs, an MTU on Ethernet0.
    config.profiles.insert(
        "th1".into(),
        BufferProfile {
            pool: "ingress_lossless_pool".into(),
            xon: None,
            xon_offset: None,
            xoff: None,
            size: None,
            threshold: Some(Threshold::Dynamic(1)),
            headroom_type: HeadroomType::Dynamic,
            packet_discard_action: None,
        },
    );
    let r34 = IdRange::new(3, 4).expect("r");
    config.pgs.insert(
        PortIds::new("Ethernet24", r34),
        BufferPg {
            profile: Some("th1".into()),
        },
    );
    if let Some(p) = config.ports.get_mut("Ethernet0") {
        p.mtu = Some(1500);
    }
    let state = StateDb {
        mmu_size: Some(158_229_504),
        ..StateDb::with_asic(AsicModel::Spectrum4.params())
    };
    let r = render(&config, &state, &Mellanox).expect("renders");
    let pg = |p: &str| r.appl.pgs.get(&PortIds::new(p, r34)).cloned();
    assert_eq!(
        pg("Ethernet0").as_deref(),
        Some("pg_lossless_400000_5m_mtu1500_profile")
    );
    assert_eq!(
        pg("Ethernet8").as_deref(),
        Some("pg_lossless_400000_5m_8lane_profile")
    );
    assert_eq!(pg("Ethernet16"), None, "0m: no lossless PG");
    assert_eq!(
        pg("Ethernet24").as_deref(),
        Some("pg_lossless_400000_40m_th1_profile")
    );
    assert_eq!(
        r.appl.profiles["pg_lossless_400000_40m_th1_profile"].threshold,
        Some(Threshold::Dynamic(1))
    );
    assert!(
        !r.appl.profiles.contains_key("th1"),
        "headroom_type dynamic profiles are not written"
    );
    assert!(r
        .notes
        .iter()
        .any(|n| n.contains("Ethernet16|3-4") && n.contains("0m")));
    assert!(r.checks.values().all(|c| c.passed));
    assert!(matches!(r.pools, PoolOutcome::Computed { .. }));
}

/// DSH on the §5.3-like switch: one eta per port instead of one per lossless queue gives a
/// larger shared pool than static per-PG headroom.
#[test]
fn dsh_plan_for_a_switch() {
    let ports: Vec<DefaultPort> = (0..8)
        .map(|i| DefaultPort {
            name: format!("Ethernet{}", 4 * i),
            port: Port::up(100_000, 4),
            cable: CableLength::parse("40m").expect("c"),
        })
        .collect();
    let config = mellanox_dynamic(&ports, &DefaultOptions::new("x86_64-mlnx_msn3800-r0", MMU));
    let state = StateDb {
        mmu_size: Some(MMU),
        ..StateDb::with_asic(AsicModel::Spectrum2.params())
    };
    let plan = plan_from_tables(&config, &state, &Dsh::default()).expect("plans");
    assert_eq!(plan.ports.len(), 8);
    let eta = plan.ports["Ethernet0"].eta;
    assert_eq!(plan.insurance, 8 * eta);
    assert_eq!(plan.sih_headroom, 16 * eta);
    assert_eq!(plan.shared, MMU - plan.private - plan.insurance);
    assert_eq!(
        plan.threshold_empty, plan.shared,
        "default_dynamic_th 0: alpha 1"
    );
    let t = plan.ports["Ethernet0"];
    assert_eq!(t.xqoff, plan.shared - eta);
    assert_eq!(t.xpoff, 2 * plan.shared);
    // SIH with SONiC's Mellanox headroom reserves more: its shared buffer is smaller.
    let sih = render(&config, &state, &Mellanox).expect("renders");
    let PoolOutcome::Computed { debug, .. } = &sih.pools else {
        panic!("computed")
    };
    assert!(debug.available < (MMU - plan.private - plan.insurance) as f64);
}
