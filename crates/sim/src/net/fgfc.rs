//! The driver of fine-grained flow control ([`headroom_mech::fgfc`]) on a flow-channel
//! fabric: ingress edge switches pause single sources of their hosts.
//!
//! - At an ingress edge (a switch port from a host), each channel's queue is measured in
//!   its progress counters (`queue_extent` units of `unit` bytes) whenever one of its
//!   frames arrives or leaves; [`FgfcEdges`] keeps the state of the channels under FGFC.
//!   The frames it decides go to the host ahead of data and are never held by link flow
//!   control, as PFC frames are. An FGFC frame names the flow of the frame that set it
//!   off and its destination: with `match = "flow"` the NIC holds that flow, with
//!   `match = "destination"` every flow of the host to that destination (what the channel
//!   carries).
//! - At the NIC, a paused flow sends at most its credit and is then held (`Flow::held`)
//!   until a resume comes or an `FgfcResume` event at the pause's end lets it go.
//!
//! Invariants (checked by `Simulation::check_invariants` through `check_channels`): the
//! edge keeps state only for channels in use (a channel's queue empties before it is
//! released, and an empty queue ends FGFC); a flow held by FGFC is paused, so an event at
//! the pause's end is pending.

use super::flow_channel::ChannelKey as EdgeChannel;
use super::packet::{Kind, Packet};
use super::{Simulation, Slot};
use crate::config::EdgeMatch;
use crate::engine::Event;
use headroom_mech::endpoint_congestion::Watermarks;
use headroom_mech::fgfc::{FgfcConfig, FgfcEdge, FgfcFrame};
use headroom_mech::pfc::PFC_FRAME_BYTES;
use headroom_mech::units::Time;
use rustc_hash::FxHashMap;

/// The ingress edges' FGFC state.
#[derive(Debug)]
pub(super) struct FgfcEdges {
    pub(super) cfg: FgfcConfig,
    /// The channels under FGFC (the others are not under it).
    on: FxHashMap<EdgeChannel, FgfcEdge>,
    /// Pause frames sent (refreshes included).
    pub(super) pauses: u64,
    /// Resume frames sent.
    pub(super) resumes: u64,
}

impl FgfcEdges {
    pub(super) fn new(cfg: FgfcConfig) -> Self {
        FgfcEdges {
            cfg,
            on: FxHashMap::default(),
            pauses: 0,
            resumes: 0,
        }
    }

    /// A frame of `channel` arrived at `now`, leaving `queued` bytes of it, under the
    /// watermarks `marks` of its congestion (`None`: FGFC's own): the frame to send its
    /// source, if any.
    pub(super) fn arrived(
        &mut self,
        channel: EdgeChannel,
        now: Time,
        queued: u64,
        marks: Option<Watermarks>,
    ) -> Option<FgfcFrame> {
        let mut edge = self.on.get(&channel).copied().unwrap_or_default();
        let frame = edge.arrived(&self.cfg.under(marks), now, queued)?;
        self.on.insert(channel, edge);
        self.pauses += 1;
        Some(frame)
    }

    /// A frame of `channel` left, leaving `queued` bytes of it, under the watermarks
    /// `marks`: the resume to send its source, if the queue fell below the drop watermark.
    pub(super) fn left(
        &mut self,
        channel: EdgeChannel,
        queued: u64,
        marks: Option<Watermarks>,
    ) -> Option<FgfcFrame> {
        let edge = self.on.get_mut(&channel)?;
        let frame = edge.left(&self.cfg.under(marks), queued)?;
        self.on.remove(&channel);
        self.resumes += 1;
        Some(frame)
    }

    /// The channels under FGFC.
    pub(super) fn channels(&self) -> impl Iterator<Item = EdgeChannel> + '_ {
        self.on.keys().copied()
    }
}

impl Simulation {
    /// Queues an FGFC frame on global port `gp` (towards a host) for the flow `flow` to
    /// `dst` (the frame that set it off).
    pub(super) fn send_fgfc(&mut self, gp: u32, (flow, dst): (u32, u32), frame: FgfcFrame) {
        let mut pk = Packet::new(Kind::Fgfc);
        pk.flow = flow;
        pk.dst = dst;
        pk.seq = frame.pause.as_ps();
        pk.hash = frame.credit;
        pk.size = PFC_FRAME_BYTES as u32;
        let pkt = self.arena.alloc(pk);
        self.ports[gp].ctrl.push_back(&mut self.arena, pkt);
        // Not `try_send`: this runs while the switch takes in a frame or sends one.
        self.schedule_wake(gp, self.now);
    }

    /// An FGFC frame arrived at global port `port` (a host's NIC).
    pub(super) fn receive_fgfc(&mut self, port: u32, pkt: u32) {
        let pk = *self.arena.get(pkt);
        self.arena.free(pkt);
        let Slot::Host(h) = self.slots[self.ports[port].node as usize] else {
            unreachable!("FGFC frames go to hosts only")
        };
        let frame = FgfcFrame {
            pause: Time(pk.seq),
            credit: pk.hash,
        };
        let shared = self
            .channels
            .as_deref()
            .filter(|fc| fc.edge_match() != EdgeMatch::Flow);
        let mut resumed = false;
        if let Some(fc) = shared {
            // Every flow of the host on the frame's flow's channel.
            let key_of = |f: u32| {
                let fl = &self.flows[f];
                fc.flow_key(f, fl.dst, fl.prio, &self.cfg.flow_apps)
            };
            let key = key_of(pk.flow);
            let flows: Vec<u32> = self.hosts[h as usize]
                .active
                .iter()
                .map(|e| e.flow)
                .filter(|&f| key_of(f) == key)
                .collect();
            for f in flows {
                resumed |= self.fgfc_apply(f, frame);
            }
        } else {
            resumed = self.fgfc_apply(pk.flow, frame);
        }
        if resumed {
            self.try_send(port);
        }
    }

    /// Flow `f`'s source takes `frame`. Returns whether the flow may send again.
    fn fgfc_apply(&mut self, f: u32, frame: FgfcFrame) -> bool {
        let now = self.now;
        let mtu = self.cfg.host.mtu_payload;
        let fl = &mut self.flows[f];
        let was_held = fl.fgfc_held;
        fl.fgfc_held = match fl.fgfc.receive(now, frame) {
            None => false,
            Some(_) => !fl.fgfc.may_send(now, fl.next_payload(mtu)),
        };
        let held = fl.fgfc_held;
        if held {
            self.fgfc_hold_until_resume(f);
        }
        if held != was_held {
            self.sync_nic(f);
        }
        was_held && !held
    }

    /// Flow `f`, paused by FGFC, sent a frame of `payload` bytes: its credit pays for it,
    /// and it is held if what is left does not pay for the next.
    pub(super) fn fgfc_spent(&mut self, f: u32, payload: u64) {
        let now = self.now;
        let mtu = self.cfg.host.mtu_payload;
        let fl = &mut self.flows[f];
        fl.fgfc.sent(now, payload);
        if fl.has_unsent_data() && !fl.fgfc.may_send(now, fl.next_payload(mtu)) {
            fl.fgfc_held = true;
            self.fgfc_hold_until_resume(f);
        }
    }

    /// Schedules flow `f`'s release at its pause's end.
    fn fgfc_hold_until_resume(&mut self, f: u32) {
        let now = self.now;
        if let Some(until) = self.flows[f].fgfc.paused_until(now) {
            self.schedule(until, Event::FgfcResume { flow: f });
        }
    }

    /// Flow `f`'s pause may have run out (a later FGFC frame may have extended it: then
    /// another event is pending).
    pub(super) fn fgfc_resume(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f];
        if !fl.fgfc_held || fl.fgfc.paused_until(now).is_some() {
            return;
        }
        fl.fgfc_held = false;
        let port = fl.src_port;
        self.sync_nic(f);
        self.try_send(port);
    }

    /// Checks the invariants of the module documentation.
    pub(super) fn check_fgfc(&self) -> Result<(), String> {
        let now = self.now;
        for fl in self.flows.iter() {
            // At the pause's end its event may still be pending.
            if fl.fgfc_held && fl.fgfc.until() < now {
                return Err(format!(
                    "flow {}: held by FGFC after its pause ended",
                    fl.id
                ));
            }
        }
        let Some(edges) = self.channels.as_deref().and_then(|fc| fc.fgfc.as_ref()) else {
            return Ok(());
        };
        for (s, in_port, id) in edges.channels() {
            if !self.channel_in_use(s, (in_port, id)) {
                return Err(format!(
                    "switch {}: FGFC state for channel {id} of port {in_port}, not in use",
                    self.switches[s as usize].node
                ));
            }
        }
        Ok(())
    }
}
