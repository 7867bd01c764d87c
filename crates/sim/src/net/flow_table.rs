//! The flows a simulation keeps: every flow in a whole run, only those its own hosts send or
//! receive in a part of a partitioned run.
//!
//! A flow's state is touched by its two ends only: the sender's host (its NIC, its
//! congestion control, its ACKs) and the receiver's (its notification point, the bytes it
//! delivered). A part therefore builds and keeps no other flows: with a flow's record at
//! about half a kilobyte, the flows were what a further part of a large run mostly cost
//! (at k = 32, 18,246 of them). Frames and events keep naming a flow by its id (its index
//! in the flow list), as flow channels and results do, and the table finds it: in a whole
//! run its id is its index, in a part an index table of four bytes per flow maps one to the
//! other.
//!
//! Invariants: the table holds exactly the flows whose source or destination is one of its
//! nodes, in id order; indexing a flow it does not hold panics, since a part never acts on
//! another part's flows; each held flow's NIC slot is its index in its sender's active list
//! while it is active there, and [`NOT_ACTIVE`] otherwise.

use super::host::{Flow, NOT_ACTIVE};
use std::ops::{Index, IndexMut};

/// `FlowTable::index` of a flow the table does not hold.
const NOT_HELD: u32 = u32::MAX;

/// The flows of a simulation, indexed by flow id (see the module).
#[derive(Debug)]
pub(super) struct FlowTable {
    /// The flows held, in id order.
    held: Vec<Flow>,
    /// In a part of a partitioned run, per flow id: its index in `held`, or [`NOT_HELD`].
    /// Empty in a whole run, where a flow's id is its index.
    index: Box<[u32]>,
    /// Per flow held: its index in its NIC's active list, or [`NOT_ACTIVE`].
    nic_slot: Vec<u32>,
}

impl FlowTable {
    /// The table of a run of `total` flows holding `held` (in id order): all of them in a
    /// whole run, the ones a part's hosts send or receive in a part.
    pub(super) fn new(held: Vec<Flow>, total: usize) -> Self {
        debug_assert!(held.windows(2).all(|w| w[0].id < w[1].id));
        let whole = held.len() == total;
        debug_assert!(!whole || held.iter().enumerate().all(|(i, f)| f.id as usize == i));
        let index = if whole {
            Box::default()
        } else {
            let mut index = vec![NOT_HELD; total].into_boxed_slice();
            for (i, f) in held.iter().enumerate() {
                index[f.id as usize] = i as u32;
            }
            index
        };
        FlowTable {
            nic_slot: vec![NOT_ACTIVE; held.len()],
            held,
            index,
        }
    }

    /// Where flow `id` is among the held flows (past their end if it is not held).
    #[inline(always)]
    fn slot(&self, id: u32) -> usize {
        if self.index.is_empty() {
            id as usize
        } else {
            self.index
                .get(id as usize)
                .map_or(usize::MAX, |&i| i as usize)
        }
    }

    /// The flows held, in id order.
    pub(super) fn iter(&self) -> std::slice::Iter<'_, Flow> {
        self.held.iter()
    }

    /// The flows held, in id order, to update.
    pub(super) fn iter_mut(&mut self) -> std::slice::IterMut<'_, Flow> {
        self.held.iter_mut()
    }

    /// Held flow `id` and its index in its NIC's active list (or [`NOT_ACTIVE`]), found
    /// once.
    #[inline]
    pub(super) fn with_nic_slot(&self, id: u32) -> (&Flow, u32) {
        let i = self.slot(id);
        (&self.held[i], self.nic_slot[i])
    }

    /// Held flow `id`'s NIC slot, to update.
    #[inline]
    pub(super) fn nic_slot_mut(&mut self, id: u32) -> &mut u32 {
        let i = self.slot(id);
        &mut self.nic_slot[i]
    }
}

impl Index<u32> for FlowTable {
    type Output = Flow;

    #[inline(always)]
    fn index(&self, id: u32) -> &Flow {
        &self.held[self.slot(id)]
    }
}

impl IndexMut<u32> for FlowTable {
    #[inline(always)]
    fn index_mut(&mut self, id: u32) -> &mut Flow {
        let i = self.slot(id);
        &mut self.held[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::NodeId;
    use crate::workload::FlowSpec;
    use headroom_mech::units::{Rate, Time};

    fn flow(id: u32) -> Flow {
        let spec = FlowSpec {
            src: NodeId(0),
            dst: NodeId(1),
            prio: 3,
            size: 1000,
            start: Time::ZERO,
            dport: 100,
        };
        Flow::new(id, &spec, 0, 10_000, (1, 2), Rate::from_gbps(100))
    }

    #[test]
    fn a_whole_run_finds_a_flow_at_its_id() {
        let t = FlowTable::new((0..4).map(flow).collect(), 4);
        assert!(t.index.is_empty());
        assert_eq!(t.held.len(), 4);
        assert!((0..4).all(|id| t[id].id == id));
        assert!(t.slot(4) >= t.held.len());
    }

    #[test]
    fn a_part_finds_the_flows_it_holds_and_no_others() {
        let mut t = FlowTable::new([1, 4, 6].into_iter().map(flow).collect(), 8);
        assert_eq!(t.held.len(), 3);
        for id in [1, 4, 6] {
            assert_eq!(t[id].id, id);
            assert_eq!(t.with_nic_slot(id).1, NOT_ACTIVE);
        }
        for id in [0, 2, 3, 5, 7, 8, 100] {
            assert!(t.slot(id) >= t.held.len(), "flow {id} is not held");
        }
        *t.nic_slot_mut(4) = 2;
        let slots = [1, 4, 6].map(|id| t.with_nic_slot(id).1);
        assert_eq!(slots, [NOT_ACTIVE, 2, NOT_ACTIVE]);
        t[6].retransmitted = 7;
        assert_eq!(
            t.iter().map(|f| f.retransmitted).collect::<Vec<_>>(),
            [0, 0, 7]
        );
    }

    #[test]
    #[should_panic]
    fn indexing_a_flow_of_another_part_panics() {
        let t = FlowTable::new([1, 4].into_iter().map(flow).collect(), 8);
        let _ = &t[2];
    }
}
