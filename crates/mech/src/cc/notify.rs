//! Notification points: what a flow's receiver returns to the sender for each data packet.
//!
//! The receiver's transport (in-order delivery, cumulative ACKs every so many bytes, NACKs)
//! is the driver's; what rides back for congestion control is decided here, per flow, by the
//! algorithm's kind of notification point:
//!
//! - [`NotificationPoint::Cnp`] (DCQCN): a congestion notification packet for a marked data
//!   packet, at most one per flow per interval (the first mark after a quiet interval is
//!   reported at once, later ones are absorbed until the interval has passed).
//! - [`NotificationPoint::Echo`] (DCTCP, TIMELY, HPCC): the mark of each data packet is
//!   echoed on the ACK that packet triggers; no CNPs. What else an ACK carries (an INT
//!   stack, a timestamp) is copied by the driver as the algorithm needs.
//! - [`NotificationPoint::None`]: no congestion control, ACKs only.
//!
//! Invariants: two CNPs of one flow are at least `interval` apart; a receiver never
//! reports a mark it did not see; nothing allocates.

use crate::ecn::Mark;
use crate::units::Time;

/// One flow's notification point (its receiver's congestion-control half).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationPoint {
    /// Nothing besides ACKs.
    None,
    /// DCQCN: CNPs, paced per flow.
    Cnp {
        /// Least time between two CNPs of the flow.
        interval: Time,
        /// When the last CNP was sent.
        last: Option<Time>,
    },
    /// The mark of each data packet echoed on its ACK.
    Echo,
}

/// What the receiver sends back for one data packet, besides the ACK its transport decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reply {
    /// Send a CNP now.
    pub cnp: bool,
    /// Set the ECN echo on the ACK this packet triggers.
    pub ecn_echo: bool,
}

impl NotificationPoint {
    /// A DCQCN notification point that sends at most one CNP per `interval`.
    pub fn cnp(interval: Time) -> Self {
        NotificationPoint::Cnp {
            interval,
            last: None,
        }
    }

    /// A data packet of the flow arrived at `now` with `mark` (a UE mark alone is not
    /// reported yet: the senders' hold on UE comes with ternary congestion detection).
    pub fn on_data(&mut self, now: Time, mark: Mark) -> Reply {
        let ce = mark == Mark::Ce;
        match self {
            NotificationPoint::None => Reply::default(),
            NotificationPoint::Cnp { interval, last } => {
                let cnp = ce && last.is_none_or(|t| now - t >= *interval);
                if cnp {
                    *last = Some(now);
                }
                Reply {
                    cnp,
                    ecn_echo: false,
                }
            }
            NotificationPoint::Echo => Reply {
                cnp: false,
                ecn_echo: ce,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_notification_point_sends_nothing() {
        let mut np = NotificationPoint::None;
        assert_eq!(np.on_data(Time::ZERO, Mark::Ce), Reply::default());
    }

    #[test]
    fn cnps_are_paced_per_interval() {
        let mut np = NotificationPoint::cnp(Time::from_us(50));
        assert!(
            !np.on_data(Time::from_us(1), Mark::None).cnp,
            "unmarked: no CNP"
        );
        assert!(
            np.on_data(Time::from_us(2), Mark::Ce).cnp,
            "first mark: at once"
        );
        assert!(
            !np.on_data(Time::from_us(30), Mark::Ce).cnp,
            "within the interval"
        );
        assert!(
            !np.on_data(Time::from_us(51), Mark::Ce).cnp,
            "49 us after the last"
        );
        assert!(
            np.on_data(Time::from_us(52), Mark::Ce).cnp,
            "a whole interval after"
        );
        assert!(!np.on_data(Time::from_us(200), Mark::None).cnp);
    }

    #[test]
    fn cnp_point_never_echoes() {
        let mut np = NotificationPoint::cnp(Time::ZERO);
        let r = np.on_data(Time::ZERO, Mark::Ce);
        assert!(r.cnp && !r.ecn_echo);
    }

    #[test]
    fn echo_returns_each_mark_on_its_ack() {
        let mut np = NotificationPoint::Echo;
        assert_eq!(
            np.on_data(Time::ZERO, Mark::Ce),
            Reply {
                cnp: false,
                ecn_echo: true
            }
        );
        assert_eq!(np.on_data(Time::from_ns(1), Mark::None), Reply::default());
    }
}
