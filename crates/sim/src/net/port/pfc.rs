//! PFC on a port: the frames a switch's pause decisions become, their refresh timers, and
//! what a received PAUSE or RESUME does to the port's pause timers.
//!
//! A PG's (or a whole port's) XOFF and XON decisions come from the MMU; the port's pause
//! generators ([`headroom_mech::pfc::PauseGenerator`]) turn them into frames and refresh
//! timers. Invariant: a port holds at most one PFC frame per class (and one port-level
//! frame) in its control queue; a later decision for the same class rewrites the waiting
//! frame instead of queueing another (`Port::pfc_pending`, checked by
//! `Port::check_pfc_queue`). A received frame sets the class's pause timer after the
//! transmitter's response time; a RESUME, or a pause's end, makes the port look again for
//! a frame to send.

use super::{Port, NO_FRAME};
use crate::engine::Event;
use crate::net::packet::{Arena, Kind, Packet};
use crate::net::{Simulation, Slot};
use crate::results::PfcRecord;
use headroom_mech::pfc::{ALL_CLASSES, PFC_FRAME_BYTES};
use headroom_mech::units::{Rate, Time};
use headroom_mech::PRIORITIES;

/// `Packet::flow` of a PFC frame that does not start a pause episode with a culprit.
const NO_CULPRIT: u32 = u32::MAX;

/// The `prio` of a `PfcRefresh` event that refreshes a port-level pause.
const PORT_LEVEL: u8 = PRIORITIES as u8;

/// The class a PFC frame pauses or resumes (`None`: every class, a port-level frame).
pub(in crate::net) fn pfc_class(pk: &Packet) -> Option<u8> {
    (pk.payload != u32::from(ALL_CLASSES)).then_some(pk.prio)
}

impl Port {
    /// `pkt`, a PFC frame for `class` (`None`: port-level), left the control queue (sent,
    /// or dropped with its link): the next decision for that class queues a new frame.
    pub(in crate::net) fn pfc_dequeued(&mut self, class: Option<u8>) {
        self.pfc_pending[class.map_or(PRIORITIES, usize::from)] = NO_FRAME;
    }

    /// The control queue holds at most one PFC frame per class (and one port-level
    /// frame), each the one `pfc_pending` names.
    pub(in crate::net) fn check_pfc_queue(&self, arena: &Arena) -> Result<(), String> {
        let mut seen = [NO_FRAME; PRIORITIES + 1];
        for pkt in self.ctrl.iter(arena) {
            let pk = arena.get(pkt);
            if pk.kind != Kind::Pfc {
                continue;
            }
            let slot = pfc_class(pk).map_or(PRIORITIES, usize::from);
            if seen[slot] != NO_FRAME {
                return Err(format!(
                    "node {} port {}: two PFC frames of class slot {slot} wait to be sent",
                    self.node, self.local
                ));
            }
            seen[slot] = pkt;
        }
        if seen != self.pfc_pending {
            return Err(format!(
                "node {} port {}: waiting PFC frames {seen:?} != recorded {:?}",
                self.node, self.local, self.pfc_pending
            ));
        }
        Ok(())
    }
}

impl Simulation {
    /// Response time of a transmitter at `rate`: the configured response bytes at that rate.
    fn response_time(&self, rate: Rate) -> Time {
        rate.serialization(self.cfg.switch.response_bytes)
    }

    /// Queues a PFC frame on `port` (towards the upstream peer): for class `Some(prio)`, or
    /// for every class (`None`, a port-level frame), with timer `quanta` (0 = RESUME).
    ///
    /// `culprit`: the frame starts a pause episode blamed on that egress port of this switch
    /// (see `victim`); the upstream end judges, on receipt, whether it stops other traffic.
    pub(in crate::net) fn send_pfc(
        &mut self,
        port: u32,
        class: Option<u8>,
        quanta: u16,
        culprit: Option<u16>,
    ) {
        let p = &mut self.ports[port];
        match (class, quanta) {
            (Some(c), 0) => p.resume_sent[usize::from(c)] += 1,
            (Some(c), _) => p.pause_sent[usize::from(c)] += 1,
            (None, 0) => p.port_resume_sent += 1,
            (None, _) => p.port_pause_sent += 1,
        }
        if !self.cfg.record.omit_pfc_log {
            let is_switch = matches!(self.slots[p.node as usize], Slot::Switch(_));
            self.pfc_sent.push(PfcRecord {
                time: self.now,
                node: p.node,
                is_switch,
                port: p.local,
                prio: class.unwrap_or(0),
                port_level: class.is_none(),
                quanta,
            });
        }
        let slot = class.map_or(PRIORITIES, usize::from);
        let waiting = p.pfc_pending[slot];
        if waiting != NO_FRAME {
            p.pfc_merged += 1;
            // The frame not sent yet carries this decision instead; a refresh keeps the
            // episode's culprit, a RESUME ends the episode before it reached the peer.
            let pk = self.arena.get_mut(waiting);
            pk.seq = u64::from(quanta);
            pk.flow = match (quanta, culprit) {
                (0, _) => NO_CULPRIT,
                (_, Some(c)) => u32::from(c),
                (_, None) => pk.flow,
            };
            return;
        }
        let mut pk = Packet::new(Kind::Pfc);
        pk.flow = culprit.map_or(NO_CULPRIT, u32::from);
        pk.prio = class.unwrap_or(0);
        pk.payload = class.map_or(u32::from(ALL_CLASSES), |c| 1 << c);
        pk.seq = u64::from(quanta);
        pk.size = PFC_FRAME_BYTES as u32;
        let idx = self.arena.alloc(pk);
        let p = &mut self.ports[port];
        p.pfc_pending[slot] = idx;
        p.ctrl.push_back(&mut self.arena, idx);
        // Not `try_send` directly: this may run in the middle of a dequeue on this very port
        // (a release that resumes a PG of the same port); a wake-up at `now` runs after it.
        self.schedule_wake(port, self.now);
    }

    /// Turns an XOFF/XON decision of the PG (`port`, `Some(prio)`), or of the whole port
    /// (`None`), into frames and refresh timers.
    pub(in crate::net) fn pfc_transition(&mut self, port: u32, class: Option<u8>, pause: bool) {
        // A credit port never pauses: its VL buffers are reserved and its credits hold the
        // peer back.
        if self.credit_links && self.is_credit_port(port) {
            return;
        }
        let cfg = self.cfg.switch.pfc;
        let now = self.now;
        let p = &mut self.ports[port];
        let g = match class {
            Some(c) => &mut p.gens[usize::from(c)],
            None => &mut p.port_gen,
        };
        let frame = if pause {
            g.on_xoff(now, &cfg, p.rate)
        } else {
            g.on_xon(now, &cfg)
        };
        let refresh = g.poll_timeout();
        if let Some(f) = frame {
            let culprit = if pause {
                self.record_pause_episode(port, class)
            } else {
                None
            };
            self.send_pfc(port, class, f.quanta, culprit);
        }
        if let (true, Some(t)) = (pause, refresh) {
            self.schedule_refresh(port, class.unwrap_or(PORT_LEVEL), t);
        }
    }

    /// Has the refresh timer of (`port`, `prio`) fire at `t`, unless a refresh event is
    /// pending no later (refresh times only grow: it reschedules itself when it fires).
    fn schedule_refresh(&mut self, port: u32, prio: u8, t: Time) {
        let pending = &mut self.ports[port].refresh_pending[usize::from(prio)];
        if *pending <= t {
            return;
        }
        *pending = t;
        self.schedule(t, Event::PfcRefresh { port, prio });
    }

    /// A refresh timer of the PG (`port`, `prio`) fired (`prio == PORT_LEVEL`: the port's).
    pub(in crate::net) fn pfc_refresh(&mut self, port: u32, prio: u8) {
        let cfg = self.cfg.switch.pfc;
        let now = self.now;
        let class = (prio != PORT_LEVEL).then_some(prio);
        let p = &mut self.ports[port];
        p.refresh_pending[usize::from(prio)] = Time::MAX;
        let g = match class {
            Some(c) => &mut p.gens[usize::from(c)],
            None => &mut p.port_gen,
        };
        match g.poll_timeout() {
            Some(t) if t == now => {}
            // An XON and a later XOFF moved the refresh: this event stands in for it.
            Some(t) if t > now => return self.schedule_refresh(port, prio, t),
            _ => return, // an XON ended the pause
        }
        let frame = g.handle_timeout(now, &cfg, p.rate);
        let next = g.poll_timeout();
        if let Some(f) = frame {
            self.send_pfc(port, class, f.quanta, None);
        }
        if let Some(t) = next {
            self.schedule_refresh(port, prio, t);
        }
    }

    /// A PFC frame arrived at `port`: set its pause timer (a frame enabling every class is
    /// a port-level pause).
    pub(in crate::net) fn receive_pfc(&mut self, port: u32, pkt: u32) {
        let pk = *self.arena.get(pkt);
        self.arena.free(pkt);
        let quanta = u16::try_from(pk.seq).unwrap_or(u16::MAX);
        let rate = self.ports[port].rate;
        let response = self.response_time(rate);
        let now = self.now;
        let port_level = pfc_class(&pk).is_none();
        // A queue the PFC watchdog took out of PFC ignores its class's frames.
        let ignored = !port_level
            && !self.watchdogs.is_empty()
            && self.watchdog_pause_frame(port, pk.prio, quanta);
        // The frame replaces the timer's record of an episode that ended: hand the queues'
        // congestion points their pause history first.
        let classes = if port_level {
            ALL_CLASSES
        } else {
            1 << pk.prio
        };
        self.report_pauses(port, classes);
        let p = &mut self.ports[port];
        let Some(timers) = p.fc.pfc_mut() else {
            debug_assert!(false, "a PFC frame arrived on a credit link");
            return;
        };
        if port_level {
            timers.on_port_frame(now, quanta, rate, response);
        } else if !ignored {
            timers.on_frame(now, pk.prio, quanta, rate, response);
        }
        if !self.cfg.record.omit_pfc_log {
            let is_switch = matches!(self.slots[p.node as usize], Slot::Switch(_));
            self.pfc_received.push(PfcRecord {
                time: now,
                node: p.node,
                is_switch,
                port: p.local,
                prio: pk.prio,
                port_level,
                quanta,
            });
        }
        if let Ok(culprit) = u16::try_from(pk.flow) {
            let class = (!port_level).then_some(pk.prio);
            self.judge_pause_episode(port, class, culprit);
        }
        let timers = self.ports[port].fc.pfc();
        if quanta == 0 {
            self.try_send(port);
        } else if let Some((t, timers)) =
            timers.and_then(|p| Some((p.next_change(now, pk.prio)?, p)))
        {
            // The pause begins after the response time; frames may start until then, and
            // the port must look again when the pause ends.
            let end = timers.next_change(t, pk.prio).unwrap_or(t);
            self.schedule_wake(port, end);
        }
    }
}
