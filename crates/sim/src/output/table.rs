//! The short aligned text table of a run's summary for a terminal.
//!
//! Invariants: reads only the [`Summary`], so what the terminal shows is what
//! `summary.json` holds.

use super::{apps, marking, Summary, SwitchSummary};
use headroom_mech::units::human_bytes;
use std::fmt::Write as _;

/// A count with a decimal prefix, like `1.23 M` or `950`.
fn human_count(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2} G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// A simulated time in ns, shown in the largest unit that keeps it ≥ 1.
fn human_time_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} us", ns / 1e3)
    } else {
        format!("{ns:.3} ns")
    }
}

fn opt2(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.2}"))
}

/// A compact, aligned text table of a summary for the end of a run: flows, slowdown
/// percentiles overall and per size bucket, PFC frames, drops, peak buffer of the five
/// switches with the highest peak, events and (if measured) events per second.
///
/// Every header is in words; the few short forms a column needs (`99th pct`) are
/// explained under their block. Switch rows start with the node id after 13 spaces.
pub fn summary_table(summary: &Summary) -> String {
    let mut out = String::new();
    let s = summary;
    let _ = writeln!(
        out,
        "flows        {} total, {} finished, {} unfinished",
        s.flows.total, s.flows.finished, s.flows.unfinished
    );
    let _ = writeln!(
        out,
        "slowdown     flow completion time over the ideal (the flow alone on the network)"
    );
    let _ = writeln!(
        out,
        "  {:<11}{:>8}{:>10}{:>10}{:>10}{:>10}",
        "flow size", "flows", "median", "95th pct", "99th pct", "max"
    );
    let rows = std::iter::once(("all", &s.fct.overall))
        .chain(s.fct.by_size.iter().map(|b| (b.bucket.name, &b.stats)));
    for (name, st) in rows {
        let _ = writeln!(
            out,
            "  {:<11}{:>8}{:>10}{:>10}{:>10}{:>10}",
            name,
            st.flows,
            opt2(st.slowdown_p50),
            opt2(st.slowdown_p95),
            opt2(st.slowdown_p99),
            opt2(st.slowdown_max)
        );
    }
    let paused_ports = {
        let mut v: Vec<(u32, u16)> = s
            .pfc
            .ports
            .iter()
            .filter(|p| p.paused_ns > 0.0)
            .map(|p| (p.node, p.port))
            .collect();
        v.dedup();
        v.len()
    };
    let _ = writeln!(
        out,
        "pause frames {} PAUSE, {} RESUME sent (of which port-level: {} PAUSE, {} RESUME); \
         {} port(s) paused",
        s.pfc.pause_frames,
        s.pfc.resume_frames,
        s.pfc.port_level_pause_frames,
        s.pfc.port_level_resume_frames,
        paused_ports
    );
    if s.pfc.watchdog_storms > 0 {
        let _ = writeln!(
            out,
            "             PFC watchdog: {} storm(s) detected, {} restored, {:.3} ms in storms",
            s.pfc.watchdog_storms,
            s.pfc.watchdog_restorations,
            s.pfc.watchdog_storm_time_ns / 1e6
        );
    }
    if s.pfc.pause_episodes > 0 {
        let _ = writeln!(
            out,
            "             {} pause(s) decided, {} victim pause(s) (stopped traffic for an \
             uncongested egress)",
            s.pfc.pause_episodes, s.pfc.victim_pauses
        );
    }
    let _ = writeln!(out, "marking      {}", marking::marking_line(&s.marking));
    if let Some(c) = &s.flow_channels {
        let _ = writeln!(out, "channels     {}", c.line());
    }
    if let Some(apps) = &s.applications {
        let _ = writeln!(out, "applications {}", apps::line(apps));
    }
    let causes = if s.drops.by_cause.is_empty() {
        "none".to_string()
    } else {
        s.drops
            .by_cause
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "drops        {} ({causes}); {} of lossless packets",
        s.drops.total, s.drops.lossless
    );
    if !s.switches.is_empty() {
        let mut top: Vec<&SwitchSummary> = s.switches.iter().collect();
        top.sort_by(|a, b| b.peak_bytes.cmp(&a.peak_bytes).then(a.node.cmp(&b.node)));
        let shown = top.len().min(5);
        let _ = writeln!(
            out,
            "{:<13}{:>8}{:>12}{:>13}{:>12}{:>16}",
            "switch buffer", "switch", "peak", "% of buffer", "99th pct", "queue headroom"
        );
        for sw in &top[..shown] {
            let pct = 100.0 * sw.peak_bytes as f64 / sw.buffer_bytes.max(1) as f64;
            let name = match sw.role {
                Some(role) => format!("{} {role}", sw.node),
                None => sw.node.to_string(),
            };
            let _ = writeln!(
                out,
                "  {:<11}{:>8}{:>12}{:>12.1}%{:>12}{:>16}",
                "",
                name,
                human_bytes(sw.peak_bytes),
                pct,
                human_bytes(sw.occupancy_p99_bytes),
                human_bytes(sw.peak_pg_headroom_bytes)
            );
        }
        if top.len() > 5 {
            let _ = writeln!(out, "  top 5 of {} switches by peak", top.len());
        }
        let _ = writeln!(
            out,
            "  99th pct: the occupancy exceeded 1 % of the time; queue headroom: the most \
             headroom one ingress queue (priority group) held"
        );
    }
    let speed = s.wall.as_ref().map_or_else(String::new, |w| {
        format!(
            " in {:.3} s wall ({} events/s, {:.3e} simulated s per wall s)",
            w.wall_seconds,
            human_count(w.events_per_second),
            w.sim_seconds_per_wall_second
        )
    });
    let _ = writeln!(out, "events       {}{speed}", s.run.events);
    let _ = writeln!(
        out,
        "end          {} ({}{})",
        human_time_ns(s.run.end_time_ns),
        // `all_flows_done` is a summary.json value; the terminal gets it in words.
        s.run.stop_reason.replace('_', " "),
        s.run
            .stop_detail
            .as_ref()
            .map_or_else(String::new, |d| format!(": {d}"))
    );
    out
}
