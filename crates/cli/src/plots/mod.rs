//! Plots of a run, as PNG and SVG: flow completion time (FCT) slowdown CDF, switch buffer
//! occupancy, PFC pause and credit-starvation timelines; and the plots comparing runs.
//!
//! [`write_plots`] draws each plot twice, with plotters' bitmap backend (`.png`) and its SVG
//! backend (`.svg`). Text uses the DejaVu Sans font embedded in the binary
//! (`crates/cli/assets/DejaVuSans.ttf`, registered as `"sans-serif"`), so no system font
//! lookup is needed.
//!
//! | file stem | content | skipped when |
//! | --- | --- | --- |
//! | `fct_slowdown_cdf` | CDF of FCT slowdown (log x), all finished flows and each non-empty size bucket of [`SIZE_BUCKETS`] | no finished flow |
//! | `buffer_occupancy` | buffer bytes in use over time, one line per switch (top 8 by peak), dashed headroom use where non-zero | no `buffer_samples` |
//! | `pfc_timeline` | paused intervals per (node, port, priority), top 30 rows by PAUSE count | no PFC frame |
//! | `credit_timeline` | intervals waiting for credit per (node, port, VL), top 30 rows by time blocked | no blocked episode logged |
//! | `queue_states` | congestion-detection state per sample interval of each switch egress queue ever undetermined (TCD), top 30 | no queue undetermined, or no sampling |
//! | `source_shares` | share of the delivered bytes per source host (bars) | fewer than 2 or more than 64 source hosts |
//! | `application_shares` | share of the delivered bytes per application (bars) | fewer than 2 applications |
//!
//! The occupancy plot needs `buffer_samples` (taken whenever sampling is on).
//! `queue_samples` alone are not used: they record only non-empty queues, so the instants
//! when a switch was empty cannot be told from instants that were not sampled, and a line
//! drawn through them would be wrong; without buffer samples the plot is skipped.
//!
//! How the timelines get their intervals: see [`timeline`].
//!
//! Lines that are read against each other (compared runs, size buckets) are traces: colour,
//! dash pattern and marker all change from one to the next, markers staggered in height,
//! so lines lying on each other stay visible. Count axes (PAUSE frames) have whole-number
//! ticks. Switches are labelled with their role (leaf, spine; tor, agg, core) where the
//! fabric has two or three tiers (see `headroom_sim::output::switch_roles`).
//!
//! Every plot is written under a temporary name and renamed into place when complete.

use headroom_mech::units::Time;
use headroom_sim::output::{size_bucket, switch_roles, Summary, SIZE_BUCKETS};
use headroom_sim::results::RunResults;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::full_palette::{
    BLUEGREY_300, BLUE_700, BROWN_400, DEEPORANGE_600, GREEN_700, GREY_300, INDIGO_300, PINK_400,
    PURPLE_400, TEAL_600,
};
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use timeline::{timeline_chart, TimelineData};

mod lines;
mod queue_states;
mod shares;
mod timeline;

pub use lines::{LineData, LineGroup};

/// DejaVu Sans 2.37 (Bitstream Vera license; see `assets/DejaVuSans.LICENSE.txt`).
const FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
/// Font family name every text style uses.
const FONT: &str = "sans-serif";

/// Pixel size of every plot.
const SIZE: (u32, u32) = (1280, 800);
/// Lines in the occupancy plot.
const MAX_SWITCHES: usize = 8;
/// Points per CDF line at most (larger sets are thinned evenly by rank).
const MAX_CDF_POINTS: usize = 4000;

/// Line colors, in series order (all readable on white).
const COLORS: [RGBColor; 10] = [
    BLUE_700,
    DEEPORANGE_600,
    GREEN_700,
    PURPLE_400,
    TEAL_600,
    BROWN_400,
    PINK_400,
    INDIGO_300,
    BLUEGREY_300,
    RGBColor(200, 160, 0),
];

/// Why plots could not be written. Every variant names the file or directory.
#[derive(Debug)]
pub enum PlotError {
    /// The output directory could not be created.
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The embedded font could not be loaded.
    Font,
    /// Drawing or encoding a plot failed.
    Draw {
        /// The plot file.
        path: PathBuf,
        /// The backend's message.
        message: String,
    },
    /// The finished plot could not be moved into place.
    Rename {
        /// The plot file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlotError::CreateDir { path, source } => {
                write!(
                    f,
                    "cannot create plot directory {}: {source}",
                    path.display()
                )
            }
            PlotError::Font => write!(f, "cannot load the embedded plot font"),
            PlotError::Draw { path, message } => {
                write!(f, "cannot draw {}: {message}", path.display())
            }
            PlotError::Rename { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for PlotError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlotError::CreateDir { source, .. } | PlotError::Rename { source, .. } => Some(source),
            PlotError::Font | PlotError::Draw { .. } => None,
        }
    }
}

/// Registers the embedded font once per process.
fn ensure_font() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

/// Writes the plots of a run into `dir` (created if missing), each as `<stem>.png` and
/// `<stem>.svg`, and returns the files written. Plots without data are skipped (see the
/// module documentation), which is not an error.
pub fn write_plots(
    dir: &Path,
    results: &RunResults,
    summary: &Summary,
) -> Result<Vec<PathBuf>, PlotError> {
    ensure_font()?;
    fs::create_dir_all(dir).map_err(|source| PlotError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();

    if let Some(cdf) = CdfData::new(results) {
        render(dir, "fct_slowdown_cdf", &mut written, &Plot::Cdf(&cdf))?;
    }
    if let Some(occ) = OccupancyData::new(results, summary) {
        render(
            dir,
            "buffer_occupancy",
            &mut written,
            &Plot::Occupancy(&occ),
        )?;
    }
    if let Some(tl) = TimelineData::pfc(results, summary) {
        render(dir, "pfc_timeline", &mut written, &Plot::Timeline(&tl))?;
    }
    if let Some(tl) = TimelineData::credit(results) {
        render(dir, "credit_timeline", &mut written, &Plot::Timeline(&tl))?;
    }
    if let Some(st) = queue_states::StateTimeline::new(results) {
        render(dir, "queue_states", &mut written, &Plot::States(&st))?;
    }
    if let Some(bars) = shares::sources(results) {
        render(dir, "source_shares", &mut written, &Plot::Bars(&bars))?;
    }
    if let Some(bars) = shares::applications(summary) {
        render(dir, "application_shares", &mut written, &Plot::Bars(&bars))?;
    }
    Ok(written)
}

/// Writes the plots comparing several runs of one scenario (`(label, results)`, e.g. one per
/// headroom scheme): the FCT slowdown CDFs overlaid, PAUSE frames sent per run (queue- and
/// port-level), and each source host's share of the delivered bytes per run (2 to 64
/// sources). Returns the files written.
pub fn write_compare_plots(
    dir: &Path,
    runs: &[(String, &RunResults)],
) -> Result<Vec<PathBuf>, PlotError> {
    ensure_font()?;
    fs::create_dir_all(dir).map_err(|source| PlotError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    let mut lines = Vec::new();
    let (mut finished, mut total) = (0, 0);
    for (label, r) in runs {
        let mut v: Vec<f64> = r
            .flows
            .iter()
            .filter_map(|f| f.slowdown())
            .map(|s| s.max(1e-3))
            .collect();
        total += r.flows.len();
        finished += v.len();
        if !v.is_empty() {
            v.sort_by(f64::total_cmp);
            lines.push((format!("{label} ({} flows)", v.len()), v));
        }
    }
    if !lines.is_empty() {
        let lo = lines
            .iter()
            .map(|(_, v)| v[0])
            .fold(f64::INFINITY, f64::min);
        let hi = lines
            .iter()
            .map(|(_, v)| v[v.len() - 1])
            .fold(0.0, f64::max);
        let (lo, hi) = nice_log_bounds(lo, hi * 1.05);
        // Every run is a peer: no line gets the heavier "all flows" style.
        let cdf = CdfData {
            lines,
            lo,
            hi,
            finished,
            total,
            peers: true,
        };
        render(
            dir,
            "compare_fct_slowdown_cdf",
            &mut written,
            &Plot::Cdf(&cdf),
        )?;
    }
    let count = |r: &RunResults, port_level: bool| {
        r.pfc_sent
            .iter()
            .filter(|p| p.quanta != 0 && p.port_level == port_level)
            .count() as f64
    };
    let bars = BarData {
        title: "PAUSE frames sent".to_string(),
        y_desc: "PAUSE frames".to_string(),
        counts: true,
        groups: runs.iter().map(|(l, _)| l.clone()).collect(),
        series: vec![
            (
                "queue-level".to_string(),
                runs.iter().map(|(_, r)| count(r, false)).collect(),
            ),
            (
                "port-level".to_string(),
                runs.iter().map(|(_, r)| count(r, true)).collect(),
            ),
        ],
    };
    render(dir, "compare_pauses", &mut written, &Plot::Bars(&bars))?;
    if let Some(bars) = shares::compared(runs) {
        render(
            dir,
            "compare_source_shares",
            &mut written,
            &Plot::Bars(&bars),
        )?;
    }
    Ok(written)
}

/// Writes a grouped bar chart (`groups` along x, one bar per series in each group) as
/// `<stem>.png` and `<stem>.svg` in `dir`.
pub fn write_bar_chart(dir: &Path, stem: &str, bars: &BarData) -> Result<Vec<PathBuf>, PlotError> {
    write_one(dir, stem, &Plot::Bars(bars))
}

/// Writes the line chart `lines` into `dir` as `<stem>.png` and `<stem>.svg`.
pub fn write_line_chart(
    dir: &Path,
    stem: &str,
    lines: &LineData,
) -> Result<Vec<PathBuf>, PlotError> {
    write_one(dir, stem, &Plot::Lines(lines))
}

/// Writes one plot into `dir` (created if missing) as `<stem>.png` and `<stem>.svg`.
fn write_one(dir: &Path, stem: &str, plot: &Plot<'_>) -> Result<Vec<PathBuf>, PlotError> {
    ensure_font()?;
    fs::create_dir_all(dir).map_err(|source| PlotError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    render(dir, stem, &mut written, plot)?;
    Ok(written)
}

/// Data of a grouped bar chart.
pub struct BarData {
    /// Chart title.
    pub title: String,
    /// Y axis description (with its unit).
    pub y_desc: String,
    /// Group labels along x.
    pub groups: Vec<String>,
    /// `(series label, one value per group)`.
    pub series: Vec<(String, Vec<f64>)>,
    /// The values are counts: the y axis gets whole-number ticks only.
    pub counts: bool,
}

fn bar_chart<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, d: &BarData) -> DrawResult<DB> {
    let entries: Vec<(String, Mark)> = d
        .series
        .iter()
        .enumerate()
        .map(|(i, (label, _))| (label.clone(), Mark::Line(COLORS[i % COLORS.len()], 12)))
        .collect();
    let (plot, side) = layout(root, &d.title, &entries)?;
    let max = d
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.1;
    let n = d.groups.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&plot)
        .margin(20)
        .x_label_area_size(70)
        .y_label_area_size(100)
        .build_cartesian_2d(0f64..n, 0f64..max)?;
    let groups = d.groups.clone();
    let mut mesh = chart.configure_mesh();
    mesh.y_desc(d.y_desc.as_str())
        .axis_desc_style(axis_desc_style())
        .label_style(label_style())
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .disable_x_mesh()
        .light_line_style(GREY_300.mix(0.4));
    if d.counts {
        // plotters picks fractional steps for small ranges (2.5 PAUSE frames); counts get
        // their own whole-number ticks and grid lines below.
        mesh.y_labels(0)
            .y_label_formatter(&|_| String::new())
            .disable_y_mesh();
    }
    mesh.draw()?;
    if d.counts {
        let step = count_step(max);
        let y_tick_style = label_style().pos(Pos::new(HPos::Right, VPos::Center));
        let mut t = 0.0;
        while t <= max {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(0.0, t), (n, t)],
                GREY_300.stroke_width(1),
            )))?;
            let (px, py) = chart.backend_coord(&(0.0, t));
            root.draw(&PathElement::new(
                vec![(px - 6, py), (px, py)],
                BLACK.stroke_width(1),
            ))?;
            root.draw(&Text::new(
                format!("{t:.0}"),
                (px - 10, py),
                y_tick_style.clone(),
            ))?;
            t += step;
        }
    }
    let tick_style = label_style().pos(Pos::new(HPos::Center, VPos::Top));
    for (g, label) in groups.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
        root.draw(&Text::new(label.clone(), (px, py + 10), tick_style.clone()))?;
    }
    let k = d.series.len().max(1) as f64;
    let width = 0.8 / k;
    for (i, (_, values)) in d.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart.draw_series(values.iter().enumerate().map(|(g, &v)| {
            let x0 = g as f64 + 0.1 + i as f64 * width;
            Rectangle::new([(x0, 0.0), (x0 + width * 0.9, v)], color.filled())
        }))?;
        let value_style = label_style().pos(Pos::new(HPos::Center, VPos::Bottom));
        for (g, &v) in values.iter().enumerate() {
            let x = g as f64 + 0.1 + (i as f64 + 0.45) * width;
            let (px, py) = chart.backend_coord(&(x, v));
            let text = if v.fract() == 0.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            };
            root.draw(&Text::new(text, (px, py - 4), value_style.clone()))?;
        }
    }
    draw_legend(&side, &entries)
}

/// The tick step of a count axis up to `max`: the smallest whole 1-2-5 value (1, 2, 5, 10,
/// 20, ...) that needs at most 10 steps.
fn count_step(max: f64) -> f64 {
    let mut d = 1.0;
    loop {
        for m in [1.0, 2.0, 5.0] {
            if max / (m * d) <= 10.0 {
                return m * d;
            }
        }
        d *= 10.0;
    }
}

/// A plot and its data.
enum Plot<'a> {
    Cdf(&'a CdfData),
    Occupancy(&'a OccupancyData),
    Timeline(&'a TimelineData),
    Bars(&'a BarData),
    States(&'a queue_states::StateTimeline),
    Lines(&'a LineData),
}

/// Draws one plot with both backends into `<stem>.png` and `<stem>.svg`.
fn render(
    dir: &Path,
    stem: &str,
    written: &mut Vec<PathBuf>,
    plot: &Plot<'_>,
) -> Result<(), PlotError> {
    for ext in ["png", "svg"] {
        let path = dir.join(format!("{stem}.{ext}"));
        // The extension must stay last: the bitmap encoder picks the format from it.
        let tmp = dir.join(format!(".{stem}.tmp.{ext}"));
        let result = if ext == "png" {
            draw_on(BitMapBackend::new(&tmp, SIZE).into_drawing_area(), plot)
                .map_err(|e| e.to_string())
        } else {
            draw_on(SVGBackend::new(&tmp, SIZE).into_drawing_area(), plot)
                .map_err(|e| e.to_string())
        };
        if let Err(message) = result {
            let _ = fs::remove_file(&tmp);
            return Err(PlotError::Draw { path, message });
        }
        if let Err(source) = fs::rename(&tmp, &path) {
            let _ = fs::remove_file(&tmp);
            return Err(PlotError::Rename { path, source });
        }
        written.push(path);
    }
    Ok(())
}

/// Draws `plot` on `root` and flushes it to its file.
fn draw_on<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, plot: &Plot<'_>) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    match plot {
        Plot::Cdf(d) => cdf_chart(&root, d)?,
        Plot::Occupancy(d) => occupancy_chart(&root, d)?,
        Plot::Timeline(d) => timeline_chart(&root, d)?,
        Plot::Bars(d) => bar_chart(&root, d)?,
        Plot::States(d) => queue_states::chart(&root, d)?,
        Plot::Lines(d) => lines::chart(&root, d)?,
    }
    root.present()
}

/// A pixel-addressed drawing area.
type Area<DB> = DrawingArea<DB, Shift>;

/// A drawing error of backend `DB`.
type AreaError<DB> = DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>;

/// The result of drawing on backend `DB`.
type DrawResult<DB> = Result<(), AreaError<DB>>;

fn title_style() -> TextStyle<'static> {
    (FONT, 30).into_font().color(&BLACK)
}

fn axis_desc_style() -> TextStyle<'static> {
    (FONT, 22).into_font().color(&BLACK)
}

fn label_style() -> TextStyle<'static> {
    (FONT, 18).into_font().color(&BLACK)
}

fn legend_style() -> TextStyle<'static> {
    (FONT, 18).into_font().color(&BLACK)
}

/// Bounds from the 1-2-5 series (…, 1, 2, 5, 10, 20, …) around `[lo, hi]`: the largest
/// such value ≤ `lo` and the smallest ≥ `hi`, at least a factor 2 apart.
fn nice_log_bounds(lo: f64, hi: f64) -> (f64, f64) {
    let below = |v: f64| {
        let d = 10f64.powf(v.log10().floor());
        [5.0, 2.0, 1.0]
            .iter()
            .map(|m| m * d)
            .find(|&c| c <= v * (1.0 + 1e-9))
            .unwrap_or(d)
    };
    let above = |v: f64| {
        let d = 10f64.powf(v.log10().floor());
        [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * d)
            .find(|&c| c >= v * (1.0 - 1e-9))
            .unwrap_or(10.0 * d)
    };
    let a = below(lo);
    let b = above(hi).max(a * 2.0);
    (a, b)
}

/// Tick values of the 1-2-5 series within `[lo, hi]`; only powers of ten when that would
/// be more than 12 ticks.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut v = Vec::new();
    let mut d = 10f64.powf(lo.log10().floor());
    while d <= hi * (1.0 + 1e-9) {
        for m in [1.0, 2.0, 5.0] {
            let t = m * d;
            if t >= lo * (1.0 - 1e-9) && t <= hi * (1.0 + 1e-9) {
                v.push(t);
            }
        }
        d *= 10.0;
    }
    if v.len() > 12 {
        v.retain(|t| (t.log10() - t.log10().round()).abs() < 1e-9);
    }
    v
}

/// A number for an axis tick, without trailing zeros.
fn tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e6).contains(&a) {
        return format!("{v:.0e}");
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// The CDF lines: `(label, sorted slowdowns)`, overall first.
struct CdfData {
    lines: Vec<(String, Vec<f64>)>,
    lo: f64,
    hi: f64,
    finished: usize,
    total: usize,
    /// Lines are peers (runs compared), not "all flows" plus its size buckets.
    peers: bool,
}

impl CdfData {
    fn new(results: &RunResults) -> Option<CdfData> {
        let mut all = Vec::new();
        let mut by_bucket: Vec<Vec<f64>> = vec![Vec::new(); SIZE_BUCKETS.len()];
        for f in &results.flows {
            if let Some(s) = f.slowdown() {
                // Log axis: a zero FCT (impossible in a real run) is drawn at the left edge.
                let s = s.max(1e-3);
                all.push(s);
                by_bucket[size_bucket(f.size)].push(s);
            }
        }
        if all.is_empty() {
            return None;
        }
        all.sort_by(f64::total_cmp);
        // 5% room on the right so the last step is not on the frame.
        let (lo, hi) = nice_log_bounds(all[0], all[all.len() - 1] * 1.05);
        let finished = all.len();
        let mut lines = vec![(format!("all {finished} flows"), all)];
        for (b, mut v) in SIZE_BUCKETS.iter().zip(by_bucket) {
            if v.is_empty() {
                continue;
            }
            v.sort_by(f64::total_cmp);
            lines.push((format!("{} ({} flows)", b.name, v.len()), v));
        }
        Some(CdfData {
            lines,
            lo,
            hi,
            finished,
            total: results.flows.len(),
            peers: false,
        })
    }
}

/// Step points of the empirical CDF of sorted `v`, thinned to about [`MAX_CDF_POINTS`].
fn cdf_points(v: &[f64], lo: f64) -> Vec<(f64, f64)> {
    let n = v.len();
    let step = n.div_ceil(MAX_CDF_POINTS).max(1);
    let mut pts = vec![(lo, 0.0)];
    let mut prev = 0.0;
    let mut i = step - 1;
    loop {
        let i_clamped = i.min(n - 1);
        let x = v[i_clamped];
        let y = (i_clamped + 1) as f64 / n as f64;
        pts.push((x, prev));
        pts.push((x, y));
        prev = y;
        if i_clamped == n - 1 {
            break;
        }
        i += step;
    }
    pts
}

fn cdf_chart<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, d: &CdfData) -> DrawResult<DB> {
    let title = if d.finished == d.total {
        format!(
            "Flow completion time slowdown, cumulative ({} flows)",
            d.finished
        )
    } else {
        format!(
            "Flow completion time slowdown, cumulative ({} of {} flows finished)",
            d.finished, d.total
        )
    };
    let entries: Vec<(String, Mark)> = d
        .lines
        .iter()
        .enumerate()
        .map(|(i, (label, _))| (label.clone(), cdf_mark(i + usize::from(d.peers))))
        .collect();
    let (plot, side) = layout(root, &title, &entries)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin(20)
        .x_label_area_size(70)
        .y_label_area_size(90)
        .build_cartesian_2d((d.lo..d.hi).log_scale(), 0f64..1.0)?;
    chart
        .configure_mesh()
        .x_desc("slowdown = flow completion time / ideal completion time (log scale)")
        .y_desc("fraction of flows")
        .axis_desc_style(axis_desc_style())
        .label_style(label_style())
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .disable_x_mesh()
        .y_label_formatter(&|v| format!("{v:.1}"))
        .light_line_style(GREY_300.mix(0.4))
        .draw()?;
    // plotters' own log-axis ticks are sparse; draw 1-2-5 ticks and grid lines instead.
    let tick_style = label_style().pos(Pos::new(HPos::Center, VPos::Top));
    for t in log_ticks(d.lo, d.hi) {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(t, 0.0), (t, 1.0)],
            GREY_300.stroke_width(1),
        )))?;
        let (px, py) = chart.backend_coord(&(t, 0.0));
        root.draw(&PathElement::new(
            vec![(px, py), (px, py + 6)],
            BLACK.stroke_width(1),
        ))?;
        root.draw(&Text::new(tick(t), (px, py + 10), tick_style.clone()))?;
    }
    // Bucket lines first, the overall line on top; compared runs in order, so the solid
    // first line lies under the dashed and dotted ones. Markers go on top of every line.
    let traced = d.lines.len() - usize::from(!d.peers);
    let order: Vec<usize> = if d.peers {
        (0..d.lines.len()).collect()
    } else {
        (0..d.lines.len()).rev().collect()
    };
    let mut markers = Vec::new();
    for i in order {
        let v = &d.lines[i].1;
        match cdf_mark(i + usize::from(d.peers)) {
            Mark::Line(color, width) => {
                chart.draw_series(LineSeries::new(
                    cdf_points(v, d.lo),
                    color.stroke_width(width),
                ))?;
            }
            Mark::Trace(t) => {
                let slot = i + usize::from(d.peers) - 1;
                let pixels = cdf_points(v, d.lo)
                    .iter()
                    .map(|p| chart.backend_coord(p))
                    .collect();
                draw_trace(root, pixels, t)?;
                for p in cdf_marker_points(v, slot, traced) {
                    markers.push((chart.backend_coord(&p), t));
                }
            }
            Mark::Dashed(_) | Mark::Marker(_) => {}
        }
    }
    for (at, t) in markers {
        draw_marker(root, at, t)?;
    }
    draw_legend(&side, &entries)
}

/// Legend mark of CDF line `i` (0 = all flows, a heavy black line; the others traces).
fn cdf_mark(i: usize) -> Mark {
    if i == 0 {
        Mark::Line(BLACK, 3)
    } else {
        Mark::Trace(trace(i - 1))
    }
}

/// Markers per traced CDF line.
const CDF_MARKERS: usize = 8;

/// Where the markers of traced line `slot` of `slots` go on the CDF of sorted `v`: at
/// [`CDF_MARKERS`] heights, staggered between lines so that lines lying on each other
/// still show every line's markers.
fn cdf_marker_points(v: &[f64], slot: usize, slots: usize) -> Vec<(f64, f64)> {
    let n = v.len();
    let offset = (slot + 1) as f64 / (slots + 1) as f64;
    (0..CDF_MARKERS)
        .map(|k| {
            let y = (k as f64 + offset) / CDF_MARKERS as f64;
            // The first value whose rank reaches y: the marker sits on that step's riser.
            let j = ((y * n as f64).ceil() as usize).clamp(1, n) - 1;
            (v[j], y)
        })
        .collect()
}

/// How one of several lines that are read against each other is drawn: colour, dash
/// pattern and marker all change from one line to the next, so lines stay apart where
/// they overlap and in print without colour.
#[derive(Clone, Copy)]
struct Trace {
    color: RGBColor,
    /// `(dash, gap)` in pixels; `None` for a solid line.
    dash: Option<(u32, u32)>,
    marker: Shape,
}

/// A marker shape.
#[derive(Clone, Copy)]
enum Shape {
    Circle,
    Triangle,
    Square,
    Cross,
}

/// Dash patterns of traces, in order: solid, dashed, dotted, long dashes.
const DASHES: [Option<(u32, u32)>; 4] = [None, Some((14, 7)), Some((3, 5)), Some((26, 8))];
/// Marker shapes of traces, in order.
const SHAPES: [Shape; 4] = [Shape::Circle, Shape::Triangle, Shape::Square, Shape::Cross];

/// The style of trace `i`. Colours cycle over 10 and dashes and markers over 4, so no two
/// of the first 20 traces look alike.
fn trace(i: usize) -> Trace {
    Trace {
        color: COLORS[i % COLORS.len()],
        dash: DASHES[i % DASHES.len()],
        marker: SHAPES[(i + i / DASHES.len()) % SHAPES.len()],
    }
}

/// Pixel width of trace lines.
const TRACE_WIDTH: u32 = 2;

/// Draws a path given in backend pixels (`ChartContext::backend_coord`) as trace `t`'s
/// line. Dashes are laid out in pixels along the whole path, which is why the path is drawn
/// on the root area rather than as a chart series.
fn draw_trace<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pixels: Vec<(i32, i32)>,
    t: Trace,
) -> DrawResult<DB> {
    let style = t.color.stroke_width(TRACE_WIDTH);
    match t.dash {
        None => root.draw(&PathElement::new(pixels, style)),
        Some((on, off)) => root.draw(&DashedPathElement::new(pixels, on, off, style)),
    }
}

/// Draws trace `t`'s marker centred on pixel `at`.
fn draw_marker<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    t: Trace,
) -> DrawResult<DB> {
    let (x, y) = at;
    let fill = t.color.filled();
    match t.marker {
        Shape::Circle => root.draw(&Circle::new(at, 6, fill)),
        Shape::Triangle => root.draw(&TriangleMarker::new(at, 8, fill)),
        Shape::Square => root.draw(&Rectangle::new([(x - 5, y - 5), (x + 5, y + 5)], fill)),
        Shape::Cross => root.draw(&Cross::new(at, 6, t.color.stroke_width(3))),
    }
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
enum Mark {
    /// A solid line of this color and width.
    Line(RGBColor, u32),
    /// A dashed line of this color.
    Dashed(RGBColor),
    /// A line with its dash pattern and a marker.
    Trace(Trace),
    /// A trace's marker alone (points not joined by a line).
    Marker(Trace),
}

/// Pixels between legend rows.
const LEGEND_ROW: i32 = 30;

/// Draws the title on `root` and splits the rest into the plot area and, when there are
/// legend entries, a legend column on the right as wide as the longest entry.
fn layout<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    entries: &[(String, Mark)],
) -> Result<(Area<DB>, Area<DB>), AreaError<DB>> {
    let body = root.margin(10, 0, 0, 0).titled(title, title_style())?;
    let mut text_w = 0;
    for (label, _) in entries {
        text_w = text_w.max(root.estimate_text_size(label, &legend_style())?.0);
    }
    let legend_w = if entries.is_empty() { 0 } else { text_w + 75 };
    let width = body.dim_in_pixel().0;
    Ok(body.split_horizontally(width.saturating_sub(legend_w)))
}

/// Draws legend entries top-down in `area` (the column [`layout`] made).
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, Mark)],
) -> DrawResult<DB> {
    let style = legend_style().pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = 40;
    for (label, mark) in entries {
        let line = vec![(5, y), (40, y)];
        match *mark {
            Mark::Line(c, w) => area.draw(&PathElement::new(line, c.stroke_width(w)))?,
            Mark::Dashed(c) => {
                area.draw(&DashedPathElement::new(line, 7, 5, c.stroke_width(2)))?;
            }
            Mark::Trace(t) => {
                let style = t.color.stroke_width(TRACE_WIDTH);
                match t.dash {
                    None => area.draw(&PathElement::new(line, style))?,
                    Some((on, off)) => {
                        area.draw(&DashedPathElement::new(line, on, off, style))?;
                    }
                }
                draw_marker(area, (22, y), t)?;
            }
            Mark::Marker(t) => draw_marker(area, (22, y), t)?,
        }
        area.draw(&Text::new(label.clone(), (50, y), style.clone()))?;
        y += LEGEND_ROW;
    }
    Ok(())
}

/// Linear axes from zero to `ends` (x, y) on `plot`, described by `descs`, with the
/// mesh drawn: what the occupancy and line charts share.
fn linear_chart<'a, DB: DrawingBackend>(
    plot: &'a Area<DB>,
    (x_end, y_end): (f64, f64),
    (x_desc, y_desc): (&str, &str),
) -> Result<LinearChart<'a, DB>, AreaError<DB>> {
    let mut chart = ChartBuilder::on(plot)
        .margin(20)
        .x_label_area_size(70)
        .y_label_area_size(100)
        .build_cartesian_2d(0f64..x_end, 0f64..y_end)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style(axis_desc_style())
        .label_style(label_style())
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .light_line_style(GREY_300.mix(0.4))
        .draw()?;
    Ok(chart)
}

/// A binary byte unit for an axis: divisor and name.
fn byte_unit(max: u64) -> (f64, &'static str) {
    if max >= 10 << 30 {
        ((1u64 << 30) as f64, "GiB")
    } else if max >= 10 << 20 {
        ((1u64 << 20) as f64, "MiB")
    } else if max >= 10 << 10 {
        (1024.0, "KiB")
    } else {
        (1.0, "bytes")
    }
}

/// A byte count with a binary unit, for labels.
fn human_bytes(b: u64) -> String {
    if b >= 1 << 30 {
        format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
    } else if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}

/// A time axis unit for a span: divisor from picoseconds and name.
fn time_unit(span: Time) -> (f64, &'static str) {
    let ps = span.as_ps();
    if ps >= 10_000_000_000_000 {
        (1e12, "s")
    } else if ps >= 10_000_000_000 {
        (1e9, "ms")
    } else if ps >= 10_000_000 {
        (1e6, "µs")
    } else {
        (1e3, "ns")
    }
}

/// `switch <node>`, with its role when [`switch_roles`] knows it: `switch 40 (spine)`.
fn switch_label(node: u32, roles: &BTreeMap<u32, &'static str>) -> String {
    match roles.get(&node) {
        Some(role) => format!("switch {node} ({role})"),
        None => format!("switch {node}"),
    }
}

/// One switch's series: `(time, used, headroom)`.
struct SwitchSeries {
    node: u32,
    /// `switch <node>` with its role, if known.
    label: String,
    peak: u64,
    buffer: Option<u64>,
    points: Vec<(Time, u64, u64)>,
}

struct OccupancyData {
    series: Vec<SwitchSeries>,
    switches: usize,
    end: Time,
}

impl OccupancyData {
    fn new(results: &RunResults, summary: &Summary) -> Option<OccupancyData> {
        if results.buffer_samples.is_empty() {
            return None;
        }
        let mut by_node: BTreeMap<u32, Vec<(Time, u64, u64)>> = BTreeMap::new();
        for s in &results.buffer_samples {
            by_node
                .entry(s.node)
                .or_default()
                .push((s.time, s.used, s.headroom));
        }
        let switches = by_node.len();
        let roles = switch_roles(results);
        let mut series: Vec<SwitchSeries> = by_node
            .into_iter()
            .map(|(node, points)| SwitchSeries {
                node,
                label: switch_label(node, &roles),
                peak: points.iter().map(|p| p.1).max().unwrap_or(0),
                buffer: summary
                    .switches
                    .iter()
                    .find(|s| s.node == node)
                    .map(|s| s.buffer_bytes),
                points,
            })
            .collect();
        series.sort_by(|a, b| b.peak.cmp(&a.peak).then(a.node.cmp(&b.node)));
        series.truncate(MAX_SWITCHES);
        let end = results
            .buffer_samples
            .iter()
            .map(|s| s.time)
            .max()
            .unwrap_or(Time::ZERO)
            .max(results.end_time);
        Some(OccupancyData {
            series,
            switches,
            end,
        })
    }
}

fn occupancy_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    d: &OccupancyData,
) -> DrawResult<DB> {
    let max = d.series.iter().map(|s| s.peak).max().unwrap_or(0).max(1);
    let (ydiv, yunit) = byte_unit(max);
    let (tdiv, tunit) = time_unit(d.end);
    let x_end = (d.end.as_ps() as f64 / tdiv).max(1e-9);
    let y_end = max as f64 / ydiv * 1.1;
    let mut notes = Vec::new();
    if d.switches > d.series.len() {
        notes.push(format!(
            "top {} of {} switches by peak",
            d.series.len(),
            d.switches
        ));
    }
    let buffers: Vec<Option<u64>> = d.series.iter().map(|s| s.buffer).collect();
    let same_buffer = buffers.windows(2).all(|w| w[0] == w[1]);
    if let (true, Some(Some(b))) = (same_buffer, buffers.first()) {
        notes.push(format!("{} buffer each", human_bytes(*b)));
    }
    let title = if notes.is_empty() {
        "Switch buffer occupancy".to_string()
    } else {
        format!("Switch buffer occupancy ({})", notes.join("; "))
    };
    let mut entries: Vec<(String, Mark)> = d
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let of = match (same_buffer, s.buffer) {
                (false, Some(b)) => format!(" of {}", human_bytes(b)),
                _ => String::new(),
            };
            let label = format!("{}: peak {}{of}", s.label, human_bytes(s.peak));
            (label, Mark::Line(COLORS[i % COLORS.len()], 2))
        })
        .collect();
    let any_headroom = d.series.iter().any(|s| s.points.iter().any(|p| p.2 > 0));
    if any_headroom {
        entries.push(("dashed: headroom in use".to_string(), Mark::Dashed(BLACK)));
    }
    let (plot, side) = layout(root, &title, &entries)?;
    let x_desc = format!("simulated time ({tunit})");
    let y_desc = format!("buffer in use ({yunit})");
    let mut chart = linear_chart(&plot, (x_end, y_end), (&x_desc, &y_desc))?;
    for (i, s) in d.series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let used = s
            .points
            .iter()
            .map(|p| (p.0.as_ps() as f64 / tdiv, p.1 as f64 / ydiv));
        chart.draw_series(LineSeries::new(used, color.stroke_width(2)))?;
        if s.points.iter().any(|p| p.2 > 0) {
            let headroom: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|p| (p.0.as_ps() as f64 / tdiv, p.2 as f64 / ydiv))
                .collect();
            chart.draw_series(DashedLineSeries::new(headroom, 7, 5, color.stroke_width(2)))?;
        }
    }
    draw_legend(&side, &entries)
}

/// A chart of `n` rows (row 0 at the top, at y = n - 1) over simulated time `0..x_end`,
/// its mesh drawn, room for row labels `label_w` pixels wide left of the y axis.
fn row_chart<'a, DB: DrawingBackend>(
    plot: &'a Area<DB>,
    label_w: u32,
    x_end: f64,
    n: usize,
    x_desc: &str,
    y_desc: &str,
) -> Result<LinearChart<'a, DB>, AreaError<DB>> {
    let mut chart = ChartBuilder::on(plot)
        .margin(20)
        .x_label_area_size(70)
        .y_label_area_size(label_w + 60)
        .build_cartesian_2d(0f64..x_end, -0.5f64..(n as f64 - 0.5))?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .axis_desc_style(axis_desc_style())
        .label_style(label_style())
        .x_label_formatter(&|v| tick(*v))
        .y_labels(0)
        .y_label_formatter(&|_| String::new())
        .disable_y_mesh()
        .light_line_style(GREY_300.mix(0.4))
        .draw()?;
    Ok(chart)
}

/// A chart with linear axes of `f64` ([`row_chart`], [`linear_chart`]).
type LinearChart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Draws row `i`'s label right-aligned against the y axis of `chart`, on `root`.
fn draw_row_labels<DB: DrawingBackend>(
    root: &Area<DB>,
    chart: &LinearChart<'_, DB>,
    labels: &[String],
) -> DrawResult<DB> {
    let n = labels.len();
    let style = label_style().pos(Pos::new(HPos::Right, VPos::Center));
    for (i, l) in labels.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(0.0, (n - 1 - i) as f64));
        root.draw(&Text::new(l.clone(), (px - 8, py), style.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use headroom_mech::units::Rate;
    use headroom_sim::config::SimConfig;
    use headroom_sim::net::Simulation;
    use headroom_sim::output;
    use headroom_sim::topology::{builders, NodeId};
    use headroom_sim::workload::generators;

    /// 16:1 incast with a 1 MB buffer (PFC fires), mixed sizes, sampled every 2 µs.
    fn incast() -> (RunResults, Summary) {
        let topo = builders::star(17, Rate::from_gbps(100), Time::from_us(1)).unwrap();
        let senders: Vec<NodeId> = (0..16).map(NodeId).collect();
        let mut flows =
            generators::incast(&senders, NodeId(16), 200_000, Time::ZERO, None, 3).unwrap();
        flows.extend(
            generators::incast(&senders[..4], NodeId(16), 5_000, Time::from_us(5), None, 3)
                .unwrap(),
        );
        flows.extend(
            generators::incast(
                &senders[4..8],
                NodeId(16),
                50_000,
                Time::from_us(7),
                None,
                3,
            )
            .unwrap(),
        );
        flows.extend(
            generators::incast(
                &senders[8..10],
                NodeId(16),
                2_000_000,
                Time::from_us(9),
                None,
                3,
            )
            .unwrap(),
        );
        flows.sort_by_key(|f| f.start);
        let mut cfg = SimConfig::new(topo, flows);
        cfg.switch.buffer_bytes = 1_000_000;
        cfg.record.sample_interval = Some(Time::from_us(2));
        let mut sim = Simulation::new(cfg.clone()).unwrap();
        sim.run_until(Time::MAX);
        let r = sim.finish();
        let s = output::summarize(&r, &cfg, None);
        (r, s)
    }

    #[test]
    fn writes_png_and_svg_plots() {
        let (r, s) = incast();
        assert!(!r.pfc_received.is_empty() && !r.buffer_samples.is_empty());
        // HEADROOM_PLOT_DIR keeps the plots for a look; by default they go to a temp dir.
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::env::var_os("HEADROOM_PLOT_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| tmp.path().to_path_buf());
        let written = write_plots(&dir, &r, &s).unwrap();
        assert_eq!(written.len(), 8, "{written:?}");
        let titles = [
            ("fct_slowdown_cdf", "Flow completion time slowdown"),
            ("buffer_occupancy", "Switch buffer occupancy"),
            ("pfc_timeline", "PFC pause timeline"),
            ("source_shares", "Throughput share per source host"),
        ];
        for (stem, title) in titles {
            let png = fs::read(dir.join(format!("{stem}.png"))).unwrap();
            assert!(
                png.starts_with(b"\x89PNG\r\n\x1a\n"),
                "{stem}.png is not a PNG"
            );
            assert!(
                png.len() > 5 * 1024,
                "{stem}.png is only {} bytes",
                png.len()
            );
            let svg = fs::read_to_string(dir.join(format!("{stem}.svg"))).unwrap();
            assert!(svg.contains("<svg"), "{stem}.svg");
            assert!(svg.contains(title), "{stem}.svg lacks its title");
        }
        let leftovers: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn large_fabric_plots_are_limited_to_top_rows() {
        // 4 leaves x 8 hosts, 2:1 oversubscribed: a 31-to-1 incast pauses many ports.
        let p = builders::LeafSpine::new(4, 2, 8, Rate::from_gbps(100), Time::from_us(1))
            .with_oversubscription(2.0)
            .unwrap();
        let topo = builders::leaf_spine(&p).unwrap();
        let senders: Vec<NodeId> = (1..32).map(NodeId).collect();
        let mut flows =
            generators::incast(&senders, NodeId(0), 100_000, Time::ZERO, None, 3).unwrap();
        let perm: Vec<NodeId> = (8..32).map(NodeId).collect();
        flows.extend(
            generators::incast(&perm[1..], NodeId(8), 30_000, Time::ZERO, None, 3).unwrap(),
        );
        flows.sort_by_key(|f| f.start);
        let mut cfg = SimConfig::new(topo, flows);
        cfg.switch.buffer_bytes = 600_000;
        cfg.record.sample_interval = Some(Time::from_us(1));
        let mut sim = Simulation::new(cfg.clone()).unwrap();
        sim.run_until(Time::MAX);
        let r = sim.finish();
        let s = output::summarize(&r, &cfg, None);
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::env::var_os("HEADROOM_PLOT_DIR")
            .map(|d| PathBuf::from(d).join("fabric"))
            .unwrap_or_else(|| tmp.path().to_path_buf());
        let written = write_plots(&dir, &r, &s).unwrap();
        // The occupancy, the CDF, the PFC timeline and the shares of the 31 sources.
        assert_eq!(written.len(), 8, "{written:?}");
        let tl = TimelineData::pfc(&r, &s).unwrap();
        assert!(tl.rows.len() <= timeline::MAX_ROWS);
        let occ = OccupancyData::new(&r, &s).unwrap();
        assert!(occ.series.len() <= MAX_SWITCHES);
        assert!(occ.series.windows(2).all(|w| w[0].peak >= w[1].peak));
    }

    /// The roles `switch_roles` gives the switches of `topo` after a one-flow run.
    fn roles_of(topo: headroom_sim::topology::Topology) -> BTreeMap<u32, &'static str> {
        let flows =
            generators::incast(&[NodeId(0)], NodeId(1), 1_000, Time::ZERO, None, 3).unwrap();
        let mut sim = Simulation::new(SimConfig::new(topo, flows)).unwrap();
        sim.run_until(Time::MAX);
        switch_roles(&sim.finish())
    }

    #[test]
    fn switch_roles_follow_the_tiers() {
        let (rate, delay) = (Rate::from_gbps(100), Time::from_us(1));
        // 4 leaves x 2 hosts (nodes 8..12), 2 spines (12, 13).
        let ls = roles_of(
            builders::leaf_spine(&builders::LeafSpine::new(4, 2, 2, rate, delay)).unwrap(),
        );
        assert_eq!(ls.get(&8), Some(&"leaf"));
        assert_eq!(ls.get(&13), Some(&"spine"));
        assert_eq!(switch_label(13, &ls), "switch 13 (spine)");
        // k = 4: 16 hosts, edge 16..24, aggregation 24..32, core 32..36.
        let ft = roles_of(builders::fat_tree(4, rate, delay).unwrap());
        assert_eq!(ft.get(&16), Some(&"tor"));
        assert_eq!(ft.get(&31), Some(&"agg"));
        assert_eq!(ft.get(&35), Some(&"core"));
        assert_eq!(ft.len(), 20);
        // One tier: no roles, plain labels.
        let star = roles_of(builders::star(3, rate, delay).unwrap());
        assert!(star.is_empty());
        assert_eq!(switch_label(3, &star), "switch 3");
    }

    #[test]
    fn count_axes_step_by_whole_numbers() {
        assert_eq!(count_step(1.1), 1.0);
        assert_eq!(count_step(10.0), 1.0);
        assert_eq!(count_step(11.0), 2.0);
        assert_eq!(count_step(39.6), 5.0);
        assert_eq!(count_step(4_400.0), 500.0);
    }

    #[test]
    fn cdf_markers_sit_on_the_line_and_apart() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let a = cdf_marker_points(&v, 0, 3);
        let b = cdf_marker_points(&v, 1, 3);
        assert_eq!(a.len(), CDF_MARKERS);
        for (x, y) in a.iter().chain(&b) {
            // On the step: the value's rank fraction reaches y, the previous one does not.
            assert!(
                *x / 100.0 >= *y - 1e-9 && (*x - 1.0) / 100.0 < *y,
                "{x}, {y}"
            );
        }
        assert!(a.iter().zip(&b).all(|(p, q)| p.1 < q.1));
    }

    #[test]
    fn empty_data_skips_plots() {
        let dir = tempfile::tempdir().unwrap();
        let r = RunResults::default();
        let topo = builders::star(2, Rate::from_gbps(100), Time::from_us(1)).unwrap();
        let cfg = SimConfig::new(topo, vec![]);
        let s = output::summarize(&r, &cfg, None);
        let written = write_plots(dir.path(), &r, &s).unwrap();
        assert!(written.is_empty());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn unwritable_dir_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("a-file");
        fs::write(&blocker, b"x").unwrap();
        let (r, s) = (RunResults::default(), {
            let topo = builders::star(2, Rate::from_gbps(100), Time::from_us(1)).unwrap();
            output::summarize(&RunResults::default(), &SimConfig::new(topo, vec![]), None)
        });
        let err = write_plots(&blocker.join("plots"), &r, &s).unwrap_err();
        assert!(err.to_string().contains("a-file"), "{err}");
    }
}
