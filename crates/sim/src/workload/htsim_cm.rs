//! htsim's connection matrices (`.cm`, Broadcom/csg-htsim `sim/datacenter/`), as its
//! `connection_matrices/gen_*.py` scripts write them:
//!
//! ```text
//! Nodes 16
//! Connections 2
//! 0->5 id 1 start 0 size 2000000
//! 3->7 id 2 start 1500000 size 2000000
//! ```
//!
//! A header (`Nodes N`, `Connections C`, and `Triggers` / `Failures` counts), then one line
//! per connection: `src->dst` and `key value` pairs, `start` in picoseconds (a decimal
//! number, rounded to the nearest picosecond), `size` in bytes, `id` a flow id (not 0).
//! Lines starting with `#` and blank lines are skipped. htsim's node `i` is the `i`-th
//! host of the topology (hosts in node order).
//!
//! Invariants: [`parse`] returns the flows in file order with the matrix's node numbers
//! (the caller maps them to hosts and checks them against the topology); it accepts
//! exactly the forms above, and refuses with the line number and the reason everything
//! else htsim reads: flows started by triggers (`trigger`, `send_done_trigger`,
//! `recv_done_trigger`, `addon`, `trigger` and `failure` lines), htsim's scheduling
//! `prio`, endless flows (`size 0`), a connection count that differs from the header's.

use super::WorkloadError;
use headroom_mech::units::Time;

/// One connection of a matrix, by htsim node numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connection {
    /// Sending node (htsim's numbering: the index of a host).
    pub src: u32,
    /// Receiving node.
    pub dst: u32,
    /// Bytes.
    pub size: u64,
    /// When it starts.
    pub start: Time,
    /// The file's line, for errors found later (unknown hosts).
    pub line: usize,
}

/// A parsed matrix: its declared node count and its connections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    /// `Nodes N`.
    pub nodes: u32,
    /// The connections, in file order.
    pub connections: Vec<Connection>,
}

fn err(path: &str, line: usize, reason: impl Into<String>) -> WorkloadError {
    WorkloadError::File {
        path: path.to_string(),
        line,
        reason: reason.into(),
    }
}

/// Why a trigger form is refused (headroom starts flows at times only).
const NO_TRIGGERS: &str = "flows started by triggers (another flow's end) are not supported: \
give every connection a `start` time";

/// Parses a connection matrix; `path` is only used in error messages.
pub fn parse(text: &str, path: &str) -> Result<Matrix, WorkloadError> {
    let mut nodes: Option<u32> = None;
    let mut declared: Option<(usize, usize)> = None;
    let mut connections = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let mut tokens = raw.split_whitespace();
        let Some(first) = tokens.next() else { continue };
        if first.starts_with('#') {
            continue;
        }
        let count = |tokens: &mut std::str::SplitWhitespace| -> Result<u64, WorkloadError> {
            let v = tokens
                .next()
                .ok_or_else(|| err(path, line, format!("`{first}` needs a count")))?;
            v.parse()
                .map_err(|_| err(path, line, format!("`{first} {v}`: not a count")))
        };
        match first {
            "Nodes" => {
                let n = count(&mut tokens)?;
                nodes = Some(u32::try_from(n).map_err(|_| {
                    err(path, line, format!("{n} nodes: more than any topology has"))
                })?);
            }
            "Connections" => declared = Some((count(&mut tokens)? as usize, line)),
            "Triggers" | "Failures" => {
                if count(&mut tokens)? > 0 {
                    let what = if first == "Triggers" {
                        NO_TRIGGERS
                    } else {
                        "htsim's failure lines are not supported: use [[link_failure]]"
                    };
                    return Err(err(path, line, what));
                }
            }
            "trigger" => return Err(err(path, line, NO_TRIGGERS)),
            "failure" => {
                return Err(err(
                    path,
                    line,
                    "htsim's failure lines are not supported: use [[link_failure]]",
                ))
            }
            _ if first.contains("->") => {
                connections.push(connection(first, tokens, path, line)?);
            }
            other => {
                return Err(err(
                    path,
                    line,
                    format!(
                        "unknown line `{other}` (expected Nodes, Connections or `src->dst ...`)"
                    ),
                ))
            }
        }
    }
    let nodes = nodes.ok_or_else(|| err(path, 1, "no `Nodes N` line"))?;
    let (count, count_line) = declared.ok_or_else(|| err(path, 1, "no `Connections C` line"))?;
    if count != connections.len() {
        return Err(err(
            path,
            count_line,
            format!(
                "the header declares {count} connections, the file has {}",
                connections.len()
            ),
        ));
    }
    for c in &connections {
        for (what, n) in [("src", c.src), ("dst", c.dst)] {
            if n >= nodes {
                return Err(err(
                    path,
                    c.line,
                    format!("{what} {n} is not one of the matrix's {nodes} nodes"),
                ));
            }
        }
    }
    Ok(Matrix { nodes, connections })
}

/// One `src->dst key value ...` line.
fn connection<'a>(
    ends: &str,
    mut tokens: impl Iterator<Item = &'a str>,
    path: &str,
    line: usize,
) -> Result<Connection, WorkloadError> {
    let node = |s: &str, what: &str| -> Result<u32, WorkloadError> {
        s.parse()
            .map_err(|_| err(path, line, format!("{what} `{s}` is not a node number")))
    };
    let (a, b) = ends.split_once("->").unwrap_or((ends, ""));
    let (src, dst) = (node(a, "src")?, node(b, "dst")?);
    if src == dst {
        return Err(err(
            path,
            line,
            format!("src and dst are the same node {src}"),
        ));
    }
    let mut size = None;
    let mut start = None;
    while let Some(key) = tokens.next() {
        let mut value = || {
            tokens
                .next()
                .ok_or_else(|| err(path, line, format!("`{key}` needs a value")))
        };
        match key {
            "start" => {
                let v = value()?;
                let ps: f64 = v
                    .parse()
                    .ok()
                    .filter(|p: &f64| p.is_finite() && *p >= 0.0 && *p < u64::MAX as f64)
                    .ok_or_else(|| {
                        err(
                            path,
                            line,
                            format!("start `{v}` is not a time in picoseconds"),
                        )
                    })?;
                start = Some(Time::from_ps(ps.round() as u64));
            }
            "size" => {
                let v = value()?;
                let bytes: u64 = v
                    .parse()
                    .map_err(|_| err(path, line, format!("size `{v}` is not a byte count")))?;
                if bytes == 0 {
                    return Err(err(
                        path,
                        line,
                        "size 0 (an endless htsim flow) is not supported: give the bytes to send",
                    ));
                }
                size = Some(bytes);
            }
            "id" => {
                let v = value()?;
                if v.parse::<u64>().map_or(true, |id| id == 0) {
                    return Err(err(path, line, format!("id `{v}`: flow ids are 1 or more")));
                }
            }
            "trigger" | "send_done_trigger" | "recv_done_trigger" | "addon" => {
                return Err(err(path, line, NO_TRIGGERS))
            }
            "prio" => {
                return Err(err(
                    path,
                    line,
                    "htsim's per-flow `prio` is not supported: the workload's `prio` gives \
                     the traffic class",
                ))
            }
            other => return Err(err(path, line, format!("unknown key `{other}`"))),
        }
    }
    Ok(Connection {
        src,
        dst,
        size: size.ok_or_else(|| err(path, line, "no `size`"))?,
        start: start.ok_or_else(|| err(path, line, "no `start` (triggers are not supported)"))?,
        line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> (usize, String) {
        match parse(text, "m.cm") {
            Err(WorkloadError::File { line, reason, .. }) => (line, reason),
            other => panic!("expected a file error, got {other:?}"),
        }
    }

    #[test]
    fn reads_what_the_generators_write() {
        let m = parse(
            "# a permutation\nNodes 16\nConnections 2\n\n0->5 id 1 start 0 size 2000000\n\
             3->7 id 2 start 1500000.4 size 1000\n",
            "m.cm",
        )
        .expect("valid");
        assert_eq!(m.nodes, 16);
        assert_eq!(
            m.connections,
            vec![
                Connection {
                    src: 0,
                    dst: 5,
                    size: 2_000_000,
                    start: Time::ZERO,
                    line: 5
                },
                Connection {
                    src: 3,
                    dst: 7,
                    size: 1000,
                    start: Time::from_ps(1_500_000),
                    line: 6
                },
            ]
        );
        // Keys in any order, no id, zero trigger and failure counts.
        let m = parse(
            "Nodes 4\nConnections 1\nTriggers 0\nFailures 0\n1->2 size 10 start 5\n",
            "m.cm",
        )
        .expect("valid");
        assert_eq!(m.connections[0].start, Time::from_ps(5));
    }

    #[test]
    fn refuses_what_it_does_not_model_naming_the_line() {
        let head = "Nodes 8\nConnections 1\n";
        for (body, want) in [
            ("0->1 id 1 trigger 2\n", "triggers"),
            (
                "0->1 id 1 start 0 size 10 send_done_trigger 3\n",
                "triggers",
            ),
            ("0->1 id 1 start 0 size 10 prio 5\n", "prio"),
            ("0->1 id 1 start 0 size 0\n", "endless"),
            ("0->1 id 0 start 0 size 10\n", "ids are 1 or more"),
            ("0->1 start 0\n", "no `size`"),
            ("0->1 size 10\n", "no `start`"),
            ("0->0 start 0 size 10\n", "same node"),
            ("0->9 start 0 size 10\n", "not one of the matrix's 8 nodes"),
            ("0->x start 0 size 10\n", "not a node number"),
            ("0->1 start -3 size 10\n", "not a time"),
            ("0->1 start 0 size 10 colour red\n", "unknown key `colour`"),
            ("0->1 start 0 size\n", "needs a value"),
        ] {
            let (line, r) = reason(&format!("{head}{body}"));
            assert_eq!(line, 3, "{body}: {r}");
            assert!(r.contains(want), "{body}: {r}");
        }
        assert!(reason("Nodes 8\nConnections 1\ntrigger id 1 oneshot\n")
            .1
            .contains("triggers"));
        assert!(reason("Nodes 8\nTriggers 2\n").1.contains("triggers"));
        assert!(reason("Nodes 8\nFailures 1\n").1.contains("link_failure"));
        assert_eq!(
            reason("Nodes 8\nConnections 2\n0->1 start 0 size 1\n"),
            (
                2,
                "the header declares 2 connections, the file has 1".to_string()
            )
        );
        assert!(reason("Connections 0\n").1.contains("Nodes"));
        assert!(reason("Nodes 8\n").1.contains("Connections"));
        assert!(reason("Nodes eight\n").1.contains("not a count"));
        assert!(reason("Nodes 8\nConnections 0\nhello\n")
            .1
            .contains("unknown line"));
    }
}
