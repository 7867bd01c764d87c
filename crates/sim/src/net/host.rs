//! Hosts: an RDMA-like NIC with reliable, rate-paced flows.
//!
//! Sender: each active flow is a queue pair sending MTU-sized packets at its congestion
//! control rate (paced: the next packet may start one wire-time at that rate after the
//! previous one). The NIC serves control frames first, then its flows round robin, skipping
//! flows whose priority is paused or whose pacing time has not come. Go-back-N: a NACK or
//! a retransmission timeout rewinds the flow to the first unacknowledged byte.
//!
//! Receiver: accepts in-order data only; acknowledges every `ack_interval` bytes and the last
//! packet; answers a gap with one NACK per expected sequence number; turns CE marks into at
//! most one CNP per flow per `cnp_interval`.
//!
//! A flow finishes when its sender has every byte acknowledged; it then leaves the NIC's
//! active list, so flow state never leaks into the scheduler.
//!
//! `nic_buffer`: the NIC's receive buffer, where one is modelled, and the PFC it sends.

use super::features::Features;
use super::packet::{Kind, Packet};
use super::Simulation;
use crate::engine::Event;
use crate::results::StopReason;
use crate::workload::FlowSpec;
use headroom_mech::cc::{Ack, CongestionControl, Feedback, NotificationPoint, Window};
use headroom_mech::ecn::Mark;
use headroom_mech::fgfc::FgfcSource;
use headroom_mech::flow_control::Gate;
use headroom_mech::int::IntStack;
use headroom_mech::units::{Rate, Time};
use headroom_mech::PRIORITIES;

mod nic_buffer;

/// Bytes of an ACK's headers (Ethernet 14, IPv4 20, ACK 12): with an INT stack, an ACK is
/// at least these plus the stack, as in the ns-3 HPCC simulator.
const ACK_HEADER_BYTES: u64 = 46;

/// One host's NIC.
#[derive(Debug)]
pub struct Host {
    /// Node id.
    pub node: u32,
    /// Global index of the NIC port.
    pub port: u32,
    /// Flows with data to send or acknowledgements to wait for, in round-robin order.
    /// Changed only through [`Host::push_entry`], [`Host::set_entry`] and
    /// [`Host::remove_entry`], which keep `unheld` with it.
    pub active: Vec<NicEntry>,
    /// Per class, the entries of `active` that are not held: a NIC whose classes with such
    /// entries are all paused knows it has nothing to send without a pass over `active`.
    unheld: [u32; PRIORITIES],
    rr: usize,
    /// NIC receive buffer occupancy (bytes) as of `rx_at`.
    rx_bytes: u64,
    rx_at: Time,
    /// Priorities this NIC has paused upstream (bit set).
    rx_paused: u8,
    /// A drain check is pending.
    rx_check: bool,
}

impl Host {
    /// A NIC with no flows.
    pub fn new(node: u32, port: u32) -> Self {
        Host {
            node,
            port,
            active: Vec::new(),
            unheld: [0; PRIORITIES],
            rr: 0,
            rx_bytes: 0,
            rx_at: Time::ZERO,
            rx_paused: 0,
            rx_check: false,
        }
    }
}

/// A flow on its NIC's active list, with the part of its state the NIC's scheduler reads
/// on every pick. Fan-in senders under PFC keep hundreds of flows active each, and a pass
/// reading one flow record per flow missed the cache once per flow; this array is dense.
///
/// Invariant: `held` and `next_avail` are what the flow's record says (`held`: no byte it
/// may send, see [`Flow::held`]); `Simulation::sync_nic` restores it after every change of
/// the flow's `snd_nxt`, `wnd_end` or `next_avail`, and debug builds check it at each pick.
#[derive(Debug, Clone, Copy)]
pub struct NicEntry {
    /// The flow.
    pub flow: u32,
    /// The class its frames leave in ([`Flow::vl`]).
    class: u8,
    held: bool,
    next_avail: Time,
}

impl NicEntry {
    /// The class its frames leave in.
    pub fn class(&self) -> u8 {
        self.class
    }
}

impl Host {
    /// Appends `e` to the active list (the end of the round robin).
    fn push_entry(&mut self, e: NicEntry) {
        self.unheld[usize::from(e.class)] += u32::from(!e.held);
        self.active.push(e);
    }

    /// Replaces the entry in `slot` by `e` (the same flow).
    fn set_entry(&mut self, slot: usize, e: NicEntry) {
        let old = std::mem::replace(&mut self.active[slot], e);
        self.unheld[usize::from(old.class)] -= u32::from(!old.held);
        self.unheld[usize::from(e.class)] += u32::from(!e.held);
    }

    /// Removes the entry in `slot`, keeping the others' order, and returns it.
    fn remove_entry(&mut self, slot: usize) -> NicEntry {
        let old = self.active.remove(slot);
        self.unheld[usize::from(old.class)] -= u32::from(!old.held);
        old
    }

    /// `unheld` counts what `active` holds.
    pub(super) fn check_unheld(&self) -> Result<(), String> {
        let mut counted = [0u32; PRIORITIES];
        for e in self.active.iter().filter(|e| !e.held) {
            counted[usize::from(e.class)] += 1;
        }
        if counted != self.unheld {
            return Err(format!(
                "host {}: flows that may send per class {:?} != counted {counted:?}",
                self.node, self.unheld
            ));
        }
        Ok(())
    }
}

/// The NIC slot (`FlowTable::with_nic_slot`) of a flow that is not on its NIC's active list.
pub(super) const NOT_ACTIVE: u32 = u32::MAX;

/// Sender and receiver state of one flow.
///
/// `repr(C)`, the fields the NIC reads and writes when it sends one of the flow's packets
/// first (one cache line); its pass over the active flows reads [`NicEntry`]s instead.
#[derive(Debug)]
#[repr(C)]
pub struct Flow {
    /// Next byte to send.
    snd_nxt: u64,
    /// Bytes to deliver.
    pub size: u64,
    /// Earliest time the next packet may start (pacing).
    next_avail: Time,
    /// The window's end: the flow may not send at or beyond this byte (`u64::MAX` without
    /// a window). Kept as `snd_una + window` so the scheduler reads one field.
    wnd_end: u64,
    /// Priority: the service level of its frames.
    pub prio: u8,
    /// The class its frames leave the source NIC in: its priority on a PFC link, the VL
    /// the NIC port's SL → VL table gives it on a credit link.
    pub vl: u8,
    /// Flow id.
    pub id: u32,
    /// Source host (index into the host arena).
    pub src_host: u32,
    /// Global index of the source NIC port.
    pub src_port: u32,
    /// Destination node.
    pub dst: u32,
    /// Source node.
    pub src: u32,
    /// Start time.
    pub start: Time,
    /// Source port of the 5-tuple.
    pub sport: u16,
    /// Destination port of the 5-tuple.
    pub dport: u16,
    /// ECMP hash of data packets.
    pub hash: u64,
    /// ECMP hash of ACK/NACK/CNP packets (reverse direction).
    pub rev_hash: u64,
    /// First unacknowledged byte.
    snd_una: u64,
    /// Congestion control.
    pub cc: CongestionControl,
    /// The bound on bytes in flight.
    window: Window,
    /// The NIC's line rate (the variable window's reference).
    line_rate: Rate,
    /// Wire bytes of the last data packet sent (to re-time its gap when the rate changes).
    last_wire: u64,
    /// A timed packet for an RTT sample: the end of its payload (0: none in flight) and
    /// when it was sent.
    probe_end: u64,
    probe_sent: Time,
    /// Deadline of the pending CC timer event, if any.
    cc_timer: Option<Time>,
    /// Deadline of the pending retransmission check.
    rto_at: Option<Time>,
    /// Last time the acknowledged byte count advanced (or the flow started).
    last_progress: Time,
    /// Receiver: next expected byte (the payload delivered in order so far).
    pub(super) rcv_nxt: u64,
    /// Receiver: what goes back to the sender for congestion control.
    np: NotificationPoint,
    /// Receiver: the expected byte a NACK was last sent for.
    nacked: Option<u64>,
    /// When the last ACK arrived covering every byte.
    pub finish: Option<Time>,
    /// Unloaded FCT.
    pub ideal_fct: Time,
    /// Bytes sent again.
    pub retransmitted: u64,
    /// Highest byte ever sent (to count retransmissions).
    high_water: u64,
    /// Fine-grained flow control from its ingress edge: the pause and credit.
    pub(super) fgfc: FgfcSource,
    /// Paused by FGFC with no credit for its next frame.
    pub(super) fgfc_held: bool,
}

impl Flow {
    /// Whether the flow still has bytes it has not sent (since the last go-back).
    pub fn has_unsent_data(&self) -> bool {
        self.snd_nxt < self.size
    }

    /// Payload of the flow's next packet: a full one, or what is left.
    pub(super) fn next_payload(&self, mtu_payload: u64) -> u64 {
        (self.size - self.snd_nxt).min(mtu_payload)
    }

    /// Whether the flow may not send now whatever the time: every byte sent, the window
    /// full (it waits for an ACK, which calls the scheduler again), or paused by FGFC (an
    /// event at the pause's end, or a resume, lets it go).
    fn held(&self) -> bool {
        self.snd_nxt >= self.size || self.snd_nxt >= self.wnd_end || self.fgfc_held
    }

    /// The flow's entry on its NIC's active list.
    fn nic_entry(&self) -> NicEntry {
        NicEntry {
            flow: self.id,
            class: self.vl,
            held: self.held(),
            next_avail: self.next_avail,
        }
    }

    /// State of flow `id` described by `spec`.
    pub fn new(
        id: u32,
        spec: &FlowSpec,
        src_host: u32,
        sport: u16,
        (hash, rev_hash): (u64, u64),
        line_rate: Rate,
    ) -> Self {
        Flow {
            id,
            src_host,
            src_port: 0,
            dst: spec.dst.0,
            src: spec.src.0,
            prio: spec.prio,
            vl: spec.prio,
            size: spec.size,
            start: spec.start,
            sport,
            dport: spec.dport,
            hash,
            rev_hash,
            snd_nxt: 0,
            snd_una: 0,
            next_avail: Time::ZERO,
            wnd_end: u64::MAX,
            cc: CongestionControl::None { line_rate },
            window: Window::NONE,
            line_rate,
            last_wire: 0,
            probe_end: 0,
            probe_sent: Time::ZERO,
            cc_timer: None,
            rto_at: None,
            last_progress: Time::ZERO,
            rcv_nxt: 0,
            np: NotificationPoint::None,
            nacked: None,
            finish: None,
            ideal_fct: Time::ZERO,
            retransmitted: 0,
            high_water: 0,
            fgfc: FgfcSource::default(),
            fgfc_held: false,
        }
    }

    /// Gives the flow its congestion control (sender and receiver halves) and window.
    pub fn set_congestion_control(
        &mut self,
        cc: CongestionControl,
        np: NotificationPoint,
        window: Window,
    ) {
        self.cc = cc;
        self.np = np;
        self.window = window;
        self.refresh_window();
    }

    /// Recomputes the window's end from the acknowledged byte and the current rate.
    fn refresh_window(&mut self) {
        if self.window.bytes == 0 {
            return; // no window: `wnd_end` stays `u64::MAX`
        }
        self.wnd_end = match self.window.limit(self.cc.rate(), self.line_rate) {
            Some(w) => self.snd_una.saturating_add(w),
            None => u64::MAX,
        };
    }
}

impl Simulation {
    /// Flow `f` starts: it joins its NIC's active list.
    pub(super) fn start_flow(&mut self, f: u32) {
        let fl = &mut self.flows[f];
        fl.next_avail = self.now;
        fl.last_progress = self.now;
        let h = fl.src_host as usize;
        let entry = fl.nic_entry();
        *self.flows.nic_slot_mut(f) = self.hosts[h].active.len() as u32;
        self.hosts[h].push_entry(entry);
        let port = self.hosts[h].port;
        self.try_send(port);
    }

    /// The NIC of host `h` picks its next data packet, or schedules a wake-up when one will
    /// be allowed.
    pub(super) fn host_next_packet<F: Features>(&mut self, h: u32) -> Option<u32> {
        let now = self.now;
        let host = &self.hosts[h as usize];
        let port = host.port;
        let n = host.active.len();
        let mut wake = Time::MAX;
        let pacing = self.cfg.host.pacing;
        // On a PFC link a class's gate does not depend on the frame: when every class with
        // a flow that may send is paused, nothing can go, and the pass below would only
        // gather the pauses' ends, one per class.
        if self.ports[port].fc.pfc().is_some() {
            let mut open = false;
            for class in 0..PRIORITIES as u8 {
                if host.unheld[usize::from(class)] == 0 {
                    continue;
                }
                match self.ports[port].fc.gate(now, class, || 0) {
                    Gate::Open => {
                        open = true;
                        break;
                    }
                    Gate::Until(t) => wake = wake.min(t),
                    Gate::UntilSignal => {}
                }
            }
            if !open {
                if wake < Time::MAX {
                    self.schedule_wake(port, wake);
                }
                return None;
            }
            wake = Time::MAX;
        }
        for k in 0..n {
            // `rr < n` and `k < n`: one subtraction instead of a division, except in the
            // (impossible) case of a stale pointer.
            let i = match self.hosts[h as usize].rr + k {
                i if i < n => i,
                i if i < 2 * n => i - n,
                i => i % n,
            };
            let e = self.hosts[h as usize].active[i];
            debug_assert_eq!(
                (e.held, e.next_avail),
                {
                    let fl = &self.flows[e.flow];
                    (fl.held(), fl.next_avail)
                },
                "NIC entry of flow {} out of date",
                e.flow
            );
            if e.held {
                continue;
            }
            let (flows, hc) = (&self.flows, &self.cfg.host);
            let frame_bytes = || hc.data_frame_bytes(flows[e.flow].next_payload(hc.mtu_payload));
            match self.ports[port].fc.gate(now, e.class, frame_bytes) {
                Gate::Open => {}
                Gate::Until(t) => {
                    wake = wake.min(t);
                    continue;
                }
                Gate::UntilSignal => continue,
            }
            if pacing && e.next_avail > now {
                wake = wake.min(e.next_avail);
                continue;
            }
            let f = e.flow as usize;
            self.hosts[h as usize].rr = if i + 1 < n { i + 1 } else { 0 };
            let pkt = self.make_data_packet(f as u32);
            let size = u64::from(self.arena.get(pkt).size);
            self.charge_sent::<F>(port, e.class, size);
            return Some(pkt);
        }
        if wake < Time::MAX {
            self.schedule_wake(port, wake);
        }
        None
    }

    fn make_data_packet(&mut self, f: u32) -> u32 {
        let now = self.now;
        let hc = &self.cfg.host;
        let overhead = self.cfg.link.frame_overhead;
        let fl = &mut self.flows[f];
        let payload = fl.next_payload(hc.mtu_payload);
        let mut pk = Packet::new(Kind::Data);
        pk.prio = fl.vl;
        pk.sl = fl.prio;
        pk.flow = f;
        pk.seq = fl.snd_nxt;
        pk.payload = payload as u32;
        pk.size = hc.data_frame_bytes(payload) as u32;
        pk.src = fl.src;
        pk.dst = fl.dst;
        pk.hash = fl.hash;
        if fl.snd_nxt < fl.high_water {
            fl.retransmitted += payload;
        }
        fl.snd_nxt += payload;
        fl.high_water = fl.high_water.max(fl.snd_nxt);
        if fl.probe_end == 0 && fl.cc.wants_rtt() {
            fl.probe_end = fl.snd_nxt;
            fl.probe_sent = now;
        }
        let wire = u64::from(pk.size) + overhead;
        fl.last_wire = wire;
        fl.next_avail = now + fl.cc.rate().serialization(wire);
        fl.cc.on_bytes_sent(now, wire);
        let fgfc_paused = fl.fgfc.paused_until(now).is_some();
        self.ledger.on_sent(payload);
        if fgfc_paused {
            self.fgfc_spent(f, payload);
        }
        self.sync_nic(f);
        self.arm_cc_timer(f);
        self.arm_rto(f);
        self.arena.alloc(pk)
    }

    /// Makes sure a CC timer event is pending for the flow's earliest CC deadline.
    fn arm_cc_timer(&mut self, f: u32) {
        let fl = &mut self.flows[f];
        // Only timers that can change the rate need an event: the others (DCQCN's alpha
        // updates, every microsecond with the HPCC parameters) are replayed by the next CNP.
        if let Some(t) = fl.cc.poll_rate_timeout() {
            let t = t.max(self.now);
            if fl.cc_timer.is_none_or(|pending| t < pending) {
                fl.cc_timer = Some(t);
                self.schedule(t, Event::CcTimer { flow: f });
            }
        }
    }

    /// The CC timer of flow `f` fired.
    pub(super) fn cc_timer(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f];
        if fl.cc_timer != Some(now) {
            return; // superseded by an earlier deadline that already ran
        }
        fl.cc_timer = None;
        if fl.finish.is_some() {
            return;
        }
        fl.cc.handle_timeout(now);
        if fl.window.bytes != 0 {
            // A rate raised by the timer widens a rate-dependent window: a flow it held may
            // send again, and its NIC must see that.
            fl.refresh_window();
            let port = self.hosts[fl.src_host as usize].port;
            self.sync_nic(f);
            self.try_send(port);
        }
        self.arm_cc_timer(f);
    }

    fn arm_rto(&mut self, f: u32) {
        let rto = self.cfg.host.rto;
        let fl = &mut self.flows[f];
        if fl.rto_at.is_none() && fl.finish.is_none() {
            let t = self.now + rto;
            fl.rto_at = Some(t);
            self.schedule(t, Event::Rto { flow: f });
        }
    }

    /// The retransmission check of flow `f` fired: go back if nothing was acknowledged for
    /// a whole timeout while bytes are outstanding.
    pub(super) fn rto(&mut self, f: u32) {
        let now = self.now;
        let rto = self.cfg.host.rto;
        let fl = &mut self.flows[f];
        fl.rto_at = None;
        if fl.finish.is_some() {
            return;
        }
        if fl.snd_una < fl.snd_nxt && now - fl.last_progress >= rto {
            fl.snd_nxt = fl.snd_una;
            fl.probe_end = 0;
            fl.last_progress = now;
            let port = self.hosts[fl.src_host as usize].port;
            self.sync_nic(f);
            self.try_send(port);
        }
        // Re-arm only while bytes are outstanding; a flow with nothing in flight (paused,
        // paced, or all acknowledged) is re-armed by its next transmission.
        let fl = &self.flows[f];
        if fl.snd_una < fl.snd_nxt {
            let next = (fl.last_progress + rto).max(now + Time(1));
            self.flows[f].rto_at = Some(next);
            self.schedule(next, Event::Rto { flow: f });
        }
    }

    /// Queues a control frame (ACK/NACK/CNP) of flow `f` from its receiver.
    fn send_ctrl(
        &mut self,
        h: u32,
        f: u32,
        kind: Kind,
        seq: u64,
        mark: Mark,
        int: Option<&IntStack>,
    ) {
        let hc = &self.cfg.host;
        let fl = &self.flows[f];
        let mut pk = Packet::new(kind);
        pk.sl = hc.ack_prio;
        pk.prio = self.vl_of(self.hosts[h as usize].port, hc.ack_prio);
        pk.flow = f;
        pk.seq = seq;
        pk.mark = mark;
        pk.size = if kind == Kind::Cnp {
            hc.cnp_bytes
        } else {
            hc.ack_bytes
        } as u32;
        pk.src = fl.dst;
        pk.dst = fl.src;
        pk.hash = fl.rev_hash;
        if int.is_some() {
            // The ACK carries the data packet's hop records back.
            pk.size = pk
                .size
                .max((ACK_HEADER_BYTES + headroom_mech::int::HEADER_BYTES) as u32);
        }
        let idx = self.arena.alloc(pk);
        if let (Some(from), Some(to)) = (int, self.arena.int_mut(idx)) {
            *to = *from;
        }
        let port = self.hosts[h as usize].port;
        self.ports[port].ctrl.push_back(&mut self.arena, idx);
        self.try_send(port);
    }

    /// A frame arrived at host `h`.
    pub(super) fn host_receive(&mut self, h: u32, pkt: u32) {
        let pk = *self.arena.get(pkt);
        // Copied out: the slot is reused by the reply.
        let int = self.arena.int(pkt).copied();
        self.arena.free(pkt);
        let f = pk.flow;
        match pk.kind {
            Kind::Data => {
                if !self.nic_admit(h, &pk) {
                    self.ledger.on_dropped(u64::from(pk.payload));
                    return;
                }
                self.ledger.on_delivered(u64::from(pk.payload));
                self.receive_data(h, f, &pk, int.as_ref());
            }
            Kind::Ack => self.receive_ack(f, &pk, false, int.as_ref()),
            Kind::Nack => self.receive_ack(f, &pk, true, int.as_ref()),
            Kind::Cnp => {
                let cnp = Feedback::Cnp {
                    ce: pk.mark == Mark::Ce,
                    ue: pk.mark == Mark::Ue,
                };
                self.flows[f].cc.on_feedback(self.now, &cnp);
                self.arm_cc_timer(f);
            }
            Kind::Pfc | Kind::Fcp | Kind::ChannelAck | Kind::Fgfc | Kind::Free => {
                unreachable!("link-control frames are handled by the port")
            }
        }
    }

    fn receive_data(&mut self, h: u32, f: u32, pk: &Packet, int: Option<&IntStack>) {
        let now = self.now;
        let ack_interval = self.cfg.host.ack_interval.max(1);
        let fl = &mut self.flows[f];
        let notify = fl.np.on_data(now, pk.mark);
        let mut reply = None;
        if pk.seq == fl.rcv_nxt {
            let before = fl.rcv_nxt;
            fl.rcv_nxt += u64::from(pk.payload);
            fl.nacked = None;
            if fl.rcv_nxt >= fl.size || fl.rcv_nxt / ack_interval > before / ack_interval {
                reply = Some((Kind::Ack, fl.rcv_nxt));
            }
        } else if pk.seq > fl.rcv_nxt {
            if fl.nacked != Some(fl.rcv_nxt) {
                fl.nacked = Some(fl.rcv_nxt);
                reply = Some((Kind::Nack, fl.rcv_nxt));
            }
        } else {
            // A duplicate from a go-back-N rewind: re-acknowledge so the sender catches up.
            reply = Some((Kind::Ack, fl.rcv_nxt));
        }
        let rcv_host = h;
        if notify.cnp != Mark::None {
            self.send_ctrl(rcv_host, f, Kind::Cnp, 0, notify.cnp, None);
        }
        if let Some(t) = notify.poll_at {
            self.schedule(t, Event::CnpPoll { flow: f });
        }
        if let Some((kind, seq)) = reply {
            self.send_ctrl(rcv_host, f, kind, seq, notify.echo, int);
        }
    }

    /// The receiver of flow `f`, on host `h`, looks at the marks it saw since its last
    /// look and reports them in a CNP.
    pub(super) fn cnp_poll(&mut self, h: u32, f: u32) {
        let marks = self.flows[f].np.on_poll();
        if marks != Mark::None {
            self.send_ctrl(h, f, Kind::Cnp, 0, marks, None);
        }
    }

    /// An ACK or NACK of flow `f` arrived (`int`: the hop records it carries back). The
    /// acknowledged byte moves first (a NACK rewinds to it), then congestion control sees
    /// the feedback, as in the ns-3 HPCC simulator.
    fn receive_ack(&mut self, f: u32, pk: &Packet, nack: bool, int: Option<&IntStack>) {
        let now = self.now;
        let seq = pk.seq;
        let fl = &mut self.flows[f];
        if fl.finish.is_some() {
            return;
        }
        let snd_nxt_before = fl.snd_nxt;
        if seq > fl.snd_una {
            fl.snd_una = seq;
            fl.last_progress = now;
            fl.snd_nxt = fl.snd_nxt.max(seq);
        }
        if nack && seq < fl.snd_nxt {
            fl.snd_nxt = seq;
            // The timed packet goes again: its sample would include the go-back.
            fl.probe_end = 0;
        }
        if fl.snd_una >= fl.size {
            fl.finish = Some(now);
            let host = fl.src_host as usize;
            let slot = std::mem::replace(self.flows.nic_slot_mut(f), NOT_ACTIVE);
            // A flow is acknowledged only after it started, and finishes once (`finish`).
            debug_assert_ne!(slot, NOT_ACTIVE, "flow {f} finished without being active");
            let i = slot as usize;
            // The order is the round robin's: keep it (no swap_remove).
            self.hosts[host].remove_entry(i);
            let active = &self.hosts[host].active;
            for (j, e) in active.iter().enumerate().skip(i) {
                *self.flows.nic_slot_mut(e.flow) = j as u32;
            }
            let len = active.len();
            let rr = &mut self.hosts[host].rr;
            if *rr > i {
                *rr -= 1;
            }
            if *rr >= len {
                *rr = 0;
            }
            self.finished_flows += 1;
            if self.finished_flows == self.flows_to_finish && !self.channels_drain_first() {
                // In a part of a partitioned run: this part's flows are done (the driver
                // decides whether the run is).
                self.stop = Some(StopReason::AllFlowsDone);
                self.done_at = Some((now, self.cur_key));
            }
            return;
        }
        if !fl.cc.reads_acks() && fl.window.bytes == 0 {
            // Transport only (DCQCN, no congestion control): nothing else to update.
            // Only `snd_nxt` can have moved here (no window, no re-timing).
            let port = self.hosts[fl.src_host as usize].port;
            if fl.snd_nxt != snd_nxt_before {
                self.sync_nic(f);
            }
            if nack {
                self.try_send(port);
            }
            return;
        }
        let rtt = (fl.probe_end != 0 && seq >= fl.probe_end).then(|| {
            fl.probe_end = 0;
            now - fl.probe_sent
        });
        let retimes = fl.cc.retimes_departures();
        let rate_before = if retimes { fl.cc.rate() } else { Rate(0) };
        let ack = Ack {
            acked: seq,
            snd_nxt: fl.snd_nxt,
            rtt,
            echo: pk.mark,
            int,
        };
        fl.cc.on_feedback(now, &Feedback::Ack(ack));
        let mut wake = nack;
        if retimes {
            let rate = fl.cc.rate();
            if rate != rate_before {
                let (old, new) = (
                    rate_before.serialization(fl.last_wire),
                    rate.serialization(fl.last_wire),
                );
                fl.next_avail = if new >= old {
                    fl.next_avail + (new - old)
                } else {
                    fl.next_avail.saturating_sub(old - new)
                };
                wake = true;
            }
        }
        if fl.window.bytes != 0 {
            fl.refresh_window();
            wake = true;
        }
        let port = self.hosts[fl.src_host as usize].port;
        self.sync_nic(f);
        if wake {
            self.try_send(port);
        }
    }

    /// Copies what the NIC's scheduler reads of flow `f` into its active-list entry (see
    /// [`NicEntry`]); nothing for a flow that is not active.
    pub(super) fn sync_nic(&mut self, f: u32) {
        let (fl, slot) = self.flows.with_nic_slot(f);
        if slot != NOT_ACTIVE {
            self.hosts[fl.src_host as usize].set_entry(slot as usize, fl.nic_entry());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(flow: u32, class: u8, held: bool) -> NicEntry {
        NicEntry {
            flow,
            class,
            held,
            next_avail: Time::ZERO,
        }
    }

    #[test]
    fn unheld_counts_follow_every_change_of_the_active_list() {
        let mut h = Host::new(0, 0);
        h.push_entry(entry(0, 3, false));
        h.push_entry(entry(1, 3, true));
        h.push_entry(entry(2, 5, false));
        assert_eq!((h.unheld[3], h.unheld[5]), (1, 1));
        h.set_entry(1, entry(1, 3, false));
        assert_eq!(h.unheld[3], 2);
        h.set_entry(0, entry(0, 3, true));
        assert_eq!(h.unheld[3], 1);
        assert_eq!(h.remove_entry(2).flow, 2);
        assert_eq!(h.unheld, [0, 0, 0, 1, 0, 0, 0, 0]);
        h.check_unheld().expect("counts match");
        assert_eq!(h.active.iter().map(|e| e.flow).collect::<Vec<_>>(), [0, 1]);
        // A list changed behind the methods' back is caught.
        h.active[1].held = true;
        assert!(h.check_unheld().is_err());
    }
}
