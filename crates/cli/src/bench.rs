//! `headroom bench`: the reference benchmark, or any scenario's.
//!
//! Runs an ns-3 HPCC simulator config (by default `examples/hpcc/config.txt`: the HPCC
//! paper's 320-host fat tree, web-search flows at 30 % load arriving over 5 ms, DCQCN with
//! the HPCC simulator's 100 Gb/s parameters), or a scenario file (`--scenario`), and
//! reports wall time, events/s, simulated time and peak resident memory. It writes no
//! output files. Nothing is asserted about speed here: the figures are for the README and
//! for comparing builds.

use clap::Args;
use headroom_mech::tcd::ReleasedConfig;
use headroom_sim::config::SimConfig;
use headroom_sim::config::{CreditGrant, DetectorConfig, FabricConfig};
use headroom_sim::{hpcc_config, scenario};
use miette::{miette, Result};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// The congestion control of the benchmark: the example config of each mode.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum CcMode {
    /// `examples/hpcc/config.txt` (CC_MODE 1).
    Dcqcn,
    /// `examples/hpcc/config-hpcc.txt` (CC_MODE 3, INT on every data packet).
    Hpcc,
    /// `examples/hpcc/config-timely.txt` (CC_MODE 7).
    Timely,
    /// `examples/hpcc/config-dctcp.txt` (CC_MODE 8).
    Dctcp,
}

impl CcMode {
    fn config(self) -> &'static str {
        match self {
            CcMode::Dcqcn => "examples/hpcc/config.txt",
            CcMode::Hpcc => "examples/hpcc/config-hpcc.txt",
            CcMode::Timely => "examples/hpcc/config-timely.txt",
            CcMode::Dctcp => "examples/hpcc/config-dctcp.txt",
        }
    }
}

/// Arguments of `headroom bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// ns-3 HPCC config to run (paths inside it resolve from the working directory, then
    /// from the config's). Default: the example config of `--cc`.
    #[arg(long, conflicts_with = "cc")]
    hpcc_config: Option<PathBuf>,
    /// Benchmark a scenario file (TOML) instead: its network, traffic, seed and stop time
    /// (none of its outputs are written). `--detector` and `--flow-control` apply to it as
    /// to the HPCC config.
    #[arg(long, conflicts_with_all = ["hpcc_config", "cc"])]
    scenario: Option<PathBuf>,
    /// The same benchmark with another congestion control: the example config generated
    /// for that mode as the HPCC simulator's `run.py` writes it.
    #[arg(long, value_enum, default_value = "dcqcn")]
    cc: CcMode,
    /// The same benchmark with another congestion detector at the switches: red, tcd (the
    /// paper's state machine, max(T_on) derived per port) or tcd-released (the authors'
    /// rule, 40 us); senders hold on UE-only CNPs. Default: the config's (an HPCC config's
    /// is red).
    #[arg(long, value_parser = ["red", "tcd", "tcd-released"])]
    detector: Option<String>,
    /// The same benchmark on credit links (InfiniBand style, with the default
    /// `[fabric.credit]` for an HPCC config: 8 VLs, 128 KiB per ingress port and VL, granted
    /// as `--credit-grant` says), PFC on every link, or flow channels over the links
    /// (`flow-channels`: over PFC links unless the scenario's are credit; the scenario's
    /// `[fabric.flow_channels]`, or its defaults). Default: the config's (an HPCC config's
    /// is PFC).
    #[arg(long, value_parser = FabricConfig::KINDS)]
    flow_control: Option<String>,
    /// How credit switches size a VL's receive buffer: shared (the 128 KiB reserved plus
    /// what the dynamic threshold grants from the shared buffer, as the PFC run's switches
    /// share theirs) or static (the 128 KiB only: the egress queues then stay below the
    /// config's ECN thresholds, DCQCN gets no marks and the fabric backs up). Default:
    /// shared for an HPCC config, the scenario's own for a scenario. Only with
    /// `--flow-control credit`.
    #[arg(long, value_parser = ["shared", "static"])]
    credit_grant: Option<String>,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
    /// Threads to run the network's parts on (default: the machine's cores or one,
    /// whichever a probe finds faster). The results do not depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

/// The configuration to benchmark: `--scenario`'s, `--hpcc-config`'s, or the example
/// config of `--cc`.
fn load(a: &BenchArgs) -> Result<SimConfig> {
    if let Some(path) = &a.scenario {
        let s = scenario::load(path).map_err(crate::run::scenario_report)?;
        for w in &s.warnings {
            errln!("warning: {}: {w}", path.display());
        }
        return Ok(s.config);
    }
    let path = a
        .hpcc_config
        .clone()
        .unwrap_or_else(|| PathBuf::from(a.cc.config()));
    Ok(hpcc_config::load(&path).map_err(|e| miette!("{e}"))?.config)
}

/// Runs `headroom bench`.
pub fn run(a: BenchArgs) -> Result<ExitCode> {
    if a.flow_control.as_deref() != Some("credit") && a.credit_grant.is_some() {
        return Err(miette!(
            "--credit-grant: applies to credit links only; add --flow-control credit"
        ));
    }
    let load_start = Instant::now();
    let mut config = load(&a)?;
    if let Some(detector) = &a.detector {
        config.switch.ecn.detector = match detector.as_str() {
            "tcd" => DetectorConfig::Tcd {
                max_t_on: None,
                threshold: None,
            },
            "tcd-released" => DetectorConfig::TcdReleased(ReleasedConfig::default()),
            _ => DetectorConfig::Red,
        };
        config
            .switch
            .ecn
            .validate()
            .map_err(|reason| miette!("--detector {detector}: {reason}"))?;
    }
    if let Some(kind) = &a.flow_control {
        // One kind on every link: a link's own overrides go.
        config
            .fabric
            .set_kind(kind)
            .map_err(|e| miette!("--flow-control: {e}"))?;
        if kind == "credit" {
            match (a.credit_grant.as_deref(), &a.scenario) {
                (Some("static"), _) => config.fabric.credit.grant = CreditGrant::Static,
                (None, Some(_)) => {} // the scenario's own
                // An HPCC config's switches share their buffer: so do the credit ones.
                _ => config.fabric.credit.grant = CreditGrant::Shared,
            }
        }
        config
            .validate()
            .map_err(|e| miette!("--flow-control {kind}: {e}"))?;
    }
    // The benchmark writes no files: it keeps no PAUSE or credit-wait log either.
    config.record.omit_pfc_log = true;
    config.record.omit_credit_log = true;
    let flows = config.flows.len();
    let hosts = config.topology.hosts().len();
    let mut sim = crate::run::build("bench", config, a.threads, a.json)?;
    let setup = load_start.elapsed();
    let t0 = Instant::now();
    sim.run_until(headroom_mech::units::Time::MAX);
    let parts = sim.parts();
    let probe = sim.probe();
    let per_part = sim.part_events();
    let windows = sim.windows();
    let results = sim.finish();
    let wall = t0.elapsed().as_secs_f64();
    let finished = results.flows.iter().filter(|f| f.finish.is_some()).count();
    let rss = crate::memory::peak_rss();
    let eps = results.events as f64 / wall.max(1e-9);
    let marks: u64 = results.marking.iter().map(|m| m.totals.ce_marked).sum();
    let slowdowns: Vec<f64> = results.flows.iter().filter_map(|f| f.slowdown()).collect();
    let mean_slowdown = slowdowns.iter().sum::<f64>() / slowdowns.len().max(1) as f64;
    // Flow-channel runs: every switch's peak of channels in use, and the table memory then.
    let tables = headroom_sim::output::ChannelSummary::of(&results)
        .map(|c| (c.peak_channels, c.table_bytes_at_peak));
    if a.json {
        outln!(
            "{{\"hosts\":{hosts},\"flows\":{flows},\"finished\":{finished},\"events\":{},\"simulated_ms\":{:.3},\"setup_s\":{:.3},\"threads\":{parts},\"windows\":{},\"serial_windows\":{},\"probe\":{},\"wall_s\":{wall:.3},\"events_per_s\":{eps:.0},\"peak_rss_bytes\":{},\"peak_packets\":{},\"ce_marks\":{marks},\"mean_slowdown\":{mean_slowdown:.3},\"flow_table_peak_channels\":{},\"flow_table_bytes_at_peak\":{}}}",
            results.events,
            results.end_time.as_secs_f64() * 1e3,
            setup.as_secs_f64(),
            windows.all,
            windows.serial,
            probe.map_or_else(
                || "null".to_string(),
                |p| format!(
                    "{{\"partitioned_s\":{:.4},\"single_s\":{:.4},\"simulated_ms\":{:.4},\"kept_partitioned\":{},\"crowded\":{},\"other_runnable\":{}}}",
                    p.partitioned.as_secs_f64(),
                    p.single.as_secs_f64(),
                    p.covered.as_secs_f64() * 1e3,
                    p.kept_partitioned.unwrap_or(false),
                    p.crowded,
                    p.start_load
                        .map_or_else(|| "null".to_string(), |l| l.others.to_string())
                )
            ),
            rss.map(|r| r.to_string()).unwrap_or_else(|| "null".into()),
            results.arena_slots,
            tables.map_or_else(|| "null".to_string(), |t| t.0.to_string()),
            tables.map_or_else(|| "null".to_string(), |t| t.1.to_string()),
        );
    } else {
        outln!("hosts           {hosts}");
        outln!("flows           {flows} ({finished} finished)");
        outln!("events          {}", results.events);
        outln!("peak packets    {}", results.arena_slots);
        outln!("CE marks        {marks}");
        outln!("mean slowdown   {mean_slowdown:.2}");
        if let Some((peak, bytes)) = tables {
            outln!(
                "flow tables     {peak} channels at the busiest switch's peak, {:.1} KiB at \
                 every switch's peak",
                bytes as f64 / 1024.0
            );
        }
        outln!(
            "simulated       {:.3} ms",
            results.end_time.as_secs_f64() * 1e3
        );
        outln!("setup           {:.3} s", setup.as_secs_f64());
        outln!("threads         {parts}");
        if let Some(p) = probe {
            outln!(
                "probe           {:.2} ms with threads, {:.2} ms with one, over {:.3} ms simulated{}",
                p.partitioned.as_secs_f64() * 1e3,
                p.single.as_secs_f64() * 1e3,
                p.covered.as_secs_f64() * 1e3,
                match (p.crowded, p.start_load) {
                    (true, Some(l)) => format!(
                        " (none: other programs wanted {} of the {} cores)",
                        l.others, l.cores
                    ),
                    _ => String::new(),
                }
            );
        }
        if parts > 1 {
            let shares: Vec<String> = per_part
                .iter()
                .map(|&e| format!("{:.1} %", e as f64 * 100.0 / results.events.max(1) as f64))
                .collect();
            outln!("events per part {}", shares.join(", "));
            // A busy machine's cores make the run handle windows on one thread (`Pace`).
            outln!(
                "windows         {} ({} on one thread)",
                windows.all,
                windows.serial
            );
        }
        outln!("wall            {wall:.3} s");
        outln!("events/s        {:.2} M", eps / 1e6);
        match rss {
            Some(r) => outln!("peak RSS        {:.1} MB", r as f64 / 1e6),
            None => outln!("peak RSS        unknown (no /proc/self/status)"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
