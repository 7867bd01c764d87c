//! The DCQCN/TCD simulator's FCT file (`FCT_OUTPUT_FILE`), written from a finished run.
//!
//! One line per finished flow, in order of completion (ties by flow id), formatted as the
//! simulator's `qp_finish` prints them (`%d %d %u %f %.8f %.8f`):
//! `src dst payload_bytes start_s fct_s base_fct_s`.
//!
//! - `payload_bytes` is the flow's size here, which [`super::parse`] made the data bytes
//!   of the simulator's packets (what it reports).
//! - `fct_s` is measured to the arrival of the last packet at the receiver, as the
//!   simulator measures it. Headroom records when the sender gets the last ACK, so the
//!   ACK's unloaded return time (per hop: the link delay and the ACK frame's transmission)
//!   is taken off; a queued ACK makes the line up to that queueing longer.
//! - `base_fct_s` is the payload at the source's link rate plus the propagation delays of
//!   the path (fewest hops, the first found). On the authors' fat trees (40 Gb/s, 4 µs
//!   links) this is their `payload / 5e9` plus 8, 16 or 24 µs, derived from the path
//!   instead of node-id arithmetic.
//!
//! Invariants: flows without a path (impossible in a validated config) are written with
//! the bare FCT and a zero base; nothing here panics.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};

use crate::config::SimConfig;
use crate::results::RunResults;
use crate::topology::Topology;
use headroom_mech::units::Time;

/// Per-link facts of a path.
struct Path {
    /// Sum of one-way delays.
    delay: Time,
    /// Rate of the first link, bit/s.
    first_rate: u64,
    /// Link indices, source first.
    links: Vec<usize>,
}

/// Breadth-first predecessors (node -> link used to reach it) from `src`.
fn bfs(topo: &Topology, adj: &[Vec<(usize, usize)>], src: usize) -> Vec<Option<usize>> {
    let mut prev = vec![None; topo.nodes.len()];
    let mut seen = vec![false; topo.nodes.len()];
    let mut q = VecDeque::new();
    if src < seen.len() {
        seen[src] = true;
        q.push_back(src);
    }
    while let Some(n) = q.pop_front() {
        for &(m, l) in &adj[n] {
            if !seen[m] {
                seen[m] = true;
                prev[m] = Some(l);
                q.push_back(m);
            }
        }
    }
    prev
}

fn path(topo: &Topology, prev: &[Option<usize>], src: usize, dst: usize) -> Option<Path> {
    let mut links = Vec::new();
    let mut n = dst;
    while n != src {
        let l = (*prev.get(n)?)?;
        links.push(l);
        let link = &topo.links[l];
        n = if link.a.index() == n {
            link.b.index()
        } else {
            link.a.index()
        };
        if links.len() > topo.links.len() {
            return None;
        }
    }
    links.reverse();
    let first_rate = topo.links.get(*links.first()?)?.rate.bps();
    let delay = links
        .iter()
        .fold(Time::ZERO, |t, &l| t + topo.links[l].delay);
    Some(Path {
        delay,
        first_rate,
        links,
    })
}

/// Writes the FCT lines of `results` (see the module documentation).
pub fn write_fct(w: &mut dyn Write, results: &RunResults, cfg: &SimConfig) -> io::Result<()> {
    let topo = &cfg.topology;
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); topo.nodes.len()];
    for (i, l) in topo.links.iter().enumerate() {
        if l.a.index() < adj.len() && l.b.index() < adj.len() {
            adj[l.a.index()].push((l.b.index(), i));
            adj[l.b.index()].push((l.a.index(), i));
        }
    }
    let ack_bits = (cfg.host.ack_bytes + cfg.link.frame_overhead) as f64 * 8.0;
    let mut trees: BTreeMap<u32, Vec<Option<usize>>> = BTreeMap::new();
    let mut lines: Vec<(Time, u32, String)> = Vec::new();
    for f in &results.flows {
        let (Some(finish), Some(fct)) = (f.finish, f.fct()) else {
            continue;
        };
        let prev = trees
            .entry(f.src)
            .or_insert_with(|| bfs(topo, &adj, f.src as usize));
        let p = path(topo, prev, f.src as usize, f.dst as usize);
        let (ack_return, base) = match &p {
            Some(p) => {
                let ret_s: f64 = p
                    .links
                    .iter()
                    .map(|&l| {
                        let link = &topo.links[l];
                        link.delay.as_secs_f64() + ack_bits / link.rate.bps().max(1) as f64
                    })
                    .sum();
                let base =
                    f.size as f64 / (p.first_rate.max(1) as f64 / 8.0) + p.delay.as_secs_f64();
                (ret_s, base)
            }
            None => (0.0, 0.0),
        };
        let fct_s = (fct.as_secs_f64() - ack_return).max(0.0);
        let done = finish.as_secs_f64() - ack_return;
        let line = format!(
            "{} {} {} {:.6} {:.8} {:.8}",
            f.src,
            f.dst,
            f.size,
            f.start.as_secs_f64(),
            fct_s,
            base
        );
        lines.push((Time((done.max(0.0) * 1e12) as u64), f.id, line));
    }
    lines.sort_by_key(|(t, id, _)| (*t, *id));
    for (_, _, l) in lines {
        writeln!(w, "{l}")?;
    }
    Ok(())
}
