//! ACK frames of the flow-channel fabric: the ACKs a switch output owes its upstream
//! switch wait in that port's batch and leave together as one frame, ahead of data and
//! never held by link flow control, when `ack_batch` of them wait, or at the first frame
//! start once the first has waited `ack_idle_delay` (the link was idle when it came) or
//! `ack_busy_delay` (busy), or earlier if a data frame starting instead would end past
//! `ack_max_delay` (no timer events: the port looks at its ACKs whenever it could start a
//! frame; a frame on the wire is never cut short). On arrival each ACK goes to its
//! channel's hop ([`Simulation::channel_acked`]), a HeadroomACK to that hop's credits.
//!
//! Invariant: an ACK frame carries the number of its ACKs (in `payload`); the ACKs
//! themselves wait in `ChannelFabric::wire` for the port the frame goes to, from the moment
//! it is made until it arrives. A link delivers its frames in the order they were made (ACK
//! frames are never dropped: flow channels run on links that neither fail nor corrupt), so
//! an arriving frame's ACKs are the first of its port's queue. That queue is touched per
//! port, not per arena slot: its lines stay in cache between frames. An ACK frame crossing
//! to another part of a partitioned run takes its ACKs from the front of the queue along in
//! the mail, and they join the back of the receiving part's queue for that port.

use super::flow_channel::ChannelFabric;
use super::packet::{Kind, Packet};
use super::{Simulation, Slot};
use headroom_mech::flow_channel::AckSignal;
use headroom_mech::hop_credit::HeadroomAck;
use headroom_mech::units::Time;

/// One ACK on its way upstream: `units` of the channel with id `id` on the link, and what
/// it says of the destination's congestion; or a HeadroomACK for that hop alone.
#[derive(Clone, Copy, Debug)]
pub(super) struct AckEntry {
    id: u16,
    signal: AckSignal,
    units: u32,
    headroom: Option<HeadroomAck>,
}

impl AckEntry {
    /// An ACK of `units` saying `signal`.
    pub(super) fn flow(id: u16, signal: AckSignal, units: u32) -> Self {
        AckEntry {
            id,
            signal,
            units,
            headroom: None,
        }
    }

    /// A HeadroomACK.
    pub(super) fn headroom(id: u16, ack: HeadroomAck) -> Self {
        AckEntry {
            id,
            signal: AckSignal::Ongoing,
            units: 0,
            headroom: Some(ack),
        }
    }
}

/// The ACKs waiting to go upstream from one port.
#[derive(Clone, Debug, Default)]
pub(super) struct PendingAcks {
    acks: Vec<AckEntry>,
    /// When the first of them came.
    first: Time,
    /// From when they may go (unless the batch fills first): at the first frame start
    /// from then on.
    due: Time,
}

impl Simulation {
    /// The ACK `ack` waits to go upstream on the link of global port `gp`.
    pub(super) fn queue_ack(&mut self, gp: u32, ack: AckEntry) {
        let now = self.now;
        let busy = self.ports[gp].busy_until > now;
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        let batch = usize::from(fc.params.ack_batch);
        let p = &mut fc.pending[gp as usize];
        p.acks.push(ack);
        if p.acks.len() >= batch {
            self.send_acks(gp);
            self.try_send(gp);
        } else if p.acks.len() == 1 {
            let wait = if busy {
                fc.params.ack_busy_delay
            } else {
                fc.params.ack_idle_delay
            };
            p.first = now;
            p.due = now + wait;
            // The port looks at its ACKs whenever it could start a frame (`try_send`): a
            // busy port's pending wake-up may serve, or this one.
            let due = p.due;
            self.schedule_wake(gp, due);
        }
    }

    /// Global port `gp` could start a frame now: its waiting ACKs go ahead of data if due.
    #[inline]
    pub(super) fn channel_acks_due(&mut self, gp: u32) {
        let now = self.now;
        let Some(fc) = self.channels.as_deref() else {
            return;
        };
        let p = &fc.pending[gp as usize];
        if p.acks.is_empty() {
            return;
        }
        // A data frame started now would hold them until its end: past the limit, they go
        // first, due or not.
        let limit = p.first + fc.params.ack_max_delay;
        let port = &self.ports[gp];
        let data_waiting = port.nonempty != 0;
        if p.due <= now || (data_waiting && now + port.serialization(fc.frame_bytes) > limit) {
            self.send_acks(gp);
        } else {
            let due = p.due;
            self.schedule_wake(gp, due);
        }
    }

    /// Queues the ACKs waiting on global port `gp` as one frame, ahead of data.
    fn send_acks(&mut self, gp: u32) {
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        let n = fc.pending[gp as usize].acks.len();
        let mut pk = Packet::new(Kind::ChannelAck);
        pk.size = fc.params.ack_frame_bytes(n);
        // At most `ack_batch` (a u16).
        pk.payload = n as u32;
        let pkt = self.arena.alloc(pk);
        let to = self.ports[gp].peer as usize;
        fc.wire[to].extend(fc.pending[gp as usize].acks.drain(..));
        fc.stats.ack_frames += 1;
        fc.stats.acks += n as u64;
        fc.stats.ack_bytes += u64::from(pk.size);
        self.ports[gp].ctrl.push_back(&mut self.arena, pkt);
    }

    /// An ACK frame arrived at global port `gp` (an output of the switch it acknowledges).
    pub(super) fn receive_channel_acks(&mut self, gp: u32, pkt: u32) {
        let Slot::Switch(s) = self.slots[self.ports[gp].node as usize] else {
            unreachable!("ACK frames go upstream to switches only")
        };
        let out_local = self.ports[gp].local;
        let n = self.arena.get(pkt).payload;
        self.arena.free(pkt);
        for _ in 0..n {
            let Some(fc) = self.channels.as_deref_mut() else {
                break;
            };
            let Some(a) = fc.wire[gp as usize].pop_front() else {
                fc.fault_text("an ACK frame arrived before its ACKs");
                break;
            };
            let units = u64::from(a.units);
            match (
                fc.tables[s as usize].ack(out_local, a.id, units),
                a.headroom,
            ) {
                (Ok(up), Some(ack)) => {
                    // For this hop alone: not passed on.
                    if let Some(hop) = fc.hop.as_mut() {
                        hop.credited((s, up.in_port, up.id), ack);
                    }
                    self.release_held_flows(s, up);
                }
                (Ok(up), None) => self.channel_acked(s, up, units, a.signal),
                (Err(e), _) => fc.fault("ack", e),
            }
        }
    }
}

impl ChannelFabric {
    /// An ACK frame of `n` ACKs leaves for global port `to` of another part: its ACKs,
    /// the first `n` waiting for `to`, are appended to `mail`. Returns how many.
    pub(super) fn hand_over_acks(&mut self, to: u32, n: u32, mail: &mut Vec<AckEntry>) -> u32 {
        let queue = &mut self.wire[to as usize];
        let n = (n as usize).min(queue.len());
        mail.extend(queue.drain(..n));
        // At most `ack_batch` (a u16).
        n as u32
    }

    /// An ACK frame from another part is on its way to global port `to`: `acks` are its
    /// ACKs.
    pub(super) fn take_over_acks(&mut self, to: u32, acks: &[AckEntry]) {
        self.wire[to as usize].extend(acks.iter().copied());
    }
}
