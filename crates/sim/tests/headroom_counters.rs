//! Per-switch headroom counters: how much of the reserved headroom is ever used, over time.

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::topology::{builders, NodeId};
use headroom_sim::workload::generators;

fn run(buffer: u64) -> headroom_sim::results::SwitchStats {
    let topo = builders::star(9, Rate::from_gbps(100), Time::from_us(1)).expect("star");
    let senders: Vec<NodeId> = (0..8).map(NodeId).collect();
    let flows =
        generators::incast(&senders, NodeId(8), 500_000, Time::ZERO, None, 3).expect("incast");
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = buffer;
    let r = Simulation::new(cfg).expect("valid").run();
    assert!(r.lossless_drops.is_empty());
    r.switches[0].clone()
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
