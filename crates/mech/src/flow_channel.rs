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
//! While `flow_extent > 0` the channel's packets must leave by its `follow_port` (the
//! path its earlier packets took: no reordering); at 0 the switch may choose any port (by
//! load). A packet that leaves by an output towards a host is delivered: the switch is the
//! egress edge and acknowledges it at once. Acknowledgements travel back along the channel:
//! an ACK for `n` units arriving on an output port names the id on that link; the OFCT
//! gives the input port and incoming id to pass it on to.
//!
//! Invariants (checked by [`FlowChannels::check`] and the tests at the bottom):
//! - an id is in use in an IFCT exactly while its channel's `total_extent > 0`; an output
//!   entry exactly while its channel has units unacknowledged on that link, and then it is
//!   the channel's `follow_port` entry; so a drained switch holds no channel (no table
//!   leaks);
//! - `ack_flow ≤ data_flow ≤ next_data_flow` for every channel;
//! - no table holds more than `table_size` ids: a full one refuses a new channel
//!   ([`FlowChannelError::TableFull`]; the driver backs the packet up, which in the end
//!   pauses the link feeding it).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use thiserror::Error;

/// Parameters of a switch's flow-channel tables (the patent's example values are the
/// defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowChannelConfig {
    /// Flow ids per link (the patent's example: 11 bits, 2048).
    pub table_size: u16,
    /// Bytes per unit of the progress counters (the patent's examples: 256 or 24).
    pub unit: u32,
}

impl Default for FlowChannelConfig {
    fn default() -> Self {
        FlowChannelConfig {
            table_size: 2048,
            unit: 256,
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
    /// packets are unacknowledged (it could overtake them).
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

/// One channel of an input port (an IFCT entry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputChannel {
    /// Units received.
    pub next_data_flow: u64,
    /// Units forwarded.
    pub data_flow: u64,
    /// Units acknowledged from downstream.
    pub ack_flow: u64,
    /// The output its units in flight took (meaningful while `flow_extent > 0`).
    pub follow_port: u16,
    /// Its id on `follow_port`'s link (`None` if that output leads to a host).
    pub out_id: Option<u16>,
    /// The flow's match key, if it entered the fabric here (from a host).
    pub edge_key: Option<u64>,
}

impl InputChannel {
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

/// The ids of one port's table. A port's ids are either handed out here, lowest free first
/// (an input from a host, an output), or taken as the upstream switch picked them (an
/// input from a switch).
#[derive(Clone, Debug)]
struct Ids<T> {
    entries: Vec<Option<T>>,
    /// Ids released, to hand out again (lowest first).
    free: BinaryHeap<Reverse<u16>>,
    used: usize,
    size: u16,
}

impl<T> Ids<T> {
    fn new(size: u16) -> Self {
        Ids {
            entries: Vec::new(),
            free: BinaryHeap::new(),
            used: 0,
            size,
        }
    }

    /// A free id for `entry`, or `None` if all `size` are in use. The table grows as ids
    /// are first used, never past `size`.
    fn allocate(&mut self, entry: T) -> Option<u16> {
        let id = loop {
            match self.free.pop() {
                Some(Reverse(id)) if self.entries[usize::from(id)].is_none() => break id,
                Some(_) => continue,
                None if self.entries.len() < usize::from(self.size) => {
                    self.entries.push(None);
                    break (self.entries.len() - 1) as u16;
                }
                None => return None,
            }
        };
        self.entries[usize::from(id)] = Some(entry);
        self.used += 1;
        Some(id)
    }

    /// Takes id `id` (below `size`, not in use) for `entry`.
    fn occupy(&mut self, id: u16, entry: T) {
        let i = usize::from(id);
        if self.entries.len() <= i {
            self.entries.resize_with(i + 1, || None);
        }
        debug_assert!(self.entries[i].is_none());
        self.entries[i] = Some(entry);
        self.used += 1;
    }

    fn release(&mut self, id: u16) {
        if let Some(e) = self.entries.get_mut(usize::from(id)) {
            if e.take().is_some() {
                self.used -= 1;
                self.free.push(Reverse(id));
            }
        }
    }

    fn get_mut(&mut self, id: u16) -> Option<&mut T> {
        self.entries.get_mut(usize::from(id))?.as_mut()
    }

    fn in_use(&self) -> usize {
        self.used
    }
}

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
    /// Per input port from a host: the EFCT, match key → id.
    edge: Vec<HashMap<u64, u16>>,
}

impl FlowChannels {
    /// The tables of a switch with `ports` ports.
    pub fn new(ports: usize, config: FlowChannelConfig) -> Self {
        FlowChannels {
            config,
            inputs: (0..ports).map(|_| Ids::new(config.table_size)).collect(),
            outputs: (0..ports).map(|_| Ids::new(config.table_size)).collect(),
            edge: vec![HashMap::new(); ports],
        }
    }

    /// Units of a packet of `bytes` (at least one).
    pub fn units(&self, bytes: u64) -> u64 {
        bytes.div_ceil(u64::from(self.config.unit.max(1))).max(1)
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

    /// Channels in use on every port, inputs and outputs.
    pub fn in_use(&self) -> usize {
        let inputs: usize = self.inputs.iter().map(Ids::in_use).sum();
        inputs + self.outputs.iter().map(Ids::in_use).sum::<usize>()
    }

    /// The id of the flow with match key `key` arriving from a host on `in_port` (the edge
    /// table): its channel's, or a new channel's.
    pub fn edge_id(&mut self, in_port: u16, key: u64) -> Result<u16, FlowChannelError> {
        let p = usize::from(in_port);
        if let Some(&id) = self.edge[p].get(&key) {
            return Ok(id);
        }
        let channel = InputChannel {
            edge_key: Some(key),
            ..InputChannel::default()
        };
        let id = self.inputs[p]
            .allocate(channel)
            .ok_or(FlowChannelError::TableFull {
                port: in_port,
                size: self.config.table_size,
            })?;
        self.edge[p].insert(key, id);
        Ok(id)
    }

    /// A packet of `units` arrived on `in_port` with id `id` (the upstream switch's choice
    /// for this link, or [`FlowChannels::edge_id`]'s): creates the channel if new. Returns
    /// the output it must leave by, if its channel has units in flight.
    pub fn receive(
        &mut self,
        in_port: u16,
        id: u16,
        units: u64,
    ) -> Result<Option<u16>, FlowChannelError> {
        let table = &mut self.inputs[usize::from(in_port)];
        if table.get_mut(id).is_none() {
            // The upstream switch picked `id` for a new channel: ids are its output's to
            // give, so the slot is free here.
            if id >= table.size {
                return Err(FlowChannelError::UnknownChannel { port: in_port, id });
            }
            table.occupy(id, InputChannel::default());
        }
        // Cannot fail: the entry was just found or made.
        let c = table.get_mut(id).expect("the channel exists");
        c.next_data_flow += units;
        Ok((c.flow_extent() > 0).then_some(c.follow_port))
    }

    /// A packet of `units` of channel (`in_port`, `id`) leaves by `out_port`; `to_host`:
    /// that output leads to a host, which the packet is delivered to (and acknowledged at
    /// once). Returns the id it carries on the output's link and, when delivered, where
    /// the ACK goes.
    pub fn forward(
        &mut self,
        (in_port, id): (u16, u16),
        out_port: u16,
        units: u64,
        to_host: bool,
    ) -> Result<Forwarded, FlowChannelError> {
        let unknown = FlowChannelError::UnknownChannel { port: in_port, id };
        let c = *self.inputs[usize::from(in_port)]
            .get_mut(id)
            .ok_or(unknown)?;
        if units > c.queue_extent() {
            return Err(FlowChannelError::Counters {
                in_port,
                id,
                what: "more forwarded than received",
            });
        }
        let out_id = if c.flow_extent() > 0 {
            if c.follow_port != out_port {
                return Err(FlowChannelError::Misrouted {
                    in_port,
                    id,
                    follow: c.follow_port,
                    chosen: out_port,
                });
            }
            c.out_id
        } else if to_host {
            None
        } else {
            // A new stretch of the channel: a fresh id on the chosen output's link.
            let entry = OutputChannel { in_port, in_id: id };
            let size = self.config.table_size;
            Some(self.outputs[usize::from(out_port)].allocate(entry).ok_or(
                FlowChannelError::TableFull {
                    port: out_port,
                    size,
                },
            )?)
        };
        // Cannot fail: looked up above.
        let c = self.inputs[usize::from(in_port)]
            .get_mut(id)
            .expect("the channel exists");
        c.data_flow += units;
        c.follow_port = out_port;
        c.out_id = out_id;
        let ack = if to_host {
            Some(self.acknowledge(in_port, id, units)?)
        } else {
            None
        };
        Ok(Forwarded { out_id, ack })
    }

    /// An ACK for `units` came back on output `out_port` for the id `out_id` of its link.
    /// Returns where it goes next.
    pub fn ack(
        &mut self,
        out_port: u16,
        out_id: u16,
        units: u64,
    ) -> Result<AckUpstream, FlowChannelError> {
        let o = *self.outputs[usize::from(out_port)].get_mut(out_id).ok_or(
            FlowChannelError::UnknownChannel {
                port: out_port,
                id: out_id,
            },
        )?;
        self.acknowledge(o.in_port, o.in_id, units)
    }

    /// `units` of channel (`in_port`, `id`) were acknowledged downstream: count them,
    /// release what is done.
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
        if c.flow_extent() == 0 {
            if let Some(out_id) = c.out_id {
                self.outputs[usize::from(c.follow_port)].release(out_id);
            }
        }
        let released = c.total_extent() == 0;
        if released {
            self.inputs[p].release(id);
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
            if counted != t.in_use() || counted > usize::from(self.config.table_size) {
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
                if c.flow_extent() > 0 {
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
            }
            for (&key, &id) in &self.edge[p] {
                let entry = t.entries.get(usize::from(id)).copied().flatten();
                if entry.is_none_or(|c| c.edge_key != Some(key)) {
                    return Err(format!("input {p}: edge key {key} names released id {id}"));
                }
            }
        }
        for (p, t) in self.outputs.iter().enumerate() {
            if t.in_use() != outputs_expected[p] {
                return Err(format!(
                    "output {p}: {} ids in use, {} channels in flight through it",
                    t.in_use(),
                    outputs_expected[p]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn small() -> FlowChannelConfig {
        FlowChannelConfig {
            table_size: 4,
            unit: 256,
        }
    }

    #[test]
    fn a_channel_lives_from_its_first_packet_to_its_last_ack() {
        // Switch with ports 0 (from a host), 1 (to the next switch), 2 (to a host).
        let mut fc = FlowChannels::new(3, small());
        let id = fc.edge_id(0, 42).expect("room");
        assert_eq!(fc.edge_id(0, 42), Ok(id), "one id per flow");
        assert_eq!(fc.units(1000), 4);
        assert_eq!(fc.units(1), 1);
        assert_eq!(
            fc.receive(0, id, 4),
            Ok(None),
            "nothing in flight: any port"
        );
        assert_eq!(fc.receive(0, id, 4), Ok(None));
        let f = fc.forward((0, id), 1, 4, false).expect("forwarded");
        let out = f.out_id.expect("an id on the fabric link");
        assert_eq!(f.ack, None);
        // In flight: the next packet must follow.
        assert_eq!(fc.receive(0, id, 4), Ok(Some(1)));
        assert_eq!(
            fc.forward((0, id), 2, 4, true),
            Err(FlowChannelError::Misrouted {
                in_port: 0,
                id,
                follow: 1,
                chosen: 2
            })
        );
        assert_eq!(
            fc.forward((0, id), 1, 4, false).map(|f| f.out_id),
            Ok(Some(out))
        );
        fc.check().expect("invariants");
        let c = fc.input(0, id).expect("in use");
        assert_eq!(
            (c.queue_extent(), c.flow_extent(), c.total_extent()),
            (4, 8, 12)
        );
        // Acknowledged as far as sent: the output id is free, the input still queues.
        let up = fc.ack(1, out, 8).expect("known");
        assert_eq!(
            up,
            AckUpstream {
                in_port: 0,
                id,
                released: false
            }
        );
        assert_eq!(fc.outputs_in_use(1), 0);
        fc.check().expect("invariants");
        // Nothing in flight: the last packet may take another path (here, a host).
        let f = fc.forward((0, id), 2, 4, true).expect("delivered");
        assert_eq!(f.out_id, None);
        assert_eq!(
            f.ack,
            Some(AckUpstream {
                in_port: 0,
                id,
                released: true
            })
        );
        assert_eq!(fc.in_use(), 0, "nothing left once acknowledged");
        fc.check().expect("invariants");
        // The key maps to a new channel next time.
        assert!(fc.edge_id(0, 42).is_ok());
    }

    #[test]
    fn a_full_table_refuses_new_channels_and_frees_ids_lowest_first() {
        let mut fc = FlowChannels::new(2, small());
        let ids: Vec<u16> = (0..4).map(|k| fc.edge_id(0, k).expect("room")).collect();
        assert_eq!(ids, vec![0, 1, 2, 3]);
        assert_eq!(
            fc.edge_id(0, 99),
            Err(FlowChannelError::TableFull { port: 0, size: 4 })
        );
        // Channels 2 and 1 finish (delivered to a host on port 1), 2 first.
        for id in [2u16, 1] {
            fc.receive(0, id, 1).expect("known");
            let f = fc.forward((0, id), 1, 1, true).expect("delivered");
            assert!(f.ack.expect("acknowledged").released);
        }
        assert_eq!(fc.edge_id(0, 100), Ok(1), "the lowest free id");
        assert_eq!(fc.edge_id(0, 101), Ok(2));
    }

    #[test]
    fn an_upstream_switch_picks_the_ids_of_its_link() {
        // Switch A: host on port 0, link to B on port 1. Switch B: A on port 0, host on 1.
        let mut a = FlowChannels::new(2, small());
        let mut b = FlowChannels::new(2, small());
        let id = a.edge_id(0, 7).expect("room");
        a.receive(0, id, 2).expect("known");
        let on_link = a
            .forward((0, id), 1, 2, false)
            .expect("sent")
            .out_id
            .expect("id");
        assert_eq!(
            b.receive(0, on_link, 2),
            Ok(None),
            "B creates it under A's id"
        );
        let ack = b.forward((0, on_link), 1, 2, true).expect("delivered").ack;
        assert_eq!(
            ack,
            Some(AckUpstream {
                in_port: 0,
                id: on_link,
                released: true
            })
        );
        let up = a.ack(1, on_link, 2).expect("A knows its id");
        assert_eq!(
            up,
            AckUpstream {
                in_port: 0,
                id,
                released: true
            }
        );
        assert_eq!(a.in_use() + b.in_use(), 0);
        assert_eq!(
            a.ack(1, on_link, 1),
            Err(FlowChannelError::UnknownChannel {
                port: 1,
                id: on_link
            })
        );
    }

    #[test]
    fn counters_never_overtake_each_other() {
        let mut fc = FlowChannels::new(2, small());
        let id = fc.edge_id(0, 1).expect("room");
        fc.receive(0, id, 2).expect("known");
        assert!(matches!(
            fc.forward((0, id), 1, 3, false),
            Err(FlowChannelError::Counters { .. })
        ));
        let out = fc
            .forward((0, id), 1, 2, false)
            .expect("sent")
            .out_id
            .expect("id");
        assert!(matches!(
            fc.ack(1, out, 3),
            Err(FlowChannelError::Counters { .. })
        ));
        fc.check().expect("a refused operation changes nothing");
    }

    proptest! {
        /// Random flows through one switch (inputs 0-1 from hosts, output 2 to the next
        /// switch, output 3 to a host), packets forwarded and acknowledged in random
        /// order: the invariants hold at every step, and once everything is acknowledged
        /// no channel is left.
        #[test]
        fn tables_never_leak(ops in proptest::collection::vec((0u8..4, 0u64..6, 1u64..5), 1..300)) {
            let mut fc = FlowChannels::new(4, small());
            // Per (input, key): its id and units queued; per output-2 id: units in flight.
            let mut queued: HashMap<(u16, u64), (u16, u64)> = HashMap::new();
            let mut in_flight: Vec<(u16, u64)> = Vec::new();
            for (op, key, units) in ops {
                let input = (key % 2) as u16;
                match op {
                    0 => {
                        if let Ok(id) = fc.edge_id(input, key) {
                            fc.receive(input, id, units).expect("known id");
                            queued.entry((input, key)).or_insert((id, 0)).1 += units;
                        }
                    }
                    1 | 2 => {
                        let Some(&(id, n)) = queued.get(&(input, key)) else { continue };
                        if n == 0 { continue; }
                        let follow = fc
                            .input(input, id)
                            .and_then(|c| (c.flow_extent() > 0).then_some(c.follow_port));
                        let out = follow.unwrap_or(if op == 1 { 2 } else { 3 });
                        match fc.forward((input, id), out, n, out == 3) {
                            Ok(f) => {
                                queued.get_mut(&(input, key)).expect("queued").1 = 0;
                                if let Some(out_id) = f.out_id {
                                    in_flight.push((out_id, n));
                                }
                                if let Some(a) = f.ack.filter(|a| a.released) {
                                    queued.retain(|&(i, _), v| !(i == a.in_port && v.0 == a.id));
                                }
                            }
                            Err(FlowChannelError::TableFull { .. }) => {}
                            Err(e) => panic!("{e}"),
                        }
                    }
                    _ => {
                        if in_flight.is_empty() { continue; }
                        let (out_id, n) = in_flight.remove(usize::try_from(key).expect("small") % in_flight.len());
                        let up = fc.ack(2, out_id, n).expect("in flight");
                        if up.released {
                            queued.retain(|&(i, _), v| !(i == up.in_port && v.0 == up.id));
                        }
                    }
                }
                fc.check().map_err(TestCaseError::fail)?;
            }
            // Drain: forward what is queued to the host port where no path is pinned, then
            // acknowledge everything in flight.
            for (&(input, _), &(id, n)) in &queued {
                if n > 0 {
                    let c = fc.input(input, id).expect("queued here");
                    let out = if c.flow_extent() > 0 { c.follow_port } else { 3 };
                    let f = fc.forward((input, id), out, n, out == 3).expect("no new output id");
                    if let Some(out_id) = f.out_id { in_flight.push((out_id, n)); }
                }
            }
            for (out_id, n) in in_flight {
                fc.ack(2, out_id, n).expect("in flight");
            }
            fc.check().map_err(TestCaseError::fail)?;
            prop_assert_eq!(fc.in_use(), 0);
        }
    }
}
