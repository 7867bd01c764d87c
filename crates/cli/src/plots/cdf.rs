//! The FCT slowdown CDF: one line for all finished flows and one per non-empty size bucket
//! (or one per compared run), on a log x axis.
//!
//! Invariants: a line has about `MAX_CDF_POINTS` steps (every k-th value of a long run) and
//! always ends at its largest value, at 1; markers sit on their line, staggered between
//! lines.

use super::*;

/// The CDF lines: `(label, sorted slowdowns)`, overall first.
pub(super) struct CdfData {
    pub(super) lines: Vec<(String, Vec<f64>)>,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) finished: usize,
    pub(super) total: usize,
    /// Lines are peers (runs compared), not "all flows" plus its size buckets.
    pub(super) peers: bool,
}

impl CdfData {
    pub(super) fn new(results: &RunResults) -> Option<CdfData> {
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

pub(super) fn cdf_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    d: &CdfData,
) -> DrawResult<DB> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
