//! Reading a sweep file: its TOML checked key by key (unknown keys, types, references
//! between axes, baseline and plots, the grid's size) into a [`Sweep`], every error
//! pointing at the field in the file.

use super::{
    label, Axis, AxisStep, Baseline, PlotSpec, SlurmSpec, Source, Sweep, DEFAULT_METRICS,
    MAX_POINTS,
};
use miette::{miette, Report, Result};
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml_edit::{ImDocument, Item, Value};

/// Largest sweep file read.
const MAX_SWEEP_BYTES: u64 = 1 << 20;

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
            if crate::sweep::results::metric_path(m).is_err() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::spec::tests::example;

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
