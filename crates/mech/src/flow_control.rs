//! Link flow control: what a transmitter asks before it starts a frame.
//!
//! A lossless link is kept lossless by one of two kinds of flow control, chosen per link
//! (both ends agree):
//! - PFC ([`crate::pfc`]): the receiver pauses a class when its buffer fills; the
//!   transmitter holds the pause timers its frames set.
//! - Credits ([`crate::credit`]): the receiver grants blocks of buffer per virtual lane;
//!   the transmitter spends them and waits for more.
//!
//! [`LinkFlowControl`] is the transmitter's half of either, behind one gate: before a
//! frame of a class starts, [`LinkFlowControl::gate`] says whether it may, and if not, until
//! when (a pause that ends on its own) or until a signal (a credit update, a RESUME); once it
//! has started, [`LinkFlowControl::on_sent`] charges it. Link-control frames themselves
//! (PFC frames, credit updates) never ask.
//!
//! Invariants: a frame the gate refused is never started until the gate opens; a started
//! frame is charged exactly once; the gate never changes the state of a PFC link.

use crate::credit::{CreditPort, Update};
use crate::pfc::PauseTimers;
use crate::units::Time;

/// What the gate says about starting a frame now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// The frame may start.
    Open,
    /// Not before this time (a pause timer runs out then); ask again at it.
    Until(Time),
    /// Not until something arrives from the peer (credit, RESUME).
    UntilSignal,
}

/// The transmitting half of a link's flow control.
///
/// `repr(C, u8)`: the tag comes first and the PFC timers' `latest_until` right after it,
/// so that a port can keep the field every transmission reads on a cache line it touches
/// anyway.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(C, u8)]
// The pause timers stay inline: every PFC transmission reads them. The credit state is
// boxed so that PFC ports do not carry its size.
#[allow(clippy::large_enum_variant)]
pub enum LinkFlowControl {
    /// Priority flow control: the pause timers set by the peer's PFC frames.
    Pfc(PauseTimers),
    /// Credit-based flow control: credits per VL, both directions of this link end (boxed:
    /// it is twice the size of the pause timers, which every PFC port would carry).
    Credit(Box<CreditPort>),
}

impl Default for LinkFlowControl {
    fn default() -> Self {
        LinkFlowControl::Pfc(PauseTimers::default())
    }
}

impl LinkFlowControl {
    /// Whether a frame of `class` (PFC priority, or credit VL) may start at `now`.
    /// `bytes` gives its size; only a credit link asks for it (a PFC port need not read
    /// the frame).
    #[inline]
    pub fn gate(&mut self, now: Time, class: u8, bytes: impl FnOnce() -> u64) -> Gate {
        match self {
            LinkFlowControl::Pfc(t) => {
                if !t.is_paused(now, class) {
                    Gate::Open
                } else {
                    t.next_change(now, class)
                        .map_or(Gate::UntilSignal, Gate::Until)
                }
            }
            LinkFlowControl::Credit(c) => {
                if c.may_send(now, class, bytes()) {
                    Gate::Open
                } else {
                    Gate::UntilSignal
                }
            }
        }
    }

    /// A frame of `class` and `bytes` started at `now` (the gate had opened for it).
    /// Returns when the link's update timer must fire, if this armed it (a credit link's
    /// peer wants to hear the new count of blocks sent).
    #[inline]
    pub fn on_sent(&mut self, now: Time, class: u8, bytes: u64) -> Option<Time> {
        match self {
            LinkFlowControl::Pfc(_) => None,
            LinkFlowControl::Credit(c) => match c.on_sent(now, class, bytes) {
                Update::ArmTimer(t) => Some(t),
                Update::SendNow | Update::Pending => None,
            },
        }
    }

    /// No episode in which `class` could not send changes at or after this time unless a
    /// new one begins (PFC: the port's pause timers' bound, every class alike; credits:
    /// the end of the VL's last blocked episode, `Time::MAX` while it lasts).
    #[inline(always)]
    pub fn latest_until(&self, class: u8) -> Time {
        match self {
            LinkFlowControl::Pfc(t) => t.latest_until(),
            LinkFlowControl::Credit(c) => c.tx(class).latest_until(),
        }
    }

    /// The latest episode by `now` in which `class` could not send (a pause, a lack of
    /// credit): its start and end (after `now` while it lasts); `None` if none has begun.
    /// What ternary congestion detection reads as the class's OFF periods.
    pub fn last_hold(&self, now: Time, class: u8) -> Option<(Time, Time)> {
        match self {
            LinkFlowControl::Pfc(t) => t.last_pause(now, class),
            LinkFlowControl::Credit(c) => c.tx(class).last_block(),
        }
    }

    /// The pause timers of a PFC link.
    pub fn pfc(&self) -> Option<&PauseTimers> {
        match self {
            LinkFlowControl::Pfc(t) => Some(t),
            LinkFlowControl::Credit(_) => None,
        }
    }

    /// The pause timers of a PFC link, to update.
    pub fn pfc_mut(&mut self) -> Option<&mut PauseTimers> {
        match self {
            LinkFlowControl::Pfc(t) => Some(t),
            LinkFlowControl::Credit(_) => None,
        }
    }

    /// The credit state of a credit link.
    pub fn credit(&self) -> Option<&CreditPort> {
        match self {
            LinkFlowControl::Credit(c) => Some(c),
            LinkFlowControl::Pfc(_) => None,
        }
    }

    /// The credit state of a credit link, to update.
    pub fn credit_mut(&mut self) -> Option<&mut CreditPort> {
        match self {
            LinkFlowControl::Credit(c) => Some(c),
            LinkFlowControl::Pfc(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Rate;

    #[test]
    fn a_pfc_gate_opens_when_the_pause_ends() {
        let mut fc = LinkFlowControl::default();
        let never = || -> u64 { panic!("a PFC gate does not read the frame") };
        assert_eq!(fc.gate(Time(0), 3, never), Gate::Open);
        let rate = Rate::from_gbps(100);
        fc.pfc_mut()
            .expect("pfc")
            .on_frame(Time(0), 3, 10, rate, Time::ZERO);
        // 10 quanta of 512 bits at 100 Gb/s.
        assert_eq!(fc.gate(Time(1), 3, never), Gate::Until(Time(51_200)));
        assert_eq!(fc.last_hold(Time(1), 3), Some((Time(0), Time(51_200))));
        assert_eq!(
            fc.latest_until(5),
            Time(51_200),
            "the port's bound, every class"
        );
        assert_eq!(fc.gate(Time(1), 2, never), Gate::Open, "other classes flow");
        assert_eq!(fc.gate(Time(51_200), 3, never), Gate::Open);
        assert_eq!(fc.on_sent(Time(51_200), 3, 1500), None);
        assert!(fc.credit().is_none());
    }

    #[test]
    fn a_credit_gate_waits_for_credit() {
        let policy = crate::credit::UpdatePolicy {
            period: Time(1000),
            threshold: None,
        };
        let mut fc = LinkFlowControl::Credit(Box::new(CreditPort::new(2, 64, 100, 48, policy)));
        assert_eq!(fc.gate(Time(0), 1, || 1500), Gate::Open);
        // 24 blocks; the first change arms the update timer.
        assert_eq!(fc.on_sent(Time(0), 1, 1500), Some(Time(1000)));
        assert_eq!(fc.gate(Time(0), 1, || 1500), Gate::Open);
        assert_eq!(fc.on_sent(Time(0), 1, 1500), None);
        assert_eq!(fc.gate(Time(5), 1, || 64), Gate::UntilSignal);
        assert_eq!(fc.gate(Time(5), 0, || 1500), Gate::Open, "VLs are separate");
        // A VL out of credit is held, as a paused class is: until a signal.
        assert_eq!(fc.last_hold(Time(7), 1), Some((Time(5), Time::MAX)));
        assert_eq!(fc.latest_until(1), Time::MAX);
        assert_eq!(fc.last_hold(Time(7), 0), None);
        assert_eq!(fc.latest_until(0), Time::ZERO);
        let c = fc.credit_mut().expect("credit");
        assert!(c.on_fcp(Time(9), 1, 0, 49));
        assert_eq!(fc.gate(Time(9), 1, || 64), Gate::Open);
        assert_eq!(fc.last_hold(Time(10), 1), Some((Time(5), Time(9))));
        assert_eq!(fc.latest_until(1), Time(9));
        assert!(fc.pfc().is_none());
    }
}
