//! Throughput per application: the `applications` section of `summary.json` and its line
//! in the text summary, for scenarios whose workloads name an `app` (absent otherwise).
//!
//! Invariants: applications in id order; every flow counted in exactly one; shares of the
//! delivered bytes sum to 1 when anything was delivered.

use crate::config::SimConfig;
use crate::results::RunResults;
use serde::Serialize;
use std::collections::BTreeMap;

/// What one application's flows delivered.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppSummary {
    /// Application id (a workload's `app`).
    pub app: u8,
    /// Its flows.
    pub flows: usize,
    /// Payload bytes its flows delivered in order (finished or not).
    pub delivered_bytes: u64,
    /// Those bytes over the run's duration, Gb/s.
    pub throughput_gbps: f64,
    /// Its part of every application's delivered bytes.
    pub share: f64,
}

/// The applications of a run (`None`: its workloads name none).
pub fn of(results: &RunResults, cfg: &SimConfig) -> Option<Vec<AppSummary>> {
    if cfg.flow_apps.is_empty() {
        return None;
    }
    // Per application id: flows and delivered bytes (in id order).
    let mut by_app: BTreeMap<u8, (usize, u64)> = BTreeMap::new();
    for f in &results.flows {
        let app = cfg.flow_apps.get(f.id as usize).copied().unwrap_or(0);
        let e = by_app.entry(app).or_default();
        e.0 += 1;
        e.1 += f.delivered;
    }
    let mut apps: Vec<AppSummary> = by_app
        .into_iter()
        .map(|(app, (flows, delivered_bytes))| AppSummary {
            app,
            flows,
            delivered_bytes,
            throughput_gbps: 0.0,
            share: 0.0,
        })
        .collect();
    let total: u64 = apps.iter().map(|a| a.delivered_bytes).sum();
    let secs = results.end_time.as_secs_f64().max(1e-12);
    for a in &mut apps {
        a.throughput_gbps = a.delivered_bytes as f64 * 8.0 / secs * 1e-9;
        a.share = a.delivered_bytes as f64 / total.max(1) as f64;
    }
    Some(apps)
}

/// Their line in the text summary.
pub fn line(apps: &[AppSummary]) -> String {
    apps.iter()
        .map(|a| {
            format!(
                "app {}: {} flow(s), {:.2} Gb/s ({:.1} %)",
                a.app,
                a.flows,
                a.throughput_gbps,
                100.0 * a.share
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}
