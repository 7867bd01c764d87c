//! Bar charts: groups along x, one bar per series in each (the source and application
//! shares, and `compare`'s bar plots).
//!
//! Invariants: a count axis (PAUSE frames) steps by whole numbers ([`count_step`]); every
//! series has one value per group.

use super::*;

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

pub(super) fn bar_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    d: &BarData,
) -> DrawResult<DB> {
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
pub(super) fn count_step(max: f64) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_axes_step_by_whole_numbers() {
        assert_eq!(count_step(1.1), 1.0);
        assert_eq!(count_step(10.0), 1.0);
        assert_eq!(count_step(11.0), 2.0);
        assert_eq!(count_step(39.6), 5.0);
        assert_eq!(count_step(4_400.0), 500.0);
    }
}
