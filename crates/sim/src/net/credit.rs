//! Credit links: the driver of [`headroom_mech::credit::CreditPort`].
//!
//! On a credit link every frame that is not link control passes the port's gate (its VL's
//! credits, `port.rs`) and is charged when it starts. Its receiver counts it when it takes
//! it into a buffer (a switch on admission, a host on arrival) and frees its blocks when it
//! leaves (a switch when it is dequeued or dropped there, a host at once, as it consumes
//! what it receives). Flow-control packets (FCPs, `Kind::Fcp`, one per VL, `FCP_BYTES` on
//! the wire) carry the sender's FCTBS and FCCL; they are link control (sent ahead of data,
//! never held) and take their values when they leave. An FCP goes when it has news: within
//! the update period of its VL's first change since its last FCP (one `CreditUpdate` timer
//! per port, for the earliest VL deadline), or at once when more
//! than the threshold was freed.
//!
//! Invariants: a VL's receive buffer never holds more blocks than it granted (an overflow
//! is counted as a lossless drop, and cannot happen while transmitters obey their gates);
//! at most one FCP per VL waits in a port's control queue; only frames cross parts.

use super::features::Features;
use super::packet::{Kind, Packet};
use super::{Simulation, Slot};
use crate::config::CreditGrant;
use crate::engine::Event;
use crate::results::{CreditBlock, LosslessDrop};
use headroom_mech::credit::{Update, FCP_BYTES, MAX_OUTSTANDING};
use headroom_mech::units::Time;
use headroom_mech::PRIORITIES;

/// `Packet::payload` of an FCP whose VL buffer never filled: no egress to blame.
pub(super) const NO_CULPRIT: u32 = u32::MAX;

/// `Packet::seq` of an FCP: FCTBS in bits 16..28, FCCL in bits 0..12.
fn fcp_seq(fctbs: u16, fccl: u16) -> u64 {
    (u64::from(fctbs) << 16) | u64::from(fccl)
}

/// The (FCTBS, FCCL) an FCP's `seq` carries (see [`fcp_seq`]).
fn fcp_values(seq: u64) -> (u16, u16) {
    ((seq >> 16) as u16 & 0x0fff, seq as u16 & 0x0fff)
}

impl Simulation {
    /// A frame of `class` and `bytes` started on `port` (its gate had opened): charge it to
    /// the port's flow control, and arm the credit update timer if that asks. A fabric
    /// without credit links (PFC only has nothing to charge) costs one check per frame.
    #[inline(always)]
    pub(super) fn charge_sent<F: Features>(&mut self, port: u32, class: u8, bytes: u64) {
        if F::OPTIONAL && self.credit_links {
            self.charge_credit(port, class, bytes);
        }
    }

    /// Starts loading the credit state of VL `vl` on `port` that the frame in hand will
    /// update (on admission or release), so that the miss overlaps routing and the MMU's
    /// work instead of following it. Nothing on a PFC link.
    #[inline(always)]
    pub(super) fn prefetch_credit<F: Features>(&self, port: u32, vl: u8) {
        if F::OPTIONAL && self.credit_links {
            if let Some(c) = self.ports[port].fc.credit() {
                super::prefetch(c.rx(vl));
            }
        }
    }

    #[inline(never)]
    fn charge_credit(&mut self, port: u32, class: u8, bytes: u64) {
        let now = self.now;
        if let Some(t) = self.ports[port].fc.on_sent(now, class, bytes) {
            self.arm_credit_timer(port, t);
        }
    }

    /// Arms `port`'s credit update timer for `t` (the one way it is armed). Out of line: at
    /// most once per update period, and the frames that do not arm it stay free of the
    /// calendar's code.
    #[cold]
    #[inline(never)]
    fn arm_credit_timer(&mut self, port: u32, t: Time) {
        self.schedule(t, Event::CreditUpdate { port });
    }

    /// A frame of VL `vl` and `bytes` was taken into the receive buffer of credit port
    /// `port` (no-op on a PFC port). Out of line, so that a PFC fabric's admission is not
    /// compiled around it.
    #[inline(never)]
    pub(super) fn credit_received(&mut self, port: u32, vl: u8, bytes: u32) {
        let Some(c) = self.ports[port].fc.credit_mut() else {
            return;
        };
        let room = self.credit_room;
        let full = |c: &headroom_mech::credit::CreditPort| {
            c.rx(vl).held().saturating_add(room) > c.capacity(vl)
        };
        let was_full = full(c);
        let overflow = c.on_received(vl, u64::from(bytes));
        let filled = !was_full && full(c);
        if filled || overflow {
            self.credit_buffer_filled(port, vl, filled, overflow);
        }
    }

    /// VL `vl`'s receive buffer at `port` just `filled` (has no room for another largest
    /// frame) or overflowed: blame an egress, or count a lossless drop. Rare, and out of
    /// line so that the common receive stays small.
    #[cold]
    #[inline(never)]
    fn credit_buffer_filled(&mut self, port: u32, vl: u8, filled: bool, overflow: bool) {
        if filled {
            // Its transmitter may wait from now on. Blame an egress, as an XOFF decision
            // does.
            if let Slot::Switch(s) = self.slots[self.ports[port].node as usize] {
                let culprit = self.credit_culprit(s, port, vl);
                self.credit_culprits[self.ports.held_index(port) * PRIORITIES + usize::from(vl)] =
                    culprit.map_or(NO_CULPRIT, u32::from);
            }
        }
        if overflow {
            let p = &self.ports[port];
            let d = LosslessDrop {
                time: self.now,
                node: p.node,
                port: p.local,
                prio: vl,
                cause: "credit_overflow",
            };
            self.lossless_drops.push(d);
        }
    }

    /// A frame of VL `vl` and `bytes` left the receive buffer of credit port `port` (no-op
    /// on a PFC port).
    pub(super) fn credit_freed(&mut self, port: u32, vl: u8, bytes: u32) {
        let now = self.now;
        let Some(c) = self.ports[port].fc.credit_mut() else {
            return;
        };
        let update = c.on_freed(now, vl, u64::from(bytes));
        if update != Update::Pending {
            self.credit_update_due(port, vl, update);
        }
    }

    /// A host took a frame off credit port `port`: it is counted and freed at once (its
    /// VLs have no buffer limit).
    pub(super) fn credit_consumed(&mut self, port: u32, pkt: u32) {
        let pk = self.arena.get(pkt);
        let (vl, size) = (pk.prio, pk.size);
        let now = self.now;
        let Some(c) = self.ports[port].fc.credit_mut() else {
            return;
        };
        let update = c.on_consumed(now, vl, u64::from(size));
        if update != Update::Pending {
            self.credit_update_due(port, vl, update);
        }
    }

    /// Freeing blocks of `vl` on `port` made its FCP due now, or armed the update timer.
    /// Out of line: most frees change nothing but counts.
    #[inline(never)]
    fn credit_update_due(&mut self, port: u32, vl: u8, update: Update) {
        match update {
            Update::SendNow => self.queue_fcp_and_wake(port, vl),
            Update::ArmTimer(t) => self.arm_credit_timer(port, t),
            Update::Pending => {}
        }
    }

    /// The credit update timer of `port` fired: queue an FCP for every VL with news.
    pub(super) fn credit_timer(&mut self, port: u32) {
        let now = self.now;
        let Some(c) = self.ports[port].fc.credit_mut() else {
            return;
        };
        let (mut due, next) = c.handle_timeout(now);
        if let Some(t) = next {
            self.arm_credit_timer(port, t);
        }
        let mut queued = false;
        while due != 0 {
            let vl = due.trailing_zeros() as u8;
            due &= due - 1;
            queued |= self.queue_fcp(port, vl);
        }
        if queued {
            // An event of its own: the port sends now if it is idle (no wake-up event),
            // else asks to be woken when its frame ends.
            self.try_send(port);
        }
    }

    /// Queues the FCP of `vl` on `port` unless one waits already, and has the port look
    /// again (by a wake-up: this may run in the middle of a dequeue on this very port).
    fn queue_fcp_and_wake(&mut self, port: u32, vl: u8) {
        if self.queue_fcp(port, vl) {
            self.wake_when_free(port);
        }
    }

    /// Queues the FCP of `vl` on `port` unless one waits already; returns whether it did.
    fn queue_fcp(&mut self, port: u32, vl: u8) -> bool {
        let p = &mut self.ports[port];
        let up = p.up;
        let Some(c) = p.fc.credit_mut() else {
            return false;
        };
        if !up || !c.queue_fcp(vl) {
            return false;
        }
        let mut pk = Packet::new(Kind::Fcp);
        pk.prio = vl;
        pk.size = FCP_BYTES as u32;
        let idx = self.arena.alloc(pk);
        self.ports[port].ctrl.push_back(&mut self.arena, idx);
        true
    }

    /// Wakes `port` as soon as its wire is free: now if idle, else when its frame ends (a
    /// wake-up before that would only ask for this one).
    fn wake_when_free(&mut self, port: u32) {
        let t = self.now.max(self.ports[port].busy_until);
        self.schedule_wake(port, t);
    }

    /// The FCP `pkt` leaves `port` now: it carries the port's values of this moment (on a
    /// switch granting credits from its shared buffer, the VL's grant of this moment).
    pub(super) fn fcp_leaves(&mut self, port: u32, pkt: u32) {
        let vl = self.arena.get(pkt).prio;
        if self.cfg.fabric.credit.grant == CreditGrant::Shared {
            self.regrant(port, vl);
        }
        if let Some(c) = self.ports[port].fc.credit_mut() {
            let (fctbs, fccl) = c.send_fcp(vl);
            let pk = self.arena.get_mut(pkt);
            pk.seq = fcp_seq(fctbs, fccl);
            pk.payload =
                self.credit_culprits[self.ports.held_index(port) * PRIORITIES + usize::from(vl)];
        }
    }

    /// Sizes `vl`'s receive buffer at switch port `port` by the dynamic threshold
    /// ([`Mmu::grant_private`](headroom_mech::buffer::Mmu::grant_private)): its VL buffer
    /// plus the port's alpha × the free shared cells, at least what it holds and promised,
    /// at most what a transmitter may have outstanding beyond what it holds.
    fn regrant(&mut self, port: u32, vl: u8) {
        let p = &self.ports[port];
        let (local, node) = (usize::from(p.local), p.node);
        let Slot::Switch(s) = self.slots[node as usize] else {
            return; // a host takes what it receives at once
        };
        let Some(c) = p.fc.credit() else {
            return;
        };
        let credit = &self.cfg.fabric.credit;
        let cell = self.cfg.switch.cell_bytes;
        let per_block = credit.cells_per_block(cell);
        let held = c.rx(vl).held();
        let cells = |blocks: u32| blocks.saturating_mul(per_block);
        let bounds = (
            cells(held + c.promised(vl)),
            credit.vl_buffer_cells(cell),
            cells(held + u32::from(MAX_OUTSTANDING)),
        );
        let granted =
            self.switches[s as usize]
                .mmu
                .grant_private(local, vl, bounds, &mut self.transitions);
        if let Some(c) = self.ports[port].fc.credit_mut() {
            c.set_capacity(vl, granted / per_block);
        }
        self.apply_transitions(s);
    }

    /// The FCP `pkt` waiting on `port` was dropped with its link.
    pub(super) fn fcp_lost(&mut self, port: u32, pkt: u32) {
        let vl = self.arena.get(pkt).prio;
        if let Some(c) = self.ports[port].fc.credit_mut() {
            c.fcp_lost(vl);
        }
        self.arena.free(pkt);
    }

    /// The peer's FCP arrived at `port`: adopt its FCTBS, take its limit, and look again if
    /// that lifted a block.
    pub(super) fn receive_fcp(&mut self, port: u32, pkt: u32) {
        let pk = *self.arena.get(pkt);
        self.arena.free(pkt);
        let (fctbs, fccl) = fcp_values(pk.seq);
        let now = self.now;
        let vl = pk.prio;
        let Some(c) = self.ports[port].fc.credit() else {
            debug_assert!(false, "an FCP arrived on a PFC link");
            return;
        };
        if c.tx(vl).is_blocked() {
            // Congestion detection sees the block before it may end (a refused frame since
            // the last look begins a new one).
            self.report_pauses(port, 1 << vl);
        }
        let Some(c) = self.ports[port].fc.credit_mut() else {
            return;
        };
        if c.on_fcp(now, vl, fctbs, fccl) {
            let episode = c.tx(vl).last_block();
            // ... and its end, with the queue's length at it.
            self.report_pauses(port, 1 << vl);
            if let Ok(culprit) = u16::try_from(pk.payload) {
                self.judge_credit_wait(port, vl, culprit);
            }
            if let (Some((start, end)), false) = (episode, self.cfg.record.omit_credit_log) {
                let p = &self.ports[port];
                self.credit_blocks.push(CreditBlock {
                    start,
                    end,
                    node: p.node,
                    is_switch: matches!(self.slots[p.node as usize], Slot::Switch(_)),
                    port: p.local,
                    vl,
                });
            }
            // An event of its own (an arrival): the port may send at once.
            self.try_send(port);
        }
    }

    /// Whether `port` is an end of a credit link.
    pub(super) fn is_credit_port(&self, port: u32) -> bool {
        self.ports[port].fc.credit().is_some()
    }
}

impl Simulation {
    /// The blocks each credit ingress (port, VL) of switch `i` holds equal the blocks of
    /// the frames queued at the switch that came in through it.
    pub(super) fn check_credit_buffers(&self, i: u32) -> Result<(), String> {
        if !self.credit_links {
            return Ok(());
        }
        let s = &self.switches[i as usize];
        let mut held = vec![[0u32; headroom_mech::credit::MAX_VLS]; s.ports().len()];
        for pkt in self.held_packets(i) {
            let pk = self.arena.get(pkt);
            let ingress = s.port(pk.in_port);
            if let Some(c) = self.ports[ingress].fc.credit() {
                let blocks = u32::from(c.blocks(u64::from(pk.size)));
                held[usize::from(pk.in_port)][usize::from(pk.prio)] += blocks;
            }
        }
        for (local, gp) in s.ports().enumerate() {
            let Some(c) = self.ports[gp].fc.credit() else {
                continue;
            };
            for vl in 0..c.vls() {
                let counted = c.rx(vl).held();
                let queued = held[local][usize::from(vl)];
                if counted != queued {
                    return Err(format!(
                        "switch {} port {local} VL {vl}: credit receiver holds {counted} \
                         blocks, its queued frames {queued}",
                        s.node
                    ));
                }
                if counted > c.capacity(vl) {
                    return Err(format!(
                        "switch {} port {local} VL {vl}: holds {counted} blocks of {}",
                        s.node,
                        c.capacity(vl)
                    ));
                }
            }
        }
        Ok(())
    }

    /// At the end of a run whose frames have all arrived: every credit receiver holds
    /// nothing, has counted every block its peer sent, and would grant the peer its whole
    /// buffer (at most 2048 blocks) with its next update. `Err` names the first link end
    /// where credit leaked or was counted twice.
    pub fn check_credits_drained(&self) -> Result<(), String> {
        for (_, port) in self.ports.iter() {
            let peer = self.ports.get(port.peer);
            let (Some(tx), Some(rx)) = (port.fc.credit(), peer.and_then(|p| p.fc.credit())) else {
                continue;
            };
            for vl in 0..tx.vls() {
                let r = rx.rx(vl);
                let sent = tx.tx(vl).fctbs();
                let cap = rx
                    .capacity(vl)
                    .min(u32::from(headroom_mech::credit::MAX_OUTSTANDING));
                let grantable = u32::from(rx.limit(vl).wrapping_sub(sent) & 0x0fff);
                if r.held() != 0 || r.abr() != sent || grantable != cap {
                    return Err(format!(
                        "node {} port {} VL {vl}: sent {sent} blocks; its peer counted {}, \
                         holds {} and would grant {grantable} of {cap}",
                        port.node,
                        port.local,
                        r.abr(),
                        r.held()
                    ));
                }
            }
        }
        Ok(())
    }
}
