//! Headroom models behind one interface: what a lossless PG's profile (`xon`, `xoff`, `size`)
//! is for a port's speed, cable length and MTU.
//!
//! The input is SONiC's headroom-plugin call contract (sonic-buffer.md §3): the five plugin
//! arguments ([`HeadroomArgs`]) and the database values the plugin reads ([`HeadroomEnv`]).
//!
//! - [`mellanox`]: bit-compatible with SONiC's Mellanox plugin (§4; f64, same operation order).
//! - [`generic`]: the design's "well-known formula" as seed 003 writes it (unrounded worst-case
//!   factor, one-way cable bytes doubled in the propagation delay, gearbox, MAC/PHY, peer
//!   response from pause quanta; `xoff` rounded up to a whole byte).
//! - [`dsh`]: Dynamic and Shared Headroom: per-port insurance headroom eta, headroom taken
//!   from the shared pool, and the thresholds a DSH switch programs.
//!
//! Invariants: every model is a pure function of its input; results are whole bytes; with the
//! shared headroom pool enabled every model's `size` equals its `xon` (headroom is not
//! reserved per PG).

pub mod dsh;
pub mod generic;
pub mod mellanox;

use std::fmt;
use std::str::FromStr;

use crate::lua;
use crate::tables::config::ConfigDb;
use crate::tables::state::{AsicParams, StateDb};
use crate::tables::LookupError;

pub use dsh::{Dsh, DshHeadroom};
pub use generic::Generic;
pub use mellanox::{Mellanox, MellanoxTrace};

/// The five arguments of the headroom plugin (`ARGV`, sonic-buffer.md §3).
#[derive(Clone, Debug, PartialEq)]
pub struct HeadroomArgs {
    /// Effective port speed, Mb/s.
    pub speed_mbps: u64,
    /// Cable length, metres.
    pub cable_m: f64,
    /// Port MTU, bytes (9100 when the port has none).
    pub port_mtu: u32,
    /// Gearbox delay, ns (0 when none).
    pub gearbox_delay_ns: f64,
    /// Lane count (0 when `PORT.lanes` is absent; 8 triggers the 8-lane rules).
    pub lane_count: u32,
}

impl HeadroomArgs {
    /// Plain arguments: `speed_mbps`, `cable_m`, MTU 9100, no gearbox, 4 lanes.
    pub fn new(speed_mbps: u64, cable_m: f64) -> HeadroomArgs {
        HeadroomArgs {
            speed_mbps,
            cable_m,
            port_mtu: 9100,
            gearbox_delay_ns: 0.0,
            lane_count: 4,
        }
    }

    /// What buffermgrd passes for `port`: effective speed (§7.3), configured cable length,
    /// MTU (9100 if absent), the global gearbox delay, lane count.
    pub fn for_port(
        config: &ConfigDb,
        state: &StateDb,
        port: &str,
    ) -> Result<HeadroomArgs, LookupError> {
        let p = config
            .ports
            .get(port)
            .ok_or_else(|| LookupError::NoPort(port.to_string()))?;
        let supported = state.supported_speeds.get(port).map(Vec::as_slice);
        let speed_mbps = p
            .effective_speed(supported)
            .ok_or_else(|| LookupError::NoSpeed(port.to_string()))?;
        let cable = config
            .cable_length(port)
            .ok_or_else(|| LookupError::NoCableLength(port.to_string()))?;
        Ok(HeadroomArgs {
            speed_mbps,
            cable_m: cable.metres(),
            port_mtu: p.mtu_or_default(),
            gearbox_delay_ns: state.gearbox_delay_ns(),
            lane_count: p.lane_count(),
        })
    }

    /// Reads the plugin's string arguments as the Lua plugin does: numbers via `tonumber`,
    /// the cable length without its last character, an empty or non-numeric gearbox delay as
    /// 0. Unlike the plugin, an unparsable speed, cable or MTU is an error rather than a
    /// script failure.
    pub fn from_plugin_argv(argv: [&str; 5]) -> Result<HeadroomArgs, HeadroomError> {
        let [speed, cable, mtu, gearbox, lanes] = argv;
        let bad =
            |arg: &'static str, value: &str, reason: &'static str| HeadroomError::InvalidArg {
                arg,
                value: value.to_string(),
                reason,
            };
        let s = lua::tonumber(speed)
            .filter(|s| *s >= 0.0 && s.fract() == 0.0 && *s <= u64::MAX as f64)
            .ok_or_else(|| bad("speed", speed, "not a whole number of Mb/s"))?;
        let mut cs = cable.chars();
        cs.next_back();
        let c =
            lua::tonumber(cs.as_str()).ok_or_else(|| bad("cable", cable, "not <number><unit>"))?;
        let m = lua::tonumber(mtu)
            .filter(|m| *m >= 0.0 && m.fract() == 0.0 && *m <= f64::from(u32::MAX))
            .ok_or_else(|| bad("port_mtu", mtu, "not a whole number of bytes"))?;
        let lane_count = lua::tonumber(lanes)
            .filter(|l| *l >= 0.0 && l.fract() == 0.0 && *l <= f64::from(u32::MAX))
            .unwrap_or(0.0);
        Ok(HeadroomArgs {
            speed_mbps: s as u64,
            cable_m: c,
            port_mtu: m as u32,
            gearbox_delay_ns: lua::tonumber(gearbox).unwrap_or(0.0),
            lane_count: lane_count as u32,
        })
    }

    /// Checks the arguments every model relies on: a finite, non-negative cable length and
    /// gearbox delay.
    pub fn validate(&self) -> Result<(), HeadroomError> {
        if !(self.cable_m.is_finite() && self.cable_m >= 0.0) {
            return Err(HeadroomError::InvalidArg {
                arg: "cable",
                value: lua::format_number(self.cable_m),
                reason: "must be a finite, non-negative number of metres",
            });
        }
        if !(self.gearbox_delay_ns.is_finite() && self.gearbox_delay_ns >= 0.0) {
            return Err(HeadroomError::InvalidArg {
                arg: "gearbox_delay",
                value: lua::format_number(self.gearbox_delay_ns),
                reason: "must be a finite, non-negative number of ns",
            });
        }
        Ok(())
    }
}

/// The database values the headroom plugin reads (sonic-buffer.md §3).
#[derive(Clone, Debug, PartialEq)]
pub struct HeadroomEnv {
    /// The STATE_DB `ASIC_TABLE` entry.
    pub asic: AsicParams,
    /// `LOSSLESS_TRAFFIC_PATTERN.mtu`, bytes.
    pub lossless_mtu: u32,
    /// `LOSSLESS_TRAFFIC_PATTERN.small_packet_percentage`, 0..=100.
    pub small_packet_percentage: u32,
    /// Shared headroom pool enabled: `BUFFER_POOL|ingress_lossless_pool.xoff` ≠ 0 or
    /// `over_subscribe_ratio` ≠ 0.
    pub shp_enabled: bool,
}

impl HeadroomEnv {
    /// An environment for `asic` with SONiC's default traffic pattern (MTU 1024, 50 % small
    /// packets) and no shared headroom pool.
    pub fn new(asic: AsicParams) -> HeadroomEnv {
        HeadroomEnv {
            asic,
            lossless_mtu: 1024,
            small_packet_percentage: 50,
            shp_enabled: false,
        }
    }

    /// Reads the environment from the tables. Deliberate difference: a missing
    /// `DEFAULT_LOSSLESS_BUFFER_PARAMETER` means "no over-subscribe ratio" here, where the
    /// SONiC plugin raises an error (quirk §11.1).
    pub fn from_tables(config: &ConfigDb, state: &StateDb) -> Result<HeadroomEnv, LookupError> {
        let asic = state.asic()?.clone();
        let pattern = config
            .traffic_pattern()
            .ok_or(LookupError::NoTrafficPattern)?;
        Ok(HeadroomEnv {
            asic,
            lossless_mtu: pattern.mtu,
            small_packet_percentage: pattern.small_packet_percentage,
            shp_enabled: config.shp_enabled(),
        })
    }

    /// Checks the values the formulas divide by or bound: positive cell size and lossless
    /// MTU, percentage ≤ 100, finite non-negative ASIC latencies.
    pub fn validate(&self) -> Result<(), HeadroomError> {
        let bad =
            |field: &'static str, value: String, reason: &'static str| HeadroomError::InvalidEnv {
                field,
                value,
                reason,
            };
        if self.asic.cell_size == 0 {
            return Err(bad("cell_size", "0".into(), "must be positive"));
        }
        if self.lossless_mtu == 0 {
            return Err(bad("mtu", "0".into(), "the lossless MTU must be positive"));
        }
        if self.small_packet_percentage > 100 {
            return Err(bad(
                "small_packet_percentage",
                self.small_packet_percentage.to_string(),
                "must be in 0..=100",
            ));
        }
        for (field, v) in [
            ("pipeline_latency", self.asic.pipeline_latency),
            ("mac_phy_delay", self.asic.mac_phy_delay),
            ("peer_response_time", self.asic.peer_response_time),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(
                    field,
                    lua::format_number(v),
                    "must be a finite, non-negative number of kB",
                ));
            }
        }
        Ok(())
    }
}

/// A computed lossless profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Headroom {
    /// `xon`, bytes.
    pub xon: u64,
    /// `xoff`, bytes.
    pub xoff: u64,
    /// `size`, bytes (reserved per PG).
    pub size: u64,
    /// DSH only: the per-port insurance headroom and hysteresis.
    pub dsh: Option<DshHeadroom>,
}

impl Headroom {
    /// The plugin's result strings: `xon:<n>`, `xoff:<n>`, `size:<n>`.
    pub fn plugin_lines(&self) -> Vec<String> {
        vec![
            format!("xon:{}", self.xon),
            format!("xoff:{}", self.xoff),
            format!("size:{}", self.size),
        ]
    }
}

/// Why a headroom could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HeadroomError {
    /// A plugin argument is unusable.
    #[error("headroom argument `{arg}` = {value:?}: {reason}")]
    InvalidArg {
        /// Which argument (`speed`, `cable`, `port_mtu`, `gearbox_delay`).
        arg: &'static str,
        /// The value.
        value: String,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// A database value the formula needs is unusable.
    #[error("headroom parameter `{field}` = {value}: {reason}")]
    InvalidEnv {
        /// Which field (`cell_size`, `mtu`, `small_packet_percentage`, …).
        field: &'static str,
        /// The value.
        value: String,
        /// Why it is rejected.
        reason: &'static str,
    },
}

/// A headroom model: computes a lossless PG's profile from the plugin inputs.
pub trait HeadroomModel {
    /// Short name (`mellanox`, `generic`, `dsh`).
    fn name(&self) -> &'static str;

    /// The profile for `args` in `env`.
    fn headroom(&self, args: &HeadroomArgs, env: &HeadroomEnv) -> Result<Headroom, HeadroomError>;
}

/// One of the three models, selectable by name.
#[derive(Clone, Debug, PartialEq)]
pub enum Model {
    /// [`Mellanox`].
    Mellanox(Mellanox),
    /// [`Generic`].
    Generic(Generic),
    /// [`Dsh`].
    Dsh(Dsh),
}

impl HeadroomModel for Model {
    fn name(&self) -> &'static str {
        match self {
            Model::Mellanox(m) => m.name(),
            Model::Generic(m) => m.name(),
            Model::Dsh(m) => m.name(),
        }
    }

    fn headroom(&self, args: &HeadroomArgs, env: &HeadroomEnv) -> Result<Headroom, HeadroomError> {
        match self {
            Model::Mellanox(m) => m.headroom(args, env),
            Model::Generic(m) => m.headroom(args, env),
            Model::Dsh(m) => m.headroom(args, env),
        }
    }
}

/// Why a model name was not recognised.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unknown headroom model {0:?} (expected mellanox, generic or dsh)")]
pub struct UnknownModel(pub String);

impl FromStr for Model {
    type Err = UnknownModel;

    /// `mellanox`, `generic` or `dsh` (with default parameters).
    fn from_str(s: &str) -> Result<Model, UnknownModel> {
        match s {
            "mellanox" => Ok(Model::Mellanox(Mellanox)),
            "generic" => Ok(Model::Generic(Generic)),
            "dsh" => Ok(Model::Dsh(Dsh::default())),
            other => Err(UnknownModel(other.to_string())),
        }
    }
}

impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `ceil(v / 1024) * 1024`, as the plugin rounds.
pub(crate) fn ceil_kb(v: f64) -> f64 {
    (v / 1024.0).ceil() * 1024.0
}

/// A non-negative finite double to `u64` (saturating; negative and NaN give 0).
pub(crate) fn to_u64(v: f64) -> u64 {
    if v.is_nan() || v <= 0.0 {
        0
    } else {
        v as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::state::AsicModel;

    #[test]
    fn argv_is_read_like_lua() {
        let a = HeadroomArgs::from_plugin_argv(["100000", "2.5m", "9100", "", "8"]).expect("ok");
        assert_eq!(
            a,
            HeadroomArgs {
                speed_mbps: 100000,
                cable_m: 2.5,
                port_mtu: 9100,
                gearbox_delay_ns: 0.0,
                lane_count: 8
            }
        );
        let a = HeadroomArgs::from_plugin_argv(["100000", "40m", "9100", "400", "0"]).expect("ok");
        assert_eq!(a.gearbox_delay_ns, 400.0);
        assert!(HeadroomArgs::from_plugin_argv(["fast", "40m", "9100", "", "4"]).is_err());
        assert!(HeadroomArgs::from_plugin_argv(["100000", "m", "9100", "", "4"]).is_err());
    }

    #[test]
    fn models_by_name() {
        for n in ["mellanox", "generic", "dsh"] {
            let m: Model = n.parse().expect("known");
            assert_eq!(m.name(), n);
        }
        assert_eq!("x".parse::<Model>(), Err(UnknownModel("x".into())));
    }

    #[test]
    fn env_validation() {
        let mut env = HeadroomEnv::new(AsicModel::Spectrum2.params());
        assert_eq!(env.validate(), Ok(()));
        env.small_packet_percentage = 101;
        assert!(env.validate().is_err());
        let mut a = HeadroomArgs::new(100000, -1.0);
        assert!(a.validate().is_err());
        a.cable_m = f64::NAN;
        assert!(a.validate().is_err());
    }
}
