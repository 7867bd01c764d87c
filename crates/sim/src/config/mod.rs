//! The resolved configuration of one simulation run.
//!
//! [`SimConfig`] is what the engine consumes: every value is concrete (no file paths, no
//! unit strings, no "default" markers). Scenario files (`crate::scenario`) and the ns-3 HPCC
//! simulator's config files (`crate::hpcc`) are both translated into it, so the engine has one
//! input and the translators carry all validation of user input.
//!
//! Invariants a valid config keeps (checked by [`SimConfig::validate`]): the topology is
//! structurally valid, every flow names two distinct hosts and a priority below 8 with a
//! non-zero size, packet sizes and the DWRR quantum are non-zero and below 4 GiB (the
//! engine's frame sizes are 32-bit), a switch buffer is below 4 GiB and holds every
//! switch's private and headroom reservations, a switch chip has at least as many ports as
//! the topology connects to any switch, a credit fabric's VLs, blocks and VL buffer fit its
//! frames and priorities (`fabric`), and a run has a way to stop (a stop time, or flows
//! that can all finish). The checks live in `validate`.

use crate::topology::Topology;
use crate::workload::FlowSpec;
use headroom_mech::buffer::mmu::{MmuConfig, PrivateReservation, Reservation};
use headroom_mech::cc::{
    CongestionControl, Dcqcn, DcqcnConfig, Dctcp, DctcpConfig, Hpcc, HpccConfig, IbCc, IbCcConfig,
    NotificationPoint, PowerTcp, PowerTcpConfig, PowerTcpMode, Timely, TimelyConfig, Window,
};
use headroom_mech::units::{Rate, Time};
use serde::Serialize;

mod fabric;
mod flow_channels;
mod marking;
mod switch;
mod validate;
pub use fabric::{
    CreditConfig, CreditGrant, FabricConfig, FlowControlKind, LinkFabric, SlToVl,
    IDENTITY_SL_TO_VL, UPDATE_SYMBOLS,
};
pub use flow_channels::{
    ChannelRouting, EdgeMatch, FlowChannelParams, IlidInjectionConfig, RerouteConfig,
};
pub use marking::{DetectorConfig, EcnConfig, EcnPoint, FecnConfig, QueueEcn};
pub use switch::{
    Admission, AlphaPolicy, Arbitration, HeadroomSizing, SchedulerConfig, SchemeConfig, ShpPool,
    SwitchConfig,
};

/// Everything one run needs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimConfig {
    /// The network.
    pub topology: Topology,
    /// Flows to inject, sorted by start time.
    pub flows: Vec<FlowSpec>,
    /// Per flow, its application (its application group, APPG, at an edge switch's
    /// application arbitration; 0 to 126); empty: every flow is application 0.
    pub flow_apps: Vec<u8>,
    /// Stop at this simulated time even if flows are still running.
    pub stop_time: Option<Time>,
    /// Seed of every random choice made during the run (ECN marking, link errors).
    pub seed: u64,
    /// Link-layer parameters.
    pub link: LinkConfig,
    /// Switch parameters (all switches alike).
    pub switch: SwitchConfig,
    /// Host / NIC parameters (all hosts alike).
    pub host: HostConfig,
    /// What to record while running.
    pub record: RecordConfig,
    /// Links that go down during the run.
    pub link_failures: Vec<LinkFailure>,
    /// How packets are routed.
    pub routing: crate::routing::RoutingKind,
    /// Stop the run as deadlocked once a cycle of switch egress queues, each holding data
    /// and paused by the next one's switch, has been paused this long without a break
    /// (`None`: never check).
    pub deadlock_detection: Option<Time>,
    /// How links keep the fabric lossless: PFC or credits.
    pub fabric: FabricConfig,
}

/// How long a cycle of paused queues must last to be a deadlock, unless configured. Only a
/// cycle counts (a tree routed up-down has none), and in a live fabric some queue of a
/// cycle drains within microseconds; SONiC's PFC watchdog waits 200 ms on real switches,
/// far longer than most simulated runs.
pub const DEFAULT_DEADLOCK_DETECTION: Time = Time::from_ms(1);

/// A link that fails at a given time: both directions stop, queued frames are dropped,
/// frames still on the wire are lost, and routes are recomputed without it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkFailure {
    /// When the link goes down.
    pub time: Time,
    /// One end.
    pub a: crate::topology::NodeId,
    /// The other end.
    pub b: crate::topology::NodeId,
}

/// Link-layer parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkConfig {
    /// Bytes of preamble + inter-frame gap paid on the wire by every frame (20 on Ethernet).
    pub frame_overhead: u64,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig { frame_overhead: 20 }
    }
}

/// How a DCQCN receiver decides when to send a CNP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum CnpMode {
    /// At the first marked packet after `cnp_interval` without a CNP (the DCQCN paper, the
    /// HPCC simulator).
    #[default]
    Paced,
    /// Every `cnp_interval` from the flow's first packet, if anything was marked since the
    /// last look (the TCD authors' code).
    Poll,
}

/// End-to-end congestion control of every flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum CcConfig {
    /// Line rate, PFC only.
    None,
    /// DCQCN.
    Dcqcn(DcqcnConfig),
    /// DCTCP (rate-based, ECN echoed on ACKs).
    Dctcp(DctcpConfig),
    /// TIMELY (RTT gradient).
    Timely(TimelyConfig),
    /// HPCC (INT from every switch egress).
    Hpcc(HpccConfig),
    /// PowerTCP (INT from every switch egress, or RTT samples in delay mode).
    PowerTcp(PowerTcpConfig),
    /// InfiniBand congestion control (switches mark FECN, destinations return BECNs,
    /// sources keep a CCTI).
    IbCc(IbCcConfig),
}

/// What a flow's sender knows of its path before it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BasePath {
    /// The NIC's line rate.
    pub line_rate: Rate,
    /// Base round-trip time (see [`WindowConfig::global`]).
    pub rtt: Time,
    /// Base bandwidth-delay product in bytes.
    pub bdp: u64,
}

impl CcConfig {
    /// The algorithm's name in scenarios and outputs.
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::None => "none",
            CcConfig::Dcqcn(_) => "dcqcn",
            CcConfig::Dctcp(_) => "dctcp",
            CcConfig::Timely(_) => "timely",
            CcConfig::Hpcc(_) => "hpcc",
            CcConfig::PowerTcp(_) => "powertcp",
            CcConfig::IbCc(_) => "ib-cc",
        }
    }

    /// The sender's half of a flow's congestion control on `path`.
    pub fn reaction_point(&self, path: &BasePath) -> CongestionControl {
        let line_rate = path.line_rate;
        match self {
            CcConfig::None => CongestionControl::None { line_rate },
            CcConfig::Dcqcn(d) => CongestionControl::Dcqcn(Dcqcn::new(d.clone(), line_rate)),
            CcConfig::Dctcp(d) => CongestionControl::Dctcp(Dctcp::new(d.clone(), line_rate)),
            CcConfig::Timely(t) => CongestionControl::Timely(Timely::new(t.clone(), line_rate)),
            CcConfig::Hpcc(h) => CongestionControl::Hpcc(Box::new(Hpcc::new(
                h.clone(),
                line_rate,
                path.rtt,
                path.bdp,
            ))),
            CcConfig::PowerTcp(p) => {
                CongestionControl::PowerTcp(Box::new(PowerTcp::new(p.clone(), line_rate, path.rtt)))
            }
            CcConfig::IbCc(c) => CongestionControl::IbCc(IbCc::new(c.clone(), line_rate)),
        }
    }

    /// The receiver's half of a flow's congestion control; DCQCN's CNPs are at least
    /// `cnp_interval` apart, sent as `mode` says.
    pub fn notification_point(&self, cnp_interval: Time, mode: CnpMode) -> NotificationPoint {
        match self {
            CcConfig::None => NotificationPoint::None,
            CcConfig::Dcqcn(_) => match mode {
                CnpMode::Paced => NotificationPoint::cnp(cnp_interval),
                CnpMode::Poll => NotificationPoint::poll(cnp_interval),
            },
            CcConfig::Dctcp(_)
            | CcConfig::Timely(_)
            | CcConfig::Hpcc(_)
            | CcConfig::PowerTcp(_) => NotificationPoint::Echo,
            // A BECN for every FECN-marked packet.
            CcConfig::IbCc(_) => NotificationPoint::cnp(Time::ZERO),
        }
    }

    /// The algorithm called `name` (as [`Self::name`]) with its default parameters, for
    /// packets of `packet_payload` bytes; `None` for an unknown name.
    pub fn named(name: &str, packet_payload: u64) -> Option<CcConfig> {
        Some(match name {
            "none" => CcConfig::None,
            "dcqcn" => CcConfig::Dcqcn(DcqcnConfig::default()),
            "dctcp" => CcConfig::Dctcp(DctcpConfig {
                packet_payload,
                ..DctcpConfig::default()
            }),
            "timely" => CcConfig::Timely(TimelyConfig::default()),
            "hpcc" => CcConfig::Hpcc(HpccConfig::default()),
            "powertcp" => CcConfig::PowerTcp(PowerTcpConfig::default()),
            "ib-cc" => CcConfig::IbCc(IbCcConfig::default()),
            _ => return None,
        })
    }

    /// The INT resolution multiplier when switches append INT hop records (HPCC, and
    /// PowerTCP in INT mode).
    pub fn int_multi(&self) -> Option<u32> {
        match self {
            CcConfig::Hpcc(h) => Some(h.int_multi),
            CcConfig::PowerTcp(p) if p.mode == PowerTcpMode::Int => Some(p.int_multi),
            _ => None,
        }
    }
}

/// A bound on bytes in flight per flow, beside the rate (the ns-3 HPCC simulator's
/// `HAS_WIN`, `VAR_WIN` and `GLOBAL_T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WindowConfig {
    /// Bound bytes in flight by the base bandwidth-delay product.
    pub enabled: bool,
    /// Scale the window with the sending rate (`bdp x rate / line_rate`).
    pub variable: bool,
    /// Base RTT and bandwidth-delay product are the largest over the run's flows (one
    /// value for all, as `GLOBAL_T 1`); otherwise each flow's own path. HPCC's utilization
    /// estimate uses them too, and PowerTCP's normalised power the base RTT.
    pub global: bool,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            enabled: false,
            variable: false,
            global: true,
        }
    }
}

impl WindowConfig {
    /// The window `cc` runs with unless told otherwise: HPCC and DCTCP the ns-3 HPCC
    /// simulator's (`run.py`: `HAS_WIN 1`, `VAR_WIN 1`, `GLOBAL_T 1`), PowerTCP the same
    /// (the PowerTCP authors' simulator runs it on HPCC's sender), the others none.
    pub fn for_algorithm(cc: &CcConfig) -> WindowConfig {
        match cc {
            CcConfig::Hpcc(_) | CcConfig::Dctcp(_) | CcConfig::PowerTcp(_) => WindowConfig {
                enabled: true,
                variable: true,
                global: true,
            },
            _ => WindowConfig::default(),
        }
    }

    /// The window of a flow whose base bandwidth-delay product is `bdp` bytes.
    pub fn window(&self, bdp: u64) -> Window {
        if self.enabled {
            Window {
                bytes: bdp.max(1),
                variable: self.variable,
            }
        } else {
            Window::NONE
        }
    }
}

/// Host / NIC parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostConfig {
    /// Payload bytes per data packet.
    pub mtu_payload: u64,
    /// Header bytes added to every data packet (Ethernet, IP, UDP, transport).
    pub header_bytes: u64,
    /// Size of an ACK/NACK frame.
    pub ack_bytes: u64,
    /// Size of a CNP frame.
    pub cnp_bytes: u64,
    /// Acknowledge every time the received byte count crosses a multiple of this many bytes
    /// (and always on the last packet). 1 = every packet.
    pub ack_interval: u64,
    /// Priority of ACKs, NACKs and CNPs.
    pub ack_prio: u8,
    /// The class whose PAUSE holds the NIC's ACKs, NACKs and CNPs (normally `ack_prio`;
    /// the ns-3 HPCC simulator's `ACK_HIGH_PRIO 1` makes it class 0, which its switches
    /// never pause, while the frames still travel in `ack_prio`).
    pub ack_pause_class: u8,
    /// Receiver sends at most one CNP per flow per this interval.
    pub cnp_interval: Time,
    /// How a DCQCN receiver spaces its CNPs.
    pub cnp_mode: CnpMode,
    /// Go-back-N retransmission timeout.
    pub rto: Time,
    /// Congestion control.
    pub cc: CcConfig,
    /// Pace each flow at its congestion-control rate (off: line rate bursts).
    pub pacing: bool,
    /// A bound on bytes in flight beside the rate.
    pub window: WindowConfig,
    /// A receive buffer in the NIC that sends PFC to its switch when the host drains it
    /// slower than data arrives (off by default: the host absorbs everything at once).
    pub nic_buffer: Option<NicBufferConfig>,
}

/// A NIC receive buffer drained at a fixed rate (e.g. PCIe or memory bandwidth), which
/// pauses the switch port feeding it with PFC.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NicBufferConfig {
    /// Buffer size in bytes; a lossless packet that does not fit is a lossless drop.
    pub size: u64,
    /// Send PAUSE when occupancy reaches this many bytes.
    pub xoff: u64,
    /// Send RESUME when occupancy falls to this many bytes.
    pub xon: u64,
    /// Rate at which the host takes data out of the buffer.
    pub drain: Rate,
}

impl HostConfig {
    /// Bytes of INT metadata every data frame carries (zero unless the congestion control
    /// reads INT).
    pub fn int_bytes(&self) -> u64 {
        if self.cc.int_multi().is_some() {
            headroom_mech::int::HEADER_BYTES
        } else {
            0
        }
    }

    /// A data frame carrying `payload` bytes, without the wire's per-frame overhead: the
    /// payload, the headers and any INT metadata.
    pub fn data_frame_bytes(&self, payload: u64) -> u64 {
        payload
            .saturating_add(self.header_bytes)
            .saturating_add(self.int_bytes())
    }

    /// The largest data frame a host sends (a full payload).
    pub fn largest_data_frame(&self) -> u64 {
        self.data_frame_bytes(self.mtu_payload)
    }
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            mtu_payload: 1000,
            header_bytes: 48,
            ack_bytes: 64,
            cnp_bytes: 64,
            ack_interval: 1,
            ack_prio: 7,
            ack_pause_class: 7,
            cnp_interval: Time::from_us(50),
            cnp_mode: CnpMode::Paced,
            rto: Time::from_ms(1),
            cc: CcConfig::Dcqcn(DcqcnConfig::default()),
            pacing: true,
            window: WindowConfig::default(),
            nic_buffer: None,
        }
    }
}

/// What the run records besides flows and counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RecordConfig {
    /// Sample occupancy per switch/port/queue and per-flow rates at this interval.
    pub sample_interval: Option<Time>,
    /// Stop the run at the first lossless drop, with an error naming it.
    pub fail_on_lossless_drop: bool,
    /// Keep no log of PFC frames (no `pfc.csv`): under heavy PFC it grows by tens of
    /// bytes per frame (gigabytes per run); the counters in `summary.json` stay complete.
    pub omit_pfc_log: bool,
    /// Keep no log of credit blocked episodes (no `credit.csv`, no `credit_timeline`
    /// plot); the blocked-time counters stay complete.
    pub omit_credit_log: bool,
}

/// Why a configuration cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// The topology is invalid.
    #[error("topology: {0}")]
    Topology(#[from] crate::topology::TopologyError),
    /// A flow is invalid.
    #[error("flow {index}: {reason}")]
    Flow {
        /// Index in the flow list.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// A parameter is out of range.
    #[error("{field}: {reason}")]
    Parameter {
        /// Dotted name of the parameter.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A setting of one link (`topology.link[index]`) is invalid.
    #[error("topology.link[{index}].{field}: {reason}")]
    Link {
        /// Index in the topology's link list.
        index: usize,
        /// Name of the setting.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl SimConfig {
    /// A config with default parameters for `topology` and `flows`.
    pub fn new(topology: Topology, flows: Vec<FlowSpec>) -> Self {
        SimConfig {
            topology,
            flows,
            flow_apps: Vec::new(),
            stop_time: None,
            seed: 1,
            link: LinkConfig::default(),
            switch: SwitchConfig::default(),
            host: HostConfig::default(),
            record: RecordConfig::default(),
            link_failures: Vec::new(),
            routing: crate::routing::RoutingKind::ShortestPath,
            deadlock_detection: Some(DEFAULT_DEADLOCK_DETECTION),
            fabric: FabricConfig::default(),
        }
    }

    /// The MMU of a switch whose ports have the rates, delays and flow control `ports`:
    /// the switch parameters as its ports' flow control shapes them. All ports on credit
    /// links: [`FabricConfig::switch`]'s. Some: the switch's, with each credit port's
    /// private space its VL buffers and no headroom.
    pub fn mmu_config(&self, ports: &[(Rate, Time, FlowControlKind)]) -> MmuConfig {
        let credit =
            |&(_, _, kind): &(Rate, Time, FlowControlKind)| kind == FlowControlKind::Credit;
        let all_credit = !ports.is_empty() && ports.iter().all(credit);
        let links: Vec<(Rate, Time)> = ports.iter().map(|&(r, d, _)| (r, d)).collect();
        let mut mmu = self
            .fabric
            .switch(&self.switch, all_credit)
            .mmu_config(&links);
        // Only the data VLs have a receive buffer; no frame uses another PG.
        let vl_buffers = PrivateReservation {
            bytes: self.fabric.credit.vl_buffer,
            pgs: self.fabric.credit.vl_mask(),
        };
        if all_credit {
            mmu.private.fill(vl_buffers);
        } else {
            // (An SHP pool was sized over every port's eta, these ports' too: it stays
            // as large as the PFC switch's, never smaller than its PFC ports need.)
            for (i, _) in ports.iter().enumerate().filter(|(_, p)| credit(p)) {
                mmu.private[i] = vl_buffers;
                mmu.headroom_bytes[i] = 0;
            }
        }
        mmu
    }
}
