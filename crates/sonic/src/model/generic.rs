//! The "well-known formula" of SONiC's design document (seed 003), as the simulator implements
//! it ([`headroom_mech::buffer::formula::sonic_generic`]).
//!
//! ```text
//! xoff = lossless_mtu + propagation × occupancy
//! propagation = port_mtu + 2 × (cable + gearbox) + mac_phy + peer_response
//! occupancy = (100 − P + P × W) / 100,  W = worst-case cell factor
//! xon = pipeline latency;  size = xoff + xon (xon with the shared headroom pool)
//! ```
//!
//! Invariants and choices (documented differences from the Mellanox plugin):
//! - units are physical: cable bytes = rate × one-way delay / 8 with light at 1.98·10⁸ m/s,
//!   gearbox bytes = rate × delay / 8; the packet-based small-packet share `P` (not SPB);
//! - `W` is ceil'd (as current SONiC does, and as the shared simulator formula does);
//! - the ASIC's kB values become bytes rounded *up* (`0.8 kB` → 820 B), the peer response
//!   likewise; `xon = ceil(pipeline_latency × 1024)`; no 1024 rounding, no 8-lane,
//!   tile or compensation terms;
//! - inputs are bounded (speed ≤ [`MAX_SPEED_MBPS`], cable ≤ [`MAX_CABLE_M`]) so the integer
//!   arithmetic of the shared formula cannot overflow.

use headroom_mech::buffer::formula::{cable_delay, sonic_generic, SonicInputs};
use headroom_mech::units::{Rate, Time};

use super::mellanox::LIGHT_SPEED_MEDIA_MPS;
use super::{to_u64, Headroom, HeadroomArgs, HeadroomEnv, HeadroomError, HeadroomModel};

/// Largest speed the integer-based models accept, Mb/s (10 Tb/s).
pub const MAX_SPEED_MBPS: u64 = 10_000_000;
/// Longest cable the integer-based models accept, metres (100 km).
pub const MAX_CABLE_M: f64 = 100_000.0;

/// The seed's well-known formula.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generic;

/// Checks the bounds of the integer-based models (generic, dsh).
pub(crate) fn check_bounds(args: &HeadroomArgs) -> Result<(), HeadroomError> {
    args.validate()?;
    if args.speed_mbps > MAX_SPEED_MBPS {
        return Err(HeadroomError::InvalidArg {
            arg: "speed",
            value: args.speed_mbps.to_string(),
            reason: "above 10 Tb/s",
        });
    }
    if args.cable_m > MAX_CABLE_M || args.gearbox_delay_ns > 1e9 {
        return Err(HeadroomError::InvalidArg {
            arg: if args.cable_m > MAX_CABLE_M {
                "cable"
            } else {
                "gearbox_delay"
            },
            value: crate::lua::format_number(args.cable_m.max(args.gearbox_delay_ns)),
            reason: "too large (cable ≤ 100 km, gearbox ≤ 1 s)",
        });
    }
    Ok(())
}

impl Generic {
    /// The simulator formula's inputs for these plugin inputs.
    pub fn inputs(args: &HeadroomArgs, env: &HeadroomEnv) -> SonicInputs {
        SonicInputs {
            rate: Rate::from_mbps(args.speed_mbps),
            one_way: cable_delay(args.cable_m, LIGHT_SPEED_MEDIA_MPS),
            port_mtu: u64::from(args.port_mtu),
            lossless_mtu: u64::from(env.lossless_mtu),
            cell_bytes: u64::from(env.asic.cell_size),
            small_packet_percent: u64::from(env.small_packet_percentage),
            mac_phy_bytes: to_u64((env.asic.mac_phy_delay * 1024.0).ceil()),
            gearbox_delay: Time::from_ps(to_u64((args.gearbox_delay_ns * 1000.0).round())),
            default_peer_response: to_u64((env.asic.peer_response_time * 1024.0).ceil()),
        }
    }
}

impl HeadroomModel for Generic {
    fn name(&self) -> &'static str {
        "generic"
    }

    fn headroom(&self, args: &HeadroomArgs, env: &HeadroomEnv) -> Result<Headroom, HeadroomError> {
        check_bounds(args)?;
        env.validate()?;
        let xoff = sonic_generic(&Generic::inputs(args, env));
        let xon = to_u64((env.asic.pipeline_latency * 1024.0).ceil());
        let size = if env.shp_enabled { xon } else { xon + xoff };
        Ok(Headroom {
            xon,
            xoff,
            size,
            dsh: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::state::AsicModel;

    #[test]
    fn spectrum3_100g_5m_by_hand() {
        let env = HeadroomEnv::new(AsicModel::Spectrum3.params());
        let h = Generic
            .headroom(&HeadroomArgs::new(100_000, 5.0), &env)
            .expect("computes");
        // W = ceil(144/64) = 3, occupancy = (100 - 50 + 150)/100 = 2.
        let cable = cable_delay(5.0, 1.98e8).as_secs_f64() * 100e9 / 8.0;
        let prop = 9100.0 + 2.0 * cable + 820.0 + 394.0 * 64.0;
        let xoff = (1024.0 + prop * 2.0f64).ceil() as u64;
        assert_eq!(
            h,
            Headroom {
                xon: 19456,
                xoff,
                size: xoff + 19456,
                dsh: None
            }
        );
        let shp = HeadroomEnv {
            shp_enabled: true,
            ..env
        };
        assert_eq!(
            Generic
                .headroom(&HeadroomArgs::new(100_000, 5.0), &shp)
                .map(|h| h.size),
            Ok(19456)
        );
    }

    #[test]
    fn bounds() {
        let env = HeadroomEnv::new(AsicModel::Spectrum3.params());
        assert!(Generic
            .headroom(&HeadroomArgs::new(u64::MAX, 5.0), &env)
            .is_err());
        assert!(Generic
            .headroom(&HeadroomArgs::new(100_000, 1e9), &env)
            .is_err());
    }
}
