//! Arbitration within a switch's egress class: FIFO, or sub-queues per input port, per flow
//! or per application and flow, served round-robin (the flow-channel patent's input-queued
//! switch, Fig. 6A, and its ingress arbitration between applications).
//!
//! A FIFO class keeps its packets in its port's queue ([`super::port::EgressQueue`]). A class
//! with sub-queues keeps at most one packet there: the one its arbiter granted, which the
//! port's scheduler (strict priority, DWRR) sees as the class's head exactly as it sees a
//! FIFO's. The others wait here in one sub-queue per key (the input port a packet came in
//! on, or its flow) and the arbiter ([`headroom_mech::inq_arbiter`]) grants the next when
//! the staged packet leaves. Port and flow arbitration put every key in application group
//! (APPG) 0; application arbitration puts a flow that came in from a host in its
//! application's group and one that came from another switch in group 0, as the patent
//! maps a fabric port's traffic, so that applications share an output before flows do.
//! The class's byte count (`EgressQueue::bytes`, which marking, INT and DWRR read) and the
//! MMU's accounting cover the sub-queues as well: arbitration changes the order packets
//! leave in, nothing else.
//!
//! A gate may hold a flow back (the flow-channel fabric's injection limit): staging asks
//! it about the head of the sub-queue granted, and a flow it refuses leaves the arbiter,
//! packets and all, until [`Arbitration::release_held`] finds the gate open again (the
//! driver asks whenever an ACK may have opened it).
//!
//! Invariants (checked by [`Arbitration::check`], which `Simulation::check_invariants`
//! calls, so every test that checks a run checks them): a class's staged slot is empty
//! only while all its sub-queues are empty or held; a key is queued in the arbiter exactly
//! while its sub-queue holds packets and it is not held; a held key's sub-queue holds
//! packets; a flow's key is released when its sub-queue empties, so the key table holds
//! the flows with packets queued here and nothing else.

use super::packet::{Arena, Fifo, Packet};
use super::port::Port;
use crate::config::Arbitration as Discipline;
use headroom_mech::inq_arbiter::{InqArbiter, Outcome};
use headroom_mech::PRIORITIES;
use rustc_hash::FxHashMap;

/// The APPG of port and flow arbitration's keys, and of traffic from other switches.
const FABRIC_GROUP: u8 = 0;
/// Every ILID may inject (port and flow arbitration have no injection limits).
const ALL_ILIDS: u8 = u8::MAX;
/// `Arbitration::class_of` of a class that has held no packet yet.
const NO_CLASS: u32 = u32::MAX;

impl super::Simulation {
    /// Every packet class `q` of global port `gp` holds: its FIFO (a class with
    /// sub-queues: its staged head) and its sub-queues.
    pub(super) fn class_packets(&self, gp: u32, q: usize) -> impl Iterator<Item = u32> + '_ {
        let staged = self.ports[gp].queues[q].fifo.iter(&self.arena);
        staged.chain(self.arbitration.waiting(&self.arena, gp, q))
    }

    /// Every packet switch `s` holds (and its MMU counts): in its egress classes, and
    /// waiting for a flow channel.
    pub(super) fn held_packets(&self, s: u32) -> impl Iterator<Item = u32> + '_ {
        let sw = &self.switches[s as usize];
        sw.ports()
            .flat_map(move |gp| (0..PRIORITIES).flat_map(move |q| self.class_packets(gp, q)))
            .chain(self.channel_waiting(s))
    }
}

/// The sub-queues and arbiter of one egress class.
#[derive(Debug)]
struct ClassQueues {
    arbiter: InqArbiter,
    /// Per key: its packets in arrival order.
    sub: Vec<Fifo>,
    /// Per key: the application group it is queued in.
    group: Vec<u8>,
    /// Flow arbitration: flow → key, for the flows with packets queued (empty otherwise).
    key_of_flow: FxHashMap<u32, u32>,
    /// Flow arbitration: key → flow, for the keys in use.
    flow_of_key: Vec<u32>,
    /// Flow arbitration: keys released, reused before new ones.
    free_keys: Vec<u32>,
    /// Keys the gate held back, out of the arbiter until it lets them go.
    held: Vec<u32>,
}

impl ClassQueues {
    fn new() -> Self {
        ClassQueues {
            arbiter: InqArbiter::single_ilid(),
            sub: Vec::new(),
            group: Vec::new(),
            key_of_flow: FxHashMap::default(),
            flow_of_key: Vec::new(),
            free_keys: Vec::new(),
            held: Vec::new(),
        }
    }

    /// The key of a packet of `flow` (allocating one if the flow has none).
    fn flow_key(&mut self, flow: u32) -> u32 {
        if let Some(&k) = self.key_of_flow.get(&flow) {
            return k;
        }
        let k = match self.free_keys.pop() {
            Some(k) => {
                self.flow_of_key[k as usize] = flow;
                k
            }
            None => {
                self.flow_of_key.push(flow);
                self.flow_of_key.len() as u32 - 1
            }
        };
        self.key_of_flow.insert(flow, k);
        k
    }

    /// Key `k`'s sub-queue emptied: a flow's key goes back to the free list.
    fn release(&mut self, discipline: Discipline, k: u32) {
        if discipline != Discipline::InputPort {
            let flow = self.flow_of_key[k as usize];
            self.key_of_flow.remove(&flow);
            self.free_keys.push(k);
        }
    }
}

/// Every switch egress class's sub-queues, for a run whose switches arbitrate within a
/// class ([`Discipline::Fifo`]: nothing here is used).
#[derive(Debug)]
pub(super) struct Arbitration {
    discipline: Discipline,
    /// Per flow, its application (empty: all are application 0).
    apps: Vec<u8>,
    /// Per global port × 8 + class: its index in `classes` ([`NO_CLASS`] until its first
    /// packet: a class that never holds one costs four bytes).
    class_of: Vec<u32>,
    classes: Vec<ClassQueues>,
    /// Flows the gate held back, over the run.
    holds: u64,
}

impl Arbitration {
    /// Arbitration as `discipline` says for a network of `ports` ports whose flows belong
    /// to the applications `apps` (see [`crate::config::SimConfig::flow_apps`]).
    pub(super) fn new(discipline: Discipline, ports: usize, apps: &[u8]) -> Self {
        let class_of = match discipline {
            Discipline::Fifo => Vec::new(),
            _ => vec![NO_CLASS; ports * PRIORITIES],
        };
        Arbitration {
            discipline,
            apps: if discipline == Discipline::Application {
                apps.to_vec()
            } else {
                Vec::new()
            },
            class_of,
            classes: Vec::new(),
            holds: 0,
        }
    }

    /// Whether classes have sub-queues (otherwise every class is a FIFO).
    #[inline(always)]
    pub(super) fn is_on(&self) -> bool {
        self.discipline != Discipline::Fifo
    }

    /// Queues `pkt` (admitted to class `q` of global port `port`, which is `p`; received
    /// from a host if `from_host`) in its sub-queue, and stages it if the class has nothing
    /// staged and `gate` lets it go. The caller has counted its bytes in the class.
    pub(super) fn push(
        &mut self,
        arena: &mut Arena,
        (port, p): (u32, &mut Port),
        (q, pkt): (usize, u32),
        from_host: bool,
        gate: impl Fn(&Packet) -> bool,
    ) {
        let slot = port as usize * PRIORITIES + q;
        if self.class_of[slot] == NO_CLASS {
            self.class_of[slot] = self.classes.len() as u32;
            self.classes.push(ClassQueues::new());
        }
        let discipline = self.discipline;
        let c = &mut self.classes[self.class_of[slot] as usize];
        let pk = arena.get(pkt);
        let key = match discipline {
            Discipline::InputPort => u32::from(pk.in_port),
            _ => c.flow_key(pk.flow),
        };
        let group = match discipline {
            Discipline::Application if from_host => self
                .apps
                .get(pk.flow as usize)
                .copied()
                .unwrap_or(FABRIC_GROUP),
            _ => FABRIC_GROUP,
        };
        if c.sub.len() <= key as usize {
            c.sub.resize(key as usize + 1, Fifo::default());
            c.group.resize(key as usize + 1, FABRIC_GROUP);
        }
        c.sub[key as usize].push_back(arena, pkt);
        c.group[key as usize] = group;
        if !c.held.contains(&key) {
            c.arbiter.enqueue(key, group);
        }
        self.refill(arena, (port, p), q, gate);
    }

    /// If class `q` of global port `port` (which is `p`) has nothing staged, stages the
    /// arbiter's next grant that `gate` lets go and tells the port (its head and its
    /// non-empty mask). Nothing for a FIFO class.
    pub(super) fn refill(
        &mut self,
        arena: &mut Arena,
        (port, p): (u32, &mut Port),
        q: usize,
        gate: impl Fn(&Packet) -> bool,
    ) {
        if !p.queues[q].fifo.is_empty() {
            return;
        }
        if let Some(head) = self.stage(arena, (port, q), &mut p.queues[q].fifo, gate) {
            p.head_ready[q] = arena.get(head).ready_at;
            p.nonempty |= 1 << q;
        }
    }

    /// Moves the arbiter's next grant of class `q` of global port `port` into the class's
    /// empty slot `staged`; a grant whose head `gate` refuses is held back. Returns the
    /// packet staged, or `None` if nothing may go (always for a FIFO class).
    fn stage(
        &mut self,
        arena: &mut Arena,
        (port, q): (u32, usize),
        staged: &mut Fifo,
        gate: impl Fn(&Packet) -> bool,
    ) -> Option<u32> {
        let discipline = self.discipline;
        let index = *self.class_of.get(port as usize * PRIORITIES + q)?;
        let c = self.classes.get_mut(index as usize)?;
        loop {
            let sel = c.arbiter.select(ALL_ILIDS)?;
            let sub = &mut c.sub[sel.fc as usize];
            if sub.front().is_some_and(|head| !gate(arena.get(head))) {
                // Out of the arbiter until `release_held` finds the gate open.
                c.arbiter.complete(sel, Outcome::FlowLimit { more: false });
                c.held.push(sel.fc);
                self.holds += 1;
                continue;
            }
            // Never empty (`remove_where` requeues the keys that still wait); were it, the
            // key would leave the arbiter and the next be tried.
            let pkt = sub.pop_front(arena);
            let more = !sub.is_empty();
            c.arbiter.complete(sel, Outcome::Sent { more });
            if !more {
                c.release(discipline, sel.fc);
            }
            if let Some(pkt) = pkt {
                staged.push_back(arena, pkt);
                return Some(pkt);
            }
        }
    }

    /// Gives back to the arbiter the keys held at global port `port` (which is `p`) whose
    /// heads `gate` now lets go, and stages what may go in the classes that have nothing
    /// staged. Returns whether a class of the port has a packet staged now that had none.
    pub(super) fn release_held(
        &mut self,
        arena: &mut Arena,
        (port, p): (u32, &mut Port),
        gate: impl Fn(&Packet) -> bool,
    ) -> bool {
        let mut staged = false;
        for q in 0..PRIORITIES {
            let Some(&index) = self.class_of.get(port as usize * PRIORITIES + q) else {
                return staged;
            };
            let Some(c) = self.classes.get_mut(index as usize) else {
                continue;
            };
            if c.held.is_empty() {
                continue;
            }
            let mut released = false;
            let mut i = 0;
            while i < c.held.len() {
                let k = c.held[i];
                let open = c.sub[k as usize]
                    .front()
                    .is_none_or(|head| gate(arena.get(head)));
                if open {
                    c.held.swap_remove(i);
                    c.arbiter.enqueue(k, c.group[k as usize]);
                    released = true;
                } else {
                    i += 1;
                }
            }
            if released && p.queues[q].fifo.is_empty() {
                self.refill(arena, (port, p), q, &gate);
                staged |= !p.queues[q].fifo.is_empty();
            }
        }
        staged
    }

    /// Flows the gate held back, over the run.
    pub(super) fn holds(&self) -> u64 {
        self.holds
    }

    /// The head packets of the keys held back, with their global ports.
    pub(super) fn held_heads(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.class_of
            .iter()
            .enumerate()
            .filter_map(|(slot, &i)| {
                Some(((slot / PRIORITIES) as u32, self.classes.get(i as usize)?))
            })
            .flat_map(|(port, c)| {
                c.held
                    .iter()
                    .filter_map(move |&k| c.sub[k as usize].front().map(|pkt| (port, pkt)))
            })
    }

    /// The packets waiting in class `q` of global port `port`'s sub-queues (not its staged
    /// one), in no particular order.
    pub(super) fn waiting<'a>(
        &'a self,
        arena: &'a Arena,
        port: u32,
        q: usize,
    ) -> impl Iterator<Item = u32> + 'a {
        self.class_of
            .get(port as usize * PRIORITIES + q)
            .and_then(|&i| self.classes.get(i as usize))
            .into_iter()
            .flat_map(|c| c.sub.iter())
            .flat_map(move |f| f.iter(arena))
    }

    /// Removes the waiting packets of class `q` of `port` that `remove` selects and returns
    /// them. If a sub-queue empties, the arbiter is rebuilt from the keys that still wait,
    /// in key order (this happens only when a link fails or a flow is rerouted).
    pub(super) fn remove_where(
        &mut self,
        arena: &mut Arena,
        (port, q): (u32, usize),
        mut remove: impl FnMut(&Packet) -> bool,
    ) -> Vec<u32> {
        let Some(&index) = self.class_of.get(port as usize * PRIORITIES + q) else {
            return Vec::new();
        };
        let Some(c) = self.classes.get_mut(index as usize) else {
            return Vec::new();
        };
        let mut removed = Vec::new();
        let mut emptied = Vec::new();
        for (k, sub) in c.sub.iter_mut().enumerate() {
            let out = sub.remove_where(arena, &mut remove);
            if !out.is_empty() && sub.is_empty() {
                emptied.push(k as u32);
            }
            removed.extend(out);
        }
        if !emptied.is_empty() {
            c.held.retain(|k| !emptied.contains(k));
            let mut arbiter = InqArbiter::single_ilid();
            for (k, sub) in c.sub.iter().enumerate() {
                if !sub.is_empty() && !c.held.contains(&(k as u32)) {
                    arbiter.enqueue(k as u32, c.group[k]);
                }
            }
            c.arbiter = arbiter;
            for k in emptied {
                c.release(self.discipline, k);
            }
        }
        removed
    }

    /// Checks the invariants of every class (see the module documentation); `staged_empty`
    /// tells whether a (port, class)'s staged slot is empty.
    pub(super) fn check(&self, staged_empty: impl Fn(u32, usize) -> bool) -> Result<(), String> {
        for (slot, &index) in self.class_of.iter().enumerate() {
            let Some(c) = self.classes.get(index as usize) else {
                continue;
            };
            let (port, q) = ((slot / PRIORITIES) as u32, slot % PRIORITIES);
            let free = |k: usize| !c.held.contains(&(k as u32));
            let waiting = c
                .sub
                .iter()
                .enumerate()
                .any(|(k, s)| !s.is_empty() && free(k));
            if waiting && staged_empty(port, q) {
                return Err(format!(
                    "port {port} class {q}: packets wait, none is staged"
                ));
            }
            for (k, sub) in c.sub.iter().enumerate() {
                if (!sub.is_empty() && free(k)) != c.arbiter.is_queued(k as u32) {
                    return Err(format!(
                        "port {port} class {q}: key {k} is queued in the arbiter {} (held: {}, \
                         packets: {})",
                        c.arbiter.is_queued(k as u32),
                        !free(k),
                        !sub.is_empty()
                    ));
                }
                if !free(k) && sub.is_empty() {
                    return Err(format!(
                        "port {port} class {q}: key {k} is held with nothing"
                    ));
                }
            }
            if self.discipline != Discipline::InputPort {
                let used = c.flow_of_key.len() - c.free_keys.len();
                let nonempty = c.sub.iter().filter(|s| !s.is_empty()).count();
                if used != c.key_of_flow.len() || used != nonempty {
                    return Err(format!(
                        "port {port} class {q}: {used} flow keys in use, {} mapped, {nonempty} \
                         sub-queues with packets",
                        c.key_of_flow.len()
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Kind;
    use headroom_mech::units::{Rate, Time};

    /// The gate of a run without injection limits: every packet may leave.
    fn ungated(_: &Packet) -> bool {
        true
    }

    /// A packet of `flow` that came in on local port `in_port`.
    fn packet(arena: &mut Arena, flow: u32, in_port: u16) -> u32 {
        let mut p = Packet::new(Kind::Data);
        p.flow = flow;
        p.in_port = in_port;
        p.size = 1000;
        arena.alloc(p)
    }

    /// Sends class 3 of `port` empty, the way the port's transmitter takes its head and
    /// asks for the next; returns the packets in the order they left.
    fn drain(a: &mut Arbitration, arena: &mut Arena, port: &mut Port) -> Vec<u32> {
        let mut sent = Vec::new();
        while let Some(pkt) = port.queues[3].fifo.pop_front(arena) {
            port.head_removed(3, arena);
            sent.push(pkt);
            a.refill(arena, (0, port), 3, ungated);
            a.check(|_, _| port.queues[3].fifo.is_empty())
                .expect("invariants");
        }
        sent
    }

    /// The flows of the packets [`drain`] sends, in order.
    fn drained_flows(a: &mut Arbitration, arena: &mut Arena, port: &mut Port) -> Vec<u32> {
        drain(a, arena, port)
            .iter()
            .map(|&k| arena.get(k).flow)
            .collect()
    }

    fn port() -> Port {
        Port::new(0, 0, 1, Rate::from_gbps(100), Time::from_us(1), 0.0)
    }

    #[test]
    fn input_port_arbitration_takes_turns_between_ports() {
        let mut arena = Arena::default();
        let mut a = Arbitration::new(Discipline::InputPort, 1, &[]);
        let mut p = port();
        // Port 1 queues three packets before port 2 queues one.
        let x: Vec<u32> = (0..3).map(|_| packet(&mut arena, 7, 1)).collect();
        let y = packet(&mut arena, 8, 2);
        for &pkt in x.iter().chain([&y]) {
            a.push(&mut arena, (0, &mut p), (3, pkt), false, ungated);
        }
        assert_eq!(
            p.queues[3].fifo.front(),
            Some(x[0]),
            "the first packet is staged"
        );
        assert!(p.nonempty & (1 << 3) != 0);
        // Port 1's first packet is granted at once (the queue was empty); port 1 asks again
        // before port 2 does, so its second goes next, then port 2's, then port 1's third
        // (FIFO would send port 1's three first).
        assert_eq!(drain(&mut a, &mut arena, &mut p), vec![x[0], x[1], y, x[2]]);
    }

    #[test]
    fn flow_arbitration_releases_every_flow_key() {
        let mut arena = Arena::default();
        let mut a = Arbitration::new(Discipline::Flow, 1, &[]);
        let mut p = port();
        // Flows 5, 6, 7 from one input port: FIFO would send 5, 5, 5, 6, 7.
        let order = [5u32, 5, 5, 6, 7];
        let pkts: Vec<u32> = order.iter().map(|&f| packet(&mut arena, f, 1)).collect();
        for &pkt in &pkts {
            a.push(&mut arena, (0, &mut p), (3, pkt), false, ungated);
        }
        let flows = drained_flows(&mut a, &mut arena, &mut p);
        assert_eq!(flows, vec![5, 5, 6, 7, 5]);
        let c = &a.classes[0];
        assert!(c.key_of_flow.is_empty(), "no flow keeps a key once drained");
        assert_eq!(c.free_keys.len(), c.flow_of_key.len());
        // Keys are reused: three more flows need no new one.
        for f in [9u32, 10, 11] {
            let pkt = packet(&mut arena, f, 1);
            a.push(&mut arena, (0, &mut p), (3, pkt), false, ungated);
        }
        assert_eq!(a.classes[0].flow_of_key.len(), 3);
        drain(&mut a, &mut arena, &mut p);
    }

    #[test]
    fn application_arbitration_shares_between_applications_first() {
        let mut arena = Arena::default();
        // Flow 0 is application 1's; flows 1..=4 application 2's.
        let apps = [1u8, 2, 2, 2, 2];
        let mut a = Arbitration::new(Discipline::Application, 1, &apps);
        let mut p = port();
        let mut pkts = Vec::new();
        for _ in 0..2 {
            for f in 0..5 {
                pkts.push(packet(&mut arena, f, 1));
            }
        }
        for &pkt in &pkts {
            a.push(&mut arena, (0, &mut p), (3, pkt), true, ungated);
        }
        let flows = drained_flows(&mut a, &mut arena, &mut p);
        // Application 1 gets every other turn while it has packets.
        assert_eq!(flows, vec![0, 1, 0, 2, 3, 4, 1, 2, 3, 4]);
        // From another switch every flow is in group 0: flow round-robin.
        let mut b = Arbitration::new(Discipline::Application, 1, &apps);
        let mut q = port();
        for &pkt in &pkts {
            b.push(&mut arena, (0, &mut q), (3, pkt), false, ungated);
        }
        let flows = drained_flows(&mut b, &mut arena, &mut q);
        assert_eq!(flows, vec![0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    }

    #[test]
    fn removing_packets_rebuilds_the_arbiter_from_what_waits() {
        let mut arena = Arena::default();
        let mut a = Arbitration::new(Discipline::Flow, 1, &[]);
        let mut p = port();
        let pkts: Vec<u32> = [1u32, 2, 2, 3]
            .iter()
            .map(|&f| packet(&mut arena, f, u16::try_from(f).expect("small")))
            .collect();
        for &pkt in &pkts {
            a.push(&mut arena, (0, &mut p), (3, pkt), false, ungated);
        }
        // Flow 1's packet is staged; flow 2's two and flow 3's one wait. Port 2 fails.
        let removed = a.remove_where(&mut arena, (0, 3), |pk| pk.in_port == 2);
        assert_eq!(removed, vec![pkts[1], pkts[2]]);
        a.check(|_, _| false).expect("invariants after the removal");
        assert_eq!(drain(&mut a, &mut arena, &mut p), vec![pkts[0], pkts[3]]);
        assert!(a.classes[0].key_of_flow.is_empty());
    }

    #[test]
    fn fifo_classes_hold_no_state() {
        let mut arena = Arena::default();
        let mut a = Arbitration::new(Discipline::Fifo, 100, &[]);
        assert!(!a.is_on());
        let mut p = port();
        a.refill(&mut arena, (0, &mut p), 3, ungated);
        assert!(p.queues[3].fifo.is_empty());
        assert_eq!(a.waiting(&arena, 0, 3).count(), 0);
        assert!(a.class_of.is_empty() && a.classes.is_empty());
    }

    #[test]
    fn a_gate_holds_flows_back_until_released() {
        let mut arena = Arena::default();
        let mut a = Arbitration::new(Discipline::Flow, 1, &[]);
        let mut p = port();
        let closed = |pk: &Packet| pk.flow != 5;
        let order = [5u32, 6, 5, 7];
        let pkts: Vec<u32> = order.iter().map(|&f| packet(&mut arena, f, 1)).collect();
        for &pkt in &pkts {
            a.push(&mut arena, (0, &mut p), (3, pkt), false, closed);
        }
        // Flow 5 was granted first and held: flow 6 is staged.
        assert_eq!(p.queues[3].fifo.front(), Some(pkts[1]));
        assert_eq!(a.holds(), 1);
        let mut sent = Vec::new();
        while let Some(pkt) = p.queues[3].fifo.pop_front(&arena) {
            p.head_removed(3, &arena);
            sent.push(arena.get(pkt).flow);
            a.refill(&mut arena, (0, &mut p), 3, closed);
            a.check(|_, _| p.queues[3].fifo.is_empty())
                .expect("invariants");
        }
        assert_eq!(sent, vec![6, 7], "flow 5 waits, the others do not");
        assert_eq!(a.waiting(&arena, 0, 3).count(), 2);
        assert_eq!(a.held_heads().collect::<Vec<_>>(), vec![(0, pkts[0])]);
        // Still closed: nothing changes.
        assert!(!a.release_held(&mut arena, (0, &mut p), closed));
        a.check(|_, _| p.queues[3].fifo.is_empty())
            .expect("invariants");
        // Open: flow 5 is staged again, and sends both.
        assert!(a.release_held(&mut arena, (0, &mut p), ungated));
        assert_eq!(a.held_heads().count(), 0);
        assert_eq!(drained_flows(&mut a, &mut arena, &mut p), vec![5, 5]);
        assert!(a.classes[0].key_of_flow.is_empty());
    }
}
