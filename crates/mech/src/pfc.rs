//! Priority flow control (IEEE 802.1Qbb).
//!
//! Two halves, one per side of a link:
//! - [`PauseGenerator`], at a congested switch or NIC ingress, one per (port, priority):
//!   turns XOFF/XON decisions into PAUSE/RESUME frames and refreshes the PAUSE before its
//!   timer runs out while the queue is still congested.
//! - [`PauseTimers`], at a transmitter, one per port: holds the eight pause timers set by
//!   received frames and answers whether a class may start a frame now.
//!
//! A pause quantum is 512 bit times at the port rate. A frame with a non-zero timer pauses
//! its class from `arrival + response_time` (the peer keeps sending for its response time)
//! until `arrival + response_time + quanta × 512 bit times`; a zero timer (RESUME) ends the
//! pause on arrival. A refresh that arrives while a class is paused extends it without a gap.
//!
//! Invariants: the generator never sends RESUME without a preceding PAUSE; a frame already
//! started is never interrupted (the driver only asks [`PauseTimers::is_paused`] before
//! starting one); paused time is accounted exactly, interval by interval.

use crate::units::{Rate, Time};
use crate::PRIORITIES;
use serde::Serialize;

/// Longest pause a frame can ask for.
pub const MAX_QUANTA: u16 = u16::MAX;

/// Size of a PFC frame on the wire before Ethernet preamble and gap (a minimum frame).
pub const PFC_FRAME_BYTES: u64 = 64;

/// Duration of `quanta` pause quanta at `rate`.
pub fn quanta_time(rate: Rate, quanta: u16) -> Time {
    Rate::serialization(rate, u64::from(quanta) * 512 / 8)
}

/// How the sender of PAUSE keeps a queue paused and lets it go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PfcConfig {
    /// Timer carried by each PAUSE.
    pub quanta: u16,
    /// Re-send PAUSE before the timer expires while still in XOFF. Refreshes are sent when
    /// half of the timer has elapsed.
    pub refresh: bool,
    /// Send an explicit RESUME (timer 0) on XON; without it the peer resumes when the
    /// timer expires.
    pub send_resume: bool,
}

impl PfcConfig {
    /// Short refreshed pauses, no RESUME frames: traffic resumes when timers run out.
    pub fn refresh_mode(quanta: u16) -> Self {
        PfcConfig {
            quanta,
            refresh: true,
            send_resume: false,
        }
    }
    /// One long pause, refreshed only if congestion outlasts it, ended by an explicit RESUME.
    pub fn explicit_resume_mode() -> Self {
        PfcConfig {
            quanta: MAX_QUANTA,
            refresh: true,
            send_resume: true,
        }
    }
}

impl Default for PfcConfig {
    fn default() -> Self {
        Self::explicit_resume_mode()
    }
}

/// A PFC frame to send: the class and its timer (0 = RESUME).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcFrame {
    /// Priority whose timer the frame sets.
    pub prio: u8,
    /// Timer in quanta; 0 resumes.
    pub quanta: u16,
}

/// The PAUSE sender of one (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PauseGenerator {
    xoff: bool,
    refresh_at: Option<Time>,
}

impl PauseGenerator {
    /// Whether the queue is in XOFF.
    pub fn is_xoff(&self) -> bool {
        self.xoff
    }

    /// The queue entered XOFF at `now`: the PAUSE frame to send.
    pub fn on_xoff(&mut self, now: Time, cfg: &PfcConfig, rate: Rate) -> Option<PfcFrame> {
        if self.xoff {
            return None;
        }
        self.xoff = true;
        Some(self.pause(now, cfg, rate))
    }

    fn pause(&mut self, now: Time, cfg: &PfcConfig, rate: Rate) -> PfcFrame {
        let half = Time(quanta_time(rate, cfg.quanta).as_ps() / 2);
        self.refresh_at = (cfg.refresh && half > Time::ZERO).then_some(now + half);
        PfcFrame {
            prio: 0,
            quanta: cfg.quanta,
        }
    }

    /// The queue left XOFF at `now`: the RESUME to send, if the mode sends one.
    pub fn on_xon(&mut self, _now: Time, cfg: &PfcConfig) -> Option<PfcFrame> {
        if !self.xoff {
            return None;
        }
        self.xoff = false;
        self.refresh_at = None;
        cfg.send_resume.then_some(PfcFrame { prio: 0, quanta: 0 })
    }

    /// When the next refresh is due, if one is pending.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.refresh_at
    }

    /// Sends the refresh PAUSE if it is due at `now` and the queue is still in XOFF.
    pub fn handle_timeout(&mut self, now: Time, cfg: &PfcConfig, rate: Rate) -> Option<PfcFrame> {
        match self.refresh_at {
            Some(t) if self.xoff && t <= now => Some(self.pause(now, cfg, rate)),
            _ => None,
        }
    }
}

/// The pause timers of one transmitting port: one per class, plus the port-level timer set
/// by a frame that enables all eight classes (DSH's port-level pause). A class may send only
/// if neither its own timer nor the port's is running (the OR of the two).
///
/// `repr(C)`: `latest_until`, the field read on every transmission, comes first, so that a
/// port can keep it on a cache line it touches anyway.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PauseTimers {
    /// No timer runs at or after this time (the latest end any timer was given; an XON
    /// that cuts a timer short leaves it as an upper bound). Lets the common question "is
    /// anything paused?" be answered from one field.
    latest_until: Time,
    from: [Time; PRIORITIES + 1],
    until: [Time; PRIORITIES + 1],
    accounted_to: [Time; PRIORITIES + 1],
    paused_total: [Time; PRIORITIES + 1],
}

/// Index of the port-level timer.
const PORT: usize = PRIORITIES;

/// The class-enable vector of a port-level PFC frame: every class.
pub const ALL_CLASSES: u8 = 0xff;

impl PauseTimers {
    /// A frame setting `prio`'s timer to `quanta` arrived at `now`; the port runs at `rate`
    /// and keeps sending for `response` after a PAUSE arrives.
    pub fn on_frame(&mut self, now: Time, prio: u8, quanta: u16, rate: Rate, response: Time) {
        self.set(now, usize::from(prio), quanta, rate, response);
    }

    /// A port-level frame (all classes, DSH) with timer `quanta` arrived at `now`.
    pub fn on_port_frame(&mut self, now: Time, quanta: u16, rate: Rate, response: Time) {
        self.set(now, PORT, quanta, rate, response);
    }

    fn set(&mut self, now: Time, p: usize, quanta: u16, rate: Rate, response: Time) {
        self.settle(now, p);
        if quanta == 0 {
            self.until[p] = self.until[p].min(now);
            return;
        }
        // A PAUSE that finds its timer pending (still within an earlier PAUSE's response
        // time) or running extends it; only a PAUSE after the timer ran out starts anew.
        if now >= self.until[p] {
            self.from[p] = now + response;
        }
        self.until[p] = now + response + quanta_time(rate, quanta);
        self.latest_until = self.latest_until.max(self.until[p]);
    }

    fn settle(&mut self, now: Time, p: usize) {
        let start = self.from[p].max(self.accounted_to[p]);
        let end = self.until[p].min(now);
        if end > start {
            self.paused_total[p] += end - start;
        }
        self.accounted_to[p] = self.accounted_to[p].max(now);
    }

    fn timer_running(&self, now: Time, p: usize) -> bool {
        self.from[p] <= now && now < self.until[p]
    }

    /// No timer runs at or after this time (an upper bound: a RESUME that cuts a timer short
    /// leaves it); changes only when a PAUSE arrives.
    #[inline]
    pub fn latest_until(&self) -> Time {
        self.latest_until
    }

    /// Whether `prio` may not start a frame at `now` (its class or its port is paused).
    #[inline]
    pub fn is_paused(&self, now: Time, prio: u8) -> bool {
        if now >= self.latest_until {
            return false;
        }
        self.timer_running(now, usize::from(prio)) || self.timer_running(now, PORT)
    }

    /// Since when `prio` has been paused without a break (by its class or by the port), if
    /// it is paused at `now`: the earliest start of a timer that runs now (a PAUSE that
    /// finds its timer running extends it without a new start).
    pub fn paused_since(&self, now: Time, prio: u8) -> Option<Time> {
        [usize::from(prio), PORT]
            .into_iter()
            .filter(|&p| self.timer_running(now, p))
            .map(|p| self.from[p])
            .min()
    }

    /// The latest pause of `prio` (by its class's timer or the port's) that has begun by
    /// `now`: its start and its end (after `now` while it runs); `None` if none has. A
    /// RESUME that arrives before a pause begins leaves no pause. Only the latest episode
    /// is kept: a frame that starts a new one replaces the record of one that ended, so a
    /// reader that must see every episode reads before each frame is applied.
    pub fn last_pause(&self, now: Time, prio: u8) -> Option<(Time, Time)> {
        [usize::from(prio), PORT]
            .into_iter()
            .filter(|&p| self.from[p] < self.until[p] && self.from[p] <= now)
            .map(|p| (self.from[p], self.until[p]))
            .max_by_key(|&(from, until)| (until, from))
    }

    /// Whether a port-level PAUSE (every class) is in force at `now`.
    pub fn port_paused(&self, now: Time) -> bool {
        self.timer_running(now, PORT)
    }

    fn timer_change(&self, now: Time, p: usize) -> Option<Time> {
        if now < self.from[p] && self.from[p] < self.until[p] {
            Some(self.from[p])
        } else if now < self.until[p] {
            Some(self.until[p])
        } else {
            None
        }
    }

    /// When `prio`'s paused state may next change on its own (a pause starts or expires).
    pub fn next_change(&self, now: Time, prio: u8) -> Option<Time> {
        let p = usize::from(prio);
        match (self.timer_change(now, p), self.timer_change(now, PORT)) {
            // Both running: the class is free only when the later one ends.
            (Some(a), Some(b)) if self.timer_running(now, p) && self.timer_running(now, PORT) => {
                Some(a.max(b))
            }
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Total time `prio`'s own timer has kept it paused, up to `now`.
    pub fn paused_time(&mut self, now: Time, prio: u8) -> Time {
        let p = usize::from(prio);
        self.settle(now, p);
        self.paused_total[p]
    }

    /// Total time the port-level timer has kept the whole port paused, up to `now`.
    pub fn port_paused_time(&mut self, now: Time) -> Time {
        self.settle(now, PORT);
        self.paused_total[PORT]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rate = Rate::from_gbps(100);

    #[test]
    fn quanta_are_512_bit_times() {
        // 512 bits at 100 Gb/s = 5.12 ns.
        assert_eq!(quanta_time(R, 1), Time(5_120));
        assert_eq!(quanta_time(R, MAX_QUANTA), Time(5_120 * 65_535));
    }

    #[test]
    fn generator_alternates_and_refreshes() {
        let cfg = PfcConfig::refresh_mode(1000);
        let mut g = PauseGenerator::default();
        assert_eq!(g.on_xon(Time::ZERO, &cfg), None, "no RESUME without PAUSE");
        let f = g.on_xoff(Time::ZERO, &cfg, R).expect("pause");
        assert_eq!(f.quanta, 1000);
        assert_eq!(g.on_xoff(Time(1), &cfg, R), None, "already paused");
        let due = g.poll_timeout().expect("refresh pending");
        assert_eq!(due, Time(5_120 * 500));
        assert_eq!(
            g.handle_timeout(Time(due.0 - 1), &cfg, R),
            None,
            "not yet due"
        );
        assert_eq!(g.handle_timeout(due, &cfg, R).map(|f| f.quanta), Some(1000));
        assert_eq!(g.poll_timeout(), Some(due + Time(5_120 * 500)));
        // Refresh mode ends by letting the timer run out: no RESUME frame.
        assert_eq!(g.on_xon(Time(10), &cfg,), None);
        assert_eq!(g.poll_timeout(), None);
        assert!(!g.is_xoff());
    }

    #[test]
    fn explicit_mode_sends_resume() {
        let cfg = PfcConfig::explicit_resume_mode();
        let mut g = PauseGenerator::default();
        assert!(g.on_xoff(Time::ZERO, &cfg, R).is_some());
        assert_eq!(
            g.on_xon(Time(5), &cfg),
            Some(PfcFrame { prio: 0, quanta: 0 })
        );
    }

    #[test]
    fn timers_expire_without_resume() {
        let mut t = PauseTimers::default();
        let resp = Time::from_ns(300);
        t.on_frame(Time::ZERO, 3, 100, R, resp);
        assert!(
            !t.is_paused(Time(0), 3),
            "peer keeps sending for its response time"
        );
        assert!(t.is_paused(resp, 3));
        assert!(!t.is_paused(resp, 2), "other classes keep flowing");
        let end = resp + quanta_time(R, 100);
        assert!(t.is_paused(Time(end.0 - 1), 3));
        assert!(!t.is_paused(end, 3));
        assert_eq!(t.next_change(Time(1), 3), Some(resp));
        assert_eq!(t.next_change(resp, 3), Some(end));
        assert_eq!(t.paused_time(end + Time(1000), 3), quanta_time(R, 100));
    }

    #[test]
    fn paused_since_spans_refreshes_and_restarts_after_a_resume() {
        let mut t = PauseTimers::default();
        let z = Time::ZERO;
        assert_eq!(t.paused_since(z, 3), None);
        t.on_frame(z, 3, 100, R, z);
        let q = quanta_time(R, 100);
        // A refresh before the timer runs out extends the same episode.
        t.on_frame(Time(q.0 - 1), 3, 100, R, z);
        assert_eq!(t.paused_since(Time(q.0 + 10), 3), Some(z));
        assert_eq!(t.paused_since(Time(q.0 + 10), 2), None, "other classes");
        // An explicit resume ends it; the next PAUSE starts a new one.
        t.on_frame(Time(q.0 + 20), 3, 0, R, z);
        assert_eq!(t.paused_since(Time(q.0 + 30), 3), None);
        t.on_frame(Time(q.0 + 40), 3, 100, R, z);
        assert_eq!(t.paused_since(Time(q.0 + 50), 3), Some(Time(q.0 + 40)));
        // A port-level pause counts for every class, from its own start.
        t.on_port_frame(Time(q.0 + 60), 100, R, z);
        assert_eq!(t.paused_since(Time(q.0 + 70), 5), Some(Time(q.0 + 60)));
        assert_eq!(t.paused_since(Time(q.0 + 70), 3), Some(Time(q.0 + 40)));
    }

    #[test]
    fn last_pause_reports_the_latest_episode_of_class_or_port() {
        let mut t = PauseTimers::default();
        let resp = Time::from_ns(100);
        assert_eq!(t.last_pause(Time::from_us(1), 3), None);
        t.on_frame(Time::ZERO, 3, 100, R, resp);
        let end = resp + quanta_time(R, 100);
        // Not begun within the response time; running after it; ended after the timer.
        assert_eq!(t.last_pause(Time::from_ns(50), 3), None);
        assert_eq!(t.last_pause(Time::from_ns(200), 3), Some((resp, end)));
        assert_eq!(t.last_pause(end, 3), Some((resp, end)));
        assert_eq!(t.last_pause(end, 2), None, "other classes");
        // A PAUSE revoked by a RESUME before it begins leaves no pause (and the next frame
        // replaces the record of the ended one: read it before each frame).
        let at = Time::from_us(10);
        t.on_frame(at, 3, 100, R, resp);
        t.on_frame(at + Time::from_ns(10), 3, 0, R, resp);
        assert_eq!(t.last_pause(Time::from_us(11), 3), None);
        // A RESUME while paused ends the episode at its arrival.
        let at = Time::from_us(20);
        t.on_frame(at, 3, 100, R, resp);
        t.on_frame(at + Time::from_ns(150), 3, 0, R, resp);
        let ep = Some((at + resp, at + Time::from_ns(150)));
        assert_eq!(t.last_pause(Time::from_us(21), 3), ep);
        // A port-level pause pauses every class.
        t.on_port_frame(Time::from_us(30), 100, R, Time::ZERO);
        assert_eq!(
            t.last_pause(Time::from_us(30), 5).map(|e| e.0),
            Some(Time::from_us(30))
        );
    }

    #[test]
    fn a_second_pause_within_the_response_time_does_not_postpone_the_first() {
        let mut t = PauseTimers::default();
        let resp = Time::from_ns(300);
        t.on_frame(Time::ZERO, 3, 100, R, resp);
        t.on_frame(Time::from_ns(100), 3, 100, R, resp);
        assert!(t.is_paused(resp, 3), "the first PAUSE takes effect on time");
    }

    #[test]
    fn port_pause_is_ored_with_class_pauses() {
        let mut t = PauseTimers::default();
        let z = Time::ZERO;
        t.on_frame(z, 3, 100, R, z);
        t.on_port_frame(Time(10), 200, R, z);
        assert!(t.is_paused(Time(20), 3));
        assert!(t.is_paused(Time(20), 5), "the port pause stops every class");
        // A port-level RESUME does not lift the class's own pause.
        t.on_port_frame(Time(30), 0, R, z);
        assert!(t.is_paused(Time(40), 3));
        assert!(!t.is_paused(Time(40), 5));
        // With both running, the class is free only when the later one ends.
        t.on_port_frame(Time(50), 200, R, z);
        let class_end = quanta_time(R, 100);
        let port_end = Time(50) + quanta_time(R, 200);
        assert_eq!(t.next_change(Time(60), 3), Some(class_end.max(port_end)));
        assert_eq!(t.port_paused_time(Time(60)), Time(30) - Time(10) + Time(10));
    }

    #[test]
    fn refresh_extends_without_gap_and_resume_ends() {
        let mut t = PauseTimers::default();
        let resp = Time::from_ns(100);
        t.on_frame(Time::ZERO, 3, 100, R, resp);
        let mid = Time::from_ns(200);
        t.on_frame(mid, 3, 100, R, resp);
        // Paused continuously from resp to mid + resp + 100 quanta.
        assert!(t.is_paused(Time::from_ns(250), 3));
        let end = mid + resp + quanta_time(R, 100);
        assert!(t.is_paused(Time(end.0 - 1), 3));
        let resume_at = Time::from_ns(400);
        t.on_frame(resume_at, 3, 0, R, resp);
        assert!(!t.is_paused(resume_at, 3));
        assert_eq!(t.paused_time(Time::from_us(10), 3), resume_at - resp);
    }
}
