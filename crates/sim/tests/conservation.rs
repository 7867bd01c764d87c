//! Conservation (buffer-and-pfc.md §6, simulator.md "no packet is lost without being
//! counted"):
//! - payload bytes sent = delivered + dropped + in flight, and the in-flight count equals the
//!   live data packets;
//! - at every switch, cells allocated = freed + resident, the per-PG / per-queue / per-region
//!   sums agree, and the resident cells are exactly those of the queued packets;
//!
//! checked by `Simulation::check_invariants` in the middle of runs (many `run_until`
//! instants) and at the end, and from the `RunResults` counters at the end, in runs with
//! lossless PFC traffic, lossy traffic that is dropped at egress thresholds, and links that
//! corrupt frames (go-back-N must still finish every flow).

use headroom_mech::buffer::formula;
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, HeadroomSizing, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::results::{RunResults, StopReason};
use headroom_sim::topology::{builders, LinkSpec, NodeId, NodeKind, Topology};
use headroom_sim::workload::{generators, FlowSpec};

const RATE: Rate = Rate::from_gbps(100);

/// Runs `cfg`, checking the invariants at every `step` of simulated time, and at the end.
/// Returns the results and the number of mid-run checks.
fn run_checked(cfg: SimConfig, step: Time) -> (RunResults, usize) {
    let mut sim = Simulation::new(cfg).expect("valid config");
    let mut t = Time::ZERO;
    let mut checks = 0;
    loop {
        t += step;
        let ended = sim.run_until(t);
        sim.check_invariants()
            .unwrap_or_else(|e| panic!("at {}: {e}", sim.now()));
        checks += 1;
        if ended {
            break;
        }
    }
    (sim.finish(), checks)
}

/// The end-of-run accounting, from the results alone.
fn assert_conserved(r: &RunResults, what: &str) {
    let b = r.bytes;
    assert_eq!(
        b.sent,
        b.delivered + b.dropped + b.in_flight,
        "{what}: bytes {b:?}"
    );
    for s in &r.switches {
        assert_eq!(
            s.cells_allocated,
            s.cells_freed + s.cells_resident,
            "{what}: switch {} cells {s:?}",
            s.node
        );
    }
    if r.stop_reason == Some(StopReason::AllFlowsDone) {
        // Every flow is acknowledged, so every byte of it was delivered at least once.
        let sizes: u64 = r.flows.iter().map(|f| f.size).sum();
        assert!(
            b.delivered >= sizes,
            "{what}: delivered {} < flow bytes {sizes}",
            b.delivered
        );
        let retx: u64 = r.flows.iter().map(|f| f.retransmitted).sum();
        assert_eq!(
            b.sent,
            sizes + retx,
            "{what}: sent = sizes + retransmissions"
        );
    }
}

/// A star with a lossless incast (priority 3) and lossy traffic (priority 0) into the same
/// receiver: PFC holds the lossless flows, the lossy ones are dropped at the egress
/// threshold and recovered by go-back-N.
fn mixed_star() -> SimConfig {
    let topo = builders::star(5, RATE, Time::from_us(1)).expect("star");
    let mut flows = generators::incast(
        &[NodeId(0), NodeId(1)],
        NodeId(4),
        500_000,
        Time::ZERO,
        None,
        3,
    )
    .expect("incast");
    flows.extend(
        generators::incast(
            &[NodeId(2), NodeId(3)],
            NodeId(4),
            300_000,
            Time::from_us(5),
            None,
            0,
        )
        .expect("incast"),
    );
    flows.sort_by_key(|f| f.start);
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.host.rto = Time::from_us(100);
    cfg.switch.buffer_bytes = 400_000;
    cfg
}

#[test]
fn lossless_and_lossy_conserve_bytes_and_cells() {
    let (r, checks) = run_checked(mixed_star(), Time::from_us(3));
    eprintln!(
        "{checks} mid-run checks; drops {:?}; bytes {:?}",
        r.drops, r.bytes
    );
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
    assert!(checks > 20);
    assert!(r.lossless_drops.is_empty());
    assert!(r.pfc_sent.iter().any(|f| f.quanta > 0), "PFC fired");
    let lossy_drops: u64 = r.drops.values().sum();
    assert!(
        lossy_drops > 0,
        "the lossy flows were dropped: {:?}",
        r.drops
    );
    assert!(r.bytes.dropped > 0);
    assert!(r
        .flows
        .iter()
        .filter(|f| f.prio == 0)
        .any(|f| f.retransmitted > 0));
    assert!(r
        .flows
        .iter()
        .filter(|f| f.prio == 3)
        .all(|f| f.retransmitted == 0));
    assert_conserved(&r, "mixed star");
    for s in &r.switches {
        assert_eq!(s.cells_resident, 0, "empty at the end");
    }
}

#[test]
fn conservation_holds_when_stopped_mid_run() {
    // Stopped by a stop time while the lossless incast is in full swing (at 10 %, 50 % and
    // 90 % of its duration in a full run): bytes and cells in flight.
    let full = run_checked(mixed_star(), Time::from_us(50)).0;
    let busy = full
        .flows
        .iter()
        .filter(|f| f.prio == 3)
        .filter_map(|f| f.finish)
        .max();
    let busy = busy.expect("lossless flows finish");
    for pct in [10u64, 50, 90] {
        let stop = Time(busy.as_ps() / 100 * pct);
        let mut cfg = mixed_star();
        cfg.stop_time = Some(stop);
        let (r, _) = run_checked(cfg, Time::from_ns(1_700));
        assert_eq!(r.stop_reason, Some(StopReason::StopTime));
        assert!(r.bytes.in_flight > 0, "stop at {stop}: something in flight");
        assert!(
            r.switches.iter().any(|s| s.cells_resident > 0),
            "stop at {stop}: queues"
        );
        assert_conserved(&r, &format!("stop at {stop}"));
    }
}

#[test]
fn corrupting_links_are_recovered_by_go_back_n() {
    // Leaf-spine with every link corrupting 1 % of frames, lossless and lossy flows, and a
    // lossless incast; corrupted data is counted as dropped and retransmitted.
    let p = builders::LeafSpine::new(2, 2, 3, RATE, Time::from_us(1));
    let mut topo = builders::leaf_spine(&p).expect("leaf_spine");
    for l in &mut topo.links {
        l.error_rate = 0.01;
    }
    let hosts = topo.hosts();
    let mut rng = generators::rng_from_seed(7);
    let mut flows =
        generators::permutation(&hosts, 200_000, Time::ZERO, 3, &mut rng).expect("perm");
    flows.extend(
        generators::incast(&hosts[1..4], hosts[0], 150_000, Time::from_us(10), None, 3)
            .expect("incast"),
    );
    flows.extend(
        generators::permutation(&hosts, 100_000, Time::from_us(5), 0, &mut rng).expect("perm"),
    );
    flows.sort_by_key(|f| f.start);
    let mut cfg = SimConfig::new(topo, flows);
    cfg.seed = 11;
    cfg.host.rto = Time::from_us(50);
    cfg.switch.buffer_bytes = 600_000;
    let (r, checks) = run_checked(cfg, Time::from_us(2));
    eprintln!(
        "{checks} checks; drops {:?}; bytes {:?}; end {}",
        r.drops, r.bytes, r.end_time
    );
    assert_eq!(
        r.stop_reason,
        Some(StopReason::AllFlowsDone),
        "go-back-N finishes every flow"
    );
    assert!(
        r.lossless_drops.is_empty(),
        "corruption is not a buffer drop"
    );
    let corrupted = r.drops.get("corrupted").copied().unwrap_or(0);
    assert!(corrupted > 0, "frames were corrupted: {:?}", r.drops);
    assert!(
        r.flows.iter().any(|f| f.prio == 3 && f.retransmitted > 0),
        "lossless retransmits too"
    );
    assert_conserved(&r, "corrupting leaf-spine");
}

#[test]
fn heavy_corruption_single_path() {
    // 10 % corruption on the receiver's link only: ACKs/NACKs and data both get lost.
    let mut topo = builders::star(3, RATE, Time::from_us(1)).expect("star");
    topo.links[2].error_rate = 0.1;
    let flows = generators::incast(
        &[NodeId(0), NodeId(1)],
        NodeId(2),
        300_000,
        Time::ZERO,
        None,
        3,
    )
    .expect("incast");
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.rto = Time::from_us(30);
    cfg.switch.buffer_bytes = 300_000;
    let (r, _) = run_checked(cfg, Time::from_us(5));
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
    assert!(r.drops.get("corrupted").copied().unwrap_or(0) > 10);
    assert_conserved(&r, "heavy corruption");
}

/// Reproduction: a flow that has nothing outstanding while its NIC is paused by PFC for
/// longer than the retransmission timeout. Host 0 sends two lossless flows, X to host 1
/// behind a 1 Gb/s link (its backlog keeps host 0's PG in XOFF for hundreds of µs) and Y to
/// host 2 (everything Y sent is delivered and acknowledged quickly, then Y waits, paused).
/// The engine's retransmission check re-arms itself at `now + 1 ps` when the timer is
/// overdue but nothing is outstanding, so Y's timer fires every picosecond until the pause
/// ends: about 10^6 events per simulated µs. Checked in 1 µs windows so that the failure is
/// fast; then the run must finish with every flow done.
#[test]
fn paused_idle_flow_does_not_spin_its_retransmission_timer() {
    let link = |a: u32, rate: Rate| LinkSpec {
        a: NodeId(a),
        b: NodeId(3),
        rate,
        delay: Time::from_us(1),
        error_rate: 0.0,
    };
    let topo = Topology {
        nodes: vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
        ],
        links: vec![link(0, RATE), link(1, Rate::from_gbps(1)), link(2, RATE)],
    };
    let flow = |dst: u32, dport: u16| FlowSpec {
        src: NodeId(0),
        dst: NodeId(dst),
        prio: 3,
        size: 300_000,
        start: Time::ZERO,
        dport,
    };
    let mut cfg = SimConfig::new(topo, vec![flow(1, 1), flow(2, 2)]);
    cfg.host.cc = CcConfig::None;
    cfg.host.rto = Time::from_us(20);
    cfg.switch.buffer_bytes = 250_000;
    cfg.switch.headroom = HeadroomSizing::PfcGuide {
        mtu_r: formula::MAX_FRAME_BYTES,
        mtu_s: formula::MAX_FRAME_BYTES,
        response: formula::PEER_RESPONSE_BYTES,
    };
    let mut sim = Simulation::new(cfg).expect("valid");
    let window = Time::from_us(1);
    let mut worst = (0u64, Time::ZERO);
    for k in 1..=300u64 {
        let before = sim.events();
        if sim.run_until(Time(window.as_ps() * k)) {
            break;
        }
        let n = sim.events() - before;
        if n > worst.0 {
            worst = (n, Time(window.as_ps() * k));
        }
        assert!(
            n < 50_000,
            "{n} events in the µs before {}: an event storm (nothing else happens at 1 Gb/s)",
            Time(window.as_ps() * k)
        );
    }
    eprintln!("busiest µs: {} events (ending {})", worst.0, worst.1);
    sim.run_until(Time::MAX);
    sim.check_invariants().expect("invariants");
    let r = sim.finish();
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
    assert!(
        r.ports[0].paused_time[3] > Time::from_us(100),
        "host 0 was paused for long"
    );
}
