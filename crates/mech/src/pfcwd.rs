//! PFC watchdog: a queue paused for too long is taken out of PFC for a while.
//!
//! What SONiC's `pfcwd` does on a switch: at each poll, an egress queue that holds data
//! and has been paused without a break for the detection time is in a *PFC storm* (a
//! stuck peer, or a deadlock). From then on the queue ignores PAUSE frames for its class
//! and, with [`WatchdogAction::Drop`], discards what it holds and whatever arrives for it;
//! with [`WatchdogAction::Forward`], it keeps sending as if never paused. Once no PAUSE
//! frame for the class has arrived for the restoration time, a poll restores the queue.
//!
//! Invariants: a queue is in a storm only after a poll that saw it paused with data for at
//! least the detection time, and leaves it only at a poll at least the restoration time
//! after the last PAUSE frame that arrived for it; every storm is counted once when it
//! starts and once when it ends.

use crate::units::Time;

/// What a queue in a storm does with its traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum WatchdogAction {
    /// Discard the queued packets and every packet that arrives for the queue.
    Drop,
    /// Send as if the queue were not paused (the peer may then drop).
    Forward,
}

/// Watchdog parameters, one set for every lossless queue of a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WatchdogConfig {
    /// A queue paused with data this long is in a storm.
    pub detection: Time,
    /// A storm ends once no PAUSE frame has arrived for this long.
    pub restoration: Time,
    /// What a queue in a storm does.
    pub action: WatchdogAction,
    /// Time between polls (SONiC's `pfcwd interval`).
    pub interval: Time,
}

impl WatchdogConfig {
    /// SONiC's defaults: 200 ms detection and restoration, drop, polled every 200 ms.
    pub fn sonic_default() -> Self {
        WatchdogConfig {
            detection: Time::from_ms(200),
            restoration: Time::from_ms(200),
            action: WatchdogAction::Drop,
            interval: Time::from_ms(200),
        }
    }
}

/// What a poll observed of one queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueObservation {
    /// The queue holds data.
    pub holds_data: bool,
    /// Since when its class has been paused without a break, if it is paused.
    pub paused_since: Option<Time>,
}

/// A change of a queue's watchdog state, for the driver to act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchdogEvent {
    /// The queue entered a storm: stop honouring PAUSE (and, with `Drop`, discard).
    StormDetected,
    /// The storm is over: honour PAUSE again.
    StormRestored,
}

/// The watchdog of one egress queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueWatchdog {
    /// In a storm since this time.
    storm_since: Option<Time>,
    /// When the last PAUSE frame for the class arrived.
    last_pause: Option<Time>,
    /// Storms detected.
    pub storms: u32,
    /// Storms restored.
    pub restorations: u32,
    /// Time spent in storms that have ended.
    pub storm_time: Time,
}

impl QueueWatchdog {
    /// Whether the queue is in a storm (ignores PAUSE for its class).
    pub fn in_storm(&self) -> bool {
        self.storm_since.is_some()
    }

    /// A PAUSE frame (non-zero quanta) for the queue's class arrived at `now`.
    pub fn on_pause_frame(&mut self, now: Time) {
        self.last_pause = Some(now);
    }

    /// Time spent in storms up to `now`, the current one included.
    pub fn storm_time_at(&self, now: Time) -> Time {
        match self.storm_since {
            Some(since) => self.storm_time + Time(now.as_ps().saturating_sub(since.as_ps())),
            None => self.storm_time,
        }
    }

    /// A poll at `now` that observed `obs`: the state change it makes, if any.
    pub fn poll(
        &mut self,
        now: Time,
        obs: QueueObservation,
        cfg: &WatchdogConfig,
    ) -> Option<WatchdogEvent> {
        match self.storm_since {
            None => {
                let since = obs.paused_since.filter(|_| obs.holds_data)?;
                if now.as_ps().saturating_sub(since.as_ps()) < cfg.detection.as_ps() {
                    return None;
                }
                self.storm_since = Some(now);
                self.storms += 1;
                Some(WatchdogEvent::StormDetected)
            }
            Some(since) => {
                let quiet = self.last_pause.is_none_or(|t| {
                    now.as_ps().saturating_sub(t.as_ps()) >= cfg.restoration.as_ps()
                });
                if !quiet {
                    return None;
                }
                self.storm_since = None;
                self.restorations += 1;
                self.storm_time += Time(now.as_ps().saturating_sub(since.as_ps()));
                Some(WatchdogEvent::StormRestored)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> WatchdogConfig {
        WatchdogConfig {
            detection: Time::from_ms(2),
            restoration: Time::from_ms(3),
            action: WatchdogAction::Drop,
            interval: Time::from_ms(1),
        }
    }

    fn paused(since_ms: u64) -> QueueObservation {
        QueueObservation {
            holds_data: true,
            paused_since: Some(Time::from_ms(since_ms)),
        }
    }

    #[test]
    fn a_queue_paused_with_data_for_the_detection_time_is_in_a_storm() {
        let mut w = QueueWatchdog::default();
        let c = cfg();
        assert_eq!(w.poll(Time::from_ms(1), paused(0), &c), None, "1 ms < 2 ms");
        assert_eq!(
            w.poll(Time::from_ms(2), paused(0), &c),
            Some(WatchdogEvent::StormDetected)
        );
        assert!(w.in_storm());
        assert_eq!(w.storms, 1);
    }

    #[test]
    fn an_empty_or_unpaused_queue_is_never_in_a_storm() {
        let mut w = QueueWatchdog::default();
        let c = cfg();
        let empty = QueueObservation {
            holds_data: false,
            paused_since: Some(Time::ZERO),
        };
        assert_eq!(w.poll(Time::from_ms(10), empty, &c), None);
        let flowing = QueueObservation {
            holds_data: true,
            paused_since: None,
        };
        assert_eq!(w.poll(Time::from_ms(10), flowing, &c), None);
        assert_eq!(w.storms, 0);
    }

    #[test]
    fn a_storm_ends_only_after_the_restoration_time_without_pause_frames() {
        let mut w = QueueWatchdog::default();
        let c = cfg();
        w.on_pause_frame(Time::from_ms(1));
        w.poll(Time::from_ms(2), paused(0), &c);
        w.on_pause_frame(Time::from_ms(3)); // the peer still pauses
        assert_eq!(
            w.poll(Time::from_ms(5), paused(0), &c),
            None,
            "2 ms since a PAUSE"
        );
        assert_eq!(
            w.poll(Time::from_ms(6), paused(0), &c),
            Some(WatchdogEvent::StormRestored)
        );
        assert!(!w.in_storm());
        assert_eq!((w.storms, w.restorations), (1, 1));
        assert_eq!(w.storm_time, Time::from_ms(4));
        assert_eq!(w.storm_time_at(Time::from_ms(9)), Time::from_ms(4));
    }

    #[test]
    fn storm_time_counts_the_current_storm() {
        let mut w = QueueWatchdog::default();
        w.poll(Time::from_ms(2), paused(0), &cfg());
        assert_eq!(w.storm_time_at(Time::from_ms(7)), Time::from_ms(5));
    }
}
