//! PFC deadlock: a ring whose shortest paths form a cyclic buffer dependency locks up under
//! load and is stopped with the cycle named; detection is off or finds nothing otherwise;
//! the same ring routed on a spanning tree has no cycle and finishes; a PFC watchdog breaks
//! the deadlock (by dropping, or by forwarding through the pause). On credit links the same
//! ring runs out of credit in a cycle and goes idle: that is named a credit deadlock too.

use headroom_mech::pfcwd::{WatchdogAction, WatchdogConfig};
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, SimConfig};
use headroom_sim::net::parallel::{Partitioned, ProbeSettings};
use headroom_sim::results::{RunResults, StopReason};
use headroom_sim::routing::RoutingKind;
use headroom_sim::topology::{LinkSpec, NodeId, NodeKind, Topology};
use headroom_sim::workload::FlowSpec;

const RATE: Rate = Rate::from_gbps(100);

fn link(a: u32, b: u32) -> LinkSpec {
    LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: RATE,
        delay: Time::from_us(1),
        error_rate: 0.0,
    }
}

/// Five switches in a ring (nodes 5-9), one host on each (host i on switch 5 + i); host i
/// sends to host i + 2, whose only shortest path runs clockwise through two ring links,
/// so every ring link carries two flows and each switch's clockwise queue waits for the
/// next switch's: a cyclic buffer dependency. No congestion control, small buffers.
fn ring(size: u64) -> SimConfig {
    let n = 5u32;
    let mut nodes = vec![NodeKind::Host; n as usize];
    nodes.extend(std::iter::repeat_n(NodeKind::Switch, n as usize));
    let mut links: Vec<LinkSpec> = (0..n).map(|i| link(i, n + i)).collect();
    links.extend((0..n).map(|i| link(n + i, n + (i + 1) % n)));
    let flows = (0..n)
        .map(|i| FlowSpec {
            src: NodeId(i),
            dst: NodeId((i + 2) % n),
            prio: 3,
            size,
            start: Time::ZERO,
            dport: 100 + i as u16,
        })
        .collect();
    let mut cfg = SimConfig::new(Topology { nodes, links }, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = 400_000;
    cfg.stop_time = Some(Time::from_ms(20));
    cfg
}

fn run(cfg: SimConfig, threads: usize) -> RunResults {
    let mut sim = Partitioned::new(cfg, threads).expect("valid config");
    sim.run_until(Time::MAX);
    sim.check_invariants().expect("invariants");
    sim.finish()
}

/// The deadlock that stopped `r` (which must have stopped for one).
fn the_cycle(r: &RunResults) -> &headroom_sim::net::Deadlock {
    assert_eq!(
        r.stop_reason,
        Some(StopReason::Deadlock),
        "{:?}",
        r.stop_reason
    );
    r.deadlock.as_ref().expect("the cycle")
}

#[test]
fn a_ring_with_a_cyclic_dependency_deadlocks_and_the_cycle_is_named() {
    let r = run(ring(50_000_000), 1);
    let d = the_cycle(&r);
    let nodes: Vec<u32> = d.cycle.iter().map(|q| q.node).collect();
    assert_eq!(nodes.len(), 5, "every ring switch is in the cycle: {d}");
    for (q, next) in d.cycle.iter().zip(d.cycle.iter().cycle().skip(1)) {
        assert_eq!(
            q.peer, next.node,
            "each queue is paused by the next one's switch: {d}"
        );
        assert_eq!(q.prio, 3);
        assert!(q.bytes > 0 && q.paused_since + Time::from_ms(1) <= d.detected_at);
    }
    // Detected within one and a half detection times of the lock-up, far before 20 ms.
    assert!(d.detected_at < Time::from_ms(5), "{d}");
    assert_eq!(r.end_time, d.detected_at);
    assert!(r.flows.iter().all(|f| f.finish.is_none()));
}

#[test]
fn a_ring_of_credit_links_runs_out_of_credit_in_a_cycle_and_the_cycle_is_named() {
    let mut cfg = ring(50_000_000);
    cfg.fabric.kind = headroom_sim::config::FlowControlKind::Credit;
    cfg.fabric.credit.vl_buffer = 16 << 10;
    let r = run(cfg.clone(), 1);
    let d = the_cycle(&r);
    assert_eq!(d.cycle.len(), 5, "{d}");
    assert!(d.to_string().starts_with("credit deadlock at"), "{d}");
    for (q, next) in d.cycle.iter().zip(d.cycle.iter().cycle().skip(1)) {
        assert!(q.credit && q.bytes > 0, "{d}");
        assert_eq!(q.peer, next.node, "{d}");
    }
    assert!(r.flows.iter().all(|f| f.finish.is_none()));
    for threads in 2..=3 {
        assert_eq!(
            run(cfg.clone(), threads).deadlock,
            r.deadlock,
            "{threads} threads"
        );
    }
    // Without detection the same run just goes idle, unfinished.
    cfg.deadlock_detection = None;
    cfg.stop_time = None;
    let idle = run(cfg, 1);
    assert_eq!(idle.stop_reason, Some(StopReason::Idle));
    assert!(idle.deadlock.is_none() && idle.flows.iter().all(|f| f.finish.is_none()));
}

/// Classes per hop: on the ring's second link a frame travels one class up (VL or
/// priority 4), so the clockwise queues of class 3 wait only for queues of class 4, which
/// wait for the hosts: no cycle. The ring that deadlocked finishes, on PFC and on credit
/// links, on one thread and on three.
#[test]
fn a_class_per_hop_breaks_the_ring_s_cycle() {
    use headroom_sim::config::FlowControlKind;
    for kind in [FlowControlKind::Pfc, FlowControlKind::Credit] {
        let mut cfg = ring(5_000_000);
        cfg.fabric.kind = kind;
        cfg.fabric.credit.vl_buffer = 16 << 10;
        cfg.switch.lossless = (1 << 3) | (1 << 4);
        let locked = run(cfg.clone(), 1);
        the_cycle(&locked);
        cfg.fabric.class_per_hop = true;
        // The ACKs rise too: from 5 to 6, both lossy on PFC links.
        cfg.host.ack_prio = 5;
        cfg.host.ack_pause_class = 5;
        let r = run(cfg.clone(), 1);
        assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone), "{kind:?}");
        assert!(
            r.deadlock.is_none() && r.lossless_drops.is_empty(),
            "{kind:?}"
        );
        // Between switches the first hop's queues hold class 3, the second's class 4.
        let ring_ports = r.ports.iter().filter(|p| p.node >= 5 && p.port > 0);
        let (mut first, mut second) = (0, 0);
        for p in ring_ports {
            first += p.peak_queue[3];
            second += p.peak_queue[4];
        }
        assert!(first > 0 && second > 0, "{kind:?}: {first} {second}");
        let classes = |r: &RunResults| r.ports.iter().map(|p| p.peak_queue).collect::<Vec<_>>();
        assert!(
            classes(&locked).iter().all(|q| q[4] == 0),
            "{kind:?}: without it, class 4 is never used"
        );
        let split = run(cfg, 3);
        assert_eq!(r.flows, split.flows, "{kind:?}: in parts as in one");
    }
}

/// Classes per hop that do not exist on the longest route are refused, naming the field.
#[test]
fn classes_per_hop_must_exist_on_the_longest_route() {
    use headroom_sim::config::FlowControlKind;
    let err = |cfg: SimConfig| match Partitioned::new(cfg, 1) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted"),
    };
    let mut cfg = ring(10_000);
    cfg.fabric.class_per_hop = true;
    cfg.host.ack_prio = 5;
    cfg.host.ack_pause_class = 5;
    // Flows in lossless class 3 would rise to lossy class 4.
    let e = err(cfg.clone());
    assert!(e.contains("switch.lossless") && e.contains("flow 0"), "{e}");
    cfg.switch.lossless = (1 << 3) | (1 << 4);
    Partitioned::new(cfg.clone(), 1).expect("every class exists");
    // ACKs in class 7 would rise to 8.
    let mut high_acks = cfg.clone();
    high_acks.host.ack_prio = 7;
    high_acks.host.ack_pause_class = 7;
    let e = err(high_acks);
    assert!(
        e.contains("fabric.class_per_hop") && e.contains("host.ack_prio"),
        "{e}"
    );
    // Four VLs: flows in VL 3 would rise to VL 4.
    cfg.fabric.kind = FlowControlKind::Credit;
    cfg.fabric.credit.vls = 4;
    cfg.fabric.credit.vl_buffer = 16 << 10;
    cfg.host.ack_prio = 2;
    cfg.host.ack_pause_class = 2;
    let e = err(cfg.clone());
    assert!(
        e.contains("fabric.class_per_hop") && e.contains("VL 4"),
        "{e}"
    );
}

#[test]
fn a_credit_fabric_that_drains_reports_no_deadlock() {
    let mut cfg = ring(20_000);
    cfg.fabric.kind = headroom_sim::config::FlowControlKind::Credit;
    cfg.fabric.credit.vl_buffer = 16 << 10;
    let r = run(cfg, 1);
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
}

#[test]
fn the_deadlock_is_found_at_the_same_time_with_the_same_cycle_on_any_thread_count() {
    let one = run(ring(50_000_000), 1);
    for threads in 2..=3 {
        let many = run(ring(50_000_000), threads);
        assert_eq!(one.deadlock, many.deadlock, "{threads} threads");
        assert_eq!(one.events, many.events, "{threads} threads");
    }
}

#[test]
fn without_detection_the_deadlocked_ring_runs_to_its_stop_time() {
    let mut cfg = ring(50_000_000);
    cfg.deadlock_detection = None;
    cfg.stop_time = Some(Time::from_ms(4));
    let r = run(cfg, 1);
    assert_eq!(r.stop_reason, Some(StopReason::StopTime));
    assert!(r.deadlock.is_none());
}

#[test]
fn light_traffic_on_the_same_ring_finishes_without_a_false_alarm() {
    // Small flows: queues build and drain, no cycle stays paused.
    let r = run(ring(20_000), 1);
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
}

#[test]
fn the_same_ring_routed_on_a_spanning_tree_does_not_deadlock() {
    // The tree drops one ring link: paths no longer close a cycle, so the same traffic
    // finishes (slowly: the tree's links carry more).
    let mut cfg = ring(2_000_000);
    cfg.routing = RoutingKind::SpanningTree;
    cfg.stop_time = None;
    let r = run(cfg.clone(), 1);
    assert_eq!(
        r.stop_reason,
        Some(StopReason::AllFlowsDone),
        "{:?}",
        r.deadlock
    );
    // Shortest paths on the same traffic do lock up.
    cfg.routing = RoutingKind::ShortestPath;
    cfg.stop_time = Some(Time::from_ms(20));
    assert_eq!(run(cfg, 1).stop_reason, Some(StopReason::Deadlock));
}

#[test]
fn a_probing_run_stepped_in_small_slices_finds_the_same_deadlock() {
    let reference = run(ring(50_000_000), 1);
    for (budget, margin) in [(3_600_000, 1.0), (0, 0.0), (0, f64::INFINITY)] {
        let settings = ProbeSettings {
            budget: std::time::Duration::from_millis(budget),
            margin,
            load: || None,
        };
        let mut sim = Partitioned::auto_with(ring(50_000_000), 2, settings).expect("valid");
        let mut limit = Time::ZERO;
        while !sim.run_until(limit) {
            limit += Time::from_us(37);
        }
        let r = sim.finish();
        assert_eq!(r.deadlock, reference.deadlock, "{settings:?}");
        assert_eq!(r.events, reference.events);
    }
}

fn with_watchdog(mut cfg: SimConfig, action: WatchdogAction) -> SimConfig {
    cfg.switch.watchdog = Some(WatchdogConfig {
        detection: Time::from_us(200),
        restoration: Time::from_us(200),
        action,
        interval: Time::from_us(100),
    });
    cfg
}

#[test]
fn the_pfc_watchdog_breaks_the_deadlock_by_dropping_the_stormy_queues() {
    let cfg = with_watchdog(ring(50_000_000), WatchdogAction::Drop);
    let r = run(cfg.clone(), 1);
    assert_eq!(
        r.stop_reason,
        Some(StopReason::StopTime),
        "{:?}",
        r.deadlock
    );
    assert!(
        r.watchdog.storms >= 5,
        "every ring queue storms: {:?}",
        r.watchdog
    );
    assert!(r.watchdog.restorations <= r.watchdog.storms);
    assert!(
        r.drops.get("pfcwd").copied().unwrap_or(0) > 0,
        "{:?}",
        r.drops
    );
    assert!(
        r.lossless_drops.is_empty(),
        "drops are the watchdog's, not overflow"
    );
    // Polls and their drops happen at the same times on any number of threads.
    for threads in 2..=3 {
        let many = run(cfg.clone(), threads);
        assert_eq!(many.watchdog, r.watchdog, "{threads} threads");
        assert_eq!(many.drops, r.drops, "{threads} threads");
        assert_eq!(many.events, r.events, "{threads} threads");
    }
}

#[test]
fn a_forwarding_watchdog_sends_through_the_pause_and_the_ring_moves_again() {
    let mut cfg = with_watchdog(ring(2_000_000), WatchdogAction::Forward);
    cfg.stop_time = Some(Time::from_ms(50));
    let r = run(cfg, 1);
    assert!(r.watchdog.storms > 0, "{:?}", r.watchdog);
    assert!(
        !r.drops.contains_key("pfcwd"),
        "forwarding drops nothing itself"
    );
    assert_eq!(
        r.stop_reason,
        Some(StopReason::AllFlowsDone),
        "{:?}",
        r.deadlock
    );
}

#[test]
fn without_a_storm_the_watchdog_changes_nothing() {
    // Light traffic: no queue stays paused for the detection time.
    let plain = run(ring(20_000), 1);
    let watched = run(with_watchdog(ring(20_000), WatchdogAction::Drop), 1);
    assert_eq!(watched.watchdog.storms, 0);
    assert_eq!(
        watched.flows.iter().map(|f| f.finish).collect::<Vec<_>>(),
        plain.flows.iter().map(|f| f.finish).collect::<Vec<_>>()
    );
}

/// The ring on a flow-channel fabric with big buffers (no PAUSE) and `table_size` flow ids
/// per link: each ring link carries two flows (host i's first hop, host i - 1's second).
fn channel_ring(table_size: u16) -> SimConfig {
    let mut cfg = ring(200_000);
    cfg.switch.buffer_bytes = 16 << 20;
    cfg.fabric.flow_channels = Some(headroom_sim::config::FlowChannelParams {
        table_size,
        ..Default::default()
    });
    cfg
}

/// With one id per ring link, host i's channel holds the id of the link out of switch i
/// while its frames wait at switch i + 1 for the next link's, held by host i + 1's channel:
/// every switch's frames wait for the next one's, and the run is stopped with that cycle
/// (the same on any number of threads). With two ids per link every flow finishes.
#[test]
fn frames_waiting_for_each_others_flow_channels_are_a_deadlock() {
    let r = run(channel_ring(1), 1);
    let d = the_cycle(&r);
    assert!(d.to_string().starts_with("flow-channel deadlock at"), "{d}");
    assert_eq!(d.cycle.len(), 5, "every ring switch is in the cycle: {d}");
    for (q, next) in d.cycle.iter().zip(d.cycle.iter().cycle().skip(1)) {
        // Frames from the previous switch wait on one ring port for the id of the link
        // to the next on the other (port 0 leads to the host), whose channel's frames
        // wait there.
        let input = q.waiting_on.expect("frames wait for a channel");
        assert!(input > 0 && q.port > 0 && q.port != input, "{d}");
        assert_eq!(q.peer, next.node, "{d}");
        assert!(q.bytes > 0 && q.paused_since + Time::from_ms(1) <= d.detected_at);
        assert!(!q.credit);
    }
    assert!(d.detected_at < Time::from_ms(2), "{d}");
    let pauses: u32 = r
        .ports
        .iter()
        .map(|p| p.pause_sent.iter().sum::<u32>())
        .sum();
    assert_eq!(pauses, 0, "no PAUSE: the tables alone lock up");
    assert!(r.flows.iter().all(|f| f.finish.is_none()));
    for threads in 2..=3 {
        let many = run(channel_ring(1), threads);
        assert_eq!(many.deadlock, r.deadlock, "{threads} threads");
        assert_eq!(many.events, r.events, "{threads} threads");
    }
    let two = run(channel_ring(2), 1);
    assert_eq!(two.stop_reason, Some(StopReason::AllFlowsDone));
    assert!(two.deadlock.is_none());
}

/// With classes per hop each class frames rise to between switches keeps one flow id of
/// every link. On the ring with two flows per host (four channels per ring link) and two
/// ids per link, the first hops' channels take both ids and the second hops' frames wait
/// for them in a cycle; with `class_per_hop` the second hop's class 4 keeps one id, its
/// frames wait only for channels of class 4, which only deliver: every flow finishes, on
/// one thread and on three. One id per link leaves none to share: refused.
#[test]
fn a_class_per_hop_keeps_flow_ids_for_the_higher_classes() {
    let mut cfg = channel_ring(2);
    let more: Vec<FlowSpec> = cfg
        .flows
        .iter()
        .map(|f| FlowSpec {
            dport: f.dport + 50,
            ..f.clone()
        })
        .collect();
    cfg.flows.extend(more);
    cfg.switch.lossless = (1 << 3) | (1 << 4);
    cfg.host.ack_prio = 5;
    cfg.host.ack_pause_class = 5;
    let locked = run(cfg.clone(), 1);
    assert!(
        the_cycle(&locked)
            .to_string()
            .starts_with("flow-channel deadlock"),
        "{:?}",
        locked.deadlock
    );
    cfg.fabric.class_per_hop = true;
    let r = run(cfg.clone(), 1);
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
    let c = r.channels.as_ref().expect("flow channels");
    assert!(c.waits > 0, "the tables were full at times");
    assert_eq!(run(cfg.clone(), 3).flows, r.flows, "3 threads");
    cfg.fabric.flow_channels = Some(headroom_sim::config::FlowChannelParams {
        table_size: 1,
        ..Default::default()
    });
    let refused = Partitioned::new(cfg, 1)
        .err()
        .expect("no shared id")
        .to_string();
    assert!(
        refused.contains("fabric.flow_channels.table_size") && refused.contains("at least 2"),
        "{refused}"
    );
}
