//! Sweep files: a base scenario and a grid of overrides, expanded to one scenario per point.
//!
//! A point is one value of every axis (an axis sets one key, or several keys together) and
//! one seed; points are numbered in the order of the grid, the first axis varying slowest
//! and the seed fastest. The format is in `docs/sweep.md`.
//!
//! Invariants: [`Sweep::expand`] either returns every point with a scenario text that the
//! scenario parser accepted, or an error that names the sweep file's field (with its line)
//! or the point and the scenario field at fault; no point is run before every point is
//! known to be valid.
//!
//! Reading and checking the file is in the child module `read`; this one holds what a sweep
//! is and how it expands into points.

use crate::run::scenario_report;
use headroom_sim::scenario::{self, Override, OverrideError};
use miette::{miette, LabeledSpan, NamedSource, Report, Result};
use rayon::prelude::*;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml_edit::Value;

mod read;

pub use read::load;

/// Most points a sweep may have (each is a scenario file and a directory of outputs).
pub const MAX_POINTS: usize = 100_000;

/// Summary values every sweep's table has, as paths into `summary.json`.
pub const DEFAULT_METRICS: [&str; 8] = [
    "fct.overall.mean_fct_ns",
    "fct.overall.slowdown_p50",
    "fct.overall.slowdown_p99",
    "flows.unfinished",
    "pfc.pause_frames",
    "drops.lossless",
    "throughput.delivered_gbps",
    "run.stop_reason",
];

/// A parsed sweep file.
#[derive(Debug)]
pub struct Sweep {
    /// The sweep file.
    pub file: PathBuf,
    /// Its text (for errors found when expanding).
    text: String,
    /// Name of the sweep (`name`, or the file's stem).
    pub name: String,
    /// The base scenario (absolute path).
    pub scenario: PathBuf,
    /// The axes, in grid order.
    pub axes: Vec<Axis>,
    /// Seeds each point runs with (`seeds`); empty: the scenario's own.
    pub seeds: Vec<u64>,
    /// Values of `summary.json` in the results table, by path: the defaults, then `metrics`.
    pub metrics: Vec<String>,
    /// Normalisation: each metric divided by the one of the point with this axis at this
    /// value (the other axes and the seed equal).
    pub baseline: Option<Baseline>,
    /// Plots of the results (`[[plot]]`); empty: the default plots.
    pub plots: Vec<PlotSpec>,
    /// Resources and options of the Slurm job array (`[slurm]`).
    pub slurm: SlurmSpec,
}

/// One axis: its steps, each setting some scenario keys.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Column name (`name`, or the first key).
    pub name: String,
    /// The steps, in order.
    pub steps: Vec<AxisStep>,
    /// Where the axis is in the sweep file (for errors).
    span: Option<Range<usize>>,
}

/// One step of an axis.
#[derive(Debug, Clone)]
pub struct AxisStep {
    /// How the step is shown in tables and plots (`labels`/`label`, or its values joined
    /// by `/`).
    pub label: String,
    /// The scenario keys it sets, with their values.
    pub sets: Vec<(String, Value)>,
}

impl Axis {
    /// Whether some step of the axis sets `key`.
    fn sets_key(&self, key: &str) -> bool {
        self.steps
            .iter()
            .any(|s| s.sets.iter().any(|(k, _)| k == key))
    }

    /// Whether every step's label is a number (such an axis can be a plot's x).
    pub fn is_numeric(&self) -> bool {
        self.steps
            .iter()
            .all(|s| s.label.parse::<f64>().is_ok_and(f64::is_finite))
    }
}

/// Normalisation of the results against one value of an axis.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The axis's name.
    pub axis: String,
    /// The axis value (as shown in the table) the others are divided by.
    pub value: String,
}

/// One plot: a metric against a numeric axis, one line per combination of `series` axes.
#[derive(Debug, Clone)]
pub struct PlotSpec {
    /// The x axis (an axis name).
    pub x: String,
    /// The y value (a metric, or `metric/baseline` with a baseline).
    pub y: String,
    /// Axes whose values make the lines; the remaining ones (and seeds) are averaged.
    pub series: Vec<String>,
}

/// `[slurm]`: resources per task and options of `sbatch`.
#[derive(Debug, Clone, Default)]
pub struct SlurmSpec {
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time` (Slurm's format, e.g. `"01:00:00"`).
    pub time: Option<String>,
    /// `--mem` (Slurm's format, e.g. `"4G"`).
    pub mem: Option<String>,
    /// `--cpus-per-task` (default 1: each point runs on one thread).
    pub cpus_per_task: u32,
    /// `--account`.
    pub account: Option<String>,
    /// Tasks of the array running at once (`%N` of `--array`), if limited.
    pub max_running: Option<u32>,
    /// Further `#SBATCH` options, verbatim (`"--qos=short"`).
    pub options: Vec<String>,
    /// The headroom binary the tasks run (default: this one; it must be on a file system
    /// the compute nodes share).
    pub headroom: Option<PathBuf>,
}

/// One point of the sweep.
#[derive(Debug, Clone)]
pub struct Point {
    /// Position in the grid (0-based).
    pub index: usize,
    /// The value of each axis, as shown in tables, in axis order.
    pub labels: Vec<String>,
    /// The seed, when the sweep sets seeds.
    pub seed: Option<u64>,
    /// The point's scenario, ready to be written anywhere.
    pub scenario: String,
}

/// The sweep file's text, for errors pointing into it.
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    /// An error at `span` of the sweep file.
    fn err(&self, span: Option<Range<usize>>, label: &str, reason: impl Into<String>) -> Report {
        let reason = format!("{}: {}", self.path.display(), reason.into());
        match span {
            Some(s) => miette!(
                labels = vec![LabeledSpan::at(s.start..s.end.max(s.start + 1), label)],
                "{reason}"
            )
            .with_source_code(NamedSource::new(
                self.path.display().to_string(),
                self.text.to_string(),
            )),
            None => miette!("{reason}"),
        }
    }
}

/// How a value is shown in tables, labels and directory listings: strings bare, anything
/// else as TOML writes it.
pub fn label(v: &Value) -> String {
    match v {
        Value::String(s) => s.value().clone(),
        other => other.clone().decorated("", "").to_string(),
    }
}

impl Sweep {
    /// Digits of a point's id (at least 4).
    pub fn id_width(&self) -> usize {
        self.point_count()
            .saturating_sub(1)
            .to_string()
            .len()
            .max(4)
    }

    /// Points in the grid.
    pub fn point_count(&self) -> usize {
        self.axes.iter().map(|a| a.steps.len()).product::<usize>() * self.seeds.len().max(1)
    }

    /// Column names of the axes (and `seed` when the sweep sets seeds).
    pub fn axis_columns(&self) -> Vec<String> {
        let mut cols: Vec<String> = self.axes.iter().map(|a| a.name.clone()).collect();
        if !self.seeds.is_empty() {
            cols.push("seed".into());
        }
        cols
    }

    /// Every point with its scenario: the base with the point's values, its seed and the
    /// name `<sweep>-<id>`.
    pub fn expand(&self) -> Result<Vec<Point>> {
        let base =
            headroom_sim::input::read_text(&self.scenario, headroom_sim::input::MAX_TEXT_BYTES)
                .map_err(|e| miette!("{}: cannot read: {e}", self.scenario.display()))?;
        let width = self.id_width();
        // Checking a point parses its scenario (and generates its flows): the points are
        // checked in parallel, and the first error in point order is reported.
        let checked: Vec<Result<Point>> = self
            .grid()
            .into_par_iter()
            .map(|(index, steps, seed)| {
                let mut overrides = Vec::new();
                let mut labels = Vec::with_capacity(steps.len());
                for (axis, &i) in self.axes.iter().zip(&steps) {
                    let step = &axis.steps[i];
                    labels.push(step.label.clone());
                    for (key, value) in &step.sets {
                        overrides.push(Override {
                            key: key.clone(),
                            value: value.clone(),
                        });
                    }
                }
                if let Some(s) = seed {
                    overrides.push(Override {
                        key: "seed".into(),
                        value: Value::from(i64::try_from(s).unwrap_or(i64::MAX)),
                    });
                }
                overrides.push(Override {
                    key: "name".into(),
                    value: Value::from(format!("{}-{index:0width$}", self.name)),
                });
                let scenario = scenario::with_overrides(&base, &self.scenario, &overrides)
                    .map_err(|e| self.point_error(e, index, &labels, seed))?;
                Ok(Point {
                    index,
                    labels,
                    seed,
                    scenario,
                })
            })
            .collect();
        checked.into_iter().collect()
    }

    /// Every point's index, step of each axis and seed, in grid order (the last axis and
    /// the seed move fastest).
    fn grid(&self) -> Vec<(usize, Vec<usize>, Option<u64>)> {
        let seeds: Vec<Option<u64>> = if self.seeds.is_empty() {
            vec![None]
        } else {
            self.seeds.iter().copied().map(Some).collect()
        };
        let mut grid = Vec::with_capacity(self.point_count());
        let mut steps = vec![0usize; self.axes.len()];
        loop {
            for seed in &seeds {
                grid.push((grid.len(), steps.clone(), *seed));
            }
            let mut a = self.axes.len();
            loop {
                if a == 0 {
                    return grid;
                }
                a -= 1;
                steps[a] += 1;
                if steps[a] < self.axes[a].steps.len() {
                    break;
                }
                steps[a] = 0;
            }
        }
    }

    /// The error of point `index`: at the axis in the sweep file for a bad key, the
    /// scenario's own error (with the point named) for a bad value.
    fn point_error(
        &self,
        e: OverrideError,
        index: usize,
        labels: &[String],
        seed: Option<u64>,
    ) -> Report {
        let width = self.id_width();
        let mut parts: Vec<String> = self
            .axes
            .iter()
            .zip(labels)
            .map(|(a, l)| format!("{} = {l}", a.name))
            .collect();
        if let Some(s) = seed {
            parts.push(format!("seed = {s}"));
        }
        let what = format!("sweep point {index:0width$} ({})", parts.join(", "));
        match e {
            OverrideError::Path { key, reason } => {
                let src = Source {
                    path: &self.file,
                    text: &self.text,
                };
                let span = self
                    .axes
                    .iter()
                    .find(|a| a.sets_key(&key))
                    .and_then(|a| a.span.clone());
                src.err(span, &key, format!("{what}: key {key}: {reason}"))
            }
            OverrideError::Scenario(e) => scenario_report(*e).wrap_err(what),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example sweep; `read`'s tests use it too.
    pub(super) fn example() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sweep/incast-fan-in.toml")
    }

    #[test]
    fn the_example_expands_to_its_grid() {
        let sweep = load(&example()).expect("the example parses");
        assert_eq!(sweep.axis_columns(), ["scheme", "senders", "seed"]);
        let points = sweep.expand().expect("expands");
        assert_eq!(points.len(), 16);
        assert_eq!(points[5].labels, ["sih", "8"]);
        assert_eq!(points[5].seed, Some(2));
        assert!(points[5].scenario.contains("sender_count = 8"));
        assert!(points[5].scenario.contains("name = \"incast-fan-in-0005\""));
    }

    #[test]
    fn the_dsh_paper_sweep_has_its_grid() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dsh/paper-fig14-sweep.toml");
        let sweep = load(&path).expect("parses");
        assert_eq!(sweep.point_count(), 48);
        assert_eq!(sweep.axis_columns(), ["cc", "load", "scheme"]);
        let grid = sweep.grid();
        let labels: Vec<&str> = (0..3)
            .map(|a| sweep.axes[a].steps[grid[30].1[a]].label.as_str())
            .collect();
        assert_eq!(labels, ["powertcp", "0.3", "sih"]);
        assert!(sweep.axes[1].is_numeric() && !sweep.axes[2].is_numeric());
        let shp = &sweep.axes[2].steps[1].sets;
        assert_eq!(shp[1].0, "switch.shp.over_subscribe_ratio");
    }

    #[test]
    fn the_congestion_impact_sweep_adds_a_congestor_to_the_victim() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/flow-channels/congestion-impact-sweep.toml");
        let sweep = load(&path).expect("parses");
        assert_eq!(sweep.axis_columns(), ["topology", "fabric", "congestor"]);
        assert_eq!(sweep.point_count(), 24);
        assert!(sweep.axes[2].steps[0].sets.is_empty());
        let points = sweep.expand().expect("every point parses");
        // Point 5: dragonfly, credit, incast; point 6 has the fan-ins.
        assert_eq!(points[5].labels, ["dragonfly", "credit", "incast"]);
        let s = headroom_sim::scenario::parse(&points[5].scenario, &path).expect("parses");
        assert_eq!(s.workloads.kinds, ["ring", "ring", "incast"]);
        let s = headroom_sim::scenario::parse(&points[6].scenario, &path).expect("parses");
        assert_eq!(s.workloads.kinds, ["ring", "ring", "incast-poisson"]);
        let s = headroom_sim::scenario::parse(&points[4].scenario, &path).expect("parses");
        assert_eq!(s.workloads.kinds, ["ring", "ring"]);
    }
}
