//! Packets and the arena that holds them.
//!
//! Invariants: a packet lives in the arena from the moment it is created (by a host or as a
//! PFC frame) until it is consumed (delivered, dropped); its index is stable meanwhile.
//! Freed slots are reused, so after warm-up the arena does not allocate.

use headroom_mech::buffer::{Placement, Region};
use headroom_mech::units::Time;

/// What a frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A slot not in use.
    Free,
    /// Flow data.
    Data,
    /// Cumulative acknowledgement (`seq` = next expected byte).
    Ack,
    /// Go-back-N negative acknowledgement (`seq` = next expected byte).
    Nack,
    /// Congestion notification packet (DCQCN).
    Cnp,
    /// PFC frame (`prio` = class, `seq` = timer in quanta).
    Pfc,
}

/// One frame. Aligned to a cache line (its fields fit in 64 bytes), so that touching a
/// packet in the arena costs one line, not two.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub struct Packet {
    /// What it is.
    pub kind: Kind,
    /// Priority (traffic class).
    pub prio: u8,
    /// ECN Congestion Experienced.
    pub ce: bool,
    /// Local ingress port at the switch currently holding it.
    pub in_port: u16,
    /// Flow it belongs to (unused for PFC).
    pub flow: u32,
    /// Frame size in bytes, without preamble and inter-frame gap.
    pub size: u32,
    /// Payload bytes (data only).
    pub payload: u32,
    /// Data: byte offset; ACK/NACK: next expected byte; PFC: timer.
    pub seq: u64,
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Routing hash.
    pub hash: u64,
    /// Where the current switch's MMU counted it.
    pub placement: Placement,
    /// At a switch: when its last bit has been received (it may leave no earlier).
    pub ready_at: Time,
}

impl Packet {
    /// A packet of `kind` with everything else zero.
    pub fn new(kind: Kind) -> Self {
        Packet {
            kind,
            prio: 0,
            ce: false,
            in_port: 0,
            flow: 0,
            size: 0,
            payload: 0,
            seq: 0,
            src: 0,
            dst: 0,
            hash: 0,
            placement: Placement {
                region: Region::Private,
                cells: 0,
            },
            ready_at: Time::ZERO,
        }
    }
}

/// Index-addressed packet storage with a free list.
#[derive(Debug, Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl Arena {
    /// Stores `p`, returning its index.
    pub fn alloc(&mut self, p: Packet) -> u32 {
        debug_assert!(p.kind != Kind::Free);
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as u32
        }
    }

    /// Releases slot `i`.
    pub fn free(&mut self, i: u32) {
        debug_assert!(
            self.slots[i as usize].kind != Kind::Free,
            "double free of packet {i}"
        );
        self.slots[i as usize].kind = Kind::Free;
        self.free.push(i);
    }

    /// The packet at `i`.
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i as usize]
    }

    /// The packet at `i`, mutably.
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.slots[i as usize]
    }

    /// Packets currently alive.
    pub fn live(&self) -> impl Iterator<Item = &Packet> {
        self.slots.iter().filter(|p| p.kind != Kind::Free)
    }

    /// Slots ever allocated (the arena's high-water mark).
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<super::Packet>(), 64);
    }
}
