//! Injection limits of the flow-channel fabric's ingress edge: a cap on the data one edge
//! port (one host) has injected into the fabric and not yet had acknowledged.
//!
//! The count rises by a frame's units when the edge forwards it into the fabric and falls
//! by the units each ACK brings home; at or above the limit nothing more is injected, so
//! the data in the whole fabric is bounded by the number of edge ports times the limit. A
//! port with nothing in flight may always inject one frame, so a limit below a frame means
//! one frame at a time.
//!
//! Invariants (tests at the bottom): the count is what was injected less what was
//! acknowledged, never below 0 (an acknowledgement of more than is in flight is refused
//! and changes nothing).

use thiserror::Error;

/// What an injection counter refuses.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum InjectionError {
    /// More acknowledged than was injected.
    #[error("{acked} units acknowledged with {in_flight} in flight")]
    Overacknowledged {
        /// Units the ACK brought.
        acked: u64,
        /// Units in flight.
        in_flight: u64,
    },
}

/// One edge port's data in flight against its limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortInjection {
    in_flight: u64,
    peak: u64,
}

impl PortInjection {
    /// Whether a frame of `units` may be injected under a limit of `limit` units.
    pub fn may_inject(&self, units: u64, limit: u64) -> bool {
        self.in_flight == 0 || self.in_flight + units <= limit
    }

    /// A frame of `units` was injected.
    pub fn injected(&mut self, units: u64) {
        self.in_flight += units;
        self.peak = self.peak.max(self.in_flight);
    }

    /// An ACK for `units` came home.
    pub fn acked(&mut self, units: u64) -> Result<(), InjectionError> {
        if units > self.in_flight {
            return Err(InjectionError::Overacknowledged {
                acked: units,
                in_flight: self.in_flight,
            });
        }
        self.in_flight -= units;
        Ok(())
    }

    /// Units in flight.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// Most units in flight at once.
    pub fn peak(&self) -> u64 {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_injects_up_to_its_limit_and_one_frame_from_nothing() {
        let mut p = PortInjection::default();
        assert!(
            p.may_inject(10, 4),
            "nothing in flight: one frame, whatever the limit"
        );
        p.injected(10);
        assert!(!p.may_inject(1, 4));
        p.acked(10).expect("in flight");
        assert!(p.may_inject(3, 4));
        p.injected(3);
        assert!(p.may_inject(1, 4), "3 + 1 <= 4");
        p.injected(1);
        assert!(!p.may_inject(1, 4), "at the limit");
        assert_eq!((p.in_flight(), p.peak()), (4, 10));
        assert_eq!(
            p.acked(5),
            Err(InjectionError::Overacknowledged {
                acked: 5,
                in_flight: 4
            })
        );
        assert_eq!(p.in_flight(), 4, "a refused ACK changes nothing");
        p.acked(4).expect("in flight");
        assert_eq!(p.in_flight(), 0);
    }
}
