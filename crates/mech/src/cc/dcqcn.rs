//! DCQCN reaction point: the sender-side rate controller of RoCEv2 congestion control.
//!
//! [`Dcqcn`] is a sans-IO state machine. It reads no clock, does no I/O and never allocates:
//! the driver feeds it CNP arrivals ([`Dcqcn::on_cnp`]) and sent bytes
//! ([`Dcqcn::on_bytes_sent`]), asks for the earliest pending deadline
//! ([`Dcqcn::poll_timeout`]) and calls [`Dcqcn::handle_timeout`] once that time is reached.
//!
//! Two variants are implemented, selected by [`DcqcnVariant`]:
//!
//! - [`DcqcnVariant::Paper`]: the reaction point of Zhu et al., "Congestion Control for
//!   Large-Scale RDMA Deployments", SIGCOMM 2015. Every CNP cuts the rate at once; recovery is
//!   driven by a rate-increase timer and a byte counter, each with its own stage counter.
//! - [`DcqcnVariant::Mellanox`]: the variant of the ns-3 simulator of HPCC (Li et al.,
//!   SIGCOMM 2019; `alibaba-edu/High-Precision-Congestion-Control`,
//!   `simulation/src/point-to-point/model/rdma-hw.cc`, the `*Mlx` functions), which models the
//!   firmware of Mellanox NICs: CNPs only set flags, a periodic alpha update and a periodic
//!   rate-decrease check act on them, and recovery is driven by the rate-increase timer alone.
//!
//! Timers and their order. There are up to three periodic timers: the alpha update
//! (`alpha_resume_interval`), the rate-increase timer (`rp_timer`) and, in the Mellanox variant,
//! the rate-decrease check (`rate_decrease_interval`). A timer that fires is re-armed one
//! period after its own deadline (not after the time `handle_timeout` was called), so a late
//! call replays exactly the events that an on-time driver would have seen. Timers with equal
//! deadlines run in this fixed order: **alpha update, then rate increase, then rate-decrease
//! check**. This reproduces the reference simulator, which schedules the decrease check 1 ns
//! after the alpha update on the first CNP (so the cut uses the freshly updated alpha) and
//! whose rate-increase event, scheduled one `rp_timer` earlier, precedes a decrease check
//! falling on the same instant (ns-3 runs simultaneous events in scheduling order). Here the
//! decrease check is not offset by 1 ns; the tie order gives the same sequence of actions.
//! A timer interval of zero disables that timer (like `byte_counter == 0` disables the byte
//! counter).
//!
//! Inputs and time: [`Dcqcn::on_cnp`] and (Paper variant) [`Dcqcn::on_bytes_sent`] first run
//! every timer due at or before their `now`, so a timer and an input at the same instant are
//! ordered timer first. `now` must not go backwards between calls.
//!
//! Invariants (checked by the property test in `dcqcn/tests.rs`):
//! - `min_rate <= rate() <= line_rate` and `min_rate <= target_rate() <= line_rate` at all
//!   times, where `min_rate` is taken as `min(cfg.min_rate, line_rate)`;
//! - `0 <= alpha() <= 1`;
//! - before the first CNP the flow sends at line rate, `poll_timeout()` is `None` and nothing
//!   (sent bytes, spurious timeouts) changes the state;
//! - `handle_timeout(now)` leaves no deadline `<= now` behind (unless a deadline would overflow
//!   `u64` picoseconds, in which case that timer is disarmed), and calling it when no timer is
//!   due changes nothing;
//! - the work of one `handle_timeout` call is bounded independently of the length of the gap:
//!   alpha decays and idle decrease checks are skipped in closed form, and rate-increase events
//!   are replayed one by one only until the rates reach a fixed point.
//!
//! Rates are kept as `f64` bits per second for the arithmetic, like the reference; the
//! [`Rate`] accessors round to the nearest bit per second and clamp to the bounds above.

use super::UeReaction;
use crate::units::{Rate, Time};

/// Which DCQCN reaction-point algorithm a [`Dcqcn`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DcqcnVariant {
    /// The DCQCN paper (Zhu et al., SIGCOMM 2015): a CNP cuts the rate immediately; a rate
    /// increase timer and a byte counter drive fast recovery, additive and hyper increase.
    Paper,
    /// The Mellanox-firmware variant of the HPCC ns-3 simulator (`rdma-hw.cc`, `*Mlx`): CNPs set
    /// flags that a periodic alpha update and a periodic rate-decrease check act on; recovery
    /// by the rate-increase timer only (no byte counter).
    Mellanox,
}

/// Parameters of a DCQCN reaction point.
///
/// [`Default`] is the Mellanox variant with the settings the HPCC simulator's `run.py` writes
/// for `--cc dcqcn` at 100 Gb/s (`alibaba-edu/High-Precision-Congestion-Control`,
/// `simulation/run.py`); [`DcqcnConfig::paper`] is the DCQCN paper's parameter set. Each field
/// documents both.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DcqcnConfig {
    /// Which algorithm runs. Default: [`DcqcnVariant::Mellanox`].
    pub variant: DcqcnVariant,
    /// EWMA gain `g` of the congestion estimate alpha, in `[0, 1]` (values outside are clamped).
    /// Default 1/256 = 0.00390625 (`run.py`: `EWMA_GAIN 0.00390625`); paper: 1/256.
    pub g: f64,
    /// Alpha update period (the paper's `K`). Paper variant: alpha decays by `(1 - g)` after
    /// every such period without a CNP (restarted by each CNP). Mellanox variant: alpha is
    /// updated every period once the first CNP arrived. Zero disables the timer.
    /// Default 1 µs (`run.py`: `ALPHA_RESUME_INTERVAL 1`); paper: 55 µs.
    pub alpha_resume_interval: Time,
    /// Mellanox variant: period of the rate-decrease check, i.e. the minimum time between two
    /// rate cuts. Zero disables rate cuts. Unused by the Paper variant, where every CNP cuts
    /// (the notification point already spaces CNPs by at least 50 µs).
    /// Default 4 µs (`run.py`: `RATE_DECREASE_INTERVAL 4`); `paper()`: 50 µs, the paper's CNP
    /// interval `N` (and `run.py`'s `dcqcn_paper` setting), for information only.
    pub rate_decrease_interval: Time,
    /// Rate-increase timer period `T`. Paper variant: restarted by each CNP. Mellanox variant:
    /// restarted by each rate cut. Zero disables the timer.
    /// Default 300 µs (`run.py`: `RP_TIMER 300` for `dcqcn`; `rdma-hw.cc`'s attribute default
    /// is 1500 µs); paper: 55 µs (also `run.py`'s `dcqcn_paper` setting).
    pub rp_timer: Time,
    /// Paper variant: byte counter `B`; a rate-increase event fires every `B` bytes sent since
    /// the last CNP or byte-counter event. 0 disables it. Unused by the Mellanox variant.
    /// Default 0 (the Mellanox variant has none); paper: 10 MB (10,000,000 bytes).
    pub byte_counter: u64,
    /// Number of fast-recovery steps `F`. Default 1 (`run.py`: `FAST_RECOVERY_TIMES 1`); paper: 5.
    pub fast_recovery_times: u32,
    /// Additive-increase step `R_AI` of the target rate.
    /// Default 20 Mb/s (`run.py` writes `RATE_AI` as `5 * bw / 25` Mb/s, i.e. 20 Mb/s at
    /// 100 Gb/s; `rdma-hw.cc`'s attribute default is 5 Mb/s); paper: 40 Mb/s.
    pub rate_ai: Rate,
    /// Hyper-increase step `R_HAI` of the target rate.
    /// Default 200 Mb/s (`run.py`: `50 * bw / 25` Mb/s at 100 Gb/s; attribute default 50 Mb/s);
    /// `paper()`: 200 Mb/s, the value in the DCQCN authors' ns-3 code
    /// (`bobzhuyb/ns3-rdma`, `mix/config.txt`: `RATE_HAI 200Mb/s` next to `RATE_AI 40Mb/s`).
    pub rate_hai: Rate,
    /// Floor of the sending rate (capped at the line rate).
    /// Default 1 Gb/s (`run.py`: `MIN_RATE 1000Mb/s`, which overrides `rdma-hw.cc`'s attribute
    /// default of 100 Mb/s); `paper()`: 100 Mb/s (the `MinRate` default of the authors' ns-3
    /// code).
    pub min_rate: Rate,
    /// Mellanox variant: on a rate cut, set the target rate to the current rate even when no
    /// rate-increase event happened since the previous cut (otherwise the target is kept).
    /// The Paper variant always sets the target rate to the current rate on a cut, as the
    /// paper's algorithm does. Default false (`run.py`: `CLAMP_TARGET_RATE 0`); `paper()`:
    /// true (the authors' ns-3 `mix/config.txt`: `CLAMP_TARGET_RATE 1`).
    pub clamp_target_rate: bool,
    /// Mellanox variant: on the first CNP of the flow, both the current and the target rate are
    /// set to this fraction of the current rate, before and independently of the normal cut.
    /// 1.0 = no extra cut. Default 1.0 (`rdma-hw.cc` attribute `RateOnFirstCnp`, which
    /// `run.py` does not override). Unused by the Paper variant.
    pub rate_on_first_cnp: f64,
    /// What a CNP reporting only UE marks does (ternary congestion detection). Default
    /// [`UeReaction::Hold`] (no switch marks UE unless TCD runs).
    pub on_ue: UeReaction,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            variant: DcqcnVariant::Mellanox,
            g: 1.0 / 256.0,
            alpha_resume_interval: Time::from_us(1),
            rate_decrease_interval: Time::from_us(4),
            rp_timer: Time::from_us(300),
            byte_counter: 0,
            fast_recovery_times: 1,
            rate_ai: Rate::from_mbps(20),
            rate_hai: Rate::from_mbps(200),
            min_rate: Rate::from_mbps(1000),
            clamp_target_rate: false,
            rate_on_first_cnp: 1.0,
            on_ue: UeReaction::Hold,
        }
    }
}

impl DcqcnConfig {
    /// The DCQCN paper's reaction-point parameters (Zhu et al., "Congestion Control for
    /// Large-Scale RDMA Deployments", SIGCOMM 2015, whose testbed runs at 40 Gb/s):
    /// `g = 1/256`, alpha timer `K = 55 µs` (larger than the 50 µs CNP interval `N`),
    /// rate-increase timer `T = 55 µs`, byte counter `B = 10 MB`, `F = 5`,
    /// `R_AI = 40 Mb/s`.
    ///
    /// Values the paper does not pin down are taken from the authors' public ns-3 code
    /// (`bobzhuyb/ns3-rdma`): `R_HAI = 200 Mb/s` (its `mix/config.txt`), `min_rate = 100 Mb/s`
    /// (its `MinRate` default) and `clamp_target_rate = true` (its config; the paper's
    /// algorithm always sets `RT = RC` on a cut anyway). The timer values agree with the HPCC
    /// simulator's `dcqcn_paper` setting in `run.py` (`RP_TIMER 55`). The Mellanox-only fields
    /// are set to neutral values (`rate_decrease_interval` = the CNP interval `N` = 50 µs,
    /// `rate_on_first_cnp = 1.0`).
    pub fn paper() -> Self {
        DcqcnConfig {
            variant: DcqcnVariant::Paper,
            g: 1.0 / 256.0,
            alpha_resume_interval: Time::from_us(55),
            rate_decrease_interval: Time::from_us(50),
            rp_timer: Time::from_us(55),
            byte_counter: 10_000_000,
            fast_recovery_times: 5,
            rate_ai: Rate::from_mbps(40),
            rate_hai: Rate::from_mbps(200),
            min_rate: Rate::from_mbps(100),
            clamp_target_rate: true,
            rate_on_first_cnp: 1.0,
            on_ue: UeReaction::Hold,
        }
    }
}

/// Up to this many consecutive alpha decays are applied one multiplication at a time (so a
/// late `handle_timeout` gives bit-identical results to an on-time driver); longer runs use
/// `powf`.
const STEPWISE_DECAYS: u64 = 1024;

/// A rate-increase step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Increase {
    /// `RC = (RC + RT) / 2`, target unchanged.
    FastRecovery,
    /// `RT += R_AI`, then fast recovery.
    Additive,
    /// `RT += n * R_HAI`, then fast recovery.
    Hyper(u32),
}

/// One flow's DCQCN reaction point. See the module documentation for the invariants.
#[derive(Debug, Clone, PartialEq)]
pub struct Dcqcn {
    /// The configuration in effect (sanitized, see [`Dcqcn::config`]).
    cfg: DcqcnConfig,
    line_rate: Rate,
    /// Current rate RC, bits/s.
    rc: f64,
    /// Target rate RT, bits/s.
    rt: f64,
    alpha: f64,
    /// A CNP has been received; before that nothing runs.
    started: bool,
    /// Paper: rate-increase timer stage counter `T`.
    t_count: u32,
    /// Paper: byte-counter stage counter `BC`.
    bc_count: u32,
    /// Paper: bytes sent since the last CNP or byte-counter event.
    bytes_acc: u64,
    /// Mellanox: rate-increase stage (`m_rpTimeStage`).
    stage: u32,
    /// Mellanox: a CNP arrived since the last alpha update.
    alpha_cnp: bool,
    /// Mellanox: a CNP arrived since the last rate-decrease check.
    decrease_cnp: bool,
    alpha_deadline: Option<Time>,
    increase_deadline: Option<Time>,
    decrease_deadline: Option<Time>,
}

impl Dcqcn {
    /// A reaction point for a flow on a NIC of `line_rate`. It starts at line rate with the
    /// target rate at line rate, alpha = 1 and no timer armed.
    pub fn new(mut cfg: DcqcnConfig, line_rate: Rate) -> Dcqcn {
        cfg.g = if cfg.g.is_nan() {
            0.0
        } else {
            cfg.g.clamp(0.0, 1.0)
        };
        cfg.rate_on_first_cnp = if cfg.rate_on_first_cnp.is_nan() {
            1.0
        } else {
            cfg.rate_on_first_cnp.max(0.0)
        };
        cfg.min_rate = cfg.min_rate.min(line_rate);
        let line = line_rate.as_f64();
        Dcqcn {
            line_rate,
            rc: line,
            rt: line,
            alpha: 1.0,
            started: false,
            t_count: 0,
            bc_count: 0,
            bytes_acc: 0,
            stage: 0,
            alpha_cnp: false,
            decrease_cnp: false,
            alpha_deadline: None,
            increase_deadline: None,
            decrease_deadline: None,
            cfg,
        }
    }

    /// The configuration this reaction point runs with: the one given to [`Dcqcn::new`], with
    /// `g` clamped into `[0, 1]` (NaN: 0), a negative `rate_on_first_cnp` raised to 0 (NaN: 1)
    /// and `min_rate` capped at the line rate.
    pub fn config(&self) -> &DcqcnConfig {
        &self.cfg
    }

    /// The NIC line rate, the ceiling of both rates.
    pub fn line_rate(&self) -> Rate {
        self.line_rate
    }

    /// Current sending rate RC, rounded to the nearest bit/s, within `[min_rate, line_rate]`.
    pub fn rate(&self) -> Rate {
        self.to_rate(self.rc)
    }

    /// Target rate RT, rounded to the nearest bit/s, within `[min_rate, line_rate]`.
    pub fn target_rate(&self) -> Rate {
        self.to_rate(self.rt)
    }

    /// The congestion estimate alpha, in `[0, 1]`.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Feedback about the flow arrived at `now`: a CNP reporting Congestion Experienced is
    /// [`Self::on_cnp`]; one reporting only UE is [`Self::on_ue`] (unless the configuration
    /// ignores UE); DCQCN learns nothing from ACKs.
    #[inline]
    pub fn on_feedback(&mut self, now: Time, feedback: &super::Feedback) {
        match feedback {
            super::Feedback::Cnp { ce: true, .. } => self.on_cnp(now),
            super::Feedback::Cnp { ue: true, .. } if self.cfg.on_ue != UeReaction::Ignore => {
                self.on_ue(now)
            }
            _ => {}
        }
    }

    /// A CNP reporting only UE marks arrived at `now`: the flow's queues were paused, none
    /// was a root of congestion. Timers due at or before `now` run first. Then the rate
    /// holds: the target rate becomes the current rate, the increase stages (and, Paper,
    /// the byte counter) restart, the rate-increase timer restarts from `now`; no cut and
    /// no alpha update. With [`UeReaction::HoldRestartAlpha`] the alpha timer restarts
    /// from `now` too. Before the first CNP the flow is at line rate with nothing to hold,
    /// and nothing changes.
    pub fn on_ue(&mut self, now: Time) {
        self.handle_timeout(now);
        if !self.started {
            return;
        }
        self.rt = self.rc;
        match self.cfg.variant {
            DcqcnVariant::Paper => {
                self.t_count = 0;
                self.bc_count = 0;
                self.bytes_acc = 0;
            }
            DcqcnVariant::Mellanox => self.stage = 0,
        }
        self.increase_deadline = arm(now, self.cfg.rp_timer);
        if self.cfg.on_ue == UeReaction::HoldRestartAlpha {
            self.alpha_deadline = arm(now, self.cfg.alpha_resume_interval);
        }
    }

    /// A congestion notification packet for this flow arrived at `now`. Timers due at or
    /// before `now` run first.
    ///
    /// Paper: `RT = RC`, `RC = RC * (1 - alpha/2)` (floored at `min_rate`), then
    /// `alpha = (1 - g) * alpha + g`; both stage counters and the byte counter reset; the
    /// rate-increase and alpha timers restart from `now`.
    ///
    /// Mellanox: sets the "CNP arrived" flags read by the next alpha update and rate-decrease
    /// check. On the first CNP: alpha = 1, the alpha and rate-decrease timers start from `now`,
    /// and `RT = RC = rate_on_first_cnp * RC`.
    pub fn on_cnp(&mut self, now: Time) {
        self.handle_timeout(now);
        match self.cfg.variant {
            DcqcnVariant::Paper => {
                self.started = true;
                self.rt = self.rc;
                self.rc = self.clamp(self.rc * (1.0 - self.alpha / 2.0));
                self.alpha = clamp_unit((1.0 - self.cfg.g) * self.alpha + self.cfg.g);
                self.t_count = 0;
                self.bc_count = 0;
                self.bytes_acc = 0;
                self.increase_deadline = arm(now, self.cfg.rp_timer);
                self.alpha_deadline = arm(now, self.cfg.alpha_resume_interval);
            }
            DcqcnVariant::Mellanox => {
                self.alpha_cnp = true;
                self.decrease_cnp = true;
                if !self.started {
                    self.started = true;
                    self.alpha = 1.0;
                    self.alpha_cnp = false;
                    self.alpha_deadline = arm(now, self.cfg.alpha_resume_interval);
                    self.decrease_deadline = arm(now, self.cfg.rate_decrease_interval);
                    self.rc = self.clamp(self.cfg.rate_on_first_cnp * self.rc);
                    self.rt = self.rc;
                }
            }
        }
    }

    /// The sender put `bytes` of this flow on the wire at `now`.
    ///
    /// Paper variant, once the first CNP arrived and with a non-zero `byte_counter`: timers due
    /// at or before `now` run first, then every `byte_counter` bytes counted since the last CNP
    /// or byte-counter event trigger one rate-increase event (`BC += 1`). Otherwise ignored
    /// (the Mellanox variant has no byte counter).
    pub fn on_bytes_sent(&mut self, now: Time, bytes: u64) {
        if self.cfg.variant != DcqcnVariant::Paper || !self.started || self.cfg.byte_counter == 0 {
            return;
        }
        self.handle_timeout(now);
        let b = self.cfg.byte_counter;
        self.bytes_acc = self.bytes_acc.saturating_add(bytes);
        let events = self.bytes_acc / b;
        self.bytes_acc %= b;
        let mut done = 0;
        while done < events {
            done += 1;
            self.bc_count = self.bc_count.saturating_add(1);
            let before = self.rc;
            self.apply(paper_step(
                self.t_count,
                self.bc_count,
                self.cfg.fast_recovery_times,
            ));
            if self.rc == before && !self.paper_can_grow(self.t_count, self.bc_count) {
                self.bc_count = add_u32(self.bc_count, events - done);
                break;
            }
        }
    }

    /// The earliest pending timer deadline, or `None` when no timer is armed (always the case
    /// before the first CNP).
    pub fn poll_timeout(&self) -> Option<Time> {
        [
            self.alpha_deadline,
            self.increase_deadline,
            self.decrease_deadline,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The earliest pending deadline at which a timer can change the sending rate: the rate
    /// increase while the rate or the target is below line rate, the Mellanox rate-decrease
    /// check while a CNP is pending. Timers before it only move alpha or the stage counters;
    /// [`Self::handle_timeout`], [`Self::on_cnp`] and [`Self::on_bytes_sent`] replay those at
    /// once, event by event, so a driver that only needs [`Self::rate`] may sleep until
    /// this deadline and lose nothing.
    pub fn poll_rate_timeout(&self) -> Option<Time> {
        if !self.started {
            return None;
        }
        let line = self.line();
        let increase = self
            .increase_deadline
            .filter(|_| self.rc < line || self.rt < line);
        let decrease = self.decrease_deadline.filter(|_| self.decrease_cnp);
        match (increase, decrease) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs every timer whose deadline is `<= now`, in deadline order (ties: alpha update,
    /// rate increase, rate-decrease check), re-arming each one period after its own deadline.
    /// Timers not yet due are untouched, so a spurious or early call changes nothing.
    pub fn handle_timeout(&mut self, now: Time) {
        if !self.started {
            return;
        }
        // A pending Mellanox decrease couples the chains: it reads alpha and rewrites RC, RT,
        // the stage and the rate-increase deadline. Replay everything up to it, then the cut.
        if self.cfg.variant == DcqcnVariant::Mellanox && self.decrease_cnp {
            if let Some(dd) = self.decrease_deadline.filter(|&dd| dd <= now) {
                self.run_alpha(dd);
                self.run_increase(dd);
                self.run_decrease(dd);
            }
        }
        // From here on no rate cut happens at or before `now` (a pending flag is either consumed
        // or its check lies after `now`, and no input arrives within this call), so the three
        // chains are independent and each can run to `now` on its own.
        self.run_alpha(now);
        self.run_increase(now);
        self.run_decrease(now);
    }

    // ----- timer chains -----

    /// Runs the alpha timer's events with deadline `<= limit`.
    fn run_alpha(&mut self, limit: Time) {
        let Some((d, n)) = due(self.alpha_deadline, self.cfg.alpha_resume_interval, limit) else {
            return;
        };
        let mut decays = n;
        if self.cfg.variant == DcqcnVariant::Mellanox && self.alpha_cnp {
            self.alpha = clamp_unit((1.0 - self.cfg.g) * self.alpha + self.cfg.g);
            self.alpha_cnp = false;
            decays -= 1;
        }
        let keep = 1.0 - self.cfg.g;
        if decays <= STEPWISE_DECAYS {
            for _ in 0..decays {
                self.alpha *= keep;
            }
        } else {
            self.alpha *= keep.powf(decays as f64);
        }
        self.alpha = clamp_unit(self.alpha);
        self.alpha_deadline = advance(d, self.cfg.alpha_resume_interval, n);
    }

    /// Runs the rate-increase timer's events with deadline `<= limit`.
    fn run_increase(&mut self, limit: Time) {
        let Some((d, n)) = due(self.increase_deadline, self.cfg.rp_timer, limit) else {
            return;
        };
        let f = self.cfg.fast_recovery_times;
        let mut done = 0;
        while done < n {
            done += 1;
            let before = self.rc;
            let fixed = match self.cfg.variant {
                DcqcnVariant::Paper => {
                    self.t_count = self.t_count.saturating_add(1);
                    self.apply(paper_step(self.t_count, self.bc_count, f));
                    !self.paper_can_grow(self.bc_count, self.t_count)
                }
                DcqcnVariant::Mellanox => {
                    self.apply(mellanox_step(self.stage, f));
                    self.stage = self.stage.saturating_add(1);
                    !self.mellanox_can_grow()
                }
            };
            if fixed && self.rc == before {
                // Every remaining event leaves RC and RT as they are; only count them.
                let rest = n - done;
                match self.cfg.variant {
                    DcqcnVariant::Paper => self.t_count = add_u32(self.t_count, rest),
                    DcqcnVariant::Mellanox => self.stage = add_u32(self.stage, rest),
                }
                break;
            }
        }
        self.increase_deadline = advance(d, self.cfg.rp_timer, n);
    }

    /// Runs the Mellanox rate-decrease checks with deadline `<= limit`. Only the first can
    /// act: it consumes the flag, and no CNP arrives within one `handle_timeout` call.
    fn run_decrease(&mut self, limit: Time) {
        let Some((d, n)) = due(
            self.decrease_deadline,
            self.cfg.rate_decrease_interval,
            limit,
        ) else {
            return;
        };
        if self.decrease_cnp {
            if self.cfg.clamp_target_rate || self.stage != 0 {
                self.rt = self.rc;
            }
            self.rc = self.clamp(self.rc * (1.0 - self.alpha / 2.0));
            self.stage = 0;
            self.decrease_cnp = false;
            self.increase_deadline = arm(d, self.cfg.rp_timer);
        }
        self.decrease_deadline = advance(d, self.cfg.rate_decrease_interval, n);
    }

    // ----- rate arithmetic -----

    /// Applies one rate-increase step: raise the target (capped at line rate), then move the
    /// current rate halfway towards it.
    fn apply(&mut self, step: Increase) {
        let add = match step {
            Increase::FastRecovery => 0.0,
            Increase::Additive => self.cfg.rate_ai.as_f64(),
            Increase::Hyper(i) => f64::from(i) * self.cfg.rate_hai.as_f64(),
        };
        self.rt = self.clamp(self.rt + add);
        self.rc = self.clamp((self.rc + self.rt) / 2.0);
    }

    /// Paper: whether a future event can still raise RT, when `fixed` is the stage counter
    /// that does not move and `growing` the current value of the one that does.
    fn paper_can_grow(&self, fixed: u32, growing: u32) -> bool {
        if self.rt >= self.line() {
            return false;
        }
        let f = self.cfg.fast_recovery_times;
        // Future events see growing+1, growing+2, ...: additive needs max >= F and min <= F,
        // hyper needs min > F.
        let additive_ahead = fixed <= f || growing < f;
        let hyper_ahead = fixed > f;
        (additive_ahead && self.cfg.rate_ai.0 > 0) || (hyper_ahead && self.cfg.rate_hai.0 > 0)
    }

    /// Mellanox: whether a future rate-increase event can still raise RT.
    fn mellanox_can_grow(&self) -> bool {
        if self.rt >= self.line() {
            return false;
        }
        (self.stage <= self.cfg.fast_recovery_times && self.cfg.rate_ai.0 > 0)
            || self.cfg.rate_hai.0 > 0
    }

    fn clamp(&self, bps: f64) -> f64 {
        if bps.is_nan() {
            return self.floor();
        }
        bps.clamp(self.floor(), self.line())
    }

    fn to_rate(&self, bps: f64) -> Rate {
        Rate((bps.round() as u64).clamp(self.cfg.min_rate.0, self.line_rate.0))
    }

    /// Line rate, bits/s.
    fn line(&self) -> f64 {
        self.line_rate.as_f64()
    }

    /// Rate floor (`min_rate`, already capped at the line rate), bits/s.
    fn floor(&self) -> f64 {
        self.cfg.min_rate.as_f64()
    }
}

/// Paper: the step of a rate-increase event, given the stage counters after the event's own
/// counter was incremented.
fn paper_step(t: u32, bc: u32, f: u32) -> Increase {
    if t.max(bc) < f {
        Increase::FastRecovery
    } else if t.min(bc) > f {
        Increase::Hyper(t.min(bc) - f)
    } else {
        Increase::Additive
    }
}

/// Mellanox: the step of a rate-increase event at `stage` (before it is incremented).
fn mellanox_step(stage: u32, f: u32) -> Increase {
    match stage.cmp(&f) {
        std::cmp::Ordering::Less => Increase::FastRecovery,
        std::cmp::Ordering::Equal => Increase::Additive,
        std::cmp::Ordering::Greater => Increase::Hyper(1),
    }
}

/// A deadline one `interval` after `at`, or `None` when the timer is disabled (zero interval)
/// or the deadline would overflow.
fn arm(at: Time, interval: Time) -> Option<Time> {
    if interval.0 == 0 {
        return None;
    }
    at.0.checked_add(interval.0).map(Time)
}

/// If the timer armed at `deadline` with period `interval` has events `<= limit`: the first
/// deadline and the number of due events.
fn due(deadline: Option<Time>, interval: Time, limit: Time) -> Option<(Time, u64)> {
    let d = deadline?;
    if d > limit || interval.0 == 0 {
        return None;
    }
    Some((d, (limit.0 - d.0) / interval.0 + 1))
}

/// The deadline after `n` periods from `d`, or `None` on overflow.
fn advance(d: Time, interval: Time, n: u64) -> Option<Time> {
    interval
        .0
        .checked_mul(n)
        .and_then(|span| d.0.checked_add(span))
        .map(Time)
}

fn add_u32(counter: u32, n: u64) -> u32 {
    u32::try_from(u64::from(counter).saturating_add(n)).unwrap_or(u32::MAX)
}

fn clamp_unit(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

#[cfg(test)]
mod tests;
