//! A 2:1 incast at 100 Gb/s: DCQCN converges to fair shares and holds the bottleneck queue
//! in the ECN marking band; without congestion control PFC alone keeps it lossless.
//!
//! Topology: one switch (node 3) and three hosts on 100 Gb/s links; host 1's cable is 4 µs
//! against 1 µs for the others, so the two senders see different round trips and CNP
//! timings (with identical paths and start times the two DCQCN state machines would run in
//! lockstep and fairness would be trivial). Host 0 sends 20 MB to host 2 from t=0, host 1
//! sends 20 MB to host 2 from t=500 µs (before it, host 0 is alone at line rate, unmarked).
//! Both on lossless priority 3; the bottleneck is switch port 2, queue 3.
//!
//! Fairness: Jain's index of the two flows' throughput over the second half of the interval
//! in which both flows are active, which must exceed 0.95, with the bottleneck more than
//! 95 % busy. Throughput is measured on the wire: the bytes each sender transmitted between
//! the two ends of the window (the deterministic run is replayed with a stop time at each
//! end). The `record.sample_interval` DCQCN rate samples are reported alongside; they are
//! the pacing rates the flows were allowed, not what they could send.
//!
//! Queue criterion. DCQCN's fixed point puts the bottleneck queue where the RED marking
//! probability balances the senders' increase and decrease, i.e. inside the marking band
//! [Kmin, Kmax] (Kmin = 400 KB, Kmax = 1.6 MB at 100 Gb/s here); the reaction point's
//! timers make the queue oscillate around it in a limit cycle of large amplitude (the
//! default Mellanox settings recover over a 300 µs timer). So, over the second half, from
//! samples every 5 µs (a missing sample is an empty queue):
//! - the time-average and the median of the queue are in [Kmin/2, Kmax]: regulated by
//!   ECN near the band, neither drained (throughput lost) nor piled up towards PFC;
//! - the queue never exceeds 2·Kmax: bounded, and no PAUSE frame is ever sent;
//! - the queue is empty in at most 5 % of the samples: the bottleneck stays busy.

mod common;

use common::{jain, run};
use headroom_mech::ecn::RedConfig;
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{CcConfig, SimConfig};
use headroom_sim::net::Simulation;
use headroom_sim::results::StopReason;
use headroom_sim::topology::{LinkSpec, NodeId, NodeKind, Topology};
use headroom_sim::workload::FlowSpec;

const RATE: Rate = Rate::from_gbps(100);
const SIZE: u64 = 20_000_000;
const SECOND_START: Time = Time::from_us(500);
const SAMPLE: Time = Time::from_us(5);
const SWITCH: u32 = 3;
const BOTTLENECK: u16 = 2;
const PRIO: u8 = 3;
/// Preamble and inter-frame gap per frame (the default `link.frame_overhead`).
const OVERHEAD: u64 = 20;

fn incast() -> SimConfig {
    let link = |a: u32, delay: Time| LinkSpec {
        a: NodeId(a),
        b: NodeId(SWITCH),
        rate: RATE,
        delay,
        error_rate: 0.0,
    };
    let topo = Topology {
        nodes: vec![
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Host,
            NodeKind::Switch,
        ],
        links: vec![
            link(0, Time::from_us(1)),
            link(1, Time::from_us(4)),
            link(2, Time::from_us(1)),
        ],
    };
    let flows = vec![
        FlowSpec {
            src: NodeId(0),
            dst: NodeId(2),
            prio: PRIO,
            size: SIZE,
            start: Time::ZERO,
            dport: 1,
        },
        FlowSpec {
            src: NodeId(1),
            dst: NodeId(2),
            prio: PRIO,
            size: SIZE,
            start: SECOND_START,
            dport: 2,
        },
    ];
    let mut cfg = SimConfig::new(topo, flows);
    cfg.record.sample_interval = Some(SAMPLE);
    cfg
}

#[test]
fn dcqcn_converges_to_fair_shares_and_holds_the_queue_in_the_marking_band() {
    let cfg = incast();
    assert!(
        matches!(cfg.host.cc, CcConfig::Dcqcn(_)),
        "the default CC is DCQCN"
    );
    let red = cfg.switch.ecn.red_for(RATE);
    assert_eq!(red, RedConfig::scaled(RATE));
    let (kmin, kmax) = (red.kmin, red.kmax);
    let r = run(cfg);
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
    assert!(
        r.lossless_drops.is_empty() && r.drops.is_empty(),
        "drops {:?}",
        r.drops
    );
    assert!(
        r.pfc_sent.is_empty(),
        "ECN alone controls the queue: {} PFC frames",
        r.pfc_sent.len()
    );

    let first_finish = r
        .flows
        .iter()
        .filter_map(|f| f.finish)
        .min()
        .expect("finished");
    assert!(
        first_finish > SECOND_START + Time::from_ms(1),
        "a long common interval"
    );
    let mid = Time((SECOND_START.as_ps() + first_finish.as_ps()) / 2);

    // Fairness over the second half, from what each sender actually put on the wire: the
    // same (deterministic) run stopped at the two ends of the window gives each host port's
    // transmitted bytes (a sender transmits only its flow's data frames here).
    let tx_at = |t: Time| {
        let mut c = incast();
        c.stop_time = Some(t);
        let r = run(c);
        let port = |node: u32, local: u16| {
            let p = r
                .ports
                .iter()
                .find(|p| p.node == node && p.port == local)
                .expect("port");
            (p.tx_bytes, p.tx_frames)
        };
        [port(0, 0), port(1, 0), port(SWITCH, BOTTLENECK)]
    };
    let (a, b) = (tx_at(mid), tx_at(first_finish));
    let secs = (first_finish - mid).as_secs_f64();
    let gbps = |i: usize| {
        let bytes = (b[i].0 - a[i].0) + OVERHEAD * (b[i].1 - a[i].1);
        bytes as f64 * 8.0 / secs / 1e9
    };
    let thr = [gbps(0), gbps(1)];
    let util = gbps(2) / RATE.as_gbps_f64();
    let j = jain(&thr);
    // The DCQCN rates (for information): the pacing rates the senders were allowed.
    let mut sum = [0.0f64; 2];
    let mut n = [0usize; 2];
    for s in r
        .rate_samples
        .iter()
        .filter(|s| s.time >= mid && s.time < first_finish)
    {
        sum[s.flow as usize] += s.gbps;
        n[s.flow as usize] += 1;
    }
    eprintln!(
        "second half [{mid}, {first_finish}): throughput {:.2} / {:.2} Gb/s (Jain {j:.4}), \
         bottleneck utilization {util:.3}; mean DCQCN rates {:.2} / {:.2} Gb/s",
        thr[0],
        thr[1],
        sum[0] / n[0].max(1) as f64,
        sum[1] / n[1].max(1) as f64
    );
    assert!(j > 0.95, "Jain's index {j:.4} of {thr:?}");
    assert!(util > 0.95, "bottleneck utilization {util:.3}");

    // The bottleneck queue over the second half.
    let mut q = Vec::new();
    let mut t = Time((mid.as_ps() / SAMPLE.as_ps() + 1) * SAMPLE.as_ps());
    let samples: std::collections::BTreeMap<Time, u64> = r
        .queue_samples
        .iter()
        .filter(|s| s.node == SWITCH && s.port == BOTTLENECK && s.queue == PRIO)
        .map(|s| (s.time, s.bytes))
        .collect();
    while t < first_finish {
        q.push(samples.get(&t).copied().unwrap_or(0));
        t += SAMPLE;
    }
    let mean = q.iter().sum::<u64>() / q.len() as u64;
    let mut sorted = q.clone();
    sorted.sort_unstable();
    let median = sorted[q.len() / 2];
    let max = sorted[q.len() - 1];
    let empty = q.iter().filter(|&&b| b == 0).count();
    let in_band = q.iter().filter(|&&b| (kmin..=kmax).contains(&b)).count();
    eprintln!(
        "bottleneck queue, {} samples: mean {mean} B, median {median} B, p10 {} B, p90 {} B, \
         max {max} B, empty {empty}, in [Kmin, Kmax] {:.0} % (Kmin {kmin}, Kmax {kmax})",
        q.len(),
        sorted[q.len() / 10],
        sorted[q.len() * 9 / 10],
        100.0 * in_band as f64 / q.len() as f64
    );
    assert!(
        (kmin / 2..=kmax).contains(&mean),
        "time-average queue {mean} B"
    );
    assert!(
        (kmin / 2..=kmax).contains(&median),
        "median queue {median} B"
    );
    assert!(max <= 2 * kmax, "queue peaked at {max} B");
    assert!(
        empty * 20 <= q.len(),
        "queue empty in {empty} of {} samples",
        q.len()
    );
}

#[test]
fn without_cc_pfc_alone_keeps_the_incast_lossless() {
    let mut cfg = incast();
    cfg.host.cc = CcConfig::None;
    cfg.switch.buffer_bytes = 300_000;
    let overhead = cfg.link.frame_overhead;
    let r = run(cfg);
    assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone));
    assert!(r.lossless_drops.is_empty(), "{:?}", r.lossless_drops);
    assert!(r.drops.is_empty(), "{:?}", r.drops);
    assert!(r.flows.iter().all(|f| f.retransmitted == 0));
    let pauses: u32 = r
        .ports
        .iter()
        .map(|p| p.pause_sent[usize::from(PRIO)])
        .sum();
    assert!(pauses > 0, "PFC must hold the incast");
    for h in [0u32, 1] {
        let p = r.ports.iter().find(|p| p.node == h).expect("host port");
        assert!(
            p.paused_time[usize::from(PRIO)] > Time::ZERO,
            "host {h} was paused"
        );
    }
    assert!(
        r.switches[0].peak_pg_headroom_bytes > 0,
        "headroom was used"
    );
    // Utilization of the bottleneck while both flows are active (reported; a loose bound:
    // see pfc_semantics.rs `resume_comes_before_the_queue_runs_dry` for the strict one).
    let b = r
        .ports
        .iter()
        .find(|p| p.node == SWITCH && p.port == BOTTLENECK)
        .expect("port");
    let end = r
        .flows
        .iter()
        .filter_map(|f| f.finish)
        .max()
        .expect("finished");
    let util = (b.tx_bytes + overhead * b.tx_frames) as f64 * 8.0 / (end.as_secs_f64() * 1e11);
    eprintln!(
        "{pauses} PAUSEs, peak PG headroom {} B, bottleneck utilization {util:.3}",
        r.switches[0].peak_pg_headroom_bytes
    );
    assert!(util > 0.8, "utilization {util:.3}");
}

/// ECN thresholds are per egress queue: the same incast with the second flow on priority 4,
/// whose queue does not mark, and the first on priority 3 with the default band. Only the
/// flow on the marking queue is ever slowed by DCQCN; the other keeps its line rate and
/// PFC holds both lossless.
#[test]
fn ecn_thresholds_are_per_queue() {
    use headroom_sim::config::QueueEcn;
    let mut cfg = incast();
    cfg.flows[1].prio = 4;
    cfg.switch.lossless = (1 << 3) | (1 << 4);
    cfg.switch.ecn.queues[4] = QueueEcn::Off;
    cfg.record.sample_interval = Some(SAMPLE);
    let r = Simulation::new(cfg).expect("valid").run();
    assert!(r.lossless_drops.is_empty());
    let min_rate = |flow: u32| {
        r.rate_samples
            .iter()
            .filter(|s| s.flow == flow)
            .map(|s| s.gbps)
            .fold(f64::INFINITY, f64::min)
    };
    assert!(
        min_rate(0) < 60.0,
        "flow 0 (marking queue) was cut: {}",
        min_rate(0)
    );
    assert_eq!(
        min_rate(1),
        100.0,
        "flow 1 (queue 4, no marking) kept line rate"
    );

    // The same thresholds given explicitly for queue 4 make it mark again.
    let mut cfg = incast();
    cfg.flows[1].prio = 4;
    cfg.switch.lossless = (1 << 3) | (1 << 4);
    cfg.switch.ecn.queues[4] = QueueEcn::Red(RedConfig::scaled(RATE));
    cfg.record.sample_interval = Some(SAMPLE);
    let r = Simulation::new(cfg).expect("valid").run();
    let cut = r
        .rate_samples
        .iter()
        .filter(|s| s.flow == 1)
        .any(|s| s.gbps < 60.0);
    assert!(cut, "flow 1 on a marking queue 4 was slowed");
}
