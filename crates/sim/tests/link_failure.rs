//! A fabric link fails mid-run: frames on it are lost, routes move to the surviving
//! paths, go-back-N recovers, and every flow still finishes.

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{LinkFailure, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::topology::{builders, NodeId, NodeKind};
use headroom_sim::workload::generators;

#[test]
fn flows_survive_a_core_link_failure() {
    // k = 4 fat tree: hosts 0..16, then edge, aggregation and core switches.
    let topo = builders::fat_tree(4, Rate::from_gbps(100), Time::from_us(1)).expect("fat tree");
    let hosts: Vec<NodeId> = topo.hosts();
    let mut rng = generators::rng_from_seed(3);
    let flows =
        generators::permutation(&hosts, 2_000_000, Time::ZERO, 3, &mut rng).expect("permutation");
    // Fail a link between two switches that carries traffic: the first switch-switch link.
    let link = topo
        .links
        .iter()
        .find(|l| {
            topo.nodes[l.a.index()] == NodeKind::Switch
                && topo.nodes[l.b.index()] == NodeKind::Switch
        })
        .expect("a fabric link")
        .clone();
    let mut cfg = SimConfig::new(topo, flows);
    cfg.stop_time = Some(Time::from_ms(50));
    cfg.host.rto = Time::from_us(200);
    cfg.link_failures = vec![LinkFailure {
        time: Time::from_us(60),
        a: link.a,
        b: link.b,
    }];
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run_until(Time::MAX);
    sim.check_invariants().expect("conserved");
    let r = sim.finish();
    let lost = r.drops.get("link_down").copied().unwrap_or(0);
    assert!(
        lost > 0,
        "no frame was lost on the failed link: {:?}",
        r.drops
    );
    assert!(
        r.flows.iter().all(|f| f.finish.is_some()),
        "a flow did not finish"
    );
    assert!(
        r.flows.iter().any(|f| f.retransmitted > 0),
        "nothing was retransmitted"
    );
    assert!(r.lossless_drops.is_empty());
}

#[test]
fn a_failure_needs_a_stop_time_and_a_real_link() {
    let topo = builders::star(3, Rate::from_gbps(100), Time::from_us(1)).expect("star");
    let flows =
        generators::incast(&[NodeId(0)], NodeId(1), 1000, Time::ZERO, None, 3).expect("flow");
    let mut cfg = SimConfig::new(topo, flows);
    cfg.link_failures = vec![LinkFailure {
        time: Time::from_us(1),
        a: NodeId(0),
        b: NodeId(3),
    }];
    assert!(Simulation::new(cfg.clone()).is_err(), "no stop time");
    cfg.stop_time = Some(Time::from_ms(1));
    assert!(Simulation::new(cfg.clone()).is_ok());
    cfg.link_failures[0].b = NodeId(1);
    assert!(
        Simulation::new(cfg).is_err(),
        "hosts 0 and 1 are not linked"
    );
}

/// A switch admits a frame at its first bit; if the link fails before the last bit, the
/// frame is incomplete and must be dropped and its cells freed, not forwarded.
#[test]
fn a_frame_cut_by_a_failure_is_dropped_and_its_cells_freed() {
    // 1 ns links: at any instant host 0's switch port is receiving exactly one frame and
    // no other frame of host 0 is on the wire.
    let rate = Rate::from_gbps(100);
    let topo = builders::star(3, rate, Time::from_ns(1)).expect("star");
    let flows =
        generators::incast(&[NodeId(0)], NodeId(1), 10_000_000, Time::ZERO, None, 3).expect("flow");
    let mut cfg = SimConfig::new(topo, flows);
    let frame = cfg.host.mtu_payload + cfg.host.header_bytes + cfg.link.frame_overhead;
    let ser = rate.serialization(frame);
    cfg.stop_time = Some(Time::from_us(20));
    // Half-way through a frame's reception, long after the flow reached line rate.
    let fail = Time(ser.as_ps() * 50 + ser.as_ps() / 2);
    cfg.link_failures = vec![LinkFailure {
        time: fail,
        a: NodeId(0),
        b: NodeId(3),
    }];
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run_until(Time::MAX);
    sim.check_invariants().expect("conserved");
    let r = sim.finish();
    assert_eq!(r.drops.get("link_down").copied(), Some(1), "{:?}", r.drops);
    let sw = r.switches.iter().find(|s| s.node == 3).expect("switch");
    assert_eq!(sw.cells_resident, 0, "the cut frame's cells were freed");
    assert_eq!(r.bytes.in_flight, 0);
}
