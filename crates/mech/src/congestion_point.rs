//! The congestion point of one switch egress queue: which mark each departing data packet
//! takes, from the queue, RED's decision and the queue's flow-control history, and what the
//! queue decided over time.
//!
//! Two kinds ([`Detector`]):
//! - [`Detector::Red`]: RED/ECN as DCQCN's switches mark. Its state is binary and follows
//!   each decision: congestion after a packet RED marked, non-congestion after one it did not.
//! - [`Detector::Tcd`]: ternary congestion detection ([`crate::tcd::TcdDetector`]), the paper's
//!   state machine or the authors' released rule.
//!
//! Flow control reaches the machine as the queue's latest pause episode, read from the
//! port's pause timers whenever the driver looks ([`CongestionPoint::on_flow_control`]):
//! an episode not seen before is a pause at its start; an episode that has ended is a resume
//! at its end (a RESUME frame or an expired timer alike). So the driver needs no event of
//! its own for a pause or a resume; it reports the history before every decision and
//! whenever it samples the state.
//!
//! Invariants: every departure is counted once, in the state the decision left the queue
//! in; the time in each state sums to the time since the machine was made (up to the last
//! call); a queue never paused is never undetermined or checking; nothing allocates.

use crate::ecn::Mark;
use crate::tcd::{QueueState, TcdDetector};
use crate::units::Time;

/// How a queue decides its marks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detector {
    /// RED alone.
    Red,
    /// Ternary congestion detection.
    Tcd(TcdDetector),
}

/// What one queue decided, over the whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MarkTotals {
    /// Data packets that left the queue.
    pub departures: u64,
    /// Packets the queue decided to mark CE.
    pub ce_marked: u64,
    /// Packets the queue decided to mark UE (whatever they already carried).
    pub ue_marked: u64,
    /// Departures by the state the decision left the queue in ([`state_index`] order).
    pub departures_in: [u64; 4],
    /// Time spent in each state ([`state_index`] order).
    pub time_in: [Time; 4],
}

/// The index of `state` in [`MarkTotals`]' per-state arrays: non-congestion, congestion,
/// undetermined, checking.
pub fn state_index(state: QueueState) -> usize {
    match state {
        QueueState::NonCongestion => 0,
        QueueState::Congestion => 1,
        QueueState::Undetermined => 2,
        QueueState::Checking => 3,
    }
}

/// One egress queue's congestion point.
///
/// One cache line (`repr(C, align(64))`): RED's whole per-packet path reads and writes that
/// line alone. What only TCD needs, including the time in the two states only TCD
/// reaches, lives behind a pointer, so a RED queue costs 64 bytes (a switch has up to 8 per
/// port).
#[derive(Debug, Clone, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct CongestionPoint {
    departures: u64,
    ce_marked: u64,
    /// `None`: RED.
    tcd: Option<Box<TcdPoint>>,
    /// Since when the queue is in its current state.
    since: Time,
    /// Time in non-congestion and in congestion, up to `since`.
    time_in: [Time; 2],
    /// RED's state (a TCD detector keeps its own).
    red_state: QueueState,
}

/// What a TCD congestion point keeps besides RED's counters.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TcdPoint {
    detector: TcdDetector,
    ue_marked: u64,
    departures_in: [u64; 4],
    /// Start of the last pause episode reported to the detector.
    seen_pause: Option<Time>,
    /// End of the last pause episode reported to the detector.
    seen_resume: Option<Time>,
    /// The pause timers' bound (`PauseTimers::latest_until`) at the last report made after
    /// every timer had run out (`Time::MAX` when one could still change then).
    reported_until: Time,
    /// Time in undetermined and in checking, up to `CongestionPoint::since`.
    time_in: [Time; 2],
}

impl CongestionPoint {
    /// A queue in non-congestion at time zero.
    pub fn new(detector: Detector) -> Self {
        CongestionPoint {
            departures: 0,
            ce_marked: 0,
            since: Time::ZERO,
            red_state: QueueState::NonCongestion,
            time_in: [Time::ZERO; 2],
            tcd: match detector {
                Detector::Red => None,
                Detector::Tcd(detector) => Some(Box::new(TcdPoint {
                    detector,
                    ue_marked: 0,
                    departures_in: [0; 4],
                    seen_pause: None,
                    seen_resume: None,
                    reported_until: Time::ZERO,
                    time_in: [Time::ZERO; 2],
                })),
            },
        }
    }

    /// The current state.
    pub fn state(&self) -> QueueState {
        match &self.tcd {
            None => self.red_state,
            Some(t) => t.detector.state(),
        }
    }

    /// Data packets that left, and how many the queue decided to mark CE and UE.
    pub fn counts(&self) -> [u64; 3] {
        let ue = self.tcd.as_ref().map_or(0, |t| t.ue_marked);
        [self.departures, self.ce_marked, ue]
    }

    /// The totals with the time in the current state counted up to `now`.
    pub fn totals_at(&self, now: Time) -> MarkTotals {
        let mut t = MarkTotals {
            departures: self.departures,
            ce_marked: self.ce_marked,
            ue_marked: 0,
            departures_in: [0; 4],
            time_in: [self.time_in[0], self.time_in[1], Time::ZERO, Time::ZERO],
        };
        match &self.tcd {
            Some(tcd) => {
                t.ue_marked = tcd.ue_marked;
                t.departures_in = tcd.departures_in;
                t.time_in[2..].copy_from_slice(&tcd.time_in);
            }
            None => {
                // RED's state after a departure is whether it marked (counted here, not per
                // packet).
                t.departures_in[state_index(QueueState::Congestion)] = t.ce_marked;
                t.departures_in[state_index(QueueState::NonCongestion)] =
                    t.departures - t.ce_marked;
            }
        }
        t.time_in[state_index(self.state())] += now.saturating_sub(self.since);
        t
    }

    /// Whether the pause history may hold something not yet reported, given the port's
    /// pause timers' bound `latest_until` (no timer runs at or after it): a timer ran or
    /// runs after the last report, or one may still change. RED never wants it. Lets a
    /// driver skip reading the timers on the per-packet path of a port that is not paused.
    #[inline(always)]
    pub fn wants_flow_control(&self, now: Time, latest_until: Time) -> bool {
        self.tcd
            .as_ref()
            .is_some_and(|t| latest_until > now || latest_until != t.reported_until)
    }

    /// Reports the queue's latest pause episode at `now` (`None`: it was never paused):
    /// its start and its end (after `now` while it lasts), and the timers' bound
    /// `latest_until`. `queue`: the queue's bytes now, taken as its length at the resume if
    /// the episode has ended since the last report.
    pub fn on_flow_control(
        &mut self,
        now: Time,
        episode: Option<(Time, Time)>,
        latest_until: Time,
        queue: u64,
    ) {
        let CongestionPoint {
            tcd,
            time_in,
            since,
            ..
        } = self;
        let Some(t) = tcd.as_mut() else {
            return;
        };
        // Only a bound that has passed says "nothing new until the next PAUSE": a pause
        // running at this report still has its end to report.
        t.reported_until = if latest_until <= now {
            latest_until
        } else {
            Time::MAX
        };
        let Some((start, end)) = episode else {
            return;
        };
        if t.seen_pause.is_none_or(|s| start > s) {
            let before = t.detector.state();
            t.detector.on_pause(start);
            t.seen_pause = Some(start);
            let after = t.detector.state();
            change(time_in, &mut t.time_in, since, before, after, start);
        }
        if end <= now && t.seen_resume.is_none_or(|s| end > s) {
            let before = t.detector.state();
            t.detector.on_resume(end, queue);
            t.seen_resume = Some(end);
            let after = t.detector.state();
            change(time_in, &mut t.time_in, since, before, after, end);
        }
    }

    /// A data packet leaves at `now`, the queue holding `queue` bytes after it; `red`: RED
    /// would mark it. Returns the mark this queue gives it (to be added to the packet's).
    /// RED's path is a few instructions: it runs for every data packet of every run.
    #[inline(always)]
    pub fn on_departure(&mut self, now: Time, queue: u64, red: bool) -> Mark {
        self.departures += 1;
        if self.tcd.is_none() {
            let state = if red {
                QueueState::Congestion
            } else {
                QueueState::NonCongestion
            };
            // RED is never undetermined nor checking: its time goes to `time_in` alone
            // (calling `change` with an unused array for the other two states cost 0.9 % of
            // the benchmark's instructions).
            if self.red_state != state {
                let at = now.max(self.since);
                self.time_in[usize::from(!red)] += at - self.since;
                self.since = at;
            }
            self.red_state = state;
            self.ce_marked += u64::from(red);
            return if red { Mark::Ce } else { Mark::None };
        }
        self.tcd_departure(now, queue, red)
    }

    fn tcd_departure(&mut self, now: Time, queue: u64, red: bool) -> Mark {
        let Some(t) = self.tcd.as_mut() else {
            unreachable!("RED returned above")
        };
        let before = t.detector.state();
        let mark = t.detector.on_departure(now, queue, red);
        let after = t.detector.state();
        t.departures_in[state_index(after)] += 1;
        match mark {
            Mark::Ce => self.ce_marked += 1,
            Mark::Ue => t.ue_marked += 1,
            Mark::None => {}
        }
        change(
            &mut self.time_in,
            &mut t.time_in,
            &mut self.since,
            before,
            after,
            now,
        );
        mark
    }
}

/// A queue went from state `from` to `to` at `at`: the time since `since` goes to `from`,
/// in `low` (non-congestion, congestion) or `high` (undetermined, checking).
fn change(
    low: &mut [Time; 2],
    high: &mut [Time; 2],
    since: &mut Time,
    from: QueueState,
    to: QueueState,
    at: Time,
) {
    if from != to {
        let at = at.max(*since);
        let i = state_index(from);
        let slot = if i < 2 { &mut low[i] } else { &mut high[i - 2] };
        *slot += at - *since;
        *since = at;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcd::{ReleasedConfig, TcdConfig};

    fn us(n: u64) -> Time {
        Time::from_us(n)
    }

    #[test]
    fn red_state_follows_each_decision_and_time_is_accounted() {
        let mut cp = CongestionPoint::new(Detector::Red);
        assert_eq!(cp.on_departure(us(10), 0, false), Mark::None);
        assert_eq!(cp.on_departure(us(20), 0, true), Mark::Ce);
        assert_eq!(cp.state(), QueueState::Congestion);
        assert_eq!(cp.on_departure(us(25), 0, false), Mark::None);
        let t = cp.totals_at(us(30));
        assert_eq!((t.departures, t.ce_marked, t.ue_marked), (3, 1, 0));
        assert_eq!(t.departures_in, [2, 1, 0, 0]);
        assert_eq!(t.time_in, [us(25), us(5), Time::ZERO, Time::ZERO]);
        // Flow control changes nothing for RED.
        cp.on_flow_control(us(31), Some((us(30), us(31))), us(31), 5000);
        assert_eq!(cp.state(), QueueState::NonCongestion);
    }

    fn paper() -> CongestionPoint {
        CongestionPoint::new(Detector::Tcd(TcdDetector::paper(TcdConfig {
            max_t_on: us(10),
            threshold: 10_000,
        })))
    }

    #[test]
    fn an_episode_is_one_pause_and_one_resume_however_often_it_is_reported() {
        let mut cp = paper();
        // A pause running from 5 us: undetermined from its start.
        cp.on_flow_control(us(6), Some((us(5), us(8))), us(8), 0);
        assert_eq!(cp.state(), QueueState::Undetermined);
        cp.on_flow_control(us(7), Some((us(5), us(9))), us(9), 0); // extended, still running
                                                                   // Ended at 9 us with 20 KB queued; reported twice.
        cp.on_flow_control(us(12), Some((us(5), us(9))), us(9), 20_000);
        assert!(!cp.wants_flow_control(us(13), us(9)), "nothing new since");
        cp.on_flow_control(us(13), Some((us(5), us(9))), us(9), 1);
        assert_eq!(cp.on_departure(us(14), 30_000, true), Mark::Ue);
        // ON for 10 us since 9 us: still undetermined. Then above the threshold and not
        // below the 20 KB at the resume (the second report's 1 B was ignored): congestion.
        assert_eq!(cp.on_departure(us(19), 19_000, true), Mark::Ue);
        assert_eq!(cp.on_departure(us(19) + Time(1), 21_000, true), Mark::Ce);
        assert_eq!(cp.state(), QueueState::Congestion);
        let t = cp.totals_at(us(30));
        assert_eq!((t.departures, t.ue_marked, t.ce_marked), (3, 2, 1));
        assert_eq!(t.departures_in, [0, 1, 2, 0]);
        assert_eq!(
            t.time_in,
            [us(5), us(11) - Time(1), us(14) + Time(1), Time::ZERO]
        );
        assert_eq!(t.time_in.iter().fold(Time::ZERO, |a, &b| a + b), us(30));
    }

    #[test]
    fn a_pause_seen_running_is_looked_at_again_until_its_end_is_reported() {
        let mut cp = CongestionPoint::new(Detector::Tcd(TcdDetector::released(
            ReleasedConfig::default(),
        )));
        // Running at the report: its end (9 us, also the timers' bound) is not known yet.
        cp.on_flow_control(us(6), Some((us(5), us(9))), us(9), 0);
        assert!(
            cp.wants_flow_control(us(20), us(9)),
            "the bound has passed since"
        );
        cp.on_flow_control(us(20), Some((us(5), us(9))), us(9), 0);
        assert_eq!(cp.state(), QueueState::Undetermined, "resumed at 9 us");
        assert!(!cp.wants_flow_control(us(21), us(9)), "now nothing is new");
    }

    #[test]
    fn a_later_episode_is_a_new_pause() {
        let mut cp = CongestionPoint::new(Detector::Tcd(TcdDetector::released(
            ReleasedConfig::default(),
        )));
        assert!(cp.wants_flow_control(us(10), us(2)));
        cp.on_flow_control(us(10), Some((us(1), us(2))), us(2), 0);
        assert_eq!(
            cp.state(),
            QueueState::Undetermined,
            "released: from the resume"
        );
        assert_eq!(cp.on_departure(us(100), 0, false), Mark::None);
        assert_eq!(cp.state(), QueueState::Congestion);
        assert!(cp.wants_flow_control(us(200), us(160)), "a later episode");
        cp.on_flow_control(us(200), Some((us(150), us(160))), us(160), 0);
        assert_eq!(cp.on_departure(us(170), 0, false), Mark::Ue);
    }

    #[test]
    fn a_red_queue_fits_its_hot_path_in_one_line() {
        assert_eq!(std::mem::size_of::<CongestionPoint>(), 64);
        assert_eq!(std::mem::align_of::<CongestionPoint>(), 64);
    }

    #[test]
    fn no_episode_changes_nothing() {
        let mut cp = paper();
        assert!(!cp.wants_flow_control(us(1), Time::ZERO), "never paused");
        cp.on_flow_control(us(1), None, Time::ZERO, 0);
        assert_eq!(cp, paper());
    }
}
