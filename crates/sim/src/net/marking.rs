//! Congestion marking: the one place that decides the mark a packet takes at a switch
//! egress queue, and the record of what each queue decided.
//!
//! Every switch egress queue that marks (RED configured for it) has a congestion point
//! (`headroom_mech::congestion_point`): RED alone, or ternary congestion detection (TCD),
//! which also reads the queue's pause history. RED/ECN decides at enqueue or at dequeue
//! ([`crate::config::EcnPoint`]); TCD at dequeue. Data packets only. The mark is added to
//! what the packet carries ([`Mark::upgrade`]: nothing downgrades CE).
//!
//! Pause history reaches a TCD congestion point without events of its own: before each
//! decision, before each PFC frame changes the port's pause timers, before and after each
//! credit update that may lift a block, and at each sample, the driver hands it the queue's
//! latest OFF episode (`LinkFlowControl::last_hold`: a pause, or a VL out of credit). The
//! queue's length at a resume is taken when the driver first looks after it: at the first
//! departure (within one frame time of the resume when the port was idle), at the next
//! PFC frame or credit update, or at the next sample.
//!
//! InfiniBand FECN (`FecnConfig`, with InfiniBand CC) replaces RED's thresholds by its
//! own (always at or above it, never below: no random draw) and then keeps a packet's mark
//! only if it is large enough, the first of `marking_rate` eligible ones at its queue, and,
//! without the victim mask, its VL had credit throughout the last update period (a port
//! starved of credit is a victim, not a root). With TCD the detector decides on that.
//!
//! Random numbers: RED's uniform draw comes from the switch's own ECN stream. At enqueue one
//! is drawn for every data packet that reaches a marking queue; at dequeue only when the
//! marking probability is strictly between 0 and 1 (as the ns-3 HPCC simulator's switch
//! draws). Both keep every run's marks a function of its seed alone, whatever the detector.
//!
//! max(T_on) of the paper's detector is derived per port (`headroom_mech::tcd::max_t_on`):
//! the downstream hysteresis (a switch's XON offset, DSH's queue-level delta, a host NIC
//! buffer's XOFF − XON), the link's rate and delay, the port's PAUSE response time and one
//! full frame; on a credit link it is the link's credit update period (an ON period spends
//! the credit of one update); a scenario may set one value for every port instead.

use super::packet::Kind;
use super::port::Port;
use super::port_table::PortTable;
use super::{Simulation, Slot};
use crate::config::{DetectorConfig, EcnPoint, FecnConfig, SchemeConfig, SimConfig};
use crate::results::{MarkSample, QueueMarking};
use headroom_mech::congestion_point::{CongestionPoint, Detector};
use headroom_mech::ecn::{Mark, RedConfig};
use headroom_mech::tcd::{self, TcdConfig, TcdDetector};
use headroom_mech::units::Time;
use headroom_mech::PRIORITIES;

/// `Marking::ranks` of a queue without a congestion point.
const NO_POINT: u8 = u8::MAX;

/// The congestion points of every switch egress queue that marks and may carry data (its
/// priority is some flow's).
#[derive(Default)]
pub(super) struct Marking {
    /// Congestion points, a port's marking queues together in queue order.
    points: Vec<CongestionPoint>,
    /// Per global port: its first congestion point (`u32::MAX`: none, a host port or one
    /// whose queues do not mark). A port's points are consecutive in queue order, so a
    /// queue's is its port's first plus its rank in `ranks`. 4 bytes per port: with a `u32`
    /// per queue (32 bytes per port) a large fabric's table left the cache.
    first: Vec<u32>,
    /// Per ECN configuration (`Port::red_class`) and queue: the queue's rank among that
    /// configuration's marking queues that may carry data (`NO_POINT`: it has no point).
    ranks: Vec<[u8; PRIORITIES]>,
    /// The detector reads pause history (TCD).
    reads_pauses: bool,
    /// Per congestion point, with the paper's TCD detector: its max(T_on) (empty otherwise).
    max_t_on: Vec<Time>,
    /// Per congestion point, when the run samples: (departures, CE, UE) at the last sample.
    sampled: Vec<[u64; 3]>,
    /// Rows of `marks.csv`.
    pub(super) samples: Vec<MarkSample>,
    /// InfiniBand FECN's filters, when the run marks FECN.
    fecn: Option<FecnConfig>,
    /// Per congestion point, with FECN: eligible packets seen, modulo `marking_rate`.
    fecn_seen: Vec<u32>,
}

impl Marking {
    /// Congestion points for the switch ports among `ports` (`slots` says which nodes are
    /// switches), with the RED classes `red`.
    pub(super) fn new(
        cfg: &SimConfig,
        ports: &PortTable,
        slots: &[Slot],
        red: &[[Option<RedConfig>; PRIORITIES]],
    ) -> Marking {
        // Data packets travel in their flow's priority: other queues never decide a mark.
        let data_prios = cfg.flows.iter().fold(0u8, |m, f| m | 1 << f.prio);
        let mut m = Marking {
            reads_pauses: cfg.switch.ecn.detector != DetectorConfig::Red,
            first: vec![u32::MAX; ports.len()],
            ranks: red
                .iter()
                .map(|queues| {
                    let mut rank = [NO_POINT; PRIORITIES];
                    for (r, (q, _)) in marking_queues(queues, data_prios).enumerate() {
                        rank[q] = r as u8; // below 8
                    }
                    rank
                })
                .collect(),
            fecn: cfg.switch.ecn.fecn_for(&cfg.host.cc),
            ..Marking::default()
        };
        for (gp, p) in ports.iter() {
            if !matches!(slots[p.node as usize], Slot::Switch(_)) {
                continue;
            }
            let queues = marking_queues(&red[usize::from(p.red_class)], data_prios);
            for (rank, (_, red)) in queues.enumerate() {
                let (detector, max_t_on) = match cfg.switch.ecn.detector {
                    DetectorConfig::Red => (Detector::Red, None),
                    DetectorConfig::Tcd {
                        max_t_on,
                        threshold,
                    } => {
                        let max_t_on = max_t_on.unwrap_or_else(|| derived_max_t_on(cfg, p));
                        let d = TcdDetector::paper(TcdConfig {
                            max_t_on,
                            threshold: threshold.unwrap_or(red.kmin),
                        });
                        (Detector::Tcd(d), Some(max_t_on))
                    }
                    DetectorConfig::TcdReleased(c) => {
                        (Detector::Tcd(TcdDetector::released(c)), None)
                    }
                };
                if rank == 0 {
                    // Below 2^24: at most 8 per port, and the engine's port limit is 2^21.
                    m.first[gp as usize] = m.points.len() as u32;
                }
                m.points.push(CongestionPoint::new(detector));
                m.max_t_on.extend(max_t_on);
            }
        }
        if cfg.record.sample_interval.is_some() {
            m.sampled = vec![[0; 3]; m.points.len()];
        }
        if m.fecn.is_some() {
            m.fecn_seen = vec![0; m.points.len()];
        }
        m
    }

    /// The congestion point of queue `q` of global port `port`, whose ECN configuration is
    /// `class`, if it has one.
    #[inline(always)]
    fn index(&self, port: u32, class: u16, q: usize) -> Option<usize> {
        let first = self.first[port as usize];
        let rank = self.ranks[usize::from(class)][q];
        (first != u32::MAX && rank != NO_POINT).then_some(first as usize + usize::from(rank))
    }

    /// The queues of global port `port` (ECN configuration `class`) with a congestion
    /// point, and theirs.
    fn queues(&self, port: u32, class: u16) -> impl Iterator<Item = (u8, usize)> + '_ {
        (0..PRIORITIES as u8)
            .filter_map(move |q| Some((q, self.index(port, class, usize::from(q))?)))
    }

    /// The max(T_on) values in use: (value, number of queues), in value order.
    pub(super) fn max_t_on_summary(&self) -> Vec<(Time, usize)> {
        let mut v: Vec<(Time, usize)> = Vec::new();
        let mut all = self.max_t_on.clone();
        all.sort_unstable();
        for t in all {
            match v.last_mut() {
                Some((last, n)) if *last == t => *n += 1,
                _ => v.push((t, 1)),
            }
        }
        v
    }
}

/// The queues of an ECN configuration `queues` that have a congestion point, in queue order,
/// with their RED parameters: those that mark and may carry data (`data_prios`, bit q: some
/// flow's priority is q). Their order is the points' order within a port and their ranks.
fn marking_queues(
    queues: &[Option<RedConfig>; PRIORITIES],
    data_prios: u8,
) -> impl Iterator<Item = (usize, &RedConfig)> {
    let queues = queues.iter().enumerate();
    queues
        .filter_map(move |(q, red)| Some((q, red.as_ref()?)).filter(|_| data_prios & (1 << q) != 0))
}

/// max(T_on) of switch port `p`: what the flow control of the node downstream lets an ON
/// period be.
fn derived_max_t_on(cfg: &SimConfig, p: &Port) -> Time {
    if p.fc.credit().is_some() {
        return cfg.fabric.credit.policy(p.rate).period;
    }
    let hysteresis = if p.peer_is_switch {
        match cfg.switch.scheme {
            SchemeConfig::Dsh { delta_q, .. } => delta_q,
            SchemeConfig::Sih | SchemeConfig::Shp(_) => cfg.switch.xon_offset,
        }
    } else {
        cfg.host
            .nic_buffer
            .as_ref()
            .map_or(0, |b| b.xoff.saturating_sub(b.xon))
    };
    let response = p.rate.serialization(cfg.switch.response_bytes);
    let frame = cfg
        .host
        .mtu_payload
        .saturating_add(cfg.host.header_bytes)
        .saturating_add(cfg.link.frame_overhead);
    tcd::max_t_on(hysteresis, p.rate, p.delay, response, frame)
}

impl Simulation {
    /// Marks data packet `pkt` of switch `s` on egress queue `q` of global port `port`,
    /// which holds `qlen` bytes (before the packet at enqueue, after it at dequeue), if
    /// `point` is where this run marks. Inlined into both hot paths (as the code it
    /// replaced was): a call per packet cost about 2 % of a run's instructions.
    #[inline(always)]
    pub(super) fn congestion_mark(
        &mut self,
        s: u32,
        port: u32,
        q: usize,
        qlen: u64,
        pkt: u32,
        point: EcnPoint,
    ) {
        if self.cfg.switch.ecn.point != point || self.arena.get(pkt).kind != Kind::Data {
            return;
        }
        let red_class = self.ports[port].red_class;
        let class = usize::from(red_class);
        let Some(red) = &self.red[class][q] else {
            return;
        };
        let rng = &mut self.switches[s as usize].rng_ecn;
        let red_marks = match point {
            EcnPoint::Enqueue => red.should_mark(qlen, rand::Rng::gen::<f64>(rng)),
            EcnPoint::Dequeue => {
                let p = red.probability(qlen);
                p >= 1.0 || (p > 0.0 && rand::Rng::gen::<f64>(rng) < p)
            }
        };
        let Some(i) = self.marking.index(port, red_class, q) else {
            return;
        };
        let now = self.now;
        let red_marks =
            red_marks && (self.marking.fecn.is_none() || self.fecn_keeps(port, q, pkt, i));
        if self.marking.reads_pauses {
            let fc = &self.ports[port].fc;
            let latest = fc.latest_until(q as u8);
            let cp = &mut self.marking.points[i];
            if cp.wants_flow_control(now, latest) {
                let episode = fc.last_hold(now, q as u8);
                let before = qlen + u64::from(self.arena.get(pkt).size);
                cp.on_flow_control(now, episode, latest, before);
            }
        }
        let mark = self.marking.points[i].on_departure(now, qlen, red_marks);
        if mark != Mark::None {
            let pk = self.arena.get_mut(pkt);
            pk.mark = pk.mark.upgrade(mark);
        }
    }

    /// Whether FECN keeps the mark its threshold gave data packet `pkt` leaving queue `q`
    /// of `port` (congestion point `i`): large enough, the first of `marking_rate`
    /// eligible ones, and not from a victim unless the victim mask says so.
    #[inline(never)]
    fn fecn_keeps(&mut self, port: u32, q: usize, pkt: u32, i: usize) -> bool {
        let Some(f) = self.marking.fecn else {
            return true;
        };
        if u64::from(self.arena.get(pkt).size) < f.packet_size {
            return false;
        }
        let p = &self.ports[port];
        if let (false, Some(c)) = (f.victim_mask, p.fc.credit()) {
            let period = self.cfg.fabric.credit.policy(p.rate).period;
            let starved = c
                .tx(q as u8)
                .last_block()
                .is_some_and(|(_, end)| end > self.now.saturating_sub(period));
            if starved {
                return false;
            }
        }
        let seen = &mut self.marking.fecn_seen[i];
        let first = *seen == 0;
        *seen = (*seen + 1) % f.marking_rate.max(1);
        first
    }

    /// Hands the congestion points of `port`'s queues `classes` (bit q: queue q) their
    /// pause history up to now. Called before a PFC frame changes the port's timers, so no
    /// episode goes unseen.
    pub(super) fn report_pauses(&mut self, port: u32, classes: u8) {
        if !self.marking.reads_pauses {
            return;
        }
        let now = self.now;
        let p = &self.ports[port];
        for q in 0..PRIORITIES {
            if classes & (1 << q) == 0 {
                continue;
            }
            if let Some(i) = self.marking.index(port, p.red_class, q) {
                let episode = p.fc.last_hold(now, q as u8);
                let queue = u64::from(p.queues[q].bytes);
                let latest = p.fc.latest_until(q as u8);
                self.marking.points[i].on_flow_control(now, episode, latest, queue);
            }
        }
    }

    /// Records one `marks.csv` row per marking queue of this part's switches that sent data
    /// since the last sample.
    pub(super) fn sample_marks(&mut self) {
        for sw in 0..self.switches.len() {
            if !self.mine(self.switches[sw].node) {
                continue;
            }
            for port in self.switches[sw].ports() {
                self.report_pauses(port, 0xff);
                let p = &self.ports[port];
                let peer = self.ports.wire(p.peer).node;
                for q in 0..PRIORITIES {
                    let Some(i) = self.marking.index(port, p.red_class, q) else {
                        continue;
                    };
                    let cp = &self.marking.points[i];
                    let now = cp.counts();
                    let last = std::mem::replace(&mut self.marking.sampled[i], now);
                    if now[0] > last[0] {
                        self.marking.samples.push(MarkSample {
                            time: self.now,
                            node: p.node,
                            port: p.local,
                            peer,
                            queue: q as u8,
                            departures: now[0] - last[0],
                            ce_marked: now[1] - last[1],
                            ue_marked: now[2] - last[2],
                            state: cp.state(),
                        });
                    }
                }
            }
        }
    }

    /// What every marking queue of this part's switches that sent data decided over the
    /// run, up to now.
    pub(super) fn marking_results(&self) -> Vec<QueueMarking> {
        let mut out = Vec::new();
        for sw in &self.switches {
            if !self.mine(sw.node) {
                continue;
            }
            for port in sw.ports() {
                let p = &self.ports[port];
                for (q, i) in self.marking.queues(port, p.red_class) {
                    let cp = &self.marking.points[i];
                    if cp.counts()[0] == 0 {
                        continue;
                    }
                    out.push(QueueMarking {
                        node: p.node,
                        port: p.local,
                        peer: self.ports.wire(p.peer).node,
                        queue: q,
                        max_t_on: self.marking.max_t_on.get(i).copied(),
                        totals: cp.totals_at(self.now),
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port's points are found from its first one and its queue's rank: with marking
    /// queues 1, 3 and 6, port 1's are points 4, 5 and 6; port 0 has none.
    #[test]
    fn queues_find_their_points_from_the_ports_first() {
        let mut rank = [NO_POINT; PRIORITIES];
        (rank[1], rank[3], rank[6]) = (0, 1, 2);
        let m = Marking {
            first: vec![u32::MAX, 4],
            ranks: vec![rank],
            ..Marking::default()
        };
        assert_eq!(m.queues(0, 0).count(), 0);
        assert_eq!(m.queues(1, 0).collect::<Vec<_>>(), [(1, 4), (3, 5), (6, 6)]);
        assert_eq!(m.index(1, 0, 0), None);
        assert_eq!(m.index(1, 0, 7), None);
    }
}
