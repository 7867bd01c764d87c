//! Partitioned runs: one network simulated as several parts, on several threads, with
//! exactly the results of a single simulation.
//!
//! The nodes are split into parts ([`split`]). Each part is a [`Simulation`] holding the
//! whole network's state but acting only on its own nodes; a frame for a port of another
//! part goes to its outbox. Such a frame arrives no earlier than one link delay after it
//! was sent, and no link between parts is shorter than the *lookahead*. So the parts advance
//! in windows of one lookahead (conservative synchronisation): within a window each part
//! handles its events, none of which another part's frames could precede; between windows
//! the frames are delivered.
//!
//! Why the results do not depend on the number of parts:
//! - events are ordered by a key made of the time, the port that scheduled them and its
//!   count of scheduled events (`engine`), never by the order in which a process ran
//!   different nodes; random draws come from per-switch and per-port streams;
//! - every node's bookkeeping reads only that node's state (victim pauses are judged where
//!   the PAUSE arrives); time-stamped records are sorted by `(time, node)`;
//! - a flow belongs to its sender's part. A single simulation stops right after the event
//!   that finishes its last flow; a part that finishes its own last flow pauses right after
//!   it, and parts whose flows are all done run each window only after the others, so that
//!   when the last flow finishes (at key `K`), every part can be brought exactly to `K`.
//!
//! Invariants: between windows every frame is in exactly one part's queue; every part has
//! handled exactly the events up to the same point of the global order; a run that fails on
//! its first lossless drop, whose parts would be joined by a zero-delay link, or whose fabric
//! runs flow channels, runs as one part. Each part holds the whole network's state (a part's
//! memory is a whole run's, less the packets of other parts); only its own nodes' share of
//! it changes.

mod probe;

pub use probe::{Load, Probe, ProbeSettings, MARGIN, PROBE_BUDGET};

use super::deadlock::{self, Deadlock};
use super::packet::Packet;
use super::{SimError, Simulation};
use crate::config::{ConfigError, SimConfig};
use crate::engine::EventQueue;
use crate::results::{RunResults, StopReason};
use crate::routing::{self, Routes};
use crate::topology::{NodeKind, Topology};
use headroom_mech::int::IntStack;
use headroom_mech::units::Time;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// A frame travelling from one part to another.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Remote {
    /// Receiving part.
    pub to: u16,
    /// When its event happens.
    pub time: Time,
    /// Its event's tie-break key.
    pub key: u64,
    /// Receiving port (global index).
    pub port: u32,
    /// `FrameStart` (admission at the first bit) rather than `Arrive`.
    pub first_bit: bool,
    /// The frame.
    pub packet: Packet,
    /// Its INT hop records (empty in runs without INT).
    pub int: IntStack,
}

/// How a network is split into parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// Per node, its part.
    pub node_part: Vec<u16>,
    /// Number of parts.
    pub parts: u16,
    /// Smallest delay of a link between two parts (`Time::MAX` if none).
    pub lookahead: Time,
}

/// Splits `topo` into at most `parts` parts: hosts in id order into equal runs, each
/// switch into the part whose hosts are nearest on average (ties: the part with the fewest
/// switch ports so far). In a fat tree or leaf-spine this keeps pods and leaves whole and
/// spreads the spines. Fewer parts when there are fewer hosts.
pub fn split(topo: &Topology, parts: usize) -> Split {
    let n = topo.nodes.len();
    let hosts: Vec<usize> = (0..n)
        .filter(|&i| topo.nodes[i] == NodeKind::Host)
        .collect();
    let parts = parts.clamp(1, hosts.len().clamp(1, usize::from(u16::MAX)));
    let mut node_part = vec![0u16; n];
    if parts > 1 {
        for (k, &h) in hosts.iter().enumerate() {
            node_part[h] = (k * parts / hosts.len()) as u16;
        }
        let adj = routing::adjacency(topo);
        let mut hosts_in = vec![0u64; parts];
        for &h in &hosts {
            hosts_in[usize::from(node_part[h])] += 1;
        }
        let mut ports_in = vec![0usize; parts];
        let mut dist = vec![u32::MAX; n];
        let mut frontier = VecDeque::new();
        for s in (0..n).filter(|&i| topo.nodes[i] == NodeKind::Switch) {
            dist.fill(u32::MAX);
            dist[s] = 0;
            frontier.push_back(s);
            while let Some(u) = frontier.pop_front() {
                for &(v, _) in &adj[u] {
                    if dist[v.index()] == u32::MAX {
                        dist[v.index()] = dist[u] + 1;
                        frontier.push_back(v.index());
                    }
                }
            }
            // Mean distance to each part's hosts, compared exactly: sum_a / n_a vs sum_b / n_b.
            let mut sums = vec![0u64; parts];
            for &h in &hosts {
                sums[usize::from(node_part[h])] += u64::from(dist[h].min(u32::MAX / 2));
            }
            let best = (0..parts)
                .min_by(|&a, &b| {
                    let (x, y) = (
                        u128::from(sums[a]) * u128::from(hosts_in[b]),
                        u128::from(sums[b]) * u128::from(hosts_in[a]),
                    );
                    x.cmp(&y).then(ports_in[a].cmp(&ports_in[b]))
                })
                .unwrap_or(0);
            node_part[s] = best as u16;
            ports_in[best] += adj[s].len();
        }
    }
    let lookahead = topo
        .links
        .iter()
        .filter(|l| node_part[l.a.index()] != node_part[l.b.index()])
        .map(|l| l.delay)
        .min()
        .unwrap_or(Time::MAX);
    Split {
        node_part,
        parts: parts as u16,
        lookahead,
    }
}

/// A run split into parts that advance in parallel (see the module documentation). With
/// one part it is a plain [`Simulation`].
pub struct Partitioned {
    parts: Vec<Mutex<Simulation>>,
    /// Frames between windows: `mail[to * parts + from]`.
    mail: Vec<Mutex<Vec<Remote>>>,
    lookahead: Time,
    threads: usize,
    total_flows: usize,
    stop: Option<StopReason>,
    pace: Pace,
    /// The next deadlock check, if the run checks (see [`Partitioned::run_until`]).
    next_check: Option<Time>,
    /// The next PFC watchdog poll, if the switches have watchdogs.
    next_poll: Option<Time>,
    deadlock: Option<Deadlock>,
    /// A one-part twin running in lockstep while [`Partitioned::auto`] measures which is
    /// faster ([`probe`]).
    probing: Option<probe::Probing>,
    probe_result: Option<probe::Probe>,
}

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
struct Pace {
    /// Windows handled in the current block.
    windows: u32,
    /// Block number within the cycle.
    block: u32,
    /// When the current block started, and the events handled until then.
    since: Option<(std::time::Instant, u64)>,
    /// Events per second of this cycle's probe blocks.
    rate: [f64; 3],
    /// The probes chose the serial way.
    serial: bool,
}

impl Pace {
    const BLOCK: u32 = 32;
    /// Long enough that probing the slower way costs a few percent.
    const CYCLE: u32 = 64;
    /// How much faster the serial probe must have been to run serially.
    const MARGIN: f64 = 1.25;

    fn new() -> Self {
        Pace {
            windows: 0,
            block: 0,
            since: None,
            rate: [0.0; 3],
            serial: false,
        }
    }

    /// Whether the next window runs in parallel.
    fn parallel(&self) -> bool {
        match self.block {
            0 | 2 => true,
            1 => false,
            _ => !self.serial,
        }
    }

    /// A window ended with `events` handled in all.
    fn window_done(&mut self, events: u64) {
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
enum Step {
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
struct Crew {
    generation: Signal,
    done: Signal,
    step: Mutex<Step>,
    /// A helper's panic, for the coordinator to raise (a helper that panicked still
    /// counts itself done, so nobody waits for it forever).
    panic: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

/// A counter one thread advances and others wait on: a waiter spins briefly (the parts of
/// a window usually finish within microseconds of each other), then sleeps, so that a
/// machine with fewer free cores than threads is not spent spinning.
struct Signal {
    value: AtomicU64,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Signal {
    /// Spins before sleeping (tens of microseconds).
    const SPINS: u32 = 20_000;

    fn new() -> Self {
        Signal {
            value: AtomicU64::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    fn get(&self) -> u64 {
        self.value.load(Ordering::SeqCst)
    }

    /// Sets the value and wakes the sleepers.
    fn set(&self, v: u64) {
        self.value.store(v, Ordering::SeqCst);
        self.wake_sleepers();
    }

    /// Adds one to the value and wakes the sleepers.
    fn bump(&self) {
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
    fn wait(&self, ready: impl Fn(u64) -> bool) -> u64 {
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

/// Half a deadlock detection time (at least 1 ps): the interval between checks, so that a
/// cycle is found within one and a half detection times of its start.
fn half(detection: Time) -> Time {
    Time((detection.as_ps() / 2).max(1))
}

/// Locks `m`; a poisoned lock means a part panicked, which is re-raised here.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => panic!("a simulation part panicked: {poisoned}"),
    }
}

impl Partitioned {
    /// Builds the run of `cfg` on `threads` threads: as many parts as threads when the
    /// network splits with a positive lookahead, otherwise one.
    pub fn new(cfg: SimConfig, threads: usize) -> Result<Partitioned, SimError> {
        cfg.validate()?;
        let routes = Routes::compute(&cfg.topology, cfg.routing).map_err(ConfigError::from)?;
        let mut s = split(&cfg.topology, threads.max(1));
        // Flow-channel ACK frames carry their ACKs beside the arena, which parts do not
        // share (see `net::flow_channel`).
        if s.parts > 1
            && (s.lookahead == Time::ZERO
                || cfg.record.fail_on_lossless_drop
                || cfg.fabric.flow_channels.is_some())
        {
            s = split(&cfg.topology, 1);
        }
        let total_flows = cfg.flows.len();
        let detection = cfg.deadlock_detection.filter(|d| *d > Time::ZERO);
        let cfg_watchdog = cfg.switch.watchdog;
        let node_part: Arc<[u16]> = if s.parts > 1 {
            Arc::from(s.node_part)
        } else {
            Arc::from([])
        };
        let parts = (0..s.parts)
            .map(|p| {
                Simulation::part_of(cfg.clone(), routes.clone(), node_part.clone(), p)
                    .map(Mutex::new)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let n = parts.len();
        Ok(Partitioned {
            parts,
            mail: (0..n * n).map(|_| Mutex::new(Vec::new())).collect(),
            lookahead: s.lookahead,
            threads: threads.clamp(1, n),
            total_flows,
            stop: None,
            pace: Pace::new(),
            next_check: detection.map(half),
            next_poll: cfg_watchdog.map(|w| w.interval),
            deadlock: None,
            probing: None,
            probe_result: None,
        })
    }

    /// Number of parts.
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// max(T_on) of the paper's TCD detector: each value in use and how many switch egress
    /// queues have it (empty with another detector).
    pub fn max_t_on(&self) -> Vec<(Time, usize)> {
        // Every part holds every switch's congestion points.
        self.parts
            .first()
            .map_or_else(Vec::new, |p| lock(p).marking.max_t_on_summary())
    }

    /// Events each part has handled (the run's own ones in every part): how evenly the
    /// work is shared.
    pub fn part_events(&self) -> Vec<u64> {
        self.parts.iter().map(|p| lock(p).events).collect()
    }

    /// Simulated time reached.
    pub fn now(&self) -> Time {
        self.parts
            .iter()
            .map(|p| lock(p).now)
            .max()
            .unwrap_or(Time::ZERO)
    }

    /// Events processed so far (the run's own events, which every part handles, once).
    pub fn events(&self) -> u64 {
        self.parts.iter().map(|p| lock(p).events_once()).sum()
    }

    /// Flows finished so far, and the total.
    pub fn flow_progress(&self) -> (usize, usize) {
        let done = self.parts.iter().map(|p| lock(p).finished_flows).sum();
        (done, self.total_flows)
    }

    /// Why the run ended, once it has.
    pub fn stop_reason(&self) -> Option<StopReason> {
        if self.parts.len() == 1 {
            return lock(&self.parts[0]).stop;
        }
        self.stop
    }

    /// Checks the conservation invariants over all parts (between windows).
    pub fn check_invariants(&self) -> Result<(), String> {
        let guards: Vec<_> = self.parts.iter().map(lock).collect();
        let parts: Vec<&Simulation> = guards.iter().map(|g| &**g).collect();
        Simulation::check_parts(&parts)
    }

    /// Processes events up to and including simulated time `limit`, or until the run
    /// ends. Returns `true` once it has.
    ///
    /// With deadlock detection on (`SimConfig::deadlock_detection = Some(d)`), the run is
    /// checked every `d / 2` of simulated time while switches hold data (idle stretches are
    /// skipped), at the same simulated times whatever the number of parts: a cycle of
    /// egress queues paused for `d` or longer stops the run with [`StopReason::Deadlock`].
    ///
    /// A run made by [`Partitioned::auto`] first probes whether its parts beat one thread
    /// ([`probe`]).
    pub fn run_until(&mut self, limit: Time) -> bool {
        if self.probing.is_some() {
            if let Some(ended) = self.probe_until(limit) {
                return ended;
            }
        }
        self.checked_until(limit)
    }

    /// [`Partitioned::run_until`] of this run alone (no probe).
    fn checked_until(&mut self, limit: Time) -> bool {
        loop {
            let next = [self.next_poll, self.next_check]
                .into_iter()
                .flatten()
                .min();
            let Some(at) = next.filter(|&t| t <= limit) else {
                let ended = self.advance(limit);
                if ended {
                    self.check_idle_deadlock();
                }
                return ended;
            };
            if self.advance(at) {
                self.check_idle_deadlock();
                return true;
            }
            // The watchdog first: a storm it ends may be what would have deadlocked.
            if self.next_poll == Some(at) {
                self.poll_watchdogs(at);
            }
            if self.next_check == Some(at) && self.check_deadlock(at) {
                return true;
            }
        }
    }

    /// Polls every part's switch watchdogs at `now` and schedules the next poll (idle
    /// stretches skipped: nothing a watchdog watches changes while nothing happens).
    fn poll_watchdogs(&mut self, now: Time) {
        for p in &self.parts {
            lock(p).watchdog_poll(now);
        }
        let interval = lock(&self.parts[0])
            .config()
            .switch
            .watchdog
            .map_or(Time::MAX, |w| w.interval);
        let next = Time(now.as_ps().saturating_add(interval.as_ps().max(1)));
        self.next_poll = self.next_event_time().map(|e| e.max(next));
    }

    /// Stops the run if it is deadlocked at `now` (every part has handled its events up to
    /// `now`), otherwise schedules the next check.
    fn check_deadlock(&mut self, now: Time) -> bool {
        let Some(detection) = self.config_detection() else {
            self.next_check = None;
            return false;
        };
        if self.stop_if_deadlocked(now, detection) {
            return true;
        }
        // Nothing can deadlock before something happens: skip idle time.
        let next_event = self.next_event_time();
        self.next_check = next_event.map(|e| e.max(now + half(detection)));
        false
    }

    /// A run that went idle with detection on: queues still blocked for credit will never
    /// be unblocked (no event is left to bring credit), so a cycle of them is a deadlock
    /// whatever the detection time (a PFC pause always ends, with an event, first).
    fn check_idle_deadlock(&mut self) {
        if self.stop_reason() == Some(StopReason::Idle) && self.config_detection().is_some() {
            let now = self.now();
            self.stop_if_deadlocked(now, Time::ZERO);
        }
    }

    /// Stops the run at `now` if queues stalled for `detection` or longer form a cycle.
    fn stop_if_deadlocked(&mut self, now: Time, detection: Time) -> bool {
        let mut view = deadlock::StallView::default();
        for p in &self.parts {
            view.absorb(lock(p).stall_view(now, detection));
        }
        let found = {
            let first = lock(&self.parts[0]);
            deadlock::find_deadlock(&view, now, |gp| first.peer_port(gp))
        };
        let Some(d) = found else {
            return false;
        };
        self.deadlock = Some(d);
        self.end_all(StopReason::Deadlock, now);
        self.stop = Some(StopReason::Deadlock);
        true
    }

    /// The time of the next pending event of any part (between windows, the run's next).
    fn next_event_time(&self) -> Option<Time> {
        self.parts
            .iter()
            .filter_map(|p| lock(p).queue.peek_time())
            .min()
    }

    /// The deadlock detection time of the run, if it checks.
    fn config_detection(&self) -> Option<Time> {
        lock(&self.parts[0])
            .config()
            .deadlock_detection
            .filter(|d| *d > Time::ZERO)
    }

    /// [`Partitioned::run_until`] without deadlock checks.
    fn advance(&mut self, limit: Time) -> bool {
        if self.parts.len() == 1 {
            let part = match self.parts[0].get_mut() {
                Ok(p) => p,
                Err(poisoned) => panic!("the simulation panicked: {poisoned}"),
            };
            return part.run_until(limit);
        }
        if self.stop.is_some() {
            return true;
        }
        let crew = Crew {
            generation: Signal::new(),
            done: Signal::new(),
            step: Mutex::new(Step::Quit),
            panic: Mutex::new(None),
        };
        let mut pace = std::mem::replace(&mut self.pace, Pace::new());
        // A new call starts a new block: the time between calls is not the run's.
        pace.since = None;
        let this = &*self;
        let (ended, stop) = std::thread::scope(|scope| {
            for t in 1..this.threads {
                let crew = &crew;
                scope.spawn(move || this.helper(crew, t));
            }
            let out = std::panic::catch_unwind(AssertUnwindSafe(|| {
                this.coordinate(&crew, limit, &mut pace)
            }));
            // Always release the helpers, or the scope would wait for them forever.
            this.order(&crew, Step::Quit, true);
            match out {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        self.pace = pace;
        self.stop = stop;
        ended
    }

    /// Runs to the end and collects the results.
    pub fn run(mut self) -> RunResults {
        self.run_until(Time::MAX);
        self.finish()
    }

    /// A helper thread: does thread `t`'s share of each step until `Quit`.
    fn helper(&self, crew: &Crew, t: usize) {
        let mut seen = 0;
        loop {
            seen = crew.generation.wait(|g| g != seen);
            let step = lock(&crew.step).clone();
            if matches!(step, Step::Quit) {
                return;
            }
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| self.share(&step, t)))
            {
                lock(&crew.panic).get_or_insert(panic);
            }
            crew.done.bump();
        }
    }

    /// Publishes `step`, does the coordinator's share, and waits for the helpers'; or, not
    /// `parallel`, does every thread's share here.
    fn order(&self, crew: &Crew, step: Step, parallel: bool) {
        if !parallel {
            for t in 0..self.threads {
                self.share(&step, t);
            }
            return;
        }
        *lock(&crew.step) = step.clone();
        crew.done.set(0);
        crew.generation.bump();
        if matches!(step, Step::Quit) {
            return;
        }
        self.share(&step, 0);
        let helpers = self.threads - 1;
        crew.done.wait(|d| d == helpers as u64);
        if let Some(panic) = lock(&crew.panic).take() {
            std::panic::resume_unwind(panic);
        }
    }

    /// Thread `t`'s share of `step`: parts `t`, `t + threads`, ...
    fn share(&self, step: &Step, t: usize) {
        let n = self.parts.len();
        for i in (t..n).step_by(self.threads) {
            let mut part = lock(&self.parts[i]);
            match step {
                Step::Run(through) => {
                    if let Some((time, key)) = through[i] {
                        part.run_through(time, key);
                        for to in (0..n).filter(|&to| to != i) {
                            let mut mail = lock(&self.mail[to * n + i]);
                            mail.extend(part.outbox.iter().filter(|r| usize::from(r.to) == to));
                        }
                        part.outbox.clear();
                    }
                }
                Step::Collect => {
                    for from in 0..n {
                        let mut mail = lock(&self.mail[i * n + from]);
                        for r in mail.drain(..) {
                            part.receive_remote(&r);
                        }
                    }
                }
                Step::Quit => {}
            }
        }
    }

    /// The windows, from the coordinating thread. Returns whether the run ended, and why.
    fn coordinate(&self, crew: &Crew, limit: Time, pace: &mut Pace) -> (bool, Option<StopReason>) {
        let n = self.parts.len();
        loop {
            pace.window_done(self.events());
            // While probing against one thread, measure the threads themselves.
            let parallel = self.probing.is_some() || pace.parallel();
            let next = self
                .parts
                .iter()
                .filter_map(|p| lock(p).queue.peek_time())
                .min();
            let Some(start) = next else {
                let end = self.now();
                self.end_all(StopReason::Idle, end);
                return (true, Some(StopReason::Idle));
            };
            if start > limit {
                return (false, None);
            }
            let last = Time(start.as_ps().saturating_add(self.lookahead.as_ps() - 1)).min(limit);
            // Parts with flows of their own still running go first.
            let leading: Vec<bool> = self
                .parts
                .iter()
                .map(|p| {
                    let p = lock(p);
                    p.finished_flows < p.flows_to_finish
                })
                .collect();
            let first: Vec<_> = leading
                .iter()
                .map(|&l| l.then_some((last, u64::MAX)))
                .collect();
            self.order(crew, Step::Run(first), parallel);
            let mut finished = 0;
            let mut done_at = Vec::with_capacity(n);
            let mut stop_at = None;
            for p in &self.parts {
                let mut p = lock(p);
                finished += p.finished_flows;
                done_at.push(p.done_at.take());
                if p.stop == Some(StopReason::StopTime) {
                    stop_at = Some((p.now, p.cur_key));
                }
            }
            let all_done = self.total_flows > 0 && finished == self.total_flows;
            // Where the run ends, if it ends in this window: the event that finished the
            // last flow, or the stop time.
            let end = if all_done {
                done_at.iter().flatten().copied().max()
            } else {
                stop_at
            };
            let second: Vec<_> = (0..n)
                .map(|i| {
                    let mut p = lock(&self.parts[i]);
                    let paused = p.stop == Some(StopReason::AllFlowsDone);
                    match end {
                        Some(e)
                            if done_at[i] == Some(e) || p.stop == Some(StopReason::StopTime) =>
                        {
                            None
                        }
                        Some(e) => {
                            p.stop = None;
                            Some(e)
                        }
                        None if paused || !leading[i] => {
                            p.stop = None;
                            Some((last, u64::MAX))
                        }
                        None => None,
                    }
                })
                .collect();
            if second.iter().any(Option::is_some) {
                self.order(crew, Step::Run(second), parallel);
            }
            self.order(crew, Step::Collect, parallel);
            if let Some((t, _)) = end {
                let reason = if all_done {
                    StopReason::AllFlowsDone
                } else {
                    StopReason::StopTime
                };
                self.end_all(reason, t);
                return (true, Some(reason));
            }
            if self
                .parts
                .iter()
                .any(|p| lock(p).stop == Some(StopReason::StopTime))
            {
                let t = self.now();
                self.end_all(StopReason::StopTime, t);
                return (true, Some(StopReason::StopTime));
            }
        }
    }

    /// Marks every part ended at `time` for `reason`.
    fn end_all(&self, reason: StopReason, time: Time) {
        for p in &self.parts {
            let mut p = lock(p);
            p.stop = Some(reason);
            p.now = time;
        }
    }

    /// Ends the run (if it has not ended) and collects the results of all parts.
    pub fn finish(self) -> RunResults {
        let stop = self.stop;
        let deadlock = self.deadlock;
        let node_part = {
            let p = lock(&self.parts[0]);
            p.node_part.clone()
        };
        let parts: Vec<Simulation> = self
            .parts
            .into_iter()
            .map(|m| match m.into_inner() {
                Ok(p) => p,
                Err(poisoned) => panic!("a simulation part panicked: {poisoned}"),
            })
            .collect();
        let now = parts.iter().map(|p| p.now).max().unwrap_or(Time::ZERO);
        let mut results = parts.into_iter().map(|mut p| {
            p.now = now;
            p.events = p.events_once();
            p.finish()
        });
        let Some(mut all) = results.next() else {
            return RunResults::default();
        };
        all.deadlock = deadlock;
        if node_part.is_empty() {
            return all;
        }
        let part = |node: u32| node_part.get(node as usize).copied().unwrap_or(0);
        // A flow's record is its sender's part's, except what was delivered: its receiver's.
        let mut delivered: Vec<u64> = all.flows.iter().map(|f| f.delivered).collect();
        for (i, r) in results.enumerate() {
            let i = (i + 1) as u16;
            for ((a, b), d) in all.flows.iter_mut().zip(r.flows).zip(&mut delivered) {
                if part(b.dst) == i {
                    *d = b.delivered;
                }
                if part(b.src) == i {
                    *a = b;
                }
            }
            for (a, b) in all.ports.iter_mut().zip(r.ports) {
                // A port's statistics are its owner's, except its victim pauses: they are
                // judged where its PAUSE frames arrive, in any part.
                let mut victims = a.victim_pauses;
                for (v, w) in victims.iter_mut().zip(b.victim_pauses) {
                    *v += w;
                }
                let port_victims = a.port_victim_pauses + b.port_victim_pauses;
                if part(b.node) == i {
                    *a = b;
                }
                a.victim_pauses = victims;
                a.port_victim_pauses = port_victims;
            }
            for (a, b) in all.switches.iter_mut().zip(r.switches) {
                if part(b.node) == i {
                    *a = b;
                }
            }
            for (cause, count) in r.drops {
                *all.drops.entry(cause).or_insert(0) += count;
            }
            all.watchdog.absorb(&r.watchdog);
            all.pfc_sent.extend(r.pfc_sent);
            all.pfc_received.extend(r.pfc_received);
            all.credit_blocks.extend(r.credit_blocks);
            all.lossless_drops.extend(r.lossless_drops);
            all.queue_samples.extend(r.queue_samples);
            all.buffer_samples.extend(r.buffer_samples);
            all.rate_samples.extend(r.rate_samples);
            all.marking.extend(r.marking);
            all.mark_samples.extend(r.mark_samples);
            all.events += r.events;
            all.bytes.absorb(&r.bytes);
            all.arena_slots += r.arena_slots;
        }
        for (a, d) in all.flows.iter_mut().zip(delivered) {
            a.delivered = d;
        }
        all.stop_reason = stop;
        all.end_time = now;
        all.sort_records();
        all
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
