//! Partitioned runs give exactly the results of a single simulation.
//!
//! Random small networks (fat tree, leaf-spine, dumbbell, star) with random lossless and
//! lossy traffic, every congestion-control algorithm (PowerTCP in both modes) or none,
//! admission at the first or the last bit, corrupting links,
//! link failures, NIC receive buffers that send PFC, time series sampling, DSH/SHP/SIH, flow
//! channels (UGAL routing too), and
//! every way a run ends (all flows done, stop time, idle) are run as 1, 2, 3 and 4 parts;
//! every result (flows, PFC frames, port and switch statistics, samples, drops, event count,
//! end time) must be identical. Also: the split itself, the cases that must run as one part,
//! and the conservation invariants between windows.

use headroom_mech::buffer::mmu::StaticThresholds;
use headroom_mech::cc::{
    DctcpConfig, HpccConfig, IbCcConfig, PowerTcpConfig, PowerTcpMode, TimelyConfig,
};
use headroom_mech::tcd::ReleasedConfig;
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{
    Admission, Arbitration, CcConfig, ChannelRouting, CnpMode, CreditGrant, DetectorConfig,
    EcnPoint, FlowChannelParams, FlowControlKind, LinkFabric, LinkFailure, NicBufferConfig,
    SchemeConfig, ShpPool, SimConfig, WindowConfig,
};
use headroom_sim::net::parallel::{split, Load, Partitioned, ProbeSettings, MARGIN};
use headroom_sim::net::Simulation;
use headroom_sim::results::{RunResults, StopReason};
use headroom_sim::routing::{Routes, RoutingKind};
use headroom_sim::topology::{builders, NodeId, NodeKind, Topology};
use headroom_sim::workload::FlowSpec;
use proptest::prelude::*;

const RATE: Rate = Rate::from_gbps(100);

/// A small deterministic generator for the scenario's details.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A random scenario from `seed`.
fn scenario(seed: u64) -> SimConfig {
    let mut d = Draw(seed | 1);
    let delay = Time::from_ns(500 + d.below(1_500));
    let mut topo = match d.below(4) {
        0 => builders::fat_tree(4, RATE, delay).expect("fat tree"),
        1 => builders::leaf_spine(&builders::LeafSpine::new(3, 2, 4, RATE, delay))
            .expect("leaf-spine"),
        2 => builders::dumbbell(4, 4, RATE, Rate::from_gbps(50), delay).expect("dumbbell"),
        _ => builders::star(8, RATE, delay).expect("star"),
    };
    let hosts: Vec<NodeId> = topo.hosts();
    if d.chance(30) {
        // A corrupting link somewhere.
        let l = d.below(topo.links.len() as u64) as usize;
        topo.links[l].error_rate = 0.01;
    }
    let mut flows = Vec::new();
    let n = 4 + d.below(12);
    for _ in 0..n {
        let src = hosts[d.below(hosts.len() as u64) as usize];
        let mut dst = hosts[d.below(hosts.len() as u64) as usize];
        if dst == src {
            dst = hosts[(hosts.iter().position(|&h| h == src).unwrap_or(0) + 1) % hosts.len()];
        }
        flows.push(FlowSpec {
            src,
            dst,
            prio: if d.chance(75) { 3 } else { 0 },
            size: 1_000 + d.below(150_000),
            start: Time::from_ns(d.below(20_000)),
            dport: 100 + d.below(1_000) as u16,
        });
    }
    // An incast on top, so that PFC and ECN have work.
    let receiver = hosts[d.below(hosts.len() as u64) as usize];
    for &src in hosts.iter().filter(|&&h| h != receiver).take(5) {
        flows.push(FlowSpec {
            src,
            dst: receiver,
            prio: 3,
            size: 40_000 + d.below(60_000),
            start: Time::from_ns(d.below(2_000)),
            dport: 7,
        });
    }
    let mut cfg = SimConfig::new(topo, flows);
    cfg.seed = d.next();
    // Above every topology's headroom reservations (at most about 0.6 MB here).
    cfg.switch.buffer_bytes = 1_000_000 + d.below(2_000_000);
    // Every algorithm, HPCC and DCTCP with their window (HPCC's INT crosses parts).
    let windowed = WindowConfig {
        enabled: true,
        variable: true,
        global: d.chance(50),
    };
    match d.below(6) {
        0 | 1 => cfg.host.cc = CcConfig::None,
        2 => {}
        3 => {
            cfg.host.cc = CcConfig::Dctcp(DctcpConfig::default());
            cfg.host.window = windowed;
        }
        4 => cfg.host.cc = CcConfig::Timely(TimelyConfig::default()),
        _ => {
            cfg.host.cc = CcConfig::Hpcc(HpccConfig::default());
            cfg.host.window = windowed;
        }
    }
    if d.chance(50) {
        cfg.switch.admission = Admission::LastBit;
    }
    cfg.switch.scheme = match d.below(3) {
        0 => SchemeConfig::Sih,
        1 => SchemeConfig::Shp(ShpPool::Ratio(2.0)),
        _ => SchemeConfig::Dsh {
            delta_q: 3_000,
            delta_p: 6_000,
        },
    };
    // Static PFC levels (SIH and SHP only) in a third of those networks.
    if !matches!(cfg.switch.scheme, SchemeConfig::Dsh { .. }) && d.chance(33) {
        cfg.switch.static_pfc = Some(StaticThresholds {
            xoff_bytes: 20_000,
            xon_bytes: 8_000,
        });
    }
    if d.chance(30) {
        cfg.record.sample_interval = Some(Time::from_ns(2_000 + d.below(5_000)));
    }
    if d.chance(25) {
        cfg.host.nic_buffer = Some(NicBufferConfig {
            size: 60_000,
            xoff: 30_000,
            xon: 20_000,
            drain: Rate::from_gbps(60),
        });
    }
    if d.chance(40) {
        cfg.stop_time = Some(Time::from_us(10 + d.below(60)));
        if d.chance(50) {
            let l = &cfg.topology.links[d.below(cfg.topology.links.len() as u64) as usize];
            cfg.link_failures.push(LinkFailure {
                time: Time::from_us(2 + d.below(8)),
                a: l.a,
                b: l.b,
            });
        }
    }
    // Every congestion detector (drawn last, so the draws above make the same networks as
    // before): TCD reads pause history across parts through the pause timers.
    cfg.switch.ecn.detector = match d.below(3) {
        0 => DetectorConfig::Red,
        1 => DetectorConfig::Tcd {
            max_t_on: None,
            threshold: None,
        },
        _ => DetectorConfig::TcdReleased(ReleasedConfig::default()),
    };
    if d.chance(30) {
        cfg.host.cnp_mode = CnpMode::Poll;
    }
    // PowerTCP in place of the algorithm drawn above (drawn last too): INT mode's records
    // cross parts as HPCC's, delay mode's RTT probes as TIMELY's.
    if d.chance(25) {
        let mode = if d.chance(50) {
            PowerTcpMode::Int
        } else {
            PowerTcpMode::Delay
        };
        cfg.host.cc = CcConfig::PowerTcp(PowerTcpConfig::for_mode(mode));
        cfg.host.window = windowed;
    }
    // Credit links in place of PFC (drawn last too): FCPs cross parts as PFC frames do,
    // update timers are each port's own events.
    if d.chance(30) {
        cfg.fabric.kind = FlowControlKind::Credit;
        cfg.fabric.credit.vl_buffer = 2_000 + d.below(20_000);
        cfg.fabric.credit.update_period = Some(Time::from_ns(100 + d.below(3_000)));
        if d.chance(50) {
            cfg.fabric.credit.update_threshold = Some(d.below(8_000));
        }
        // Every (port, VL) of the widest switch (8 ports) reserves its VL buffer.
        cfg.switch.buffer_bytes = 4_000_000;
        cfg.host.nic_buffer = None;
        // Both kinds in one fabric: each link draws its own.
        if d.chance(40) {
            for l in 0..cfg.topology.links.len() {
                let kind = if d.chance(50) {
                    FlowControlKind::Credit
                } else {
                    FlowControlKind::Pfc
                };
                cfg.fabric.links.insert(
                    l,
                    LinkFabric {
                        kind: Some(kind),
                        sl_to_vl: None,
                    },
                );
            }
            cfg.switch.buffer_bytes = 8_000_000;
        }
        if d.chance(40) {
            cfg.fabric.credit.grant = CreditGrant::Shared;
        }
    }
    // InfiniBand CC in place of the algorithm drawn above (drawn last too): FECN marks at
    // dequeue and BECN CNPs cross parts as DCQCN's marks and CNPs do.
    if d.chance(20) {
        cfg.host.cc = CcConfig::IbCc(IbCcConfig::default());
        cfg.switch.ecn.point = EcnPoint::Dequeue;
        cfg.switch.ecn.enabled = true;
    }
    // Arbitration within switch queues (drawn last too): sub-queues are each port's own,
    // and application groups come from the flows' applications.
    cfg.switch.scheduler.arbitration = match d.below(5) {
        0 => Arbitration::InputPort,
        1 => Arbitration::Flow,
        2 => {
            cfg.flow_apps = (0..cfg.flows.len()).map(|f| (f % 3) as u8).collect();
            Arbitration::Application
        }
        _ => Arbitration::Fifo,
    };
    // Classes per hop (drawn last too): a frame rises a class on each hop between switches
    // after its first, in its own part; the lossless data rises from 4 (up to 7 on the fat
    // tree's four hops), the lossy data and the ACKs from 0.
    if d.chance(25) {
        let hops = Routes::compute(&cfg.topology, RoutingKind::ShortestPath)
            .expect("connected")
            .max_switch_hops();
        let rise = hops.saturating_sub(1) as u8;
        cfg.fabric.class_per_hop = true;
        for f in &mut cfg.flows {
            if f.prio == 3 {
                f.prio = 4;
            }
        }
        cfg.switch.lossless = (0..=rise).fold(0, |m, r| m | (1 << (4 + r)));
        cfg.host.ack_prio = 0;
        cfg.host.ack_pause_class = 0;
    }
    // Flow channels over the links drawn above (drawn last too), routed by UGAL in half the
    // cases without classes per hop: a frame's intermediate crosses parts with it, and each
    // edge channel's choice stays in its switch's part. Only where the drawn network admits
    // them (they refuse link failures and corrupting links).
    if d.chance(25) {
        let mut p = FlowChannelParams::default();
        if !cfg.fabric.class_per_hop && d.chance(50) {
            p.routing = ChannelRouting::Ugal {
                threshold: d.below(8_000),
            };
        }
        let mut channels = cfg.clone();
        channels.fabric.flow_channels = Some(p);
        if channels.validate().is_ok() {
            cfg = channels;
        }
    }
    cfg
}

/// Everything a run produced, as text; the packet-slot high-water mark (a property of the
/// simulator's memory, per part) left out.
fn fingerprint(mut r: RunResults) -> String {
    r.arena_slots = 0;
    serde_json::to_string(&r).expect("results serialize")
}

fn run_parts(cfg: &SimConfig, threads: usize) -> (usize, RunResults) {
    let sim = Partitioned::new(cfg.clone(), threads).expect("valid scenario");
    let parts = sim.parts();
    (parts, sim.run())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn parts_give_the_results_of_one_simulation(seed in any::<u64>()) {
        let cfg = scenario(seed);
        let single = Simulation::new(cfg.clone()).expect("valid scenario").run();
        prop_assert!(single.events > 0);
        let reference = fingerprint(single);
        for threads in 2..=4 {
            let (parts, r) = run_parts(&cfg, threads);
            prop_assert!(parts >= 2, "the scenario split into {} part(s)", parts);
            prop_assert_eq!(&fingerprint(r), &reference, "{} parts", parts);
        }
        // A run that probes threads against one gives the same results whichever it keeps,
        // whether it chooses early (no budget) or late (the run ends while probing).
        // A machine crowded from the start runs one thread without probing; one that
        // becomes crowded after the start is left to the probe's measurement.
        for (budget, margin, load) in [
            (0, 0.0, Machine::Unknown),
            (0, f64::INFINITY, Machine::Unknown),
            (3_600_000, 1.0, Machine::Unknown),
            (3_600_000, MARGIN, Machine::Crowded),
            (3_600_000, MARGIN, Machine::CrowdedAfterStart),
            (3_600_000, MARGIN, Machine::Free),
        ] {
            let settings = ProbeSettings {
                budget: std::time::Duration::from_millis(budget),
                margin,
                load: load.sampler(),
            };
            SAMPLES.with(|n| n.set(0));
            let mut sim = Partitioned::auto_with(cfg.clone(), 2, settings).expect("valid");
            sim.run_until(Time::MAX);
            let probe = sim.probe();
            let r = sim.finish();
            prop_assert_eq!(&fingerprint(r), &reference, "probe {:?}", settings);
            if let Some(p) = probe {
                match load {
                    Machine::Crowded => {
                        prop_assert!(p.crowded && p.covered == Time::ZERO, "{:?}", p);
                        prop_assert_eq!(p.kept_partitioned, Some(false));
                    }
                    _ => prop_assert!(!p.crowded && p.covered > Time::ZERO, "{:?}", p),
                }
            } else {
                prop_assert!(!matches!(load, Machine::Crowded));
            }
        }
    }
}

/// Runs that end on their last flow and runs that end at their stop time end, as two
/// parts, at the same time after the same number of events.
#[test]
fn every_ending_is_the_same_in_parts() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 1..200u64 {
        let mut cfg = scenario(seed);
        if seed % 3 == 0 {
            cfg.stop_time = None;
            cfg.link_failures.clear();
        }
        let single = Simulation::new(cfg.clone()).expect("valid").run();
        let (parts, r) = run_parts(&cfg, 2);
        assert!(parts == 2);
        assert_eq!(r.stop_reason, single.stop_reason, "seed {seed}");
        assert_eq!(r.end_time, single.end_time, "seed {seed}");
        assert_eq!(r.events, single.events, "seed {seed}");
        seen.insert(format!("{:?}", single.stop_reason));
        if seen.len() >= 2 && seed > 30 {
            break;
        }
    }
    assert!(seen.contains("Some(AllFlowsDone)"), "{seen:?}");
    assert!(seen.contains("Some(StopTime)"), "{seen:?}");
}

/// A run that stops in steps (as the CLI's progress bar drives it) and checks the
/// conservation invariants between them ends exactly like a run in one go.
#[test]
fn stepping_and_invariants_between_windows() {
    for seed in [3u64, 11, 29] {
        let cfg = scenario(seed);
        let mut sim = Partitioned::new(cfg.clone(), 3).expect("valid");
        assert!(sim.parts() >= 2);
        let mut t = Time::ZERO;
        let mut checks = 0;
        while !sim.run_until(t) {
            sim.check_invariants()
                .unwrap_or_else(|e| panic!("seed {seed} at {t}: {e}"));
            checks += 1;
            t += Time::from_ns(1_700);
        }
        sim.check_invariants()
            .unwrap_or_else(|e| panic!("seed {seed} at the end: {e}"));
        assert!(checks > 3, "seed {seed}: {checks} checks");
        let single = Simulation::new(cfg).expect("valid").run();
        assert_eq!(
            fingerprint(sim.finish()),
            fingerprint(single),
            "seed {seed}"
        );
    }
}

/// A fat tree splits into halves of whole pods: hosts with their edge switch, aggregation
/// switches with their pod, the core switches shared out; the lookahead is the link delay.
#[test]
fn fat_tree_splits_by_pods() {
    let delay = Time::from_ns(700);
    let topo = builders::fat_tree(4, RATE, delay).expect("fat tree");
    let s = split(&topo, 2);
    assert_eq!(s.parts, 2);
    assert_eq!(s.lookahead, delay);
    for l in &topo.links {
        let (a, b) = (l.a.index(), l.b.index());
        let host_link = topo.nodes[a] == NodeKind::Host || topo.nodes[b] == NodeKind::Host;
        if host_link {
            assert_eq!(s.node_part[a], s.node_part[b], "a host link is cut: {l:?}");
        }
    }
    // Every part gets a share of the switches' ports within one switch of the others.
    let ports = |part: u16| -> usize {
        topo.links
            .iter()
            .flat_map(|l| [l.a.index(), l.b.index()])
            .filter(|&n| topo.nodes[n] == NodeKind::Switch && s.node_part[n] == part)
            .count()
    };
    assert!(
        ports(0).abs_diff(ports(1)) <= 4,
        "{} vs {}",
        ports(0),
        ports(1)
    );
    // Cut links: only between aggregation and core.
    let cut = topo
        .links
        .iter()
        .filter(|l| s.node_part[l.a.index()] != s.node_part[l.b.index()])
        .count();
    assert!(cut > 0 && cut <= 8, "{cut} links cut");
}

/// Runs that cannot be split run as one part: a zero-delay link between the parts (no
/// lookahead), a run told to fail on its first lossless drop (it must stop at that very
/// event), one host.
#[test]
fn runs_that_stay_whole() {
    let mut topo = builders::star(4, RATE, Time::from_us(1)).expect("star");
    let flows = vec![FlowSpec {
        src: NodeId(0),
        dst: NodeId(1),
        prio: 3,
        size: 10_000,
        start: Time::ZERO,
        dport: 1,
    }];
    let cfg = SimConfig::new(topo.clone(), flows.clone());
    assert_eq!(Partitioned::new(cfg.clone(), 2).expect("valid").parts(), 2);
    let mut fail_fast = cfg.clone();
    fail_fast.record.fail_on_lossless_drop = true;
    assert_eq!(Partitioned::new(fail_fast, 2).expect("valid").parts(), 1);
    for l in &mut topo.links {
        l.delay = Time::ZERO;
    }
    let zero = SimConfig::new(topo, flows);
    assert_eq!(split(&zero.topology, 2).lookahead, Time::ZERO);
    let sim = Partitioned::new(zero.clone(), 2).expect("valid");
    assert_eq!(sim.parts(), 1);
    let mut link = cfg.topology.links[0].clone();
    (link.a, link.b) = (NodeId(0), NodeId(1));
    let alone = Topology {
        nodes: vec![NodeKind::Host, NodeKind::Switch],
        links: vec![link],
    };
    assert_eq!(split(&alone, 4).parts, 1);
    assert_eq!(
        fingerprint(sim.run()),
        fingerprint(Simulation::new(zero).expect("valid").run())
    );
}

/// A run with no flows (only samples until its stop time) in parts as in one: the run's
/// own events, which every part handles, are counted once.
#[test]
fn no_flows() {
    let topo = builders::fat_tree(4, RATE, Time::from_us(1)).expect("fat tree");
    let mut cfg = SimConfig::new(topo, Vec::new());
    cfg.record.sample_interval = Some(Time::from_us(1));
    cfg.stop_time = Some(Time::from_us(5));
    let (parts, r) = run_parts(&cfg, 2);
    assert_eq!(parts, 2);
    assert_eq!(r.stop_reason, Some(StopReason::StopTime));
    // Samples at 0 to 4 µs, then the stop: at 5 µs it comes before the sample, having
    // been scheduled first by the same creator (the run).
    assert_eq!(r.events, 6);
    assert_eq!(
        fingerprint(r),
        fingerprint(Simulation::new(cfg).expect("valid").run())
    );
}

/// A machine load a probe is made to see.
#[derive(Clone, Copy, Debug)]
enum Machine {
    Unknown,
    Free,
    Crowded,
    CrowdedAfterStart,
}

thread_local! {
    /// Load samples taken so far by this thread's run.
    static SAMPLES: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

impl Machine {
    fn sampler(self) -> fn() -> Option<Load> {
        match self {
            Machine::Unknown => || None,
            Machine::Free => || {
                Some(Load {
                    cores: 64,
                    others: 0,
                })
            },
            Machine::Crowded => || {
                Some(Load {
                    cores: 2,
                    others: 2,
                })
            },
            // Free for the samples before the start (they take the least), busy after.
            Machine::CrowdedAfterStart => || {
                let n = SAMPLES.with(|n| {
                    n.set(n.get() + 1);
                    n.get()
                });
                Some(Load {
                    cores: 2,
                    others: if n == 1 { 0 } else { 1 },
                })
            },
        }
    }
}
