//! `headroom run`: simulate one scenario and write its outputs.

use clap::Args;
use headroom_mech::units::{parse_time, Time};
use headroom_sim::config::SimConfig;
use headroom_sim::net::parallel::Partitioned;
use headroom_sim::output::{self, WriteOptions};
use headroom_sim::results::StopReason;
use headroom_sim::workload::WorkloadGroups;
use headroom_sim::{hpcc_config, ns3_rdma_config, scenario};
use indicatif::{ProgressBar, ProgressStyle};
use miette::{miette, IntoDiagnostic, NamedSource, Result, SourceSpan};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `headroom run`.
#[derive(Args, Debug)]
#[command(
    after_help = "Outputs (in --out): flows.csv, summary.json, pfc.csv (unless [output] pfc_log = false), \
queues.csv/buffer.csv/rates.csv (when [output] sample_interval is set), fct.txt/pfc.txt (with --compat hpcc), \
fct_ns3rdma.txt (with --ns3-rdma-config), and plots \
(fct_slowdown_cdf, buffer_occupancy, pfc_timeline) as PNG and SVG. Files an earlier run \
wrote in the same directory are removed first. Every file and column: docs/outputs.md; \
every scenario key: docs/scenario.md.\n\nExit codes: 0 success, 2 invalid input, \
3 a lossless drop with --fail-on-lossless-drop, 4 a deadlock (a cycle of paused or credit-starved \
queues, or of frames waiting for each other's flow channels; summary.json names it)."
)]
pub struct RunArgs {
    /// Scenario file (TOML). See examples/ for annotated scenarios.
    #[arg(
        required_unless_present_any = ["hpcc_config", "ns3_rdma_config"],
        conflicts_with_all = ["hpcc_config", "ns3_rdma_config"]
    )]
    scenario: Option<PathBuf>,
    /// Run an ns-3 HPCC simulator config file (mix/config.txt format) instead of a scenario.
    #[arg(long, value_name = "PATH", conflicts_with = "ns3_rdma_config")]
    hpcc_config: Option<PathBuf>,
    /// Run a config file of the DCQCN ns-3 simulator (bobzhuyb/ns3-rdma) or of the TCD
    /// authors' fork (Yi-ran/DCQCN-TCD) instead of a scenario; its FCT file is written
    /// where FCT_OUTPUT_FILE says.
    #[arg(long, value_name = "PATH")]
    ns3_rdma_config: Option<PathBuf>,
    /// Output directory (default: out/<scenario name>).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the stop time, e.g. `10ms`.
    #[arg(long, value_parser = positive_time)]
    stop_time: Option<Time>,
    /// Sample queues, buffers, rates and marks every this long (e.g. `10us`); overrides
    /// `[output] sample_interval`, and works with --hpcc-config too.
    #[arg(long, value_name = "TIME", value_parser = positive_time)]
    sample_interval: Option<Time>,
    /// Stop as deadlocked when a cycle of switch egress queues has been paused this long
    /// (e.g. `5ms`), or `off`; overrides the scenario (default 1ms).
    #[arg(long, value_name = "TIME|off", value_parser = detection_time)]
    deadlock_detection: Option<Detection>,
    /// Also write outputs in another simulator's formats (`hpcc`: fct.txt and pfc.txt).
    #[arg(long, value_parser = ["hpcc"])]
    compat: Option<String>,
    /// Stop at the first lossless drop and exit with code 3.
    #[arg(long)]
    fail_on_lossless_drop: bool,
    /// Do not draw plots.
    #[arg(long)]
    no_plots: bool,
    /// Record wall time and events/s in summary.json (makes it differ between runs).
    #[arg(long)]
    wall_time: bool,
    /// No progress bar and no summary table.
    #[arg(long, short)]
    quiet: bool,
    /// Run even when the sample interval would write more than 1 GiB of samples.
    #[arg(long)]
    force: bool,
    /// Threads to simulate on. The network is split into as many parts, advancing in
    /// windows of the shortest link delay between parts; the results are the same for any
    /// number (a run that fails on its first lossless drop uses one). Default: the run
    /// starts both on the machine's cores and on one thread, and keeps the faster after
    /// 40 ms of wall time.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

impl RunArgs {
    /// A sweep point's run: `scenario` into `out` on `threads` threads, quietly, without
    /// plots.
    pub(crate) fn sweep_point(scenario: PathBuf, out: PathBuf, threads: u16) -> Self {
        RunArgs {
            scenario: Some(scenario),
            hpcc_config: None,
            ns3_rdma_config: None,
            out: Some(out),
            seed: None,
            stop_time: None,
            sample_interval: None,
            deadlock_detection: None,
            compat: None,
            fail_on_lossless_drop: false,
            no_plots: true,
            wall_time: false,
            quiet: true,
            force: false,
            threads: Some(threads.max(1)),
        }
    }
}

/// Sampled output beyond which a run asks for `--force`.
const SAMPLE_LIMIT: u64 = 1 << 30;

/// Bytes a CSV row of a sample takes, about (time, node, port, queue, value).
const SAMPLE_ROW_BYTES: u64 = 40;

/// The most bytes the sampled CSVs (and their rows in memory) of `cfg` can take, if it
/// samples: every switch, every egress queue and every flow at every sample, until the
/// stop time or, without one, the last flow's start (the run goes on beyond it).
fn sample_bytes(cfg: &SimConfig) -> Option<u64> {
    let iv = cfg.record.sample_interval.filter(|iv| *iv > Time::ZERO)?;
    let horizon = cfg
        .stop_time
        .or_else(|| cfg.flows.iter().map(|f| f.start).max())?;
    let samples = horizon.as_ps() / iv.as_ps() + 1;
    let topo = &cfg.topology;
    let hosts = topo.hosts().len() as u64;
    let switch_ports = (topo.links.len() as u64 * 2).saturating_sub(hosts);
    let switches = topo.nodes.len() as u64 - hosts;
    let rows = switches + switch_ports * 8 + cfg.flows.len() as u64;
    Some(
        samples
            .saturating_mul(rows)
            .saturating_mul(SAMPLE_ROW_BYTES),
    )
}

/// A positive time (`0s` would stop a run before it starts).
fn positive_time(s: &str) -> std::result::Result<Time, String> {
    match parse_time(s).map_err(|e| e.to_string())? {
        Time::ZERO => Err("must be greater than zero".into()),
        t => Ok(t),
    }
}

/// `--deadlock-detection`: a detection time, or off.
#[derive(Clone, Copy, Debug)]
struct Detection(Option<Time>);

fn detection_time(s: &str) -> std::result::Result<Detection, String> {
    if s == "off" {
        return Ok(Detection(None));
    }
    positive_time(s).map(|t| Detection(Some(t)))
}

/// Turns a scenario error into a report pointing at the offending text.
pub(crate) fn scenario_report(e: scenario::ScenarioError) -> miette::Report {
    let reason = e.to_string();
    match (e.source_text(), e.span()) {
        (Some(text), Some(span)) => {
            let len = span.end.saturating_sub(span.start).max(1);
            miette::miette!(
                labels = vec![miette::LabeledSpan::at(
                    SourceSpan::from((span.start, len)),
                    e.field().unwrap_or("here").to_string()
                )],
                "{reason}"
            )
            .with_source_code(NamedSource::new(
                e.path().display().to_string(),
                text.to_string(),
            ))
        }
        _ => miette!("{reason}"),
    }
}

struct Prepared {
    name: String,
    config: SimConfig,
    plots: bool,
    compat_hpcc: bool,
    hpcc_files: Option<(Option<PathBuf>, Option<PathBuf>)>,
    /// With --ns3-rdma-config: where the simulator's FCT file goes.
    ns3_rdma_fct: Option<PathBuf>,
    /// The scenario's `[[workload]]` entry of each flow (none for the ns-3 configs).
    workloads: WorkloadGroups,
}

fn prepare(a: &RunArgs) -> Result<Prepared> {
    if let Some(path) = &a.hpcc_config {
        let run = hpcc_config::load(path).map_err(|e| miette!("{e}"))?;
        for n in &run.notes {
            errln!("note: {n}");
        }
        return Ok(Prepared {
            name: hpcc_run_name(path),
            config: run.config,
            plots: true,
            compat_hpcc: true,
            hpcc_files: Some((run.fct_output, run.pfc_output)),
            ns3_rdma_fct: None,
            workloads: WorkloadGroups::default(),
        });
    }
    if let Some(path) = &a.ns3_rdma_config {
        let run = ns3_rdma_config::load(path).map_err(|e| miette!("{e}"))?;
        for n in &run.notes {
            errln!("note: {n}");
        }
        return Ok(Prepared {
            name: hpcc_run_name(path),
            config: run.config,
            plots: true,
            compat_hpcc: false,
            hpcc_files: None,
            ns3_rdma_fct: run.fct_output,
            workloads: WorkloadGroups::default(),
        });
    }
    let path = a
        .scenario
        .as_ref()
        .ok_or_else(|| miette!("no scenario given"))?;
    let s = scenario::load(path).map_err(scenario_report)?;
    for w in &s.warnings {
        errln!("warning: {}: {w}", path.display());
    }
    Ok(Prepared {
        name: s.name,
        config: s.config,
        plots: s.output.plots,
        compat_hpcc: s.output.compat_hpcc,
        hpcc_files: None,
        ns3_rdma_fct: None,
        workloads: s.workloads,
    })
}

/// The name of an HPCC config's run: its file stem, or, for the generic `config.txt` that
/// every ns-3 HPCC experiment has, its directory's name (`examples/hpcc/config.txt` is
/// `hpcc`).
fn hpcc_run_name(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_string());
    let dir = std::path::absolute(path).ok().and_then(|p| {
        p.parent()?
            .file_name()
            .map(|d| d.to_string_lossy().to_string())
    });
    match (stem, dir) {
        (Some(stem), Some(dir)) if stem == "config" => dir,
        (Some(stem), _) => stem,
        (None, _) => "hpcc".into(),
    }
}

/// Writes the DCQCN/TCD simulator's FCT file as `fct_ns3rdma.txt` in `out` and copies it to
/// `dest` (relative to the working directory, directories created); returns the first.
fn write_ns3_rdma_fct(
    out: &Path,
    dest: &Path,
    results: &headroom_sim::results::RunResults,
    cfg: &SimConfig,
) -> Result<PathBuf> {
    let mine = out.join("fct_ns3rdma.txt");
    let mut text = Vec::new();
    ns3_rdma_config::write_fct(&mut text, results, cfg).into_diagnostic()?;
    std::fs::write(&mine, &text)
        .into_diagnostic()
        .map_err(|e| e.wrap_err(format!("writing {}", mine.display())))?;
    if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .into_diagnostic()
            .map_err(|e| e.wrap_err(format!("creating {}", parent.display())))?;
    }
    std::fs::write(dest, &text)
        .into_diagnostic()
        .map_err(|e| e.wrap_err(format!("writing {}", dest.display())))?;
    Ok(mine)
}

/// The machine's cores: the most threads a run uses unless told.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Builds the run `name` of `cfg` on `asked` threads, or, unless asked, on as many as the
/// machine has cores if that proves faster than one ([`Partitioned::auto`]), within the
/// memory available.
pub(crate) fn build(
    name: &str,
    cfg: SimConfig,
    asked: Option<u16>,
    quiet: bool,
) -> Result<Partitioned> {
    let cores = default_threads();
    let built = match asked.map(usize::from) {
        Some(n) => {
            if n > cores && !quiet {
                errln!(
                    "warning: --threads {n} is more than the machine's {cores} cores: the \
                     threads will take turns, which is slower than {cores}"
                );
            }
            let n = crate::memory::threads_that_fit(name, &cfg, n, quiet)?;
            Partitioned::new(cfg, n)
        }
        // The probe holds a one-part twin beside the parts.
        None if cores > 1
            && crate::memory::threads_that_fit(name, &cfg, cores + 1, true)? > cores =>
        {
            Partitioned::auto(cfg, cores)
        }
        None => {
            let n = crate::memory::threads_that_fit(name, &cfg, cores, quiet)?;
            Partitioned::new(cfg, n)
        }
    };
    built.map_err(|e| miette!("{name}: {e}"))
}

/// Runs `headroom run`.
/// Prints the max(T_on) values the paper's TCD detector uses, with how many queues use each.
pub(crate) fn print_max_t_on(values: &[(Time, usize)]) {
    if values.is_empty() {
        return;
    }
    let list: Vec<String> = values
        .iter()
        .map(|(t, n)| format!("{t} on {n} queue{}", if *n == 1 { "" } else { "s" }))
        .collect();
    errln!("note: TCD max(T_on): {}", list.join(", "));
}

pub fn run(a: RunArgs) -> Result<ExitCode> {
    let mut p = prepare(&a)?;
    if let Some(seed) = a.seed {
        p.config.seed = seed;
    }
    if let Some(t) = a.stop_time {
        p.config.stop_time = Some(t);
    }
    if let Some(t) = a.sample_interval {
        p.config.record.sample_interval = Some(t);
    }
    if a.fail_on_lossless_drop {
        p.config.record.fail_on_lossless_drop = true;
    }
    if let Some(Detection(d)) = a.deadlock_detection {
        p.config.deadlock_detection = d;
    }
    let compat_hpcc = p.compat_hpcc || a.compat.as_deref() == Some("hpcc");
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(&p.name));
    let cfg = p.config.clone();
    if let Some(bytes) = sample_bytes(&p.config).filter(|&b| b > SAMPLE_LIMIT && !a.force) {
        return Err(miette!(
            "{}: [output] sample_interval {} would record up to {} of samples (every \
             queue and flow at every sample); use a longer interval, or --force to run anyway",
            p.name,
            p.config.record.sample_interval.unwrap_or(Time::ZERO),
            headroom_mech::units::human_bytes(bytes)
        ));
    }
    let mut sim = build(&p.name, p.config, a.threads, a.quiet)?;
    crate::outdir::prepare(&out)?;
    if !a.quiet {
        print_max_t_on(&sim.max_t_on());
    }
    if a.threads.is_some_and(|t| t > 1) && sim.parts() == 1 && !a.quiet {
        errln!(
            "note: runs on one thread (a run that fails on its first lossless drop, a network \
             with one host, or parts that a zero-delay link would join cannot be split)"
        );
    }

    let started = Instant::now();
    let horizon = cfg
        .stop_time
        .or_else(|| {
            cfg.flows
                .iter()
                .map(|f| f.start)
                .max()
                .map(|t| t + Time::from_ms(1))
        })
        .unwrap_or(Time::from_ms(1));
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(1000)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let step = Time((horizon.as_ps() / 200).max(1_000_000));
    let mut limit = step;
    while !sim.run_until(limit) {
        limit += step;
        let now = sim.now();
        let (done, total) = sim.flow_progress();
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        bar.set_position((now.as_ps() as f64 / horizon.as_ps() as f64 * 1000.0).min(1000.0) as u64);
        bar.set_message(format!(
            "t={:.3}ms flows {done}/{total} {:.2}M events/s",
            now.as_secs_f64() * 1e3,
            sim.events() as f64 / secs / 1e6
        ));
    }
    bar.finish_and_clear();
    sim.check_invariants()
        .map_err(|e| miette!("internal invariant violated: {e}"))?;
    let threads = match (sim.parts(), sim.probe()) {
        (1, Some(p)) if p.crowded => match p.start_load {
            Some(l) => format!(
                "one thread (other programs wanted {} of the {} cores)",
                l.others, l.cores
            ),
            None => "one thread".to_string(),
        },
        (1, Some(p)) => format!(
            "one thread (faster than threads: {:.2} ms vs {:.2} ms over the first {:.3} ms)",
            p.single.as_secs_f64() * 1e3,
            p.partitioned.as_secs_f64() * 1e3,
            p.covered.as_secs_f64() * 1e3
        ),
        (1, None) => "one thread".to_string(),
        (n, _) => format!("{n} threads"),
    };
    let results = sim.finish();
    let wall = started.elapsed();

    let summary = output::summarize(&results, &cfg, a.wall_time.then_some(wall))
        .with_workloads(&results, &p.workloads);
    let opts = WriteOptions {
        compat_hpcc,
        include_wall_time: a.wall_time,
    };
    let mut files =
        output::write_all(&out, &results, &cfg, &summary, &opts).map_err(|e| miette!("{e}"))?;
    if let Some((fct, pfc)) = &p.hpcc_files {
        for (wanted, name) in [(fct, "fct.txt"), (pfc, "pfc.txt")] {
            if let Some(dest) = wanted {
                if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent)
                        .into_diagnostic()
                        .map_err(|e| e.wrap_err(format!("creating {}", parent.display())))?;
                }
                std::fs::copy(out.join(name), dest)
                    .into_diagnostic()
                    .map_err(|e| e.wrap_err(format!("writing {}", dest.display())))?;
                files.push(dest.clone());
            }
        }
    }
    if let Some(dest) = &p.ns3_rdma_fct {
        files.push(write_ns3_rdma_fct(&out, dest, &results, &cfg)?);
        files.push(dest.clone());
    }
    if p.plots && !a.no_plots {
        files.extend(
            crate::plots::write_plots(&out, &results, &summary).map_err(|e| miette!("{e}"))?,
        );
    }
    crate::outdir::record(&out, &files)?;
    if !a.quiet {
        outln!("{}", output::summary_table(&summary));
        outln!(
            "{} events in {:.2} s wall ({:.2} M events/s) on {threads}, simulated {:.3} ms; \
             outputs in {}",
            results.events,
            wall.as_secs_f64(),
            results.events as f64 / wall.as_secs_f64().max(1e-9) / 1e6,
            results.end_time.as_secs_f64() * 1e3,
            out.display()
        );
    }
    if let Some(StopReason::LosslessDrop(d)) = &results.stop_reason {
        errln!(
            "error: lossless drop at {} on switch {} port {} priority {} ({})",
            d.time,
            d.node,
            d.port,
            d.prio,
            d.cause
        );
        return Ok(ExitCode::from(3));
    }
    if let Some(d) = &results.deadlock {
        errln!("error: {d}; outputs in {}", out.display());
        return Ok(ExitCode::from(4));
    }
    if !results.lossless_drops.is_empty() {
        errln!(
            "warning: {} lossless drops (first at {} on switch {} port {} priority {})",
            results.lossless_drops.len(),
            results.lossless_drops[0].time,
            results.lossless_drops[0].node,
            results.lossless_drops[0].port,
            results.lossless_drops[0].prio
        );
    }
    Ok(ExitCode::SUCCESS)
}
