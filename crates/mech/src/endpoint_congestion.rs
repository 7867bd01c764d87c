//! Endpoint congestion in the flow-channel fabric: the egress edge watches its output
//! buffer towards a host, and the flows feeding a congested one are held to an injection
//! limit, chosen by the congestion's severity, on every hop of their channels.
//!
//! The egress edge measures three things of the buffer at every enqueue and dequeue of a
//! data packet: bytes queued, packets queued and how fast the depth grows (over a window).
//! Any one above its threshold is congestion. The patent leaves the severity's scale to the
//! implementation; here each doubling of bytes (or packets) above the threshold raises it
//! one level, growth faster than its threshold is at least level 1, and the highest level
//! is the table's last:
//!
//! ```text
//! level(depth, threshold) = 0                                   if depth <= threshold
//!                         = 1 + floor(log2(depth / threshold))   otherwise
//! severity = min(levels, max(level(bytes, B), level(packets, P), growth > G ? 1 : 0))
//! ```
//!
//! Severity `s` ≥ 1 limits a flow's `flow_extent` (data forwarded and not yet acknowledged)
//! to `limits[s − 1]` bytes at every hop that knows it; a hop may always forward when
//! nothing of the flow is in flight, so a limit of 0 means one packet at a time. Deeper
//! queues give higher severities and lower limits, which shrink the queue: the loop settles
//! where an incast's flows together keep about the limit each in flight.
//!
//! The same table may give a severity its own watermarks (`high`, `target`, `drop`) for the
//! flow's queues at every hop: what FGFC and per-flow hop-by-hop credits compare a
//! congested flow's queue with instead of their own ([`EndpointConfig::watermarks_for`]),
//! so that a more severe congestion throttles its flows earlier. Severities beyond the
//! last entry given use the last.
//!
//! At the highest severity the patent adds a pacing rule: the ingress edge releases a
//! flow's next packet only `release_delay` after its previous ACK came home
//! ([`EndpointConfig::release_at`]), which spaces the one packet at a time a limit of 0
//! allows.
//!
//! Invariants (tests at the bottom): the monitor's bytes and packets are what was enqueued
//! less what was dequeued (a dequeue of more than is queued is clamped, never wraps);
//! severity is 0 exactly when no measure exceeds its threshold, and never above `levels`;
//! limits never rise with severity, and watermarks neither (each `drop < target < high`),
//! as [`EndpointConfig::validate`] checks.

use crate::units::{Rate, Time};
use thiserror::Error;

/// Severity levels a configuration may have at the most.
pub const MAX_LEVELS: usize = 8;

/// The thresholds of an egress edge's congestion detector and the per-severity injection
/// limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct EndpointConfig {
    /// Congested above this many bytes queued.
    pub bytes: u64,
    /// Congested above this many packets queued.
    pub packets: u32,
    /// Congested while the depth grows faster than this (`None`: growth is not watched).
    pub growth: Option<Rate>,
    /// The window growth is measured over.
    pub window: Time,
    /// Severity `s` limits a flow's data in flight to `limits[s − 1]` bytes; only the
    /// first `levels` entries are used.
    pub limits: [u64; MAX_LEVELS],
    /// Severity levels (1 to [`MAX_LEVELS`]).
    pub levels: u8,
    /// Severity `s` gives its flows' queues the watermarks `watermarks[s − 1]`; the first
    /// `watermark_levels` entries are given (0: none, every severity keeps FGFC's and the
    /// hop credits' own), and severities beyond them use the last.
    pub watermarks: [Watermarks; MAX_LEVELS],
    /// Entries of `watermarks` given (0 to `levels`).
    pub watermark_levels: u8,
    /// At the highest severity (`levels`), the ingress edge releases a flow's next packet
    /// only this long after its previous ACK came home (0: as soon as the limit allows).
    pub release_delay: Time,
}

/// The watermarks of a flow's queue at a hop: FGFC pauses its source above `target` until
/// it falls below `drop`; hop-by-hop credits meter it above `target`, return no credit above
/// `high` and stop below `drop`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Watermarks {
    /// No credit comes back above this (hop-by-hop credits).
    pub high: u64,
    /// Throttling starts above this.
    pub target: u64,
    /// ... and ends below this.
    pub drop: u64,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            bytes: 32 * 1024,
            packets: 64,
            growth: None,
            window: Time::from_ns(1000),
            limits: [65536, 32768, 16384, 8192, 4096, 0, 0, 0],
            levels: 6,
            watermarks: [Watermarks::default(); MAX_LEVELS],
            watermark_levels: 0,
            release_delay: Time::ZERO,
        }
    }
}

/// A configuration the detector cannot run with.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EndpointConfigError {
    /// `levels` is 0 or above [`MAX_LEVELS`].
    #[error("{0} severity levels; give 1 to {MAX_LEVELS}")]
    Levels(usize),
    /// A threshold of 0 would call every queued byte congestion.
    #[error("the {0} threshold must be at least 1")]
    ZeroThreshold(&'static str),
    /// Growth is watched over an empty window.
    #[error("the growth window must be longer than 0")]
    ZeroWindow,
    /// A higher severity would allow more in flight than a lower one.
    #[error("limits must not rise with severity: level {level} allows {limit} B, level {prev_level} {prev} B")]
    LimitRises {
        /// The higher level (1-based).
        level: usize,
        /// Its limit.
        limit: u64,
        /// The level below it.
        prev_level: usize,
        /// Its limit.
        prev: u64,
    },
    /// More watermark entries than severity levels.
    #[error("{given} watermark entries for {levels} severity levels")]
    WatermarkLevels {
        /// Entries given.
        given: usize,
        /// Severity levels.
        levels: usize,
    },
    /// A severity's watermarks are not `drop < target < high`.
    #[error("severity {level}: watermarks must be drop < target < high, found drop {drop} B, target {target} B, high {high} B")]
    WatermarkOrder {
        /// The severity (1-based).
        level: usize,
        /// Its high watermark.
        high: u64,
        /// Its target.
        target: u64,
        /// Its drop watermark.
        drop: u64,
    },
    /// A higher severity has a higher watermark than a lower one.
    #[error("watermarks must not rise with severity: severity {level} has {what} {value} B, severity {prev_level} {prev} B")]
    WatermarkRises {
        /// The higher severity (1-based).
        level: usize,
        /// Which watermark.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The severity below it.
        prev_level: usize,
        /// Its value.
        prev: u64,
    },
}

impl EndpointConfig {
    /// Checks the invariants of the module documentation.
    pub fn validate(&self) -> Result<(), EndpointConfigError> {
        let levels = usize::from(self.levels);
        if levels == 0 || levels > MAX_LEVELS {
            return Err(EndpointConfigError::Levels(levels));
        }
        if self.bytes == 0 {
            return Err(EndpointConfigError::ZeroThreshold("bytes"));
        }
        if self.packets == 0 {
            return Err(EndpointConfigError::ZeroThreshold("packets"));
        }
        if self.growth.is_some_and(|g| g.bps() == 0) {
            return Err(EndpointConfigError::ZeroThreshold("growth"));
        }
        if self.growth.is_some() && self.window == Time::ZERO {
            return Err(EndpointConfigError::ZeroWindow);
        }
        for l in 1..levels {
            if self.limits[l] > self.limits[l - 1] {
                return Err(EndpointConfigError::LimitRises {
                    level: l + 1,
                    limit: self.limits[l],
                    prev_level: l,
                    prev: self.limits[l - 1],
                });
            }
        }
        let given = usize::from(self.watermark_levels);
        if given > levels {
            return Err(EndpointConfigError::WatermarkLevels { given, levels });
        }
        for (l, w) in self.watermarks[..given].iter().enumerate() {
            if !(w.drop < w.target && w.target < w.high) {
                return Err(EndpointConfigError::WatermarkOrder {
                    level: l + 1,
                    high: w.high,
                    target: w.target,
                    drop: w.drop,
                });
            }
            let Some(prev) = l.checked_sub(1).map(|p| self.watermarks[p]) else {
                continue;
            };
            for (what, value, before) in [
                ("high", w.high, prev.high),
                ("target", w.target, prev.target),
                ("drop", w.drop, prev.drop),
            ] {
                if value > before {
                    return Err(EndpointConfigError::WatermarkRises {
                        level: l + 1,
                        what,
                        value,
                        prev_level: l,
                        prev: before,
                    });
                }
            }
        }
        Ok(())
    }

    /// The watermarks of a flow whose channel carries severity `severity` (`None`: no
    /// congestion, or no watermarks given, so the queue keeps FGFC's and the hop
    /// credits' own).
    pub fn watermarks_for(&self, severity: u8) -> Option<Watermarks> {
        let given = usize::from(self.watermark_levels);
        if severity == 0 || given == 0 {
            return None;
        }
        Some(self.watermarks[usize::from(severity).min(given) - 1])
    }

    /// The severity of a buffer holding `bytes` in `packets` that grew `grown` bytes over
    /// the last `elapsed` (0 when none of them exceeds its threshold).
    pub fn severity(&self, bytes: u64, packets: u32, (grown, elapsed): (u64, Time)) -> u8 {
        let level = |depth: u64, threshold: u64| {
            if depth <= threshold {
                0
            } else {
                1 + (depth / threshold).ilog2()
            }
        };
        let growing = self.growth.is_some_and(|g| {
            elapsed > Time::ZERO
                && u128::from(grown) * 8 * 1_000_000_000_000
                    > u128::from(g.bps()) * u128::from(elapsed.as_ps())
        });
        let s = level(bytes, self.bytes.max(1))
            .max(level(u64::from(packets), u64::from(self.packets.max(1))))
            .max(u32::from(growing));
        // At most `levels`, which is at most 8: fits in u8.
        s.min(u32::from(self.levels)) as u8
    }

    /// The bytes a flow of severity `severity` may have in flight (`None`: 0, no limit).
    pub fn limit(&self, severity: u8) -> Option<u64> {
        let s = usize::from(severity.min(self.levels));
        (s > 0).then(|| self.limits[s - 1])
    }

    /// When the ingress edge may release the next packet of a flow of severity `severity`
    /// whose previous ACK came home at `acked`: `release_delay` later at the highest
    /// severity, else whenever its limit allows (`None`).
    pub fn release_at(&self, severity: u8, acked: Time) -> Option<Time> {
        (self.release_delay > Time::ZERO && severity >= self.levels && severity > 0)
            .then(|| acked + self.release_delay)
    }
}

/// One egress edge output's detector: what is queued towards the host and how fast it
/// grew.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EgressMonitor {
    bytes: u64,
    packets: u32,
    /// Start of the current growth window and the depth then.
    window_start: Time,
    window_bytes: u64,
    /// The last full window's growth (bytes, over how long).
    grown: (u64, Time),
}

impl EgressMonitor {
    /// A data packet of `bytes` joined the buffer at `now`: the buffer's severity after it.
    pub fn enqueue(&mut self, cfg: &EndpointConfig, now: Time, bytes: u64) -> u8 {
        self.bytes += bytes;
        self.packets += 1;
        self.observe(cfg, now)
    }

    /// A data packet of `bytes` left the buffer at `now`: the buffer's severity after it.
    pub fn dequeue(&mut self, cfg: &EndpointConfig, now: Time, bytes: u64) -> u8 {
        self.bytes = self.bytes.saturating_sub(bytes);
        self.packets = self.packets.saturating_sub(1);
        self.observe(cfg, now)
    }

    /// Bytes queued.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Packets queued.
    pub fn packets(&self) -> u32 {
        self.packets
    }

    fn observe(&mut self, cfg: &EndpointConfig, now: Time) -> u8 {
        if cfg.growth.is_some() {
            let elapsed = now.saturating_sub(self.window_start);
            if elapsed >= cfg.window {
                self.grown = (self.bytes.saturating_sub(self.window_bytes), elapsed);
                self.window_start = now;
                self.window_bytes = self.bytes;
            }
        }
        cfg.severity(self.bytes, self.packets, self.grown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> EndpointConfig {
        EndpointConfig {
            bytes: 10_000,
            packets: 100,
            growth: None,
            window: Time::from_ns(100),
            limits: [8000, 4000, 2000, 0, 0, 0, 0, 0],
            levels: 4,
            ..EndpointConfig::default()
        }
    }

    fn marks(high: u64, target: u64, drop: u64) -> Watermarks {
        Watermarks { high, target, drop }
    }

    #[test]
    fn watermarks_follow_severity_and_the_last_covers_the_rest() {
        let mut c = cfg();
        assert_eq!(c.watermarks_for(2), None, "none given");
        c.watermarks[0] = marks(40_000, 20_000, 5_000);
        c.watermarks[1] = marks(20_000, 8_000, 2_000);
        c.watermark_levels = 2;
        c.validate().expect("valid");
        assert_eq!(c.watermarks_for(0), None, "no congestion");
        assert_eq!(c.watermarks_for(1), Some(marks(40_000, 20_000, 5_000)));
        assert_eq!(c.watermarks_for(4), Some(marks(20_000, 8_000, 2_000)));
        let fgfc = crate::fgfc::FgfcConfig::default();
        let under = fgfc.under(c.watermarks_for(3));
        assert_eq!(
            (under.target, under.drop, under.pause),
            (8_000, 2_000, fgfc.pause)
        );
        let hop = crate::hop_credit::HopCreditConfig::default().under(c.watermarks_for(1));
        assert_eq!((hop.high, hop.target, hop.drop), (40_000, 20_000, 5_000));
        assert_eq!(fgfc.under(None), fgfc);
    }

    #[test]
    fn watermarks_out_of_order_or_rising_are_refused() {
        let mut c = cfg();
        c.watermarks[0] = marks(40_000, 20_000, 20_000);
        c.watermark_levels = 1;
        assert!(matches!(
            c.validate(),
            Err(EndpointConfigError::WatermarkOrder { level: 1, .. })
        ));
        c.watermarks[0] = marks(40_000, 20_000, 5_000);
        c.watermarks[1] = marks(50_000, 8_000, 2_000);
        c.watermark_levels = 2;
        assert!(matches!(
            c.validate(),
            Err(EndpointConfigError::WatermarkRises {
                level: 2,
                what: "high",
                ..
            })
        ));
        c.watermark_levels = 5;
        assert!(matches!(
            c.validate(),
            Err(EndpointConfigError::WatermarkLevels {
                given: 5,
                levels: 4
            })
        ));
    }

    #[test]
    fn severity_doubles_per_level_and_stops_at_the_last() {
        let c = cfg();
        assert_eq!(c.severity(0, 0, (0, Time::ZERO)), 0);
        assert_eq!(
            c.severity(10_000, 1, (0, Time::ZERO)),
            0,
            "at the threshold"
        );
        assert_eq!(c.severity(10_001, 1, (0, Time::ZERO)), 1);
        assert_eq!(c.severity(19_999, 1, (0, Time::ZERO)), 1);
        assert_eq!(c.severity(20_000, 1, (0, Time::ZERO)), 2);
        assert_eq!(c.severity(40_000, 1, (0, Time::ZERO)), 3);
        assert_eq!(c.severity(80_000, 1, (0, Time::ZERO)), 4);
        assert_eq!(c.severity(10_000_000, 1, (0, Time::ZERO)), 4, "capped");
    }

    #[test]
    fn packets_alone_make_congestion() {
        let c = cfg();
        assert_eq!(c.severity(100, 100, (0, Time::ZERO)), 0);
        assert_eq!(c.severity(100, 101, (0, Time::ZERO)), 1);
        assert_eq!(c.severity(100, 250, (0, Time::ZERO)), 2);
        // The higher of the two measures counts.
        assert_eq!(c.severity(40_000, 101, (0, Time::ZERO)), 3);
    }

    #[test]
    fn growth_faster_than_its_threshold_is_level_one() {
        let c = EndpointConfig {
            growth: Some(Rate::from_gbps(10)),
            ..cfg()
        };
        // 10 Gbps over 100 ns is 125 bytes.
        assert_eq!(c.severity(200, 2, (125, Time::from_ns(100))), 0);
        assert_eq!(c.severity(200, 2, (126, Time::from_ns(100))), 1);
        // Without a window measured, growth says nothing.
        assert_eq!(c.severity(200, 2, (126, Time::ZERO)), 0);
        // Depth still counts on its own.
        assert_eq!(c.severity(20_000, 2, (126, Time::from_ns(100))), 2);
    }

    #[test]
    fn limits_by_severity() {
        let c = cfg();
        assert_eq!(c.limit(0), None);
        assert_eq!(c.limit(1), Some(8000));
        assert_eq!(c.limit(3), Some(2000));
        assert_eq!(c.limit(4), Some(0));
        assert_eq!(c.limit(9), Some(0), "above the table: its last level");
    }

    #[test]
    fn only_the_highest_severity_waits_the_release_delay() {
        let acked = Time::from_us(5);
        let off = cfg();
        assert_eq!(off.release_at(4, acked), None, "no delay configured");
        let c = EndpointConfig {
            release_delay: Time::from_ns(700),
            ..cfg()
        };
        assert_eq!(c.release_at(0, acked), None);
        assert_eq!(c.release_at(3, acked), None, "below the highest level");
        assert_eq!(c.release_at(4, acked), Some(Time::from_ns(5_700)));
        assert_eq!(c.release_at(200, acked), Some(Time::from_ns(5_700)));
    }

    #[test]
    fn monitor_counts_and_measures_growth_per_window() {
        let c = EndpointConfig {
            growth: Some(Rate::from_gbps(50)),
            ..cfg()
        };
        let mut m = EgressMonitor::default();
        // 1000 B every 100 ns is 80 Gbps: from the first full window on, congested.
        let mut sev = Vec::new();
        for i in 1..=4u64 {
            sev.push(m.enqueue(&c, Time::from_ns(100 * i), 1000));
        }
        assert_eq!(m.bytes(), 4000);
        assert_eq!(m.packets(), 4);
        assert_eq!(sev, vec![1, 1, 1, 1]);
        // Draining: growth is negative, the depth below its threshold.
        assert_eq!(m.dequeue(&c, Time::from_ns(500), 1000), 0);
        assert_eq!(
            m.dequeue(&c, Time::from_ns(550), 5000),
            0,
            "clamped at empty"
        );
        assert_eq!((m.bytes(), m.packets()), (0, 2));
    }

    #[test]
    fn monitor_without_growth_follows_depth() {
        let c = cfg();
        let mut m = EgressMonitor::default();
        let mut last = 0;
        for i in 0..25u64 {
            last = m.enqueue(&c, Time::from_ns(i), 1000);
        }
        assert_eq!(last, 2, "25,000 B is 2.5 thresholds");
        for i in 0..10u64 {
            last = m.dequeue(&c, Time::from_ns(100 + i), 1000);
        }
        assert_eq!(last, 1);
        for i in 0..5u64 {
            last = m.dequeue(&c, Time::from_ns(200 + i), 1000);
        }
        assert_eq!(last, 0);
    }

    #[test]
    fn validate_names_what_is_wrong() {
        assert_eq!(EndpointConfig::default().validate(), Ok(()));
        let bad = |f: fn(&mut EndpointConfig)| {
            let mut c = cfg();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert_eq!(bad(|c| c.levels = 0), EndpointConfigError::Levels(0));
        assert_eq!(bad(|c| c.levels = 9), EndpointConfigError::Levels(9));
        assert_eq!(
            bad(|c| c.bytes = 0),
            EndpointConfigError::ZeroThreshold("bytes")
        );
        assert_eq!(
            bad(|c| c.packets = 0),
            EndpointConfigError::ZeroThreshold("packets")
        );
        assert_eq!(
            bad(|c| {
                c.growth = Some(Rate::from_gbps(1));
                c.window = Time::ZERO;
            }),
            EndpointConfigError::ZeroWindow
        );
        assert!(matches!(
            bad(|c| c.limits[2] = 9000),
            EndpointConfigError::LimitRises { level: 3, .. }
        ));
    }
}
