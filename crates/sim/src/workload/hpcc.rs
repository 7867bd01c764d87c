//! The flow file format of the ns-3 HPCC simulator
//! (alibaba-edu/High-Precision-Congestion-Control, `simulation/mix/flow.txt`, as written by
//! `traffic_gen/traffic_gen.py`):
//!
//! ```text
//! <count>
//! <src> <dst> <pg> <dport> <size in bytes> <start in seconds>     (exactly <count> lines)
//! ```
//! for example `2 1 3 100 1000000 2.000001234`.
//!
//! Invariants:
//! - Start times are decimal seconds converted to integer picoseconds **rounded to the
//!   nearest picosecond, ties away from zero**. Plain decimals (`2.000001234`) are converted
//!   exactly from their digits; other spellings (`2e-6`) go through `f64`.
//! - [`parse()`] returns the flows sorted by start time, ties in file order (a stable sort),
//!   like every flow list a run uses; a file that is already sorted keeps its order.
//! - [`write()`] prints starts with 9 decimals (nanoseconds) like the HPCC generator, and
//!   with 12 decimals when the start is not a whole nanosecond, so `parse(write(f)) == f`
//!   for any sorted list of valid flows.
//! - Blank lines are ignored; errors are [`WorkloadError::File`] with the path and the
//!   1-based line (line 0 for I/O errors). Checked: the count, that each line has six
//!   numbers of the right type, `pg < 8`, `size > 0`, `src != dst`. Node ids are *not*
//!   checked against a topology here: the caller does that.

use super::{FlowSpec, WorkloadError};
use crate::topology::NodeId;
use headroom_mech::units::Time;
use std::fmt::Write as _;
use std::path::Path;

const PS_PER_S: u64 = 1_000_000_000_000;

fn err(path: &str, line: usize, reason: impl Into<String>) -> WorkloadError {
    WorkloadError::File {
        path: path.to_string(),
        line,
        reason: reason.into(),
    }
}

/// Decimal seconds to picoseconds, rounded to nearest (ties away from zero); `None` if the
/// text is not a non-negative number or the time does not fit in a `u64`.
pub(crate) fn seconds_to_ps(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let plain = !(int.is_empty() && frac.is_empty())
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit());
    if plain {
        let whole: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let digits = frac.as_bytes();
        let mut ps: u64 = 0;
        for k in 0..12 {
            ps = ps * 10 + digits.get(k).map_or(0, |d| u64::from(d - b'0'));
        }
        if digits.get(12).is_some_and(|&d| d >= b'5') {
            ps += 1;
        }
        return whole.checked_mul(PS_PER_S)?.checked_add(ps);
    }
    let v: f64 = s.parse().ok()?;
    let ps = (v * PS_PER_S as f64).round();
    if !(v >= 0.0 && ps < u64::MAX as f64) {
        return None;
    }
    Some(ps as u64)
}

/// Picoseconds as decimal seconds: 9 decimals, or 12 when not a whole nanosecond.
fn ps_to_seconds(t: Time) -> String {
    let ps = t.as_ps();
    let (whole, frac) = (ps / PS_PER_S, ps % PS_PER_S);
    if frac % 1_000 == 0 {
        format!("{whole}.{:09}", frac / 1_000)
    } else {
        format!("{whole}.{frac:012}")
    }
}

/// Field `what` of line `line`, parsed as a `T`.
pub(crate) fn field<T: std::str::FromStr>(
    path: &str,
    line: usize,
    what: &str,
    s: &str,
) -> Result<T, WorkloadError> {
    s.parse::<T>()
        .map_err(|_| err(path, line, format!("{what} `{s}` is not a valid number")))
}

/// A flow file's header and body: the flow count its first non-empty line declares, that
/// line's number, and the non-empty lines after it (1-based numbers, trimmed). Both ns-3
/// flow formats start this way.
pub(crate) fn counted_lines<'a>(
    text: &'a str,
    path: &str,
) -> Result<(usize, usize, impl Iterator<Item = (usize, &'a str)>), WorkloadError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (hline, header) = lines
        .next()
        .ok_or_else(|| err(path, 1, "empty file: expected the flow count"))?;
    let count: usize = header.parse().map_err(|_| {
        err(
            path,
            hline,
            format!("expected the flow count, found `{header}`"),
        )
    })?;
    Ok((count, hline, lines))
}

/// Parses the text of an HPCC flow file; `path` is only used in error messages.
///
/// Errors: a first line that is not a count, a flow line without six fields, ids, port or
/// size that are not non-negative integers of the right width, `pg >= 8`, `size == 0`,
/// `src == dst`, a bad start time, and fewer or more flow lines than the count.
pub fn parse(text: &str, path: &str) -> Result<Vec<FlowSpec>, WorkloadError> {
    let (count, hline, lines) = counted_lines(text, path)?;
    let mut flows = Vec::with_capacity(count.min(1 << 20));
    let mut last = hline;
    for (ln, l) in lines {
        last = ln;
        if flows.len() == count {
            return Err(err(
                path,
                ln,
                format!("more flow lines than the {count} declared"),
            ));
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 6 {
            return Err(err(
                path,
                ln,
                format!(
                    "expected `<src> <dst> <pg> <dport> <size> <start seconds>`, found {} fields",
                    f.len()
                ),
            ));
        }
        let src: u32 = field(path, ln, "src", f[0])?;
        let dst: u32 = field(path, ln, "dst", f[1])?;
        let pg: u8 = field(path, ln, "pg", f[2])?;
        let dport: u16 = field(path, ln, "dport", f[3])?;
        let size: u64 = field(path, ln, "size", f[4])?;
        let start = seconds_to_ps(f[5]).ok_or_else(|| {
            err(
                path,
                ln,
                format!("start `{}` is not a non-negative time in seconds", f[5]),
            )
        })?;
        if pg >= 8 {
            return Err(err(path, ln, format!("pg {pg} is not a priority 0..8")));
        }
        if size == 0 {
            return Err(err(path, ln, "flow size is 0"));
        }
        if src == dst {
            return Err(err(path, ln, format!("flow from node {src} to itself")));
        }
        flows.push(FlowSpec {
            src: NodeId(src),
            dst: NodeId(dst),
            prio: pg,
            size,
            start: Time(start),
            dport,
        });
    }
    if flows.len() != count {
        return Err(err(
            path,
            last + 1,
            format!("file declares {count} flows but has only {}", flows.len()),
        ));
    }
    flows.sort_by_key(|f| f.start);
    Ok(flows)
}

/// Reads and parses an HPCC flow file (an I/O error is a [`WorkloadError::File`] at
/// line 0).
pub fn load(path: &Path) -> Result<Vec<FlowSpec>, WorkloadError> {
    let shown = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::MAX_FLOW_FILE_BYTES)
        .map_err(|e| err(&shown, 0, e.to_string()))?;
    parse(&text, &shown)
}

/// Writes flows in the HPCC format, in the given order: the count, then one
/// `src dst pg dport size start` line per flow, start in seconds with 9 decimals (12 when
/// the start is not a whole nanosecond).
pub fn write(flows: &[FlowSpec]) -> String {
    let mut out = String::with_capacity(16 + flows.len() * 40);
    // Writing to a String cannot fail; `let _` discards the always-Ok results.
    let _ = writeln!(out, "{}", flows.len());
    for f in flows {
        let _ = writeln!(
            out,
            "{} {} {} {} {} {}",
            f.src.0,
            f.dst.0,
            f.prio,
            f.dport,
            f.size,
            ps_to_seconds(f.start)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{cdf, generators};
    use headroom_mech::units::Rate;

    const P: &str = "flow.txt";

    fn file_err(text: &str) -> (usize, String) {
        match parse(text, P) {
            Err(WorkloadError::File { path, line, reason }) => {
                assert_eq!(path, P);
                (line, reason)
            }
            other => panic!("expected a file error, got {other:?}"),
        }
    }

    #[test]
    fn parses_hpcc_example() {
        let flows =
            parse("2\n2 1 3 100 1000000 2\n0 1 3 100 5000 2.000001234\n\n", P).expect("valid");
        assert_eq!(flows.len(), 2);
        assert_eq!(
            flows[0],
            FlowSpec {
                src: NodeId(2),
                dst: NodeId(1),
                prio: 3,
                size: 1_000_000,
                start: Time(2 * PS_PER_S),
                dport: 100
            }
        );
        assert_eq!(flows[1].start, Time(2_000_001_234_000));
    }

    #[test]
    fn start_rounding() {
        assert_eq!(seconds_to_ps("0.0000000000004"), Some(0));
        assert_eq!(seconds_to_ps("0.0000000000005"), Some(1));
        assert_eq!(seconds_to_ps("0.0000000000015"), Some(2));
        assert_eq!(seconds_to_ps("1.9999999999996"), Some(2 * PS_PER_S));
        assert_eq!(seconds_to_ps(".5"), Some(PS_PER_S / 2));
        assert_eq!(seconds_to_ps("3."), Some(3 * PS_PER_S));
        assert_eq!(seconds_to_ps("2e-6"), Some(2_000_000));
        assert_eq!(seconds_to_ps("-1"), None);
        assert_eq!(seconds_to_ps("."), None);
        assert_eq!(seconds_to_ps("1x"), None);
        assert_eq!(seconds_to_ps("99999999999"), None, "overflows u64 ps");
        assert_eq!(ps_to_seconds(Time(2_000_001_234_000)), "2.000001234");
        assert_eq!(ps_to_seconds(Time(1)), "0.000000000001");
        assert_eq!(ps_to_seconds(Time::ZERO), "0.000000000");
    }

    #[test]
    fn round_trip() {
        let c = cdf::builtin("websearch").expect("builtin");
        let h: Vec<NodeId> = (0..8).map(NodeId).collect();
        let mut flows = generators::poisson(
            &h,
            Rate::from_gbps(100),
            0.5,
            &c,
            Time::from_ms(2000),
            Time::from_ms(10),
            3,
            None,
            &mut generators::rng_from_seed(11),
        )
        .expect("valid");
        flows.extend(
            generators::incast(&h[1..], h[0], 64_000, Time::from_ms(2100), None, 5).expect("valid"),
        );
        assert!(flows.len() > 20);
        let text = write(&flows);
        assert!(text.starts_with(&format!("{}\n", flows.len())));
        assert_eq!(parse(&text, P), Ok(flows.clone()));
        assert_eq!(write(&parse(&text, P).expect("valid")), text);
        // Whole-nanosecond starts print with 9 decimals.
        let line = write(&flows[flows.len() - 1..]);
        assert!(line.ends_with(" 2.100000000\n"), "{line}");
    }

    #[test]
    fn parse_sorts_stably() {
        let flows = parse("3\n0 1 3 1 10 2.0\n1 2 3 2 10 1.0\n2 3 3 3 10 2.0\n", P).expect("ok");
        assert_eq!(
            flows.iter().map(|f| f.dport).collect::<Vec<_>>(),
            vec![2, 1, 3]
        );
    }

    #[test]
    fn parse_errors() {
        let (l, r) = file_err("");
        assert_eq!(l, 1);
        assert!(r.contains("empty"), "{r}");
        let (l, r) = file_err("two\n");
        assert_eq!(l, 1);
        assert!(r.contains("flow count"), "{r}");
        let (l, r) = file_err("3\n0 1 3 100 10 0.1\n1 0 3 100 10 0.2\n");
        assert_eq!(l, 4);
        assert!(r.contains("declares 3 flows but has only 2"), "{r}");
        let (l, r) = file_err("1\n0 1 3 100 10 0.1\n\n1 0 3 100 10 0.2\n");
        assert_eq!(l, 4);
        assert!(r.contains("more flow lines"), "{r}");
        let case = |line: &str| file_err(&format!("2\n0 1 3 100 10 0.1\n{line}\n"));
        let cases = [
            ("1 0 3 100 10", "found 5 fields"),
            ("x 0 3 100 10 0.2", "src `x`"),
            ("1 -2 3 100 10 0.2", "dst `-2`"),
            ("1 0 8 100 10 0.2", "pg 8"),
            ("1 0 300 100 10 0.2", "pg `300`"),
            ("1 0 3 70000 10 0.2", "dport `70000`"),
            ("1 0 3 100 0 0.2", "size is 0"),
            ("1 0 3 100 1.5 0.2", "size `1.5`"),
            ("1 0 3 100 10 -0.2", "start `-0.2`"),
            ("1 0 3 100 10 soon", "start `soon`"),
            ("1 1 3 100 10 0.2", "to itself"),
        ];
        for (line, want) in cases {
            let (l, r) = case(line);
            assert_eq!(l, 3, "{line}");
            assert!(r.contains(want), "{line}: {r}");
        }
        let e = parse("1\n0 0 3 100 10 0.1\n", P).expect_err("self flow");
        assert!(e.to_string().starts_with("flow.txt:2: "), "{e}");
    }

    #[test]
    fn load_missing_file() {
        let e = load(Path::new("/nonexistent/flow.txt")).expect_err("missing");
        assert!(matches!(e, WorkloadError::File { line: 0, .. }), "{e:?}");
    }

    #[test]
    fn load_from_disk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("flow.txt");
        let flows =
            generators::all_to_all(&[NodeId(0), NodeId(1), NodeId(2)], 100, Time::from_us(3), 3)
                .expect("valid");
        std::fs::write(&p, write(&flows)).expect("write");
        assert_eq!(load(&p), Ok(flows));
    }
}
