//! An [`Event`] in one 64-bit word, as the calendar queue's buckets hold it.
//!
//! A bucket entry is the event's in-bucket key and the event; with the event in 8 bytes
//! instead of 12 (a `u8` tag padded to four, then two `u32` fields) an entry is 16 bytes
//! instead of 24, so a bucket's sort moves two words per entry instead of three and a
//! bucket takes two thirds of the lines.
//!
//! Layout: the variant's tag in bits 0–3, its first field in bits 4–35 (32 bits), its second
//! in bits 36–63 (28 bits). Only two variants have a second field: a port number
//! (`FrameStart`, `Arrive`: below [`MAX_CREATORS`], which the network builder enforces) and
//! a priority (`PfcRefresh`).
//!
//! Invariant: `PackedEvent::pack(e).unpack() == e` for every event whose second field is
//! below 2^28 (checked in debug builds; tested for every variant).

use super::{Event, MAX_CREATORS};

/// Bits of the variant's tag.
const TAG_BITS: u32 = 4;
/// Where the first field starts.
const FIRST_SHIFT: u32 = TAG_BITS;
/// Where the second field starts.
const SECOND_SHIFT: u32 = FIRST_SHIFT + 32;

// A port number must fit the second field.
const _: () = assert!(u64::BITS - SECOND_SHIFT >= MAX_CREATORS.trailing_zeros());

/// An [`Event`] packed into one word (see the module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedEvent(u64);

impl PackedEvent {
    /// `event` in one word. The tags follow the variants' declaration order, so that the
    /// unpacked tag is the enum's own discriminant.
    #[inline(always)]
    pub fn pack(event: Event) -> Self {
        let (tag, first, second): (u64, u32, u32) = match event {
            Event::FrameStart { port, pkt } => (0, pkt, port),
            Event::Arrive { port, pkt } => (1, pkt, port),
            Event::Wake { port } => (2, port, 0),
            Event::FlowStart { flow } => (3, flow, 0),
            Event::PfcRefresh { port, prio } => (4, port, u32::from(prio)),
            Event::CcTimer { flow } => (5, flow, 0),
            Event::CnpPoll { flow } => (6, flow, 0),
            Event::Rto { flow } => (7, flow, 0),
            Event::FgfcResume { flow } => (8, flow, 0),
            Event::CreditUpdate { port } => (9, port, 0),
            Event::ChannelRelease { port } => (10, port, 0),
            Event::NicDrain { host } => (11, host, 0),
            Event::LinkDown { failure } => (12, failure, 0),
            Event::Sample => (13, 0, 0),
            Event::Stop => (14, 0, 0),
        };
        debug_assert!(
            u64::from(second) < 1 << (u64::BITS - SECOND_SHIFT),
            "second field of {event:?} does not fit"
        );
        PackedEvent(tag | u64::from(first) << FIRST_SHIFT | u64::from(second) << SECOND_SHIFT)
    }

    /// The variant's tag.
    #[inline(always)]
    fn tag(self) -> u64 {
        self.0 & ((1 << TAG_BITS) - 1)
    }

    /// The receiving port and the packet of a `FrameStart` or `Arrive`, without unpacking
    /// the rest (the event loop's look one event ahead).
    #[inline(always)]
    pub fn frame(self) -> Option<(u32, u32)> {
        (self.tag() <= 1).then_some((
            (self.0 >> SECOND_SHIFT) as u32,
            (self.0 >> FIRST_SHIFT) as u32,
        ))
    }

    /// The port of a `Wake`, without unpacking the rest.
    #[inline(always)]
    pub fn wake(self) -> Option<u32> {
        (self.tag() == 2).then_some((self.0 >> FIRST_SHIFT) as u32)
    }

    /// The event packed in this word.
    #[inline(always)]
    pub fn unpack(self) -> Event {
        let first = (self.0 >> FIRST_SHIFT) as u32;
        let second = (self.0 >> SECOND_SHIFT) as u32;
        match self.tag() {
            0 => Event::FrameStart {
                port: second,
                pkt: first,
            },
            1 => Event::Arrive {
                port: second,
                pkt: first,
            },
            2 => Event::Wake { port: first },
            3 => Event::FlowStart { flow: first },
            4 => Event::PfcRefresh {
                port: first,
                // `pack` stored a `u8` here.
                prio: second as u8,
            },
            5 => Event::CcTimer { flow: first },
            6 => Event::CnpPoll { flow: first },
            7 => Event::Rto { flow: first },
            8 => Event::FgfcResume { flow: first },
            9 => Event::CreditUpdate { port: first },
            10 => Event::ChannelRelease { port: first },
            11 => Event::NicDrain { host: first },
            12 => Event::LinkDown { failure: first },
            13 => Event::Sample,
            tag => {
                // `pack` writes no tag above 14.
                debug_assert_eq!(tag, 14, "not a packed event");
                Event::Stop
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_comes_back_with_its_fields() {
        let port = MAX_CREATORS - 1;
        let events = [
            Event::FrameStart {
                port,
                pkt: u32::MAX,
            },
            Event::Arrive {
                port: 7,
                pkt: 1 << 31,
            },
            Event::Wake { port: u32::MAX },
            Event::FlowStart { flow: 3 },
            Event::PfcRefresh {
                port: u32::MAX - 1,
                prio: u8::MAX,
            },
            Event::CcTimer { flow: 1 },
            Event::CnpPoll { flow: 2 },
            Event::Rto { flow: u32::MAX },
            Event::FgfcResume { flow: 4 },
            Event::CreditUpdate { port: 5 },
            Event::ChannelRelease { port: 6 },
            Event::NicDrain { host: 8 },
            Event::LinkDown { failure: 9 },
            Event::Sample,
            Event::Stop,
        ];
        for e in events {
            let packed = PackedEvent::pack(e);
            assert_eq!(packed.unpack(), e);
            let frame = match e {
                Event::FrameStart { port, pkt } | Event::Arrive { port, pkt } => Some((port, pkt)),
                _ => None,
            };
            assert_eq!(packed.frame(), frame);
            let wake = match e {
                Event::Wake { port } => Some(port),
                _ => None,
            };
            assert_eq!(packed.wake(), wake);
        }
        // Different events never share a word.
        let words: std::collections::BTreeSet<u64> =
            events.iter().map(|&e| PackedEvent::pack(e).0).collect();
        assert_eq!(words.len(), events.len());
    }
}
