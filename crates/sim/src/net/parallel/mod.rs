//! Partitioned runs: one network simulated as several parts, on several threads, with
//! exactly the results of a single simulation.
//!
//! The nodes are split into parts ([`split`]). Each part is a [`Simulation`] holding its
//! own nodes' ports and buffers and the rest of the network's state, and acting only on
//! its own nodes; a frame for a port of another
//! part goes to its outbox. Such a frame arrives no earlier than one link delay after it
//! was sent, and no link between parts is shorter than the *lookahead*. So the parts advance
//! in windows of one lookahead (conservative synchronisation): within a window each part
//! handles its events, none of which another part's frames could precede; between windows
//! the frames are delivered.
//!
//! Why the results do not depend on the number of parts:
//! - events are ordered by a key made of the time, the port that scheduled them (by its
//!   canonical index, a whole run's number for it, whatever the parts number it) and its
//!   count of scheduled events (`engine`), never by the order in which a process ran
//!   different nodes; random draws come from per-switch and per-port streams;
//! - every node's bookkeeping reads only that node's state (victim pauses are judged where
//!   the PAUSE arrives); time-stamped records are sorted by `(time, node)`;
//! - a flow belongs to its sender's part. A single simulation stops right after the event
//!   that finishes its last flow; a part that finishes its own last flow pauses right after
//!   it, and parts whose flows are all done run each window only after the others, so that
//!   when the last flow finishes (at key `K`), every part can be brought exactly to `K`.
//! - a flow-channel run goes on after its last flow until no channel is in use anywhere.
//!   The parts stand at `K`; from there they run one event at a time in the global order
//!   (the ACKs' last trips home: a few round trips), so that each release is seen as the
//!   single simulation sees it, and the run ends at the one that leaves no channel in use.
//!   An ACK frame's ACKs, which live beside its part's arena, travel in the mail with it.
//!
//! Invariants: between windows every frame is in exactly one part's queue; every part has
//! handled exactly the events up to the same point of the global order; a run that fails on
//! its first lossless drop, or whose parts would be joined by a zero-delay link, runs as
//! one part. A part holds only its own nodes' ports, numbered as one run (`PortTable`; the
//! others' wiring is known to all), its own switches' buffers (the others' MMUs have no
//! ports) and the flows its hosts send or receive (`FlowTable`; each part reports those, and
//! a flow's record is its sender's part's but for the bytes delivered, its receiver's); the
//! rest of the network's state (hosts, switches, per-port records) is a whole run's, and
//! only its own nodes' share of it changes.

mod crew;
mod mail;
mod probe;
mod split;

pub use crew::WindowCount;
use crew::{Crew, Pace, Signal, Step};
pub(in crate::net) use mail::{Mail, Remote};

pub use probe::{Load, Probe, ProbeSettings, MARGIN, PROBE_BUDGET};
pub use split::{split, Split};

use super::deadlock::{self, Deadlock};
use super::{SimError, Simulation};
use crate::config::{ConfigError, SimConfig};
use crate::engine::EventQueue;
use crate::results::{FlowRecord, PortStats, RunResults, StopReason};
use crate::routing::Routes;
use headroom_mech::units::Time;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};

/// A run split into parts that advance in parallel (see the module documentation). With
/// one part it is a plain [`Simulation`].
pub struct Partitioned {
    parts: Vec<Mutex<Simulation>>,
    /// Frames between windows: `mail[to * parts + from]`.
    mail: Vec<Mutex<Mail>>,
    lookahead: Time,
    threads: usize,
    total_flows: usize,
    stop: Option<StopReason>,
    /// The flows are all done but flow channels are still in use: the run goes on, one
    /// event at a time in the global order, until the last is released ([`Partitioned::drain`]).
    draining: bool,
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

/// How the windows of one call of [`Partitioned::coordinate`] ended.
#[derive(Clone, Copy, Debug)]
enum Windows {
    /// At the call's limit: the run goes on.
    Limit,
    /// The run ended.
    Ended(StopReason),
    /// The flows are all done, flow channels are still in use: the run drains them.
    Drain,
}

/// Half a deadlock detection time (at least 1 ps): the interval between checks, so that a
/// cycle is found within one and a half detection times of its start.
fn half(detection: Time) -> Time {
    Time((detection.as_ps() / 2).max(1))
}

/// The part in `m`, held exclusively; a poisoned lock means a part panicked, which is
/// re-raised here.
fn part_mut(m: &mut Mutex<Simulation>) -> &mut Simulation {
    match m.get_mut() {
        Ok(p) => p,
        Err(poisoned) => panic!("a simulation part panicked: {poisoned}"),
    }
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
        if s.parts > 1 && (s.lookahead == Time::ZERO || cfg.record.fail_on_lossless_drop) {
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
            mail: (0..n * n).map(|_| Mutex::new(Mail::default())).collect(),
            lookahead: s.lookahead,
            threads: threads.clamp(1, n),
            total_flows,
            stop: None,
            draining: false,
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

    /// Windows handled so far, and how many of them serially (see [`WindowCount`]).
    pub fn windows(&self) -> WindowCount {
        self.pace.run
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

    /// Stops the run at `now` if queues stalled for `detection` or longer form a cycle, or
    /// frames that have waited that long for flow channels block each other.
    fn stop_if_deadlocked(&mut self, now: Time, detection: Time) -> bool {
        let mut view = deadlock::StallView::default();
        for p in &self.parts {
            view.absorb(lock(p).stall_view(now, detection));
        }
        if view.channel_waits() {
            for p in &self.parts {
                lock(p).channel_links(&mut view);
            }
        }
        let found = {
            let first = lock(&self.parts[0]);
            deadlock::find_deadlock(&view, now, |gp| first.peer_port(gp)).or_else(|| {
                deadlock::find_channel_deadlock(&view, now, |gp| first.switch_peer_port(gp))
            })
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
            return part_mut(&mut self.parts[0]).run_until(limit);
        }
        if self.stop.is_some() {
            return true;
        }
        if self.draining {
            return self.drain(limit);
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
        let windows = std::thread::scope(|scope| {
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
        match windows {
            Windows::Limit => false,
            Windows::Ended(reason) => {
                self.stop = Some(reason);
                true
            }
            Windows::Drain => {
                self.draining = true;
                for p in &mut self.parts {
                    part_mut(p).stop = None;
                }
                self.drain(limit)
            }
        }
    }

    /// Drains the flow channels still in use once every flow is done (the parts stand at
    /// the event that finished the last one): events one at a time in the global `(time,
    /// key)` order, each part's frames for others delivered at once, until no channel is
    /// in use in any part (the run ends at that event, as a single simulation does), the
    /// stop time, an idle network, or `limit`. The drain is the ACKs' last trip home, a
    /// few round trips, so one thread suffices.
    fn drain(&mut self, limit: Time) -> bool {
        loop {
            let next = self
                .parts
                .iter_mut()
                .enumerate()
                .filter_map(|(i, p)| part_mut(p).queue.peek().map(|at| (at, i)))
                .min();
            let Some(((time, key), i)) = next else {
                let end = self.now();
                self.end_all(StopReason::Idle, end);
                self.stop = Some(StopReason::Idle);
                return true;
            };
            if time > limit {
                return false;
            }
            // Keys are unique: exactly that event.
            let part = part_mut(&mut self.parts[i]);
            part.run_through(time, key);
            let mut outbox = std::mem::take(&mut part.outbox);
            let stopped = part.stop;
            for (to, mail) in outbox.iter_mut().enumerate() {
                if !mail.is_empty() {
                    part_mut(&mut self.parts[to]).receive_mail(mail);
                    mail.clear();
                }
            }
            part_mut(&mut self.parts[i]).outbox = outbox;
            let reason = if stopped == Some(StopReason::StopTime) {
                // Every part handles the stop event: the others' come next, at this key.
                for p in &mut self.parts {
                    part_mut(p).run_through(time, key);
                }
                StopReason::StopTime
            } else if self
                .parts
                .iter_mut()
                .all(|p| part_mut(p).channels_in_use() == 0)
            {
                StopReason::AllFlowsDone
            } else {
                continue;
            };
            self.end_all(reason, time);
            self.stop = Some(reason);
            return true;
        }
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
                        for (to, outbox) in part.outbox.iter_mut().enumerate() {
                            if !outbox.is_empty() {
                                lock(&self.mail[to * n + i]).take_from(outbox);
                            }
                        }
                    }
                }
                Step::Collect => {
                    for from in 0..n {
                        let mut mail = lock(&self.mail[i * n + from]);
                        if !mail.is_empty() {
                            part.receive_mail(&mail);
                            mail.clear();
                        }
                    }
                }
                Step::Quit => {}
            }
        }
    }

    /// The windows, from the coordinating thread. Returns whether the run ended, and why.
    fn coordinate(&self, crew: &Crew, limit: Time, pace: &mut Pace) -> Windows {
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
                return Windows::Ended(StopReason::Idle);
            };
            if start > limit {
                return Windows::Limit;
            }
            pace.count(parallel);
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
                // Every part stands at the end: a single simulation would drain the flow
                // channels still in use from here.
                if all_done && self.parts.iter().any(|p| lock(p).channels_in_use() > 0) {
                    return Windows::Drain;
                }
                self.end_all(reason, t);
                return Windows::Ended(reason);
            }
            if self
                .parts
                .iter()
                .any(|p| lock(p).stop == Some(StopReason::StopTime))
            {
                let t = self.now();
                self.end_all(StopReason::StopTime, t);
                return Windows::Ended(StopReason::StopTime);
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
        let (stop, deadlock, total_flows) = (self.stop, self.deadlock, self.total_flows);
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
        // A part reports the flows its hosts send or receive. A flow's record is its
        // sender's part's, except what was delivered: its receiver's.
        let mut flows: Vec<Option<FlowRecord>> = vec![None; total_flows];
        let mut delivered = vec![0u64; total_flows];
        let mut take_flows = |i: u16, records: Vec<FlowRecord>| {
            for r in records {
                let id = r.id as usize;
                if part(r.dst) == i {
                    delivered[id] = r.delivered;
                }
                if part(r.src) == i {
                    flows[id] = Some(r);
                }
            }
        };
        take_flows(0, std::mem::take(&mut all.flows));
        // A part reports its own ports, and its peers' in other parts with only the victim
        // pauses it judged (they are judged where the PAUSE frames arrive).
        let mut ports: Vec<(u16, PortStats)> = std::mem::take(&mut all.ports)
            .into_iter()
            .map(|st| (0, st))
            .collect();
        for (i, r) in results.enumerate() {
            let i = (i + 1) as u16;
            take_flows(i, r.flows);
            ports.extend(r.ports.into_iter().map(|st| (i, st)));
            for (a, b) in all.switches.iter_mut().zip(r.switches) {
                if part(b.node) == i {
                    *a = b;
                }
            }
            for (cause, count) in r.drops {
                *all.drops.entry(cause).or_insert(0) += count;
            }
            all.watchdog.absorb(&r.watchdog);
            if let (Some(a), Some(b)) = (all.channels.as_mut(), r.channels) {
                a.absorb(b, |node| part(node) == i);
            }
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
        ports.sort_by_key(|(_, st)| (st.node, st.port));
        all.ports = ports
            .chunk_by(|(_, a), (_, b)| (a.node, a.port) == (b.node, b.port))
            .filter_map(|reports| {
                let (_, owners) = reports.iter().find(|(i, st)| part(st.node) == *i)?;
                let mut st = owners.clone();
                st.victim_pauses = [0; 8];
                st.port_victim_pauses = 0;
                for (_, r) in reports {
                    for (v, w) in st.victim_pauses.iter_mut().zip(r.victim_pauses) {
                        *v += w;
                    }
                    st.port_victim_pauses += r.port_victim_pauses;
                }
                Some(st)
            })
            .collect();
        // Every flow's sender is a host of some part, which reported it.
        all.flows = flows
            .into_iter()
            .zip(delivered)
            .filter_map(|(r, delivered)| r.map(|r| FlowRecord { delivered, ..r }))
            .collect();
        debug_assert_eq!(all.flows.len(), total_flows);
        all.stop_reason = stop;
        all.end_time = now;
        all.sort_records();
        all
    }
}
