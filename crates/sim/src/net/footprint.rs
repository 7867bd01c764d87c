//! What a run will need in memory, known before it is built.
//!
//! [`Footprint::of`] sizes the state that grows with the network and the flow list (routing
//! tables, ports, the switches' MMU accounting, the ports' wiring, hosts, flows, per-flow
//! results, every part's copy of the configuration) from the types the simulator allocates, so a caller can refuse a
//! run that cannot fit instead of aborting half-way through building it. Frames in flight
//! and events are bounded by the buffers and links and are not counted.
//!
//! Invariant: an upper estimate of the built state, not a measurement: tests check that the
//! resident memory of real runs stays under it.

use super::host::{Flow, Host};
use super::port::Port;
use super::port_table::Wire;
use super::switch::Switch;
use super::victim::QueuedByIngress;
use crate::config::SimConfig;
use crate::results::{FlowRecord, PortStats};
use crate::routing::Routes;
use crate::topology::NodeKind;
use crate::workload::FlowSpec;
use headroom_mech::units::human_bytes;
use std::fmt;
use std::mem::size_of;

/// MMU accounting per switch port: eight PGs and eight egress queues with their
/// thresholds, and the port's own counters (generous: the MMU's records are under 64 bytes).
const MMU_BYTES_PER_PORT: u64 = 16 * 64 + 128;

/// Estimated bytes of a run, by what holds them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Next-hop tables, shared by the parts.
    pub routing: u64,
    /// Ports and the switches' MMU accounting: each part keeps only its own nodes'.
    pub ports_and_buffers: u64,
    /// The ports' wiring and statistics, switches and hosts, per part.
    pub network: u64,
    /// Flow state and flow records: a part holds the flows its hosts send or receive, so
    /// a flow is held by at most two parts.
    pub flows: u64,
    /// The flow list and the index of the flows held, per part.
    pub flow_list: u64,
    /// Parts of the run: each holds its own network and flows.
    pub parts: u64,
}

impl Footprint {
    /// The tables of queued bytes by ingress that pausing switches keep (victim.rs), as if
    /// every switch paused.
    fn victim_tables(cfg: &SimConfig) -> u64 {
        let topo = &cfg.topology;
        let mut degree = vec![0usize; topo.nodes.len()];
        for l in &topo.links {
            degree[l.a.index()] += 1;
            degree[l.b.index()] += 1;
        }
        topo.nodes
            .iter()
            .zip(degree)
            .filter(|(&k, _)| k != NodeKind::Host)
            .map(|(_, d)| QueuedByIngress::footprint(d, cfg.switch.buffer_bytes))
            .sum()
    }

    /// The footprint of `cfg` run as `parts` parts.
    pub fn of(cfg: &SimConfig, parts: usize) -> Footprint {
        let topo = &cfg.topology;
        let ports = topo.links.len() as u64 * 2;
        let hosts = topo.nodes.iter().filter(|&&k| k == NodeKind::Host).count() as u64;
        let switches = topo.nodes.len() as u64 - hosts;
        let switch_ports = ports.saturating_sub(hosts);
        let per_port = size_of::<Wire>() + size_of::<PortStats>() + 64;
        let network = ports * per_port as u64
            + switches * size_of::<Switch>() as u64
            + hosts * size_of::<Host>() as u64
            + Self::victim_tables(cfg);
        // HPCC's and PowerTCP's sender state (their hop records) is boxed beside the flow.
        let cc = match cfg.host.cc {
            crate::config::CcConfig::Hpcc(_) => size_of::<headroom_mech::cc::Hpcc>(),
            crate::config::CcConfig::PowerTcp(_) => size_of::<headroom_mech::cc::PowerTcp>(),
            _ => 0,
        };
        // The state, its NIC slot and its record; the flow list's entry and the index's.
        let per_flow = size_of::<Flow>() + size_of::<u32>() + size_of::<FlowRecord>() + cc;
        let per_listed_flow = size_of::<FlowSpec>() + size_of::<u32>();
        Footprint {
            routing: Routes::estimated_bytes(topo),
            ports_and_buffers: ports * size_of::<Port>() as u64 + switch_ports * MMU_BYTES_PER_PORT,
            network,
            flows: cfg.flows.len() as u64 * per_flow as u64,
            flow_list: cfg.flows.len() as u64 * per_listed_flow as u64,
            parts: parts.max(1) as u64,
        }
    }

    /// Bytes in all.
    pub fn total(&self) -> u64 {
        self.routing
            .saturating_add(self.ports_and_buffers)
            .saturating_add(self.parts.min(2).saturating_mul(self.flows))
            .saturating_add(
                self.parts
                    .saturating_mul(self.network.saturating_add(self.flow_list)),
            )
    }
}

impl fmt::Display for Footprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "about {} (routing tables {}, ports and buffers {}, flows {} (at most twice), \
             network {} and flow list {} per part, {} part{})",
            human_bytes(self.total()),
            human_bytes(self.routing),
            human_bytes(self.ports_and_buffers),
            human_bytes(self.flows),
            human_bytes(self.network),
            human_bytes(self.flow_list),
            self.parts,
            if self.parts == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::builders;
    use headroom_mech::units::{Rate, Time};

    fn config(topology: crate::topology::Topology) -> SimConfig {
        SimConfig::new(topology, Vec::new())
    }

    #[test]
    fn routing_grows_with_switches_times_edge_switches_and_parts_copy_the_rest() {
        let ft = builders::fat_tree(8, Rate::from_gbps(100), Time::from_us(1)).expect("k=8");
        let one = Footprint::of(&config(ft.clone()), 1);
        let two = Footprint::of(&config(ft), 2);
        // 80 switches x (32 edge switches + the unreachable column) x 2 bytes, plus 20
        // bytes per node (a row's start, a destination's record).
        assert_eq!(one.routing, 80 * 33 * 2 + 208 * 20);
        assert_eq!(two.routing, one.routing);
        // Ports and MMUs are split among the parts: 768 ports, 80 switches x 8 of them.
        assert_eq!(two.ports_and_buffers, one.ports_and_buffers);
        assert_eq!(
            one.ports_and_buffers,
            768 * size_of::<Port>() as u64 + 80 * 8 * MMU_BYTES_PER_PORT
        );
        assert_eq!(two.total() - one.total(), one.network);
    }

    #[test]
    fn a_flow_is_held_by_two_parts_at_most_and_listed_by_all() {
        let ft = builders::fat_tree(4, Rate::from_gbps(100), Time::from_us(1)).expect("k=4");
        let flow = FlowSpec {
            src: crate::topology::NodeId(0),
            dst: crate::topology::NodeId(1),
            prio: 3,
            size: 1000,
            start: Time::ZERO,
            dport: 100,
        };
        let cfg = SimConfig::new(ft, vec![flow; 1000]);
        let [one, two, four] = [1, 2, 4].map(|parts| Footprint::of(&cfg, parts));
        assert!(one.flows >= 1000 * size_of::<Flow>() as u64);
        assert_eq!(one.flow_list, 1000 * (size_of::<FlowSpec>() + 4) as u64);
        let per_part = one.network + one.flow_list;
        assert_eq!(two.total() - one.total(), per_part + one.flows);
        assert_eq!(four.total() - two.total(), 2 * per_part);
    }

    #[test]
    fn a_large_fat_tree_is_sized_before_it_is_built() {
        let ft = builders::fat_tree(64, Rate::from_gbps(100), Time::from_us(1)).expect("k=64");
        let f = Footprint::of(&config(ft), 1);
        // 5,120 switches x 2,049 columns x 2 bytes, and 70,656 nodes x 20 bytes: 22 MB
        // (one column per host instead of per edge switch would be 671 MB).
        assert_eq!(f.routing, 5_120 * 2_049 * 2 + 70_656 * 20);
        assert!(f.to_string().starts_with("about "), "{f}");
    }
}
