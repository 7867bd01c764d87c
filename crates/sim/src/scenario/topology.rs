//! `[topology]` and its `[[topology.link]]` list: the network a scenario runs on.
//!
//! Invariants:
//! - `kind` selects the keys a table accepts; any other key is an error naming the kind.
//! - A returned [`Topology`] has passed the builders' checks (node counts within
//!   `builders::MAX_NODES`); an explicit link list has also passed [`Topology::validate`],
//!   with a host's extra link reported at that link.
//! - Link delays default to [`DEFAULT_DELAY`]; error rates to 0.
//! - A `[[topology.link]]` entry's fabric settings (`flow_control`, `sl_to_vl`) come back
//!   beside the topology, keyed by the link's index; other kinds have none.

use super::fields::{opt_time, read_referenced, Cx, Fld, Res, Tbl};
use super::DEFAULT_DELAY;
use crate::config::LinkFabric;
use crate::topology::{builders, LinkSpec, NodeId, NodeKind, Topology, TopologyError};
use std::collections::BTreeMap;

/// A topology and the fabric settings of its single links.
pub(super) type TopologyAndLinks = (Topology, BTreeMap<usize, LinkFabric>);

/// Largest `frame_overhead`: Ethernet's is 20 B; more than this is a typo.
const MAX_FRAME_OVERHEAD: u64 = 1000;

/// What `[topology]` describes: the network, its single links' fabric settings, and the
/// wire's per-frame overhead if given.
pub(super) struct Network {
    pub(super) topology: Topology,
    pub(super) links: BTreeMap<usize, LinkFabric>,
    pub(super) frame_overhead: Option<u64>,
}

/// Every topology kind with the keys its `[topology]` table accepts: the one list the
/// parser takes kinds from (the reference's test checks each is documented).
pub(super) const TOPOLOGY_KINDS: [(&str, &[&str]); 8] = [
    (
        "dumbbell",
        &[
            "kind",
            "left_hosts",
            "right_hosts",
            "host_rate",
            "bottleneck_rate",
            "delay",
            "frame_overhead",
        ],
    ),
    (
        "star",
        &["kind", "hosts", "rate", "delay", "frame_overhead"],
    ),
    (
        "chain",
        &[
            "kind",
            "switches",
            "hosts_per_switch",
            "rate",
            "delay",
            "frame_overhead",
        ],
    ),
    (
        "leaf-spine",
        &[
            "kind",
            "leaves",
            "spines",
            "hosts_per_leaf",
            "host_rate",
            "uplink_rate",
            "oversubscription",
            "delay",
            "frame_overhead",
        ],
    ),
    (
        "fat-tree",
        &["kind", "k", "rate", "delay", "frame_overhead"],
    ),
    (
        "dragonfly",
        &[
            "kind",
            "groups",
            "routers",
            "hosts_per_router",
            "global_links",
            "rate",
            "global_rate",
            "delay",
            "global_delay",
            "frame_overhead",
        ],
    ),
    (
        "links",
        &["kind", "hosts", "switches", "link", "frame_overhead"],
    ),
    ("hpcc-file", &["kind", "file", "frame_overhead"]),
];

fn count(cx: &Cx, t: &mut Tbl, key: &str, lo: u64) -> Res<usize> {
    // MAX_NODES fits in usize and u64; the builders re-check totals.
    Ok(t.req(cx, key)?.uint(cx, lo, builders::MAX_NODES as u64)? as usize)
}

pub(super) fn parse_topology(cx: &Cx, f: &Fld) -> Res<Network> {
    let mut t = f.table(cx)?;
    let kind_f = t.req(cx, "kind")?;
    let kind = kind_f.str(cx)?;
    let Some(&(_, known)) = TOPOLOGY_KINDS.iter().find(|(k, _)| *k == kind) else {
        let kinds: Vec<&str> = TOPOLOGY_KINDS.iter().map(|(k, _)| *k).collect();
        return Err(kind_f.err(
            cx,
            format!(
                "unknown topology kind `{kind}` (expected one of: {})",
                kinds.join(", ")
            ),
        ));
    };
    t.check_keys_with(cx, known, &format!("kind = \"{kind}\""))?;
    let frame_overhead = match t.get(cx, "frame_overhead") {
        Some(o) => {
            let bytes = o.bytes(cx)?;
            if bytes > MAX_FRAME_OVERHEAD {
                return Err(o.err(
                    cx,
                    format!(
                        "{bytes} B of preamble and gap per frame; at most \
                         {MAX_FRAME_OVERHEAD} B (Ethernet's is 20 B)"
                    ),
                ));
            }
            Some(bytes)
        }
        None => None,
    };
    if kind == "links" {
        let (topology, links) = parse_links(cx, &mut t)?;
        return Ok(Network {
            topology,
            links,
            frame_overhead,
        });
    }
    let bad = |e: TopologyError| kind_f.err(cx, e.to_string());
    let topology = match kind {
        "dumbbell" => {
            let left = count(cx, &mut t, "left_hosts", 1)?;
            let right = count(cx, &mut t, "right_hosts", 1)?;
            let host_rate = t.req(cx, "host_rate")?.positive_rate(cx)?;
            let bottleneck = t.req(cx, "bottleneck_rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            builders::dumbbell(left, right, host_rate, bottleneck, delay).map_err(bad)
        }
        "star" => {
            let hosts = count(cx, &mut t, "hosts", 2)?;
            let rate = t.req(cx, "rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            builders::star(hosts, rate, delay).map_err(bad)
        }
        "chain" => {
            let switches = count(cx, &mut t, "switches", 1)?;
            let per = count(cx, &mut t, "hosts_per_switch", 1)?;
            let rate = t.req(cx, "rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            builders::chain(switches, per, rate, delay).map_err(bad)
        }
        "leaf-spine" => {
            let leaves = count(cx, &mut t, "leaves", 1)?;
            let spines = count(cx, &mut t, "spines", 1)?;
            let per = count(cx, &mut t, "hosts_per_leaf", 1)?;
            let host_rate = t.req(cx, "host_rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            let mut p = builders::LeafSpine::new(leaves, spines, per, host_rate, delay);
            let up = t.get(cx, "uplink_rate");
            let over = t.get(cx, "oversubscription");
            match (up, over) {
                (Some(_), Some(o)) => {
                    return Err(o.err(cx, "give `uplink_rate` or `oversubscription`, not both"))
                }
                (Some(u), None) => p.uplink_rate = u.positive_rate(cx)?,
                (None, Some(o)) => {
                    let ratio = o.float(cx)?;
                    p = p
                        .with_oversubscription(ratio)
                        .map_err(|e| o.err(cx, e.to_string()))?;
                }
                (None, None) => {}
            }
            builders::leaf_spine(&p).map_err(bad)
        }
        "fat-tree" => {
            let kf = t.req(cx, "k")?;
            let k = kf.uint(cx, 2, 512)? as usize;
            if k & 1 == 1 {
                return Err(kf.err(cx, format!("the fat-tree arity must be even, found {k}")));
            }
            let rate = t.req(cx, "rate")?.positive_rate(cx)?;
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            builders::fat_tree(k, rate, delay).map_err(bad)
        }
        "dragonfly" => {
            let groups = count(cx, &mut t, "groups", 2)?;
            let routers = count(cx, &mut t, "routers", 1)?;
            let hosts_per_router = count(cx, &mut t, "hosts_per_router", 1)?;
            let global_links = count(cx, &mut t, "global_links", 1)?;
            let rate = t.req(cx, "rate")?.positive_rate(cx)?;
            let global_rate = match t.get(cx, "global_rate") {
                Some(r) => r.positive_rate(cx)?,
                None => rate,
            };
            let delay = opt_time(cx, &mut t, "delay", DEFAULT_DELAY)?;
            let global_delay = opt_time(cx, &mut t, "global_delay", delay)?;
            builders::dragonfly(&builders::Dragonfly {
                groups,
                routers,
                hosts_per_router,
                global_links,
                rate,
                global_rate,
                delay,
                global_delay,
            })
            .map_err(bad)
        }
        _ => {
            // "hpcc-file": the only kind of TOPOLOGY_KINDS left ("links" returned above).
            let ff = t.req(cx, "file")?;
            let (path, shown, text) = read_referenced(cx, &ff, crate::input::MAX_TEXT_BYTES)?;
            crate::topology::hpcc::parse(&text, &shown).map_err(|e| match e {
                TopologyError::File { line, reason, .. } => {
                    cx.file_err(&ff.name, ff.span(), path.clone(), line, reason)
                }
                other => cx.file_err(&ff.name, ff.span(), path.clone(), 0, other.to_string()),
            })
        }
    }?;
    Ok(Network {
        topology,
        links: BTreeMap::new(),
        frame_overhead,
    })
}

fn parse_links(cx: &Cx, t: &mut Tbl) -> Res<TopologyAndLinks> {
    let hosts_f = t.req(cx, "hosts")?;
    let hosts = hosts_f.uint(cx, 0, builders::MAX_NODES as u64)? as usize;
    let switches = t
        .req(cx, "switches")?
        .uint(cx, 0, builders::MAX_NODES as u64)? as usize;
    let total = hosts + switches;
    if total > builders::MAX_NODES {
        return Err(hosts_f.err(
            cx,
            format!("too many nodes (at most {})", builders::MAX_NODES),
        ));
    }
    let mut nodes = vec![NodeKind::Host; hosts];
    nodes.resize(total, NodeKind::Switch);
    let lf = t.req(cx, "link")?;
    let mut links = Vec::new();
    let mut link_fields = Vec::new();
    let mut fabric = BTreeMap::new();
    for (i, node) in lf.array(cx)?.iter().enumerate() {
        let ef = lf.elem(i, node);
        let mut lt = ef.table(cx)?;
        lt.check_keys(
            cx,
            &[
                "a",
                "b",
                "rate",
                "delay",
                "error_rate",
                "flow_control",
                "sl_to_vl",
            ],
        )?;
        let mut end = |key: &str| -> Res<NodeId> {
            let f = lt.req(cx, key)?;
            let n = f.uint(cx, 0, u64::from(u32::MAX))?;
            if n as usize >= total {
                return Err(f.err(
                    cx,
                    format!(
                        "unknown node {n}: there are {total} nodes (hosts 0..{hosts}, switches {hosts}..{total})"
                    ),
                ));
            }
            Ok(NodeId(n as u32))
        };
        let a = end("a")?;
        let b = end("b")?;
        if a == b {
            return Err(ef.err(cx, format!("link joins node {} to itself", a.0)));
        }
        let rate = lt.req(cx, "rate")?.positive_rate(cx)?;
        let delay = opt_time(cx, &mut lt, "delay", DEFAULT_DELAY)?;
        let error_rate = match lt.get(cx, "error_rate") {
            Some(f) => {
                let e = f.float(cx)?;
                if !(0.0..=1.0).contains(&e) {
                    return Err(f.err(cx, format!("must be in [0, 1], found {e}")));
                }
                e
            }
            None => 0.0,
        };
        let mut own = LinkFabric::default();
        if let Some(f) = lt.get(cx, "flow_control") {
            own.kind = Some(super::fabric::link_flow_control(cx, &f)?);
        }
        if let Some(f) = lt.get(cx, "sl_to_vl") {
            own.sl_to_vl = Some(super::fabric::sl_to_vl(cx, &f)?);
        }
        if own != LinkFabric::default() {
            fabric.insert(links.len(), own);
        }
        links.push(LinkSpec {
            a,
            b,
            rate,
            delay,
            error_rate,
        });
        link_fields.push(ef);
    }
    let topo = Topology { nodes, links };
    topo.validate().map_err(|e| match &e {
        TopologyError::HostLinks { node, links: 0 } => hosts_f.err(
            cx,
            format!("host {node} has no link; every host needs exactly one"),
        ),
        TopologyError::HostLinks { node, .. } => {
            // Report at the host's second link.
            let second = topo
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.a.0 == *node || l.b.0 == *node)
                .nth(1)
                .and_then(|(i, _)| link_fields.get(i));
            match second {
                Some(f) => f.err(cx, e.to_string()),
                None => lf.err(cx, e.to_string()),
            }
        }
        _ => lf.err(cx, e.to_string()),
    })?;
    Ok((topo, fabric))
}
