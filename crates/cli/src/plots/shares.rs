//! Throughput shares: what part of the delivered bytes each source host, and each
//! application, got (the flow-channel patent's Fig. 6A and its fairness between
//! applications), as bar charts; and the same per source for compared runs, side by side.
//!
//! Invariants: a chart's shares are of the bytes its run delivered (finished flows or
//! not: `FlowRecord::delivered`), so they sum to 100 % when anything was delivered; a chart
//! is made only when there are at least two bars to compare and, per source, at most
//! [`MAX_SOURCES`] of them (beyond, one bar per host says nothing a reader can see).

use super::BarData;
use headroom_sim::output::Summary;
use headroom_sim::results::RunResults;
use std::collections::BTreeMap;

/// The most source hosts a share chart shows.
pub const MAX_SOURCES: usize = 64;

/// Per source host (in id order): the bytes its flows delivered.
fn by_source(results: &RunResults) -> BTreeMap<u32, u64> {
    let mut m = BTreeMap::new();
    for f in &results.flows {
        *m.entry(f.src).or_insert(0) += f.delivered;
    }
    m
}

/// `bytes` as percentages of their sum.
fn percent(bytes: &[u64]) -> Vec<f64> {
    let total: u64 = bytes.iter().sum();
    bytes
        .iter()
        .map(|&b| 100.0 * b as f64 / total.max(1) as f64)
        .collect()
}

/// The share of each source host of a run, if it has 2 to [`MAX_SOURCES`] of them.
pub(super) fn sources(results: &RunResults) -> Option<BarData> {
    let m = by_source(results);
    if !(2..=MAX_SOURCES).contains(&m.len()) {
        return None;
    }
    let bytes: Vec<u64> = m.values().copied().collect();
    Some(BarData {
        title: "Throughput share per source host".to_string(),
        y_desc: "share of delivered bytes (%)".to_string(),
        groups: m.keys().map(|h| format!("host {h}")).collect(),
        series: vec![("delivered".to_string(), percent(&bytes))],
        counts: false,
    })
}

/// The share of each application of a run, if its workloads name at least two.
pub(super) fn applications(summary: &Summary) -> Option<BarData> {
    let apps = summary.applications.as_ref().filter(|a| a.len() >= 2)?;
    Some(BarData {
        title: "Throughput share per application".to_string(),
        y_desc: "share of delivered bytes (%)".to_string(),
        groups: apps
            .iter()
            .map(|a| {
                let s = if a.flows == 1 { "" } else { "s" };
                format!("app {} ({} flow{s})", a.app, a.flows)
            })
            .collect(),
        series: vec![(
            "delivered".to_string(),
            apps.iter().map(|a| 100.0 * a.share).collect(),
        )],
        counts: false,
    })
}

/// The share of each source host in each of `runs`, side by side, if together they have
/// 2 to [`MAX_SOURCES`] sources.
pub(super) fn compared(runs: &[(String, &RunResults)]) -> Option<BarData> {
    let per_run: Vec<BTreeMap<u32, u64>> = runs.iter().map(|(_, r)| by_source(r)).collect();
    let hosts: Vec<u32> = per_run
        .iter()
        .flat_map(|m| m.keys().copied())
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .collect();
    if !(2..=MAX_SOURCES).contains(&hosts.len()) {
        return None;
    }
    Some(BarData {
        title: "Throughput share per source host".to_string(),
        y_desc: "share of delivered bytes (%)".to_string(),
        groups: hosts.iter().map(|h| format!("host {h}")).collect(),
        series: runs
            .iter()
            .zip(&per_run)
            .map(|((label, _), m)| {
                let bytes: Vec<u64> = hosts
                    .iter()
                    .map(|h| m.get(h).copied().unwrap_or(0))
                    .collect();
                (label.clone(), percent(&bytes))
            })
            .collect(),
        counts: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_mech::units::Time;
    use headroom_sim::results::FlowRecord;

    fn flow(id: u32, src: u32, delivered: u64) -> FlowRecord {
        FlowRecord {
            id,
            src,
            dst: 99,
            prio: 3,
            size: delivered.max(1),
            start: Time::ZERO,
            finish: None,
            ideal_fct: Time::from_ns(1),
            dport: 100,
            sport: 100,
            retransmitted: 0,
            delivered,
        }
    }

    fn run(flows: Vec<FlowRecord>) -> RunResults {
        RunResults {
            flows,
            ..RunResults::default()
        }
    }

    #[test]
    fn source_shares_sum_what_each_host_delivered() {
        let r = run(vec![flow(0, 2, 300), flow(1, 1, 100), flow(2, 2, 600)]);
        let bars = sources(&r).expect("two sources");
        assert_eq!(bars.groups, ["host 1", "host 2"]);
        assert_eq!(bars.series[0].1, [10.0, 90.0]);
        assert!(sources(&run(vec![flow(0, 1, 5)])).is_none(), "one source");
        let many = (0..=MAX_SOURCES as u32).map(|h| flow(h, h, 1)).collect();
        assert!(sources(&run(many)).is_none(), "too many to show");
    }

    #[test]
    fn compared_runs_share_one_set_of_hosts() {
        let a = run(vec![flow(0, 1, 100), flow(1, 2, 100)]);
        let b = run(vec![flow(0, 1, 300), flow(1, 3, 100)]);
        let bars = compared(&[("a".into(), &a), ("b".into(), &b)]).expect("three sources");
        assert_eq!(bars.groups, ["host 1", "host 2", "host 3"]);
        assert_eq!(bars.series[0].1, [50.0, 50.0, 0.0]);
        assert_eq!(bars.series[1].1, [75.0, 0.0, 25.0]);
    }
}
