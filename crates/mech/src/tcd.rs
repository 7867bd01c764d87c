//! Ternary congestion detection (TCD, Zhang et al., "Congestion Detection in Lossless
//! Networks", SIGCOMM 2021) at a switch egress queue.
//!
//! In a lossless fabric a queue that its downstream neighbour pauses (or starves of credit)
//! builds up without being the cause of congestion. TCD gives each egress queue a third
//! state beside non-congestion and congestion, *undetermined*: the queue is being turned ON
//! and OFF by flow control, so its length says nothing about whether it is a root. Packets
//! leaving an undetermined queue are marked UE instead of CE, and senders hold their rate on
//! UE-only feedback instead of cutting it.
//!
//! Two detectors, both sans-IO: the driver reports flow-control events
//! ([`TcdDetector::on_pause`], [`TcdDetector::on_resume`], a resume being a RESUME frame or
//! an expired pause timer) and asks, for each departing data packet, for its [`Mark`]
//! ([`TcdDetector::on_departure`]), giving the queue length after the departure and whether
//! RED would mark it (the driver draws RED's random number, so marking stays deterministic).
//!
//! - [`TcdDetector::Paper`]: the paper's state machine (transitions 1-6). Going OFF (a
//!   pause) makes the queue undetermined; it stays so until it has been ON for longer than
//!   `max_t_on` ([`max_t_on`]), then the queue is judged: above the threshold and not
//!   smaller than at the resume, congestion; otherwise non-congestion. ON, the queue moves
//!   between non-congestion and congestion at the threshold. Congestion marks CE where RED
//!   says so.
//! - [`TcdDetector::Released`]: what the authors' released ns-3 code does: undetermined for
//!   a fixed `interval` after each resume (PAUSE itself changes nothing); at the first
//!   departure after that, congestion if
//!   the queue has not shrunk since the resume, else a "checking" state without CE marks
//!   that re-samples the queue every `interval` (grown by `growth` bytes: congestion; at most
//!   `empty` bytes: non-congestion). Outside undetermined and checking, RED alone decides.
//!
//! Invariants: an undetermined queue never marks CE of its own (a packet already CE keeps
//! it: marks only go up, [`Mark::upgrade`]); a queue that was never paused behaves as RED
//! (paper: above the threshold) would; nothing allocates.

use crate::ecn::Mark;
use crate::units::{Rate, Time};

/// The state of an egress queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum QueueState {
    /// Transmitting continuously, queue below the threshold.
    NonCongestion,
    /// Transmitting continuously with a queue: the queue is a root of congestion.
    Congestion,
    /// Turned ON and OFF by flow control: whether it is a root is unknown.
    Undetermined,
    /// (Released code only) just left undetermined with a shrinking queue: watching it.
    Checking,
}

/// The longest ON period a queue can see while downstream flow control still paces it
/// (the paper's max(T_on)), with what stretches it in practice:
/// `2 x hysteresis / rate + 2 x propagation + response + one frame at rate`.
///
/// `hysteresis` is the downstream XOFF-XON distance of the class in bytes (PFC; a credit
/// fabric passes its credit update period as `response` and 0 here), `rate` the link's,
/// `propagation` its one-way delay, `response` the peer's reaction time, `max_frame` the
/// largest frame in bytes.
pub fn max_t_on(
    hysteresis: u64,
    rate: Rate,
    propagation: Time,
    response: Time,
    max_frame: u64,
) -> Time {
    rate.serialization(hysteresis.saturating_mul(2))
        + propagation
        + propagation
        + response
        + rate.serialization(max_frame)
}

/// Parameters of the paper's detector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TcdConfig {
    /// How long a queue must stay ON after a resume before it is judged again.
    pub max_t_on: Time,
    /// Queue length (bytes) above which an ON queue is congested (RED's `kmin` by default).
    pub threshold: u64,
}

/// Parameters of the released code's detector (its constants as defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ReleasedConfig {
    /// Undetermined for this long after a resume; also the checking period. Compared in
    /// whole microseconds, as the code does. Default 40 µs (97 µs in its burst setup).
    pub interval: Time,
    /// Growth over one interval that turns checking into congestion. Default 900 bytes.
    pub growth: u64,
    /// Queue at or below which checking turns into non-congestion. Default 2060 bytes.
    pub empty: u64,
}

impl Default for ReleasedConfig {
    fn default() -> Self {
        ReleasedConfig {
            interval: Time::from_us(40),
            growth: 900,
            empty: 2060,
        }
    }
}

/// One egress queue's TCD detector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TcdDetector {
    /// The paper's semantics.
    Paper {
        /// Parameters.
        cfg: TcdConfig,
        /// Current state.
        state: QueueState,
        /// Paused now.
        off: bool,
        /// The last resume (time, queue then), if any.
        resumed: Option<(Time, u64)>,
    },
    /// The authors' released code.
    Released {
        /// Parameters.
        cfg: ReleasedConfig,
        /// Current state.
        state: QueueState,
        /// The last resume (time, queue then), if any.
        resumed: Option<(Time, u64)>,
        /// Checking: the last sample (time, queue).
        sample: (Time, u64),
    },
}

impl TcdDetector {
    /// The paper's detector, in non-congestion.
    pub fn paper(cfg: TcdConfig) -> Self {
        TcdDetector::Paper {
            cfg,
            state: QueueState::NonCongestion,
            off: false,
            resumed: None,
        }
    }

    /// The released code's detector, in non-congestion.
    pub fn released(cfg: ReleasedConfig) -> Self {
        TcdDetector::Released {
            cfg,
            state: QueueState::NonCongestion,
            resumed: None,
            sample: (Time::ZERO, 0),
        }
    }

    /// The current state.
    pub fn state(&self) -> QueueState {
        match self {
            TcdDetector::Paper { state, .. } | TcdDetector::Released { state, .. } => *state,
        }
    }

    /// The queue was paused (PFC) or ran out of credit at `now`.
    pub fn on_pause(&mut self, _now: Time) {
        if let TcdDetector::Paper { state, off, .. } = self {
            // Transitions 3 and 6. The released code changes nothing on a PAUSE.
            *off = true;
            *state = QueueState::Undetermined;
        }
    }

    /// The queue may send again at `now` (a RESUME, an expired pause timer, new credit),
    /// holding `queue` bytes.
    pub fn on_resume(&mut self, now: Time, queue: u64) {
        match self {
            TcdDetector::Paper { off, resumed, .. } => {
                *off = false;
                *resumed = Some((now, queue));
            }
            TcdDetector::Released { state, resumed, .. } => {
                // Undetermined from the resume on; its first departure judges whether the
                // interval has passed.
                *state = QueueState::Undetermined;
                *resumed = Some((now, queue));
            }
        }
    }

    /// A data packet leaves at `now`, the queue holding `queue` bytes after it; `red`: RED
    /// would mark it. Returns the mark to add to the packet's.
    pub fn on_departure(&mut self, now: Time, queue: u64, red: bool) -> Mark {
        let ce = if red { Mark::Ce } else { Mark::None };
        match self {
            TcdDetector::Paper {
                cfg,
                state,
                off,
                resumed,
            } => {
                if *state == QueueState::Undetermined {
                    let on_long_enough =
                        !*off && resumed.is_none_or(|(t, _)| now.saturating_sub(t) > cfg.max_t_on);
                    if !on_long_enough {
                        return Mark::Ue;
                    }
                    // Transitions 4 and 5: judge the queue.
                    let at_resume = resumed.map_or(0, |(_, q)| q);
                    *state = if queue > cfg.threshold && queue >= at_resume {
                        QueueState::Congestion
                    } else {
                        QueueState::NonCongestion
                    };
                } else if queue > cfg.threshold {
                    *state = QueueState::Congestion; // transition 1
                } else {
                    *state = QueueState::NonCongestion; // transition 2
                }
                if *state == QueueState::Congestion {
                    ce
                } else {
                    Mark::None
                }
            }
            TcdDetector::Released {
                cfg,
                state,
                resumed,
                sample,
            } => {
                let interval_us = cfg.interval.as_ps() / 1_000_000;
                if let Some((t, at_resume)) = *resumed {
                    let on_us = now.saturating_sub(t).as_ps() / 1_000_000;
                    if on_us <= interval_us {
                        *state = QueueState::Undetermined;
                        return Mark::Ue;
                    }
                    if *state == QueueState::Undetermined {
                        if queue >= at_resume {
                            *state = QueueState::Congestion;
                        } else {
                            *state = QueueState::Checking;
                            *sample = (now, queue);
                        }
                    }
                }
                if *state == QueueState::Checking {
                    if now.saturating_sub(sample.0).as_ps() / 1_000_000 >= interval_us {
                        if queue >= sample.1.saturating_add(cfg.growth) {
                            *state = QueueState::Congestion;
                        } else if queue <= cfg.empty {
                            *state = QueueState::NonCongestion;
                        } else {
                            *sample = (now, queue);
                        }
                    }
                    if *state == QueueState::Checking {
                        return Mark::None;
                    }
                }
                ce
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Time {
        Time::from_us(n)
    }

    fn paper() -> TcdDetector {
        TcdDetector::paper(TcdConfig {
            max_t_on: us(10),
            threshold: 100_000,
        })
    }

    #[test]
    fn max_t_on_adds_the_hysteresis_round_trip_response_and_a_frame() {
        // 2 x 3 KB at 100 Gb/s = 480 ns; 2 x 1 us; 0 response; 1500 B = 120 ns.
        let t = max_t_on(3000, Rate::from_gbps(100), us(1), Time::ZERO, 1500);
        assert_eq!(t, Time::from_ns(480 + 2000 + 120));
        // A credit fabric: no hysteresis, the update period as response.
        let c = max_t_on(0, Rate::from_gbps(100), Time::ZERO, us(1), 0);
        assert_eq!(c, us(1));
    }

    #[test]
    fn paper_on_queue_moves_between_non_congestion_and_congestion() {
        let mut d = paper();
        assert_eq!(d.on_departure(us(1), 50_000, true), Mark::None);
        assert_eq!(d.state(), QueueState::NonCongestion);
        // Transition 1: above the threshold; RED decides the CE.
        assert_eq!(d.on_departure(us(2), 150_000, true), Mark::Ce);
        assert_eq!(d.state(), QueueState::Congestion);
        assert_eq!(d.on_departure(us(3), 150_000, false), Mark::None);
        // Transition 2.
        assert_eq!(d.on_departure(us(4), 90_000, true), Mark::None);
        assert_eq!(d.state(), QueueState::NonCongestion);
    }

    #[test]
    fn paper_pause_makes_any_state_undetermined_and_marks_ue() {
        for start_queue in [50_000, 150_000] {
            let mut d = paper();
            d.on_departure(us(1), start_queue, false);
            d.on_pause(us(2)); // transitions 3 and 6
            assert_eq!(d.state(), QueueState::Undetermined);
            d.on_resume(us(3), 120_000);
            // ON for 10 us or less: still undetermined, UE even where RED would mark.
            assert_eq!(d.on_departure(us(13), 200_000, true), Mark::Ue);
            assert_eq!(d.state(), QueueState::Undetermined);
        }
    }

    #[test]
    fn paper_judges_the_queue_after_max_t_on() {
        // Transition 5: above the threshold and not smaller than at the resume.
        let mut d = paper();
        d.on_pause(us(1));
        d.on_resume(us(2), 120_000);
        assert_eq!(d.on_departure(us(13), 130_000, true), Mark::Ce);
        assert_eq!(d.state(), QueueState::Congestion);
        // Transition 4: the queue shrank since the resume.
        let mut d = paper();
        d.on_pause(us(1));
        d.on_resume(us(2), 120_000);
        assert_eq!(d.on_departure(us(13), 110_000, true), Mark::None);
        assert_eq!(d.state(), QueueState::NonCongestion);
        // Paused again before max(T_on): stays undetermined.
        let mut d = paper();
        d.on_pause(us(1));
        d.on_resume(us(2), 0);
        d.on_pause(us(5));
        assert_eq!(d.on_departure(us(20), 130_000, true), Mark::Ue);
    }

    fn released() -> TcdDetector {
        TcdDetector::released(ReleasedConfig::default())
    }

    #[test]
    fn released_is_red_until_a_resume_and_pause_alone_changes_nothing() {
        let mut d = released();
        d.on_pause(us(1));
        assert_eq!(d.on_departure(us(2), 500_000, true), Mark::Ce);
        assert_eq!(d.on_departure(us(3), 500_000, false), Mark::None);
        assert_eq!(d.state(), QueueState::NonCongestion);
    }

    #[test]
    fn released_marks_ue_for_the_interval_after_a_resume_in_whole_microseconds() {
        let mut d = released();
        d.on_resume(us(100), 10_000);
        assert_eq!(d.on_departure(us(100), 50_000, true), Mark::Ue);
        // 40.9 us is 40 whole microseconds: still within the interval.
        assert_eq!(
            d.on_departure(us(140) + Time::from_ns(900), 50_000, true),
            Mark::Ue
        );
        assert_eq!(d.state(), QueueState::Undetermined);
    }

    #[test]
    fn released_leaves_undetermined_for_congestion_when_the_queue_did_not_shrink() {
        let mut d = released();
        d.on_resume(us(100), 10_000);
        d.on_departure(us(101), 10_000, false);
        assert_eq!(d.on_departure(us(141), 10_000, true), Mark::Ce);
        assert_eq!(d.state(), QueueState::Congestion);
    }

    #[test]
    fn released_checking_marks_nothing_and_resolves_by_growth_or_emptiness() {
        let mut d = released();
        d.on_resume(us(100), 50_000);
        d.on_departure(us(101), 50_000, false);
        // Shrunk since the resume: checking, no CE even where RED would mark.
        assert_eq!(d.on_departure(us(141), 40_000, true), Mark::None);
        assert_eq!(d.state(), QueueState::Checking);
        assert_eq!(d.on_departure(us(150), 45_000, true), Mark::None);
        // One interval later, grown by at least 900 B: congestion, RED marks again.
        assert_eq!(d.on_departure(us(181), 41_000, true), Mark::Ce);
        assert_eq!(d.state(), QueueState::Congestion);

        let mut d = released();
        d.on_resume(us(100), 50_000);
        d.on_departure(us(141), 40_000, false);
        // Judged empty: non-congestion, and from this packet on RED alone decides.
        assert_eq!(d.on_departure(us(181), 2_000, true), Mark::Ce);
        assert_eq!(d.state(), QueueState::NonCongestion);
        assert_eq!(d.on_departure(us(182), 2_000, false), Mark::None);

        let mut d = released();
        d.on_resume(us(100), 50_000);
        d.on_departure(us(141), 40_000, false);
        // Neither grown nor empty: a new sample, still checking.
        assert_eq!(d.on_departure(us(181), 40_500, true), Mark::None);
        assert_eq!(d.state(), QueueState::Checking);
        assert_eq!(d.on_departure(us(221), 41_400, true), Mark::Ce);
    }

    proptest::proptest! {
        /// A queue that flow control never paused never leaves {non-congestion,
        /// congestion} and never marks UE, under either detector.
        #[test]
        fn a_queue_never_paused_is_never_undetermined(
            steps in proptest::collection::vec((0u64..200_000, 0u64..300_000, proptest::bool::ANY), 1..200),
            max_t_on_ns in 1u64..100_000,
        ) {
            let mut detectors = [
                TcdDetector::paper(TcdConfig { max_t_on: Time::from_ns(max_t_on_ns), threshold: 100_000 }),
                TcdDetector::released(ReleasedConfig::default()),
            ];
            let mut now = Time::ZERO;
            for (gap_ns, queue, red) in steps {
                now += Time::from_ns(gap_ns);
                for d in &mut detectors {
                    let mark = d.on_departure(now, queue, red);
                    proptest::prop_assert_ne!(mark, Mark::Ue);
                    proptest::prop_assert!(matches!(
                        d.state(),
                        QueueState::NonCongestion | QueueState::Congestion
                    ));
                    if !red {
                        proptest::prop_assert_eq!(mark, Mark::None, "CE only where RED marks");
                    }
                }
            }
        }
    }
}
