//! The ports a simulation keeps: every port in a whole run, only its own nodes' in a part of
//! a partitioned run.
//!
//! A part acts only on its own nodes' ports (see [`super::parallel`]), so it builds and
//! keeps no others: with a port of over a kilobyte, the ports were most of what a second
//! part cost. What a part must still know of another part's port (its node, its index
//! there, its peer, its link, its rate and delay) comes from the wiring, which the table
//! keeps for every port.
//!
//! Ports are numbered node by node, each node's in link order. A whole run numbers the
//! nodes in id order: that numbering is a port's *canonical* index, which names it wherever
//! order matters (event keys, random streams, results, deadlock reports). A partitioned run
//! numbers the nodes part by part (each part's in id order), so that a part's own ports are
//! one run of numbers and a port is found by one subtraction, as fast as in a whole run.
//! Within one part the two numberings keep the same order.
//!
//! Invariants: the table holds exactly the ports `base..base + held.len()`; indexing a port
//! it does not hold panics, since a part never acts on another part's port; the wiring and
//! both numberings never change.

use super::port::Port;
use crate::engine::CreatorCount;
use headroom_mech::units::{Rate, Time};
use std::ops::{Index, IndexMut};

/// What any part knows of a port: fixed when the network is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Wire {
    /// Node owning the port.
    pub node: u32,
    /// Index of the port at the other end.
    pub peer: u32,
    /// The port's link (an index into the topology's links).
    pub link: u32,
    /// Index among the node's ports.
    pub local: u16,
    /// Link rate.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Time,
}

/// The ports of a simulation, indexed by port number (see the module).
#[derive(Debug)]
pub(super) struct PortTable {
    /// The ports held: numbers `base..base + held.len()`.
    held: Vec<Port>,
    /// Number of the first port held.
    base: u32,
    /// Per port number: its wiring.
    wiring: Box<[Wire]>,
    /// Per node: the number of its first port.
    first: Box<[u32]>,
    /// Per node: the canonical index of its first port (increasing with the node id).
    canonical_first: Box<[u32]>,
}

impl PortTable {
    /// The table of a network wired as `wiring` (every port, by number), whose nodes' first
    /// ports have the numbers `first` and the canonical indices `canonical_first`, holding
    /// `held`: the ports numbered from `base`. Each held port is named by its canonical index
    /// in the tie-break keys of the events it creates (`Port::count`).
    pub(super) fn new(
        held: Vec<Port>,
        base: u32,
        wiring: Vec<Wire>,
        (first, canonical_first): (Vec<u32>, Vec<u32>),
    ) -> Self {
        debug_assert!(held.iter().zip(&wiring[base as usize..]).all(|(p, w)| (
            p.node, p.local, p.peer
        ) == (
            w.node, w.local, w.peer
        )));
        debug_assert!(canonical_first.windows(2).all(|w| w[0] <= w[1]));
        let mut table = PortTable {
            held,
            base,
            wiring: wiring.into_boxed_slice(),
            first: first.into_boxed_slice(),
            canonical_first: canonical_first.into_boxed_slice(),
        };
        for p in table.held_numbers() {
            table[p].count = CreatorCount::new(table.canonical(p));
        }
        table
    }

    /// Ports of the whole network (held or not).
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.wiring.len()
    }

    /// The wiring of port `port`, held or not.
    #[inline]
    pub(super) fn wire(&self, port: u32) -> &Wire {
        &self.wiring[port as usize]
    }

    /// The canonical index of port `port` (a whole run's number for it).
    pub(super) fn canonical(&self, port: u32) -> u32 {
        let w = &self.wiring[port as usize];
        self.canonical_first[w.node as usize] + u32::from(w.local)
    }

    /// The number of the port whose canonical index is `canonical` (the inverse of
    /// [`PortTable::canonical`]).
    pub(super) fn numbered(&self, canonical: u32) -> u32 {
        // The last node whose first port is at or before it: nodes without ports share
        // their first index with the next node, which is the one that has the port.
        let node = self.canonical_first.partition_point(|&f| f <= canonical) - 1;
        // A node's ports are numbered consecutively in both numberings.
        self.first[node] + (canonical - self.canonical_first[node])
    }

    /// Where held port `port` is in a side table kept per port held, in number order (such
    /// a table has no entry for another part's port, and indexing it with one panics or,
    /// past the end of the part's own, finds nothing).
    #[inline(always)]
    pub(super) fn held_index(&self, port: u32) -> usize {
        port.wrapping_sub(self.base) as usize
    }

    /// [`PortTable::held_index`] of `port` if the table holds it.
    pub(super) fn held_slot(&self, port: u32) -> Option<usize> {
        let i = self.held_index(port);
        (i < self.held.len()).then_some(i)
    }

    /// The numbers of the ports held.
    pub(super) fn held_numbers(&self) -> std::ops::Range<u32> {
        self.base..self.base + self.held.len() as u32
    }

    /// Port `port`, if the table holds it.
    pub(super) fn get(&self, port: u32) -> Option<&Port> {
        self.held.get(self.held_index(port))
    }

    /// Where port `port` is, if the table holds it (an address past the held ports
    /// otherwise): for a prefetch, which needs no bounds check (`prefetch_address`).
    #[inline(always)]
    pub(super) fn address(&self, port: u32) -> *const Port {
        self.held.as_ptr().wrapping_add(self.held_index(port))
    }

    /// Port `port`, to update, if the table holds it.
    #[inline(always)]
    pub(super) fn get_mut(&mut self, port: u32) -> Option<&mut Port> {
        let i = self.held_index(port);
        self.held.get_mut(i)
    }

    /// The ports held, with their numbers, in number order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, &Port)> {
        self.held_numbers().zip(&self.held)
    }
}

impl Index<u32> for PortTable {
    type Output = Port;

    /// Port `port`. Panics if the table does not hold it.
    #[inline(always)]
    fn index(&self, port: u32) -> &Port {
        &self.held[self.held_index(port)]
    }
}

impl IndexMut<u32> for PortTable {
    /// Port `port`, to update. Panics if the table does not hold it.
    #[inline(always)]
    fn index_mut(&mut self, port: u32) -> &mut Port {
        let i = self.held_index(port);
        &mut self.held[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_mech::units::{Rate, Time};

    /// Ports of nodes 0, 1 and 2 (one, two and three ports), the nodes in parts
    /// `node_part`; the table of part `part`. Port `g` and its peer are `g ^ 1` canonically.
    fn table(node_part: [u16; 3], part: u16) -> PortTable {
        let (rate, delay) = (Rate::from_gbps(100), Time::from_us(1));
        let sizes = [1u32, 2, 3];
        let canonical_first = vec![0, 1, 3];
        let mut order: Vec<usize> = (0..3).collect();
        order.sort_by_key(|&n| (node_part[n], n));
        let mut first = vec![0u32; 3];
        let mut next = 0;
        for &n in &order {
            first[n] = next;
            next += sizes[n];
        }
        let number = |c: u32| {
            let n = canonical_first.iter().rposition(|&f| f <= c).unwrap_or(0);
            first[n] + c - canonical_first[n]
        };
        let mut wiring = Vec::new();
        for &n in &order {
            for local in 0..sizes[n] {
                let c = canonical_first[n] + local;
                wiring.push(Wire {
                    node: n as u32,
                    peer: number(c ^ 1),
                    link: c / 2,
                    local: local as u16,
                    rate,
                    delay,
                });
            }
        }
        let base = order
            .iter()
            .take_while(|&&n| node_part[n] < part)
            .map(|&n| sizes[n])
            .sum();
        let held = wiring
            .iter()
            .filter(|w| node_part[w.node as usize] == part)
            .map(|w| Port::new(w.node, w.local, w.peer, rate, delay, 0.0))
            .collect();
        PortTable::new(held, base, wiring, (first, canonical_first))
    }

    #[test]
    fn a_part_numbers_its_own_ports_in_one_run() {
        // Node 1 is in part 1, nodes 0 and 2 in part 0: part 0 numbers node 0's port 0 and
        // node 2's ports 1-3, part 1 node 1's ports 4-5.
        let mut t = table([0, 1, 0], 1);
        assert_eq!(t.len(), 6);
        let held: Vec<(u32, u32, u16)> = t.iter().map(|(g, p)| (g, p.node, p.local)).collect();
        assert_eq!(held, [(4, 1, 0), (5, 1, 1)]);
        assert_eq!(t.held_numbers(), 4..6);
        assert_eq!((t.held_slot(4), t.held_slot(5)), (Some(0), Some(1)));
        assert_eq!((t.held_slot(3), t.held_slot(6)), (None, None));
        assert!(t.get(3).is_none() && t.get(0).is_none() && t.get(6).is_none());
        t[5].tx_frames = 7;
        assert_eq!(t.get(5).map(|p| p.tx_frames), Some(7));
        // Another part's port is known by its wiring.
        assert_eq!((t.wire(1).node, t.wire(1).local), (2, 0));
    }

    #[test]
    fn canonical_indices_are_a_whole_runs_numbers() {
        let whole = table([0, 0, 0], 0);
        let split = table([0, 1, 0], 0);
        for t in [&whole, &split] {
            for g in 0..t.len() as u32 {
                let c = t.canonical(g);
                assert_eq!(t.numbered(c), g);
                // The peer of canonical port c is canonical port c ^ 1, in both numberings.
                assert_eq!(t.canonical(t.wire(g).peer), c ^ 1);
                let w = whole.wire(c);
                assert_eq!((w.node, w.local), (t.wire(g).node, t.wire(g).local));
            }
        }
        assert_eq!(
            (0..6).map(|g| whole.canonical(g)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(
            (0..6).map(|g| split.canonical(g)).collect::<Vec<_>>(),
            [0, 3, 4, 5, 1, 2]
        );
    }

    #[test]
    fn a_wire_is_half_a_line() {
        // What every part keeps of every port of the network.
        assert_eq!(std::mem::size_of::<Wire>(), 32);
    }

    #[test]
    #[should_panic]
    fn a_port_of_another_part_is_not_there() {
        let t = table([0, 1, 0], 0);
        let _ = &t[4];
    }
}
