//! Injection limits of the flow-channel fabric's ingress edge: a cap on the data one edge
//! port (one host) has injected into the fabric and not yet had acknowledged, and caps per
//! injection limit id (ILID: the applications mapped to it) within that port.
//!
//! The count rises by a frame's units when the edge forwards it into the fabric and falls
//! by the units each ACK brings home; at or above the limit nothing more is injected, so
//! the data in the whole fabric is bounded by the number of edge ports times the limit. A
//! port with nothing in flight may always inject one frame, so a limit below a frame means
//! one frame at a time.
//!
//! Per ILID ([`IlidInjection`], under [`IlidLimits`]) the same holds for each ILID's own
//! count, against the smaller of its absolute limit and its dynamic share of the node
//! limit: the node limit split among the *active* ILIDs (those with data in flight, and the
//! one asking) in proportion to their ratios, so one application alone gets the whole node
//! limit and two with ratios 3 and 1 get three quarters and one quarter of it.
//!
//! Invariants (tests at the bottom): every count is what was injected less what was
//! acknowledged, never below 0 (an acknowledgement of more than is in flight is refused
//! and changes nothing); an ILID with nothing in flight may always inject one frame, so
//! nothing is held that no ACK will release.

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

/// Injection limit ids per edge port.
pub const ILIDS: usize = crate::inq_arbiter::ILIDS;

/// The ILID limits of every edge port: an absolute limit per ILID (units, `None`: none),
/// a ratio per ILID and a node limit shared among the active ILIDs by those ratios
/// (`None`: no dynamic share).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IlidLimits {
    /// Per ILID: its absolute limit in units.
    pub limit: [Option<u64>; ILIDS],
    /// Per ILID: its weight in the split of the node limit (at least 1).
    pub ratio: [u32; ILIDS],
    /// The node limit in units.
    pub node: Option<u64>,
}

impl Default for IlidLimits {
    fn default() -> Self {
        IlidLimits {
            limit: [None; ILIDS],
            ratio: [1; ILIDS],
            node: None,
        }
    }
}

/// One edge port's data in flight per ILID.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IlidInjection {
    in_flight: [u64; ILIDS],
    peak: [u64; ILIDS],
}

impl IlidInjection {
    /// The most ILID `ilid` may have in flight now under `limits`: the smaller of its
    /// absolute limit and its share of the node limit among the active ILIDs (`ilid`
    /// counted active); `u64::MAX` if neither is set.
    pub fn cap(&self, ilid: usize, limits: &IlidLimits) -> u64 {
        let share = limits.node.map_or(u64::MAX, |node| {
            let active: u64 = (0..ILIDS)
                .filter(|&j| j == ilid || self.in_flight[j] > 0)
                .map(|j| u64::from(limits.ratio[j].max(1)))
                .sum();
            let mine = u64::from(limits.ratio[ilid].max(1));
            // The product fits: node limits are byte counts over units (< 2^64 / 2^32).
            (u128::from(node) * u128::from(mine) / u128::from(active.max(1))) as u64
        });
        limits.limit[ilid].unwrap_or(u64::MAX).min(share)
    }

    /// Whether ILID `ilid` may inject a frame of `units` under `limits`.
    pub fn may_inject(&self, ilid: usize, units: u64, limits: &IlidLimits) -> bool {
        let now = self.in_flight[ilid];
        now == 0 || now.saturating_add(units) <= self.cap(ilid, limits)
    }

    /// A frame of `units` of ILID `ilid` was injected.
    pub fn injected(&mut self, ilid: usize, units: u64) {
        self.in_flight[ilid] += units;
        self.peak[ilid] = self.peak[ilid].max(self.in_flight[ilid]);
    }

    /// An ACK for `units` of ILID `ilid` came home.
    pub fn acked(&mut self, ilid: usize, units: u64) -> Result<(), InjectionError> {
        let in_flight = self.in_flight[ilid];
        if units > in_flight {
            return Err(InjectionError::Overacknowledged {
                acked: units,
                in_flight,
            });
        }
        self.in_flight[ilid] -= units;
        Ok(())
    }

    /// Units in flight per ILID.
    pub fn in_flight(&self) -> [u64; ILIDS] {
        self.in_flight
    }

    /// Most units in flight at once per ILID.
    pub fn peak(&self) -> [u64; ILIDS] {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(node: Option<u64>, ratio: [u32; ILIDS]) -> IlidLimits {
        IlidLimits {
            node,
            ratio,
            ..IlidLimits::default()
        }
    }

    #[test]
    fn one_active_ilid_gets_the_whole_node_limit() {
        let l = limits(Some(100), [1; ILIDS]);
        let mut p = IlidInjection::default();
        assert_eq!(p.cap(3, &l), 100, "alone, whatever the others' ratios");
        p.injected(3, 90);
        assert!(p.may_inject(3, 10, &l));
        assert!(!p.may_inject(3, 11, &l));
        assert_eq!(p.cap(3, &l), 100);
    }

    #[test]
    fn active_ilids_split_the_node_limit_by_their_ratios() {
        let mut ratio = [1; ILIDS];
        ratio[0] = 3;
        let l = limits(Some(100), ratio);
        let mut p = IlidInjection::default();
        p.injected(0, 10);
        // ILID 1 asking makes two active: 3 : 1.
        assert_eq!(p.cap(1, &l), 25);
        assert_eq!(p.cap(0, &l), 100, "ILID 1 is not active until it injects");
        p.injected(1, 5);
        assert_eq!(p.cap(0, &l), 75);
        assert_eq!(p.cap(1, &l), 25);
        assert!(p.may_inject(1, 20, &l) && !p.may_inject(1, 21, &l));
        // A third, idle ILID asking: 3 : 1 : 1.
        assert_eq!(p.cap(2, &l), 20);
        // ILID 1 drains: ILID 0 has the node limit again.
        p.acked(1, 5).expect("in flight");
        assert_eq!(p.cap(0, &l), 100);
        assert_eq!(p.peak()[1], 5);
    }

    #[test]
    fn the_absolute_limit_caps_the_share_and_nothing_in_flight_sends_one_frame() {
        let mut l = limits(Some(100), [1; ILIDS]);
        l.limit[2] = Some(30);
        let mut p = IlidInjection::default();
        assert_eq!(p.cap(2, &l), 30);
        assert!(p.may_inject(2, 500, &l), "nothing in flight: one frame");
        p.injected(2, 500);
        assert!(!p.may_inject(2, 1, &l));
        assert_eq!(p.cap(7, &l), 50, "two active ILIDs, equal ratios");
        let unlimited = IlidLimits::default();
        assert_eq!(p.cap(2, &unlimited), u64::MAX);
        assert_eq!(
            p.acked(2, 501),
            Err(InjectionError::Overacknowledged {
                acked: 501,
                in_flight: 500
            })
        );
        assert_eq!(p.in_flight()[2], 500, "a refused ACK changes nothing");
    }

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
