//! Deadlock detection: a cycle of egress queues, paused (PFC) or out of credit (credit
//! links), that never drains; or, on a flow-channel fabric, frames that wait for flow
//! channels held by each other.
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
//!
//! On a flow-channel fabric a frame for which no channel can be made waits on its input
//! port, and the frames behind it with it. Its port is *stalled* when that first frame has
//! waited for the detection time, and it waits for the release of one of the channels of
//! a full table (or of its own channel, pinned to another output). A channel is released
//! only when all it forwarded has been delivered, so it is blocked while a frame it carried
//! waits on a stalled port anywhere downstream. The stalled ports each of whose channels
//! waited for is blocked by another of them can never go on (the largest such set,
//! found by removing the others until none is left to remove): they are deadlocked, and
//! the cycle reported is the first a depth-first search finds among them. Channels held by
//! frames in paused queues count as free, so a deadlock through both tables and PAUSEs can
//! be missed, never invented.

use super::features::General;
use super::switch::Switch;
use super::{Simulation, Slot};
use headroom_mech::flow_channel::{Blocker, FlowChannels};
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
    /// On a flow-channel fabric: the frames are not in an egress queue but wait on this
    /// input port of `node` for a flow channel on `port` (its table is full, or the
    /// frames' channel is pinned to it); `prio` is the class the first of them will leave
    /// in, `paused_since` since when it has waited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_on: Option<u16>,
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
        let channels = self.cycle.iter().any(|q| q.waiting_on.is_some());
        let what = match credit {
            _ if channels => "flow-channel deadlock",
            0 => "PFC deadlock",
            n if n == self.cycle.len() => "credit deadlock",
            _ => "deadlock (PFC and credit links)",
        };
        write!(f, "{what} at {}: ", self.detected_at)?;
        for (i, q) in self.cycle.iter().enumerate() {
            if i > 0 {
                f.write_str(" -> ")?;
            }
            match q.waiting_on {
                Some(input) => write!(
                    f,
                    "switch {} port {} (frames on port {input} wait for a flow channel)",
                    q.node, q.port
                )?,
                None => write!(f, "switch {} port {} prio {}", q.node, q.port, q.prio)?,
            }
        }
        if let Some(first) = self.cycle.first() {
            write!(f, " -> switch {} (cycle)", first.node)?;
        }
        Ok(())
    }
}

/// What one part knows of stalled queues at a check: its own switches only. Ports are
/// named by canonical index (`port_table`), so that the merged view, and the cycle found in
/// it, do not depend on how the run is split.
#[derive(Debug, Default)]
pub(crate) struct StallView {
    /// Stalled queues by (port, priority), with whether the port as a whole is paused.
    stalled: BTreeMap<(u32, u8), (StalledQueue, bool)>,
    /// `(ingress port, priority) → egress ports` of a switch where packets that arrived on
    /// that ingress port with that priority wait.
    holds: BTreeMap<(u32, u8), BTreeSet<u32>>,
    /// Stalled flow-channel waits by the input port the frames wait on and the class they
    /// arrived in (their lane there; with one lane, any of theirs).
    waits: BTreeMap<WaitKey, ChannelWait>,
    /// Every channel's output entry (output port, id on its link) → its input entry (input
    /// port, id) at the same switch; gathered by [`Simulation::channel_links`] once some
    /// wait is stalled.
    links: BTreeMap<ChannelKey, ChannelKey>,
}

/// A flow channel's entry in a switch's table, by the table's port and the id.
type ChannelKey = (u32, u16);

/// Frames waiting for a flow channel: the input port and their class on arrival.
type WaitKey = (u32, u8);

/// Frames waiting for a flow channel on one input port, as its part sees them.
#[derive(Debug)]
struct ChannelWait {
    /// What is reported of it in a cycle.
    queue: StalledQueue,
    /// Channels (input entries) of which one released lets the first frame go on.
    needs: Vec<ChannelKey>,
    /// The output entries upstream whose channels carried frames waiting here.
    holds: BTreeSet<ChannelKey>,
}

impl StallView {
    /// Adds another part's view.
    pub(crate) fn absorb(&mut self, other: StallView) {
        self.stalled.extend(other.stalled);
        for (k, v) in other.holds {
            self.holds.entry(k).or_default().extend(v);
        }
        self.waits.extend(other.waits);
        self.links.extend(other.links);
    }

    /// Whether some port's frames have waited for a flow channel for the detection time
    /// (then every part adds its channels: [`Simulation::channel_links`]).
    pub(crate) fn channel_waits(&self) -> bool {
        !self.waits.is_empty()
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
                let port = &self.ports[gp];
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
                        peer: self.ports.wire(port.peer).node,
                        bytes: port.queues[usize::from(q)].bytes,
                        paused_since: since,
                        credit: port.fc.credit().is_some(),
                        waiting_on: None,
                    };
                    view.stalled
                        .insert((self.ports.canonical(gp), q), (stalled, whole_port));
                }
            }
        }
        self.channel_waits_into(&mut view, limit);
        if view.stalled.is_empty() {
            return view;
        }
        for sw in self.switches.iter().filter(|s| self.mine(s.node)) {
            let first = sw.ports().start;
            for gp in sw.ports() {
                for q in 0..PRIORITIES {
                    for pkt in self.class_packets(gp, q) {
                        let p = self.arena.get(pkt);
                        let ingress = self.ports.canonical(first + u32::from(p.in_port));
                        view.holds
                            .entry((ingress, q as u8))
                            .or_default()
                            .insert(self.ports.canonical(gp));
                    }
                }
            }
        }
        view
    }

    /// This part's switches with their flow-channel tables (none without flow channels).
    fn own_channel_tables(&self) -> impl Iterator<Item = (&Switch, &FlowChannels)> + '_ {
        let tables = self.channels.as_deref().map(|fc| fc.tables.iter());
        self.switches
            .iter()
            .zip(tables.into_iter().flatten())
            .filter(|(sw, _)| self.mine(sw.node))
    }

    /// Adds to `view` this part's ports whose frames have waited for a flow channel since
    /// `limit` or earlier, and still wait for one.
    fn channel_waits_into(&self, view: &mut StallView, limit: Time) {
        let Some(fc) = self.channels.as_deref() else {
            return;
        };
        for (sw, table) in self.own_channel_tables() {
            let first = sw.ports().start;
            for ((pkt, out_local, since), frames) in sw.ports().flat_map(|gp| fc.waits.heads(gp)) {
                if since > limit {
                    continue;
                }
                let pk = self.arena.get(pkt);
                let gp = first + u32::from(pk.in_port);
                let port = &self.ports[gp];
                let out = first + u32::from(out_local);
                let to_host = !self.ports[out].peer_is_switch;
                let arrival = fc.arrival(port.peer_is_switch, pk, &self.cfg.flow_apps);
                let class = self.egress_class::<General>((gp, out), pk);
                let Some(blocker) = table.blocker(port.local, arrival, (out_local, to_host, class))
                else {
                    continue;
                };
                let canonical = |gp: u32| self.ports.canonical(gp);
                let (needs, on): (Vec<ChannelKey>, u16) = match blocker {
                    Blocker::OutputTable => (
                        table
                            .output_channels(out_local)
                            .map(|(_, (ip, id))| (canonical(first + u32::from(ip)), id))
                            .collect(),
                        out_local,
                    ),
                    Blocker::InputTable => (
                        table
                            .input_ids(port.local)
                            .map(|id| (canonical(gp), id))
                            .collect(),
                        port.local,
                    ),
                    Blocker::Channel(id) => {
                        let follow = table
                            .input(port.local, id)
                            .map_or(out_local, |c| c.follow_port);
                        (vec![(canonical(gp), id)], follow)
                    }
                };
                let on_gp = first + u32::from(on);
                let mut bytes = 0u32;
                let mut holds = BTreeSet::new();
                for w in frames {
                    let p = self.arena.get(w);
                    bytes = bytes.saturating_add(p.size);
                    if port.peer_is_switch {
                        holds.insert((canonical(port.peer), p.channel));
                    }
                }
                let queue = StalledQueue {
                    node: sw.node,
                    port: on,
                    prio: class,
                    peer: self.ports.wire(self.ports[on_gp].peer).node,
                    bytes,
                    paused_since: since,
                    credit: false,
                    waiting_on: Some(port.local),
                };
                view.waits.insert(
                    (canonical(gp), pk.prio),
                    ChannelWait {
                        queue,
                        needs,
                        holds,
                    },
                );
            }
        }
    }

    /// Adds to `view` the channels of this part's switches: output entry → input entry.
    pub(crate) fn channel_links(&self, view: &mut StallView) {
        for (sw, table) in self.own_channel_tables() {
            let first = sw.ports().start;
            for out in sw.ports() {
                let local = self.ports[out].local;
                for (id, (ip, in_id)) in table.output_channels(local) {
                    view.links.insert(
                        (self.ports.canonical(out), id),
                        (self.ports.canonical(first + u32::from(ip)), in_id),
                    );
                }
            }
        }
    }

    /// Canonical index of the port at the other end of the port of canonical index `port`.
    pub(crate) fn peer_port(&self, port: u32) -> u32 {
        let peer = self.ports.wire(self.ports.numbered(port)).peer;
        self.ports.canonical(peer)
    }

    /// Canonical index of the port at the other end of the port of canonical index
    /// `port`, if a switch is there.
    pub(crate) fn switch_peer_port(&self, port: u32) -> Option<u32> {
        let peer = self.ports.wire(self.ports.numbered(port)).peer;
        let node = self.ports.wire(peer).node;
        matches!(self.slots[node as usize], Slot::Switch(_)).then(|| self.ports.canonical(peer))
    }
}

/// The flow-channel deadlock in the merged `view` at `now`, if some stalled waits block
/// each other (see the module documentation); `switch_peer` maps a global port to the one
/// at the other end of its link if a switch is there.
pub(crate) fn find_channel_deadlock(
    view: &StallView,
    now: Time,
    switch_peer: impl Fn(u32) -> Option<u32>,
) -> Option<Deadlock> {
    // Which stalled waits block each channel (by its input entry): every channel upstream
    // of a waiting frame, hop by hop back to the ingress edge.
    let mut blocked_by: BTreeMap<ChannelKey, BTreeSet<WaitKey>> = BTreeMap::new();
    for (&waiting, wait) in &view.waits {
        for &held in &wait.holds {
            let mut out = Some(held);
            while let Some(entry) = out {
                let Some(&input) = view.links.get(&entry) else {
                    break;
                };
                if !blocked_by.entry(input).or_default().insert(waiting) {
                    break; // Already walked from here for this wait.
                }
                out = switch_peer(input.0).map(|up| (up, input.1));
            }
        }
    }
    // Remove waits with a channel that no remaining wait blocks, until none is left.
    let mut stuck: BTreeSet<WaitKey> = view.waits.keys().copied().collect();
    loop {
        let free: Vec<WaitKey> = stuck
            .iter()
            .copied()
            .filter(|key| {
                let needs = &view.waits[key].needs;
                needs.is_empty()
                    || needs.iter().any(|n| {
                        blocked_by
                            .get(n)
                            .is_none_or(|by| by.iter().all(|w| !stuck.contains(w)))
                    })
            })
            .collect();
        if free.is_empty() {
            break;
        }
        for key in free {
            stuck.remove(&key);
        }
    }
    let keys: Vec<WaitKey> = stuck.iter().copied().collect();
    let index: BTreeMap<WaitKey, usize> = keys.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let edges: Vec<Vec<usize>> = keys
        .iter()
        .map(|key| {
            let next: BTreeSet<usize> = view.waits[key]
                .needs
                .iter()
                .filter_map(|n| blocked_by.get(n))
                .flatten()
                .filter_map(|w| index.get(w).copied())
                .collect();
            next.into_iter().collect()
        })
        .collect();
    cycle_deadlock(&edges, now, |i| view.waits[&keys[i]].queue.clone())
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
    cycle_deadlock(&edges, now, |i| view.stalled[&keys[i]].0.clone())
}

/// The deadlock at `now` of the first cycle in the graph `edges` ([`first_cycle`]), vertex
/// `i` reported as `queue(i)`.
fn cycle_deadlock(
    edges: &[Vec<usize>],
    now: Time,
    queue: impl Fn(usize) -> StalledQueue,
) -> Option<Deadlock> {
    let cycle = first_cycle(edges)?;
    Some(Deadlock {
        detected_at: now,
        cycle: cycle.into_iter().map(queue).collect(),
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
            waiting_on: None,
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

    fn wait(node: u32, needs: &[ChannelKey], holds: &[ChannelKey]) -> ChannelWait {
        ChannelWait {
            queue: StalledQueue {
                waiting_on: Some(0),
                ..queue(node, 1, node + 1)
            },
            needs: needs.to_vec(),
            holds: holds.iter().copied().collect(),
        }
    }

    #[test]
    fn frames_waiting_for_channels_held_by_each_other_are_a_deadlock() {
        // Switches A (ports 0, 1, 6), B (2, 3, 7), C (4, 5, 8) in a ring: A.1 -> B.2,
        // B.3 -> C.4, C.5 -> A.0; ports 6-8 lead to hosts. Each switch's host sends on one
        // channel (input entry (6, 0) at A, ...) to the next switch, where its frames wait
        // for an id on the link to the third: the one there is the next host's channel.
        let switch_peer = |gp: u32| [5, 2, 1, 4, 3, 0].get(gp as usize).copied();
        let mut view = StallView::default();
        view.links.insert((1, 0), (6, 0));
        view.links.insert((3, 0), (7, 0));
        view.links.insert((5, 0), (8, 0));
        view.waits.insert((0, 3), wait(10, &[(6, 0)], &[(5, 0)]));
        view.waits.insert((2, 3), wait(11, &[(7, 0)], &[(1, 0)]));
        view.waits.insert((4, 3), wait(12, &[(8, 0)], &[(3, 0)]));
        let d = find_channel_deadlock(&view, Time::from_ms(2), switch_peer).expect("deadlock");
        let nodes: Vec<u32> = d.cycle.iter().map(|q| q.node).collect();
        assert_eq!(
            nodes,
            [10, 11, 12],
            "A waits for B's frames to go, B for C's"
        );
        assert!(
            d.to_string().starts_with("flow-channel deadlock at 2ms"),
            "{d}"
        );
        // A second channel on A.1's link whose frames wait nowhere: A goes on once it is
        // released, then C, then B: nothing is deadlocked.
        let mut freed = view;
        freed.links.insert((1, 1), (6, 1));
        freed
            .waits
            .insert((0, 3), wait(10, &[(6, 0), (6, 1)], &[(5, 0)]));
        assert_eq!(
            find_channel_deadlock(&freed, Time::from_ms(2), switch_peer),
            None
        );
    }

    #[test]
    fn a_channel_is_held_by_frames_waiting_anywhere_downstream() {
        // A chain X (ports 0: host, 1, 7) -> Y (2, 3) -> Z (4, 5, 6: host), and Z.5 -> X.7.
        // Channel k enters X from its host (input entry (0, 1)), leaves X.1 with id 2 into
        // Y, leaves Y.3 with id 5; its frames wait on Z.4 for Z.5's one id, held by Z's
        // host's channel (6, 0), whose frames wait on X.7 for X.1's one id: k's.
        let switch_peer = |gp: u32| match gp {
            1 => Some(2),
            2 => Some(1),
            3 => Some(4),
            4 => Some(3),
            5 => Some(7),
            7 => Some(5),
            _ => None,
        };
        let mut view = StallView::default();
        view.links.insert((1, 2), (0, 1));
        view.links.insert((3, 5), (2, 2));
        view.links.insert((5, 0), (6, 0));
        view.waits.insert((4, 3), wait(12, &[(6, 0)], &[(3, 5)]));
        view.waits.insert((7, 3), wait(10, &[(0, 1)], &[(5, 0)]));
        let d = find_channel_deadlock(&view, Time::ZERO, switch_peer).expect("deadlock");
        assert_eq!(d.cycle.iter().map(|q| q.node).collect::<Vec<_>>(), [12, 10]);
        // Without k's frames waiting at Z, X's wait for k is a chain's end.
        view.waits.remove(&(4, 3));
        assert_eq!(find_channel_deadlock(&view, Time::ZERO, switch_peer), None);
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
