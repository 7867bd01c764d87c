//! SONiC's Mellanox headroom plugin (`buffer_headroom_mellanox.lua`, sonic-swss `e6b0c5b5`),
//! sonic-buffer.md §4.
//!
//! Invariants:
//! - bit-compatible: every intermediate is an IEEE-754 double computed in the plugin's
//!   operation order (§4.3, §4.6); only the final `xon`/`xoff`/`size` are converted to
//!   integers, and they are multiples of 1024;
//! - `xon = ceil(PL / 1024) * 1024`; `size = xon` with the shared headroom pool, else
//!   `ceil((xoff + xon + OVH) / 1024) * 1024`;
//! - also the VS model (SONiC's VS plugins are symlinks to these).
//!
//! Not monotone in every input: with the small-packet compensation (step 9) the result can
//! *drop* by 1024 B when a longer cable pushes `FULL - XOFF` below the compensation's margin
//! (e.g. Spectrum-6, 1G, 90 % small packets: 1258.5 m → xoff 47104, 1259 m → 46080). This is
//! SONiC's behaviour and is reproduced.

use headroom_mech::buffer::formula::{pause_quanta_for_speed, worst_case_cell_factor};

use super::{ceil_kb, to_u64, Headroom, HeadroomArgs, HeadroomEnv, HeadroomError, HeadroomModel};

/// Speed of light in the cable medium, m/s (the plugin's constant).
pub const LIGHT_SPEED_MEDIA_MPS: f64 = 198_000_000.0;
/// Minimal packet size, bytes.
pub const MIN_PACKET: f64 = 64.0;
/// Spectrum-6 xoff compensation, bytes.
pub const SPECTRUM6_XOFF_COMPENSATION: f64 = 18432.0;
/// Small-packet compensation, bytes.
pub const SMALL_PACKET_COMPENSATION: f64 = 2048.0;

/// The Mellanox plugin model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mellanox;

/// Every intermediate of one Mellanox computation (the plugin's variables, §4.2–§4.3).
#[derive(Clone, Debug, PartialEq)]
pub struct MellanoxTrace {
    /// `PL`: pipeline latency in bytes (doubled on 8-lane ports).
    pub pipeline_latency: f64,
    /// `OVH`: port MTU on 8-lane ports, else 0.
    pub overhead: f64,
    /// `MPD`: MAC/PHY delay in bytes.
    pub mac_phy_delay: f64,
    /// `PR`: peer response in bytes.
    pub peer_response: f64,
    /// `TILE`: Spectrum-4/5 tile term in bytes.
    pub tile: f64,
    /// `W`: worst-case cell factor (after `ceil`).
    pub worst_case_factor: f64,
    /// `SPB`: small-packet share (percent, byte-based as the plugin computes it).
    pub small_packet_share: f64,
    /// `OCC`: cell occupancy factor.
    pub occupancy: f64,
    /// `GB`: gearbox bytes.
    pub gearbox: f64,
    /// `CAB`: bytes on the cable, round trip.
    pub cable: f64,
    /// `PROP`: propagation delay in bytes.
    pub propagation: f64,
    /// `XOFF` after step 8 (rounded, Spectrum-6 compensation included), before step 9.
    pub xoff_uncompensated: f64,
    /// `FULL` of step 9, when evaluated.
    pub full: Option<f64>,
    /// Whether step 9 added its 2048 B.
    pub compensated: bool,
    /// Final `XON`.
    pub xon: f64,
    /// Final `XOFF`.
    pub xoff: f64,
    /// Final `SIZE`.
    pub size: f64,
}

impl Mellanox {
    /// Runs the plugin's steps and returns every intermediate value.
    pub fn trace(args: &HeadroomArgs, env: &HeadroomEnv) -> Result<MellanoxTrace, HeadroomError> {
        args.validate()?;
        env.validate()?;
        let asic = &env.asic;
        let s = args.speed_mbps as f64;
        let l = args.cable_m;
        let m = f64::from(args.port_mtu);
        let g = args.gearbox_delay_ns;
        let lm = f64::from(env.lossless_mtu);
        let p = f64::from(env.small_packet_percentage);
        let shp = env.shp_enabled;

        let mut pl = asic.pipeline_latency * 1024.0;
        let mpd = asic.mac_phy_delay * 1024.0;
        let pr = match pause_quanta_for_speed(args.speed_mbps) {
            Some(q) => q as f64 * 512.0 / 8.0,
            None => asic.peer_response_time * 1024.0,
        };
        let tile = if asic.has_tile_term() {
            s / 1000.0 * 120.0 / 8.0
        } else {
            0.0
        };

        // 1. 8-lane adjustment.
        let ovh = if args.lane_count == 8 {
            pl *= 2.0;
            m
        } else {
            0.0
        };
        // 2. Worst-case cell factor (ceil'd), shared with the simulator's formula.
        let w = worst_case_cell_factor(u64::from(asic.cell_size));
        // 3. Small-packet share and occupancy.
        let spb = 100.0 * MIN_PACKET / ((p * MIN_PACKET + (100.0 - p) * lm) / 100.0);
        let occ = (100.0 - spb + spb * w) / 100.0;
        // 4. Gearbox bytes.
        let gb = if g == 0.0 {
            0.0
        } else {
            s * g / (8.0 * 1024.0)
        };
        // 5. Bytes on cable, round trip, left to right.
        let cab = 2.0 * l * s * 1_000_000_000.0 / LIGHT_SPEED_MEDIA_MPS / (8.0 * 1000.0);
        // 6. Propagation delay.
        let prop = m + cab + 2.0 * gb + mpd + pr + tile;
        // 7. xoff.
        let mut xoff = ceil_kb(lm + prop * occ);
        // 8. Spectrum-6.
        if asic.is_spectrum6() {
            xoff += SPECTRUM6_XOFF_COMPENSATION;
        }
        let xoff_uncompensated = xoff;
        // 9. Small-packet compensation.
        let mut full = None;
        let mut compensated = false;
        if !shp && env.small_packet_percentage != 100 {
            let f = ceil_kb(lm + prop * w);
            full = Some(f);
            if xoff + SMALL_PACKET_COMPENSATION < f {
                xoff += SMALL_PACKET_COMPENSATION;
                compensated = true;
            }
        }
        // 10. xon.
        let xon = ceil_kb(pl);
        // 11. size.
        let size = ceil_kb(if shp { xon } else { xoff + xon + ovh });

        Ok(MellanoxTrace {
            pipeline_latency: pl,
            overhead: ovh,
            mac_phy_delay: mpd,
            peer_response: pr,
            tile,
            worst_case_factor: w,
            small_packet_share: spb,
            occupancy: occ,
            gearbox: gb,
            cable: cab,
            propagation: prop,
            xoff_uncompensated,
            full,
            compensated,
            xon,
            xoff,
            size,
        })
    }
}

impl HeadroomModel for Mellanox {
    fn name(&self) -> &'static str {
        "mellanox"
    }

    fn headroom(&self, args: &HeadroomArgs, env: &HeadroomEnv) -> Result<Headroom, HeadroomError> {
        let t = Mellanox::trace(args, env)?;
        Ok(Headroom {
            xon: to_u64(t.xon),
            xoff: to_u64(t.xoff),
            size: to_u64(t.size),
            dsh: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::state::AsicModel;

    fn env(m: AsicModel, p: u32, shp: bool) -> HeadroomEnv {
        HeadroomEnv {
            small_packet_percentage: p,
            shp_enabled: shp,
            ..HeadroomEnv::new(m.params())
        }
    }

    /// sonic-buffer.md §4.4, every intermediate.
    #[test]
    fn worked_example_spectrum3_100g_5m() {
        let t = Mellanox::trace(
            &HeadroomArgs::new(100_000, 5.0),
            &env(AsicModel::Spectrum3, 50, false),
        )
        .expect("computes");
        assert_eq!(t.worst_case_factor, 3.0);
        assert!((t.occupancy - 1.2352941).abs() < 1e-7);
        assert_eq!(t.peer_response, 25216.0);
        assert!((t.mac_phy_delay - 819.2).abs() < 1e-9);
        assert!((t.cable - 631.3131).abs() < 1e-4);
        assert!((t.propagation - 35766.5131).abs() < 1e-4);
        assert_eq!(t.xoff_uncompensated, 46080.0);
        assert_eq!(t.full, Some(108544.0));
        assert!(t.compensated);
        assert_eq!((t.xon, t.xoff, t.size), (19456.0, 48128.0, 67584.0));
    }

    #[test]
    fn derived_inputs_of_4_2() {
        let e = env(AsicModel::Spectrum4, 50, false);
        for (speed, pr, tile) in [
            (1000u64, 128.0, 15.0),
            (10000, 4288.0, 150.0),
            (25000, 5120.0, 375.0),
            (40000, 7552.0, 600.0),
            (50000, 9408.0, 750.0),
            (100000, 25216.0, 1500.0),
            (200000, 28992.0, 3000.0),
            (400000, 57920.0, 6000.0),
            (800000, 57920.0, 12000.0),
        ] {
            let t = Mellanox::trace(&HeadroomArgs::new(speed, 5.0), &e).expect("computes");
            assert_eq!((t.peer_response, t.tile), (pr, tile), "speed {speed}");
        }
        let t = Mellanox::trace(&HeadroomArgs::new(60000, 5.0), &e).expect("computes");
        assert!((t.peer_response - 3891.2).abs() < 1e-9);
        // OCC for P 50, LM 1024 by W; OCC = W for P 100.
        for (m, occ) in [
            (AsicModel::Spectrum1, 1.117647),
            (AsicModel::Spectrum2, 1.235294),
            (AsicModel::Spectrum6, 1.352941),
        ] {
            let t = Mellanox::trace(&HeadroomArgs::new(100000, 5.0), &env(m, 50, false))
                .expect("computes");
            assert!((t.occupancy - occ).abs() < 1e-6, "{m:?}");
            assert!((t.small_packet_share - 6400.0 / 544.0).abs() < 1e-12);
        }
        let t = Mellanox::trace(
            &HeadroomArgs::new(100000, 5.0),
            &env(AsicModel::Spectrum2, 100, false),
        )
        .expect("computes");
        assert_eq!((t.small_packet_share, t.occupancy), (100.0, 3.0));
    }

    #[test]
    fn xon_values_of_step_10() {
        for (m, lanes, xon) in [
            (AsicModel::Spectrum2, 4, 19456),
            (AsicModel::Spectrum2, 8, 38912),
            (AsicModel::Spectrum6, 4, 43008),
            (AsicModel::Spectrum6, 8, 86016),
            (AsicModel::Vs, 4, 18432),
            (AsicModel::Vs, 8, 36864),
        ] {
            let a = HeadroomArgs {
                lane_count: lanes,
                ..HeadroomArgs::new(100000, 5.0)
            };
            let h = Mellanox.headroom(&a, &env(m, 50, false)).expect("computes");
            assert_eq!(h.xon, xon, "{m:?} {lanes} lanes");
        }
    }

    #[test]
    fn eight_lanes_add_the_port_mtu_to_size() {
        let e = env(AsicModel::Spectrum4, 50, false);
        let four = Mellanox
            .headroom(&HeadroomArgs::new(400000, 5.0), &e)
            .expect("computes");
        let eight = Mellanox
            .headroom(
                &HeadroomArgs {
                    lane_count: 8,
                    ..HeadroomArgs::new(400000, 5.0)
                },
                &e,
            )
            .expect("computes");
        assert_eq!(eight.xoff, four.xoff);
        assert_eq!(eight.xon, 2 * four.xon);
        assert_eq!(
            eight.size,
            (eight.xoff + eight.xon + 9100).div_ceil(1024) * 1024
        );
    }

    #[test]
    fn gearbox_adds_twice_its_bytes() {
        let e = env(AsicModel::Spectrum2, 100, false);
        let a = HeadroomArgs {
            gearbox_delay_ns: 400.0,
            ..HeadroomArgs::new(100000, 5.0)
        };
        let with = Mellanox::trace(&a, &e).expect("computes");
        let without = Mellanox::trace(&HeadroomArgs::new(100000, 5.0), &e).expect("computes");
        assert_eq!(with.gearbox, 100000.0 * 400.0 / 8192.0);
        assert!((with.propagation - without.propagation - 2.0 * with.gearbox).abs() < 1e-9);
    }

    #[test]
    fn known_non_monotone_point() {
        // Spectrum-6, 1G, 90 % small packets: the compensation switches off at 1259 m.
        let e = env(AsicModel::Spectrum6, 90, false);
        let a = Mellanox
            .headroom(&HeadroomArgs::new(1000, 1258.5), &e)
            .expect("computes");
        let b = Mellanox
            .headroom(&HeadroomArgs::new(1000, 1259.0), &e)
            .expect("computes");
        assert_eq!((a.xoff, b.xoff), (47104, 46080));
    }
}
