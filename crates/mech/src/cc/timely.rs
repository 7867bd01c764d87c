//! TIMELY (Mittal et al., SIGCOMM 2015) as the ns-3 HPCC simulator runs it (`CC_MODE 7`).
//!
//! Once per round trip (when an ACK passes the `snd_nxt` of the last update) the sender
//! takes the ACK's RTT sample and updates the smoothed RTT difference
//! `d = (1 - a) d + a (rtt - prev_rtt)` (`a` weighs the new sample) and the gradient
//! `d / min_rtt`. Then, from the reference rate `R_c`:
//!
//! - `rtt < t_low`: increase;
//! - `rtt > t_high`: `R = R_c (1 - b (1 - t_high / rtt))`;
//! - gradient `<= 0`: increase;
//! - otherwise `R = R_c max(0, 1 - b x gradient)`;
//!
//! where an increase adds `rate_ai`, or `rate_hai` once `hai_after` increases in a row have
//! happened (hyper-active increase). `R_c` becomes the new rate. The first ACK only records
//! its RTT. ACKs between updates change nothing (the simulator's fast reaction for TIMELY
//! is empty), and TIMELY has no timers and no window.
//!
//! Ternary congestion detection: TIMELY has no marks of its own, but the ACKs echo them.
//! With [`UeReaction::Hold`], a round whose ACKs echoed UE and no CE ends in a hold: the
//! update keeps the rate and restarts the count of increases (RTT tracking goes on). A
//! round with CE is judged by the RTT as usual.
//!
//! Invariants: `min_rate <= rate <= line_rate`; one update per round trip at most.

use super::{Ack, UeReaction};
use crate::ecn::Mark;
use crate::units::{Rate, Time};

/// Parameters of TIMELY. [`Default`]: the simulator's `run.py` for `--cc timely` at
/// 100 Gb/s with its `RdmaHw` attribute defaults for what `run.py` does not set.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TimelyConfig {
    /// Weight `a` of a new RTT-difference sample, in `[0, 1]`. Default 0.875 (`TimelyAlpha`).
    pub alpha: f64,
    /// Multiplicative decrease factor `b`, in `[0, 1]`. Default 0.8 (`TimelyBeta`).
    pub beta: f64,
    /// Below this RTT the rate always increases. Default 50 µs (`TimelyTLow`).
    pub t_low: Time,
    /// Above this RTT the rate always decreases. Default 500 µs (`TimelyTHigh`).
    pub t_high: Time,
    /// Normalizes the RTT gradient. Default 20 µs (`TimelyMinRtt`).
    pub min_rtt: Time,
    /// Additive increase. Default 100 Mb/s (`RATE_AI`).
    pub rate_ai: Rate,
    /// Hyper-active increase. Default 500 Mb/s (`RATE_HAI`).
    pub rate_hai: Rate,
    /// Increases in a row after which `rate_hai` replaces `rate_ai`. Default 5.
    pub hai_after: u32,
    /// Floor of the sending rate. Default 1 Gb/s (`MIN_RATE`).
    pub min_rate: Rate,
    /// What a round with only UE echoes does (`HoldRestartAlpha` holds, as `Hold`: TIMELY
    /// has no alpha). Default [`UeReaction::Hold`].
    pub on_ue: UeReaction,
}

impl Default for TimelyConfig {
    fn default() -> Self {
        TimelyConfig {
            alpha: 0.875,
            beta: 0.8,
            t_low: Time::from_us(50),
            t_high: Time::from_us(500),
            min_rtt: Time::from_us(20),
            rate_ai: Rate::from_mbps(100),
            rate_hai: Rate::from_mbps(500),
            hai_after: 5,
            min_rate: Rate::from_mbps(1000),
            on_ue: UeReaction::Hold,
        }
    }
}

/// One flow's TIMELY sender.
#[derive(Debug, Clone, PartialEq)]
pub struct Timely {
    cfg: TimelyConfig,
    line_rate: f64,
    min_rate: f64,
    rate: f64,
    /// Increases in a row.
    increases: u32,
    /// End of the current round trip (0: no ACK yet).
    last_update_seq: u64,
    prev_rtt: Time,
    rtt_diff: f64,
    /// The marks echoed since the last update.
    round_marks: Mark,
}

impl Timely {
    /// A sender at `line_rate`.
    pub fn new(cfg: TimelyConfig, line_rate: Rate) -> Timely {
        let line = line_rate.as_f64();
        Timely {
            min_rate: cfg.min_rate.as_f64().min(line),
            cfg: TimelyConfig {
                alpha: cfg.alpha.clamp(0.0, 1.0),
                beta: cfg.beta.clamp(0.0, 1.0),
                min_rtt: cfg.min_rtt.max(Time(1)),
                ..cfg
            },
            line_rate: line,
            rate: line,
            increases: 0,
            last_update_seq: 0,
            prev_rtt: Time::ZERO,
            rtt_diff: 0.0,
            round_marks: Mark::None,
        }
    }

    /// Current sending rate.
    pub fn rate(&self) -> Rate {
        Rate::from_f64(self.rate)
    }

    /// An ACK arrived. Only an ACK that passes the last update's `snd_nxt` and carries an
    /// RTT sample updates the rate.
    pub fn on_ack(&mut self, ack: &Ack) {
        self.round_marks = self.round_marks.upgrade(ack.echo);
        if ack.acked <= self.last_update_seq {
            return;
        }
        let Some(rtt) = ack.rtt else {
            return;
        };
        let hold = self.round_marks == Mark::Ue && self.cfg.on_ue != UeReaction::Ignore;
        self.round_marks = Mark::None;
        if self.last_update_seq != 0 {
            let new_diff = rtt.as_ps() as f64 - self.prev_rtt.as_ps() as f64;
            let diff = (1.0 - self.cfg.alpha) * self.rtt_diff + self.cfg.alpha * new_diff;
            let gradient = diff / self.cfg.min_rtt.as_ps() as f64;
            let cut = if rtt < self.cfg.t_low {
                None
            } else if rtt > self.cfg.t_high {
                let t_high = self.cfg.t_high.as_ps() as f64;
                Some(1.0 - self.cfg.beta * (1.0 - t_high / rtt.as_ps() as f64))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - self.cfg.beta * gradient).max(0.0))
            };
            match cut {
                _ if hold => self.increases = 0,
                None => {
                    let step = if self.increases < self.cfg.hai_after {
                        self.cfg.rate_ai
                    } else {
                        self.cfg.rate_hai
                    };
                    self.rate = (self.rate + step.as_f64()).min(self.line_rate);
                    self.increases = self.increases.saturating_add(1);
                }
                Some(c) => {
                    self.rate = (self.rate * c).max(self.min_rate);
                    self.increases = 0;
                }
            }
            self.rtt_diff = diff;
        }
        if ack.snd_nxt > self.last_update_seq {
            self.last_update_seq = ack.snd_nxt;
            self.prev_rtt = rtt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, snd_nxt: u64, rtt_us: u64) -> Ack<'static> {
        Ack {
            acked,
            snd_nxt,
            rtt: Some(Time::from_us(rtt_us)),
            echo: Mark::None,
            int: None,
        }
    }

    fn sender_at(gbps: u64) -> Timely {
        let mut t = Timely::new(TimelyConfig::default(), Rate::from_gbps(100));
        t.rate = Rate::from_gbps(gbps).as_f64();
        t
    }

    #[test]
    fn a_round_with_only_ue_echoes_holds_the_rate() {
        let ue = |acked, snd_nxt, rtt_us| Ack {
            echo: Mark::Ue,
            ..ack(acked, snd_nxt, rtt_us)
        };
        // An RTT above t_high would cut; UE echoed in the round (not on the updating ACK).
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 2000, 10));
        t.on_ack(&ue(1500, 2500, 10));
        t.on_ack(&ack(2500, 4000, 900));
        assert_eq!(t.rate(), Rate::from_gbps(50));
        assert_eq!(t.prev_rtt, Time::from_us(900), "the RTT is still tracked");
        // The next round without marks acts again.
        t.on_ack(&ack(4500, 6000, 900));
        assert!(t.rate() < Rate::from_gbps(50));
        // A round that also echoed CE is judged by the RTT; an increase is held too.
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 2000, 10));
        t.on_ack(&ue(1500, 2500, 10));
        t.on_ack(&Ack {
            echo: Mark::Ce,
            ..ack(2500, 4000, 900)
        });
        assert!(t.rate() < Rate::from_gbps(50));
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 2000, 10));
        t.on_ack(&ue(2500, 4000, 10));
        assert_eq!(t.rate(), Rate::from_gbps(50), "no increase either");
        // Ignore: UE is no mark.
        let mut t = Timely::new(
            TimelyConfig {
                on_ue: UeReaction::Ignore,
                ..TimelyConfig::default()
            },
            Rate::from_gbps(100),
        );
        t.rate = Rate::from_gbps(50).as_f64();
        t.on_ack(&ack(1000, 2000, 10));
        t.on_ack(&ue(2500, 4000, 10));
        assert_eq!(t.rate(), Rate::from_mbps(50_100));
    }

    #[test]
    fn first_ack_only_records_the_rtt() {
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 5000, 600));
        assert_eq!(t.rate(), Rate::from_gbps(50));
        assert_eq!(t.prev_rtt, Time::from_us(600));
    }

    #[test]
    fn acks_within_a_round_trip_change_nothing() {
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 5000, 10));
        t.on_ack(&ack(5000, 9000, 900));
        assert_eq!(t.rate(), Rate::from_gbps(50));
    }

    #[test]
    fn rtt_below_t_low_increases_then_hyper_increases() {
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 2000, 10));
        let mut seq = 2000;
        for _ in 0..5 {
            seq += 2000;
            t.on_ack(&ack(seq, seq + 1000, 10));
        }
        assert_eq!(t.rate(), Rate::from_mbps(50_500)); // five additive steps
        seq += 2000;
        t.on_ack(&ack(seq, seq + 1000, 10));
        assert_eq!(t.rate(), Rate::from_mbps(51_000)); // then one hyper step
    }

    #[test]
    fn rtt_above_t_high_cuts_in_proportion() {
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 2000, 1000));
        t.on_ack(&ack(3000, 4000, 1000));
        // 1 - 0.8 (1 - 500/1000) = 0.6
        assert_eq!(t.rate(), Rate::from_gbps(30));
    }

    #[test]
    fn rising_rtt_between_thresholds_cuts_by_the_gradient() {
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 2000, 100));
        t.on_ack(&ack(3000, 4000, 102));
        // diff = 0.875 x 2 us, gradient = 1.75 / 20 = 0.0875, factor 1 - 0.8 x 0.0875 = 0.93
        let expected = 50e9 * (1.0 - 0.8 * 0.0875);
        assert!((t.rate().as_f64() - expected).abs() < 1.0, "{}", t.rate());
    }

    #[test]
    fn falling_rtt_between_thresholds_increases() {
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 2000, 100));
        t.on_ack(&ack(3000, 4000, 90));
        assert_eq!(t.rate(), Rate::from_mbps(50_100));
    }

    #[test]
    fn steep_gradient_floors_at_the_minimum_rate() {
        let mut t = sender_at(50);
        t.on_ack(&ack(1000, 2000, 60));
        t.on_ack(&ack(3000, 4000, 400));
        assert_eq!(t.rate(), Rate::from_mbps(1000));
    }

    #[test]
    fn an_ack_without_a_sample_is_skipped() {
        let mut t = sender_at(50);
        t.on_ack(&Ack {
            acked: 1000,
            snd_nxt: 2000,
            rtt: None,
            echo: Mark::None,
            int: None,
        });
        assert_eq!(t.last_update_seq, 0);
    }
}
