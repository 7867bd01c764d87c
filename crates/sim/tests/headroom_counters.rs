//! Per-switch headroom counters: how much of the reserved headroom is ever used, over time.

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::results::RunResults;
use headroom_sim::topology::{builders, NodeId};
use headroom_sim::workload::generators;

/// An 8:1 incast of 500 KB per sender on a 9-port star, CC off, with `buffer` per switch.
fn incast(buffer: u64) -> RunResults {
    let topo = builders::star(9, Rate::from_gbps(100), Time::from_us(1)).expect("star");
    let senders: Vec<NodeId> = (0..8).map(NodeId).collect();
    let flows =
        generators::incast(&senders, NodeId(8), 500_000, Time::ZERO, None, 3).expect("incast");
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = buffer;
    let r = Simulation::new(cfg).expect("valid").run();
    assert!(r.lossless_drops.is_empty());
    r
}

fn run(buffer: u64) -> headroom_sim::results::SwitchStats {
    incast(buffer).switches[0].clone()
}

#[test]
fn headroom_idle_without_congestion_and_used_under_pfc() {
    // A buffer that holds the whole 4 MB incast: no PAUSE, headroom never touched.
    let calm = run(64 << 20);
    assert_eq!(calm.headroom_utilisation_percent, [0, 0, 0]);
    assert!((calm.headroom_idle_fraction - 1.0).abs() < 1e-12);
    assert!(calm.headroom_reserved_bytes > 0);
    // A small buffer: PFC fires, headroom absorbs the bytes in flight, yet stays mostly idle.
    let busy = run(1 << 20);
    assert!(busy.headroom_utilisation_percent[2] > 0, "{busy:?}");
    assert!(busy.headroom_idle_fraction < 1.0);
    assert!(busy.headroom_utilisation_percent[0] <= busy.headroom_utilisation_percent[1]);
    assert!(busy.headroom_utilisation_percent[1] <= busy.headroom_utilisation_percent[2]);
}

/// Per-PG peaks: every PG that used headroom or shared buffer is listed, and the switch-wide
/// peak is the largest of them.
#[test]
fn per_pg_peaks_are_reported() {
    let busy = run(1 << 20);
    assert!(!busy.pgs.is_empty());
    let max_h = busy.pgs.iter().map(|p| p.headroom_bytes).max().unwrap_or(0);
    assert_eq!(max_h, busy.peak_pg_headroom_bytes);
    // Only the senders' PGs (ports 0-7, priority 3) were paused; the receiver's port (8)
    // carries ACKs through the shared pool (no private buffer here), never into headroom.
    let paused: Vec<_> = busy.pgs.iter().filter(|p| p.headroom_bytes > 0).collect();
    assert_eq!(paused.len(), 8, "{:?}", busy.pgs);
    assert!(paused.iter().all(|p| p.port < 8 && p.prio == 3));
    // Ports' headroom peaks are at least their PGs' (one lossless PG per port here: equal).
    for &(port, bytes) in &busy.port_headroom_peaks {
        let pg = busy
            .pgs
            .iter()
            .find(|p| p.port == port)
            .expect("the port's PG");
        assert_eq!(bytes, pg.headroom_bytes);
    }
}

/// A star incast: every paused host sends only to the congested receiver, so no pause is a
/// victim pause.
#[test]
fn incast_pauses_have_no_victims() {
    let r = incast(1 << 20);
    let decided: u32 = r
        .ports
        .iter()
        .map(|p| p.pause_episodes.iter().sum::<u32>())
        .sum();
    let victims: u32 = r
        .ports
        .iter()
        .map(|p| p.victim_pauses.iter().sum::<u32>())
        .sum();
    assert!(decided > 0);
    assert_eq!(victims, 0);
}

/// The same incast, plus host 0 also sending to host 9 (an idle egress): the pauses of host
/// 0's port stop that flow too, so they are victim pauses; the other ports' are not.
#[test]
fn a_pause_stopping_a_flow_to_an_idle_port_is_a_victim_pause() {
    let topo = builders::star(10, Rate::from_gbps(100), Time::from_us(1)).expect("star");
    let senders: Vec<NodeId> = (0..8).map(NodeId).collect();
    let mut flows =
        generators::incast(&senders, NodeId(8), 500_000, Time::ZERO, None, 3).expect("incast");
    let mut innocent =
        generators::incast(&[NodeId(0)], NodeId(9), 2_000_000, Time::ZERO, None, 3).expect("flow");
    innocent[0].dport = 7;
    flows.append(&mut innocent);
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = 1 << 20;
    let r = Simulation::new(cfg).expect("valid").run();
    let switch = 10;
    let victims_on = |port: u16| -> u32 {
        r.ports
            .iter()
            .filter(|p| p.node == switch && p.port == port)
            .map(|p| p.victim_pauses.iter().sum::<u32>())
            .sum()
    };
    assert!(
        victims_on(0) > 0,
        "host 0's pauses stopped its flow to host 9"
    );
    assert!((1..8).all(|port| victims_on(port) == 0));
}
