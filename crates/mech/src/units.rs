//! Unit newtypes: time in picoseconds, sizes in bytes, rates in bits per second.
//!
//! Invariants:
//! - All accounting is integer. [`Time`] is a `u64` count of picoseconds (2^64 ps is about
//!   213 days of simulated time), [`Bytes`] a `u64` count of bytes, [`Rate`] a `u64` count of
//!   bits per second.
//! - Conversions that divide round in a stated direction: serialization time rounds *up* (a
//!   frame is not finished before its last bit), byte counts for a duration round *down*.
//! - Parsing accepts the unit suffixes a user writes in scenario files (`"100Gbps"`, `"2us"`,
//!   `"16MiB"`, `"3840B"`) and rejects a number without a unit where the unit matters.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, or a duration, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Time(pub u64);

impl Time {
    /// Time zero.
    pub const ZERO: Time = Time(0);
    /// The largest representable time; used as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// `n` picoseconds.
    pub const fn from_ps(n: u64) -> Self {
        Time(n)
    }
    /// `n` nanoseconds.
    pub const fn from_ns(n: u64) -> Self {
        Time(n * 1_000)
    }
    /// `n` microseconds.
    pub const fn from_us(n: u64) -> Self {
        Time(n * 1_000_000)
    }
    /// `n` milliseconds.
    pub const fn from_ms(n: u64) -> Self {
        Time(n * 1_000_000_000)
    }
    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds (rounded down).
    pub const fn as_ns(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds as a float, for statistics and display only.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    /// Microseconds as a float, for statistics and display only.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    /// `self - other`, or zero if `other` is later.
    pub fn saturating_sub(self, other: Time) -> Time {
        Time(self.0.saturating_sub(other.0))
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        debug_assert!(self.0 >= rhs.0, "time went backwards: {self} - {rhs}");
        Time(self.0.saturating_sub(rhs.0))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps.is_multiple_of(1_000_000_000) && ps != 0 {
            write!(f, "{}ms", ps / 1_000_000_000)
        } else if ps.is_multiple_of(1_000_000) && ps != 0 {
            write!(f, "{}us", ps / 1_000_000)
        } else if ps.is_multiple_of(1_000) {
            write!(f, "{}ns", ps / 1_000)
        } else {
            write!(f, "{ps}ps")
        }
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Zero bytes.
    pub const ZERO: Bytes = Bytes(0);

    /// Number of `cell`-byte cells this size occupies (rounded up). A zero cell size is a
    /// configuration error caught at validation; here it counts one cell per byte.
    pub fn cells(self, cell: u32) -> u64 {
        self.0.div_ceil(u64::from(cell.max(1)))
    }
}

impl Add for Bytes {
    type Output = Bytes;
    fn add(self, rhs: Bytes) -> Bytes {
        Bytes(self.0 + rhs.0)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

/// A byte count with a binary unit (`B`, `KiB`, `MiB`, `GiB`, `TiB`), one decimal, for
/// people (labels, messages); `Bytes`' `Display` is the exact form.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A link or sending rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Rate(pub u64);

impl Rate {
    /// `n` gigabits per second.
    pub const fn from_gbps(n: u64) -> Self {
        Rate(n * 1_000_000_000)
    }
    /// `n` megabits per second.
    pub const fn from_mbps(n: u64) -> Self {
        Rate(n * 1_000_000)
    }
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Gigabits per second as a float, for display and statistics.
    pub fn as_gbps_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time to serialize `bytes` at this rate, rounded up to the next picosecond.
    /// A zero rate never finishes: returns [`Time::MAX`].
    pub fn serialization(self, bytes: u64) -> Time {
        if self.0 == 0 {
            return Time::MAX;
        }
        let bits_ps = u128::from(bytes) * 8 * 1_000_000_000_000;
        let t = bits_ps.div_ceil(u128::from(self.0));
        Time(u64::try_from(t).unwrap_or(u64::MAX))
    }
    /// Bytes sent in `t` at this rate, rounded down.
    pub fn bytes_in(self, t: Time) -> u64 {
        let b = u128::from(self.0) * u128::from(t.0) / (8 * 1_000_000_000_000u128);
        u64::try_from(b).unwrap_or(u64::MAX)
    }
    /// The rate as `f64` bits per second.
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
    /// A rate from `f64` bits per second, rounded to the nearest bit/s, at least 1 bit/s.
    pub fn from_f64(bps: f64) -> Self {
        Rate(bps.round().max(1.0) as u64)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b.is_multiple_of(1_000_000_000) && b != 0 {
            write!(f, "{}Gbps", b / 1_000_000_000)
        } else if b.is_multiple_of(1_000_000) && b != 0 {
            write!(f, "{}Mbps", b / 1_000_000)
        } else {
            write!(f, "{b}bps")
        }
    }
}

/// Why a unit string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The string has no number in front.
    #[error("`{0}` does not start with a number")]
    NoNumber(String),
    /// The number is there but the unit is missing and the quantity needs one.
    #[error("`{input}` has no unit; write it as e.g. `{example}`")]
    MissingUnit {
        /// The offending input.
        input: String,
        /// An example of a valid value.
        example: &'static str,
    },
    /// The unit is not one this quantity accepts.
    #[error("`{input}`: unknown unit `{unit}` (expected one of {expected})")]
    UnknownUnit {
        /// The offending input.
        input: String,
        /// The unit as written.
        unit: String,
        /// The accepted units.
        expected: &'static str,
    },
    /// The value is negative, or too large to represent.
    #[error("`{0}` is out of range")]
    OutOfRange(String),
}

/// Splits `"12.5Gbps"` into `(12.5, "Gbps")`; the number may be fractional.
fn split_number(s: &str) -> Result<(f64, &str), UnitError> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(s.len());
    // An exponent `e` is only part of the number if digits follow; "1e" is not a number.
    let (mut num, mut rest) = s.split_at(end);
    while num.ends_with('e') {
        num = &num[..num.len() - 1];
        rest = &s[num.len()..];
    }
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError::NoNumber(s.to_string()))?;
    if v < 0.0 || !v.is_finite() {
        return Err(UnitError::OutOfRange(s.to_string()));
    }
    Ok((v, rest.trim()))
}

fn scaled(input: &str, v: f64, scale: f64) -> Result<u64, UnitError> {
    let x = (v * scale).round();
    if x < 0.0 || x > u64::MAX as f64 {
        return Err(UnitError::OutOfRange(input.to_string()));
    }
    Ok(x as u64)
}

/// Parses a rate: `"100Gbps"`, `"25G"`, `"400Gb/s"`, `"800Mbps"`, `"1e11bps"`.
pub fn parse_rate(s: &str) -> Result<Rate, UnitError> {
    let (v, unit) = split_number(s)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" => {
            return Err(UnitError::MissingUnit {
                input: s.to_string(),
                example: "100Gbps",
            });
        }
        "bps" | "b/s" => 1.0,
        "kbps" | "kb/s" | "k" => 1e3,
        "mbps" | "mb/s" | "m" => 1e6,
        "gbps" | "gb/s" | "g" => 1e9,
        "tbps" | "tb/s" | "t" => 1e12,
        _ => {
            return Err(UnitError::UnknownUnit {
                input: s.to_string(),
                unit: unit.to_string(),
                expected: "bps, Kbps, Mbps, Gbps, Tbps",
            })
        }
    };
    Ok(Rate(scaled(s, v, scale)?))
}

/// Parses a duration: `"2us"`, `"1000ns"`, `"1.5ms"`, `"10s"`, `"500ps"` (`µs` also accepted).
pub fn parse_time(s: &str) -> Result<Time, UnitError> {
    let (v, unit) = split_number(s)?;
    let scale = match unit {
        "" => {
            return Err(UnitError::MissingUnit {
                input: s.to_string(),
                example: "2us",
            })
        }
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => {
            return Err(UnitError::UnknownUnit {
                input: s.to_string(),
                unit: unit.to_string(),
                expected: "ps, ns, us, ms, s",
            })
        }
    };
    Ok(Time(scaled(s, v, scale)?))
}

/// Parses a size: `"3840B"`, `"16MiB"`, `"12MB"`, `"64KiB"`, `"9216"` (plain bytes allowed).
pub fn parse_bytes(s: &str) -> Result<Bytes, UnitError> {
    let (v, unit) = split_number(s)?;
    let scale = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(UnitError::UnknownUnit {
                input: s.to_string(),
                unit: unit.to_string(),
                expected: "B, KB, MB, GB, KiB, MiB, GiB",
            })
        }
    };
    Ok(Bytes(scaled(s, v, scale)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_rounds_up() {
        // 64 B at 400 Gb/s is 1.28 ns exactly.
        assert_eq!(Rate::from_gbps(400).serialization(64), Time(1_280));
        // 1 B at 3 bps: 8/3 s, rounded up to the picosecond.
        assert_eq!(Rate(3).serialization(1), Time(2_666_666_666_667));
        assert_eq!(Rate(0).serialization(1), Time::MAX);
    }

    #[test]
    fn bytes_in_is_inverse_of_serialization() {
        let r = Rate::from_gbps(100);
        assert_eq!(r.bytes_in(r.serialization(1500)), 1500);
        assert_eq!(r.bytes_in(Time::from_us(1)), 12_500);
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_rate("100Gbps"), Ok(Rate::from_gbps(100)));
        assert_eq!(parse_rate("25G"), Ok(Rate::from_gbps(25)));
        assert_eq!(parse_rate("1e11bps"), Ok(Rate::from_gbps(100)));
        assert_eq!(parse_time("1000ns"), Ok(Time::from_us(1)));
        assert_eq!(parse_time("1.5ms"), Ok(Time::from_us(1500)));
        assert_eq!(parse_time("0.000002s"), Ok(Time::from_us(2)));
        assert_eq!(parse_bytes("16MiB"), Ok(Bytes(16 << 20)));
        assert_eq!(parse_bytes("3840B"), Ok(Bytes(3840)));
        assert_eq!(parse_bytes("9216"), Ok(Bytes(9216)));
    }

    #[test]
    fn rejects_bad_units() {
        assert!(matches!(
            parse_rate("100"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_time("2"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_rate("100Gbpx"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(parse_bytes("-5B"), Err(UnitError::OutOfRange(_))));
        assert!(matches!(parse_time("fast"), Err(UnitError::NoNumber(_))));
    }

    #[test]
    fn display_round_trips() {
        for s in ["100Gbps", "2us", "1500ps", "3ms"] {
            let shown = if s.ends_with("bps") {
                parse_rate(s).map(|r| r.to_string())
            } else {
                parse_time(s).map(|t| t.to_string())
            };
            assert_eq!(shown.as_deref(), Ok(s));
        }
    }
}
