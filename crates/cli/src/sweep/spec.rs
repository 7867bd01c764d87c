//! Sweep files: a base scenario and a grid of overrides, expanded to one scenario per point.
//!
//! A point is one value of every axis (an axis sets one key, or several keys together) and
//! one seed; points are numbered in the order of the grid, the first axis varying slowest
//! and the seed fastest. The format is in `docs/sweep.md`.
//!
//! Invariants: [`expand`] either returns every point with a scenario text that the
//! scenario parser accepted, or an error that names the sweep file's field (with its line)
//! or the point and the scenario field at fault; no point is run before every point is
//! known to be valid.

use crate::run::scenario_report;
use headroom_sim::scenario::{self, Override, OverrideError};
use miette::{miette, LabeledSpan, NamedSource, Report, Result};
use rayon::prelude::*;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml_edit::{ImDocument, Item, Value};

/// Most points a sweep may have (each is a scenario file and a directory of outputs).
pub const MAX_POINTS: usize = 100_000;

/// Largest sweep file read.
const MAX_SWEEP_BYTES: u64 = 1 << 20;

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

/// Reads and checks a sweep file.
pub fn load(path: &Path) -> Result<Sweep> {
    let text = headroom_sim::input::read_text(path, MAX_SWEEP_BYTES)
        .map_err(|e| miette!("{}: cannot read: {e}", path.display()))?;
    parse(&text, path)
}

fn item_span(item: &Item) -> Option<Range<usize>> {
    match item {
        Item::Value(v) => v.span(),
        Item::Table(t) => t.span(),
        Item::ArrayOfTables(a) => a.span(),
        Item::None => None,
    }
}

/// Parses sweep text read from `path` (relative references resolve against its directory).
pub fn parse(text: &str, path: &Path) -> Result<Sweep> {
    let src = Source { path, text };
    let doc = ImDocument::parse(text).map_err(|e| {
        src.err(
            e.span(),
            "here",
            format!("invalid TOML: {}", e.message().trim_end()),
        )
    })?;
    let top = doc.as_table();
    const TOP: [&str; 8] = [
        "scenario", "name", "seeds", "metrics", "axis", "baseline", "plot", "slurm",
    ];
    for (k, item) in top.iter() {
        if !TOP.contains(&k) {
            return Err(src.err(
                top.key(k)
                    .and_then(toml_edit::Key::span)
                    .or(item_span(item)),
                k,
                format!("unknown key `{k}` (expected one of {})", TOP.join(", ")),
            ));
        }
    }
    let str_of = |item: &Item, field: &str| -> Result<String> {
        item.as_str().map(str::to_string).ok_or_else(|| {
            src.err(
                item_span(item),
                field,
                format!("`{field}` must be a string"),
            )
        })
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let scenario_item = top
        .get("scenario")
        .ok_or_else(|| src.err(None, "", "`scenario` (the base scenario file) is required"))?;
    let scenario = dir.join(str_of(scenario_item, "scenario")?);
    let scenario = std::path::absolute(&scenario).unwrap_or(scenario);
    if !scenario.is_file() {
        return Err(src.err(
            item_span(scenario_item),
            "scenario",
            format!("scenario: {} is not a readable file", scenario.display()),
        ));
    }
    let name = match top.get("name") {
        Some(item) => {
            let n = str_of(item, "name")?;
            if n.is_empty() || n.contains(['/', '\\']) || n == "." || n == ".." {
                return Err(src.err(
                    item_span(item),
                    "name",
                    "name: must be a non-empty name without path separators",
                ));
            }
            n
        }
        None => path
            .file_stem()
            .map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned()),
    };

    let seeds = match top.get("seeds") {
        None => Vec::new(),
        Some(item) => {
            let bad = || {
                src.err(
                    item_span(item),
                    "seeds",
                    "seeds: must be a non-empty list of distinct non-negative integers",
                )
            };
            let arr = item.as_array().ok_or_else(bad)?;
            let mut seeds = Vec::new();
            for v in arr.iter() {
                let s = v
                    .as_integer()
                    .and_then(|i| u64::try_from(i).ok())
                    .ok_or_else(bad)?;
                if seeds.contains(&s) {
                    return Err(bad());
                }
                seeds.push(s);
            }
            if seeds.is_empty() {
                return Err(bad());
            }
            seeds
        }
    };

    let mut metrics: Vec<String> = DEFAULT_METRICS.iter().map(|m| m.to_string()).collect();
    if let Some(item) = top.get("metrics") {
        let bad = || {
            src.err(
                item_span(item),
                "metrics",
                "metrics: must be a list of summary.json paths (e.g. \
                 \"fct.by_workload[0].stats.mean_fct_ns\")",
            )
        };
        for v in item.as_array().ok_or_else(bad)?.iter() {
            let m = v.as_str().ok_or_else(bad)?;
            if super::results::metric_path(m).is_err() {
                return Err(bad());
            }
            if !metrics.iter().any(|x| x == m) {
                metrics.push(m.to_string());
            }
        }
    }

    let axes = parse_axes(&src, top)?;
    if axes.iter().any(|a| a.name == "seed") && !seeds.is_empty() {
        return Err(src.err(
            item_span(&top["seeds"]),
            "seeds",
            "seeds: an axis is named `seed` already; set seeds one way",
        ));
    }
    let axis_names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();

    let baseline = match top.get("baseline") {
        None => None,
        Some(item) => {
            let t = item
                .as_table_like()
                .ok_or_else(|| src.err(item_span(item), "baseline", "baseline: must be a table"))?;
            let axis = t.get("axis").and_then(Item::as_str).ok_or_else(|| {
                src.err(
                    item_span(item),
                    "baseline",
                    "baseline.axis: required, an axis name",
                )
            })?;
            let value = t.get("value").ok_or_else(|| {
                src.err(
                    item_span(item),
                    "baseline",
                    "baseline.value: required, a value of that axis",
                )
            })?;
            let value = value.as_value().map(label).ok_or_else(|| {
                src.err(
                    item_span(item),
                    "baseline",
                    "baseline.value: must be a value",
                )
            })?;
            for (k, _) in t.iter() {
                if k != "axis" && k != "value" {
                    return Err(src.err(
                        item_span(item),
                        "baseline",
                        format!("baseline: unknown key `{k}` (axis, value)"),
                    ));
                }
            }
            let found = axes.iter().find(|a| a.name == axis).ok_or_else(|| {
                src.err(
                    item_span(item),
                    "baseline",
                    format!(
                        "baseline.axis: no axis is named `{axis}` (axes: {})",
                        axis_names.join(", ")
                    ),
                )
            })?;
            if !found.steps.iter().any(|s| s.label == value) {
                return Err(src.err(
                    item_span(item),
                    "baseline",
                    format!("baseline.value: `{value}` is not a value of axis `{axis}`"),
                ));
            }
            Some(Baseline {
                axis: axis.to_string(),
                value,
            })
        }
    };

    let plots = parse_plots(&src, top, &axes, &metrics, baseline.as_ref())?;
    let slurm = parse_slurm(&src, top, &dir)?;
    let points: usize = axes.iter().map(|a| a.steps.len()).product::<usize>() * seeds.len().max(1);
    if points > MAX_POINTS {
        return Err(src.err(
            item_span(top.get("axis").unwrap_or(&Item::None)),
            "axis",
            format!("the grid has {points} points; at most {MAX_POINTS}"),
        ));
    }
    Ok(Sweep {
        file: path.to_path_buf(),
        text: text.to_string(),
        name,
        scenario,
        axes,
        seeds,
        metrics,
        baseline,
        plots,
        slurm,
    })
}

fn parse_axes(src: &Source, top: &toml_edit::Table) -> Result<Vec<Axis>> {
    let Some(item) = top.get("axis") else {
        return Err(src.err(None, "", "at least one [[axis]] is required"));
    };
    let arr = item
        .as_array_of_tables()
        .ok_or_else(|| src.err(item_span(item), "axis", "axis: must be [[axis]] tables"))?;
    let mut axes: Vec<Axis> = Vec::new();
    for (i, t) in arr.iter().enumerate() {
        let span = t.span();
        let field = format!("axis[{i}]");
        let err = |reason: String| src.err(span.clone(), &field, format!("{field}: {reason}"));
        for (k, _) in t.iter() {
            if !["key", "keys", "name", "values", "labels", "steps"].contains(&k) {
                return Err(err(format!(
                    "unknown key `{k}` (key or keys with values and labels, or steps; name)"
                )));
            }
        }
        let steps = match (t.get("key"), t.get("keys"), t.get("steps")) {
            (Some(_), None, None) | (None, Some(_), None) => key_steps(t, &err)?,
            (None, None, Some(list)) => {
                if t.contains_key("values") || t.contains_key("labels") {
                    return Err(err(
                        "with `steps`, each step has its own `set` and `label`".into()
                    ));
                }
                table_steps(list, &err)?
            }
            _ => {
                return Err(err(
                    "give `key` (one scenario key), `keys` (several set together) or `steps` \
                     (a table of keys per step)"
                        .into(),
                ))
            }
        };
        for step in &steps {
            for (k, _) in &step.sets {
                if k == "name" {
                    return Err(err("`name` is set per point by the sweep".into()));
                }
                if axes.iter().any(|a| a.sets_key(k)) {
                    return Err(err(format!("key `{k}` is set by another axis already")));
                }
            }
        }
        let name = match t.get("name") {
            Some(n) => n
                .as_str()
                .filter(|s| !s.is_empty())
                .ok_or_else(|| err("name must be a non-empty string".into()))?
                .to_string(),
            None => match (t.get("key"), t.get("keys")) {
                (Some(k), _) => k.as_str().unwrap_or_default().to_string(),
                (_, Some(ks)) => ks
                    .as_array()
                    .and_then(|a| a.get(0))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                _ => return Err(err("an axis of `steps` needs a `name`".into())),
            },
        };
        if axes.iter().any(|a| a.name == name)
            || ["point", "status", "wall_s", "max_rss_bytes", "seed"].contains(&name.as_str())
        {
            return Err(err(format!(
                "the name `{name}` is taken; give the axis another `name`"
            )));
        }
        for (j, s) in steps.iter().enumerate() {
            if steps[..j].iter().any(|o| o.label == s.label) {
                return Err(err(format!("the label `{}` appears twice", s.label)));
            }
        }
        axes.push(Axis { name, steps, span });
    }
    Ok(axes)
}

/// The steps of an axis written as `key` or `keys` with `values` (and `labels`).
fn key_steps(t: &toml_edit::Table, err: &dyn Fn(String) -> Report) -> Result<Vec<AxisStep>> {
    let keys: Vec<String> = match (t.get("key"), t.get("keys")) {
        (Some(k), _) => vec![k
            .as_str()
            .ok_or_else(|| err("key must be a string".into()))?
            .to_string()],
        (_, Some(ks)) => ks
            .as_array()
            .filter(|a| !a.is_empty())
            .and_then(|list| {
                list.iter()
                    .map(|k| k.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| err("keys must be a non-empty list of strings".into()))?,
        _ => unreachable!("the caller matched key or keys"),
    };
    let values = t
        .get("values")
        .and_then(Item::as_array)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| err("values must be a non-empty list".into()))?;
    let labels: Option<Vec<String>> = match t.get("labels") {
        None => None,
        Some(l) => Some(
            l.as_array()
                .filter(|a| a.len() == values.len())
                .map(|a| a.iter().map(label).collect())
                .ok_or_else(|| {
                    err(format!(
                        "labels must be a list of {} (one per value)",
                        values.len()
                    ))
                })?,
        ),
    };
    let mut steps = Vec::new();
    for (j, v) in values.iter().enumerate() {
        let row: Vec<Value> = if keys.len() == 1 {
            vec![v.clone()]
        } else {
            v.as_array()
                .filter(|a| a.len() == keys.len())
                .ok_or_else(|| {
                    err(format!(
                        "with {} keys, each value is a list of {} (one per key)",
                        keys.len(),
                        keys.len()
                    ))
                })?
                .iter()
                .cloned()
                .collect()
        };
        let label = match &labels {
            Some(l) => l[j].clone(),
            None => row.iter().map(label).collect::<Vec<_>>().join("/"),
        };
        steps.push(AxisStep {
            label,
            sets: keys.iter().cloned().zip(row).collect(),
        });
    }
    Ok(steps)
}

/// The steps of an axis written as `steps = [{ label = ..., set = { "key" = value, ... } }]`.
fn table_steps(list: &Item, err: &dyn Fn(String) -> Report) -> Result<Vec<AxisStep>> {
    let bad = || {
        err(
            "steps must be a non-empty list of { label = \"...\", set = { \"key\" = value, ... } }"
                .into(),
        )
    };
    let arr = list.as_array().filter(|a| !a.is_empty()).ok_or_else(bad)?;
    let mut steps = Vec::new();
    for v in arr.iter() {
        let step = v.as_inline_table().ok_or_else(bad)?;
        if step.iter().any(|(k, _)| k != "label" && k != "set") {
            return Err(bad());
        }
        let sets: Vec<(String, Value)> = step
            .get("set")
            .and_then(Value::as_inline_table)
            .ok_or_else(bad)?
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let label = match step.get("label") {
            Some(l) => label(l),
            // An empty set runs the base as it is (a congestor axis's "none").
            None if sets.is_empty() => {
                return Err(err(
                    "a step that sets nothing (the base scenario as it is) needs a `label`".into(),
                ))
            }
            None => sets
                .iter()
                .map(|(_, v)| label(v))
                .collect::<Vec<_>>()
                .join("/"),
        };
        steps.push(AxisStep { label, sets });
    }
    Ok(steps)
}

fn parse_plots(
    src: &Source,
    top: &toml_edit::Table,
    axes: &[Axis],
    metrics: &[String],
    baseline: Option<&Baseline>,
) -> Result<Vec<PlotSpec>> {
    let Some(item) = top.get("plot") else {
        return Ok(Vec::new());
    };
    let arr = item
        .as_array_of_tables()
        .ok_or_else(|| src.err(item_span(item), "plot", "plot: must be [[plot]] tables"))?;
    let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
    let mut plots = Vec::new();
    for (i, t) in arr.iter().enumerate() {
        let field = format!("plot[{i}]");
        let err = |reason: String| src.err(t.span(), &field, format!("{field}: {reason}"));
        for (k, _) in t.iter() {
            if !["x", "y", "series"].contains(&k) {
                return Err(err(format!("unknown key `{k}` (x, y, series)")));
            }
        }
        let x = t
            .get("x")
            .and_then(Item::as_str)
            .ok_or_else(|| err("x: required, an axis name".into()))?;
        let axis = axes.iter().find(|a| a.name == x).ok_or_else(|| {
            err(format!(
                "x: no axis is named `{x}` (axes: {})",
                names.join(", ")
            ))
        })?;
        if !axis.is_numeric() {
            return Err(err(format!(
                "x: axis `{x}` must have numeric values (or labels)"
            )));
        }
        let y = t
            .get("y")
            .and_then(Item::as_str)
            .ok_or_else(|| err("y: required, a metric".into()))?;
        let base_metric = match (y.rsplit_once('/'), baseline) {
            (Some((m, v)), Some(b)) if v == b.value => m,
            _ => y,
        };
        if !metrics.iter().any(|m| m == base_metric) {
            return Err(err(format!(
                "y: `{y}` is not a metric of the table (add it to `metrics`{})",
                if baseline.is_some() {
                    ", or append /<baseline value>"
                } else {
                    ""
                }
            )));
        }
        let series = match t.get("series") {
            None => names
                .iter()
                .filter(|n| **n != x)
                .map(|n| n.to_string())
                .collect(),
            Some(s) => {
                let list = s
                    .as_array()
                    .ok_or_else(|| err("series: must be a list of axis names".into()))?;
                let mut out = Vec::new();
                for v in list.iter() {
                    let n = v
                        .as_str()
                        .filter(|n| names.contains(n) && *n != x)
                        .ok_or_else(|| {
                            err(format!(
                                "series: each entry must be an axis other than x (axes: {})",
                                names.join(", ")
                            ))
                        })?;
                    out.push(n.to_string());
                }
                out
            }
        };
        plots.push(PlotSpec {
            x: x.to_string(),
            y: y.to_string(),
            series,
        });
    }
    Ok(plots)
}

fn parse_slurm(src: &Source, top: &toml_edit::Table, dir: &Path) -> Result<SlurmSpec> {
    let mut s = SlurmSpec {
        cpus_per_task: 1,
        ..SlurmSpec::default()
    };
    let Some(item) = top.get("slurm") else {
        return Ok(s);
    };
    let t = item
        .as_table_like()
        .ok_or_else(|| src.err(item_span(item), "slurm", "slurm: must be a table"))?;
    for (k, v) in t.iter() {
        let span = item_span(v);
        let field = format!("slurm.{k}");
        let text = || {
            v.as_str()
                .filter(|s| !s.is_empty() && !s.contains(['\n', '\r']))
                .map(str::to_string)
                .ok_or_else(|| {
                    src.err(
                        span.clone(),
                        &field,
                        format!("{field}: must be a one-line string"),
                    )
                })
        };
        let positive = || {
            v.as_integer()
                .and_then(|i| u32::try_from(i).ok())
                .filter(|i| *i >= 1)
                .ok_or_else(|| {
                    src.err(
                        span.clone(),
                        &field,
                        format!("{field}: must be a whole number of at least 1"),
                    )
                })
        };
        match k {
            "partition" => s.partition = Some(text()?),
            "time" => s.time = Some(text()?),
            "mem" => s.mem = Some(text()?),
            "account" => s.account = Some(text()?),
            "cpus_per_task" => s.cpus_per_task = positive()?,
            "max_running" => s.max_running = Some(positive()?),
            "headroom" => s.headroom = Some(dir.join(text()?)),
            "options" => {
                let list = v.as_array().ok_or_else(|| {
                    src.err(
                        span.clone(),
                        &field,
                        format!("{field}: must be a list of sbatch options"),
                    )
                })?;
                for o in list.iter() {
                    let o = o
                        .as_str()
                        .filter(|o| o.starts_with('-') && !o.contains(['\n', '\r']))
                        .ok_or_else(|| {
                            src.err(
                                span.clone(),
                                &field,
                                format!("{field}: each entry is one sbatch option, e.g. \"--qos=short\""),
                            )
                        })?;
                    s.options.push(o.to_string());
                }
            }
            _ => {
                return Err(src.err(
                    span,
                    &field,
                    format!(
                        "unknown key `{k}` (partition, time, mem, cpus_per_task, account, \
                         max_running, options, headroom)"
                    ),
                ))
            }
        }
    }
    Ok(s)
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

    fn example() -> PathBuf {
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

    #[test]
    fn a_step_that_sets_nothing_needs_a_label() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("s.toml");
        let text = format!(
            "scenario = {:?}\n[[axis]]\nname = \"c\"\nsteps = [{{ set = {{}} }}, {{ label = \"x\", set = {{ seed = 2 }} }}]\n",
            std::fs::canonicalize(example().with_file_name("../incast-16to1-star.toml"))
                .expect("base scenario")
                .display()
                .to_string()
        );
        std::fs::write(&file, text).expect("write");
        let e = format!("{:?}", load(&file).expect_err("no label"));
        assert!(e.contains("needs a `label`"), "{e}");
    }

    /// Every value of the example replaced by hostile ones: an error or a sweep, never a
    /// panic, and what parses also expands or errs.
    #[test]
    fn hostile_values_are_errors_not_panics() {
        let text = std::fs::read_to_string(example()).expect("example");
        let hostile: Vec<Item> = vec![
            toml_edit::value(0),
            toml_edit::value(-1),
            toml_edit::value(i64::MAX),
            toml_edit::value(f64::NAN),
            toml_edit::value(""),
            toml_edit::value("../../.."),
            toml_edit::value("a\nb"),
            toml_edit::value("x[99999999999999999999]"),
            toml_edit::value(true),
            toml_edit::value(toml_edit::Array::new()),
            toml_edit::value(toml_edit::InlineTable::new()),
            Item::Table(toml_edit::Table::new()),
        ];
        let targets: [&[&str]; 15] = [
            &["scenario"],
            &["name"],
            &["seeds"],
            &["metrics"],
            &["axis"],
            &["axis", "0", "key"],
            &["axis", "0", "values"],
            &["axis", "1", "name"],
            &["axis", "1", "key"],
            &["baseline", "axis"],
            &["baseline", "value"],
            &["plot", "0", "x"],
            &["plot", "1", "y"],
            &["slurm", "cpus_per_task"],
            &["slurm", "options"],
        ];
        let mut parsed = 0;
        for target in targets {
            for value in &hostile {
                let mut doc: toml_edit::DocumentMut = text.parse().expect("TOML");
                let mut item = doc.as_item_mut();
                for step in &target[..target.len() - 1] {
                    item = match step.parse::<usize>() {
                        Ok(i) => &mut item[i],
                        Err(_) => &mut item[*step],
                    };
                }
                item[target[target.len() - 1]] = value.clone();
                if let Ok(sweep) = parse(&doc.to_string(), &example()) {
                    parsed += 1;
                    let _ = sweep.expand();
                }
            }
        }
        // Some replacements are valid (a name of "a\nb" is refused; `0` seeds ...).
        assert!(parsed < targets.len() * hostile.len());
    }
}
