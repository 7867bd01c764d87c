//! An XY chart of measured points, optionally against a model's curve, one colour per
//! group: the measured points as markers (not joined, what lies between them was not
//! measured, unless the chart says `joined`), the model as a thin dashed line of the same
//! colour. Used by `headroom credit-loop` (throughput against VL buffer, one group per
//! cable length, against the model) and `headroom sweep` (a metric against a swept
//! parameter, one group per series, joined).
//!
//! Invariants: both axes start at zero and end 10 % above the largest value; a group
//! without points draws nothing but its legend entry; a group without a model has no
//! model legend entry.

use super::{
    draw_legend, draw_marker, draw_trace, layout, linear_chart, trace, DrawResult, Mark, COLORS,
};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Data of a measured-against-model line chart.
pub struct LineData {
    /// Chart title.
    pub title: String,
    /// X axis description (with its unit).
    pub x_desc: String,
    /// Y axis description (with its unit).
    pub y_desc: String,
    /// The groups, in legend order.
    pub groups: Vec<LineGroup>,
    /// Join each group's measured points with its trace's line.
    pub joined: bool,
}

/// One group: measured points and the model's points, both in x order.
pub struct LineGroup {
    /// Group label (the legend adds "measured" and "model").
    pub label: String,
    /// Measured `(x, y)`.
    pub measured: Vec<(f64, f64)>,
    /// The model's `(x, y)`.
    pub model: Vec<(f64, f64)>,
}

pub(super) fn chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    d: &LineData,
) -> DrawResult<DB> {
    let mut entries = Vec::new();
    for (i, g) in d.groups.iter().enumerate() {
        let t = trace(i);
        if g.model.is_empty() {
            let mark = if d.joined {
                Mark::Trace(t)
            } else {
                Mark::Marker(t)
            };
            entries.push((g.label.clone(), mark));
            continue;
        }
        entries.push((format!("{}: measured", g.label), Mark::Marker(t)));
        entries.push((
            format!("{}: model", g.label),
            Mark::Dashed(COLORS[i % COLORS.len()]),
        ));
    }
    let (plot, side) = layout(root, &d.title, &entries)?;
    let all = || {
        d.groups
            .iter()
            .flat_map(|g| g.measured.iter().chain(&g.model))
    };
    let x_end = all().map(|p| p.0).fold(0.0f64, f64::max).max(1e-9) * 1.1;
    let y_end = all().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9) * 1.1;
    let mut chart = linear_chart(&plot, (x_end, y_end), (&d.x_desc, &d.y_desc))?;
    for (i, g) in d.groups.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart.draw_series(DashedLineSeries::new(
            g.model.iter().copied(),
            5,
            5,
            color.stroke_width(1),
        ))?;
        let t = trace(i);
        if d.joined {
            let pixels = g.measured.iter().map(|p| chart.backend_coord(p)).collect();
            draw_trace(root, pixels, t)?;
        }
        for p in &g.measured {
            draw_marker(root, chart.backend_coord(p), t)?;
        }
    }
    draw_legend(&side, &entries)
}
