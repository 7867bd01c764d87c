//! Choosing between threads and one: a run that may use several threads first runs as both
//! a partitioned run and a one-part twin, in lockstep, and keeps whichever was faster.
//!
//! Several threads pay off only when each window between exchanges holds enough work and
//! each thread has a core: a fabric with 10 ns links has windows of a few events, and on a
//! machine whose other core is busy the threads mostly wait for each other. The cores are
//! looked at first (see [`Load`]): a run takes at most as many threads as there are cores
//! nothing else wants, and none beside the first when there is no such core. The work per
//! window is not known before the run, so [`Partitioned::auto`] measures it: both runs
//! advance over the same simulated spans (each starting at the next event, doubling from a
//! few windows; the threads always run their windows in parallel while probing). Once they
//! have handled 200,000 events and [`PROBE_BUDGET`] of wall time has gone into them, or at
//! once when the threads have been twice as slow as one for 2 ms over 20,000 events, or at
//! the latest after eight budgets, or when the run ends, the slower one is dropped (a
//! machine that becomes busy after the start is left to this measurement). Both simulate
//! the same events with the same results, so the survivor simply continues; a probe that
//! ends the run costs the loser's share of it, a longer run at most the budget.
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

/// Samples of the machine's load taken before a run starts, and the pause between them: a
/// thread that is runnable for a moment (the kernel writing files back, a shell starting a
/// command) must not cost a long run its threads, so only what stays runnable for about
/// 2 ms counts.
const START_SAMPLES: u32 = 5;
const START_SAMPLE_GAP: Duration = Duration::from_micros(500);

/// How a probe measures and decides: [`ProbeSettings::default`] is what
/// [`Partitioned::auto`] uses; tests force either choice or a given machine load.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct ProbeSettings {
    /// Wall time spent probing both ways before choosing.
    pub budget: Duration,
    /// The partitioned run must have taken at most this share of the one-part run's time.
    pub margin: f64,
    /// One sample of the machine's load (`None`: cannot tell).
    pub load: fn() -> Option<Load>,
}

impl Default for ProbeSettings {
    fn default() -> Self {
        ProbeSettings {
            budget: PROBE_BUDGET,
            margin: MARGIN,
            load: Load::sample,
        }
    }
}

/// What else wants the machine's cores, seen from a thread of ours while no other thread of
/// the run is running.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// Cores this process may use.
    pub cores: usize,
    /// Threads of other programs that were runnable (running or waiting for a core).
    pub others: usize,
}

impl Load {
    /// One sample, from the kernel's count of runnable threads (Linux's `/proc/loadavg`;
    /// the sampling thread is the one runnable thread of ours). `None` where that count
    /// cannot be read.
    pub fn sample() -> Option<Load> {
        let text = std::fs::read_to_string("/proc/loadavg").ok()?;
        let runnable = runnable_in_loadavg(&text)?;
        Some(Load {
            cores: std::thread::available_parallelism().ok()?.get(),
            others: runnable.saturating_sub(1) as usize,
        })
    }

    /// Cores nothing else wants.
    pub fn free_cores(self) -> usize {
        self.cores.saturating_sub(self.others)
    }
}

/// The runnable threads in the text of `/proc/loadavg`
/// (`0.36 1.35 1.87 3/82 23484`: its fourth field is runnable/existing).
fn runnable_in_loadavg(text: &str) -> Option<u32> {
    let field = text.split_ascii_whitespace().nth(3)?;
    let (runnable, _existing) = field.split_once('/')?;
    runnable.parse().ok()
}

/// The least load of [`START_SAMPLES`] samples taken [`START_SAMPLE_GAP`] apart (`None` if
/// any cannot be taken).
fn least_load(sample: fn() -> Option<Load>) -> Option<Load> {
    let mut least = sample()?;
    for _ in 1..START_SAMPLES {
        std::thread::sleep(START_SAMPLE_GAP);
        let l = sample()?;
        if l.others < least.others {
            least = l;
        }
    }
    Some(least)
}

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
    /// The machine's load before the run started (the least of a few samples), if known.
    pub start_load: Option<Load>,
    /// The machine had no free core for a second thread before the run started, so it
    /// runs on one without probing.
    pub crowded: bool,
}

/// Probing state of a run that has not chosen yet.
pub(super) struct Probing {
    twin: Box<Partitioned>,
    span: Time,
    next: Option<Time>,
    probe: Probe,
    settings: ProbeSettings,
    /// Events the partitioned run handled in the probe's measured steps.
    events: u64,
}

impl Partitioned {
    /// A run of `cfg` that uses up to `threads` threads if that is faster than one, and
    /// one otherwise (see the module documentation). With one part possible (or one
    /// thread asked), it is [`Partitioned::new`].
    pub fn auto(cfg: SimConfig, threads: usize) -> Result<Partitioned, SimError> {
        Self::auto_with(cfg, threads, ProbeSettings::default())
    }

    /// [`Partitioned::auto`] with other probe settings (tests force either choice with a
    /// margin of 0 or infinity, or a machine that is crowded or not).
    #[doc(hidden)]
    pub fn auto_with(
        cfg: SimConfig,
        threads: usize,
        settings: ProbeSettings,
    ) -> Result<Partitioned, SimError> {
        // With one thread asked, there is nothing to choose.
        if threads <= 1 {
            return Partitioned::new(cfg, threads);
        }
        let start_load = least_load(settings.load);
        let fitting = start_load.map_or(threads, |l| threads.min(l.free_cores()));
        if fitting <= 1 {
            let mut run = Partitioned::new(cfg, 1)?;
            run.probe_result = Some(Probe {
                start_load,
                crowded: true,
                kept_partitioned: Some(false),
                ..Probe::default()
            });
            return Ok(run);
        }
        let mut run = Partitioned::new(cfg.clone(), fitting)?;
        if run.parts() > 1 {
            let twin = Box::new(Partitioned::new(cfg, 1)?);
            run.probing = Some(Probing {
                twin,
                span: Time(run.lookahead.as_ps().saturating_mul(FIRST_SPAN_WINDOWS)),
                next: None,
                probe: Probe {
                    start_load,
                    ..Probe::default()
                },
                settings,
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
            let enough = p.events >= MIN_EVENTS && a + b >= p.settings.budget;
            if ended || hopeless || enough || a + b >= p.settings.budget * HARD_CAP {
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
        let keep =
            p.probe.partitioned.as_secs_f64() <= p.settings.margin * p.probe.single.as_secs_f64();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runnable_count_is_the_fourth_field_of_loadavg() {
        assert_eq!(runnable_in_loadavg("0.36 1.35 1.87 3/82 23484\n"), Some(3));
        assert_eq!(runnable_in_loadavg("0.00 0.01 0.05 1/120 7"), Some(1));
        assert_eq!(runnable_in_loadavg("0.36 1.35 1.87"), None);
        assert_eq!(runnable_in_loadavg("0.36 1.35 1.87 x/82 1"), None);
        assert_eq!(runnable_in_loadavg("0.36 1.35 1.87 382 1"), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn linux_tells_the_machine_load() {
        let load = Load::sample().expect("/proc/loadavg is readable on Linux");
        assert!(load.cores >= 1);
        assert!(load.free_cores() <= load.cores);
    }

    #[test]
    fn threads_fit_in_the_cores_nothing_else_wants() {
        let load = Load {
            cores: 4,
            others: 1,
        };
        assert_eq!(load.free_cores(), 3);
        let swamped = Load {
            cores: 2,
            others: 9,
        };
        assert_eq!(swamped.free_cores(), 0, "never below none");
    }

    #[test]
    fn the_start_load_is_the_least_of_its_samples() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        fn varying() -> Option<Load> {
            let others = [3, 1, 2][CALLS.fetch_add(1, Ordering::SeqCst) % 3];
            Some(Load { cores: 2, others })
        }
        assert_eq!(least_load(varying).map(|l| l.others), Some(1));
        assert_eq!(least_load(|| None), None);
    }
}
