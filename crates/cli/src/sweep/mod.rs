//! `headroom sweep`: a base scenario and a grid of overrides, one run per point, locally in
//! parallel or as a Slurm job array, gathered into one table and plots.
//!
//! Layout of a sweep's output directory (`--out`, default `out/<sweep name>`):
//!
//! ```text
//! sweep.json            the expanded sweep: axes, metrics, plots, every point's id and values
//! scenarios/<id>.toml   each point's scenario (runs anywhere: file references are absolute)
//! runs/<id>/            each finished point's outputs, its scenario.toml and task.json
//! logs/<id>.log         what each point's run printed; logs/<id>.failed when it failed
//! slurm/sweep.sbatch    with --slurm: the job-array script; slurm/jobs.json the submissions
//! results.csv, results.json, plot-*.png/svg   the table and plots of the finished points
//! ```
//!
//! Invariants: a point is done exactly when `runs/<id>/summary.json` exists and
//! `runs/<id>/scenario.toml` is the point's current scenario (a task writes its outputs
//! into a hidden directory and renames it into place, so a killed task leaves no
//! half-written run); a sweep run again skips its done points and reruns any point whose
//! scenario changed.

mod local;
mod results;
mod slurm;
mod spec;
mod task;

use clap::{Args, Subcommand};
use miette::{miette, IntoDiagnostic, Result, WrapErr};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code of a sweep or a collection with points failed or not finished.
pub const INCOMPLETE: u8 = 5;

/// Arguments of `headroom sweep`.
#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Sweep file format and outputs: docs/sweep.md.\n\nExit codes: 0 every point \
finished (or, with --slurm, the job array was submitted), 2 invalid input, 5 points failed or \
are not finished (their logs are listed)."
)]
pub struct SweepArgs {
    #[command(subcommand)]
    command: Option<SweepCommand>,
    #[command(flatten)]
    run: RunSweepArgs,
}

/// `headroom sweep FILE`: expand and run (or submit) a sweep.
#[derive(Args, Debug)]
struct RunSweepArgs {
    /// Sweep file (TOML): a base scenario, [[axis]] grids, seeds, metrics, plots, [slurm].
    file: Option<PathBuf>,
    /// Output directory (default: out/<sweep name>).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Points run at once (each on one thread). Default: the machine's cores.
    #[arg(long, short, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Submit the unfinished points as a Slurm job array instead of running them here
    /// (`sbatch` must be on the PATH; collect the results with `headroom sweep collect`).
    #[arg(long)]
    slurm: bool,
    /// Expand and write the points' scenarios (and, with --slurm, the job script) only.
    #[arg(long)]
    dry_run: bool,
    /// Do not draw the sweep's plots.
    #[arg(long)]
    no_plots: bool,
    /// No progress bar and no table.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Subcommand, Debug)]
enum SweepCommand {
    /// Gather the finished points of a sweep into results.csv, results.json and plots, and
    /// list the failed ones with their logs.
    Collect(CollectArgs),
    /// Run one point of a sweep (what each local worker and each Slurm task runs).
    #[command(hide = true)]
    Task(task::TaskArgs),
}

/// Arguments of `headroom sweep collect`.
#[derive(Args, Debug)]
struct CollectArgs {
    /// The sweep's output directory.
    dir: PathBuf,
    /// Submit the failed points again as a Slurm job array (only those: points queued or
    /// running are left alone).
    #[arg(long)]
    resubmit: bool,
    /// Do not draw the sweep's plots.
    #[arg(long)]
    no_plots: bool,
}

/// `sweep.json`: what a sweep's tasks and its collection read.
#[derive(Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// Name of the sweep.
    pub name: String,
    /// The sweep file it was expanded from.
    pub sweep_file: PathBuf,
    /// The base scenario.
    pub scenario: PathBuf,
    /// Column names of the axes (and `seed`).
    pub axes: Vec<String>,
    /// Paths into `summary.json` that the table gives.
    pub metrics: Vec<String>,
    /// The axis and value the metrics are normalised to, if any.
    pub baseline: Option<(String, String)>,
    /// Plots: x axis, y column, series axes.
    pub plots: Vec<(String, String, Vec<String>)>,
    /// `[slurm] max_running`: the `%N` of every submission's `--array`.
    pub max_running: Option<u32>,
    /// Every point: its id and the value of each axis column.
    pub points: Vec<ManifestPoint>,
}

/// One point in `sweep.json`.
#[derive(Debug, Serialize, Deserialize)]
pub struct ManifestPoint {
    /// Id: the point's index, zero-padded.
    pub id: String,
    /// Value of each axis column, as shown.
    pub values: Vec<String>,
}

/// Largest `sweep.json` read (100,000 points of a few axes).
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// The directories and files of a sweep's output directory.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The output directory.
    pub dir: PathBuf,
}

impl Layout {
    fn manifest(&self) -> PathBuf {
        self.dir.join("sweep.json")
    }
    /// A point's scenario.
    pub fn scenario(&self, id: &str) -> PathBuf {
        self.dir.join("scenarios").join(format!("{id}.toml"))
    }
    /// A finished point's outputs.
    pub fn run(&self, id: &str) -> PathBuf {
        self.dir.join("runs").join(id)
    }
    /// Where a point's run writes before it is finished.
    pub fn run_tmp(&self, id: &str) -> PathBuf {
        self.dir.join("runs").join(format!(".{id}.tmp"))
    }
    /// What a point's run printed.
    pub fn log(&self, id: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{id}.log"))
    }
    /// Written when a point's run failed: why.
    pub fn failed(&self, id: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{id}.failed"))
    }
    /// The Slurm files.
    pub fn slurm_dir(&self) -> PathBuf {
        self.dir.join("slurm")
    }

    /// Reads `sweep.json`.
    pub fn read_manifest(&self) -> Result<Manifest> {
        let path = self.manifest();
        let text = headroom_sim::input::read_text(&path, MAX_MANIFEST_BYTES).map_err(|e| {
            miette!(
                "{}: cannot read ({e}); is {} a sweep's output directory?",
                path.display(),
                self.dir.display()
            )
        })?;
        serde_json::from_str(&text)
            .into_diagnostic()
            .wrap_err_with(|| format!("{}: not a sweep manifest", path.display()))
    }

    /// Whether point `id` is done (see the module's invariants).
    pub fn is_done(&self, id: &str) -> bool {
        let run = self.run(id);
        if !run.join("summary.json").is_file() {
            return false;
        }
        match (
            std::fs::read(run.join("scenario.toml")),
            std::fs::read(self.scenario(id)),
        ) {
            (Ok(ran), Ok(now)) => ran == now,
            _ => false,
        }
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename, so that a reader never
/// sees half of it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .into_diagnostic()
        .wrap_err_with(|| format!("writing {}", path.display()))
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .into_diagnostic()
        .wrap_err_with(|| format!("creating {}", dir.display()))
}

/// Expands the sweep file into `layout`: `sweep.json` and every point's scenario. A point
/// whose scenario changed loses its old outputs. Returns the manifest.
fn expand_into(sweep: &spec::Sweep, layout: &Layout) -> Result<Manifest> {
    let points = sweep.expand()?;
    for sub in ["scenarios", "runs", "logs"] {
        create_dir(&layout.dir.join(sub))?;
    }
    let width = sweep.id_width();
    let mut entries = Vec::with_capacity(points.len());
    for p in &points {
        let id = format!("{:0width$}", p.index);
        let path = layout.scenario(&id);
        let unchanged = std::fs::read(&path).is_ok_and(|old| old == p.scenario.as_bytes());
        if !unchanged {
            write_atomic(&path, p.scenario.as_bytes())?;
            // Outputs of an earlier version of this point are not this point's.
            for stale in [layout.failed(&id), layout.log(&id)] {
                let _ = std::fs::remove_file(stale);
            }
        }
        let mut values = p.labels.clone();
        if let Some(s) = p.seed {
            values.push(s.to_string());
        }
        entries.push(ManifestPoint { id, values });
    }
    let manifest = Manifest {
        name: sweep.name.clone(),
        sweep_file: std::path::absolute(&sweep.file).unwrap_or_else(|_| sweep.file.clone()),
        scenario: sweep.scenario.clone(),
        axes: sweep.axis_columns(),
        metrics: sweep.metrics.clone(),
        baseline: sweep
            .baseline
            .as_ref()
            .map(|b| (b.axis.clone(), b.value.clone())),
        plots: results::plot_specs(sweep),
        max_running: sweep.slurm.max_running,
        points: entries,
    };
    let json = serde_json::to_vec_pretty(&manifest).into_diagnostic()?;
    write_atomic(&layout.manifest(), &json)?;
    Ok(manifest)
}

/// Runs `headroom sweep`.
pub fn run(a: SweepArgs) -> Result<ExitCode> {
    match a.command {
        Some(SweepCommand::Collect(c)) => collect(c),
        Some(SweepCommand::Task(t)) => task::run(t),
        None => run_sweep(a.run),
    }
}

fn run_sweep(a: RunSweepArgs) -> Result<ExitCode> {
    let file = a
        .file
        .ok_or_else(|| miette!("give a sweep file (headroom sweep FILE), or `collect DIR`"))?;
    let sweep = spec::load(&file)?;
    let layout = Layout {
        dir: a.out.unwrap_or_else(|| Path::new("out").join(&sweep.name)),
    };
    let manifest = expand_into(&sweep, &layout)?;
    let todo: Vec<usize> = (0..manifest.points.len())
        .filter(|&i| !layout.is_done(&manifest.points[i].id))
        .collect();
    if !a.quiet {
        errln!(
            "{}: {} points ({} done before), scenarios in {}",
            sweep.name,
            manifest.points.len(),
            manifest.points.len() - todo.len(),
            layout.dir.join("scenarios").display()
        );
    }
    if a.slurm {
        let script = slurm::write_script(&sweep, &layout)?;
        if a.dry_run {
            outln!("job script: {}", script.display());
            return Ok(ExitCode::SUCCESS);
        }
        return slurm::submit_unfinished(&layout, &manifest, &todo, a.quiet);
    }
    if a.dry_run {
        return Ok(ExitCode::SUCCESS);
    }
    let jobs = a.jobs.map_or_else(crate::run::default_threads, usize::from);
    local::run_points(&layout, &manifest, &todo, jobs, a.quiet)?;
    finish(
        &layout,
        &manifest,
        a.no_plots,
        &slurm::Queue::default(),
        a.quiet,
    )
}

fn collect(a: CollectArgs) -> Result<ExitCode> {
    let layout = Layout { dir: a.dir };
    let manifest = layout.read_manifest()?;
    if a.resubmit {
        let queue = slurm::Queue::query(&layout)?;
        let failed: Vec<usize> = (0..manifest.points.len())
            .filter(|&i| {
                let id = &manifest.points[i].id;
                !layout.is_done(id) && !queue.holds(id)
            })
            .collect();
        if failed.is_empty() {
            outln!("nothing to resubmit: every point is finished, queued or running");
        } else {
            slurm::submit_unfinished(&layout, &manifest, &failed, false)?;
        }
    }
    let queue = slurm::Queue::query(&layout)?;
    finish(&layout, &manifest, a.no_plots, &queue, false)
}

/// Writes the table and plots of the finished points and reports the others.
fn finish(
    layout: &Layout,
    manifest: &Manifest,
    no_plots: bool,
    queue: &slurm::Queue,
    quiet: bool,
) -> Result<ExitCode> {
    // One look at which points are done, for the table and the counts alike: a task may
    // finish while this runs, and the table must hold every point counted done.
    let done: Vec<bool> = manifest
        .points
        .iter()
        .map(|p| layout.is_done(&p.id))
        .collect();
    let table = results::Table::gather(layout, manifest, &done)?;
    let mut files = table.write(layout)?;
    if !no_plots {
        files.extend(table.plot(layout, manifest)?);
    }
    let mut failed = Vec::new();
    let mut waiting = 0;
    for (p, &done) in manifest.points.iter().zip(&done) {
        if done {
            continue;
        }
        if queue.holds(&p.id) {
            waiting += 1;
        } else {
            failed.push(p);
        }
    }
    let done = manifest.points.len() - failed.len() - waiting;
    if !quiet {
        outln!("{}", table.text(manifest));
    }
    outln!(
        "points: {done} done, {} failed, {waiting} queued or running (of {}); results in {}",
        failed.len(),
        manifest.points.len(),
        files.first().map_or_else(
            || layout.dir.display().to_string(),
            |f| f.display().to_string()
        )
    );
    for p in &failed {
        let why = std::fs::read_to_string(layout.failed(&p.id))
            .ok()
            .and_then(|t| t.lines().find(|l| !l.trim().is_empty()).map(str::to_string))
            .unwrap_or_else(|| "no result (not run, or killed)".into());
        outln!(
            "  failed {} ({}): {why}; log {}",
            p.id,
            manifest
                .axes
                .iter()
                .zip(&p.values)
                .map(|(a, v)| format!("{a} = {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            layout.log(&p.id).display()
        );
    }
    Ok(if failed.is_empty() && waiting == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(INCOMPLETE)
    })
}
