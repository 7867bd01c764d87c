//! The look every plot shares: text styles, log and count axes, traces (colour, dash
//! pattern and marker changing together from one line to the next), legends, linear
//! charts, and byte and time units.
//!
//! Invariants: trace `i` differs from trace `i + 1` in colour, dash and marker alike, so
//! lines lying on each other stay visible; units are chosen from an axis's largest value
//! or span.

use super::*;

pub(super) fn title_style() -> TextStyle<'static> {
    (FONT, 30).into_font().color(&BLACK)
}

pub(super) fn axis_desc_style() -> TextStyle<'static> {
    (FONT, 22).into_font().color(&BLACK)
}

pub(super) fn label_style() -> TextStyle<'static> {
    (FONT, 18).into_font().color(&BLACK)
}

pub(super) fn legend_style() -> TextStyle<'static> {
    (FONT, 18).into_font().color(&BLACK)
}

/// Bounds from the 1-2-5 series (…, 1, 2, 5, 10, 20, …) around `[lo, hi]`: the largest
/// such value ≤ `lo` and the smallest ≥ `hi`, at least a factor 2 apart.
pub(super) fn nice_log_bounds(lo: f64, hi: f64) -> (f64, f64) {
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
pub(super) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
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
pub(super) fn tick(v: f64) -> String {
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

/// How one of several lines that are read against each other is drawn: colour, dash
/// pattern and marker all change from one line to the next, so lines stay apart where
/// they overlap and in print without colour.
#[derive(Clone, Copy)]
pub(super) struct Trace {
    color: RGBColor,
    /// `(dash, gap)` in pixels; `None` for a solid line.
    dash: Option<(u32, u32)>,
    marker: Shape,
}

/// A marker shape.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    Circle,
    Triangle,
    Square,
    Cross,
}

/// Dash patterns of traces, in order: solid, dashed, dotted, long dashes.
pub(super) const DASHES: [Option<(u32, u32)>; 4] =
    [None, Some((14, 7)), Some((3, 5)), Some((26, 8))];
/// Marker shapes of traces, in order.
pub(super) const SHAPES: [Shape; 4] = [Shape::Circle, Shape::Triangle, Shape::Square, Shape::Cross];

/// The style of trace `i`. Colours cycle over 10 and dashes and markers over 4, so no two
/// of the first 20 traces look alike.
pub(super) fn trace(i: usize) -> Trace {
    Trace {
        color: COLORS[i % COLORS.len()],
        dash: DASHES[i % DASHES.len()],
        marker: SHAPES[(i + i / DASHES.len()) % SHAPES.len()],
    }
}

/// Pixel width of trace lines.
pub(super) const TRACE_WIDTH: u32 = 2;

/// Draws a path given in backend pixels (`ChartContext::backend_coord`) as trace `t`'s
/// line. Dashes are laid out in pixels along the whole path, which is why the path is drawn
/// on the root area rather than as a chart series.
pub(super) fn draw_trace<DB: DrawingBackend>(
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
pub(super) fn draw_marker<DB: DrawingBackend>(
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
pub(super) enum Mark {
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
pub(super) const LEGEND_ROW: i32 = 30;

/// Draws the title on `root` and splits the rest into the plot area and, when there are
/// legend entries, a legend column on the right as wide as the longest entry.
pub(super) fn layout<DB: DrawingBackend>(
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
pub(super) fn draw_legend<DB: DrawingBackend>(
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
pub(super) fn linear_chart<'a, DB: DrawingBackend>(
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
pub(super) fn byte_unit(max: u64) -> (f64, &'static str) {
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
pub(super) fn human_bytes(b: u64) -> String {
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
pub(super) fn time_unit(span: Time) -> (f64, &'static str) {
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
