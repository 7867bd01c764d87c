//! Turning a run's [`RunResults`] into a [`Summary`] and into files.
//!
//! - [`summarize`] computes the headline numbers of a run (FCT slowdown percentiles, PFC
//!   activity, drops, buffer use, speed) as a serializable [`Summary`];
//! - [`write_all`] writes the per-flow, PFC and time-series CSVs plus `summary.json` into a
//!   directory, and with [`WriteOptions::compat_hpcc`] the ns-3 HPCC simulator's `fct.txt`
//!   and `pfc.txt`;
//! - [`summary_table`] renders the summary as a short aligned text table for a terminal.
//!
//! # Conventions
//!
//! - **Times in CSV files** are nanoseconds written exactly as `<ns>.<ps:03>`: always three
//!   decimals, no rounding (the engine counts picoseconds), e.g. `1234.500` is 1 234 500 ps.
//!   See [`format_ns`]. The HPCC-compatible files use whole nanoseconds, rounded down, as the
//!   HPCC simulator prints integer ns.
//! - **Floating-point numbers in CSV files** (slowdown, Gb/s) are written with six decimals.
//! - **Size buckets** ([`SIZE_BUCKETS`]) use decimal units (1 KB = 1 000 bytes, 1 MB =
//!   1 000 000 bytes) and are half-open: `<10KB` is `[0, 10 000)`, `10KB-100KB` is
//!   `[10 000, 100 000)`, `100KB-1MB` is `[100 000, 1 000 000)`, `>=1MB` is
//!   `[1 000 000, ∞)`.
//! - **Percentiles** are nearest-rank ([`nearest_rank`]): the p-th percentile of `n` sorted
//!   values is the value of rank `ceil(p × n / 100)` (1-based), at least rank 1. No
//!   interpolation, so every reported percentile is a value that occurred.
//! - **Determinism**: without wall-clock data (`wall = None`, or
//!   [`WriteOptions::include_wall_time`] off) every file is a pure function of the results
//!   and config, byte-identical across runs of the same scenario and seed. JSON keys follow
//!   the struct field order; maps are ordered.
//! - **Atomicity**: every file is first written to a hidden temporary name in the output
//!   directory (`.<name>.tmp`) and renamed into place only once all files have been written,
//!   so a failed write leaves no half-written file under a final name.

use crate::config::SimConfig;
use crate::results::{
    ByteLedger, CreditBlock, FlowRecord, PfcRecord, PgPeaks, PortStats, RunResults, StopReason,
};
use crate::routing;
use crate::topology::NodeKind;
use crate::workload::WorkloadGroups;
use headroom_mech::units::{human_bytes, Time};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod apps;
mod channels;
mod marking;
pub use apps::AppSummary;
pub use channels::ChannelSummary;
pub use marking::{marking_line, state_name, MarkingSummary, QueueMarkingSummary, StateCounts};

/// A flow size class: sizes in `[min_bytes, max_bytes)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    /// Short name, e.g. `"10KB-100KB"`.
    pub name: &'static str,
    /// Smallest size in the bucket, bytes (inclusive).
    pub min_bytes: u64,
    /// Bound above the bucket, bytes (exclusive); `None` for the last bucket.
    pub max_bytes: Option<u64>,
}

/// The flow size buckets of the FCT statistics (decimal units, half-open intervals).
pub const SIZE_BUCKETS: [SizeBucket; 4] = [
    SizeBucket {
        name: "<10KB",
        min_bytes: 0,
        max_bytes: Some(10_000),
    },
    SizeBucket {
        name: "10KB-100KB",
        min_bytes: 10_000,
        max_bytes: Some(100_000),
    },
    SizeBucket {
        name: "100KB-1MB",
        min_bytes: 100_000,
        max_bytes: Some(1_000_000),
    },
    SizeBucket {
        name: ">=1MB",
        min_bytes: 1_000_000,
        max_bytes: None,
    },
];

/// Index in [`SIZE_BUCKETS`] of the bucket holding a flow of `size` bytes.
pub fn size_bucket(size: u64) -> usize {
    SIZE_BUCKETS
        .iter()
        .position(|b| !matches!(b.max_bytes, Some(m) if size >= m))
        .unwrap_or(SIZE_BUCKETS.len() - 1)
}

/// The nearest-rank `p`-th percentile (`p` in percent, 0..=100) of `sorted` (ascending):
/// the value of 1-based rank `max(1, ceil(p × n / 100))`. `None` when `sorted` is empty.
pub fn nearest_rank(sorted: &[f64], p: u32) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let rank = (p.min(100) as usize * n).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

/// A time as nanoseconds with exactly three decimals (`<ns>.<ps:03>`), exact.
pub fn format_ns(t: Time) -> String {
    let ps = t.as_ps();
    format!("{}.{:03}", ps / 1_000, ps % 1_000)
}

/// The IPv4 address the ns-3 HPCC simulator gives host `node`:
/// `0x0b000001 + (node / 256) × 0x10000 + (node % 256) × 0x100` (11.x.y.1), wrapping.
pub fn hpcc_ip(node: u32) -> u32 {
    0x0b00_0001u32
        .wrapping_add((node / 256).wrapping_mul(0x0001_0000))
        .wrapping_add((node % 256) * 0x0000_0100)
}

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

fn ns_f64(t: Time) -> f64 {
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

/// What [`write_all`] writes besides the standard files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Also write `fct.txt` and `pfc.txt` in the ns-3 HPCC simulator's formats.
    pub compat_hpcc: bool,
    /// Keep the wall-clock section of the summary in `summary.json` (off: it is written as
    /// `null`, so the file is deterministic).
    pub include_wall_time: bool,
}

/// Why output files could not be written. Every variant names the file or directory.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The output directory could not be created.
    #[error("cannot create output directory {}: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A file could not be written (or moved into place).
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file, under its final name.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The summary could not be serialized.
    #[error("cannot serialize {}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The serializer's error.
        source: serde_json::Error,
    },
}

impl OutputError {
    /// The file or directory the error is about.
    pub fn path(&self) -> &Path {
        match self {
            OutputError::CreateDir { path, .. }
            | OutputError::Write { path, .. }
            | OutputError::Json { path, .. } => path,
        }
    }
}

/// Files written to temporary names, to be renamed into place together.
struct Staging<'a> {
    dir: &'a Path,
    /// (temporary path, final path), in writing order.
    files: Vec<(PathBuf, PathBuf)>,
}

impl Staging<'_> {
    /// Writes `name` to its temporary path with `body`.
    fn file(
        &mut self,
        name: &str,
        body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), OutputError> {
        let path = self.dir.join(name);
        let tmp = self.dir.join(format!(".{name}.tmp"));
        // Registered before creating it, so a failure below also removes it.
        self.files.push((tmp.clone(), path.clone()));
        let result = File::create(&tmp).and_then(|f| {
            let mut w = BufWriter::new(f);
            body(&mut w)?;
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()
        });
        result.map_err(|source| OutputError::Write { path, source })
    }

    /// Renames every file into place.
    fn commit(&mut self) -> Result<Vec<PathBuf>, OutputError> {
        let mut done = Vec::with_capacity(self.files.len());
        while !self.files.is_empty() {
            let (tmp, path) = self.files.remove(0);
            if let Err(source) = fs::rename(&tmp, &path) {
                // Keep it listed so `abort` removes it with the rest.
                self.files.insert(0, (tmp, path.clone()));
                return Err(OutputError::Write { path, source });
            }
            done.push(path);
        }
        Ok(done)
    }

    /// Removes the temporary files not renamed yet.
    fn abort(&mut self) {
        for (tmp, _) in self.files.drain(..) {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// Writes the files of a run into `dir` (created if missing) and returns their paths:
///
/// | file | content |
/// | --- | --- |
/// | `flows.csv` | `id,src,dst,priority,size,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,retransmitted,delivered_bytes`; one row per flow by id; `finish_ns`, `fct_ns`, `slowdown` empty for unfinished flows; `size`, `retransmitted` and `delivered_bytes` in bytes |
/// | `summary.json` | the [`Summary`], pretty-printed, keys in struct order |
/// | `pfc.csv` | `time_ns,node,port,priority,kind,quanta,scope`; one row per PFC frame *sent* (`kind` is `pause` or `resume`; `scope` is `queue`, or `port` for a port-level frame pausing every class, whose priority column is 0), in sending order |
/// | `queues.csv` | `time_ns,node,port,queue,bytes`: non-empty egress queues at each sample (only if sampled) |
/// | `buffer.csv` | `time_ns,node,used_bytes,headroom_bytes`: each switch at each sample (only if sampled) |
/// | `rates.csv` | `time_ns,flow,gbps`: active flows' sending rates at each sample (only if sampled) |
/// | `fct.txt` | with `compat_hpcc`: HPCC's `sip dip sport dport size start_ns fct_ns standalone_fct_ns` |
/// | `pfc.txt` | with `compat_hpcc`: HPCC's `time_ns node node_type port_index type` |
///
/// Times are ns as [`format_ns`] writes them; floats have six decimals.
///
/// HPCC formats (as the HPCC simulator's `third.cc` prints them): `fct.txt` has one line per
/// finished flow in completion order (ties by flow id), IPs as `%08x` of [`hpcc_ip`], times
/// in whole ns rounded down (`fct_ns` is the exact FCT rounded down), and
/// `standalone_fct_ns` is this simulator's ideal FCT (not HPCC's own base-RTT formula).
/// `pfc.txt` has one line per PFC frame *received*, in arrival order: node type 1 for a
/// switch and 0 for a host, port index = local port + 1 (ns-3 device 0 is the loopback),
/// type 1 for PAUSE and 0 for RESUME.
///
/// Files go to temporary names first and are renamed once all are written; on error the
/// temporary files are removed.
pub fn write_all(
    dir: &Path,
    results: &RunResults,
    cfg: &SimConfig,
    summary: &Summary,
    opts: &WriteOptions,
) -> Result<Vec<PathBuf>, OutputError> {
    let _ = cfg; // Everything needed is in `results` and `summary`; kept for future formats.
    fs::create_dir_all(dir).map_err(|source| OutputError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut st = Staging {
        dir,
        files: Vec::new(),
    };
    let result = stage_all(&mut st, results, summary, opts).and_then(|()| st.commit());
    if result.is_err() {
        st.abort();
    }
    result
}

fn stage_all(
    st: &mut Staging<'_>,
    results: &RunResults,
    summary: &Summary,
    opts: &WriteOptions,
) -> Result<(), OutputError> {
    st.file("flows.csv", |w| write_flows_csv(w, results))?;

    let mut s = summary.clone();
    if !opts.include_wall_time {
        s.wall = None;
    }
    let mut json = serde_json::to_vec_pretty(&s).map_err(|source| OutputError::Json {
        path: st.dir.join("summary.json"),
        source,
    })?;
    json.push(b'\n');
    st.file("summary.json", |w| w.write_all(&json))?;

    if results.pfc_log {
        st.file("pfc.csv", |w| write_pfc_csv(w, &results.pfc_sent))?;
    }
    // "pfc", "credit" or "mixed", after "flow-channels/" on a flow-channel fabric.
    let links = summary.config.flow_control.rsplit('/').next();
    if links != Some("pfc") && results.credit_log {
        st.file("credit.csv", |w| {
            write_credit_csv(w, &results.credit_blocks)
        })?;
    }

    if !results.queue_samples.is_empty() {
        st.file("queues.csv", |w| {
            writeln!(w, "time_ns,node,port,queue,bytes")?;
            for q in &results.queue_samples {
                let t = format_ns(q.time);
                writeln!(w, "{t},{},{},{},{}", q.node, q.port, q.queue, q.bytes)?;
            }
            Ok(())
        })?;
    }
    if !results.buffer_samples.is_empty() {
        st.file("buffer.csv", |w| {
            writeln!(w, "time_ns,node,used_bytes,headroom_bytes")?;
            for b in &results.buffer_samples {
                writeln!(
                    w,
                    "{},{},{},{}",
                    format_ns(b.time),
                    b.node,
                    b.used,
                    b.headroom
                )?;
            }
            Ok(())
        })?;
    }
    if !results.mark_samples.is_empty() {
        st.file("marks.csv", |w| {
            marking::write_marks_csv(w, &results.mark_samples)
        })?;
    }
    if !results.rate_samples.is_empty() {
        st.file("rates.csv", |w| {
            writeln!(w, "time_ns,flow,gbps")?;
            for r in &results.rate_samples {
                writeln!(w, "{},{},{:.6}", format_ns(r.time), r.flow, r.gbps)?;
            }
            Ok(())
        })?;
    }
    if opts.compat_hpcc {
        st.file("fct.txt", |w| write_hpcc_fct(w, results))?;
        if results.pfc_log {
            st.file("pfc.txt", |w| write_hpcc_pfc(w, &results.pfc_received))?;
        }
    }
    Ok(())
}

fn write_flows_csv(w: &mut dyn Write, results: &RunResults) -> io::Result<()> {
    writeln!(
        w,
        "id,src,dst,priority,size,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,retransmitted,\
         delivered_bytes"
    )?;
    for f in &results.flows {
        let (finish, fct, slowdown) = match (f.finish, f.fct(), f.slowdown()) {
            (Some(fin), Some(fct), Some(s)) => (format_ns(fin), format_ns(fct), format!("{s:.6}")),
            _ => (String::new(), String::new(), String::new()),
        };
        writeln!(
            w,
            "{},{},{},{},{},{},{finish},{fct},{},{slowdown},{},{}",
            f.id,
            f.src,
            f.dst,
            f.prio,
            f.size,
            format_ns(f.start),
            format_ns(f.ideal_fct),
            f.retransmitted,
            f.delivered
        )?;
    }
    Ok(())
}

fn write_pfc_csv(w: &mut dyn Write, records: &[PfcRecord]) -> io::Result<()> {
    writeln!(w, "time_ns,node,port,priority,kind,quanta,scope")?;
    for r in records {
        let kind = if r.quanta == 0 { "resume" } else { "pause" };
        let scope = if r.port_level { "port" } else { "queue" };
        writeln!(
            w,
            "{},{},{},{},{kind},{},{scope}",
            format_ns(r.time),
            r.node,
            r.port,
            r.prio,
            r.quanta
        )?;
    }
    Ok(())
}

fn write_credit_csv(w: &mut dyn Write, blocks: &[CreditBlock]) -> io::Result<()> {
    writeln!(w, "start_ns,end_ns,node,port,vl")?;
    for b in blocks {
        writeln!(
            w,
            "{},{},{},{},{}",
            format_ns(b.start),
            format_ns(b.end),
            b.node,
            b.port,
            b.vl
        )?;
    }
    Ok(())
}

fn write_hpcc_fct(w: &mut dyn Write, results: &RunResults) -> io::Result<()> {
    let mut done: Vec<(&FlowRecord, Time, Time)> = results
        .flows
        .iter()
        .filter_map(|f| Some((f, f.finish?, f.fct()?)))
        .collect();
    done.sort_by_key(|(f, finish, _)| (*finish, f.id));
    for (f, _, fct) in done {
        writeln!(
            w,
            "{:08x} {:08x} {} {} {} {} {} {}",
            hpcc_ip(f.src),
            hpcc_ip(f.dst),
            f.sport,
            f.dport,
            f.size,
            f.start.as_ns(),
            fct.as_ns(),
            f.ideal_fct.as_ns()
        )?;
    }
    Ok(())
}

fn write_hpcc_pfc(w: &mut dyn Write, records: &[PfcRecord]) -> io::Result<()> {
    for r in records {
        writeln!(
            w,
            "{} {} {} {} {}",
            r.time.as_ns(),
            r.node,
            u8::from(r.is_switch),
            u32::from(r.port) + 1,
            u8::from(r.quanta != 0)
        )?;
    }
    Ok(())
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

/// A count with a decimal prefix, like `1.23 M` or `950`.
fn human_count(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2} G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// A simulated time in ns, shown in the largest unit that keeps it ≥ 1.
fn human_time_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} us", ns / 1e3)
    } else {
        format!("{ns:.3} ns")
    }
}

fn opt2(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.2}"))
}

/// A compact, aligned text table of a summary for the end of a run: flows, slowdown
/// percentiles overall and per size bucket, PFC frames, drops, peak buffer of the five
/// switches with the highest peak, events and (if measured) events per second.
///
/// Every header is in words; the few short forms a column needs (`99th pct`) are
/// explained under their block. Switch rows start with the node id after 13 spaces.
pub fn summary_table(summary: &Summary) -> String {
    let mut out = String::new();
    let s = summary;
    let _ = writeln!(
        out,
        "flows        {} total, {} finished, {} unfinished",
        s.flows.total, s.flows.finished, s.flows.unfinished
    );
    let _ = writeln!(
        out,
        "slowdown     flow completion time over the ideal (the flow alone on the network)"
    );
    let _ = writeln!(
        out,
        "  {:<11}{:>8}{:>10}{:>10}{:>10}{:>10}",
        "flow size", "flows", "median", "95th pct", "99th pct", "max"
    );
    let rows = std::iter::once(("all", &s.fct.overall))
        .chain(s.fct.by_size.iter().map(|b| (b.bucket.name, &b.stats)));
    for (name, st) in rows {
        let _ = writeln!(
            out,
            "  {:<11}{:>8}{:>10}{:>10}{:>10}{:>10}",
            name,
            st.flows,
            opt2(st.slowdown_p50),
            opt2(st.slowdown_p95),
            opt2(st.slowdown_p99),
            opt2(st.slowdown_max)
        );
    }
    let paused_ports = {
        let mut v: Vec<(u32, u16)> = s
            .pfc
            .ports
            .iter()
            .filter(|p| p.paused_ns > 0.0)
            .map(|p| (p.node, p.port))
            .collect();
        v.dedup();
        v.len()
    };
    let _ = writeln!(
        out,
        "pause frames {} PAUSE, {} RESUME sent (of which port-level: {} PAUSE, {} RESUME); \
         {} port(s) paused",
        s.pfc.pause_frames,
        s.pfc.resume_frames,
        s.pfc.port_level_pause_frames,
        s.pfc.port_level_resume_frames,
        paused_ports
    );
    if s.pfc.watchdog_storms > 0 {
        let _ = writeln!(
            out,
            "             PFC watchdog: {} storm(s) detected, {} restored, {:.3} ms in storms",
            s.pfc.watchdog_storms,
            s.pfc.watchdog_restorations,
            s.pfc.watchdog_storm_time_ns / 1e6
        );
    }
    if s.pfc.pause_episodes > 0 {
        let _ = writeln!(
            out,
            "             {} pause(s) decided, {} victim pause(s) (stopped traffic for an \
             uncongested egress)",
            s.pfc.pause_episodes, s.pfc.victim_pauses
        );
    }
    let _ = writeln!(out, "marking      {}", marking::marking_line(&s.marking));
    if let Some(c) = &s.flow_channels {
        let _ = writeln!(out, "channels     {}", c.line());
    }
    if let Some(apps) = &s.applications {
        let _ = writeln!(out, "applications {}", apps::line(apps));
    }
    let causes = if s.drops.by_cause.is_empty() {
        "none".to_string()
    } else {
        s.drops
            .by_cause
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "drops        {} ({causes}); {} of lossless packets",
        s.drops.total, s.drops.lossless
    );
    if !s.switches.is_empty() {
        let mut top: Vec<&SwitchSummary> = s.switches.iter().collect();
        top.sort_by(|a, b| b.peak_bytes.cmp(&a.peak_bytes).then(a.node.cmp(&b.node)));
        let shown = top.len().min(5);
        let _ = writeln!(
            out,
            "{:<13}{:>8}{:>12}{:>13}{:>12}{:>16}",
            "switch buffer", "switch", "peak", "% of buffer", "99th pct", "queue headroom"
        );
        for sw in &top[..shown] {
            let pct = 100.0 * sw.peak_bytes as f64 / sw.buffer_bytes.max(1) as f64;
            let name = match sw.role {
                Some(role) => format!("{} {role}", sw.node),
                None => sw.node.to_string(),
            };
            let _ = writeln!(
                out,
                "  {:<11}{:>8}{:>12}{:>12.1}%{:>12}{:>16}",
                "",
                name,
                human_bytes(sw.peak_bytes),
                pct,
                human_bytes(sw.occupancy_p99_bytes),
                human_bytes(sw.peak_pg_headroom_bytes)
            );
        }
        if top.len() > 5 {
            let _ = writeln!(out, "  top 5 of {} switches by peak", top.len());
        }
        let _ = writeln!(
            out,
            "  99th pct: the occupancy exceeded 1 % of the time; queue headroom: the most \
             headroom one ingress queue (priority group) held"
        );
    }
    let speed = s.wall.as_ref().map_or_else(String::new, |w| {
        format!(
            " in {:.3} s wall ({} events/s, {:.3e} simulated s per wall s)",
            w.wall_seconds,
            human_count(w.events_per_second),
            w.sim_seconds_per_wall_second
        )
    });
    let _ = writeln!(out, "events       {}{speed}", s.run.events);
    let _ = writeln!(
        out,
        "end          {} ({}{})",
        human_time_ns(s.run.end_time_ns),
        // `all_flows_done` is a summary.json value; the terminal gets it in words.
        s.run.stop_reason.replace('_', " "),
        s.run
            .stop_detail
            .as_ref()
            .map_or_else(String::new, |d| format!(": {d}"))
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_half_open() {
        assert_eq!(size_bucket(1), 0);
        assert_eq!(size_bucket(9_999), 0);
        assert_eq!(size_bucket(10_000), 1);
        assert_eq!(size_bucket(99_999), 1);
        assert_eq!(size_bucket(100_000), 2);
        assert_eq!(size_bucket(999_999), 2);
        assert_eq!(size_bucket(1_000_000), 3);
        assert_eq!(size_bucket(u64::MAX), 3);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(nearest_rank(&v, 50), Some(50.0));
        assert_eq!(nearest_rank(&v, 99), Some(99.0));
        assert_eq!(nearest_rank(&v, 100), Some(100.0));
        assert_eq!(nearest_rank(&v, 0), Some(1.0));
        assert_eq!(nearest_rank(&[7.0], 99), Some(7.0));
        assert_eq!(nearest_rank(&[], 50), None);
        // n = 3: p50 → rank 2, p95 → rank 3.
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0], 50), Some(2.0));
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0], 95), Some(3.0));
    }

    #[test]
    fn ns_format_is_exact() {
        assert_eq!(format_ns(Time(0)), "0.000");
        assert_eq!(format_ns(Time(1_234_500)), "1234.500");
        assert_eq!(format_ns(Time(7)), "0.007");
        assert_eq!(format_ns(Time(u64::MAX)), "18446744073709551.615");
    }

    #[test]
    fn hpcc_ips() {
        assert_eq!(hpcc_ip(0), 0x0b00_0001);
        assert_eq!(hpcc_ip(1), 0x0b00_0101);
        assert_eq!(hpcc_ip(255), 0x0b00_ff01);
        assert_eq!(hpcc_ip(256), 0x0b01_0001);
    }
}
