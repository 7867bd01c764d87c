//! How much headroom a lossless ingress queue needs: the bytes that still arrive after the
//! switch decides to send XOFF.
//!
//! Three public formulas, which count different delays:
//! - [`pfc_guide`]: the PFC configuration guide's sum (seed 004);
//! - [`dsh_eta`]: the DSH paper's Eq. 1;
//! - [`sonic_generic`]: SONiC's well-known formula (MAC/PHY, gearbox, cable, peer response
//!   from pause quanta, cell occupancy of small packets).
//!
//! Every function is exact integer arithmetic except SONiC's, which is specified in
//! floating point and rounded up at the end. All results are bytes, rounded up, and
//! saturate at `u64::MAX` (inputs come from users and may be absurd; such a headroom is
//! then refused as larger than any buffer).

use crate::units::{Rate, Time};
use serde::Serialize;

/// Default propagation speed in copper and fibre, metres per second (5 ns/m).
pub const DEFAULT_PROPAGATION_MPS: f64 = 2.0e8;

/// The PFC guide's peer response: bytes a peer sends after PAUSE arrives, before it stops.
pub const PEER_RESPONSE_BYTES: u64 = 3840;

/// The largest frame a chip may be transmitting when it decides XOFF (any queue).
pub const MAX_FRAME_BYTES: u64 = 9216;

/// One-way propagation delay of a cable of `metres` at `speed_mps` metres per second,
/// rounded to the nearest picosecond.
pub fn cable_delay(metres: f64, speed_mps: f64) -> Time {
    Time((metres / speed_mps * 1e12).round().max(0.0) as u64)
}

/// Bytes on a cable in one direction: `rate * delay`, rounded up.
pub fn bytes_on_cable(rate: Rate, one_way: Time) -> u64 {
    let bits_ps = u128::from(rate.bps()) * u128::from(one_way.as_ps());
    let b = bits_ps.div_ceil(8 * 1_000_000_000_000u128);
    u64::try_from(b).unwrap_or(u64::MAX)
}

/// The PFC guide: `MTU_R + MTU_S + Response + 2 × link_delay` (link delay in bytes).
///
/// `mtu_r`: the largest frame this chip may be transmitting when it decides XOFF (9216 B in
/// the guide), `mtu_s`: the largest frame of the paused priority the peer may have just
/// started, `response`: bytes the peer sends between receiving PAUSE and stopping (3840 B).
pub fn pfc_guide(rate: Rate, one_way: Time, mtu_r: u64, mtu_s: u64, response: u64) -> u64 {
    mtu_r
        .saturating_add(mtu_s)
        .saturating_add(response)
        .saturating_add(bytes_on_cable(rate, one_way).saturating_mul(2))
}

/// The DSH paper's eta: `2 × (C × D_prop + L_MTU) + 3840 B`.
pub fn dsh_eta(rate: Rate, one_way: Time, mtu: u64) -> u64 {
    bytes_on_cable(rate, one_way)
        .saturating_add(mtu)
        .saturating_mul(2)
        .saturating_add(PEER_RESPONSE_BYTES)
}

/// Pause quanta a MAC may take to stop after a PAUSE (IEEE 802.3 31B.3.7), by speed in
/// Mb/s; `None` for speeds the table does not list.
pub fn pause_quanta_for_speed(mbps: u64) -> Option<u64> {
    Some(match mbps {
        100 => 1,
        1_000 => 2,
        10_000 => 67,
        25_000 => 80,
        40_000 => 118,
        50_000 => 147,
        100_000 => 394,
        200_000 => 453,
        400_000 | 800_000 => 905,
        _ => return None,
    })
}

/// Inputs of SONiC's well-known formula.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SonicInputs {
    /// Port speed.
    pub rate: Rate,
    /// One-way cable delay (cable length / speed of light in the medium).
    pub one_way: Time,
    /// Port MTU in bytes (SONiC default 9100).
    pub port_mtu: u64,
    /// Lossless MTU (largest frame of lossless traffic), bytes.
    pub lossless_mtu: u64,
    /// MMU cell size in bytes.
    pub cell_bytes: u64,
    /// Share of small (64 B) packets in percent (0..=100).
    pub small_packet_percent: u64,
    /// Bytes held in the MAC/PHY pipeline.
    pub mac_phy_bytes: u64,
    /// Gearbox delay, zero if none.
    pub gearbox_delay: Time,
    /// Peer response used when the speed has no pause-quanta entry, bytes.
    pub default_peer_response: u64,
}

/// SONiC's worst-case cell factor: how many cells a minimal (64 B) packet may waste.
pub fn worst_case_cell_factor(cell_bytes: u64) -> f64 {
    let c = cell_bytes as f64;
    let w = if cell_bytes > 128 {
        c / 64.0
    } else {
        2.0 * c / (1.0 + c)
    };
    w.ceil()
}

/// SONiC's well-known formula (seed 003): `xoff = lossless_mtu + propagation × occupancy`
/// with `propagation = port_mtu + 2 × (cable + gearbox) + mac_phy + peer_response`.
pub fn sonic_generic(i: &SonicInputs) -> u64 {
    let w = worst_case_cell_factor(i.cell_bytes);
    let p = i.small_packet_percent.min(100) as f64;
    let occupancy = (100.0 - p + p * w) / 100.0;
    let cable = i.rate.as_f64() * i.one_way.as_secs_f64() / 8.0;
    let gearbox = i.rate.as_f64() * i.gearbox_delay.as_secs_f64() / 8.0;
    let peer = pause_quanta_for_speed(i.rate.bps() / 1_000_000)
        .map(|q| q * 512 / 8)
        .unwrap_or(i.default_peer_response) as f64;
    let propagation = i.port_mtu as f64 + 2.0 * (cable + gearbox) + i.mac_phy_bytes as f64 + peer;
    (i.lossless_mtu as f64 + propagation * occupancy).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsh_paper_example() {
        // The DSH paper's microbenchmark: 100 Gb/s, 2 us, MTU 1500 -> 56,840 B.
        assert_eq!(
            dsh_eta(Rate::from_gbps(100), Time::from_us(2), 1500),
            56_840
        );
    }

    #[test]
    fn pfc_guide_sums_its_terms() {
        // 100 m at 5 ns/m = 500 ns = 6250 B at 100 Gb/s.
        let d = cable_delay(100.0, DEFAULT_PROPAGATION_MPS);
        assert_eq!(d, Time::from_ns(500));
        assert_eq!(
            pfc_guide(
                Rate::from_gbps(100),
                d,
                MAX_FRAME_BYTES,
                1500,
                PEER_RESPONSE_BYTES
            ),
            9216 + 1500 + 3840 + 12_500
        );
    }

    #[test]
    fn bytes_on_cable_rounds_up() {
        assert_eq!(bytes_on_cable(Rate::from_gbps(100), Time::from_ps(1)), 1);
        assert_eq!(
            bytes_on_cable(Rate::from_gbps(100), Time::from_ns(80)),
            1000
        );
    }

    #[test]
    fn worst_case_factor_table() {
        for (c, w) in [(96, 2.0), (128, 2.0), (144, 3.0), (192, 3.0), (256, 4.0)] {
            assert_eq!(worst_case_cell_factor(c), w, "cell {c}");
        }
    }

    #[test]
    fn sonic_generic_counts_each_term() {
        let base = SonicInputs {
            rate: Rate::from_gbps(100),
            one_way: cable_delay(5.0, 1.98e8),
            port_mtu: 9100,
            lossless_mtu: 1024,
            cell_bytes: 144,
            small_packet_percent: 0,
            mac_phy_bytes: 819,
            gearbox_delay: Time::ZERO,
            default_peer_response: 3891,
        };
        // With no small packets occupancy is 1: a plain sum.
        let cable = 100e9 * 5.0 / 1.98e8 / 8.0;
        let expect: f64 = 1024.0 + 9100.0 + 2.0 * cable + 819.0 + 394.0 * 64.0;
        assert_eq!(sonic_generic(&base), expect.ceil() as u64);
        // Small packets raise it by the occupancy factor.
        let small = SonicInputs {
            small_packet_percent: 50,
            ..base.clone()
        };
        assert!(sonic_generic(&small) > sonic_generic(&base));
        // A speed without a quanta entry uses the default peer response.
        let odd = SonicInputs {
            rate: Rate::from_gbps(60),
            ..base
        };
        let cable60 = 60e9 * 5.0 / 1.98e8 / 8.0;
        let expect60: f64 = 1024.0 + 9100.0 + 2.0 * cable60 + 819.0 + 3891.0;
        assert_eq!(sonic_generic(&odd), expect60.ceil() as u64);
    }
}
