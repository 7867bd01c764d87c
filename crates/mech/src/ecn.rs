//! ECN marks, and RED-style ECN marking of egress queues (DCQCN's congestion point).
//!
//! A packet's [`Mark`] only goes up (`None` < `Ue` < `Ce`): a port that would mark less
//! than a packet already carries leaves the packet's mark as it is.
//!
//! A packet leaving a queue of `q` bytes is marked with probability 0 below `kmin`,
//! `pmax × (q − kmin) / (kmax − kmin)` between the thresholds, and 1 at or above `kmax`.
//! The caller supplies the uniform random number, so marking is deterministic given the
//! caller's seeded RNG.

use crate::units::Rate;
use serde::Serialize;

/// A packet's congestion mark, as the ECN bits carry it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Mark {
    /// Not marked.
    #[default]
    None,
    /// Undetermined (ternary congestion detection): passed a queue that flow control
    /// turned ON and OFF. ECT(0), `0b10`, in the TCD authors' code.
    Ue,
    /// Congestion Experienced, `0b11`.
    Ce,
}

impl Mark {
    /// The ECN codepoint of the mark (`None`: ECT(1), `0b01`, an ECN-capable packet).
    pub fn codepoint(self) -> u8 {
        match self {
            Mark::None => 0b01,
            Mark::Ue => 0b10,
            Mark::Ce => 0b11,
        }
    }

    /// The mark after a port adds `other`: the stronger of the two (nothing downgrades CE).
    pub fn upgrade(self, other: Mark) -> Mark {
        self.max(other)
    }
}

/// Marking thresholds of one egress queue.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RedConfig {
    /// Below this queue length (bytes), never mark.
    pub kmin: u64,
    /// At or above this queue length (bytes), always mark.
    pub kmax: u64,
    /// Marking probability just below `kmax`.
    pub pmax: f64,
}

impl RedConfig {
    /// Defaults scaled by link speed, as the DCQCN experiments of the ns-3 HPCC simulator
    /// set them: Kmin = 4 KB and Kmax = 16 KB per Gb/s (400 KB / 1600 KB at 100 Gb/s),
    /// Pmax = 0.2.
    pub fn scaled(rate: Rate) -> Self {
        let gbps = rate.bps() / 1_000_000_000;
        RedConfig {
            kmin: 4_000 * gbps.max(1),
            kmax: 16_000 * gbps.max(1),
            pmax: 0.2,
        }
    }

    /// Probability of marking a packet that leaves a queue of `q` bytes.
    pub fn probability(&self, q: u64) -> f64 {
        if q < self.kmin {
            0.0
        } else if q >= self.kmax {
            1.0
        } else {
            self.pmax * (q - self.kmin) as f64 / (self.kmax - self.kmin) as f64
        }
    }

    /// Whether to mark, given `u` uniform in [0, 1).
    pub fn should_mark(&self, q: u64, u: f64) -> bool {
        let p = self.probability(q);
        p >= 1.0 || u < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_curve() {
        let r = RedConfig {
            kmin: 100,
            kmax: 200,
            pmax: 0.2,
        };
        assert_eq!(r.probability(99), 0.0);
        assert_eq!(r.probability(100), 0.0);
        assert!((r.probability(150) - 0.1).abs() < 1e-12);
        assert_eq!(r.probability(200), 1.0);
        assert!(r.should_mark(200, 0.999));
        assert!(!r.should_mark(150, 0.1));
        assert!(r.should_mark(150, 0.05));
    }

    #[test]
    fn marks_only_go_up() {
        assert_eq!(Mark::None.upgrade(Mark::Ue), Mark::Ue);
        assert_eq!(Mark::Ue.upgrade(Mark::Ce), Mark::Ce);
        assert_eq!(Mark::Ce.upgrade(Mark::Ue), Mark::Ce);
        assert_eq!(Mark::Ce.upgrade(Mark::None), Mark::Ce);
        assert_eq!(Mark::Ue.upgrade(Mark::None), Mark::Ue);
        assert_eq!((Mark::Ue.codepoint(), Mark::Ce.codepoint()), (0b10, 0b11));
    }

    #[test]
    fn scales_with_speed() {
        let r = RedConfig::scaled(Rate::from_gbps(100));
        assert_eq!((r.kmin, r.kmax), (400_000, 1_600_000));
        let r = RedConfig::scaled(Rate::from_gbps(25));
        assert_eq!((r.kmin, r.kmax), (100_000, 400_000));
    }
}
