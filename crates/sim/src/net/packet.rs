//! Packets and the arena that holds them.
//!
//! Invariants: a packet lives in the arena from the moment it is created (by a host or as a
//! PFC frame) until it is consumed (delivered, dropped); its index is stable meanwhile.
//! Freed slots are reused, so after warm-up the arena does not allocate. A packet is in at
//! most one [`Fifo`] at a time (the queues are linked through `Packet::next`).
//!
//! INT hop records (HPCC) do not fit the 64-byte packet: when a run uses them, the arena
//! keeps an [`IntStack`] per slot beside the packets, emptied whenever the slot is reused.

use headroom_mech::buffer::{Placement, Region};
use headroom_mech::ecn::Mark;
use headroom_mech::int::IntStack;
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
    /// Credit flow-control packet (`prio` = VL, `seq` = FCTBS << 16 | FCCL).
    Fcp,
    /// Flow-channel ACK frame, hop by hop towards the sources (`payload` = how many ACKs it
    /// carries; they wait for it at the port it goes to, in `net::ack_frames`).
    ChannelAck,
    /// Fine-grained flow control frame from an ingress edge switch to a host (`flow` and
    /// `dst` name the source, `seq` = pause in picoseconds, `hash` = credit in bytes).
    Fgfc,
}

impl Kind {
    /// A frame of the link's own flow control: never held by it, never counted in a
    /// buffer, never dropped by congestion.
    #[inline]
    pub fn is_link_control(self) -> bool {
        matches!(self, Kind::Pfc | Kind::Fcp | Kind::ChannelAck | Kind::Fgfc)
    }
}

/// One frame. Aligned to a cache line (its fields fit in 64 bytes), so that touching a
/// packet in the arena costs one line, not two.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub struct Packet {
    /// What it is.
    pub kind: Kind,
    /// The class it travels in on its current hop and arrived in at the switch holding it
    /// (its ingress priority group there): the priority on PFC links, the VL on credit
    /// links (its service level mapped by the sending port's SL → VL table).
    pub prio: u8,
    /// Service level (its traffic class end to end, as the host set it): a switch maps it
    /// to the egress queue (`prio` of the next hop). Equal to `prio` on PFC links.
    pub sl: u8,
    /// Congestion mark (ECN): data on the way, echoed on ACKs.
    pub mark: Mark,
    /// Local ingress port at the switch currently holding it.
    pub in_port: u16,
    /// Flow-channel fabric, data: on a link, the id of its channel there; at a switch, the
    /// id of its channel on the input port (`in_port`).
    pub channel: u16,
    /// Flow it belongs to (unused for PFC).
    pub flow: u32,
    /// Frame size in bytes, without preamble and inter-frame gap.
    pub size: u32,
    /// Data: payload bytes; PFC: the classes it pauses; FCP: the egress its sender blamed
    /// when the VL buffer last filled; flow-channel ACK frame: its ACKs.
    pub payload: u32,
    /// Data: byte offset; ACK/NACK: next expected byte; PFC: timer.
    pub seq: u64,
    /// Source node.
    pub src: u32,
    /// Destination node.
    pub dst: u32,
    /// Routing hash.
    pub hash: u64,
    /// Where the current switch's MMU counted it: the region ([`Packet::placement`]; kept
    /// apart from the cells so that the fields fit 64 bytes with `via` beside them).
    region: Region,
    /// Where the current switch's MMU counted it: the cells.
    cells: u32,
    /// Non-minimal (UGAL) routing: the intermediate switch it is on its way to, as an
    /// index into the run's list of them ([`NO_VIA`]: none, or already passed).
    pub via: u16,
    /// At a switch: when its last bit has been received (it may leave no earlier).
    pub ready_at: Time,
    /// The packet behind it in its [`Fifo`] (`NIL`: none).
    next: u32,
}

impl Packet {
    /// A packet of `kind` with everything else zero.
    pub fn new(kind: Kind) -> Self {
        Packet {
            kind,
            prio: 0,
            sl: 0,
            mark: Mark::None,
            in_port: 0,
            channel: 0,
            flow: 0,
            size: 0,
            payload: 0,
            seq: 0,
            src: 0,
            dst: 0,
            hash: 0,
            region: Region::Private,
            cells: 0,
            via: NO_VIA,
            ready_at: Time::ZERO,
            next: NIL,
        }
    }
}

impl Packet {
    /// Where the current switch's MMU counted it.
    #[inline(always)]
    pub fn placement(&self) -> Placement {
        Placement {
            region: self.region,
            cells: self.cells,
        }
    }

    /// Records where the current switch's MMU counted it.
    #[inline(always)]
    pub fn set_placement(&mut self, p: Placement) {
        self.region = p.region;
        self.cells = p.cells;
    }
}

/// `Packet::via` of a packet on a minimal path.
pub const NO_VIA: u16 = u16::MAX;

/// No packet.
const NIL: u32 = u32::MAX;

/// A FIFO queue of packets linked through the arena (`Packet::next`): eight bytes per queue,
/// so a port's queues share one cache line, and queueing a packet touches only packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fifo {
    head: u32,
    tail: u32,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            head: NIL,
            tail: NIL,
        }
    }
}

impl Fifo {
    /// Whether no packet is queued.
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// The first packet.
    pub fn front(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    /// Appends `pkt` (which is in no queue).
    pub fn push_back(&mut self, arena: &mut Arena, pkt: u32) {
        arena.get_mut(pkt).next = NIL;
        if self.tail == NIL {
            self.head = pkt;
        } else {
            arena.get_mut(self.tail).next = pkt;
        }
        self.tail = pkt;
    }

    /// Removes and returns the first packet.
    pub fn pop_front(&mut self, arena: &Arena) -> Option<u32> {
        let head = self.front()?;
        self.head = arena.get(head).next;
        if self.head == NIL {
            self.tail = NIL;
        }
        Some(head)
    }

    /// The queued packets, first to last.
    pub fn iter<'a>(&self, arena: &'a Arena) -> impl Iterator<Item = u32> + 'a {
        let mut at = self.head;
        std::iter::from_fn(move || {
            let here = (at != NIL).then_some(at)?;
            at = arena.get(here).next;
            Some(here)
        })
    }

    /// Unlinks every packet for which `remove` holds and returns them in queue order.
    pub fn remove_where(
        &mut self,
        arena: &mut Arena,
        mut remove: impl FnMut(&Packet) -> bool,
    ) -> Vec<u32> {
        let all: Vec<u32> = self.iter(arena).collect();
        *self = Fifo::default();
        let mut removed = Vec::new();
        for pkt in all {
            if remove(arena.get(pkt)) {
                removed.push(pkt);
            } else {
                self.push_back(arena, pkt);
            }
        }
        removed
    }
}

/// Index-addressed packet storage with a free list.
#[derive(Debug, Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// Per slot, its packet's INT hop records (empty unless [`Arena::with_int`]).
    int: Vec<IntStack>,
    with_int: bool,
}

impl Arena {
    /// An arena that keeps an INT stack per packet.
    pub fn with_int() -> Self {
        Arena {
            with_int: true,
            ..Arena::default()
        }
    }

    /// The packets to reserve for a network whose switches buffer `buffer_bytes` in all and
    /// which has `ports` ports: one per KiB of switch buffer plus 64 per port (frames on the
    /// wire, control frames), between 4,096 and 2^20 (64 MiB of address space).
    pub fn reservation(buffer_bytes: u64, ports: usize) -> usize {
        let per_port = u64::try_from(ports).unwrap_or(u64::MAX).saturating_mul(64);
        let packets = (buffer_bytes / 1024).saturating_add(per_port);
        packets.clamp(1 << 12, 1 << 20) as usize
    }

    /// Reserves address space for `slots` packets without touching it.
    ///
    /// Growing by doubling would copy the packets into a new block while the old one is
    /// still held (over-aligned blocks are never moved in place), a transient of three times
    /// the arena's size in resident memory. Address space reserved up front is resident only
    /// once packets are written to it. A reservation the system refuses is skipped: the
    /// arena then grows by doubling.
    pub fn reserve(&mut self, slots: usize) {
        if self.slots.try_reserve_exact(slots).is_err() {
            return;
        }
        let _ = self.free.try_reserve_exact(slots);
        if self.with_int {
            let _ = self.int.try_reserve_exact(slots);
        }
    }

    /// Whether packets carry INT stacks.
    pub fn has_int(&self) -> bool {
        self.with_int
    }

    /// Stores `p`, returning its index (with an empty INT stack).
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        debug_assert!(p.kind != Kind::Free);
        let i = if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as u32
        };
        if self.with_int {
            self.empty_int(i);
        }
        i
    }

    /// Empties (or creates) the INT stack of slot `i`; out of line, so that runs without
    /// INT pay one branch per packet.
    #[inline(never)]
    fn empty_int(&mut self, i: u32) {
        match self.int.get_mut(i as usize) {
            Some(stack) => *stack = IntStack::EMPTY,
            None => self.int.push(IntStack::EMPTY),
        }
    }

    /// The INT stack of packet `i` (`None` without INT).
    pub fn int(&self, i: u32) -> Option<&IntStack> {
        self.int.get(i as usize)
    }

    /// The INT stack of packet `i`, mutably (`None` without INT).
    pub fn int_mut(&mut self, i: u32) -> Option<&mut IntStack> {
        self.int.get_mut(i as usize)
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

    /// Where the packet at `i` is (or would be): for a prefetch, which needs no bounds check
    /// (`net::prefetch_address`).
    #[inline(always)]
    pub fn address(&self, i: u32) -> *const Packet {
        self.slots.as_ptr().wrapping_add(i as usize)
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
    use super::*;

    #[test]
    fn packet_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Packet>(), 64);
    }

    /// A reserved arena never moves its packets while it stays within the reservation; the
    /// reservation grows with the switches' buffers and ports, within its bounds.
    #[test]
    fn a_reserved_arena_does_not_move() {
        assert_eq!(Arena::reservation(0, 1), 1 << 12);
        assert_eq!(Arena::reservation(32 << 20, 100), 32 * 1024 + 6400);
        assert_eq!(Arena::reservation(u64::MAX, usize::MAX), 1 << 20);
        let mut arena = Arena::with_int();
        arena.reserve(10_000);
        let first = arena.alloc(Packet::new(Kind::Data));
        let at = std::ptr::from_ref(arena.get(first));
        for _ in 1..10_000 {
            arena.alloc(Packet::new(Kind::Ack));
        }
        assert!(
            std::ptr::eq(at, arena.get(first)),
            "moved within the reservation"
        );
        assert_eq!(arena.capacity_used(), 10_000);
        assert!(arena.int(9_999).is_some());
    }

    #[test]
    fn fifo_keeps_order_and_unlinks() {
        let mut arena = Arena::default();
        let mut q = Fifo::default();
        assert!(q.is_empty() && q.front().is_none());
        let pkts: Vec<u32> = (0..5)
            .map(|i| {
                let mut p = Packet::new(Kind::Data);
                p.seq = i;
                arena.alloc(p)
            })
            .collect();
        for &p in &pkts {
            q.push_back(&mut arena, p);
        }
        assert_eq!(q.iter(&arena).collect::<Vec<_>>(), pkts);
        let odd = q.remove_where(&mut arena, |p| p.seq % 2 == 1);
        assert_eq!(odd, vec![pkts[1], pkts[3]]);
        assert_eq!(q.pop_front(&arena), Some(pkts[0]));
        assert_eq!(q.pop_front(&arena), Some(pkts[2]));
        // A packet popped and queued again goes to the back.
        q.push_back(&mut arena, pkts[1]);
        assert_eq!(q.iter(&arena).collect::<Vec<_>>(), vec![pkts[4], pkts[1]]);
        assert_eq!(q.pop_front(&arena), Some(pkts[4]));
        assert_eq!(q.pop_front(&arena), Some(pkts[1]));
        assert_eq!(q.pop_front(&arena), None);
        assert!(q.is_empty());
    }
}
