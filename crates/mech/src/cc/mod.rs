//! Sender congestion control as sans-IO state machines.
//!
//! A sender owns one [`CongestionControl`] per flow. The driver tells it about CNPs and sent
//! bytes, asks it for the current sending [`Rate`], and, quinn-style, asks for the next
//! deadline with [`CongestionControl::poll_timeout`] and calls
//! [`CongestionControl::handle_timeout`] once that time is reached. A timeout handled early
//! or late is harmless: the machine only acts on timers whose deadline is `<= now`.
//!
//! Invariants: the rate stays within `[min_rate, line_rate]`; nothing here allocates.

pub mod dcqcn;

use crate::units::{Rate, Time};

pub use dcqcn::{Dcqcn, DcqcnConfig, DcqcnVariant};

/// One flow's congestion controller.
#[derive(Debug, Clone)]
pub enum CongestionControl {
    /// No end-to-end congestion control: send at line rate, rely on PFC alone.
    None {
        /// The NIC's line rate.
        line_rate: Rate,
    },
    /// DCQCN reaction point.
    Dcqcn(Dcqcn),
}

impl CongestionControl {
    /// Current sending rate.
    pub fn rate(&self) -> Rate {
        match self {
            CongestionControl::None { line_rate } => *line_rate,
            CongestionControl::Dcqcn(d) => d.rate(),
        }
    }

    /// A congestion notification packet for this flow arrived at `now`.
    pub fn on_cnp(&mut self, now: Time) {
        if let CongestionControl::Dcqcn(d) = self {
            d.on_cnp(now);
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
            CongestionControl::None { .. } => None,
            CongestionControl::Dcqcn(d) => d.poll_timeout(),
        }
    }

    /// Earliest time at which a timer can change [`Self::rate`], if any; the timers before
    /// it (DCQCN's alpha updates) are replayed by the next input or
    /// [`Self::handle_timeout`].
    pub fn poll_rate_timeout(&self) -> Option<Time> {
        match self {
            CongestionControl::None { .. } => None,
            CongestionControl::Dcqcn(d) => d.poll_rate_timeout(),
        }
    }

    /// Runs every timer whose deadline is `<= now`.
    pub fn handle_timeout(&mut self, now: Time) {
        if let CongestionControl::Dcqcn(d) = self {
            d.handle_timeout(now);
        }
    }
}
