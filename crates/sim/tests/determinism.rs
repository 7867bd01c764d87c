//! Determinism (simulator.md "same scenario + seed → identical outputs"): two runs of the
//! same configuration and seed produce identical `RunResults` (compared as their JSON
//! serialization), also when one of them is driven in `run_until` steps; and the seed
//! matters: with random ECN marking (a queue inside the RED band) or random link errors, a
//! different seed gives a different result.

use headroom_mech::ecn::RedConfig;
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::SimConfig;
use headroom_sim::net::Simulation;
use headroom_sim::results::{RunResults, StopReason};
use headroom_sim::topology::{builders, NodeId};
use headroom_sim::workload::{cdf, generators};

const RATE: Rate = Rate::from_gbps(100);

fn json(r: &RunResults) -> String {
    serde_json::to_string(r).expect("results serialize")
}

fn run(cfg: SimConfig) -> RunResults {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run_until(Time::MAX);
    sim.finish()
}

/// A busy little fabric: leaf-spine (ECMP), Poisson web-search traffic on a lossless and a
/// lossy priority plus an incast, DCQCN with ECN marks inside a narrow RED band, 0.1 % frame
/// errors, small buffers (PFC and lossy drops), time series recorded.
fn busy(seed: u64) -> SimConfig {
    let p = builders::LeafSpine::new(2, 2, 4, RATE, Time::from_us(1));
    let mut topo = builders::leaf_spine(&p).expect("leaf_spine");
    for l in &mut topo.links {
        l.error_rate = 0.001;
    }
    let hosts = topo.hosts();
    let ws = cdf::builtin("websearch").expect("builtin CDF");
    let mut rng = generators::rng_from_seed(5);
    let mut flows = generators::poisson(
        &hosts,
        RATE,
        0.4,
        &ws,
        Time::ZERO,
        Time::from_us(150),
        3,
        None,
        &mut rng,
    )
    .expect("poisson");
    flows.extend(
        generators::poisson(
            &hosts,
            RATE,
            0.2,
            &ws,
            Time::ZERO,
            Time::from_us(150),
            0,
            None,
            &mut rng,
        )
        .expect("poisson"),
    );
    flows.extend(
        generators::incast(&hosts[1..6], hosts[0], 200_000, Time::from_us(30), None, 3)
            .expect("incast"),
    );
    flows.sort_by_key(|f| f.start);
    let mut cfg = SimConfig::new(topo, flows);
    cfg.seed = seed;
    cfg.stop_time = Some(Time::from_ms(20));
    cfg.host.rto = Time::from_us(100);
    cfg.switch.buffer_bytes = 1_000_000;
    cfg.switch.ecn.red = Some(RedConfig {
        kmin: 10_000,
        kmax: 200_000,
        pmax: 0.2,
    });
    cfg.record.sample_interval = Some(Time::from_us(5));
    cfg
}

#[test]
fn same_config_and_seed_give_identical_results() {
    let cfg = busy(42);
    let a = run(cfg.clone());
    let b = run(cfg.clone());
    eprintln!(
        "{} flows, {} events, end {}, {} PFC frames, drops {:?}",
        a.flows.len(),
        a.events,
        a.end_time,
        a.pfc_sent.len(),
        a.drops
    );
    // The scenario exercises the random and the contended parts of the engine.
    assert!(!a.pfc_sent.is_empty(), "PFC fired");
    assert!(
        a.drops.contains_key("corrupted"),
        "link errors happened: {:?}",
        a.drops
    );
    assert!(!a.rate_samples.is_empty() && !a.queue_samples.is_empty());
    assert!(
        a.rate_samples.iter().any(|s| s.gbps < 99.0),
        "DCQCN reacted to ECN marks"
    );
    assert_eq!(json(&a), json(&b), "two runs of one config differ");

    // Driving the same run in steps (with invariant checks in between) changes nothing.
    let mut sim = Simulation::new(cfg).expect("valid");
    let mut t = Time::ZERO;
    while !sim.run_until(t) {
        sim.check_invariants().expect("invariants");
        t += Time::from_ns(777);
    }
    let c = sim.finish();
    assert_eq!(
        json(&a),
        json(&c),
        "stepping with run_until changed the result"
    );
}

#[test]
fn random_ecn_marking_depends_on_the_seed() {
    // A 4:1 DCQCN incast whose queue sits inside a wide RED band: marks are random draws.
    let topo = builders::star(5, RATE, Time::from_us(1)).expect("star");
    let senders: Vec<NodeId> = (0..4).map(NodeId).collect();
    let flows =
        generators::incast(&senders, NodeId(4), 2_000_000, Time::ZERO, None, 3).expect("incast");
    let cfg = |seed: u64| {
        let mut c = SimConfig::new(topo.clone(), flows.clone());
        c.seed = seed;
        c.switch.ecn.red = Some(RedConfig {
            kmin: 20_000,
            kmax: 2_000_000,
            pmax: 0.05,
        });
        c.record.sample_interval = Some(Time::from_us(10));
        c
    };
    let a = run(cfg(1));
    let a2 = run(cfg(1));
    let b = run(cfg(2));
    for r in [&a, &b] {
        assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
    }
    assert_eq!(json(&a), json(&a2));
    assert_ne!(json(&a), json(&b), "seeds 1 and 2 gave identical results");
    // Not just a different byte somewhere: the flows' fates differ.
    let fct = |r: &RunResults| r.flows.iter().map(|f| f.finish).collect::<Vec<_>>();
    assert_ne!(
        fct(&a),
        fct(&b),
        "flow completion times do not depend on the seed"
    );
    eprintln!("seed 1: {:?}\nseed 2: {:?}", fct(&a), fct(&b));
}

#[test]
fn random_link_errors_depend_on_the_seed() {
    let mut topo = builders::star(3, RATE, Time::from_us(1)).expect("star");
    topo.links[2].error_rate = 0.01;
    let flows = generators::incast(
        &[NodeId(0), NodeId(1)],
        NodeId(2),
        1_000_000,
        Time::ZERO,
        None,
        3,
    )
    .expect("incast");
    let cfg = |seed: u64| {
        let mut c = SimConfig::new(topo.clone(), flows.clone());
        c.seed = seed;
        c.switch.ecn.enabled = false;
        c
    };
    let (a, a2, b) = (run(cfg(7)), run(cfg(7)), run(cfg(8)));
    assert_eq!(json(&a), json(&a2));
    assert_ne!(
        a.drops, b.drops,
        "corruption pattern independent of the seed"
    );
    assert_ne!(json(&a), json(&b));
}
