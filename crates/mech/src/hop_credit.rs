//! Per-flow hop-by-hop credits of the flow-channel fabric (the patent's HeadroomACK): a
//! switch whose queue of one flow grows past a watermark meters that flow's upstream hop,
//! not the whole link.
//!
//! Every channel entry has both roles, as the patent's IFCT has both flags:
//! - downstream (`UM`, upstream metered): when the flow's queue here exceeds `target` and
//!   the flow is not metered yet, the switch meters it and sends a HeadroomACK of `credit`
//!   bytes upstream. While metered, each packet of the flow it forwards returns credit by
//!   the queue left: above `high` none, above `target` the packet's size less `margin`, at
//!   or below `target` its size plus `margin`; below `drop` the switch stops metering and
//!   sends the clearing HeadroomACK (the patent's maximum credit) instead.
//! - upstream (`DM`, downstream metered): a HeadroomACK sets DM and adds its credit to the
//!   signed `headroom`; while DM is set the flow may forward only with `headroom > 0`, and
//!   each packet forwarded takes its size off (it may go negative). The clearing
//!   HeadroomACK clears DM and the headroom.
//!
//! Invariants (tests at the bottom): `drop < target < high` ([`HopCreditConfig::validate`]);
//! a metered flow is always cleared once its queue falls below `drop`; an entry neither
//! metered nor metering holds no headroom ([`Metering::is_idle`]), so a driver may forget
//! it.

use thiserror::Error;

/// Watermarks and credits of per-flow hop-by-hop flow control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HopCreditConfig {
    /// A flow queueing more than this gets no credit back for the packets it forwards.
    pub high: u64,
    /// A flow queueing more than this is metered; above it, less credit comes back than
    /// was forwarded, at or below it more.
    pub target: u64,
    /// A metered flow whose queue falls below this is no longer metered.
    pub drop: u64,
    /// How much less (or more) than a forwarded packet's size the credit is.
    pub margin: u64,
    /// The credit of the HeadroomACK that starts metering.
    pub credit: u64,
}

impl Default for HopCreditConfig {
    fn default() -> Self {
        HopCreditConfig {
            high: 64 * 1024,
            target: 16 * 1024,
            drop: 4 * 1024,
            margin: 64,
            credit: 0,
        }
    }
}

/// A configuration the credits cannot run with.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum HopCreditConfigError {
    /// The watermarks are not in order.
    #[error(
        "the watermarks must be in order, 0 < drop < target < high: drop {drop} B, target \
         {target} B, high {high} B"
    )]
    Watermarks {
        /// The drop watermark.
        drop: u64,
        /// The target watermark.
        target: u64,
        /// The high watermark.
        high: u64,
    },
}

impl HopCreditConfig {
    /// This configuration with a congested flow's watermarks (`None`: as it is).
    pub fn under(&self, w: Option<crate::endpoint_congestion::Watermarks>) -> HopCreditConfig {
        match w {
            Some(w) => HopCreditConfig {
                high: w.high,
                target: w.target,
                drop: w.drop,
                ..*self
            },
            None => *self,
        }
    }

    /// Checks the invariants of the module documentation.
    pub fn validate(&self) -> Result<(), HopCreditConfigError> {
        if self.drop == 0 || self.drop >= self.target || self.target >= self.high {
            return Err(HopCreditConfigError::Watermarks {
                drop: self.drop,
                target: self.target,
                high: self.high,
            });
        }
        Ok(())
    }
}

/// A HeadroomACK: credit for the upstream hop of one flow, or the end of its metering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeadroomAck {
    /// This many bytes more may be forwarded.
    Credit(u32),
    /// Metering ends (the patent's maximum credit).
    Clear,
}

/// One channel's hop-by-hop credit state at one switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Metering {
    /// UM: this switch meters the flow's upstream hop.
    metering: bool,
    /// DM: the downstream hop meters this switch.
    metered: bool,
    /// Bytes it may still forward while metered (signed: a packet may overdraw it).
    headroom: i64,
}

impl Metering {
    /// Neither metered nor metering.
    pub fn is_idle(&self) -> bool {
        !self.metering && !self.metered
    }

    /// Whether this switch meters the flow's upstream hop (UM).
    pub fn is_metering(&self) -> bool {
        self.metering
    }

    /// Whether the downstream hop meters this switch (DM).
    pub fn is_metered(&self) -> bool {
        self.metered
    }

    /// A packet of the flow arrived, leaving `queued` bytes of it here: the HeadroomACK
    /// that starts metering its upstream hop, if due.
    pub fn arrived(&mut self, cfg: &HopCreditConfig, queued: u64) -> Option<HeadroomAck> {
        (!self.metering && queued > cfg.target).then(|| {
            self.metering = true;
            HeadroomAck::Credit(u32::try_from(cfg.credit).unwrap_or(u32::MAX))
        })
    }

    /// A packet of `bytes` of the flow left, leaving `queued` bytes of it here: what goes
    /// upstream for it, if the flow is metered.
    pub fn left(&mut self, cfg: &HopCreditConfig, queued: u64, bytes: u64) -> Option<HeadroomAck> {
        if !self.metering {
            return None;
        }
        if queued < cfg.drop {
            self.metering = false;
            return Some(HeadroomAck::Clear);
        }
        let credit = if queued > cfg.high {
            0
        } else if queued > cfg.target {
            bytes.saturating_sub(cfg.margin)
        } else {
            bytes + cfg.margin
        };
        (credit > 0).then(|| HeadroomAck::Credit(u32::try_from(credit).unwrap_or(u32::MAX)))
    }

    /// A HeadroomACK came from the downstream hop.
    pub fn credited(&mut self, ack: HeadroomAck) {
        match ack {
            HeadroomAck::Credit(bytes) => {
                self.metered = true;
                self.headroom += i64::from(bytes);
            }
            HeadroomAck::Clear => {
                self.metered = false;
                self.headroom = 0;
            }
        }
    }

    /// Whether the flow may forward a packet now.
    pub fn may_forward(&self) -> bool {
        !self.metered || self.headroom > 0
    }

    /// A packet of `bytes` was forwarded.
    pub fn forwarded(&mut self, bytes: u64) {
        if self.metered {
            self.headroom -= i64::try_from(bytes).unwrap_or(i64::MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> HopCreditConfig {
        HopCreditConfig {
            high: 30_000,
            target: 10_000,
            drop: 2_000,
            margin: 100,
            credit: 500,
        }
    }

    #[test]
    fn downstream_meters_above_target_and_returns_credit_by_band() {
        let c = cfg();
        let mut m = Metering::default();
        assert_eq!(m.arrived(&c, 10_000), None, "at the target");
        assert_eq!(m.left(&c, 9_000, 1_000), None, "not metering");
        assert_eq!(m.arrived(&c, 10_001), Some(HeadroomAck::Credit(500)));
        assert!(m.is_metering());
        assert_eq!(m.arrived(&c, 20_000), None, "once");
        assert_eq!(m.left(&c, 31_000, 1_000), None, "above high: nothing back");
        assert_eq!(m.left(&c, 30_000, 1_000), Some(HeadroomAck::Credit(900)));
        assert_eq!(m.left(&c, 10_000, 1_000), Some(HeadroomAck::Credit(1_100)));
        assert_eq!(m.left(&c, 2_000, 1_000), Some(HeadroomAck::Credit(1_100)));
        assert_eq!(m.left(&c, 1_999, 1_000), Some(HeadroomAck::Clear));
        assert!(m.is_idle());
        assert_eq!(m.left(&c, 0, 1_000), None, "one clear");
    }

    #[test]
    fn upstream_forwards_on_credit_and_may_overdraw_it() {
        let mut m = Metering::default();
        assert!(m.may_forward());
        m.forwarded(1_000);
        assert!(m.is_idle(), "not metered: nothing counted");
        m.credited(HeadroomAck::Credit(0));
        assert!(m.is_metered());
        assert!(!m.may_forward(), "metered with no credit");
        m.credited(HeadroomAck::Credit(500));
        assert!(m.may_forward());
        m.forwarded(1_000);
        assert!(!m.may_forward(), "overdrawn: -500");
        m.credited(HeadroomAck::Credit(600));
        assert!(m.may_forward(), "+100");
        m.credited(HeadroomAck::Clear);
        assert!(m.may_forward() && m.is_idle());
    }

    #[test]
    fn validate_wants_the_watermarks_in_order() {
        assert_eq!(HopCreditConfig::default().validate(), Ok(()));
        for (drop, target, high) in [(0, 10, 20), (10, 10, 20), (5, 20, 20), (30, 20, 10)] {
            let c = HopCreditConfig {
                drop,
                target,
                high,
                ..cfg()
            };
            assert!(
                matches!(c.validate(), Err(HopCreditConfigError::Watermarks { .. })),
                "{drop} {target} {high}"
            );
        }
    }
}
