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

mod bars;
mod cdf;
mod lines;
mod occupancy;
mod queue_states;
mod shares;
mod style;
mod timeline;

use bars::bar_chart;
pub use bars::BarData;
use cdf::{cdf_chart, CdfData};
pub use lines::{LineData, LineGroup};
use occupancy::{occupancy_chart, switch_label, OccupancyData};
use style::*;

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
