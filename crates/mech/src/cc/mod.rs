//! Sender congestion control as sans-IO state machines.
//!
//! A flow has two halves. The sender owns one [`CongestionControl`] (the reaction point):
//! the driver feeds it every piece of [`Feedback`] the network returns (a CNP, an ACK with
//! what it carries) and the bytes it sends, asks it for the current sending [`Rate`] and,
//! quinn-style, asks for the next deadline with [`CongestionControl::poll_timeout`] and calls
//! [`CongestionControl::handle_timeout`] once that time is reached. The receiver owns one
//! [`NotificationPoint`] (see [`notify`]), which decides for each data packet what goes back:
//! a CNP, an ECN echo on the ACK. A bytes-in-flight [`Window`] sits beside the rate limiter
//! for the algorithms that use one.
//!
//! A timeout handled early or late is harmless: the machines only act on timers whose
//! deadline is `<= now`.
//!
//! UE marks (ternary congestion detection) mean "your packets were only paused": DCQCN and
//! TIMELY hold their rate on UE-only feedback ([`UeReaction`]). DCTCP counts only CE marks
//! (a UE echo is an unmarked ACK to it), HPCC reads INT and PowerTCP INT or RTT samples, not
//! marks: all three ignore UE (HPCC and PowerTCP ignore CE echoes too). InfiniBand CC reads
//! a CE CNP as a BECN and ignores UE: with TCD its switches mark only at roots.
//!
//! Invariants: the rate stays within `[min_rate, line_rate]`; nothing here allocates;
//! feedback an algorithm does not use leaves it unchanged.

pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod ibcc;
pub mod notify;
pub mod powertcp;
pub mod timely;

use crate::ecn::Mark;
use crate::int::IntStack;
use crate::units::{Rate, Time};

pub use dcqcn::{Dcqcn, DcqcnConfig, DcqcnVariant};
pub use dctcp::{Dctcp, DctcpConfig};
pub use hpcc::{Hpcc, HpccConfig};
pub use ibcc::{IbCc, IbCcConfig, IbCcConfigError};
pub use notify::{NotificationPoint, Reply};
pub use powertcp::{PowerTcp, PowerTcpConfig, PowerTcpMode};
pub use timely::{Timely, TimelyConfig};

/// What the network tells a sender about one of its flows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Feedback<'a> {
    /// A congestion notification packet: the receiver saw packets of the flow marked.
    Cnp {
        /// Some were marked Congestion Experienced.
        ce: bool,
        /// Some were marked Undetermined (ternary congestion detection); a CNP with `ue`
        /// and without `ce` says the flow's queues were only paused, not congested.
        ue: bool,
    },
    /// An acknowledgement.
    Ack(Ack<'a>),
}

/// How a sender reacts to feedback that reports only UE marks (ternary congestion
/// detection: its packets passed queues that flow control paused, none that was congested).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub enum UeReaction {
    /// Hold the rate: no cut and no increase (DCQCN: the target rate becomes the current
    /// rate, the increase stages, the rate-increase timer and the byte counter restart;
    /// alpha is left alone. TIMELY: the round's update keeps the rate).
    #[default]
    Hold,
    /// DCQCN as the TCD authors' released code: [`UeReaction::Hold`], and the alpha timer
    /// restarts too (alpha stays frozen while UE keeps arriving).
    HoldRestartAlpha,
    /// Treat UE as no mark (the authors' `ENABLE_ROOTECNCC 0`: switches mark, senders
    /// ignore it).
    Ignore,
}

/// What an acknowledgement tells the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack<'a> {
    /// Cumulative: the next byte the receiver expects.
    pub acked: u64,
    /// The sender's next new byte when the ACK arrived. Algorithms that update once per
    /// round trip remember it and update again when an ACK passes it.
    pub snd_nxt: u64,
    /// A round-trip sample: from the send of a packet this ACK covers to now.
    pub rtt: Option<Time>,
    /// The mark the acknowledged packet arrived with (CE, UE or none), echoed.
    pub echo: Mark,
    /// The INT hop records the acknowledged packet collected, when the network adds them.
    pub int: Option<&'a IntStack>,
}

/// A bound on a flow's bytes in flight (sent, not yet acknowledged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Window {
    /// The window at line rate, in bytes (a base bandwidth-delay product). 0: no window.
    pub bytes: u64,
    /// Scale the window with the sending rate: `bytes x rate / line_rate`, at least 1 byte.
    pub variable: bool,
}

impl Window {
    /// No window: only the rate limits the flow.
    pub const NONE: Window = Window {
        bytes: 0,
        variable: false,
    };

    /// The bytes in flight allowed at sending rate `rate` on a NIC of `line_rate`, or
    /// `None` without a window.
    pub fn limit(&self, rate: Rate, line_rate: Rate) -> Option<u64> {
        if self.bytes == 0 {
            return None;
        }
        if !self.variable || line_rate.bps() == 0 {
            return Some(self.bytes);
        }
        // u128: bytes x bits per second overflows u64 beyond ~18 MB x 1 Tb/s.
        let w = u128::from(self.bytes) * u128::from(rate.bps()) / u128::from(line_rate.bps());
        Some((w as u64).max(1))
    }
}

/// One flow's congestion controller (its reaction point).
#[derive(Debug, Clone)]
pub enum CongestionControl {
    /// No end-to-end congestion control: send at line rate, rely on PFC alone.
    None {
        /// The NIC's line rate.
        line_rate: Rate,
    },
    /// DCQCN reaction point.
    Dcqcn(Dcqcn),
    /// DCTCP, rate-based.
    Dctcp(Dctcp),
    /// TIMELY.
    Timely(Timely),
    /// HPCC (boxed: its hop records make it several times larger than the others).
    Hpcc(Box<Hpcc>),
    /// PowerTCP, INT or delay mode (boxed like HPCC, for its hop records).
    PowerTcp(Box<PowerTcp>),
    /// InfiniBand congestion control (CCTI and inter-packet delay).
    IbCc(IbCc),
}

impl CongestionControl {
    /// Current sending rate.
    pub fn rate(&self) -> Rate {
        match self {
            CongestionControl::None { line_rate } => *line_rate,
            CongestionControl::Dcqcn(d) => d.rate(),
            CongestionControl::Dctcp(d) => d.rate(),
            CongestionControl::Timely(t) => t.rate(),
            CongestionControl::Hpcc(h) => h.rate(),
            CongestionControl::PowerTcp(p) => p.rate(),
            CongestionControl::IbCc(c) => c.rate(),
        }
    }

    /// Feedback about this flow arrived at `now`.
    #[inline]
    pub fn on_feedback(&mut self, now: Time, feedback: &Feedback) {
        match (self, feedback) {
            (CongestionControl::None { .. }, _) => {}
            (CongestionControl::Dcqcn(d), f) => d.on_feedback(now, f),
            (CongestionControl::Dctcp(d), Feedback::Ack(ack)) => d.on_ack(ack),
            (CongestionControl::Timely(t), Feedback::Ack(ack)) => t.on_ack(ack),
            (CongestionControl::Hpcc(h), Feedback::Ack(ack)) => {
                if let Some(int) = ack.int {
                    h.on_ack(ack, int);
                }
            }
            (CongestionControl::PowerTcp(p), Feedback::Ack(ack)) => p.on_ack(now, ack),
            (CongestionControl::IbCc(c), Feedback::Cnp { ce: true, .. }) => c.on_becn(now),
            (CongestionControl::IbCc(_), Feedback::Ack(_)) | (_, Feedback::Cnp { .. }) => {}
        }
    }

    /// Whether a rate change moves the departure of the flow's next packet (already timed
    /// at the old rate after the last one) by the difference of the last packet's wire
    /// time at the two rates, instead of taking effect from the next packet on (HPCC, as
    /// the ns-3 HPCC simulator's `ChangeRate`, and PowerTCP, which the PowerTCP authors'
    /// simulator runs on the same code).
    #[inline]
    pub fn retimes_departures(&self) -> bool {
        matches!(
            self,
            CongestionControl::Hpcc(_) | CongestionControl::PowerTcp(_)
        )
    }

    /// Whether ACKs can change the algorithm's state (the driver may skip
    /// [`Self::on_feedback`] for ACKs otherwise: a window-less DCQCN flow's ACKs are
    /// transport only).
    #[inline]
    pub fn reads_acks(&self) -> bool {
        !matches!(
            self,
            CongestionControl::None { .. }
                | CongestionControl::Dcqcn(_)
                | CongestionControl::IbCc(_)
        )
    }

    /// Whether the algorithm reads round-trip samples (the driver times packets for it):
    /// TIMELY, and PowerTCP in delay mode.
    #[inline]
    pub fn wants_rtt(&self) -> bool {
        match self {
            CongestionControl::Timely(_) => true,
            CongestionControl::PowerTcp(p) => p.mode() == PowerTcpMode::Delay,
            _ => false,
        }
    }

    /// The sender put `bytes` of this flow on the wire at `now`.
    pub fn on_bytes_sent(&mut self, now: Time, bytes: u64) {
        if let CongestionControl::Dcqcn(d) = self {
            d.on_bytes_sent(now, bytes);
        }
    }

    /// Earliest time at which [`Self::handle_timeout`] has work to do, if any.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            CongestionControl::Dcqcn(d) => d.poll_timeout(),
            CongestionControl::IbCc(c) => c.poll_timeout(),
            _ => None,
        }
    }

    /// Earliest time at which a timer can change [`Self::rate`], if any; the timers before
    /// it (DCQCN's alpha updates) are replayed by the next input or
    /// [`Self::handle_timeout`].
    pub fn poll_rate_timeout(&self) -> Option<Time> {
        match self {
            CongestionControl::Dcqcn(d) => d.poll_rate_timeout(),
            CongestionControl::IbCc(c) => c.poll_timeout(),
            _ => None,
        }
    }

    /// Runs every timer whose deadline is `<= now`.
    pub fn handle_timeout(&mut self, now: Time) {
        match self {
            CongestionControl::Dcqcn(d) => d.handle_timeout(now),
            CongestionControl::IbCc(c) => c.handle_timeout(now),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_window_is_unbounded() {
        let line = Rate::from_gbps(100);
        assert_eq!(Window::NONE.limit(line, line), None);
    }

    #[test]
    fn fixed_window_ignores_the_rate() {
        let w = Window {
            bytes: 153_000,
            variable: false,
        };
        let line = Rate::from_gbps(100);
        assert_eq!(w.limit(Rate::from_gbps(10), line), Some(153_000));
    }

    #[test]
    fn variable_window_scales_with_the_rate_and_stays_positive() {
        let w = Window {
            bytes: 153_000,
            variable: true,
        };
        let line = Rate::from_gbps(100);
        assert_eq!(w.limit(line, line), Some(153_000));
        assert_eq!(w.limit(Rate::from_gbps(25), line), Some(38_250));
        assert_eq!(w.limit(Rate(1), line), Some(1));
    }

    #[test]
    fn powertcp_retimes_reads_acks_and_wants_rtt_in_delay_mode_only() {
        let line = Rate::from_gbps(100);
        for (mode, rtt) in [(PowerTcpMode::Int, false), (PowerTcpMode::Delay, true)] {
            let cfg = PowerTcpConfig::for_mode(mode);
            let cc =
                CongestionControl::PowerTcp(Box::new(PowerTcp::new(cfg, line, Time::from_us(10))));
            assert!(cc.retimes_departures() && cc.reads_acks());
            assert_eq!(cc.wants_rtt(), rtt);
            assert_eq!(cc.rate(), line);
            assert_eq!(cc.poll_timeout(), None);
        }
        // Delay mode: the second RTT sample, 30 % above the first, cuts.
        let mut cc = CongestionControl::PowerTcp(Box::new(PowerTcp::new(
            PowerTcpConfig::for_mode(PowerTcpMode::Delay),
            line,
            Time::from_us(10),
        )));
        for (i, rtt_us) in [(0, 10), (1, 13)] {
            let ack = Ack {
                acked: 1 + 10_000 * i,
                snd_nxt: 10_000 * (i + 1),
                rtt: Some(Time::from_us(rtt_us)),
                echo: Mark::None,
                int: None,
            };
            cc.on_feedback(Time::from_us(10 * i), &Feedback::Ack(ack));
        }
        assert!(cc.rate() < line);
    }

    #[test]
    fn ib_cc_reads_ce_cnps_as_becns_and_ignores_ue_and_acks() {
        let line = Rate::from_gbps(100);
        let mut cc = CongestionControl::IbCc(IbCc::new(IbCcConfig::default(), line));
        assert!(!cc.reads_acks());
        let ue = Feedback::Cnp {
            ce: false,
            ue: true,
        };
        cc.on_feedback(Time::ZERO, &ue);
        assert_eq!(cc.rate(), line, "UE is no BECN");
        cc.on_feedback(Time::ZERO, &Feedback::Cnp { ce: true, ue: true });
        assert!(cc.rate() < line);
        let t = cc.poll_rate_timeout().expect("the CCTI timer runs");
        cc.handle_timeout(t);
        assert_eq!(cc.rate(), line, "one step back");
        assert_eq!(cc.poll_timeout(), None);
    }

    #[test]
    fn no_algorithm_ignores_feedback() {
        let line = Rate::from_gbps(100);
        let mut cc = CongestionControl::None { line_rate: line };
        cc.on_feedback(
            Time::from_us(1),
            &Feedback::Cnp {
                ce: true,
                ue: false,
            },
        );
        assert_eq!(cc.rate(), line);
        assert_eq!(cc.poll_timeout(), None);
    }
}
