//! The flow file format of the DCQCN reference simulator (bobzhuyb/ns3-rdma,
//! `mix/flow.txt`) and of the TCD authors' fork of it (Yi-ran/DCQCN-TCD):
//!
//! ```text
//! <count>
//! <src> <dst> <pg> <size in bytes> <start seconds> <stop seconds>   (<count> lines are read)
//! ```
//! for example `2 4 3 400000000 2 3`. The size is the bytes the application is asked to
//! send; how many packets and data bytes that makes is the config's business
//! ([`crate::ns3_rdma_config`]).
//!
//! Invariants:
//! - Only the first `<count>` non-blank lines after the count are read, as the simulator
//!   reads them; later lines are not looked at (their number is returned, so the caller can
//!   note them).
//! - Start and stop times are decimal seconds converted to picoseconds as in
//!   [`super::hpcc`] (exact for plain decimals, rounded to the nearest picosecond).
//! - Errors are [`WorkloadError::File`] with the path and the 1-based physical line: a count
//!   that is not an integer, a flow line without exactly six fields, a field that is not a
//!   number of the right type, `pg >= 8`, a zero size, `src == dst`, a stop before the
//!   start, and fewer flow lines than the count. Node ids are checked by the caller.
//! - Flows are returned in file order with their line numbers; nothing here panics.

use super::hpcc::{counted_lines, field, seconds_to_ps};
use super::WorkloadError;
use headroom_mech::units::Time;

/// One flow line as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawFlow {
    /// 1-based line in the file.
    pub line: usize,
    /// Sending node.
    pub src: u32,
    /// Receiving node.
    pub dst: u32,
    /// Priority group (0..8).
    pub pg: u8,
    /// Bytes the application sends (> 0).
    pub size: u64,
    /// When the sender starts.
    pub start: Time,
    /// When the sender's application stops (at or after `start`).
    pub stop: Time,
}

/// The flows of a file and how many non-blank lines follow them unread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowFile {
    /// The `<count>` flows, in file order.
    pub flows: Vec<RawFlow>,
    /// Non-blank lines after the last flow, which the simulator does not read.
    pub unread_lines: usize,
}

fn err(path: &str, line: usize, reason: impl Into<String>) -> WorkloadError {
    WorkloadError::File {
        path: path.to_string(),
        line,
        reason: reason.into(),
    }
}

fn time(path: &str, line: usize, what: &str, s: &str) -> Result<Time, WorkloadError> {
    seconds_to_ps(s).map(Time).ok_or_else(|| {
        err(
            path,
            line,
            format!("{what} `{s}` is not a non-negative time in seconds"),
        )
    })
}

/// Parses the text of a flow file; `path` is only used in error messages.
pub fn parse(text: &str, path: &str) -> Result<FlowFile, WorkloadError> {
    let (count, hline, mut lines) = counted_lines(text, path)?;
    if count > super::MAX_FLOWS {
        return Err(err(
            path,
            hline,
            format!("{count} flows; at most {} are supported", super::MAX_FLOWS),
        ));
    }
    let mut flows = Vec::with_capacity(count.min(1 << 20));
    let mut last = hline;
    for (ln, l) in lines.by_ref() {
        last = ln;
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() != 6 {
            return Err(err(
                path,
                ln,
                format!(
                    "expected `<src> <dst> <pg> <size bytes> <start seconds> <stop seconds>`, \
                     found {} fields",
                    f.len()
                ),
            ));
        }
        let src: u32 = field(path, ln, "src", f[0])?;
        let dst: u32 = field(path, ln, "dst", f[1])?;
        let pg: u8 = field(path, ln, "pg", f[2])?;
        let size: u64 = field(path, ln, "size", f[3])?;
        let start = time(path, ln, "start", f[4])?;
        let stop = time(path, ln, "stop", f[5])?;
        if pg >= 8 {
            return Err(err(path, ln, format!("pg {pg} is not a priority 0..8")));
        }
        if size == 0 {
            return Err(err(path, ln, "flow size is 0"));
        }
        if src == dst {
            return Err(err(path, ln, format!("flow from node {src} to itself")));
        }
        if stop < start {
            return Err(err(
                path,
                ln,
                format!("stop {} s is before start {} s", f[5], f[4]),
            ));
        }
        flows.push(RawFlow {
            line: ln,
            src,
            dst,
            pg,
            size,
            start,
            stop,
        });
        if flows.len() == count {
            break;
        }
    }
    if flows.len() != count {
        return Err(err(
            path,
            last + 1,
            format!("file declares {count} flows but has only {}", flows.len()),
        ));
    }
    Ok(FlowFile {
        flows,
        unread_lines: lines.count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_count_and_ignores_what_follows() {
        let f = parse(
            "2\n2 4 3 400000000 2 3\n\n3 5 3 64000 2.020000 3\n2\n",
            "f.txt",
        )
        .expect("valid");
        assert_eq!(f.flows.len(), 2);
        assert_eq!(f.unread_lines, 1);
        assert_eq!(f.flows[1].line, 4);
        assert_eq!(f.flows[1].start, Time::from_ms(2_020));
        assert_eq!(f.flows[0].stop, Time::from_ms(3_000));
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line, what) in [
            ("1\n2 4 3 1000 2\n", 2, "found 5 fields"),
            ("1\n2 4 9 1000 2 3\n", 2, "pg 9"),
            ("1\n2 4 3 0 2 3\n", 2, "size is 0"),
            ("1\n2 2 3 10 2 3\n", 2, "to itself"),
            ("1\n2 4 3 10 2 1\n", 2, "before start"),
            ("1\n2 4 3 1x 2 3\n", 2, "size `1x`"),
            ("2\n2 4 3 10 2 3\n", 3, "has only 1"),
            ("x\n", 1, "flow count"),
        ] {
            match parse(text, "f.txt") {
                Err(WorkloadError::File {
                    line: l, reason, ..
                }) => {
                    assert_eq!(l, line, "{text:?}: {reason}");
                    assert!(reason.contains(what), "{text:?}: {reason}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
