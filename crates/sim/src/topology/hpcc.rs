//! The topology file format of the ns-3 HPCC simulator
//! (alibaba-edu/High-Precision-Congestion-Control, `simulation/mix/topology.txt`).
//!
//! ```text
//! <nodes> <switches> <links>
//! <switch id> <switch id> ...            (exactly <switches> ids; every other id is a host)
//! <a> <b> <rate> <delay> <error rate>    (exactly <links> lines)
//! ```
//! for example `0 320 100Gbps 1000ns 0.000000`. Rates and delays carry units (parsed by
//! [`parse_rate`] and [`parse_time`]); the error rate is a per-frame probability in `[0, 1]`.
//!
//! Invariants:
//! - Node ids are the file's ids (`0..nodes`): this format, unlike [`super::builders`], may
//!   put switches anywhere in the id space. Links keep the file's order, which numbers the
//!   switch ports exactly as ns-3 does.
//! - Blank lines are ignored (the reference files end with one); line numbers in errors are
//!   1-based physical lines of the file. When the file declares 0 switches, the switch line
//!   may be blank or missing.
//! - Every error is a [`TopologyError::File`] naming the path and line (line 0 for problems
//!   with the whole file, such as an I/O error). A parsed topology has passed
//!   [`Topology::validate`].
//! - [`write()`] emits a file that [`parse()`] reads back to an equal [`Topology`].

use super::{LinkSpec, NodeId, NodeKind, Topology, TopologyError};
use headroom_mech::units::{parse_rate, parse_time, Rate, Time};
use std::fmt::Write as _;
use std::path::Path;

fn err(path: &str, line: usize, reason: impl Into<String>) -> TopologyError {
    TopologyError::File {
        path: path.to_string(),
        line,
        reason: reason.into(),
    }
}

/// Non-blank lines with their 1-based line numbers.
struct Lines<'a> {
    inner: std::iter::Peekable<std::iter::Enumerate<std::str::Lines<'a>>>,
    last: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            inner: text.lines().enumerate().peekable(),
            last: 0,
        }
    }

    /// The next line, blank or not (used for the possibly empty switch line).
    fn next_raw(&mut self) -> Option<(usize, &'a str)> {
        let (i, l) = self.inner.next()?;
        self.last = i + 1;
        Some((i + 1, l))
    }

    /// The next non-blank line.
    fn next_nonblank(&mut self) -> Option<(usize, &'a str)> {
        loop {
            let (n, l) = self.next_raw()?;
            if !l.trim().is_empty() {
                return Some((n, l));
            }
        }
    }

    /// Whether the next physical line is blank (false at the end).
    fn peek_is_blank(&mut self) -> bool {
        self.inner.peek().is_some_and(|(_, l)| l.trim().is_empty())
    }
}

fn parse_u32(path: &str, line: usize, what: &str, s: &str) -> Result<u32, TopologyError> {
    s.parse::<u32>().map_err(|_| {
        err(
            path,
            line,
            format!("{what} `{s}` is not a non-negative integer"),
        )
    })
}

/// Parses the text of an HPCC topology file; `path` is only used in error messages.
///
/// Errors (all [`TopologyError::File`] with the 1-based line): a header that is not three
/// integers, more switches than nodes, a switch line with the wrong number of ids,
/// non-numeric, out-of-range or duplicate switch ids, fewer or more link lines than
/// declared, a link line without five fields, a dangling link ("node N does not exist"),
/// a self-loop, a rate or delay without a valid unit, a zero rate, an error rate outside
/// `[0, 1]`, and any violation of [`Topology::validate`] (a host with zero or several
/// links is reported at the host's second link, or line 0 if it has none).
pub fn parse(text: &str, path: &str) -> Result<Topology, TopologyError> {
    let mut lines = Lines::new(text);

    let (hline, header) = lines
        .next_nonblank()
        .ok_or_else(|| err(path, 1, "empty file: expected `<nodes> <switches> <links>`"))?;
    let fields: Vec<&str> = header.split_whitespace().collect();
    if fields.len() != 3 {
        return Err(err(
            path,
            hline,
            format!(
                "expected `<nodes> <switches> <links>`, found {} fields",
                fields.len()
            ),
        ));
    }
    let nodes = parse_u32(path, hline, "node count", fields[0])? as usize;
    let switches = parse_u32(path, hline, "switch count", fields[1])? as usize;
    let nlinks = parse_u32(path, hline, "link count", fields[2])? as usize;
    if nodes == 0 {
        return Err(err(path, hline, "the topology has no nodes"));
    }
    // Before anything is sized by them: a header may announce billions.
    super::check_limit("node count", nodes, super::MAX_NODES)
        .and_then(|()| super::check_limit("link count", nlinks, super::MAX_LINKS))
        .map_err(|e| err(path, hline, e.to_string()))?;
    if switches > nodes {
        return Err(err(
            path,
            hline,
            format!("{switches} switches but only {nodes} nodes"),
        ));
    }

    let mut kinds = vec![NodeKind::Host; nodes];
    if switches > 0 {
        let (sline, s) = lines.next_nonblank().ok_or_else(|| {
            err(
                path,
                lines.last + 1,
                format!("missing the line of {switches} switch ids"),
            )
        })?;
        let ids: Vec<&str> = s.split_whitespace().collect();
        if ids.len() != switches {
            return Err(err(
                path,
                sline,
                format!("expected {switches} switch ids, found {}", ids.len()),
            ));
        }
        for id in ids {
            let n = parse_u32(path, sline, "switch id", id)? as usize;
            if n >= nodes {
                return Err(err(
                    path,
                    sline,
                    format!("switch id {n} out of range: node {n} does not exist ({nodes} nodes)"),
                ));
            }
            if kinds[n] == NodeKind::Switch {
                return Err(err(path, sline, format!("duplicate switch id {n}")));
            }
            kinds[n] = NodeKind::Switch;
        }
    } else if lines.peek_is_blank() {
        // The (empty) switch line of a topology without switches.
        lines.next_raw();
    }

    let mut links = Vec::with_capacity(nlinks);
    let mut link_lines = Vec::with_capacity(nlinks);
    while let Some((ln, l)) = lines.next_nonblank() {
        if links.len() == nlinks {
            return Err(err(
                path,
                ln,
                format!("more link lines than the {nlinks} declared"),
            ));
        }
        links.push(parse_link(path, ln, l, nodes)?);
        link_lines.push(ln);
    }
    if links.len() != nlinks {
        return Err(err(
            path,
            lines.last + 1,
            format!("file declares {nlinks} links but has only {}", links.len()),
        ));
    }

    let topo = Topology {
        nodes: kinds,
        links,
    };
    topo.validate().map_err(|e| {
        let line = match &e {
            TopologyError::DanglingLink { link, .. }
            | TopologyError::SelfLoop { link, .. }
            | TopologyError::ZeroRate { link } => link_lines.get(*link).copied().unwrap_or(0),
            TopologyError::HostLinks { node, .. } => topo
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.a.0 == *node || l.b.0 == *node)
                .nth(1)
                .and_then(|(i, _)| link_lines.get(i).copied())
                .unwrap_or(0),
            _ => 0,
        };
        err(path, line, e.to_string())
    })?;
    Ok(topo)
}

fn parse_link(path: &str, ln: usize, l: &str, nodes: usize) -> Result<LinkSpec, TopologyError> {
    let f: Vec<&str> = l.split_whitespace().collect();
    if f.len() != 5 {
        return Err(err(
            path,
            ln,
            format!(
                "expected `<a> <b> <rate> <delay> <error rate>`, found {} fields",
                f.len()
            ),
        ));
    }
    let a = parse_u32(path, ln, "node id", f[0])?;
    let b = parse_u32(path, ln, "node id", f[1])?;
    for n in [a, b] {
        if n as usize >= nodes {
            return Err(err(
                path,
                ln,
                format!("dangling link: node {n} does not exist (ids are 0..{nodes})"),
            ));
        }
    }
    if a == b {
        return Err(err(path, ln, format!("link joins node {a} to itself")));
    }
    let rate = parse_rate(f[2]).map_err(|e| err(path, ln, format!("link rate: {e}")))?;
    if rate.bps() == 0 {
        return Err(err(path, ln, "link rate is zero"));
    }
    let delay = parse_time(f[3]).map_err(|e| err(path, ln, format!("link delay: {e}")))?;
    let error_rate: f64 = f[4]
        .parse()
        .map_err(|_| err(path, ln, format!("error rate `{}` is not a number", f[4])))?;
    if !(0.0..=1.0).contains(&error_rate) {
        return Err(err(
            path,
            ln,
            format!("error rate {} is not in [0, 1]", f[4]),
        ));
    }
    Ok(LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate,
        delay,
        error_rate,
    })
}

/// Reads and parses an HPCC topology file. An I/O error is reported as
/// [`TopologyError::File`] with line 0.
pub fn load(path: &Path) -> Result<Topology, TopologyError> {
    let shown = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES)
        .map_err(|e| err(&shown, 0, e.to_string()))?;
    parse(&text, &shown)
}

/// A rate as ns-3 reads it: `100Gbps`, `25Mbps`, `1234bps`.
fn rate_text(r: Rate) -> String {
    r.to_string()
}

/// A delay in the style of the HPCC files: whole nanoseconds when exact (`1000ns`),
/// picoseconds otherwise.
fn delay_text(t: Time) -> String {
    if t.as_ns() * 1_000 == t.as_ps() {
        format!("{}ns", t.as_ns())
    } else {
        format!("{}ps", t.as_ps())
    }
}

/// An error rate with six decimals like the HPCC files (`0.000000`), or the shortest
/// exact representation when six decimals would lose precision.
fn error_rate_text(e: f64) -> String {
    let six = format!("{e:.6}");
    if six.parse::<f64>().ok() == Some(e) {
        six
    } else {
        format!("{e}")
    }
}

/// Writes `topo` in the HPCC format: header, switch ids in increasing order (an empty line
/// when there are none), then one line per link in [`Topology::links`] order. Reading the
/// result back with [`parse()`] gives an equal topology (for a topology that validates).
pub fn write(topo: &Topology) -> String {
    let switches: Vec<String> = topo
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == NodeKind::Switch)
        .map(|(i, _)| i.to_string())
        .collect();
    let mut out = String::with_capacity(64 + topo.links.len() * 40);
    // Writing to a String cannot fail; the `let _` discards the always-Ok result.
    let _ = writeln!(
        out,
        "{} {} {}",
        topo.nodes.len(),
        switches.len(),
        topo.links.len()
    );
    out.push_str(&switches.join(" "));
    out.push('\n');
    for l in &topo.links {
        let _ = writeln!(
            out,
            "{} {} {} {} {}",
            l.a.0,
            l.b.0,
            rate_text(l.rate),
            delay_text(l.delay),
            error_rate_text(l.error_rate)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::builders;

    const P: &str = "test.txt";

    fn file_err(text: &str) -> (usize, String) {
        match parse(text, P) {
            Err(TopologyError::File { path, line, reason }) => {
                assert_eq!(path, P);
                (line, reason)
            }
            other => panic!("expected a file error, got {other:?}"),
        }
    }

    #[test]
    fn parses_small_file() {
        let text = "4 1 3\n3\n0 3 100Gbps 1000ns 0.000000\n1 3 25Gbps 2us 0.001\n\
                    2 3 400Gbps 500ps 0\n\n";
        let t = parse(text, P).expect("valid");
        assert_eq!(
            t.nodes,
            vec![
                NodeKind::Host,
                NodeKind::Host,
                NodeKind::Host,
                NodeKind::Switch
            ]
        );
        assert_eq!(t.links.len(), 3);
        assert_eq!(t.links[0].rate, Rate::from_gbps(100));
        assert_eq!(t.links[0].delay, Time::from_ns(1000));
        assert_eq!(t.links[1].delay, Time::from_us(2));
        assert_eq!(t.links[1].error_rate, 0.001);
        assert_eq!(t.links[2].delay, Time::from_ps(500));
    }

    #[test]
    fn round_trip_builders() {
        let d = Time::from_ns(1500);
        let r = Rate::from_gbps(100);
        let mut topos = vec![
            builders::fat_tree(4, r, d).expect("valid"),
            builders::dumbbell(2, 3, r, Rate::from_mbps(2500), Time::from_ps(1234)).expect("valid"),
            builders::leaf_spine(
                &builders::LeafSpine::new(3, 2, 4, r, d)
                    .with_oversubscription(3.0)
                    .expect("valid"),
            )
            .expect("valid"),
        ];
        topos[1].links[0].error_rate = 1e-9;
        topos[1].links[1].error_rate = 0.25;
        for t in topos {
            let text = write(&t);
            assert_eq!(parse(&text, P), Ok(t.clone()), "{text}");
            assert_eq!(write(&parse(&text, P).expect("valid")), text);
        }
    }

    #[test]
    fn round_trip_without_switches() {
        let t = Topology {
            nodes: vec![NodeKind::Host; 2],
            links: vec![LinkSpec {
                a: NodeId(0),
                b: NodeId(1),
                rate: Rate::from_gbps(100),
                delay: Time::from_ns(10),
                error_rate: 0.0,
            }],
        };
        let text = write(&t);
        assert_eq!(text, "2 0 1\n\n0 1 100Gbps 10ns 0.000000\n");
        assert_eq!(parse(&text, P), Ok(t.clone()));
        assert_eq!(parse("2 0 1\n0 1 100Gbps 10ns 0\n", P), Ok(t));
    }

    #[test]
    fn loads_hpcc_fat_320() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/topologies/hpcc_fat_320.txt");
        let t = load(&path).expect("the reference file parses");
        let hosts = t.hosts();
        assert_eq!(t.len(), 376);
        assert_eq!(hosts.len(), 320);
        assert_eq!(t.len() - hosts.len(), 56);
        assert_eq!(t.links.len(), 480);
        assert_eq!(hosts.last(), Some(&NodeId(319)));
        let g100 = t
            .links
            .iter()
            .filter(|l| l.rate == Rate::from_gbps(100))
            .count();
        let g400 = t
            .links
            .iter()
            .filter(|l| l.rate == Rate::from_gbps(400))
            .count();
        assert_eq!((g100, g400), (320, 160));
        assert!(t
            .links
            .iter()
            .all(|l| l.delay == Time::from_ns(1000) && l.error_rate == 0.0));
        // Every ToR (320..340) has 16 hosts and 4 uplinks.
        let mut deg = vec![0; t.len()];
        for l in &t.links {
            deg[l.a.index()] += 1;
            deg[l.b.index()] += 1;
        }
        assert!(deg[320..340].iter().all(|&d| d == 20));
        // Writing it back gives the same file (up to the trailing blank line).
        let text = std::fs::read_to_string(&path).expect("readable");
        assert_eq!(write(&t), text.trim_end().to_string() + "\n");
    }

    #[test]
    fn load_missing_file_is_line_0() {
        let e = load(Path::new("/nonexistent/topo.txt")).expect_err("missing file");
        assert!(
            matches!(&e, TopologyError::File { path, line: 0, .. } if path == "/nonexistent/topo.txt"),
            "{e:?}"
        );
    }

    #[test]
    fn error_names_path_and_line() {
        let e = parse("3 1 2\n2\n0 2 100Gbps 1us 0\n1 5 100Gbps 1us 0\n", P).expect_err("dangling");
        let msg = e.to_string();
        assert!(msg.starts_with("test.txt:4: "), "{msg}");
        assert!(
            msg.contains("dangling link") && msg.contains("node 5 does not exist"),
            "{msg}"
        );
    }

    #[test]
    fn header_errors() {
        assert_eq!(file_err("").0, 1);
        let (l, r) = file_err("3 1\n2\n");
        assert_eq!(l, 1);
        assert!(
            r.contains("3 fields") || r.contains("found 2 fields"),
            "{r}"
        );
        let (l, r) = file_err("3 x 2\n2\n");
        assert_eq!(l, 1);
        assert!(r.contains("`x`"), "{r}");
        let (l, r) = file_err("2 3 1\n0 1 2\n");
        assert_eq!(l, 1);
        assert!(r.contains("3 switches"), "{r}");
        assert_eq!(file_err("0 0 0\n").0, 1);
    }

    #[test]
    fn switch_line_errors() {
        let (l, r) = file_err("3 1 2\nx\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n");
        assert_eq!(l, 2);
        assert!(r.contains("switch id `x`"), "{r}");
        let (l, r) = file_err("3 1 2\n3\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n");
        assert_eq!(l, 2);
        assert!(r.contains("out of range"), "{r}");
        let (l, r) = file_err("4 2 0\n3 3\n");
        assert_eq!(l, 2);
        assert!(r.contains("duplicate switch id 3"), "{r}");
        let (l, r) = file_err("4 2 0\n3\n");
        assert_eq!(l, 2);
        assert!(r.contains("expected 2 switch ids, found 1"), "{r}");
        let (l, r) = file_err("4 2 0\n");
        assert_eq!(l, 2);
        assert!(r.contains("missing"), "{r}");
    }

    #[test]
    fn link_count_errors() {
        let (l, r) = file_err("3 1 3\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n\n");
        assert_eq!(l, 6);
        assert!(r.contains("declares 3 links but has only 2"), "{r}");
        let (l, r) = file_err("3 1 1\n2\n0 2 100Gbps 1us 0\n\n1 2 100Gbps 1us 0\n");
        assert_eq!(l, 5);
        assert!(r.contains("more link lines"), "{r}");
    }

    #[test]
    fn link_line_errors() {
        let case = |link: &str| file_err(&format!("3 1 2\n2\n0 2 100Gbps 1us 0\n{link}\n"));
        let (l, r) = case("1 2 100Gbps 1us");
        assert_eq!(l, 4);
        assert!(r.contains("found 4 fields"), "{r}");
        let (l, r) = case("1 b 100Gbps 1us 0");
        assert_eq!(l, 4);
        assert!(r.contains("node id `b`"), "{r}");
        let (l, r) = case("1 3 100Gbps 1us 0");
        assert_eq!(l, 4);
        assert!(r.contains("dangling link: node 3 does not exist"), "{r}");
        let (l, r) = case("1 2 100 1us 0");
        assert_eq!(l, 4);
        assert!(r.contains("rate") && r.contains("no unit"), "{r}");
        let (l, r) = case("1 2 100Gbps 1000 0");
        assert_eq!(l, 4);
        assert!(r.contains("delay") && r.contains("no unit"), "{r}");
        let (l, r) = case("1 2 0Gbps 1us 0");
        assert_eq!(l, 4);
        assert!(r.contains("zero"), "{r}");
        for bad in ["1.5", "-0.1", "nan", "x"] {
            let (l, r) = case(&format!("1 2 100Gbps 1us {bad}"));
            assert_eq!(l, 4);
            assert!(r.contains("error rate"), "{r}");
        }
        let (l, r) = case("2 2 100Gbps 1us 0");
        assert_eq!(l, 4);
        assert!(r.contains("itself"), "{r}");
    }

    #[test]
    fn validate_errors_get_a_line() {
        // Host 0 has two links: reported at its second link (line 4).
        let (l, r) = file_err("3 1 2\n2\n0 2 100Gbps 1us 0\n0 2 100Gbps 1us 0\n");
        assert_eq!(l, 4);
        assert!(r.contains("host 0 has 2 links"), "{r}");
        // Host 1 has none: line 0.
        let (l, r) = file_err("3 1 1\n2\n0 2 100Gbps 1us 0\n");
        assert_eq!(l, 0);
        assert!(r.contains("host 1 has 0 links"), "{r}");
    }
}
