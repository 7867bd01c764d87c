//! Choosing between threads and one: a run that may use several threads first runs as both
//! a partitioned run and a one-part twin, in lockstep, and keeps whichever was faster.
//!
//! Several threads pay off only when each window between exchanges holds enough work: a
//! fabric with 10 ns links has windows of a few events, and on a machine whose other core
//! is busy the threads mostly wait for each other. Neither is known before the run, so
//! [`Partitioned::auto`] measures it: both runs advance over the same simulated spans
//! (each starting at the next event, doubling from a few windows; the threads always run
//! their windows in parallel while probing). Once they have handled 200,000 events and
//! [`PROBE_BUDGET`] of wall time has gone into them, or at once when the threads have been
//! twice as slow as one for 2 ms over 20,000 events, or at the latest after eight budgets, or when the
//! run ends, the slower one is dropped. Both simulate the same events with the
//! same results, so the survivor simply continues; a probe that ends the run costs the
//! loser's share of it, a longer run at most the budget.
//!
//! Invariants: the choice changes speed only, never results; while probing, both runs have
//! handled exactly the events up to the same simulated time; the partitioned run is kept
//! only if it was at least [`MARGIN`] faster (ties go to one thread, which is never slower
//! than itself).

use super::Partitioned;
use crate::config::SimConfig;
use crate::net::SimError;
use headroom_mech::units::Time;
use std::time::{Duration, Instant};

/// Wall time spent probing both ways, in all, before choosing.
pub const PROBE_BUDGET: Duration = Duration::from_millis(40);

/// The partitioned run must have taken at most this share of the one-part run's time.
pub const MARGIN: f64 = 0.9;

/// Windows the first probe span covers (then each span doubles).
const FIRST_SPAN_WINDOWS: u64 = 4;

/// A probe gives up on the threads before its budget once they have taken this long and
/// at least [`CLEAR_RATIO`] times as long as one thread: a short run should not pay the
/// whole budget for an answer that is already plain (10 ns links: a hundred windows can
/// take the threads forty times as long).
const CLEAR_AFTER: Duration = Duration::from_millis(2);

/// See [`CLEAR_AFTER`].
const CLEAR_RATIO: f64 = 2.0;

/// Events a probe must have measured before it decides (unless the run ends, or it has
/// spent [`HARD_CAP`] budgets): the first windows of traffic are lighter than the rest,
/// and windows with little work favour one thread more than the run as a whole will.
const MIN_EVENTS: u64 = 200_000;

/// A probe decides after this many budgets whatever it has measured.
const HARD_CAP: u32 = 8;

/// The probe of an automatic run, and what it chose.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Probe {
    /// Wall time the partitioned run took over the probe spans.
    pub partitioned: Duration,
    /// Wall time the one-part run took over the same spans.
    pub single: Duration,
    /// Simulated time both covered.
    pub covered: Time,
    /// The partitioned run was kept (`None` while still probing).
    pub kept_partitioned: Option<bool>,
}

/// Probing state of a run that has not chosen yet.
pub(super) struct Probing {
    twin: Box<Partitioned>,
    span: Time,
    next: Option<Time>,
    probe: Probe,
    budget: Duration,
    margin: f64,
    /// Events the partitioned run handled in the probe's measured steps.
    events: u64,
}

impl Partitioned {
    /// A run of `cfg` that uses up to `threads` threads if that is faster than one, and
    /// one otherwise (see the module documentation). With one part possible (or one
    /// thread asked), it is [`Partitioned::new`].
    pub fn auto(cfg: SimConfig, threads: usize) -> Result<Partitioned, SimError> {
        Self::auto_with(cfg, threads, PROBE_BUDGET, MARGIN)
    }

    /// [`Partitioned::auto`] with another probe budget and margin (tests force either
    /// choice with a margin of 0 or infinity).
    #[doc(hidden)]
    pub fn auto_with(
        cfg: SimConfig,
        threads: usize,
        budget: Duration,
        margin: f64,
    ) -> Result<Partitioned, SimError> {
        let mut run = Partitioned::new(cfg.clone(), threads)?;
        if run.parts() > 1 {
            let twin = Box::new(Partitioned::new(cfg, 1)?);
            run.probing = Some(Probing {
                twin,
                span: Time(run.lookahead.as_ps().saturating_mul(FIRST_SPAN_WINDOWS)),
                next: None,
                probe: Probe::default(),
                budget,
                margin,
                events: 0,
            });
        }
        Ok(run)
    }

    /// What the probe of an automatic run measured and chose, once it has.
    pub fn probe(&self) -> Option<Probe> {
        self.probe_result
    }

    /// Advances both runs of a probing run towards `limit` until it is reached, the run
    /// ends, or the probe has chosen. Returns `Some(ended)` when it stopped at `limit` or
    /// the end, `None` when it chose before `limit` (the caller goes on with the survivor).
    pub(super) fn probe_until(&mut self, limit: Time) -> Option<bool> {
        loop {
            let mut p = self.probing.take()?;
            // A step starts at the next event: idle time says nothing about speed.
            let target = match p.next {
                Some(t) => t,
                None => {
                    let first = self.next_event_time().unwrap_or(limit);
                    Time(first.as_ps().saturating_add(p.span.as_ps()))
                }
            };
            let until = target.min(limit);
            let before = self.events();
            let t = Instant::now();
            let ended = self.checked_until(until);
            let spent = t.elapsed();
            let handled = self.events() - before;
            let t = Instant::now();
            let twin_ended = p.twin.checked_until(until);
            let twin_spent = t.elapsed();
            debug_assert_eq!(ended, twin_ended, "the two runs of a probe diverged");
            // Calls that handled nothing measure the calls, not the simulation.
            if handled > 0 {
                p.probe.partitioned += spent;
                p.probe.single += twin_spent;
                p.events += handled;
            }
            p.probe.covered = until;
            let (a, b) = (p.probe.partitioned, p.probe.single);
            // Threads far behind one over a first sample (the first calls' fixed costs
            // aside) are not going to catch up (tiny windows, busy cores): stop paying for
            // them at once. Threads ahead must stay ahead over a fair
            // sample of the run before they are believed.
            let hopeless = p.events >= MIN_EVENTS / 10
                && a >= CLEAR_AFTER
                && a.as_secs_f64() >= CLEAR_RATIO * b.as_secs_f64();
            let enough = p.events >= MIN_EVENTS && a + b >= p.budget;
            if ended || hopeless || enough || a + b >= p.budget * HARD_CAP {
                self.choose(p);
                return ended.then_some(true);
            }
            if until < target {
                p.next = Some(target);
                self.probing = Some(p);
                return Some(false);
            }
            p.span = Time(p.span.as_ps().saturating_mul(2));
            p.next = None;
            self.probing = Some(p);
            if until >= limit {
                return Some(false);
            }
        }
    }

    /// Keeps the faster of the two runs of `p`.
    fn choose(&mut self, p: Probing) {
        let keep = p.probe.partitioned.as_secs_f64() <= p.margin * p.probe.single.as_secs_f64();
        let probe = Probe {
            kept_partitioned: Some(keep),
            ..p.probe
        };
        if !keep {
            *self = *p.twin;
        }
        self.probe_result = Some(probe);
    }
}
