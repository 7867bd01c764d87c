//! How a network is split into the parts of a partitioned run ([`split`]).
//!
//! Invariants: every node is in exactly one part, parts are numbered from 0 without gaps,
//! and the lookahead is the shortest delay of a link between two parts.

use crate::routing;
use crate::topology::{NodeKind, Topology};
use headroom_mech::units::Time;
use std::collections::VecDeque;

/// How a network is split into parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// Per node, its part.
    pub node_part: Vec<u16>,
    /// Number of parts.
    pub parts: u16,
    /// Smallest delay of a link between two parts (`Time::MAX` if none).
    pub lookahead: Time,
}

/// Splits `topo` into at most `parts` parts: hosts in id order into equal runs, each
/// switch into the part whose hosts are nearest on average (ties: the part with the fewest
/// switch ports so far). In a fat tree or leaf-spine this keeps pods and leaves whole and
/// spreads the spines. Fewer parts when there are fewer hosts.
pub fn split(topo: &Topology, parts: usize) -> Split {
    let n = topo.nodes.len();
    let hosts: Vec<usize> = (0..n)
        .filter(|&i| topo.nodes[i] == NodeKind::Host)
        .collect();
    let parts = parts.clamp(1, hosts.len().clamp(1, usize::from(u16::MAX)));
    let mut node_part = vec![0u16; n];
    if parts > 1 {
        for (k, &h) in hosts.iter().enumerate() {
            node_part[h] = (k * parts / hosts.len()) as u16;
        }
        let adj = routing::adjacency(topo);
        let mut hosts_in = vec![0u64; parts];
        for &h in &hosts {
            hosts_in[usize::from(node_part[h])] += 1;
        }
        let mut ports_in = vec![0usize; parts];
        let mut dist = vec![u32::MAX; n];
        let mut frontier = VecDeque::new();
        for s in (0..n).filter(|&i| topo.nodes[i] == NodeKind::Switch) {
            dist.fill(u32::MAX);
            dist[s] = 0;
            frontier.push_back(s);
            while let Some(u) = frontier.pop_front() {
                for &(v, _) in &adj[u] {
                    if dist[v.index()] == u32::MAX {
                        dist[v.index()] = dist[u] + 1;
                        frontier.push_back(v.index());
                    }
                }
            }
            // Mean distance to each part's hosts, compared exactly: sum_a / n_a vs sum_b / n_b.
            let mut sums = vec![0u64; parts];
            for &h in &hosts {
                sums[usize::from(node_part[h])] += u64::from(dist[h].min(u32::MAX / 2));
            }
            let best = (0..parts)
                .min_by(|&a, &b| {
                    let (x, y) = (
                        u128::from(sums[a]) * u128::from(hosts_in[b]),
                        u128::from(sums[b]) * u128::from(hosts_in[a]),
                    );
                    x.cmp(&y).then(ports_in[a].cmp(&ports_in[b]))
                })
                .unwrap_or(0);
            node_part[s] = best as u16;
            ports_in[best] += adj[s].len();
        }
    }
    let lookahead = topo
        .links
        .iter()
        .filter(|l| node_part[l.a.index()] != node_part[l.b.index()])
        .map(|l| l.delay)
        .min()
        .unwrap_or(Time::MAX);
    Split {
        node_part,
        parts: parts as u16,
        lookahead,
    }
}
