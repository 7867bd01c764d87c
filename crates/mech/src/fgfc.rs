//! Fine-grained flow control (FGFC) of the flow-channel fabric: the ingress edge switch
//! throttles one source of a host, not the host's whole link.
//!
//! The edge watches each flow's queue at its input (the bytes of the flow received and
//! not yet forwarded). When a flow not under FGFC queues more than the `target` watermark,
//! the edge sends the host's NIC an FGFC frame naming the flow, with a pause time and a
//! credit; while it stays above the `drop` watermark, a frame of the flow arriving at least
//! half a pause time after the last FGFC frame refreshes it (a source paused outright sends
//! nothing to refresh by, so it resumes when the pause runs out and its next frame finds
//! out whether the queue is still deep). When the queue falls below `drop`, the edge sends
//! a frame of pause 0, which ends FGFC at once. The NIC, for that flow only, sends no more
//! than `credit` bytes until the pause runs out or a pause of 0 comes.
//!
//! Invariants (tests at the bottom): an edge sends a pause only from below `target` to
//! above it, or as a refresh while above `drop`, and a resume exactly once per episode,
//! when the queue falls below `drop` (`drop < target`, checked by
//! [`FgfcConfig::validate`]); a source's credit is spent, never overdrawn, and forgotten
//! when its pause ends.

use crate::units::Time;
use thiserror::Error;

/// Watermarks, pause time and credit of FGFC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FgfcConfig {
    /// A flow queueing more than this at its ingress edge is paused at its source.
    pub target: u64,
    /// ... until its queue falls below this.
    pub drop: u64,
    /// The pause an FGFC frame asks for.
    pub pause: Time,
    /// Bytes the source may still send during a pause.
    pub credit: u64,
}

impl Default for FgfcConfig {
    fn default() -> Self {
        FgfcConfig {
            target: 64 * 1024,
            drop: 16 * 1024,
            pause: Time::from_us(20),
            credit: 0,
        }
    }
}

/// A configuration FGFC cannot run with.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FgfcConfigError {
    /// The watermarks are out of order (a resume before the pause).
    #[error("the drop watermark ({drop} B) must be below the target ({target} B) and above 0")]
    Watermarks {
        /// The target watermark.
        target: u64,
        /// The drop watermark.
        drop: u64,
    },
    /// A pause of 0 would be a resume.
    #[error("the pause must be longer than 0")]
    ZeroPause,
}

impl FgfcConfig {
    /// This configuration with a congested flow's watermarks (`None`: as it is).
    pub fn under(&self, w: Option<crate::endpoint_congestion::Watermarks>) -> FgfcConfig {
        match w {
            Some(w) => FgfcConfig {
                target: w.target,
                drop: w.drop,
                ..*self
            },
            None => *self,
        }
    }

    /// Checks the invariants of the module documentation.
    pub fn validate(&self) -> Result<(), FgfcConfigError> {
        if self.drop == 0 || self.drop >= self.target {
            return Err(FgfcConfigError::Watermarks {
                target: self.target,
                drop: self.drop,
            });
        }
        if self.pause == Time::ZERO {
            return Err(FgfcConfigError::ZeroPause);
        }
        Ok(())
    }
}

/// An FGFC frame for one flow: pause it for `pause` with `credit` bytes (a pause of 0
/// resumes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FgfcFrame {
    /// How long the source holds the flow (0: it resumes now).
    pub pause: Time,
    /// Bytes it may still send meanwhile.
    pub credit: u64,
}

/// The ingress edge's FGFC state of one flow: under FGFC since the last frame sent, or not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FgfcEdge {
    /// When the last pause was sent, while the flow is under FGFC.
    paused_at: Option<Time>,
}

impl FgfcEdge {
    /// Whether the flow is under FGFC.
    pub fn is_on(&self) -> bool {
        self.paused_at.is_some()
    }

    /// A frame of the flow arrived at `now`, leaving `queued` bytes of it at the edge: the
    /// FGFC frame to send its source, if any.
    pub fn arrived(&mut self, cfg: &FgfcConfig, now: Time, queued: u64) -> Option<FgfcFrame> {
        let due = match self.paused_at {
            None => queued > cfg.target,
            Some(at) => queued >= cfg.drop && now >= at + Time(cfg.pause.as_ps() / 2),
        };
        due.then(|| {
            self.paused_at = Some(now);
            FgfcFrame {
                pause: cfg.pause,
                credit: cfg.credit,
            }
        })
    }

    /// A frame of the flow left the edge, leaving `queued` bytes of it: the resume to send
    /// its source, if the queue fell below the drop watermark.
    pub fn left(&mut self, cfg: &FgfcConfig, queued: u64) -> Option<FgfcFrame> {
        (self.paused_at.is_some() && queued < cfg.drop).then(|| {
            self.paused_at = None;
            FgfcFrame {
                pause: Time::ZERO,
                credit: 0,
            }
        })
    }
}

/// A source's FGFC state of one flow (at the NIC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FgfcSource {
    /// The pause's end (`Time::ZERO`: not paused).
    until: Time,
    /// Bytes it may still send before then.
    credit: u64,
}

impl FgfcSource {
    /// An FGFC frame arrived at `now`. Returns the pause's end, if the flow is paused now.
    pub fn receive(&mut self, now: Time, frame: FgfcFrame) -> Option<Time> {
        if frame.pause == Time::ZERO {
            *self = FgfcSource::default();
            return None;
        }
        self.until = now + frame.pause;
        self.credit = frame.credit;
        Some(self.until)
    }

    /// Whether a frame of `bytes` may go at `now`.
    pub fn may_send(&self, now: Time, bytes: u64) -> bool {
        now >= self.until || bytes <= self.credit
    }

    /// A frame of `bytes` went at `now` (which [`FgfcSource::may_send`] allowed).
    pub fn sent(&mut self, now: Time, bytes: u64) {
        if now < self.until {
            self.credit = self.credit.saturating_sub(bytes);
        }
    }

    /// The end of the last pause (`Time::ZERO`: never paused, or resumed).
    pub fn until(&self) -> Time {
        self.until
    }

    /// The pause's end, if the flow is paused at `now`.
    pub fn paused_until(&self, now: Time) -> Option<Time> {
        (now < self.until).then_some(self.until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> FgfcConfig {
        FgfcConfig {
            target: 10_000,
            drop: 2_000,
            pause: Time::from_us(10),
            credit: 1_500,
        }
    }

    #[test]
    fn the_edge_pauses_above_target_refreshes_and_resumes_below_drop() {
        let c = cfg();
        let mut e = FgfcEdge::default();
        let us = Time::from_us;
        assert_eq!(e.arrived(&c, us(0), 10_000), None, "at the target: not yet");
        let pause = Some(FgfcFrame {
            pause: us(10),
            credit: 1_500,
        });
        assert_eq!(e.arrived(&c, us(1), 10_001), pause);
        assert!(e.is_on());
        assert_eq!(
            e.arrived(&c, us(5), 20_000),
            None,
            "refreshed at half the pause"
        );
        assert_eq!(
            e.arrived(&c, us(6), 3_000),
            pause,
            "half the pause gone, still deep"
        );
        assert_eq!(e.left(&c, 2_000), None, "at the drop watermark: still on");
        assert_eq!(
            e.left(&c, 1_999),
            Some(FgfcFrame {
                pause: Time::ZERO,
                credit: 0
            })
        );
        assert!(!e.is_on());
        assert_eq!(e.left(&c, 0), None, "one resume per episode");
        assert_eq!(e.arrived(&c, us(7), 5_000), None, "below the target again");
    }

    #[test]
    fn the_source_spends_its_credit_then_waits_for_the_pause_to_end() {
        let mut s = FgfcSource::default();
        let t = Time::from_us;
        assert!(s.may_send(t(0), 9_000), "not paused");
        let frame = FgfcFrame {
            pause: t(10),
            credit: 1_500,
        };
        assert_eq!(s.receive(t(1), frame), Some(t(11)));
        assert_eq!(s.paused_until(t(2)), Some(t(11)));
        assert!(s.may_send(t(2), 1_000));
        s.sent(t(2), 1_000);
        assert!(!s.may_send(t(3), 1_000), "500 B of credit left");
        assert!(s.may_send(t(3), 500));
        assert!(s.may_send(t(11), 9_000), "the pause ran out");
        assert_eq!(s.paused_until(t(11)), None);
        s.sent(t(11), 9_000);
        // A resume ends a pause at once.
        s.receive(t(20), frame);
        assert!(!s.may_send(t(21), 9_000));
        assert_eq!(
            s.receive(
                t(22),
                FgfcFrame {
                    pause: Time::ZERO,
                    credit: 0
                }
            ),
            None
        );
        assert!(s.may_send(t(22), 9_000));
    }

    #[test]
    fn validate_names_what_is_wrong() {
        assert_eq!(FgfcConfig::default().validate(), Ok(()));
        let c = FgfcConfig {
            drop: 10_000,
            ..cfg()
        };
        assert!(matches!(
            c.validate(),
            Err(FgfcConfigError::Watermarks { .. })
        ));
        let c = FgfcConfig { drop: 0, ..cfg() };
        assert!(matches!(
            c.validate(),
            Err(FgfcConfigError::Watermarks { .. })
        ));
        let c = FgfcConfig {
            pause: Time::ZERO,
            ..cfg()
        };
        assert_eq!(c.validate(), Err(FgfcConfigError::ZeroPause));
    }
}
