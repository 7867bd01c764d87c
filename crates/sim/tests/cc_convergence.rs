//! N = 2, 4, 8 long flows through one 100 Gb/s bottleneck converge to fair shares under
//! each congestion-control algorithm, with the bottleneck queue where the algorithm puts it.
//!
//! Topology: a star, N senders and one receiver on 100 Gb/s links; sender `i`'s cable is
//! `1 + i/2` µs long, so the flows see different round trips (identical ones would make
//! the senders run in lockstep and fairness trivial). The flows start 20 µs apart and are
//! too long to finish; the run stops at 25 ms. Throughput is what each sender put on the
//! wire over [20 ms, 25 ms] (the deterministic run replayed with a stop time at each end);
//! the queue is the receiver's port on the switch, sampled every 10 µs over that window.
//!
//! What each algorithm must show (the spec's convergence claims):
//! - every algorithm: Jain's index of the throughputs >= 0.9 (PowerTCP's delay mode: not
//!   met, see below), the bottleneck > 90 % busy
//!   (TIMELY: 80 %, its limit cycle drains the queue), no drop, and no PFC pause except
//!   with TIMELY, whose queue swings reach the PFC threshold from 4 flows on;
//! - HPCC (with the paper's additive step for up to 8 flows, W_AI = W (1 - eta) / 8; the
//!   simulator's 40 Mb/s equalizes over tens of milliseconds): the queue near zero, mean
//!   below 32 KB (2.6 us at 100 Gb/s; DCTCP holds about 290 KB here);
//! - TIMELY: the RTT the queue implies at its peak between T_low and T_high: the rate
//!   grows below T_low, the gradient turns it back above it, T_high is never reached;
//! - DCTCP: the queue around the step marking threshold K (mean in [K/4, 2K]);
//! - PowerTCP with INT (HPCC's additive step as its `beta`): fair, the queue small (mean
//!   below 12 KB);
//! - PowerTCP in delay mode: the bottleneck busy and the queue small (mean below 64 KB),
//!   but *not* fair: each flow normalises by its own base RTT, and the throughputs follow
//!   the base RTTs (Jain 0.85 to 0.94, see the test);
//! - InfiniBand CC, on credit links with 100 ns cables (see the test): fair, the queue
//!   below its FECN threshold.

mod common;

use headroom_mech::cc::{DctcpConfig, HpccConfig, PowerTcpConfig, PowerTcpMode, TimelyConfig};
use headroom_mech::ecn::RedConfig;
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, SimConfig, WindowConfig};
use headroom_sim::results::RunResults;
use headroom_sim::topology::{LinkSpec, NodeId, NodeKind, Topology};
use headroom_sim::workload::FlowSpec;

const RATE: Rate = Rate::from_gbps(100);
const PRIO: u8 = 3;
/// The measurement window: from 20 ms (HPCC's additive term equalizes slowly) to 25 ms.
const WINDOW: (Time, Time) = (Time::from_ms(20), Time::from_ms(25));
const SAMPLE: Time = Time::from_us(10);
/// Preamble and inter-frame gap per frame (the default `link.frame_overhead`).
const OVERHEAD: u64 = 20;
/// DCTCP's step marking threshold (the ns-3 HPCC simulator's 30 KB per 10 Gb/s).
const DCTCP_K: u64 = 300_000;

fn scenario(n: u32, cc: &CcConfig) -> SimConfig {
    let switch = n + 1;
    // InfiniBand's cables are metres: at 100 Gb/s its 2048 outstanding blocks (128 KiB)
    // per VL cover a credit loop of 10.5 us, less than the other tests' 5 us cables make.
    let (base_ns, step_ns) = match cc {
        CcConfig::IbCc(_) => (100, 50),
        _ => (1000, 500),
    };
    let mut nodes = vec![NodeKind::Host; n as usize + 1];
    nodes.push(NodeKind::Switch);
    let links = (0..=n)
        .map(|h| LinkSpec {
            a: NodeId(h),
            b: NodeId(switch),
            rate: RATE,
            delay: Time::from_ns(base_ns + step_ns * u64::from(h % (n + 1))),
            error_rate: 0.0,
        })
        .collect();
    let flows = (0..n)
        .map(|i| FlowSpec {
            src: NodeId(i),
            dst: NodeId(n),
            prio: PRIO,
            size: 1 << 40,
            start: Time::from_us(20 * u64::from(i)),
            dport: 100 + i as u16,
        })
        .collect();
    let mut cfg = SimConfig::new(Topology { nodes, links }, flows);
    cfg.host.cc = cc.clone();
    cfg.record.sample_interval = Some(SAMPLE);
    cfg.host.window = WindowConfig::for_algorithm(cc);
    if matches!(
        cc,
        CcConfig::Hpcc(_) | CcConfig::Dctcp(_) | CcConfig::PowerTcp(_)
    ) {
        // ACKs in the data class, as the ns-3 HPCC simulator's switches queue them (and
        // the PowerTCP authors' simulator, built on it).
        cfg.host.ack_prio = PRIO;
        cfg.host.ack_pause_class = PRIO;
    }
    if let CcConfig::IbCc(_) = cc {
        // InfiniBand CC on its own fabric: credit links (the VL buffers in a 32 MiB switch).
        cfg.fabric.kind = headroom_sim::config::FlowControlKind::Credit;
        cfg.fabric.credit.update_period = Some(Time::from_us(1));
        cfg.switch.buffer_bytes = 32 << 20;
    }
    if let CcConfig::Dctcp(_) = cc {
        let step = RedConfig {
            kmin: DCTCP_K,
            kmax: DCTCP_K,
            pmax: 1.0,
        };
        cfg.switch.ecn.red = Some(step);
        cfg.switch.ecn.by_rate = vec![(RATE, step)];
    }
    cfg
}

fn run_to(mut cfg: SimConfig, stop: Time) -> RunResults {
    cfg.stop_time = Some(stop);
    common::run(cfg)
}

struct Outcome {
    jain: f64,
    utilization: f64,
    mean_queue: f64,
    max_queue: f64,
    throughput: Vec<f64>,
}

fn converge(n: u32, cc: &CcConfig, (from, to): (Time, Time)) -> Outcome {
    let cfg = scenario(n, cc);
    let switch = n + 1;
    let (a, b) = (run_to(cfg.clone(), from), run_to(cfg, to));
    for r in [&a, &b] {
        assert!(
            r.drops.is_empty() && r.lossless_drops.is_empty(),
            "{:?}",
            r.drops
        );
        // TIMELY's queue swings reach the PFC threshold with 4 and 8 flows (lossless
        // still); the other algorithms hold the queue far below it.
        let timely = matches!(cc, CcConfig::Timely(_));
        assert!(
            timely || r.pfc_sent.is_empty(),
            "{} PFC frames",
            r.pfc_sent.len()
        );
    }
    let secs = (to - from).as_secs_f64();
    let tx = |r: &RunResults, node: u32| {
        let p = r.ports.iter().find(|p| p.node == node).expect("port");
        p.tx_bytes + OVERHEAD * p.tx_frames
    };
    let throughput: Vec<f64> = (0..n)
        .map(|h| (tx(&b, h) - tx(&a, h)) as f64 * 8.0 / secs / 1e9)
        .collect();
    let total: f64 = throughput.iter().sum();
    let samples: std::collections::BTreeMap<Time, u64> = b
        .queue_samples
        .iter()
        .filter(|s| s.node == switch && s.queue == PRIO && s.time >= from)
        .filter(|s| {
            // The receiver's port: the one whose peer is host n (the last host link).
            s.port == n as u16
        })
        .map(|s| (s.time, s.bytes))
        .collect();
    let count = (to - from).as_ps() / SAMPLE.as_ps();
    let sum: u64 = samples.values().sum();
    let max = samples.values().copied().max().unwrap_or(0);
    Outcome {
        max_queue: max as f64,
        jain: common::jain(&throughput),
        utilization: total / RATE.as_gbps_f64(),
        mean_queue: sum as f64 / count as f64,
        throughput,
    }
}

fn check_fair(name: &str, n: u32, o: &Outcome, utilization: f64) {
    eprintln!(
        "{name} N={n}: Jain {:.3}, utilization {:.3}, mean queue {:.0} B, max {:.0} B, {:?}",
        o.jain, o.utilization, o.mean_queue, o.max_queue, o.throughput
    );
    assert!(o.jain >= 0.9, "{name} N={n}: Jain {:.3}", o.jain);
    assert!(
        o.utilization > utilization,
        "{name} N={n}: utilization {:.3}",
        o.utilization
    );
}

#[test]
fn hpcc_converges_with_a_near_empty_queue() {
    // The HPCC paper's additive step, W_AI = W_init (1 - eta) / N for up to N = 8 flows:
    // the simulator's 40 Mb/s (run.py) equalizes over tens of milliseconds.
    let cc = CcConfig::Hpcc(HpccConfig {
        rate_ai: Rate::from_mbps(625),
        ..HpccConfig::default()
    });
    for n in [2, 4, 8] {
        let o = converge(n, &cc, WINDOW);
        check_fair("hpcc", n, &o, 0.9);
        assert!(
            o.mean_queue < 32_000.0,
            "hpcc N={n}: mean queue {:.0} B",
            o.mean_queue
        );
    }
}

#[test]
fn timely_converges_with_the_rtt_between_its_thresholds() {
    let cfg = TimelyConfig::default();
    let (t_low, t_high) = (cfg.t_low, cfg.t_high);
    let cc = CcConfig::Timely(cfg);
    for n in [2, 4, 8] {
        let o = converge(n, &cc, WINDOW);
        check_fair("timely", n, &o, 0.8);
        // The queue-implied RTT at its peak: the longest base RTT here (sender 8's 5 us
        // cable and the receiver's 5.5 us, both ways) plus the peak's queueing delay.
        let base_us = 2.0 * (1.0 + 0.5 * f64::from(n - 1) + 1.0 + 0.5 * f64::from(n));
        let peak_us = base_us + o.max_queue * 8.0 / 100e3;
        assert!(
            peak_us >= t_low.as_us_f64() && peak_us <= t_high.as_us_f64(),
            "timely N={n}: peak RTT about {peak_us:.1} us"
        );
    }
}

#[test]
fn dctcp_converges_with_the_queue_around_k() {
    let cc = CcConfig::Dctcp(DctcpConfig::default());
    for n in [2, 4, 8] {
        let o = converge(n, &cc, WINDOW);
        check_fair("dctcp", n, &o, 0.9);
        let k = DCTCP_K as f64;
        assert!(
            o.mean_queue >= k / 4.0 && o.mean_queue <= 2.0 * k,
            "dctcp N={n}: mean queue {:.0} B against K = {k}",
            o.mean_queue
        );
    }
}

/// The additive step of the HPCC test above, `W (1 - eta) / 8` in rate terms, as PowerTCP's
/// `beta` too.
const AI_FOR_8_FLOWS: Rate = Rate::from_mbps(625);

/// PowerTCP with INT, with the HPCC test's additive step as `beta`. Measured over
/// [20, 25] ms for N = 2, 4, 8: Jain 0.982, 1.000, 1.000; utilization 0.972, 0.986, 0.996;
/// mean queue 1.5, 1.7, 6.1 KB, max 2.2, 3.3, 13.1 KB (HPCC with the same step: mean 1.4,
/// 1.7, 22.9 KB, max 61 KB at N = 8). The bounds below leave a factor 2.
///
/// With the authors' `beta` of 150 Mb/s, N = 4 and 8 converge as well (Jain 0.995, 1.000)
/// but N = 2 holds at 0.879 (30 and 66 Gb/s): at equilibrium a flow's rate satisfies
/// `R = beta / (1 - eta / u)`, so when `beta / R` is a fraction of a percent, a bias of
/// 0.3 % between two flows' power estimates (the INT quantization and where each flow's
/// packets sample the queue) keeps their rates apart. HPCC at its 40 Mb/s holds the same
/// two flows at 7 and 89 Gb/s (Jain 0.58).
#[test]
fn powertcp_int_converges_with_a_small_queue() {
    let cc = CcConfig::PowerTcp(PowerTcpConfig {
        beta: AI_FOR_8_FLOWS,
        ..PowerTcpConfig::default()
    });
    for n in [2, 4, 8] {
        let o = converge(n, &cc, WINDOW);
        check_fair("powertcp-int", n, &o, 0.9);
        assert!(
            o.mean_queue < 12_000.0 && o.max_queue < 32_000.0,
            "powertcp-int N={n}: mean queue {:.0} B, max {:.0} B",
            o.mean_queue,
            o.max_queue
        );
    }
}

/// θ-PowerTCP (delay mode), with the same `beta`: the bottleneck stays busy with a small
/// queue, but the flows do not converge to fair shares, and this test states so. Measured
/// over [20, 25] ms for N = 2, 4, 8: utilization 0.998, 0.987, 0.981; mean queue 7.9, 13.1,
/// 30.0 KB, max 18.9, 31.4, 74.4 KB (bounds: a factor 2); Jain 0.853, 0.866, 0.944, each
/// flow's throughput growing with its base RTT (N = 4: 14.6, 19.1, 24.8, 40.3 Gb/s).
///
/// Why: delay mode normalises a flow's RTT by its own base RTT `T_i` (the smallest sample),
/// so one queueing delay `d` gives each flow `Γ = (1 + d / T_i) / 1.05`, smaller for a
/// longer base RTT, and a flow's equilibrium rate `beta / (1 - 1 / u)` needs `u` within
/// `beta / R` (about 1 %) of 1. The senders' base RTTs here differ by up to 60 %, so the
/// longest round trip keeps growing while the others cut. Normalising every flow by the
/// configured (largest) base RTT instead (tried by hand) reverses the order: the shortest
/// round trip takes 70 to 95 %, Jain 0.55, 0.33, 0.25. With equal cables the flows share
/// equally (Jain 1.000). With the authors' `beta` of 150 Mb/s the spread is wider: Jain
/// 0.638, 0.454, 0.506.
#[test]
fn powertcp_delay_keeps_the_link_busy_but_favours_long_round_trips() {
    let cc = CcConfig::PowerTcp(PowerTcpConfig {
        beta: AI_FOR_8_FLOWS,
        ..PowerTcpConfig::for_mode(PowerTcpMode::Delay)
    });
    for n in [2, 4, 8] {
        let o = converge(n, &cc, WINDOW);
        eprintln!(
            "powertcp-delay N={n}: Jain {:.3}, utilization {:.3}, mean queue {:.0} B, max {:.0} B, {:?}",
            o.jain, o.utilization, o.mean_queue, o.max_queue, o.throughput
        );
        assert!(
            o.utilization > 0.9,
            "powertcp-delay N={n}: utilization {:.3}",
            o.utilization
        );
        assert!(
            o.mean_queue < 64_000.0 && o.max_queue < 150_000.0,
            "powertcp-delay N={n}: mean queue {:.0} B, max {:.0} B",
            o.mean_queue,
            o.max_queue
        );
        // Sender i's cable is 1 + i/2 us: the throughputs follow the base RTTs.
        assert!(
            o.throughput.windows(2).all(|w| w[0] < w[1]),
            "powertcp-delay N={n}: {:?}",
            o.throughput
        );
        assert!(o.jain >= 0.8, "powertcp-delay N={n}: Jain {:.3}", o.jain);
    }
}

/// InfiniBand CC with its defaults (FECN from 64 KiB on every forwarded packet, a BECN per
/// marked packet, a 1024-entry table stepping the rate by 0.47 %, one step back per
/// 2.048 us), on credit links with metre-scale cables: a flow's BECNs come in proportion to
/// its packets, so faster flows step down more often and the rates meet; the queue stays
/// below the marking threshold. Measured for N = 2, 4, 8: Jain 1.000 each, utilization
/// 0.985, 0.998, 1.010 (frames with their overhead), mean queue 21, 28, 44 KB.
#[test]
fn ib_cc_converges_with_the_queue_near_its_threshold() {
    let cc = CcConfig::IbCc(headroom_mech::cc::IbCcConfig::default());
    for n in [2, 4, 8] {
        let o = converge(n, &cc, WINDOW);
        check_fair("ib-cc", n, &o, 0.9);
        let threshold = headroom_sim::config::FecnConfig::default().threshold as f64;
        assert!(
            o.mean_queue <= threshold,
            "ib-cc N={n}: mean queue {:.0} B against a threshold of {threshold}",
            o.mean_queue
        );
    }
}
