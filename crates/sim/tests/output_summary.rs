//! `summarize` and `summary_table` on hand-made results with known answers.

#![allow(clippy::unwrap_used)]

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::SimConfig;
use headroom_sim::output::{self, SIZE_BUCKETS};
use headroom_sim::results::{
    ByteLedger, FlowRecord, PfcRecord, PortStats, RunResults, StopReason, SwitchStats,
};
use headroom_sim::topology::builders;
use std::collections::BTreeMap;
use std::time::Duration;

fn flow(id: u32, size: u64, slowdown: Option<u64>) -> FlowRecord {
    FlowRecord {
        id,
        src: 0,
        dst: 1,
        prio: 3,
        size,
        start: Time::from_ns(100),
        // Ideal FCT 1 ns, so the FCT in ns is the slowdown.
        finish: slowdown.map(|s| Time::from_ns(100 + s)),
        ideal_fct: Time::from_ns(1),
        dport: 100,
        sport: 10_000 + id as u16,
        retransmitted: 0,
        delivered: if slowdown.is_some() { size } else { 0 },
    }
}

fn port(node: u32, port: u16, f: impl FnOnce(&mut PortStats)) -> PortStats {
    let mut p = PortStats {
        node,
        port,
        peer: 2,
        ..PortStats::default()
    };
    f(&mut p);
    p
}

fn switch(node: u32, peak: u64) -> SwitchStats {
    SwitchStats {
        node,
        buffer_bytes: 1 << 20,
        peak_bytes: peak,
        occupancy_percentiles: [peak / 4, peak / 2, peak],
        ..SwitchStats::default()
    }
}

/// 20 small flows with slowdowns 1..=20, 10 medium flows with slowdowns 10, 20, ..., 100,
/// and 2 unfinished large flows.
fn hand_made() -> (RunResults, SimConfig) {
    let mut flows = Vec::new();
    for k in 1..=20u64 {
        flows.push(flow(flows.len() as u32, 1_000, Some(k)));
    }
    for k in 1..=10u64 {
        flows.push(flow(flows.len() as u32, 50_000, Some(10 * k)));
    }
    for _ in 0..2 {
        flows.push(flow(flows.len() as u32, 2_000_000, None));
    }
    let pfc = |t: u64, quanta: u16| PfcRecord {
        time: Time::from_ns(t),
        node: 2,
        is_switch: true,
        port: 1,
        prio: 3,
        port_level: false,
        quanta,
    };
    let mut drops = BTreeMap::new();
    drops.insert("buffer_full".to_string(), 5);
    drops.insert("corrupted".to_string(), 2);
    let results = RunResults {
        flows,
        pfc_sent: vec![pfc(10, 65535), pfc(20, 0), pfc(30, 65535)],
        pfc_received: vec![],
        ports: vec![
            port(0, 0, |p| p.paused_time[3] = Time::from_ns(15)),
            port(1, 0, |_| {}),
            port(2, 0, |p| p.tx_frames = 9),
            port(2, 1, |p| {
                p.pause_sent[3] = 2;
                p.resume_sent[3] = 1;
            }),
        ],
        switches: (0..7)
            .map(|i| switch(10 + i, 1000 * u64::from(i)))
            .collect(),
        drops,
        events: 12_345,
        end_time: Time::from_ms(1),
        stop_reason: Some(StopReason::Idle),
        bytes: ByteLedger {
            sent: 1_250_000,
            delivered: 1_250_000,
            dropped: 0,
            in_flight: 0,
        },
        ..RunResults::default()
    };
    let topo = builders::star(2, Rate::from_gbps(100), Time::from_us(1)).unwrap();
    (results, SimConfig::new(topo, vec![]))
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn summary_percentiles_on_hand_made_results() {
    let (r, cfg) = hand_made();
    let s = output::summarize(&r, &cfg, None);
    assert_eq!(
        (s.flows.total, s.flows.finished, s.flows.unfinished),
        (32, 30, 2)
    );

    let small = &s.fct.by_size[0].stats;
    assert_eq!(s.fct.by_size[0].bucket, SIZE_BUCKETS[0]);
    assert_eq!(small.flows, 20);
    assert!(close(small.slowdown_p50, 10.0)); // rank 10 of 20
    assert!(close(small.slowdown_p95, 19.0)); // rank 19
    assert!(close(small.slowdown_p99, 20.0)); // rank ceil(19.8) = 20
    assert!(close(small.slowdown_max, 20.0));
    assert!(close(small.mean_fct_ns, 10.5));
    assert!(close(small.fct_p99_ns, 20.0));
    // 1,000 B over k ns is 8 / k Tb/s: the mean of 8,000 / k Gb/s for k = 1..=20.
    let harmonic: f64 = (1..=20).map(|k| 8_000.0 / f64::from(k)).sum::<f64>() / 20.0;
    assert!(close(small.mean_goodput_gbps, harmonic));

    let mid = &s.fct.by_size[1].stats;
    assert_eq!(mid.flows, 10);
    assert!(close(mid.slowdown_p50, 50.0)); // rank 5 of 10
    assert!(close(mid.slowdown_p95, 100.0)); // rank ceil(9.5) = 10
    assert!(close(mid.slowdown_p99, 100.0));

    // Unfinished flows count nowhere in the FCT statistics.
    assert_eq!(s.fct.by_size[2].stats.flows, 0);
    assert_eq!(s.fct.by_size[3].stats.flows, 0);
    assert_eq!(s.fct.by_size[3].stats.slowdown_p50, None);

    // Overall, 30 values: 1..=9, 10, 10, 11..=19, 20, 20, 30..=100.
    let all = &s.fct.overall;
    assert_eq!(all.flows, 30);
    assert!(close(all.slowdown_p50, 14.0)); // rank 15
    assert!(close(all.slowdown_p95, 90.0)); // rank ceil(28.5) = 29
    assert!(close(all.slowdown_p99, 100.0)); // rank 30
    assert!(close(all.slowdown_max, 100.0));

    // 1.25 MB in 1 ms = 10 Gb/s.
    assert!(close(s.throughput.delivered_gbps, 10.0));
    // Small flows: 8000 bits in k ns = 8000/k Gb/s.
    let expected: f64 = (1..=20).map(|k| 8000.0 / f64::from(k)).sum::<f64>()
        + (1..=10).map(|k| 400_000.0 / f64::from(10 * k)).sum::<f64>();
    assert!(close(s.throughput.mean_flow_goodput_gbps, expected / 30.0));

    assert_eq!((s.pfc.pause_frames, s.pfc.resume_frames), (2, 1));
    // Only ports with PFC activity, in (node, port, priority) order.
    let keys: Vec<(u32, u16, u8)> = s
        .pfc
        .ports
        .iter()
        .map(|p| (p.node, p.port, p.priority))
        .collect();
    assert_eq!(keys, vec![(0, 0, 3), (2, 1, 3)]);
    assert_eq!(s.pfc.ports[0].paused_ns, 15.0);
    assert_eq!(s.pfc.ports[0].rate_bps, 100_000_000_000);
    assert_eq!(
        (s.pfc.ports[1].pauses_sent, s.pfc.ports[1].resumes_sent),
        (2, 1)
    );

    assert_eq!(s.drops.total, 7);
    assert_eq!(s.drops.lossless, 0);
    assert_eq!(s.switches.len(), 7);
    assert_eq!(s.run.stop_reason, "idle");
    assert_eq!(s.run.end_time_ns, 1e6);
    assert!(s.wall.is_none());
    assert_eq!((s.config.hosts, s.config.switches), (2, 1));
}

#[test]
fn wall_clock_rates() {
    let (r, cfg) = hand_made();
    let s = output::summarize(&r, &cfg, Some(Duration::from_millis(500)));
    let w = s.wall.unwrap();
    assert_eq!(w.wall_seconds, 0.5);
    assert!((w.events_per_second - 24_690.0).abs() < 1e-6);
    assert!((w.sim_seconds_per_wall_second - 0.002).abs() < 1e-12);
}

#[test]
fn summary_table_is_aligned_and_complete() {
    let (r, cfg) = hand_made();
    let s = output::summarize(&r, &cfg, Some(Duration::from_secs(1)));
    let t = output::summary_table(&s);
    eprintln!("{t}");
    assert!(t.contains("32 total, 30 finished, 2 unfinished"));
    assert!(t.contains("2 PAUSE, 1 RESUME"));
    assert!(t.contains("buffer_full 5"));
    assert!(t.contains("events/s"));
    for b in SIZE_BUCKETS {
        assert!(t.contains(b.name), "{} missing", b.name);
    }
    // Top 5 switches by peak: nodes 16, 15, 14, 13, 12; not 11 or 10.
    let rows: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("             "))
        .collect();
    let nodes: Vec<&str> = rows
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(nodes, vec!["16", "15", "14", "13", "12"]);
    // FCT rows share column positions: every p99 value ends at the same column.
    let fct_rows: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("  all") || l.starts_with("  <10KB"))
        .collect();
    assert_eq!(fct_rows.len(), 2);
    assert_eq!(fct_rows[0].len(), fct_rows[1].len());
}
