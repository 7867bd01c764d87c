//! Shared set-up for the buffer manager tests: default Mellanox dynamic-mode configurations
//! and a harness started on them.
#![allow(dead_code)]

use std::time::Duration;

use headroom_sonic::bufmgr::harness::Harness;
use headroom_sonic::bufmgr::{Options, ZeroProfiles};
use headroom_sonic::defaults::{mellanox_dynamic, DefaultOptions, DefaultPort};
use headroom_sonic::model::{HeadroomArgs, HeadroomEnv, HeadroomModel, Mellanox, Model};
use headroom_sonic::tables::config::{AdminStatus, Port};
use headroom_sonic::tables::state::AsicModel;
use headroom_sonic::tables::{CableLength, RawDb};

/// SN3800 (Spectrum-2) buffer size.
pub const MMU_SN3800: u64 = 34_287_552;
/// SN3800 platform string.
pub const SN3800: &str = "x86_64-mlnx_msn3800-r0";

/// A port of a test configuration.
#[derive(Clone, Debug)]
pub struct P {
    pub name: &'static str,
    pub speed: u64,
    pub cable: &'static str,
    pub up: bool,
    pub lanes: u32,
}

pub fn port(name: &'static str, speed: u64, cable: &'static str) -> P {
    P {
        name,
        speed,
        cable,
        up: true,
        lanes: 4,
    }
}

/// The default Mellanox dynamic CONFIG_DB for `ports` on `platform`.
pub fn config_for(ports: &[P], platform: &str, mmu: u64, ratio: Option<f64>) -> RawDb {
    let dp: Vec<DefaultPort> = ports
        .iter()
        .map(|p| DefaultPort {
            name: p.name.to_string(),
            port: Port {
                admin_status: if p.up {
                    AdminStatus::Up
                } else {
                    AdminStatus::Down
                },
                ..Port::up(p.speed, p.lanes)
            },
            cable: CableLength::parse(p.cable).expect("cable"),
        })
        .collect();
    let opts = DefaultOptions {
        over_subscribe_ratio: ratio,
        ..DefaultOptions::new(platform, mmu)
    };
    mellanox_dynamic(&dp, &opts).to_raw()
}

/// SN3800 default configuration.
pub fn sn3800(ports: &[P]) -> RawDb {
    config_for(ports, SN3800, MMU_SN3800, None)
}

/// Options: Mellanox model on `asic`, with or without the Mellanox zero profiles.
pub fn options(asic: AsicModel, zero: bool) -> Options {
    let mut o = Options::new(Model::Mellanox(Mellanox), asic);
    if zero {
        o.zero_profiles = Some(ZeroProfiles::mellanox());
    }
    o
}

/// Publishes what orchagent publishes in STATE_DB: the MMU size and per-port maxima.
pub fn publish_state(h: &mut Harness, ports: &[&str], mmu: u64, max_headroom: Option<u64>) {
    h.state_set(
        "BUFFER_MAX_PARAM_TABLE",
        "global",
        &[("mmu_size", &mmu.to_string())],
    );
    for p in ports {
        let mh = max_headroom.map(|m| m.to_string());
        let mut f = vec![("max_priority_groups", "8"), ("max_queues", "16")];
        if let Some(m) = &mh {
            f.push(("max_headroom_size", m.as_str()));
        }
        h.state_set("BUFFER_MAX_PARAM_TABLE", p, &f);
    }
}

/// A cold start on `config`: CONFIG_DB, STATE_DB, PortInitDone, then a minute.
pub fn start(opts: Options, config: &RawDb, mmu: u64, max_headroom: Option<u64>) -> Harness {
    let mut h = Harness::new(opts).expect("manager");
    h.load_config(config);
    let ports: Vec<&str> = config
        .get("PORT")
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    publish_state(&mut h, &ports, mmu, max_headroom);
    h.advance(Duration::from_secs(15));
    h.port_init_done();
    h.settle();
    h
}

/// Cold start of the SN3800 default configuration with zero profiles.
pub fn start_sn3800(ports: &[P]) -> Harness {
    start(
        options(AsicModel::Spectrum2, true),
        &sn3800(ports),
        MMU_SN3800,
        None,
    )
}

/// The Mellanox headroom of (speed, cable m, mtu, lanes) on `asic` with the default pattern.
pub fn mellanox(
    asic: AsicModel,
    speed: u64,
    cable: f64,
    mtu: u32,
    lanes: u32,
    shp: bool,
) -> (u64, u64, u64) {
    let mut env = HeadroomEnv::new(asic.params());
    env.shp_enabled = shp;
    let args = HeadroomArgs {
        port_mtu: mtu,
        lane_count: lanes,
        ..HeadroomArgs::new(speed, cable)
    };
    let h = Mellanox.headroom(&args, &env).expect("headroom");
    (h.xon, h.xoff, h.size)
}

/// The profile fields the manager writes for a generated profile.
pub fn profile_fields(h: &Harness, name: &str) -> Option<(u64, u64, u64)> {
    let num = |f: &str| {
        h.appl_field("BUFFER_PROFILE_TABLE", name, f)?
            .parse::<u64>()
            .ok()
    };
    Some((num("xon")?, num("xoff")?, num("size")?))
}

pub fn pg(h: &Harness, key: &str) -> Option<String> {
    h.appl_field("BUFFER_PG_TABLE", key, "profile")
        .map(str::to_string)
}

pub fn has_profile(h: &Harness, name: &str) -> bool {
    h.appl
        .get("BUFFER_PROFILE_TABLE")
        .is_some_and(|t| t.contains_key(name))
}

pub fn pool_field(h: &Harness, pool: &str, field: &str) -> Option<u64> {
    h.appl_field("BUFFER_POOL_TABLE", pool, field)?.parse().ok()
}

/// The manager's mirror equals the harness's APPL_DB.
pub fn assert_consistent(h: &Harness) {
    assert_eq!(
        h.manager().appl_db(),
        h.appl,
        "manager mirror vs applied outputs"
    );
}

/// The pool algorithm run on the harness's databases (what the pools must converge to).
pub fn expected_pools(
    h: &Harness,
) -> std::collections::BTreeMap<String, headroom_sonic::pool::PoolSize> {
    use headroom_sonic::tables::config::ConfigDb;
    use headroom_sonic::tables::state::StateDb;
    let cfg = ConfigDb::from_raw(&h.config).expect("valid CONFIG_DB");
    let mut st = RawDb::new();
    for t in ["ASIC_TABLE", "BUFFER_MAX_PARAM_TABLE", "PORT_TABLE"] {
        if let Some(x) = h.state.get(t) {
            st.insert(t.to_string(), x.clone());
        }
    }
    let state = StateDb::from_raw(&st).expect("valid STATE_DB");
    let appl = h.appl_typed().expect("valid APPL_DB");
    headroom_sonic::pool::compute(&cfg, &state, &appl)
        .expect("pools")
        .pools()
        .clone()
}

/// Every dynamic pool in APPL_DB has the size the pool algorithm gives for the current
/// APPL_DB (the manager converged).
pub fn assert_pools_converged(h: &Harness) {
    for (name, line) in expected_pools(h) {
        assert_eq!(
            pool_field(h, &name, "size"),
            Some(line.size),
            "pool {name} size"
        );
    }
}

/// Number of APPL_DB writes (sets) of `table:key` so far.
pub fn appl_sets(h: &Harness, table: &str, key: &str) -> usize {
    use headroom_sonic::bufmgr::Output;
    h.writes
        .iter()
        .filter(|o| matches!(o, Output::ApplSet { table: t, key: k, .. } if t == table && k == key))
        .count()
}
