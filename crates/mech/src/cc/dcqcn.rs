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
//! Invariants (checked by the property test at the bottom):
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
mod tests {
    use super::super::Feedback;
    use super::*;
    use proptest::prelude::*;

    const LINE: Rate = Rate::from_gbps(100);
    const G: f64 = 1.0 / 256.0;

    fn us(n: u64) -> Time {
        Time::from_us(n)
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Mellanox with F = 5 so that all three increase phases are visible.
    fn mlx(f: u32) -> DcqcnConfig {
        DcqcnConfig {
            fast_recovery_times: f,
            ..DcqcnConfig::default()
        }
    }

    /// Paper with the byte counter at 1 MB and a 100 µs timer, easy to reason about.
    fn paper() -> DcqcnConfig {
        DcqcnConfig {
            byte_counter: 1_000_000,
            rp_timer: us(100),
            alpha_resume_interval: us(55),
            ..DcqcnConfig::paper()
        }
    }

    /// Paper reaction point after two CNPs (at 0 and 1 µs): RT = 50G, RC = 25G, timers
    /// restarted at 1 µs.
    fn paper_below_line(cfg: DcqcnConfig) -> Dcqcn {
        let mut d = Dcqcn::new(cfg, LINE);
        d.on_cnp(Time::ZERO);
        d.on_cnp(us(1));
        assert_eq!((d.rt, d.rc), (50e9, 25e9));
        d
    }

    /// Drives `d` deadline by deadline up to `until`, as a poll-driven simulator would.
    fn drive(d: &mut Dcqcn, until: Time) {
        while let Some(t) = d.poll_timeout() {
            if t > until {
                break;
            }
            d.handle_timeout(t);
        }
        d.handle_timeout(until);
    }

    #[test]
    fn starts_at_line_rate_with_no_timers() {
        for cfg in [DcqcnConfig::default(), DcqcnConfig::paper()] {
            let mut d = Dcqcn::new(cfg, LINE);
            assert_eq!(d.rate(), LINE);
            assert_eq!(d.target_rate(), LINE);
            assert_eq!(d.alpha(), 1.0);
            assert_eq!(d.poll_timeout(), None);
            let before = d.clone();
            d.on_bytes_sent(us(1), 50_000_000);
            d.handle_timeout(Time::from_ms(10));
            assert_eq!(d, before, "nothing runs before the first CNP");
        }
    }

    #[test]
    fn paper_cnp_cuts_by_half_alpha_and_clamps_target() {
        let mut d = Dcqcn::new(paper(), LINE);
        let t0 = us(10);
        d.on_cnp(t0);
        // alpha starts at 1: the first cut halves the rate, alpha stays (1-g)*1+g = 1.
        assert_eq!(d.rate(), Rate::from_gbps(50));
        assert_eq!(d.target_rate(), LINE);
        assert_eq!(d.alpha(), 1.0);
        // Let alpha decay for 3 periods (one rate-increase event, at t0+100us, runs too).
        d.handle_timeout(t0 + us(3 * 55));
        let a = (1.0 - G).powi(3);
        assert!(close(d.alpha(), a, 1e-15), "{} vs {a}", d.alpha());
        let rc = d.rc;
        d.on_cnp(t0 + us(170));
        assert!(close(d.rc, rc * (1.0 - a / 2.0), 1e-3));
        assert_eq!(
            d.target_rate(),
            Rate::from_f64(rc),
            "RT = RC before the cut"
        );
        assert!(close(d.alpha(), (1.0 - G) * a + G, 1e-15));
        assert_eq!(d.poll_timeout(), Some(t0 + us(170) + us(55)));
    }

    #[test]
    fn paper_alpha_closed_form_with_and_without_cnps() {
        let mut d = Dcqcn::new(paper(), LINE);
        d.on_cnp(Time::ZERO);
        // n periods without CNP: alpha = (1-g)^n (timers re-armed on the 55us grid).
        let n = 7u64;
        d.handle_timeout(us(55 * n));
        let a_n = (1.0 - G).powi(n as i32);
        assert!(close(d.alpha(), a_n, 1e-14));
        // m CNPs: alpha = 1 - (1 - a_n) (1-g)^m.
        let m = 9;
        for k in 0..m {
            d.on_cnp(us(55 * n + 1 + k));
        }
        let expect = 1.0 - (1.0 - a_n) * (1.0 - G).powi(m as i32);
        assert!(close(d.alpha(), expect, 1e-14), "{} vs {expect}", d.alpha());
    }

    #[test]
    fn mellanox_alpha_closed_form_with_and_without_cnps() {
        let mut d = Dcqcn::new(DcqcnConfig::default(), LINE);
        d.on_cnp(Time::ZERO);
        assert_eq!(d.alpha(), 1.0);
        // n alpha periods without CNP.
        let n = 40u64;
        d.handle_timeout(us(n));
        let a_n = (1.0 - G).powi(n as i32);
        assert!(close(d.alpha(), a_n, 1e-14));
        // A CNP inside each of the next m periods: each update adds g.
        let m = 25u64;
        for k in 0..m {
            d.on_cnp(us(n) + Time::from_ns(500) + us(k));
        }
        d.handle_timeout(us(n + m));
        let expect = 1.0 - (1.0 - a_n) * (1.0 - G).powi(m as i32);
        assert!(close(d.alpha(), expect, 1e-14), "{} vs {expect}", d.alpha());
        // Several CNPs within one period count once.
        let mut e = Dcqcn::new(DcqcnConfig::default(), LINE);
        e.on_cnp(Time::ZERO);
        e.handle_timeout(us(10));
        let a10 = e.alpha();
        for k in 0..5 {
            e.on_cnp(us(10) + Time::from_ns(100 + k));
        }
        e.handle_timeout(us(11));
        assert!(close(e.alpha(), (1.0 - G) * a10 + G, 1e-15));
    }

    #[test]
    fn mellanox_first_cnp_sets_alpha_one_and_rate_on_first_cnp() {
        let cfg = DcqcnConfig {
            rate_on_first_cnp: 0.5,
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(cfg, LINE);
        d.alpha = 0.3;
        let t0 = us(7);
        d.on_cnp(t0);
        assert_eq!(d.alpha(), 1.0);
        assert!(
            !d.alpha_cnp,
            "the first CNP does not count for the alpha update"
        );
        assert!(d.decrease_cnp);
        assert_eq!(d.rate(), Rate::from_gbps(50));
        assert_eq!(d.target_rate(), Rate::from_gbps(50));
        assert_eq!(d.poll_timeout(), Some(t0 + us(1)));
        assert_eq!(d.decrease_deadline, Some(t0 + us(4)));
        assert_eq!(
            d.increase_deadline, None,
            "no rate-increase timer before the first cut"
        );
        // At t0+4us: three alpha decays, the fourth decay, then the cut with that alpha.
        d.handle_timeout(t0 + us(4));
        let a4 = (1.0 - G).powi(4);
        assert!(close(d.alpha(), a4, 1e-15));
        assert!(close(d.rc, 50e9 * (1.0 - a4 / 2.0), 1e-3));
        // stage was 0 and clamp is off: the target stays at 50G.
        assert_eq!(d.target_rate(), Rate::from_gbps(50));
        assert_eq!(d.increase_deadline, Some(t0 + us(304)));
    }

    #[test]
    fn mellanox_decrease_only_when_cnp_in_interval() {
        let mut d = Dcqcn::new(DcqcnConfig::default(), LINE);
        d.on_cnp(Time::ZERO);
        d.handle_timeout(us(4));
        let after_first_cut = d.rate();
        assert!(after_first_cut < LINE);
        // No CNP: the checks at 8, 12, ..., 100 us do nothing to the rate.
        d.handle_timeout(us(100));
        assert_eq!(d.rate(), after_first_cut);
        assert_eq!(d.decrease_deadline, Some(us(104)));
        // A CNP at 101 us: the check at 104 us cuts with the alpha current then.
        d.on_cnp(us(101));
        d.handle_timeout(us(103));
        assert_eq!(d.rate(), after_first_cut, "not before the check");
        let rc = d.rc;
        d.handle_timeout(us(104));
        let a = d.alpha();
        assert!(close(d.rc, rc * (1.0 - a / 2.0), 1e-3));
        assert!(!d.decrease_cnp);
        // And only once: the next check has no CNP.
        let cut = d.rate();
        d.handle_timeout(us(108));
        assert_eq!(d.rate(), cut);
    }

    #[test]
    fn mellanox_cut_resets_stage_and_restarts_rp_timer() {
        let mut d = Dcqcn::new(mlx(5), LINE);
        d.on_cnp(Time::ZERO);
        d.handle_timeout(us(4)); // first cut, rp timer at 304us
        d.handle_timeout(us(904)); // three increase events: 304, 604, 904
        assert_eq!(d.stage, 3);
        assert_eq!(d.increase_deadline, Some(us(1204)));
        let rc = d.rc;
        d.on_cnp(us(905));
        d.handle_timeout(us(908));
        assert_eq!(d.stage, 0, "a cut resets the stage");
        assert_eq!(
            d.target_rate(),
            Rate::from_f64(rc),
            "stage != 0 clamps RT = RC"
        );
        assert_eq!(
            d.increase_deadline,
            Some(us(1208)),
            "rp timer restarted at the cut"
        );
        // A second cut right after (stage 0, clamp off) keeps the target.
        let rt = d.target_rate();
        d.on_cnp(us(909));
        d.handle_timeout(us(912));
        assert_eq!(d.target_rate(), rt);
        assert_eq!(d.increase_deadline, Some(us(1212)));
        // With clamp_target_rate the target follows even at stage 0.
        let mut c = Dcqcn::new(
            DcqcnConfig {
                clamp_target_rate: true,
                ..mlx(5)
            },
            LINE,
        );
        c.on_cnp(Time::ZERO);
        c.handle_timeout(us(4));
        assert_eq!(c.target_rate(), LINE);
        let rc = c.rc;
        c.on_cnp(us(5));
        c.handle_timeout(us(8));
        assert_eq!(c.target_rate(), Rate::from_f64(rc));
    }

    #[test]
    fn mellanox_fast_recovery_then_additive_then_hyper() {
        let f = 5;
        // Halve the rate on the first CNP so that the target sits below line rate.
        let cfg = DcqcnConfig {
            rate_on_first_cnp: 0.5,
            ..mlx(f)
        };
        let (ai, hai) = (cfg.rate_ai.as_f64(), cfg.rate_hai.as_f64());
        let mut d = Dcqcn::new(cfg, LINE);
        d.on_cnp(Time::ZERO);
        d.handle_timeout(us(4));
        let rt = d.rt;
        assert_eq!(rt, 50e9);
        assert!(d.rc < rt);
        let mut t = us(304);
        for k in 0..f {
            let gap = d.rt - d.rc;
            d.handle_timeout(t);
            assert_eq!(d.rt, rt, "fast recovery keeps the target (event {k})");
            assert!(
                close(d.rt - d.rc, gap / 2.0, 1e-3),
                "distance halves (event {k})"
            );
            t += us(300);
        }
        let (rt0, rc0) = (d.rt, d.rc);
        d.handle_timeout(t);
        assert!(close(d.rt, rt0 + ai, 1e-3), "additive step at stage F");
        assert!(close(d.rc, (rc0 + rt0 + ai) / 2.0, 1e-3));
        for _ in 0..3 {
            t += us(300);
            let rt0 = d.rt;
            d.handle_timeout(t);
            assert!(close(d.rt, rt0 + hai, 1e-3), "hyper step after F");
        }
    }

    #[test]
    fn paper_timer_increase_phases() {
        let f = 5;
        let cfg = paper();
        let ai = cfg.rate_ai.as_f64();
        let mut d = paper_below_line(cfg);
        let rt = d.rt;
        // Timer only: T = 1..F-1 fast recovery.
        for k in 1..f {
            let gap = d.rt - d.rc;
            d.handle_timeout(us(1 + 100 * u64::from(k)));
            assert_eq!(d.t_count, k);
            assert_eq!(d.rt, rt);
            assert!(close(d.rt - d.rc, gap / 2.0, 1e-3));
        }
        // T >= F with BC = 0: additive increase every event (never hyper on one counter).
        for k in f..f + 4 {
            let rt0 = d.rt;
            d.handle_timeout(us(1 + 100 * u64::from(k)));
            assert_eq!(d.t_count, k);
            assert!(close(d.rt, rt0 + ai, 1e-3), "additive at T={k}");
        }
    }

    #[test]
    fn paper_byte_counter_triggers_increase_events() {
        let mut d = Dcqcn::new(paper(), LINE);
        d.on_cnp(Time::ZERO);
        let (rt, rc) = (d.rt, d.rc);
        d.on_bytes_sent(us(1), 999_999);
        assert_eq!((d.bc_count, d.rc), (0, rc), "not yet B bytes");
        d.on_bytes_sent(us(2), 1);
        assert_eq!(d.bc_count, 1);
        assert!(close(d.rc, (rc + rt) / 2.0, 1e-3));
        // 3.5 B at once: three events, half a counter left over.
        d.on_bytes_sent(us(3), 3_500_000);
        assert_eq!(d.bc_count, 4);
        assert_eq!(d.bytes_acc, 500_000);
        // A CNP resets the byte counter.
        d.on_cnp(us(4));
        assert_eq!((d.bc_count, d.t_count, d.bytes_acc), (0, 0, 0));
        // The Mellanox variant ignores sent bytes.
        let mut m = Dcqcn::new(DcqcnConfig::default(), LINE);
        m.on_cnp(Time::ZERO);
        let before = m.clone();
        m.on_bytes_sent(Time::ZERO, 1 << 40);
        assert_eq!(m, before);
    }

    #[test]
    fn paper_hyper_increase_when_both_counters_exceed_f() {
        let f = 5u32;
        let cfg = paper();
        let (ai, hai) = (cfg.rate_ai.as_f64(), cfg.rate_hai.as_f64());
        let mut d = paper_below_line(cfg);
        // Drive BC to F+2 = 7 within the first timer period: FR x4, then AI x3 (T = 0).
        let rt = d.rt;
        d.on_bytes_sent(us(2), 7_000_000);
        assert_eq!(d.bc_count, 7);
        assert!(close(d.rt, rt + 3.0 * ai, 1e-3));
        // Timer events T = 1..=F: min(T, BC) <= F, so additive, no hyper yet.
        for k in 1..=u64::from(f) {
            let rt0 = d.rt;
            d.handle_timeout(us(1 + 100 * k));
            assert!(close(d.rt, rt0 + ai, 1e-3), "additive at T={k}");
        }
        // T = F+1 = 6, BC = 7: hyper with i = min - F = 1.
        let rt0 = d.rt;
        d.handle_timeout(us(601));
        assert!(close(d.rt, rt0 + hai, 1e-3));
        // T = 7, BC = 7: i = 2.
        let rt0 = d.rt;
        d.handle_timeout(us(701));
        assert!(close(d.rt, rt0 + 2.0 * hai, 1e-3));
        // One more byte event: BC = 8, T = 7: i = 2 again.
        let rt0 = d.rt;
        d.on_bytes_sent(us(702), 1_000_000);
        assert_eq!(d.bc_count, 8);
        assert!(close(d.rt, rt0 + 2.0 * hai, 1e-3));
    }

    #[test]
    fn rates_never_exceed_line_rate_and_recover_to_it() {
        for cfg in [
            DcqcnConfig::default(),
            mlx(5),
            paper(),
            DcqcnConfig::paper(),
        ] {
            let mut d = Dcqcn::new(cfg, LINE);
            d.on_cnp(Time::ZERO);
            let mut t = Time::ZERO;
            for _ in 0..20_000 {
                t += us(50);
                d.handle_timeout(t);
                d.on_bytes_sent(t, 600_000);
                assert!(d.rate() <= LINE && d.target_rate() <= LINE);
                assert!(d.rc <= d.line() && d.rt <= d.line());
            }
            assert_eq!(d.rate(), LINE, "{:?}", d.config().variant);
            assert_eq!(d.target_rate(), LINE);
        }
    }

    #[test]
    fn rate_floors_at_min_rate_after_many_cnps() {
        for cfg in [DcqcnConfig::default(), DcqcnConfig::paper()] {
            let min = cfg.min_rate;
            let mut d = Dcqcn::new(cfg, LINE);
            let mut t = Time::ZERO;
            for _ in 0..5_000 {
                d.on_cnp(t);
                t += us(2);
                d.handle_timeout(t);
                assert!(d.rate() >= min);
            }
            assert_eq!(d.rate(), min);
            assert!(d.target_rate() >= min);
        }
        // A min_rate above the line rate is capped at the line rate.
        let cfg = DcqcnConfig {
            min_rate: Rate::from_gbps(400),
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(cfg, LINE);
        d.on_cnp(Time::ZERO);
        d.handle_timeout(us(4));
        assert_eq!(d.rate(), LINE);
    }

    #[test]
    fn poll_timeout_is_min_deadline_and_timers_reschedule() {
        let mut d = Dcqcn::new(DcqcnConfig::default(), LINE);
        let t0 = us(3);
        d.on_cnp(t0);
        d.handle_timeout(t0 + us(4));
        assert_eq!(d.alpha_deadline, Some(t0 + us(5)));
        assert_eq!(d.decrease_deadline, Some(t0 + us(8)));
        assert_eq!(d.increase_deadline, Some(t0 + us(304)));
        assert_eq!(d.poll_timeout(), Some(t0 + us(5)));
        // Late call: the grid is kept (deadlines re-armed from their own deadline).
        d.handle_timeout(t0 + us(10) + Time::from_ns(300));
        assert_eq!(d.alpha_deadline, Some(t0 + us(11)));
        assert_eq!(d.decrease_deadline, Some(t0 + us(12)));
        assert_eq!(d.poll_timeout(), Some(t0 + us(11)));
        // With a slow alpha timer the decrease check is the earliest.
        let mut e = Dcqcn::new(
            DcqcnConfig {
                alpha_resume_interval: us(10),
                ..DcqcnConfig::default()
            },
            LINE,
        );
        e.on_cnp(t0);
        assert_eq!(e.poll_timeout(), Some(t0 + us(4)));
        // Paper: the alpha timer and the rp timer.
        let mut p = Dcqcn::new(paper(), LINE);
        p.on_cnp(t0);
        assert_eq!(p.poll_timeout(), Some(t0 + us(55)));
        p.handle_timeout(t0 + us(55));
        assert_eq!(p.poll_timeout(), Some(t0 + us(100)));
        assert_eq!(p.alpha_deadline, Some(t0 + us(110)));
    }

    #[test]
    fn spurious_and_early_timeouts_change_nothing() {
        for cfg in [DcqcnConfig::default(), paper()] {
            let mut d = Dcqcn::new(cfg, LINE);
            d.on_cnp(us(1));
            d.handle_timeout(us(20));
            let next = d.poll_timeout().expect("armed");
            let before = d.clone();
            d.handle_timeout(next - Time::from_ps(1));
            d.handle_timeout(us(20));
            d.handle_timeout(us(2));
            assert_eq!(d, before);
            d.handle_timeout(next);
            assert_ne!(d, before);
            let once = d.clone();
            d.handle_timeout(next);
            assert_eq!(d, once, "handling the same instant twice is idempotent");
        }
    }

    #[test]
    fn tie_order_alpha_then_increase_then_decrease() {
        // Default Mellanox: the cut at 4us sits on the alpha grid and the rp timer (304us)
        // on the decrease grid.
        let mut d = Dcqcn::new(DcqcnConfig::default(), LINE);
        d.on_cnp(Time::ZERO);
        d.handle_timeout(us(303));
        let (rc, rt, a) = (d.rc, d.rt, d.alpha);
        d.on_cnp(us(303) + Time::from_ns(500));
        d.handle_timeout(us(304));
        // alpha update at 304 (flag set) first ...
        let a304 = (1.0 - G) * a + G;
        assert!(close(d.alpha, a304, 1e-15));
        // ... then the increase (F = 1, stage 0: fast recovery) ...
        let rc_inc = (rc + rt) / 2.0;
        // ... then the decrease with stage 1: RT = RC, cut with the updated alpha.
        assert!(close(d.rt, rc_inc, 1e-3));
        assert!(close(d.rc, rc_inc * (1.0 - a304 / 2.0), 1e-3));
        assert_eq!(d.stage, 0);
        assert_eq!(d.increase_deadline, Some(us(604)));
    }

    #[test]
    fn ue_only_cnp_holds_the_rate_without_cut_or_alpha_update() {
        for cfg in [DcqcnConfig::default(), paper()] {
            let mut d = Dcqcn::new(cfg.clone(), LINE);
            // Before any CE: at line rate, nothing to hold.
            d.on_feedback(
                us(1),
                &Feedback::Cnp {
                    ce: false,
                    ue: true,
                },
            );
            assert_eq!((d.rate(), d.poll_timeout()), (LINE, None));
            d.on_cnp(us(10));
            // Let some recovery happen, then a UE-only CNP.
            let t = us(10) + cfg.rp_timer + cfg.rp_timer + Time(1);
            d.handle_timeout(t);
            let (rc, alpha, alpha_at) = (d.rc, d.alpha, d.alpha_deadline);
            assert!(d.rt > d.rc, "recovering towards a higher target");
            d.on_feedback(
                t,
                &Feedback::Cnp {
                    ce: false,
                    ue: true,
                },
            );
            assert_eq!(d.rc, rc, "no cut");
            assert_eq!(d.rt, rc, "target = current rate");
            assert_eq!(d.alpha, alpha, "no alpha update");
            assert_eq!((d.stage, d.t_count, d.bc_count, d.bytes_acc), (0, 0, 0, 0));
            assert_eq!(d.increase_deadline, Some(t + cfg.rp_timer));
            assert_eq!(d.alpha_deadline, alpha_at, "Hold leaves the alpha timer");
            // CE and UE together: a normal cut.
            d.on_feedback(t, &Feedback::Cnp { ce: true, ue: true });
            if cfg.variant == DcqcnVariant::Paper {
                assert!(d.rc < rc);
            } else {
                assert!(d.decrease_cnp);
            }
        }
    }

    #[test]
    fn ue_reactions_restart_the_alpha_timer_or_are_ignored() {
        let mut released = Dcqcn::new(
            DcqcnConfig {
                on_ue: UeReaction::HoldRestartAlpha,
                ..paper()
            },
            LINE,
        );
        released.on_cnp(Time::ZERO);
        released.on_ue(us(30));
        assert_eq!(released.alpha_deadline, Some(us(30 + 55)));
        let ignore = DcqcnConfig {
            on_ue: UeReaction::Ignore,
            ..paper()
        };
        let mut a = Dcqcn::new(ignore.clone(), LINE);
        let mut b = Dcqcn::new(ignore, LINE);
        a.on_cnp(Time::ZERO);
        b.on_cnp(Time::ZERO);
        a.on_feedback(
            us(80),
            &Feedback::Cnp {
                ce: false,
                ue: true,
            },
        );
        a.handle_timeout(us(200));
        b.handle_timeout(us(200));
        assert_eq!(a, b);
    }

    #[test]
    fn late_handling_matches_on_time_handling() {
        for cfg in [DcqcnConfig::default(), mlx(5), paper()] {
            let mut on_time = Dcqcn::new(cfg.clone(), LINE);
            let mut late = Dcqcn::new(cfg, LINE);
            for d in [&mut on_time, &mut late] {
                d.on_cnp(Time::ZERO);
                d.on_cnp(us(2));
            }
            let end = Time::from_ms(3) + Time::from_ns(1);
            drive(&mut on_time, end);
            late.handle_timeout(end);
            assert_eq!(on_time.rc, late.rc);
            assert_eq!(on_time.rt, late.rt);
            assert_eq!(on_time.stage, late.stage);
            assert_eq!(on_time.t_count, late.t_count);
            assert!(close(on_time.alpha, late.alpha, 1e-15));
            assert_eq!(on_time.poll_timeout(), late.poll_timeout());
        }
    }

    #[test]
    fn long_gap_recovers_towards_line_rate_in_bounded_work() {
        for cfg in [DcqcnConfig::default(), paper()] {
            let mut d = Dcqcn::new(cfg, LINE);
            d.on_cnp(Time::ZERO);
            d.handle_timeout(us(10));
            assert!(d.rate() < LINE);
            // One call covering a whole second: ~1e6 alpha periods, ~3000 rp periods.
            d.handle_timeout(Time::from_ms(1000));
            assert_eq!(d.rate(), LINE);
            assert_eq!(d.target_rate(), LINE);
            assert!(d.alpha() < 1e-20, "alpha decayed: {}", d.alpha());
            assert!(d.poll_timeout().expect("still armed") > Time::from_ms(1000));
            // And one up to the end of time returns promptly.
            d.on_cnp(Time::from_ms(1001));
            d.handle_timeout(Time(u64::MAX - 1));
            assert!(!matches!(d.poll_timeout(), Some(t) if t <= Time(u64::MAX - 1)));
            assert!(d.rate() >= d.config().min_rate && d.rate() <= LINE);
        }
    }

    #[test]
    fn zero_intervals_disable_timers() {
        let cfg = DcqcnConfig {
            alpha_resume_interval: Time::ZERO,
            rate_decrease_interval: Time::ZERO,
            ..DcqcnConfig::default()
        };
        let mut d = Dcqcn::new(cfg, LINE);
        d.on_cnp(Time::ZERO);
        assert_eq!(d.poll_timeout(), None);
        d.handle_timeout(Time::from_ms(5));
        assert_eq!(d.rate(), LINE);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Cnp(u64),
        Ue(u64),
        Bytes(u64, u64),
        Timeout(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..200_000_000).prop_map(Op::Cnp),
            (0u64..200_000_000).prop_map(Op::Ue),
            (0u64..50_000_000, 0u64..20_000_000).prop_map(|(dt, b)| Op::Bytes(dt, b)),
            (0u64..2_000_000_000).prop_map(Op::Timeout),
        ]
    }

    fn config() -> impl Strategy<Value = DcqcnConfig> {
        (
            any::<bool>(),
            0.0f64..=1.0,
            0u32..8,
            0u64..5_000,
            0u64..300,
            any::<bool>(),
            0.0f64..1.5,
            0u64..3_000_000,
        )
            .prop_map(|(mlx, g, f, ai, min_mbps, clamp, first, bc)| DcqcnConfig {
                variant: if mlx {
                    DcqcnVariant::Mellanox
                } else {
                    DcqcnVariant::Paper
                },
                g,
                fast_recovery_times: f,
                rate_ai: Rate::from_mbps(ai),
                rate_hai: Rate::from_mbps(ai * 10),
                min_rate: Rate::from_mbps(min_mbps),
                clamp_target_rate: clamp,
                rate_on_first_cnp: first,
                byte_counter: bc,
                ..DcqcnConfig::default()
            })
    }

    proptest! {
        #[test]
        fn rate_and_alpha_stay_in_bounds(
            cfg in config(),
            ops in proptest::collection::vec(op(), 1..200),
        ) {
            let floor = cfg.min_rate.min(LINE);
            let mut d = Dcqcn::new(cfg, LINE);
            let mut now = Time::ZERO;
            for o in ops {
                match o {
                    Op::Cnp(dt) => {
                        now += Time::from_ps(dt);
                        d.on_cnp(now);
                    }
                    Op::Ue(dt) => {
                        now += Time::from_ps(dt);
                        d.on_ue(now);
                    }
                    Op::Bytes(dt, b) => {
                        now += Time::from_ps(dt);
                        d.on_bytes_sent(now, b);
                    }
                    Op::Timeout(dt) => {
                        now += Time::from_ps(dt);
                        d.handle_timeout(now);
                        prop_assert!(!matches!(d.poll_timeout(), Some(t) if t <= now));
                    }
                }
                prop_assert!(d.rate() >= floor && d.rate() <= LINE, "rate {}", d.rate());
                prop_assert!(d.target_rate() >= floor && d.target_rate() <= LINE);
                prop_assert!(d.rc >= d.floor() && d.rc <= d.line());
                prop_assert!((0.0..=1.0).contains(&d.alpha()), "alpha {}", d.alpha());
            }
        }

        /// Waking only at `poll_rate_timeout` gives the same rate at every instant as
        /// running every timer at its deadline, and the same alpha once replayed.
        #[test]
        fn rate_deadlines_alone_give_the_same_rates(
            cfg in config(),
            ops in proptest::collection::vec(op(), 1..100),
        ) {
            let mut every = Dcqcn::new(cfg.clone(), LINE);
            let mut lazy = Dcqcn::new(cfg, LINE);
            let mut now = Time::ZERO;
            for o in ops {
                let (dt, input) = match o {
                    Op::Cnp(dt) | Op::Ue(dt) => (dt, Some(None)),
                    Op::Bytes(dt, b) => (dt, Some(Some(b))),
                    Op::Timeout(dt) => (dt, None),
                };
                let next = now + Time::from_ps(dt);
                // Between inputs: `every` runs each deadline, `lazy` only the rate ones; the
                // rates must agree whenever either of them wakes.
                loop {
                    let a = every.poll_timeout().filter(|&t| t < next);
                    let b = lazy.poll_rate_timeout().filter(|&t| t < next);
                    let Some(t) = a.into_iter().chain(b).min() else { break };
                    every.handle_timeout(t);
                    if b == Some(t) {
                        lazy.handle_timeout(t);
                    }
                    prop_assert_eq!(every.rate(), lazy.rate(), "at {}", t);
                }
                now = next;
                match input {
                    Some(None) => {
                        every.on_cnp(now);
                        lazy.on_cnp(now);
                    }
                    Some(Some(b)) => {
                        every.on_bytes_sent(now, b);
                        lazy.on_bytes_sent(now, b);
                    }
                    None => {}
                }
                prop_assert_eq!(every.rate(), lazy.rate(), "after input at {}", now);
            }
            every.handle_timeout(now);
            lazy.handle_timeout(now);
            // Equal up to rounding: a replay of more than `STEPWISE_DECAYS` decays at once
            // uses one power instead of repeated products.
            let (a, b) = (every.alpha(), lazy.alpha());
            prop_assert!((a - b).abs() <= 1e-12 * a.abs().max(b.abs()) + 1e-300, "alpha {} vs {}", a, b);
            prop_assert_eq!(every.target_rate(), lazy.target_rate());
        }
    }
}
