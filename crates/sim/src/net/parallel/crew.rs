//! The threads of a partitioned run: the steps they take together ([`Step`]), where they
//! meet ([`Crew`], [`Signal`]), and whether a window runs on all of them or on one
//! ([`Pace`]).
//!
//! Invariants: every step is taken by each thread exactly once, and the coordinator goes on
//! only when all helpers have counted themselves done (a helper that panicked counts
//! itself too, and its panic is raised by the coordinator); a waiter never misses a
//! change of the value it waits on.

use super::lock;
use headroom_mech::units::Time;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Whether the windows run on all threads or one after the other on the calling thread.
///
/// The results are the same either way; the speed is not. On a machine whose cores are
/// busy with other work, threads that meet every window wait for each other far longer
/// than the window's work takes, and one thread is faster. So the run measures, in blocks
/// of [`Pace::BLOCK`] windows: each cycle starts with three probe blocks (parallel, serial,
/// parallel), then runs serially only if the serial block handled [`Pace::MARGIN`] times
/// more events per second than both parallel ones (the traffic changes from block to
/// block too, and on a free machine the parallel way is about twice as fast). A cycle is
/// [`Pace::CYCLE`] blocks, a quarter of that when running serially, so that a machine that
/// frees up is noticed soon.
#[derive(Debug)]
pub(super) struct Pace {
    /// Windows handled in the current block.
    windows: u32,
    /// Block number within the cycle.
    block: u32,
    /// When the current block started, and the events handled until then.
    pub(super) since: Option<(std::time::Instant, u64)>,
    /// Events per second of this cycle's probe blocks.
    rate: [f64; 3],
    /// The probes chose the serial way.
    serial: bool,
    /// Windows run so far: in all, and of them on one thread.
    pub(super) run: WindowCount,
}

/// How many windows a partitioned run has handled, and how many of them one after the
/// other on one thread (the others on all threads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowCount {
    /// Windows handled.
    pub all: u64,
    /// Of them, handled serially.
    pub serial: u64,
}

impl Pace {
    const BLOCK: u32 = 32;
    /// Long enough that probing the slower way costs a few percent.
    const CYCLE: u32 = 64;
    /// How much faster the serial probe must have been to run serially.
    const MARGIN: f64 = 1.25;

    pub(super) fn new() -> Self {
        Pace {
            windows: 0,
            block: 0,
            since: None,
            rate: [0.0; 3],
            serial: false,
            run: WindowCount::default(),
        }
    }

    /// A window is about to run, on all threads if `parallel`.
    pub(super) fn count(&mut self, parallel: bool) {
        self.run.all += 1;
        self.run.serial += u64::from(!parallel);
    }

    /// Whether the next window runs in parallel.
    pub(super) fn parallel(&self) -> bool {
        match self.block {
            0 | 2 => true,
            1 => false,
            _ => !self.serial,
        }
    }

    /// A window ended with `events` handled in all.
    pub(super) fn window_done(&mut self, events: u64) {
        let now = std::time::Instant::now();
        let Some((start, before)) = self.since else {
            self.since = Some((now, events));
            return;
        };
        self.windows += 1;
        if self.windows < Self::BLOCK {
            return;
        }
        let secs = now.duration_since(start).as_secs_f64().max(1e-9);
        if let Some(r) = self.rate.get_mut(self.block as usize) {
            *r = (events - before) as f64 / secs;
        }
        if self.block == 2 {
            self.serial = self.rate[1] > Self::MARGIN * self.rate[0].max(self.rate[2]);
        }
        let cycle = if self.serial {
            Self::CYCLE / 4
        } else {
            Self::CYCLE
        };
        self.windows = 0;
        self.block = (self.block + 1) % cycle;
        self.since = Some((now, events));
    }
}

/// What the threads do next.
#[derive(Clone, Debug)]
pub(super) enum Step {
    /// Each part with `Some((time, key))` handles its events through that point, then
    /// posts the frames it sent.
    Run(Vec<Option<(Time, u64)>>),
    /// Each part takes the frames posted to it.
    Collect,
    /// The run is over (for this call).
    Quit,
}

/// The threads' meeting point: the coordinator publishes a step and bumps `generation`;
/// each helper does its parts' share and counts itself in `done`.
pub(super) struct Crew {
    pub(super) generation: Signal,
    pub(super) done: Signal,
    pub(super) step: Mutex<Step>,
    /// A helper's panic, for the coordinator to raise (a helper that panicked still
    /// counts itself done, so nobody waits for it forever).
    pub(super) panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

/// A counter one thread advances and others wait on: a waiter spins briefly (the parts of
/// a window usually finish within microseconds of each other), then sleeps, so that a
/// machine with fewer free cores than threads is not spent spinning.
pub(super) struct Signal {
    value: AtomicU64,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Signal {
    /// Spins before sleeping (tens of microseconds).
    const SPINS: u32 = 20_000;

    pub(super) fn new() -> Self {
        Signal {
            value: AtomicU64::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    pub(super) fn get(&self) -> u64 {
        self.value.load(Ordering::SeqCst)
    }

    /// Sets the value and wakes the sleepers.
    pub(super) fn set(&self, v: u64) {
        self.value.store(v, Ordering::SeqCst);
        self.wake_sleepers();
    }

    /// Adds one to the value and wakes the sleepers.
    pub(super) fn bump(&self) {
        self.value.fetch_add(1, Ordering::SeqCst);
        self.wake_sleepers();
    }

    fn wake_sleepers(&self) {
        // A waiter registers under the lock before its last look at the value, so either it
        // sees the new value or it is counted here, and the notification waits for the lock
        // it releases only when asleep.
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _held = lock(&self.lock);
            self.wake.notify_all();
        }
    }

    /// Waits until `ready(value)`; returns the value.
    pub(super) fn wait(&self, ready: impl Fn(u64) -> bool) -> u64 {
        for _ in 0..Self::SPINS {
            let v = self.get();
            if ready(v) {
                return v;
            }
            std::hint::spin_loop();
        }
        let mut held = lock(&self.lock);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let v = loop {
            let v = self.get();
            if ready(v) {
                break v;
            }
            held = match self.wake.wait(held) {
                Ok(g) => g,
                Err(poisoned) => panic!("a simulation thread panicked: {poisoned}"),
            };
        };
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A waiter past its spins sleeps and is woken by `set` and `bump`, never missing one.
    #[test]
    fn signal_wakes_sleepers() {
        let s = Signal::new();
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let a = s.wait(|v| v >= 1);
                let b = s.wait(|v| v >= 3);
                (a, b)
            });
            std::thread::sleep(std::time::Duration::from_millis(20));
            s.set(1);
            std::thread::sleep(std::time::Duration::from_millis(20));
            s.bump();
            s.bump();
            let (a, b) = waiter.join().expect("waiter");
            assert!(a >= 1 && b == 3, "{a} {b}");
        });
        assert_eq!(s.sleepers.load(Ordering::SeqCst), 0);
    }

    /// Each cycle probes parallel, serial, parallel, then runs serially only if the serial
    /// probe beat both parallel ones by the margin.
    #[test]
    fn pace_probes_both_ways_then_keeps_the_faster() {
        let mut p = Pace::new();
        let mut events = 0;
        let mut block = |p: &mut Pace, per_window: u64| {
            let parallel = p.parallel();
            for _ in 0..Pace::BLOCK {
                events += per_window;
                p.window_done(events);
            }
            parallel
        };
        block(&mut p, 0); // the first call only starts the clock
        p.windows = 0;
        assert_eq!(p.block, 0);
        assert!(block(&mut p, 1_000));
        assert!(!block(&mut p, 1_000));
        assert!(block(&mut p, 1_000));
        assert_eq!(p.block, 3);
        // Rates measured with the same work per window: equal within the margin.
        assert!(!p.serial, "{:?}", p.rate);
        assert!(p.parallel());
        p.rate = [1.0, 2.0, 1.5];
        p.block = 2;
        p.serial = p.rate[1] > Pace::MARGIN * p.rate[0].max(p.rate[2]);
        assert!(p.serial);
        p.block = 3;
        assert!(!p.parallel(), "serial beat both parallel probes");
        p.rate = [1.0, 2.0, 1.7];
        p.serial = p.rate[1] > Pace::MARGIN * p.rate[0].max(p.rate[2]);
        assert!(p.parallel(), "not by the margin over the second probe");
    }
}
