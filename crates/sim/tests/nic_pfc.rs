//! The optional NIC receive buffer: a host that drains slower than line rate pauses its
//! switch with PFC instead of losing data.

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, NicBufferConfig, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::topology::{builders, NodeId};
use headroom_sim::workload::generators;

fn run(nic: Option<NicBufferConfig>) -> headroom_sim::results::RunResults {
    let topo = builders::star(2, Rate::from_gbps(100), Time::from_us(1)).expect("valid star");
    let flows = generators::incast(&[NodeId(0)], NodeId(1), 4_000_000, Time::ZERO, None, 3)
        .expect("valid flow");
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.host.nic_buffer = nic;
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run_until(Time::MAX);
    sim.check_invariants().expect("conserved");
    sim.finish()
}

#[test]
fn slow_receiver_pauses_its_switch_and_loses_nothing() {
    let nic = NicBufferConfig {
        size: 200_000,
        xoff: 100_000,
        xon: 50_000,
        drain: Rate::from_gbps(50),
    };
    let r = run(Some(nic));
    assert!(r.lossless_drops.is_empty(), "{:?}", r.lossless_drops);
    let host_pauses = r
        .pfc_sent
        .iter()
        .filter(|p| !p.is_switch && p.quanta > 0)
        .count();
    let host_resumes = r
        .pfc_sent
        .iter()
        .filter(|p| !p.is_switch && p.quanta == 0)
        .count();
    assert!(host_pauses > 0, "the NIC sent no PAUSE");
    assert!(host_resumes > 0, "the NIC never resumed");
    let f = &r.flows[0];
    let fct = f.fct().expect("finished");
    // Draining 4 MB at 50 Gb/s takes 640 us; the flow cannot finish much faster than that,
    // and PFC must not make it much slower.
    let drain_time = Rate::from_gbps(50).serialization(4_000_000);
    assert!(
        fct >= Time(drain_time.as_ps() * 9 / 10),
        "fct {fct} < drain time {drain_time}"
    );
    assert!(
        fct <= Time(drain_time.as_ps() * 13 / 10),
        "fct {fct} >> drain time {drain_time}"
    );
}

#[test]
fn without_a_nic_buffer_the_host_never_pauses() {
    let r = run(None);
    assert!(r.pfc_sent.iter().all(|p| p.is_switch));
    assert!(r.flows[0].finish.is_some());
}
