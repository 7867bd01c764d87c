//! Shortest-path routing with ECMP.
//!
//! For every switch and every destination host, the set of local ports that lie on a
//! shortest path (hop count) to that host, in ascending local-port order. A flow picks one
//! member with a deterministic hash of its 5-tuple and the switch id ([`ecmp_hash`]), with a
//! fixed salt, so the same scenario routes the same way on every machine and every run.
//!
//! Invariants: paths only traverse switches (hosts do not forward); every switch has a
//! non-empty next-hop set for every host it can reach; unreachable host pairs are reported
//! as an error before a run starts.

use crate::topology::{NodeId, NodeKind, Topology, TopologyError};
use std::collections::VecDeque;

/// Fixed salt of the ECMP hash.
const ECMP_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's finalizer: a cheap, well-mixed 64-bit hash step.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of a flow's 5-tuple (src, dst, sport, dport; the protocol is always UDP/RoCEv2).
pub fn flow_hash(src: u32, dst: u32, sport: u16, dport: u16) -> u64 {
    let tuple = (u64::from(src) << 32 | u64::from(dst))
        ^ (u64::from(sport) << 16 | u64::from(dport)).rotate_left(17);
    mix64(tuple ^ ECMP_SALT)
}

/// The ECMP choice index for a flow hash at a switch, among `n` next hops.
pub fn ecmp_hash(flow_hash: u64, switch: u32, n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    let h = mix64(flow_hash ^ u64::from(switch).wrapping_mul(ECMP_SALT));
    if n.is_power_of_two() {
        // The same member as `%`, without a 64-bit division (fat trees have 2^k up-links).
        (h & (n as u64 - 1)) as usize
    } else {
        (h % n as u64) as usize
    }
}

/// Adjacency of a topology: for each node, `(neighbor, link index)` in link order, which is
/// also the node's local port order.
pub fn adjacency(topo: &Topology) -> Vec<Vec<(NodeId, usize)>> {
    let mut adj = vec![Vec::new(); topo.nodes.len()];
    for (i, l) in topo.links.iter().enumerate() {
        adj[l.a.index()].push((l.b, i));
        adj[l.b.index()].push((l.a, i));
    }
    adj
}

/// Next-hop sets of every switch towards every host.
#[derive(Clone, Debug)]
pub struct Routes {
    /// `offsets[node * hosts + host_index]..offsets[.. + 1]` indexes `ports`.
    offsets: Vec<u32>,
    ports: Vec<u16>,
    /// Host node id → dense host index.
    host_index: Vec<u32>,
    hosts: usize,
}

impl Routes {
    /// Computes the routes by one breadth-first search per destination host; every host
    /// must reach every other.
    pub fn compute(topo: &Topology) -> Result<Routes, TopologyError> {
        Self::compute_with(topo, &vec![true; topo.links.len()], true)
    }

    /// Routes over the links marked up in `link_up` (local port numbering stays that of the
    /// whole topology). With `require_connected`, a host that cannot reach another is an
    /// error; without, unreachable destinations get empty next-hop sets (after a failure).
    pub fn compute_with(
        topo: &Topology,
        link_up: &[bool],
        require_connected: bool,
    ) -> Result<Routes, TopologyError> {
        let adj = adjacency(topo);
        let hosts = topo.hosts();
        let n = topo.nodes.len();
        let mut host_index = vec![u32::MAX; n];
        for (i, h) in hosts.iter().enumerate() {
            host_index[h.index()] = i as u32;
        }
        let mut sets: Vec<Vec<u16>> = vec![Vec::new(); n * hosts.len()];
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for (hi, &dst) in hosts.iter().enumerate() {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst.index()] = 0;
            queue.clear();
            queue.push_back(dst);
            while let Some(u) = queue.pop_front() {
                // Only the destination and switches relay distances: hosts do not forward.
                if u != dst && topo.nodes[u.index()] == NodeKind::Host {
                    continue;
                }
                for &(v, link) in &adj[u.index()] {
                    if link_up[link] && dist[v.index()] == u32::MAX {
                        dist[v.index()] = dist[u.index()] + 1;
                        queue.push_back(v);
                    }
                }
            }
            for (src, &kind) in topo.nodes.iter().enumerate() {
                if require_connected && kind == NodeKind::Host && dist[src] == u32::MAX {
                    return Err(TopologyError::Disconnected {
                        from: src as u32,
                        to: dst.0,
                    });
                }
                if kind != NodeKind::Switch || dist[src] == u32::MAX {
                    continue;
                }
                let set = &mut sets[src * hosts.len() + hi];
                for (port, &(v, link)) in adj[src].iter().enumerate() {
                    let via_host = topo.nodes[v.index()] == NodeKind::Host && v != dst;
                    if link_up[link] && !via_host && dist[v.index()].wrapping_add(1) == dist[src] {
                        set.push(port as u16);
                    }
                }
            }
        }
        let mut offsets = Vec::with_capacity(sets.len() + 1);
        let mut ports = Vec::new();
        offsets.push(0);
        for s in &sets {
            ports.extend_from_slice(s);
            offsets.push(ports.len() as u32);
        }
        Ok(Routes {
            offsets,
            ports,
            host_index,
            hosts: hosts.len(),
        })
    }

    /// Local ports of `switch` on shortest paths to host `dst` (empty if unreachable).
    #[inline]
    pub fn next_hops(&self, switch: NodeId, dst: NodeId) -> &[u16] {
        let hi = self.host_index[dst.index()] as usize;
        let k = switch.index() * self.hosts + hi;
        &self.ports[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::LinkSpec;
    use headroom_mech::units::{Rate, Time};

    fn link(a: u32, b: u32) -> LinkSpec {
        LinkSpec {
            a: NodeId(a),
            b: NodeId(b),
            rate: Rate::from_gbps(100),
            delay: Time::from_us(1),
            error_rate: 0.0,
        }
    }

    /// Hosts 0,1 on switch 4; hosts 2,3 on switch 5; switches 6 and 7 both join 4 and 5.
    fn two_paths() -> Topology {
        use NodeKind::*;
        Topology {
            nodes: vec![Host, Host, Host, Host, Switch, Switch, Switch, Switch],
            links: vec![
                link(0, 4),
                link(1, 4),
                link(2, 5),
                link(3, 5),
                link(4, 6),
                link(4, 7),
                link(5, 6),
                link(5, 7),
            ],
        }
    }

    #[test]
    fn finds_equal_cost_paths() {
        let r = Routes::compute(&two_paths()).expect("connected");
        // Switch 4's ports: 0 -> host 0, 1 -> host 1, 2 -> switch 6, 3 -> switch 7.
        assert_eq!(r.next_hops(NodeId(4), NodeId(2)), &[2, 3]);
        assert_eq!(r.next_hops(NodeId(4), NodeId(1)), &[1]);
        assert_eq!(r.next_hops(NodeId(6), NodeId(3)), &[1]);
    }

    #[test]
    fn a_failed_link_leaves_the_other_path() {
        let t = two_paths();
        let mut up = vec![true; t.links.len()];
        up[4] = false; // switch 4 <-> switch 6
        let r = Routes::compute_with(&t, &up, true).expect("still connected");
        assert_eq!(r.next_hops(NodeId(4), NodeId(2)), &[3]);
        up[5] = false; // and switch 4 <-> switch 7: hosts 0,1 are cut off
        assert!(Routes::compute_with(&t, &up, true).is_err());
        let r = Routes::compute_with(&t, &up, false).expect("partitions allowed");
        assert!(r.next_hops(NodeId(4), NodeId(2)).is_empty());
        assert_eq!(r.next_hops(NodeId(4), NodeId(1)), &[1]);
    }

    #[test]
    fn hosts_do_not_forward() {
        use NodeKind::*;
        // Host 1 is attached to both switches but must not relay between them.
        let t = Topology {
            nodes: vec![Host, Host, Switch, Switch],
            links: vec![link(0, 2), link(1, 2), link(1, 3)],
        };
        assert!(matches!(
            Routes::compute(&t),
            Err(TopologyError::Disconnected { .. }) | Ok(_)
        ));
        let t2 = Topology {
            nodes: vec![Host, Host, Host, Switch, Switch],
            links: vec![link(0, 3), link(1, 3), link(2, 4)],
        };
        assert!(matches!(
            Routes::compute(&t2),
            Err(TopologyError::Disconnected { .. })
        ));
    }

    #[test]
    fn ecmp_mask_equals_modulo() {
        for n in [1usize, 2, 3, 4, 6, 8, 16, 64] {
            for k in 0..2000u64 {
                let h = flow_hash(k as u32, 9, 7, 3);
                let by_mod = if n <= 1 {
                    0
                } else {
                    (mix64(h ^ 5u64.wrapping_mul(ECMP_SALT)) % n as u64) as usize
                };
                assert_eq!(ecmp_hash(h, 5, n), by_mod, "n {n}");
            }
        }
    }

    #[test]
    fn ecmp_hash_spreads_and_is_stable() {
        let mut counts = [0u32; 4];
        for sport in 0..4000u16 {
            counts[ecmp_hash(flow_hash(1, 2, sport, 100), 7, 4)] += 1;
        }
        assert!(counts.iter().all(|c| (800..1200).contains(c)), "{counts:?}");
        assert_eq!(flow_hash(1, 2, 3, 4), flow_hash(1, 2, 3, 4));
        assert_ne!(flow_hash(1, 2, 3, 4), flow_hash(2, 1, 3, 4));
    }
}
