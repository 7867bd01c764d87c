//! `headroom burst`: the largest incast burst each headroom scheme absorbs without a single
//! PFC PAUSE (the DSH paper's burst-absorption microbenchmark).
//!
//! The scenario gives the switch, the topology and any background traffic. This command
//! adds synchronized fan-in bursts: `--fan-in` senders to each of `k` receivers (for every
//! `k` of `--receivers`: the number of simultaneously congested ports), all starting at
//! `--at`, with the total burst split evenly over all senders and receivers. For each scheme
//! and `k` it binary-searches the largest total burst, to a resolution of `--resolution` of
//! the switch buffer, for which no switch sends a PAUSE (queue- or port-level) from `--at`
//! on, except to hosts that send only background traffic, and nothing is dropped. Receivers are the last `k` hosts without background traffic,
//! senders the first such hosts. It assumes absorption is monotone in the burst size (a larger burst that
//! still absorbs would be missed); the search reports the bracket it ended with.
//!
//! Outputs: `burst.csv`, `burst.json` and the plot `burst_absorbed` in `--out`, and a table.

use clap::Args;
use headroom_mech::units::{parse_time, Time};
use headroom_sim::config::SimConfig;
use headroom_sim::net::Simulation;
use headroom_sim::scenario;
use headroom_sim::topology::{NodeId, NodeKind};
use headroom_sim::workload::FlowSpec;
use miette::{miette, IntoDiagnostic, Result, WrapErr};
use rayon::prelude::*;
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `headroom burst`.
#[derive(Args, Debug)]
pub struct BurstArgs {
    /// Scenario file: topology, switch and background workloads (no bursts).
    scenario: PathBuf,
    /// Schemes to compare, comma-separated: sih, shp, dsh.
    #[arg(long, value_delimiter = ',', default_value = "sih,shp,dsh")]
    mmu: Vec<String>,
    /// Numbers of simultaneously congested receiver ports to try, comma-separated (each at
    /// least 1).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = crate::args::count)]
    receivers: Vec<usize>,
    /// Senders per receiver (at least 1).
    #[arg(long, default_value_t = 16, value_parser = crate::args::count)]
    fan_in: usize,
    /// When the bursts start.
    #[arg(long, default_value = "100us", value_parser = parse_time)]
    at: Time,
    /// Priority of the bursts: 0 to 7, and lossless in the scenario.
    #[arg(long, default_value_t = 3, value_parser = crate::args::priority, allow_negative_numbers = true)]
    prio: u8,
    /// Search resolution as a fraction of the switch buffer, in (0, 1): the search stops
    /// when its bracket is this narrow, which must be at least one MMU cell.
    #[arg(long, default_value_t = 0.005, value_parser = resolution, allow_negative_numbers = true)]
    resolution: f64,
    /// SHP's over-subscription ratio, when the scenario has no `[switch.shp]`.
    #[arg(long, default_value_t = 2.0, value_parser = crate::args::positive_number, allow_negative_numbers = true)]
    shp_ratio: f64,
    /// DSH's hysteresis in bytes, when the scenario has no `[switch.dsh]`.
    #[arg(long, default_value_t = 0)]
    dsh_delta: u64,
    /// Output directory (default: out/<scenario name>-burst).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// No table on standard output.
    #[arg(long, short)]
    quiet: bool,
}

/// Parses `--resolution`: a fraction of the buffer below 1, so that the search probes at
/// least once (the cell bound needs the scenario and is checked in [`run`]).
fn resolution(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() && v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!(
            "a fraction of the switch buffer above 0 and below 1 (0.005 is 0.5 %), not {s}"
        ))
    }
}

/// One point of the search: whether a total burst of `bytes` was absorbed.
fn absorbed(
    cfg: &SimConfig,
    bursts: &[(NodeId, Vec<NodeId>)],
    a: &BurstArgs,
    bytes: u64,
) -> Result<bool> {
    let mut cfg = cfg.clone();
    let adjacency = headroom_sim::routing::adjacency(&cfg.topology);
    let senders: usize = bursts.iter().map(|(_, s)| s.len()).sum();
    let each = (bytes / senders.max(1) as u64).max(1);
    for (rx, tx) in bursts {
        for &s in tx {
            cfg.flows.push(FlowSpec {
                src: s,
                dst: *rx,
                prio: a.prio,
                size: each,
                start: a.at,
                dport: 200,
            });
        }
    }
    cfg.flows.sort_by_key(|f| f.start);
    // The bursts drain in well under a millisecond at line rate; background flows may run on.
    let drain = Time::from_us(200) + cfg.topology.links[0].rate.serialization(bytes);
    cfg.stop_time = Some(cfg.stop_time.map_or(a.at + drain, |t| t.min(a.at + drain)));
    cfg.record.fail_on_lossless_drop = true;
    // The search reads which PAUSEs were sent, and when.
    cfg.record.omit_pfc_log = false;
    let is_background_host = |n: NodeId| {
        cfg.topology.nodes[n.index()] == NodeKind::Host
            && !bursts.iter().any(|(_, tx)| tx.contains(&n))
    };
    let r = Simulation::new(cfg.clone())
        .map_err(|e| miette!("{e}"))?
        .run();
    // Only the bursts are on trial: PAUSEs before them, or to a host that sends only
    // background traffic (two flows into one port pause their senders whatever the burst),
    // do not count; a PAUSE to a burst sender or between switches does.
    let paused = r.pfc_sent.iter().any(|p| {
        let peer = adjacency
            .get(p.node as usize)
            .and_then(|ports| ports.get(usize::from(p.port)))
            .map(|&(peer, _)| peer);
        p.is_switch && p.quanta != 0 && p.time >= a.at && !peer.is_some_and(is_background_host)
    });
    Ok(!paused && r.drops.is_empty())
}

fn with_scheme(base: &SimConfig, name: &str, a: &BurstArgs) -> Result<SimConfig> {
    let mut cfg = base.clone();
    cfg.switch.scheme = crate::compare::scheme_named(name, &base.switch, a.shp_ratio, a.dsh_delta)?;
    Ok(cfg)
}

/// Receivers and their senders: the last `k` hosts that carry no background traffic
/// receive; senders are taken round robin from the other such hosts, in id order.
fn bursts(cfg: &SimConfig, k: usize, fan_in: usize) -> Result<Vec<(NodeId, Vec<NodeId>)>> {
    let hosts: Vec<NodeId> = (0..cfg.topology.nodes.len() as u32)
        .map(NodeId)
        .filter(|n| cfg.topology.nodes[n.index()] == NodeKind::Host)
        .collect();
    let busy: Vec<NodeId> = cfg.flows.iter().flat_map(|f| [f.src, f.dst]).collect();
    let free: Vec<NodeId> = hosts.into_iter().filter(|h| !busy.contains(h)).collect();
    if k == 0 || k >= free.len() {
        return Err(miette!(
            "--receivers: {k} receivers do not fit the {} hosts without background traffic",
            free.len()
        ));
    }
    let receivers: Vec<NodeId> = free[free.len() - k..].to_vec();
    let pool: Vec<NodeId> = free[..free.len() - k].to_vec();
    if pool.len() < fan_in {
        return Err(miette!(
            "--fan-in {fan_in}: only {} hosts are free to send (not receivers, no background)",
            pool.len()
        ));
    }
    Ok(receivers
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            (
                r,
                (0..fan_in)
                    .map(|j| pool[(i * fan_in + j) % pool.len()])
                    .collect(),
            )
        })
        .collect())
}

/// The priorities set in a lossless mask, as `0, 3` (or `none`).
fn lossless_list(mask: u8) -> String {
    let v: Vec<String> = (0..8)
        .filter(|p| mask & (1 << p) != 0)
        .map(|p: u8| p.to_string())
        .collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// Runs `headroom burst`.
pub fn run(a: BurstArgs) -> Result<ExitCode> {
    crate::compare::check_schemes(&a.mmu)?;
    let s = scenario::load(&a.scenario).map_err(crate::run::scenario_report)?;
    let buffer = s.config.switch.buffer_bytes;
    let step = (buffer as f64 * a.resolution) as u64;
    let cell = u64::from(s.config.switch.cell_bytes);
    // The MMU admits whole cells, so brackets narrower than a cell tell bursts apart that the
    // switch cannot tell apart.
    if step < cell {
        return Err(miette!(
            "--resolution {}: a step of {step} B of the {buffer} B buffer is below one MMU cell \
             ({cell} B); use at least {:.2e}",
            a.resolution,
            cell as f64 / buffer.max(1) as f64
        ));
    }
    if let Some(stop) = s.config.stop_time.filter(|&t| t <= a.at) {
        // The bursts would never start, and every size would pass as absorbed.
        return Err(miette!(
            "--at {}: the scenario stops at {stop}, before the bursts would start",
            a.at
        ));
    }
    if s.config.switch.lossless & (1 << a.prio) == 0 {
        return Err(miette!(
            "--prio {}: not a lossless priority of this scenario, so its bursts would drop \
             instead of pausing (lossless: {})",
            a.prio,
            lossless_list(s.config.switch.lossless)
        ));
    }
    let mut cases = Vec::new();
    for m in &a.mmu {
        let cfg = with_scheme(&s.config, m, &a)?;
        for &k in &a.receivers {
            cases.push((m.clone(), k, cfg.clone(), bursts(&cfg, k, a.fan_in)?));
        }
    }
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(format!("{}-burst", s.name)));
    let side_by_side = cases.len().min(rayon::current_num_threads()).max(1);
    if let Some((m, _, cfg, _)) = cases.first() {
        crate::memory::ensure_fits(m, cfg, side_by_side)?;
    }
    crate::outdir::prepare(&out)?;
    let results: Vec<(String, usize, u64, u64)> = cases
        .into_par_iter()
        .map(|(m, k, cfg, b)| {
            // Invariant: `lo` is absorbed (0 trivially), `hi` is not (the whole buffer).
            let (mut lo, mut hi) = (0u64, buffer);
            while hi - lo > step {
                let mid = lo + (hi - lo) / 2;
                if absorbed(&cfg, &b, &a, mid)? {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            Ok((m, k, lo, hi))
        })
        .collect::<Result<_>>()?;

    let mut csv =
        String::from("scheme,congested_ports,absorbed_bytes,absorbed_percent,first_paused_bytes\n");
    let mut table = format!(
        "largest burst absorbed without a PAUSE or a drop ({} senders per receiver, buffer \
         {:.2} MB)\n{:<6} {:>15} {:>14} {:>12}\n",
        a.fan_in,
        buffer as f64 / 1e6,
        "scheme",
        "congested ports",
        "burst absorbed",
        "% of buffer"
    );
    let mut rows = Vec::new();
    for (m, k, lo, hi) in &results {
        let pct = *lo as f64 * 100.0 / buffer as f64;
        let _ = writeln!(csv, "{m},{k},{lo},{pct:.3},{hi}");
        let _ = writeln!(
            table,
            "{:<6} {k:>15} {:>11.3} MB {pct:>11.1}%",
            m.to_uppercase(),
            *lo as f64 / 1e6
        );
        rows.push(json!({"scheme": m, "congested_ports": k, "absorbed_bytes": lo, "absorbed_percent": pct, "first_paused_bytes": hi}));
    }
    let ratio = |num: &str, den: &str| {
        let get = |m: &str| {
            results
                .iter()
                .find(|r| r.0 == m && r.1 == a.receivers[0])
                .map(|r| r.2 as f64)
        };
        match (get(num), get(den)) {
            (Some(x), Some(y)) if y > 0.0 => Some(x / y),
            _ => None,
        }
    };
    if let Some(r) = ratio("dsh", "sih") {
        let _ = writeln!(
            table,
            "DSH absorbs {r:.2} times as much as SIH (with {} congested port(s))",
            a.receivers[0]
        );
    }
    let _ = writeln!(
        table,
        "\ncongested ports: receivers the bursts converge on at once; burst absorbed: found to \
         within {step} B ({} % of the buffer).\n\
         SIH: static headroom per lossless queue; SHP: shared headroom pool; DSH: dynamic and \
         shared headroom.",
        a.resolution * 100.0
    );
    let mut written = vec![out.join("burst.csv"), out.join("burst.json")];
    std::fs::write(out.join("burst.csv"), csv)
        .into_diagnostic()
        .wrap_err("writing burst.csv")?;
    let doc =
        json!({"scenario": s.name, "fan_in": a.fan_in, "buffer_bytes": buffer, "results": rows});
    std::fs::write(
        out.join("burst.json"),
        serde_json::to_string_pretty(&doc).into_diagnostic()? + "\n",
    )
    .into_diagnostic()
    .wrap_err("writing burst.json")?;
    let bars = crate::plots::BarData {
        title: format!(
            "Largest burst absorbed without PAUSE ({}-to-1 fan-in)",
            a.fan_in
        ),
        y_desc: "burst absorbed (% of switch buffer)".to_string(),
        counts: false,
        groups: a
            .receivers
            .iter()
            .map(|k| format!("{k} congested port(s)"))
            .collect(),
        series: a
            .mmu
            .iter()
            .map(|m| {
                let v = a
                    .receivers
                    .iter()
                    .map(|k| {
                        results
                            .iter()
                            .find(|r| &r.0 == m && r.1 == *k)
                            .map_or(0.0, |r| r.2 as f64 * 100.0 / buffer as f64)
                    })
                    .collect();
                (m.to_uppercase(), v)
            })
            .collect(),
    };
    written.extend(
        crate::plots::write_bar_chart(&out, "burst_absorbed", &bars).map_err(|e| miette!("{e}"))?,
    );
    crate::outdir::record(&out, &written)?;
    if !a.quiet {
        out!("{table}");
        outln!("outputs in {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
