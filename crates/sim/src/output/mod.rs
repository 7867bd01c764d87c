//! Turning a run's [`RunResults`] into a [`Summary`] and into files.
//!
//! - [`summarize`] computes the headline numbers of a run (FCT slowdown percentiles, PFC
//!   activity, drops, buffer use, speed) as a serializable [`Summary`];
//! - [`write_all`] writes the per-flow, PFC and time-series CSVs plus `summary.json` into a
//!   directory, and with [`WriteOptions::compat_hpcc`] the ns-3 HPCC simulator's `fct.txt`
//!   and `pfc.txt`;
//! - [`summary_table`] renders the summary as a short aligned text table for a terminal.
//!
//! # Conventions
//!
//! - **Times in CSV files** are nanoseconds written exactly as `<ns>.<ps:03>`: always three
//!   decimals, no rounding (the engine counts picoseconds), e.g. `1234.500` is 1 234 500 ps.
//!   See [`format_ns`]. The HPCC-compatible files use whole nanoseconds, rounded down, as the
//!   HPCC simulator prints integer ns.
//! - **Floating-point numbers in CSV files** (slowdown, Gb/s) are written with six decimals.
//! - **Size buckets** ([`SIZE_BUCKETS`]) use decimal units (1 KB = 1 000 bytes, 1 MB =
//!   1 000 000 bytes) and are half-open: `<10KB` is `[0, 10 000)`, `10KB-100KB` is
//!   `[10 000, 100 000)`, `100KB-1MB` is `[100 000, 1 000 000)`, `>=1MB` is
//!   `[1 000 000, ∞)`.
//! - **Percentiles** are nearest-rank ([`nearest_rank`]): the p-th percentile of `n` sorted
//!   values is the value of rank `ceil(p × n / 100)` (1-based), at least rank 1. No
//!   interpolation, so every reported percentile is a value that occurred.
//! - **Determinism**: without wall-clock data (`wall = None`, or
//!   [`WriteOptions::include_wall_time`] off) every file is a pure function of the results
//!   and config, byte-identical across runs of the same scenario and seed. JSON keys follow
//!   the struct field order; maps are ordered.
//! - **Atomicity**: every file is first written to a hidden temporary name in the output
//!   directory (`.<name>.tmp`) and renamed into place only once all files have been written,
//!   so a failed write leaves no half-written file under a final name.

use headroom_mech::units::Time;
use serde::Serialize;

mod apps;
mod channels;
mod files;
mod marking;
mod summary;
mod table;
pub use apps::AppSummary;
pub use channels::ChannelSummary;
pub use files::{write_all, OutputError, WriteOptions};
pub use marking::{marking_line, state_name, MarkingSummary, QueueMarkingSummary, StateCounts};
pub use summary::{
    summarize, switch_roles, BucketFct, ConfigSummary, CreditPortSummary, CreditSummary,
    DropSummary, FctStats, FctSummary, FlowCounts, PfcPortSummary, PfcSummary, PortHeadroomPeak,
    PortLevelPfcSummary, RunSummary, Summary, SwitchSummary, ThroughputSummary, WallSummary,
    WorkloadFct,
};
pub use table::summary_table;

/// A flow size class: sizes in `[min_bytes, max_bytes)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    /// Short name, e.g. `"10KB-100KB"`.
    pub name: &'static str,
    /// Smallest size in the bucket, bytes (inclusive).
    pub min_bytes: u64,
    /// Bound above the bucket, bytes (exclusive); `None` for the last bucket.
    pub max_bytes: Option<u64>,
}

/// The flow size buckets of the FCT statistics (decimal units, half-open intervals).
pub const SIZE_BUCKETS: [SizeBucket; 4] = [
    SizeBucket {
        name: "<10KB",
        min_bytes: 0,
        max_bytes: Some(10_000),
    },
    SizeBucket {
        name: "10KB-100KB",
        min_bytes: 10_000,
        max_bytes: Some(100_000),
    },
    SizeBucket {
        name: "100KB-1MB",
        min_bytes: 100_000,
        max_bytes: Some(1_000_000),
    },
    SizeBucket {
        name: ">=1MB",
        min_bytes: 1_000_000,
        max_bytes: None,
    },
];

/// Index in [`SIZE_BUCKETS`] of the bucket holding a flow of `size` bytes.
pub fn size_bucket(size: u64) -> usize {
    SIZE_BUCKETS
        .iter()
        .position(|b| !matches!(b.max_bytes, Some(m) if size >= m))
        .unwrap_or(SIZE_BUCKETS.len() - 1)
}

/// The nearest-rank `p`-th percentile (`p` in percent, 0..=100) of `sorted` (ascending):
/// the value of 1-based rank `max(1, ceil(p × n / 100))`. `None` when `sorted` is empty.
pub fn nearest_rank(sorted: &[f64], p: u32) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let rank = (p.min(100) as usize * n).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

/// A time as nanoseconds with exactly three decimals (`<ns>.<ps:03>`), exact.
pub fn format_ns(t: Time) -> String {
    let ps = t.as_ps();
    format!("{}.{:03}", ps / 1_000, ps % 1_000)
}

/// The IPv4 address the ns-3 HPCC simulator gives host `node`:
/// `0x0b000001 + (node / 256) × 0x10000 + (node % 256) × 0x100` (11.x.y.1), wrapping.
pub fn hpcc_ip(node: u32) -> u32 {
    0x0b00_0001u32
        .wrapping_add((node / 256).wrapping_mul(0x0001_0000))
        .wrapping_add((node % 256) * 0x0000_0100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_half_open() {
        assert_eq!(size_bucket(1), 0);
        assert_eq!(size_bucket(9_999), 0);
        assert_eq!(size_bucket(10_000), 1);
        assert_eq!(size_bucket(99_999), 1);
        assert_eq!(size_bucket(100_000), 2);
        assert_eq!(size_bucket(999_999), 2);
        assert_eq!(size_bucket(1_000_000), 3);
        assert_eq!(size_bucket(u64::MAX), 3);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(nearest_rank(&v, 50), Some(50.0));
        assert_eq!(nearest_rank(&v, 99), Some(99.0));
        assert_eq!(nearest_rank(&v, 100), Some(100.0));
        assert_eq!(nearest_rank(&v, 0), Some(1.0));
        assert_eq!(nearest_rank(&[7.0], 99), Some(7.0));
        assert_eq!(nearest_rank(&[], 50), None);
        // n = 3: p50 → rank 2, p95 → rank 3.
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0], 50), Some(2.0));
        assert_eq!(nearest_rank(&[1.0, 2.0, 3.0], 95), Some(3.0));
    }

    #[test]
    fn ns_format_is_exact() {
        assert_eq!(format_ns(Time(0)), "0.000");
        assert_eq!(format_ns(Time(1_234_500)), "1234.500");
        assert_eq!(format_ns(Time(7)), "0.007");
        assert_eq!(format_ns(Time(u64::MAX)), "18446744073709551.615");
    }

    #[test]
    fn hpcc_ips() {
        assert_eq!(hpcc_ip(0), 0x0b00_0001);
        assert_eq!(hpcc_ip(1), 0x0b00_0101);
        assert_eq!(hpcc_ip(255), 0x0b00_ff01);
        assert_eq!(hpcc_ip(256), 0x0b01_0001);
    }
}
