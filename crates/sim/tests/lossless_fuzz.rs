//! Randomized lossless scenarios (buffer-and-pfc.md §6): small fabrics (star, dumbbell,
//! leaf-spine), random incasts and background flows on one or two lossless priorities
//! (plus some lossy traffic that competes for the shared pool), random rates, cables,
//! MTUs, cell sizes, alphas and PFC modes, with buffers only a little larger than the
//! headroom reservation so that PFC fires all the time. Headroom is sized by one of the
//! three formulas. Every case must end with:
//! - zero lossless drops,
//! - the conservation invariants holding (also checked mid-run),
//! - every flow finished (no deadlock: these topologies have no cyclic buffer dependency),
//!   long before a generous stop time.
//!
//! Soundness of the sizing: the PFC guide and DSH formulas count bytes, not cells, so they
//! are used with cells no larger than 64 B (at most 64 B of rounding per frame, far less
//! than their slack: their MTU terms assume 9216 B frames and the refresh margin below),
//! as the formulas give them (no padding: the switch admits frames at their first bit);
//! SONiC's formula, which has a cell-occupancy factor, is used with 1-256 B cells and a
//! small-packet share of 100 %. PAUSE refreshes are sent at half the timer, so the timer is
//! chosen long enough that half of it exceeds a maximum frame plus the PFC frame.
//!
//! In about a third of the cases the links use credits instead (cbfc.md): any VL buffer of
//! at least one largest frame, 1–8 VLs, any update period and threshold; in two fifths of
//! those each link draws PFC or credits, and in two fifths the switches grant credits from
//! their shared buffer. They must end the same way, and with every
//! credit returned (`check_credits_drained`). Congestion
//! control is drawn from every algorithm, InfiniBand CC included, with PFC and credits.
//! In about a quarter of the cases flow channels run over the links (any table size, from
//! 2 ids per link, units, match, routing (UGAL too), ACK batch and timers): they must end
//! the same way, with no channel left in any table and no frame waiting for one. Half of those run
//! endpoint congestion management (any thresholds, growth watched or not, two limit
//! tables, release delays) with a queue per flow: flows held at their injection limits or
//! release delays must be let go;
//! and half of them FGFC (any watermarks, pause and credit): paused sources must resume.
//! A third of the flow-channel cases meter flows hop by hop (any watermarks, margin and
//! first credit): every metered flow must get its credit back. Half of the adaptive ones
//! reroute flows off overloaded outputs: flows held for a reroute must be let go. A quarter limit what a host
//! port may have in the fabric (below a frame up to 64 KB): every count must return to 0.
//! In a fifth of the fabrics of one link kind, frames rise a class at every hop between
//! switches after their first (`class_per_hop`, with the risen PFC classes lossless as
//! their own): they must end the same way.

use headroom_mech::buffer::formula;
use headroom_mech::buffer::mmu::StaticThresholds;
use headroom_mech::buffer::Alpha;
use headroom_mech::cc::{
    DcqcnConfig, DctcpConfig, HpccConfig, IbCcConfig, PowerTcpConfig, PowerTcpMode, TimelyConfig,
};
use headroom_mech::endpoint_congestion::{EndpointConfig, Watermarks};
use headroom_mech::fgfc::FgfcConfig;
use headroom_mech::hop_credit::HopCreditConfig;
use headroom_mech::pfc::PfcConfig;
use headroom_mech::tcd::ReleasedConfig;
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{
    AlphaPolicy, Arbitration, CcConfig, ChannelRouting, CreditGrant, DetectorConfig, EcnPoint,
    EdgeMatch, FlowChannelParams, FlowControlKind, HeadroomSizing, IlidInjectionConfig, LinkFabric,
    RerouteConfig, SchemeConfig, SimConfig, WindowConfig,
};
use headroom_sim::net::parallel::Partitioned;
use headroom_sim::net::Simulation;
use headroom_sim::results::StopReason;
use headroom_sim::routing::{Routes, RoutingKind};
use headroom_sim::topology::{builders, NodeId, NodeKind, Topology};
use headroom_sim::workload::FlowSpec;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand::Rng;
use rand::SeedableRng;
use rand_pcg::Pcg64;

const STOP: Time = Time::from_ms(100);
/// Go-back-N timeout (the HPCC simulator's 1 ms default would do as well; lossy tail drops
/// are recovered by it). A stalled lossless flow paused with nothing outstanding for longer
/// than this used to make the engine re-arm the timer every picosecond (see
/// `conservation.rs`, `paused_idle_flow_does_not_spin_its_retransmission_timer`).
const RTO: Time = Time::from_us(200);

/// A scenario, described for the failure message.
#[derive(Debug)]
struct Case {
    what: String,
    cfg: SimConfig,
}

fn pick<T: Copy>(rng: &mut Pcg64, xs: &[T]) -> T {
    xs[rng.gen_range(0..xs.len())]
}

fn topology(rng: &mut Pcg64) -> (String, Topology) {
    let rate = Rate::from_gbps(pick(rng, &[25, 40, 100]));
    let delay = Time::from_ns(rng.gen_range(10..2_000));
    match rng.gen_range(0..3) {
        0 => {
            let n = rng.gen_range(3..=6);
            (
                format!("star({n}, {rate}, {delay})"),
                builders::star(n, rate, delay).expect("star"),
            )
        }
        1 => {
            let (l, r) = (rng.gen_range(1..=3), rng.gen_range(1..=3));
            let b = Rate(rate.bps() / pick(rng, &[1, 2, 4]));
            (
                format!("dumbbell({l}, {r}, {rate}, {b}, {delay})"),
                builders::dumbbell(l, r, rate, b, delay).expect("dumbbell"),
            )
        }
        _ => {
            let (leaves, spines, hpl) = (
                rng.gen_range(2..=3),
                rng.gen_range(1..=2),
                rng.gen_range(1..=3),
            );
            let p = builders::LeafSpine::new(leaves, spines, hpl, rate, delay);
            let p = if rng.gen_bool(0.5) {
                p.with_oversubscription(pick(rng, &[1.0, 2.0]))
                    .expect("ratio")
            } else {
                p
            };
            (
                format!("{p:?}"),
                builders::leaf_spine(&p).expect("leaf_spine"),
            )
        }
    }
}

/// Headroom reserved by the most demanding switch: under SIH (`Reservation::PerPg`) every
/// lossless PG of every port gets the formula's bytes, rounded up to cells; under DSH
/// (`per_port`) every port gets them once, as its insurance.
fn max_reserved(
    topo: &Topology,
    h: &HeadroomSizing,
    cell: u32,
    lossless: u8,
    per_port: bool,
) -> u64 {
    let per_port_pgs = if per_port {
        1
    } else {
        u64::from(lossless.count_ones())
    };
    let mut per_switch = vec![0u64; topo.nodes.len()];
    for l in &topo.links {
        let b = h.bytes(l.rate, l.delay, cell).div_ceil(u64::from(cell)) * u64::from(cell);
        for n in [l.a, l.b] {
            if topo.nodes[n.index()] == NodeKind::Switch {
                per_switch[n.index()] += b * per_port_pgs;
            }
        }
    }
    per_switch.into_iter().max().unwrap_or(0)
}

fn case(seed: u64) -> Case {
    let mut rng = Pcg64::seed_from_u64(seed);
    let (tname, topo) = topology(&mut rng);
    let hosts = topo.hosts();
    let lossless_prios: Vec<u8> = if rng.gen_bool(0.5) {
        vec![3]
    } else {
        vec![3, 4]
    };
    let lossless = lossless_prios.iter().fold(0u8, |m, p| m | (1 << p));
    let mtu_payload = pick(&mut rng, &[1000u64, 4000, 9168]);

    // Flows: one or two synchronized incasts plus random background flows.
    let mut flows = Vec::new();
    let mut dport = 100u16;
    for _ in 0..rng.gen_range(1..=2) {
        let dst = pick(&mut rng, &hosts);
        let senders: Vec<NodeId> = hosts.iter().copied().filter(|&h| h != dst).collect();
        let k = rng.gen_range(2.min(senders.len())..=senders.len());
        let start = Time::from_ns(rng.gen_range(0..20_000));
        let size = rng.gen_range(10_000..400_000);
        let prio = pick(&mut rng, &lossless_prios);
        for &src in senders.iter().take(k) {
            flows.push(FlowSpec {
                src,
                dst,
                prio,
                size,
                start,
                dport,
            });
            dport += 1;
        }
    }
    for _ in 0..rng.gen_range(0..20) {
        let src = pick(&mut rng, &hosts);
        let dst = loop {
            let d = pick(&mut rng, &hosts);
            if d != src {
                break d;
            }
        };
        // One background flow in five is lossy (priority 0): it fills the shared pool and
        // moves the lossless PGs' thresholds, and may be dropped (then retransmitted).
        let prio = if rng.gen_bool(0.2) {
            0
        } else {
            pick(&mut rng, &lossless_prios)
        };
        let size = rng.gen_range(1..200_000);
        let start = Time::from_ns(rng.gen_range(0..50_000));
        flows.push(FlowSpec {
            src,
            dst,
            prio,
            size,
            start,
            dport,
        });
        dport += 1;
    }
    flows.sort_by_key(|f| f.start);

    let (hname, headroom, cell) = match rng.gen_range(0..3) {
        0 => (
            "pfc_guide",
            HeadroomSizing::PfcGuide {
                mtu_r: formula::MAX_FRAME_BYTES,
                mtu_s: formula::MAX_FRAME_BYTES,
                response: formula::PEER_RESPONSE_BYTES,
            },
            pick(&mut rng, &[1u32, 16, 64]),
        ),
        1 => (
            "dsh",
            HeadroomSizing::Dsh {
                mtu: formula::MAX_FRAME_BYTES,
            },
            pick(&mut rng, &[1u32, 16, 64]),
        ),
        _ => (
            "sonic",
            HeadroomSizing::SonicGeneric {
                port_mtu: formula::MAX_FRAME_BYTES,
                lossless_mtu: formula::MAX_FRAME_BYTES,
                small_packet_percent: 100,
                mac_phy_bytes: 819,
                gearbox_delay: Time::ZERO,
                default_peer_response: 3891,
            },
            pick(&mut rng, &[1u32, 80, 96, 144, 192, 256]),
        ),
    };
    let pfc = if rng.gen_bool(0.5) {
        PfcConfig::explicit_resume_mode()
    } else {
        PfcConfig::refresh_mode(rng.gen_range(400..=4000))
    };
    let alpha = Alpha::from_dynamic_th(rng.gen_range(-4..=1)).expect("in range");
    let extra = rng.gen_range(20_000..300_000);
    let cc = if rng.gen_bool(0.6) {
        CcConfig::None
    } else {
        match rng.gen_range(0..4) {
            0 => CcConfig::Dcqcn(DcqcnConfig::default()),
            1 => CcConfig::Dctcp(DctcpConfig::default()),
            2 => CcConfig::Timely(TimelyConfig::default()),
            _ => CcConfig::Hpcc(HpccConfig::default()),
        }
    };

    // SIH or DSH (with or without hysteresis); both must be lossless with eta by formula.
    let scheme = if rng.gen_bool(0.5) {
        SchemeConfig::Sih
    } else {
        let delta = pick(&mut rng, &[0u64, 1500, 3000]);
        SchemeConfig::Dsh {
            delta_q: delta,
            delta_p: delta,
        }
    };
    let dsh = matches!(scheme, SchemeConfig::Dsh { .. });
    // Under SIH, static XOFF/XON levels half the time: the headroom by formula must still
    // hold what follows a PAUSE, wherever the levels stand against the shared pool.
    let mut static_pfc = (!dsh && rng.gen_bool(0.5)).then(|| {
        let xoff = pick(&mut rng, &[6_000u64, 40_000, 400_000, 4_000_000]);
        StaticThresholds {
            xoff_bytes: xoff,
            xon_bytes: xoff / 2,
        }
    });

    let mut cfg = SimConfig::new(topo.clone(), flows);
    cfg.seed = seed;
    cfg.switch.scheme = scheme;
    cfg.switch.static_pfc = static_pfc;
    cfg.stop_time = Some(STOP);
    cfg.host.mtu_payload = mtu_payload;
    cfg.host.cc = cc.clone();
    cfg.host.window = WindowConfig::for_algorithm(&cc);
    cfg.host.rto = RTO;
    cfg.switch.cell_bytes = cell;
    cfg.switch.lossless = lossless;
    cfg.switch.pfc = pfc;
    cfg.switch.alpha = AlphaPolicy::Fixed(alpha);
    cfg.switch.buffer_bytes = max_reserved(&topo, &headroom, cell, lossless, dsh) + extra;
    cfg.switch.headroom = headroom;
    // Drawn last, so the draws above make the same cases as before: a detector changes
    // marks and sender reactions, never what PFC must keep lossless.
    cfg.switch.ecn.detector = match rng.gen_range(0..3) {
        0 => DetectorConfig::Red,
        1 => DetectorConfig::Tcd {
            max_t_on: None,
            threshold: None,
        },
        _ => DetectorConfig::TcdReleased(ReleasedConfig::default()),
    };
    // PowerTCP in place of the algorithm drawn above, in some cases (drawn last too).
    if rng.gen_bool(0.15) {
        let mode = if rng.gen_bool(0.5) {
            PowerTcpMode::Int
        } else {
            PowerTcpMode::Delay
        };
        cfg.host.cc = CcConfig::PowerTcp(PowerTcpConfig::for_mode(mode));
        cfg.host.window = WindowConfig::for_algorithm(&cfg.host.cc);
    }
    // InfiniBand CC in place of the algorithm drawn above (drawn last too): FECN marks at
    // dequeue, BECNs raise the senders' CCTI.
    if rng.gen_bool(0.12) {
        cfg.host.cc = CcConfig::IbCc(IbCcConfig::default());
        cfg.host.window = WindowConfig::for_algorithm(&cfg.host.cc);
        cfg.switch.ecn.point = EcnPoint::Dequeue;
    }
    // Credit links in place of PFC (drawn last too): any VL buffer that holds one largest
    // frame in blocks, and in cells should the switches grant from their shared buffer
    // (drawn below; each block counts as whole cells), 1-8 VLs, any update period and
    // threshold; every priority, the lossy one included, maps to a VL (a credit VL is
    // lossless).
    let mut credit = String::new();
    if rng.gen_bool(0.3) {
        let c = &mut cfg.fabric.credit;
        cfg.fabric.kind = FlowControlKind::Credit;
        c.vls = pick(&mut rng, &[1u8, 2, 4, 8]);
        let largest = cfg.host.largest_data_frame();
        let block = u64::from(c.block);
        let block_bytes = block.max(u64::from(c.cells_per_block(cell) * cell));
        c.vl_buffer = largest.div_ceil(block) * block_bytes + rng.gen_range(0..60_000);
        c.update_period = Some(Time::from_ns(rng.gen_range(50..6_000)));
        c.update_threshold = rng.gen_bool(0.5).then(|| rng.gen_range(0..c.vl_buffer));
        for f in &mut cfg.flows {
            f.prio %= c.vls;
        }
        cfg.host.ack_prio = c.vls - 1;
        cfg.host.ack_pause_class = c.vls - 1;
        // Every (port, VL) of the widest switch reserves its VL buffer, plus a little
        // shared space.
        let ports = topo
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, k)| **k == NodeKind::Switch)
            .map(|(n, _)| {
                topo.links
                    .iter()
                    .filter(|l| l.a.index() == n || l.b.index() == n)
                    .count() as u64
            })
            .max()
            .unwrap_or(0);
        cfg.switch.buffer_bytes =
            ports * u64::from(c.vls) * c.vl_buffer.next_multiple_of(256) + extra;
        credit = format!(
            "; credit {} VLs, {} B per VL, update {:?} / {:?}",
            c.vls, c.vl_buffer, c.update_period, c.update_threshold
        );
        // Both kinds in one fabric: each link draws its own. PFC ports keep their headroom
        // by formula, credit ports their VL buffers.
        if rng.gen_bool(0.4) {
            let mut kinds = String::new();
            for l in 0..topo.links.len() {
                let kind = if rng.gen_bool(0.5) {
                    FlowControlKind::Credit
                } else {
                    FlowControlKind::Pfc
                };
                kinds.push(if kind == FlowControlKind::Credit {
                    'c'
                } else {
                    'p'
                });
                cfg.fabric.links.insert(
                    l,
                    LinkFabric {
                        kind: Some(kind),
                        sl_to_vl: None,
                    },
                );
            }
            cfg.switch.buffer_bytes +=
                max_reserved(&topo, &cfg.switch.headroom, cell, lossless, dsh);
            credit.push_str(&format!("; links {kinds}"));
        }
        // Switches granting credits from their shared buffer by the dynamic threshold.
        if rng.gen_bool(0.4) {
            cfg.fabric.credit.grant = CreditGrant::Shared;
            credit.push_str("; shared grants");
            // Static PFC levels above the shared pool let PFC PGs take all of it, and credit
            // ports granted from it starve (docs/scenario.md, [switch.pfc]): not drawn here.
            static_pfc = None;
            cfg.switch.static_pfc = None;
        }
    }
    // Arbitration within switch queues (drawn last too): it changes the order packets leave
    // in, never what PFC or credits must keep lossless.
    let arbitration = pick(
        &mut rng,
        &[
            Arbitration::Fifo,
            Arbitration::Fifo,
            Arbitration::InputPort,
            Arbitration::Flow,
        ],
    );
    cfg.switch.scheduler.arbitration = arbitration;
    // Flow channels over the links (drawn last too): any table, from 2 ids per link.
    let mut channels = String::new();
    if rng.gen_bool(0.25) {
        let idle = Time::from_ns(rng.gen_range(0..200));
        let busy = idle + Time::from_ns(rng.gen_range(0..200));
        let p = FlowChannelParams {
            table_size: pick(&mut rng, &[2u16, 3, 16, 2048]),
            unit: pick(&mut rng, &[24u32, 256, 4096]),
            edge_match: pick(&mut rng, &EdgeMatch::NAMES.map(|(_, m)| m)),
            routing: pick(&mut rng, &[ChannelRouting::Adaptive, ChannelRouting::Ecmp]),
            ack_batch: pick(&mut rng, &[1u16, 5, 48]),
            ack_idle_delay: idle,
            ack_busy_delay: busy,
            ack_max_delay: busy + Time::from_ns(rng.gen_range(0..200)),
            ..FlowChannelParams::default()
        };
        channels = format!("; flow channels {p:?}");
        cfg.fabric.flow_channels = Some(p);
    }
    // Endpoint congestion management in half the flow-channel cases: flows held at their
    // injection limits must not hold the run up or lose anything.
    if let Some(p) = cfg.fabric.flow_channels.as_mut() {
        if rng.gen_bool(0.5) {
            let e = EndpointConfig {
                bytes: pick(&mut rng, &[1500u64, 4000, 32768]),
                packets: pick(&mut rng, &[2u32, 8, 64]),
                growth: pick(&mut rng, &[None, Some(Rate::from_gbps(10))]),
                window: Time::from_ns(pick(&mut rng, &[50u64, 1000])),
                limits: pick(
                    &mut rng,
                    &[
                        EndpointConfig::default().limits,
                        [4000, 1000, 0, 0, 0, 0, 0, 0],
                    ],
                ),
                ..EndpointConfig::default()
            };
            let mut e = EndpointConfig {
                levels: if e.limits[1] == 1000 { 3 } else { 6 },
                ..e
            };
            // Severity watermarks in half of them, from above a frame to below one.
            if rng.gen_bool(0.5) {
                let first = pick(&mut rng, &[2_000u64, 16_000]);
                for (i, w) in e.watermarks[..2].iter_mut().enumerate() {
                    let target = first >> i;
                    *w = Watermarks {
                        high: target * 4,
                        target,
                        drop: target / 4,
                    };
                }
                e.watermark_levels = 2;
            }
            // A release delay at the highest severity in a third of them.
            e.release_delay = pick(
                &mut rng,
                &[Time::ZERO, Time::ZERO, Time::from_ns(300), Time::from_us(3)],
            );
            p.endpoint = Some(e);
            cfg.switch.scheduler.arbitration = Arbitration::Flow;
            channels.push_str(&format!("; endpoint {:?}", p.endpoint));
        }
        // FGFC in half of them: sources paused one by one must all resume.
        if rng.gen_bool(0.5) {
            let target = pick(&mut rng, &[2_000u64, 20_000, 100_000]);
            p.fgfc = Some(FgfcConfig {
                target,
                drop: target / pick(&mut rng, &[2u64, 8]),
                pause: Time::from_ns(pick(&mut rng, &[500u64, 5_000, 50_000])),
                credit: pick(&mut rng, &[0u64, 1500, 10_000]),
            });
            channels.push_str(&format!("; fgfc {:?}", p.fgfc));
        }
    }
    // Hop-by-hop credits in a third of the flow-channel cases (with a queue per flow):
    // metered flows must get their credit back and every metering end.
    if let Some(p) = cfg.fabric.flow_channels.as_mut() {
        if rng.gen_bool(0.33) {
            let drop = pick(&mut rng, &[1_000u64, 4_000]);
            let target = drop * pick(&mut rng, &[2u64, 4]);
            p.hop_credits = Some(HopCreditConfig {
                drop,
                target,
                high: target * pick(&mut rng, &[2u64, 4]),
                margin: pick(&mut rng, &[0u64, 64, 500]),
                credit: pick(&mut rng, &[0u64, 1500]),
            });
            cfg.switch.scheduler.arbitration = Arbitration::Flow;
            channels.push_str(&format!("; hop credits {:?}", p.hop_credits));
        }
        // A port injection limit in a quarter of them, from below one frame up.
        if rng.gen_bool(0.25) {
            p.port_injection_limit = Some(pick(&mut rng, &[500u64, 4_000, 64_000]));
            cfg.switch.scheduler.arbitration = Arbitration::Flow;
            channels.push_str(&format!("; port limit {:?}", p.port_injection_limit));
        }
        // ILID limits in half of those whose channels carry one application each: flows spread over four
        // applications on up to three ILIDs, a node limit from below one frame up.
        if p.edge_match.one_app_per_channel() && rng.gen_bool(0.5) {
            let mut c = IlidInjectionConfig {
                node: pick(&mut rng, &[None, Some(500u64), Some(4_000), Some(64_000)]),
                ..IlidInjectionConfig::default()
            };
            for app in 1..4u32 {
                c.apps[rng.gen_range(0..3usize)] |= 1 << app;
            }
            for i in 0..3 {
                c.ratio[i] = pick(&mut rng, &[1u32, 3]);
                c.limit[i] = pick(&mut rng, &[None, Some(2_000u64)]);
            }
            if c.node.is_none() && c.limit[..3].iter().all(Option::is_none) {
                c.limit[0] = Some(1_000);
            }
            cfg.flow_apps = (0..cfg.flows.len())
                .map(|_| rng.gen_range(0..4u8))
                .collect();
            p.ilid_injection = Some(c);
            cfg.switch.scheduler.arbitration = Arbitration::Flow;
            channels.push_str(&format!("; ILIDs {c:?} apps {:?}", cfg.flow_apps));
        }
        // Reroutes in half of the adaptive ones, from overloaded at two frames up.
        if p.routing == ChannelRouting::Adaptive && rng.gen_bool(0.5) {
            p.reroute = Some(RerouteConfig {
                queue: pick(&mut rng, &[2_000u64, 16_000, 64_000]),
                interval: Time::from_ns(pick(&mut rng, &[500u64, 20_000])),
            });
            cfg.switch.scheduler.arbitration = Arbitration::Flow;
            channels.push_str(&format!("; reroute {:?}", p.reroute));
        }
    }
    // Classes per hop (drawn last too) on fabrics of one kind: a frame rises a class at
    // every hop between switches after its first (leaf-spine routes have two such hops).
    // The classes it rises to must exist and, on PFC links, be lossless as its own is:
    // lossless 3 (and 4) gain the next class up, the lossy 0 rises into the lossy 1, the
    // ACKs rise from 6 to 7; on credit links the flows and ACKs leave a VL above them.
    let mut per_hop = String::new();
    if rng.gen_bool(0.2) && cfg.fabric.links.is_empty() {
        let hops = Routes::compute(&topo, RoutingKind::ShortestPath)
            .expect("connected")
            .max_switch_hops();
        let rise = hops.saturating_sub(1) as u8;
        let vls = cfg.fabric.credit.vls;
        if cfg.fabric.kind == FlowControlKind::Pfc || vls > rise {
            cfg.fabric.class_per_hop = true;
            if cfg.fabric.kind == FlowControlKind::Pfc {
                let risen = (0..=rise).fold(0u8, |m, r| m | (lossless << r));
                let reserved = |mask| max_reserved(&topo, &cfg.switch.headroom, cell, mask, dsh);
                cfg.switch.buffer_bytes += reserved(risen) - reserved(lossless);
                cfg.switch.lossless = risen;
                cfg.host.ack_prio = 7 - rise;
            } else {
                for f in &mut cfg.flows {
                    f.prio %= vls - rise;
                }
                cfg.host.ack_prio = vls - 1 - rise;
            }
            cfg.host.ack_pause_class = cfg.host.ack_prio;
            // On flow channels each class data frames rise to keeps one id of every link,
            // and one more must be shared: at most `rise` classes per distinct priority.
            if let Some(p) = cfg.fabric.flow_channels.as_mut() {
                let prios: std::collections::BTreeSet<u8> =
                    cfg.flows.iter().map(|f| f.prio).collect();
                p.table_size = p.table_size.max(1 + u16::from(rise) * prios.len() as u16);
            }
            per_hop = format!("; class per hop (up to +{rise})");
        }
    }
    // UGAL in half of the adaptive flow-channel cases without reroutes or classes per hop
    // (drawn last, so the other cases stay as they were): paths through intermediates.
    if let Some(p) = cfg.fabric.flow_channels.as_mut() {
        if p.routing == ChannelRouting::Adaptive
            && p.reroute.is_none()
            && !cfg.fabric.class_per_hop
            && rng.gen_bool(0.5)
        {
            p.routing = ChannelRouting::Ugal {
                threshold: pick(&mut rng, &[0u64, 4096]),
            };
            channels.push_str(&format!("; {:?}", p.routing));
        }
    }
    let what = format!(
        "seed {seed}: {tname}; {} flows; lossless {lossless:#010b}; mtu {mtu_payload}; \
         {hname} cells {cell}; {}; static {static_pfc:?}; {pfc:?}; alpha {}; buffer {} (+{extra} over headroom); cc {}; \
         detector {}{credit}; arbitration {arbitration:?}{channels}{per_hop}",
        cfg.flows.len(),
        cfg.switch.scheme.name(),
        alpha.value(),
        cfg.switch.buffer_bytes,
        cfg.host.cc.name(),
        cfg.switch.ecn.detector.name(),
    );
    Case { what, cfg }
}

fn check(c: &Case) -> Result<(u64, usize), String> {
    let mut sim = Simulation::new(c.cfg.clone()).map_err(|e| format!("build: {e}"))?;
    // Mid-run invariant checks at a few instants, then to the end.
    for t in [5u64, 20, 80] {
        if sim.run_until(Time::from_us(t)) {
            break;
        }
        sim.check_invariants()
            .map_err(|e| format!("at {t} us: {e}"))?;
    }
    sim.run_until(Time::MAX);
    sim.check_invariants()
        .map_err(|e| format!("at the end: {e}"))?;
    let credits = sim.check_credits_drained();
    let r = sim.finish();
    if !r.lossless_drops.is_empty() {
        return Err(format!(
            "{} lossless drops, first {:?}; peak PG headroom {:?}",
            r.lossless_drops.len(),
            r.lossless_drops[0],
            r.switches
                .iter()
                .map(|s| s.peak_pg_headroom_bytes)
                .collect::<Vec<_>>()
        ));
    }
    if r.stop_reason != Some(StopReason::AllFlowsDone) {
        let open = r.flows.iter().filter(|f| f.finish.is_none()).count();
        return Err(format!(
            "stopped {:?} at {} with {open} flows open",
            r.stop_reason, r.end_time
        ));
    }
    // Go-back-N duplicates of lossy flows may still be on their way when the last flow
    // finishes; without retransmissions the fabric must be empty.
    let quiet = r.flows.iter().all(|f| f.retransmitted == 0);
    if quiet {
        credits.map_err(|e| format!("credits at the end: {e}"))?;
    }
    if let Some(ch) = &r.channels {
        let left: u64 = ch.switches.iter().map(|s| u64::from(s.in_use_at_end)).sum();
        if left != 0 || ch.waiting_at_end != 0 {
            return Err(format!(
                "flow channels left: {left} in use, {} frames waiting",
                ch.waiting_at_end
            ));
        }
    }
    for s in &r.switches {
        if s.cells_allocated != s.cells_freed + s.cells_resident || (quiet && s.cells_resident != 0)
        {
            return Err(format!(
                "switch {}: cells not conserved {s:?}; retransmitted {:?}; drops {:?}",
                s.node,
                r.flows.iter().map(|f| f.retransmitted).collect::<Vec<_>>(),
                r.drops
            ));
        }
    }
    if r.bytes.sent != r.bytes.delivered + r.bytes.dropped + r.bytes.in_flight
        || (quiet && r.bytes.in_flight != 0)
    {
        return Err(format!("bytes not conserved: {:?}", r.bytes));
    }
    let pauses = r
        .ports
        .iter()
        .map(|p| p.pause_sent.iter().map(|&n| u64::from(n)).sum::<u64>())
        .sum();
    Ok((pauses, r.flows.len()))
}

proptest! {
    // A fixed RNG seed: the same 300 scenarios on every run and machine (change the seed to
    // explore others). No persistence file: failing seeds go into `known_failures` below.
    #![proptest_config(ProptestConfig {
        cases: 300,
        max_shrink_iters: 0,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x6865_6164_726f_6f6d),
        ..ProptestConfig::default()
    })]

    #[test]
    fn lossless_under_random_scenarios(seed in any::<u64>()) {
        let c = case(seed);
        let res = check(&c);
        prop_assert!(res.is_ok(), "{}\n{}", c.what, res.err().unwrap_or_default());
    }
}

/// Scenarios the property once found failing, kept as regression seeds. The first four
/// dropped a lossless frame while the switch decided admission (and XOFF) at the *last* bit
/// of a frame: a frame mostly received before an XOFF decision was charged to headroom
/// whole, one frame more than any formula budgets. The fifth has lossy go-back-N
/// duplicates still in flight when the last flow finishes (the fabric is not empty then).
/// The last one (DSH, a shared pool of a few frames) filled a port's insurance without a
/// port-level pause when the shared pool could not take an arrival, until the port paused
/// on any use of its insurance.
#[test]
fn known_failures() {
    let mut failures = Vec::new();
    for seed in [
        7_395_757_315_856_719_109u64,
        18_277_508_412_240_617_415,
        8_409_404_243_176_014_170,
        1_941_426_472_705_316_432,
        6_845_631_441_595_461_813,
        14_630_885_225_449_731_044,
    ] {
        let c = case(seed);
        if let Err(e) = check(&c) {
            failures.push(format!("{}\n  {e}", c.what));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// PFC really fires in these scenarios (the property above is not vacuous).
#[test]
fn scenarios_exercise_pfc() {
    let mut with_pauses = 0;
    let mut static_with_pauses = 0;
    let n = 30;
    for seed in 0..n {
        let c = case(seed);
        let (pauses, _) = check(&c).unwrap_or_else(|e| panic!("{}\n{e}", c.what));
        if pauses > 0 {
            with_pauses += 1;
            static_with_pauses += usize::from(c.cfg.switch.static_pfc.is_some());
        }
    }
    eprintln!(
        "{with_pauses}/{n} scenarios sent PAUSE frames ({static_with_pauses} with static levels)"
    );
    assert!(
        static_with_pauses > 0,
        "no scenario with static PFC levels paused"
    );
    assert!(
        with_pauses * 2 >= n,
        "PFC fired in only {with_pauses} of {n} scenarios"
    );
}

/// Credits really withhold in the credit cases (their share of the property above is not
/// vacuous), and InfiniBand CC is drawn.
/// The flow-channel cases make channels, send ACK frames between switches, and some fill
/// a table (frames wait for a channel). Split into parts (three threads), each gives the
/// results of the single run.
#[test]
fn scenarios_exercise_flow_channels() {
    let (mut cases, mut acked, mut waited, mut held, mut paused, mut metered) = (0, 0, 0, 0, 0, 0);
    let (mut ilid_cases, mut ilid_held, mut rerouted, mut split) = (0, 0, 0, 0);
    let (mut ugal, mut went_long) = (0, 0);
    for seed in 0..60 {
        let c = case(seed);
        if c.cfg.fabric.flow_channels.is_none() {
            continue;
        }
        cases += 1;
        let mut sim = Simulation::new(c.cfg.clone()).expect("valid case");
        sim.run_until(Time::MAX);
        let r = sim.finish();
        let parts = Partitioned::new(c.cfg.clone(), 3).expect("valid case");
        if parts.parts() > 1 {
            split += 1;
            let p = parts.run();
            assert_eq!(
                (r.end_time, r.events, r.stop_reason, &r.flows, &r.channels),
                (p.end_time, p.events, p.stop_reason, &p.flows, &p.channels),
                "{} in parts",
                c.what
            );
        }
        let ch = r.channels.expect("a flow-channel run reports its channels");
        acked += usize::from(ch.ack_frames > 0 || ch.acks_home > 0);
        waited += usize::from(ch.waits > 0);
        held += usize::from(ch.flow_limit_holds > 0);
        paused += usize::from(ch.fgfc.is_some_and(|(pauses, _)| pauses > 0));
        metered += usize::from(ch.hop_credits.is_some_and(|(flows, _)| flows > 0));
        // Their small fabrics seldom have another path: the asks must come and end
        // cleanly (the moves themselves: `flow_channels.rs`).
        rerouted += usize::from(ch.reroute.is_some_and(|r| r.asks > 0));
        // Their stars, dumbbells and leaf-spines of two or three leaves seldom offer an
        // intermediate worth the detour: the choices must come and end cleanly (the
        // detours themselves: `ugal.rs`).
        ugal += usize::from(ch.ugal.is_some());
        went_long += usize::from(ch.ugal.is_some_and(|(_, long)| long > 0));
        if ch.injection.as_ref().is_some_and(|i| !i.ilids.is_empty()) {
            ilid_cases += 1;
            // Held by an ILID's limit or another one: the run drained all the same.
            ilid_held += usize::from(ch.flow_limit_holds > 0);
        }
    }
    eprintln!(
        "{cases} flow-channel cases, {acked} acknowledged, {waited} filled a table, {held} held \
         a flow at its injection limit, {paused} paused a source by FGFC, {metered} metered a \
         flow hop by hop, {ilid_cases} limited ILIDs ({ilid_held} of them held a flow), \
         {rerouted} asked for a reroute, {ugal} routed by UGAL ({went_long} of them through an \
         intermediate switch), {split} ran in parts as well"
    );
    assert!(
        split * 2 >= cases,
        "{split} of {cases} cases split into parts"
    );
    assert!(rerouted >= 1, "no case asked for a reroute");
    assert!(ugal >= 1, "no case routed by UGAL");
    assert!(ilid_held >= 1, "no case with ILID limits held a flow");
    assert!(metered >= 1, "no case metered a flow hop by hop");
    assert!(paused >= 1, "no case paused a source by FGFC");
    assert!(held >= 1, "no case held a flow at its injection limit");
    assert!(cases >= 8, "{cases} flow-channel cases of 60");
    assert_eq!(
        acked, cases,
        "every flow-channel case acknowledges its frames"
    );
    assert!(waited >= 1, "no case filled a table");
}

/// Classes per hop are drawn on routes long enough to rise, on PFC and on credit links,
/// and those cases keep every invariant of the property above.
#[test]
fn scenarios_exercise_classes_per_hop() {
    let (mut pfc, mut credit) = (0, 0);
    for seed in 0..150 {
        let c = case(seed);
        if !c.what.contains("class per hop (up to +1)") {
            continue;
        }
        match c.cfg.fabric.kind {
            FlowControlKind::Pfc => pfc += 1,
            FlowControlKind::Credit => credit += 1,
        }
        let res = check(&c);
        assert!(res.is_ok(), "{}\n{}", c.what, res.err().unwrap_or_default());
    }
    eprintln!("classes per hop rising a class: {pfc} PFC cases, {credit} credit cases");
    assert!(
        pfc >= 2 && credit >= 1,
        "{pfc} PFC and {credit} credit cases"
    );
}

#[test]
fn scenarios_exercise_credits() {
    let (mut credit, mut blocked, mut ib_cc, mut mixed) = (0, 0, 0, 0);
    for seed in 0..60 {
        let c = case(seed);
        if matches!(c.cfg.host.cc, CcConfig::IbCc(_)) {
            ib_cc += 1;
        }
        if c.cfg.fabric.kind != FlowControlKind::Credit {
            continue;
        }
        credit += 1;
        if !c.cfg.fabric.links.is_empty() {
            mixed += 1;
        }
        let mut sim = Simulation::new(c.cfg.clone()).expect("valid case");
        sim.run_until(Time::MAX);
        let r = sim.finish();
        let waited = r
            .ports
            .iter()
            .any(|p| p.credit_blocked_time.iter().any(|&t| t > Time::ZERO));
        if waited {
            blocked += 1;
        }
    }
    eprintln!(
        "{credit} credit scenarios of 60 ({mixed} with PFC links too), {blocked} blocked on \
         credit; {ib_cc} with IB CC"
    );
    assert!(credit >= 10, "only {credit} credit scenarios");
    assert!(mixed >= 4, "only {mixed} scenarios with both kinds");
    assert!(
        blocked * 2 >= credit,
        "credits withheld in only {blocked} of {credit} credit scenarios"
    );
    assert!(ib_cc >= 3, "only {ib_cc} scenarios with InfiniBand CC");
}

/// SHP accepts a risk the other schemes do not: when more PGs need headroom at once than
/// its over-subscribed pool holds, lossless packets are dropped (and counted as such). A
/// 16-to-1 incast with every sender paused at once: a pool of the full sum (ratio 1) holds,
/// a pool over-subscribed 8 times does not.
#[test]
fn shp_drops_when_its_pool_is_oversubscribed() {
    use headroom_sim::config::ShpPool;
    let run = |ratio: f64| {
        let topo = builders::star(17, Rate::from_gbps(100), Time::from_us(2)).expect("star");
        let senders: Vec<NodeId> = (0..16).map(NodeId).collect();
        let flows = headroom_sim::workload::generators::incast(
            &senders,
            NodeId(16),
            2_000_000,
            Time::ZERO,
            None,
            3,
        )
        .expect("incast");
        let mut cfg = SimConfig::new(topo, flows);
        cfg.stop_time = Some(STOP);
        cfg.host.cc = CcConfig::None;
        cfg.switch.buffer_bytes = 3 << 20;
        cfg.switch.scheme = SchemeConfig::Shp(ShpPool::Ratio(ratio));
        Simulation::new(cfg).expect("valid").run()
    };
    let full = run(1.0);
    assert!(full.lossless_drops.is_empty());
    let over = run(8.0);
    assert!(!over.lossless_drops.is_empty());
    assert!(over
        .lossless_drops
        .iter()
        .all(|d| d.cause == "headroom_pool_exhausted"));
    assert_eq!(
        over.drops.get("lossless_headroom_pool_exhausted").copied(),
        Some(over.lossless_drops.len() as u64)
    );
}
