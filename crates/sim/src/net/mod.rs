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
//! - `port_table`, `flow_table`: the ports and the flows a run (or a part of one) keeps,
//!   found by their numbers in the whole network;
//! - `features`: the forwarding path compiled once for runs without the optional link and
//!   queue features (credits, channels, arbitration, class maps, watchdogs) and once for
//!   any run;
//! - `build`: the arenas, mechanisms and first events of a run, from its configuration;
//! - `link_failure`: links that go down during a run, and what they drop;
//! - `report`: samples while running, the conservation checks, and the results;
//! - [`parallel`]: a run split into parts that advance on several threads, with the results
//!   of one simulation.
//!
//! Invariants checked by [`Simulation::check_invariants`]: payload bytes sent = delivered +
//! dropped + in flight; every switch's MMU conserves cells and its resident cells equal the
//! cells of the packets it queues; no packet is lost without being counted.

mod ack_frames;
mod arbitration;
mod build;
mod channel_wait;
mod classes;
mod credit;
mod deadlock;
mod features;
mod fgfc;
mod flow_channel;
mod flow_table;
mod footprint;
mod hop_credit;
pub mod host;
mod injection;
mod link_failure;
mod marking;
pub mod packet;
pub mod parallel;
pub mod port;
mod port_table;
mod report;
mod reroute;
pub mod switch;
mod ugal;
mod victim;
mod watchdog;

use crate::config::{ConfigError, SimConfig};
use crate::engine::{self, CalendarQueue, Event, EventQueue, PackedEvent};
use crate::results::{
    BufferSample, ByteLedger, CreditBlock, LosslessDrop, PfcRecord, QueueSample, RateSample,
    RunResults, StopReason,
};
use crate::routing::{self, Routes};
use features::{Features, General, Lean};
use headroom_mech::ecn::RedConfig;
use headroom_mech::pfcwd::QueueWatchdog;
use headroom_mech::units::Time;
use headroom_mech::PRIORITIES;
use host::Host;
use packet::{Arena, Kind};
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
    /// The ports: all of them, or in a part of a partitioned run its own nodes'.
    ports: port_table::PortTable,
    switches: Vec<Switch>,
    hosts: Vec<Host>,
    /// The flows: all of them, or in a part of a partitioned run those its hosts send or
    /// receive.
    flows: flow_table::FlowTable,
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
    /// Per port held (`PortTable::held_index`): its link's corruption draws as a receiver.
    rng_errors: Vec<Pcg64>,
    /// Who is scheduling events now (see [`engine::tiebreak`]): the port whose event is
    /// being handled, or [`Simulation::run_creator`] for the run's own events.
    creator: u32,
    /// The run's count as a creator (its name in keys: one past the last port); each
    /// port's is `Port::count` (its name there: its canonical index, so that keys do not
    /// depend on how the run is split).
    run_count: engine::CreatorCount,
    /// Tie-break key of the event being handled.
    cur_key: u64,
    /// In a partitioned run: this simulation's part, and every node's part (empty: the
    /// simulation is the whole run).
    part: u16,
    node_part: Arc<[u16]>,
    /// Frames sent to other parts, for the driver to deliver: by receiving part (grown
    /// when a part first sends to another).
    outbox: Vec<parallel::Mail>,
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
    /// Per port held (`PortTable::held_index`): pause episodes decided there, victim pauses
    /// of its peer judged there, its victim waits for credit.
    pause_episodes: Vec<victim::PauseEpisodes>,
    /// Per port held (`PortTable::held_index`), with the PFC watchdog on: each egress
    /// queue's watchdog (empty when it is off).
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
    /// Per port held (`PortTable::held_index`) × 8 + VL, with credit links: the egress the
    /// switch blamed when the VL buffer last filled (`credit::NO_CULPRIT`: none), carried
    /// upstream by its FCPs.
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
    /// The run uses none of the optional features and takes the lean copy of the
    /// forwarding path (`features`); fixed when the simulation is built.
    lean: bool,
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
    /// The part node `node` belongs to.
    fn part_of_node(&self, node: u32) -> u16 {
        self.node_part.get(node as usize).copied().unwrap_or(0)
    }

    /// Whether node `node` is this simulation's to run.
    fn mine(&self, node: u32) -> bool {
        self.part_of_node(node) == self.part
    }

    /// Hands a frame for a port of another part to the driver (it arrives no earlier than
    /// one link delay from now, after the driver has delivered it). Out of line: most
    /// frames stay in their part.
    #[inline(never)]
    fn send_remote(&mut self, time: Time, event: Event, pkt: u32) {
        let key = self.next_key(&event);
        let (port, first_bit) = match event {
            Event::FrameStart { port, .. } => (port, true),
            Event::Arrive { port, .. } => (port, false),
            _ => unreachable!("only frames cross between parts"),
        };
        let to = usize::from(self.part_of_node(self.ports.wire(port).node));
        if self.outbox.len() <= to {
            self.outbox.resize_with(to + 1, parallel::Mail::default);
        }
        let mail = &mut self.outbox[to];
        let packet = *self.arena.get(pkt);
        let int = match self.arena.int(pkt) {
            Some(stack) => {
                mail.ints.push(*stack);
                // Fewer than 2^32 frames in a window's mail.
                (mail.ints.len() - 1) as u32
            }
            None => parallel::Remote::NO_INT,
        };
        let first_ack = mail.acks.len() as u32;
        let acks = match self.channels.as_deref_mut() {
            Some(fc) if packet.kind == Kind::ChannelAck => {
                fc.hand_over_acks(port, packet.payload, &mut mail.acks)
            }
            _ => 0,
        };
        self.arena.free(pkt);
        mail.frames.push(parallel::Remote {
            time,
            key,
            port,
            first_bit,
            packet,
            int,
            acks: (first_ack, acks),
        });
    }

    /// Schedules the frames another part sent to this part's ports.
    fn receive_mail(&mut self, mail: &parallel::Mail) {
        for r in &mail.frames {
            let pkt = self.arena.alloc(r.packet);
            if let (Some(int), Some(stack)) =
                (self.arena.int_mut(pkt), mail.ints.get(r.int as usize))
            {
                *int = *stack;
            }
            if let (Some(fc), (first, n @ 1..)) = (self.channels.as_deref_mut(), r.acks) {
                fc.take_over_acks(r.port, &mail.acks[first as usize..(first + n) as usize]);
            }
            let event = if r.first_bit {
                Event::FrameStart { port: r.port, pkt }
            } else {
                Event::Arrive { port: r.port, pkt }
            };
            self.queue.push(r.time, r.key, event);
        }
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
        // Transmissions end before frames arrive at the same instant: a switch releases
        // the departing frame's cells before it admits one arriving then.
        let rank = u32::from(!matches!(event, Event::Wake { .. }));
        // A creator would need 2^32 events at one instant for the count's wrap to matter.
        // The run's creator id is past every port's, so the lookup that finds a port's
        // count also tells the run's own events apart.
        match self.ports.get_mut(self.creator) {
            Some(p) => p.count.next_key(rank),
            None => {
                debug_assert_eq!(self.creator, self.run_creator(), "a port of another part");
                self.run_count.next_key(rank)
            }
        }
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
        (self.finished_flows, self.cfg.flows.len())
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
        debug_assert!(!self.lean || self.uses_no_optional_feature());
        if self.lean {
            self.run_events::<Lean>(limit, key)
        } else {
            self.run_events::<General>(limit, key)
        }
    }

    /// [`Simulation::run_through`] on the copy of the forwarding path for features `F`.
    fn run_events<F: Features>(&mut self, limit: Time, key: u64) -> bool {
        while self.stop.is_none() {
            match self.queue.pop_through(limit, key) {
                Some((time, seq, event)) => {
                    if let Some(next) = self.queue.peek_loaded() {
                        self.touch(next);
                    }
                    debug_assert!(time >= self.now, "event in the past");
                    self.now = time;
                    self.cur_key = seq;
                    self.events += 1;
                    self.dispatch::<F>(event.unpack());
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
    fn touch(&self, ev: PackedEvent) {
        if let Some((port, pkt)) = ev.frame() {
            prefetch_address(self.arena.address(pkt));
            prefetch_address(self.ports.address(port));
        } else if let Some(port) = ev.wake() {
            prefetch_address(self.ports.address(port));
        }
    }

    /// Handles `ev`, with the port it concerns (for the run's own events: the run) as the
    /// creator of whatever it schedules.
    #[inline(always)]
    fn dispatch<F: Features>(&mut self, ev: Event) {
        match ev {
            Event::FrameStart { port, pkt } => {
                self.creator = port;
                self.frame_start::<F>(port, pkt);
            }
            Event::Arrive { port, pkt } => {
                self.creator = port;
                self.arrive::<F>(port, pkt);
            }
            Event::Wake { port } => {
                self.creator = port;
                let p = &mut self.ports[port];
                if p.wake_at == self.now {
                    p.wake_at = Time::MAX;
                }
                self.try_send_as::<F>(port);
            }
            Event::PfcRefresh { port, prio } => {
                self.creator = port;
                self.pfc_refresh(port, prio);
            }
            Event::FlowStart { flow } => {
                self.creator = self.flows[flow].src_port;
                self.start_flow(flow);
            }
            Event::CcTimer { flow } => {
                self.creator = self.flows[flow].src_port;
                self.cc_timer(flow);
            }
            Event::Rto { flow } => {
                self.creator = self.flows[flow].src_port;
                self.rto(flow);
            }
            Event::FgfcResume { flow } => {
                self.creator = self.flows[flow].src_port;
                self.fgfc_resume(flow);
            }
            Event::CnpPoll { flow } => {
                let dst = self.flows[flow].dst;
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
    fn frame_start<F: Features>(&mut self, port: u32, pkt: u32) {
        let p = &self.ports[port];
        let (lossy, node) = (p.lossy, p.node);
        if !p.up {
            self.drop_packet(pkt, "link_down");
            return;
        }
        if lossy && self.corrupted(port) {
            self.drop_packet(pkt, "corrupted");
            return;
        }
        match self.slots[node as usize] {
            Slot::Switch(s) => self.switch_receive::<F>(s, port, pkt),
            Slot::Host(_) => unreachable!("frames start at switch ports only"),
        }
    }

    /// A frame finished arriving at `port` (a host port, a PFC frame anywhere, or any frame
    /// at a switch admitting at the last bit).
    fn arrive<F: Features>(&mut self, port: u32, pkt: u32) {
        let p = &self.ports[port];
        let (lossy, node) = (p.lossy, p.node);
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
        if lossy && self.corrupted(port) {
            self.drop_packet(pkt, "corrupted");
            return;
        }
        match self.slots[node as usize] {
            Slot::Host(h) => {
                if F::OPTIONAL && self.credit_links {
                    self.credit_consumed(port, pkt);
                }
                self.host_receive(h, pkt)
            }
            Slot::Switch(s) => self.switch_receive::<F>(s, port, pkt), // `Admission::LastBit`
        }
    }

    /// Drops every packet of egress queue `q` of switch `s`'s global port `port`, releasing
    /// its cells, counted under `cause`.
    fn flush_egress_queue(&mut self, s: u32, port: u32, q: usize, cause: &str) {
        let local = self.ports[port].local;
        loop {
            let p = &mut self.ports[port];
            // A class with sub-queues stages its next packet once its staged one is gone.
            let gate = flow_channel::channel_gate(self.channels.as_deref(), s, self.now);
            self.arbitration.refill(&mut self.arena, (port, p), q, gate);
            let Some(pkt) = p.queues[q].fifo.pop_front(&self.arena) else {
                break;
            };
            let pk = *self.arena.get(pkt);
            self.ports[port].queues[q].bytes -= pk.size;
            self.switch_release::<General>(
                s,
                (pk.in_port, pk.prio),
                (local, q as u8),
                pk.size,
                pk.placement(),
            );
            self.drop_packet(pkt, cause);
        }
        self.ports[port].nonempty &= !(1 << q);
    }

    /// Whether the frame arriving now at `port`, whose link drops frames at random
    /// (`Port::lossy`), is corrupted: one draw from the port's stream.
    fn corrupted(&mut self, port: u32) -> bool {
        let error_rate = self.ports[port].error_rate;
        rand::Rng::gen::<f64>(&mut self.rng_errors[self.ports.held_index(port)]) < error_rate
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
}

/// Asks the CPU to bring `r`'s cache line in without waiting for it. A plain read of the
/// line (`black_box`) would hold up retirement until the line arrives, once the reorder
/// window fills, and the event loop would pay the miss anyway; a prefetch costs one
/// instruction.
#[inline(always)]
pub(super) fn prefetch<T>(r: &T) {
    prefetch_address(r as *const T);
}

/// [`prefetch`] of an address that need not be valid: a table's base pointer moved by an
/// index with `wrapping_add`, so that a look ahead costs no bounds check (an address past
/// the table's end only fetches a line for nothing).
#[inline(always)]
pub(super) fn prefetch_address<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: PREFETCHT0 is a hint: it loads nothing into a register and never faults,
    // whatever the address; SSE is in every x86_64 target.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
