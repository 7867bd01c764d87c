//! Switches: forwarding, buffer admission, PFC generation.
//!
//! A frame is routed (ECMP over shortest paths), admitted by the MMU against its ingress PG
//! and egress queue, and queued on the egress port when its *first* bit arrives, as a chip
//! that writes cells while they arrive counts them; it may leave once its last bit is in
//! (store and forward, `Packet::ready_at`). So an XOFF decision charges to headroom exactly
//! the frames that begin to arrive after it, the bytes the headroom formulas budget. PFC
//! decisions of the MMU become frames on the *ingress* ports they concern. A frame leaving
//! an egress queue releases its cells. Lossless drops are recorded with switch, port,
//! priority and time, and can stop the run. A complete frame that finds its egress port idle
//! with nothing queued, and that the scheduler would send next, leaves without a turn
//! through the queue (`Simulation::depart_directly`): the same accounting, in the same
//! order, as queueing and serving it at once.
//!
//! Invariant: the cells the MMU counts as resident equal the cells of the packets sitting in
//! this switch's egress queues (checked by `Simulation::check_invariants`).

use super::features::{Features, Lean};
use super::packet::{Kind, Packet};
use super::victim::QueuedByIngress;
use super::Simulation;
use crate::config::EcnPoint;
use crate::results::{LosslessDrop, PgPeaks, StopReason, SwitchStats};
use crate::topology::NodeId;
use headroom_mech::buffer::{DropCause, Mmu, Placement, Transition};
use headroom_mech::flow_control::Gate;
use headroom_mech::units::Time;
use rand_pcg::Pcg64;

/// Percent buckets of the time-weighted occupancy histogram (0..=100 %).
const OCC_BUCKETS: usize = 101;

/// One switch.
///
/// `repr(C)`, the MMU first: a buffer change that stays within its percent of occupancy
/// touches only the MMU's lines (the MMU watches that percent's range); the switch's own
/// fields and histograms are written only when a percent changes.
#[derive(Debug)]
#[repr(C)]
pub struct Switch {
    /// Buffer accounting.
    pub mmu: Mmu,
    /// Node id.
    pub node: u32,
    /// Global index of local port 0; a node's ports have consecutive global indices.
    first_port: u32,
    /// The time since `used_since` is not yet in `occupancy_time` (at `used_percent`). The
    /// MMU watches the cells of that percent (`Mmu::set_watch`): a change that stays in its
    /// percent touches only the MMU's lines.
    used_since: Time,
    /// Headroom cells in use at the last change, their percent of the reserved headroom,
    /// and since when (not yet in `headroom_time` / `headroom_idle`).
    headroom_cells: u64,
    headroom_since: Time,
    used_percent: u8,
    headroom_percent: u8,
    /// Number of ports.
    n_ports: u32,
    /// `100 × 2^32 / buffer cells`, rounded up: `(used × this) >> 32` is the percent of the
    /// buffer in use, without a division on every percent change.
    percent_scale: u64,
    /// Like `percent_scale`, for the reserved headroom.
    headroom_scale: u64,
    buffer_bytes: u64,
    /// Time spent at each percent of buffer occupancy.
    occupancy_time: [Time; OCC_BUCKETS],
    /// Time spent at each percent of the reserved headroom in use (SIH: per-PG headroom,
    /// SHP: the pool, DSH: the insurance).
    headroom_time: [Time; OCC_BUCKETS],
    /// Time with no headroom cell in use at all.
    headroom_idle: Time,
    /// This switch's ECN marking draws (one stream per switch, so that the draws do not
    /// depend on how events at different switches interleave).
    pub(super) rng_ecn: Pcg64,
    /// Queued bytes by ingress, for finding the egress a pause is blamed on (victim.rs).
    pub(super) queued_by_ingress: QueuedByIngress,
}

/// The percent bucket of `cells` for a percent `scale` (see `Switch::percent_scale`).
fn percent_of(cells: u64, scale: u64) -> u8 {
    (((u128::from(cells) * u128::from(scale)) >> 32) as usize).min(OCC_BUCKETS - 1) as u8
}

/// The cells `[lo, hi)` whose percent bucket (for `scale`) is `percent`.
fn percent_bounds(percent: u8, scale: u64) -> (u64, u64) {
    // The least `c` with `(c × scale) >> 32 >= p` is `ceil(p × 2^32 / scale)`.
    let least = |p: u64| ((u128::from(p) << 32).div_ceil(u128::from(scale))) as u64;
    let hi = if usize::from(percent) == OCC_BUCKETS - 1 {
        u64::MAX // the last bucket takes everything above
    } else {
        least(u64::from(percent) + 1)
    };
    (least(u64::from(percent)), hi)
}

impl Switch {
    /// A switch with empty buffers whose local ports `0..n_ports` are the global ports
    /// `first_port..first_port + n_ports`.
    pub fn new(
        node: u32,
        first_port: u32,
        n_ports: u32,
        mut mmu: Mmu,
        buffer_bytes: u64,
        rng_ecn: Pcg64,
    ) -> Self {
        let cells = (buffer_bytes / u64::from(mmu.cell_bytes())).max(1);
        let percent_scale = (100u64 << 32).div_ceil(cells);
        let headroom_scale = (100u64 << 32).div_ceil(mmu.headroom_reserved_cells().max(1));
        let (used_lo, used_hi) = percent_bounds(0, percent_scale);
        mmu.set_watch(used_lo, used_hi);
        Switch {
            mmu,
            node,
            first_port,
            used_since: Time::ZERO,
            headroom_cells: 0,
            headroom_since: Time::ZERO,
            used_percent: 0,
            headroom_percent: 0,
            n_ports,
            percent_scale,
            headroom_scale,
            buffer_bytes,
            occupancy_time: [Time::ZERO; OCC_BUCKETS],
            headroom_time: [Time::ZERO; OCC_BUCKETS],
            headroom_idle: Time::ZERO,
            rng_ecn,
            queued_by_ingress: QueuedByIngress::default(),
        }
    }

    /// The switch's buffer in bytes.
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_bytes
    }

    /// Global index of local port `local`.
    #[inline]
    pub fn port(&self, local: u16) -> u32 {
        self.first_port + u32::from(local)
    }

    /// Global indices of the switch's ports, in local order.
    pub fn ports(&self) -> std::ops::Range<u32> {
        self.first_port..self.first_port + self.n_ports
    }

    /// Records that occupancy changed at `now`: the time since the last change of a percent
    /// goes to that percent's bucket.
    #[inline]
    fn occupancy_changed(&mut self, now: Time) {
        if self.mmu.occupancy_moved() {
            self.occupancy_moved(now);
        }
    }

    #[inline(never)]
    fn occupancy_moved(&mut self, now: Time) {
        self.settle_occupancy(now, false);
    }

    /// Adds the time since the last change of a percent to its bucket, for the percents that
    /// changed (all of them when `flush`), and has the MMU watch the current percent.
    fn settle_occupancy(&mut self, now: Time, flush: bool) {
        let used = self.mmu.used_cells();
        let percent = percent_of(used, self.percent_scale);
        if flush || percent != self.used_percent {
            self.occupancy_time[usize::from(self.used_percent)] += now - self.used_since;
            self.used_percent = percent;
            self.used_since = now;
        }
        let h = self.mmu.headroom_used_cells();
        if flush || h != self.headroom_cells {
            let dt = now - self.headroom_since;
            self.headroom_time[usize::from(self.headroom_percent)] += dt;
            if self.headroom_cells == 0 {
                self.headroom_idle += dt;
            }
            self.headroom_cells = h;
            self.headroom_percent = percent_of(h, self.headroom_scale);
            self.headroom_since = now;
        }
        let (lo, hi) = percent_bounds(percent, self.percent_scale);
        self.mmu.set_watch(lo, hi);
    }

    /// Statistics at the end of a run at `now`.
    pub fn stats(&mut self, now: Time) -> SwitchStats {
        self.settle_occupancy(now, true);
        let cell = u64::from(self.mmu.cell_bytes());
        // Time-weighted percentile `q` of a percent histogram, as a percent.
        let percentile = |hist: &[Time; OCC_BUCKETS], q: f64| -> u64 {
            let total: u64 = hist.iter().map(|t| t.as_ps()).sum();
            let target = (total as f64 * q).ceil() as u64;
            let mut acc = 0u64;
            for (b, t) in hist.iter().enumerate() {
                acc += t.as_ps();
                if acc >= target && acc > 0 {
                    return b as u64;
                }
            }
            0
        };
        let pct = |q: f64| percentile(&self.occupancy_time, q) * self.buffer_bytes / 100;
        let elapsed = now.as_ps().max(1) as f64;
        let mut pgs = Vec::new();
        let mut port_headroom_peaks = Vec::new();
        for port in 0..self.mmu.ports() {
            for prio in 0..8u8 {
                let pg = self.mmu.pg(port, prio);
                if pg.peak_headroom > 0 || pg.peak_shared > 0 {
                    pgs.push(PgPeaks {
                        port: port as u16,
                        prio,
                        headroom_bytes: u64::from(pg.peak_headroom) * cell,
                        shared_bytes: u64::from(pg.peak_shared) * cell,
                    });
                }
            }
            let peak = self.mmu.port(port).peak_headroom;
            if peak > 0 {
                port_headroom_peaks.push((port as u16, u64::from(peak) * cell));
            }
        }
        let peak_h = pgs.iter().map(|p| p.headroom_bytes).max().unwrap_or(0) / cell;
        let peak_s = pgs.iter().map(|p| p.shared_bytes).max().unwrap_or(0) / cell;
        let (allocated, freed) = self.mmu.allocated_freed();
        SwitchStats {
            node: self.node,
            buffer_bytes: self.buffer_bytes,
            shared_pool_bytes: self.mmu.shared_pool_cells() * cell,
            headroom_reserved_bytes: self.mmu.headroom_reserved_cells() * cell,
            headroom_utilisation_percent: [
                percentile(&self.headroom_time, 0.5),
                percentile(&self.headroom_time, 0.99),
                percentile(&self.headroom_time, 1.0),
            ],
            headroom_idle_fraction: self.headroom_idle.as_ps() as f64 / elapsed,
            peak_bytes: self.mmu.peak_used_cells() * cell,
            occupancy_percentiles: [pct(0.5), pct(0.95), pct(0.99)],
            peak_pg_headroom_bytes: peak_h * cell,
            peak_pg_shared_bytes: peak_s * cell,
            cells_allocated: allocated,
            cells_freed: freed,
            cells_resident: self.mmu.used_cells(),
            pgs,
            port_headroom_peaks,
        }
    }
}

impl Simulation {
    /// A non-PFC frame arrived at global port `port` of switch `s`.
    pub(super) fn switch_receive<F: Features>(&mut self, s: u32, port: u32, pkt: u32) {
        let now = self.now;
        let in_local = self.ports[port].local;
        let node = self.ports[port].node;
        let mut pk = *self.arena.get(pkt);
        self.prefetch_credit::<F>(port, pk.prio);
        let channel = F::OPTIONAL && self.channels.is_some() && pk.kind == Kind::Data;
        let route = if channel {
            self.ugal_stamp(s, port, &mut pk, pkt);
            self.channel_egress(s, port, &pk)
        } else {
            self.egress_local(node, pk.dst, pk.hash)
        };
        let Some(out_local) = route else {
            self.drop_packet(pkt, "no_route");
            if channel {
                self.channel_dropped_on_arrival(port, &pk);
            }
            return;
        };
        // A node's ports have consecutive global indices (this avoids reading the switch).
        let out = port - u32::from(in_local) + u32::from(out_local);
        debug_assert_eq!(out, self.switches[s as usize].port(out_local));
        // The egress queue: the class the frame leaves in.
        let class = self.egress_class::<F>((port, out), &pk);
        debug_assert!(
            self.classes != super::classes::Classes::Service || class == pk.prio,
            "a frame leaves in its arrival class (the MMU counts only lossy egress classes)"
        );
        if self.watchdog_drops::<F>(out, class) {
            self.drop_packet(pkt, "pfcwd");
            return;
        }
        let sw = &mut self.switches[s as usize];
        let res = sw.mmu.admit(
            usize::from(in_local),
            usize::from(out_local),
            (pk.prio, class),
            u64::from(pk.size),
            &mut self.transitions,
        );
        sw.occupancy_changed(now);
        let lossless = sw.mmu.is_lossless(pk.prio);
        let admitted = res.is_ok();
        match res {
            Err(cause) => {
                if lossless {
                    let d = LosslessDrop {
                        time: now,
                        node,
                        port: in_local,
                        prio: pk.prio,
                        cause: cause.name(),
                    };
                    self.lossless_drops.push(d);
                    if self.cfg.record.fail_on_lossless_drop {
                        self.stop = Some(StopReason::LosslessDrop(d));
                    }
                    // Keep the cause visible in the drop counters (SHP's pool exhaustion is a
                    // risk it takes; exhausted headroom is a sizing error).
                    let name = match cause {
                        DropCause::HeadroomPoolExhausted => "lossless_headroom_pool_exhausted",
                        _ => "lossless_headroom_exhausted",
                    };
                    self.drop_packet(pkt, name);
                } else {
                    self.drop_packet(pkt, cause.name());
                }
                if channel {
                    self.channel_dropped_on_arrival(port, &pk);
                }
            }
            Ok(placement) => {
                if F::OPTIONAL && self.credit_links {
                    self.credit_received(port, pk.prio, pk.size);
                }
                let pm = self.arena.get_mut(pkt);
                pm.set_placement(placement);
                pm.in_port = in_local;
                if channel && !self.channel_admit(s, port, out_local, pkt) {
                    // It waits for a flow channel, holding its buffer.
                    self.apply_transitions(s);
                    return;
                }
                if !F::OPTIONAL && self.may_depart_directly(out, class, &pk) {
                    self.depart_directly(s, out, usize::from(class), pkt);
                    return;
                }
                self.enqueue_egress::<F>(s, (port, out), (class, pkt));
            }
        }
        self.apply_transitions(s);
        // A frame still arriving cannot leave now, and whatever else the port could send
        // now it is already sending or waiting for: look again when both the frame and the
        // wire are ready (an earlier pending wake-up will look again itself).
        if admitted && pk.ready_at <= now {
            self.try_send_as::<F>(out); // admitted at its last bit
        } else if admitted {
            let free = self.ports[out].busy_until;
            self.schedule_wake(out, pk.ready_at.max(free));
        }
    }

    /// Whether the frame `pk` just admitted for queue `q` of global port `out` would be the
    /// next frame `out` sends, now, with nothing else changed on the way: the admission
    /// decided no PFC transition, the frame is complete, the wire is up and idle, no control
    /// frame waits, every egress queue is empty, the class's flow control lets it go, and
    /// the scheduler would serve it without touching its round-robin state (a strict class,
    /// or the one under the DWRR pointer). Only the lean copy asks: with sub-queues, flow
    /// channels or credits, other state has a say.
    #[inline(always)]
    fn may_depart_directly(&mut self, out: u32, q: u8, pk: &Packet) -> bool {
        let now = self.now;
        let strict = self.cfg.switch.scheduler.strict;
        let p = &mut self.ports[out];
        self.transitions.is_empty()
            && pk.ready_at <= now
            && p.up
            && p.busy_until <= now
            && p.nonempty == 0
            && p.ctrl.is_empty()
            && p.serves_alone_untouched(q, strict)
            && matches!(p.fc.gate(now, q, || u64::from(pk.size)), Gate::Open)
    }

    /// Sends the admitted frame `pkt` out of queue `q` of global port `out` of switch `s`
    /// at once ([`Simulation::may_depart_directly`]): the enqueue and dequeue work in the
    /// order the queue would have done it, without the FIFO's round trip and the
    /// scheduler's look at the port (5.29 M of the benchmark's first 9.43 M switch arrivals
    /// leave so). The lean copy's results equal the general copy's, which always queues
    /// (tested in `features`).
    #[inline(always)]
    fn depart_directly(&mut self, s: u32, out: u32, q: usize, pkt: u32) {
        self.count_enqueued(s, out, q, pkt);
        self.depart::<Lean>(s, out, q, pkt);
        self.start_tx(out, pkt);
    }

    /// Queues the admitted frame `pkt`, arrived on global port `port`, on global egress
    /// port `out` of switch `s`, in class `q` (the one it leaves in).
    #[inline(always)]
    pub(super) fn enqueue_egress<F: Features>(
        &mut self,
        s: u32,
        (port, out): (u32, u32),
        (q, pkt): (u8, u32),
    ) {
        let q = usize::from(q);
        self.count_enqueued(s, out, q, pkt);
        if F::OPTIONAL && self.arbitration.is_on() {
            let from_host = !self.ports[port].peer_is_switch;
            let p = &mut self.ports[out];
            let gate = super::flow_channel::channel_gate(self.channels.as_deref(), s, self.now);
            self.arbitration
                .push(&mut self.arena, (out, p), (q, pkt), from_host, gate);
        } else {
            let ready_at = self.arena.get(pkt).ready_at;
            let p = &mut self.ports[out];
            let eq = &mut p.queues[q];
            if eq.fifo.is_empty() {
                p.head_ready[q] = ready_at;
            }
            eq.fifo.push_back(&mut self.arena, pkt);
            p.nonempty |= 1 << q;
        }
    }

    /// The enqueue-side work for the admitted frame `pkt` joining egress queue `q` of
    /// switch `s`'s global port `out` (whether it then waits in the queue's FIFO or leaves at
    /// once, `Simulation::depart_directly`): ECN at enqueue, the culprit table, the queue's
    /// bytes and peak.
    #[inline(always)]
    fn count_enqueued(&mut self, s: u32, out: u32, q: usize, pkt: u32) {
        let (prio, in_port, size) = {
            let pk = self.arena.get(pkt);
            (pk.prio, pk.in_port, pk.size)
        };
        let out_local = self.ports[out].local;
        let qlen = u64::from(self.ports[out].queues[q].bytes);
        self.congestion_mark(s, out, q, qlen, pkt, EcnPoint::Enqueue);
        self.switches[s as usize]
            .queued_by_ingress
            .add(out_local, prio, in_port, size);
        let eq = &mut self.ports[out].queues[q];
        eq.bytes += size;
        eq.peak = eq.peak.max(eq.bytes);
    }

    /// The local egress port the switch `node` forwards a packet for `dst` with routing
    /// `hash` to (shortest paths, ECMP by hash), or `None` if `dst` is unreachable.
    #[inline(always)]
    pub(super) fn egress_local(&self, node: u32, dst: u32, hash: u64) -> Option<u16> {
        self.routes.next_hop(NodeId(node), NodeId(dst), hash)
    }

    /// Releases the cells of a packet leaving switch `s` from local egress port `out_local`.
    #[inline(always)]
    pub(super) fn switch_release<F: Features>(
        &mut self,
        s: u32,
        (in_local, prio): (u16, u8),
        (out_local, queue): (u16, u8),
        size: u32,
        placement: Placement,
    ) {
        if F::OPTIONAL && self.credit_links {
            let ingress = self.switches[s as usize].port(in_local);
            self.credit_freed(ingress, prio, size);
        }
        let sw = &mut self.switches[s as usize];
        sw.queued_by_ingress.remove(out_local, prio, in_local, size);
        sw.mmu.release(
            usize::from(in_local),
            usize::from(out_local),
            (prio, queue),
            placement,
            &mut self.transitions,
        );
        sw.occupancy_changed(self.now);
        self.apply_transitions(s);
    }

    /// Turns the PFC transitions the MMU left in `self.transitions` into frames (the common
    /// case, none, costs one inlined check).
    #[inline(always)]
    pub(super) fn apply_transitions(&mut self, s: u32) {
        if !self.transitions.is_empty() {
            self.send_transitions(s);
        }
    }

    #[inline(never)]
    fn send_transitions(&mut self, s: u32) {
        let mut tr = std::mem::take(&mut self.transitions);
        for t in tr.drain(..) {
            let (port, class, pause) = match t {
                Transition::Queue { port, prio, pause } => (port, Some(prio), pause),
                Transition::Port { port, pause } => (port, None, pause),
            };
            let gp = self.switches[s as usize].port(port);
            self.pfc_transition(gp, class, pause);
        }
        self.transitions = tr;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The cached bounds of a percent bucket are exactly the cells `percent_of` puts in
        /// it, so skipping the computation inside the bounds changes no histogram.
        #[test]
        fn percent_bounds_match_percent_of(total in 1u64..1 << 32, c in 0u64..1 << 33) {
            let scale = (100u64 << 32).div_ceil(total);
            let p = percent_of(c, scale);
            let (lo, hi) = percent_bounds(p, scale);
            prop_assert!(lo <= c && c < hi);
            prop_assert_eq!(percent_of(lo, scale), p);
            if lo > 0 {
                prop_assert!(percent_of(lo - 1, scale) < p);
            }
            if hi != u64::MAX {
                prop_assert!(percent_of(hi, scale) > p);
            }
        }
    }
}
