//! PowerTCP (Addanki, Michel and Schmid, NSDI 2022) as a rate, with HPCC's bookkeeping, as
//! the authors' ns-3 simulator runs it (`inet-tub/ns3-datacenter`, PowerTCP on top of the
//! HPCC sender).
//!
//! PowerTCP reacts to *power*: the product of the bottleneck's "current" (the rate at which
//! bytes arrive at it: what it sends plus how fast its queue grows) and its "voltage" (the
//! bytes it holds: the queue plus a bandwidth-delay product). A queue that grows raises the
//! power before it is long, a queue that drains lowers it while it is still long, so the
//! sender reacts to where the queue is heading, not only where it is.
//!
//! # Two modes
//!
//! **INT** ([`PowerTcpMode::Int`]): every ACK carries the INT stack its data packet
//! collected ([`crate::int`]). For each hop `i`, against the hop's record of the previous
//! ACK, `tau` apart:
//!
//! - `tx_rate = bytes_sent x 8 / tau` (bits per second),
//! - `dq = (qlen - prev_qlen) x 8 / tau` (the queue's gradient, negative when it drains),
//! - `A = tx_rate + dq` (the current), `power = A x (qlen x 8 + B T)` (`B` the hop's rate,
//!   `T` the base RTT in seconds),
//! - `Γ_i = power / (B x B T)`: 1 for a link sending at line rate with an empty, steady
//!   queue.
//!
//! `U = max_i Γ_i`, and `dt` the `tau` of that hop. A hop whose records are the same
//! nanosecond apart, or whose rate is 0, gives no sample; a stack of more than
//! [`crate::int::MAX_HOPS`] hops is ignored (the round still ends), as HPCC does.
//!
//! **Delay**, θ-PowerTCP ([`PowerTcpMode::Delay`], for switches without INT): from the
//! ACKs' RTT samples ([`Ack::rtt`]). A sample `θ` at `now`, against the previous sample
//! `θ_prev` at `t_prev`: `A = (θ - θ_prev) / (now - t_prev) + 1` (the RTT's gradient plus
//! one: the queue's growth relative to the line rate), at least 0.5, and
//! `Γ = A θ / (base_rtt_slack x T)`, `dt = now - t_prev`. `T` is the smallest of the
//! configured base RTT and every sample seen. `base_rtt_slack` (1.05 by default) lets a
//! queue of up to 5 % of a base RTT count as none: without it a sender whose samples
//! carry any queueing delay (a packet or two of its own, on the NIC and in the switch)
//! always sees `Γ > 1` at equilibrium and keeps cutting. Two samples at the same instant
//! give no gradient: the second replaces the first, without a rate update.
//!
//! # The update (both modes)
//!
//! `U < 0` (a queue draining faster than the link sends) is replaced by the current
//! smoothed value. Then, over the base RTT, with `dt` at most `T`:
//! `u = (u (T - dt) + U dt) / T` (`u` starts at 1), and from the reference rate `R_c`:
//!
//! - INT: `R = γ (R_c / (u / η) + β) + (1 - γ) R_c`,
//! - delay: `R = γ (R_c / u + β) + (1 - γ) R_c`,
//!
//! bounded to `[min_rate, line_rate]`. `η` is the target utilization, `β` the additive
//! increase (a rate) and `γ` the weight of the new estimate: with `u = η` (INT) or `u = 1`
//! (delay) the rate grows by `γ β` per update.
//!
//! Once per round trip (an ACK passing the `snd_nxt` remembered at the last commit) the
//! update is committed: `R_c = R`. With `fast_react`, every other ACK recomputes `R` (and
//! the smoothed `u`, and the hop records or the previous RTT sample) without committing;
//! without it those ACKs are ignored. The first ACK only records the hops (INT) or the RTT
//! sample (delay). In INT mode an ACK without an INT stack, in delay mode an ACK without
//! an RTT sample, is ignored entirely. Echoed ECN marks (CE, UE) change nothing.
//!
//! # Where this follows the paper, and where the authors' code
//!
//! - The paper updates a window per ACK, `w = γ (w_old / Γ + β) + (1 - γ) w` with `w_old`
//!   the window one round trip earlier and `β` in bytes. The authors' simulator (and this
//!   machine) updates a rate: `R_c`, committed once per round trip, plays `w_old`, and `β`
//!   is a rate (150 Mb/s). Bytes in flight are bounded by the driver's variable window
//!   `W x R / line_rate`, as HPCC's (see [`super::Window`]), so the rate and the window
//!   move together.
//! - `η` (INT mode only) comes from the authors' code, inherited from HPCC; the paper's
//!   update divides by the normalised power alone. The delay mode's floor of 0.5 on `A`,
//!   its `base_rtt_slack` and its smaller `γ` (0.7 instead of 0.9, the default of
//!   [`PowerTcpConfig::for_mode`]) are taken from the authors' code as well.
//! - `U < 0` keeping the smoothed value is the authors' code.
//! - The paper times every packet in delay mode; the simulator's driver times one packet
//!   per round trip (the samples TIMELY uses), so θ-PowerTCP reacts about once per round
//!   trip and its gradient spans a round trip.
//! - Delay mode normalises each flow by its own smallest RTT, as the authors' code does;
//!   flows with different base RTTs then settle at different rates (longer round trips
//!   faster), see the simulator's convergence test. The authors' code also keeps computing
//!   from the INT loop in delay mode; here delay mode needs no INT at all.
//! - The INT fields are quantized as the HPCC simulator encodes them ([`crate::int`]),
//!   which the authors' simulator inherits.
//!
//! The driver shifts the pending departure when the rate changes (the simulator's
//! `ChangeRate`, see [`super::CongestionControl::retimes_departures`]).
//!
//! Invariants: `min_rate <= rate <= line_rate`; `u >= 0`; `0 < T <=` the configured base
//! RTT; no timers; nothing allocates.

use super::Ack;
use crate::int::{IntHop, IntStack, MAX_HOPS};
use crate::units::{Rate, Time};

/// Which signal a [`PowerTcp`] sender computes power from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub enum PowerTcpMode {
    /// From the INT hop records the ACKs carry (switches must append them).
    #[default]
    Int,
    /// θ-PowerTCP: from round-trip samples, for networks without INT.
    Delay,
}

/// Parameters of PowerTCP. [`Default`]: INT mode with the authors' simulator's values at
/// 100 Gb/s; [`PowerTcpConfig::for_mode`] gives each mode's.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PowerTcpConfig {
    /// INT or delay. Default INT.
    pub mode: PowerTcpMode,
    /// Weight `γ` of the new estimate, in `(0, 1]`. Default 0.9 in INT mode, 0.7 in delay
    /// mode (the authors' code).
    pub gamma: f64,
    /// Additive increase `β`, in rate terms. Default 150 Mb/s.
    pub beta: Rate,
    /// Target utilization `η`, in `(0, 1]` (INT mode only). Default 0.95.
    pub target_utilization: f64,
    /// Floor of the sending rate. Default 1 Gb/s (as HPCC's `MIN_RATE`).
    pub min_rate: Rate,
    /// React on every ACK, committing once per round trip. Default true.
    pub fast_react: bool,
    /// Resolution multiplier of the INT fields (`INT_MULTI`, INT mode only). Default 4
    /// (100 Gb/s).
    pub int_multi: u32,
    /// Delay mode: the base RTT is taken as this times the smallest RTT, so a queueing
    /// delay of up to `slack - 1` base RTTs counts as no congestion. At least 1. Default
    /// 1.05.
    pub base_rtt_slack: f64,
}

impl PowerTcpConfig {
    /// The defaults of `mode`: `γ` 0.9 with INT, 0.7 with delay; the rest the same.
    pub fn for_mode(mode: PowerTcpMode) -> PowerTcpConfig {
        PowerTcpConfig {
            mode,
            gamma: match mode {
                PowerTcpMode::Int => 0.9,
                PowerTcpMode::Delay => 0.7,
            },
            beta: Rate::from_mbps(150),
            target_utilization: 0.95,
            min_rate: Rate::from_mbps(1000),
            fast_react: true,
            int_multi: 4,
            base_rtt_slack: 1.05,
        }
    }
}

impl Default for PowerTcpConfig {
    fn default() -> Self {
        PowerTcpConfig::for_mode(PowerTcpMode::Int)
    }
}

/// What an ACK brings the mode.
#[derive(Clone, Copy)]
enum Input<'a> {
    Int(&'a IntStack),
    Rtt(Time),
}

/// A previous RTT sample (delay mode).
#[derive(Debug, Clone, Copy, PartialEq)]
struct RttSample {
    rtt: Time,
    at: Time,
}

/// One flow's PowerTCP sender.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerTcp {
    cfg: PowerTcpConfig,
    line_rate: f64,
    min_rate: f64,
    /// Base RTT `T` (delay mode: the smallest sample seen, if below the configured one).
    base_rtt: Time,
    rate: f64,
    /// Reference rate `R_c`.
    committed: f64,
    /// Smoothed normalised power.
    u: f64,
    /// End of the current round trip (0: no ACK yet).
    last_update_seq: u64,
    /// INT mode: each hop's previous record.
    hops: [IntHop; MAX_HOPS],
    /// Delay mode: the previous RTT sample.
    prev: Option<RttSample>,
}

impl PowerTcp {
    /// A sender at `line_rate` whose base round trip is `base_rtt` (taken as at least
    /// 1 ps). Out-of-range parameters (the scenario parser refuses them) are taken as: `γ`
    /// above 1 or `η` above 1 as 1, a `γ` or `η` that is not positive as the default, a
    /// `base_rtt_slack` below 1 as the default 1.05, `int_multi` 0 as 1.
    pub fn new(cfg: PowerTcpConfig, line_rate: Rate, base_rtt: Time) -> PowerTcp {
        let line = line_rate.as_f64();
        let defaults = PowerTcpConfig::for_mode(cfg.mode);
        let in_unit = |v: f64, default: f64| if v > 0.0 { v.min(1.0) } else { default };
        PowerTcp {
            min_rate: cfg.min_rate.as_f64().min(line),
            cfg: PowerTcpConfig {
                gamma: in_unit(cfg.gamma, defaults.gamma),
                target_utilization: in_unit(cfg.target_utilization, defaults.target_utilization),
                base_rtt_slack: if cfg.base_rtt_slack >= 1.0 {
                    cfg.base_rtt_slack
                } else {
                    defaults.base_rtt_slack
                },
                int_multi: cfg.int_multi.max(1),
                ..cfg
            },
            line_rate: line,
            base_rtt: base_rtt.max(Time(1)),
            rate: line,
            committed: line,
            u: 1.0,
            last_update_seq: 0,
            hops: [IntHop::default(); MAX_HOPS],
            prev: None,
        }
    }

    /// Current sending rate.
    pub fn rate(&self) -> Rate {
        Rate::from_f64(self.rate)
    }

    /// The mode this sender runs in.
    pub fn mode(&self) -> PowerTcpMode {
        self.cfg.mode
    }

    /// The smoothed normalised power `u` (1: the bottleneck exactly full, its queue
    /// steady and empty).
    pub fn power(&self) -> f64 {
        self.u
    }

    /// The base RTT `T` the sender normalises by (delay mode: at most the smallest sample).
    pub fn base_rtt(&self) -> Time {
        self.base_rtt
    }

    /// An ACK arrived at `now`. INT mode reads its INT stack, delay mode its RTT sample;
    /// an ACK without that input changes nothing.
    pub fn on_ack(&mut self, now: Time, ack: &Ack) {
        let input = match self.cfg.mode {
            PowerTcpMode::Int => ack.int.map(Input::Int),
            PowerTcpMode::Delay => ack.rtt.map(Input::Rtt),
        };
        let Some(input) = input else {
            return;
        };
        let full = ack.acked > self.last_update_seq;
        if !full && !self.cfg.fast_react {
            return;
        }
        if self.last_update_seq == 0 {
            self.last_update_seq = ack.snd_nxt;
            match input {
                Input::Int(int) => {
                    for (mine, theirs) in self.hops.iter_mut().zip(int.hops()) {
                        *mine = *theirs;
                    }
                }
                Input::Rtt(rtt) => self.record_rtt(now, rtt),
            }
            return;
        }
        match input {
            Input::Int(int) => self.react_int(int, full),
            Input::Rtt(rtt) => self.react_delay(now, rtt, full),
        }
        if full && ack.snd_nxt > self.last_update_seq {
            self.last_update_seq = ack.snd_nxt;
        }
    }

    fn react_int(&mut self, int: &IntStack, commit: bool) {
        if !int.is_usable() {
            return;
        }
        let multi = self.cfg.int_multi;
        let t_secs = self.base_rtt.as_secs_f64();
        // (U, the tau of its hop in ns)
        let mut max: Option<(f64, u64)> = None;
        for (i, hop) in int.hops().iter().enumerate() {
            let prev = self.hops[i];
            self.hops[i] = *hop;
            let tau = hop.ns_since(&prev);
            let b = hop.rate().as_f64();
            if tau == 0 || b <= 0.0 {
                continue;
            }
            let secs = tau as f64 * 1e-9;
            let tx_rate = hop.bytes_since(&prev, multi) as f64 * 8.0 / secs;
            let q_bits = hop.queued(multi) as f64 * 8.0;
            let prev_q_bits = prev.queued(multi) as f64 * 8.0;
            let current = tx_rate + (q_bits - prev_q_bits) / secs;
            let bdp_bits = b * t_secs;
            let gamma_i = current * (q_bits + bdp_bits) / (b * bdp_bits);
            if max.is_none_or(|(m, _)| gamma_i > m) {
                max = Some((gamma_i, tau));
            }
        }
        if let Some((big_u, tau)) = max {
            let eta = self.cfg.target_utilization;
            self.update(big_u, Time::from_ns(tau), eta, commit);
        }
    }

    /// Delay mode: takes `rtt`, measured at `now`, as the previous sample and the base RTT
    /// if it is the smallest.
    fn record_rtt(&mut self, now: Time, rtt: Time) {
        self.base_rtt = self.base_rtt.min(rtt).max(Time(1));
        self.prev = Some(RttSample { rtt, at: now });
    }

    fn react_delay(&mut self, now: Time, rtt: Time, commit: bool) {
        let prev = self.prev;
        self.record_rtt(now, rtt);
        let Some(prev) = prev.filter(|p| now > p.at) else {
            return;
        };
        let dt = now - prev.at;
        let rise = rtt.as_ps() as f64 - prev.rtt.as_ps() as f64;
        let a = (rise / dt.as_ps() as f64 + 1.0).max(0.5);
        let base = self.cfg.base_rtt_slack * self.base_rtt.as_ps() as f64;
        let big_u = a * rtt.as_ps() as f64 / base;
        self.update(big_u, dt, 1.0, commit);
    }

    /// Smooths `big_u` over `dt` and computes the rate with target `eta`.
    fn update(&mut self, big_u: f64, dt: Time, eta: f64, commit: bool) {
        let big_u = if big_u < 0.0 { self.u } else { big_u };
        let t = self.base_rtt.as_ps() as f64;
        let dt = dt.min(self.base_rtt).as_ps() as f64;
        self.u = (self.u * (t - dt) + big_u * dt) / t;
        let k = self.u / eta;
        let gamma = self.cfg.gamma;
        let rate = if k > 0.0 {
            gamma * (self.committed / k + self.cfg.beta.as_f64()) + (1.0 - gamma) * self.committed
        } else {
            // No power at all: nothing holds the rate back.
            self.line_rate
        };
        self.rate = rate.clamp(self.min_rate, self.line_rate);
        if commit {
            self.committed = self.rate;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecn::Mark;

    const G100: Rate = Rate::from_gbps(100);
    /// `T` of every test sender.
    const T_US: u64 = 10;

    fn sender(cfg: PowerTcpConfig) -> PowerTcp {
        PowerTcp::new(cfg, G100, Time::from_us(T_US))
    }

    fn int_cfg() -> PowerTcpConfig {
        PowerTcpConfig {
            int_multi: 1,
            ..PowerTcpConfig::default()
        }
    }

    fn delay_cfg() -> PowerTcpConfig {
        PowerTcpConfig::for_mode(PowerTcpMode::Delay)
    }

    /// A one-hop stack at `ns` after `tx` bytes, with `q` bytes queued (INT_MULTI 1: bytes
    /// in units of 128, queues of 80).
    fn stack(ns: u64, tx: u64, q: u64) -> IntStack {
        let mut s = IntStack::EMPTY;
        s.push(IntHop::new(Time::from_ns(ns), tx, q, G100, 1));
        s
    }

    fn ack<'a>(acked: u64, snd_nxt: u64, int: &'a IntStack) -> Ack<'a> {
        Ack {
            acked,
            snd_nxt,
            rtt: None,
            echo: Mark::None,
            int: Some(int),
        }
    }

    fn rtt_ack(acked: u64, snd_nxt: u64, rtt_ns: u64) -> Ack<'static> {
        Ack {
            acked,
            snd_nxt,
            rtt: Some(Time::from_ns(rtt_ns)),
            echo: Mark::None,
            int: None,
        }
    }

    /// Round `i` of `p`: an ACK at `10 i` us that ends the round (a full update, or the
    /// first ACK for `i = 0`), carrying `int`.
    fn round(p: &mut PowerTcp, i: u64, int: &IntStack) {
        p.on_ack(
            Time::from_us(10 * i),
            &ack(10_000 * i + 1, 10_000 * (i + 1), int),
        );
    }

    /// A first ACK with `first`, then a full update with `second`.
    fn two_acks(p: &mut PowerTcp, first: &IntStack, second: &IntStack) {
        round(p, 0, first);
        round(p, 1, second);
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn first_ack_only_records() {
        let mut p = sender(int_cfg());
        let s = stack(0, 0, 64_000);
        p.on_ack(Time::from_us(1), &ack(1000, 10_000, &s));
        assert_eq!(p.rate(), G100);
        assert_eq!(p.power(), 1.0);
        assert_eq!(p.last_update_seq, 10_000);
        assert_eq!(p.hops[0], s.hops()[0]);

        let mut d = sender(delay_cfg());
        d.on_ack(Time::from_us(1), &rtt_ack(1000, 10_000, 12_000));
        assert_eq!(d.rate(), G100);
        assert_eq!(d.last_update_seq, 10_000);
        assert_eq!(
            d.prev,
            Some(RttSample {
                rtt: Time::from_ns(12_000),
                at: Time::from_us(1)
            })
        );
    }

    #[test]
    fn a_saturated_link_with_a_standing_queue_cuts() {
        let mut p = sender(int_cfg());
        // 10 us apart (tau = T), 125 000 bytes sent (line rate), 64 000 bytes queued
        // throughout: A = B, power = B (q + BT), Γ = 1 + q / BT = 1.512; u = Γ.
        two_acks(
            &mut p,
            &stack(0, 0, 64_000),
            &stack(10_000, 125_056, 64_000),
        );
        let tx = 125_056.0 * 8.0 / 10e-6;
        let expected_u = tx / 100e9 * (1.0 + 64_000.0 / 125_000.0);
        assert!(close(p.power(), expected_u, 1e-9), "{}", p.power());
        let expected = 0.9 * (100e9 / (expected_u / 0.95) + 150e6) + 0.1 * 100e9;
        assert!(close(p.rate().as_f64(), expected, 1.0), "{}", p.rate());
        assert!(p.rate() < Rate::from_gbps(70));
    }

    #[test]
    fn a_growing_queue_cuts_more_than_a_draining_one() {
        // The same 32 000 bytes queued at the second record; the link sent at line rate.
        let mut growing = sender(int_cfg());
        two_acks(
            &mut growing,
            &stack(0, 0, 0),
            &stack(10_000, 125_056, 32_000),
        );
        let mut draining = sender(int_cfg());
        two_acks(
            &mut draining,
            &stack(0, 0, 64_000),
            &stack(10_000, 125_056, 32_000),
        );
        let mut steady = sender(int_cfg());
        two_acks(
            &mut steady,
            &stack(0, 0, 32_000),
            &stack(10_000, 125_056, 32_000),
        );
        assert!(growing.power() > steady.power() && steady.power() > draining.power());
        assert!(growing.rate() < steady.rate() && steady.rate() < draining.rate());
        // Growing: A = B + 32 000 x 8 / 10 us = 1.256 B (with the tx quantum).
        let tx = 125_056.0 * 8.0 / 10e-6;
        let a = tx + 32_000.0 * 8.0 / 10e-6;
        let expected = a * (32_000.0 * 8.0 + 1e6) / (100e9 * 1e6);
        assert!(
            close(growing.power(), expected, 1e-9),
            "{}",
            growing.power()
        );
    }

    #[test]
    fn a_link_at_the_target_without_a_queue_increases_by_gamma_beta() {
        let mut p = sender(int_cfg());
        p.committed = 50e9;
        p.rate = 50e9;
        // 121 600 bytes (950 units of 128) in 10.24 us: the link at 95 % of its rate, no
        // queue, so Γ = η; tau above T, so u = Γ.
        two_acks(&mut p, &stack(0, 0, 0), &stack(10_240, 121_600, 0));
        assert!(close(p.power(), 0.95, 1e-12), "{}", p.power());
        assert!(
            close(p.rate().as_f64(), 50e9 + 0.9 * 150e6, 1.0),
            "{}",
            p.rate()
        );
    }

    #[test]
    fn an_idle_link_returns_to_line_rate() {
        let mut p = sender(int_cfg());
        p.committed = 10e9;
        p.rate = 10e9;
        two_acks(&mut p, &stack(0, 0, 0), &stack(10_000, 0, 0));
        assert_eq!(p.power(), 0.0);
        assert_eq!(p.rate(), G100);
    }

    #[test]
    fn a_negative_power_keeps_the_smoothed_value() {
        let mut p = sender(int_cfg());
        p.u = 1.2;
        // Nothing sent while the queue drained by 64 000 bytes: A < 0.
        two_acks(&mut p, &stack(0, 0, 64_000), &stack(10_000, 0, 0));
        assert_eq!(p.power(), 1.2);
        let expected = 0.9 * (100e9 / (1.2 / 0.95) + 150e6) + 0.1 * 100e9;
        assert!(close(p.rate().as_f64(), expected, 1.0), "{}", p.rate());
    }

    #[test]
    fn fast_reaction_changes_the_rate_but_not_the_reference() {
        let mut p = sender(int_cfg());
        p.on_ack(Time::from_us(1), &ack(1000, 10_000, &stack(0, 0, 0)));
        // Within the round trip (acked <= 10 000): fast reaction.
        p.on_ack(
            Time::from_us(2),
            &ack(5000, 12_000, &stack(1_000, 12_544, 100_000)),
        );
        assert!(p.rate() < G100);
        assert_eq!(p.committed, 100e9);
        assert_eq!(p.last_update_seq, 10_000);
        // Without fast reaction the same ACK does nothing, not even record the hop.
        let mut slow = sender(PowerTcpConfig {
            fast_react: false,
            ..int_cfg()
        });
        slow.on_ack(Time::from_us(1), &ack(1000, 10_000, &stack(0, 0, 0)));
        let s = stack(1_000, 12_544, 100_000);
        slow.on_ack(Time::from_us(2), &ack(5000, 12_000, &s));
        assert_eq!(slow.rate(), G100);
        assert_eq!(slow.power(), 1.0);
        assert_ne!(slow.hops[0], s.hops()[0]);
    }

    #[test]
    fn a_full_update_commits_the_reference() {
        let mut p = sender(int_cfg());
        p.on_ack(Time::from_us(1), &ack(1000, 10_000, &stack(0, 0, 0)));
        p.on_ack(
            Time::from_us(2),
            &ack(10_001, 30_000, &stack(1_000, 12_544, 100_000)),
        );
        assert!(p.rate() < G100);
        assert_eq!(p.committed, p.rate);
        assert_eq!(p.last_update_seq, 30_000);
    }

    #[test]
    fn the_rate_stays_within_its_bounds() {
        // A queue of 80 base BDPs: Γ = 81 each round; (1 - γ) R_c keeps each cut above a
        // tenth, and a few rounds floor the rate at the minimum.
        let mut p = sender(int_cfg());
        let q = 10_000_000;
        round(&mut p, 0, &stack(0, 0, q));
        for i in 1..=4 {
            round(&mut p, i, &stack(10_000 * i, 125_000 * i, q));
        }
        assert_eq!(p.rate(), Rate::from_mbps(1000));
        // The queue drains with nothing sent (Γ < 0: u kept), then the link is idle: no
        // power at all, back to line rate, never above.
        round(&mut p, 5, &stack(50_000, 500_000, 0));
        assert_eq!(p.rate(), Rate::from_mbps(1000));
        round(&mut p, 6, &stack(60_000, 500_000, 0));
        assert_eq!(p.power(), 0.0);
        assert_eq!(p.rate(), G100);
        // A minimum above the line rate is the line rate.
        let p = sender(PowerTcpConfig {
            min_rate: Rate::from_gbps(400),
            ..int_cfg()
        });
        assert_eq!(p.min_rate, 100e9);
    }

    #[test]
    fn an_unusable_stack_is_ignored_but_the_round_ends() {
        let mut p = sender(int_cfg());
        p.on_ack(Time::from_us(1), &ack(1000, 10_000, &stack(0, 0, 0)));
        let mut deep = IntStack::EMPTY;
        for i in 0..6 {
            deep.push(IntHop::new(
                Time::from_ns(1000 + i),
                12_544,
                100_000,
                G100,
                1,
            ));
        }
        p.on_ack(Time::from_us(2), &ack(10_001, 30_000, &deep));
        assert_eq!(p.rate(), G100);
        assert_eq!(p.power(), 1.0);
        assert_eq!(p.last_update_seq, 30_000, "the round still ends");
    }

    #[test]
    fn acks_without_the_modes_input_change_nothing() {
        let mut p = sender(int_cfg());
        p.on_ack(Time::from_us(1), &rtt_ack(1000, 10_000, 20_000));
        assert_eq!(p.last_update_seq, 0);
        let mut d = sender(delay_cfg());
        let s = stack(0, 0, 0);
        d.on_ack(Time::from_us(1), &ack(1000, 10_000, &s));
        assert_eq!(d.last_update_seq, 0);
    }

    #[test]
    fn echoed_marks_change_nothing() {
        let stacks = [
            stack(0, 0, 64_000),
            stack(10_000, 125_056, 64_000),
            stack(20_000, 250_112, 70_000),
        ];
        let mut plain = sender(int_cfg());
        let mut marked = sender(int_cfg());
        for (p, marks) in [
            (&mut plain, [Mark::None; 3]),
            (&mut marked, [Mark::Ce, Mark::Ue, Mark::Ce]),
        ] {
            for (i, (s, echo)) in stacks.iter().zip(marks).enumerate() {
                let i = i as u64;
                let a = Ack {
                    echo,
                    ..ack(1000 + 10_000 * i, 10_000 * (i + 1), s)
                };
                p.on_ack(Time::from_us(10 * i), &a);
            }
        }
        assert!(plain.rate() < G100);
        assert_eq!(plain, marked);

        let mut plain = sender(delay_cfg());
        let mut marked = sender(delay_cfg());
        for (p, echo) in [(&mut plain, Mark::None), (&mut marked, Mark::Ue)] {
            for (i, rtt) in [10_000, 14_000, 15_000].into_iter().enumerate() {
                let i = i as u64;
                let a = Ack {
                    echo,
                    ..rtt_ack(1000 + 10_000 * i, 10_000 * (i + 1), rtt)
                };
                p.on_ack(Time::from_us(10 * i), &a);
            }
        }
        assert!(plain.rate() < G100);
        assert_eq!(plain, marked);
    }

    #[test]
    fn delay_mode_cuts_on_a_rising_rtt() {
        let mut d = sender(delay_cfg());
        d.on_ack(Time::from_us(100), &rtt_ack(1000, 10_000, 10_000));
        // 10 us later the RTT is 2 us higher: A = 1.2, Γ = 1.2 x 12 / (1.05 x 10).
        d.on_ack(Time::from_us(110), &rtt_ack(11_000, 20_000, 12_000));
        let expected_u = 1.2 * 12.0 / 10.5;
        assert!(close(d.power(), expected_u, 1e-9), "{}", d.power());
        let expected = 0.7 * (100e9 / expected_u + 150e6) + 0.3 * 100e9;
        assert!(close(d.rate().as_f64(), expected, 1.0), "{}", d.rate());
        assert!(d.rate() < G100);
        assert_eq!(d.committed, d.rate);
    }

    #[test]
    fn delay_mode_increases_at_the_base_rtt() {
        let mut d = sender(delay_cfg());
        d.committed = 50e9;
        d.rate = 50e9;
        d.on_ack(Time::from_us(100), &rtt_ack(1000, 10_000, 10_000));
        // Steady at the base RTT: A = 1, Γ = 1 / 1.05, below 1: the rate grows by more
        // than γ β.
        d.on_ack(Time::from_us(110), &rtt_ack(11_000, 20_000, 10_000));
        assert!(close(d.power(), 1.0 / 1.05, 1e-12), "{}", d.power());
        let expected = 0.7 * (50e9 * 1.05 + 150e6) + 0.3 * 50e9;
        assert!(close(d.rate().as_f64(), expected, 1.0), "{}", d.rate());
        // With Γ exactly 1 (the RTT at slack x T), exactly γ β.
        let mut d = sender(delay_cfg());
        d.committed = 50e9;
        d.rate = 50e9;
        d.on_ack(Time::from_us(100), &rtt_ack(1000, 10_000, 10_500));
        d.on_ack(Time::from_us(110), &rtt_ack(11_000, 20_000, 10_500));
        assert!(close(d.power(), 1.0, 1e-12), "{}", d.power());
        assert!(
            close(d.rate().as_f64(), 50e9 + 0.7 * 150e6, 1.0),
            "{}",
            d.rate()
        );
    }

    #[test]
    fn delay_mode_floors_the_current_at_one_half() {
        let mut d = sender(delay_cfg());
        d.on_ack(Time::from_us(100), &rtt_ack(1000, 10_000, 30_000));
        // The RTT falls 20 us in 10 us: A = -1, floored at 0.5; Γ = 0.5 x 10 / 10.5.
        d.on_ack(Time::from_us(110), &rtt_ack(11_000, 20_000, 10_000));
        assert!(close(d.power(), 0.5 / 1.05, 1e-12), "{}", d.power());
        assert_eq!(d.rate(), G100);
    }

    #[test]
    fn delay_mode_tracks_the_smallest_rtt_as_base() {
        let mut d = sender(delay_cfg());
        assert_eq!(d.base_rtt(), Time::from_us(T_US));
        d.on_ack(Time::from_us(100), &rtt_ack(1000, 10_000, 8_000));
        assert_eq!(d.base_rtt(), Time::from_us(8));
        d.on_ack(Time::from_us(110), &rtt_ack(11_000, 20_000, 9_000));
        assert_eq!(d.base_rtt(), Time::from_us(8));
        // Γ = (1 + 1 us / 10 us) x 9 / (1.05 x 8), dt = 10 us clamped to T = 8 us.
        assert!(close(d.power(), 1.1 * 9.0 / 8.4, 1e-12), "{}", d.power());
        d.on_ack(Time::from_us(120), &rtt_ack(21_000, 30_000, 7_000));
        assert_eq!(d.base_rtt(), Time::from_us(7));
        // INT mode keeps the configured base RTT.
        let mut p = sender(int_cfg());
        p.on_ack(Time::from_us(1), &rtt_ack(1000, 10_000, 1_000));
        assert_eq!(p.base_rtt(), Time::from_us(T_US));
    }

    #[test]
    fn delay_mode_samples_at_one_instant_give_no_gradient() {
        let mut d = sender(delay_cfg());
        d.on_ack(Time::from_us(100), &rtt_ack(1000, 10_000, 10_000));
        d.on_ack(Time::from_us(100), &rtt_ack(11_000, 20_000, 15_000));
        assert_eq!(d.rate(), G100);
        assert_eq!(d.power(), 1.0);
        assert_eq!(d.prev.map(|p| p.rtt), Some(Time::from_ns(15_000)));
        assert_eq!(d.last_update_seq, 20_000);
    }

    #[test]
    fn out_of_range_parameters_are_taken_as_documented() {
        let p = sender(PowerTcpConfig {
            gamma: 0.0,
            target_utilization: 1.5,
            base_rtt_slack: 0.5,
            int_multi: 0,
            ..PowerTcpConfig::for_mode(PowerTcpMode::Delay)
        });
        assert_eq!(p.cfg.gamma, 0.7);
        assert_eq!(p.cfg.target_utilization, 1.0);
        assert_eq!(p.cfg.base_rtt_slack, 1.05);
        assert_eq!(p.cfg.int_multi, 1);
        assert_eq!(PowerTcpConfig::default().gamma, 0.9);
    }
}
