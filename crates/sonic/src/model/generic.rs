//! The "well-known formula" of SONiC's design document (seed 003, "The well-known formula"),
//! as written there:
//!
//! ```text
//! worst case factor W = cell / 64            if cell > 2 × 64
//!                     = (2 × cell) / (1 + cell)  otherwise
//! cell occupancy      = (100 − P + P × W) / 100            (P = small_packet_percentage)
//! kb on cable         = cable length / speed of light in media × port speed   (one way)
//! kb on gearbox       = port speed × gearbox delay / 8 / 1024
//! peer response       = pause_quanta(speed) × 512 / 8      if the speed has a quanta entry
//!                     = ASIC peer_response_time             otherwise
//! propagation delay   = port mtu + 2 × (kb on cable + kb on gearbox) + mac/phy delay
//!                       + peer response
//! xon                 = pipeline latency
//! xoff                = lossless mtu + propagation delay × cell occupancy
//! size                = xoff + xon   (xon when the shared headroom pool is enabled)
//! ```
//!
//! Invariants: every intermediate is an `f64` evaluated in the order written above; only the
//! final `xon` and `xoff` are rounded. No term of SONiC's Mellanox plugin that the seed does not
//! have is added (no `ceil` on `W`, no byte-based small-packet share, no 1024-byte rounding, no
//! 8-lane, tile or compensation terms). The result is non-decreasing in cable length and, for
//! the speeds of the pause-quanta table, in speed.
//!
//! Choices the seed leaves open (documented differences from a literal reading):
//! - **Units.** Port speed is CONFIG_DB's Mb/s, so bytes on the cable are
//!   `L / c × S × 10⁶ / 8`; the speed of light in the medium is SONiC's constant
//!   [`LIGHT_SPEED_MEDIA_MPS`] (1.98·10⁸ m/s; the seed names no value). The gearbox term is
//!   taken literally, `S × G / 8 / 1024` with `G` in ns, and added as bytes (as SONiC's plugin
//!   does).
//! - **kB values.** `pipeline_latency`, `mac_phy_delay` and `peer_response_time` are read in kB
//!   of 1024 bytes, as SONiC's ASIC tables hold them (`0.8` → 819.2 B, `3.8` → 3891.2 B; the
//!   seed's schema calls `mac_phy_delay` bytes, which the real tables contradict). They are not
//!   rounded before the end.
//! - **Pause quanta.** The IEEE 802.3 31B.3.7 table of sonic-buffer.md §4.1
//!   ([`pause_quanta_for_speed`]); the seed refers to a table it does not reproduce.
//! - **Rounding.** `xoff = ceil(...)` and `xon = ceil(pipeline_latency × 1024)` to whole bytes
//!   (up, so the headroom is never under-reserved); nothing else is rounded.
//! - Inputs are bounded (speed ≤ [`MAX_SPEED_MBPS`], cable ≤ [`MAX_CABLE_M`]) so the result
//!   fits a `u64` exactly.
//!
//! `headroom_mech::buffer::formula::sonic_generic` (the simulator's version) is deliberately not
//! used: it `ceil`s `W` (2.25 → 3 for 144-byte cells), rounds the cable delay to picoseconds,
//! uses a physical gearbox term (`rate × delay / 8`, no `/1024`) and takes the kB values
//! pre-rounded to whole bytes, so it is not the seed's formula as written.

use headroom_mech::buffer::formula::pause_quanta_for_speed;

use super::mellanox::LIGHT_SPEED_MEDIA_MPS;
use super::{to_u64, Headroom, HeadroomArgs, HeadroomEnv, HeadroomError, HeadroomModel};

/// Largest speed the generic and DSH models accept, Mb/s (10 Tb/s).
pub const MAX_SPEED_MBPS: u64 = 10_000_000;
/// Longest cable the generic and DSH models accept, metres (100 km).
pub const MAX_CABLE_M: f64 = 100_000.0;

/// The seed's minimal packet size, bytes.
const MIN_PACKET: f64 = 64.0;

/// The seed's well-known formula.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generic;

/// Every intermediate of one generic computation, in bytes unless stated.
#[derive(Clone, Debug, PartialEq)]
pub struct GenericTrace {
    /// Worst-case cell factor `W` (not rounded).
    pub worst_case_factor: f64,
    /// Cell occupancy (a factor).
    pub occupancy: f64,
    /// Bytes on the cable, one way.
    pub cable: f64,
    /// Gearbox bytes, one way.
    pub gearbox: f64,
    /// MAC/PHY delay.
    pub mac_phy: f64,
    /// Peer response.
    pub peer_response: f64,
    /// Propagation delay.
    pub propagation: f64,
    /// `lossless mtu + propagation × occupancy`, before rounding.
    pub xoff_exact: f64,
}

/// Checks the bounds of the generic and DSH models.
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
    /// The seed's formula step by step (see the module docs).
    pub fn trace(args: &HeadroomArgs, env: &HeadroomEnv) -> Result<GenericTrace, HeadroomError> {
        check_bounds(args)?;
        env.validate()?;
        let cell = f64::from(env.asic.cell_size);
        let w = if cell > 2.0 * MIN_PACKET {
            cell / MIN_PACKET
        } else {
            (2.0 * cell) / (1.0 + cell)
        };
        let p = f64::from(env.small_packet_percentage);
        let occupancy = (100.0 - p + p * w) / 100.0;
        let speed = args.speed_mbps as f64;
        let cable = args.cable_m / LIGHT_SPEED_MEDIA_MPS * (speed * 1e6) / 8.0;
        let gearbox = speed * args.gearbox_delay_ns / 8.0 / 1024.0;
        let peer_response = match pause_quanta_for_speed(args.speed_mbps) {
            Some(q) => q as f64 * 512.0 / 8.0,
            None => env.asic.peer_response_time * 1024.0,
        };
        let mac_phy = env.asic.mac_phy_delay * 1024.0;
        let propagation =
            f64::from(args.port_mtu) + 2.0 * (cable + gearbox) + mac_phy + peer_response;
        let xoff_exact = f64::from(env.lossless_mtu) + propagation * occupancy;
        Ok(GenericTrace {
            worst_case_factor: w,
            occupancy,
            cable,
            gearbox,
            mac_phy,
            peer_response,
            propagation,
            xoff_exact,
        })
    }
}

impl HeadroomModel for Generic {
    fn name(&self) -> &'static str {
        "generic"
    }

    fn headroom(&self, args: &HeadroomArgs, env: &HeadroomEnv) -> Result<Headroom, HeadroomError> {
        let t = Generic::trace(args, env)?;
        let xoff = to_u64(t.xoff_exact.ceil());
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

    fn env(asic: AsicModel, p: u32) -> HeadroomEnv {
        HeadroomEnv {
            small_packet_percentage: p,
            ..HeadroomEnv::new(asic.params())
        }
    }

    fn xoff(asic: AsicModel, p: u32, args: &HeadroomArgs) -> u64 {
        Generic
            .headroom(args, &env(asic, p))
            .expect("computes")
            .xoff
    }

    /// Spectrum-3 (cell 144), 100G, 5 m, MTU 9100, P 50, lossless MTU 1024, by hand:
    /// W = 144/64 = 2.25 (not ceil'd), occupancy = (50 + 50 × 2.25)/100 = 1.625;
    /// cable = 5 / 1.98e8 × 1e11 / 8 = 315.6566 B one way; peer = 394 × 512 / 8 = 25216;
    /// mac/phy = 0.8 × 1024 = 819.2; propagation = 9100 + 2 × 315.6566 + 819.2 + 25216
    /// = 35766.5131; xoff = ceil(1024 + 35766.5131 × 1.625) = ceil(59144.58) = 59145.
    #[test]
    fn spectrum3_100g_5m_by_hand() {
        let a = HeadroomArgs::new(100_000, 5.0);
        let t = Generic::trace(&a, &env(AsicModel::Spectrum3, 50)).expect("trace");
        assert_eq!(t.worst_case_factor, 2.25);
        assert_eq!(t.occupancy, 1.625);
        assert!((t.cable - 315.656_565_656_565_6).abs() < 1e-9);
        assert_eq!(t.peer_response, 25216.0);
        assert!((t.mac_phy - 819.2).abs() < 1e-12);
        assert!((t.propagation - 35_766.513_131_313_13).abs() < 1e-8);
        let h = Generic
            .headroom(&a, &env(AsicModel::Spectrum3, 50))
            .expect("computes");
        assert_eq!(
            h,
            Headroom {
                xon: 19456,
                xoff: 59145,
                size: 59145 + 19456,
                dsh: None
            }
        );
        // With the shared headroom pool the size is xon.
        let shp = HeadroomEnv {
            shp_enabled: true,
            ..env(AsicModel::Spectrum3, 50)
        };
        assert_eq!(Generic.headroom(&a, &shp).map(|h| h.size), Ok(19456));
    }

    /// Spectrum-1 (cell 96 ≤ 128): W = 192/97; 25G, 40 m, gearbox 400 ns.
    /// cable = 40 / 1.98e8 × 2.5e10 / 8 = 631.3131; gearbox = 25000 × 400 / 8 / 1024 = 1220.7031;
    /// peer = 80 × 64 = 5120; propagation = 9100 + 2 × (631.3131 + 1220.7031) + 819.2 + 5120
    /// = 18743.2325; occupancy = (50 + 50 × 1.979381)/100 = 1.489691;
    /// xoff = ceil(1024 + 18743.2325 × 1.489691) = ceil(28945.62) = 28946.
    #[test]
    fn spectrum1_25g_40m_gearbox_by_hand() {
        let a = HeadroomArgs {
            gearbox_delay_ns: 400.0,
            ..HeadroomArgs::new(25_000, 40.0)
        };
        let w: f64 = 192.0 / 97.0;
        let occ = (50.0 + 50.0 * w) / 100.0;
        let cable = 40.0 / 1.98e8 * 25e9 / 8.0;
        let gearbox = 25_000.0 * 400.0 / 8.0 / 1024.0;
        let prop = 9100.0 + 2.0 * (cable + gearbox) + 819.2 + 5120.0;
        let exact = 1024.0 + prop * occ;
        assert!((exact - 28_945.619_567_778).abs() < 1e-6);
        assert_eq!(xoff(AsicModel::Spectrum1, 50, &a), 28946);
    }

    /// Spectrum-4 (cell 192, W = 3), 400G, 300 m: cable = 300 / 1.98e8 × 4e11 / 8 = 75757.5758;
    /// peer = 905 × 64 = 57920; propagation = 9100 + 151515.1515 + 819.2 + 57920 = 219354.3515;
    /// occupancy = 2; xoff = ceil(1024 + 438708.7030) = 439733 (no tile or 8-lane terms).
    #[test]
    fn spectrum4_400g_300m_by_hand() {
        assert_eq!(
            xoff(AsicModel::Spectrum4, 50, &HeadroomArgs::new(400_000, 300.0)),
            439_733
        );
        let eight = HeadroomArgs {
            lane_count: 8,
            ..HeadroomArgs::new(400_000, 300.0)
        };
        let h = Generic
            .headroom(&eight, &env(AsicModel::Spectrum4, 50))
            .expect("computes");
        assert_eq!((h.xon, h.xoff), (19456, 439_733));
    }

    /// A speed without a pause-quanta entry (60G) takes peer_response_time: 3.8 × 1024 = 3891.2.
    /// Spectrum-2, 2.5 m, port MTU 1500, P 100 (occupancy = W = 2.25):
    /// propagation = 1500 + 2 × 94.6970 + 819.2 + 3891.2 = 6399.7939;
    /// xoff = ceil(1024 + 6399.7939 × 2.25) = ceil(15423.54) = 15424.
    #[test]
    fn default_peer_response_by_hand() {
        let a = HeadroomArgs {
            port_mtu: 1500,
            ..HeadroomArgs::new(60_000, 2.5)
        };
        let t = Generic::trace(&a, &env(AsicModel::Spectrum2, 100)).expect("trace");
        assert!((t.peer_response - 3891.2).abs() < 1e-9);
        assert_eq!(xoff(AsicModel::Spectrum2, 100, &a), 15424);
    }

    /// VS (cell 128 is not > 128): W = 256/129; xon = 18 × 1024 = 18432.
    #[test]
    fn vs_by_hand() {
        let h = Generic
            .headroom(&HeadroomArgs::new(100_000, 5.0), &env(AsicModel::Vs, 100))
            .expect("computes");
        let prop: f64 = 9100.0 + 2.0 * (5.0 / 1.98e8 * 1e11 / 8.0) + 819.2 + 25216.0;
        let expect = (1024.0 + prop * (256.0 / 129.0)).ceil() as u64;
        assert_eq!(expect, 72003);
        assert_eq!((h.xon, h.xoff, h.size), (18432, 72003, 90435));
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
