//! Frames between parts: what a part sends another in a window ([`Mail`]), and how the
//! driver hands it over.
//!
//! Invariants: a frame's `acks` range and `int` index point into its own mail's `acks` and
//! `ints`; handing a mail over keeps every frame with its ACKs and stack and the frames in
//! the order they were sent (the receiving part allocates them in that order).

use crate::net::ack_frames::AckEntry;
use crate::net::packet::Packet;
use headroom_mech::int::IntStack;
use headroom_mech::units::Time;

/// A frame travelling from one part to another (in the [`Mail`] for its receiving part).
#[derive(Clone, Copy, Debug)]
pub(in crate::net) struct Remote {
    /// When its event happens.
    pub time: Time,
    /// Its event's tie-break key.
    pub key: u64,
    /// Receiving port (global index).
    pub port: u32,
    /// `FrameStart` (admission at the first bit) rather than `Arrive`.
    pub first_bit: bool,
    /// The frame.
    pub packet: Packet,
    /// Its INT hop records: their index in the mail's `ints` ([`Remote::NO_INT`] in runs
    /// without INT). Kept beside the frames because most runs carry none, and a stack is
    /// several times the size of the frame.
    pub int: u32,
    /// A flow-channel ACK frame's ACKs: where they start in the mail's `acks`, and how
    /// many (none for other frames).
    pub acks: (u32, u32),
}

impl Remote {
    /// `Remote::int` of a frame without hop records.
    pub const NO_INT: u32 = u32::MAX;
}

/// The frames one part sends another in a window, with the ACKs of the flow-channel ACK
/// frames among them (which live beside the arena, see `net::ack_frames`) and the frames'
/// INT stacks.
///
/// A part fills one per receiving part; between windows the driver swaps it with the
/// (empty) mail slot of that pair, so that frames are written once and read once.
#[derive(Debug, Default)]
pub(in crate::net) struct Mail {
    /// The frames, in the order they were sent.
    pub frames: Vec<Remote>,
    /// The frames' ACKs, each frame's at its `acks` range.
    pub acks: Vec<AckEntry>,
    /// The frames' INT stacks, each frame's at its `int` index.
    pub ints: Vec<IntStack>,
}

impl Mail {
    pub(super) fn clear(&mut self) {
        self.frames.clear();
        self.acks.clear();
        self.ints.clear();
    }

    pub(super) fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// Moves the frames of `from` (a part's outbox) behind this mail's, leaving `from`
    /// empty. Into an empty mail (the usual case: the slot was emptied by the last
    /// `Collect`) it swaps the buffers, so the frames are not copied and the part gets
    /// empty buffers with their capacity back; a window's second run step appends.
    pub(super) fn take_from(&mut self, from: &mut Mail) {
        if self.is_empty() {
            self.clear();
            std::mem::swap(self, from);
            return;
        }
        // Fewer than 2^32 ACKs and stacks in a window's mail.
        let (acks, ints) = (self.acks.len() as u32, self.ints.len() as u32);
        self.frames.extend(from.frames.iter().map(|r| Remote {
            acks: (r.acks.0 + acks, r.acks.1),
            int: if r.int == Remote::NO_INT {
                r.int
            } else {
                r.int + ints
            },
            ..*r
        }));
        self.acks.append(&mut from.acks);
        self.ints.append(&mut from.ints);
        from.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Kind;
    use headroom_mech::int::IntHop;
    use headroom_mech::units::Rate;

    /// A mail of one frame per entry of `ints` (`None`: no INT stack), frame `i` marked
    /// by its port `first_port + i` and, with INT, a stack of one hop made for that port.
    fn mail(first_port: u32, ints: &[bool]) -> Mail {
        let mut m = Mail::default();
        for (i, &with_int) in ints.iter().enumerate() {
            let port = first_port + i as u32;
            let int = if with_int {
                let mut stack = IntStack::EMPTY;
                stack.push(hop(port));
                m.ints.push(stack);
                (m.ints.len() - 1) as u32
            } else {
                Remote::NO_INT
            };
            m.frames.push(Remote {
                time: Time(u64::from(port)),
                key: 0,
                port,
                first_bit: false,
                packet: Packet::new(Kind::Data),
                int,
                acks: (0, 0),
            });
        }
        m
    }

    /// The hop record that marks the frame to `port`: its queue length says which.
    fn hop(port: u32) -> IntHop {
        IntHop::new(Time::ZERO, 0, u64::from(port) * 1_000, Rate(0), 1)
    }

    /// Each frame's port, and whether its stack (if it has one) is the one made for it.
    fn contents(m: &Mail) -> Vec<(u32, Option<bool>)> {
        m.frames
            .iter()
            .map(|r| {
                let int = m
                    .ints
                    .get(r.int as usize)
                    .map(|s| s.hops() == [hop(r.port)]);
                (r.port, int)
            })
            .collect()
    }

    #[test]
    fn mail_taken_from_an_outbox_keeps_each_frames_stack() {
        // Into an empty slot: the buffers change hands.
        let mut slot = Mail::default();
        let mut outbox = mail(10, &[true, false, true]);
        slot.take_from(&mut outbox);
        assert!(outbox.is_empty() && outbox.ints.is_empty());
        assert_eq!(
            contents(&slot),
            vec![(10, Some(true)), (11, None), (12, Some(true))]
        );
        // A second run step of the window appends behind what is there.
        let mut outbox = mail(20, &[false, true]);
        slot.take_from(&mut outbox);
        assert!(outbox.is_empty() && outbox.ints.is_empty());
        assert_eq!(
            contents(&slot),
            vec![
                (10, Some(true)),
                (11, None),
                (12, Some(true)),
                (20, None),
                (21, Some(true))
            ]
        );
    }
}
