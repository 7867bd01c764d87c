//! Building a [`Simulation`] from a validated [`SimConfig`]: the arenas of ports, switches
//! (with their MMUs, PFC or credit state, congestion points), hosts and flows, the
//! flow-channel layer when the fabric has one, each flow's congestion control and ideal
//! FCT, and the run's first events.
//!
//! Invariants: a part of a partitioned run is built from the same configuration, routes and
//! split as every other part, so a port or flow number means the same thing in each; a
//! port's canonical index (a whole run's number, `port_table`) names it in event keys and
//! random streams; streams are seeded by name ([`stream_seed`]), so a stream does not
//! depend on what else the run draws.

use super::flow_table::FlowTable;
use super::host::{Flow, Host};
use super::packet::Arena;
use super::port::Port;
use super::port_table::{PortTable, Wire};
use super::switch::Switch;
use super::{
    arbitration, classes, credit, flow_channel, injection, marking, packet, stream_seed, ugal,
    victim, SimError, Simulation, Slot,
};
use crate::config::{BasePath, ConfigError, SimConfig};
use crate::engine::{self, CalendarQueue, Event};
use crate::results::ByteLedger;
use crate::routing::{self, Routes};
use crate::topology::{NodeId, NodeKind};
use headroom_mech::buffer::Mmu;
use headroom_mech::credit::CreditPort;
use headroom_mech::ecn::RedConfig;
use headroom_mech::flow_control::LinkFlowControl;
use headroom_mech::pfcwd::QueueWatchdog;
use headroom_mech::units::{Rate, Time};
use headroom_mech::PRIORITIES;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use std::collections::BTreeMap;
use std::sync::Arc;

impl Simulation {
    /// Builds the network described by `cfg`.
    pub fn new(cfg: SimConfig) -> Result<Simulation, SimError> {
        cfg.validate()?;
        let routes = Routes::compute(&cfg.topology, cfg.routing).map_err(ConfigError::from)?;
        Self::part_of(cfg, routes, Arc::from([]), 0)
    }

    /// Builds part `part` of the network described by `cfg`, split as `node_part` says
    /// (empty: the whole network), with `routes` computed for `cfg`'s topology (the parts
    /// share them). `cfg` must have passed [`SimConfig::validate`]. A part builds only its
    /// own nodes' ports and switch buffers (MMUs) and the wiring of every port, and acts
    /// only on its own nodes (see [`parallel`]).
    pub(crate) fn part_of(
        cfg: SimConfig,
        routes: Routes,
        node_part: Arc<[u16]>,
        part: u16,
    ) -> Result<Simulation, SimError> {
        // A Valiant path is two routes between switches hosts hang off.
        let nonminimal = cfg
            .fabric
            .flow_channels
            .is_some_and(|p| p.routing.nonminimal());
        let max_hops = routes.max_switch_hops() * if nonminimal { 2 } else { 1 };
        cfg.validate_class_per_hop(max_hops)?;
        let reserved = cfg.channel_reserved_classes(max_hops)?;
        let topo = &cfg.topology;
        let adj = routing::adjacency(topo);
        // Each link's local port at either end, so a port finds its peer without searching
        // the peer's (possibly 100,000) ports.
        let mut link_locals = vec![(0u32, 0u32); topo.links.len()];
        for (node, a) in adj.iter().enumerate() {
            for (local, &(_, link)) in a.iter().enumerate() {
                if topo.links[link].a.index() == node {
                    link_locals[link].0 = local as u32;
                } else {
                    link_locals[link].1 = local as u32;
                }
            }
        }

        // Ports: every node's ports in link order, numbered node by node: in id order in a
        // whole run (a port's canonical index), part by part in a part of a partitioned run,
        // so that its own ports are one run of numbers (see `port_table`).
        let mut node_order: Vec<usize> = (0..adj.len()).collect();
        node_order.sort_by_key(|&node| (node_part.get(node).copied().unwrap_or(0), node));
        let mut canonical_first = Vec::with_capacity(adj.len());
        let mut n_ports = 0u32;
        for a in &adj {
            canonical_first.push(n_ports);
            n_ports += a.len() as u32;
        }
        // A part builds only its own nodes' ports (`held` of them, numbered from `base`),
        // and the wiring of every port.
        let owned = |node: u32| node_part.get(node as usize).is_none_or(|&p| p == part);
        let mut first_port = vec![0u32; adj.len()];
        let (mut next, mut base, mut held) = (0u32, 0u32, 0usize);
        for &node in &node_order {
            let n = adj[node].len() as u32;
            if node_part.get(node).is_some_and(|&p| p < part) {
                base += n;
            } else if owned(node as u32) {
                held += n as usize;
            }
            first_port[node] = next;
            next += n;
        }
        if n_ports >= engine::MAX_CREATORS {
            return Err(ConfigError::Parameter {
                field: "topology",
                reason: format!(
                    "{n_ports} ports; at most {} are supported",
                    engine::MAX_CREATORS - 1
                ),
            }
            .into());
        }
        let credit_links = cfg
            .fabric
            .uses(topo.links.len(), crate::config::FlowControlKind::Credit);
        let mut sl_to_vl = Vec::new();
        let mut red: Vec<[Option<RedConfig>; PRIORITIES]> = Vec::new();
        let fecn = cfg.switch.ecn.fecn_for(&cfg.host.cc);
        let mut link_ports = vec![(0u32, 0u32); topo.links.len()];
        let mut wiring = Vec::with_capacity(n_ports as usize);
        let mut ports = Vec::with_capacity(held);
        for &node in &node_order {
            for (local, &(peer, link)) in adj[node].iter().enumerate() {
                let l = &topo.links[link];
                let me = first_port[node] + local as u32;
                if l.a.index() == node {
                    link_ports[link].0 = me;
                } else {
                    link_ports[link].1 = me;
                }
                let peer_local = if l.a.index() == node {
                    link_locals[link].1
                } else {
                    link_locals[link].0
                };
                let ecn = &cfg.switch.ecn;
                let queues: [Option<RedConfig>; PRIORITIES] =
                    std::array::from_fn(|q| ecn.queue_red(l.rate, q, fecn.as_ref()));
                let red_class = match red.iter().position(|r| *r == queues) {
                    Some(i) => i,
                    None => {
                        red.push(queues);
                        red.len() - 1
                    }
                };
                let red_class = u16::try_from(red_class).map_err(|_| ConfigError::Parameter {
                    field: "topology.link.rate",
                    reason: "more than 65,536 distinct link speeds".into(),
                })?;
                if credit_links {
                    sl_to_vl.push(cfg.fabric.sl_to_vl(link));
                }
                let peer_port = first_port[peer.index()] + peer_local;
                wiring.push(Wire {
                    node: node as u32,
                    peer: peer_port,
                    link: link as u32,
                    local: local as u16,
                    rate: l.rate,
                    delay: l.delay,
                });
                if !owned(node as u32) {
                    continue;
                }
                let mut port = Port::new(
                    node as u32,
                    local as u16,
                    peer_port,
                    l.rate,
                    l.delay,
                    l.error_rate,
                );
                port.peer_is_switch = topo.nodes[peer.index()] == NodeKind::Switch;
                if cfg.fabric.link_kind(link) == crate::config::FlowControlKind::Credit {
                    let credit = &cfg.fabric.credit;
                    let capacity = |kind: NodeKind| match kind {
                        NodeKind::Switch => credit.vl_buffer_blocks(cfg.switch.cell_bytes),
                        NodeKind::Host => headroom_mech::credit::UNLIMITED,
                    };
                    port.fc = LinkFlowControl::Credit(Box::new(CreditPort::new(
                        credit.vls,
                        credit.block,
                        capacity(topo.nodes[node]),
                        capacity(topo.nodes[peer.index()]),
                        credit.policy(l.rate),
                    )));
                }
                port.red_class = red_class;
                ports.push(port);
            }
        }

        let mut slots = Vec::with_capacity(topo.nodes.len());
        let mut switches = Vec::new();
        let mut hosts = Vec::new();
        let classes = classes::Classes::of(
            credit_links,
            cfg.fabric.class_per_hop,
            sl_to_vl
                .iter()
                .all(|t| *t == crate::config::IDENTITY_SL_TO_VL),
        );
        for (node, kind) in topo.nodes.iter().enumerate() {
            let my_ports: Vec<u32> = (0..adj[node].len() as u32)
                .map(|i| first_port[node] + i)
                .collect();
            match kind {
                NodeKind::Switch => {
                    let s = &cfg.switch;
                    // A part never touches another part's buffers: their switches get an
                    // MMU of no ports (in a k = 32 fat tree, 15 MB of the 85 MB a second
                    // part cost).
                    let mine: Vec<_> = my_ports
                        .iter()
                        .filter(|_| owned(node as u32))
                        .map(|&p| {
                            let w: &Wire = &wiring[p as usize];
                            (w.rate, w.delay, cfg.fabric.link_kind(w.link as usize))
                        })
                        .collect();
                    let mmu_cfg = cfg.mmu_config(&mine);
                    let mut mmu = Mmu::new(&mmu_cfg).map_err(|source| SimError::Buffer {
                        node: node as u32,
                        source,
                    })?;
                    if classes == classes::Classes::Service {
                        // Every frame leaves a switch in the class it arrived in (its
                        // service level, on every link), so a lossy frame's egress queue is
                        // of a lossy class: only those queues' cell counts are ever read.
                        mmu.count_egress_of(!mmu_cfg.lossless);
                    }
                    slots.push(Slot::Switch(switches.len() as u32));
                    let rng_ecn =
                        Pcg64::seed_from_u64(stream_seed(cfg.seed, &format!("ecn/{node}")));
                    switches.push(Switch::new(
                        node as u32,
                        first_port[node],
                        my_ports.len() as u32,
                        mmu,
                        s.buffer_bytes,
                        rng_ecn,
                    ));
                }
                NodeKind::Host => {
                    slots.push(Slot::Host(hosts.len() as u32));
                    hosts.push(Host::new(node as u32, my_ports[0]));
                }
            }
        }

        // A part keeps the flows its hosts send or receive (see `flow_table`); with a global
        // window, what it needs of the others is their paths' base RTT and BDP.
        let mut flows = Vec::new();
        let mut others = Vec::new();
        // Source ports: per source host, counted from 10000 in flow order.
        let mut next_sport: BTreeMap<u32, u16> = BTreeMap::new();
        for (i, spec) in cfg.flows.iter().enumerate() {
            let src_host = match slots[spec.src.index()] {
                Slot::Host(h) => h,
                Slot::Switch(_) => unreachable!("validated: flow endpoints are hosts"),
            };
            let sport = next_sport.entry(spec.src.0).or_insert(10_000);
            let my_sport = *sport;
            *sport = sport.wrapping_add(1);
            let src_port = hosts[src_host as usize].port;
            let hash = routing::flow_hash(spec.src.0, spec.dst.0, my_sport, spec.dport);
            if !owned(spec.src.0) && !owned(spec.dst.0) {
                if cfg.host.window.global {
                    others.push((src_port, spec.dst, hash));
                }
                continue;
            }
            let line_rate = wiring[src_port as usize].rate;
            let rev_hash = routing::flow_hash(spec.dst.0, spec.src.0, spec.dport, my_sport);
            let mut flow = Flow::new(
                i as u32,
                spec,
                src_host,
                my_sport,
                (hash, rev_hash),
                line_rate,
            );
            flow.src_port = src_port;
            if credit_links {
                flow.vl = sl_to_vl[flow.src_port as usize][usize::from(flow.prio)];
            }
            flows.push(flow);
        }

        let mut arena = if cfg.host.cc.int_multi().is_some() {
            Arena::with_int()
        } else {
            Arena::default()
        };
        let buffered = switches.iter().map(Switch::buffer_bytes).sum();
        arena.reserve(Arena::reservation(buffered, n_ports as usize));
        let ports = PortTable::new(ports, base, wiring, (first_port, canonical_first));
        // Streams and keys are named by canonical index: the same in every split.
        let rng_errors = ports
            .held_numbers()
            .map(|p| {
                let c = ports.canonical(p);
                Pcg64::seed_from_u64(stream_seed(cfg.seed, &format!("link-errors/{c}")))
            })
            .collect();
        let mut sim = Simulation {
            now: Time::ZERO,
            queue: CalendarQueue::default(),
            ports,
            switches,
            hosts,
            flows: FlowTable::new(flows, cfg.flows.len()),
            slots,
            routes,
            link_up: vec![true; topo.links.len()],
            link_ports,
            arena,
            red,
            int_multi: cfg.host.cc.int_multi(),
            rng_errors,
            creator: n_ports,
            run_count: engine::CreatorCount::new(n_ports),
            cur_key: 0,
            part,
            node_part,
            outbox: Vec::new(),
            flows_to_finish: 0,
            done_at: None,
            events: 0,
            run_events: 0,
            finished_flows: 0,
            stop: None,
            ledger: ByteLedger::default(),
            drops: BTreeMap::new(),
            lossless_drops: Vec::new(),
            pfc_sent: Vec::new(),
            pfc_received: Vec::new(),
            queue_samples: Vec::new(),
            buffer_samples: Vec::new(),
            rate_samples: Vec::new(),
            transitions: Vec::with_capacity(16),
            pause_episodes: vec![victim::PauseEpisodes::default(); held],
            watchdogs: if cfg.switch.watchdog.is_some() {
                vec![[QueueWatchdog::default(); PRIORITIES]; held]
            } else {
                Vec::new()
            },
            marking: marking::Marking::default(),
            credit_links,
            classes,
            credit_blocks: Vec::new(),
            credit_culprits: if credit_links {
                vec![credit::NO_CULPRIT; held * PRIORITIES]
            } else {
                Vec::new()
            },
            credit_room: u32::from(headroom_mech::credit::blocks(
                cfg.host.largest_data_frame(),
                cfg.fabric.credit.block,
            )),
            sl_to_vl,
            arbitration: arbitration::Arbitration::new(
                cfg.switch.scheduler.arbitration,
                n_ports as usize,
                &cfg.flow_apps,
            ),
            channels: None,
            lean: false,
            cfg,
        };
        if let Some(params) = sim.cfg.fabric.flow_channels {
            let ports_of: Vec<usize> = sim.switches.iter().map(|s| s.ports().len()).collect();
            let frame_bytes = sim.cfg.host.largest_data_frame() + sim.cfg.link.frame_overhead;
            let per_hop = sim.cfg.fabric.class_per_hop;
            let mut fc = flow_channel::ChannelFabric::new(
                params,
                (&ports_of, sim.ports.len()),
                frame_bytes,
                (per_hop, reserved),
            );
            if params.port_injection_limit.is_some() || params.ilid_injection.is_some() {
                let is_switch = |node: u32| matches!(sim.slots[node as usize], Slot::Switch(_));
                let from_host: Vec<bool> = (0..sim.ports.len() as u32)
                    .map(|gp| {
                        let w = sim.ports.wire(gp);
                        is_switch(w.node) && !is_switch(sim.ports.wire(w.peer).node)
                    })
                    .collect();
                let first_port = sim.switches.iter().map(|s| s.port(0)).collect();
                let unit = u64::from(params.unit.max(1));
                let port_limit = params.port_injection_limit.map(|l| l / unit);
                let ilids = params.ilid_injection.map(|c| {
                    let ilid_of_flow = (0..sim.cfg.flows.len())
                        .map(|f| c.ilid_of(sim.cfg.flow_apps.get(f).copied().unwrap_or(0)))
                        .collect();
                    (c.in_units(params.unit), ilid_of_flow)
                });
                fc.injection = Some(injection::EdgeInjection::new(
                    port_limit, ilids, &from_host, first_port,
                ));
            }
            if let crate::config::ChannelRouting::Ugal { threshold } = params.routing {
                let u = ugal::Ugal::new(&sim.cfg.topology, threshold).map_err(
                    |ugal::TooManySwitches(n)| ConfigError::Parameter {
                        field: "fabric.flow_channels.routing",
                        reason: format!(
                            "UGAL draws intermediates among the switches hosts hang off, at \
                             most {}; this network has {n}",
                            packet::NO_VIA - 1
                        ),
                    },
                )?;
                fc.ugal = Some(u);
            }
            sim.channels = Some(Box::new(fc));
        }
        sim.lean = sim.uses_no_optional_feature();
        sim.marking = marking::Marking::new(&sim.cfg, &sim.ports, &sim.slots, &sim.red);
        for p in sim.ports.held_numbers() {
            let peer = sim.ports.wire(p).peer;
            sim.ports[p].remote = sim.part_of_node(sim.ports.wire(peer).node) != part;
        }
        // The run's own events, in a fixed order: flow starts, stop, link failures, first
        // sample. Each part schedules the flow starts of its senders, with the keys a
        // whole run gives them.
        let ideal: Vec<(Time, BasePath)> = sim.flows.iter().map(|f| sim.ideal_fct(f)).collect();
        let mut base_paths = Vec::with_capacity(ideal.len());
        for (fl, (ideal, base)) in sim.flows.iter_mut().zip(ideal) {
            fl.ideal_fct = ideal;
            base_paths.push(base);
        }
        let others: Vec<BasePath> = others
            .into_iter()
            .map(|(src_port, dst, hash)| sim.base_path(&sim.path(src_port, dst, hash)))
            .collect();
        sim.configure_congestion_control(base_paths, &others);
        for f in 0..sim.cfg.flows.len() {
            let spec = &sim.cfg.flows[f];
            let start = spec.start;
            if sim.mine(spec.src.0) {
                sim.flows_to_finish += 1;
                sim.schedule(start, Event::FlowStart { flow: f as u32 });
            } else {
                sim.run_count.count_one();
            }
        }
        if let Some(t) = sim.cfg.stop_time {
            sim.schedule(t, Event::Stop);
        }
        for i in 0..sim.cfg.link_failures.len() {
            let t = sim.cfg.link_failures[i].time;
            sim.schedule(t, Event::LinkDown { failure: i as u32 });
        }
        if let Some(iv) = sim.cfg.record.sample_interval {
            if iv > Time::ZERO {
                sim.schedule(Time::ZERO, Event::Sample);
            }
        }
        Ok(sim)
    }

    /// Gives every flow held (`base_paths`: their paths, in id order) its congestion
    /// control, window and notification point, from its path's base RTT and
    /// bandwidth-delay product or, with a global window, the largest of them over all
    /// flows (`others`: the paths of the flows a part does not hold).
    fn configure_congestion_control(&mut self, mut base_paths: Vec<BasePath>, others: &[BasePath]) {
        let host = &self.cfg.host;
        if host.window.global {
            let all = || base_paths.iter().chain(others);
            let rtt = all().map(|b| b.rtt).max().unwrap_or(Time::ZERO);
            let bdp = all().map(|b| b.bdp).max().unwrap_or(0);
            for b in &mut base_paths {
                b.rtt = rtt;
                b.bdp = bdp;
            }
        }
        for (fl, base) in self.flows.iter_mut().zip(&base_paths) {
            fl.set_congestion_control(
                host.cc.reaction_point(base),
                host.cc.notification_point(host.cnp_interval, host.cnp_mode),
                host.window.window(base.bdp),
            );
        }
    }

    /// The FCT of a flow alone on its path at line rate: the first packet store-and-forwarded
    /// hop by hop, the rest streamed at the bottleneck, and the last ACK's return. And the
    /// path's base RTT (propagation both ways and one packet's payload serialized per hop,
    /// as the ns-3 HPCC simulator counts it) and bandwidth-delay product at its bottleneck.
    fn ideal_fct(&self, fl: &Flow) -> (Time, BasePath) {
        let h = &self.cfg.host;
        let overhead = self.cfg.link.frame_overhead;
        let path = self.path(fl.src_port, NodeId(fl.dst), fl.hash);
        let first_payload = fl.size.min(h.mtu_payload);
        // Saturating: a flow may be up to u64::MAX bytes, and its wire bytes then exceed a
        // u64; the serialization time of that many bytes saturates at Time::MAX anyway.
        let per_packet = h.header_bytes.saturating_add(overhead);
        let first = first_payload.saturating_add(per_packet);
        let packets = fl.size.div_ceil(h.mtu_payload);
        let rest =
            (fl.size - first_payload).saturating_add((packets - 1).saturating_mul(per_packet));
        let mut t = Time::ZERO;
        let mut bottleneck = Rate(u64::MAX);
        for &gp in &path {
            let p = self.ports.wire(gp);
            t += p.rate.serialization(first) + p.delay;
            bottleneck = bottleneck.min(p.rate);
        }
        t += bottleneck.serialization(rest);
        let ack = h.ack_bytes + overhead;
        for &gp in &path {
            let p = self.ports.wire(gp);
            t += p.rate.serialization(ack) + p.delay;
        }
        (t, self.base_path(&path))
    }

    /// What a sender knows of `path` (transmitting ports from its NIC's on) before it
    /// starts: its base RTT (propagation both ways and one packet's payload serialized per
    /// hop) and its bandwidth-delay product at the bottleneck.
    fn base_path(&self, path: &[u32]) -> BasePath {
        let mut bottleneck = Rate(u64::MAX);
        let mut rtt = Time::ZERO;
        for &gp in path {
            let p = self.ports.wire(gp);
            bottleneck = bottleneck.min(p.rate);
            rtt += p.delay + p.delay + p.rate.serialization(self.cfg.host.mtu_payload);
        }
        BasePath {
            line_rate: self.ports.wire(path[0]).rate,
            rtt,
            bdp: bottleneck.bytes_in(rtt),
        }
    }

    /// Transmitting ports a packet with `hash` takes from `first` (a host port) to `dst`.
    fn path(&self, first: u32, dst: NodeId, hash: u64) -> Vec<u32> {
        let mut path = vec![first];
        let mut port = first;
        for _ in 0..self.slots.len() {
            let next_node = self.ports.wire(self.ports.wire(port).peer).node;
            let Slot::Switch(s) = self.slots[next_node as usize] else {
                break;
            };
            let Some(local) = self.egress_local(next_node, dst.0, hash) else {
                break;
            };
            port = self.switches[s as usize].port(local);
            path.push(port);
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::parallel;
    use crate::topology::builders;
    use headroom_mech::units::Rate;

    #[test]
    fn a_part_keeps_only_its_own_switches_buffers() {
        let topo = builders::fat_tree(4, Rate::from_gbps(100), Time::from_us(1)).expect("k=4");
        let cfg = SimConfig::new(topo, Vec::new());
        let routes = Routes::compute(&cfg.topology, cfg.routing).expect("routes");
        let split = parallel::split(&cfg.topology, 2);
        assert_eq!(split.parts, 2);
        let node_part: Arc<[u16]> = Arc::from(split.node_part);
        let mut owned = [0usize; 2];
        for part in 0..2u16 {
            let sim = Simulation::part_of(cfg.clone(), routes.clone(), node_part.clone(), part)
                .expect("part");
            for s in &sim.switches {
                let mmu_ports = s.mmu.ports();
                if node_part[s.node as usize] == part {
                    assert_eq!(mmu_ports, s.ports().len(), "own switch {}", s.node);
                    owned[usize::from(part)] += 1;
                } else {
                    assert_eq!(mmu_ports, 0, "switch {} of the other part", s.node);
                }
            }
        }
        // Every one of the 20 switches is some part's, and each part has some.
        assert_eq!(owned[0] + owned[1], 20);
        assert!(owned.iter().all(|&n| n > 0), "{owned:?}");
    }

    #[test]
    fn a_part_keeps_only_the_flows_its_hosts_send_or_receive() {
        let topo = builders::fat_tree(4, Rate::from_gbps(100), Time::from_us(1)).expect("k=4");
        let hosts: Vec<NodeId> = (0..topo.nodes.len() as u32)
            .map(NodeId)
            .filter(|n| topo.nodes[n.index()] == NodeKind::Host)
            .collect();
        let flows = hosts
            .iter()
            .flat_map(|&src| {
                hosts
                    .iter()
                    .filter(move |&&dst| dst != src)
                    .map(move |&dst| (src, dst))
            })
            .map(|(src, dst)| crate::workload::FlowSpec {
                src,
                dst,
                prio: 3,
                size: 1000,
                start: Time::ZERO,
                dport: 100,
            })
            .collect();
        let cfg = SimConfig::new(topo, flows);
        let routes = Routes::compute(&cfg.topology, cfg.routing).expect("routes");
        let split = parallel::split(&cfg.topology, 2);
        let node_part: Arc<[u16]> = Arc::from(split.node_part);
        let mut senders = 0;
        for part in 0..2u16 {
            let sim = Simulation::part_of(cfg.clone(), routes.clone(), node_part.clone(), part)
                .expect("part");
            let here = |n: NodeId| node_part[n.index()] == part;
            let expected: Vec<u32> = (0u32..)
                .zip(&cfg.flows)
                .filter(|(_, f)| here(f.src) || here(f.dst))
                .map(|(id, _)| id)
                .collect();
            let held: Vec<u32> = sim.flows.iter().map(|f| f.id).collect();
            assert_eq!(held, expected, "part {part}");
            assert!(held.len() < cfg.flows.len(), "part {part} holds every flow");
            assert!(held.iter().all(|&id| sim.flows[id].id == id));
            senders += sim.flows_to_finish;
        }
        // Each flow is finished by exactly one part: its sender's.
        assert_eq!(senders, cfg.flows.len());
    }

    #[test]
    fn a_part_holds_its_own_ports_under_one_run_of_numbers() {
        let topo = builders::fat_tree(4, Rate::from_gbps(100), Time::from_us(1)).expect("k=4");
        let cfg = SimConfig::new(topo, Vec::new());
        let routes = Routes::compute(&cfg.topology, cfg.routing).expect("routes");
        let whole =
            Simulation::part_of(cfg.clone(), routes.clone(), Arc::from([]), 0).expect("whole");
        let node_part: Arc<[u16]> = Arc::from(parallel::split(&cfg.topology, 2).node_part);
        let (mut held, mut renumbered) = (0, 0);
        for part in 0..2u16 {
            let sim = Simulation::part_of(cfg.clone(), routes.clone(), node_part.clone(), part)
                .expect("part");
            let numbers: Vec<u32> = sim.ports.iter().map(|(g, _)| g).collect();
            assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{numbers:?}");
            for (g, p) in sim.ports.iter() {
                assert_eq!(node_part[p.node as usize], part, "port {g}");
                // Its canonical index names the same port in a whole run.
                let c = sim.ports.canonical(g);
                let w = whole.ports.wire(c);
                assert_eq!((w.node, w.local), (p.node, p.local));
                assert_eq!(sim.ports.numbered(c), g);
                assert_eq!(whole.ports.canonical(c), c);
                renumbered += usize::from(c != g);
            }
            held += numbers.len();
        }
        // Every port is one part's; the hosts come first in a fat tree, so the parts'
        // numbering is not a whole run's.
        assert_eq!(held, whole.ports.len());
        assert!(renumbered > 0);
    }
}
