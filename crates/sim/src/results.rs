//! What a run produces: per-flow records, PFC logs, counters, samples, and summaries.
//!
//! Everything here is plain data, filled by the engine and serialized by `crate::output`.
//! Collections are vectors in a deterministic order (by flow id, by node then port) or
//! ordered maps, so outputs are byte-identical for the same scenario and seed.

use headroom_mech::congestion_point::MarkTotals;
use headroom_mech::tcd::QueueState;
use headroom_mech::units::Time;
use serde::Serialize;
use std::collections::BTreeMap;

/// One flow's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowRecord {
    /// Flow id (index in the flow list).
    pub id: u32,
    /// Source host.
    pub src: u32,
    /// Destination host.
    pub dst: u32,
    /// Priority.
    pub prio: u8,
    /// Size in bytes.
    pub size: u64,
    /// Start time.
    pub start: Time,
    /// When the sender received the last acknowledgement, if it did.
    pub finish: Option<Time>,
    /// Flow completion time on an unloaded path at line rate.
    pub ideal_fct: Time,
    /// Destination port (the 5-tuple's, also written in the HPCC FCT format).
    pub dport: u16,
    /// Source port assigned by the sender.
    pub sport: u16,
    /// Payload bytes sent again after a loss or timeout.
    pub retransmitted: u64,
    /// Payload bytes the destination received in order (the flow's size once it is
    /// delivered; less if the run stopped first).
    pub delivered: u64,
}

impl FlowRecord {
    /// Flow completion time, if finished.
    pub fn fct(&self) -> Option<Time> {
        self.finish.map(|f| f - self.start)
    }
    /// FCT divided by the ideal FCT, if finished.
    pub fn slowdown(&self) -> Option<f64> {
        self.fct()
            .map(|f| f.as_ps() as f64 / self.ideal_fct.as_ps().max(1) as f64)
    }
}

/// A PFC frame sent or received.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PfcRecord {
    /// When it was sent (for the sent log) or received (for the received log).
    pub time: Time,
    /// Node that sent (or received) it.
    pub node: u32,
    /// Whether that node is a switch.
    pub is_switch: bool,
    /// Local port index at that node.
    pub port: u16,
    /// Priority class (0 for a port-level frame).
    pub prio: u8,
    /// A port-level frame (every class enabled, DSH).
    pub port_level: bool,
    /// Timer in quanta; 0 is a RESUME.
    pub quanta: u16,
}

/// One episode of a credit link's transmitter waiting for credit on a VL: from the first
/// frame refused to the credit update that let it go (or the end of the run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CreditBlock {
    /// When the first frame was refused.
    pub start: Time,
    /// When credit for it arrived (the run's end time if none did).
    pub end: Time,
    /// Node owning the transmitter.
    pub node: u32,
    /// Whether that node is a switch.
    pub is_switch: bool,
    /// Local port index at that node.
    pub port: u16,
    /// The virtual lane.
    pub vl: u8,
}

/// Counters of one port (one direction of a link: what this port transmits).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PortStats {
    /// Node owning the port.
    pub node: u32,
    /// Local port index.
    pub port: u16,
    /// Node at the other end.
    pub peer: u32,
    /// PAUSE frames sent by this port (for its ingress PGs), per priority.
    pub pause_sent: [u32; 8],
    /// RESUME frames sent, per priority.
    pub resume_sent: [u32; 8],
    /// Time this port's transmitter was paused by its class's own timer, per priority.
    pub paused_time: [Time; 8],
    /// Port-level PAUSE frames sent (DSH).
    pub port_pause_sent: u32,
    /// Port-level RESUME frames sent.
    pub port_resume_sent: u32,
    /// PFC decisions (counted in the fields above) that updated a frame of their class
    /// still waiting to be sent instead of queueing another.
    pub pfc_merged: u32,
    /// Time this port's transmitter was paused by port-level frames.
    pub port_paused_time: Time,
    /// Pauses decided on this port (XOFF decisions that started a pause, refreshes not
    /// counted), per priority.
    pub pause_episodes: [u32; 8],
    /// Those of `pause_episodes` that stopped upstream traffic headed to another egress
    /// than the congested one (see `net::victim`), per priority.
    pub victim_pauses: [u32; 8],
    /// Port-level pauses decided on this port.
    pub port_pause_episodes: u32,
    /// Port-level pauses that stopped traffic headed to another egress than the congested one.
    pub port_victim_pauses: u32,
    /// Frames transmitted.
    pub tx_frames: u64,
    /// Bytes transmitted (frame bytes, without preamble and gap).
    pub tx_bytes: u64,
    /// Largest egress queue, bytes, per priority.
    pub peak_queue: [u64; 8],
    /// Time this port's transmitter had a frame waiting for credit, per VL (credit links;
    /// zero on PFC links).
    pub credit_blocked_time: [Time; 8],
    /// Credit updates (flow-control packets) this port sent, per VL.
    pub credit_updates: [u64; 8],
    /// Most bytes (whole blocks) this port's receive buffer held at once, per VL (credit
    /// links).
    pub credit_peak_bytes: [u64; 8],
    /// Waits for credit this port's transmitter began, per VL (credit links).
    pub credit_waits: [u32; 8],
    /// Those that held traffic headed elsewhere than the egress the downstream switch's
    /// VL buffer was filled for, per VL (the credit analogue of `victim_pauses`).
    pub credit_victim_waits: [u32; 8],
}

impl PortStats {
    /// Pauses decided on this port, queue-level and port-level.
    pub fn pause_episodes_total(&self) -> u64 {
        u64::from(self.port_pause_episodes)
            + self
                .pause_episodes
                .iter()
                .map(|&x| u64::from(x))
                .sum::<u64>()
    }

    /// Victim pauses among them, queue-level and port-level.
    pub fn victim_pauses_total(&self) -> u64 {
        u64::from(self.port_victim_pauses)
            + self
                .victim_pauses
                .iter()
                .map(|&x| u64::from(x))
                .sum::<u64>()
    }

    /// Waits for credit begun on every VL.
    pub fn credit_waits_total(&self) -> u64 {
        self.credit_waits.iter().map(|&x| u64::from(x)).sum()
    }

    /// Victim waits among them.
    pub fn credit_victim_waits_total(&self) -> u64 {
        self.credit_victim_waits.iter().map(|&x| u64::from(x)).sum()
    }
}

/// Buffer statistics of one switch.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SwitchStats {
    /// Node id.
    pub node: u32,
    /// Buffer size, bytes.
    pub buffer_bytes: u64,
    /// Shared pool after reservations, bytes.
    pub shared_pool_bytes: u64,
    /// Headroom reserved in total, bytes (SIH: eta per lossless PG; SHP: the pool; DSH: the
    /// insurance, eta per port).
    pub headroom_reserved_bytes: u64,
    /// Time-weighted percentiles (p50, p99, max) of the reserved headroom in use, percent.
    pub headroom_utilisation_percent: [u64; 3],
    /// Fraction of the run with no reserved headroom cell in use at all.
    pub headroom_idle_fraction: f64,
    /// Highest occupancy, bytes.
    pub peak_bytes: u64,
    /// Time-weighted occupancy percentiles (p50, p95, p99) in bytes.
    pub occupancy_percentiles: [u64; 3],
    /// Largest headroom held by any single PG, bytes.
    pub peak_pg_headroom_bytes: u64,
    /// Largest shared occupancy of any single PG, bytes.
    pub peak_pg_shared_bytes: u64,
    /// Cells allocated over the run.
    pub cells_allocated: u64,
    /// Cells freed over the run.
    pub cells_freed: u64,
    /// Cells resident at the end.
    pub cells_resident: u64,
    /// Peaks of every ingress PG that used shared buffer or headroom, by port then priority.
    pub pgs: Vec<PgPeaks>,
    /// Peak headroom held by each ingress port that used any (DSH: its insurance; SIH and
    /// SHP: its PGs' headroom together), by port.
    pub port_headroom_peaks: Vec<(u16, u64)>,
}

/// Peak occupancy of one ingress PG (switch port, priority) over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PgPeaks {
    /// Local ingress port.
    pub port: u16,
    /// Priority.
    pub prio: u8,
    /// Highest headroom held, bytes.
    pub headroom_bytes: u64,
    /// Highest shared occupancy, bytes.
    pub shared_bytes: u64,
}

/// A lossless packet dropped: always an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LosslessDrop {
    /// When.
    pub time: Time,
    /// Switch node.
    pub node: u32,
    /// Ingress port (local index).
    pub port: u16,
    /// Priority.
    pub prio: u8,
    /// Why.
    pub cause: &'static str,
}

/// A sample of one egress queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct QueueSample {
    /// Sample time.
    pub time: Time,
    /// Switch node.
    pub node: u32,
    /// Local port.
    pub port: u16,
    /// Queue (priority).
    pub queue: u8,
    /// Bytes queued.
    pub bytes: u64,
}

/// What one switch egress queue decided about marks in one sample interval (a row of
/// `marks.csv`); only queues that sent data in the interval have one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MarkSample {
    /// End of the interval.
    pub time: Time,
    /// Switch node.
    pub node: u32,
    /// Local port.
    pub port: u16,
    /// The node at the other end of the port.
    pub peer: u32,
    /// Queue (priority).
    pub queue: u8,
    /// Data packets that left the queue in the interval.
    pub departures: u64,
    /// Of them, packets this queue decided to mark CE.
    pub ce_marked: u64,
    /// Of them, packets this queue decided to mark UE.
    pub ue_marked: u64,
    /// The queue's state at the end of the interval.
    pub state: QueueState,
}

/// What one switch egress queue that marks decided over the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct QueueMarking {
    /// Switch node.
    pub node: u32,
    /// Local port.
    pub port: u16,
    /// The node at the other end of the port.
    pub peer: u32,
    /// Queue (priority).
    pub queue: u8,
    /// max(T_on) of the paper's TCD detector on this queue (`None` for other detectors).
    pub max_t_on: Option<Time>,
    /// Counts and time in each state, to the end of the run.
    pub totals: MarkTotals,
}

/// A sample of one switch's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BufferSample {
    /// Sample time.
    pub time: Time,
    /// Switch node.
    pub node: u32,
    /// Bytes in use.
    pub used: u64,
    /// Bytes of headroom in use.
    pub headroom: u64,
}

/// A sample of one flow's sending rate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RateSample {
    /// Sample time.
    pub time: Time,
    /// Flow id.
    pub flow: u32,
    /// Rate in Gb/s.
    pub gbps: f64,
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum StopReason {
    /// Every flow finished.
    AllFlowsDone,
    /// The configured stop time was reached.
    StopTime,
    /// Nothing was left to happen (some flows could not finish).
    Idle,
    /// A lossless packet was dropped and the run was told to fail on it.
    LosslessDrop(LosslessDrop),
    /// A cycle of paused queues stayed paused for the detection time
    /// ([`RunResults::deadlock`] names it).
    Deadlock,
}

/// What reroutes did over a run (`[fabric.flow_channels.reroute]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RerouteStats {
    /// Channels a switch found joining an overloaded output (each hop asks once per
    /// channel).
    pub asks: u64,
    /// Flows moved to another path.
    pub moved: u64,
    /// Reroutes that kept the path (no other next hop had room for the channel, or
    /// nothing was queued to move).
    pub kept: u64,
    /// Reroutes no hop could take (no other path up to the ingress edge).
    pub unresolved: u64,
}

/// What the flow-channel layer did (a flow-channel fabric only).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ChannelStats {
    /// ACK frames sent upstream between switches.
    pub ack_frames: u64,
    /// ACKs they carried.
    pub acks: u64,
    /// Their bytes (without preamble and inter-frame gap).
    pub ack_bytes: u64,
    /// ACKs that reached their channel's ingress edge.
    pub acks_home: u64,
    /// Data frames dropped on arrival at a switch, acknowledged upstream at once.
    pub drop_acks: u64,
    /// Data frames that had to wait for a channel (a full table).
    pub waits: u64,
    /// Frames still waiting for a channel when the run ended.
    pub waiting_at_end: u64,
    /// Endpoint congestion management was on.
    pub endpoint: bool,
    /// Endpoint-congestion ACKs egress edges sent (a congested output, a channel not yet
    /// told its severity).
    pub endpoint_acks: u64,
    /// Times a flow was held back by its injection limit.
    pub flow_limit_holds: u64,
    /// With a release delay: times an ingress edge held a flow of the highest severity
    /// until `release_delay` after its ACK came home.
    pub release_delays: Option<u64>,
    /// With reroutes: what they did.
    pub reroute: Option<RerouteStats>,
    /// With FGFC: pause frames (refreshes included) and resume frames the ingress edges
    /// sent their hosts.
    pub fgfc: Option<(u64, u64)>,
    /// With hop-by-hop credits: times a channel started metering its upstream hop, and
    /// HeadroomACKs sent (clears included).
    pub hop_credits: Option<(u64, u64)>,
    /// With injection limits: the limits, and the most one port had in flight.
    pub injection: Option<InjectionStats>,
    /// With UGAL routing: paths the ingress edges chose minimal, and through an
    /// intermediate switch.
    pub ugal: Option<(u64, u64)>,
    /// Per switch: its channels.
    pub switches: Vec<SwitchChannels>,
}

impl ChannelStats {
    /// Adds another part's statistics: counts add up, peaks take the larger, and a
    /// switch's record is taken from the part for which `owns(node)` holds.
    pub fn absorb(&mut self, other: ChannelStats, owns: impl Fn(u32) -> bool) {
        fn add<T>(a: &mut Option<T>, b: Option<T>, f: impl Fn(&mut T, T)) {
            match (a.as_mut(), b) {
                (Some(x), Some(y)) => f(x, y),
                (None, Some(y)) => *a = Some(y),
                (_, None) => {}
            }
        }
        let pair = |x: &mut (u64, u64), y: (u64, u64)| {
            x.0 += y.0;
            x.1 += y.1;
        };
        // Every field, so that a new one is not forgotten here.
        let ChannelStats {
            ack_frames,
            acks,
            ack_bytes,
            acks_home,
            drop_acks,
            waits,
            waiting_at_end,
            endpoint: _,
            endpoint_acks,
            flow_limit_holds,
            release_delays,
            reroute,
            fgfc,
            hop_credits,
            injection,
            ugal,
            switches,
        } = other;
        self.ack_frames += ack_frames;
        self.acks += acks;
        self.ack_bytes += ack_bytes;
        self.acks_home += acks_home;
        self.drop_acks += drop_acks;
        self.waits += waits;
        self.waiting_at_end += waiting_at_end;
        self.endpoint_acks += endpoint_acks;
        self.flow_limit_holds += flow_limit_holds;
        add(&mut self.release_delays, release_delays, |x, y| *x += y);
        add(&mut self.reroute, reroute, |x, y| {
            x.asks += y.asks;
            x.moved += y.moved;
            x.kept += y.kept;
            x.unresolved += y.unresolved;
        });
        add(&mut self.fgfc, fgfc, pair);
        add(&mut self.hop_credits, hop_credits, pair);
        add(&mut self.ugal, ugal, pair);
        add(&mut self.injection, injection, |x, y| {
            x.peak = x.peak.max(y.peak);
            for (a, b) in x.ilids.iter_mut().zip(y.ilids) {
                a.peak = a.peak.max(b.peak);
            }
        });
        for (a, b) in self.switches.iter_mut().zip(switches) {
            if owns(b.node) {
                *a = b;
            }
        }
    }
}

/// The ingress edges' injection limits over a run, bytes (in whole units of the channels'
/// counters, but for the node limit, as configured).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct InjectionStats {
    /// The limit per host port (`None`: none).
    pub port_limit: Option<u64>,
    /// The node limit the ILIDs share (`None`: none).
    pub node_limit: Option<u64>,
    /// The most one host port had in flight.
    pub peak: u64,
    /// Per ILID (all 8 with ILID limits, none without).
    pub ilids: Vec<IlidStats>,
}

/// One ILID's limits and use over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IlidStats {
    /// The ILID.
    pub ilid: u8,
    /// Its absolute limit, bytes as configured (`None`: none).
    pub limit: Option<u64>,
    /// Its ratio in the split of the node limit.
    pub ratio: u32,
    /// The most one host port had of it in flight, bytes (whole units).
    pub peak: u64,
}

/// The flow channels of one switch over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SwitchChannels {
    /// Switch node.
    pub node: u32,
    /// Most channels in use at once (each channel through the switch counted once).
    pub peak: u32,
    /// Channels in use, time-weighted mean over the run.
    pub mean: f64,
    /// Channels still in use at the end (0 after a drained run: no table leaks).
    pub in_use_at_end: u32,
}

/// What the PFC watchdogs of all switch queues did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WatchdogCounts {
    /// Storms detected.
    pub storms: u64,
    /// Storms that ended.
    pub restorations: u64,
    /// Time queues spent in storms, summed over the queues (to the end of the run).
    pub storm_time: Time,
}

impl WatchdogCounts {
    /// Adds another part's counts.
    pub fn absorb(&mut self, other: &WatchdogCounts) {
        self.storms += other.storms;
        self.restorations += other.restorations;
        self.storm_time += other.storm_time;
    }
}

/// Byte accounting of data payload, for the conservation check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ByteLedger {
    /// Payload bytes senders put on the wire (retransmissions included).
    pub sent: u64,
    /// Payload bytes that reached their destination host (duplicates included).
    pub delivered: u64,
    /// Payload bytes dropped anywhere.
    pub dropped: u64,
    /// Payload bytes still in queues or on links at the end.
    pub in_flight: u64,
}

impl RunResults {
    /// Puts the time-stamped records in `(time, node)` order, each node's in the order it
    /// made them: an order that does not depend on how the run interleaved different
    /// nodes' events (a partitioned run concatenates its parts' records, then sorts).
    pub fn sort_records(&mut self) {
        self.pfc_sent.sort_by_key(|r| (r.time, r.node));
        self.pfc_received.sort_by_key(|r| (r.time, r.node));
        self.credit_blocks
            .sort_by_key(|r| (r.start, r.node, r.port, r.vl));
        self.lossless_drops.sort_by_key(|r| (r.time, r.node));
        self.queue_samples.sort_by_key(|r| (r.time, r.node));
        self.buffer_samples.sort_by_key(|r| (r.time, r.node));
        self.mark_samples.sort_by_key(|r| (r.time, r.node));
        self.marking.sort_by_key(|m| (m.node, m.port, m.queue));
        // In id order: every flow's in a whole run, a part's own in a part of one.
        let flows = &self.flows;
        let src = |id: u32| match flows.get(id as usize) {
            Some(f) if f.id == id => f.src,
            _ => flows
                .binary_search_by_key(&id, |f| f.id)
                .map_or(0, |i| flows[i].src),
        };
        self.rate_samples.sort_by_key(|r| (r.time, src(r.flow)));
    }
}

impl ByteLedger {
    /// Payload put on the wire.
    pub fn on_sent(&mut self, bytes: u64) {
        self.sent += bytes;
        self.in_flight = self.in_flight.wrapping_add(bytes);
    }

    /// Payload that reached its destination.
    pub fn on_delivered(&mut self, bytes: u64) {
        self.delivered += bytes;
        // Wrapping: in one part of a partitioned run, bytes sent elsewhere arrive here; the
        // parts' sum is exact.
        self.in_flight = self.in_flight.wrapping_sub(bytes);
    }

    /// Payload lost.
    pub fn on_dropped(&mut self, bytes: u64) {
        self.dropped += bytes;
        self.in_flight = self.in_flight.wrapping_sub(bytes);
    }

    /// Adds another part's ledger to this one.
    pub fn absorb(&mut self, other: &ByteLedger) {
        self.sent += other.sent;
        self.delivered += other.delivered;
        self.dropped += other.dropped;
        self.in_flight = self.in_flight.wrapping_add(other.in_flight);
    }
}

/// Everything a run produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunResults {
    /// Per flow, by id.
    pub flows: Vec<FlowRecord>,
    /// PFC frames as sent.
    pub pfc_sent: Vec<PfcRecord>,
    /// PFC frames as received (the ns-3 HPCC simulator logs these).
    pub pfc_received: Vec<PfcRecord>,
    /// The two logs above were kept (not `[output] pfc_log = false`).
    pub pfc_log: bool,
    /// Episodes of credit transmitters waiting for credit, in start order (empty without
    /// credit links or with `[output] credit_log = false`).
    pub credit_blocks: Vec<CreditBlock>,
    /// The log above was kept (not `[output] credit_log = false`).
    pub credit_log: bool,
    /// Per port, by node then local port.
    pub ports: Vec<PortStats>,
    /// Per switch, by node.
    pub switches: Vec<SwitchStats>,
    /// Drops by cause name.
    pub drops: BTreeMap<String, u64>,
    /// Lossless drops (errors).
    pub lossless_drops: Vec<LosslessDrop>,
    /// Egress queue samples.
    pub queue_samples: Vec<QueueSample>,
    /// Switch buffer samples.
    pub buffer_samples: Vec<BufferSample>,
    /// Flow rate samples.
    pub rate_samples: Vec<RateSample>,
    /// Events processed.
    pub events: u64,
    /// Simulated time at the end.
    pub end_time: Time,
    /// Why the run ended (None while still running).
    pub stop_reason: Option<StopReason>,
    /// Payload conservation.
    pub bytes: ByteLedger,
    /// Packet arena high-water mark (packets alive at once, at most).
    pub arena_slots: usize,
    /// The deadlock that stopped the run, if one did.
    pub deadlock: Option<crate::net::Deadlock>,
    /// What the PFC watchdogs did (all zero when they are off).
    pub watchdog: WatchdogCounts,
    /// Per switch egress queue that marks and sent data, by node, local port and queue.
    pub marking: Vec<QueueMarking>,
    /// Marking decisions per sample interval.
    pub mark_samples: Vec<MarkSample>,
    /// The flow-channel layer's work (`None`: not a flow-channel fabric).
    pub channels: Option<ChannelStats>,
}
