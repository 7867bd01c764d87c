//! Ports and links: what a port sends next, and how long it takes to get there.
//!
//! A port is one direction of a full-duplex link: it serializes one frame at a time at its
//! rate (frame bytes plus the per-frame overhead), and the frame arrives at the peer port
//! one propagation delay after its last bit (a switch admits it one propagation delay after
//! its first bit, and may forward it from the moment its last bit is in). Selection order
//! when the port is idle:
//! 1. control frames (link control such as PFC, which the link's flow control never holds;
//!    on hosts also ACK/NACK/CNP, which it may);
//! 2. (switch) strict-priority queues, highest index first, then DWRR among the others,
//!    skipping every class the link's flow control holds or whose head frame is still
//!    arriving; (host) the NIC's flow scheduler.
//!
//! Every frame that is not link control passes one gate, the port's
//! [`LinkFlowControl`] (PFC pause timers or credits), before it starts, and is charged to it
//! when it does. A port with work it may not send yet (paused class, paced flow) schedules
//! one `Wake` at the earliest time that can change; a class waiting for a signal from the
//! peer is looked at again when it arrives; a frame already started is always finished.
//!
//! `pfc`: the PAUSE and RESUME frames a port sends for its switch's decisions, and what a
//! received one does.

use super::features::{Features, General, Lean};
use super::packet::{Arena, Fifo, Kind};
use super::{Simulation, Slot};
use crate::config::{Admission, EcnPoint};
use crate::engine::{CreatorCount, Event};
use headroom_mech::flow_control::{Gate, LinkFlowControl};
use headroom_mech::int::IntHop;
use headroom_mech::pfc::PauseGenerator;
use headroom_mech::units::{Rate, Time};
use headroom_mech::PRIORITIES;

mod pfc;
pub(super) use pfc::pfc_class;

/// One transmitting port.
///
/// Laid out by cache line (`repr(C)`, 64-byte aligned), because with thousands of ports
/// nearly every port access misses the first-level cache: line 0 holds what every frame
/// touches (transmitter, flags, control queue, its count as a creator of events), lines 1
/// and 2 the egress queues with their byte counts and peaks, line 3 when each queue's head
/// is complete, line 4 the transmit counters and the start of the pause timers (their
/// "anything paused?" bound); statistics and PFC generator state, touched rarely, come
/// last.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Port {
    /// The frame being serialized ends at this time; the port is idle from then on.
    pub busy_until: Time,
    /// Pending wake-up, or `Time::MAX`.
    pub wake_at: Time,
    /// Picoseconds per byte when the rate divides 8 × 10^12 exactly (every common Ethernet
    /// speed does, 8,000,000 at most for 1 Mb/s), so serialization is a multiplication
    /// instead of a 128-bit division; 0 otherwise.
    ps_per_byte: u32,
    /// The ECN configuration of this port's egress queues: an index into the simulation's
    /// table of distinct ones (ports of one speed share one).
    pub red_class: u16,
    /// The peer belongs to another part of a partitioned run: frames for it go to the
    /// simulation's outbox instead of its event queue.
    pub remote: bool,
    /// Bit `q` set: queue `q` is in a PFC storm with the watchdog's drop action and
    /// discards what arrives for it. In line 0 because every admission reads it.
    pub wd_drop: u8,
    /// Propagation delay.
    pub delay: Time,
    /// The port's count as the creator of the events its own events schedule (their
    /// tie-break keys, [`crate::engine::tiebreak`]): in line 0, which the event being
    /// handled has read anyway, rather than in a table of its own (a miss per scheduled
    /// event in a large fabric).
    pub count: CreatorCount,
    /// Node owning the port.
    pub node: u32,
    /// Global index of the port at the other end.
    pub peer: u32,
    /// Control frames waiting.
    pub ctrl: Fifo,
    /// Index among the node's ports.
    pub local: u16,
    /// The link works (false after a failure).
    pub up: bool,
    /// The port at the other end belongs to a switch (which may admit frames at their
    /// first bit). Set by the network builder; `false` from [`Port::new`].
    pub peer_is_switch: bool,
    /// Bit `q` set: egress queue `q` holds packets.
    pub nonempty: u8,
    /// DWRR round pointer.
    rr: u8,
    /// The link drops frames at random: this port's received frames are drawn against
    /// `error_rate`.
    pub lossy: bool,
    /// Bit clear: that queue's deficit is zero (set: it may not be), so passing empty queues
    /// clears only the credits that exist.
    credited: u8,
    /// Egress queues (switches only), two lines: each queue's packets and byte counts in
    /// one 16-byte slot.
    pub queues: [EgressQueue; PRIORITIES],
    /// Per egress queue, when its head packet's last bit has arrived (its `ready_at`; the
    /// head of a switch admitting at the first bit may still be arriving). Kept here so that
    /// the scheduler, which looks at every eligible queue's head, reads no packet it does not
    /// send; `READY_UNREAD` until the scheduler first looks at a new head. Meaningless while
    /// the queue is empty.
    pub head_ready: [Time; PRIORITIES],
    /// Frames sent.
    pub tx_frames: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Link rate.
    pub rate: Rate,
    /// Frame error probability of the link (the same in both directions), applied to the
    /// frames this port receives; read only when `lossy`.
    pub error_rate: f64,
    /// The transmitting half of the link's flow control: the pause timers set by PFC
    /// frames received on this port, or its credits.
    pub fc: LinkFlowControl,
    /// DWRR deficit per queue.
    deficit: [u64; PRIORITIES],
    /// The queue under the DWRR pointer still needs its quantum for this round (beside the
    /// deficits, which the round robin reads whenever it reads this).
    refill: bool,
    /// PAUSE generators of this port's ingress PGs.
    pub gens: [PauseGenerator; PRIORITIES],
    /// PAUSE generator of the port as a whole (DSH's port-level pause).
    pub port_gen: PauseGenerator,
    /// PAUSE frames sent per priority.
    pub pause_sent: [u32; PRIORITIES],
    /// RESUME frames sent per priority.
    pub resume_sent: [u32; PRIORITIES],
    /// Port-level PAUSE frames sent.
    pub port_pause_sent: u32,
    /// Port-level RESUME frames sent.
    pub port_resume_sent: u32,
    /// The PFC frame per class (index 8: port-level) still waiting in `ctrl`, or
    /// [`NO_FRAME`]: a later decision for that class updates it instead of queueing another,
    /// as an 802.1Qbb MAC sends the current pause state, not a backlog of past ones.
    pfc_pending: [u32; PRIORITIES + 1],
    /// PFC decisions that updated a waiting frame (see `pfc_pending`).
    pub pfc_merged: u32,
    /// The latest time a `Wake` of this port was scheduled for (`Time::ZERO`: none yet).
    /// While it lies ahead it is pending, and a wake-up asked for at or after it is left to
    /// it: that wake-up looks again and asks anew if there is still reason to.
    wake_latest: Time,
    /// The time of the pending `PfcRefresh` event per class (index 8: port-level), or
    /// `Time::MAX`: a refresh due later than it is scheduled when it fires, so a PG
    /// flapping between XOFF and XON has one refresh event pending, not one per XOFF.
    refresh_pending: [Time; PRIORITIES + 1],
}

/// One egress queue of a switch port.
#[derive(Clone, Copy, Debug, Default)]
pub struct EgressQueue {
    /// The queued packets.
    pub fifo: Fifo,
    /// Bytes queued (never more than the switch's buffer, which configuration keeps below
    /// 4 GiB).
    pub bytes: u32,
    /// Largest `bytes` seen.
    pub peak: u32,
}

impl Port {
    /// A idle port.
    pub fn new(node: u32, local: u16, peer: u32, rate: Rate, delay: Time, error_rate: f64) -> Self {
        let ps_per_byte = if rate.bps() > 0 && 8_000_000_000_000u64.is_multiple_of(rate.bps()) {
            u32::try_from(8_000_000_000_000u64 / rate.bps()).unwrap_or(0)
        } else {
            0
        };
        Port {
            node,
            local,
            peer,
            peer_is_switch: false,
            rate,
            delay,
            ps_per_byte,
            error_rate,
            lossy: error_rate > 0.0,
            // Named by the `PortTable` that holds it (its canonical index).
            count: CreatorCount::new(0),
            up: true,
            busy_until: Time::ZERO,
            ctrl: Fifo::default(),
            queues: [EgressQueue::default(); PRIORITIES],
            head_ready: [Time::ZERO; PRIORITIES],
            red_class: 0,
            remote: false,
            nonempty: 0,
            fc: LinkFlowControl::default(),
            gens: [PauseGenerator::default(); PRIORITIES],
            port_gen: PauseGenerator::default(),
            deficit: [0; PRIORITIES],
            credited: 0,
            wd_drop: 0,
            rr: 0,
            refill: true,
            wake_at: Time::MAX,
            tx_frames: 0,
            tx_bytes: 0,
            pause_sent: [0; PRIORITIES],
            resume_sent: [0; PRIORITIES],
            port_pause_sent: 0,
            port_resume_sent: 0,
            pfc_pending: [NO_FRAME; PRIORITIES + 1],
            pfc_merged: 0,
            wake_latest: Time::ZERO,
            refresh_pending: [Time::MAX; PRIORITIES + 1],
        }
    }

    /// Queue `q` lost its head (sent or dropped): start loading the new head, whose
    /// `ready_at` the scheduler reads when it next looks at the queue (by then the load has
    /// landed, instead of stalling the dequeue that is under way), or note that the queue
    /// is empty.
    #[inline]
    pub(super) fn head_removed(&mut self, q: usize, arena: &Arena) {
        match self.queues[q].fifo.front() {
            Some(head) => {
                super::prefetch(arena.get(head));
                self.head_ready[q] = READY_UNREAD;
            }
            None => self.nonempty &= !(1 << q),
        }
    }
}

/// `Port::head_ready` of a queue whose head's `ready_at` is still to be read (no frame
/// arrives at the end of time).
const READY_UNREAD: Time = Time::MAX;

/// No PFC frame of that class is waiting (see `Port::pfc_pending`).
const NO_FRAME: u32 = u32::MAX;

impl Port {
    /// Whether a wake-up at `t` (now `now`) must be scheduled, the pending ones considered
    /// (see [`Simulation::schedule_wake`]); records it if so.
    #[inline(always)]
    fn wake_needed(&mut self, now: Time, t: Time) -> bool {
        if self.wake_at <= t && self.wake_at >= now {
            return false;
        }
        if self.wake_latest > now && self.wake_latest <= t {
            self.wake_at = self.wake_latest;
            return false;
        }
        self.wake_at = t;
        self.wake_latest = self.wake_latest.max(t);
        true
    }

    /// Whether the scheduler, finding queue `q` the only one eligible, serves it without
    /// changing its round-robin state: a strict class (`strict` mask), or the one under
    /// the DWRR pointer (what `Simulation::switch_dequeue` does for one eligible queue).
    #[inline(always)]
    pub(super) fn serves_alone_untouched(&self, q: u8, strict: u8) -> bool {
        strict & (1 << q) != 0 || self.rr == q
    }

    /// Time to serialize `bytes` on this port (same value as `Rate::serialization`).
    pub fn serialization(&self, bytes: u64) -> Time {
        match self.ps_per_byte {
            0 => self.rate.serialization(bytes),
            k => Time(bytes * u64::from(k)),
        }
    }
}

impl Simulation {
    /// Starts the next frame on `port` if it is idle and has something it may send, on the
    /// copy of the forwarding path this run takes (`features`).
    #[inline]
    pub(super) fn try_send(&mut self, port: u32) {
        if self.lean {
            self.try_send_as::<Lean>(port);
        } else {
            self.try_send_as::<General>(port);
        }
    }

    /// [`Simulation::try_send`] on the copy for features `F`.
    ///
    /// The check for a busy or failed wire is inlined into every caller: a sixth of the
    /// calls find the wire busy, and they need none of the rest.
    #[inline(always)]
    pub(super) fn try_send_as<F: Features>(&mut self, port: u32) {
        let p = &self.ports[port];
        if !p.up {
            return;
        }
        let busy_until = p.busy_until;
        if self.now < busy_until {
            // Look again when the wire is free (one wake-up, however many callers).
            self.schedule_wake(port, busy_until);
            return;
        }
        self.send_next::<F>(port);
    }

    /// [`Simulation::try_send`] on an idle wire that is up: picks the next frame and starts
    /// it.
    #[inline(never)]
    fn send_next<F: Features>(&mut self, port: u32) {
        if F::OPTIONAL && self.channels.is_some() {
            self.channel_acks_due(port);
        }
        let node = self.ports[port].node;
        // One `start_tx` call site, so that it is inlined here.
        let pkt = match self.next_ctrl::<F>(port) {
            Some(pkt) => Some(pkt),
            None => match self.slots[node as usize] {
                Slot::Switch(s) => self.switch_dequeue::<F>(s, port),
                Slot::Host(h) => self.host_next_packet::<F>(h),
            },
        };
        if let Some(pkt) = pkt {
            self.start_tx(port, pkt);
        }
    }

    /// The head control frame, unless its class is paused (PFC frames never are).
    fn next_ctrl<F: Features>(&mut self, port: u32) -> Option<u32> {
        let now = self.now;
        let p = &mut self.ports[port];
        let head = p.ctrl.front()?;
        let pk = self.arena.get(head);
        // A NIC's ACKs, NACKs and CNPs wait for their own pause class under PFC (on credit
        // links for their VL's credits).
        let class = match pk.kind {
            Kind::Ack | Kind::Nack | Kind::Cnp
                if !(F::OPTIONAL && self.credit_links) || p.fc.pfc().is_some() =>
            {
                self.cfg.host.ack_pause_class
            }
            _ => pk.prio,
        };
        let link_control = pk.kind.is_link_control();
        if !link_control {
            match p.fc.gate(now, class, || u64::from(pk.size)) {
                Gate::Open => {}
                Gate::Until(t) => {
                    self.schedule_wake(port, t);
                    return None;
                }
                Gate::UntilSignal => return None,
            }
        }
        let pkt = p.ctrl.pop_front(&self.arena)?;
        match pk.kind {
            Kind::Pfc => p.pfc_dequeued(pfc_class(pk)),
            Kind::Fcp => self.fcp_leaves(port, pkt),
            Kind::ChannelAck | Kind::Fgfc => {}
            _ => self.charge_sent::<F>(port, class, u64::from(pk.size)),
        }
        Some(pkt)
    }

    /// Schedules a wake-up of `port` at `t` unless an earlier one is pending.
    ///
    /// A wake-up only makes the port look again (`try_send`), and a port that still has to
    /// wait asks for the next one itself: so a pending wake-up that an earlier one overtook
    /// (a pause timer's end, when a RESUME came first) serves a later request too, instead
    /// of one far event per pause episode.
    pub(super) fn schedule_wake(&mut self, port: u32, t: Time) {
        if self.ports[port].wake_needed(self.now, t) {
            self.schedule(t, Event::Wake { port });
        }
    }

    /// Puts `pkt` on the wire of `port`. Inlined into its call sites: each copy of
    /// `send_next`, and a switch's direct departure (`Simulation::depart_directly`).
    #[inline(always)]
    pub(super) fn start_tx(&mut self, port: u32, pkt: u32) {
        let overhead = self.cfg.link.frame_overhead;
        let size = u64::from(self.arena.get(pkt).size);
        let p = &mut self.ports[port];
        let ser = p.serialization(size + overhead);
        p.tx_frames += 1;
        p.tx_bytes += size;
        let done = self.now + ser;
        p.busy_until = done;
        let peer = p.peer;
        let arrive = done + p.delay;
        let first_bit = self.now + p.delay;
        let admit_early = p.peer_is_switch && self.cfg.switch.admission == Admission::FirstBit;
        let remote = p.remote;
        // Only a port with a backlog needs to look again when this frame ends; an idle one
        // is woken by whoever gives it work (see `try_send`). At low load this saves most
        // end-of-transmission events.
        let backlog = !p.ctrl.is_empty()
            || p.nonempty != 0
            || match self.slots[p.node as usize] {
                Slot::Host(h) => !self.hosts[h as usize].active.is_empty(),
                Slot::Switch(_) => false,
            };
        // `schedule_wake` with the port in hand.
        if backlog && p.wake_needed(self.now, done) {
            self.schedule(done, Event::Wake { port });
        }
        let pk = self.arena.get_mut(pkt);
        pk.ready_at = arrive;
        // A switch accounts a frame from its first bit on, as a chip writing cells while
        // they arrive does; it forwards it after its last bit (store and forward).
        let (time, event) = if admit_early && !pk.kind.is_link_control() {
            (first_bit, Event::FrameStart { port: peer, pkt })
        } else {
            (arrive, Event::Arrive { port: peer, pkt })
        };
        if remote {
            self.send_remote(time, event, pkt);
        } else {
            self.schedule(time, event);
        }
    }

    /// Picks the egress queue of a switch port to serve now, pops its head packet and does
    /// the dequeue-side work (MMU release, ECN at dequeue).
    fn switch_dequeue<F: Features>(&mut self, s: u32, port: u32) -> Option<u32> {
        let now = self.now;
        let strict = self.cfg.switch.scheduler.strict;
        let quantum = self.cfg.switch.scheduler.quantum;
        let weights = &self.cfg.switch.scheduler.weights;
        let p = &mut self.ports[port];
        let mut blocked_until = Time::MAX;
        let mut eligible = 0u8;
        let mut rest = p.nonempty;
        while rest != 0 {
            let q = rest.trailing_zeros() as u8;
            rest &= rest - 1;
            let (queues, arena) = (&p.queues, &self.arena);
            let head_bytes = || {
                queues[usize::from(q)]
                    .fifo
                    .front()
                    .map_or(0, |pk| u64::from(arena.get(pk).size))
            };
            match p.fc.gate(now, q, head_bytes) {
                Gate::Open => {}
                Gate::Until(t) => {
                    blocked_until = blocked_until.min(t);
                    continue;
                }
                Gate::UntilSignal => continue,
            }
            // The head may still be arriving (admitted at its first bit).
            let mut ready = p.head_ready[usize::from(q)];
            if ready == READY_UNREAD {
                ready = p.queues[usize::from(q)]
                    .fifo
                    .front()
                    .map_or(Time::ZERO, |pk| self.arena.get(pk).ready_at);
                p.head_ready[usize::from(q)] = ready;
            }
            debug_assert_eq!(
                Some(ready),
                p.queues[usize::from(q)]
                    .fifo
                    .front()
                    .map(|pk| self.arena.get(pk).ready_at)
            );
            if ready > now {
                blocked_until = blocked_until.min(ready);
            } else {
                eligible |= 1 << q;
            }
        }
        if eligible == 0 {
            if blocked_until < Time::MAX {
                self.schedule_wake(port, blocked_until);
            }
            return None;
        }
        let q = if eligible & strict != 0 {
            7 - (eligible & strict).leading_zeros() as usize
        } else if eligible & (eligible - 1) == 0 && eligible & (1 << p.rr) != 0 {
            // The only eligible queue (one bit set: `is_power_of_two` counts the bits, a
            // dozen instructions on the baseline target) is the one under the round
            // pointer: serving it is what DWRR would do; skip the deficit bookkeeping of a
            // one-queue round.
            eligible.trailing_zeros() as usize
        } else {
            let arena = &self.arena;
            dwrr_pick(p, eligible, quantum, weights, |pk| {
                u64::from(arena.get(pk).size)
            })
        };
        let pkt = p.queues[q].fifo.pop_front(&self.arena)?;
        p.head_removed(q, &self.arena);
        self.depart::<F>(s, port, q, pkt);
        Some(pkt)
    }

    /// The dequeue-side work for frame `pkt` leaving egress queue `q` of switch `s`'s
    /// global port `port` (out of the queue's FIFO already, or never in it: see
    /// `Simulation::depart_directly`): its bytes leave the queue's count, INT, the link's
    /// flow control, ECN at dequeue, the MMU release.
    #[inline(always)]
    pub(super) fn depart<F: Features>(&mut self, s: u32, port: u32, q: usize, pkt: u32) {
        let now = self.now;
        let p = &mut self.ports[port];
        let size = self.arena.get(pkt).size;
        let eq = &mut p.queues[q];
        eq.bytes -= size;
        let qlen = u64::from(eq.bytes);
        let local = p.local;
        if let Some(multi) = self.int_multi {
            if self.arena.get(pkt).kind == Kind::Data {
                // The port's whole backlog, after this packet, as the HPCC simulator reports.
                let queued: u64 = p.queues.iter().map(|q| u64::from(q.bytes)).sum();
                let hop = IntHop::new(now, p.tx_bytes, queued, p.rate, multi);
                if let Some(int) = self.arena.int_mut(pkt) {
                    int.push(hop);
                }
            }
        }
        self.charge_sent::<F>(port, q as u8, u64::from(size));
        self.congestion_mark(s, port, q, qlen, pkt, EcnPoint::Dequeue);
        let pk = self.arena.get_mut(pkt);
        let (in_port, prio, size, placement) = (pk.in_port, pk.prio, pk.size, pk.placement());
        let data = pk.kind == Kind::Data;
        // From here on it travels in the class of the queue it left.
        pk.prio = q as u8;
        self.switch_release::<F>(s, (in_port, prio), (local, q as u8), size, placement);
        if F::OPTIONAL && data && self.channels.is_some() {
            self.channel_forward(s, port, pkt);
        }
        // The next grant is staged once this packet is counted as forwarded: a gate on what
        // a flow or port has in flight must see it.
        if F::OPTIONAL && self.arbitration.is_on() {
            let gate = super::flow_channel::channel_gate(self.channels.as_deref(), s, self.now);
            let p = &mut self.ports[port];
            self.arbitration.refill(&mut self.arena, (port, p), q, gate);
        }
    }
}

/// Deficit weighted round robin among the `eligible` queues of `p` (bit set = non-empty and
/// not paused). Returns the queue to serve; charges its deficit.
fn dwrr_pick(
    p: &mut Port,
    eligible: u8,
    quantum: u64,
    weights: &[u32; PRIORITIES],
    head_size: impl Fn(u32) -> u64,
) -> usize {
    loop {
        // Move the pointer over the ineligible queues in one step: each one passed loses its
        // credit if it is empty (bit clear in `nonempty`), and the next queue starts a round.
        let skip = eligible.rotate_right(u32::from(p.rr)).trailing_zeros();
        if skip > 0 {
            let passed = ((1u16 << skip) - 1) as u8;
            let mut empty = passed.rotate_left(u32::from(p.rr)) & !p.nonempty & p.credited;
            p.credited &= !empty;
            while empty != 0 {
                p.deficit[empty.trailing_zeros() as usize] = 0;
                empty &= empty - 1;
            }
            p.rr = ((u32::from(p.rr) + skip) % PRIORITIES as u32) as u8;
            p.refill = true;
        }
        let q = usize::from(p.rr);
        if p.refill {
            p.deficit[q] += quantum * u64::from(weights[q].max(1));
            p.credited |= 1 << q;
            p.refill = false;
        }
        let head = p.queues[q].fifo.front().map(&head_size).unwrap_or(0);
        if p.deficit[q] >= head {
            p.deficit[q] -= head;
            // Its bytes, not its FIFO: a queue with sub-queues shows only its staged head.
            if u64::from(p.queues[q].bytes) == head {
                // The queue empties: it keeps no credit, and the pointer moves on.
                p.deficit[q] = 0;
                p.credited &= !(1 << q);
                p.rr = ((q + 1) % PRIORITIES) as u8;
                p.refill = true;
            }
            return q;
        }
        p.rr = ((q + 1) % PRIORITIES) as u8;
        p.refill = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    /// The layout the struct's documentation promises: what every frame touches in line 0,
    /// the queues in lines 1 and 2, the transmit counters and the pause bound in line 3.
    #[test]
    fn port_lines() {
        assert_eq!(std::mem::align_of::<Port>(), 64);
        assert!(offset_of!(Port, credited) < 64);
        assert!(offset_of!(Port, wd_drop) < 64);
        assert!(offset_of!(Port, count) + 8 <= 64);
        assert!(offset_of!(Port, lossy) < 64);
        assert_eq!(offset_of!(Port, queues), 64);
        assert_eq!(std::mem::size_of::<EgressQueue>(), 16);
        assert_eq!(offset_of!(Port, head_ready), 192);
        assert_eq!(offset_of!(Port, tx_frames), 256);
        // The flow control's tag and the PFC timers' `latest_until` right after it.
        assert!(offset_of!(Port, fc) + 16 <= 320, "latest_until in line 4");
    }
}
