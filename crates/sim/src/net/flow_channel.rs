//! The flow-channel fabric's driver: every switch keeps its flow channels in a
//! [`FlowChannels`] machine, the simulator feeds it the data frames it receives and
//! forwards and carries its acknowledgements back, hop by hop, in ACK frames.
//!
//! - A data frame arriving at a switch names its channel: the edge table's match key if it
//!   comes from a host, else the id its upstream switch gave it on the link. A channel
//!   with packets here or in flight pins the frame to its path; a new one is routed by
//!   load (or by hash), then admitted by the MMU as any frame is. A frame for which no
//!   channel can be made (a full table) waits on its input port with the frames behind
//!   it (`channel_wait`): a full table backs up the link feeding it and in the end pauses
//!   it.
//! - When a frame leaves an egress queue its channel counts it; one leaving towards a host
//!   is delivered and acknowledged at once. An ACK goes to the input port its channel came
//!   in on: from a host it is home (the ingress edge); from a switch it joins the ACKs
//!   waiting to go upstream on that link, which leave together in ACK frames
//!   (`ack_frames`).
//! - A data frame dropped on arrival at a switch (a lossy class's full buffer) is
//!   acknowledged upstream at once, so its channel is released there as well.
//! - With endpoint congestion management (`[fabric.flow_channels.endpoint]`), each egress
//!   edge output watches what it queues towards its host ([`EgressMonitor`]). A frame
//!   joining a congested one whose channel does not yet carry that severity sends an
//!   endpoint-congestion ACK of no units upstream at once; a frame leaving it is
//!   acknowledged with the ongoing-congestion flag while the output is congested, else
//!   normally (which clears the severity). Every hop stores the severity the ACKs bring in
//!   the channel, and its egress arbitration holds a flow back while its channel has as
//!   much in flight as the severity's injection limit allows ([`channel_gate`]); an ACK
//!   for a channel with frames queued here looks again at the flows held at its output.
//!   With a `release_delay`, an ingress edge holds a flow of the highest severity until
//!   that long after its previous ACK came home, and a `ChannelRelease` event on its
//!   output looks at the held flows again then.
//!
//! Invariants (checked by `Simulation::check_invariants`, through `checks`, which also
//! gathers the layer's statistics at the end of a run): every switch's tables keep
//! theirs ([`FlowChannels::check`]) and the machines never refused an operation the
//! driver should not have asked for; a waiting frame is counted by its switch's MMU like a
//! queued one. Every node's channel state changes only in its own part of a partitioned
//! run, and the channels in use are counted per part (the driver adds them up to end the
//! run: `Partitioned::drain`). A flow held back has data of its
//! channel, or of its host port under an injection limit, in flight (so an ACK will come to
//! let it go), or waits out a release delay, or is held for a reroute with a frame staged.

mod checks;

use super::ack_frames::{AckEntry, PendingAcks};
use super::channel_wait::ChannelWaits;
use super::features::General;
use super::fgfc::FgfcEdges;
use super::hop_credit::HopCredits;
use super::injection::EdgeInjection;
use super::packet::{Kind, Packet};
use super::reroute::Overload;
use super::ugal::Ugal;
use super::{Simulation, Slot};
use crate::config::{ChannelRouting, EdgeMatch, FlowChannelParams};
use crate::engine::Event;
use crate::results::{ChannelStats, RerouteStats};
use crate::routing;
use crate::topology::NodeId;
use headroom_mech::endpoint_congestion::{EgressMonitor, Watermarks};
use headroom_mech::flow_channel::FlowChannelConfig;
use headroom_mech::flow_channel::{
    AckSignal, AckUpstream, Arrival, FlowChannelError, FlowChannels,
};
use headroom_mech::units::Time;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A channel at a switch: the switch, its input port, the channel's id there.
pub(super) type ChannelKey = (u32, u16, u16);

/// Channels in use at one switch, over time.
#[derive(Clone, Copy, Debug, Default)]
struct Occupancy {
    channels: u32,
    peak: u32,
    since: Time,
    /// Channels × picoseconds until `since`.
    area: u128,
}

impl Occupancy {
    fn change(&mut self, now: Time, up: bool) {
        self.area += u128::from(self.channels) * u128::from((now - self.since).as_ps());
        self.since = now;
        if up {
            self.channels += 1;
            self.peak = self.peak.max(self.channels);
        } else {
            self.channels -= 1;
        }
    }
}

/// The flow-channel layer of a run.
#[derive(Debug)]
pub(super) struct ChannelFabric {
    pub(super) params: FlowChannelParams,
    /// Per switch: its tables.
    pub(super) tables: Vec<FlowChannels>,
    /// Per switch: its channels in use over time.
    occupancy: Vec<Occupancy>,
    /// Per global port: ACKs waiting to go upstream on its link.
    pub(super) pending: Vec<PendingAcks>,
    /// Per global port: the ACKs of the ACK frames on their way to it, oldest first (each
    /// frame carries how many are its own).
    pub(super) wire: Vec<VecDeque<AckEntry>>,
    /// Frames waiting for a channel.
    pub(super) waits: ChannelWaits,
    /// Channels in use, all switches.
    in_use: u64,
    /// The flows are all done: the run ends when the last channel is released.
    draining: bool,
    pub(super) stats: ChannelStats,
    /// The first operation a table refused that the driver should not have asked for.
    fault: Option<String>,
    /// Bytes on the wire of the largest data frame (what a frame start may hold ACKs for).
    pub(super) frame_bytes: u64,
    /// Per global port, with endpoint congestion management: what it queues towards its
    /// host, if it leads to one (empty otherwise).
    monitors: Vec<EgressMonitor>,
    /// Fine-grained flow control at the ingress edges, if on.
    pub(super) fgfc: Option<FgfcEdges>,
    /// Per-flow hop-by-hop credits, if on.
    pub(super) hop: Option<HopCredits>,
    /// Non-minimal routing (UGAL), if on.
    pub(super) ugal: Option<Ugal>,
    /// The ingress edges' injection limits, if on (set by the run's builder, which knows
    /// the ports).
    pub(super) injection: Option<EdgeInjection>,
    /// With a release delay: when the last ACK of data came home to each channel of an
    /// ingress edge, by (switch, input port, id); an entry lives while its channel does.
    edge_acked: FxHashMap<(u32, u16, u16), Time>,
    /// What reroutes did.
    pub(super) reroutes: RerouteStats,
    /// The channels held for a reroute: their destination host and the overloaded output
    /// their move must avoid.
    pub(super) reroute_holds: FxHashMap<ChannelKey, (u32, Overload)>,
    /// Per global port: until when it asks for no other reroute, and the channel it asked
    /// for last (empty without reroutes).
    pub(super) reroute_quiet: Vec<(Time, ChannelKey)>,
    /// The channels an output asked to move, by channel at the asking switch: their
    /// output, which may ask again once they are released.
    pub(super) reroute_asked: FxHashMap<ChannelKey, u32>,
}

impl ChannelFabric {
    /// Whether the release delay lets channel (`in_port`, `id`) of switch `s` go at `now`:
    /// always, except at an ingress edge at the highest severity until `release_delay`
    /// after its last ACK came home.
    fn released_by_now(&self, s: u32, (in_port, id): (u16, u16), now: Time) -> bool {
        let Some(endpoint) = self.params.endpoint else {
            return true;
        };
        if endpoint.release_delay == Time::ZERO {
            return true;
        }
        let severity = self.tables[s as usize]
            .input(in_port, id)
            .map_or(0, |c| c.ep_congestion);
        self.edge_acked
            .get(&(s, in_port, id))
            .and_then(|&acked| endpoint.release_at(severity, acked))
            .is_none_or(|at| now >= at)
    }

    /// The layer for `switches` switches of `ports_of[s]` ports each, `ports` ports in all,
    /// whose largest data frame takes `frame_bytes` on the wire.
    /// The fabric of switches with `ports_of` ports each (`ports` in all, hosts' too);
    /// `reserved`: the classes that keep an id of every link
    /// ([`FlowChannelConfig::reserved`]), and with classes per hop (`per_hop`) frames
    /// wait for channels in one lane per class.
    pub(super) fn new(
        params: FlowChannelParams,
        (ports_of, ports): (&[usize], usize),
        frame_bytes: u64,
        (per_hop, reserved): (bool, u8),
    ) -> Self {
        ChannelFabric {
            params,
            tables: ports_of
                .iter()
                .map(|&n| {
                    let config = FlowChannelConfig {
                        reserved,
                        ..params.tables()
                    };
                    FlowChannels::new(n, config)
                })
                .collect(),
            occupancy: vec![Occupancy::default(); ports_of.len()],
            pending: vec![PendingAcks::default(); ports],
            wire: vec![VecDeque::new(); ports],
            waits: ChannelWaits::new(ports, ports_of.len(), per_hop),
            in_use: 0,
            draining: false,
            stats: ChannelStats::default(),
            fault: None,
            frame_bytes,
            monitors: if params.endpoint.is_some() {
                vec![EgressMonitor::default(); ports]
            } else {
                Vec::new()
            },
            fgfc: params.fgfc.map(FgfcEdges::new),
            hop: params.hop_credits.map(HopCredits::new),
            ugal: None,
            injection: None,
            edge_acked: FxHashMap::default(),
            reroutes: RerouteStats::default(),
            reroute_holds: FxHashMap::default(),
            reroute_quiet: if params.reroute.is_some() {
                vec![(Time::ZERO, (u32::MAX, 0, 0)); ports]
            } else {
                Vec::new()
            },
            reroute_asked: FxHashMap::default(),
        }
    }

    pub(super) fn fault(&mut self, what: &str, e: FlowChannelError) {
        self.fault_text(&format!("{what}: {e}"));
    }

    /// Records the first thing that went wrong (reported by the invariant checks).
    pub(super) fn fault_text(&mut self, text: &str) {
        if self.fault.is_none() {
            self.fault = Some(text.to_string());
        }
    }

    /// What the ingress edge maps to one channel.
    pub(super) fn edge_match(&self) -> EdgeMatch {
        self.params.edge_match
    }

    /// The ingress edge's key of flow `flow` to host `dst` in traffic class `sl`: the flow
    /// itself, or its destination with the parts of the match (class, application) in the
    /// bits above a host id's. `apps`: every flow's application
    /// ([`crate::config::SimConfig::flow_apps`]).
    pub(super) fn flow_key(&self, flow: u32, dst: u32, sl: u8, apps: &[u8]) -> u64 {
        match self.params.edge_match {
            EdgeMatch::Flow => u64::from(flow),
            EdgeMatch::Destination { class, app } => {
                let mut key = u64::from(dst);
                if class {
                    key |= u64::from(sl) << 32;
                }
                if app {
                    key |= u64::from(apps.get(flow as usize).copied().unwrap_or(0)) << 40;
                }
                key
            }
        }
    }

    /// How the data frame `pk` names its channel on arrival (`from_switch`: on a link from
    /// another switch; `apps` as for [`ChannelFabric::flow_key`]).
    pub(super) fn arrival(&self, from_switch: bool, pk: &Packet, apps: &[u8]) -> Arrival {
        if from_switch {
            Arrival::Link(pk.channel)
        } else {
            Arrival::Edge(self.flow_key(pk.flow, pk.dst, pk.sl, apps))
        }
    }
}

/// The gate of switch `s`'s egress arbitration: with endpoint congestion management, a
/// data frame may leave only while its channel is within the injection limit its severity
/// sets, with hop-by-hop credits only while its channel, if metered, has credit, and with
/// injection limits only while the host port it came in on is within its limit; otherwise
/// (and for every other frame) always.
pub(super) fn channel_gate(
    channels: Option<&ChannelFabric>,
    s: u32,
    now: Time,
) -> impl Fn(&Packet) -> bool + '_ {
    let gated = channels.filter(|fc| {
        fc.params.endpoint.is_some()
            || fc.hop.is_some()
            || fc.injection.is_some()
            || fc.params.reroute.is_some()
    });
    move |pk: &Packet| match gated {
        Some(fc) if pk.kind == Kind::Data => {
            let table = &fc.tables[s as usize];
            let units = table.units(u64::from(pk.size));
            let within_limit = fc.params.endpoint.is_none_or(|endpoint| {
                table.may_forward((pk.in_port, pk.channel), units, |severity| {
                    endpoint.limit(severity)
                }) && fc.released_by_now(s, (pk.in_port, pk.channel), now)
            });
            within_limit
                && !(fc.params.reroute.is_some() && table.is_rerouting((pk.in_port, pk.channel)))
                && fc
                    .injection
                    .as_ref()
                    .is_none_or(|inj| inj.may_inject(s, pk.in_port, pk.flow, units))
                && fc
                    .hop
                    .as_ref()
                    .is_none_or(|hop| hop.may_forward((s, pk.in_port, pk.channel)))
        }
        _ => true,
    }
}

impl Simulation {
    /// The local egress port for the data frame `pk` arriving on global port `port` of
    /// switch `s` in a flow-channel fabric: its channel's, or for a new channel the next
    /// hop the routing picks (`None`: no route).
    #[inline(never)] // flow-channel fabrics only: out of the plain fabrics' receive path
    pub(super) fn channel_egress(&self, s: u32, port: u32, pk: &Packet) -> Option<u16> {
        let fc = self.channels.as_deref()?;
        let in_local = self.ports[port].local;
        let arrival = fc.arrival(self.ports[port].peer_is_switch, pk, &self.cfg.flow_apps);
        if let Some(out) = fc.tables[s as usize].pinned(in_local, arrival) {
            return Some(out);
        }
        let node = self.ports[port].node;
        if fc.params.routing == ChannelRouting::Ecmp {
            return self.egress_local(node, pk.dst, pk.hash);
        }
        let target = self.route_target(pk);
        self.least_loaded_hop(port, node, target, pk)
            .map(|(out, _)| out)
    }

    /// The least-loaded next hop from switch `node` towards host `target` for `pk`,
    /// arrived on global `port`, with room for a channel, from the one the hash picks on;
    /// with its load: (no room for a channel, bytes in the class queue it would join).
    pub(super) fn least_loaded_hop(
        &self,
        port: u32,
        node: u32,
        target: u32,
        pk: &Packet,
    ) -> Option<(u16, (bool, u32))> {
        let fc = self.channels.as_deref()?;
        let hops = self.routes.next_hops(NodeId(node), NodeId(target));
        if hops.is_empty() {
            return None;
        }
        let in_local = self.ports[port].local;
        let first = port - u32::from(in_local);
        let start = routing::ecmp_hash(pk.hash, node, hops.len());
        let Slot::Switch(s) = self.slots[node as usize] else {
            return None;
        };
        let table = &fc.tables[s as usize];
        let load = |out: u16| {
            let gp = first + u32::from(out);
            let class = self.egress_class::<General>((port, gp), pk);
            let room = !self.ports[gp].peer_is_switch || table.output_has_room(out, class);
            (!room, self.ports[gp].queues[usize::from(class)].bytes)
        };
        (0..hops.len())
            .map(|k| hops[(start + k) % hops.len()])
            .map(|out| (out, load(out)))
            .min_by_key(|&(_, l)| l)
    }

    /// Has switch `s`'s tables take in `pkt` (arrived on global `port`, for `out_local`):
    /// `Err` if it must wait (a full table, or a channel pinned elsewhere since).
    pub(super) fn channel_receive(
        &mut self,
        s: u32,
        port: u32,
        out_local: u16,
        pkt: u32,
    ) -> Result<(), ()> {
        let now = self.now;
        let pk = *self.arena.get(pkt);
        let in_local = self.ports[port].local;
        let from_switch = self.ports[port].peer_is_switch;
        let out = self.switches[s as usize].port(out_local);
        let to_host = !self.ports[out].peer_is_switch;
        let class = self.egress_class::<General>((port, out), &pk);
        let Some(fc) = self.channels.as_deref_mut() else {
            return Ok(());
        };
        // Only an output towards a switch, with reroutes on, is watched for overload.
        let watched = !to_host && fc.params.reroute.is_some();
        let arrival = fc.arrival(from_switch, &pk, &self.cfg.flow_apps);
        let table = &mut fc.tables[s as usize];
        let units = table.units(u64::from(pk.size));
        match table.receive(in_local, arrival, units, (out_local, to_host, class)) {
            Ok(r) => {
                if r.new {
                    fc.occupancy[s as usize].change(now, true);
                    fc.in_use += 1;
                }
                self.arena.get_mut(pkt).channel = r.in_id;
                if !from_switch {
                    self.ugal_joined(port, (r.in_id, r.new), pkt);
                }
                if to_host {
                    self.endpoint_enqueued(s, (in_local, r.in_id), out, pk.size);
                }
                if !from_switch {
                    self.fgfc_arrived(s, port, r.in_id, &pk);
                } else {
                    self.hop_arrived(s, port, r.in_id);
                }
                if watched {
                    self.reroute_check(s, (in_local, r.in_id), (out, class), (pk.size, pk.dst));
                }
                Ok(())
            }
            Err(FlowChannelError::TableFull { .. } | FlowChannelError::Misrouted { .. }) => Err(()),
            Err(e) => {
                fc.fault("receive", e);
                Err(())
            }
        }
    }

    /// Bytes of channel (`in_local`, `id`) queued at switch `s` (its `queue_extent`).
    fn channel_queued(&self, s: u32, (in_local, id): (u16, u16)) -> u64 {
        self.channels.as_deref().map_or(0, |fc| {
            let queued = fc.tables[s as usize]
                .input(in_local, id)
                .map_or(0, |c| c.queue_extent());
            queued * u64::from(fc.params.unit)
        })
    }

    /// The watermarks endpoint congestion management gives channel (`in_local`, `id`) at
    /// switch `s` for the severity it carries (`None`: none, or not congested).
    fn channel_watermarks(&self, s: u32, (in_local, id): (u16, u16)) -> Option<Watermarks> {
        let fc = self.channels.as_deref()?;
        let severity = fc.tables[s as usize].input(in_local, id)?.ep_congestion;
        fc.params.endpoint?.watermarks_for(severity)
    }

    /// Whether switch `s` has channel `id` in use on input port `in_local`.
    pub(super) fn channel_in_use(&self, s: u32, (in_local, id): (u16, u16)) -> bool {
        self.channels
            .as_deref()
            .is_some_and(|fc| fc.tables[s as usize].input(in_local, id).is_some())
    }

    /// The data frame `pk` from a host arrived on global port `port` of switch `s` (its
    /// ingress edge) in channel `id`: with FGFC, its source may have to be paused.
    fn fgfc_arrived(&mut self, s: u32, port: u32, id: u16, pk: &Packet) {
        let now = self.now;
        let in_local = self.ports[port].local;
        let queued = self.channel_queued(s, (in_local, id));
        let marks = self.channel_watermarks(s, (in_local, id));
        let Some(edges) = self.channels.as_deref_mut().and_then(|fc| fc.fgfc.as_mut()) else {
            return;
        };
        if let Some(frame) = edges.arrived((s, in_local, id), now, queued, marks) {
            self.send_fgfc(port, (pk.flow, pk.dst), frame);
        }
    }

    /// A data frame from another switch arrived on global port `port` of switch `s` in
    /// channel `id`: with hop-by-hop credits, the channel may start metering its upstream
    /// hop.
    fn hop_arrived(&mut self, s: u32, port: u32, id: u16) {
        let in_local = self.ports[port].local;
        let queued = self.channel_queued(s, (in_local, id));
        let marks = self.channel_watermarks(s, (in_local, id));
        let Some(hop) = self.channels.as_deref_mut().and_then(|fc| fc.hop.as_mut()) else {
            return;
        };
        if let Some(ack) = hop.arrived((s, in_local, id), queued, marks) {
            self.queue_ack(port, AckEntry::headroom(id, ack));
        }
    }

    /// A data frame of `bytes` of channel (`in_local`, `id`) left switch `s`: with
    /// hop-by-hop credits, a metered channel spends credit and a metering one returns it.
    fn hop_left(&mut self, s: u32, (in_local, id): (u16, u16), bytes: u64) {
        let queued = self.channel_queued(s, (in_local, id));
        let marks = self.channel_watermarks(s, (in_local, id));
        let Some(hop) = self.channels.as_deref_mut().and_then(|fc| fc.hop.as_mut()) else {
            return;
        };
        if let Some(ack) = hop.left((s, in_local, id), (queued, bytes), marks) {
            let gp = self.switches[s as usize].port(in_local);
            if self.ports[gp].peer_is_switch {
                self.queue_ack(gp, AckEntry::headroom(id, ack));
            }
        }
    }

    /// A data frame of channel (`in_local`, `id`) left switch `s`: if it came from a host
    /// under FGFC, its source may resume.
    fn fgfc_left(&mut self, s: u32, (in_local, id): (u16, u16), pk: &Packet) {
        let queued = self.channel_queued(s, (in_local, id));
        let marks = self.channel_watermarks(s, (in_local, id));
        let Some(edges) = self.channels.as_deref_mut().and_then(|fc| fc.fgfc.as_mut()) else {
            return;
        };
        if let Some(frame) = edges.left((s, in_local, id), queued, marks) {
            let gp = self.switches[s as usize].port(in_local);
            self.send_fgfc(gp, (pk.flow, pk.dst), frame);
        }
    }

    /// The data frame `pkt` of `bytes` joined switch `s`'s egress towards a host, global
    /// port `out`, in channel (`in_local`, `in_id`): with endpoint congestion management,
    /// a congested output tells the channel's hops (at once, before delivery) unless the
    /// channel already carries that severity.
    fn endpoint_enqueued(&mut self, s: u32, (in_local, in_id): (u16, u16), out: u32, bytes: u32) {
        let now = self.now;
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        let Some(cfg) = fc.params.endpoint else {
            return;
        };
        let severity = fc.monitors[out as usize].enqueue(&cfg, now, u64::from(bytes));
        let known = fc.tables[s as usize]
            .input(in_local, in_id)
            .map(|c| c.ep_congestion);
        if severity == 0 || known == Some(severity) {
            return;
        }
        fc.stats.endpoint_acks += 1;
        let up = AckUpstream {
            in_port: in_local,
            id: in_id,
            released: false,
        };
        self.channel_acked(s, up, 0, AckSignal::Congested(severity));
    }

    /// The data frame `pkt` leaves switch `s` by global port `out`: its channel counts it,
    /// and a delivery is acknowledged. Its `channel` becomes its id on the next link.
    pub(super) fn channel_forward(&mut self, s: u32, out: u32, pkt: u32) {
        let now = self.now;
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        let pk = *self.arena.get(pkt);
        let bytes = u64::from(pk.size);
        let table = &mut fc.tables[s as usize];
        let units = table.units(bytes);
        let fgfc = fc.fgfc.is_some();
        let hop = fc.hop.is_some();
        match table.forward((pk.in_port, pk.channel), units) {
            Ok(f) => {
                self.arena.get_mut(pkt).channel = f.out_id.unwrap_or(0);
                if fgfc {
                    self.fgfc_left(s, (pk.in_port, pk.channel), &pk);
                }
                if hop {
                    self.hop_left(s, (pk.in_port, pk.channel), bytes);
                }
                let gp_in = self.switches[s as usize].port(pk.in_port);
                if let Some(inj) = self
                    .channels
                    .as_deref_mut()
                    .and_then(|fc| fc.injection.as_mut())
                {
                    inj.injected(gp_in, pk.channel, pk.flow, units);
                }
                let Some(fc) = self.channels.as_deref_mut() else {
                    return;
                };
                if let Some(up) = f.ack {
                    let signal = match fc.params.endpoint {
                        Some(cfg) if fc.monitors[out as usize].dequeue(&cfg, now, bytes) > 0 => {
                            AckSignal::Ongoing
                        }
                        _ => AckSignal::Normal,
                    };
                    self.channel_acked(s, up, units, signal);
                }
            }
            Err(e) => fc.fault("forward", e),
        }
    }

    /// `units` of a channel were acknowledged at switch `s` by an ACK saying `signal`,
    /// which the channel learns and the ACK passes on as `up` says.
    pub(super) fn channel_acked(&mut self, s: u32, up: AckUpstream, units: u64, signal: AckSignal) {
        let now = self.now;
        if let AckSignal::Reroute { dst, node, port } = signal {
            if !up.released {
                // Acknowledges nothing: this hop takes it or passes it on, nothing else.
                let overload = Overload { node, port };
                self.take_or_pass_reroute((s, up.in_port, up.id), dst, overload);
                return;
            }
        }
        let Some(fc) = self.channels.as_deref_mut() else {
            return;
        };
        if !up.released && signal != AckSignal::Ongoing {
            if let Err(e) = fc.tables[s as usize].signal((up.in_port, up.id), signal) {
                fc.fault("signal", e);
            }
        }
        if up.released {
            if let Some(hop) = fc.hop.as_mut() {
                hop.released((s, up.in_port, up.id));
            }
            // Without reroutes the maps stay empty: no hashing per release.
            if fc.params.reroute.is_some() {
                fc.reroute_holds.remove(&(s, up.in_port, up.id));
                if let Some(out) = fc.reroute_asked.remove(&(s, up.in_port, up.id)) {
                    // The flow the output asked for last left it: it may ask for another.
                    let quiet = &mut fc.reroute_quiet[out as usize];
                    if quiet.1 == (s, up.in_port, up.id) {
                        quiet.0 = now;
                    }
                }
            }
            fc.occupancy[s as usize].change(now, false);
            fc.in_use -= 1;
            if fc.in_use == 0 && fc.draining {
                self.stop = Some(crate::results::StopReason::AllFlowsDone);
                self.done_at = Some((now, self.cur_key));
            }
        }
        let gp = self.switches[s as usize].port(up.in_port);
        if self.ports[gp].peer_is_switch {
            let units = u32::try_from(units).unwrap_or(u32::MAX);
            self.queue_ack(gp, AckEntry::flow(up.id, signal, units));
        } else {
            fc.stats.acks_home += 1;
            let delay = fc.params.endpoint.map_or(Time::ZERO, |e| e.release_delay);
            let mut paced = None;
            if delay > Time::ZERO {
                let key = (s, up.in_port, up.id);
                if up.released {
                    fc.edge_acked.remove(&key);
                } else {
                    if units > 0 {
                        fc.edge_acked.insert(key, now);
                    }
                    // Also after an ACK of no data that raised the severity to the highest.
                    paced = fc.tables[s as usize]
                        .input(up.in_port, up.id)
                        .filter(|c| {
                            // Nothing in flight: the delay is what holds its next frame,
                            // queued now or arriving within it.
                            c.flow_extent() == 0 && !fc.released_by_now(s, (up.in_port, up.id), now)
                        })
                        .map(|c| c.follow_port);
                }
            }
            if let Some(out_local) = paced {
                fc.stats.release_delays = Some(fc.stats.release_delays.unwrap_or(0) + 1);
                // Its frames wait out the delay: look at them again then.
                let out = self.switches[s as usize].port(out_local);
                self.schedule(now + delay, Event::ChannelRelease { port: out });
            }
            let Some(fc) = self.channels.as_deref_mut() else {
                return;
            };
            if let Some(inj) = fc.injection.as_mut() {
                if let Err(e) = inj.acked(gp, up.id, units, up.released) {
                    if fc.fault.is_none() {
                        fc.fault = Some(format!("injection at port {gp}: {e}"));
                    }
                }
                if units > 0 {
                    self.release_held_at(s);
                }
            }
        }
        if !up.released {
            if units > 0 {
                self.reroute_if_drained((s, up.in_port, up.id));
            }
            self.release_held_flows(s, up);
        }
        if up.released {
            self.retry_waiting(s);
        }
    }

    /// An ACK (or a HeadroomACK) reached channel `up` of switch `s`: with injection limits
    /// or hop-by-hop credits, the flows held at the channel's output are looked at again
    /// (its frames queued here may go now).
    pub(super) fn release_held_flows(&mut self, s: u32, up: AckUpstream) {
        let Some(fc) = self.channels.as_deref() else {
            return;
        };
        if fc.params.endpoint.is_none() && fc.hop.is_none() {
            return;
        }
        let Some(c) = fc.tables[s as usize].input(up.in_port, up.id) else {
            return;
        };
        if c.queue_extent() == 0 {
            return;
        }
        let out = self.switches[s as usize].port(c.follow_port);
        self.release_held_on(s, out);
    }

    /// The release delay of a flow held at global output `out` has run out: the flows held
    /// there are looked at again.
    pub(super) fn channel_release(&mut self, out: u32) {
        let node = self.ports[out].node;
        if let Slot::Switch(s) = self.slots[node as usize] {
            self.reroute_drained_at(s, out);
            self.release_held_on(s, out);
        }
    }

    /// The flows held at global output `out` of switch `s` whose gate is open again go
    /// back to its arbitration; the port wakes if one of them is staged.
    pub(super) fn release_held_on(&mut self, s: u32, out: u32) {
        let gate = channel_gate(self.channels.as_deref(), s, self.now);
        let p = &mut self.ports[out];
        if self
            .arbitration
            .release_held(&mut self.arena, (out, p), gate)
        {
            // Not `try_send`: this may run while `out` itself is handing a frame over.
            self.schedule_wake(out, self.now);
        }
    }

    /// An ACK came home to switch `s` under injection limits: the flows held at any of its
    /// outputs are looked at again.
    fn release_held_at(&mut self, s: u32) {
        for out in self.switches[s as usize].ports() {
            self.release_held_on(s, out);
        }
    }

    /// The last flow finished: whether the run goes on until the ACKs still on their way
    /// have released every channel (it then ends when the last one is released).
    pub(super) fn channels_drain_first(&mut self) -> bool {
        // A part of a partitioned run pauses as without channels: only the driver sees
        // every part's channels (`Partitioned::drain`).
        if !self.node_part.is_empty() {
            return false;
        }
        match self.channels.as_deref_mut() {
            Some(fc) if fc.in_use > 0 => {
                fc.draining = true;
                true
            }
            _ => false,
        }
    }

    /// Flow channels in use at this simulation's switches.
    pub(super) fn channels_in_use(&self) -> u64 {
        self.channels.as_deref().map_or(0, |fc| fc.in_use)
    }

    /// The data frame `pk`, arrived on global port `port`, was dropped on arrival: if its
    /// upstream switch counted it in a channel, that channel's units are acknowledged.
    pub(super) fn channel_dropped_on_arrival(&mut self, port: u32, pk: &Packet) {
        if self.channels.is_none() || pk.kind != Kind::Data || !self.ports[port].peer_is_switch {
            return;
        }
        if let Some(fc) = self.channels.as_deref_mut() {
            fc.stats.drop_acks += 1;
            let units = fc.params.tables().units(u64::from(pk.size));
            let units = u32::try_from(units).unwrap_or(u32::MAX);
            // A drop says nothing of the destination's congestion.
            self.queue_ack(port, AckEntry::flow(pk.channel, AckSignal::Ongoing, units));
        }
    }
}
