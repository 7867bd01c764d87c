//! Timelines of link flow control holding transmitters: the PFC pause timeline
//! (`pfc_timeline`) and the credit-starvation timeline (`credit_timeline`).
//!
//! Both draw one row per (node, port, class) with a bar for every interval in which the
//! row's transmitter was held: paused by PFC, or waiting for credit on a VL. Rows are the
//! [`MAX_ROWS`] with the most PAUSE frames (PFC) or the most time blocked (credits), in
//! (node, port, class) order; the title says how many there were in all.
//!
//! PFC intervals are reconstructed from `pfc_received` (the paused transmitters; from
//! `pfc_sent` if nothing was received, then the rows are the pausing PGs): a PAUSE starts or
//! extends an interval that lasts its timer (quanta × 512 bit times at the port rate taken
//! from [`Summary::pfc`]; until the next frame or the end of the run when the rate is
//! unknown), a RESUME ends it. The peer's response delay is ignored. Credit intervals are
//! the logged blocked episodes (`credit.csv`) as they are.

use super::{
    draw_row_labels, label_style, layout, row_chart, switch_label, time_unit, Area, DrawResult,
    COLORS,
};
use headroom_mech::pfc::quanta_time;
use headroom_mech::units::{Rate, Time};
use headroom_sim::output::{switch_roles, Summary};
use headroom_sim::results::{CreditBlock, PfcRecord, RunResults};
use plotters::prelude::*;
use plotters::style::full_palette::GREY_300;
use std::collections::BTreeMap;

/// Rows of a timeline at most.
pub(super) const MAX_ROWS: usize = 30;

/// One row: a transmitter (or pausing PG) and the intervals it was held.
pub(super) struct TimelineRow {
    label: String,
    /// Its class (priority or VL): picks the bar colour.
    class: u8,
    /// What the row's label counts (PAUSE frames, blocked episodes).
    count: usize,
    /// Held intervals `[start, end)`.
    intervals: Vec<(Time, Time)>,
}

/// A timeline plot's rows and texts.
pub(super) struct TimelineData {
    pub(super) rows: Vec<TimelineRow>,
    title: String,
    /// Noun after a row's count in its label ("PAUSE", "waits").
    count_noun: &'static str,
    y_desc: &'static str,
    end: Time,
}

/// The frames of one PFC timeline row, keyed by (node, port, priority).
type RowFrames<'a> = ((u32, u16, u8), Vec<&'a PfcRecord>);

/// Paused intervals from the frames of one (node, port, priority), in time order.
fn pause_intervals(frames: &[&PfcRecord], rate: Option<Rate>, end: Time) -> Vec<(Time, Time)> {
    let mut out = Vec::new();
    let mut open: Option<(Time, Time)> = None;
    for (i, r) in frames.iter().enumerate() {
        if r.quanta == 0 {
            if let Some((s, e)) = open.take() {
                out.push((s, e.min(r.time)));
            }
            continue;
        }
        let until = match rate {
            Some(rate) if rate.bps() > 0 => r.time + quanta_time(rate, r.quanta),
            // Unknown rate: until the next frame (which renews or ends it) or the end.
            _ => frames.get(i + 1).map_or(end, |n| n.time.max(r.time)),
        };
        open = match open {
            Some((s, e)) if e > r.time => Some((s, until)),
            other => {
                if let Some(iv) = other {
                    out.push(iv);
                }
                Some((r.time, until))
            }
        };
    }
    if let Some((s, e)) = open {
        out.push((s, e.min(end)));
    }
    out.retain(|(s, e)| e >= s);
    out
}

/// A row's node: a switch by its role, or a host.
fn node_label(node: u32, is_switch: bool, roles: &BTreeMap<u32, &'static str>) -> String {
    if is_switch {
        switch_label(node, roles)
    } else {
        format!("host {node}")
    }
}

/// "top n of m by what" when rows were left out.
fn title(what: String, shown: usize, total: usize, by: &str) -> String {
    if total > shown {
        format!("{what} (top {shown} of {total} by {by})")
    } else {
        what
    }
}

impl TimelineData {
    /// The PFC pause timeline, or `None` without PFC frames.
    pub(super) fn pfc(results: &RunResults, summary: &Summary) -> Option<TimelineData> {
        let (records, received) = if results.pfc_received.is_empty() {
            (&results.pfc_sent, false)
        } else {
            (&results.pfc_received, true)
        };
        if records.is_empty() {
            return None;
        }
        let mut by_row: BTreeMap<(u32, u16, u8), Vec<&PfcRecord>> = BTreeMap::new();
        for r in records {
            by_row.entry((r.node, r.port, r.prio)).or_default().push(r);
        }
        let total_rows = by_row.len();
        let end = records
            .iter()
            .map(|r| r.time)
            .max()
            .unwrap_or(Time::ZERO)
            .max(results.end_time);
        let mut keyed: Vec<RowFrames<'_>> = by_row.into_iter().collect();
        let pauses = |v: &[&PfcRecord]| v.iter().filter(|r| r.quanta != 0).count();
        keyed.sort_by(|a, b| pauses(&b.1).cmp(&pauses(&a.1)).then(a.0.cmp(&b.0)));
        keyed.truncate(MAX_ROWS);
        keyed.sort_by_key(|k| k.0);
        let roles = switch_roles(results);
        let rows: Vec<TimelineRow> = keyed
            .into_iter()
            .map(|((node, port, prio), frames)| {
                let rate = summary
                    .pfc
                    .ports
                    .iter()
                    .find(|p| p.node == node && p.port == port && p.rate_bps > 0)
                    .map(|p| Rate(p.rate_bps));
                let is_switch = frames.first().is_some_and(|r| r.is_switch);
                TimelineRow {
                    label: format!(
                        "{} port {port} priority {prio}",
                        node_label(node, is_switch, &roles)
                    ),
                    class: prio,
                    count: pauses(&frames),
                    intervals: pause_intervals(&frames, rate, end),
                }
            })
            .collect();
        let what = if received {
            "paused transmitters"
        } else {
            "pausing ingress PGs"
        };
        Some(TimelineData {
            title: title(
                format!("PFC pause timeline: {what}"),
                rows.len(),
                total_rows,
                "PAUSE count",
            ),
            rows,
            count_noun: "PAUSE",
            y_desc: "node / port / priority",
            end,
        })
    }

    /// The credit-starvation timeline, or `None` without a logged blocked episode.
    pub(super) fn credit(results: &RunResults) -> Option<TimelineData> {
        if results.credit_blocks.is_empty() {
            return None;
        }
        let mut by_row: BTreeMap<(u32, u16, u8), Vec<&CreditBlock>> = BTreeMap::new();
        for b in &results.credit_blocks {
            by_row.entry((b.node, b.port, b.vl)).or_default().push(b);
        }
        let total_rows = by_row.len();
        let end = results
            .credit_blocks
            .iter()
            .map(|b| b.end)
            .max()
            .unwrap_or(Time::ZERO)
            .max(results.end_time);
        let blocked =
            |v: &[&CreditBlock]| v.iter().fold(Time::ZERO, |sum, b| sum + (b.end - b.start));
        let mut keyed: Vec<_> = by_row.into_iter().collect();
        keyed.sort_by(|a, b| blocked(&b.1).cmp(&blocked(&a.1)).then(a.0.cmp(&b.0)));
        keyed.truncate(MAX_ROWS);
        keyed.sort_by_key(|k| k.0);
        let roles = switch_roles(results);
        let rows: Vec<TimelineRow> = keyed
            .into_iter()
            .map(|((node, port, vl), episodes)| {
                let is_switch = episodes.first().is_some_and(|b| b.is_switch);
                TimelineRow {
                    label: format!(
                        "{} port {port} VL {vl}",
                        node_label(node, is_switch, &roles)
                    ),
                    class: vl,
                    count: episodes.len(),
                    intervals: episodes.iter().map(|b| (b.start, b.end)).collect(),
                }
            })
            .collect();
        Some(TimelineData {
            title: title(
                "Credit starvation: transmitters waiting for credit".to_string(),
                rows.len(),
                total_rows,
                "time blocked",
            ),
            rows,
            count_noun: "waits",
            y_desc: "node / port / VL",
            end,
        })
    }
}

/// Draws a timeline: one row per transmitter, a bar per held interval.
pub(super) fn timeline_chart<DB: DrawingBackend>(
    root: &Area<DB>,
    d: &TimelineData,
) -> DrawResult<DB> {
    let n = d.rows.len();
    let (tdiv, tunit) = time_unit(d.end);
    let x_end = (d.end.as_ps() as f64 / tdiv).max(1e-9);
    let labels: Vec<String> = d
        .rows
        .iter()
        .map(|r| format!("{} ({} {})", r.label, r.count, d.count_noun))
        .collect();
    let mut label_w = 100;
    for l in &labels {
        label_w = label_w.max(root.estimate_text_size(l, &label_style())?.0);
    }
    // Colors tell classes apart; the row labels name them, so no legend is needed.
    let (plot, _) = layout(root, &d.title, &[])?;
    let x_desc = format!("simulated time ({tunit})");
    let mut chart = row_chart(&plot, label_w, x_end, n, &x_desc, d.y_desc)?;
    // Bars narrower than two pixels are widened so short intervals stay visible.
    let plot_w = f64::from(chart.plotting_area().dim_in_pixel().0.max(1));
    let min_w = 2.0 * x_end / plot_w;
    // Row 0 at the top.
    let y_of = |i: usize| (n - 1 - i) as f64;
    for (i, row) in d.rows.iter().enumerate() {
        let y = y_of(i);
        let color = COLORS[usize::from(row.class) % COLORS.len()];
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, y), (x_end, y)],
            GREY_300.stroke_width(1),
        )))?;
        chart.draw_series(row.intervals.iter().map(|&(s, e)| {
            let x0 = s.as_ps() as f64 / tdiv;
            let x1 = (e.as_ps() as f64 / tdiv).max(x0 + min_w);
            Rectangle::new([(x0, y - 0.35), (x1, y + 0.35)], color.filled())
        }))?;
    }
    draw_row_labels(root, &chart, &labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t_ns: u64, quanta: u16) -> PfcRecord {
        PfcRecord {
            time: Time::from_ns(t_ns),
            node: 1,
            is_switch: false,
            port: 0,
            prio: 3,
            port_level: false,
            quanta,
        }
    }

    #[test]
    fn pause_intervals_follow_frames() {
        // 100 Gb/s: one quantum is 5.12 ns; 1000 quanta = 5120 ns.
        let rate = Some(Rate::from_gbps(100));
        let end = Time::from_us(100);
        // PAUSE then RESUME.
        let f = [rec(100, 1000), rec(300, 0)];
        let v = pause_intervals(&f.iter().collect::<Vec<_>>(), rate, end);
        assert_eq!(v, vec![(Time::from_ns(100), Time::from_ns(300))]);
        // PAUSE expiring, then a later PAUSE: two intervals.
        let f = [rec(100, 1000), rec(10_000, 1000)];
        let v = pause_intervals(&f.iter().collect::<Vec<_>>(), rate, end);
        assert_eq!(
            v,
            vec![
                (Time::from_ns(100), Time::from_ns(5_220)),
                (Time::from_ns(10_000), Time::from_ns(15_120))
            ]
        );
        // A refresh before expiry extends one interval.
        let f = [rec(100, 1000), rec(2_000, 1000), rec(4_000, 0)];
        let v = pause_intervals(&f.iter().collect::<Vec<_>>(), rate, end);
        assert_eq!(v, vec![(Time::from_ns(100), Time::from_ns(4_000))]);
        // Unknown rate: until the next frame or the end.
        let f = [rec(100, 1000)];
        let v = pause_intervals(&f.iter().collect::<Vec<_>>(), None, end);
        assert_eq!(v, vec![(Time::from_ns(100), end)]);
    }

    fn block(node: u32, vl: u8, start_ns: u64, end_ns: u64) -> CreditBlock {
        CreditBlock {
            start: Time::from_ns(start_ns),
            end: Time::from_ns(end_ns),
            node,
            is_switch: false,
            port: 0,
            vl,
        }
    }

    #[test]
    fn credit_rows_are_the_longest_blocked_in_node_order() {
        let mut r = RunResults::default();
        assert!(TimelineData::credit(&r).is_none());
        // Node 40 + i waits i x 10 ns once on VL 1; node 1 waits twice, 1 us in all.
        r.credit_blocks = (0..40)
            .map(|i| block(40 + i, 1, 0, 10 * u64::from(i)))
            .chain([block(1, 2, 0, 400), block(1, 2, 1_000, 1_600)])
            .collect();
        r.end_time = Time::from_us(2);
        let d = TimelineData::credit(&r).expect("rows");
        assert_eq!(d.rows.len(), MAX_ROWS);
        assert!(
            d.title.contains("top 30 of 41 by time blocked"),
            "{}",
            d.title
        );
        assert_eq!(d.rows[0].label, "host 1 port 0 VL 2");
        assert_eq!(d.rows[0].count, 2);
        assert_eq!(
            d.rows[0].intervals,
            [
                (Time::ZERO, Time::from_ns(400)),
                (Time::from_ns(1_000), Time::from_ns(1_600))
            ]
        );
        // The 29 other rows are the nodes that waited longest: 51..=79.
        assert_eq!(d.rows[1].label, "host 51 port 0 VL 1");
        assert_eq!(d.rows[29].label, "host 79 port 0 VL 1");
        assert_eq!(d.end, Time::from_us(2));
    }
}
