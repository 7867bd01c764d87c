//! Deadlock detection: a cycle of egress queues, paused (PFC) or out of credit (credit
//! links), that never drains.
//!
//! A switch egress queue is *stalled* when it holds data and its priority has been paused,
//! or its VL blocked for lack of credit, without a break for at least the detection time.
//! Stalled queue `(S, p, q)` waits for the switch `T` at the other end of port `p`, which
//! keeps it paused (or withholds credit) because its ingress port `r` (the peer of `p`)
//! holds packets that wait in `T`'s egress queues `(T, x, q)`: the edge `(S, p, q) → (T, x,
//! q)` (any priority of `x` when `T` pauses the whole port, as DSH's port-level PAUSE does).
//! A cycle of stalled queues is a cyclic buffer dependency: none of them can send until
//! another does, so the run is deadlocked. On credit links an edge follows the service
//! level: with several SLs on one VL a cycle through the shared VL buffer can be missed,
//! never invented. A run that goes idle with queues blocked for credit is checked once
//! more with no detection time: nothing will ever unblock them.
//!
//! Invariants:
//! - Detection reads only state every part of a partitioned run agrees on at a common
//!   simulated time: each part reports its own switches ([`Simulation::stall_view`]), the
//!   driver merges them ([`find_deadlock`]). The same run is declared deadlocked at the same
//!   check, with the same cycle, on any number of threads.
//! - The cycle reported is the first found by a depth-first search over the stalled queues
//!   in (global port, priority) order, rotated to start at its smallest queue.

use super::Simulation;
use headroom_mech::units::Time;
use headroom_mech::PRIORITIES;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One egress queue of a deadlock cycle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StalledQueue {
    /// The switch holding the queue.
    pub node: u32,
    /// Its local egress port.
    pub port: u16,
    /// The priority (egress queue).
    pub prio: u8,
    /// The node at the other end of the port, which keeps it paused.
    pub peer: u32,
    /// Bytes queued.
    pub bytes: u32,
    /// Paused (or blocked for lack of credit) without a break since this time.
    #[serde(rename = "paused_since_ns", serialize_with = "as_ns")]
    pub paused_since: Time,
    /// The queue waits for credit on a credit link, not for a PAUSE to end.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub credit: bool,
}

/// A detected deadlock: the cycle of queues that wait for each other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Deadlock {
    /// When the deadlock was detected (the run stops there).
    #[serde(rename = "detected_at_ns", serialize_with = "as_ns")]
    pub detected_at: Time,
    /// The cycle: each queue is paused by the switch of the next, the last by the first's.
    pub cycle: Vec<StalledQueue>,
}

/// A time as nanoseconds, as every time in `summary.json` is.
fn as_ns<S: serde::Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(t.as_ps() as f64 / 1_000.0)
}

impl std::fmt::Display for Deadlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let credit = self.cycle.iter().filter(|q| q.credit).count();
        let what = match credit {
            0 => "PFC deadlock",
            n if n == self.cycle.len() => "credit deadlock",
            _ => "deadlock (PFC and credit links)",
        };
        write!(f, "{what} at {}: ", self.detected_at)?;
        for (i, q) in self.cycle.iter().enumerate() {
            if i > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "switch {} port {} prio {}", q.node, q.port, q.prio)?;
        }
        if let Some(first) = self.cycle.first() {
            write!(f, " -> switch {} (cycle)", first.node)?;
        }
        Ok(())
    }
}

/// What one part knows of stalled queues at a check: its own switches only.
#[derive(Debug, Default)]
pub(crate) struct StallView {
    /// Stalled queues by (global port, priority), with whether the port as a whole is
    /// paused.
    stalled: BTreeMap<(u32, u8), (StalledQueue, bool)>,
    /// `(global ingress port, priority) → global egress ports` of a switch where packets
    /// that arrived on that ingress port with that priority wait.
    holds: BTreeMap<(u32, u8), BTreeSet<u32>>,
}

impl StallView {
    /// Adds another part's view.
    pub(crate) fn absorb(&mut self, other: StallView) {
        self.stalled.extend(other.stalled);
        for (k, v) in other.holds {
            self.holds.entry(k).or_default().extend(v);
        }
    }
}

impl Simulation {
    /// The stalled queues of this part's switches at `now`: holding data, paused since
    /// `now - detection` or earlier; and where their peers' packets wait. The holds are
    /// gathered only when some queue is stalled (the common case costs one pass over the
    /// ports).
    pub(crate) fn stall_view(&self, now: Time, detection: Time) -> StallView {
        let mut view = StallView::default();
        let Some(limit) = now.as_ps().checked_sub(detection.as_ps()).map(Time) else {
            return view;
        };
        for sw in self.switches.iter().filter(|s| self.mine(s.node)) {
            for gp in sw.ports() {
                let port = &self.ports[gp as usize];
                for q in 0..PRIORITIES as u8 {
                    if port.nonempty & (1 << q) == 0 {
                        continue;
                    }
                    let (since, whole_port) = if let Some(timers) = port.fc.pfc() {
                        let Some(since) = timers.paused_since(now, q) else {
                            continue;
                        };
                        (since, timers.port_paused(now))
                    } else {
                        // On a credit link the queue's class is its VL.
                        match port.fc.last_hold(now, q) {
                            Some((since, Time::MAX)) => (since, false),
                            _ => continue,
                        }
                    };
                    if since > limit {
                        continue;
                    }
                    let stalled = StalledQueue {
                        node: sw.node,
                        port: port.local,
                        prio: q,
                        peer: self.ports[port.peer as usize].node,
                        bytes: port.queues[usize::from(q)].bytes,
                        paused_since: since,
                        credit: port.fc.credit().is_some(),
                    };
                    view.stalled.insert((gp, q), (stalled, whole_port));
                }
            }
        }
        if view.stalled.is_empty() {
            return view;
        }
        for sw in self.switches.iter().filter(|s| self.mine(s.node)) {
            let first = sw.ports().start;
            for gp in sw.ports() {
                for q in 0..PRIORITIES {
                    for pkt in self.class_packets(gp, q) {
                        let p = self.arena.get(pkt);
                        let ingress = first + u32::from(p.in_port);
                        view.holds.entry((ingress, q as u8)).or_default().insert(gp);
                    }
                }
            }
        }
        view
    }

    /// Global index of the port at the other end of global port `gp`.
    pub(crate) fn peer_port(&self, gp: u32) -> u32 {
        self.ports[gp as usize].peer
    }
}

/// The deadlock in the merged `view` at `now`, if its stalled queues form a cycle;
/// `peer_port` maps a global port to the one at the other end of its link.
pub(crate) fn find_deadlock(
    view: &StallView,
    now: Time,
    peer_port: impl Fn(u32) -> u32,
) -> Option<Deadlock> {
    // Edges among stalled queues, in key order.
    let keys: Vec<(u32, u8)> = view.stalled.keys().copied().collect();
    let index: BTreeMap<(u32, u8), usize> = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let edges: Vec<Vec<usize>> = keys
        .iter()
        .map(|&(gp, q)| {
            let whole_port = view.stalled[&(gp, q)].1;
            let ingress = peer_port(gp);
            let prios: Vec<u8> = if whole_port {
                (0..PRIORITIES as u8).collect()
            } else {
                vec![q]
            };
            let mut next: Vec<usize> = prios
                .iter()
                .flat_map(|&hq| {
                    view.holds
                        .get(&(ingress, hq))
                        .into_iter()
                        .flatten()
                        .flat_map(move |&out| {
                            // A class pause waits for the same class; a port pause for
                            // whatever the port's packets wait in.
                            let out_prios: Vec<u8> = if whole_port { vec![hq] } else { vec![q] };
                            out_prios.into_iter().map(move |oq| (out, oq))
                        })
                })
                .filter_map(|k| index.get(&k).copied())
                .collect();
            next.sort_unstable();
            next.dedup();
            next
        })
        .collect();
    let cycle = first_cycle(&edges)?;
    Some(Deadlock {
        detected_at: now,
        cycle: cycle
            .into_iter()
            .map(|i| view.stalled[&keys[i]].0.clone())
            .collect(),
    })
}

/// The first cycle a depth-first search from each vertex in order finds in the graph
/// `edges`, as vertices rotated to start at the smallest.
fn first_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark = vec![Mark::New; edges.len()];
    for root in 0..edges.len() {
        if mark[root] != Mark::New {
            continue;
        }
        // Iterative DFS: the path and, per vertex on it, the next edge to try.
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        mark[root] = Mark::OnPath;
        while let Some(&mut (v, ref mut next)) = path.last_mut() {
            if let Some(&w) = edges[v].get(*next) {
                *next += 1;
                match mark[w] {
                    Mark::New => {
                        mark[w] = Mark::OnPath;
                        path.push((w, 0));
                    }
                    Mark::OnPath => {
                        let start = path.iter().position(|&(u, _)| u == w)?;
                        let mut cycle: Vec<usize> = path[start..].iter().map(|&(u, _)| u).collect();
                        let min = cycle.iter().enumerate().min_by_key(|&(_, &u)| u)?.0;
                        cycle.rotate_left(min);
                        return Some(cycle);
                    }
                    Mark::Done => {}
                }
            } else {
                mark[v] = Mark::Done;
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cycle_and_not_a_chain() {
        // 0 -> 1 -> 2 -> 0, and 3 -> 0 hanging off it.
        let g = vec![vec![1], vec![2], vec![0], vec![0]];
        assert_eq!(first_cycle(&g), Some(vec![0, 1, 2]));
        let chain = vec![vec![1], vec![2], vec![]];
        assert_eq!(first_cycle(&chain), None);
        // A cycle reached from an earlier vertex starts at its smallest member.
        let g = vec![vec![2], vec![], vec![3], vec![2]];
        assert_eq!(first_cycle(&g), Some(vec![2, 3]));
    }

    fn queue(node: u32, port: u16, peer: u32) -> StalledQueue {
        StalledQueue {
            node,
            port,
            prio: 3,
            peer,
            bytes: 1000,
            paused_since: Time::ZERO,
            credit: false,
        }
    }

    #[test]
    fn a_ring_of_paused_queues_holding_each_others_packets_is_a_deadlock() {
        // Three switches A, B, C in a ring; global ports: A.0 = 0 <-> B.0 = 2,
        // B.1 = 3 <-> C.0 = 4, C.1 = 5 <-> A.1 = 1. A's egress 0 (towards B) is paused by
        // B, whose packets from A wait in B's egress 3 (towards C), and so on around.
        let peer = |gp: u32| [2, 5, 0, 4, 3, 1][gp as usize];
        let mut view = StallView::default();
        view.stalled.insert((0, 3), (queue(10, 0, 11), false));
        view.stalled.insert((3, 3), (queue(11, 1, 12), false));
        view.stalled.insert((5, 3), (queue(12, 1, 10), false));
        view.holds.insert((2, 3), [3].into()); // B: from A, waiting towards C
        view.holds.insert((4, 3), [5].into()); // C: from B, waiting towards A
        view.holds.insert((1, 3), [0].into()); // A: from C, waiting towards B
        let d = find_deadlock(&view, Time::from_ms(2), peer).expect("deadlock");
        let nodes: Vec<u32> = d.cycle.iter().map(|q| q.node).collect();
        assert_eq!(nodes, [10, 11, 12]);
        assert!(
            d.to_string()
                .contains("switch 10 port 0 prio 3 -> switch 11"),
            "{d}"
        );
        // Without C's packets from B the dependency is a chain, not a deadlock.
        view.holds.remove(&(4, 3));
        assert_eq!(find_deadlock(&view, Time::from_ms(2), peer), None);
    }

    #[test]
    fn a_class_pause_waits_only_for_its_own_class() {
        let peer = |gp: u32| [1, 0][gp as usize];
        let mut view = StallView::default();
        view.stalled.insert((0, 3), (queue(10, 0, 11), false));
        view.stalled.insert((1, 4), (queue(11, 0, 10), false));
        view.holds.insert((1, 3), [1].into());
        view.holds.insert((0, 4), [0].into());
        assert_eq!(find_deadlock(&view, Time::ZERO, peer), None);
    }
}
