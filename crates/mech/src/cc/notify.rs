//! Notification points: what a flow's receiver returns to the sender for each data packet.
//!
//! The receiver's transport (in-order delivery, cumulative ACKs every so many bytes, NACKs)
//! is the driver's; what rides back for congestion control is decided here, per flow, by the
//! algorithm's kind of notification point:
//!
//! - [`NotificationPoint::Cnp`] (DCQCN): a congestion notification packet for a marked data
//!   packet, at most one per flow per interval (the first mark after a quiet interval is
//!   reported at once, later ones are remembered until the interval has passed). The CNP
//!   carries CE if any packet since the last CNP was CE, else UE (ternary congestion
//!   detection: the sender holds on UE-only).
//! - [`NotificationPoint::Poll`] (DCQCN, as the TCD authors' code): the receiver looks at
//!   the flow every interval from its first packet and reports what it saw since the last
//!   look in one CNP. Only looks with something to report are scheduled.
//! - [`NotificationPoint::Echo`] (DCTCP, TIMELY, HPCC): the mark of each data packet is
//!   echoed on the ACK that packet triggers; no CNPs. What else an ACK carries (an INT
//!   stack, a timestamp) is copied by the driver as the algorithm needs.
//! - [`NotificationPoint::None`]: no congestion control, ACKs only.
//!
//! Invariants: two CNPs of one flow are at least `interval` apart; a receiver never
//! reports a mark it did not see, and reports each mark at most once; nothing allocates.

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
        /// The marks seen since the last CNP.
        seen: Mark,
    },
    /// DCQCN as the TCD authors' released code: the receiver looks at the flow every
    /// `interval` from its first packet on and sends one CNP with the marks seen since the
    /// last look, if any.
    Poll {
        /// Time between two looks.
        interval: Time,
        /// The first packet's arrival: looks happen at `origin + k x interval`.
        origin: Option<Time>,
        /// The marks seen since the last look.
        seen: Mark,
        /// A look with marks to report is scheduled.
        pending: bool,
    },
    /// The mark of each data packet echoed on its ACK.
    Echo,
}

/// What the receiver sends back for one data packet, besides the ACK its transport decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reply {
    /// Send a CNP now carrying these marks (`Mark::None`: no CNP). A CNP carries CE if any
    /// packet since the last CNP was CE, else UE.
    pub cnp: Mark,
    /// The mark to echo on the ACK this packet triggers.
    pub echo: Mark,
    /// (Poll) call [`NotificationPoint::on_poll`] at this time.
    pub poll_at: Option<Time>,
}

impl NotificationPoint {
    /// A DCQCN notification point that sends at most one CNP per `interval`.
    pub fn cnp(interval: Time) -> Self {
        NotificationPoint::Cnp {
            interval,
            last: None,
            seen: Mark::None,
        }
    }

    /// A DCQCN notification point that looks every `interval` (the released TCD code).
    pub fn poll(interval: Time) -> Self {
        NotificationPoint::Poll {
            interval,
            origin: None,
            seen: Mark::None,
            pending: false,
        }
    }

    /// A data packet of the flow arrived at `now` with `mark`.
    ///
    /// `Cnp`: a marked packet after a quiet interval sends a CNP at once with every mark
    /// seen since the last CNP; marks within the interval are remembered for the next one.
    /// `Poll`: the first marked packet after a look asks for the next look (at once when
    /// `now` is one). `Echo`: the packet's mark goes back on its ACK.
    pub fn on_data(&mut self, now: Time, mark: Mark) -> Reply {
        match self {
            NotificationPoint::None => Reply::default(),
            NotificationPoint::Cnp {
                interval,
                last,
                seen,
            } => {
                *seen = seen.upgrade(mark);
                let due = mark != Mark::None && last.is_none_or(|t| now - t >= *interval);
                if !due {
                    return Reply::default();
                }
                *last = Some(now);
                Reply {
                    cnp: std::mem::take(seen),
                    ..Reply::default()
                }
            }
            NotificationPoint::Poll {
                interval,
                origin,
                seen,
                pending,
            } => {
                let first = *origin.get_or_insert(now);
                *seen = seen.upgrade(mark);
                if *seen == Mark::None || *pending {
                    return Reply::default();
                }
                let since = (now - first).as_ps();
                let step = interval.as_ps().max(1);
                let look = first + Time(since.div_ceil(step).saturating_mul(step));
                if look == now {
                    return Reply {
                        cnp: std::mem::take(seen),
                        ..Reply::default()
                    };
                }
                *pending = true;
                Reply {
                    poll_at: Some(look),
                    ..Reply::default()
                }
            }
            NotificationPoint::Echo => Reply {
                echo: mark,
                ..Reply::default()
            },
        }
    }

    /// (Poll) the look asked for by [`Self::on_data`]: the marks the CNP carries.
    pub fn on_poll(&mut self) -> Mark {
        match self {
            NotificationPoint::Poll { seen, pending, .. } => {
                *pending = false;
                std::mem::take(seen)
            }
            _ => Mark::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Time {
        Time::from_us(n)
    }

    #[test]
    fn no_notification_point_sends_nothing() {
        let mut np = NotificationPoint::None;
        assert_eq!(np.on_data(Time::ZERO, Mark::Ce), Reply::default());
    }

    #[test]
    fn cnps_are_paced_per_interval() {
        let mut np = NotificationPoint::cnp(us(50));
        assert_eq!(
            np.on_data(us(1), Mark::None).cnp,
            Mark::None,
            "unmarked: no CNP"
        );
        assert_eq!(
            np.on_data(us(2), Mark::Ce).cnp,
            Mark::Ce,
            "first mark: at once"
        );
        assert_eq!(
            np.on_data(us(30), Mark::Ce).cnp,
            Mark::None,
            "within the interval"
        );
        assert_eq!(
            np.on_data(us(51), Mark::Ce).cnp,
            Mark::None,
            "49 us after the last"
        );
        assert_eq!(
            np.on_data(us(52), Mark::Ce).cnp,
            Mark::Ce,
            "a whole interval after"
        );
        assert_eq!(np.on_data(us(200), Mark::None).cnp, Mark::None);
    }

    #[test]
    fn a_cnp_carries_ce_if_any_packet_since_the_last_was_ce() {
        let mut np = NotificationPoint::cnp(us(50));
        assert_eq!(
            np.on_data(us(1), Mark::Ue).cnp,
            Mark::Ue,
            "UE alone: UE-only CNP"
        );
        assert_eq!(np.on_data(us(10), Mark::Ce).cnp, Mark::None, "remembered");
        // The CE seen within the interval rides on the next CNP, triggered by a UE.
        assert_eq!(np.on_data(us(60), Mark::Ue).cnp, Mark::Ce);
        // Reported once: the next CNP carries only what came after.
        assert_eq!(np.on_data(us(120), Mark::Ue).cnp, Mark::Ue);
    }

    #[test]
    fn cnp_point_never_echoes() {
        let mut np = NotificationPoint::cnp(Time::ZERO);
        let r = np.on_data(Time::ZERO, Mark::Ce);
        assert_eq!((r.cnp, r.echo), (Mark::Ce, Mark::None));
    }

    #[test]
    fn poll_reports_what_it_saw_at_the_next_look() {
        let mut np = NotificationPoint::poll(us(50));
        // The first packet is a look: a marked first packet is reported at once.
        assert_eq!(np.on_data(us(100), Mark::Ue).cnp, Mark::Ue);
        assert_eq!(np.on_data(us(110), Mark::None), Reply::default());
        // A mark asks for the next look, at 150 us; later marks join it.
        let r = np.on_data(us(120), Mark::Ue);
        assert_eq!((r.cnp, r.poll_at), (Mark::None, Some(us(150))));
        assert_eq!(np.on_data(us(130), Mark::Ce), Reply::default());
        assert_eq!(np.on_poll(), Mark::Ce);
        // Nothing seen since: a look would send nothing, and none is asked for.
        assert_eq!(np.on_data(us(160), Mark::None), Reply::default());
        assert_eq!(
            np.on_data(us(250), Mark::Ue).cnp,
            Mark::Ue,
            "on a look: at once"
        );
        assert_eq!(np.on_poll(), Mark::None, "nothing left to report");
    }

    #[test]
    fn echo_returns_each_mark_on_its_ack() {
        let mut np = NotificationPoint::Echo;
        assert_eq!(np.on_data(Time::ZERO, Mark::Ce).echo, Mark::Ce);
        assert_eq!(np.on_data(Time::from_ns(1), Mark::Ue).echo, Mark::Ue);
        assert_eq!(np.on_data(Time::from_ns(2), Mark::None), Reply::default());
    }
}
