//! The dynamic-threshold parameter alpha.
//!
//! A queue may take `alpha * free` of the shared buffer. Chips encode alpha as a power of
//! two; SONiC writes it as `dynamic_th` (alpha = 2^dynamic_th, -7..=3) and the PFC guide as a
//! percent of the free buffer a single queue may take (a table of ranges). Both encodings
//! round-trip: `from_percent(a.to_percent()) == a` and `from_dynamic_th(a.dynamic_th()) == a`
//! for every power-of-two alpha in range. Arbitrary positive alphas are accepted too
//! (`from_value`) for experiments; they have no chip encoding.

use serde::Serialize;

/// Alpha of the dynamic threshold, always finite and > 0.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize)]
pub struct Alpha(f64);

/// Why an alpha value is invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AlphaError {
    /// `dynamic_th` outside -7..=3.
    #[error("dynamic_th {0} is out of range (-7..=3)")]
    DynamicThRange(i32),
    /// Percent above 100.
    #[error("percent {0} is out of range (0..=100)")]
    PercentRange(u32),
    /// Zero, negative, or not finite.
    #[error("alpha {0} must be a positive finite number")]
    NotPositive(f64),
}

/// The PFC guide's table: (highest percent of the range, log2 alpha).
const PERCENT_TABLE: [(u32, i32); 11] = [
    (0, -7),
    (1, -6),
    (3, -5),
    (5, -4),
    (11, -3),
    (20, -2),
    (33, -1),
    (50, 0),
    (66, 1),
    (80, 2),
    (100, 3),
];

impl Alpha {
    /// An arbitrary positive alpha.
    pub fn from_value(v: f64) -> Result<Alpha, AlphaError> {
        if v.is_finite() && v > 0.0 {
            Ok(Alpha(v))
        } else {
            Err(AlphaError::NotPositive(v))
        }
    }

    /// SONiC's `dynamic_th`: alpha = 2^th, th in -7..=3.
    pub fn from_dynamic_th(th: i32) -> Result<Alpha, AlphaError> {
        if !(-7..=3).contains(&th) {
            return Err(AlphaError::DynamicThRange(th));
        }
        Ok(Alpha(2f64.powi(th)))
    }

    /// The PFC guide's percent setting (0..=100), mapped through its range table.
    pub fn from_percent(p: u32) -> Result<Alpha, AlphaError> {
        PERCENT_TABLE
            .iter()
            .find(|(hi, _)| p <= *hi)
            .map(|(_, th)| Alpha(2f64.powi(*th)))
            .ok_or(AlphaError::PercentRange(p))
    }

    /// `log2(alpha)` when alpha is a power of two in SONiC's range.
    pub fn dynamic_th(self) -> Option<i32> {
        (-7..=3).find(|th| 2f64.powi(*th) == self.0)
    }

    /// The lowest percent of the guide's range that selects this alpha, if it has one.
    pub fn to_percent(self) -> Option<u32> {
        let th = self.dynamic_th()?;
        let idx = PERCENT_TABLE.iter().position(|(_, t)| *t == th)?;
        Some(if idx == 0 {
            0
        } else {
            PERCENT_TABLE[idx - 1].0 + 1
        })
    }

    /// The value of alpha.
    pub fn value(self) -> f64 {
        self.0
    }

    /// Fraction of the free buffer one congested queue settles at: alpha / (1 + alpha).
    pub fn share_of_free(self) -> f64 {
        self.0 / (1.0 + self.0)
    }

    /// The threshold `alpha * free`, rounded down to whole units.
    pub fn threshold(self, free: u64) -> u64 {
        (free as f64 * self.0) as u64
    }

    /// The alpha twice as large (used to scale alpha with port speed).
    pub fn doubled(self) -> Alpha {
        Alpha(self.0 * 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_table_matches_guide() {
        let cases = [
            (0, 1.0 / 128.0),
            (1, 1.0 / 64.0),
            (2, 1.0 / 32.0),
            (3, 1.0 / 32.0),
            (5, 1.0 / 16.0),
            (6, 0.125),
            (11, 0.125),
            (12, 0.25),
            (20, 0.25),
            (33, 0.5),
            (34, 1.0),
            (66, 2.0),
            (80, 4.0),
            (81, 8.0),
            (100, 8.0),
        ];
        for (p, a) in cases {
            assert_eq!(
                Alpha::from_percent(p).map(Alpha::value),
                Ok(a),
                "percent {p}"
            );
        }
        assert_eq!(Alpha::from_percent(101), Err(AlphaError::PercentRange(101)));
    }

    #[test]
    fn share_of_free_matches_guide() {
        let share = |p| {
            Alpha::from_percent(p)
                .map(Alpha::share_of_free)
                .unwrap_or(0.0)
        };
        assert!((share(0) - 0.0077).abs() < 1e-4);
        assert!((share(6) - 0.1111).abs() < 1e-4);
        assert!((share(100) - 0.8888).abs() < 1e-4);
    }

    #[test]
    fn encodings_round_trip() {
        for th in -7..=3 {
            let a = Alpha::from_dynamic_th(th).expect("in range");
            assert_eq!(a.dynamic_th(), Some(th));
            let p = a
                .to_percent()
                .expect("every power of two in range has a percent");
            assert_eq!(Alpha::from_percent(p), Ok(a));
        }
        assert_eq!(
            Alpha::from_dynamic_th(4),
            Err(AlphaError::DynamicThRange(4))
        );
        assert_eq!(Alpha::from_value(0.3).map(|a| a.dynamic_th()), Ok(None));
        assert!(Alpha::from_value(0.0).is_err());
        assert!(Alpha::from_value(f64::NAN).is_err());
    }

    #[test]
    fn threshold_rounds_down() {
        let a = Alpha::from_dynamic_th(-4).expect("in range");
        assert_eq!(a.threshold(1_000), 62);
        assert_eq!(a.doubled().threshold(1_000), 125);
    }
}
