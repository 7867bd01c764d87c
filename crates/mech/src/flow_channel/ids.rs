//! The ids of one port's flow-channel table: handed out lowest free first (an input from a
//! host, an output), or taken as the upstream switch picked them (an input from a switch),
//! with the highest ids kept one for each reserved class.
//!
//! Invariants: the free list holds each id at most once, and only shared ids handed out and
//! not in use, so it never grows past the table's size; a reserved id is in use exactly
//! when its bit is marked.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The ids of one port's table. A port's ids are either handed out here, lowest free first
/// (an input from a host, an output), or taken as the upstream switch picked them (an
/// input from a switch).
///
/// Invariant: `free` holds each id at most once, and only ids not in use, so it never
/// grows past `size`.
#[derive(Clone, Debug)]
pub(super) struct Ids<T> {
    /// Per id, its entry (`None`: free); as long as the highest id used so far.
    pub(super) entries: Vec<Option<T>>,
    /// Ids released, to hand out again (lowest first); kept only by a table that hands
    /// ids out.
    free: BinaryHeap<Reverse<u16>>,
    hands_out: bool,
    used: usize,
    size: u16,
    /// Ids from this one up are kept for reserved classes (`size` if none), one each.
    shared: u16,
    /// Shared ids handed out at least once: `0..fresh`.
    fresh: u16,
    /// Bit `r`: the `r`-th reserved id (`size - 1 - r`) is in use.
    reserved_used: u8,
}

impl<T> Ids<T> {
    pub(super) fn new(size: u16) -> Self {
        Ids::with_reserved(size, 0)
    }

    /// A table of `size` ids whose highest `reserved` are kept, one for each reserved
    /// class.
    pub(super) fn with_reserved(size: u16, reserved: u16) -> Self {
        Ids {
            entries: Vec::new(),
            free: BinaryHeap::new(),
            hands_out: false,
            used: 0,
            size,
            shared: size.saturating_sub(reserved),
            fresh: 0,
            reserved_used: 0,
        }
    }

    /// Whether a shared id is free.
    pub(super) fn shared_room(&self) -> bool {
        let reserved_in_use = self.reserved_used.count_ones() as usize;
        self.used - reserved_in_use < usize::from(self.shared)
    }

    /// Whether a channel whose class keeps the `rank`-th reserved id (`None`: none) could
    /// get an id now.
    pub(super) fn has_room(&self, rank: Option<u16>) -> bool {
        self.shared_room() || rank.is_some_and(|r| self.reserved_used & (1 << r) == 0)
    }

    /// A free id for `entry`: a shared one, else the `rank`-th reserved one if the
    /// channel's class keeps one and it is free.
    pub(super) fn allocate_for(&mut self, entry: T, rank: Option<u16>) -> Option<u16> {
        if self.shared_room() {
            return self.allocate(entry);
        }
        let r = rank.filter(|&r| self.reserved_used & (1 << r) == 0)?;
        let id = self.size - 1 - r;
        self.hands_out = true;
        self.put(id, entry);
        self.reserved_used |= 1 << r;
        Some(id)
    }

    /// Stores `entry` at the unused id `id`, growing the table to hold it.
    pub(super) fn put(&mut self, id: u16, entry: T) {
        let i = usize::from(id);
        if self.entries.len() <= i {
            self.entries.resize_with(i + 1, || None);
        }
        debug_assert!(self.entries[i].is_none());
        self.entries[i] = Some(entry);
        self.used += 1;
    }

    /// A free id for `entry`, or `None` if all `size` are in use. The table grows as ids
    /// are first used, never past `size`.
    pub(super) fn allocate(&mut self, entry: T) -> Option<u16> {
        debug_assert!(
            self.hands_out || self.used == 0,
            "a table takes ids or gives them"
        );
        self.hands_out = true;
        let id = match self.free.pop() {
            Some(Reverse(id)) => id,
            None if self.fresh < self.shared => {
                self.fresh += 1;
                self.fresh - 1
            }
            None => return None,
        };
        self.put(id, entry);
        Some(id)
    }

    /// Takes id `id` (below `size`, not in use) for `entry`.
    pub(super) fn occupy(&mut self, id: u16, entry: T) {
        debug_assert!(!self.hands_out, "a table takes ids or gives them");
        self.put(id, entry);
    }

    pub(super) fn release(&mut self, id: u16) {
        if let Some(e) = self.entries.get_mut(usize::from(id)) {
            if e.take().is_some() {
                self.used -= 1;
                // A table that takes ids keeps no free list.
                if self.hands_out {
                    if id >= self.shared {
                        self.reserved_used &= !(1 << (self.size - 1 - id));
                    } else {
                        self.free.push(Reverse(id));
                    }
                }
            }
        }
    }

    pub(super) fn get_mut(&mut self, id: u16) -> Option<&mut T> {
        self.entries.get_mut(usize::from(id))?.as_mut()
    }

    pub(super) fn in_use(&self) -> usize {
        self.used
    }

    /// The ids in use, in order, with their entries.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u16, &T)> {
        self.entries
            .iter()
            .enumerate()
            // Ids are below the table size, a `u16`.
            .filter_map(|(id, e)| e.as_ref().map(|e| (id as u16, e)))
    }

    /// The free list's invariant: every shared id handed out and not in use is in it
    /// exactly once; the reserved ids in use are those marked.
    pub(super) fn check_free(&self) -> bool {
        let reserved = self.reserved_used.count_ones() as usize;
        let marked = (self.shared..self.size)
            .filter(|&id| self.reserved_used & (1 << (self.size - 1 - id)) != 0)
            .all(|id| matches!(self.entries.get(usize::from(id)), Some(Some(_))));
        !self.hands_out
            || (self.free.len() + self.used - reserved == usize::from(self.fresh) && marked)
    }
}
