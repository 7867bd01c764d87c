//! Credit links (cbfc.md "what the project must show"): lossless by construction for any
//! VL buffer of at least one frame, credits conserved (every receiver's held blocks are its
//! queued frames' while running; at the end nothing is held and every transmitter would get
//! its receiver's whole buffer back), the credit loop limits one flow to
//! `buffer / loop time`, and frames travel on the VLs the ports' SL → VL tables give.

mod common;

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, CreditGrant, FlowControlKind, LinkFabric, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::results::{RunResults, StopReason};
use headroom_sim::topology::{builders, LinkSpec, NodeId, NodeKind};
use headroom_sim::workload::{generators, FlowSpec};
use proptest::prelude::*;

const RATE: Rate = Rate::from_gbps(100);

/// Runs `cfg` checking the invariants every `step`, then that credits drained.
fn run_checked(cfg: SimConfig, step: Time) -> RunResults {
    let sim = common::run_checking(cfg, step);
    sim.check_credits_drained()
        .unwrap_or_else(|e| panic!("credits after the run: {e}"));
    sim.finish()
}

/// A `senders`:1 incast of `size` bytes each on a star, on credit links.
fn incast(senders: usize, size: u64) -> SimConfig {
    let topo = builders::star(senders + 1, RATE, Time::from_us(1)).expect("star");
    let from: Vec<NodeId> = (1..=senders as u32).map(NodeId).collect();
    let flows = generators::incast(&from, NodeId(0), size, Time::ZERO, None, 3).expect("incast");
    let mut cfg = SimConfig::new(topo, flows);
    cfg.fabric.kind = FlowControlKind::Credit;
    cfg.switch.buffer_bytes = 32 << 20;
    cfg
}

fn assert_lossless(r: &RunResults, what: &str) {
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone), "{what}");
    assert!(
        r.lossless_drops.is_empty(),
        "{what}: {:?}",
        r.lossless_drops
    );
    assert_eq!(r.drops.values().sum::<u64>(), 0, "{what}: {:?}", r.drops);
}

#[test]
fn an_incast_behind_a_credit_switch_loses_nothing_and_leaks_no_credit() {
    let mut cfg = incast(16, 256 << 10);
    cfg.host.cc = CcConfig::None;
    let r = run_checked(cfg, Time::from_us(3));
    assert_lossless(&r, "16:1 incast");
    // The receiver's link was the bottleneck: 16 × 256 KiB at 100 Gb/s take 336 us.
    assert!(r.end_time > Time::from_us(336), "{}", r.end_time);
    // Credits held every sender's VL buffer at 128 KiB: at most 120 frames of 1,048 bytes
    // (17 blocks of 64 bytes each), which the MMU stores in 14 cells of 80 bytes.
    let frames = (128u64 << 10) / (17 * 64);
    let most = 16 * frames * 14 * 80;
    let peak = r.switches[0].peak_bytes;
    assert!(peak <= most, "peak {peak} > {most}");
    assert!(
        peak * 100 >= most * 95,
        "the VL buffers filled: peak {peak} of {most}"
    );
    // Every sender waited for credit on its VL 3 (the credit analogue of being paused),
    // nothing else did; no switch input VL held more than its buffer.
    let blocked: Vec<(u32, usize)> = r
        .ports
        .iter()
        .flat_map(|p| {
            (0..8)
                .filter(|&v| p.credit_blocked_time[v] > Time::ZERO)
                .map(move |v| (p.node, v))
        })
        .collect();
    let senders: Vec<(u32, usize)> = (1..=16).map(|n| (n, 3)).collect();
    assert_eq!(blocked, senders);
    for p in &r.ports {
        assert!(p.credit_peak_bytes.iter().all(|&b| b <= 128 << 10), "{p:?}");
    }
    assert!(r.ports.iter().flat_map(|p| p.credit_updates).sum::<u64>() > 0);
}

#[test]
fn the_same_incast_under_pfc_pauses_where_credits_withhold() {
    let mut pfc = incast(4, 256 << 10);
    pfc.fabric.kind = FlowControlKind::Pfc;
    pfc.switch.buffer_bytes = 1 << 20;
    let r = Simulation::new(pfc).expect("valid").run();
    assert_lossless(&r, "pfc");
    assert!(r.ports.iter().any(|p| p.pause_sent.iter().sum::<u32>() > 0));
    assert!(r.ports.iter().all(|p| p.credit_updates == [0; 8]
        && p.credit_blocked_time == [Time::ZERO; 8]
        && p.credit_peak_bytes == [0; 8]));
    let credit = run_checked(incast(4, 256 << 10), Time::from_us(5));
    assert_lossless(&credit, "credit");
    assert!(credit
        .ports
        .iter()
        .all(|p| p.pause_sent.iter().sum::<u32>() == 0));
}

/// Hosts 0 and 1 each send `size` to host 2 through one switch on credit links with 4 VLs,
/// on service levels `prios`; ACKs on service level 3, no congestion control.
fn two_into_one(prios: (u8, u8), size: u64) -> SimConfig {
    let topo = builders::star(3, RATE, Time::from_us(1)).expect("star");
    let flow = |src: u32, prio: u8| FlowSpec {
        src: NodeId(src),
        dst: NodeId(2),
        prio,
        size,
        start: Time::ZERO,
        dport: 100 + src as u16,
    };
    let mut cfg = SimConfig::new(topo, vec![flow(0, prios.0), flow(1, prios.1)]);
    cfg.fabric.kind = FlowControlKind::Credit;
    cfg.fabric.credit.vls = 4;
    cfg.host.ack_prio = 3;
    cfg.host.ack_pause_class = 3;
    cfg.host.cc = CcConfig::None;
    cfg
}

/// Service levels travel on the VL each sending port's SL → VL table gives: the fabric's
/// on the senders' links, the receiver's link its own. A switch queues a frame in the VL
/// of its output port's table and counts it on the VL it arrived on.
#[test]
fn each_port_maps_service_levels_to_its_own_vls() {
    let mut cfg = two_into_one((6, 2), 200 << 10);
    cfg.fabric.credit.sl_to_vl = [0, 1, 2, 3, 0, 1, 2, 3];
    // Link 2 joins the receiver, host 2: service level 6 goes on VL 1 there.
    cfg.fabric.links.insert(
        2,
        LinkFabric {
            kind: None,
            sl_to_vl: Some([0, 1, 2, 3, 0, 1, 1, 3]),
        },
    );
    cfg.switch.buffer_bytes = 8 << 20;
    let r = run_checked(cfg, Time::from_us(2));
    assert_lossless(&r, "SL to VL");
    let used = |node: u32, peer: u32| -> Vec<usize> {
        let p = r
            .ports
            .iter()
            .find(|p| p.node == node && p.peer == peer)
            .expect("port");
        (0..8).filter(|&v| p.credit_peak_bytes[v] > 0).collect()
    };
    // The switch (node 3) receives both flows on VL 2 (SL 6 and SL 2 by the fabric's
    // table) and the receiver's ACKs on VL 3.
    assert_eq!(used(3, 0), [2]);
    assert_eq!(used(3, 1), [2]);
    assert_eq!(used(3, 2), [3]);
    // The receiver gets SL 6 on VL 1 and SL 2 on VL 2; the senders their ACKs on VL 3.
    assert_eq!(used(2, 3), [1, 2]);
    assert_eq!(used(0, 3), [3]);
    assert_eq!(used(1, 3), [3]);
}

/// VL arbitration is the switch scheduler's: two flows on VLs 1 and 2 into one output, DWRR
/// weights 3:1, share it 3:1 while both last (and 1:1 with equal weights).
#[test]
fn vls_share_an_output_by_their_dwrr_weights() {
    let finish = |weights: [u32; 8]| {
        let mut cfg = two_into_one((1, 2), 2 << 20);
        cfg.switch.buffer_bytes = 8 << 20;
        cfg.switch.scheduler.weights = weights;
        let r = run_checked(cfg, Time::from_us(20));
        assert_lossless(&r, "DWRR");
        let t = |i: usize| r.flows[i].finish.expect("finished").as_ps() as f64;
        (t(0), t(1))
    };
    // 3:1: flow 0 ends after 2 MiB at 75 Gb/s (224 us), flow 1 after 4 MiB at 100 Gb/s.
    let (a, b) = finish([1, 3, 1, 1, 1, 1, 1, 1]);
    assert!((a / b - 2.0 / 3.0).abs() < 0.03, "{a} / {b}");
    let (a, b) = finish([1; 8]);
    assert!((a / b - 1.0).abs() < 0.03, "{a} / {b}");
}

/// A fabric with both kinds: hosts 0 and 1 reach switch 4 on credit links, hosts 2 and 3
/// reach switch 5 on PFC links, and the switches are joined by a PFC link. A 3:1 incast
/// into host 3 crosses both kinds: credit ports withhold credit and never pause, PFC ports
/// pause and never wait for credit, nothing is dropped and every credit comes back.
#[test]
fn credit_and_pfc_links_share_one_fabric() {
    let mut topo = headroom_sim::topology::Topology {
        nodes: vec![NodeKind::Host; 4],
        links: Vec::new(),
    };
    topo.nodes.extend([NodeKind::Switch, NodeKind::Switch]);
    let link = |a: u32, b: u32| LinkSpec {
        a: NodeId(a),
        b: NodeId(b),
        rate: RATE,
        delay: Time::from_us(1),
        error_rate: 0.0,
    };
    topo.links = vec![link(0, 4), link(1, 4), link(2, 5), link(3, 5), link(4, 5)];
    let flows = generators::incast(
        &[NodeId(0), NodeId(1), NodeId(2)],
        NodeId(3),
        1 << 20,
        Time::ZERO,
        None,
        3,
    )
    .expect("incast");
    let mut cfg = SimConfig::new(topo, flows);
    for l in [0, 1] {
        cfg.fabric.links.insert(
            l,
            LinkFabric {
                kind: Some(FlowControlKind::Credit),
                sl_to_vl: None,
            },
        );
    }
    cfg.fabric.credit.vl_buffer = 32 << 10;
    cfg.switch.buffer_bytes = 2 << 20;
    cfg.host.cc = CcConfig::None;
    cfg.validate().expect("valid");
    let r = run_checked(cfg, Time::from_us(5));
    assert_lossless(&r, "mixed");
    let port = |node: u32, peer: u32| {
        r.ports
            .iter()
            .find(|p| p.node == node && p.peer == peer)
            .expect("port")
    };
    // Switch 5's ingress from switch 4 carries two of the three flows into a link that
    // drains one: it pauses switch 4, which then withholds credit from hosts 0 and 1.
    assert!(port(5, 4).pause_sent[3] > 0, "{:?}", port(5, 4));
    for (node, peer) in [(0, 4), (1, 4)] {
        let p = port(node, peer);
        assert!(p.credit_blocked_time[3] > Time::ZERO, "{p:?}");
        assert_eq!(p.paused_time, [Time::ZERO; 8]);
        // Credit ports send credit updates, never PFC frames.
        let sw = port(peer, node);
        assert_eq!(sw.pause_sent, [0; 8]);
        assert!(sw.credit_updates[3] > 0);
    }
    for (node, peer) in [(2, 5), (3, 5), (4, 5), (5, 4)] {
        let p = port(node, peer);
        assert_eq!(p.credit_updates, [0; 8]);
        assert_eq!(p.credit_blocked_time, [Time::ZERO; 8]);
    }
    assert!(port(4, 5).paused_time[3] > Time::ZERO);
}

/// One flow from host 0 to host 1 through one switch, with a VL buffer of `vl_buffer`
/// bytes and credit updates every `period`; its FCT.
fn one_flow(vl_buffer: u64, period: Time, size: u64) -> (Time, Time) {
    one_flow_granted(vl_buffer, period, size, CreditGrant::Static)
}

/// [`one_flow`] with the switch granting credits as `grant` says.
fn one_flow_granted(vl_buffer: u64, period: Time, size: u64, grant: CreditGrant) -> (Time, Time) {
    let topo = builders::star(2, RATE, Time::from_us(1)).expect("star");
    let flows =
        generators::incast(&[NodeId(0)], NodeId(1), size, Time::ZERO, None, 0).expect("one flow");
    let mut cfg = SimConfig::new(topo, flows);
    cfg.host.cc = CcConfig::None;
    cfg.fabric.kind = FlowControlKind::Credit;
    cfg.fabric.credit.vls = 1;
    cfg.fabric.credit.vl_buffer = vl_buffer;
    cfg.fabric.credit.update_period = Some(period);
    cfg.fabric.credit.grant = grant;
    cfg.host.ack_prio = 0;
    cfg.host.ack_pause_class = 0;
    let r = run_checked(cfg, Time::from_us(50));
    assert_lossless(&r, "one flow");
    let f = &r.flows[0];
    (f.finish.expect("finished") - f.start, f.ideal_fct)
}

#[test]
fn one_flow_runs_at_line_rate_with_a_buffer_above_the_credit_loop() {
    // Loop: 2 us round trip + 1 us update period + a frame: about 3.1 us, 39 KB at
    // 100 Gb/s. 128 KiB is well above it.
    let (fct, ideal) = one_flow(128 << 10, Time::from_us(1), 4 << 20);
    let ratio = fct.as_secs_f64() / ideal.as_secs_f64();
    assert!(ratio < 1.02, "FCT {fct} ideal {ideal}");
}

#[test]
fn one_flow_is_held_to_buffer_over_loop_time_below_it() {
    // 16 KiB per loop of about 3.1 us: about 42 Gb/s, well below line rate.
    let (fct, ideal) = one_flow(16 << 10, Time::from_us(1), 4 << 20);
    let ratio = fct.as_secs_f64() / ideal.as_secs_f64();
    assert!(ratio > 1.8, "FCT {fct} ideal {ideal}");
    // More buffer, faster.
    let (bigger, _) = one_flow(32 << 10, Time::from_us(1), 4 << 20);
    assert!(bigger < fct, "{bigger} vs {fct}");
}

/// Credits granted from the shared buffer: the flow held to 16 KiB per loop by a static VL
/// buffer runs at line rate when the switch grants it from its (otherwise empty) shared
/// buffer.
#[test]
fn shared_grants_lift_one_flow_to_line_rate() {
    let (fct, ideal) = one_flow_granted(16 << 10, Time::from_us(1), 4 << 20, CreditGrant::Shared);
    let ratio = fct.as_secs_f64() / ideal.as_secs_f64();
    assert!(ratio < 1.02, "FCT {fct} ideal {ideal}");
}

/// A 16:1 incast with shared grants: the senders' VLs share the buffer by the dynamic
/// threshold (more than their 16 KiB each, less than all of it), nothing is dropped and
/// every grant comes back.
#[test]
fn an_incast_shares_the_buffer_by_the_dynamic_threshold() {
    let run = |grant: CreditGrant| {
        let mut cfg = incast(16, 256 << 10);
        cfg.host.cc = CcConfig::None;
        cfg.fabric.credit.vl_buffer = 16 << 10;
        cfg.fabric.credit.grant = grant;
        cfg.switch.buffer_bytes = 16 << 20;
        let r = run_checked(cfg, Time::from_us(5));
        assert_lossless(&r, "shared grants");
        r
    };
    let fixed = run(CreditGrant::Static);
    let shared = run(CreditGrant::Shared);
    let peak = |r: &RunResults| {
        r.ports
            .iter()
            .filter(|p| p.node == 17)
            .flat_map(|p| p.credit_peak_bytes)
            .max()
            .unwrap_or(0)
    };
    assert!(peak(&fixed) <= 16 << 10, "{}", peak(&fixed));
    assert!(peak(&shared) > 64 << 10, "{}", peak(&shared));
    assert!(shared.switches[0].peak_bytes < 16 << 20);
}

/// With static VL buffers an egress queue holds at most what the ingress VLs feeding it
/// hold: 4 × 64 KiB stays below RED's Kmin at 100 Gb/s (400 KB), so DCQCN never gets a mark.
/// Shared grants let the queue grow past Kmin, and DCQCN is marked and slows down.
#[test]
fn static_vl_buffers_keep_queues_below_the_marking_threshold() {
    let run = |grant: CreditGrant| {
        let mut cfg = incast(4, 1 << 20);
        cfg.fabric.credit.vl_buffer = 64 << 10;
        cfg.fabric.credit.grant = grant;
        let r = run_checked(cfg, Time::from_us(20));
        assert_lossless(&r, "4:1 incast with DCQCN");
        let marked: u64 = r.marking.iter().map(|m| m.totals.ce_marked).sum();
        let peak = r.switches[0].peak_bytes;
        (marked, peak)
    };
    let kmin = headroom_mech::ecn::RedConfig::scaled(RATE).kmin;
    let (marked, peak) = run(CreditGrant::Static);
    assert_eq!(marked, 0, "static: the switch held at most {peak} B");
    assert!(peak <= 4 * (64 << 10), "{peak}");
    let (marked, peak) = run(CreditGrant::Shared);
    assert!(marked > 0, "shared: the switch held {peak} B");
    assert!(peak > kmin, "{peak} <= Kmin {kmin}");
}

/// A VL buffer whose blocks cannot hold the largest frame is refused with the reason, in
/// both grant modes: under shared grants the reservation counts every 64-byte block as a
/// whole 80-byte cell, so 1,100 bytes (14 cells) hold 14 blocks, not the 17 a 1,048-byte
/// frame needs (the link used to stall at its first frame); statically 1,050 bytes hold 16.
#[test]
fn a_vl_buffer_that_holds_no_frame_in_blocks_is_refused() {
    let one_flow_on_one_vl = |grant: CreditGrant, buffer: u64| {
        let mut cfg = incast(1, 1_000);
        cfg.switch.cell_bytes = 80;
        cfg.fabric.credit.vls = 1;
        cfg.fabric.credit.grant = grant;
        cfg.fabric.credit.vl_buffer = buffer;
        cfg.host.ack_prio = 0;
        cfg.host.ack_pause_class = 0;
        cfg.flows[0].prio = 0;
        cfg.host.cc = CcConfig::None;
        cfg
    };
    for (grant, buffer, held) in [
        (CreditGrant::Shared, 1_100, 14),
        (CreditGrant::Static, 1_050, 16),
    ] {
        let Err(e) = Simulation::new(one_flow_on_one_vl(grant, buffer)) else {
            panic!("{grant:?} VL buffer of {buffer} bytes accepted");
        };
        let e = e.to_string();
        assert!(e.contains("fabric.credit.vl_buffer"), "{e}");
        assert!(e.contains(&format!("{held} blocks of 64 bytes")), "{e}");
        assert!(e.contains("needs 17"), "{e}");
    }
    // The same buffer with static credits holds the frame and the flow finishes.
    let cfg = one_flow_on_one_vl(CreditGrant::Static, 1_100);
    assert_lossless(
        &run_checked(cfg, Time::from_us(7)),
        "1,100-byte static VL buffer",
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any VL buffer that holds one largest frame, any number of VLs, update period and
    /// threshold: no drop, every flow done, no credit leaked.
    #[test]
    fn credits_are_lossless_for_any_buffer_of_one_frame(
        buffer in 1_100u64..40_000,
        vls in prop::sample::select(vec![1u8, 2, 4, 8]),
        period_ns in 50u64..5_000,
        threshold in prop::option::of(0u64..20_000),
        senders in 1usize..6,
        size in 1_000u64..200_000,
        shared in any::<bool>(),
    ) {
        let mut cfg = incast(senders, size);
        cfg.host.cc = CcConfig::None;
        if shared {
            cfg.fabric.credit.grant = CreditGrant::Shared;
            cfg.switch.buffer_bytes = 2 << 20;
        }
        cfg.fabric.credit.vls = vls;
        cfg.fabric.credit.vl_buffer = buffer;
        cfg.fabric.credit.update_period = Some(Time::from_ns(period_ns));
        cfg.fabric.credit.update_threshold = threshold;
        cfg.host.ack_prio = vls - 1;
        cfg.host.ack_pause_class = vls - 1;
        for f in &mut cfg.flows {
            f.prio %= vls;
        }
        // Shared grants reserve whole cells per block: a buffer of one frame in bytes may
        // hold less than one in blocks, and that must be refused, not left to stall.
        if let Err(e) = Simulation::new(cfg.clone()) {
            prop_assert!(shared && e.to_string().contains("fabric.credit.vl_buffer"), "{}", e);
            return Ok(());
        }
        let r = run_checked(cfg, Time::from_us(7));
        prop_assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
        prop_assert!(r.lossless_drops.is_empty());
        prop_assert_eq!(r.drops.values().sum::<u64>(), 0);
    }
}
