//! Switch parameters: the headroom each lossless PG gets and the scheme that provides it,
//! the ingress alpha, egress scheduling and admission, and the MMU a switch gets from them.

use super::EcnConfig;
use headroom_mech::buffer::formula::{self, SonicInputs};
use headroom_mech::buffer::mmu::{MmuConfig, PrivateReservation, Reservation, StaticThresholds};
use headroom_mech::buffer::Alpha;
use headroom_mech::pfc::PfcConfig;
use headroom_mech::units::{Rate, Time};
use serde::Serialize;
use std::collections::BTreeMap;

/// How much headroom each lossless PG of a port gets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum HeadroomSizing {
    /// A fixed number of bytes on every port.
    Fixed(u64),
    /// The PFC guide's formula from each port's rate and delay, with the given MTUs.
    PfcGuide {
        /// Largest frame this chip may be sending (any queue).
        mtu_r: u64,
        /// Largest frame of the paused class.
        mtu_s: u64,
        /// Peer response bytes.
        response: u64,
    },
    /// The DSH paper's eta: `2 (C D + MTU) + 3840`.
    Dsh {
        /// MTU.
        mtu: u64,
    },
    /// SONiC's well-known formula; rate, delay and cell size come from the port and switch.
    SonicGeneric {
        /// Port MTU.
        port_mtu: u64,
        /// Lossless MTU.
        lossless_mtu: u64,
        /// Small-packet percentage.
        small_packet_percent: u64,
        /// MAC/PHY bytes.
        mac_phy_bytes: u64,
        /// Gearbox delay.
        gearbox_delay: Time,
        /// Peer response for speeds without a quanta entry.
        default_peer_response: u64,
    },
    /// The ns-3 HPCC simulator's switch: `3 × rate × delay` per port.
    HpccCompat,
}

impl HeadroomSizing {
    /// Headroom in bytes for a port of `rate` and one-way `delay`, with `cell_bytes` cells.
    pub fn bytes(&self, rate: Rate, delay: Time, cell_bytes: u32) -> u64 {
        match self {
            HeadroomSizing::Fixed(b) => *b,
            HeadroomSizing::PfcGuide {
                mtu_r,
                mtu_s,
                response,
            } => formula::pfc_guide(rate, delay, *mtu_r, *mtu_s, *response),
            HeadroomSizing::Dsh { mtu } => formula::dsh_eta(rate, delay, *mtu),
            HeadroomSizing::SonicGeneric {
                port_mtu,
                lossless_mtu,
                small_packet_percent,
                mac_phy_bytes,
                gearbox_delay,
                default_peer_response,
            } => formula::sonic_generic(&SonicInputs {
                rate,
                one_way: delay,
                port_mtu: *port_mtu,
                lossless_mtu: *lossless_mtu,
                cell_bytes: u64::from(cell_bytes),
                small_packet_percent: *small_packet_percent,
                mac_phy_bytes: *mac_phy_bytes,
                gearbox_delay: *gearbox_delay,
                default_peer_response: *default_peer_response,
            }),
            HeadroomSizing::HpccCompat => 3 * formula::bytes_on_cable(rate, delay),
        }
    }

    /// The largest lossless frame the formula assumes, with the key that sets it (`None`:
    /// the formula has no frame term).
    pub fn lossless_frame(&self) -> Option<(&'static str, u64)> {
        match self {
            HeadroomSizing::PfcGuide { mtu_s, .. } => Some(("mtu_s", *mtu_s)),
            HeadroomSizing::Dsh { mtu } => Some(("mtu", *mtu)),
            HeadroomSizing::SonicGeneric { lossless_mtu, .. } => {
                Some(("lossless_mtu", *lossless_mtu))
            }
            HeadroomSizing::Fixed(_) | HeadroomSizing::HpccCompat => None,
        }
    }
}

/// The headroom scheme of every switch, before it is resolved per switch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum SchemeConfig {
    /// Static, individual headroom (eta per lossless PG, reserved as `reservation` says).
    Sih,
    /// A shared headroom pool.
    Shp(ShpPool),
    /// Dynamic and shared headroom.
    Dsh {
        /// Queue-level hysteresis, bytes.
        delta_q: u64,
        /// Port-level hysteresis, bytes.
        delta_p: u64,
    },
}

/// How large SHP's headroom pool is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ShpPool {
    /// A fixed size in bytes.
    Bytes(u64),
    /// SONiC's over-subscription: the sum of every lossless PG's eta divided by the ratio.
    Ratio(f64),
}

impl SchemeConfig {
    /// Short lower-case name: `sih`, `shp` or `dsh`.
    pub fn name(&self) -> &'static str {
        match self {
            SchemeConfig::Sih => "sih",
            SchemeConfig::Shp(_) => "shp",
            SchemeConfig::Dsh { .. } => "dsh",
        }
    }

    /// The MMU scheme of a switch whose lossless PGs have eta `etas` (one per port) and
    /// `n_lossless` lossless priorities.
    pub fn resolve(
        &self,
        reservation: Reservation,
        etas: &[u64],
        n_lossless: u32,
    ) -> headroom_mech::buffer::HeadroomScheme {
        use headroom_mech::buffer::HeadroomScheme as H;
        match self {
            SchemeConfig::Sih => H::Sih { reservation },
            SchemeConfig::Shp(ShpPool::Bytes(b)) => H::Shp { pool_bytes: *b },
            SchemeConfig::Shp(ShpPool::Ratio(r)) => {
                // Saturating: a fixed headroom may be any size up to u64::MAX bytes; a
                // saturated pool is then refused by the MMU as over-committed.
                let xoff_sum = etas
                    .iter()
                    .fold(0u64, |sum, &e| sum.saturating_add(e))
                    .saturating_mul(u64::from(n_lossless));
                H::Shp {
                    pool_bytes: (xoff_sum as f64 / r.max(f64::MIN_POSITIVE)).ceil() as u64,
                }
            }
            SchemeConfig::Dsh { delta_q, delta_p } => H::Dsh {
                delta_q_bytes: *delta_q,
                delta_p_bytes: *delta_p,
            },
        }
    }
}

/// How the ingress alpha of each port is chosen.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum AlphaPolicy {
    /// The same alpha on every port.
    Fixed(Alpha),
    /// The ns-3 HPCC simulator's rule: `base` at `nic_rate`, doubled for each doubling of
    /// the port rate above it.
    ScaledByRate {
        /// Alpha at the NIC rate.
        base: Alpha,
        /// The NIC rate.
        nic_rate: Rate,
    },
}

impl AlphaPolicy {
    /// The alpha of a port of `rate`.
    pub fn for_rate(&self, rate: Rate) -> Alpha {
        match self {
            AlphaPolicy::Fixed(a) => *a,
            AlphaPolicy::ScaledByRate { base, nic_rate } => {
                let mut a = *base;
                let mut r = nic_rate.bps().max(1);
                // Checked: a port rate may be close to u64::MAX bit/s.
                while r.checked_mul(2).is_some_and(|d| d <= rate.bps()) {
                    a = a.doubled();
                    r *= 2;
                }
                a
            }
        }
    }
}

/// Egress scheduling between the eight queues of a port.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedulerConfig {
    /// Bit i set: queue i is served by strict priority (higher index first) before any
    /// DWRR queue.
    pub strict: u8,
    /// DWRR quantum in bytes per round, scaled by each queue's weight.
    pub quantum: u64,
    /// DWRR weight per queue.
    pub weights: [u32; 8],
    /// Order within a queue.
    pub arbitration: Arbitration,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            strict: 1 << 7,
            quantum: 1600,
            weights: [1; 8],
            arbitration: Arbitration::Fifo,
        }
    }
}

/// The order in which a switch egress queue sends what it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arbitration {
    /// Arrival order (an output-queued switch).
    #[default]
    Fifo,
    /// Round-robin over the input ports with packets queued (an input-queued switch whose
    /// output arbiter is fair to ports: the flow-channel patent's Fig. 6A baseline).
    InputPort,
    /// Round-robin over the flows with packets queued (flow-channel arbitration).
    Flow,
    /// Round-robin over applications, then over each application's flows (the
    /// flow-channel patent's ILID → APPG → flow channel arbitration at the ingress edge):
    /// a flow that entered the switch from a host is in its application's group, one that
    /// came from another switch in group 0 (a fabric port's traffic).
    Application,
}

impl Arbitration {
    /// Every arbitration, by its scenario name.
    pub const NAMES: [(&'static str, Arbitration); 4] = [
        ("fifo", Arbitration::Fifo),
        ("input-port", Arbitration::InputPort),
        ("flow", Arbitration::Flow),
        ("application", Arbitration::Application),
    ];
}

/// When a switch routes a frame and charges its cells to the buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Admission {
    /// At the frame's first bit, as a chip that writes cells while they arrive: an XOFF
    /// decision charges to headroom exactly the frames that begin after it (what the headroom
    /// formulas budget). The frame still leaves no earlier than its last bit.
    #[default]
    FirstBit,
    /// At the frame's last bit, as the ns-3 HPCC simulator's switch does: a frame mostly
    /// received before an XOFF decision is charged to headroom whole (up to one frame more
    /// than the formulas budget). One event per frame and hop instead of two when the egress
    /// is idle; used for `--hpcc-config` runs so they compare with that simulator.
    LastBit,
}

/// Switch parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SwitchConfig {
    /// Shared buffer size per switch, bytes.
    pub buffer_bytes: u64,
    /// MMU cell size, bytes.
    pub cell_bytes: u32,
    /// Private bytes per ingress PG.
    pub private_bytes: u64,
    /// eta: headroom per lossless PG (SIH, SHP) or insurance per port (DSH).
    pub headroom: HeadroomSizing,
    /// Where SIH's static headroom is reserved.
    pub reservation: Reservation,
    /// How headroom is provided: SIH, SHP or DSH.
    pub scheme: SchemeConfig,
    /// Ports of the switch chip, when it has more than the topology connects: headroom is
    /// reserved for every port of the chip (unconnected ones like its most common connected
    /// port), as a real switch does.
    pub chip_ports: Option<usize>,
    /// Ingress alpha per port.
    pub alpha: AlphaPolicy,
    /// Egress alpha of lossy queues.
    pub egress_alpha: Alpha,
    /// XON offset, bytes.
    pub xon_offset: u64,
    /// Fixed PFC thresholds instead of the dynamic one (`[switch.pfc] xoff`, `xon`).
    pub static_pfc: Option<StaticThresholds>,
    /// Bit i set: priority i is lossless.
    pub lossless: u8,
    /// PAUSE generation.
    pub pfc: PfcConfig,
    /// Bytes a transmitter still sends after a PAUSE arrives (its response time, as bytes
    /// at its own rate).
    pub response_bytes: u64,
    /// Egress scheduler.
    pub scheduler: SchedulerConfig,
    /// ECN marking.
    pub ecn: EcnConfig,
    /// When frames are admitted to the buffer.
    pub admission: Admission,
    /// The PFC watchdog of every lossless egress queue (`None`: off).
    pub watchdog: Option<headroom_mech::pfcwd::WatchdogConfig>,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer_bytes: 32 << 20,
            cell_bytes: 80,
            private_bytes: 0,
            headroom: HeadroomSizing::PfcGuide {
                mtu_r: formula::MAX_FRAME_BYTES,
                mtu_s: formula::MAX_FRAME_BYTES,
                response: formula::PEER_RESPONSE_BYTES,
            },
            reservation: Reservation::PerPg,
            scheme: SchemeConfig::Sih,
            chip_ports: None,
            alpha: AlphaPolicy::Fixed(
                Alpha::from_dynamic_th(-3)
                    .unwrap_or_else(|_| unreachable!("-3 is within dynamic_th's range")),
            ),
            egress_alpha: Alpha::from_dynamic_th(0)
                .unwrap_or_else(|_| unreachable!("0 is within dynamic_th's range")),
            xon_offset: 3 * 1024,
            static_pfc: None,
            lossless: 1 << 3,
            pfc: PfcConfig::default(),
            response_bytes: formula::PEER_RESPONSE_BYTES,
            scheduler: SchedulerConfig::default(),
            ecn: EcnConfig::default(),
            admission: Admission::default(),
            watchdog: None,
        }
    }
}

impl SwitchConfig {
    /// The MMU of a switch whose connected ports have the rates and delays `ports`, in port
    /// order: a headroom and an alpha per port, and the same for every port of the chip
    /// the topology leaves unconnected (`chip_ports`), as ports of the switch's most common
    /// connected kind (ties: the slowest), because a real switch reserves for them too.
    pub fn mmu_config(&self, ports: &[(Rate, Time)]) -> MmuConfig {
        let mut etas: Vec<u64> = ports
            .iter()
            .map(|&(rate, delay)| self.headroom.bytes(rate, delay, self.cell_bytes))
            .collect();
        let mut alphas: Vec<Alpha> = ports
            .iter()
            .map(|&(rate, _)| self.alpha.for_rate(rate))
            .collect();
        // Counted once per rate: a switch may have 100,000 ports.
        let mut per_rate: BTreeMap<Rate, usize> = BTreeMap::new();
        for &(rate, _) in ports {
            *per_rate.entry(rate).or_default() += 1;
        }
        let typical = ports
            .iter()
            .copied()
            .max_by_key(|&(r, _)| (per_rate.get(&r).copied(), std::cmp::Reverse(r)));
        if let (Some(n), Some((rate, delay))) = (self.chip_ports, typical) {
            while etas.len() < n {
                etas.push(self.headroom.bytes(rate, delay, self.cell_bytes));
                alphas.push(self.alpha.for_rate(rate));
            }
        }
        let scheme = self
            .scheme
            .resolve(self.reservation, &etas, self.lossless.count_ones());
        MmuConfig {
            cell_bytes: self.cell_bytes,
            buffer_bytes: self.buffer_bytes,
            private: vec![
                PrivateReservation {
                    bytes: self.private_bytes,
                    pgs: 0xff,
                };
                etas.len()
            ],
            headroom_bytes: etas,
            alpha: alphas,
            egress_alpha: self.egress_alpha,
            xon_offset_bytes: self.xon_offset,
            lossless: self.lossless,
            scheme,
            static_thresholds: self.static_pfc,
        }
    }
}
