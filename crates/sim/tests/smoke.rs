//! A 2:1 incast finishes with and without congestion control.
#![allow(clippy::unwrap_used)]

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::topology::builders;
use headroom_sim::topology::NodeId;
use headroom_sim::workload::generators;

#[test]
fn incast_2to1_finishes() {
    let topo = builders::star(3, Rate::from_gbps(100), Time::from_us(1)).unwrap();
    let flows = generators::incast(
        &[NodeId(0), NodeId(1)],
        NodeId(2),
        1_000_000,
        Time::ZERO,
        None,
        3,
    )
    .unwrap();
    for cc in [CcConfig::None, SimConfig::new(topo.clone(), vec![]).host.cc] {
        let mut cfg = SimConfig::new(topo.clone(), flows.clone());
        cfg.host.cc = cc;
        let mut sim = Simulation::new(cfg).unwrap();
        sim.run_until(Time::MAX);
        sim.check_invariants().unwrap();
        let r = sim.finish();
        eprintln!(
            "{:?} events {} end {} pfc {} drops {:?}",
            r.stop_reason,
            r.events,
            r.end_time,
            r.pfc_sent.len(),
            r.drops
        );
        for f in &r.flows {
            eprintln!(
                "flow {} fct {:?} ideal {} slow {:?}",
                f.id,
                f.fct(),
                f.ideal_fct,
                f.slowdown()
            );
        }
        assert!(r.flows.iter().all(|f| f.finish.is_some()));
        assert!(r.lossless_drops.is_empty());
    }
}
