//! What switch egress queues decided about congestion marks: the `marking` section of
//! `summary.json`, its line in the text summary, and `marks.csv`.
//!
//! Invariants: only queues that sent data appear; fractions are of the queue's own data
//! departures; `marks.csv` rows are in (time, node, port, queue) order, as the run
//! recorded them.

use super::format_ns;
use super::summary::ns_f64;
use crate::config::SimConfig;
use crate::results::{MarkSample, RunResults};
use headroom_mech::congestion_point::state_index;
use headroom_mech::tcd::QueueState;
use serde::Serialize;
use std::io::{self, Write};

/// Marking decisions of the run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MarkingSummary {
    /// The detector: `red`, `tcd` or `tcd-released`.
    pub detector: String,
    /// Data packets that left marking queues.
    pub departures: u64,
    /// Of them, packets a queue decided to mark CE.
    pub ce_marked: u64,
    /// Of them, packets a queue decided to mark UE.
    pub ue_marked: u64,
    /// Per queue that sent data, by node, port and queue.
    pub queues: Vec<QueueMarkingSummary>,
}

/// One queue's decisions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueMarkingSummary {
    /// Switch node.
    pub node: u32,
    /// Local port.
    pub port: u16,
    /// The node at the other end.
    pub peer: u32,
    /// Queue (priority).
    pub queue: u8,
    /// max(T_on) of the paper's TCD detector, ns (absent for other detectors).
    pub max_t_on_ns: Option<f64>,
    /// Data packets that left.
    pub departures: u64,
    /// Packets this queue decided to mark CE.
    pub ce_marked: u64,
    /// Packets this queue decided to mark UE.
    pub ue_marked: u64,
    /// `ce_marked / departures`.
    pub ce_fraction: f64,
    /// `ue_marked / departures`.
    pub ue_fraction: f64,
    /// Departures by the state each decision left the queue in.
    pub departures_by_state: StateCounts<u64>,
    /// Time in each state, ns, to the end of the run.
    pub time_in_state_ns: StateCounts<f64>,
}

/// A value per queue state.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateCounts<T> {
    /// Non-congestion.
    pub non_congestion: T,
    /// Congestion.
    pub congestion: T,
    /// Undetermined (paused by flow control).
    pub undetermined: T,
    /// Checking (the released TCD code's fourth state).
    pub checking: T,
}

impl<T: Copy> StateCounts<T> {
    fn from_array(a: [T; 4]) -> Self {
        StateCounts {
            non_congestion: a[0],
            congestion: a[1],
            undetermined: a[2],
            checking: a[3],
        }
    }
}

/// The name of a state in `marks.csv`.
pub fn state_name(state: QueueState) -> &'static str {
    ["non-congestion", "congestion", "undetermined", "checking"][state_index(state)]
}

impl MarkingSummary {
    /// Queues that were undetermined at some departure.
    pub fn undetermined_queues(&self) -> usize {
        self.queues
            .iter()
            .filter(|q| q.departures_by_state.undetermined > 0)
            .count()
    }

    /// The `marking` section of the summary of `results`, run with `cfg`.
    pub fn of(results: &RunResults, cfg: &SimConfig) -> MarkingSummary {
        let fraction = |n: u64, d: u64| if d == 0 { 0.0 } else { n as f64 / d as f64 };
        let queues: Vec<QueueMarkingSummary> = results
            .marking
            .iter()
            .filter(|m| m.totals.departures > 0)
            .map(|m| {
                let t = &m.totals;
                QueueMarkingSummary {
                    node: m.node,
                    port: m.port,
                    peer: m.peer,
                    queue: m.queue,
                    max_t_on_ns: m.max_t_on.map(ns_f64),
                    departures: t.departures,
                    ce_marked: t.ce_marked,
                    ue_marked: t.ue_marked,
                    ce_fraction: fraction(t.ce_marked, t.departures),
                    ue_fraction: fraction(t.ue_marked, t.departures),
                    departures_by_state: StateCounts::from_array(t.departures_in),
                    time_in_state_ns: StateCounts::from_array(t.time_in.map(ns_f64)),
                }
            })
            .collect();
        MarkingSummary {
            detector: cfg.switch.ecn.detector.name().to_string(),
            departures: queues.iter().map(|q| q.departures).sum(),
            ce_marked: queues.iter().map(|q| q.ce_marked).sum(),
            ue_marked: queues.iter().map(|q| q.ue_marked).sum(),
            queues,
        }
    }
}

/// The marks in one line: the detector, CE and UE counts and shares, how many queues were
/// ever undetermined.
pub fn marking_line(m: &MarkingSummary) -> String {
    let pct = |n: u64| 100.0 * n as f64 / m.departures.max(1) as f64;
    let undetermined = m.undetermined_queues();
    format!(
        "detector {}: {} CE ({:.1}%), {} UE ({:.1}%) of {} data departures at {} queue(s); \
         {} queue(s) undetermined at times",
        m.detector,
        m.ce_marked,
        pct(m.ce_marked),
        m.ue_marked,
        pct(m.ue_marked),
        m.departures,
        m.queues.len(),
        undetermined
    )
}

/// `marks.csv`: one row per sample interval and queue that sent data in it.
pub fn write_marks_csv(w: &mut dyn Write, samples: &[MarkSample]) -> io::Result<()> {
    writeln!(
        w,
        "time_ns,node,port,peer,queue,departures,ce_marked,ue_marked,state"
    )?;
    for s in samples {
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{}",
            format_ns(s.time),
            s.node,
            s.port,
            s.peer,
            s.queue,
            s.departures,
            s.ce_marked,
            s.ue_marked,
            state_name(s.state)
        )?;
    }
    Ok(())
}
