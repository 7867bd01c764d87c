//! The flow-channel layer (`[fabric] kind = "flow-channels"`): per-flow state on every
//! switch hop over lossless links, acknowledged hop by hop (the HPC fabric of the
//! flow-channel patent). Defaults are the patent's example values.
//!
//! Invariants (checked by [`FlowChannelParams::validate`] as part of
//! `SimConfig::validate`): tables of at least one id, units of at least one byte, ACK
//! frames of at least one ACK of at least one bit, timers in order (idle ≤ busy ≤ max);
//! and none of what drops a frame that a channel has counted without telling it (link
//! failures, link errors, a PFC watchdog).

use super::{Arbitration, ConfigError, SimConfig};
use headroom_mech::endpoint_congestion::{EndpointConfig, EndpointConfigError};
use headroom_mech::fgfc::{FgfcConfig, FgfcConfigError};
use headroom_mech::flow_channel::FlowChannelConfig;
use headroom_mech::hop_credit::HopCreditConfig;
use headroom_mech::injection::{IlidLimits, ILIDS};
use headroom_mech::units::Time;
use serde::Serialize;

/// What the ingress edge maps to one flow channel (the edge table's match pattern).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum EdgeMatch {
    /// Each flow (its 5-tuple) has its own channel.
    #[default]
    Flow,
    /// The flows of a host to one destination share a channel; with `class` only those of
    /// one traffic class (service level), with `app` only those of one application (the
    /// workload's `app`, as a VNI names a job's traffic).
    Destination {
        /// The traffic class is part of the match.
        class: bool,
        /// The application is part of the match.
        app: bool,
    },
}

impl EdgeMatch {
    /// Names in scenario files.
    pub const NAMES: [(&'static str, EdgeMatch); 5] = [
        ("flow", EdgeMatch::Flow),
        (
            "destination",
            EdgeMatch::Destination {
                class: false,
                app: false,
            },
        ),
        (
            "destination+class",
            EdgeMatch::Destination {
                class: true,
                app: false,
            },
        ),
        (
            "destination+app",
            EdgeMatch::Destination {
                class: false,
                app: true,
            },
        ),
        (
            "destination+class+app",
            EdgeMatch::Destination {
                class: true,
                app: true,
            },
        ),
    ];

    /// Whether every flow of a channel is of one application.
    pub fn one_app_per_channel(self) -> bool {
        matches!(
            self,
            EdgeMatch::Flow | EdgeMatch::Destination { app: true, .. }
        )
    }
}

/// How a switch picks the output of a channel that has nothing on its way (a channel with
/// packets queued or unacknowledged always follows them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum ChannelRouting {
    /// The shortest-path next hop whose egress queue holds the fewest bytes, ties broken
    /// by the flow's hash (adaptive routing without reordering).
    #[default]
    Adaptive,
    /// The next hop the flow's hash picks (ECMP).
    Ecmp,
    /// UGAL (universal globally adaptive load-balanced routing, with the ingress edge's
    /// local queues): where a flow's channel is new at its ingress edge switch, the edge
    /// weighs the minimal path against a Valiant path through an intermediate switch
    /// (one that hosts hang off, drawn per decision): it goes the long way when the least
    /// loaded minimal next hop's queue times the minimal path's hops exceeds the Valiant
    /// next hop's queue times its hops by more than `threshold` bytes. Every other hop
    /// routes adaptively towards the intermediate, then towards the destination.
    Ugal {
        /// Bytes (queue bytes times hops) by which the minimal path must be worse.
        threshold: u64,
    },
}

impl ChannelRouting {
    /// `threshold` of UGAL when the scenario does not set one: two 1 KB frames over two
    /// hops, so that a near-empty minimal path stays the choice.
    pub const UGAL_THRESHOLD: u64 = 4096;

    /// Names in scenario files.
    pub const NAMES: [(&'static str, ChannelRouting); 3] = [
        ("adaptive", ChannelRouting::Adaptive),
        ("ecmp", ChannelRouting::Ecmp),
        (
            "ugal",
            ChannelRouting::Ugal {
                threshold: Self::UGAL_THRESHOLD,
            },
        ),
    ];

    /// Whether a path may leave the shortest ones (it then takes up to twice the hops).
    pub fn nonminimal(self) -> bool {
        matches!(self, ChannelRouting::Ugal { .. })
    }
}

/// Parameters of the flow-channel layer.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FlowChannelParams {
    /// Flow ids per link (the patent: 11 bits, 2048).
    pub table_size: u16,
    /// Bytes per unit of the progress counters (the patent: 256 or 24).
    pub unit: u32,
    /// What the edge table maps to a channel.
    pub edge_match: EdgeMatch,
    /// How a new channel's path is chosen.
    pub routing: ChannelRouting,
    /// ACKs per ACK frame at the most (the patent: 48).
    pub ack_batch: u16,
    /// Bits per ACK in a frame (the patent: 25).
    pub ack_bits: u32,
    /// Bytes of an ACK frame besides its ACKs (the patent: 9).
    pub ack_frame_overhead: u32,
    /// Waiting ACKs go in the first frame the link starts this long after the first of
    /// them came, if the link was idle then (30 ns) ...
    pub ack_idle_delay: Time,
    /// ... or this long after, if it was busy (waiting for a fuller frame; 60 ns) ...
    pub ack_busy_delay: Time,
    /// ... and before data, due or not, when a data frame starting instead would end more
    /// than this after the first came (90 ns; a frame on the wire is never cut short).
    pub ack_max_delay: Time,
    /// Endpoint congestion management (`None`: egress edges report none and no flow is
    /// limited): the egress edge's thresholds and the per-severity injection limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<EndpointConfig>,
    /// Fine-grained flow control from the ingress edges to their hosts (`None`: off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fgfc: Option<FgfcConfig>,
    /// Per-flow hop-by-hop credits (the patent's HeadroomACK; `None`: off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hop_credits: Option<HopCreditConfig>,
    /// Bytes one host port may have forwarded into the fabric and not yet acknowledged
    /// (`None`: no limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_injection_limit: Option<u64>,
    /// Injection limits per ILID within each host port (`None`: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ilid_injection: Option<IlidInjectionConfig>,
    /// Reroutes of flows whose path is overloaded (`None`: off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reroute: Option<RerouteConfig>,
}

/// Reroutes (`[fabric.flow_channels.reroute]`): a switch output towards another switch is
/// overloaded when a class queue there holds `queue` bytes or more; a frame joining it asks
/// for its channel's reroute, which the nearest hop with another path (this one or one
/// upstream, reached by a reroute ACK) takes: it holds the flow until nothing of it is in
/// flight, then moves it, with what it has queued, to its least-loaded other next hop. An
/// output asks for one flow at a time: again once that flow's channel has left it, or
/// `interval` after asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RerouteConfig {
    /// Bytes in an output's class queue at which it is overloaded.
    pub queue: u64,
    /// The longest an output waits for the flow it asked to move before asking again.
    pub interval: Time,
}

impl Default for RerouteConfig {
    fn default() -> Self {
        RerouteConfig {
            queue: 64 * 1024,
            interval: Time::from_us(20),
        }
    }
}

/// Injection limits per injection limit id (ILID) at the ingress edges
/// (`[[fabric.flow_channels.injection.ilid]]` and `node`): each application is mapped to an
/// ILID, and each ILID of a host port may have at most the smaller of its absolute limit
/// and its share of the node limit (split among the port's active ILIDs by their ratios)
/// forwarded into the fabric and not yet acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct IlidInjectionConfig {
    /// Bytes shared among a port's active ILIDs by their ratios (`None`: no share).
    pub node: Option<u64>,
    /// Per ILID: its absolute limit in bytes (`None`: none).
    pub limit: [Option<u64>; ILIDS],
    /// Per ILID: its weight in the split of the node limit (at least 1).
    pub ratio: [u32; ILIDS],
    /// Per ILID: the applications mapped to it (bit `a`: application `a`); applications
    /// no ILID lists are ILID 0's.
    #[serde(skip)]
    pub apps: [u128; ILIDS],
}

impl Default for IlidInjectionConfig {
    fn default() -> Self {
        IlidInjectionConfig {
            node: None,
            limit: [None; ILIDS],
            ratio: [1; ILIDS],
            apps: [0; ILIDS],
        }
    }
}

impl IlidInjectionConfig {
    /// The ILID of application `app`.
    pub fn ilid_of(&self, app: u8) -> u8 {
        let bit = 1u128 << (app & 127);
        // At most 8 ILIDs, so the position fits in u8.
        self.apps.iter().position(|m| m & bit != 0).unwrap_or(0) as u8
    }

    /// The limits in units of `unit` bytes (a limit below one unit is one unit).
    pub fn in_units(&self, unit: u32) -> IlidLimits {
        let units = |bytes: u64| (bytes / u64::from(unit.max(1))).max(1);
        IlidLimits {
            limit: self.limit.map(|l| l.map(units)),
            ratio: self.ratio,
            node: self.node.map(units),
        }
    }
}

impl Default for FlowChannelParams {
    fn default() -> Self {
        FlowChannelParams {
            table_size: 2048,
            unit: 256,
            edge_match: EdgeMatch::Flow,
            routing: ChannelRouting::Adaptive,
            ack_batch: 48,
            ack_bits: 25,
            ack_frame_overhead: 9,
            ack_idle_delay: Time::from_ns(30),
            ack_busy_delay: Time::from_ns(60),
            ack_max_delay: Time::from_ns(90),
            endpoint: None,
            fgfc: None,
            hop_credits: None,
            reroute: None,
            port_injection_limit: None,
            ilid_injection: None,
        }
    }
}

impl FlowChannelParams {
    /// The per-switch tables' parameters.
    pub fn tables(&self) -> FlowChannelConfig {
        FlowChannelConfig {
            table_size: self.table_size,
            unit: self.unit,
            // Set by the run's builder, which knows the classes frames rise to.
            reserved: 0,
        }
    }

    /// Bytes of an ACK frame carrying `acks` ACKs (without preamble and inter-frame gap).
    pub fn ack_frame_bytes(&self, acks: usize) -> u32 {
        let bits = u64::from(self.ack_bits) * acks as u64;
        self.ack_frame_overhead
            .saturating_add(u32::try_from(bits.div_ceil(8)).unwrap_or(u32::MAX))
    }

    /// Checks the invariants of the module documentation for a run of `cfg`.
    pub fn validate(&self, cfg: &SimConfig) -> Result<(), ConfigError> {
        let param =
            |field: &'static str, reason: String| Err(ConfigError::Parameter { field, reason });
        if self.table_size == 0 {
            return param(
                "fabric.flow_channels.table_size",
                "must be at least 1 (no channel could ever be made)".into(),
            );
        }
        if self.unit == 0 {
            return param(
                "fabric.flow_channels.unit",
                "must be at least 1 byte".into(),
            );
        }
        if self.ack_batch == 0 {
            return param(
                "fabric.flow_channels.ack_batch",
                "must be at least 1 ACK per frame".into(),
            );
        }
        if self.ack_bits == 0 {
            return param("fabric.flow_channels.ack_bits", "must be at least 1".into());
        }
        if !(self.ack_idle_delay <= self.ack_busy_delay
            && self.ack_busy_delay <= self.ack_max_delay)
        {
            return param(
                "fabric.flow_channels.ack_busy_delay",
                format!(
                    "the ACK timers must be in order: ack_idle_delay ({} ns) <= ack_busy_delay \
                     ({} ns) <= ack_max_delay ({} ns)",
                    self.ack_idle_delay.as_ps() / 1000,
                    self.ack_busy_delay.as_ps() / 1000,
                    self.ack_max_delay.as_ps() / 1000
                ),
            );
        }
        if let Some(e) = &self.endpoint {
            if let Err(err) = e.validate() {
                let field = match err {
                    EndpointConfigError::Levels(_) | EndpointConfigError::LimitRises { .. } => {
                        "fabric.flow_channels.endpoint.limits"
                    }
                    EndpointConfigError::ZeroThreshold("bytes") => {
                        "fabric.flow_channels.endpoint.bytes"
                    }
                    EndpointConfigError::ZeroThreshold("packets") => {
                        "fabric.flow_channels.endpoint.packets"
                    }
                    EndpointConfigError::ZeroThreshold(_) => "fabric.flow_channels.endpoint.growth",
                    EndpointConfigError::ZeroWindow => "fabric.flow_channels.endpoint.window",
                    EndpointConfigError::WatermarkLevels { .. }
                    | EndpointConfigError::WatermarkOrder { .. }
                    | EndpointConfigError::WatermarkRises { .. } => {
                        "fabric.flow_channels.endpoint.watermarks"
                    }
                };
                return param(field, err.to_string());
            }
        }
        if let Some(h) = &self.hop_credits {
            if let Err(err) = h.validate() {
                return param("fabric.flow_channels.hop_credits.target", err.to_string());
            }
        }
        // A flow held by its limit or for credit must not hold the flows queued behind it.
        let holds = if self.endpoint.is_some() {
            Some("endpoint congestion management holds flows at their injection limits")
        } else if self.hop_credits.is_some() {
            Some("hop-by-hop credits hold metered flows without credit")
        } else if self.port_injection_limit.is_some() {
            Some("a port injection limit holds the flows of a port at its limit")
        } else if self.ilid_injection.is_some() {
            Some("ILID injection limits hold the flows of an ILID at its limit")
        } else if self.reroute.is_some() {
            Some("reroutes hold the flows they move until nothing of them is in flight")
        } else {
            None
        };
        if let Some(what) = holds {
            if !matches!(
                cfg.switch.scheduler.arbitration,
                Arbitration::Flow | Arbitration::Application
            ) {
                return param(
                    "switch.scheduler.arbitration",
                    format!(
                        "{what}, which needs a queue per flow: set it to \"flow\" or \
                         \"application\""
                    ),
                );
            }
        }
        if self.reroute.is_some() && self.routing != ChannelRouting::Adaptive {
            return param(
                "fabric.flow_channels.routing",
                "reroutes move flows to their least-loaded other shortest next hop, which \
                 ECMP and UGAL routing do not choose: set it to \"adaptive\""
                    .into(),
            );
        }
        if self.ilid_injection.is_some() && !self.edge_match.one_app_per_channel() {
            return param(
                "fabric.flow_channels.match",
                "ILID injection limits count a channel's data against its application's ILID, \
                 and a channel shared by a host's flows to one destination may carry several \
                 applications: set it to \"flow\" or one with \"+app\""
                    .into(),
            );
        }
        if let Some(f) = &self.fgfc {
            if let Err(err) = f.validate() {
                let field = match err {
                    FgfcConfigError::Watermarks { .. } => "fabric.flow_channels.fgfc.drop",
                    FgfcConfigError::ZeroPause => "fabric.flow_channels.fgfc.pause",
                };
                return param(field, err.to_string());
            }
        }
        // A frame dropped on a link (or flushed by a watchdog) would leave its units
        // counted upstream and never acknowledged: the channel would never be released.
        if !cfg.link_failures.is_empty() {
            return param(
                "link_failures",
                "flow channels do not model link failures yet (a frame lost on a failed link \
                 would never be acknowledged)"
                    .into(),
            );
        }
        if let Some(index) = cfg.topology.links.iter().position(|l| l.error_rate > 0.0) {
            return Err(ConfigError::Link {
                index,
                field: "error_rate",
                reason: "flow channels do not model link errors yet (a corrupted frame would \
                         never be acknowledged)"
                    .into(),
            });
        }
        if cfg.switch.watchdog.is_some() {
            return param(
                "switch.pfc_watchdog",
                "flow channels do not model a PFC watchdog's flushes yet".into(),
            );
        }
        Ok(())
    }
}
