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

use super::{Simulation, Slot};
use headroom_mech::PRIORITIES;

/// Pause episodes decided on one switch port and how many of them were victim pauses,
/// per class (index 8: port-level pauses).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PauseEpisodes {
    /// New pauses decided (XOFF decisions that started a pause).
    pub decided: [u32; PRIORITIES + 1],
    /// Those that stopped traffic headed elsewhere than the culprit egress.
    pub victim: [u32; PRIORITIES + 1],
}

impl Simulation {
    /// Records a new pause decided on global switch port `port` for `class` (`None`:
    /// port-level); returns the egress it is blamed on, for the PAUSE frame to carry.
    pub(super) fn record_pause_episode(&mut self, port: u32, class: Option<u8>) -> Option<u16> {
        let p = &self.ports[port as usize];
        let Slot::Switch(s) = self.slots[p.node as usize] else {
            return None; // a NIC's receive-buffer pause: no egress to blame
        };
        let in_local = p.local;
        let classes: u8 = class.map_or(u8::MAX, |c| 1 << c);
        let culprit = self.culprit(s, in_local, classes);
        self.pause_episodes[port as usize].decided[class.map_or(PRIORITIES, usize::from)] += 1;
        culprit
    }

    /// The first PAUSE of an episode blamed on egress `culprit` of the switch at the other
    /// end arrived at `up`: counts the episode as a victim pause (on the pausing switch's
    /// port) if it stops traffic headed elsewhere.
    pub(super) fn judge_pause_episode(&mut self, up: u32, class: Option<u8>, culprit: u16) {
        let pausing = self.ports[up as usize].peer;
        let Slot::Switch(s) = self.slots[self.ports[pausing as usize].node as usize] else {
            return;
        };
        let classes: u8 = class.map_or(u8::MAX, |c| 1 << c);
        if self.stops_other_traffic(s, up, classes, culprit) {
            self.pause_episodes[pausing as usize].victim[class.map_or(PRIORITIES, usize::from)] +=
                1;
        }
    }

    /// The egress port of switch `s` holding the most bytes that arrived on `in_local` in
    /// one of `classes` (ties: the lowest port), or `None` if it holds none.
    fn culprit(&self, s: u32, in_local: u16, classes: u8) -> Option<u16> {
        let sw = &self.switches[s as usize];
        let mut best: Option<(u64, u16)> = None;
        for (out, gp) in sw.ports().enumerate() {
            let p = &self.ports[gp as usize];
            let mut bytes = 0u64;
            for q in 0..PRIORITIES {
                if classes & (1 << q) == 0 || p.nonempty & (1 << q) == 0 {
                    continue;
                }
                bytes += p.queues[q]
                    .fifo
                    .iter(&self.arena)
                    .map(|pk| self.arena.get(pk))
                    .filter(|pk| pk.in_port == in_local)
                    .map(|pk| u64::from(pk.size))
                    .sum::<u64>();
            }
            if bytes > 0 && best.is_none_or(|(b, _)| bytes > b) {
                best = Some((bytes, out as u16));
            }
        }
        best.map(|(_, out)| out)
    }

    /// Whether what the upstream port `up` has waiting in `classes` includes traffic that
    /// switch `s` would forward elsewhere than `culprit`.
    fn stops_other_traffic(&self, s: u32, up: u32, classes: u8, culprit: u16) -> bool {
        let elsewhere = |dst: u32, hash: u64| {
            self.egress_local(self.switches[s as usize].node, dst, hash)
                .is_some_and(|out| out != culprit)
        };
        let p = &self.ports[up as usize];
        match self.slots[p.node as usize] {
            Slot::Switch(_) => (0..PRIORITIES)
                .filter(|&q| classes & (1 << q) != 0)
                .flat_map(|q| p.queues[q].fifo.iter(&self.arena))
                .map(|pk| self.arena.get(pk))
                .any(|pk| elsewhere(pk.dst, pk.hash)),
            Slot::Host(h) => self.hosts[h as usize]
                .active
                .iter()
                .map(|&f| &self.flows[f as usize])
                .filter(|fl| classes & (1 << fl.prio) != 0 && fl.has_unsent_data())
                .any(|fl| elsewhere(fl.dst, fl.hash)),
        }
    }
}
