//! Builders for the standard topology shapes: dumbbell, star, chain (parking lot),
//! leaf-spine (2-tier Clos), k-ary fat tree (3-tier Clos) and dragonfly (all-to-all groups
//! joined all-to-all, the HPC fabric of Slingshot-class machines).
//!
//! Invariants shared by every builder (callers and tests may rely on them):
//! - **Node numbering**: hosts come first, with ids `0..H`; switches follow, with ids
//!   `H..H+S`, in the per-builder order documented on each function. Hosts attached to the
//!   same switch have consecutive ids.
//! - **Link order** (which numbers switch ports, see [`Topology::links`]): link `i` for
//!   `i < H` is host `i`'s NIC link, written `(host, switch)`; switch-to-switch links follow
//!   in the per-builder order, each written `(lower tier or left switch, other switch)`.
//!   So on every switch the host-facing ports come first, in host-id order, then the
//!   switch-facing ports.
//! - Every link has `error_rate` 0, and the result passes [`Topology::validate`].
//! - Parameters that make no useful network (zero counts, fewer than two hosts, a zero
//!   rate, an odd fat-tree arity) give [`TopologyError::BadParameter`]; a zero delay is
//!   allowed.
//! - The builders are pure: the same parameters always give the same topology.

use super::{LinkSpec, NodeId, NodeKind, Topology, TopologyError};
use headroom_mech::units::{Rate, Time};

pub use super::MAX_NODES;

fn bad(msg: impl Into<String>) -> TopologyError {
    TopologyError::BadParameter(msg.into())
}

fn check_rate(what: &str, rate: Rate) -> Result<(), TopologyError> {
    if rate.bps() == 0 {
        return Err(bad(format!("{what} must be greater than zero")));
    }
    Ok(())
}

fn check_count(what: &str, n: usize) -> Result<(), TopologyError> {
    if n == 0 {
        return Err(bad(format!("{what} must be at least 1")));
    }
    Ok(())
}

/// Incremental topology construction with overflow-checked node counts.
struct Builder {
    topo: Topology,
}

impl Builder {
    fn new(hosts: usize, switches: usize) -> Result<Self, TopologyError> {
        let total = hosts
            .checked_add(switches)
            .filter(|&t| t <= MAX_NODES)
            .ok_or_else(|| bad(format!("too many nodes (the limit is {MAX_NODES})")))?;
        let mut nodes = Vec::with_capacity(total);
        nodes.resize(hosts, NodeKind::Host);
        nodes.resize(total, NodeKind::Switch);
        Ok(Builder {
            topo: Topology {
                nodes,
                links: Vec::new(),
            },
        })
    }

    fn link(&mut self, a: usize, b: usize, rate: Rate, delay: Time) {
        // Node indices are below MAX_NODES < u32::MAX (checked in `new`), so `as u32` is exact.
        self.topo.links.push(LinkSpec {
            a: NodeId(a as u32),
            b: NodeId(b as u32),
            rate,
            delay,
            error_rate: 0.0,
        });
    }

    fn finish(self) -> Result<Topology, TopologyError> {
        self.topo.validate()?;
        Ok(self.topo)
    }
}

/// Two switches joined by one bottleneck link, with `left_hosts` hosts on the left switch
/// and `right_hosts` on the right one.
///
/// Nodes: left hosts `0..L`, right hosts `L..L+R`, left switch `L+R`, right switch `L+R+1`.
/// Links: the `L+R` host links in host order (hosts at `host_rate`), then the bottleneck
/// `(left switch, right switch)` at `bottleneck_rate` (so it is the last port of each
/// switch). All links have one-way delay `delay`.
///
/// Errors: a side with no hosts, or a zero rate.
pub fn dumbbell(
    left_hosts: usize,
    right_hosts: usize,
    host_rate: Rate,
    bottleneck_rate: Rate,
    delay: Time,
) -> Result<Topology, TopologyError> {
    check_count("dumbbell left_hosts", left_hosts)?;
    check_count("dumbbell right_hosts", right_hosts)?;
    check_rate("dumbbell host_rate", host_rate)?;
    check_rate("dumbbell bottleneck_rate", bottleneck_rate)?;
    let hosts = left_hosts
        .checked_add(right_hosts)
        .ok_or_else(|| bad("dumbbell: too many hosts"))?;
    let mut b = Builder::new(hosts, 2)?;
    let (left, right) = (hosts, hosts + 1);
    for h in 0..hosts {
        b.link(
            h,
            if h < left_hosts { left } else { right },
            host_rate,
            delay,
        );
    }
    b.link(left, right, bottleneck_rate, delay);
    b.finish()
}

/// One switch with `hosts` hosts (the incast shape: `hosts - 1` senders to one receiver).
///
/// Nodes: hosts `0..N`, the switch `N`. Links: host `i` to the switch is link `i` (switch
/// port `i`), all at `rate` with delay `delay`.
///
/// Errors: fewer than two hosts, or a zero rate.
pub fn star(hosts: usize, rate: Rate, delay: Time) -> Result<Topology, TopologyError> {
    if hosts < 2 {
        return Err(bad(format!("star needs at least 2 hosts, got {hosts}")));
    }
    check_rate("star rate", rate)?;
    let mut b = Builder::new(hosts, 1)?;
    for h in 0..hosts {
        b.link(h, hosts, rate, delay);
    }
    b.finish()
}

/// A parking lot: `switches` switches in a line, each with `hosts_per_switch` hosts.
///
/// Nodes: hosts of switch `s` are `s*P..(s+1)*P` (with `P = hosts_per_switch`); switch `s`
/// is node `H + s` with `H = switches * P`. Links: the `H` host links in host order, then
/// the inter-switch links `(switch s, switch s+1)` for `s = 0..switches-1`, left to right.
/// All links at `rate` with delay `delay`.
///
/// Errors: zero switches or hosts per switch, fewer than two hosts in total, a zero rate.
pub fn chain(
    switches: usize,
    hosts_per_switch: usize,
    rate: Rate,
    delay: Time,
) -> Result<Topology, TopologyError> {
    check_count("chain switches", switches)?;
    check_count("chain hosts_per_switch", hosts_per_switch)?;
    check_rate("chain rate", rate)?;
    let hosts = switches
        .checked_mul(hosts_per_switch)
        .ok_or_else(|| bad("chain: too many hosts"))?;
    if hosts < 2 {
        return Err(bad("chain needs at least 2 hosts in total"));
    }
    let mut b = Builder::new(hosts, switches)?;
    for h in 0..hosts {
        b.link(h, hosts + h / hosts_per_switch, rate, delay);
    }
    for s in 0..switches - 1 {
        b.link(hosts + s, hosts + s + 1, rate, delay);
    }
    b.finish()
}

/// Parameters of a 2-tier leaf-spine (folded Clos) network; build it with [`leaf_spine`].
///
/// ```
/// use headroom_mech::units::{Rate, Time};
/// use headroom_sim::topology::builders::{leaf_spine, LeafSpine};
/// // 4 leaves x 16 hosts at 100G, 4 spines, 2:1 oversubscribed: uplinks at 200G.
/// let p = LeafSpine::new(4, 4, 16, Rate::from_gbps(100), Time::from_ns(1000))
///     .with_oversubscription(2.0)?;
/// assert_eq!(p.uplink_rate, Rate::from_gbps(200));
/// let topo = leaf_spine(&p)?;
/// assert_eq!(topo.hosts().len(), 64);
/// # Ok::<(), headroom_sim::topology::TopologyError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LeafSpine {
    /// Number of leaf (top-of-rack) switches.
    pub leaves: usize,
    /// Number of spine switches; every leaf has one link to every spine.
    pub spines: usize,
    /// Hosts attached to each leaf.
    pub hosts_per_leaf: usize,
    /// Rate of the host links.
    pub host_rate: Rate,
    /// Rate of each leaf-to-spine link.
    pub uplink_rate: Rate,
    /// One-way propagation delay of every link.
    pub delay: Time,
}

impl LeafSpine {
    /// Parameters with uplinks at the host rate (set [`LeafSpine::uplink_rate`] or call
    /// [`LeafSpine::with_oversubscription`] to change it).
    pub fn new(
        leaves: usize,
        spines: usize,
        hosts_per_leaf: usize,
        host_rate: Rate,
        delay: Time,
    ) -> Self {
        LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            host_rate,
            uplink_rate: host_rate,
            delay,
        }
    }

    /// Sets the uplink rate so that the leaf oversubscription, i.e.
    /// `hosts_per_leaf * host_rate / (spines * uplink_rate)`, equals `ratio` (1.0 is
    /// non-blocking, 3.0 is 3:1). The rate is rounded to the nearest bit/s.
    ///
    /// Errors: `ratio` not finite and positive, zero spines or hosts per leaf, or a
    /// resulting uplink rate below 1 bit/s.
    pub fn with_oversubscription(mut self, ratio: f64) -> Result<Self, TopologyError> {
        if !(ratio.is_finite() && ratio > 0.0) {
            return Err(bad(format!(
                "oversubscription ratio must be positive, got {ratio}"
            )));
        }
        check_count("leaf_spine spines", self.spines)?;
        check_count("leaf_spine hosts_per_leaf", self.hosts_per_leaf)?;
        let down = self.hosts_per_leaf as f64 * self.host_rate.as_f64();
        let up = (down / (self.spines as f64 * ratio)).round();
        if !(up >= 1.0 && up < u64::MAX as f64) {
            return Err(bad(format!(
                "oversubscription {ratio} gives an uplink rate of {up} bit/s, out of range"
            )));
        }
        self.uplink_rate = Rate(up as u64);
        Ok(self)
    }

    /// The leaf oversubscription ratio: host-facing capacity over spine-facing capacity,
    /// `hosts_per_leaf * host_rate / (spines * uplink_rate)` (infinite with no uplink
    /// capacity).
    pub fn oversubscription(&self) -> f64 {
        let down = self.hosts_per_leaf as f64 * self.host_rate.as_f64();
        let up = self.spines as f64 * self.uplink_rate.as_f64();
        if up == 0.0 {
            f64::INFINITY
        } else {
            down / up
        }
    }
}

/// A 2-tier leaf-spine network: every leaf has `hosts_per_leaf` hosts and one link to
/// every spine.
///
/// Nodes: hosts of leaf `l` are `l*P..(l+1)*P` (`P = hosts_per_leaf`, `H = leaves * P`);
/// leaf `l` is node `H + l`; spine `s` is node `H + leaves + s`.
/// Links: the `H` host links in host order (at `host_rate`), then for each leaf `l` in
/// order, for each spine `s` in order, `(leaf l, spine s)` at `uplink_rate`. So leaf port
/// `P + s` goes to spine `s`, and spine port `l` goes to leaf `l`.
///
/// Errors: zero leaves, spines or hosts per leaf, fewer than two hosts, a zero rate.
pub fn leaf_spine(p: &LeafSpine) -> Result<Topology, TopologyError> {
    check_count("leaf_spine leaves", p.leaves)?;
    check_count("leaf_spine spines", p.spines)?;
    check_count("leaf_spine hosts_per_leaf", p.hosts_per_leaf)?;
    check_rate("leaf_spine host_rate", p.host_rate)?;
    check_rate("leaf_spine uplink_rate", p.uplink_rate)?;
    let hosts = p
        .leaves
        .checked_mul(p.hosts_per_leaf)
        .ok_or_else(|| bad("leaf_spine: too many hosts"))?;
    if hosts < 2 {
        return Err(bad("leaf_spine needs at least 2 hosts in total"));
    }
    let switches = p
        .leaves
        .checked_add(p.spines)
        .ok_or_else(|| bad("leaf_spine: too many switches"))?;
    let mut b = Builder::new(hosts, switches)?;
    for h in 0..hosts {
        b.link(h, hosts + h / p.hosts_per_leaf, p.host_rate, p.delay);
    }
    for l in 0..p.leaves {
        for s in 0..p.spines {
            b.link(hosts + l, hosts + p.leaves + s, p.uplink_rate, p.delay);
        }
    }
    b.finish()
}

/// A k-ary fat tree (Al-Fares et al.): `k` pods, each with `k/2` edge and `k/2`
/// aggregation switches; `k^2/4` core switches; `k^3/4` hosts, `k/2` per edge switch.
/// Every link runs at `rate` with delay `delay`, so the tree is non-blocking.
///
/// Nodes (`h = k/2`, `H = k^3/4`):
/// - host `i` of edge switch `e` in pod `p` is `p*h*h + e*h + i`;
/// - edge switch `e` of pod `p` is `H + p*h + e`;
/// - aggregation switch `a` of pod `p` is `H + k*h + p*h + a`;
/// - core switch `c` (`0..h*h`) is `H + 2*k*h + c`.
///
/// Links: the `H` host links in host order; then for each pod `p`, each edge `e`, each
/// aggregation `a` (in order) `(edge e, agg a)`; then for each pod `p`, each aggregation
/// `a`, each `j` in `0..h`, `(agg a, core a*h + j)`. Totals: `3k^3/4` links.
///
/// Errors: `k` zero or odd.
pub fn fat_tree(k: usize, rate: Rate, delay: Time) -> Result<Topology, TopologyError> {
    // `k & 1` rather than `k % 2`: `is_multiple_of` is newer than the workspace MSRV.
    if k == 0 || k & 1 == 1 {
        return Err(bad(format!(
            "fat_tree arity k must be even and at least 2, got {k}"
        )));
    }
    if k > 512 {
        return Err(bad(format!(
            "fat_tree arity k={k} is too large (at most 512)"
        )));
    }
    check_rate("fat_tree rate", rate)?;
    let h = k / 2;
    let hosts = k * h * h;
    let edge0 = hosts;
    let agg0 = edge0 + k * h;
    let core0 = agg0 + k * h;
    let mut b = Builder::new(hosts, 2 * k * h + h * h)?;
    for host in 0..hosts {
        b.link(host, edge0 + host / h, rate, delay);
    }
    for p in 0..k {
        for e in 0..h {
            for a in 0..h {
                b.link(edge0 + p * h + e, agg0 + p * h + a, rate, delay);
            }
        }
    }
    for p in 0..k {
        for a in 0..h {
            for j in 0..h {
                b.link(agg0 + p * h + a, core0 + a * h + j, rate, delay);
            }
        }
    }
    b.finish()
}

/// A dragonfly: `groups` groups of `routers` switches each, the switches of a group joined
/// all-to-all by local links, every switch with `hosts_per_router` hosts and
/// `global_links` links to other groups, spread so that every pair of groups is joined by
/// the same number of global links (`routers × global_links / (groups − 1)`; the
/// canonical balanced dragonfly has `routers = 2 × hosts_per_router = 2 × global_links` and
/// `groups = routers × global_links + 1`, one global link per pair).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dragonfly {
    /// Groups, at least 2.
    pub groups: usize,
    /// Switches per group.
    pub routers: usize,
    /// Hosts per switch.
    pub hosts_per_router: usize,
    /// Global links per switch.
    pub global_links: usize,
    /// Rate of host and local links.
    pub rate: Rate,
    /// Rate of global links.
    pub global_rate: Rate,
    /// Delay of host and local links.
    pub delay: Time,
    /// Delay of global links (in machines, longer optical cables).
    pub global_delay: Time,
}

/// Builds a [`Dragonfly`].
///
/// Nodes (`a` routers per group, `p` hosts per router, `H = groups × a × p`): host `i` of
/// router `r` of group `g` is `(g × a + r) × p + i`; router `r` of group `g` is
/// `H + g × a + r`.
///
/// Links: the `H` host links in host order; then per group, its local links `(r, s)` for
/// `r < s` in order; then the global links. A group's global ports are numbered
/// `k = r × h + j` (router `r`'s `j`-th, `h` per router); with `m = groups − 1`, port `k`
/// leads to group `g + (k mod m) + 1` (modulo `groups`), to that group's port
/// `(k div m) × m + m − (k mod m) − 1`, which leads back; each such pair is one link,
/// written from the lower group, in the order of the lower group's ports.
///
/// Errors: zero counts, fewer than 2 groups, or `routers × global_links` not a multiple of
/// `groups − 1`.
pub fn dragonfly(d: &Dragonfly) -> Result<Topology, TopologyError> {
    check_count("dragonfly routers", d.routers)?;
    check_count("dragonfly hosts_per_router", d.hosts_per_router)?;
    check_count("dragonfly global_links", d.global_links)?;
    check_rate("dragonfly rate", d.rate)?;
    check_rate("dragonfly global_rate", d.global_rate)?;
    if d.groups < 2 {
        return Err(bad(format!(
            "a dragonfly needs at least 2 groups, got {}",
            d.groups
        )));
    }
    let (a, p, h, g) = (d.routers, d.hosts_per_router, d.global_links, d.groups);
    let ports = a
        .checked_mul(h)
        .filter(|&n| n <= MAX_NODES)
        .ok_or_else(|| bad("too many global links"))?;
    let m = g - 1;
    if ports % m != 0 {
        return Err(bad(format!(
            "a group's {ports} global links (routers × global_links) cannot be spread evenly \
             over the other {m} groups: make it a multiple of {m}"
        )));
    }
    let routers = g
        .checked_mul(a)
        .filter(|&n| n <= MAX_NODES)
        .ok_or_else(|| bad(format!("too many nodes (the limit is {MAX_NODES})")))?;
    let hosts = routers
        .checked_mul(p)
        .filter(|&n| n <= MAX_NODES)
        .ok_or_else(|| bad(format!("too many nodes (the limit is {MAX_NODES})")))?;
    let mut b = Builder::new(hosts, routers)?;
    let router = |group: usize, r: usize| hosts + group * a + r;
    for host in 0..hosts {
        b.link(host, hosts + host / p, d.rate, d.delay);
    }
    for group in 0..g {
        for r in 0..a {
            for s in r + 1..a {
                b.link(router(group, r), router(group, s), d.rate, d.delay);
            }
        }
    }
    for group in 0..g {
        for k in 0..ports {
            let offset = k % m + 1;
            let target = (group + offset) % g;
            if target < group {
                continue; // written from the lower group
            }
            let back = (k / m) * m + (m - offset);
            b.link(
                router(group, k / h),
                router(target, back / h),
                d.global_rate,
                d.global_delay,
            );
        }
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Time = Time::from_ns(1000);
    const G100: Rate = Rate::from_gbps(100);

    fn counts(t: &Topology) -> (usize, usize, usize) {
        let hosts = t.hosts().len();
        (hosts, t.len() - hosts, t.links.len())
    }

    fn degrees(t: &Topology) -> Vec<usize> {
        let mut d = vec![0; t.len()];
        for l in &t.links {
            d[l.a.index()] += 1;
            d[l.b.index()] += 1;
        }
        d
    }

    /// Hosts first, switches after; link i is host i's link for every host.
    fn check_conventions(t: &Topology) {
        let hosts = t.hosts();
        for (i, h) in hosts.iter().enumerate() {
            assert_eq!(h.index(), i, "hosts are not numbered first");
            assert_eq!(t.links[i].a, *h, "link {i} is not host {i}'s link");
            assert_eq!(t.nodes[t.links[i].b.index()], NodeKind::Switch);
        }
        for l in &t.links[hosts.len()..] {
            assert_eq!(t.nodes[l.a.index()], NodeKind::Switch);
            assert_eq!(t.nodes[l.b.index()], NodeKind::Switch);
        }
        assert!(t.links.iter().all(|l| l.error_rate == 0.0 && l.delay == D));
        t.validate().expect("builder output validates");
    }

    #[test]
    fn dumbbell_shape() {
        let t = dumbbell(3, 2, G100, Rate::from_gbps(40), D).expect("valid");
        assert_eq!(counts(&t), (5, 2, 6));
        check_conventions(&t);
        let d = degrees(&t);
        assert_eq!(d[5], 4, "left switch: 3 hosts + bottleneck");
        assert_eq!(d[6], 3, "right switch: 2 hosts + bottleneck");
        let last = t.links.last().expect("has links");
        assert_eq!(
            (last.a, last.b, last.rate),
            (NodeId(5), NodeId(6), Rate::from_gbps(40))
        );
        assert_eq!(t.links[2].b, NodeId(5));
        assert_eq!(t.links[3].b, NodeId(6));
    }

    #[test]
    fn star_shape() {
        let t = star(9, G100, D).expect("valid");
        assert_eq!(counts(&t), (9, 1, 9));
        check_conventions(&t);
        assert_eq!(degrees(&t)[9], 9);
    }

    #[test]
    fn chain_shape() {
        let t = chain(4, 3, G100, D).expect("valid");
        assert_eq!(counts(&t), (12, 4, 12 + 3));
        check_conventions(&t);
        let d = degrees(&t);
        assert_eq!(&d[12..], &[4, 5, 5, 4]);
        assert_eq!(t.links[5].b, NodeId(13), "host 5 is on switch 1");
        assert_eq!((t.links[12].a, t.links[12].b), (NodeId(12), NodeId(13)));
        assert_eq!((t.links[14].a, t.links[14].b), (NodeId(14), NodeId(15)));
        // One switch with two hosts is a valid (degenerate) chain.
        assert_eq!(counts(&chain(1, 2, G100, D).expect("valid")), (2, 1, 2));
    }

    #[test]
    fn leaf_spine_shape() {
        let p = LeafSpine::new(4, 2, 8, G100, D);
        let t = leaf_spine(&p).expect("valid");
        assert_eq!(counts(&t), (32, 6, 32 + 8));
        check_conventions(&t);
        let d = degrees(&t);
        assert!(d[32..36].iter().all(|&x| x == 8 + 2), "leaf degree");
        assert!(d[36..38].iter().all(|&x| x == 4), "spine degree");
        // Leaf 1's uplinks are links 34, 35, to spines 36, 37.
        assert_eq!((t.links[34].a, t.links[34].b), (NodeId(33), NodeId(36)));
        assert_eq!((t.links[35].a, t.links[35].b), (NodeId(33), NodeId(37)));
        // Every leaf is joined to every spine exactly once.
        for l in 32..36u32 {
            for s in 36..38u32 {
                let n = t
                    .links
                    .iter()
                    .filter(|k| k.a == NodeId(l) && k.b == NodeId(s))
                    .count();
                assert_eq!(n, 1);
            }
        }
    }

    #[test]
    fn leaf_spine_oversubscription() {
        let p = LeafSpine::new(2, 4, 16, G100, D);
        assert_eq!(p.oversubscription(), 4.0);
        let p1 = p.clone().with_oversubscription(1.0).expect("ok");
        assert_eq!(p1.uplink_rate, Rate::from_gbps(400));
        let p3 = p.clone().with_oversubscription(3.0).expect("ok");
        assert!((p3.oversubscription() - 3.0).abs() < 1e-9);
        let t = leaf_spine(&p3).expect("valid");
        assert!(t.links[32..].iter().all(|l| l.rate == p3.uplink_rate));
        assert!(p.clone().with_oversubscription(0.0).is_err());
        assert!(p.clone().with_oversubscription(f64::NAN).is_err());
        assert!(
            p.with_oversubscription(1e30).is_err(),
            "uplink below 1 bit/s"
        );
    }

    #[test]
    fn fat_tree_k4() {
        let t = fat_tree(4, G100, D).expect("valid");
        assert_eq!(counts(&t), (16, 20, 48));
        check_conventions(&t);
        let d = degrees(&t);
        // Every switch has k = 4 ports: edge 2 down + 2 up, agg 2 + 2, core 4 down.
        assert!(d[16..].iter().all(|&x| x == 4), "{d:?}");
        // Host 5 is host 1 of edge 0 in pod 1, i.e. edge switch 16 + 2.
        assert_eq!(t.links[5].b, NodeId(18));
        // Edge switches only talk to aggregation switches of their own pod.
        for l in &t.links[16..32] {
            let (e, a) = (l.a.0 - 16, l.b.0 - 24);
            assert_eq!(e / 2, a / 2, "edge {e} and agg {a} in different pods");
        }
        // Agg a of every pod goes to cores 2a, 2a+1.
        for l in &t.links[32..] {
            let (a, c) = ((l.a.0 - 24) % 2, l.b.0 - 32);
            assert_eq!(c / 2, a);
        }
    }

    #[test]
    fn fat_tree_k8() {
        let t = fat_tree(8, G100, D).expect("valid");
        assert_eq!(counts(&t), (128, 32 + 32 + 16, 3 * 512 / 4));
        check_conventions(&t);
        assert!(degrees(&t)[128..].iter().all(|&x| x == 8));
    }

    #[test]
    fn bad_parameters() {
        let bp = |r: Result<Topology, TopologyError>| {
            assert!(matches!(r, Err(TopologyError::BadParameter(_))), "{r:?}");
        };
        bp(dumbbell(0, 2, G100, G100, D));
        bp(dumbbell(2, 0, G100, G100, D));
        bp(dumbbell(1, 1, G100, Rate(0), D));
        bp(star(0, G100, D));
        bp(star(1, G100, D));
        bp(star(4, Rate(0), D));
        bp(chain(0, 2, G100, D));
        bp(chain(2, 0, G100, D));
        bp(chain(1, 1, G100, D));
        bp(leaf_spine(&LeafSpine::new(0, 2, 2, G100, D)));
        bp(leaf_spine(&LeafSpine::new(2, 0, 2, G100, D)));
        bp(leaf_spine(&LeafSpine::new(2, 2, 0, G100, D)));
        bp(leaf_spine(&LeafSpine {
            uplink_rate: Rate(0),
            ..LeafSpine::new(2, 2, 2, G100, D)
        }));
        bp(fat_tree(0, G100, D));
        bp(fat_tree(3, G100, D));
        bp(fat_tree(1024, G100, D));
        bp(fat_tree(4, Rate(0), D));
        bp(star(usize::MAX, G100, D));
    }

    #[test]
    fn builders_are_deterministic() {
        assert_eq!(fat_tree(6, G100, D), fat_tree(6, G100, D));
        let p = LeafSpine::new(3, 3, 3, G100, D);
        assert_eq!(leaf_spine(&p), leaf_spine(&p));
    }

    #[test]
    fn dragonfly_joins_every_pair_of_groups_evenly() {
        let d = Dragonfly {
            groups: 9,
            routers: 4,
            hosts_per_router: 2,
            global_links: 2,
            rate: G100,
            global_rate: Rate::from_gbps(200),
            delay: D,
            global_delay: Time::from_ns(5000),
        };
        check_conventions(
            &dragonfly(&Dragonfly {
                global_delay: D,
                ..d
            })
            .expect("valid"),
        );
        let t = dragonfly(&d).expect("balanced dragonfly");
        // 72 hosts, 36 routers; links: 72 host, 9 × 6 local, 9 × 8 / 2 global.
        assert_eq!(counts(&t), (72, 36, 72 + 54 + 36));
        let deg = degrees(&t);
        assert!(deg[72..].iter().all(|&n| n == 2 + 3 + 2), "{deg:?}");
        let group = |n: NodeId| (n.index() - 72) / 4;
        let mut pairs = std::collections::BTreeMap::new();
        for l in t.links.iter().filter(|l| l.delay == d.global_delay) {
            assert_eq!(l.rate, d.global_rate);
            let (x, y) = (group(l.a), group(l.b));
            assert!(
                x < y,
                "global link within a group or written from the higher one"
            );
            *pairs.entry((x, y)).or_insert(0) += 1;
        }
        assert_eq!(pairs.len(), 36, "every pair of the 9 groups");
        assert!(pairs.values().all(|&n| n == 1));
        // Two groups: each router's global links go to the same router of the other group.
        let two = dragonfly(&Dragonfly { groups: 2, ..d }).expect("two groups");
        assert_eq!(counts(&two).2, 16 + 12 + 8);
        assert_eq!(
            dragonfly(&Dragonfly { groups: 4, ..d }).map(|_| ()),
            Err(bad(
                "a group's 8 global links (routers × global_links) cannot be spread evenly \
                 over the other 3 groups: make it a multiple of 3"
            ))
        );
        assert!(dragonfly(&Dragonfly { groups: 1, ..d }).is_err());
    }
}
