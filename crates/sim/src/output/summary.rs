//! The [`Summary`] of a run (`summary.json`): what was simulated, FCT statistics per size
//! bucket and workload, throughput, PFC and credit activity, drops, buffer use per switch,
//! and how the run ended.
//!
//! Invariants: a pure function of the results and the configuration (the wall-clock
//! section aside), so the same scenario and seed give the same summary; every flow is in
//! exactly one size bucket and one workload.

use super::{
    apps, format_ns, nearest_rank, size_bucket, AppSummary, ChannelSummary, MarkingSummary,
    SizeBucket, SIZE_BUCKETS,
};
use crate::config::SimConfig;
use crate::results::{ByteLedger, FlowRecord, PgPeaks, PortStats, RunResults, StopReason};
use crate::routing;
use crate::topology::NodeKind;
use crate::workload::WorkloadGroups;
use headroom_mech::units::Time;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Headline numbers of one run. Serialized as `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// What was simulated.
    pub config: ConfigSummary,
    /// Flow counts.
    pub flows: FlowCounts,
    /// Flow completion times and slowdowns.
    pub fct: FctSummary,
    /// Delivered throughput.
    pub throughput: ThroughputSummary,
    /// PFC activity.
    pub pfc: PfcSummary,
    /// Credit activity (zeros on PFC links).
    pub credit: CreditSummary,
    /// Packet drops.
    pub drops: DropSummary,
    /// Buffer use per switch, by node id.
    pub switches: Vec<SwitchSummary>,
    /// Congestion marks decided at switch egress queues.
    pub marking: MarkingSummary,
    /// The flow-channel layer's work (absent on other fabrics).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_channels: Option<ChannelSummary>,
    /// Throughput per application, in id order (absent when no workload names an `app`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applications: Option<Vec<AppSummary>>,
    /// How the run went.
    pub run: RunSummary,
    /// Payload conservation.
    pub bytes: ByteLedger,
    /// Speed of the simulator on the wall clock (non-deterministic); `None` when not asked.
    pub wall: Option<WallSummary>,
}

/// The scenario's shape, for reference.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfigSummary {
    /// Run seed.
    pub seed: u64,
    /// Hosts in the topology.
    pub hosts: usize,
    /// Switches in the topology.
    pub switches: usize,
    /// Links in the topology.
    pub links: usize,
    /// Switch buffer size, bytes.
    pub switch_buffer_bytes: u64,
    /// Lossless priorities, ascending.
    pub lossless_priorities: Vec<u8>,
    /// Congestion control: [`crate::config::CcConfig::name`].
    pub congestion_control: String,
    /// Headroom scheme of the switches: `"sih"`, `"shp"` or `"dsh"`.
    pub headroom_scheme: String,
    /// How links keep the fabric lossless: `"pfc"` or `"credit"`.
    pub flow_control: String,
    /// Configured stop time, ns, if any.
    pub stop_time_ns: Option<f64>,
}

/// How many flows finished.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlowCounts {
    /// Flows in the workload.
    pub total: usize,
    /// Flows whose sender received the last acknowledgement.
    pub finished: usize,
    /// Flows still running (or stuck) at the end.
    pub unfinished: usize,
}

/// FCT statistics of a set of finished flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FctStats {
    /// Finished flows in the set.
    pub flows: usize,
    /// Mean FCT, ns (`None` without flows).
    pub mean_fct_ns: Option<f64>,
    /// 99th percentile FCT, ns (nearest rank): the tail latency of equal-sized messages.
    pub fct_p99_ns: Option<f64>,
    /// Mean over the flows of size × 8 / FCT, Gb/s: the bandwidth a flow saw.
    pub mean_goodput_gbps: Option<f64>,
    /// Median slowdown (nearest rank).
    pub slowdown_p50: Option<f64>,
    /// 95th percentile slowdown (nearest rank).
    pub slowdown_p95: Option<f64>,
    /// 99th percentile slowdown (nearest rank).
    pub slowdown_p99: Option<f64>,
    /// Largest slowdown.
    pub slowdown_max: Option<f64>,
}

/// FCT statistics of one size bucket.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BucketFct {
    /// The bucket.
    pub bucket: SizeBucket,
    /// Its statistics.
    pub stats: FctStats,
}

/// FCT statistics of the flows of one `[[workload]]` entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadFct {
    /// The entry (`workload[1]`).
    pub workload: String,
    /// Its kind (`incast-poisson`).
    pub kind: String,
    /// Its flows' statistics.
    pub stats: FctStats,
}

/// Flow completion times and slowdowns (FCT / ideal FCT), over finished flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FctSummary {
    /// All finished flows.
    pub overall: FctStats,
    /// Per size bucket, in [`SIZE_BUCKETS`] order (empty buckets included, with `flows: 0`).
    pub by_size: Vec<BucketFct>,
    /// Per `[[workload]]` entry, in entry order (empty for runs without a scenario file;
    /// see [`Summary::with_workloads`]).
    pub by_workload: Vec<WorkloadFct>,
}

/// Delivered throughput.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThroughputSummary {
    /// Payload bits delivered to destination hosts (duplicates included) divided by the
    /// simulated time, Gb/s (`None` if no time elapsed).
    pub delivered_gbps: Option<f64>,
    /// Mean over finished flows of size × 8 / FCT, Gb/s (`None` without finished flows).
    pub mean_flow_goodput_gbps: Option<f64>,
}

/// PFC activity of one (node, port, priority).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PfcPortSummary {
    /// Node owning the port.
    pub node: u32,
    /// Local port index.
    pub port: u16,
    /// Priority class.
    pub priority: u8,
    /// Node at the other end of the link.
    pub peer: u32,
    /// Rate of the port's link, bit/s.
    pub rate_bps: u64,
    /// PAUSE frames this port sent (its ingress PG was congested).
    pub pauses_sent: u32,
    /// RESUME frames this port sent.
    pub resumes_sent: u32,
    /// Time this port's transmitter was paused by frames from the peer, ns.
    pub paused_ns: f64,
    /// Pauses this port decided (XOFF decisions starting a pause; refreshes not counted).
    pub pause_episodes: u32,
    /// Those that stopped upstream traffic headed to another egress than the congested one.
    pub victim_pauses: u32,
}

/// Credit activity of credit links.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CreditSummary {
    /// Credit updates (flow-control packets) sent by all ports.
    pub updates: u64,
    /// Time transmitters had a frame waiting for credit, summed over (port, VL), ns.
    pub blocked_ns: f64,
    /// (port, VL) pairs that waited for credit at some point.
    pub blocked_vls: u64,
    /// Most bytes one switch input (port, VL) held at once.
    pub peak_input_vl_bytes: u64,
    /// Blocked episodes logged (`credit.csv`; 0 with `[output] credit_log = false`).
    pub blocked_episodes: u64,
    /// Waits for credit begun, all ports and VLs (whether or not logged).
    pub waits: u64,
    /// Those that held traffic headed elsewhere than the egress the downstream switch's VL
    /// buffer was filled for.
    pub victim_waits: u64,
    /// Every (node, port, VL) of a credit link that sent an update, waited for credit or
    /// held a frame, in that order (absent on PFC links).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<CreditPortSummary>,
}

/// Credit activity of one (port, VL): the port's transmitter and its receiver.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CreditPortSummary {
    /// Node owning the port.
    pub node: u32,
    /// Local port index.
    pub port: u16,
    /// The virtual lane.
    pub vl: u8,
    /// Node at the other end of the link.
    pub peer: u32,
    /// Time the transmitter had a frame waiting for credit on this VL, ns (the credit
    /// analogue of paused time).
    pub blocked_ns: f64,
    /// Credit updates (FCPs) the port sent for this VL.
    pub updates: u64,
    /// Most bytes (whole blocks) the port's receive buffer held on this VL at once.
    pub peak_bytes: u64,
    /// Waits for credit the transmitter began on this VL.
    pub waits: u32,
    /// Those that held traffic headed elsewhere than the egress the downstream switch's VL
    /// buffer was filled for.
    pub victim_waits: u32,
}

/// PFC activity.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PfcSummary {
    /// PAUSE frames sent (non-zero timer), all ports.
    pub pause_frames: u64,
    /// RESUME frames sent (zero timer), all ports.
    pub resume_frames: u64,
    /// Every (node, port, priority) with a frame sent or paused time, in that order.
    pub ports: Vec<PfcPortSummary>,
    /// Port-level PAUSE frames sent (every class at once; DSH), included in `pause_frames`.
    pub port_level_pause_frames: u64,
    /// Port-level RESUME frames sent, included in `resume_frames`.
    pub port_level_resume_frames: u64,
    /// Of the frames above, those that updated an earlier frame of their class still
    /// waiting to be sent (802.1Qbb sends the current pause state, not a backlog): frames
    /// on the wire = `pause_frames` + `resume_frames` − `merged_frames`.
    pub merged_frames: u64,
    /// Every (node, port) with a port-level frame sent or port-level paused time.
    pub port_level: Vec<PortLevelPfcSummary>,
    /// Pauses decided by switches, queue-level and port-level (refreshes not counted).
    pub pause_episodes: u64,
    /// Those of `pause_episodes` that were victim pauses: they stopped upstream traffic
    /// headed to another egress than the congested one.
    pub victim_pauses: u64,
    /// PFC storms the switches' watchdogs detected (queues paused with data for the
    /// detection time), 0 without watchdogs.
    pub watchdog_storms: u64,
    /// Storms that ended (no PAUSE for the restoration time).
    pub watchdog_restorations: u64,
    /// Time queues spent in storms, summed over the queues, ns.
    pub watchdog_storm_time_ns: f64,
}

/// Port-level PFC activity of one port (DSH).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PortLevelPfcSummary {
    /// Node.
    pub node: u32,
    /// Local port.
    pub port: u16,
    /// Node at the other end.
    pub peer: u32,
    /// Port-level PAUSE frames this port sent.
    pub pauses_sent: u32,
    /// Port-level RESUME frames this port sent.
    pub resumes_sent: u32,
    /// Time this port's transmitter was held by port-level pauses, ns.
    pub paused_ns: f64,
    /// Port-level pauses this port decided.
    pub pause_episodes: u32,
    /// Those that stopped traffic headed to another egress than the congested one.
    pub victim_pauses: u32,
}

/// Packet drops.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DropSummary {
    /// All drops.
    pub total: u64,
    /// Drops by cause.
    pub by_cause: BTreeMap<String, u64>,
    /// Lossless packets dropped (each one an error).
    pub lossless: usize,
}

/// Buffer use of one switch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SwitchSummary {
    /// Node id.
    pub node: u32,
    /// Its role in a two- or three-tier fabric (`leaf`, `spine`; `tor`, `agg`, `core`),
    /// `None` in other shapes (see [`switch_roles`]).
    pub role: Option<&'static str>,
    /// Buffer size, bytes.
    pub buffer_bytes: u64,
    /// Highest occupancy, bytes.
    pub peak_bytes: u64,
    /// Time-weighted median occupancy, bytes.
    pub occupancy_p50_bytes: u64,
    /// Time-weighted 95th percentile occupancy, bytes.
    pub occupancy_p95_bytes: u64,
    /// Time-weighted 99th percentile occupancy, bytes.
    pub occupancy_p99_bytes: u64,
    /// Shared pool after reservations, bytes.
    pub shared_pool_bytes: u64,
    /// Headroom reserved, bytes.
    pub headroom_reserved_bytes: u64,
    /// Time-weighted median of the reserved headroom in use, percent.
    pub headroom_utilisation_p50_percent: u64,
    /// Time-weighted 99th percentile of the reserved headroom in use, percent.
    pub headroom_utilisation_p99_percent: u64,
    /// Highest share of the reserved headroom ever in use, percent.
    pub headroom_utilisation_max_percent: u64,
    /// Fraction of the run with no reserved headroom in use.
    pub headroom_idle_fraction: f64,
    /// Largest headroom held by one PG, bytes.
    pub peak_pg_headroom_bytes: u64,
    /// Peak headroom and shared occupancy of every ingress PG that used either.
    pub pgs: Vec<PgPeaks>,
    /// Peak headroom (DSH: insurance) held by each ingress port that used any.
    pub ports: Vec<PortHeadroomPeak>,
}

/// Peak headroom held by one ingress port of a switch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortHeadroomPeak {
    /// Local port.
    pub port: u16,
    /// Highest headroom (DSH: insurance) held by the port's PGs together, bytes.
    pub headroom_bytes: u64,
}

/// How the run went.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    /// Events processed.
    pub events: u64,
    /// Simulated time at the end, ns.
    pub end_time_ns: f64,
    /// Why the run ended: `all_flows_done`, `stop_time`, `idle`, `lossless_drop`,
    /// `deadlock`, or `running` if it had not ended.
    pub stop_reason: String,
    /// Details of the stop (the lossless drop or the deadlock that ended the run).
    pub stop_detail: Option<String>,
    /// The cycle of paused queues that stopped a deadlocked run (omitted otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadlock: Option<crate::net::Deadlock>,
}

/// Speed and memory of the simulator (they depend on the machine and the thread count).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WallSummary {
    /// Wall-clock time of the run, seconds.
    pub wall_seconds: f64,
    /// Events processed per wall-clock second.
    pub events_per_second: f64,
    /// Simulated seconds per wall-clock second.
    pub sim_seconds_per_wall_second: f64,
    /// Packet slots the simulator held at most (per part of a partitioned run, summed).
    pub peak_packets: usize,
}

impl Summary {
    /// The summary with FCT statistics per `[[workload]]` entry of `groups` (the flows of
    /// `results` by id).
    pub fn with_workloads(mut self, results: &RunResults, groups: &WorkloadGroups) -> Summary {
        self.fct.by_workload = groups
            .names
            .iter()
            .zip(&groups.kinds)
            .enumerate()
            .map(|(g, (name, kind))| WorkloadFct {
                workload: name.clone(),
                kind: kind.clone(),
                stats: fct_stats(
                    results
                        .flows
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| groups.of_flow.get(*i) == Some(&(g as u32)))
                        .map(|(_, f)| f),
                ),
            })
            .collect();
        self
    }
}

fn fct_stats<'a>(flows: impl Iterator<Item = &'a FlowRecord>) -> FctStats {
    let mut slowdowns = Vec::new();
    let mut fcts = Vec::new();
    let mut fct_sum = 0f64;
    let mut goodput_sum = 0f64;
    for f in flows {
        if let (Some(fct), Some(s)) = (f.fct(), f.slowdown()) {
            slowdowns.push(s);
            let ns = ns_f64(fct);
            fcts.push(ns);
            fct_sum += ns;
            // A zero FCT (only in hand-made results) counts as 1 ps.
            goodput_sum += f.size as f64 * 8.0 / fct.as_secs_f64().max(1e-12) * 1e-9;
        }
    }
    slowdowns.sort_by(f64::total_cmp);
    fcts.sort_by(f64::total_cmp);
    let n = slowdowns.len();
    FctStats {
        flows: n,
        mean_fct_ns: (n > 0).then(|| fct_sum / n as f64),
        fct_p99_ns: nearest_rank(&fcts, 99),
        mean_goodput_gbps: (n > 0).then(|| goodput_sum / n as f64),
        slowdown_p50: nearest_rank(&slowdowns, 50),
        slowdown_p95: nearest_rank(&slowdowns, 95),
        slowdown_p99: nearest_rank(&slowdowns, 99),
        slowdown_max: slowdowns.last().copied(),
    }
}

pub(super) fn ns_f64(t: Time) -> f64 {
    t.as_ps() as f64 / 1_000.0
}

fn stop_reason(results: &RunResults) -> (String, Option<String>) {
    match results.stop_reason.as_ref() {
        None => ("running".into(), None),
        Some(StopReason::AllFlowsDone) => ("all_flows_done".into(), None),
        Some(StopReason::StopTime) => ("stop_time".into(), None),
        Some(StopReason::Idle) => ("idle".into(), None),
        Some(StopReason::Deadlock) => (
            "deadlock".into(),
            results.deadlock.as_ref().map(ToString::to_string),
        ),
        Some(StopReason::LosslessDrop(d)) => (
            "lossless_drop".into(),
            Some(format!(
                "lossless packet dropped at {} ns: switch {} port {} priority {} ({})",
                format_ns(d.time),
                d.node,
                d.port,
                d.prio,
                d.cause
            )),
        ),
    }
}

/// Computes the [`Summary`] of a run. `wall` is the wall-clock duration of the run; pass
/// `None` to keep the summary deterministic.
pub fn summarize(results: &RunResults, cfg: &SimConfig, wall: Option<Duration>) -> Summary {
    let topo = &cfg.topology;
    let hosts = topo.nodes.iter().filter(|k| **k == NodeKind::Host).count();
    // The switch parameters the run used (a credit fabric reserves VL buffers instead).
    let kind = cfg.fabric.name(topo.links.len());
    let switch = cfg.fabric.switch(&cfg.switch, kind == "credit");
    let config = ConfigSummary {
        seed: cfg.seed,
        hosts,
        switches: topo.nodes.len() - hosts,
        links: topo.links.len(),
        switch_buffer_bytes: cfg.switch.buffer_bytes,
        lossless_priorities: (0..8u8)
            .filter(|p| switch.lossless & (1 << p) != 0)
            .collect(),
        headroom_scheme: switch.scheme.name().to_string(),
        flow_control: cfg.fabric.describe(topo.links.len()),
        congestion_control: cfg.host.cc.name().into(),
        stop_time_ns: cfg.stop_time.map(ns_f64),
    };

    let finished = results.flows.iter().filter(|f| f.finish.is_some()).count();
    let flows = FlowCounts {
        total: results.flows.len(),
        finished,
        unfinished: results.flows.len() - finished,
    };

    let fct = FctSummary {
        overall: fct_stats(results.flows.iter()),
        by_size: SIZE_BUCKETS
            .iter()
            .enumerate()
            .map(|(i, b)| BucketFct {
                bucket: *b,
                stats: fct_stats(results.flows.iter().filter(|f| size_bucket(f.size) == i)),
            })
            .collect(),
        by_workload: Vec::new(),
    };

    let end_s = results.end_time.as_secs_f64();
    let throughput = ThroughputSummary {
        delivered_gbps: (results.end_time > Time::ZERO)
            .then(|| results.bytes.delivered as f64 * 8.0 / end_s * 1e-9),
        mean_flow_goodput_gbps: fct.overall.mean_goodput_gbps,
    };

    // Link rate of every (node, local port): ports are numbered in link order.
    let adj = routing::adjacency(topo);
    let rate_of = |node: u32, port: u16| -> u64 {
        adj.get(node as usize)
            .and_then(|a| a.get(usize::from(port)))
            .and_then(|&(_, link)| topo.links.get(link))
            .map_or(0, |l| l.rate.bps())
    };
    let mut pfc_ports = Vec::new();
    for p in &results.ports {
        for prio in 0..8usize {
            let (ps, rs, pt) = (p.pause_sent[prio], p.resume_sent[prio], p.paused_time[prio]);
            let (pe, vp) = (p.pause_episodes[prio], p.victim_pauses[prio]);
            if ps == 0 && rs == 0 && pt == Time::ZERO && pe == 0 {
                continue;
            }
            pfc_ports.push(PfcPortSummary {
                node: p.node,
                port: p.port,
                priority: prio as u8,
                peer: p.peer,
                rate_bps: rate_of(p.node, p.port),
                pauses_sent: ps,
                resumes_sent: rs,
                paused_ns: ns_f64(pt),
                pause_episodes: pe,
                victim_pauses: vp,
            });
        }
    }
    pfc_ports.sort_by_key(|e| (e.node, e.port, e.priority));
    // From the ports' counters, which count every frame whether or not the log was kept.
    let sum = |f: fn(&PortStats) -> u32| results.ports.iter().map(|p| u64::from(f(p))).sum();
    let port_level_pause_frames: u64 = sum(|p| p.port_pause_sent);
    let port_level_resume_frames: u64 = sum(|p| p.port_resume_sent);
    let pause_frames: u64 = sum(|p| p.pause_sent.iter().sum::<u32>()) + port_level_pause_frames;
    let resume_frames: u64 = sum(|p| p.resume_sent.iter().sum::<u32>()) + port_level_resume_frames;
    let port_level: Vec<PortLevelPfcSummary> = results
        .ports
        .iter()
        .filter(|p| {
            p.port_pause_sent > 0 || p.port_resume_sent > 0 || p.port_paused_time > Time::ZERO
        })
        .map(|p| PortLevelPfcSummary {
            node: p.node,
            port: p.port,
            peer: p.peer,
            pauses_sent: p.port_pause_sent,
            resumes_sent: p.port_resume_sent,
            paused_ns: ns_f64(p.port_paused_time),
            pause_episodes: p.port_pause_episodes,
            victim_pauses: p.port_victim_pauses,
        })
        .collect();
    let credit = CreditSummary {
        updates: results.ports.iter().flat_map(|p| p.credit_updates).sum(),
        blocked_ns: results
            .ports
            .iter()
            .flat_map(|p| p.credit_blocked_time)
            .map(ns_f64)
            .sum(),
        blocked_vls: results
            .ports
            .iter()
            .flat_map(|p| p.credit_blocked_time)
            .filter(|t| *t > Time::ZERO)
            .count() as u64,
        peak_input_vl_bytes: results
            .ports
            .iter()
            .filter(|p| topo.nodes.get(p.node as usize) == Some(&NodeKind::Switch))
            .flat_map(|p| p.credit_peak_bytes)
            .max()
            .unwrap_or(0),
        blocked_episodes: results.credit_blocks.len() as u64,
        waits: results
            .ports
            .iter()
            .map(PortStats::credit_waits_total)
            .sum(),
        victim_waits: results
            .ports
            .iter()
            .map(PortStats::credit_victim_waits_total)
            .sum(),
        ports: results
            .ports
            .iter()
            .flat_map(|p| {
                (0..8).map(move |v| CreditPortSummary {
                    node: p.node,
                    port: p.port,
                    vl: v as u8,
                    peer: p.peer,
                    blocked_ns: ns_f64(p.credit_blocked_time[v]),
                    updates: p.credit_updates[v],
                    peak_bytes: p.credit_peak_bytes[v],
                    waits: p.credit_waits[v],
                    victim_waits: p.credit_victim_waits[v],
                })
            })
            .filter(|c| c.blocked_ns > 0.0 || c.updates > 0 || c.peak_bytes > 0)
            .collect(),
    };
    let pfc = PfcSummary {
        pause_frames,
        resume_frames,
        ports: pfc_ports,
        port_level_pause_frames,
        port_level_resume_frames,
        merged_frames: results.ports.iter().map(|p| u64::from(p.pfc_merged)).sum(),
        port_level,
        pause_episodes: results
            .ports
            .iter()
            .map(PortStats::pause_episodes_total)
            .sum(),
        victim_pauses: results
            .ports
            .iter()
            .map(PortStats::victim_pauses_total)
            .sum(),
        watchdog_storms: results.watchdog.storms,
        watchdog_restorations: results.watchdog.restorations,
        watchdog_storm_time_ns: ns_f64(results.watchdog.storm_time),
    };

    let drops = DropSummary {
        total: results.drops.values().sum(),
        by_cause: results.drops.clone(),
        lossless: results.lossless_drops.len(),
    };

    let roles = switch_roles(results);
    let mut switches: Vec<SwitchSummary> = results
        .switches
        .iter()
        .map(|s| SwitchSummary {
            node: s.node,
            role: roles.get(&s.node).copied(),
            buffer_bytes: s.buffer_bytes,
            peak_bytes: s.peak_bytes,
            occupancy_p50_bytes: s.occupancy_percentiles[0],
            occupancy_p95_bytes: s.occupancy_percentiles[1],
            occupancy_p99_bytes: s.occupancy_percentiles[2],
            shared_pool_bytes: s.shared_pool_bytes,
            headroom_reserved_bytes: s.headroom_reserved_bytes,
            headroom_utilisation_p50_percent: s.headroom_utilisation_percent[0],
            headroom_utilisation_p99_percent: s.headroom_utilisation_percent[1],
            headroom_utilisation_max_percent: s.headroom_utilisation_percent[2],
            headroom_idle_fraction: s.headroom_idle_fraction,
            peak_pg_headroom_bytes: s.peak_pg_headroom_bytes,
            pgs: s.pgs.clone(),
            ports: s
                .port_headroom_peaks
                .iter()
                .map(|&(port, headroom_bytes)| PortHeadroomPeak {
                    port,
                    headroom_bytes,
                })
                .collect(),
        })
        .collect();
    switches.sort_by_key(|s| s.node);

    let (reason, detail) = stop_reason(results);
    let run = RunSummary {
        events: results.events,
        end_time_ns: ns_f64(results.end_time),
        stop_reason: reason,
        stop_detail: detail,
        deadlock: results.deadlock.clone(),
    };

    let wall = wall.map(|w| {
        let secs = w.as_secs_f64().max(1e-9);
        WallSummary {
            wall_seconds: w.as_secs_f64(),
            events_per_second: results.events as f64 / secs,
            sim_seconds_per_wall_second: end_s / secs,
            peak_packets: results.arena_slots,
        }
    });

    Summary {
        config,
        flows,
        fct,
        throughput,
        pfc,
        credit,
        drops,
        switches,
        marking: MarkingSummary::of(results, cfg),
        flow_channels: ChannelSummary::of(results),
        applications: apps::of(results, cfg),
        run,
        bytes: results.bytes,
        wall,
    }
}

/// The role of each switch in a tiered fabric, by node id, derived from the links (the
/// topology does not record roles): a switch's tier is its distance in links from the
/// nearest host. Two tiers are leaves and spines, three are top-of-rack, aggregation and
/// core switches (a fat tree's edge, aggregation and core). A single tier (star, dumbbell,
/// chain) or more than three tiers get no roles: the name would not tell switches apart or
/// would be a guess.
pub fn switch_roles(results: &RunResults) -> BTreeMap<u32, &'static str> {
    let switches: BTreeSet<u32> = results.switches.iter().map(|s| s.node).collect();
    let mut peers: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for p in &results.ports {
        peers.entry(p.node).or_default().push(p.peer);
    }
    // Breadth-first from every host at once.
    let mut tier: BTreeMap<u32, usize> = peers
        .keys()
        .filter(|n| !switches.contains(n))
        .map(|&h| (h, 0))
        .collect();
    let mut frontier: Vec<u32> = tier.keys().copied().collect();
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for n in frontier {
            for &m in peers.get(&n).map_or(&[][..], Vec::as_slice) {
                if let std::collections::btree_map::Entry::Vacant(e) = tier.entry(m) {
                    e.insert(depth);
                    next.push(m);
                }
            }
        }
        frontier = next;
    }
    let tiers = switches.iter().filter_map(|s| tier.get(s)).max().copied();
    let names: &[&'static str] = match tiers {
        Some(2) => &["leaf", "spine"],
        Some(3) => &["tor", "agg", "core"],
        _ => return BTreeMap::new(),
    };
    switches
        .iter()
        .filter_map(|s| Some((*s, *names.get(tier.get(s)?.checked_sub(1)?)?)))
        .collect()
}
