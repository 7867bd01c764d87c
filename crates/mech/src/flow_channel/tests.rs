//! Tests of the flow-channel tables ([`super::FlowChannels`]): channels opened, joined,
//! released and rerouted as the module states, and its invariants under random use.

use super::*;
use proptest::prelude::*;
use std::collections::HashMap;

fn small() -> FlowChannelConfig {
    FlowChannelConfig {
        table_size: 4,
        unit: 256,
        reserved: 0,
    }
}

#[test]
fn an_input_entry_stays_within_48_bytes() {
    // The reroute marks share a byte: a table of 2048 ids per port costs what it did.
    assert!(std::mem::size_of::<InputChannel>() <= 48);
}

#[test]
fn a_reroute_waits_for_the_flow_to_drain_then_moves_its_output_entry() {
    // Ports 0 (from a host), 1 and 2 (to switches), 3 (to a host).
    let mut fc = FlowChannels::new(4, small());
    let flow = Arrival::Edge(7);
    let r = fc.receive(0, flow, 4, (1, false, 0)).expect("room");
    let ch = (0, r.in_id);
    fc.forward(ch, 4).expect("queued");
    fc.receive(0, flow, 4, (1, false, 0)).expect("pinned to 1");
    assert_eq!(fc.ask_reroute(ch), Ok(true));
    assert_eq!(fc.ask_reroute(ch), Ok(false), "asked once per channel");
    assert_eq!(fc.hold_for_reroute(ch), Ok(true));
    assert!(fc.is_rerouting(ch));
    assert_eq!(
        fc.reroute(ch, (2, false, 0)),
        Err(FlowChannelError::Counters {
            in_port: 0,
            id: r.in_id,
            what: "rerouted with data in flight"
        })
    );
    let old = r.out_id.expect("an id on port 1's link");
    fc.ack(1, old, 4).expect("the first packet acknowledged");
    let new = fc.reroute(ch, (2, false, 0)).expect("nothing in flight");
    assert!(new.is_some() && !fc.is_rerouting(ch));
    assert_eq!(fc.outputs_in_use(1), 0, "the old output entry is released");
    assert_eq!(fc.outputs_in_use(2), 1);
    assert_eq!(fc.pinned(0, flow), Some(2), "its queued packet follows");
    fc.check().expect("consistent");
    // Its queued packet leaves by port 2; the ACK there releases the channel.
    fc.forward(ch, 4).expect("queued");
    assert!(fc.ack(2, new.expect("id"), 4).expect("ack").released);
    assert_eq!(fc.in_use(), 0);
    fc.check().expect("nothing left");
}

#[test]
fn a_reroute_to_its_own_output_or_a_full_one_changes_no_path() {
    let mut fc = FlowChannels::new(
        3,
        FlowChannelConfig {
            table_size: 1,
            unit: 256,
            reserved: 0,
        },
    );
    let a = fc
        .receive(0, Arrival::Edge(1), 4, (1, false, 0))
        .expect("room");
    let ch = (0, a.in_id);
    fc.hold_for_reroute(ch).expect("exists");
    assert_eq!(fc.reroute(ch, (1, false, 0)), Ok(a.out_id));
    assert!(!fc.is_rerouting(ch), "staying ends the reroute");
    // Fill port 2's one output id with another channel of input 1.
    fc.receive(1, Arrival::Link(0), 4, (2, false, 0))
        .expect("room on 2");
    fc.hold_for_reroute(ch).expect("exists");
    assert_eq!(
        fc.reroute(ch, (2, false, 0)),
        Err(FlowChannelError::TableFull { port: 2, size: 1 })
    );
    assert_eq!(fc.pinned(0, Arrival::Edge(1)), Some(1), "unchanged");
    fc.check().expect("consistent");
}

#[test]
fn a_channel_lives_from_its_first_packet_to_its_last_ack() {
    // Switch with ports 0 (from a host), 1 (to the next switch), 2 (to a host).
    let mut fc = FlowChannels::new(3, small());
    let flow = Arrival::Edge(42);
    assert_eq!(fc.units(1000), 4);
    assert_eq!(fc.units(1), 1);
    assert_eq!(fc.pinned(0, flow), None, "new: any port");
    let r = fc.receive(0, flow, 4, (1, false, 0)).expect("room");
    let out = r.out_id.expect("an id on the fabric link");
    assert_eq!(fc.pinned(0, flow), Some(1), "queued: pinned");
    assert_eq!(
        fc.receive(0, flow, 4, (2, true, 0)),
        Err(FlowChannelError::Misrouted {
            in_port: 0,
            id: r.in_id,
            follow: 1,
            chosen: 2
        })
    );
    assert_eq!(
        fc.receive(0, flow, 4, (1, false, 0)),
        Ok(Received { new: false, ..r }),
        "one id per flow"
    );
    let f = fc.forward((0, r.in_id), 4).expect("forwarded");
    assert_eq!(
        f,
        Forwarded {
            out_id: Some(out),
            ack: None
        }
    );
    fc.check().expect("invariants");
    let c = fc.input(0, r.in_id).expect("in use");
    assert_eq!(
        (c.queue_extent(), c.flow_extent(), c.total_extent()),
        (4, 4, 8)
    );
    // Acknowledged as far as sent: still pinned while one packet is queued.
    let up = fc.ack(1, out, 4).expect("known");
    assert_eq!(
        up,
        AckUpstream {
            in_port: 0,
            id: r.in_id,
            released: false
        }
    );
    assert_eq!(fc.pinned(0, flow), Some(1));
    fc.forward((0, r.in_id), 4).expect("forwarded");
    let up = fc.ack(1, out, 4).expect("known");
    assert!(up.released);
    assert_eq!(fc.in_use() + fc.outputs_in_use(1), 0, "nothing left");
    fc.check().expect("invariants");
    // Released: the next packet may take another path (here, to a host).
    assert_eq!(fc.pinned(0, flow), None);
    let r = fc.receive(0, flow, 1, (2, true, 0)).expect("room");
    assert_eq!(r.out_id, None);
    let f = fc.forward((0, r.in_id), 1).expect("delivered");
    assert_eq!(
        f.ack,
        Some(AckUpstream {
            in_port: 0,
            id: r.in_id,
            released: true
        })
    );
    assert_eq!(fc.in_use(), 0);
    fc.check().expect("invariants");
}

#[test]
fn a_full_table_refuses_new_channels_changes_nothing_and_frees_ids_lowest_first() {
    // Port 0 from a host, port 1 to a host, port 2 to a switch.
    let mut fc = FlowChannels::new(3, small());
    let ids: Vec<u16> = (0..4)
        .map(|k| {
            fc.receive(0, Arrival::Edge(k), 1, (1, true, 0))
                .expect("room")
                .in_id
        })
        .collect();
    assert_eq!(ids, vec![0, 1, 2, 3]);
    assert_eq!(
        fc.receive(0, Arrival::Edge(99), 1, (1, true, 0)),
        Err(FlowChannelError::TableFull { port: 0, size: 4 })
    );
    fc.check().expect("a refused packet changes nothing");
    // Channels 2 and 1 finish, 2 first.
    for id in [2u16, 1] {
        let f = fc.forward((0, id), 1).expect("delivered");
        assert!(f.ack.expect("acknowledged").released);
    }
    let next = |fc: &mut FlowChannels, k| fc.receive(0, Arrival::Edge(k), 1, (1, true, 0));
    assert_eq!(next(&mut fc, 100).map(|r| r.in_id), Ok(1), "lowest free id");
    assert_eq!(next(&mut fc, 101).map(|r| r.in_id), Ok(2));
    // A full output link refuses a new channel through it, and nothing changes.
    let mut fc = FlowChannels::new(3, small());
    for k in 0..4 {
        fc.receive(0, Arrival::Edge(k), 1, (2, false, 0))
            .expect("room");
    }
    assert!(!fc.output_has_room(2, 0));
    assert_eq!(
        fc.receive(1, Arrival::Link(0), 1, (2, false, 0)),
        Err(FlowChannelError::TableFull { port: 2, size: 4 })
    );
    assert_eq!(fc.inputs_in_use(1), 0);
    fc.check().expect("invariants");
}

#[test]
fn a_reserved_class_keeps_one_id_of_every_output_link() {
    // 3 ids per link; classes 4 and 5 keep one each (ids 2 and 1), one is shared.
    let config = FlowChannelConfig {
        table_size: 3,
        reserved: (1 << 4) | (1 << 5),
        ..small()
    };
    let mut fc = FlowChannels::new(6, config);
    let out = |fc: &mut FlowChannels, input: u16, class: u8| {
        fc.receive(input, Arrival::Link(0), 1, (5, false, class))
            .map(|r| r.out_id.expect("to a switch"))
    };
    assert_eq!(
        out(&mut fc, 0, 4),
        Ok(0),
        "the shared id first, whatever the class"
    );
    assert!(!fc.output_has_room(5, 3) && fc.output_has_room(5, 5));
    assert!(matches!(
        out(&mut fc, 1, 3),
        Err(FlowChannelError::TableFull { port: 5, .. })
    ));
    assert_eq!(out(&mut fc, 1, 4), Ok(2), "class 4's own id");
    assert_eq!(out(&mut fc, 2, 5), Ok(1), "class 5's own id");
    assert!(out(&mut fc, 3, 4).is_err() && out(&mut fc, 3, 5).is_err());
    fc.check().expect("consistent");
    // Class 4's own id released goes back to class 4 only; the shared one to any.
    fc.forward((1, 0), 1).expect("queued");
    assert!(fc.ack(5, 2, 1).expect("in use").released);
    assert!(out(&mut fc, 3, 3).is_err());
    assert_eq!(out(&mut fc, 3, 4), Ok(2));
    fc.forward((0, 0), 1).expect("queued");
    assert!(fc.ack(5, 0, 1).expect("in use").released);
    assert_eq!(out(&mut fc, 4, 3), Ok(0));
    fc.check().expect("consistent");
}

#[test]
fn a_refused_packet_names_what_it_waits_for() {
    // Port 0 from a host, port 1 from a switch, port 2 to a switch, port 3 to a host.
    let mut fc = FlowChannels::new(4, small());
    for k in 0..4 {
        fc.receive(0, Arrival::Edge(k), 1, (2, false, 0))
            .expect("room");
    }
    let outputs: Vec<(u16, (u16, u16))> = fc.output_channels(2).collect();
    assert_eq!(
        outputs,
        [(0, (0, 0)), (1, (0, 1)), (2, (0, 2)), (3, (0, 3))]
    );
    assert_eq!(fc.input_ids(0).collect::<Vec<_>>(), [0, 1, 2, 3]);
    // The edge table is full; so is port 2's link; channel 0 of port 0 goes to 2.
    assert_eq!(
        fc.blocker(0, Arrival::Edge(9), (3, true, 0)),
        Some(Blocker::InputTable)
    );
    assert_eq!(
        fc.blocker(1, Arrival::Link(2), (2, false, 0)),
        Some(Blocker::OutputTable)
    );
    assert_eq!(
        fc.blocker(0, Arrival::Edge(0), (3, true, 0)),
        Some(Blocker::Channel(0))
    );
    // What `receive` takes waits for nothing; a protocol error is no wait either.
    assert_eq!(fc.blocker(0, Arrival::Edge(1), (2, false, 0)), None);
    assert_eq!(fc.blocker(1, Arrival::Link(2), (3, true, 0)), None);
    assert_eq!(fc.blocker(1, Arrival::Link(4_000), (3, true, 0)), None);
    // Each blocker is what `receive` refuses with.
    assert!(matches!(
        fc.receive(1, Arrival::Link(2), 1, (2, false, 0)),
        Err(FlowChannelError::TableFull { port: 2, .. })
    ));
    assert!(matches!(
        fc.receive(0, Arrival::Edge(0), 1, (3, true, 0)),
        Err(FlowChannelError::Misrouted { id: 0, .. })
    ));
    fc.check().expect("nothing changed");
}

#[test]
fn an_upstream_switch_picks_the_ids_of_its_link() {
    // Switch A: host on port 0, link to B on port 1. Switch B: A on port 0, host on 1.
    let mut a = FlowChannels::new(2, small());
    let mut b = FlowChannels::new(2, small());
    let r = a
        .receive(0, Arrival::Edge(7), 2, (1, false, 0))
        .expect("room");
    let on_link = a
        .forward((0, r.in_id), 2)
        .expect("sent")
        .out_id
        .expect("id");
    let rb = b
        .receive(0, Arrival::Link(on_link), 2, (1, true, 0))
        .expect("B creates it under A's id");
    assert_eq!(rb.in_id, on_link);
    let ack = b.forward((0, on_link), 2).expect("delivered").ack;
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
            id: r.in_id,
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
    assert_eq!(
        b.receive(0, Arrival::Link(4), 1, (1, true, 0)),
        Err(FlowChannelError::UnknownChannel { port: 0, id: 4 }),
        "an id beyond the table"
    );
}

#[test]
fn counters_never_overtake_each_other() {
    let mut fc = FlowChannels::new(2, small());
    let r = fc
        .receive(0, Arrival::Edge(1), 2, (1, false, 0))
        .expect("room");
    assert!(matches!(
        fc.forward((0, r.in_id), 3),
        Err(FlowChannelError::Counters { .. })
    ));
    let out = fc
        .forward((0, r.in_id), 2)
        .expect("sent")
        .out_id
        .expect("id");
    assert!(matches!(
        fc.ack(1, out, 3),
        Err(FlowChannelError::Counters { .. })
    ));
    assert!(matches!(
        fc.discard((0, r.in_id), 1),
        Err(FlowChannelError::Counters { .. })
    ));
    fc.check().expect("a refused operation changes nothing");
}

#[test]
fn a_dropped_packet_is_acknowledged_upstream() {
    let mut fc = FlowChannels::new(2, small());
    let r = fc
        .receive(0, Arrival::Link(3), 2, (1, false, 0))
        .expect("room");
    fc.receive(0, Arrival::Link(3), 1, (1, false, 0))
        .expect("same channel");
    let out = fc
        .forward((0, r.in_id), 2)
        .expect("sent")
        .out_id
        .expect("id");
    let up = fc.discard((0, r.in_id), 1).expect("queued");
    assert_eq!((up.in_port, up.id, up.released), (0, 3, false));
    assert!(fc.ack(1, out, 2).expect("known").released);
    assert_eq!(fc.in_use(), 0);
    fc.check().expect("invariants");
}

proptest! {
    /// Random flows through one switch (inputs 0-1 from hosts, output 2 to the next
    /// switch, output 3 to a host), packets received, forwarded, dropped and
    /// acknowledged in random order: the invariants hold at every step, and once
    /// everything is acknowledged no channel is left.
    #[test]
    fn tables_never_leak(ops in proptest::collection::vec((0u8..5, 0u64..6, 1u64..5), 1..300)) {
        let mut fc = FlowChannels::new(4, small());
        // Per channel (input, id): packets queued, in order; per output-2 id: units in
        // flight.
        let mut queued: HashMap<(u16, u16), Vec<u64>> = HashMap::new();
        let mut in_flight: Vec<(u16, u64)> = Vec::new();
        for (op, key, units) in ops {
            let input = (key % 2) as u16;
            match op {
                0 => {
                    let arrival = Arrival::Edge(key);
                    let out = fc.pinned(input, arrival).unwrap_or(if units % 2 == 0 { 2 } else { 3 });
                    match fc.receive(input, arrival, units, (out, out == 3, 0)) {
                        Ok(r) => queued.entry((input, r.in_id)).or_default().push(units),
                        Err(FlowChannelError::TableFull { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
                1 | 2 => {
                    let Some((&(input, id), _)) = queued.iter().filter(|(_, q)| !q.is_empty()).min_by_key(|(k, _)| **k) else { continue };
                    let n = queued.get_mut(&(input, id)).expect("queued").remove(0);
                    if op == 1 {
                        let f = fc.forward((input, id), n).expect("queued");
                        if let Some(out_id) = f.out_id {
                            in_flight.push((out_id, n));
                        }
                    } else {
                        fc.discard((input, id), n).expect("queued");
                    }
                }
                _ => {
                    if in_flight.is_empty() { continue; }
                    let (out_id, n) = in_flight.remove(usize::try_from(key).expect("small") % in_flight.len());
                    fc.ack(2, out_id, n).expect("in flight");
                }
            }
            queued.retain(|&(i, id), q| !q.is_empty() || fc.input(i, id).is_some());
            fc.check().map_err(TestCaseError::fail)?;
        }
        // Drain: forward what is queued, then acknowledge everything in flight.
        for (&(input, id), q) in &queued {
            for &n in q {
                let f = fc.forward((input, id), n).expect("queued");
                if let Some(out_id) = f.out_id { in_flight.push((out_id, n)); }
            }
        }
        for (out_id, n) in in_flight {
            fc.ack(2, out_id, n).expect("in flight");
        }
        fc.check().map_err(TestCaseError::fail)?;
        prop_assert_eq!(fc.in_use(), 0);
        prop_assert_eq!(fc.outputs_in_use(2), 0);
    }
}

#[test]
fn endpoint_congestion_limits_what_a_channel_has_in_flight() {
    let mut fc = FlowChannels::new(3, small());
    let flow = Arrival::Edge(7);
    // Five packets of 2 units (512 B) queued for the fabric link.
    let r = fc.receive(0, flow, 2, (1, false, 0)).expect("room");
    for _ in 0..4 {
        fc.receive(0, flow, 2, (1, false, 0)).expect("same channel");
    }
    let ch = (0, r.in_id);
    let out = r.out_id.expect("a fabric link");
    // Severity 1: 1024 B (4 units) in flight; severity 2: nothing beyond one packet.
    let limit = |s: u8| match s {
        0 => None,
        1 => Some(1024),
        _ => Some(0),
    };
    assert!(fc.may_forward(ch, 2, limit), "not congested");
    fc.signal(ch, AckSignal::Congested(1)).expect("known");
    assert_eq!(fc.input(0, r.in_id).map(|c| c.ep_congestion), Some(1));
    assert!(fc.may_forward(ch, 2, limit), "nothing in flight");
    fc.forward(ch, 2).expect("queued");
    assert!(fc.may_forward(ch, 2, limit), "2 + 2 <= 4 units");
    fc.forward(ch, 2).expect("queued");
    assert!(!fc.may_forward(ch, 2, limit), "4 + 2 > 4 units");
    fc.signal(ch, AckSignal::Ongoing).expect("known");
    assert_eq!(
        fc.input(0, r.in_id).map(|c| c.ep_congestion),
        Some(1),
        "kept"
    );
    fc.ack(1, out, 2).expect("in flight");
    assert!(fc.may_forward(ch, 2, limit), "an ACK made room");
    fc.signal(ch, AckSignal::Congested(2)).expect("known");
    assert!(!fc.may_forward(ch, 2, limit), "one packet at a time");
    fc.ack(1, out, 2).expect("in flight");
    assert!(fc.may_forward(ch, 2, limit), "nothing in flight");
    fc.signal(ch, AckSignal::Normal).expect("known");
    fc.forward(ch, 2).expect("queued");
    fc.forward(ch, 2).expect("queued");
    assert!(fc.may_forward(ch, 2, limit), "cleared: no limit");
    assert_eq!(
        fc.signal((0, 3), AckSignal::Normal),
        Err(FlowChannelError::UnknownChannel { port: 0, id: 3 })
    );
    fc.check().expect("invariants");
}
