//! The discrete-event core: events and the queue that orders them.
//!
//! Invariants:
//! - Events are totally ordered by `(time, key)`. At equal times a port's wake-up (the end
//!   of a transmission, where a switch releases buffer) comes before any arrival; beyond
//!   that the key names who scheduled the event (its *creator*: a port, or the run itself)
//!   and how many events that creator had scheduled before ([`tiebreak`]). A creator belongs to one node and only that node's
//!   events advance its count, so the order of events at equal times depends on what each
//!   node did, not on the order in which a process happened to run different nodes: a run
//!   split into partitions that advance separately orders every event as a single queue
//!   would (see `net::parallel`).
//! - An event is a small `Copy` enum (12 bytes), packed into one word in the calendar queue
//!   (`packed`); packets are referred to by arena index.
//! - The queue is behind the [`EventQueue`] trait so another structure (calendar queue,
//!   ladder queue) can replace the binary heap; `benches/event_queue.rs` measures it.

use headroom_mech::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

mod bucket_sort;
mod packed;
use bucket_sort::sort_descending;
pub use packed::PackedEvent;

/// Something that happens at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The first bit of a frame (not a PFC frame) reaches a switch port: the switch routes
    /// and admits it now, and may forward it once its last bit is in (`Packet::ready_at`).
    FrameStart {
        /// Global index of the receiving port.
        port: u32,
        /// Packet arena index.
        pkt: u32,
    },
    /// A frame has been fully received by a port (a host's, or a PFC frame at any port).
    Arrive {
        /// Global index of the receiving port.
        port: u32,
        /// Packet arena index.
        pkt: u32,
    },
    /// A port should retry transmission: its frame finished serializing, a pause expired, or
    /// pacing allows a packet.
    Wake {
        /// Global port index.
        port: u32,
    },
    /// A flow starts sending.
    FlowStart {
        /// Flow index.
        flow: u32,
    },
    /// A PAUSE refresh may be due on an ingress (port, priority).
    PfcRefresh {
        /// Global port index of the ingress port.
        port: u32,
        /// Priority.
        prio: u8,
    },
    /// The flow's congestion-control timer may be due.
    CcTimer {
        /// Flow index.
        flow: u32,
    },
    /// The flow's receiver looks at the marks it saw (a polling notification point).
    CnpPoll {
        /// Flow index.
        flow: u32,
    },
    /// The flow's retransmission timer may be due.
    Rto {
        /// Flow index.
        flow: u32,
    },
    /// The flow's FGFC pause may have run out.
    FgfcResume {
        /// Flow index.
        flow: u32,
    },
    /// A credit port's update timer: FCPs with news are due.
    CreditUpdate {
        /// Global port index.
        port: u32,
    },
    /// The release delay of a flow-channel flow held at this switch output may have run
    /// out, or a flow held there for a reroute with nothing in flight moves.
    ChannelRelease {
        /// Global port index of the output.
        port: u32,
    },
    /// A host's NIC receive buffer may have drained to its XON level.
    NicDrain {
        /// Host index.
        host: u32,
    },
    /// A configured link failure happens.
    LinkDown {
        /// Index in `SimConfig::link_failures`.
        failure: u32,
    },
    /// Take a time-series sample.
    Sample,
    /// The configured stop time.
    Stop,
}

/// Bits of a tie-break key that count a creator's events.
pub const COUNT_BITS: u32 = 32;

/// How many creators a tie-break key can name (21 bits: with two rank bits the key must fit
/// beside a calendar-queue bucket's low time bits in 64).
pub const MAX_CREATORS: u32 = 1 << 21;

/// The tie-break key of an event of rank `rank` (0 – 3, lower first) that is the `count`-th
/// (modulo 2^32) scheduled by `creator`.
#[inline(always)]
pub const fn tiebreak(rank: u32, creator: u32, count: u32) -> u64 {
    ((rank as u64) << 53) | ((creator as u64) << COUNT_BITS) | count as u64
}

/// A creator's part of the tie-break keys it gives: its name there (fixed) and how many
/// events it has scheduled (modulo 2^32), kept as the low bits of its next key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreatorCount(u64);

impl CreatorCount {
    /// A creator named `creator` in keys (below [`MAX_CREATORS`]) that has scheduled
    /// nothing yet.
    pub const fn new(creator: u32) -> Self {
        CreatorCount((creator as u64) << COUNT_BITS)
    }

    /// The key of its next event, of rank `rank` ([`tiebreak`]); counts the event.
    #[inline(always)]
    pub fn next_key(&mut self, rank: u32) -> u64 {
        let key = ((rank as u64) << 53) | self.0;
        self.count_one();
        key
    }

    /// Counts an event scheduled elsewhere (a part skipping another part's event) without
    /// giving its key. The count wraps without touching the name.
    #[inline(always)]
    pub fn count_one(&mut self) {
        let count = (self.0 as u32).wrapping_add(1);
        self.0 = (self.0 >> COUNT_BITS << COUNT_BITS) | u64::from(count);
    }
}

/// An event with its time and tie-break key.
#[derive(Clone, Copy, Debug)]
pub struct Scheduled {
    /// When it happens.
    pub time: Time,
    /// Orders events at equal times ([`tiebreak`]); unique among pending events.
    pub seq: u64,
    /// What happens.
    pub event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// A priority queue of events in `(time, key)` order.
pub trait EventQueue {
    /// Schedules `event` at `time` with tie-break `key` (below 2^55, unique among pending
    /// events).
    fn push(&mut self, time: Time, key: u64, event: Event);
    /// Removes and returns the earliest event.
    fn pop(&mut self) -> Option<Scheduled>;
    /// The time and key of the earliest event (may reorganize the queue, hence `&mut`).
    fn peek(&mut self) -> Option<(Time, u64)>;
    /// The time of the earliest event.
    fn peek_time(&mut self) -> Option<Time> {
        self.peek().map(|(time, _)| time)
    }
    /// Number of pending events.
    fn len(&self) -> usize;
    /// Whether no event is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The reference queue: a binary heap keyed by `(time, key)`.
#[derive(Debug, Default)]
pub struct HeapQueue {
    heap: BinaryHeap<Scheduled>,
}

impl HeapQueue {
    /// An empty queue with room for `n` events.
    pub fn with_capacity(n: usize) -> Self {
        HeapQueue {
            heap: BinaryHeap::with_capacity(n),
        }
    }
}

impl EventQueue for HeapQueue {
    fn push(&mut self, time: Time, key: u64, event: Event) {
        self.heap.push(Scheduled {
            time,
            seq: key,
            event,
        });
    }
    fn pop(&mut self) -> Option<Scheduled> {
        self.heap.pop()
    }
    fn peek(&mut self) -> Option<(Time, u64)> {
        self.heap.peek().map(|s| (s.time, s.seq))
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}

/// A calendar bucket's entry: the event's in-bucket key and the event in one word (16
/// bytes in all; see [`packed`]).
type Entry = (u64, PackedEvent);

/// A calendar queue: a ring of time buckets for the near future plus a binary heap for the
/// far future.
///
/// Bucket `b` holds the events whose time lies in `[b·W, (b+1)·W)` (W = 2^`SHIFT` ps); the
/// ring covers `buckets.len()` consecutive buckets from the cursor. A bucket is an unordered
/// vector; when the cursor reaches it, it becomes the sorted `current` vector and is drained
/// in `(time, key)` order (events scheduled into the bucket being drained are inserted in
/// order). Events beyond the ring wait in the far heap and move into the ring as the cursor
/// advances.
///
/// Bucket vectors are not tied to their ring slot: a drained vector goes to a pool, and an
/// empty bucket that receives an event takes the vector released last. So the memory in use
/// is about the pending events, not the ring's length times each bucket's busiest turn, and
/// pushes write to memory that was in use moments ago instead of memory last touched a
/// whole turn of the ring ago (a cache miss per push). Each bucket stays contiguous, so
/// loading it reads memory sequentially.
///
/// Inside a bucket an event's order is given by one `u64`: the time's low `SHIFT` bits (the
/// high bits are the bucket's) above the tie-break key (`64 - SHIFT` bits, at least the 55
/// a key needs); the event itself is packed into another ([`Entry`]).
///
/// The geometry is a constant of the type (`SHIFT`, `LOG_BUCKETS`): the key arithmetic of
/// every push and pop then shifts and masks by immediates instead of by fields.
#[derive(Debug)]
pub struct CalendarQueue<const SHIFT: u32 = 9, const LOG_BUCKETS: u32 = 14> {
    buckets: Vec<Vec<Entry>>,
    /// Drained bucket vectors (capacity kept), reused last-released-first.
    pool: Vec<Vec<Entry>>,
    /// Absolute number of the bucket under the cursor.
    cur: u64,
    /// The cursor's bucket has been moved into `current` (and new events for it go there).
    loaded: bool,
    /// The cursor's bucket, sorted descending by key (popped from the back).
    current: Vec<Entry>,
    /// Scratch for sorting a large bucket (see [`sort_descending`]), capacity kept.
    scratch: Vec<Entry>,
    /// Events in the ring (buckets and `current`).
    near: usize,
    /// Bit `slot` set: that bucket is non-empty (lets the cursor skip empty buckets a word
    /// at a time).
    occupied: Vec<u64>,
    far: BinaryHeap<Scheduled>,
    /// Bucket of the earliest far event (`u64::MAX` if none), so that the cursor's advance
    /// checks the far heap with one comparison.
    far_next: u64,
}

impl Default for CalendarQueue {
    /// The default geometry: ~1 ns buckets, an ~8.4 µs ring: a frame's serialization and a
    /// link's propagation land in the ring; congestion-control and retransmission timers go
    /// to the heap.
    fn default() -> Self {
        Self::new()
    }
}

impl<const SHIFT: u32, const LOG_BUCKETS: u32> CalendarQueue<SHIFT, LOG_BUCKETS> {
    /// Refuses (at build time) a bucket wider than 2^9 ps: a tie-break key needs the other
    /// 55 bits of an in-bucket key.
    const SHIFT_FITS: () = assert!(SHIFT <= 9, "bucket width above 2^9 ps");
    /// Buckets in the ring (a power of two).
    const RING: u64 = 1 << LOG_BUCKETS;

    /// An empty queue with buckets of 2^`SHIFT` ps and 2^`LOG_BUCKETS` buckets in the ring.
    pub fn new() -> Self {
        let () = Self::SHIFT_FITS;
        CalendarQueue {
            buckets: (0..1usize << LOG_BUCKETS).map(|_| Vec::new()).collect(),
            pool: Vec::new(),
            cur: 0,
            loaded: false,
            current: Vec::new(),
            scratch: Vec::new(),
            near: 0,
            occupied: vec![0; (1usize << LOG_BUCKETS).div_ceil(64)],
            far: BinaryHeap::new(),
            far_next: u64::MAX,
        }
    }

    /// The in-bucket key of an event at `time` (ps) with tie-break key `seq`.
    fn key(&self, time: u64, seq: u64) -> u64 {
        debug_assert!(seq < 1 << (64 - SHIFT), "tie-break key too large");
        ((time & ((1 << SHIFT) - 1)) << (64 - SHIFT)) | seq
    }

    /// The time and tie-break key of the event with in-bucket `key` in `bucket`.
    fn unkey(&self, bucket: u64, key: u64) -> (Time, u64) {
        let seq_bits = 64 - SHIFT;
        (
            Time((bucket << SHIFT) | (key >> seq_bits)),
            key & ((1 << seq_bits) - 1),
        )
    }

    fn slot(&self, bucket: u64) -> usize {
        (bucket & (Self::RING - 1)) as usize
    }

    #[inline(always)]
    fn insert_near(&mut self, bucket: u64, time: u64, seq: u64, event: Event) {
        let key = self.key(time, seq);
        let event = PackedEvent::pack(event);
        self.near += 1;
        if bucket == self.cur && self.loaded {
            Self::insert_sorted(&mut self.current, key, event);
            return;
        }
        let slot = self.slot(bucket);
        let v = &mut self.buckets[slot];
        // Only an empty bucket's bit can be clear (most events join a bucket that has some).
        if v.is_empty() {
            self.occupied[slot / 64] |= 1 << (slot % 64);
            if v.capacity() == 0 {
                if let Some(reused) = self.pool.pop() {
                    *v = reused;
                }
            }
        }
        v.push((key, event));
    }

    /// Inserts into the bucket being drained (kept out of line: most events go to a later
    /// bucket).
    #[inline(never)]
    fn insert_sorted(v: &mut Vec<Entry>, key: u64, event: PackedEvent) {
        // Descending order: keys larger than `key` stay in front of it.
        let at = v.partition_point(|(k, _)| *k > key);
        v.insert(at, (key, event));
    }

    /// Moves far events that now fall inside the ring into their buckets.
    #[inline(always)]
    fn pull_far(&mut self) {
        if self.far_next < self.cur + Self::RING {
            self.pull_far_slow();
        }
    }

    #[inline(never)]
    fn pull_far_slow(&mut self) {
        let horizon = self.cur + Self::RING;
        self.far_next = u64::MAX;
        while let Some(s) = self.far.peek() {
            let b = s.time.as_ps() >> SHIFT;
            if b >= horizon {
                self.far_next = b;
                break;
            }
            let Some(s) = self.far.pop() else { break };
            self.insert_near(b, s.time.as_ps(), s.seq, s.event);
        }
    }

    /// Makes the bucket at `slot` (the cursor's) the sorted `current` vector.
    fn load(&mut self, slot: usize) {
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        let bucket = std::mem::take(&mut self.buckets[slot]);
        let drained = std::mem::replace(&mut self.current, bucket);
        if drained.capacity() > 0 {
            self.pool.push(drained);
        }
        sort_descending(&mut self.current, &mut self.scratch);
        self.loaded = true;
    }

    /// Moves the cursor to the first non-empty bucket and loads it; `false` if empty.
    #[inline]
    fn settle(&mut self) -> bool {
        if self.loaded && !self.current.is_empty() {
            return true;
        }
        self.settle_slow()
    }

    fn settle_slow(&mut self) -> bool {
        if self.loaded {
            // The cursor's bucket is drained.
            self.loaded = false;
            self.cur += 1;
            self.pull_far();
        }
        loop {
            if self.near == 0 {
                let Some(s) = self.far.peek() else {
                    return false;
                };
                let b = s.time.as_ps() >> SHIFT;
                if b > self.cur {
                    self.cur = b;
                }
                self.pull_far();
            }
            let slot = self.slot(self.cur);
            if !self.buckets[slot].is_empty() {
                self.load(slot);
                return true;
            }
            self.cur += self.empty_run(slot).max(1);
            self.pull_far();
        }
    }

    /// How many buckets from `slot` on (ring order, at most to the end of its bitmap word
    /// or of the ring) are empty.
    fn empty_run(&self, slot: usize) -> u64 {
        let word = self.occupied[slot / 64] >> (slot % 64);
        let in_word = 64 - (slot % 64) as u64;
        let run = if word == 0 {
            in_word
        } else {
            u64::from(word.trailing_zeros())
        };
        run.min(Self::RING - slot as u64)
    }

    /// Rewinds the cursor to `bucket` (only after a peek moved it past an event's bucket):
    /// every pending event is scheduled again from there.
    #[cold]
    #[inline(never)]
    fn rewind(&mut self, bucket: u64) {
        let mut all: Vec<Scheduled> = Vec::with_capacity(self.len());
        let at = |q: &Self, b: u64, (key, event): Entry| {
            let (time, seq) = q.unkey(b, key);
            Scheduled {
                time,
                seq,
                event: event.unpack(),
            }
        };
        for &e in &self.current {
            all.push(at(self, self.cur, e));
        }
        self.current.clear();
        for slot in 0..self.buckets.len() {
            // Slots hold the buckets `cur..cur + ring`.
            let b = self.cur + ((slot as u64).wrapping_sub(self.cur) & (Self::RING - 1));
            for &e in &self.buckets[slot] {
                all.push(at(self, b, e));
            }
            self.buckets[slot].clear();
        }
        all.extend(std::mem::take(&mut self.far));
        self.occupied.fill(0);
        self.near = 0;
        self.far_next = u64::MAX;
        self.loaded = false;
        self.cur = bucket;
        let horizon = bucket + Self::RING;
        for s in all {
            let b = s.time.as_ps() >> SHIFT;
            if b < horizon {
                self.insert_near(b, s.time.as_ps(), s.seq, s.event);
            } else {
                self.far_next = self.far_next.min(b);
                self.far.push(s);
            }
        }
    }

    /// Schedules an event in bucket `b`, beyond the ring or before the cursor (kept out of
    /// line: rare).
    #[inline(never)]
    fn push_outside(&mut self, b: u64, time: Time, seq: u64, event: Event) {
        if b < self.cur {
            self.rewind(b);
            self.insert_near(b, time.as_ps(), seq, event);
        } else {
            self.far_next = self.far_next.min(b);
            self.far.push(Scheduled { time, seq, event });
        }
    }

    /// Removes the back of `current` (the earliest event; `settle` returned `true`).
    fn take(&mut self) -> Option<Scheduled> {
        let (time, seq, event) = self.take_packed()?;
        Some(Scheduled {
            time,
            seq,
            event: event.unpack(),
        })
    }

    /// [`CalendarQueue::take`] without unpacking the event.
    #[inline(always)]
    fn take_packed(&mut self) -> Option<(Time, u64, PackedEvent)> {
        let (key, event) = self.current.pop()?;
        self.near -= 1;
        let (time, seq) = self.unkey(self.cur, key);
        Some((time, seq, event))
    }
}

impl<const SHIFT: u32, const LOG_BUCKETS: u32> CalendarQueue<SHIFT, LOG_BUCKETS> {
    /// Removes and returns the earliest event (its time, its key and the event, still
    /// packed) if it comes at or before (`limit`, `key`). The event loop unpacks it where it
    /// dispatches it, so that unpacking and dispatching compile to one branch on the tag.
    #[inline]
    pub fn pop_through(&mut self, limit: Time, key: u64) -> Option<(Time, u64, PackedEvent)> {
        if !self.settle() {
            return None;
        }
        // Only the limit's own bucket needs the event's time and key: before it every event
        // comes earlier, after it every one later.
        let limit_bucket = limit.as_ps() >> SHIFT;
        if self.cur > limit_bucket {
            return None;
        }
        if self.cur == limit_bucket {
            let &(k, _) = self.current.last()?;
            if self.unkey(self.cur, k) > (limit, key) {
                return None;
            }
        }
        self.take_packed()
    }

    /// The event after the one last popped, if it is in the bucket being drained (a cheap
    /// look-ahead that moves no cursor).
    #[inline]
    pub fn peek_loaded(&self) -> Option<PackedEvent> {
        self.current.last().map(|&(_, e)| e)
    }
}

impl<const SHIFT: u32, const LOG_BUCKETS: u32> EventQueue for CalendarQueue<SHIFT, LOG_BUCKETS> {
    #[inline(always)]
    fn push(&mut self, time: Time, key: u64, event: Event) {
        let b = time.as_ps() >> SHIFT;
        // One comparison for the common case: a bucket before the cursor wraps to a large
        // distance and takes the rare path with those beyond the ring.
        if b.wrapping_sub(self.cur) < Self::RING {
            self.insert_near(b, time.as_ps(), key, event);
        } else {
            self.push_outside(b, time, key, event);
        }
    }

    fn pop(&mut self) -> Option<Scheduled> {
        if !self.settle() {
            return None;
        }
        self.take()
    }

    fn peek(&mut self) -> Option<(Time, u64)> {
        if !self.settle() {
            return None;
        }
        self.current.last().map(|&(k, _)| self.unkey(self.cur, k))
    }

    fn len(&self) -> usize {
        self.near + self.far.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn calendar_matches_heap(ops in proptest::collection::vec((any::<bool>(), prop_oneof![0u64..100, 0u64..5_000]), 1..2_000)) {
            let mut h = HeapQueue::default();
            let mut r = CalendarQueue::<4, 3>::new();
            let mut now = 0u64;
            for (i, (pop, dt)) in ops.into_iter().enumerate() {
                if pop {
                    let a = h.pop();
                    let b = r.pop();
                    prop_assert_eq!(a.map(|s| (s.time, s.seq, s.event)), b.map(|s| (s.time, s.seq, s.event)));
                    if let Some(s) = a { now = s.time.as_ps(); }
                } else {
                    let ev = Event::Wake { port: i as u32 };
                    // Creators 0..7 in turn, each counting its own events.
                    let key = tiebreak(i as u32 % 2, i as u32 % 7, i as u32 / 7);
                    h.push(Time(now + dt), key, ev);
                    r.push(Time(now + dt), key, ev);
                }
                prop_assert_eq!(h.peek_time(), r.peek_time());
                prop_assert_eq!(h.len(), r.len());
            }
        }
    }

    proptest! {
        /// Popping through a limit (a window's end in a partitioned run) gives exactly the
        /// events at or before it, in order, wherever the limit falls: before, inside or
        /// after the cursor's bucket.
        #[test]
        fn pop_through_stops_at_the_limit(
            times in proptest::collection::vec(0u64..200, 1..300),
            limits in proptest::collection::vec((0u64..250, 0u32..4), 1..20),
        ) {
            let mut h = HeapQueue::default();
            let mut r = CalendarQueue::<4, 3>::new();
            for (i, t) in times.iter().enumerate() {
                let key = tiebreak(0, i as u32 % 4, i as u32);
                h.push(Time(*t), key, Event::Wake { port: i as u32 });
                r.push(Time(*t), key, Event::Wake { port: i as u32 });
            }
            let mut limits = limits;
            limits.sort_unstable();
            for (t, creator) in limits {
                let limit = (Time(t), tiebreak(0, creator, 0));
                while let Some((time, seq, event)) = r.pop_through(limit.0, limit.1) {
                    let e = h.pop().expect("the heap holds the same events");
                    prop_assert_eq!((time, seq, event.unpack()), (e.time, e.seq, e.event));
                    prop_assert!((time, seq) <= limit);
                }
                prop_assert!(h.peek().is_none_or(|next| next > limit));
            }
        }
    }

    #[test]
    fn a_creators_keys_are_the_tiebreak_keys_of_its_name() {
        let mut c = CreatorCount::new(12);
        assert_eq!(c.next_key(1), tiebreak(1, 12, 0));
        c.count_one();
        assert_eq!(c.next_key(0), tiebreak(0, 12, 2));
        // The count wraps modulo 2^32 without changing the name.
        let mut c = CreatorCount((12 << COUNT_BITS) | u64::from(u32::MAX));
        assert_eq!(c.next_key(3), tiebreak(3, 12, u32::MAX));
        assert_eq!(c.next_key(3), tiebreak(3, 12, 0));
    }

    #[test]
    fn orders_by_time_then_creator_then_count() {
        fn order(mut q: impl EventQueue) -> Vec<u32> {
            q.push(Time(5), tiebreak(1, 2, 0), Event::Wake { port: 1 });
            q.push(Time(3), tiebreak(1, 9, 0), Event::Wake { port: 2 });
            q.push(Time(5), tiebreak(1, 1, 7), Event::Wake { port: 3 });
            q.push(Time(3), tiebreak(1, 9, 1), Event::Wake { port: 4 });
            q.push(Time(3), tiebreak(1, MAX_CREATORS - 1, 0), Event::Stop);
            q.push(Time(5), tiebreak(0, 8, 0), Event::Wake { port: 5 });
            std::iter::from_fn(|| q.pop())
                .map(|s| match s.event {
                    Event::Wake { port } => port,
                    _ => 0,
                })
                .collect()
        }
        assert_eq!(order(HeapQueue::default()), vec![2, 4, 0, 5, 3, 1]);
        assert_eq!(order(CalendarQueue::default()), vec![2, 4, 0, 5, 3, 1]);
    }

    #[test]
    fn largest_key_fits_beside_the_time_bits() {
        let mut q = CalendarQueue::default();
        let key = tiebreak(3, MAX_CREATORS - 1, u32::MAX);
        q.push(Time(511), key, Event::Stop);
        q.push(Time(511), key - 1, Event::Sample);
        let a = q.pop().expect("two pending");
        assert_eq!(
            (a.time, a.seq, a.event),
            (Time(511), key - 1, Event::Sample)
        );
        let b = q.pop().expect("one pending");
        assert_eq!((b.time, b.seq, b.event), (Time(511), key, Event::Stop));
    }

    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<Event>() <= 16);
    }
}
