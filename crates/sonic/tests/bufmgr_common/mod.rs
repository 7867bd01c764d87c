//! Shared set-up for the buffer manager tests: default Mellanox dynamic-mode configurations
//! and a harness started on them, and the [`Switch`] interface the cases of [`seed003`] are
//! written against, so they run both on the in-memory [`Harness`] and on the Redis daemon
//! (`tests/daemon_common`).
#![allow(dead_code)]

pub mod seed003;

use std::time::Duration;

use headroom_sonic::bufmgr::harness::Harness;
use headroom_sonic::bufmgr::{BufferManager, LogLevel, Options, Output, ZeroProfiles};
use headroom_sonic::defaults::{mellanox_dynamic, DefaultOptions, DefaultPort};
use headroom_sonic::model::{HeadroomArgs, HeadroomEnv, HeadroomModel, Mellanox, Model};
use headroom_sonic::tables::appl::ApplDb;
use headroom_sonic::tables::config::{AdminStatus, Port};
use headroom_sonic::tables::state::AsicModel;
use headroom_sonic::tables::{CableLength, RawDb, TableErrors};

/// A switch running the buffer manager: the in-memory [`Harness`] or the Redis daemon.
/// Inputs are applied at once (the daemon waits until it has processed them); the views
/// (`appl`, `state`, `writes`, `logs`, `manager`) reflect everything applied so far.
pub trait Switch {
    /// A switch with a new manager started with `opts` (nothing configured yet).
    fn create(opts: Options) -> Self
    where
        Self: Sized;
    /// CONFIG_DB set (the whole hash).
    fn config_set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]);
    /// CONFIG_DB delete.
    fn config_del(&mut self, table: &str, key: &str);
    /// STATE_DB set (the whole hash).
    fn state_set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]);
    /// APPL_DB `PORT_TABLE:PortInitDone`.
    fn port_init_done(&mut self);
    /// Every entry of a CONFIG_DB dump, in table and key order.
    fn load_config(&mut self, db: &RawDb);
    /// Lets `d` of the manager's time pass.
    fn advance(&mut self, d: Duration);
    /// Lets a minute pass.
    fn settle(&mut self) {
        self.advance(Duration::from_secs(60));
    }
    /// The manager (a snapshot for the daemon).
    fn manager(&self) -> &BufferManager;
    /// APPL_DB buffer tables as orchagent consumed them.
    fn appl(&self) -> &RawDb;
    /// STATE_DB: the inputs and the manager's writes.
    fn state(&self) -> &RawDb;
    /// CONFIG_DB as configured.
    fn config(&self) -> &RawDb;
    /// Every database write the manager asked for, in order.
    fn writes(&self) -> &[Output];
    /// Every log line, in order.
    fn logs(&self) -> &[(LogLevel, String)];
    /// Error log lines.
    fn errors(&self) -> Vec<&str> {
        self.logs()
            .iter()
            .filter(|(l, _)| *l == LogLevel::Error)
            .map(|(_, m)| m.as_str())
            .collect()
    }
    /// A field of an APPL_DB hash.
    fn appl_field(&self, table: &str, key: &str, field: &str) -> Option<&str> {
        self.appl()
            .get(table)?
            .get(key)?
            .get(field)
            .map(String::as_str)
    }
    /// Whether deleting a CONFIG_DB row that does not exist reaches the manager (true for
    /// the harness, which feeds the event; false in Redis, where no keyspace event fires).
    fn deletes_absent_rows(&self) -> bool {
        true
    }
    /// APPL_DB as typed tables.
    fn appl_typed(&self) -> Result<ApplDb, TableErrors> {
        ApplDb::from_raw(self.appl())
    }
}

impl Switch for Harness {
    fn create(opts: Options) -> Self {
        Harness::new(opts).expect("manager")
    }
    fn config_set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]) {
        Harness::config_set(self, table, key, fields)
    }
    fn config_del(&mut self, table: &str, key: &str) {
        Harness::config_del(self, table, key)
    }
    fn state_set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]) {
        Harness::state_set(self, table, key, fields)
    }
    fn port_init_done(&mut self) {
        Harness::port_init_done(self)
    }
    fn load_config(&mut self, db: &RawDb) {
        Harness::load_config(self, db)
    }
    fn advance(&mut self, d: Duration) {
        Harness::advance(self, d)
    }
    fn settle(&mut self) {
        Harness::settle(self)
    }
    fn manager(&self) -> &BufferManager {
        Harness::manager(self)
    }
    fn appl(&self) -> &RawDb {
        &self.appl
    }
    fn state(&self) -> &RawDb {
        &self.state
    }
    fn config(&self) -> &RawDb {
        &self.config
    }
    fn writes(&self) -> &[Output] {
        &self.writes
    }
    fn logs(&self) -> &[(LogLevel, String)] {
        &self.logs
    }
}

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
pub fn publish_state(h: &mut impl Switch, ports: &[&str], mmu: u64, max_headroom: Option<u64>) {
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
    start_on(opts, config, mmu, max_headroom)
}

/// [`start`] on any [`Switch`].
pub fn start_on<S: Switch>(
    opts: Options,
    config: &RawDb,
    mmu: u64,
    max_headroom: Option<u64>,
) -> S {
    let mut h = S::create(opts);
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
    start_sn3800_on(ports)
}

/// [`start_sn3800`] on any [`Switch`].
pub fn start_sn3800_on<S: Switch>(ports: &[P]) -> S {
    start_on(
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
pub fn profile_fields(h: &impl Switch, name: &str) -> Option<(u64, u64, u64)> {
    let num = |f: &str| {
        h.appl_field("BUFFER_PROFILE_TABLE", name, f)?
            .parse::<u64>()
            .ok()
    };
    Some((num("xon")?, num("xoff")?, num("size")?))
}

pub fn pg(h: &impl Switch, key: &str) -> Option<String> {
    h.appl_field("BUFFER_PG_TABLE", key, "profile")
        .map(str::to_string)
}

pub fn has_profile(h: &impl Switch, name: &str) -> bool {
    h.appl()
        .get("BUFFER_PROFILE_TABLE")
        .is_some_and(|t| t.contains_key(name))
}

pub fn pool_field(h: &impl Switch, pool: &str, field: &str) -> Option<u64> {
    h.appl_field("BUFFER_POOL_TABLE", pool, field)?.parse().ok()
}

/// The manager's mirror equals the harness's APPL_DB.
pub fn assert_consistent(h: &impl Switch) {
    assert_eq!(
        &h.manager().appl_db(),
        h.appl(),
        "manager mirror vs applied outputs"
    );
}

/// The pool algorithm run on the harness's databases (what the pools must converge to).
pub fn expected_pools(
    h: &impl Switch,
) -> std::collections::BTreeMap<String, headroom_sonic::pool::PoolSize> {
    use headroom_sonic::tables::config::ConfigDb;
    use headroom_sonic::tables::state::StateDb;
    let cfg = ConfigDb::from_raw(h.config()).expect("valid CONFIG_DB");
    let mut st = RawDb::new();
    for t in ["ASIC_TABLE", "BUFFER_MAX_PARAM_TABLE", "PORT_TABLE"] {
        if let Some(x) = h.state().get(t) {
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
pub fn assert_pools_converged(h: &impl Switch) {
    for (name, line) in expected_pools(h) {
        assert_eq!(
            pool_field(h, &name, "size"),
            Some(line.size),
            "pool {name} size"
        );
    }
}

/// Number of APPL_DB writes (sets) of `table:key` so far.
pub fn appl_sets(h: &impl Switch, table: &str, key: &str) -> usize {
    use headroom_sonic::bufmgr::Output;
    h.writes()
        .iter()
        .filter(|o| matches!(o, Output::ApplSet { table: t, key: k, .. } if t == table && k == key))
        .count()
}
