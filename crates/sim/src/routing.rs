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
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

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

/// How routes are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum RoutingKind {
    /// Every shortest path (hop count), ECMP among them.
    #[default]
    ShortestPath,
    /// Shortest paths within a spanning tree of the switches (breadth-first from the
    /// lowest-numbered switch, each switch joining by its lowest-numbered link), as
    /// Ethernet's spanning tree protocol leaves a network: links off the tree carry no
    /// data, and since tree paths never turn back, no cyclic buffer dependency (so no PFC
    /// deadlock) can form.
    SpanningTree,
}

/// The links (by index) a spanning tree of `topo`'s switches keeps, with every host link,
/// among the links marked up in `link_up`.
pub fn spanning_tree(topo: &Topology, link_up: &[bool]) -> Vec<bool> {
    let adj = adjacency(topo);
    let mut keep: Vec<bool> = topo
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            link_up[i]
                && (topo.nodes[l.a.index()] == NodeKind::Host
                    || topo.nodes[l.b.index()] == NodeKind::Host)
        })
        .collect();
    let mut seen = vec![false; topo.nodes.len()];
    // One tree per connected group of switches (after failures there may be several).
    for root in 0..topo.nodes.len() {
        if topo.nodes[root] != NodeKind::Switch || seen[root] {
            continue;
        }
        seen[root] = true;
        let mut queue = VecDeque::from([root]);
        while let Some(u) = queue.pop_front() {
            let mut next: Vec<(usize, NodeId)> = adj[u]
                .iter()
                .filter(|&&(v, link)| link_up[link] && topo.nodes[v.index()] == NodeKind::Switch)
                .map(|&(v, link)| (link, v))
                .collect();
            next.sort_unstable();
            for (link, v) in next {
                if !seen[v.index()] {
                    seen[v.index()] = true;
                    keep[link] = true;
                    queue.push_back(v.index());
                }
            }
        }
    }
    keep
}

/// The flat table `set_of` (`rows` × `columns` set ids) by blocks of [`BLOCK`] columns, as
/// [`Routes`] keeps it: one entry per block, and the pool of blocks whose columns differ.
/// `own[column]` is the row whose entry in that column is never read (the attachment's own
/// switch), if any.
fn by_blocks(
    set_of: &[u16],
    rows: usize,
    columns: usize,
    own: &[Option<u32>],
) -> Result<(Vec<u32>, Vec<u16>), TopologyError> {
    let row_blocks = columns.div_ceil(BLOCK);
    let mut blocks = Vec::with_capacity(rows * row_blocks);
    let mut mixed: Vec<u16> = Vec::new();
    let mut pooled: HashMap<[u16; BLOCK], u32> = HashMap::new();
    for row in 0..rows {
        let cells = &set_of[row * columns..(row + 1) * columns];
        for first in (0..columns).step_by(BLOCK) {
            let mut block = [0u16; BLOCK];
            let mut only: Option<u16> = None;
            let mut uniform = true;
            for (i, &id) in cells[first..columns.min(first + BLOCK)].iter().enumerate() {
                if own.get(first + i).copied().flatten() == Some(row as u32) {
                    continue;
                }
                block[i] = id;
                uniform &= *only.get_or_insert(id) == id;
            }
            if uniform {
                blocks.push(u32::from(only.unwrap_or(0)));
                continue;
            }
            let next = (mixed.len() / BLOCK) as u32;
            let at = *pooled.entry(block).or_insert_with(|| {
                mixed.extend_from_slice(&block);
                next
            });
            if at >= MIXED {
                return Err(TopologyError::TooLarge {
                    what: "routing tables",
                    bytes: mixed.len() as u64 * 2,
                });
            }
            blocks.push(MIXED | at);
        }
    }
    Ok((blocks, mixed))
}

/// Next-hop sets of every switch towards every host.
///
/// A switch forwards towards a host as towards the node the host's one link attaches it
/// to, except the attaching switch itself, which sends it out of that link's port. So the
/// tables hold one 16-bit set id per (switch, attachment) into a pool of the distinct
/// sets, which are few, plus each host's attachment and own-port set: a fat tree's edge
/// switch serves k/2 hosts with one column, so a k = 48 fat tree needs 7.1 MB instead of
/// 159 MB, and a row of the table a switch reads stays in cache. The tables are shared (a
/// clone is cheap: the parts of a run use one copy) and a lookup reads them directly,
/// without a pointer to chase first.
///
/// The table is then stored by blocks of [`BLOCK`] columns: most blocks of a row name one
/// set for every column (a fat tree's edge switch sends everything not its own up, a core
/// sends a pod's edge switches down one port), and only the others keep their columns, in
/// a pool where equal blocks are stored once. A k = 32 fat tree's table falls from 1.3 MB,
/// which the per-frame lookup missed in cache, to 0.17 MB. The entry of a switch's own
/// attachment is never read (its hosts' own port is), so it counts as whatever lets its
/// block be one set.
#[derive(Clone, Debug)]
pub struct Routes {
    /// Switch node id → where its row starts in `blocks` (hosts' entries unused).
    row_base: Arc<[u32]>,
    /// Host node id → how to reach it (switches' entries unused).
    dests: Arc<[Destination]>,
    /// The table's rows, one after the other, by blocks of [`BLOCK`] columns (the last
    /// one of a row may be partial); a column per attachment, and a last one that reaches
    /// nothing. `blocks[row_base[switch] + column / BLOCK]`: the set of every column of the block
    /// (an index into `sets`; set 0 is the empty set), or, with [`MIXED`] set, the block's
    /// place in `mixed`.
    blocks: Arc<[u32]>,
    /// Blocks whose columns differ, `BLOCK` set ids each, each distinct block once.
    mixed: Arc<[u16]>,
    /// Distinct next-hop sets: `(start, len)` in `ports`.
    sets: Arc<[(u32, u32)]>,
    ports: Arc<[u16]>,
    /// The most switch-to-switch hops of any route from a switch a host hangs off to
    /// another.
    max_switch_hops: u32,
}

/// Columns per block of the routing table ([`Routes`]).
const BLOCK: usize = 16;

/// Flag of a block entry that points into the pool of mixed blocks.
const MIXED: u32 = 1 << 31;

/// How the switches reach one host.
#[derive(Clone, Copy, Debug, Default)]
struct Destination {
    /// Where the row of the switch the host's link attaches it to starts in
    /// `Routes::blocks` (`u32::MAX`: none, or the link is down).
    attach_base: u32,
    /// Its attachment's column (the unreachable column when the link is down): its block
    /// in a row, and its place in the block.
    block: u32,
    lane: u8,
    /// The set its attaching switch uses: the port of the host's link.
    own: u16,
    /// That port (the one member of `own`), for the frame's last hop to read directly.
    own_port: u16,
}

impl Destination {
    /// Reached through `column`, from the switch whose row starts at `attach_base`.
    fn new(attach_base: u32, column: u32, (own, own_port): (u16, u16)) -> Self {
        Destination {
            attach_base,
            block: column / BLOCK as u32,
            lane: (column % BLOCK as u32) as u8,
            own,
            own_port,
        }
    }
}

impl Routes {
    /// Bytes computing the routes of `topo` takes at most (the set pool aside, which is
    /// small), before they are computed: what a caller checks against the memory it has.
    /// The flat table is built whole, then stored by blocks in far less.
    pub fn estimated_bytes(topo: &Topology) -> u64 {
        let hosts = topo.nodes.iter().filter(|&&k| k == NodeKind::Host).count() as u64;
        let switches = topo.nodes.len() as u64 - hosts;
        let mut attachment = vec![false; topo.nodes.len()];
        for l in &topo.links {
            for (end, other) in [(l.a, l.b), (l.b, l.a)] {
                if topo.nodes[end.index()] == NodeKind::Host {
                    attachment[other.index()] = true;
                }
            }
        }
        let columns = attachment.iter().filter(|&&a| a).count() as u64 + 1;
        switches * columns * 2 + topo.nodes.len() as u64 * (4 + size_of::<Destination>() as u64)
    }

    /// Computes the routes of `kind` by one breadth-first search per node hosts attach
    /// to; every host must reach every other.
    pub fn compute(topo: &Topology, kind: RoutingKind) -> Result<Routes, TopologyError> {
        Self::compute_with(topo, kind, &vec![true; topo.links.len()], true)
    }

    /// Routes over the links marked up in `link_up` (local port numbering stays that of the
    /// whole topology). With `require_connected`, a host that cannot reach another is an
    /// error; without, unreachable destinations get empty next-hop sets (after a failure).
    pub fn compute_with(
        topo: &Topology,
        kind: RoutingKind,
        link_up: &[bool],
        require_connected: bool,
    ) -> Result<Routes, TopologyError> {
        let tree;
        let link_up = match kind {
            RoutingKind::ShortestPath => link_up,
            RoutingKind::SpanningTree => {
                tree = spanning_tree(topo, link_up);
                &tree
            }
        };
        let adj = adjacency(topo);
        let hosts = topo.hosts();
        let n = topo.nodes.len();
        let mut rows = vec![u32::MAX; n];
        let mut switches = 0u32;
        for (node, kind) in topo.nodes.iter().enumerate() {
            if *kind == NodeKind::Switch {
                rows[node] = switches;
                switches += 1;
            }
        }
        // Each node a live host link attaches a host to gets a column, in host order.
        let mut column_of = vec![u32::MAX; n];
        let mut attachments: Vec<NodeId> = Vec::new();
        for &dst in &hosts {
            // Validated: a host has exactly one link.
            if let Some(&(attach, link)) = adj[dst.index()].first() {
                if link_up[link] && column_of[attach.index()] == u32::MAX {
                    column_of[attach.index()] = attachments.len() as u32;
                    attachments.push(attach);
                }
            }
        }
        let columns = attachments.len() + 1;
        let unreachable_column = attachments.len() as u32;
        let row_blocks = columns.div_ceil(BLOCK);
        // Rows start at `row * row_blocks`, below `u32::MAX` (which means "no switch").
        if u32::try_from(switches as usize * row_blocks).map_or(true, |n| n == u32::MAX) {
            return Err(TopologyError::TooLarge {
                what: "routing tables",
                bytes: switches as u64 * row_blocks as u64 * 4,
            });
        }
        let base = |row: u32| row * row_blocks as u32;
        let cells = switches as usize * columns;
        let mut set_of: Vec<u16> = Vec::new();
        set_of
            .try_reserve_exact(cells)
            .map_err(|_| TopologyError::TooLarge {
                what: "routing tables",
                bytes: cells as u64 * 2,
            })?;
        set_of.resize(cells, 0);
        let mut sets: Vec<(u32, u32)> = vec![(0, 0)];
        let mut ports: Vec<u16> = Vec::new();
        let mut set_ids: HashMap<Vec<u16>, u16> = HashMap::new();
        set_ids.insert(Vec::new(), 0);
        let mut intern = |set: &[u16]| -> Result<u16, TopologyError> {
            if let Some(&id) = set_ids.get(set) {
                return Ok(id);
            }
            let id = u16::try_from(sets.len()).map_err(|_| {
                TopologyError::BadParameter(
                    "more than 65,535 distinct next-hop sets: the routing tables cannot index \
                     them"
                        .into(),
                )
            })?;
            sets.push((ports.len() as u32, set.len() as u32));
            ports.extend_from_slice(set);
            set_ids.insert(set.to_vec(), id);
            Ok(id)
        };
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        let mut scratch: Vec<u16> = Vec::new();
        let mut dests = vec![Destination::default(); n];
        // The first host, in id order, each attachment's search does not reach.
        let mut unreached: Vec<[Option<NodeId>; 2]> = vec![[None; 2]; attachments.len()];
        let mut searched = vec![false; attachments.len()];
        let mut max_switch_hops = 0;
        for &dst in &hosts {
            let Some(&(attach, host_link)) = adj[dst.index()].first() else {
                continue;
            };
            if !link_up[host_link] {
                if require_connected {
                    if let Some(&from) = hosts.iter().find(|&&h| h != dst) {
                        return Err(TopologyError::Disconnected {
                            from: from.0,
                            to: dst.0,
                        });
                    }
                }
                dests[dst.index()] = Destination::new(u32::MAX, unreachable_column, (0, 0));
                continue;
            }
            let column = column_of[attach.index()] as usize;
            if !searched[column] {
                searched[column] = true;
                dist.iter_mut().for_each(|d| *d = u32::MAX);
                dist[attach.index()] = 0;
                queue.clear();
                queue.push_back(attach);
                while let Some(u) = queue.pop_front() {
                    // Hosts do not forward.
                    if topo.nodes[u.index()] == NodeKind::Host {
                        continue;
                    }
                    for &(v, link) in &adj[u.index()] {
                        if link_up[link] && dist[v.index()] == u32::MAX {
                            dist[v.index()] = dist[u.index()] + 1;
                            queue.push_back(v);
                        }
                    }
                }
                for a in &attachments {
                    if topo.nodes[a.index()] == NodeKind::Switch && dist[a.index()] != u32::MAX {
                        max_switch_hops = max_switch_hops.max(dist[a.index()]);
                    }
                }
                let mut missing = hosts.iter().filter(|h| dist[h.index()] == u32::MAX);
                unreached[column] = [missing.next().copied(), missing.next().copied()];
                for (src, &kind) in topo.nodes.iter().enumerate() {
                    if kind != NodeKind::Switch || dist[src] == u32::MAX {
                        continue;
                    }
                    scratch.clear();
                    for (port, &(v, link)) in adj[src].iter().enumerate() {
                        let is_host = topo.nodes[v.index()] == NodeKind::Host;
                        if link_up[link] && !is_host && dist[v.index()].wrapping_add(1) == dist[src]
                        {
                            scratch.push(port as u16);
                        }
                    }
                    set_of[rows[src] as usize * columns + column] = intern(&scratch)?;
                }
            }
            if require_connected {
                if let Some(from) = unreached[column].into_iter().flatten().find(|&h| h != dst) {
                    return Err(TopologyError::Disconnected {
                        from: from.0,
                        to: dst.0,
                    });
                }
            }
            // The host's own switch sends it out of the port of its link (a host wired to
            // another host has no switch to route it).
            dests[dst.index()] = if topo.nodes[attach.index()] == NodeKind::Switch {
                let port = adj[attach.index()]
                    .iter()
                    .position(|&(_, link)| link == host_link)
                    .expect("a link is in both of its ends' adjacency");
                Destination::new(
                    base(rows[attach.index()]),
                    column as u32,
                    (intern(&[port as u16])?, port as u16),
                )
            } else {
                Destination::new(u32::MAX, column as u32, (0, 0))
            };
        }
        // The entry of a switch's own attachment is never read: its hosts' `own` is.
        let own: Vec<Option<u32>> = attachments
            .iter()
            .map(|a| (topo.nodes[a.index()] == NodeKind::Switch).then(|| rows[a.index()]))
            .collect();
        let (blocks, mixed) = by_blocks(&set_of, switches as usize, columns, &own)?;
        let row_base: Vec<u32> = rows
            .iter()
            .map(|&row| if row == u32::MAX { u32::MAX } else { base(row) })
            .collect();
        Ok(Routes {
            row_base: row_base.into(),
            dests: dests.into(),
            blocks: blocks.into(),
            mixed: mixed.into(),
            sets: sets.into(),
            ports: ports.into(),
            max_switch_hops,
        })
    }

    /// The most switch-to-switch hops a frame takes between the switches its source and
    /// its destination hang off (0 on a single switch).
    pub fn max_switch_hops(&self) -> u32 {
        self.max_switch_hops
    }

    /// Local ports of `switch` on shortest paths to host `dst` (empty if unreachable).
    pub fn next_hops(&self, switch: NodeId, dst: NodeId) -> &[u16] {
        let base = self.row_base[switch.index()];
        let d = self.dests[dst.index()];
        let id = if d.attach_base == base {
            d.own
        } else {
            self.set_towards(base, d)
        };
        let (start, len) = self.sets[usize::from(id)];
        &self.ports[start as usize..(start + len) as usize]
    }

    /// The local port `switch` forwards a frame with flow hash `hash` to host `dst` out of:
    /// the member [`ecmp_hash`] picks from [`Routes::next_hops`] (`None` if unreachable).
    /// The same answer, read with fewer steps: a frame's last hop reads its port directly,
    /// and a set of one needs no hash.
    #[inline(always)] // once per frame and hop: keep it in the forwarding path
    pub fn next_hop(&self, switch: NodeId, dst: NodeId, hash: u64) -> Option<u16> {
        let base = self.row_base[switch.index()];
        let d = self.dests[dst.index()];
        if d.attach_base == base {
            return Some(d.own_port);
        }
        let (start, len) = self.sets[usize::from(self.set_towards(base, d))];
        match len {
            0 => None,
            // `ecmp_hash` would give 0 too, but skipping its call here is 0.4 % of the
            // benchmark's instructions (most down-links are sets of one).
            1 => Some(self.ports[start as usize]),
            n => Some(self.ports[start as usize + ecmp_hash(hash, switch.0, n as usize)]),
        }
    }

    /// The set id of the switch whose row starts at `base` towards `d`'s attachment.
    #[inline(always)]
    fn set_towards(&self, base: u32, d: Destination) -> u16 {
        let block = self.blocks[(base + d.block) as usize];
        if block & MIXED == 0 {
            block as u16
        } else {
            self.mixed[(block & !MIXED) as usize * BLOCK + usize::from(d.lane)]
        }
    }

    /// Bytes the routes hold.
    pub fn heap_bytes(&self) -> u64 {
        (self.row_base.len() * 4
            + self.dests.len() * size_of::<Destination>()
            + self.blocks.len() * 4
            + self.mixed.len() * 2
            + self.sets.len() * 8
            + self.ports.len() * 2) as u64
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
        let r = Routes::compute(&two_paths(), RoutingKind::ShortestPath).expect("connected");
        // Switch 4's ports: 0 -> host 0, 1 -> host 1, 2 -> switch 6, 3 -> switch 7.
        assert_eq!(r.next_hops(NodeId(4), NodeId(2)), &[2, 3]);
        assert_eq!(r.next_hops(NodeId(4), NodeId(1)), &[1]);
        assert_eq!(r.next_hops(NodeId(6), NodeId(3)), &[1]);
    }

    #[test]
    fn a_spanning_tree_keeps_one_path() {
        let t = two_paths();
        let keep = spanning_tree(&t, &vec![true; t.links.len()]);
        // Host links, then from switch 4 its links to 6 and 7, then 6's link to 5.
        assert_eq!(keep, [true, true, true, true, true, true, true, false]);
        let r = Routes::compute(&t, RoutingKind::SpanningTree).expect("connected");
        assert_eq!(r.next_hops(NodeId(4), NodeId(2)), &[2], "only via switch 6");
        assert_eq!(
            r.next_hops(NodeId(7), NodeId(2)),
            &[0],
            "7 reaches 5 through 4"
        );
    }

    #[test]
    fn a_failed_link_leaves_the_other_path() {
        let t = two_paths();
        let mut up = vec![true; t.links.len()];
        up[4] = false; // switch 4 <-> switch 6
        let r = Routes::compute_with(&t, RoutingKind::ShortestPath, &up, true)
            .expect("still connected");
        assert_eq!(r.next_hops(NodeId(4), NodeId(2)), &[3]);
        up[5] = false; // and switch 4 <-> switch 7: hosts 0,1 are cut off
        assert!(Routes::compute_with(&t, RoutingKind::ShortestPath, &up, true).is_err());
        let r = Routes::compute_with(&t, RoutingKind::ShortestPath, &up, false)
            .expect("partitions allowed");
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
            Routes::compute(&t, RoutingKind::ShortestPath),
            Err(TopologyError::Disconnected { .. }) | Ok(_)
        ));
        let t2 = Topology {
            nodes: vec![Host, Host, Host, Switch, Switch],
            links: vec![link(0, 3), link(1, 3), link(2, 4)],
        };
        assert!(matches!(
            Routes::compute(&t2, RoutingKind::ShortestPath),
            Err(TopologyError::Disconnected { .. })
        ));
    }

    /// The definition, one search per destination host: a switch's next hops towards
    /// `dst` are its live ports towards a switch one hop nearer, or `dst` itself.
    fn reference_next_hops(topo: &Topology, up: &[bool], sw: NodeId, dst: NodeId) -> Vec<u16> {
        let adj = adjacency(topo);
        let mut dist = vec![u32::MAX; topo.nodes.len()];
        dist[dst.index()] = 0;
        let mut queue = VecDeque::from([dst]);
        while let Some(u) = queue.pop_front() {
            if u != dst && topo.nodes[u.index()] == NodeKind::Host {
                continue;
            }
            for &(v, link) in &adj[u.index()] {
                if up[link] && dist[v.index()] == u32::MAX {
                    dist[v.index()] = dist[u.index()] + 1;
                    queue.push_back(v);
                }
            }
        }
        let mut hops = Vec::new();
        for (port, &(v, link)) in adj[sw.index()].iter().enumerate() {
            let forwards = v == dst || topo.nodes[v.index()] == NodeKind::Switch;
            if up[link]
                && forwards
                && dist[sw.index()] != u32::MAX
                && dist[v.index()].wrapping_add(1) == dist[sw.index()]
            {
                hops.push(port as u16);
            }
        }
        hops
    }

    fn assert_matches_reference(topo: &Topology, up: &[bool]) {
        let r = Routes::compute_with(topo, RoutingKind::ShortestPath, up, false).expect("routes");
        for (s, kind) in topo.nodes.iter().enumerate() {
            if *kind != NodeKind::Switch {
                continue;
            }
            for dst in topo.hosts() {
                let sw = NodeId(s as u32);
                let reference = reference_next_hops(topo, up, sw, dst);
                assert_eq!(
                    r.next_hops(sw, dst),
                    reference.as_slice(),
                    "switch {s} towards host {}",
                    dst.0
                );
                // The one-step lookup picks the member the hash picks from the whole set.
                for hash in (0..64u64).map(|i| mix64(i ^ (u64::from(dst.0) << 32))) {
                    let picked = (!reference.is_empty())
                        .then(|| reference[ecmp_hash(hash, s as u32, reference.len())]);
                    assert_eq!(
                        r.next_hop(sw, dst, hash),
                        picked,
                        "switch {s}, host {}",
                        dst.0
                    );
                }
            }
        }
    }

    /// A k = 4 fat tree and a canonical dragonfly of 5 groups of 4 switches.
    fn fat_tree_and_dragonfly() -> (Topology, Topology) {
        let rate = Rate::from_gbps(100);
        let delay = Time::from_us(1);
        let fat_tree = crate::topology::builders::fat_tree(4, rate, delay).expect("fat tree");
        let dragonfly =
            crate::topology::builders::dragonfly(&crate::topology::builders::Dragonfly {
                groups: 5,
                routers: 4,
                hosts_per_router: 2,
                global_links: 1,
                rate,
                global_rate: rate,
                delay,
                global_delay: delay,
            })
            .expect("dragonfly");
        (fat_tree, dragonfly)
    }

    #[test]
    fn tables_by_attachment_equal_one_search_per_host() {
        let (fat_tree, dragonfly) = fat_tree_and_dragonfly();
        for topo in [two_paths(), fat_tree, dragonfly] {
            let mut up = vec![true; topo.links.len()];
            assert_matches_reference(&topo, &up);
            // A host link and a fabric link down, then a second fabric link.
            up[1] = false;
            up[topo.links.len() - 1] = false;
            assert_matches_reference(&topo, &up);
            up[topo.links.len() - 3] = false;
            assert_matches_reference(&topo, &up);
        }
    }

    /// The longest route between the switches hosts hang off: up and down a fat tree's
    /// three tiers (4 links), local-global-local in a dragonfly (3).
    #[test]
    fn the_longest_route_counts_its_switch_to_switch_hops() {
        let (fat_tree, dragonfly) = fat_tree_and_dragonfly();
        let star = crate::topology::builders::star(4, Rate::from_gbps(100), Time::from_us(1))
            .expect("star");
        for (topo, hops) in [(fat_tree, 4), (dragonfly, 3), (star, 0)] {
            let r = Routes::compute(&topo, RoutingKind::ShortestPath).expect("connected");
            assert_eq!(r.max_switch_hops(), hops);
        }
    }

    #[test]
    fn a_fat_tree_table_has_a_column_per_edge_switch() {
        let t = crate::topology::builders::fat_tree(8, Rate::from_gbps(100), Time::from_us(1))
            .expect("fat tree");
        let r = Routes::compute(&t, RoutingKind::ShortestPath).expect("connected");
        // 80 switches; 32 edge switches and the unreachable column, by blocks of 16
        // columns: three per row. An edge switch sends everything up (its own column is
        // never read): one set per block. An aggregation switch's own pod and a core's
        // blocks, which span four pods, differ within; equal ones are pooled once.
        assert_eq!(r.blocks.len(), 80 * 3);
        let pooled = r.mixed.len() / BLOCK;
        assert!(pooled > 0 && pooled <= 16, "{pooled} mixed blocks");
        assert!(r.heap_bytes() < Routes::estimated_bytes(&t));
    }

    /// Blocks hold what the flat table held, wherever a switch reads it.
    #[test]
    fn blocks_keep_every_entry_that_is_read() {
        let (rows, columns) = (3, 40);
        let set_of: Vec<u16> = (0..rows * columns)
            .map(|i| match (i / columns, i % columns) {
                (0, _) => 7, // one set everywhere: uniform blocks
                (1, 5) => 0, // its own column, never read
                (1, _) => 9,
                (_, c) => (c % BLOCK % 3) as u16, // differs within each block
            })
            .collect();
        let mut own = vec![None; columns];
        own[5] = Some(1);
        let (blocks, mixed) = by_blocks(&set_of, rows, columns, &own).expect("small");
        assert_eq!(blocks.len(), rows * 3);
        assert!(blocks[..6].iter().all(|&b| b & MIXED == 0), "{blocks:?}");
        assert_eq!(blocks[3], 9, "the unread entry does not break its block");
        for row in 0..rows {
            for c in 0..columns {
                if own[c] == Some(row as u32) {
                    continue;
                }
                let b = blocks[row * 3 + c / BLOCK];
                let id = if b & MIXED == 0 {
                    b as u16
                } else {
                    mixed[(b & !MIXED) as usize * BLOCK + c % BLOCK]
                };
                assert_eq!(id, set_of[row * columns + c], "row {row} column {c}");
            }
        }
        // Row 2's first two blocks are equal and pooled once; its third, partial one differs.
        assert_eq!(blocks[6], blocks[7]);
        assert_eq!(mixed.len(), 2 * BLOCK);
    }

    #[test]
    fn distinct_sets_are_stored_once() {
        // A star: the switch reaches each host by its own port.
        let t = crate::topology::builders::star(64, Rate::from_gbps(100), Time::from_us(1))
            .expect("valid star");
        let r = Routes::compute(&t, RoutingKind::ShortestPath).expect("connected");
        let sw = NodeId(64);
        for h in 0..64u32 {
            assert_eq!(r.next_hops(sw, NodeId(h)), &[h as u16]);
        }
        assert_eq!(r.sets.len(), 65, "the empty set and one per host");
        assert!(r.heap_bytes() <= Routes::estimated_bytes(&t) + 65 * 10);
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
