//! Victim pauses: PFC pauses that stop traffic not headed to the congestion that caused them.
//!
//! When a switch `S` decides a new pause on its ingress port `i` (an XOFF that starts a
//! pause episode, not a refresh), it is for one congested egress: the *culprit* is the
//! egress port of `S` whose queues hold the most bytes of the pausing ingress PG (class `c`)
//! — or of the whole ingress port for a port-level pause. The PAUSE frame carries the
//! culprit. When it reaches the upstream node, it stops what that node has waiting for `S`
//! on that class (every class for a port-level pause): the packets queued on the upstream
//! switch's port towards `S`, or the flows of the upstream host that still have data to
//! send. The pause is a *victim pause* if any of those would leave `S` by another egress
//! than the culprit: a flow that does not cross the congested port is stopped (head-of-line
//! blocking, the collateral damage of PFC). Judging at the upstream end, with its own state,
//! keeps every node's bookkeeping to the state of that node (a partitioned run needs this).
//!
//! Invariants: counting reads the state and never changes it (no event, no random draw), so
//! the run's dynamics are the same with or without it; a pause episode is counted once, when
//! decided, whatever its refreshes; it is judged once, when its first frame arrives (a
//! frame lost to a link failure, or still on the wire when the run ends, leaves its episode
//! unjudged, not a victim).
//!
//! Finding the culprit must not cost a walk over the switch's queued packets at every pause
//! decision (with seven classes flapping between XOFF and XON, that walk was a quarter of
//! a run): a switch keeps its queued bytes per (egress, class, ingress) in
//! [`QueuedByIngress`], built from its queues at its first pause decision and kept up to
//! date by every enqueue and release from then on. Invariant (checked with the run's
//! other invariants): the table equals what a walk of the queues would count.

use super::{Simulation, Slot};
use headroom_mech::PRIORITIES;

/// A switch with more ports than this finds culprits by walking its queues: the table
/// takes `ports² × 32` bytes (512 KiB at this bound).
const MAX_TABLE_PORTS: usize = 128;

/// Bytes in one switch's egress queues by the ingress port they arrived on: one `u32` per
/// (egress port, arrival class, ingress port), allocated at the switch's first pause
/// decision (or first full VL buffer on credit links).
#[derive(Debug, Default)]
pub struct QueuedByIngress {
    /// Indexed by `(ingress × PRIORITIES + class) × ports + egress`, so that a culprit
    /// search (one ingress and class, every egress) reads consecutive entries; empty until
    /// built.
    bytes: Vec<u32>,
    /// Local ports of the switch.
    ports: usize,
}

impl QueuedByIngress {
    /// Whether a switch with `ports` ports and `buffer_bytes` of buffer can keep the table
    /// (one queue's bytes from one ingress never exceed the buffer, which must fit a `u32`).
    pub fn fits(ports: usize, buffer_bytes: u64) -> bool {
        ports <= MAX_TABLE_PORTS && buffer_bytes <= u64::from(u32::MAX)
    }

    /// The table's size in bytes for a switch of `ports` ports, or 0 where it is not kept.
    pub fn footprint(ports: usize, buffer_bytes: u64) -> u64 {
        if Self::fits(ports, buffer_bytes) {
            (ports * ports * PRIORITIES * size_of::<u32>()) as u64
        } else {
            0
        }
    }

    fn index(&self, out_local: u16, class: u8, in_local: u16) -> usize {
        (usize::from(in_local) * PRIORITIES + usize::from(class)) * self.ports
            + usize::from(out_local)
    }

    /// A packet of `size` bytes that arrived on `in_local` joined queue `class` of
    /// `out_local`.
    #[inline]
    pub fn add(&mut self, out_local: u16, class: u8, in_local: u16, size: u32) {
        if !self.bytes.is_empty() {
            let i = self.index(out_local, class, in_local);
            self.bytes[i] += size;
        }
    }

    /// Such a packet left the queue (sent or dropped).
    #[inline]
    pub fn remove(&mut self, out_local: u16, class: u8, in_local: u16, size: u32) {
        if !self.bytes.is_empty() {
            let i = self.index(out_local, class, in_local);
            self.bytes[i] -= size;
        }
    }

    /// Bytes of `class` that arrived on `in_local`, per egress port.
    fn row(&self, class: u8, in_local: u16) -> &[u32] {
        let start = self.index(0, class, in_local);
        &self.bytes[start..start + self.ports]
    }
}

/// The index of the largest of `bytes` (ties: the first), or `None` if all are zero: the
/// culprit among a switch's egress ports, by the bytes each holds of the pausing PG.
fn most_bytes(bytes: impl Iterator<Item = u64>) -> Option<u16> {
    let mut best: Option<(u64, u16)> = None;
    for (out, b) in bytes.enumerate() {
        if b > 0 && best.is_none_or(|(most, _)| b > most) {
            best = Some((b, out as u16));
        }
    }
    best.map(|(_, out)| out)
}

/// Pause episodes decided on one switch port, and the victim pauses of its peer judged
/// here, per class (index 8: port-level pauses). A victim pause is judged where its PAUSE
/// arrives, so it is counted on the receiving port and reported for its peer: the part
/// that judges it holds this record, whichever part holds the peer.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PauseEpisodes {
    /// New pauses decided (XOFF decisions that started a pause).
    pub decided: [u32; PRIORITIES + 1],
    /// The peer's pauses that arrived here and stopped traffic headed elsewhere than the
    /// culprit egress.
    pub peer_victim: [u32; PRIORITIES + 1],
    /// Credit links: waits for credit of this port's transmitter, per VL, that held
    /// traffic headed elsewhere than the egress the downstream switch's VL buffer was
    /// filled for (the credit analogue of `victim`).
    pub credit_victim: [u32; PRIORITIES],
}

impl PauseEpisodes {
    /// The peer's victim pauses judged here: per class, and of the whole port.
    pub fn peer_victim_pauses(&self) -> ([u32; PRIORITIES], u32) {
        let mut per_class = [0; PRIORITIES];
        per_class.copy_from_slice(&self.peer_victim[..PRIORITIES]);
        (per_class, self.peer_victim[PRIORITIES])
    }
}

impl Simulation {
    /// Records a new pause decided on global switch port `port` for `class` (`None`:
    /// port-level); returns the egress it is blamed on, for the PAUSE frame to carry.
    pub(super) fn record_pause_episode(&mut self, port: u32, class: Option<u8>) -> Option<u16> {
        let p = &self.ports[port];
        let Slot::Switch(s) = self.slots[p.node as usize] else {
            return None; // a NIC's receive-buffer pause: no egress to blame
        };
        let in_local = p.local;
        let classes: u8 = class.map_or(u8::MAX, |c| 1 << c);
        let culprit = if self.build_queued_by_ingress(s) {
            let culprit = self.culprit_from_table(s, in_local, classes);
            debug_assert_eq!(culprit, self.culprit(s, in_local, classes));
            culprit
        } else {
            self.culprit(s, in_local, classes)
        };
        let i = self.ports.held_index(port);
        self.pause_episodes[i].decided[class.map_or(PRIORITIES, usize::from)] += 1;
        culprit
    }

    /// The first PAUSE of an episode blamed on egress `culprit` of the switch at the other
    /// end arrived at `up`: counts the episode as a victim pause (on the pausing switch's
    /// port) if it stops traffic headed elsewhere.
    pub(super) fn judge_pause_episode(&mut self, up: u32, class: Option<u8>, culprit: u16) {
        let pausing = self.ports[up].peer;
        let Slot::Switch(s) = self.slots[self.ports.wire(pausing).node as usize] else {
            return;
        };
        let classes: u8 = class.map_or(u8::MAX, |c| 1 << c);
        if self.stops_other_traffic(s, up, classes, culprit) {
            let i = self.ports.held_index(up);
            self.pause_episodes[i].peer_victim[class.map_or(PRIORITIES, usize::from)] += 1;
        }
    }

    /// The VL buffer `vl` of credit port `port` of switch `s` filled (the credit analogue
    /// of an XOFF decision): returns the egress it is blamed on (the one holding most of
    /// what arrived there), for the port's credit updates to carry upstream.
    pub(super) fn credit_culprit(&mut self, s: u32, port: u32, vl: u8) -> Option<u16> {
        let in_local = self.ports[port].local;
        if self.build_queued_by_ingress(s) {
            self.culprit_from_table(s, in_local, 1 << vl)
        } else {
            self.culprit(s, in_local, 1 << vl)
        }
    }

    /// A wait of transmitter `up` for credit on VL `vl` ended with a credit update blamed
    /// on egress `culprit` of the switch downstream: counts it as a victim wait if what
    /// `up` has waiting on the VL includes traffic that switch would forward elsewhere.
    pub(super) fn judge_credit_wait(&mut self, up: u32, vl: u8, culprit: u16) {
        let down = self.ports[up].peer;
        let Slot::Switch(s) = self.slots[self.ports.wire(down).node as usize] else {
            return; // a host grants all it may: nothing waits for it
        };
        if self.stops_other_traffic(s, up, 1 << vl, culprit) {
            let i = self.ports.held_index(up);
            self.pause_episodes[i].credit_victim[usize::from(vl)] += 1;
        }
    }

    /// Builds switch `s`'s table of queued bytes by ingress from its queues if this is its
    /// first use; false where the switch is too large to keep one.
    fn build_queued_by_ingress(&mut self, s: u32) -> bool {
        let sw = &self.switches[s as usize];
        if !QueuedByIngress::fits(sw.ports().len(), sw.buffer_bytes()) {
            return false;
        }
        if sw.queued_by_ingress.bytes.is_empty() {
            let table = self.walk_queued_by_ingress(s);
            self.switches[s as usize].queued_by_ingress = table;
        }
        true
    }

    /// What switch `s`'s table of queued bytes by ingress holds, counted from its queues.
    fn walk_queued_by_ingress(&self, s: u32) -> QueuedByIngress {
        let sw = &self.switches[s as usize];
        let ports = sw.ports().len();
        let mut table = QueuedByIngress {
            bytes: vec![0; ports * ports * PRIORITIES],
            ports,
        };
        for (out, gp) in sw.ports().enumerate() {
            for q in 0..PRIORITIES {
                for pkt in self.class_packets(gp, q) {
                    let pk = self.arena.get(pkt);
                    table.add(out as u16, pk.prio, pk.in_port, pk.size);
                }
            }
        }
        table
    }

    /// Switch `s`'s table of queued bytes by ingress, if built, equals a walk of its queues.
    pub(super) fn check_queued_by_ingress(&self, s: u32) -> Result<(), String> {
        let kept = &self.switches[s as usize].queued_by_ingress;
        if !kept.bytes.is_empty() && kept.bytes != self.walk_queued_by_ingress(s).bytes {
            return Err(format!(
                "switch {}: queued bytes by ingress differ from its queues",
                self.switches[s as usize].node
            ));
        }
        Ok(())
    }

    /// [`Self::culprit`] read from switch `s`'s table (which must be built).
    fn culprit_from_table(&self, s: u32, in_local: u16, classes: u8) -> Option<u16> {
        let table = &self.switches[s as usize].queued_by_ingress;
        // One row per pausing class (one for a pause of one class, the common case).
        let mut rows: [&[u32]; PRIORITIES] = [&[]; PRIORITIES];
        let mut n = 0;
        for class in (0..PRIORITIES as u8).filter(|c| classes & (1 << c) != 0) {
            rows[n] = table.row(class, in_local);
            n += 1;
        }
        let rows = &rows[..n];
        most_bytes((0..table.ports).map(|out| rows.iter().map(|row| u64::from(row[out])).sum()))
    }

    /// The egress port of switch `s` holding the most bytes that arrived on `in_local` in
    /// one of `classes` (ties: the lowest port), or `None` if it holds none. A frame's
    /// arrival class is its `prio` while queued (its egress queue may differ on credit
    /// links, by the output port's SL → VL table).
    fn culprit(&self, s: u32, in_local: u16, classes: u8) -> Option<u16> {
        most_bytes(self.switches[s as usize].ports().map(|gp| {
            let p = &self.ports[gp];
            (0..PRIORITIES)
                // Bytes, not `nonempty`: a class whose flows are all held back by their
                // injection limits holds packets with nothing staged.
                .filter(|&q| p.queues[q].bytes > 0)
                .flat_map(|q| self.class_packets(gp, q))
                .map(|pk| self.arena.get(pk))
                .filter(|pk| pk.in_port == in_local && classes & (1 << pk.prio) != 0)
                .map(|pk| u64::from(pk.size))
                .sum()
        }))
    }

    /// Whether what the upstream port `up` has waiting in `classes` includes traffic that
    /// switch `s` would forward elsewhere than `culprit`.
    fn stops_other_traffic(&self, s: u32, up: u32, classes: u8, culprit: u16) -> bool {
        let elsewhere = |dst: u32, hash: u64| {
            self.egress_local(self.switches[s as usize].node, dst, hash)
                .is_some_and(|out| out != culprit)
        };
        let p = &self.ports[up];
        match self.slots[p.node as usize] {
            Slot::Switch(_) => (0..PRIORITIES)
                .filter(|&q| classes & (1 << q) != 0)
                .flat_map(|q| self.class_packets(up, q))
                .map(|pk| self.arena.get(pk))
                .any(|pk| elsewhere(pk.dst, pk.hash)),
            // The entry's class first: a flow's record is a cache miss, and a pause of one
            // class concerns a seventh of a fan-in sender's hundreds of flows.
            Slot::Host(h) => self.hosts[h as usize]
                .active
                .iter()
                .filter(|e| classes & (1 << e.class()) != 0)
                .map(|e| &self.flows[e.flow])
                .filter(|fl| fl.has_unsent_data())
                .any(|fl| elsewhere(fl.dst, fl.hash)),
        }
    }
}
