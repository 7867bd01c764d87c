//! The discrete-event core: events and the queue that orders them.
//!
//! Invariants:
//! - Events are totally ordered by `(time, sequence)`: the sequence is the insertion count,
//!   so events at equal times run in the order they were scheduled, on every machine.
//! - An event is a small `Copy` enum (16 bytes); packets are referred to by arena index.
//! - The queue is behind the [`EventQueue`] trait so another structure (calendar queue,
//!   ladder queue) can replace the binary heap; `benches/event_queue.rs` measures it.

use headroom_mech::units::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Something that happens at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serializing a frame.
    TxDone {
        /// Global port index.
        port: u32,
    },
    /// A frame has been fully received by a port.
    Arrive {
        /// Global index of the receiving port.
        port: u32,
        /// Packet arena index.
        pkt: u32,
    },
    /// A port should retry transmission (a pause expired, pacing allows a packet).
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
    /// The flow's retransmission timer may be due.
    Rto {
        /// Flow index.
        flow: u32,
    },
    /// Take a time-series sample.
    Sample,
    /// The configured stop time.
    Stop,
}

/// An event with its time and tie-breaking sequence number.
#[derive(Clone, Copy, Debug)]
pub struct Scheduled {
    /// When it happens.
    pub time: Time,
    /// Insertion sequence, unique per queue.
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

/// A priority queue of events in `(time, sequence)` order.
pub trait EventQueue {
    /// Schedules `event` at `time`.
    fn push(&mut self, time: Time, event: Event);
    /// Removes and returns the earliest event.
    fn pop(&mut self) -> Option<Scheduled>;
    /// The time of the earliest event.
    fn peek_time(&self) -> Option<Time>;
    /// Number of pending events.
    fn len(&self) -> usize;
    /// Whether no event is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The default queue: a binary heap keyed by `(time, seq)`.
#[derive(Debug, Default)]
pub struct HeapQueue {
    heap: BinaryHeap<Scheduled>,
    seq: u64,
}

impl HeapQueue {
    /// An empty queue with room for `n` events.
    pub fn with_capacity(n: usize) -> Self {
        HeapQueue { heap: BinaryHeap::with_capacity(n), seq: 0 }
    }
}

impl EventQueue for HeapQueue {
    fn push(&mut self, time: Time, event: Event) {
        self.seq += 1;
        self.heap.push(Scheduled { time, seq: self.seq, event });
    }
    fn pop(&mut self) -> Option<Scheduled> {
        self.heap.pop()
    }
    fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|s| s.time)
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = HeapQueue::default();
        q.push(Time(5), Event::Wake { port: 1 });
        q.push(Time(3), Event::Wake { port: 2 });
        q.push(Time(5), Event::Wake { port: 3 });
        q.push(Time(3), Event::Wake { port: 4 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|s| match s.event {
                Event::Wake { port } => port,
                _ => 0,
            })
            .collect();
        assert_eq!(order, vec![2, 4, 1, 3]);
    }

    #[test]
    fn event_is_small() {
        assert!(std::mem::size_of::<Event>() <= 16);
    }
}
