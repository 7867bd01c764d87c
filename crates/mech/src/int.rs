//! In-band network telemetry (INT) hop records, as HPCC's senders read them.
//!
//! Every switch egress a data packet leaves appends one [`IntHop`]: the time, the bytes the
//! port has transmitted so far, the bytes queued at the port and the port's line rate. The
//! receiver copies the packet's [`IntStack`] into its ACK, and the sender's HPCC machine
//! compares each hop with the record of the previous ACK to estimate the link's
//! utilization.
//!
//! The fields are quantized as the ns-3 HPCC simulator encodes them on the wire (its 8-byte
//! hop: 24 bits of nanoseconds, 20 bits of transmitted bytes in units of `128 x multi`, 17
//! bits of queue length in units of `80 x multi`), and wrap around like those bit fields, so
//! a sender sees the same coarse values and the same wrap-arounds. `multi` (the simulator's
//! `INT_MULTI`) trades resolution for range: at 100 Gb/s the byte counter wraps every
//! `2^20 x 128 x multi` bytes. The line rate is kept exactly (the simulator's 3-bit index
//! only knows 25/50/100/200/400 Gb/s).
//!
//! Invariants: a stack holds at most [`MAX_HOPS`] records; a deeper path overwrites the
//! oldest (`hops[n % MAX_HOPS]`) and marks the stack unusable ([`IntStack::is_usable`]),
//! as the simulator's senders ignore such stacks; deltas handle one wrap of each counter.

use crate::units::{Rate, Time};

/// Hop records an INT stack holds.
pub const MAX_HOPS: usize = 5;

/// Bytes the INT header adds to a data packet on the wire: eight per hop record, for
/// [`MAX_HOPS`] records, and a two-byte hop count (a fixed-size header, whatever the path).
pub const HEADER_BYTES: u64 = 8 * MAX_HOPS as u64 + 2;

const TIME_BITS: u32 = 24;
const BYTES_BITS: u32 = 20;
const QLEN_BITS: u32 = 17;
/// Transmitted-bytes unit before `multi`.
const BYTES_UNIT: u64 = 128;
/// Queue-length unit before `multi`.
const QLEN_UNIT: u64 = 80;

/// One switch egress's record in a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IntHop {
    /// Nanoseconds, modulo 2^24.
    time: u32,
    /// Transmitted bytes in units of `128 x multi`, modulo 2^20.
    bytes: u32,
    /// Queued bytes in units of `80 x multi`, modulo 2^17.
    qlen: u32,
    /// The port's line rate.
    rate: Rate,
}

impl IntHop {
    /// The record of a port of `rate` at `now` that has transmitted `tx_bytes` in all and
    /// holds `queued` bytes, with the resolution multiplier `multi` (at least 1).
    pub fn new(now: Time, tx_bytes: u64, queued: u64, rate: Rate, multi: u32) -> IntHop {
        let multi = u64::from(multi.max(1));
        IntHop {
            time: (now.as_ns() & mask(TIME_BITS)) as u32,
            bytes: ((tx_bytes / (BYTES_UNIT * multi)) & mask(BYTES_BITS)) as u32,
            qlen: ((queued / (QLEN_UNIT * multi)) & mask(QLEN_BITS)) as u32,
            rate,
        }
    }

    /// The queue length this record carries, in bytes (as quantized).
    pub fn queued(&self, multi: u32) -> u64 {
        u64::from(self.qlen) * QLEN_UNIT * u64::from(multi.max(1))
    }

    /// The port's line rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Bytes transmitted between `earlier` and this record (one wrap allowed).
    pub fn bytes_since(&self, earlier: &IntHop, multi: u32) -> u64 {
        wrapping_delta(self.bytes, earlier.bytes, BYTES_BITS) * BYTES_UNIT * u64::from(multi.max(1))
    }

    /// Nanoseconds between `earlier` and this record (one wrap allowed).
    pub fn ns_since(&self, earlier: &IntHop) -> u64 {
        wrapping_delta(self.time, earlier.time, TIME_BITS)
    }
}

fn mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

fn wrapping_delta(now: u32, before: u32, bits: u32) -> u64 {
    (u64::from(now).wrapping_sub(u64::from(before))) & mask(bits)
}

/// The hop records a packet collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IntStack {
    hops: [IntHop; MAX_HOPS],
    /// Records pushed (may exceed [`MAX_HOPS`]).
    pushed: u16,
}

impl IntStack {
    /// An empty stack.
    pub const EMPTY: IntStack = IntStack {
        hops: [IntHop {
            time: 0,
            bytes: 0,
            qlen: 0,
            rate: Rate(0),
        }; MAX_HOPS],
        pushed: 0,
    };

    /// Appends a hop's record.
    pub fn push(&mut self, hop: IntHop) {
        self.hops[usize::from(self.pushed) % MAX_HOPS] = hop;
        self.pushed = self.pushed.saturating_add(1);
    }

    /// Whether every record pushed is still here (the path had at most [`MAX_HOPS`] hops).
    pub fn is_usable(&self) -> bool {
        usize::from(self.pushed) <= MAX_HOPS
    }

    /// The records, first hop first (only meaningful when [`Self::is_usable`]).
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..usize::from(self.pushed).min(MAX_HOPS)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quantized_like_the_wire_format() {
        let h = IntHop::new(Time::from_ns(1234), 10_000, 1_000, Rate::from_gbps(100), 4);
        // Queue: 1000 / 320 = 3 units = 960 bytes.
        assert_eq!(h.queued(4), 960);
        let zero = IntHop::new(Time::ZERO, 0, 0, Rate::from_gbps(100), 4);
        // Bytes: 10000 / 512 = 19 units = 9728 bytes.
        assert_eq!(h.bytes_since(&zero, 4), 9728);
        assert_eq!(h.ns_since(&zero), 1234);
        assert_eq!(h.rate(), Rate::from_gbps(100));
    }

    #[test]
    fn deltas_survive_one_wrap() {
        let rate = Rate::from_gbps(100);
        let before = IntHop::new(
            Time::from_ns((1 << 24) - 10),
            (1 << 20) * 128 - 128,
            0,
            rate,
            1,
        );
        let after = IntHop::new(
            Time::from_ns((1 << 24) + 5),
            (1 << 20) * 128 + 256,
            0,
            rate,
            1,
        );
        assert_eq!(after.ns_since(&before), 15);
        assert_eq!(after.bytes_since(&before, 1), 384);
    }

    #[test]
    fn queue_length_wraps_like_its_bit_field() {
        let h = IntHop::new(Time::ZERO, 0, (1 << 17) * 80 + 160, Rate::from_gbps(100), 1);
        assert_eq!(h.queued(1), 160);
    }

    #[test]
    fn a_stack_of_more_than_five_hops_is_unusable() {
        let mut s = IntStack::EMPTY;
        assert!(s.is_usable() && s.hops().is_empty());
        for i in 0..5 {
            s.push(IntHop::new(Time::from_ns(i), 0, 0, Rate::from_gbps(100), 1));
        }
        assert!(s.is_usable());
        assert_eq!(s.hops().len(), 5);
        assert_eq!(s.hops()[4].ns_since(&s.hops()[0]), 4);
        s.push(IntHop::new(Time::from_ns(9), 0, 0, Rate::from_gbps(100), 1));
        assert!(!s.is_usable());
    }

    #[test]
    fn header_is_42_bytes() {
        assert_eq!(HEADER_BYTES, 42);
    }
}
