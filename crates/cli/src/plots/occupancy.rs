//! Switch buffer occupancy over time: one line per switch (the busiest by peak), with the
//! headroom in use dashed where it is not zero.
//!
//! Invariants: drawn from `buffer_samples` only (queue samples record only non-empty
//! queues, so they cannot tell an empty switch from an unsampled instant).

use super::*;

/// `switch <node>`, with its role when [`switch_roles`] knows it: `switch 40 (spine)`.
pub(super) fn switch_label(node: u32, roles: &BTreeMap<u32, &'static str>) -> String {
    match roles.get(&node) {
        Some(role) => format!("switch {node} ({role})"),
        None => format!("switch {node}"),
    }
}

/// One switch's series: `(time, used, headroom)`.
pub(super) struct SwitchSeries {
    node: u32,
    /// `switch <node>` with its role, if known.
    label: String,
    pub(super) peak: u64,
    buffer: Option<u64>,
    points: Vec<(Time, u64, u64)>,
}

pub(super) struct OccupancyData {
    pub(super) series: Vec<SwitchSeries>,
    switches: usize,
    end: Time,
}

impl OccupancyData {
    pub(super) fn new(results: &RunResults, summary: &Summary) -> Option<OccupancyData> {
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

pub(super) fn occupancy_chart<DB: DrawingBackend>(
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
