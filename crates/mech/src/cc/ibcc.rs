//! InfiniBand congestion control (IBA Annex A10): the source's half.
//!
//! A switch marks FECN on packets it forwards from a congested output (the driver's
//! marking); the destination returns a BECN for every FECN-marked packet (a CNP per marked
//! packet here); the source keeps a congestion control table index (CCTI) per flow:
//! - on a BECN: `CCTI = min(CCTI + CCTI_Increase, CCTI_Limit)`;
//! - every `CCTI_Timer` while `CCTI > CCTI_Min`: `CCTI = CCTI − 1` (the timer runs on its
//!   own period; a BECN does not restart it);
//! - after each packet the source waits the table's inter-packet delay (IPD) at the current
//!   index. An entry is the delay as a multiple of that packet's own transmission time (IBA
//!   encodes it as a shift and a multiplier), so the sending rate is
//!   `line / (1 + entry)` for packets of any size.
//!
//! UE marks (ternary congestion detection) change nothing here: with TCD, switches set FECN
//! only from a port in the congestion state, and the CCTI logic is unchanged.
//!
//! Invariants: `CCTI_Min ≤ CCTI ≤ CCTI_Limit < table length`; the table never decreases
//! with the index, so a BECN never raises the rate and a timer never lowers it; the rate
//! stays within `[line / (1 + table[limit]), line]`.

use crate::units::{Rate, Time};
use std::sync::Arc;

/// The unit of `CCTI_Timer` in IBA: 1.024 µs.
pub const TIMER_UNIT: Time = Time::from_ps(1_024_000);

/// Parameters of a source's IB CC (per flow here; IBA keeps them per port and SL).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IbCcConfig {
    /// Added to the CCTI per BECN.
    pub ccti_increase: u16,
    /// The largest CCTI (an index of the table).
    pub ccti_limit: u16,
    /// The CCTI never decreases below this.
    pub ccti_min: u16,
    /// The CCTI decreases by one every this long.
    pub ccti_timer: Time,
    /// The congestion control table: inter-packet delay per index, as a multiple of the
    /// packet's transmission time. Shared by every flow.
    pub table: Arc<[f64]>,
}

/// Why an [`IbCcConfig`] cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IbCcConfigError {
    /// The table has no entry.
    #[error("the congestion control table is empty")]
    EmptyTable,
    /// An entry is negative, infinite or not a number.
    #[error("entry {index} ({value}): an inter-packet delay is 0 or more")]
    BadEntry {
        /// Its index.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// An entry is smaller than the one before: a higher index would send faster.
    #[error(
        "entry {index} ({value}) is below entry {} ({previous}): the table must not decrease",
        index - 1
    )]
    NotMonotone {
        /// The entry's index.
        index: usize,
        /// Its value.
        value: f64,
        /// The entry before it.
        previous: f64,
    },
    /// The limit is beyond the table.
    #[error("ccti_limit {limit} is beyond the table's last index ({last})")]
    LimitBeyondTable {
        /// The limit.
        limit: u16,
        /// The table's last index.
        last: usize,
    },
    /// The minimum is above the limit.
    #[error("ccti_min {min} is above ccti_limit {limit}")]
    MinAboveLimit {
        /// The minimum.
        min: u16,
        /// The limit.
        limit: u16,
    },
    /// The timer is zero.
    #[error("ccti_timer must be positive")]
    ZeroTimer,
}

impl IbCcConfigError {
    /// The table entry the error is about, if it is about one.
    pub fn entry(&self) -> Option<usize> {
        match self {
            IbCcConfigError::BadEntry { index, .. }
            | IbCcConfigError::NotMonotone { index, .. } => Some(*index),
            _ => None,
        }
    }
}

impl IbCcConfig {
    /// A table of `entries` delays from 0 at index 0 to `slowest − 1` at the last, each step
    /// slowing the rate by the same factor: `rate(i) = line × slowest^(−i / (entries − 1))`.
    pub fn geometric_table(entries: usize, slowest: f64) -> Arc<[f64]> {
        let last = entries.saturating_sub(1).max(1) as f64;
        (0..entries)
            .map(|i| slowest.max(1.0).powf(i as f64 / last) - 1.0)
            .collect()
    }

    /// Checks the invariants of the module documentation.
    pub fn validate(&self) -> Result<(), IbCcConfigError> {
        if self.table.is_empty() {
            return Err(IbCcConfigError::EmptyTable);
        }
        for (index, &value) in self.table.iter().enumerate() {
            if !value.is_finite() || value < 0.0 {
                return Err(IbCcConfigError::BadEntry { index, value });
            }
            if let Some(&previous) = index.checked_sub(1).map(|i| &self.table[i]) {
                if value < previous {
                    return Err(IbCcConfigError::NotMonotone {
                        index,
                        value,
                        previous,
                    });
                }
            }
        }
        if usize::from(self.ccti_limit) >= self.table.len() {
            return Err(IbCcConfigError::LimitBeyondTable {
                limit: self.ccti_limit,
                last: self.table.len() - 1,
            });
        }
        if self.ccti_min > self.ccti_limit {
            return Err(IbCcConfigError::MinAboveLimit {
                min: self.ccti_min,
                limit: self.ccti_limit,
            });
        }
        if self.ccti_timer == Time::ZERO {
            return Err(IbCcConfigError::ZeroTimer);
        }
        Ok(())
    }
}

impl Default for IbCcConfig {
    /// 1024 entries down to 1/128 of line rate (each step about −0.47 %), one step per BECN,
    /// one step back every 2 timer units (2.048 µs). Coarser tables (128 entries, −3.7 % a
    /// step) and slower timers left a 100 Gb/s bottleneck 50–80 % busy in the convergence
    /// test: a burst of BECNs overshoots.
    fn default() -> Self {
        IbCcConfig {
            ccti_increase: 1,
            ccti_limit: 1023,
            ccti_min: 0,
            ccti_timer: Time::from_ps(2 * TIMER_UNIT.as_ps()),
            table: Self::geometric_table(1024, 128.0),
        }
    }
}

/// One flow's IB CC source state.
#[derive(Debug, Clone)]
pub struct IbCc {
    cfg: IbCcConfig,
    line_rate: Rate,
    ccti: u16,
    /// The rate at the current index.
    rate: Rate,
    /// When the CCTI next decreases (`None` at the minimum).
    next_decrease: Option<Time>,
    /// BECNs received.
    becns: u64,
}

impl IbCc {
    /// A flow starting at the minimum index on a NIC of `line_rate`. `cfg` must be valid
    /// ([`IbCcConfig::validate`]).
    pub fn new(cfg: IbCcConfig, line_rate: Rate) -> Self {
        let mut cc = IbCc {
            ccti: cfg.ccti_min,
            cfg,
            line_rate,
            rate: line_rate,
            next_decrease: None,
            becns: 0,
        };
        cc.rate = cc.rate_at(cc.ccti);
        cc
    }

    fn rate_at(&self, ccti: u16) -> Rate {
        let delay = self
            .cfg
            .table
            .get(usize::from(ccti))
            .or(self.cfg.table.last())
            .copied()
            .unwrap_or(0.0);
        Rate::from_f64(self.line_rate.as_f64() / (1.0 + delay))
    }

    /// The current sending rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// The current CCTI.
    pub fn ccti(&self) -> u16 {
        self.ccti
    }

    /// BECNs received so far.
    pub fn becns(&self) -> u64 {
        self.becns
    }

    /// A BECN arrived at `now`.
    pub fn on_becn(&mut self, now: Time) {
        self.handle_timeout(now);
        self.becns += 1;
        self.ccti = self
            .ccti
            .saturating_add(self.cfg.ccti_increase)
            .min(self.cfg.ccti_limit);
        self.rate = self.rate_at(self.ccti);
        if self.ccti > self.cfg.ccti_min && self.next_decrease.is_none() {
            self.next_decrease = Some(now + self.cfg.ccti_timer);
        }
    }

    /// When the CCTI next decreases, if it can.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_decrease
    }

    /// Runs every decrease due by `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        while let Some(t) = self.next_decrease.filter(|&t| t <= now) {
            self.ccti = self.ccti.saturating_sub(1).max(self.cfg.ccti_min);
            self.next_decrease = (self.ccti > self.cfg.ccti_min).then(|| t + self.cfg.ccti_timer);
        }
        self.rate = self.rate_at(self.ccti);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: Rate = Rate::from_gbps(100);

    fn cfg(table: &[f64], increase: u16, limit: u16, min: u16) -> IbCcConfig {
        IbCcConfig {
            ccti_increase: increase,
            ccti_limit: limit,
            ccti_min: min,
            ccti_timer: Time::from_us(10),
            table: table.into(),
        }
    }

    #[test]
    fn a_becn_raises_the_index_up_to_the_limit() {
        let mut cc = IbCc::new(cfg(&[0.0, 1.0, 3.0, 7.0, 15.0], 2, 3, 0), LINE);
        assert_eq!(cc.rate(), LINE);
        cc.on_becn(Time::ZERO);
        assert_eq!(cc.ccti(), 2);
        assert_eq!(cc.rate(), Rate::from_gbps(25), "line / (1 + 3)");
        cc.on_becn(Time(1));
        assert_eq!(cc.ccti(), 3, "capped at the limit, not 4");
        assert_eq!(cc.rate(), Rate::from_f64(100e9 / 8.0));
        assert_eq!(cc.becns(), 2);
    }

    #[test]
    fn the_timer_lowers_the_index_to_the_minimum_and_stops() {
        let mut cc = IbCc::new(cfg(&[0.0, 1.0, 3.0, 7.0], 3, 3, 1), LINE);
        assert_eq!(cc.rate(), Rate::from_gbps(50), "starts at the minimum, 1");
        assert_eq!(cc.poll_timeout(), None, "nothing to decrease");
        cc.on_becn(Time::ZERO);
        assert_eq!(cc.ccti(), 3);
        assert_eq!(cc.poll_timeout(), Some(Time::from_us(10)));
        // A BECN does not restart the timer.
        cc.on_becn(Time::from_us(5));
        assert_eq!(cc.poll_timeout(), Some(Time::from_us(10)));
        cc.handle_timeout(Time::from_us(25));
        assert_eq!(cc.ccti(), 1, "two decreases due by 25 us: 3 -> 2 -> 1");
        assert_eq!(cc.poll_timeout(), None, "at the minimum the timer stops");
        assert_eq!(cc.rate(), Rate::from_gbps(50));
    }

    #[test]
    fn an_early_timeout_changes_nothing() {
        let mut cc = IbCc::new(cfg(&[0.0, 1.0], 1, 1, 0), LINE);
        cc.on_becn(Time::ZERO);
        cc.handle_timeout(Time::from_us(9));
        assert_eq!(cc.ccti(), 1);
        assert_eq!(cc.rate(), Rate::from_gbps(50));
    }

    #[test]
    fn the_default_table_reaches_a_128th_of_line_rate() {
        let c = IbCcConfig::default();
        c.validate().expect("valid");
        let mut cc = IbCc::new(c, LINE);
        for i in 0..2000 {
            cc.on_becn(Time(i));
        }
        assert_eq!(cc.ccti(), 1023);
        let slowest = cc.rate().as_f64();
        assert!((slowest - 100e9 / 128.0).abs() < 1e3, "{slowest}");
        // Every step slows by the same factor, 128^(1/127) in a table of 128.
        let t = IbCcConfig::geometric_table(128, 128.0);
        let step = (1.0 + t[1]) / (1.0 + t[0]);
        assert!((step - 128f64.powf(1.0 / 127.0)).abs() < 1e-12);
    }

    #[test]
    fn bad_tables_and_limits_are_refused() {
        let ok = cfg(&[0.0, 1.0, 2.0], 1, 2, 0);
        assert_eq!(ok.validate(), Ok(()));
        let e = cfg(&[0.0, 2.0, 1.0], 1, 2, 0).validate().unwrap_err();
        assert!(matches!(e, IbCcConfigError::NotMonotone { index: 2, .. }));
        assert!(e.to_string().contains("must not decrease"), "{e}");
        assert!(matches!(
            cfg(&[], 1, 0, 0).validate(),
            Err(IbCcConfigError::EmptyTable)
        ));
        assert!(matches!(
            cfg(&[0.0, -1.0], 1, 1, 0).validate(),
            Err(IbCcConfigError::BadEntry { index: 1, .. })
        ));
        assert!(matches!(
            cfg(&[0.0, 1.0], 1, 2, 0).validate(),
            Err(IbCcConfigError::LimitBeyondTable { limit: 2, last: 1 })
        ));
        assert!(matches!(
            cfg(&[0.0, 1.0], 1, 1, 2).validate(),
            Err(IbCcConfigError::MinAboveLimit { .. })
        ));
        let mut zero = ok;
        zero.ccti_timer = Time::ZERO;
        assert_eq!(zero.validate(), Err(IbCcConfigError::ZeroTimer));
    }
}
