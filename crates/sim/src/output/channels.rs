//! What the flow-channel layer did: the `flow_channels` section of `summary.json` (absent
//! on other fabrics) and its line in the text summary.
//!
//! Invariants: the per-switch list is in node order; `channels_in_use_at_end` and
//! `waiting_at_end` are 0 after a run whose flows all finished (no table leaks).

use crate::results::{ChannelStats, RerouteStats, RunResults, SwitchChannels};
use headroom_mech::flow_channel::CHANNEL_BYTES;
use serde::Serialize;

/// The flow-channel layer's work over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChannelSummary {
    /// ACK frames sent upstream between switches.
    pub ack_frames: u64,
    /// ACKs they carried.
    pub acks: u64,
    /// ACKs per frame, mean.
    pub acks_per_frame: f64,
    /// ACK frame bytes (without preamble and inter-frame gap).
    pub ack_bytes: u64,
    /// ACK frame bytes per payload byte delivered to hosts.
    pub ack_bytes_per_delivered_byte: f64,
    /// ACKs that reached their channel's ingress edge.
    pub acks_home: u64,
    /// Data frames dropped on arrival at a switch and acknowledged upstream at once.
    pub drop_acks: u64,
    /// Data frames that waited for a channel (a full table).
    pub waits: u64,
    /// Frames still waiting for a channel at the end.
    pub waiting_at_end: u64,
    /// Most channels in use at once at one switch.
    pub peak_channels: u32,
    /// Time-weighted mean of channels in use, averaged over the switches.
    pub mean_channels: f64,
    /// Channels in use at the end, all switches.
    pub channels_in_use_at_end: u64,
    /// Table memory at every switch's peak, summed (`CHANNEL_BYTES` per channel).
    pub table_bytes_at_peak: u64,
    /// Endpoint congestion management's work (absent when it is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<EndpointSummary>,
    /// Fine-grained flow control's frames (absent when it is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fgfc: Option<FgfcSummary>,
    /// Hop-by-hop credits' work (absent when they are off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hop_credits: Option<HopCreditSummary>,
    /// The ingress edges' injection limit (absent when off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub injection: Option<InjectionSummary>,
    /// What reroutes did (absent when off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reroute: Option<RerouteStats>,
    /// The paths UGAL routing chose (absent with other routing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ugal: Option<UgalSummary>,
    /// Per switch, in node order.
    pub switches: Vec<SwitchChannels>,
}

/// The ingress edges' injection limits over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InjectionSummary {
    /// Bytes one host port may have in the fabric, unacknowledged (whole units; `None`:
    /// no port limit).
    pub port_limit_bytes: Option<u64>,
    /// The most one host port had (whole units).
    pub peak_in_flight_bytes: u64,
    /// The node limit the ILIDs of a port share by their ratios (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_limit_bytes: Option<u64>,
    /// Per ILID, with ILID limits (absent without).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ilids: Vec<IlidSummary>,
}

/// One ILID's limits and what one host port had of it in flight at most.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IlidSummary {
    /// The ILID (0 to 7).
    pub ilid: u8,
    /// Its absolute limit (`None`: none).
    pub limit_bytes: Option<u64>,
    /// Its ratio in the split of the node limit.
    pub ratio: u32,
    /// The most one host port had of it in flight (whole units).
    pub peak_in_flight_bytes: u64,
}

/// The paths UGAL routing chose at the ingress edges over a run (one per channel made
/// there).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UgalSummary {
    /// Minimal paths.
    pub minimal_paths: u64,
    /// Paths through an intermediate switch.
    pub nonminimal_paths: u64,
}

/// What per-flow hop-by-hop credits did over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HopCreditSummary {
    /// Times a switch started metering a flow's upstream hop.
    pub metered_flows: u64,
    /// HeadroomACKs sent (the clearing ones included).
    pub headroom_acks: u64,
}

/// The FGFC frames ingress edges sent their hosts over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FgfcSummary {
    /// Pause frames (refreshes included).
    pub pause_frames: u64,
    /// Resume frames (pause 0).
    pub resume_frames: u64,
}

/// What endpoint congestion management did over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EndpointSummary {
    /// Endpoint-congestion ACKs the egress edges sent.
    pub endpoint_acks: u64,
    /// Times a flow was held back by its injection limit.
    pub flow_limit_holds: u64,
    /// With a release delay: times an ingress edge held a flow of the highest severity for
    /// it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_delays: Option<u64>,
}

impl ChannelSummary {
    /// The section of a run's summary (`None`: not a flow-channel fabric).
    pub fn of(results: &RunResults) -> Option<ChannelSummary> {
        let st: &ChannelStats = results.channels.as_ref()?;
        let mut switches = st.switches.clone();
        switches.sort_by_key(|s| s.node);
        let n = switches.len().max(1) as f64;
        Some(ChannelSummary {
            ack_frames: st.ack_frames,
            acks: st.acks,
            acks_per_frame: st.acks as f64 / st.ack_frames.max(1) as f64,
            ack_bytes: st.ack_bytes,
            ack_bytes_per_delivered_byte: st.ack_bytes as f64
                / results.bytes.delivered.max(1) as f64,
            acks_home: st.acks_home,
            drop_acks: st.drop_acks,
            waits: st.waits,
            waiting_at_end: st.waiting_at_end,
            peak_channels: switches.iter().map(|s| s.peak).max().unwrap_or(0),
            mean_channels: switches.iter().map(|s| s.mean).sum::<f64>() / n,
            channels_in_use_at_end: switches.iter().map(|s| u64::from(s.in_use_at_end)).sum(),
            table_bytes_at_peak: switches.iter().map(|s| u64::from(s.peak)).sum::<u64>()
                * CHANNEL_BYTES as u64,
            endpoint: st.endpoint.then_some(EndpointSummary {
                endpoint_acks: st.endpoint_acks,
                flow_limit_holds: st.flow_limit_holds,
                release_delays: st.release_delays,
            }),
            fgfc: st.fgfc.map(|(pause_frames, resume_frames)| FgfcSummary {
                pause_frames,
                resume_frames,
            }),
            injection: st.injection.as_ref().map(|i| InjectionSummary {
                port_limit_bytes: i.port_limit,
                peak_in_flight_bytes: i.peak,
                node_limit_bytes: i.node_limit,
                ilids: i
                    .ilids
                    .iter()
                    .map(|l| IlidSummary {
                        ilid: l.ilid,
                        limit_bytes: l.limit,
                        ratio: l.ratio,
                        peak_in_flight_bytes: l.peak,
                    })
                    .collect(),
            }),
            reroute: st.reroute,
            ugal: st
                .ugal
                .map(|(minimal_paths, nonminimal_paths)| UgalSummary {
                    minimal_paths,
                    nonminimal_paths,
                }),
            hop_credits: st
                .hop_credits
                .map(|(metered_flows, headroom_acks)| HopCreditSummary {
                    metered_flows,
                    headroom_acks,
                }),
            switches,
        })
    }

    /// Its line in the text summary.
    pub fn line(&self) -> String {
        let endpoint = match &self.endpoint {
            Some(e) => format!(
                "; {} endpoint-congestion ACK(s), flows held by their injection limit {} time(s){}",
                e.endpoint_acks,
                e.flow_limit_holds,
                e.release_delays
                    .map(|n| format!(", for their release delay {n} time(s)"))
                    .unwrap_or_default()
            ),
            None => String::new(),
        };
        let fgfc = match &self.fgfc {
            Some(f) => format!(
                "; FGFC: {} pause and {} resume frame(s) to hosts",
                f.pause_frames, f.resume_frames
            ),
            None => String::new(),
        };
        let injection = match &self.injection {
            Some(i) => {
                let port = match i.port_limit_bytes {
                    Some(l) => format!("injection limit {l} B per host port"),
                    None => "no port injection limit".to_string(),
                };
                let ilids = match i.node_limit_bytes {
                    Some(n) if !i.ilids.is_empty() => {
                        format!(" (ILIDs share {n} B per port by their ratios)")
                    }
                    _ if !i.ilids.is_empty() => " (ILID limits)".to_string(),
                    _ => String::new(),
                };
                format!(
                    "; {port}{ilids}, {} B at most in flight",
                    i.peak_in_flight_bytes
                )
            }
            None => String::new(),
        };
        let reroute = match &self.reroute {
            Some(r) => format!(
                "; reroutes: {} asked, {} flow(s) moved, {} kept their path, {} unresolved",
                r.asks, r.moved, r.kept, r.unresolved
            ),
            None => String::new(),
        };
        let ugal = match &self.ugal {
            Some(u) => format!(
                "; UGAL: {} path(s) minimal, {} through an intermediate switch",
                u.minimal_paths, u.nonminimal_paths
            ),
            None => String::new(),
        };
        let hop = match &self.hop_credits {
            Some(h) => format!(
                "; hop-by-hop credits: {} flow(s) metered, {} HeadroomACK(s)",
                h.metered_flows, h.headroom_acks
            ),
            None => String::new(),
        };
        format!(
            "{} ACK frames ({} ACKs, {:.1} per frame, {} B = {:.2} % of delivered bytes); \
             channels per switch: peak {}, mean {:.1}; {} frame(s) waited for a channel; {} \
             channel(s) in use at the end{}{}{}{}{}{}",
            self.ack_frames,
            self.acks,
            self.acks_per_frame,
            self.ack_bytes,
            100.0 * self.ack_bytes_per_delivered_byte,
            self.peak_channels,
            self.mean_channels,
            self.waits,
            self.channels_in_use_at_end,
            endpoint,
            fgfc,
            hop,
            injection,
            reroute,
            ugal
        )
    }
}
