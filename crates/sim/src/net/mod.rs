//! The network model: ports and links, switches, hosts, flows, driven by the event loop.
//!
//! [`Simulation`] owns every piece of state in flat arenas addressed by index (ports,
//! switches, hosts, flows, packets). Each event handler is a method that mutates that state
//! and schedules further events; the mechanisms (MMU, PFC, ECN, congestion control) are the
//! sans-IO state machines of `headroom-mech`, which these handlers only drive.
//!
//! - [`port`]: transmission on a link: control frames first, then strict priority and DWRR
//!   among the non-paused queues; serialization and propagation.
//! - [`switch`]: forwarding, MMU admission/release, PFC generation, ECN marking.
//! - [`host`]: the RDMA NIC: flow scheduling and pacing, ACK/NACK/CNP, go-back-N, CC.
//! - [`deadlock`]: cycles of paused queues that never drain, found while running;
//! - [`watchdog`]: the PFC watchdog's polls and what a queue in a storm does;
//! - [`footprint`]: the memory a run will need, known before it is built;
//! - [`parallel`]: a run split into parts that advance on several threads, with the results
//!   of one simulation.
//!
//! Invariants checked by [`Simulation::check_invariants`]: payload bytes sent = delivered +
//! dropped + in flight; every switch's MMU conserves cells and its resident cells equal the
//! cells of the packets it queues; no packet is lost without being counted.

mod ack_frames;
mod arbitration;
mod channel_wait;
mod classes;
mod credit;
mod deadlock;
mod fgfc;
mod flow_channel;
mod footprint;
mod hop_credit;
pub mod host;
mod injection;
mod marking;
pub mod packet;
pub mod parallel;
pub mod port;
mod reroute;
pub mod switch;
mod ugal;
mod victim;
mod watchdog;

use crate::config::{BasePath, ConfigError, EdgeMatch, SimConfig};
use crate::engine::{self, CalendarQueue, Event, EventQueue};
use crate::results::{
    BufferSample, ByteLedger, CreditBlock, FlowRecord, LosslessDrop, PfcRecord, PortStats,
    QueueSample, RateSample, RunResults, StopReason, SwitchStats,
};
use crate::routing::{self, Routes};
use crate::topology::{NodeId, NodeKind};
use headroom_mech::buffer::Mmu;
use headroom_mech::credit::CreditPort;
use headroom_mech::ecn::RedConfig;
use headroom_mech::flow_control::LinkFlowControl;
use headroom_mech::int::IntStack;
use headroom_mech::pfcwd::QueueWatchdog;
use headroom_mech::units::{Rate, Time};
use headroom_mech::PRIORITIES;
use host::{Flow, Host};
use packet::{Arena, Kind, Packet};
use port::Port;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use std::collections::BTreeMap;
use std::sync::Arc;
use switch::Switch;

pub use deadlock::{Deadlock, StalledQueue};
pub use footprint::Footprint;

/// Which arena a node lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Host(u32),
    Switch(u32),
}

/// Why a simulation could not be built or run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A switch's buffer cannot hold its reservations.
    #[error("switch {node}: {source}")]
    Buffer {
        /// Switch node.
        node: u32,
        /// The MMU's complaint.
        source: headroom_mech::buffer::mmu::MmuError,
    },
}

/// A running simulation.
pub struct Simulation {
    cfg: SimConfig,
    now: Time,
    queue: CalendarQueue,
    ports: Vec<Port>,
    switches: Vec<Switch>,
    hosts: Vec<Host>,
    flows: Vec<Flow>,
    /// Per flow: its index in its NIC's active list, or `host::NOT_ACTIVE`.
    nic_slot: Vec<u32>,
    slots: Vec<Slot>,
    routes: Routes,
    /// Per link: up, and its two ports (global indices).
    link_up: Vec<bool>,
    link_ports: Vec<(u32, u32)>,
    arena: Arena,
    /// The distinct ECN configurations of a port's egress queues (`None`: the queue does
    /// not mark), indexed by `Port::red_class`.
    red: Vec<[Option<RedConfig>; PRIORITIES]>,
    /// Switches append INT hop records to data packets, with this resolution multiplier.
    int_multi: Option<u32>,
    /// Per receiving port: its link's corruption draws.
    rng_errors: Vec<Pcg64>,
    /// Who is scheduling events now (see [`engine::tiebreak`]): the port whose event is
    /// being handled, or [`Simulation::run_creator`] for the run's own events.
    creator: u32,
    /// Per creator (ports, then the run): events scheduled so far.
    counts: Vec<u32>,
    /// Tie-break key of the event being handled.
    cur_key: u64,
    /// In a partitioned run: this simulation's part, and every node's part (empty: the
    /// simulation is the whole run).
    part: u16,
    node_part: Arc<[u16]>,
    /// Frames sent to other parts, for the driver to deliver.
    outbox: parallel::Mail,
    /// Flows whose sender is here (all of them, unless partitioned).
    flows_to_finish: usize,
    /// When (and at which event) the last of those finished.
    done_at: Option<(Time, u64)>,
    events: u64,
    /// Of `events`, the run's own (samples, stop, link failures): every part handles them,
    /// a partitioned run counts them once.
    run_events: u64,
    finished_flows: usize,
    stop: Option<StopReason>,
    ledger: ByteLedger,
    drops: BTreeMap<String, u64>,
    lossless_drops: Vec<LosslessDrop>,
    pfc_sent: Vec<PfcRecord>,
    pfc_received: Vec<PfcRecord>,
    queue_samples: Vec<QueueSample>,
    buffer_samples: Vec<BufferSample>,
    rate_samples: Vec<RateSample>,
    transitions: Vec<headroom_mech::buffer::Transition>,
    /// Per global port: pause episodes decided there, and victim pauses among them.
    pause_episodes: Vec<victim::PauseEpisodes>,
    /// Per global port, with the PFC watchdog on: each egress queue's watchdog (empty when
    /// it is off).
    watchdogs: Vec<[QueueWatchdog; PRIORITIES]>,
    /// The congestion point of every switch egress queue that marks.
    marking: marking::Marking,
    /// Some link uses credits (the per-frame credit hooks are skipped otherwise).
    credit_links: bool,
    /// How frames map to classes: their service level, SL → VL tables, or with `[fabric]
    /// class_per_hop` one class more at every switch-to-switch hop after their first.
    classes: classes::Classes,
    /// Episodes of credit transmitters waiting for credit, ended so far (unless
    /// `omit_credit_log`).
    credit_blocks: Vec<CreditBlock>,
    /// Per global port × 8 + VL, with credit links: the egress the switch blamed when the
    /// VL buffer last filled (`credit::NO_CULPRIT`: none), carried upstream by its FCPs.
    credit_culprits: Vec<u32>,
    /// Blocks of the largest frame a host sends: a credit VL buffer with less room than
    /// this is full (its transmitter may have to wait).
    credit_room: u32,
    /// Per global port, with credit links: its SL → VL table (empty otherwise: on PFC
    /// links a frame's class is its service level).
    sl_to_vl: Vec<crate::config::SlToVl>,
    /// Sub-queues of switch egress classes that arbitrate (nothing with FIFO classes).
    arbitration: arbitration::Arbitration,
    /// The flow-channel layer (`None`: a plain PFC or credit fabric).
    channels: Option<Box<flow_channel::ChannelFabric>>,
}

/// A seed for a named random stream: the run seed mixed with a fixed hash of the name.
pub fn stream_seed(seed: u64, name: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    routing::mix64(seed ^ h)
}

impl Simulation {
    /// Builds the network described by `cfg`.
    pub fn new(cfg: SimConfig) -> Result<Simulation, SimError> {
        cfg.validate()?;
        let routes = Routes::compute(&cfg.topology, cfg.routing).map_err(ConfigError::from)?;
        Self::part_of(cfg, routes, Arc::from([]), 0)
    }

    /// Builds part `part` of the network described by `cfg`, split as `node_part` says
    /// (empty: the whole network), with `routes` computed for `cfg`'s topology (the parts
    /// share them). `cfg` must have passed [`SimConfig::validate`]. Every part holds the
    /// whole network's state, but only acts on its own nodes (see [`parallel`]).
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

        // Ports: every node's ports in link order; global index assigned node by node.
        let mut first_port = Vec::with_capacity(topo.nodes.len());
        let mut n_ports = 0u32;
        for a in &adj {
            first_port.push(n_ports);
            n_ports += a.len() as u32;
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
        let mut ports = Vec::with_capacity(n_ports as usize);
        let credit_links = cfg
            .fabric
            .uses(topo.links.len(), crate::config::FlowControlKind::Credit);
        let mut sl_to_vl = Vec::new();
        let mut red: Vec<[Option<RedConfig>; PRIORITIES]> = Vec::new();
        let fecn = cfg.switch.ecn.fecn_for(&cfg.host.cc);
        let mut link_ports = vec![(0u32, 0u32); topo.links.len()];
        for (node, a) in adj.iter().enumerate() {
            for (local, &(peer, link)) in a.iter().enumerate() {
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
                let mut port = Port::new(
                    node as u32,
                    local as u16,
                    first_port[peer.index()] + peer_local,
                    l.rate,
                    l.delay,
                    l.error_rate,
                );
                port.peer_is_switch = topo.nodes[peer.index()] == NodeKind::Switch;
                if credit_links {
                    sl_to_vl.push(cfg.fabric.sl_to_vl(link));
                }
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
                port.red_class = u16::try_from(red_class).map_err(|_| ConfigError::Parameter {
                    field: "topology.link.rate",
                    reason: "more than 65,536 distinct link speeds".into(),
                })?;
                ports.push(port);
            }
        }

        let mut slots = Vec::with_capacity(topo.nodes.len());
        let mut switches = Vec::new();
        let mut hosts = Vec::new();
        for (node, kind) in topo.nodes.iter().enumerate() {
            let my_ports: Vec<u32> = (0..adj[node].len() as u32)
                .map(|i| first_port[node] + i)
                .collect();
            match kind {
                NodeKind::Switch => {
                    let s = &cfg.switch;
                    let mine: Vec<_> = my_ports
                        .iter()
                        .map(|&p| {
                            let p: &Port = &ports[p as usize];
                            let kind = if p.fc.credit().is_some() {
                                crate::config::FlowControlKind::Credit
                            } else {
                                crate::config::FlowControlKind::Pfc
                            };
                            (p.rate, p.delay, kind)
                        })
                        .collect();
                    let mmu_cfg = cfg.mmu_config(&mine);
                    let mmu = Mmu::new(&mmu_cfg).map_err(|source| SimError::Buffer {
                        node: node as u32,
                        source,
                    })?;
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

        let mut flows = Vec::with_capacity(cfg.flows.len());
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
            let line_rate = ports[hosts[src_host as usize].port as usize].rate;
            let hash = routing::flow_hash(spec.src.0, spec.dst.0, my_sport, spec.dport);
            let rev_hash = routing::flow_hash(spec.dst.0, spec.src.0, spec.dport, my_sport);
            let mut flow = Flow::new(
                i as u32,
                spec,
                src_host,
                my_sport,
                (hash, rev_hash),
                line_rate,
            );
            flow.src_port = hosts[src_host as usize].port;
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
        arena.reserve(Arena::reservation(buffered, ports.len()));
        let mut sim = Simulation {
            now: Time::ZERO,
            queue: CalendarQueue::default(),
            ports,
            switches,
            hosts,
            nic_slot: vec![host::NOT_ACTIVE; flows.len()],
            flows,
            slots,
            routes,
            link_up: vec![true; topo.links.len()],
            link_ports,
            arena,
            red,
            int_multi: cfg.host.cc.int_multi(),
            rng_errors: (0..n_ports)
                .map(|p| Pcg64::seed_from_u64(stream_seed(cfg.seed, &format!("link-errors/{p}"))))
                .collect(),
            creator: n_ports,
            counts: vec![0; n_ports as usize + 1],
            cur_key: 0,
            part,
            node_part,
            outbox: parallel::Mail::default(),
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
            pause_episodes: vec![victim::PauseEpisodes::default(); n_ports as usize],
            watchdogs: if cfg.switch.watchdog.is_some() {
                vec![[QueueWatchdog::default(); PRIORITIES]; n_ports as usize]
            } else {
                Vec::new()
            },
            marking: marking::Marking::default(),
            credit_links,
            classes: classes::Classes::of(credit_links, cfg.fabric.class_per_hop),
            credit_blocks: Vec::new(),
            credit_culprits: if credit_links {
                vec![credit::NO_CULPRIT; n_ports as usize * PRIORITIES]
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
            if let EdgeMatch::Destination { app: true, .. } = params.edge_match {
                fc.apps = sim.cfg.flow_apps.clone();
            }
            if params.port_injection_limit.is_some() || params.ilid_injection.is_some() {
                let from_host: Vec<bool> = sim
                    .ports
                    .iter()
                    .map(|p| {
                        !p.peer_is_switch && matches!(sim.slots[p.node as usize], Slot::Switch(_))
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
        sim.marking = marking::Marking::new(&sim.cfg, &sim.ports, &sim.slots, &sim.red);
        for p in 0..sim.ports.len() {
            let peer = sim.ports[p].peer as usize;
            let remote =
                sim.part_of_node(sim.ports[p].node) != sim.part_of_node(sim.ports[peer].node);
            sim.ports[p].remote = remote;
        }
        // The run's own events, in a fixed order: flow starts, stop, link failures, first
        // sample. Each part schedules the flow starts of its senders, with the keys a
        // whole run gives them.
        let mut base_paths = Vec::with_capacity(sim.flows.len());
        for f in 0..sim.flows.len() {
            let (ideal, base) = sim.ideal_fct(f);
            sim.flows[f].ideal_fct = ideal;
            base_paths.push(base);
        }
        sim.configure_congestion_control(base_paths);
        for f in 0..sim.flows.len() {
            let start = sim.flows[f].start;
            if sim.mine(sim.flows[f].src) {
                sim.flows_to_finish += 1;
                sim.schedule(start, Event::FlowStart { flow: f as u32 });
            } else {
                let run = sim.run_creator() as usize;
                sim.counts[run] += 1;
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

    /// The part node `node` belongs to.
    fn part_of_node(&self, node: u32) -> u16 {
        self.node_part.get(node as usize).copied().unwrap_or(0)
    }

    /// Whether node `node` is this simulation's to run.
    fn mine(&self, node: u32) -> bool {
        self.part_of_node(node) == self.part
    }

    /// Hands a frame for a port of another part to the driver (it arrives no earlier than
    /// one link delay from now, after the driver has delivered it).
    #[cold]
    fn send_remote(&mut self, time: Time, event: Event, pkt: u32) {
        let key = self.next_key(&event);
        let packet = *self.arena.get(pkt);
        let int = self.arena.int(pkt).copied().unwrap_or(IntStack::EMPTY);
        let (port, first_bit) = match event {
            Event::FrameStart { port, .. } => (port, true),
            Event::Arrive { port, .. } => (port, false),
            _ => unreachable!("only frames cross between parts"),
        };
        let first_ack = self.outbox.acks.len() as u32;
        let acks = match self.channels.as_deref_mut() {
            Some(fc) if packet.kind == Kind::ChannelAck => {
                fc.hand_over_acks(port, packet.payload, &mut self.outbox.acks)
            }
            _ => 0,
        };
        self.arena.free(pkt);
        let to = self.part_of_node(self.ports[port as usize].node);
        self.outbox.frames.push(parallel::Remote {
            to,
            time,
            key,
            port,
            first_bit,
            packet,
            int,
            acks: (first_ack, acks),
        });
    }

    /// Schedules a frame another part sent to one of this part's ports (`acks`: the ACKs
    /// of the ACK frames in the same mail).
    fn receive_remote(&mut self, r: &parallel::Remote, acks: &[ack_frames::AckEntry]) {
        let pkt = self.arena.alloc(r.packet);
        if let Some(int) = self.arena.int_mut(pkt) {
            *int = r.int;
        }
        if let (Some(fc), (first, n @ 1..)) = (self.channels.as_deref_mut(), r.acks) {
            fc.take_over_acks(r.port, &acks[first as usize..(first + n) as usize]);
        }
        let event = if r.first_bit {
            Event::FrameStart { port: r.port, pkt }
        } else {
            Event::Arrive { port: r.port, pkt }
        };
        self.queue.push(r.time, r.key, event);
    }

    /// This part's events, counting the run's own events (which every part handles) only
    /// in part 0, so that the parts' counts add up to a whole run's.
    fn events_once(&self) -> u64 {
        if self.part == 0 {
            self.events
        } else {
            self.events - self.run_events
        }
    }

    /// The creator id of the run's own events (stop, samples, flow starts, failures): one
    /// past the last port, so that they come after the ports' events at equal times.
    fn run_creator(&self) -> u32 {
        self.ports.len() as u32
    }

    /// Schedules `event` at `time`, created by the current creator.
    #[inline(always)]
    pub(super) fn schedule(&mut self, time: Time, event: Event) {
        let key = self.next_key(&event);
        self.queue.push(time, key, event);
    }

    /// The tie-break key of `event`, the current creator's next.
    #[inline(always)]
    fn next_key(&mut self, event: &Event) -> u64 {
        let c = self.creator;
        let n = &mut self.counts[c as usize];
        // Transmissions end before frames arrive at the same instant: a switch releases
        // the departing frame's cells before it admits one arriving then.
        let rank = u32::from(!matches!(event, Event::Wake { .. }));
        let key = engine::tiebreak(rank, c, *n);
        // A creator would need 2^32 events at one instant for the wrap to matter.
        *n = n.wrapping_add(1);
        key
    }

    /// Current simulated time.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Events waiting in the queue.
    pub fn pending_events(&self) -> usize {
        self.queue.len()
    }

    /// Flows finished so far, and the total.
    pub fn flow_progress(&self) -> (usize, usize) {
        (self.finished_flows, self.flows.len())
    }

    /// Why the run ended, once it has.
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop.as_ref()
    }

    /// The configuration being run.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Processes events up to and including simulated time `limit`, or until the run ends.
    /// Returns `true` once the run has ended.
    pub fn run_until(&mut self, limit: Time) -> bool {
        self.run_through(limit, u64::MAX)
    }

    /// Processes the events up to and including (`limit`, `key`) in `(time, key)` order, or
    /// until the run (or this part's share of it) ends. Returns `true` once it has.
    fn run_through(&mut self, limit: Time, key: u64) -> bool {
        while self.stop.is_none() {
            match self.queue.pop_through(limit, key) {
                Some(s) => {
                    if let Some(next) = self.queue.peek_loaded() {
                        self.touch(next);
                    }
                    debug_assert!(s.time >= self.now, "event in the past");
                    self.now = s.time;
                    self.cur_key = s.seq;
                    self.events += 1;
                    self.dispatch(s.event);
                }
                // A part of a partitioned run may run dry while frames are on their way to
                // it: only the driver, seeing every part, knows the run is idle.
                None if self.queue.is_empty() && self.node_part.is_empty() => {
                    self.stop = Some(StopReason::Idle);
                }
                None => return false,
            }
        }
        true
    }

    /// Runs to the end.
    pub fn run(mut self) -> RunResults {
        self.run_until(Time::MAX);
        self.finish()
    }

    /// Starts loading the first memory the next event will need (its packet, its port), so
    /// that those cache misses overlap the work of the current event instead of following it.
    #[inline(always)]
    fn touch(&self, ev: Event) {
        match ev {
            Event::Arrive { port, pkt } | Event::FrameStart { port, pkt } => {
                prefetch(&self.arena.get(pkt).kind);
                prefetch(&self.ports[port as usize].up);
            }
            Event::Wake { port } => {
                prefetch(&self.ports[port as usize].busy_until);
            }
            _ => {}
        }
    }

    /// Handles `ev`, with the port it concerns (for the run's own events: the run) as the
    /// creator of whatever it schedules.
    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::FrameStart { port, pkt } => {
                self.creator = port;
                self.frame_start(port, pkt);
            }
            Event::Arrive { port, pkt } => {
                self.creator = port;
                self.arrive(port, pkt);
            }
            Event::Wake { port } => {
                self.creator = port;
                let p = &mut self.ports[port as usize];
                if p.wake_at == self.now {
                    p.wake_at = Time::MAX;
                }
                self.try_send(port);
            }
            Event::PfcRefresh { port, prio } => {
                self.creator = port;
                self.pfc_refresh(port, prio);
            }
            Event::FlowStart { flow } => {
                self.creator = self.flows[flow as usize].src_port;
                self.start_flow(flow);
            }
            Event::CcTimer { flow } => {
                self.creator = self.flows[flow as usize].src_port;
                self.cc_timer(flow);
            }
            Event::Rto { flow } => {
                self.creator = self.flows[flow as usize].src_port;
                self.rto(flow);
            }
            Event::FgfcResume { flow } => {
                self.creator = self.flows[flow as usize].src_port;
                self.fgfc_resume(flow);
            }
            Event::CnpPoll { flow } => {
                let dst = self.flows[flow as usize].dst;
                let Slot::Host(h) = self.slots[dst as usize] else {
                    unreachable!("validated: flow endpoints are hosts")
                };
                self.creator = self.hosts[h as usize].port;
                self.cnp_poll(h, flow);
            }
            Event::CreditUpdate { port } => {
                self.creator = port;
                self.credit_timer(port);
            }
            Event::ChannelRelease { port } => {
                self.creator = port;
                self.channel_release(port);
            }
            Event::NicDrain { host } => {
                self.creator = self.hosts[host as usize].port;
                self.nic_drain(host);
            }
            Event::LinkDown { failure } => {
                self.run_event();
                self.link_down(failure);
            }
            Event::Sample => {
                self.run_event();
                self.sample();
            }
            Event::Stop => {
                self.run_event();
                self.stop = Some(StopReason::StopTime);
            }
        }
    }

    /// One of the run's own events is being handled.
    fn run_event(&mut self) {
        self.run_events += 1;
        self.creator = self.run_creator();
    }

    /// The first bit of a frame reached switch port `port`. Link errors are decided here: a
    /// corrupted frame is discarded as it starts to arrive (a chip would drop it at its
    /// last bit, after holding its cells for one frame time; that holding is not modelled).
    fn frame_start(&mut self, port: u32, pkt: u32) {
        let p = &self.ports[port as usize];
        if !p.up {
            self.drop_packet(pkt, "link_down");
            return;
        }
        let error_rate = p.error_rate;
        if error_rate > 0.0
            && rand::Rng::gen::<f64>(&mut self.rng_errors[port as usize]) < error_rate
        {
            self.drop_packet(pkt, "corrupted");
            return;
        }
        match self.slots[p.node as usize] {
            Slot::Switch(s) => self.switch_receive(s, port, pkt),
            Slot::Host(_) => unreachable!("frames start at switch ports only"),
        }
    }

    /// A frame finished arriving at `port` (a host port, a PFC frame anywhere, or any frame
    /// at a switch admitting at the last bit).
    fn arrive(&mut self, port: u32, pkt: u32) {
        let p = &self.ports[port as usize];
        let error_rate = p.error_rate;
        let kind = self.arena.get(pkt).kind;
        if !p.up {
            // The link failed while the frame was on the wire.
            if kind.is_link_control() {
                self.arena.free(pkt);
            } else {
                self.drop_packet(pkt, "link_down");
            }
            return;
        }
        if kind.is_link_control() {
            return match kind {
                Kind::Pfc => self.receive_pfc(port, pkt),
                Kind::ChannelAck => self.receive_channel_acks(port, pkt),
                Kind::Fgfc => self.receive_fgfc(port, pkt),
                _ => self.receive_fcp(port, pkt),
            };
        }
        if error_rate > 0.0
            && rand::Rng::gen::<f64>(&mut self.rng_errors[port as usize]) < error_rate
        {
            self.drop_packet(pkt, "corrupted");
            return;
        }
        match self.slots[p.node as usize] {
            Slot::Host(h) => {
                if self.credit_links {
                    self.credit_consumed(port, pkt);
                }
                self.host_receive(h, pkt)
            }
            Slot::Switch(s) => self.switch_receive(s, port, pkt), // `Admission::LastBit`
        }
    }

    /// A link fails: its ports stop, what they queue is dropped, routes avoid it.
    fn link_down(&mut self, failure: u32) {
        let f = &self.cfg.link_failures[failure as usize];
        let (a, b) = (f.a, f.b);
        let Some(link) = self
            .cfg
            .topology
            .links
            .iter()
            .enumerate()
            .position(|(i, l)| {
                self.link_up[i] && ((l.a == a && l.b == b) || (l.a == b && l.b == a))
            })
        else {
            return; // already down
        };
        self.link_up[link] = false;
        let (pa, pb) = self.link_ports[link];
        for port in [pa, pb] {
            if !self.mine(self.ports[port as usize].node) {
                continue;
            }
            // What the failure sets off at a port is that port's doing.
            self.creator = port;
            self.ports[port as usize].up = false;
            while let Some(pkt) = self.ports[port as usize].ctrl.pop_front(&self.arena) {
                let pk = self.arena.get(pkt);
                if pk.kind == Kind::Pfc {
                    let class = port::pfc_class(pk);
                    self.ports[port as usize].pfc_dequeued(class);
                    self.arena.free(pkt);
                } else if pk.kind == Kind::Fcp {
                    self.fcp_lost(port, pkt);
                } else {
                    self.drop_packet(pkt, "link_down");
                }
            }
            let node = self.ports[port as usize].node;
            if let Slot::Switch(s) = self.slots[node as usize] {
                let local = self.ports[port as usize].local;
                for q in 0..PRIORITIES {
                    self.flush_egress_queue(s, port, q, "link_down");
                }
                self.drop_partial_receptions(s, local);
            }
        }
        // Without the connectivity requirement only allocation can fail, and tables of the
        // same size were allocated when the run was built.
        self.routes =
            Routes::compute_with(&self.cfg.topology, self.cfg.routing, &self.link_up, false)
                .unwrap_or_else(|e| panic!("recomputing routes after a link failure: {e}"));
    }

    /// Drops the frames switch `s` is still receiving on its failed local port `in_local`:
    /// admitted at their first bit, they will never be complete.
    fn drop_partial_receptions(&mut self, s: u32, in_local: u16) {
        let now = self.now;
        for gp in self.switches[s as usize].ports() {
            let gp = gp as usize;
            let out_local = self.ports[gp].local;
            for q in 0..8usize {
                let partial = |pk: &Packet| pk.in_port == in_local && pk.ready_at > now;
                let mut removed = self.ports[gp].queues[q]
                    .fifo
                    .remove_where(&mut self.arena, partial);
                removed.extend(self.arbitration.remove_where(
                    &mut self.arena,
                    (gp as u32, q),
                    partial,
                ));
                if !removed.is_empty() {
                    // The head may have been one of them; the port must say so before the
                    // releases below can set off a transmission.
                    let p = &mut self.ports[gp];
                    p.head_removed(q, &self.arena);
                    let gate = flow_channel::channel_gate(self.channels.as_deref(), s, self.now);
                    self.arbitration
                        .refill(&mut self.arena, (gp as u32, p), q, gate);
                }
                for pkt in removed {
                    let pk = *self.arena.get(pkt);
                    self.ports[gp].queues[q].bytes -= pk.size;
                    self.switch_release(
                        s,
                        (pk.in_port, pk.prio),
                        (out_local, q as u8),
                        pk.size,
                        pk.placement(),
                    );
                    self.drop_packet(pkt, "link_down");
                }
            }
        }
    }

    /// Drops every packet of egress queue `q` of switch `s`'s global port `port`, releasing
    /// its cells, counted under `cause`.
    fn flush_egress_queue(&mut self, s: u32, port: u32, q: usize, cause: &str) {
        let local = self.ports[port as usize].local;
        loop {
            let p = &mut self.ports[port as usize];
            // A class with sub-queues stages its next packet once its staged one is gone.
            let gate = flow_channel::channel_gate(self.channels.as_deref(), s, self.now);
            self.arbitration.refill(&mut self.arena, (port, p), q, gate);
            let Some(pkt) = p.queues[q].fifo.pop_front(&self.arena) else {
                break;
            };
            let pk = *self.arena.get(pkt);
            self.ports[port as usize].queues[q].bytes -= pk.size;
            self.switch_release(
                s,
                (pk.in_port, pk.prio),
                (local, q as u8),
                pk.size,
                pk.placement(),
            );
            self.drop_packet(pkt, cause);
        }
        self.ports[port as usize].nonempty &= !(1 << q);
    }

    /// Counts a dropped packet and frees it.
    fn drop_packet(&mut self, pkt: u32, cause: &str) {
        let p = self.arena.get(pkt);
        if p.kind == Kind::Data {
            self.ledger.on_dropped(u64::from(p.payload));
        }
        *self.drops.entry(cause.to_string()).or_insert(0) += 1;
        self.arena.free(pkt);
    }

    /// Takes a time-series sample and schedules the next one.
    fn sample(&mut self) {
        for s in &self.switches {
            if !self.mine(s.node) {
                continue;
            }
            let cell = u64::from(s.mmu.cell_bytes());
            self.buffer_samples.push(BufferSample {
                time: self.now,
                node: s.node,
                used: s.mmu.used_cells() * cell,
                headroom: s.mmu.headroom_used_cells() * cell,
            });
            for gp in s.ports() {
                let p = &self.ports[gp as usize];
                for (q, bytes) in p.queues.iter().map(|eq| eq.bytes).enumerate() {
                    if bytes > 0 {
                        self.queue_samples.push(QueueSample {
                            time: self.now,
                            node: s.node,
                            port: p.local,
                            queue: q as u8,
                            bytes: u64::from(bytes),
                        });
                    }
                }
            }
        }
        for h in &self.hosts {
            if !self.mine(h.node) {
                continue;
            }
            for &host::NicEntry { flow: f, .. } in &h.active {
                let fl = &self.flows[f as usize];
                self.rate_samples.push(RateSample {
                    time: self.now,
                    flow: f,
                    gbps: fl.cc.rate().as_gbps_f64(),
                });
            }
        }
        self.sample_marks();
        if let Some(iv) = self.cfg.record.sample_interval {
            self.schedule(self.now + iv, Event::Sample);
        }
    }

    /// Gives every flow its congestion control, window and notification point, from its
    /// path's base RTT and bandwidth-delay product or, with a global window, the largest
    /// of them over all flows.
    fn configure_congestion_control(&mut self, mut base_paths: Vec<BasePath>) {
        let host = &self.cfg.host;
        if host.window.global {
            let rtt = base_paths.iter().map(|b| b.rtt).max().unwrap_or(Time::ZERO);
            let bdp = base_paths.iter().map(|b| b.bdp).max().unwrap_or(0);
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
    fn ideal_fct(&self, f: usize) -> (Time, BasePath) {
        let fl = &self.flows[f];
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
        let mut rtt = Time::ZERO;
        for &gp in &path {
            let p = &self.ports[gp as usize];
            t += p.rate.serialization(first) + p.delay;
            bottleneck = bottleneck.min(p.rate);
            rtt += p.delay + p.delay + p.rate.serialization(h.mtu_payload);
        }
        t += bottleneck.serialization(rest);
        let ack = h.ack_bytes + overhead;
        for &gp in &path {
            let p = &self.ports[gp as usize];
            t += p.rate.serialization(ack) + p.delay;
        }
        let base = BasePath {
            line_rate: self.ports[fl.src_port as usize].rate,
            rtt,
            bdp: bottleneck.bytes_in(rtt),
        };
        (t, base)
    }

    /// Transmitting ports a packet with `hash` takes from `first` (a host port) to `dst`.
    fn path(&self, first: u32, dst: NodeId, hash: u64) -> Vec<u32> {
        let mut path = vec![first];
        let mut port = first;
        for _ in 0..self.slots.len() {
            let next_node = self.ports[self.ports[port as usize].peer as usize].node;
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

    /// Checks the conservation invariants; `Err` describes the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        Self::check_parts(&[self])
    }

    /// Checks the conservation invariants of a run made of `parts` (between windows, when
    /// every frame is in some part's arena).
    fn check_parts(parts: &[&Simulation]) -> Result<(), String> {
        let mut l = ByteLedger::default();
        for p in parts {
            l.absorb(&p.ledger);
        }
        if l.sent != l.delivered + l.dropped + l.in_flight {
            return Err(format!(
                "payload not conserved: sent {} != delivered {} + dropped {} + in flight {}",
                l.sent, l.delivered, l.dropped, l.in_flight
            ));
        }
        let live: u64 = parts
            .iter()
            .flat_map(|p| p.arena.live())
            .filter(|p| p.kind == Kind::Data)
            .map(|p| u64::from(p.payload))
            .sum();
        if live != l.in_flight {
            return Err(format!(
                "in-flight ledger {} != live data payload {live}",
                l.in_flight
            ));
        }
        for (p, port) in parts
            .iter()
            .flat_map(|p| p.ports.iter().map(move |q| (p, q)))
        {
            if p.mine(port.node) {
                port.check_pfc_queue(&p.arena)?;
            }
        }
        for p in parts {
            p.arbitration
                .check(|port, q| p.ports[port as usize].queues[q].fifo.is_empty())?;
        }
        for (p, h) in parts
            .iter()
            .flat_map(|p| p.hosts.iter().map(move |h| (p, h)))
        {
            if p.mine(h.node) {
                h.check_unheld()?;
            }
        }
        for (p, i) in parts
            .iter()
            .flat_map(|p| (0..p.switches.len()).map(move |i| (p, i)))
            .filter(|(p, i)| p.mine(p.switches[*i].node))
        {
            p.check_queued_by_ingress(i as u32)?;
            p.check_channels()?;
            p.check_ugal(i as u32)?;
            p.check_credit_buffers(i as u32)?;
            let s = &p.switches[i];
            s.mmu
                .check_conservation()
                .map_err(|e| format!("switch {}: {e}", s.node))?;
            let queued: u64 = p
                .held_packets(i as u32)
                .map(|pk| u64::from(p.arena.get(pk).placement().cells))
                .sum();
            if queued != s.mmu.used_cells() {
                return Err(format!(
                    "switch {}: queued packets hold {queued} cells, MMU counts {}",
                    s.node,
                    s.mmu.used_cells()
                ));
            }
        }
        Ok(())
    }

    /// Ends the run (if it has not ended) and collects the results.
    pub fn finish(mut self) -> RunResults {
        let now = self.now;
        let mut ports = Vec::with_capacity(self.ports.len());
        let log_credit = !self.cfg.record.omit_credit_log;
        for p in &mut self.ports {
            let mut st = PortStats {
                node: p.node,
                port: p.local,
                peer: 0,
                pause_sent: p.pause_sent,
                resume_sent: p.resume_sent,
                paused_time: [Time::ZERO; 8],
                port_pause_sent: p.port_pause_sent,
                port_resume_sent: p.port_resume_sent,
                pfc_merged: p.pfc_merged,
                port_paused_time: p
                    .fc
                    .pfc_mut()
                    .map_or(Time::ZERO, |t| t.port_paused_time(now)),
                pause_episodes: [0; 8],
                victim_pauses: [0; 8],
                port_pause_episodes: 0,
                port_victim_pauses: 0,
                tx_frames: p.tx_frames,
                tx_bytes: p.tx_bytes,
                peak_queue: p.queues.map(|q| u64::from(q.peak)),
                credit_blocked_time: [Time::ZERO; 8],
                credit_updates: [0; 8],
                credit_peak_bytes: [0; 8],
                credit_waits: [0; 8],
                credit_victim_waits: [0; 8],
            };
            if let Some(timers) = p.fc.pfc_mut() {
                for prio in 0..8u8 {
                    st.paused_time[usize::from(prio)] = timers.paused_time(now, prio);
                }
            }
            if let Some(c) = p.fc.credit() {
                let block = u64::from(c.block_bytes());
                for vl in 0..c.vls() {
                    let v = usize::from(vl);
                    st.credit_blocked_time[v] = c.tx(vl).blocked_time(now);
                    st.credit_peak_bytes[v] = u64::from(c.rx(vl).peak()) * block;
                    st.credit_waits[v] = c.tx(vl).episodes();
                    // An episode still open ends with the run.
                    match c.tx(vl).last_block() {
                        Some((start, Time::MAX)) if log_credit => {
                            self.credit_blocks.push(CreditBlock {
                                start,
                                end: now,
                                node: p.node,
                                is_switch: matches!(self.slots[p.node as usize], Slot::Switch(_)),
                                port: p.local,
                                vl,
                            })
                        }
                        _ => {}
                    }
                }
                for (n, sent) in st.credit_updates.iter_mut().zip(c.fcp_sent()) {
                    *n = *sent;
                }
            }
            ports.push(st);
        }
        for ((st, p), e) in ports.iter_mut().zip(&self.ports).zip(&self.pause_episodes) {
            st.peer = self.ports[p.peer as usize].node;
            st.pause_episodes.copy_from_slice(&e.decided[..8]);
            st.victim_pauses.copy_from_slice(&e.victim[..8]);
            st.port_pause_episodes = e.decided[8];
            st.port_victim_pauses = e.victim[8];
            st.credit_victim_waits = e.credit_victim;
        }
        let switches = self
            .switches
            .iter_mut()
            .map(|s| s.stats(now))
            .collect::<Vec<SwitchStats>>();
        let flows = self
            .flows
            .iter()
            .map(|f| FlowRecord {
                id: f.id,
                src: self.cfg.flows[f.id as usize].src.0,
                dst: f.dst,
                prio: f.prio,
                size: f.size,
                start: f.start,
                finish: f.finish,
                ideal_fct: f.ideal_fct,
                dport: f.dport,
                sport: f.sport,
                retransmitted: f.retransmitted,
                delivered: f.rcv_nxt,
            })
            .collect();
        let watchdog = self.watchdog_counts(now);
        let marking = self.marking_results();
        let channels = self.channel_stats();
        let mut r = RunResults {
            flows,
            pfc_sent: self.pfc_sent,
            pfc_received: self.pfc_received,
            pfc_log: !self.cfg.record.omit_pfc_log,
            credit_blocks: self.credit_blocks,
            credit_log: log_credit,
            ports,
            switches,
            drops: self.drops,
            lossless_drops: self.lossless_drops,
            queue_samples: self.queue_samples,
            buffer_samples: self.buffer_samples,
            rate_samples: self.rate_samples,
            events: self.events,
            end_time: now,
            stop_reason: self.stop,
            bytes: self.ledger,
            arena_slots: self.arena.capacity_used(),
            deadlock: None,
            watchdog,
            marking,
            mark_samples: std::mem::take(&mut self.marking.samples),
            channels,
        };
        r.sort_records();
        r
    }
}

/// Asks the CPU to bring `r`'s cache line in without waiting for it. A plain read of the
/// line (`black_box`) would hold up retirement until the line arrives, once the reorder
/// window fills, and the event loop would pay the miss anyway; a prefetch costs one
/// instruction.
#[inline(always)]
pub(super) fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: PREFETCHT0 is a hint: it loads nothing into a register and never faults
    // (here the address is a live reference anyway); SSE is in every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (r as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
