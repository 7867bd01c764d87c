//! A sweep's results: one row per finished point (its axis values, its wall time and peak
//! memory, and the metrics read from its `summary.json`), as `results.csv` and `results.json`, a printed
//! table, and plots of a metric against a numeric axis.
//!
//! With a baseline (`[baseline] axis, value`), every numeric metric also appears divided by
//! the same metric of the point that differs only in that axis, which has the baseline's
//! value (`<metric>/<value>`; empty when that point is not finished or its metric is 0).
//!
//! Invariants: rows are in point order; a metric a summary does not have is empty, never
//! 0; plots average over seeds and over the axes that are neither x nor a series.

use super::spec::Sweep;
use super::{write_atomic, Layout, Manifest};
use crate::plots::{LineData, LineGroup};
use miette::{miette, Result};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Most rows the printed table shows (the files have all).
const MAX_PRINTED_ROWS: usize = 40;

/// Metrics the printed table shows (the files have all).
const PRINTED_METRICS: [&str; 4] = [
    "fct.overall.mean_fct_ns",
    "fct.overall.slowdown_p99",
    "pfc.pause_frames",
    "drops.lossless",
];

/// One step of a metric's path: a key and an optional index.
pub type MetricStep = (String, Option<usize>);

/// Splits a `summary.json` path (`fct.by_workload[0].stats.mean_fct_ns`) into steps.
pub fn metric_path(path: &str) -> Result<Vec<MetricStep>, String> {
    path.split('.')
        .map(|part| {
            let (key, index) = match part.split_once('[') {
                None => (part, None),
                Some((k, rest)) => {
                    let i = rest
                        .strip_suffix(']')
                        .and_then(|d| d.parse::<usize>().ok())
                        .ok_or_else(|| format!("`{part}`: an index is written `key[N]`"))?;
                    (k, Some(i))
                }
            };
            if key.is_empty() {
                return Err(format!("`{path}`: an empty key"));
            }
            Ok((key.to_string(), index))
        })
        .collect()
}

/// The value at `path` in `summary`, if it is a number, a string or a boolean.
fn lookup(summary: &Json, path: &[MetricStep]) -> Option<Json> {
    let mut v = summary;
    for (key, index) in path {
        v = v.get(key)?;
        if let Some(i) = index {
            v = v.get(i)?;
        }
    }
    match v {
        Json::Number(_) | Json::String(_) | Json::Bool(_) => Some(v.clone()),
        _ => None,
    }
}

/// The plots of a sweep: its `[[plot]]`s, or, without any, the mean FCT and the 99th
/// percentile slowdown (and the mean FCT against the baseline, with one) against the
/// first axis with numeric values, one line per combination of the other axes.
pub fn plot_specs(sweep: &Sweep) -> Vec<(String, String, Vec<String>)> {
    if !sweep.plots.is_empty() {
        return sweep
            .plots
            .iter()
            .map(|p| (p.x.clone(), p.y.clone(), p.series.clone()))
            .collect();
    }
    let Some(x) = sweep.axes.iter().find(|a| a.is_numeric()) else {
        return Vec::new();
    };
    let series: Vec<String> = sweep
        .axes
        .iter()
        .filter(|a| a.name != x.name)
        .map(|a| a.name.clone())
        .collect();
    let mut ys = vec!["fct.overall.mean_fct_ns".to_string()];
    if let Some(b) = &sweep.baseline {
        ys.push(format!("fct.overall.mean_fct_ns/{}", b.value));
    }
    ys.push("fct.overall.slowdown_p99".to_string());
    ys.into_iter()
        .map(|y| (x.name.clone(), y, series.clone()))
        .collect()
}

/// The finished points' rows.
pub struct Table {
    /// Column names: `point`, the axes, `wall_s`, `max_rss_bytes`, the metrics, the
    /// normalised metrics.
    columns: Vec<String>,
    /// Rows, in point order.
    rows: Vec<Vec<Json>>,
}

impl Table {
    /// Reads the summary of every point `done` marks (in the manifest's order).
    pub fn gather(layout: &Layout, manifest: &Manifest, done: &[bool]) -> Result<Table> {
        let paths: Vec<Vec<MetricStep>> = manifest
            .metrics
            .iter()
            .map(|m| metric_path(m).map_err(|e| miette!("sweep.json: metric {e}")))
            .collect::<Result<_>>()?;
        let mut columns = vec!["point".to_string()];
        columns.extend(manifest.axes.iter().cloned());
        columns.extend(["wall_s".into(), "max_rss_bytes".into()]);
        columns.extend(manifest.metrics.iter().cloned());
        let mut rows = Vec::new();
        for (p, _) in manifest.points.iter().zip(done).filter(|(_, &d)| d) {
            let run = layout.run(&p.id);
            let read = |name: &str| -> Option<Json> {
                let text = std::fs::read_to_string(run.join(name)).ok()?;
                serde_json::from_str(&text).ok()
            };
            let summary = read("summary.json").ok_or_else(|| {
                miette!(
                    "{}: not a readable summary",
                    run.join("summary.json").display()
                )
            })?;
            let task = read("task.json");
            let of_task = |key: &str| {
                task.as_ref()
                    .and_then(|t| t.get(key).cloned())
                    .unwrap_or(Json::Null)
            };
            let mut row = vec![Json::String(p.id.clone())];
            row.extend(p.values.iter().map(|v| Json::String(v.clone())));
            row.push(of_task("wall_s"));
            row.push(of_task("max_rss_bytes"));
            row.extend(
                paths
                    .iter()
                    .map(|path| lookup(&summary, path).unwrap_or(Json::Null)),
            );
            rows.push(row);
        }
        let mut table = Table { columns, rows };
        if let Some((axis, value)) = &manifest.baseline {
            table.normalise(manifest, axis, value);
        }
        Ok(table)
    }

    /// Adds `<metric>/<value>` for every numeric metric (see the module documentation).
    fn normalise(&mut self, manifest: &Manifest, axis: &str, value: &str) {
        let Some(a) = manifest.axes.iter().position(|x| x == axis) else {
            return;
        };
        let axis_col = 1 + a;
        // After `point`, the axes, `wall_s` and `max_rss_bytes`.
        let first_metric = 3 + manifest.axes.len();
        let metric_cols: Vec<usize> = (first_metric..self.columns.len())
            .filter(|&c| self.rows.iter().any(|r| r[c].is_number()))
            .collect();
        // The baseline row of every combination of the other axes.
        let key = |row: &[Json]| -> Vec<Json> {
            (1..=manifest.axes.len())
                .filter(|&c| c != axis_col)
                .map(|c| row[c].clone())
                .collect()
        };
        let base: BTreeMap<String, usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r[axis_col].as_str() == Some(value))
            .map(|(i, r)| (Json::Array(key(r)).to_string(), i))
            .collect();
        for &c in &metric_cols {
            self.columns.push(format!("{}/{value}", self.columns[c]));
        }
        for i in 0..self.rows.len() {
            let b = base
                .get(&Json::Array(key(&self.rows[i])).to_string())
                .copied();
            for &c in &metric_cols {
                let ratio = b
                    .and_then(|b| Some((self.rows[i][c].as_f64()?, self.rows[b][c].as_f64()?)))
                    .filter(|(_, d)| *d != 0.0)
                    .and_then(|(n, d)| serde_json::Number::from_f64(n / d))
                    .map_or(Json::Null, Json::Number);
                self.rows[i].push(ratio);
            }
        }
    }

    /// Writes `results.csv` and `results.json`; returns their paths.
    pub fn write(&self, layout: &Layout) -> Result<Vec<PathBuf>> {
        let mut csv = self
            .columns
            .iter()
            .map(|c| csv_field(c))
            .collect::<Vec<_>>()
            .join(",");
        csv.push('\n');
        for row in &self.rows {
            let fields: Vec<String> = row.iter().map(|v| csv_field(&cell(v))).collect();
            csv.push_str(&fields.join(","));
            csv.push('\n');
        }
        let objects: Vec<Json> = self
            .rows
            .iter()
            .map(|row| {
                Json::Object(
                    self.columns
                        .iter()
                        .cloned()
                        .zip(row.iter().cloned())
                        .collect(),
                )
            })
            .collect();
        let csv_path = layout.dir.join("results.csv");
        let json_path = layout.dir.join("results.json");
        write_atomic(&csv_path, csv.as_bytes())?;
        let json = serde_json::to_vec_pretty(&Json::Array(objects))
            .map_err(|e| miette!("results.json: {e}"))?;
        write_atomic(&json_path, &json)?;
        Ok(vec![csv_path, json_path])
    }

    /// The printed table: the axes and a few metrics, at most [`MAX_PRINTED_ROWS`] rows.
    pub fn text(&self, manifest: &Manifest) -> String {
        let shown: Vec<usize> = (0..self.columns.len())
            .filter(|&c| {
                c <= manifest.axes.len()
                    || PRINTED_METRICS.contains(&self.columns[c].as_str())
                    || self.columns[c].contains('/')
                        && PRINTED_METRICS
                            .iter()
                            .any(|m| self.columns[c].starts_with(m))
            })
            .collect();
        let cells: Vec<Vec<String>> = std::iter::once(
            shown
                .iter()
                .map(|&c| short_name(&self.columns[c]))
                .collect(),
        )
        .chain(
            self.rows
                .iter()
                .take(MAX_PRINTED_ROWS)
                .map(|r| shown.iter().map(|&c| short_cell(&r[c])).collect()),
        )
        .collect();
        let widths: Vec<usize> = (0..shown.len())
            .map(|c| {
                cells
                    .iter()
                    .map(|r| r[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &cells {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(v, w)| format!("{v:>w$}"))
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        if self.rows.len() > MAX_PRINTED_ROWS {
            let _ = writeln!(
                out,
                "... {} more rows in results.csv",
                self.rows.len() - MAX_PRINTED_ROWS
            );
        }
        out.trim_end().to_string()
    }

    /// Draws the manifest's plots; returns the files written.
    pub fn plot(&self, layout: &Layout, manifest: &Manifest) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for (n, (x, y, series)) in manifest.plots.iter().enumerate() {
            let Some(data) = self.line_data(manifest, x, y, series) else {
                continue;
            };
            let stem = format!("plot-{n}-{}", file_stem(y));
            files.extend(
                crate::plots::write_line_chart(&layout.dir, &stem, &data)
                    .map_err(|e| miette!("{e}"))?,
            );
        }
        Ok(files)
    }

    /// The points of one plot: `y` against `x`, averaged per (series, x).
    fn line_data(
        &self,
        manifest: &Manifest,
        x: &str,
        y: &str,
        series: &[String],
    ) -> Option<LineData> {
        let col = |name: &str| self.columns.iter().position(|c| c == name);
        let (xc, yc) = (col(x)?, col(y)?);
        let sc: Vec<usize> = series.iter().filter_map(|s| col(s)).collect();
        let mut sums: BTreeMap<String, BTreeMap<u64, (f64, f64, u32)>> = BTreeMap::new();
        let mut averaged = false;
        let mut order: Vec<String> = Vec::new();
        for r in &self.rows {
            let (Some(xv), Some(yv)) = (
                r[xc].as_str().and_then(|s| s.parse::<f64>().ok()),
                r[yc].as_f64(),
            ) else {
                continue;
            };
            let label = if sc.is_empty() {
                short_name(y)
            } else {
                sc.iter()
                    .map(|&c| format!("{} = {}", short_name(&self.columns[c]), cell(&r[c])))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            if !order.contains(&label) {
                order.push(label.clone());
            }
            let e = sums
                .entry(label)
                .or_default()
                .entry(xv.to_bits())
                .or_insert((xv, 0.0, 0));
            e.1 += yv;
            e.2 += 1;
            averaged |= e.2 > 1;
        }
        if order.is_empty() {
            return None;
        }
        let groups = order
            .into_iter()
            .map(|label| {
                let mut measured: Vec<(f64, f64)> = sums[&label]
                    .values()
                    .map(|(xv, s, n)| (*xv, s / f64::from(*n)))
                    .collect();
                measured.sort_by(|a, b| a.0.total_cmp(&b.0));
                LineGroup {
                    label,
                    measured,
                    model: Vec::new(),
                }
            })
            .collect();
        Some(LineData {
            title: format!(
                "{}: {} against {x}{}",
                manifest.name,
                short_name(y),
                if averaged {
                    " (means over seeds and other axes)"
                } else {
                    ""
                }
            ),
            x_desc: x.to_string(),
            y_desc: y.to_string(),
            groups,
            joined: true,
        })
    }
}

/// A cell as text: strings bare, numbers as JSON writes them, nothing for null.
fn cell(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A cell for the printed table: numbers to four significant digits.
fn short_cell(v: &Json) -> String {
    match v.as_f64() {
        Some(x) if v.is_f64() && x.is_finite() && x != 0.0 => {
            let magnitude = x.abs().log10().floor() as i32;
            let decimals = (3 - magnitude).clamp(0, 6) as usize;
            format!("{x:.decimals$}")
        }
        _ => cell(v),
    }
}

/// A CSV field, quoted when it must be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The last one or two steps of a dotted name (`fct.overall.mean_fct_ns` → `mean_fct_ns`;
/// `switch.scheme` → `scheme`).
fn short_name(name: &str) -> String {
    let (main, ratio) = match name.split_once('/') {
        Some((m, r)) => (m, Some(r)),
        None => (name, None),
    };
    let last = main.rsplit('.').next().unwrap_or(main);
    match ratio {
        Some(r) => format!("{last}/{r}"),
        None => last.to_string(),
    }
}

/// A file-name-safe form of a column name.
fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_paths_with_indices() {
        let p = metric_path("fct.by_workload[1].stats.mean_fct_ns").expect("parses");
        assert_eq!(p[1], ("by_workload".to_string(), Some(1)));
        let summary: Json = serde_json::json!({"fct": {"by_workload": [
            {"stats": {"mean_fct_ns": 1.5}}, {"stats": {"mean_fct_ns": 2.5}}]}});
        assert_eq!(lookup(&summary, &p), Some(serde_json::json!(2.5)));
        assert_eq!(
            lookup(
                &summary,
                &metric_path("fct.by_workload[2].stats").expect("ok")
            ),
            None
        );
        assert!(metric_path("fct..x").is_err());
        assert!(metric_path("fct.w[x]").is_err());
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn printed_numbers_have_four_significant_digits() {
        let f = |x: f64| short_cell(&serde_json::json!(x));
        assert_eq!(f(93041.92), "93042");
        assert_eq!(f(1.916_174_757), "1.916");
        assert_eq!(f(0.996_480_6), "0.9965");
        assert_eq!(f(0.0), "0.0");
        assert_eq!(short_cell(&serde_json::json!(403)), "403");
        assert_eq!(short_cell(&serde_json::Value::Null), "");
    }

    #[test]
    fn short_names() {
        assert_eq!(short_name("fct.overall.mean_fct_ns/sih"), "mean_fct_ns/sih");
        assert_eq!(short_name("switch.scheme"), "scheme");
    }
}
