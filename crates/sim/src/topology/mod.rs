//! Network topologies: which nodes exist, and which full-duplex links join them.
//!
//! A [`Topology`] is plain data. Node ids are dense indices `0..nodes.len()`; a link joins
//! two distinct nodes; every host has exactly one link (its NIC), which [`Topology::validate`]
//! checks. Builders for the standard shapes live in [`builders`], the ns-3 HPCC simulator's
//! topology file format in [`hpcc`].

pub mod builders;
pub mod hpcc;

use headroom_mech::units::{Rate, Time};

/// Most nodes a topology may have: every node has at least one port, and the event order
/// names at most `MAX_CREATORS - 1` ports ([`crate::engine::MAX_CREATORS`]).
pub const MAX_NODES: usize = crate::engine::MAX_CREATORS as usize - 1;

/// Most links a topology may have (two ports each).
pub const MAX_LINKS: usize = MAX_NODES / 2;

/// Most ports a switch may have (local port numbers are 16-bit).
pub const MAX_SWITCH_PORTS: usize = u16::MAX as usize;

/// Index of a node (host or switch) in [`Topology::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum NodeKind {
    /// An end host with one RDMA NIC.
    Host,
    /// A shared-buffer switch.
    Switch,
}

/// One full-duplex link; both directions have the same rate and delay.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LinkSpec {
    /// One end.
    pub a: NodeId,
    /// The other end.
    pub b: NodeId,
    /// Rate of each direction.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Time,
    /// Probability that a frame is corrupted (and dropped by the receiver), per frame.
    pub error_rate: f64,
}

/// A network: nodes and links.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Topology {
    /// Node kinds, indexed by [`NodeId`].
    pub nodes: Vec<NodeKind>,
    /// Links, in the order they were declared (this order numbers switch ports).
    pub links: Vec<LinkSpec>,
}

/// Why a topology is not usable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TopologyError {
    /// A link names a node id that does not exist.
    #[error("link {link} names node {node}, but there are only {nodes} nodes")]
    DanglingLink {
        /// Index of the link.
        link: usize,
        /// The node named.
        node: u32,
        /// How many nodes exist.
        nodes: usize,
    },
    /// A link joins a node to itself.
    #[error("link {link} joins node {node} to itself")]
    SelfLoop {
        /// Index of the link.
        link: usize,
        /// The node.
        node: u32,
    },
    /// A host is attached to zero or several links.
    #[error("host {node} has {links} links; a host needs exactly one")]
    HostLinks {
        /// The host.
        node: u32,
        /// Its number of links.
        links: usize,
    },
    /// A link has a zero rate.
    #[error("link {link} has a zero rate")]
    ZeroRate {
        /// Index of the link.
        link: usize,
    },
    /// More nodes, links or ports than the simulator can number.
    #[error("{what}: {count} exceeds the limit of {limit}")]
    Limit {
        /// What was counted (`nodes`, `links`, `ports of switch 7`).
        what: String,
        /// How many there are.
        count: usize,
        /// The most there may be.
        limit: usize,
    },
    /// Hosts cannot reach each other.
    #[error("host {from} cannot reach host {to}")]
    Disconnected {
        /// A host.
        from: u32,
        /// A host it cannot reach.
        to: u32,
    },
    /// The network would need more memory than can be allocated.
    #[error("{what} would need {} and cannot be allocated", headroom_mech::units::human_bytes(*bytes))]
    TooLarge {
        /// What was being allocated.
        what: &'static str,
        /// The bytes it needs.
        bytes: u64,
    },
    /// A builder was given parameters that make no network.
    #[error("{0}")]
    BadParameter(String),
    /// A topology file could not be parsed.
    #[error("{path}:{line}: {reason}")]
    File {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// `Err(Limit)` when `count` exceeds `limit`.
pub fn check_limit(what: &str, count: usize, limit: usize) -> Result<(), TopologyError> {
    if count > limit {
        return Err(TopologyError::Limit {
            what: what.to_string(),
            count,
            limit,
        });
    }
    Ok(())
}

impl Topology {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the topology has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The ids of all hosts, in id order.
    pub fn hosts(&self) -> Vec<NodeId> {
        (0..self.nodes.len() as u32)
            .map(NodeId)
            .filter(|n| self.nodes[n.index()] == NodeKind::Host)
            .collect()
    }

    /// Checks the structural rules: links name existing, distinct nodes with non-zero
    /// rates, and every host has exactly one link. (Reachability is checked by routing.)
    pub fn validate(&self) -> Result<(), TopologyError> {
        check_limit("nodes", self.nodes.len(), MAX_NODES)?;
        check_limit("links", self.links.len(), MAX_LINKS)?;
        let mut degree = vec![0usize; self.nodes.len()];
        for (i, l) in self.links.iter().enumerate() {
            for n in [l.a, l.b] {
                if n.index() >= self.nodes.len() {
                    return Err(TopologyError::DanglingLink {
                        link: i,
                        node: n.0,
                        nodes: self.nodes.len(),
                    });
                }
                degree[n.index()] += 1;
            }
            if l.a == l.b {
                return Err(TopologyError::SelfLoop {
                    link: i,
                    node: l.a.0,
                });
            }
            if l.rate.bps() == 0 {
                return Err(TopologyError::ZeroRate { link: i });
            }
        }
        for (n, kind) in self.nodes.iter().enumerate() {
            if *kind == NodeKind::Switch {
                check_limit(&format!("ports of switch {n}"), degree[n], MAX_SWITCH_PORTS)?;
            }
            if *kind == NodeKind::Host && degree[n] != 1 {
                return Err(TopologyError::HostLinks {
                    node: n as u32,
                    links: degree[n],
                });
            }
        }
        Ok(())
    }
}
