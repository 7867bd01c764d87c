//! The congestion-detection state timeline: for each switch egress queue that was ever
//! undetermined (ternary congestion detection), its state in every sample interval, one
//! coloured bar per interval (non-congestion grey, congestion red, undetermined orange,
//! checking blue), drawn from `marks.csv`'s samples.
//!
//! Invariants: a row is a queue that ended some interval undetermined or marked UE in it;
//! at most [`MAX_ROWS`] rows, those with the most undetermined intervals; intervals in
//! which the queue sent nothing are left blank (no sample).

use super::{
    draw_legend, draw_row_labels, label_style, layout, row_chart, time_unit, Area, DrawResult, Mark,
};
use headroom_mech::tcd::QueueState;
use headroom_mech::units::Time;
use headroom_sim::output::state_name;
use headroom_sim::results::RunResults;
use plotters::prelude::*;
use plotters::style::full_palette::{BLUE_600, GREY_400, ORANGE_600, RED_600};
use std::collections::BTreeMap;

/// Rows in the state timeline.
pub(super) const MAX_ROWS: usize = 30;

/// A queue's samples: (interval end, UE marks in it, state at its end).
type Samples = Vec<(Time, u64, QueueState)>;

/// One queue's row: its label and its (interval start, end, state) bars.
struct Row {
    label: String,
    bars: Vec<(Time, Time, QueueState)>,
}

/// The data of the state timeline.
pub(super) struct StateTimeline {
    rows: Vec<Row>,
    total_rows: usize,
    end: Time,
}

/// The colour of a state's bar.
fn color(state: QueueState) -> RGBColor {
    match state {
        QueueState::NonCongestion => GREY_400,
        QueueState::Congestion => RED_600,
        QueueState::Undetermined => ORANGE_600,
        QueueState::Checking => BLUE_600,
    }
}

impl StateTimeline {
    /// The timeline of `results`, if some queue was ever undetermined and the run sampled.
    pub(super) fn new(results: &RunResults) -> Option<StateTimeline> {
        let mut by_queue: BTreeMap<(u32, u16, u8), Samples> = BTreeMap::new();
        for s in &results.mark_samples {
            by_queue
                .entry((s.node, s.port, s.queue))
                .or_default()
                .push((s.time, s.ue_marked, s.state));
        }
        let undetermined = |v: &[(Time, u64, QueueState)]| {
            v.iter()
                .filter(|(_, ue, st)| *ue > 0 || *st == QueueState::Undetermined)
                .count()
        };
        let mut keyed: Vec<_> = by_queue
            .into_iter()
            .filter(|(_, v)| undetermined(v) > 0)
            .collect();
        if keyed.is_empty() {
            return None;
        }
        let total_rows = keyed.len();
        keyed.sort_by(|a, b| {
            undetermined(&b.1)
                .cmp(&undetermined(&a.1))
                .then(a.0.cmp(&b.0))
        });
        keyed.truncate(MAX_ROWS);
        keyed.sort_by_key(|k| k.0);
        // Samples are taken every interval: a sample's bar starts one interval earlier.
        let interval = sample_interval(
            &results
                .mark_samples
                .iter()
                .map(|s| s.time)
                .collect::<Vec<_>>(),
        );
        let rows = keyed
            .into_iter()
            .map(|((node, port, queue), samples)| Row {
                label: format!("switch {node} port {port} queue {queue}"),
                bars: samples
                    .into_iter()
                    .map(|(t, _, st)| (t.saturating_sub(interval), t, st))
                    .collect(),
            })
            .collect();
        Some(StateTimeline {
            rows,
            total_rows,
            end: results.end_time,
        })
    }
}

/// The smallest gap between distinct sample times (the sample interval).
fn sample_interval(times: &[Time]) -> Time {
    let mut distinct: Vec<Time> = times.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    distinct
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap_or(Time::ZERO)
}

/// Draws the state timeline.
pub(super) fn chart<DB: DrawingBackend>(root: &Area<DB>, d: &StateTimeline) -> DrawResult<DB> {
    let n = d.rows.len();
    let (tdiv, tunit) = time_unit(d.end);
    let x_end = (d.end.as_ps() as f64 / tdiv).max(1e-9);
    let mut label_w = 100;
    for r in &d.rows {
        label_w = label_w.max(root.estimate_text_size(&r.label, &label_style())?.0);
    }
    let title = if d.total_rows > n {
        format!(
            "Queue states (TCD): queues ever undetermined (top {n} of {})",
            d.total_rows
        )
    } else {
        "Queue states (TCD): queues ever undetermined".to_string()
    };
    let legend: Vec<(String, Mark)> = [
        QueueState::NonCongestion,
        QueueState::Congestion,
        QueueState::Undetermined,
        QueueState::Checking,
    ]
    .into_iter()
    .map(|st| (state_name(st).to_string(), Mark::Line(color(st), 8)))
    .collect();
    let (plot, legend_area) = layout(root, &title, &legend)?;
    draw_legend(&legend_area, &legend)?;
    let x_desc = format!("simulated time ({tunit}); one bar per sample interval");
    let mut chart = row_chart(&plot, label_w, x_end, n, &x_desc, "switch / port / queue")?;
    let y_of = |i: usize| (n - 1 - i) as f64;
    for (i, row) in d.rows.iter().enumerate() {
        let y = y_of(i);
        chart.draw_series(row.bars.iter().map(|&(s, e, st)| {
            let x0 = s.as_ps() as f64 / tdiv;
            let x1 = e.as_ps() as f64 / tdiv;
            Rectangle::new([(x0, y - 0.35), (x1, y + 0.35)], color(st).filled())
        }))?;
    }
    let labels: Vec<String> = d.rows.iter().map(|r| r.label.clone()).collect();
    draw_row_labels(root, &chart, &labels)
}
