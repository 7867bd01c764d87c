//! Flow channels of one switch: the flow-channel patent's input (IFCT) and output (OFCT)
//! flow channel tables, as a sans-IO machine.
//!
//! A flow channel is a flow's path plus state on every hop. It is created by the flow's
//! first packet and released hop by hop when the last acknowledgement comes back. Flow ids
//! are link-local: each link has `table_size` of them. The output port that sends on a link
//! picks the id its packets carry there (its OFCT maps the channel's input port and incoming
//! id to it), and the input port at the other end indexes its IFCT by that id. A channel
//! that enters the fabric at this switch (from a host) gets its id from the edge table
//! (EFCT), which maps the flow's match key to an id of that input port.
//!
//! An input port's channel counts data in fixed units (`unit` bytes; a packet of `b` bytes
//! is `ceil(b / unit)` units):
//!
//! ```text
//! next_data_flow  units received            queue_extent = next_data_flow − data_flow
//! data_flow       units forwarded           flow_extent  = data_flow − ack_flow
//! ack_flow        units acknowledged        total_extent = next_data_flow − ack_flow
//! ```
//!
//! A switch that queues by output routes a packet when it arrives, so the patent's rule
//! "while `flow_extent > 0` a packet follows `follow_port`" becomes: while any of the
//! channel's packets is queued here or unacknowledged downstream, its packets leave by its
//! `follow_port` ([`FlowChannels::pinned`]); a channel with nothing here is released, and
//! the next packet may take any path (adaptive routing without reordering). A packet that
//! leaves by an output towards a host is delivered: the switch is the egress edge and
//! acknowledges it at once. Acknowledgements travel back along the channel: an ACK for `n`
//! units arriving on an output port names the id on that link; the OFCT gives the input
//! port and incoming id to pass it on to.
//!
//! A reroute moves a live channel to another path: a hop that takes one holds the flow
//! ([`FlowChannels::hold_for_reroute`]) until everything it forwarded is acknowledged
//! (every channel downstream is then released), then moves the channel, with the packets
//! it has queued here, to another output ([`FlowChannels::reroute`]); nothing can be
//! reordered, as nothing of the flow is downstream.
//!
//! Invariants (checked by [`FlowChannels::check`] and the tests in `flow_channel/tests.rs`):
//! - an id is in use in an IFCT exactly while its channel's `total_extent > 0`, and its
//!   output entry (unless it leads to a host) exactly as long, on its `follow_port`; so a
//!   drained switch holds no channel (no table leaks);
//! - `ack_flow ≤ data_flow ≤ next_data_flow` for every channel;
//! - an output table whose config reserves classes ([`FlowChannelConfig::reserved`])
//!   gives each of them one of its highest ids, to that class only; the others are shared
//!   by every class and handed out first;
//! - no table holds more than `table_size` ids: a full one refuses a new channel
//!   ([`FlowChannelError::TableFull`]; the driver holds the packet back, which in the end
//!   pauses the link feeding it); a refused operation changes nothing.

mod ids;
mod reroute;

use ids::Ids;
use rustc_hash::FxHashMap;
use thiserror::Error;

/// Parameters of a switch's flow-channel tables (the patent's example values are the
/// defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowChannelConfig {
    /// Flow ids per link (the patent's example: 11 bits, 2048).
    pub table_size: u16,
    /// Bytes per unit of the progress counters (the patent's examples: 256 or 24).
    pub unit: u32,
    /// Classes (bit `c`: class `c`) that keep one id of every output link for their own
    /// channels: the highest ids, the highest for the lowest such class. The other ids are
    /// shared by every class. With classes rising at every hop, a channel waiting for an id
    /// of a higher class then waits only for channels of that class (none by default).
    pub reserved: u8,
}

impl FlowChannelConfig {
    /// Units of a packet of `bytes` (at least one).
    pub fn units(&self, bytes: u64) -> u64 {
        bytes.div_ceil(u64::from(self.unit.max(1))).max(1)
    }
}

impl Default for FlowChannelConfig {
    fn default() -> Self {
        FlowChannelConfig {
            table_size: 2048,
            unit: 256,
            reserved: 0,
        }
    }
}

/// What a flow-channel table refuses.
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum FlowChannelError {
    /// Every id of the port's table is in use: the channel cannot be created now.
    #[error("the flow channel table of port {port} is full ({size} channels)")]
    TableFull {
        /// The port (input for an IFCT, output for an OFCT).
        port: u16,
        /// Its table size.
        size: u16,
    },
    /// A packet or ACK names an id that is not in use on that port (a peer's protocol
    /// error, or a lost state).
    #[error("port {port} has no flow channel {id}")]
    UnknownChannel {
        /// The port.
        port: u16,
        /// The id.
        id: u16,
    },
    /// A packet would leave by another port than its channel's `follow_port` while earlier
    /// packets are queued or unacknowledged (it could overtake them).
    #[error("channel {id} of input port {in_port} must follow port {follow}, not {chosen}")]
    Misrouted {
        /// The input port.
        in_port: u16,
        /// The channel's id there.
        id: u16,
        /// The port its packets in flight took.
        follow: u16,
        /// The port asked for.
        chosen: u16,
    },
    /// More forwarded than received, or more acknowledged than forwarded.
    #[error("channel {id} of input port {in_port}: {what}")]
    Counters {
        /// The input port.
        in_port: u16,
        /// The channel's id there.
        id: u16,
        /// Which count would overtake which.
        what: &'static str,
    },
}

/// What a packet refused by [`FlowChannels::receive`] waits for
/// ([`FlowChannels::blocker`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocker {
    /// Its channel, this id of its input port, is pinned to another output: the release
    /// of that channel.
    Channel(u16),
    /// Its input port's edge table is full: the release of a channel of that port.
    InputTable,
    /// Its output's table is full: the release of a channel on that output's link.
    OutputTable,
}

/// One channel of an input port (an IFCT entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputChannel {
    /// Units received.
    pub next_data_flow: u64,
    /// Units forwarded.
    pub data_flow: u64,
    /// Units acknowledged from downstream.
    pub ack_flow: u64,
    /// The output all its packets take, queued here or in flight.
    pub follow_port: u16,
    /// Its id on `follow_port`'s link (`None` if that output leads to a host).
    pub out_id: Option<u16>,
    /// The flow's match key, if it entered the fabric here (from a host).
    pub edge_key: Option<u64>,
    /// The severity of the endpoint congestion its destination reported last (0: none;
    /// see [`crate::endpoint_congestion`]).
    pub ep_congestion: u8,
    /// Reroute marks, in one byte so that an entry stays 48 bytes:
    /// [`InputChannel::REROUTE_ASKED`] and [`InputChannel::REROUTING`].
    pub reroute: u8,
}

impl InputChannel {
    /// Mark: this hop found the channel's output overloaded and asked for a reroute (once
    /// per channel).
    pub const REROUTE_ASKED: u8 = 1;
    /// Mark: this hop takes a reroute; it holds the flow until nothing of it is in flight,
    /// then moves it to another path ([`FlowChannels::reroute`]).
    pub const REROUTING: u8 = 2;

    /// Whether this hop holds the channel for a reroute.
    pub fn rerouting(&self) -> bool {
        self.reroute & Self::REROUTING != 0
    }

    /// Sets `mark`; whether it was not set.
    fn mark(&mut self, mark: u8) -> bool {
        let new = self.reroute & mark == 0;
        self.reroute |= mark;
        new
    }

    /// Units forwarded and not yet acknowledged.
    pub fn flow_extent(&self) -> u64 {
        self.data_flow - self.ack_flow
    }

    /// Units received and not yet forwarded.
    pub fn queue_extent(&self) -> u64 {
        self.next_data_flow - self.data_flow
    }

    /// Units received and not yet acknowledged.
    pub fn total_extent(&self) -> u64 {
        self.next_data_flow - self.ack_flow
    }
}

/// Bytes one channel takes in a switch's tables at the most: its input entry, its output
/// entry and its edge-table entry (transit switches have no edge entry).
pub const CHANNEL_BYTES: usize = std::mem::size_of::<Option<InputChannel>>()
    + std::mem::size_of::<Option<OutputChannel>>()
    + std::mem::size_of::<(u64, u16)>();

/// What an output port's table entry points back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct OutputChannel {
    in_port: u16,
    in_id: u16,
}

/// Where an ACK goes next: upstream through input port `in_port` with id `id` (the id the
/// upstream switch picked for its link, or the edge table's for a flow from a host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckUpstream {
    /// The input port the channel came in on.
    pub in_port: u16,
    /// The channel's id there.
    pub id: u16,
    /// The channel was released here (everything it brought was acknowledged).
    pub released: bool,
}

/// How a packet names its channel on arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// From a host: the flow's match key (the edge table maps it to an id).
    Edge(u64),
    /// From a switch: the id the upstream switch picked for this link.
    Link(u16),
}

/// What an ACK says of the destination's congestion (the patent's ACK types), applied to
/// every hop's channel it passes by [`FlowChannels::signal`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckSignal {
    /// A normal ACK: the destination is not congested; clears the severity.
    Normal,
    /// An ACK with the ongoing-congestion flag: the severity stays as it is.
    Ongoing,
    /// An endpoint-congestion ACK: the destination is congested with this severity.
    Congested(u8),
    /// A reroute ACK: output `port` of switch `node` on the channel's path downstream is
    /// overloaded; the nearest hop with a path to destination host `dst` that avoids it
    /// takes it (the driver decides), the others pass it on. Says nothing of the
    /// destination's congestion.
    Reroute {
        /// The flow's destination host.
        dst: u32,
        /// The switch whose output is overloaded.
        node: u32,
        /// That output's local port.
        port: u16,
    },
}

/// A packet taken in by [`FlowChannels::receive`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Its channel's id on the input port.
    pub in_id: u16,
    /// The id it will carry on the output's link (`None`: the output leads to a host).
    pub out_id: Option<u16>,
    /// Its channel was made by this packet.
    pub new: bool,
}

/// A packet forwarded by [`FlowChannels::forward`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forwarded {
    /// The id it carries on the output's link (`None`: it was delivered to a host).
    pub out_id: Option<u16>,
    /// Delivered to a host, it was acknowledged at once: where that ACK goes.
    pub ack: Option<AckUpstream>,
}

/// The flow-channel tables of one switch.
#[derive(Clone, Debug)]
pub struct FlowChannels {
    config: FlowChannelConfig,
    /// Per input port: its IFCT.
    inputs: Vec<Ids<InputChannel>>,
    /// Per output port: its OFCT.
    outputs: Vec<Ids<OutputChannel>>,
    /// Per input port from a host: the EFCT, match key → id (a fast hash: a lookup per
    /// packet entering the fabric).
    edge: Vec<FxHashMap<u64, u16>>,
}

impl FlowChannels {
    /// The tables of a switch with `ports` ports.
    pub fn new(ports: usize, config: FlowChannelConfig) -> Self {
        FlowChannels {
            config,
            inputs: (0..ports).map(|_| Ids::new(config.table_size)).collect(),
            outputs: (0..ports)
                .map(|_| Ids::with_reserved(config.table_size, config.reserved.count_ones() as u16))
                .collect(),
            edge: vec![FxHashMap::default(); ports],
        }
    }

    /// Units of a packet of `bytes` (at least one).
    pub fn units(&self, bytes: u64) -> u64 {
        self.config.units(bytes)
    }

    /// The channel of input port `in_port`, id `id`, if in use.
    pub fn input(&self, in_port: u16, id: u16) -> Option<&InputChannel> {
        self.inputs
            .get(usize::from(in_port))?
            .entries
            .get(usize::from(id))?
            .as_ref()
    }

    /// Channels in use on input port `in_port`.
    pub fn inputs_in_use(&self, in_port: u16) -> usize {
        self.inputs.get(usize::from(in_port)).map_or(0, Ids::in_use)
    }

    /// Channels in use on output port `out_port`'s link.
    pub fn outputs_in_use(&self, out_port: u16) -> usize {
        self.outputs
            .get(usize::from(out_port))
            .map_or(0, Ids::in_use)
    }

    /// Units forwarded and not yet acknowledged, summed over the channels of input port
    /// `in_port`.
    pub fn in_flight(&self, in_port: u16) -> u64 {
        self.inputs.get(usize::from(in_port)).map_or(0, |t| {
            t.entries
                .iter()
                .flatten()
                .map(InputChannel::flow_extent)
                .sum()
        })
    }

    /// Channels in use on every input port: each channel through the switch once.
    pub fn in_use(&self) -> usize {
        self.inputs.iter().map(Ids::in_use).sum()
    }

    /// Whether output `out_port`'s link has an id free for a new channel whose frames
    /// leave in `class`.
    pub fn output_has_room(&self, out_port: u16, class: u8) -> bool {
        self.outputs
            .get(usize::from(out_port))
            .is_some_and(|t| t.has_room(self.rank(class)))
    }

    /// Which of the reserved ids `class` keeps (`None`: none).
    fn rank(&self, class: u8) -> Option<u16> {
        let reserved = self.config.reserved;
        let bit = 1u8.checked_shl(u32::from(class))?;
        (reserved & bit != 0).then(|| (reserved & (bit - 1)).count_ones() as u16)
    }

    /// The id a packet arriving on `in_port` as `arrival` belongs to, if its channel
    /// exists.
    fn existing(&self, in_port: u16, arrival: Arrival) -> Option<u16> {
        let p = usize::from(in_port);
        let id = match arrival {
            Arrival::Edge(key) => *self.edge.get(p)?.get(&key)?,
            Arrival::Link(id) => id,
        };
        self.input(in_port, id).map(|_| id)
    }

    /// The output a packet arriving on `in_port` as `arrival` must leave by: the one its
    /// channel's earlier packets took, queued or in flight (`None`: the channel is new, any
    /// output will do). A switch that queues by output routes a packet when it arrives,
    /// so a channel is pinned to its path while any of its packets is here or
    /// unacknowledged downstream; that keeps every flow in order.
    pub fn pinned(&self, in_port: u16, arrival: Arrival) -> Option<u16> {
        let id = self.existing(in_port, arrival)?;
        // Cannot be `None`: `existing` found the channel.
        self.input(in_port, id).map(|c| c.follow_port)
    }

    /// A packet of `units` arrived on `in_port` as `arrival` and is queued for `out_port`
    /// (`to_host`: that output leads to a host). Creates the channel (and its id on the
    /// output's link) if new. On an error nothing changes: a full table
    /// ([`FlowChannelError::TableFull`]) means the packet must wait for a channel to be
    /// released.
    pub fn receive(
        &mut self,
        in_port: u16,
        arrival: Arrival,
        units: u64,
        (out_port, to_host, class): (u16, bool, u8),
    ) -> Result<Received, FlowChannelError> {
        let p = usize::from(in_port);
        if let Some(id) = self.admission(in_port, arrival, (out_port, to_host, class))? {
            // Cannot fail: `admission` found it.
            let c = self.inputs[p].get_mut(id).expect("the channel exists");
            c.next_data_flow += units;
            return Ok(Received {
                in_id: id,
                out_id: c.out_id,
                new: false,
            });
        }
        let edge_key = match arrival {
            Arrival::Edge(key) => Some(key),
            Arrival::Link(_) => None,
        };
        let channel = InputChannel {
            next_data_flow: units,
            follow_port: out_port,
            edge_key,
            ..InputChannel::default()
        };
        let in_id = match arrival {
            Arrival::Link(id) => {
                self.inputs[p].occupy(id, channel);
                id
            }
            // Cannot fail: room was checked above.
            Arrival::Edge(_) => self.inputs[p].allocate(channel).expect("room checked"),
        };
        if let Some(key) = edge_key {
            self.edge[p].insert(key, in_id);
        }
        let out_id = if to_host {
            None
        } else {
            let entry = OutputChannel { in_port, in_id };
            let rank = self.rank(class);
            // Cannot fail: room was checked above.
            Some(
                self.outputs[usize::from(out_port)]
                    .allocate_for(entry, rank)
                    .expect("room checked"),
            )
        };
        // Cannot fail: just made.
        self.inputs[p].get_mut(in_id).expect("just made").out_id = out_id;
        Ok(Received {
            in_id,
            out_id,
            new: true,
        })
    }

    /// Whether [`Self::receive`] would take a packet arriving on `in_port` as `arrival` for
    /// `out_port` now: `Ok(Some(id))` into its existing channel, `Ok(None)` into a new
    /// one, or the error it would refuse it with.
    fn admission(
        &self,
        in_port: u16,
        arrival: Arrival,
        (out_port, to_host, class): (u16, bool, u8),
    ) -> Result<Option<u16>, FlowChannelError> {
        if let Some(id) = self.existing(in_port, arrival) {
            // Cannot be `None`: `existing` found it.
            let follow = self.input(in_port, id).map_or(out_port, |c| c.follow_port);
            if follow != out_port {
                return Err(FlowChannelError::Misrouted {
                    in_port,
                    id,
                    follow,
                    chosen: out_port,
                });
            }
            return Ok(Some(id));
        }
        let size = self.config.table_size;
        if let Arrival::Link(id) = arrival {
            // The upstream switch picks the ids of its link, so a new one is free here.
            if id >= size {
                return Err(FlowChannelError::UnknownChannel { port: in_port, id });
            }
        } else if self.inputs_in_use(in_port) >= usize::from(size) {
            return Err(FlowChannelError::TableFull {
                port: in_port,
                size,
            });
        }
        if !to_host && !self.output_has_room(out_port, class) {
            return Err(FlowChannelError::TableFull {
                port: out_port,
                size,
            });
        }
        Ok(None)
    }

    /// What a packet arriving on `in_port` as `arrival` for `out_port` waits for, if
    /// [`Self::receive`] would refuse it now (`None`: it would take it, or refuse it for
    /// good, as a protocol error).
    pub fn blocker(
        &self,
        in_port: u16,
        arrival: Arrival,
        (out_port, to_host, class): (u16, bool, u8),
    ) -> Option<Blocker> {
        match self.admission(in_port, arrival, (out_port, to_host, class)) {
            Err(FlowChannelError::Misrouted { id, .. }) => Some(Blocker::Channel(id)),
            Err(FlowChannelError::TableFull { port, .. }) if port == out_port => {
                Some(Blocker::OutputTable)
            }
            Err(FlowChannelError::TableFull { .. }) => Some(Blocker::InputTable),
            _ => None,
        }
    }

    /// The ids in use on input port `in_port`, in order.
    pub fn input_ids(&self, in_port: u16) -> impl Iterator<Item = u16> + '_ {
        self.inputs
            .get(usize::from(in_port))
            .into_iter()
            .flat_map(|t| t.iter().map(|(id, _)| id))
    }

    /// The ids in use on output port `out_port`'s link, in order, each with the input
    /// port and id of the channel it belongs to.
    pub fn output_channels(&self, out_port: u16) -> impl Iterator<Item = (u16, (u16, u16))> + '_ {
        self.outputs
            .get(usize::from(out_port))
            .into_iter()
            .flat_map(|t| t.iter().map(|(id, o)| (id, (o.in_port, o.in_id))))
    }

    /// A packet of `units` of channel (`in_port`, `id`) leaves by its output. Returns the
    /// id it carries on the output's link and, when delivered to a host (this switch is
    /// the egress edge, which acknowledges it at once), where the ACK goes.
    pub fn forward(
        &mut self,
        (in_port, id): (u16, u16),
        units: u64,
    ) -> Result<Forwarded, FlowChannelError> {
        let out_id = self.dequeue((in_port, id), units, "more forwarded than received")?;
        let ack = match out_id {
            None => Some(self.acknowledge(in_port, id, units)?),
            Some(_) => None,
        };
        Ok(Forwarded { out_id, ack })
    }

    /// `units` of channel (`in_port`, `id`) queued here were dropped (a link failed, a
    /// watchdog flushed the queue): they count as forwarded and acknowledged, and the
    /// drop is acknowledged upstream like a delivery so that the channel is released all
    /// along its path. Returns where that ACK goes.
    pub fn discard(
        &mut self,
        (in_port, id): (u16, u16),
        units: u64,
    ) -> Result<AckUpstream, FlowChannelError> {
        self.dequeue((in_port, id), units, "more dropped than queued")?;
        self.acknowledge(in_port, id, units)
    }

    /// `units` of channel (`in_port`, `id`) leave its queue here (`what`: the error if
    /// fewer are queued). Returns the channel's id on its output's link.
    fn dequeue(
        &mut self,
        (in_port, id): (u16, u16),
        units: u64,
        what: &'static str,
    ) -> Result<Option<u16>, FlowChannelError> {
        let c = self.inputs[usize::from(in_port)]
            .get_mut(id)
            .ok_or(FlowChannelError::UnknownChannel { port: in_port, id })?;
        if units > c.queue_extent() {
            return Err(FlowChannelError::Counters { in_port, id, what });
        }
        c.data_flow += units;
        Ok(c.out_id)
    }

    /// Channel (`in_port`, `id`) learns what an ACK passing it says of its destination's
    /// congestion.
    pub fn signal(
        &mut self,
        (in_port, id): (u16, u16),
        signal: AckSignal,
    ) -> Result<(), FlowChannelError> {
        let c = self
            .inputs
            .get_mut(usize::from(in_port))
            .and_then(|t| t.get_mut(id))
            .ok_or(FlowChannelError::UnknownChannel { port: in_port, id })?;
        match signal {
            AckSignal::Normal => c.ep_congestion = 0,
            AckSignal::Ongoing | AckSignal::Reroute { .. } => {}
            AckSignal::Congested(severity) => c.ep_congestion = severity,
        }
        Ok(())
    }

    /// Whether channel (`in_port`, `id`) may forward a packet of `units` now: always when
    /// nothing of it is in flight, otherwise only within the injection limit its endpoint
    /// congestion's severity sets (`limit` gives it in bytes; `None`: no limit).
    pub fn may_forward(
        &self,
        (in_port, id): (u16, u16),
        units: u64,
        limit: impl Fn(u8) -> Option<u64>,
    ) -> bool {
        let Some(c) = self.input(in_port, id) else {
            return true;
        };
        let in_flight = c.flow_extent();
        in_flight == 0
            || limit(c.ep_congestion)
                .is_none_or(|bytes| in_flight + units <= bytes / u64::from(self.config.unit.max(1)))
    }

    fn input_mut(&mut self, in_port: u16, id: u16) -> Result<&mut InputChannel, FlowChannelError> {
        self.inputs
            .get_mut(usize::from(in_port))
            .and_then(|t| t.get_mut(id))
            .ok_or(FlowChannelError::UnknownChannel { port: in_port, id })
    }

    /// An ACK for `units` came back on output `out_port` for the id `out_id` of its link.
    /// Returns where it goes next.
    pub fn ack(
        &mut self,
        out_port: u16,
        out_id: u16,
        units: u64,
    ) -> Result<AckUpstream, FlowChannelError> {
        let o = *self
            .outputs
            .get_mut(usize::from(out_port))
            .and_then(|t| t.get_mut(out_id))
            .ok_or(FlowChannelError::UnknownChannel {
                port: out_port,
                id: out_id,
            })?;
        self.acknowledge(o.in_port, o.in_id, units)
    }

    /// `units` of channel (`in_port`, `id`) were acknowledged downstream: count them,
    /// release the channel once everything it brought is acknowledged.
    fn acknowledge(
        &mut self,
        in_port: u16,
        id: u16,
        units: u64,
    ) -> Result<AckUpstream, FlowChannelError> {
        let p = usize::from(in_port);
        let c = self.inputs[p]
            .get_mut(id)
            .ok_or(FlowChannelError::UnknownChannel { port: in_port, id })?;
        if units > c.flow_extent() {
            return Err(FlowChannelError::Counters {
                in_port,
                id,
                what: "more acknowledged than forwarded",
            });
        }
        c.ack_flow += units;
        let c = *c;
        let released = c.total_extent() == 0;
        if released {
            self.inputs[p].release(id);
            if let Some(out_id) = c.out_id {
                self.outputs[usize::from(c.follow_port)].release(out_id);
            }
            if let Some(key) = c.edge_key {
                self.edge[p].remove(&key);
            }
        }
        Ok(AckUpstream {
            in_port,
            id,
            released,
        })
    }

    /// Checks the invariants of the module documentation; `Err` names the first broken.
    pub fn check(&self) -> Result<(), String> {
        let mut outputs_expected = vec![0usize; self.outputs.len()];
        for (p, t) in self.inputs.iter().enumerate() {
            let counted = t.entries.iter().filter(|e| e.is_some()).count();
            if counted != t.in_use()
                || counted > usize::from(self.config.table_size)
                || !t.check_free()
            {
                return Err(format!("input {p}: {} channels in use", t.in_use()));
            }
            for (id, c) in t.entries.iter().enumerate() {
                let Some(c) = c else { continue };
                if !(c.ack_flow <= c.data_flow && c.data_flow <= c.next_data_flow) {
                    return Err(format!(
                        "input {p} channel {id}: counters out of order {c:?}"
                    ));
                }
                if c.total_extent() == 0 {
                    return Err(format!("input {p} channel {id}: done but not released"));
                }
                if let Some(out_id) = c.out_id {
                    let o = self.outputs[usize::from(c.follow_port)]
                        .entries
                        .get(usize::from(out_id))
                        .copied()
                        .flatten();
                    if o != Some(OutputChannel {
                        in_port: p as u16,
                        in_id: id as u16,
                    }) {
                        return Err(format!(
                            "input {p} channel {id}: output {} id {out_id} is not its own",
                            c.follow_port
                        ));
                    }
                    outputs_expected[usize::from(c.follow_port)] += 1;
                }
            }
            for (&key, &id) in &self.edge[p] {
                let entry = t.entries.get(usize::from(id)).copied().flatten();
                if entry.is_none_or(|c| c.edge_key != Some(key)) {
                    return Err(format!("input {p}: edge key {key} names released id {id}"));
                }
            }
        }
        for (p, t) in self.outputs.iter().enumerate() {
            if t.in_use() != outputs_expected[p] || !t.check_free() {
                return Err(format!(
                    "output {p}: {} ids in use, {} channels routed through it",
                    t.in_use(),
                    outputs_expected[p]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
