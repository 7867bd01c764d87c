//! Pool sizes (sonic-buffer.md §5): the worked example §5.3 with and without the shared
//! headroom pool, the fallback path, the forced shared headroom pool, and the MMU bound.

use std::collections::BTreeMap;

use headroom_sonic::defaults::{
    mellanox_dynamic, mellanox_zero_profiles, DefaultOptions, DefaultPort,
};
use headroom_sonic::model::Mellanox;
use headroom_sonic::pool::{compute, pool_updates, PoolError, PoolOutcome, PoolSize, ShpSource};
use headroom_sonic::render::render;
use headroom_sonic::tables::appl::{ApplDb, ApplPool, ApplTable};
use headroom_sonic::tables::config::{AdminStatus, ConfigDb, Port};
use headroom_sonic::tables::state::{AsicModel, StateDb};
use headroom_sonic::tables::{CableLength, IdRange, PoolMode, PoolType, PortIds};
use proptest::prelude::*;

const MMU_SN3800: u64 = 34_287_552;

/// §5.3: Spectrum-2 (SN3800), 8 ports, 7 up with one dynamic profile each (distinct
/// speed/cable, so every profile has 2 references), one admin down.
fn example_5_3(ratio: Option<f64>) -> (ConfigDb, StateDb) {
    let up = [
        (10_000, "5m"),
        (10_000, "10m"),
        (25_000, "15m"),
        (40_000, "100m"),
        (50_000, "300m"),
        (100_000, "30m"),
        (100_000, "50m"),
    ];
    let mut ports: Vec<DefaultPort> = up
        .iter()
        .enumerate()
        .map(|(i, (s, c))| DefaultPort {
            name: format!("Ethernet{}", 4 * i),
            port: Port::up(*s, 4),
            cable: CableLength::parse(c).expect("cable"),
        })
        .collect();
    ports.push(DefaultPort {
        name: "Ethernet28".into(),
        port: Port {
            admin_status: AdminStatus::Down,
            ..Port::up(100_000, 4)
        },
        cable: CableLength::parse("5m").expect("cable"),
    });
    let opts = DefaultOptions {
        over_subscribe_ratio: ratio,
        ..DefaultOptions::new("x86_64-mlnx_msn3800-r0", MMU_SN3800)
    };
    let config = mellanox_dynamic(&ports, &opts);
    let mut state = StateDb::with_asic(AsicModel::Spectrum2.params());
    state.mmu_size = Some(MMU_SN3800);
    (config, state)
}

/// The down port's items as SONiC leaves them in APPL_DB (Mellanox zero profiles).
fn add_zero_profiles(appl: &mut ApplDb) {
    let zero = mellanox_zero_profiles(false);
    appl.pools.extend(zero.pools);
    appl.profiles.extend(zero.profiles);
    let r = |lo, hi| {
        if lo == hi {
            IdRange::single(lo)
        } else {
            IdRange::new(lo, hi).expect("range")
        }
    };
    appl.pgs.insert(
        PortIds::new("Ethernet28", r(0, 0)),
        "ingress_lossy_pg_zero_profile".into(),
    );
    for (lo, hi, p) in [
        (0, 2, "egress_lossy_zero_profile"),
        (3, 4, "egress_lossless_zero_profile"),
        (5, 6, "egress_lossy_zero_profile"),
    ] {
        appl.queues
            .insert(PortIds::new("Ethernet28", r(lo, hi)), p.into());
    }
    appl.ingress_profile_lists.insert(
        "Ethernet28".into(),
        vec![
            "ingress_lossless_zero_profile".into(),
            "ingress_lossy_zero_profile".into(),
        ],
    );
    appl.egress_profile_lists.insert(
        "Ethernet28".into(),
        vec![
            "egress_lossless_zero_profile".into(),
            "egress_lossy_zero_profile".into(),
        ],
    );
}

fn computed(o: &PoolOutcome) -> &headroom_sonic::pool::PoolDebug {
    match o {
        PoolOutcome::Computed { debug, .. } => debug,
        PoolOutcome::Fallback { .. } => panic!("expected a computed result, got the fallback"),
    }
}

#[test]
fn worked_example_5_3_without_shp() {
    let (config, state) = example_5_3(None);
    let r = render(&config, &state, &Mellanox).expect("renders");
    let mut appl = r.appl.clone();
    add_zero_profiles(&mut appl);
    for a in [&r.appl, &appl] {
        let out = compute(&config, &state, a).expect("computes");
        let d = computed(&out);
        // Dynamic profiles: 7 profiles with 2 references each, Σ size 391168.
        let dynamic: Vec<_> = d
            .references
            .iter()
            .filter(|(n, _)| n.starts_with("pg_lossless_"))
            .collect();
        assert_eq!(dynamic.len(), 7);
        assert!(dynamic.iter().all(|(_, r)| **r == 2));
        assert_eq!(d.lossless_headroom, 782_336.0);
        assert_eq!(d.other_profiles, 64_512.0, "egress_lossy_profile 9216 x 7");
        assert_eq!(
            d.lossy_profiles, 136_192.0,
            "ingress_lossy_profile (0 + 19456) x 7"
        );
        assert_eq!(d.management_pgs, 136_192.0);
        assert_eq!(d.mirror, 71_680.0);
        assert_eq!(d.management_pool, 262_144.0);
        assert_eq!(
            (d.moddesc, d.shp_size, d.shp_source),
            (0.0, 0.0, ShpSource::Off)
        );
        assert_eq!(d.occupied, 1_453_056.0);
        assert_eq!(d.available, 32_834_496.0);
        let want = PoolSize {
            size: 16_417_248,
            shp: None,
        };
        let expect: BTreeMap<String, PoolSize> = [
            "egress_lossy_pool",
            "ingress_lossless_pool",
            "ingress_lossy_pool",
        ]
        .iter()
        .map(|p| (p.to_string(), want))
        .collect();
        assert_eq!(out.pools(), &expect);
        assert_eq!(
            out.plugin_lines(),
            [
                "egress_lossy_pool:16417248",
                "ingress_lossless_pool:16417248",
                "ingress_lossy_pool:16417248"
            ]
        );
    }
    // The rendered APPL_DB carries the sizes, as buffermgrd writes them.
    assert_eq!(r.appl.pools["ingress_lossy_pool"].size, Some(16_417_248));
    assert_eq!(r.appl.pools["egress_lossless_pool"].size, Some(MMU_SN3800));
}

#[test]
fn worked_example_5_3_with_over_subscribe_ratio_2() {
    let (config, state) = example_5_3(Some(2.0));
    let r = render(&config, &state, &Mellanox).expect("renders");
    // Profiles now have size = xon.
    assert!(r
        .appl
        .profiles
        .iter()
        .filter(|(n, _)| n.starts_with("pg_lossless_"))
        .all(|(_, p)| p.size == p.xon));
    let d = computed(&r.pools);
    assert_eq!(
        d.xoff_sum, 409_600.0,
        "2 x Σ xoff = 481280, minus 7 x 10240"
    );
    assert_eq!((d.shp_size, d.shp_source), (204_800.0, ShpSource::Ratio));
    assert_eq!(
        r.pools.pools()["ingress_lossless_pool"],
        PoolSize {
            size: 16_533_984,
            shp: Some(204_800)
        }
    );
    assert_eq!(
        r.pools.pools()["ingress_lossy_pool"],
        PoolSize {
            size: 16_533_984,
            shp: None
        }
    );
    assert_eq!(
        r.pools.pools()["egress_lossy_pool"],
        PoolSize {
            size: 16_533_984,
            shp: None
        }
    );
    assert_eq!(r.appl.pools["ingress_lossless_pool"].xoff, Some(204_800));
    assert_eq!(r.appl.shp_size(), Some(204_800));
}

#[test]
fn forced_shared_headroom_pool() {
    // Profiles computed with SHP (size = xon), then the ratio removed from CONFIG_DB: the
    // plugin forces a 655360-byte shared headroom pool.
    let (shp_config, state) = example_5_3(Some(2.0));
    let appl = render(&shp_config, &state, &Mellanox)
        .expect("renders")
        .appl;
    let (config, _) = example_5_3(None);
    let out = compute(&config, &state, &appl).expect("computes");
    let d = computed(&out);
    assert_eq!((d.shp_size, d.shp_source), (655_360.0, ShpSource::Forced));
    assert_eq!(d.shp_port_private, 71_680.0);
    assert_eq!(out.pools()["ingress_lossless_pool"].shp, Some(655_360));
}

#[test]
fn configured_shp_size_and_static_pool_lines() {
    // A configured SHP size wins over the ratio and is not recomputed.
    let (mut config, state) = example_5_3(Some(2.0));
    if let Some(p) = config.pools.get_mut("ingress_lossless_pool") {
        p.xoff = Some(1_048_576);
    }
    let appl = render(&config, &state, &Mellanox).expect("renders").appl;
    let d = computed(&compute(&config, &state, &appl).expect("computes")).clone();
    assert_eq!(
        (d.shp_size, d.shp_source, d.xoff_sum),
        (1_048_576.0, ShpSource::Configured, 0.0)
    );

    // A static ingress_lossless_pool with SHP by ratio: an extra line carries the SHP size.
    let (mut config, state) = example_5_3(Some(2.0));
    if let Some(p) = config.pools.get_mut("ingress_lossless_pool") {
        p.size = Some(10_000_000);
    }
    let r = render(&config, &state, &Mellanox).expect("renders");
    assert_eq!(
        r.pools.pools()["ingress_lossless_pool"],
        PoolSize {
            size: 10_000_000,
            shp: Some(204_800)
        }
    );
    let d = computed(&r.pools);
    assert_eq!(d.dynamic_ingress_pools, 1);
    assert_eq!(
        r.pools.pools()["ingress_lossy_pool"].size as f64,
        d.available.min(d.ceil_mmu),
        "one dynamic ingress pool: all of AVAIL"
    );
}

#[test]
fn percentage_pools() {
    let (mut config, state) = example_5_3(None);
    if let Some(p) = config.pools.get_mut("egress_lossy_pool") {
        p.percentage = Some(25.0);
    }
    let r = render(&config, &state, &Mellanox).expect("renders");
    assert_eq!(
        r.pools.pools()["egress_lossy_pool"].size,
        (32_834_496.0f64 * 25.0 / 100.0).ceil() as u64
    );
    assert_eq!(r.pools.pools()["ingress_lossy_pool"].size, 16_417_248);
}

#[test]
fn platform_reservations() {
    // SN6600: 32 MiB MODDESC, no mirror reservation.
    let (mut config, _) = example_5_3(None);
    if let Some(md) = config.device_metadata.get_mut("localhost") {
        md.platform = Some("x86_64-nvidia_sn6600_ld-r0".into());
    }
    let state = StateDb {
        mmu_size: Some(226_492_416),
        ..StateDb::with_asic(AsicModel::Spectrum6.params())
    };
    let d = computed(&render(&config, &state, &Mellanox).expect("renders").pools).clone();
    assert_eq!((d.moddesc, d.mirror), (33_554_432.0, 0.0));
    // 8-lane ports: management PG and lossy PGs reserve (2·PL − 1) kB.
    let (mut config, state) = example_5_3(None);
    if let Some(p) = config.ports.get_mut("Ethernet0") {
        p.lanes = (0..8).collect();
    }
    let d = computed(&render(&config, &state, &Mellanox).expect("renders").pools).clone();
    assert_eq!(d.up_8lane_ports, 1);
    assert_eq!(d.lossy_pg_8, 1);
    assert_eq!(d.reserved_lossy_8, 37_888.0);
    assert_eq!(d.lossy_8lane_extra, 37_888.0 - 19_456.0);
    assert_eq!(d.management_pgs, 6.0 * 19_456.0 + 37_888.0);
}

#[test]
fn fallback_while_changes_are_pending() {
    let (config, state) = example_5_3(Some(2.0));
    let mut appl = render(&config, &state, &Mellanox).expect("renders").appl;
    // orchagent has not consumed a PG change yet.
    appl.pending
        .entry(ApplTable::Pg)
        .or_default()
        .key_set
        .insert("Ethernet0:3-4".into());
    let out = compute(&config, &state, &appl).expect("computes");
    assert!(matches!(out, PoolOutcome::Fallback { .. }));
    assert_eq!(
        out.pools()["ingress_lossy_pool"],
        PoolSize {
            size: appl.pools["ingress_lossy_pool"].size.unwrap_or(0),
            shp: None
        }
    );
    assert_eq!(out.pools()["ingress_lossless_pool"].shp, Some(204_800));
    // Before any pool was written: zero sizes, and the SHP hint 2048:1024.
    let mut fresh = appl.clone();
    fresh.pools.clear();
    let out = compute(&config, &state, &fresh).expect("computes");
    assert_eq!(
        out.plugin_lines(),
        [
            "egress_lossy_pool:0",
            "ingress_lossless_pool:2048:1024",
            "ingress_lossy_pool:0"
        ]
    );
    // A PG referencing a profile orchagent does not have yet also falls back.
    let mut unknown = render(&config, &state, &Mellanox).expect("renders").appl;
    unknown.pgs.insert(
        PortIds::new("Ethernet0", IdRange::single(6)),
        "pg_not_yet".into(),
    );
    assert!(matches!(
        compute(&config, &state, &unknown),
        Ok(PoolOutcome::Fallback { .. })
    ));
    // Pending profile changes alone do not.
    let mut prof = render(&config, &state, &Mellanox).expect("renders").appl;
    prof.pending
        .entry(ApplTable::Profile)
        .or_default()
        .key_set
        .insert("x".into());
    assert!(matches!(
        compute(&config, &state, &prof),
        Ok(PoolOutcome::Computed { .. })
    ));
}

#[test]
fn buffermgrd_writes_only_changes() {
    let (config, state) = example_5_3(Some(2.0));
    let r = render(&config, &state, &Mellanox).expect("renders");
    // Same result again: nothing to write.
    assert!(pool_updates(&r.pools, &config, &r.appl, state.mmu_size).is_empty());
    // Ratio removed: the line has no third field, the stored xoff becomes 0.
    let (plain, _) = example_5_3(None);
    let mut appl = render(&plain, &state, &Mellanox).expect("renders").appl;
    appl.pools.insert(
        "ingress_lossless_pool".into(),
        ApplPool {
            pool_type: Some(PoolType::Ingress),
            mode: Some(PoolMode::Dynamic),
            size: Some(1),
            xoff: Some(204_800),
        },
    );
    let out = compute(&plain, &state, &appl).expect("computes");
    let w = pool_updates(&out, &plain, &appl, state.mmu_size);
    assert_eq!(w["ingress_lossless_pool"].xoff, Some(0));
    assert_eq!(w["ingress_lossless_pool"].size, Some(16_417_248));
}

#[test]
fn exhausted_buffer_is_an_error() {
    let (config, mut state) = example_5_3(None);
    state.mmu_size = Some(1_000_000);
    let appl = render(
        &config,
        &StateDb {
            mmu_size: Some(MMU_SN3800),
            ..state.clone()
        },
        &Mellanox,
    )
    .expect("renders")
    .appl;
    assert!(matches!(
        compute(&config, &state, &appl),
        Err(PoolError::Exhausted { .. })
    ));
    state.mmu_size = None;
    let mut no_fallback = config.clone();
    no_fallback.pools.remove("egress_lossless_pool");
    assert!(matches!(
        compute(&no_fallback, &state, &appl),
        Err(PoolError::Lookup(_))
    ));
}

/// (generation, platform, buffer size) of real SKUs.
const PLATFORMS: [(AsicModel, &str, u64); 6] = [
    (AsicModel::Spectrum1, "x86_64-mlnx_msn2700-r0", 13_945_824),
    (AsicModel::Spectrum2, "x86_64-mlnx_msn3800-r0", 34_287_552),
    (AsicModel::Spectrum3, "x86_64-mlnx_msn4700-r0", 60_817_392),
    (AsicModel::Spectrum4, "x86_64-nvidia_sn5600-r0", 158_229_504),
    (AsicModel::Spectrum5, "x86_64-nvidia_sn5640-r0", 136_209_408),
    (
        AsicModel::Spectrum6,
        "x86_64-nvidia_sn6600_ld-r0",
        226_492_416,
    ),
];

const SPEEDS: [u64; 8] = [
    10_000, 25_000, 40_000, 50_000, 100_000, 200_000, 400_000, 800_000,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Pools + headroom + reservations never exceed the MMU: every pool fits next to what
    /// is occupied, and the ingress pools together fill at most the rest.
    #[test]
    fn pools_headroom_and_reserved_fit_the_mmu(
        platform in 0usize..6,
        ports in prop::collection::vec((0usize..8, 0u32..1000, prop::bool::weighted(0.85), prop::bool::ANY), 1..48),
        ratio in prop::sample::select(vec![None, Some(1.0), Some(2.0), Some(4.0)]),
        single in prop::bool::ANY, p in prop::sample::select(vec![50u32, 100]),
    ) {
        let (asic, name, mmu) = PLATFORMS[platform];
        let ports: Vec<DefaultPort> = ports.iter().enumerate().map(|(i, (s, c, up, eight))| DefaultPort {
            name: format!("Ethernet{}", 8 * i),
            port: Port {
                admin_status: if *up { AdminStatus::Up } else { AdminStatus::Down },
                ..Port::up(SPEEDS[*s], if *eight { 8 } else { 4 })
            },
            cable: CableLength::parse(&format!("{c}m")).expect("cable"),
        }).collect();
        let opts = DefaultOptions {
            single_ingress_pool: single,
            small_packet_percentage: p,
            over_subscribe_ratio: ratio,
            ..DefaultOptions::new(name, mmu)
        };
        let config = mellanox_dynamic(&ports, &opts);
        let state = StateDb { mmu_size: Some(mmu), ..StateDb::with_asic(asic.params()) };
        let r = match render(&config, &state, &Mellanox) {
            Err(headroom_sonic::render::RenderError::Pool(PoolError::Exhausted { occupied, mmu })) => {
                prop_assert!(occupied > mmu);
                return Ok(());
            }
            other => other.expect("renders"),
        };
        let d = computed(&r.pools);
        let parts = d.lossless_headroom + d.lossy_profiles + d.other_profiles + d.lossy_8lane_extra
            + d.shp_port_private + d.management_pgs + d.mirror + d.management_pool + d.moddesc + d.shp_size;
        prop_assert_eq!(parts, d.occupied);
        // The headroom counted is the rendered profiles' sizes times their PG counts.
        let hr: u64 = r.appl.pgs.iter()
            .filter(|(_, prof)| prof.starts_with("pg_lossless_"))
            .map(|(k, prof)| r.appl.profiles[prof].size.unwrap_or(0) * k.ids.count())
            .sum();
        prop_assert_eq!(hr as f64, d.lossless_headroom);
        let occupied = d.occupied as u64;
        let mut ingress = 0u64;
        for (pool, s) in r.pools.pools() {
            prop_assert!(s.size + occupied <= mmu, "{} {} + {} > {}", pool, s.size, occupied, mmu);
            if config.pools[pool].pool_type == PoolType::Ingress && config.pools[pool].size.is_none() {
                ingress += s.size;
            }
        }
        prop_assert!(ingress + occupied <= mmu, "ingress pools {} + {} > {}", ingress, occupied, mmu);
    }
}
