//! HPCC (Li et al., SIGCOMM 2019) as the ns-3 HPCC simulator runs it (`CC_MODE 3`,
//! `MULTI_RATE 0`).
//!
//! Every ACK carries the INT stack its data packet collected ([`crate::int`]). For each hop
//! `j` the sender compares the record with the one of the previous ACK:
//! `u_j = tx_rate_j / B_j + min(qlen_j, prev_qlen_j) x line_rate / B_j / W`, where
//! `tx_rate_j` is the bytes the port sent between the two records over their time apart,
//! `B_j` the hop's line rate, `W` the base window in bytes (a bandwidth-delay product) and
//! `line_rate` the NIC's. The largest `u_j`, `U`, is smoothed over the base RTT `T`:
//! `u = (u (T - tau) + U tau) / T`, with `tau` the max hop's time delta (at most `T`).
//! Then, from the reference rate `R_c`, with `k = u / eta` (`eta` the target utilization):
//! `R = R_c / k + rate_ai` and the increase stage resets when `k >= 1` or the stage reached
//! `mi_thresh`; else `R = R_c + rate_ai` and the stage grows. `R` is bounded to
//! `[min_rate, line_rate]`.
//!
//! Once per round trip (an ACK passing the `snd_nxt` of the last update) the update is
//! committed: `R_c = R`. With `fast_react`, every other ACK recomputes `R` (and the
//! smoothed `u`, and the hop references) without committing. The first ACK only records
//! the hops. A stack of more than [`crate::int::MAX_HOPS`] hops is ignored. A hop whose
//! records are the same nanosecond apart gives no rate sample and is skipped (the simulator
//! divides by zero there; consecutive records of one port are at least a frame apart).
//!
//! The driver shifts the pending departure when the rate changes (the simulator's
//! `ChangeRate`, see [`super::CongestionControl::retimes_departures`]) and bounds the
//! bytes in flight by the window `W x R / line_rate`.
//!
//! Invariants: `min_rate <= rate <= line_rate`; `u >= 0`; no timers.

use super::Ack;
use crate::int::{IntHop, IntStack, MAX_HOPS};
use crate::units::{Rate, Time};

/// Parameters of HPCC. [`Default`]: the simulator's `run.py` for `--cc hp` at 100 Gb/s.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HpccConfig {
    /// Target utilization `eta`, in `(0, 1]`. Default 0.95 (`U_TARGET`).
    pub target_utilization: f64,
    /// Additive increase stages before a multiplicative step is forced (`MI_THRESH`).
    /// Default 0: every update is multiplicative (`R_c / k + rate_ai`).
    pub mi_thresh: u32,
    /// React on every ACK, committing once per round trip. Default true (`FAST_REACT 1`).
    pub fast_react: bool,
    /// Additive increase `W_AI` in rate terms. Default 40 Mb/s (`RATE_AI`).
    pub rate_ai: Rate,
    /// Floor of the sending rate. Default 1 Gb/s (`MIN_RATE`).
    pub min_rate: Rate,
    /// Skip, on fast reaction, hops whose queue is empty (`SAMPLE_FEEDBACK`). Default false.
    pub sample_feedback: bool,
    /// Resolution multiplier of the INT fields (`INT_MULTI`). Default 4 (100 Gb/s).
    pub int_multi: u32,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            target_utilization: 0.95,
            mi_thresh: 0,
            fast_react: true,
            rate_ai: Rate::from_mbps(40),
            min_rate: Rate::from_mbps(1000),
            sample_feedback: false,
            int_multi: 4,
        }
    }
}

/// One flow's HPCC sender.
#[derive(Debug, Clone, PartialEq)]
pub struct Hpcc {
    cfg: HpccConfig,
    line_rate: f64,
    min_rate: f64,
    /// Base RTT `T`, in nanoseconds.
    base_rtt_ns: f64,
    /// Base window `W`, in bytes.
    window: f64,
    rate: f64,
    /// Reference rate `R_c`.
    committed: f64,
    stage: u32,
    /// Smoothed utilization.
    u: f64,
    /// End of the current round trip (0: no ACK yet).
    last_update_seq: u64,
    hops: [IntHop; MAX_HOPS],
}

impl Hpcc {
    /// A sender at `line_rate` whose base round trip is `base_rtt` and base window
    /// `window` bytes (both taken as at least 1). A target utilization above 1 is taken as
    /// 1 and one that is not positive as the default 0.95 (the scenario and config parsers
    /// refuse both); `int_multi` 0 as 1.
    pub fn new(cfg: HpccConfig, line_rate: Rate, base_rtt: Time, window: u64) -> Hpcc {
        let line = line_rate.as_f64();
        let eta = if cfg.target_utilization > 0.0 {
            cfg.target_utilization.min(1.0)
        } else {
            0.95
        };
        Hpcc {
            min_rate: cfg.min_rate.as_f64().min(line),
            cfg: HpccConfig {
                target_utilization: eta,
                int_multi: cfg.int_multi.max(1),
                ..cfg
            },
            line_rate: line,
            base_rtt_ns: (base_rtt.as_ps() as f64 / 1000.0).max(1.0),
            window: window.max(1) as f64,
            rate: line,
            committed: line,
            stage: 0,
            u: 1.0,
            last_update_seq: 0,
            hops: [IntHop::default(); MAX_HOPS],
        }
    }

    /// Current sending rate.
    pub fn rate(&self) -> Rate {
        Rate::from_f64(self.rate)
    }

    /// The smoothed utilization estimate.
    pub fn utilization(&self) -> f64 {
        self.u
    }

    /// An ACK arrived carrying the INT stack `int` of the packet it acknowledges.
    pub fn on_ack(&mut self, ack: &Ack, int: &IntStack) {
        let full = ack.acked > self.last_update_seq;
        if !full && !self.cfg.fast_react {
            return;
        }
        if self.last_update_seq == 0 {
            self.last_update_seq = ack.snd_nxt;
            for (mine, theirs) in self.hops.iter_mut().zip(int.hops()) {
                *mine = *theirs;
            }
            return;
        }
        if int.is_usable() {
            self.react(int, full);
        }
        if full && ack.snd_nxt > self.last_update_seq {
            self.last_update_seq = ack.snd_nxt;
        }
    }

    fn react(&mut self, int: &IntStack, commit: bool) {
        let multi = self.cfg.int_multi;
        let mut max_u = 0.0f64;
        let mut max_tau = 0u64;
        let mut any = false;
        for (i, hop) in int.hops().iter().enumerate() {
            let prev = self.hops[i];
            if self.cfg.sample_feedback && !commit && hop.queued(multi) == 0 {
                continue;
            }
            self.hops[i] = *hop;
            let tau = hop.ns_since(&prev);
            let hop_rate = hop.rate().as_f64();
            if tau == 0 || hop_rate <= 0.0 {
                continue;
            }
            any = true;
            let tx_rate = hop.bytes_since(&prev, multi) as f64 * 8.0 / (tau as f64 * 1e-9);
            let queued = hop.queued(multi).min(prev.queued(multi)) as f64;
            let u = tx_rate / hop_rate + queued * self.line_rate / hop_rate / self.window;
            if u > max_u {
                max_u = u;
                max_tau = tau;
            }
        }
        if !any {
            return;
        }
        let tau = (max_tau as f64).min(self.base_rtt_ns);
        self.u = (self.u * (self.base_rtt_ns - tau) + max_u * tau) / self.base_rtt_ns;
        let k = self.u / self.cfg.target_utilization;
        let ai = self.cfg.rate_ai.as_f64();
        let (rate, stage) = if k >= 1.0 || self.stage >= self.cfg.mi_thresh {
            (self.committed / k + ai, 0)
        } else {
            (self.committed + ai, self.stage + 1)
        };
        self.rate = rate.clamp(self.min_rate, self.line_rate);
        if commit {
            self.committed = self.rate;
            self.stage = stage;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecn::Mark;

    const G100: Rate = Rate::from_gbps(100);

    fn sender(cfg: HpccConfig) -> Hpcc {
        // T = 10 us, W = 125 000 B (100 Gb/s x 10 us).
        Hpcc::new(cfg, G100, Time::from_us(10), 125_000)
    }

    /// A one-hop stack at `ns` after `tx` bytes, with `q` bytes queued (INT_MULTI 1).
    fn stack(ns: u64, tx: u64, q: u64) -> IntStack {
        let mut s = IntStack::EMPTY;
        s.push(IntHop::new(Time::from_ns(ns), tx, q, G100, 1));
        s
    }

    fn ack(acked: u64, snd_nxt: u64) -> Ack<'static> {
        Ack {
            acked,
            snd_nxt,
            rtt: None,
            echo: Mark::None,
            int: None,
        }
    }

    fn cfg() -> HpccConfig {
        HpccConfig {
            int_multi: 1,
            ..HpccConfig::default()
        }
    }

    #[test]
    fn first_ack_only_records_the_hops() {
        let mut h = sender(cfg());
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 0));
        assert_eq!(h.rate(), G100);
        assert_eq!(h.last_update_seq, 10_000);
    }

    #[test]
    fn echoed_marks_change_nothing() {
        let mut plain = sender(cfg());
        let mut marked = sender(cfg());
        for (h, echo) in [(&mut plain, Mark::None), (&mut marked, Mark::Ue)] {
            h.on_ack(&ack(1000, 10_000), &stack(0, 0, 64_000));
            let a = Ack {
                echo,
                ..ack(11_000, 20_000)
            };
            h.on_ack(&a, &stack(10_000, 125_056, 64_000));
            let a = Ack {
                echo: Mark::Ce,
                ..ack(21_000, 30_000)
            };
            h.on_ack(&a, &stack(20_000, 250_112, 64_000));
        }
        assert_eq!(plain.rate(), marked.rate());
    }

    #[test]
    fn a_saturated_link_with_a_queue_cuts_multiplicatively() {
        let mut h = sender(cfg());
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 64_000));
        // 10 us later, 125 000 bytes sent (line rate) and 64 000 queued throughout:
        // U = 1 + 64000/125000 = 1.512, tau = T: u = U.
        h.on_ack(&ack(11_000, 20_000), &stack(10_000, 125_056, 64_000));
        let u = h.utilization();
        assert!((u - (125_056.0 / 125_000.0 + 0.512)).abs() < 1e-3, "{u}");
        let expected = 100e9 / (u / 0.95) + 40e6;
        assert!((h.rate().as_f64() - expected).abs() < 2.0, "{}", h.rate());
    }

    #[test]
    fn an_idle_link_with_a_stage_below_mi_thresh_increases_additively() {
        let mut h = sender(HpccConfig {
            mi_thresh: 5,
            ..cfg()
        });
        h.committed = 50e9;
        h.rate = 50e9;
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 0));
        // Half the line rate, no queue: u smoothed from 1 towards 0.5 over tau = T/2.
        h.on_ack(&ack(11_000, 20_000), &stack(5_000, 31_232, 0));
        assert!(h.utilization() < 0.95);
        assert_eq!(h.rate(), Rate::from_mbps(50_040));
        assert_eq!(h.stage, 1);
    }

    #[test]
    fn mi_thresh_reached_forces_a_multiplicative_step_below_target() {
        let mut h = sender(HpccConfig {
            mi_thresh: 0,
            ..cfg()
        });
        h.committed = 50e9;
        h.rate = 50e9;
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 0));
        h.on_ack(&ack(11_000, 20_000), &stack(5_000, 31_232, 0));
        let k = h.utilization() / 0.95;
        assert!(k < 1.0);
        let expected = (50e9 / k + 40e6).min(100e9);
        assert!((h.rate().as_f64() - expected).abs() < 2.0);
    }

    #[test]
    fn fast_reaction_changes_the_rate_but_not_the_reference() {
        let mut h = sender(cfg());
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 0));
        // Within the round trip (acked <= 10 000): fast reaction.
        h.on_ack(&ack(5000, 12_000), &stack(1_000, 12_544, 100_000));
        assert!(h.rate() < G100);
        assert_eq!(h.committed, 100e9);
        assert_eq!(h.last_update_seq, 10_000);
        // Without fast reaction the same ACK does nothing.
        let mut slow = sender(HpccConfig {
            fast_react: false,
            ..cfg()
        });
        slow.on_ack(&ack(1000, 10_000), &stack(0, 0, 0));
        slow.on_ack(&ack(5000, 12_000), &stack(1_000, 12_544, 100_000));
        assert_eq!(slow.rate(), G100);
    }

    #[test]
    fn a_full_update_commits_the_reference() {
        let mut h = sender(cfg());
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 0));
        h.on_ack(&ack(10_001, 30_000), &stack(1_000, 12_544, 100_000));
        assert_eq!(h.committed, h.rate);
        assert!(h.rate() < G100);
        assert_eq!(h.last_update_seq, 30_000);
    }

    #[test]
    fn the_rate_stays_within_its_bounds() {
        // A queue of a thousand windows: the cut floors at the minimum rate.
        let mut h = Hpcc::new(cfg(), G100, Time::from_us(10), 10_000);
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 10_000_000));
        h.on_ack(&ack(10_001, 30_000), &stack(10_000, 125_000, 10_000_000));
        assert_eq!(h.rate(), Rate::from_mbps(1000));
    }

    #[test]
    fn a_stack_deeper_than_five_hops_is_ignored() {
        let mut h = sender(cfg());
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 0));
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
        h.on_ack(&ack(10_001, 30_000), &deep);
        assert_eq!(h.rate(), G100);
        assert_eq!(h.last_update_seq, 30_000, "the round still ends");
    }

    #[test]
    fn sample_feedback_skips_empty_queues_on_fast_reaction() {
        let mut h = sender(HpccConfig {
            sample_feedback: true,
            ..cfg()
        });
        h.on_ack(&ack(1000, 10_000), &stack(0, 0, 0));
        h.on_ack(&ack(5000, 12_000), &stack(1_000, 12_544, 0));
        assert_eq!(h.rate(), G100);
        assert_eq!(h.utilization(), 1.0);
    }
}
