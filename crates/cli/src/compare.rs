//! `headroom compare`: one scenario under several headroom schemes (SIH, SHP, DSH), under
//! several congestion-control algorithms (`--cc`), under several congestion detectors
//! (`--detector`), under PFC and credits (`--flow-control`), or under several arbitrations
//! within a switch queue (`--arbitration`), run in parallel, compared side by side.
//!
//! Every run uses the same topology, traffic, seed and buffer; only `[switch] scheme` (or
//! `[host.cc]`, `[switch.ecn] detector`, `[fabric] kind`, `[switch.scheduler] arbitration`)
//! changes. Each run's own outputs go to `<out>/<scheme, algorithm, detector, kind or
//! arbitration>/`; the comparison is
//! `<out>/compare.csv`, `<out>/compare.json`, the printed table, and the plots
//! `compare_fct_slowdown_cdf` and `compare_pauses`.

use clap::Args;
use headroom_mech::tcd::ReleasedConfig;
use headroom_sim::config::{
    Arbitration, CcConfig, DetectorConfig, SchemeConfig, ShpPool, SimConfig, SwitchConfig,
    WindowConfig,
};
use headroom_sim::net::Simulation;
use headroom_sim::output::{self, nearest_rank, WriteOptions};
use headroom_sim::results::{PortStats, RunResults};
use headroom_sim::scenario;
use miette::{miette, IntoDiagnostic, Result, WrapErr};
use rayon::prelude::*;
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `headroom compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Scenario file (TOML); its `[switch] scheme` is replaced by each scheme in turn.
    scenario: PathBuf,
    /// Schemes to run, comma-separated: sih, shp, dsh.
    #[arg(long, value_delimiter = ',', default_value = "sih,shp,dsh")]
    mmu: Vec<String>,
    /// Compare congestion-control algorithms instead, comma-separated: dcqcn, dctcp,
    /// timely, hpcc, powertcp, ib-cc, none (the scenario's scheme for all; its `[host.cc]`
    /// parameters for its own algorithm, the defaults of `docs/scenario.md` for the others).
    #[arg(long, value_delimiter = ',', conflicts_with = "mmu")]
    cc: Vec<String>,
    /// Compare congestion detectors instead, comma-separated: red, tcd, tcd-released (the
    /// scenario's `[switch.ecn.tcd]` parameters for its own detector, the defaults for the
    /// others).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["mmu", "cc"])]
    detector: Vec<String>,
    /// Compare link flow control instead, comma-separated: pfc, credit, flow-channels, each
    /// on every link (the scenario's `[fabric.credit]` and `[fabric.flow_channels]`
    /// parameters, their defaults without them; flow channels over PFC links unless the
    /// scenario's fabric is credit).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["mmu", "cc", "detector"])]
    flow_control: Vec<String>,
    /// Compare arbitrations within a switch egress queue instead, comma-separated: fifo,
    /// input-port, flow, application. Each run's flows.csv gives every flow's delivered bytes; the table
    /// adds Jain's index of them.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["mmu", "cc", "detector", "flow_control"])]
    arbitration: Vec<String>,
    /// SHP's over-subscription ratio, when the scenario has no `[switch.shp]`.
    #[arg(long, default_value_t = 2.0, value_parser = crate::args::positive_number, allow_negative_numbers = true)]
    shp_ratio: f64,
    /// DSH's queue- and port-level hysteresis in bytes, when the scenario has no `[switch.dsh]`.
    #[arg(long, default_value_t = 1500)]
    dsh_delta: u64,
    /// Output directory (default: out/<scenario name>-compare).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Do not draw plots.
    #[arg(long)]
    no_plots: bool,
    /// No table on standard output.
    #[arg(long, short)]
    quiet: bool,
}

/// Most `[[workload]]` entries reported one by one; with more, flows are grouped by kind.
const MAX_WORKLOAD_COLUMNS: usize = 4;

/// What the scheme names mean, printed under the table.
const SCHEMES_LEGEND: &str = "SIH: static headroom per lossless queue; SHP: shared headroom \
pool; DSH: dynamic and shared headroom.";

/// What the algorithm names mean, printed under a `--cc` table.
const CC_LEGEND: &str = "DCQCN: rate cuts on CNPs; DCTCP: cuts by the fraction of ECN-echoed \
ACKs; TIMELY: rate from the RTT gradient; HPCC: rate from INT link utilization; PowerTCP: rate \
from link power (queue and its growth) by INT, or by RTTs in delay mode; IB-CC: InfiniBand CC, \
switches mark FECN above a queue threshold and sources step a table of inter-packet delays per \
BECN; none: line rate, PFC only.";

/// What the detector names mean, printed under a `--detector` table.
const DETECTOR_LEGEND: &str = "RED: ECN marks by queue length alone; TCD: ternary congestion \
detection, paused queues mark UE instead of CE (tcd: the paper's state machine; tcd-released: \
the authors' released rule).";

/// What the flow-control names mean, printed under a `--flow-control` table.
const FLOW_CONTROL_LEGEND: &str = "PFC: a receiver pauses a priority when its buffer fills \
(headroom absorbs what is in flight); CREDIT: a receiver grants blocks of its buffer per \
virtual lane and a transmitter sends only what it was granted (no PAUSE, no headroom); \
FLOW-CHANNELS: per-flow state on every switch hop, released by hop-by-hop ACKs, paths chosen \
by load without reordering, over PFC links (credit links if the scenario's are).";

/// What the arbitration names mean, printed under an `--arbitration` table.
const ARBITRATION_LEGEND: &str = "FIFO: a switch queue sends in arrival order; INPUT-PORT: \
round-robin over the input ports with packets in the queue (fair to ports); FLOW: round-robin \
over the flows with packets in the queue (fair to flows); APPLICATION: round-robin over \
applications, then over each one's flows (fair to applications). Jain: (sum x)^2 / (n sum x^2) over \
the flows' delivered bytes, 1 when all flows got the same.";

/// What one `compare` varies between its runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dimension {
    Scheme,
    Cc,
    Detector,
    FlowControl,
    Arbitration,
}

impl Dimension {
    /// The dimension `a` asks for: the one whose list is given (clap lets at most one
    /// through), else the schemes.
    fn of(a: &CompareArgs) -> Self {
        if !a.cc.is_empty() {
            Dimension::Cc
        } else if !a.detector.is_empty() {
            Dimension::Detector
        } else if !a.flow_control.is_empty() {
            Dimension::FlowControl
        } else if !a.arbitration.is_empty() {
            Dimension::Arbitration
        } else {
            Dimension::Scheme
        }
    }

    /// The first column's name in the table, CSV and JSON.
    fn column(self) -> &'static str {
        match self {
            Dimension::Scheme => "scheme",
            Dimension::Cc => "cc",
            Dimension::Detector => "detector",
            Dimension::FlowControl => "flow_control",
            Dimension::Arbitration => "arbitration",
        }
    }

    /// What the run names mean.
    fn legend(self) -> &'static str {
        match self {
            Dimension::Scheme => SCHEMES_LEGEND,
            Dimension::Cc => CC_LEGEND,
            Dimension::Detector => DETECTOR_LEGEND,
            Dimension::FlowControl => FLOW_CONTROL_LEGEND,
            Dimension::Arbitration => ARBITRATION_LEGEND,
        }
    }

    /// The names of the runs `a` asks for.
    fn names(self, a: &CompareArgs) -> &[String] {
        match self {
            Dimension::Scheme => &a.mmu,
            Dimension::Cc => &a.cc,
            Dimension::Detector => &a.detector,
            Dimension::FlowControl => &a.flow_control,
            Dimension::Arbitration => &a.arbitration,
        }
    }

    /// The configuration of run `name`: `base` with that scheme, algorithm, detector, flow
    /// control or arbitration.
    fn config(self, base: &SimConfig, name: &str, a: &CompareArgs) -> Result<SimConfig> {
        match self {
            Dimension::Scheme => with_scheme(base, name, a),
            Dimension::Cc => with_cc(base, name),
            Dimension::Detector => with_detector(base, name),
            Dimension::FlowControl => with_flow_control(base, name),
            Dimension::Arbitration => with_arbitration(base, name),
        }
    }
}

/// What the compare table's columns mean, printed under it.
const COMPARE_LEGEND: &str = "\
shared buffer, headroom: buffer left shared and headroom reserved, per switch (mean over switches).
queue / port PAUSEs: PAUSE frames sent for one priority / for the whole port (DSH only).
time paused: transmitters held by PAUSE, summed over ports and priorities (ms).
credit blocked: transmitters waiting for credit, summed over ports and VLs (ms).
victim holds: PAUSEs (PFC) or waits for credit (credits) that stopped traffic headed to an \
uncongested egress.
slowdown: flow completion time over the ideal (the flow alone on the network).
mean FCT: mean flow completion time of the finished flows; in brackets, over the same flows' \
mean in the SIH run (the first run when SIH is not compared).";

/// One run (a scheme, or an algorithm) and what the table reports of it.
struct Row {
    /// The scheme or algorithm.
    label: String,
    /// The configuration it ran (the scenario with this scheme).
    cfg: SimConfig,
    results: RunResults,
    shared_pool_bytes: f64,
    headroom_reserved_bytes: f64,
}

/// The scheme called `name` (`sih`, `shp`, `dsh`) for a switch configured as `own`: the
/// scenario's parameters when it already uses that scheme, else SHP with `shp_ratio` and DSH
/// with `dsh_delta` of hysteresis at both levels, which must be smaller than the buffer (a
/// paused queue resumes `dsh_delta` below its threshold, and no threshold reaches the whole
/// buffer: more would make the hysteresis "resume when empty" whatever its value).
pub(crate) fn scheme_named(
    name: &str,
    own: &SwitchConfig,
    shp_ratio: f64,
    dsh_delta: u64,
) -> Result<SchemeConfig> {
    Ok(match (name, &own.scheme) {
        ("sih", _) => SchemeConfig::Sih,
        ("shp", s @ SchemeConfig::Shp(_)) => s.clone(),
        ("shp", _) => SchemeConfig::Shp(ShpPool::Ratio(shp_ratio)),
        ("dsh", s @ SchemeConfig::Dsh { .. }) => s.clone(),
        ("dsh", _) if dsh_delta >= own.buffer_bytes => {
            return Err(miette!(
                "--dsh-delta {dsh_delta}: a hysteresis of the whole switch buffer ({} B) or \
                 more exceeds every threshold, so a paused queue would resume only once empty",
                own.buffer_bytes
            ))
        }
        ("dsh", _) => SchemeConfig::Dsh {
            delta_q: dsh_delta,
            delta_p: dsh_delta,
        },
        (other, _) => {
            return Err(miette!(
                "--mmu: unknown scheme `{other}` (expected sih, shp or dsh)"
            ))
        }
    })
}

/// Checks a `--mmu` list: every name known (see [`scheme_named`]) and none twice, since each
/// scheme's outputs go to a directory named after it.
pub(crate) fn check_schemes(names: &[String]) -> Result<()> {
    for (i, m) in names.iter().enumerate() {
        scheme_named(m, &SwitchConfig::default(), 1.0, 0)?;
        if names[..i].contains(m) {
            return Err(miette!("--mmu: `{m}` is listed twice"));
        }
    }
    Ok(())
}

/// The `--cc` algorithm called `name`, with its defaults for packets of `payload` bytes.
fn cc_named(name: &str, payload: u64) -> Result<CcConfig> {
    CcConfig::named(name, payload).ok_or_else(|| {
        miette!(
            "--cc: unknown algorithm `{name}` (expected dcqcn, dctcp, timely, hpcc, powertcp, ib-cc or none)"
        )
    })
}

/// The configuration of `base` with congestion-control algorithm `name`: the scenario's
/// own parameters when it already runs it, else the algorithm's defaults and window.
fn with_cc(base: &SimConfig, name: &str) -> Result<SimConfig> {
    let mut cfg = base.clone();
    if base.host.cc.name() == name {
        return Ok(cfg);
    }
    cfg.host.cc = cc_named(name, base.host.mtu_payload)?;
    cfg.host.window = WindowConfig::for_algorithm(&cfg.host.cc);
    Ok(cfg)
}

/// The configuration of `base` with congestion detector `name`: the scenario's own
/// parameters when it already uses it, else the detector's defaults.
fn with_detector(base: &SimConfig, name: &str) -> Result<SimConfig> {
    let mut cfg = base.clone();
    if base.switch.ecn.detector.name() == name {
        return Ok(cfg);
    }
    cfg.switch.ecn.detector = match name {
        "red" => DetectorConfig::Red,
        "tcd" => DetectorConfig::Tcd {
            max_t_on: None,
            threshold: None,
        },
        "tcd-released" => DetectorConfig::TcdReleased(ReleasedConfig::default()),
        other => {
            return Err(miette!(
                "--detector: unknown detector `{other}` (expected red, tcd or tcd-released)"
            ))
        }
    };
    cfg.switch
        .ecn
        .validate()
        .map_err(|reason| miette!("--detector {name}: {reason}"))?;
    Ok(cfg)
}

/// The configuration of `base` with fabric kind `name` (`pfc`, `credit`, `flow-channels`)
/// on every link (a link's own `flow_control` is overridden).
fn with_flow_control(base: &SimConfig, name: &str) -> Result<SimConfig> {
    let mut cfg = base.clone();
    cfg.fabric
        .set_kind(name)
        .map_err(|e| miette!("--flow-control: {e}"))?;
    cfg.validate()
        .map_err(|e| miette!("--flow-control {name}: {e}"))?;
    Ok(cfg)
}

/// The configuration of `base` with arbitration `name` in every switch egress queue.
fn with_arbitration(base: &SimConfig, name: &str) -> Result<SimConfig> {
    let mut cfg = base.clone();
    cfg.switch.scheduler.arbitration = Arbitration::NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, arb)| arb)
        .ok_or_else(|| {
            miette!(
                "--arbitration: unknown arbitration `{name}` (expected fifo, input-port, flow \
                 or application)"
            )
        })?;
    Ok(cfg)
}

/// Jain's fairness index of the flows' delivered bytes: (sum x)^2 / (n sum x^2), 1 when
/// every flow got the same; `None` without flows or bytes.
fn delivered_jain(r: &RunResults) -> Option<f64> {
    let x: Vec<f64> = r.flows.iter().map(|f| f.delivered as f64).collect();
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    (squares > 0.0).then(|| sum * sum / (x.len() as f64 * squares))
}

/// The configuration of `base` with scheme `name`.
fn with_scheme(base: &SimConfig, name: &str, a: &CompareArgs) -> Result<SimConfig> {
    let mut cfg = base.clone();
    cfg.switch.scheme = scheme_named(name, &base.switch, a.shp_ratio, a.dsh_delta)?;
    Ok(cfg)
}

/// FCT slowdown p50 and p99 of the flows selected by `keep`.
fn slowdowns(r: &RunResults, keep: impl Fn(usize) -> bool) -> (Option<f64>, Option<f64>) {
    let mut v: Vec<f64> = r
        .flows
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .filter_map(|(_, f)| f.slowdown())
        .collect();
    v.sort_by(f64::total_cmp);
    (nearest_rank(&v, 50), nearest_rank(&v, 99))
}

/// Mean FCT, in ns, of the finished flows selected by `keep`.
fn mean_fct_ns(r: &RunResults, keep: impl Fn(usize) -> bool) -> Option<f64> {
    let (sum, n) = r
        .flows
        .iter()
        .enumerate()
        .filter(|(i, _)| keep(*i))
        .filter_map(|(_, f)| f.fct())
        .fold((0f64, 0usize), |(s, n), t| {
            (s + t.as_ps() as f64 / 1e3, n + 1)
        });
    (n > 0).then(|| sum / n as f64)
}

/// `value / base`, when both exist and the base is not zero.
fn ratio(value: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (value, base) {
        (Some(v), Some(b)) if b > 0.0 => Some(v / b),
        _ => None,
    }
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.2}"))
}

/// Runs `headroom compare`.
pub fn run(a: CompareArgs) -> Result<ExitCode> {
    let by = Dimension::of(&a);
    for (flag, list) in [
        ("--cc", &a.cc),
        ("--detector", &a.detector),
        ("--flow-control", &a.flow_control),
        ("--arbitration", &a.arbitration),
    ] {
        for (i, d) in list.iter().enumerate() {
            if list[..i].contains(d) {
                return Err(miette!("{flag}: `{d}` is listed twice"));
            }
        }
    }
    match by {
        Dimension::Cc => {
            for c in &a.cc {
                cc_named(c, 1)?;
            }
        }
        Dimension::Scheme => check_schemes(&a.mmu)?,
        _ => {}
    }
    let dimension = by.column();
    let s = scenario::load(&a.scenario).map_err(crate::run::scenario_report)?;
    let mut base = s.config.clone();
    if let Some(seed) = a.seed {
        base.seed = seed;
    }
    let configs: Vec<(String, SimConfig)> = by
        .names(&a)
        .iter()
        .map(|n| by.config(&base, n, &a).map(|cfg| (n.clone(), cfg)))
        .collect::<Result<_>>()?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(format!("{}-compare", s.name)));
    for w in &s.warnings {
        errln!("warning: {}: {w}", a.scenario.display());
    }
    let side_by_side = configs.len().min(rayon::current_num_threads()).max(1);
    if let Some((scheme, cfg)) = configs.first() {
        crate::memory::ensure_fits(scheme, cfg, side_by_side)?;
    }
    crate::outdir::prepare(&out)?;
    let mut written: Vec<PathBuf> = Vec::new();

    let rows: Vec<Row> = configs
        .into_par_iter()
        .map(|(scheme, cfg)| {
            let sim = Simulation::new(cfg.clone()).map_err(|e| miette!("{scheme}: {e}"))?;
            let results = sim.run();
            let n = results.switches.len().max(1) as f64;
            let shared = results
                .switches
                .iter()
                .map(|s| s.shared_pool_bytes as f64)
                .sum::<f64>();
            let reserved = results
                .switches
                .iter()
                .map(|s| s.headroom_reserved_bytes as f64)
                .sum::<f64>();
            Ok(Row {
                label: scheme,
                cfg,
                results,
                shared_pool_bytes: shared / n,
                headroom_reserved_bytes: reserved / n,
            })
        })
        .collect::<Result<_>>()?;

    for row in &rows {
        let dir = out.join(&row.label);
        let summary = output::summarize(&row.results, &row.cfg, None);
        written.extend(
            output::write_all(
                &dir,
                &row.results,
                &row.cfg,
                &summary,
                &WriteOptions::default(),
            )
            .map_err(|e| miette!("{e}"))?,
        );
    }

    // Flow groups of the per-workload columns: each `[[workload]]`, or, with many, each kind.
    let by_kind = s.workloads.names.len() > MAX_WORKLOAD_COLUMNS;
    let (groups_names, group_of) = s.workloads.grouped(MAX_WORKLOAD_COLUMNS);
    let in_group = |gi: usize| {
        let group_of = &group_of;
        move |i: usize| group_of.get(i) == Some(&(gi as u32))
    };
    // Mean FCTs are normalised to the SIH run (the DSH paper's metric), else the first.
    let base_row = rows.iter().position(|r| r.label == "sih").unwrap_or(0);
    let base_label = rows
        .get(base_row)
        .map_or(String::new(), |r| r.label.clone());
    let base_means: Vec<Option<f64>> = std::iter::once(None)
        .chain((0..groups_names.len()).map(Some))
        .map(|g| {
            let r = &rows[base_row].results;
            match g {
                None => mean_fct_ns(r, |_| true),
                Some(gi) => mean_fct_ns(r, in_group(gi)),
            }
        })
        .collect();
    // The label column fits the longest label (`TCD-RELEASED`).
    let w = rows
        .iter()
        .map(|r| r.label.len())
        .max()
        .unwrap_or(0)
        .max(dimension.len());
    let mut table = String::new();
    let mut csv = format!(
        "{dimension},shared_pool_bytes,headroom_reserved_bytes,queue_pauses,port_pauses,queue_paused_ms,port_paused_ms,credit_blocked_ms,pause_episodes,victim_pauses,credit_waits,credit_victim_waits,lossless_drops,drops,flows_finished,slowdown_p50,slowdown_p99,ce_marked,ue_marked,undetermined_queues",
    );
    for w in &groups_names {
        let _ = write!(csv, ",{w}_p50,{w}_p99");
    }
    csv.push_str(",mean_fct_ns,mean_fct_norm");
    for w in &groups_names {
        let _ = write!(csv, ",{w}_mean_fct_ns,{w}_mean_fct_norm");
    }
    csv.push('\n');
    // Two header lines, each column's words split over them, so no header needs a short form.
    let _ = writeln!(
        table,
        "{:<w$} {:>13} {:>13} {:>9} {:>9} {:>11} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "",
        "shared buffer",
        "headroom",
        "queue",
        "port",
        "time",
        "credit",
        "victim",
        "lossless",
        "flows",
        "slowdown",
        "slowdown"
    );
    let _ = writeln!(
        table,
        "{:<w$} {:>13} {:>13} {:>9} {:>9} {:>11} {:>10} {:>8} {:>9} {:>9} {:>9} {:>9}",
        dimension,
        "per switch",
        "per switch",
        "PAUSEs",
        "PAUSEs",
        "paused ms",
        "blocked ms",
        "holds",
        "drops",
        "finished",
        "median",
        "99th pct"
    );
    let mut json_rows = Vec::new();
    let mut marks_lines = Vec::new();
    for row in &rows {
        let r = &row.results;
        // From the ports' counters: complete whether or not the PFC log was kept.
        let queue_pauses: u64 = r
            .ports
            .iter()
            .flat_map(|p| p.pause_sent)
            .map(u64::from)
            .sum();
        let port_pauses: u64 = r.ports.iter().map(|p| u64::from(p.port_pause_sent)).sum();
        let queue_paused_ms: f64 = r
            .ports
            .iter()
            .flat_map(|p| p.paused_time.iter())
            .map(|t| t.as_secs_f64() * 1e3)
            .sum();
        let port_paused_ms: f64 = r
            .ports
            .iter()
            .map(|p| p.port_paused_time.as_secs_f64() * 1e3)
            .sum();
        let credit_blocked_ms: f64 = r
            .ports
            .iter()
            .flat_map(|p| p.credit_blocked_time.iter())
            .map(|t| t.as_secs_f64() * 1e3)
            .sum();
        let credit_updates: u64 = r.ports.iter().flat_map(|p| p.credit_updates).sum();
        let pause_episodes: u64 = r.ports.iter().map(PortStats::pause_episodes_total).sum();
        let victim_pauses: u64 = r.ports.iter().map(PortStats::victim_pauses_total).sum();
        let credit_waits: u64 = r.ports.iter().map(PortStats::credit_waits_total).sum();
        let credit_victim_waits: u64 = r
            .ports
            .iter()
            .map(PortStats::credit_victim_waits_total)
            .sum();
        let drops: u64 = r.drops.values().sum();
        let finished = r.flows.iter().filter(|f| f.finish.is_some()).count();
        let (p50, p99) = slowdowns(r, |_| true);
        let mean = mean_fct_ns(r, |_| true);
        let mean_norm = ratio(mean, base_means[0]);
        let mut groups = Vec::new();
        for (gi, g) in groups_names.iter().enumerate() {
            let (g50, g99) = slowdowns(r, in_group(gi));
            let g_mean = mean_fct_ns(r, in_group(gi));
            groups.push(json!({
                "workload": g,
                "slowdown_p50": g50,
                "slowdown_p99": g99,
                "mean_fct_ns": g_mean,
                "mean_fct_norm": ratio(g_mean, base_means[gi + 1]),
            }));
        }
        let marking = output::MarkingSummary::of(r, &row.cfg);
        let undetermined = marking.undetermined_queues();
        let _ = write!(
            csv,
            "{},{:.0},{:.0},{},{},{:.6},{:.6},{:.6},{},{},{},{},{},{},{},{},{},{},{},{}",
            row.label,
            row.shared_pool_bytes,
            row.headroom_reserved_bytes,
            queue_pauses,
            port_pauses,
            queue_paused_ms,
            port_paused_ms,
            credit_blocked_ms,
            pause_episodes,
            victim_pauses,
            credit_waits,
            credit_victim_waits,
            r.lossless_drops.len(),
            drops,
            finished,
            p50.map_or(String::new(), |v| format!("{v:.6}")),
            p99.map_or(String::new(), |v| format!("{v:.6}")),
            marking.ce_marked,
            marking.ue_marked,
            undetermined,
        );
        for g in &groups {
            let f = |k: &str| g[k].as_f64().map_or(String::new(), |v| format!("{v:.6}"));
            let _ = write!(csv, ",{},{}", f("slowdown_p50"), f("slowdown_p99"));
        }
        let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
        let _ = write!(csv, ",{},{}", f(mean), f(mean_norm));
        for g in &groups {
            let _ = write!(
                csv,
                ",{},{}",
                f(g["mean_fct_ns"].as_f64()),
                f(g["mean_fct_norm"].as_f64())
            );
        }
        csv.push('\n');
        let _ = writeln!(
            table,
            "{:<w$} {:>10.2} MB {:>10.2} MB {:>9} {:>9} {:>11.3} {:>10.3} {:>8} {:>9} {:>9} {:>9} {:>9}",
            row.label.to_uppercase(),
            row.shared_pool_bytes / 1e6,
            row.headroom_reserved_bytes / 1e6,
            queue_pauses,
            port_pauses,
            queue_paused_ms + port_paused_ms,
            credit_blocked_ms,
            victim_pauses + credit_victim_waits,
            r.lossless_drops.len(),
            format!("{finished}/{}", r.flows.len()),
            fmt_opt(p50),
            fmt_opt(p99)
        );
        json_rows.push(json!({
            dimension: row.label,
            "shared_pool_bytes_per_switch": row.shared_pool_bytes,
            "headroom_reserved_bytes_per_switch": row.headroom_reserved_bytes,
            "queue_pauses": queue_pauses,
            "port_pauses": port_pauses,
            "queue_paused_ms": queue_paused_ms,
            "port_paused_ms": port_paused_ms,
            "credit_blocked_ms": credit_blocked_ms,
            "credit_updates": credit_updates,
            "pause_episodes": pause_episodes,
            "victim_pauses": victim_pauses,
            "credit_waits": credit_waits,
            "credit_victim_waits": credit_victim_waits,
            "lossless_drops": r.lossless_drops.len(),
            "drops": r.drops,
            "headroom_utilisation_p99_percent_max": r
                .switches
                .iter()
                .map(|s| s.headroom_utilisation_percent[1])
                .max(),
            "headroom_utilisation_max_percent": r
                .switches
                .iter()
                .map(|s| s.headroom_utilisation_percent[2])
                .max(),
            "headroom_idle_fraction_mean": r.switches.iter().map(|s| s.headroom_idle_fraction).sum::<f64>()
                / r.switches.len().max(1) as f64,
            "flows": r.flows.len(),
            "flows_finished": finished,
            "delivered_jain": delivered_jain(r),
            "slowdown_p50": p50,
            "slowdown_p99": p99,
            "mean_fct_ns": mean,
            "mean_fct_norm": mean_norm,
            "by_workload": groups,
            "marking": {
                "detector": marking.detector,
                "departures": marking.departures,
                "ce_marked": marking.ce_marked,
                "ue_marked": marking.ue_marked,
                "undetermined_queues": undetermined,
            },
        }));
        marks_lines.push(format!(
            "  {:<w$} {}",
            row.label.to_uppercase(),
            output::marking_line(&marking)
        ));
    }
    let what = if by_kind { "workload kind" } else { "workload" };
    if groups_names.len() > 1 {
        let _ = writeln!(table, "\nslowdown, median / 99th percentile, by {what}:");
        for row in &rows {
            let mut line = format!("{:<w$}", row.label.to_uppercase());
            for (gi, g) in groups_names.iter().enumerate() {
                let (g50, g99) = slowdowns(&row.results, in_group(gi));
                let _ = write!(line, "  {g}: {} / {}", fmt_opt(g50), fmt_opt(g99));
            }
            let _ = writeln!(table, "{line}");
        }
    }
    let _ = writeln!(
        table,
        "\nmean FCT, us (normalised to {}), of all flows and by {what}:",
        base_label.to_uppercase()
    );
    for row in &rows {
        let r = &row.results;
        let mut line = format!("{:<w$}", row.label.to_uppercase());
        let mut cell = |name: &str, mean: Option<f64>, base: Option<f64>| {
            let norm = ratio(mean, base).map_or("-".to_string(), |v| format!("{v:.3}"));
            let us = mean.map_or("-".to_string(), |v| format!("{:.1}", v / 1e3));
            let _ = write!(line, "  {name}: {us} ({norm})");
        };
        cell("all", mean_fct_ns(r, |_| true), base_means[0]);
        if groups_names.len() > 1 {
            for (gi, g) in groups_names.iter().enumerate() {
                cell(g, mean_fct_ns(r, in_group(gi)), base_means[gi + 1]);
            }
        }
        let _ = writeln!(table, "{line}");
    }
    let _ = writeln!(table, "\nmarks at switch egress queues:");
    for line in &marks_lines {
        let _ = writeln!(table, "{line}");
    }
    if by == Dimension::Arbitration {
        let _ = writeln!(
            table,
            "\nthroughput fairness (Jain's index of delivered bytes):"
        );
        for row in &rows {
            let jain = delivered_jain(&row.results).map_or("-".to_string(), |j| format!("{j:.3}"));
            let _ = writeln!(table, "{:<w$} {jain:>9}", row.label.to_uppercase());
        }
    }
    let _ = writeln!(table, "\n{}\n{COMPARE_LEGEND}", by.legend());
    std::fs::write(out.join("compare.csv"), csv)
        .into_diagnostic()
        .wrap_err("writing compare.csv")?;
    written.push(out.join("compare.csv"));
    let doc = json!({"scenario": s.name, "runs": json_rows});
    let text = serde_json::to_string_pretty(&doc).into_diagnostic()?;
    std::fs::write(out.join("compare.json"), text + "\n")
        .into_diagnostic()
        .wrap_err("writing compare.json")?;
    written.push(out.join("compare.json"));
    if !a.no_plots {
        let runs: Vec<(String, &RunResults)> = rows
            .iter()
            .map(|r| (r.label.to_uppercase(), &r.results))
            .collect();
        written.extend(crate::plots::write_compare_plots(&out, &runs).map_err(|e| miette!("{e}"))?);
    }
    crate::outdir::record(&out, &written)?;
    if !a.quiet {
        out!("{table}");
        outln!("outputs in {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
