//! ACK frames of the flow-channel fabric: the ACKs a switch output owes its upstream
//! switch wait in that port's batch and leave together as one frame, ahead of data and
//! never held by link flow control, when `ack_batch` of them wait, or at the first frame
//! start once the first has waited `ack_idle_delay` (the link was idle when it came) or
//! `ack_busy_delay` (busy), or earlier if a data frame starting instead would end past
//! `ack_max_delay` (no timer events: the port looks at its ACKs whenever it could start a
//! frame; a frame on the wire is never cut short). On arrival each ACK goes to its
//! channel's hop ([`Simulation::channel_acked`]), a HeadroomACK to that hop's credits.
//!
//! Invariant: an ACK frame's ACKs live in `ChannelFabric::frames` at its arena slot from
//! the moment it is made until it arrives (the emptied vector then goes back to the slot,
//! so a steady run allocates none). An ACK frame crossing to another part of a partitioned
//! run takes its ACKs along in the mail, and they move into the slot it gets there.

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
        let busy = self.ports[gp as usize].busy_until > now;
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
        let port = &self.ports[gp as usize];
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
        let pkt = self.arena.alloc(pk);
        // The frame takes the batch; the port keeps the slot's old (empty) vector.
        let batch = std::mem::take(&mut fc.pending[gp as usize].acks);
        let slot = std::mem::replace(fc.frame_acks(pkt), batch);
        fc.pending[gp as usize].acks = slot;
        fc.stats.ack_frames += 1;
        fc.stats.acks += n as u64;
        fc.stats.ack_bytes += u64::from(pk.size);
        self.ports[gp as usize].ctrl.push_back(&mut self.arena, pkt);
    }

    /// An ACK frame arrived at global port `gp` (an output of the switch it acknowledges).
    pub(super) fn receive_channel_acks(&mut self, gp: u32, pkt: u32) {
        let Slot::Switch(s) = self.slots[self.ports[gp as usize].node as usize] else {
            unreachable!("ACK frames go upstream to switches only")
        };
        let out_local = self.ports[gp as usize].local;
        let Some(fc) = self.channels.as_deref_mut() else {
            self.arena.free(pkt);
            return;
        };
        let mut acks = std::mem::take(&mut fc.frames[pkt as usize]);
        for a in acks.drain(..) {
            let units = u64::from(a.units);
            let Some(fc) = self.channels.as_deref_mut() else {
                break;
            };
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
        // The emptied vector goes back to its slot (no allocation for the next frame), and
        // only then is the slot free: ACK frames sent meanwhile took other slots.
        if let Some(fc) = self.channels.as_deref_mut() {
            fc.frames[pkt as usize] = acks;
        }
        self.arena.free(pkt);
    }
}

impl ChannelFabric {
    /// The ACK frame in arena slot `pkt` leaves for another part: its ACKs are appended to
    /// `mail` (the slot keeps its emptied vector). Returns how many.
    pub(super) fn hand_over_acks(&mut self, pkt: u32, mail: &mut Vec<AckEntry>) -> u32 {
        let Some(acks) = self.frames.get_mut(pkt as usize) else {
            return 0;
        };
        // At most `ack_batch` (u16) ACKs.
        let n = acks.len() as u32;
        mail.append(acks);
        n
    }

    /// An ACK frame from another part took arena slot `pkt`: `acks` are its ACKs.
    pub(super) fn take_over_acks(&mut self, pkt: u32, acks: &[AckEntry]) {
        self.frame_acks(pkt).extend_from_slice(acks);
    }
}
