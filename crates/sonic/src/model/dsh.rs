//! DSH — Dynamic and Shared Headroom (spec `dsh.md`): what a DSH-capable switch reserves, the
//! resulting shared pool, and the thresholds it programs.
//!
//! Per port, the **insurance headroom** `eta` (DSH paper Eq. 1, via
//! [`headroom_mech::buffer::formula::dsh_eta`]): `eta = 2 × (C × D_prop + MTU) + 3840 B`, with
//! the port MTU and light at 1.98·10⁸ m/s (SONiC's constant), rounded up to whole cells.
//! One `eta` per *port*, not per queue: a port-level pause bounds the bytes in flight.
//!
//! As a SONiC profile (the [`HeadroomModel`] view) a DSH PG reserves only its private
//! `xon` (pipeline latency, as SONiC's shared-headroom mode does), and its `xoff` is `eta`:
//! the headroom it may draw from the shared pool after its queue-level pause. The switch-level
//! picture is [`plan`]:
//!
//! ```text
//! B_shared = B − private − Σ_ports eta
//! T(t)     = alpha × (B_shared − Σ omega(t))
//! Xqoff = T − eta,  Xqon = Xqoff − delta_q,  Xpoff = Nq × T,  Xpon = Xpoff − delta_p
//! ```
//!
//! Invariants: `insurance = Σ eta`, `shared = mmu − private − insurance` (an error if
//! negative); thresholds are whole bytes, rounded down, saturating at 0; they are reported at
//! an empty shared buffer (the largest values) and by [`DshPlan::thresholds_at`] for any
//! shared occupancy.

use std::collections::BTreeMap;

use headroom_mech::buffer::formula::{cable_delay, dsh_eta};
use headroom_mech::buffer::{Alpha, AlphaError};
use headroom_mech::units::Rate;

use super::generic::check_bounds;
use super::mellanox::LIGHT_SPEED_MEDIA_MPS;
use super::{ceil_kb, to_u64, Headroom, HeadroomArgs, HeadroomEnv, HeadroomError, HeadroomModel};
use crate::tables::config::ConfigDb;
use crate::tables::state::StateDb;
use crate::tables::LookupError;

/// The DSH model's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Dsh {
    /// Propagation speed in the cable, m/s.
    pub propagation_mps: f64,
    /// Queue-level hysteresis `delta_q`, bytes; default one port-MTU packet in whole cells.
    pub delta_q: Option<u64>,
    /// Port-level hysteresis `delta_p`, bytes; default one port-MTU packet in whole cells.
    pub delta_p: Option<u64>,
}

impl Default for Dsh {
    fn default() -> Self {
        Dsh {
            propagation_mps: LIGHT_SPEED_MEDIA_MPS,
            delta_q: None,
            delta_p: None,
        }
    }
}

/// DSH's per-port values for one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DshHeadroom {
    /// Insurance headroom of the port, bytes (whole cells).
    pub eta: u64,
    /// Queue-level hysteresis, bytes.
    pub delta_q: u64,
    /// Port-level hysteresis, bytes.
    pub delta_p: u64,
}

impl HeadroomModel for Dsh {
    fn name(&self) -> &'static str {
        "dsh"
    }

    fn headroom(&self, args: &HeadroomArgs, env: &HeadroomEnv) -> Result<Headroom, HeadroomError> {
        check_bounds(args)?;
        env.validate()?;
        if !(self.propagation_mps.is_finite() && self.propagation_mps > 0.0) {
            return Err(HeadroomError::InvalidEnv {
                field: "propagation_mps",
                value: crate::lua::format_number(self.propagation_mps),
                reason: "must be a positive speed",
            });
        }
        let cell = u64::from(env.asic.cell_size);
        let raw = dsh_eta(
            Rate::from_mbps(args.speed_mbps),
            cable_delay(args.cable_m, self.propagation_mps),
            u64::from(args.port_mtu),
        );
        let eta = raw.div_ceil(cell) * cell;
        let mtu_cells = u64::from(args.port_mtu).div_ceil(cell) * cell;
        let mut pl = env.asic.pipeline_latency * 1024.0;
        if args.lane_count == 8 {
            pl *= 2.0;
        }
        let xon = to_u64(ceil_kb(pl));
        Ok(Headroom {
            xon,
            xoff: eta,
            size: xon,
            dsh: Some(DshHeadroom {
                eta,
                delta_q: self.delta_q.unwrap_or(mtu_cells),
                delta_p: self.delta_p.unwrap_or(mtu_cells),
            }),
        })
    }
}

/// One port of a DSH switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DshPort {
    /// The port's DSH values.
    pub headroom: DshHeadroom,
    /// Lossless ingress queues of the port (`Nq`).
    pub lossless_queues: u64,
}

/// What [`plan`] needs.
#[derive(Clone, Debug, PartialEq)]
pub struct DshSwitchInput {
    /// Total buffer `B`, bytes.
    pub mmu_size: u64,
    /// Private and reserved bytes (per-queue private, lossy and egress reservations,
    /// management, mirror, …).
    pub private: u64,
    /// The DT parameter.
    pub alpha: Alpha,
    /// Lossless ports.
    pub ports: BTreeMap<String, DshPort>,
}

/// Thresholds of one port at a given shared occupancy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DshPortThresholds {
    /// Insurance headroom.
    pub eta: u64,
    /// `Nq`.
    pub lossless_queues: u64,
    /// Queue pause threshold `Xqoff = T − eta`.
    pub xqoff: u64,
    /// Queue resume threshold `Xqon = Xqoff − delta_q`.
    pub xqon: u64,
    /// Port pause threshold `Xpoff = Nq × T`.
    pub xpoff: u64,
    /// Port resume threshold `Xpon = Xpoff − delta_p`.
    pub xpon: u64,
}

/// A DSH switch's reservation and thresholds.
#[derive(Clone, Debug, PartialEq)]
pub struct DshPlan {
    /// `B`.
    pub mmu_size: u64,
    /// Private and reserved bytes.
    pub private: u64,
    /// `Σ eta` (insurance headroom, one per lossless port).
    pub insurance: u64,
    /// `B_shared = B − private − insurance`.
    pub shared: u64,
    /// What static per-queue headroom (SIH) would reserve: `Σ Nq × eta`.
    pub sih_headroom: u64,
    /// SIH's shared pool `B − private − Σ Nq × eta` (`None` if it does not fit).
    pub sih_shared: Option<u64>,
    /// The DT parameter.
    pub alpha: Alpha,
    /// `T` at an empty shared buffer: `alpha × B_shared`.
    pub threshold_empty: u64,
    /// Per-port thresholds at an empty shared buffer.
    pub ports: BTreeMap<String, DshPortThresholds>,
    /// Per-port inputs (for [`DshPlan::thresholds_at`]).
    pub inputs: BTreeMap<String, DshPort>,
}

impl DshPlan {
    /// The thresholds of `port` when the shared buffer holds `shared_occupancy` bytes.
    pub fn thresholds_at(&self, port: &str, shared_occupancy: u64) -> Option<DshPortThresholds> {
        let p = self.inputs.get(port)?;
        let t = self
            .alpha
            .threshold(self.shared.saturating_sub(shared_occupancy));
        Some(thresholds(p, t))
    }
}

fn thresholds(p: &DshPort, t: u64) -> DshPortThresholds {
    let xqoff = t.saturating_sub(p.headroom.eta);
    let xpoff = t.saturating_mul(p.lossless_queues);
    DshPortThresholds {
        eta: p.headroom.eta,
        lossless_queues: p.lossless_queues,
        xqoff,
        xqon: xqoff.saturating_sub(p.headroom.delta_q),
        xpoff,
        xpon: xpoff.saturating_sub(p.headroom.delta_p),
    }
}

/// Why a DSH plan could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DshError {
    /// Private bytes and insurance headroom exceed the buffer.
    #[error("DSH does not fit: private {private} + insurance {insurance} bytes exceed the buffer ({mmu_size})")]
    Exhausted {
        /// `B`.
        mmu_size: u64,
        /// Private bytes.
        private: u64,
        /// Insurance headroom.
        insurance: u64,
    },
    /// `default_dynamic_th` is outside the range alpha can encode.
    #[error("DEFAULT_LOSSLESS_BUFFER_PARAMETER.default_dynamic_th: {0}")]
    Alpha(#[from] AlphaError),
    /// Rendering the switch's tables failed.
    #[error(transparent)]
    Render(#[from] Box<crate::render::RenderError>),
    /// The pool accounting fell back (pending APPL_DB changes); cannot happen for a rendered
    /// snapshot.
    #[error("pool accounting did not run (fallback)")]
    NoPoolAccounting,
    /// A table lookup failed.
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// A port's headroom could not be computed.
    #[error("port {port}: {error}")]
    Headroom {
        /// The port.
        port: String,
        /// The error.
        error: HeadroomError,
    },
}

/// The DSH reservation and thresholds for a switch.
pub fn plan(input: &DshSwitchInput) -> Result<DshPlan, DshError> {
    let insurance: u64 = input.ports.values().map(|p| p.headroom.eta).sum();
    let sih: u64 = input
        .ports
        .values()
        .map(|p| p.headroom.eta.saturating_mul(p.lossless_queues))
        .sum();
    let shared = input
        .mmu_size
        .checked_sub(input.private)
        .and_then(|r| r.checked_sub(insurance))
        .ok_or(DshError::Exhausted {
            mmu_size: input.mmu_size,
            private: input.private,
            insurance,
        })?;
    let sih_shared = input
        .mmu_size
        .checked_sub(input.private)
        .and_then(|r| r.checked_sub(sih));
    let t = input.alpha.threshold(shared);
    let ports = input
        .ports
        .iter()
        .map(|(n, p)| (n.clone(), thresholds(p, t)))
        .collect();
    Ok(DshPlan {
        mmu_size: input.mmu_size,
        private: input.private,
        insurance,
        shared,
        sih_headroom: sih,
        sih_shared,
        alpha: input.alpha,
        threshold_empty: t,
        ports,
        inputs: input.ports.clone(),
    })
}

/// The DSH plan for a SONiC configuration: renders the steady state with the DSH model (each
/// lossless PG reserving its private `xon`), takes every reservation except the shared
/// headroom pool terms as `private`, one `eta` per admin-up port with lossless PGs and a
/// cable, `Nq` = its lossless PG ids, alpha = 2^`default_dynamic_th` (0 if unset).
pub fn plan_from_tables(
    config: &ConfigDb,
    state: &StateDb,
    dsh: &Dsh,
) -> Result<DshPlan, DshError> {
    let rendered = crate::render::render(config, state, dsh).map_err(Box::new)?;
    let crate::pool::PoolOutcome::Computed { debug, .. } = &rendered.pools else {
        return Err(DshError::NoPoolAccounting);
    };
    let private = to_u64((debug.occupied - debug.shp_port_private - debug.shp_size).ceil());
    let env = HeadroomEnv::from_tables(config, state)?;
    let mut ports = BTreeMap::new();
    for (name, port) in &config.ports {
        let nq = config.lossless_pg_count(name);
        if !port.is_up() || nq == 0 || config.cable_length(name).is_none_or(|c| c.is_zero()) {
            continue;
        }
        let Ok(args) = HeadroomArgs::for_port(config, state, name) else {
            continue;
        };
        let h = dsh
            .headroom(&args, &env)
            .map_err(|error| DshError::Headroom {
                port: name.clone(),
                error,
            })?;
        if let Some(headroom) = h.dsh {
            ports.insert(
                name.clone(),
                DshPort {
                    headroom,
                    lossless_queues: nq,
                },
            );
        }
    }
    let th = config
        .default_lossless()
        .and_then(|d| d.default_dynamic_th)
        .unwrap_or(0);
    let alpha = Alpha::from_dynamic_th(i32::from(th))?;
    plan(&DshSwitchInput {
        mmu_size: to_u64(debug.mmu),
        private,
        alpha,
        ports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::state::AsicModel;

    #[test]
    fn eta_matches_the_paper_formula() {
        let env = HeadroomEnv::new(AsicModel::Spectrum2.params());
        let h = Dsh::default()
            .headroom(&HeadroomArgs::new(100_000, 100.0), &env)
            .expect("computes");
        let raw = dsh_eta(Rate::from_gbps(100), cable_delay(100.0, 1.98e8), 9100);
        let d = h.dsh.expect("dsh values");
        assert_eq!(d.eta, raw.div_ceil(144) * 144);
        assert_eq!((h.xon, h.size, h.xoff), (19456, 19456, d.eta));
        assert_eq!(d.delta_q, 9100u64.div_ceil(144) * 144);
    }

    #[test]
    fn plan_reserves_one_eta_per_port() {
        let hr = DshHeadroom {
            eta: 50_000,
            delta_q: 9216,
            delta_p: 9216,
        };
        let mut ports = BTreeMap::new();
        for i in 0..4 {
            ports.insert(
                format!("Ethernet{}", 4 * i),
                DshPort {
                    headroom: hr,
                    lossless_queues: 2,
                },
            );
        }
        let alpha = Alpha::from_dynamic_th(0).expect("alpha 1");
        let p = plan(&DshSwitchInput {
            mmu_size: 1_000_000,
            private: 100_000,
            alpha,
            ports,
        })
        .expect("fits");
        assert_eq!(p.insurance, 200_000);
        assert_eq!(p.shared, 700_000);
        assert_eq!(p.sih_headroom, 400_000);
        assert_eq!(p.sih_shared, Some(500_000));
        assert_eq!(p.threshold_empty, 700_000);
        let t = p.ports["Ethernet0"];
        assert_eq!(
            (t.xqoff, t.xqon, t.xpoff, t.xpon),
            (650_000, 640_784, 1_400_000, 1_390_784)
        );
        let busy = p.thresholds_at("Ethernet0", 600_000).expect("port");
        assert_eq!((busy.xqoff, busy.xpoff), (50_000, 200_000));
        let full = p.thresholds_at("Ethernet0", 2_000_000).expect("port");
        assert_eq!((full.xqoff, full.xqon, full.xpoff), (0, 0, 0));
        let too_small = DshSwitchInput {
            mmu_size: 250_000,
            private: 100_000,
            alpha,
            ports: p.inputs.clone(),
        };
        assert!(matches!(plan(&too_small), Err(DshError::Exhausted { .. })));
    }
}
