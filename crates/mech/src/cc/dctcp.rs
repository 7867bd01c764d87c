//! DCTCP as a rate: the ns-3 HPCC simulator's rate-based variant (`CC_MODE 8`).
//!
//! The receiver echoes each packet's CE mark on its ACK. The sender counts echoed marks
//! over a window of sequence numbers (one round trip: from the `snd_nxt` of the last update
//! until an ACK passes it) and then updates `alpha = (1 - g) alpha + g F`, `F` being the
//! fraction of that window's packets that were marked. An echo outside congestion window
//! reduction (CWR) cuts the rate to `R (1 - alpha/2)` and enters CWR until an ACK passes the
//! `snd_nxt` of the cut; once per round trip outside CWR the rate grows by `rate_ai`.
//! There are no timers. A window (the simulator's `HAS_WIN 1`, `VAR_WIN 1`) is the
//! driver's, see [`super::Window`].
//!
//! Invariants: `min_rate <= rate <= line_rate`; `0 <= alpha <= 1`; at most one cut per
//! round trip (per CWR episode).

use super::Ack;
use crate::ecn::Mark;
use crate::units::Rate;

/// Parameters of DCTCP. [`Default`]: the simulator's `run.py` for `--cc dctcp`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DctcpConfig {
    /// EWMA gain `g` of alpha, in `[0, 1]`. Default 1/16 (`EWMA_GAIN 0.0625`).
    pub g: f64,
    /// Additive increase per round trip outside CWR. Default 615 Mb/s (`DCTCP_RATE_AI`;
    /// `run.py`: one MTU per 13 µs round trip).
    pub rate_ai: Rate,
    /// Floor of the sending rate. Default 1 Gb/s (`MIN_RATE`).
    pub min_rate: Rate,
    /// Payload bytes per packet, to count a round trip's packets from its bytes.
    /// Default 1000 (`PACKET_PAYLOAD_SIZE`).
    pub packet_payload: u64,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            rate_ai: Rate::from_mbps(615),
            min_rate: Rate::from_mbps(1000),
            packet_payload: 1000,
        }
    }
}

/// One flow's DCTCP sender.
#[derive(Debug, Clone, PartialEq)]
pub struct Dctcp {
    cfg: DctcpConfig,
    line_rate: f64,
    min_rate: f64,
    rate: f64,
    alpha: f64,
    /// End of the current round trip's window (0: no ACK yet).
    last_update_seq: u64,
    /// Echoed marks in the current window.
    marked: u64,
    /// Packets in the current window.
    batch: u64,
    /// In congestion window reduction until an ACK passes `cwr_end`.
    cwr: bool,
    cwr_end: u64,
}

impl Dctcp {
    /// A sender at `line_rate` with alpha = 1 (the first echo halves the rate).
    pub fn new(cfg: DctcpConfig, line_rate: Rate) -> Dctcp {
        let line = line_rate.as_f64();
        Dctcp {
            min_rate: cfg.min_rate.as_f64().min(line),
            cfg: DctcpConfig {
                g: cfg.g.clamp(0.0, 1.0),
                packet_payload: cfg.packet_payload.max(1),
                ..cfg
            },
            line_rate: line,
            rate: line,
            alpha: 1.0,
            last_update_seq: 0,
            marked: 0,
            batch: 0,
            cwr: false,
            cwr_end: 0,
        }
    }

    /// Current sending rate.
    pub fn rate(&self) -> Rate {
        Rate::from_f64(self.rate)
    }

    /// The congestion estimate.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// An ACK arrived.
    pub fn on_ack(&mut self, ack: &Ack) {
        self.marked += u64::from(ack.echo == Mark::Ce);
        let new_round = ack.acked > self.last_update_seq;
        if new_round {
            if self.last_update_seq == 0 {
                // The first ACK opens the first window; its marks count towards it.
                self.batch = ack.snd_nxt / self.cfg.packet_payload + 1;
            } else {
                let fraction = (self.marked as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * fraction;
                self.marked = 0;
                self.batch = ack.snd_nxt.saturating_sub(ack.acked) / self.cfg.packet_payload + 1;
            }
            self.last_update_seq = ack.snd_nxt;
        }
        if self.cwr && ack.acked > self.cwr_end {
            self.cwr = false;
        }
        if ack.echo == Mark::Ce && !self.cwr {
            self.cwr = true;
            self.cwr_end = ack.snd_nxt;
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.min_rate);
        }
        if !self.cwr && new_round {
            self.rate = (self.rate + self.cfg.rate_ai.as_f64()).min(self.line_rate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, snd_nxt: u64, ce: bool) -> Ack<'static> {
        Ack {
            acked,
            snd_nxt,
            rtt: None,
            echo: if ce { Mark::Ce } else { Mark::None },
            int: None,
        }
    }

    fn sender() -> Dctcp {
        Dctcp::new(DctcpConfig::default(), Rate::from_gbps(100))
    }

    #[test]
    fn a_ue_echo_is_an_unmarked_ack() {
        let mut ue = sender();
        let mut none = sender();
        for (d, echo) in [(&mut ue, Mark::Ue), (&mut none, Mark::None)] {
            d.on_ack(&Ack {
                echo,
                ..ack(1000, 10_000, false)
            });
            d.on_ack(&Ack {
                echo,
                ..ack(11_000, 20_000, false)
            });
        }
        assert_eq!(ue.rate(), none.rate());
        assert_eq!(ue.alpha(), none.alpha());
    }

    #[test]
    fn first_echo_halves_the_rate_and_enters_cwr() {
        let mut d = sender();
        d.on_ack(&ack(1000, 10_000, true));
        assert_eq!(d.rate(), Rate::from_gbps(50));
        // Another echo before an ACK passes 10 000: no second cut, no increase.
        d.on_ack(&ack(5000, 20_000, true));
        assert_eq!(d.rate(), Rate::from_gbps(50));
    }

    #[test]
    fn cwr_ends_when_an_ack_passes_the_cut_and_then_the_rate_grows_once_per_round() {
        let mut d = sender();
        d.on_ack(&ack(1000, 10_000, true)); // cut to 50 G, round ends at 10 000
        d.on_ack(&ack(11_000, 30_000, false)); // passes both: alpha update, CWR off, +615 M
        assert_eq!(d.rate(), Rate::from_mbps(50_615));
        d.on_ack(&ack(20_000, 31_000, false)); // same round (ends at 30 000): no increase
        assert_eq!(d.rate(), Rate::from_mbps(50_615));
        d.on_ack(&ack(30_001, 40_000, false));
        assert_eq!(d.rate(), Rate::from_mbps(51_230));
    }

    #[test]
    fn alpha_follows_the_marked_fraction_per_round() {
        let mut d = sender();
        d.on_ack(&ack(1000, 9_000, false)); // first round: 9 + 1 = 10 packets
        for a in 2..=9u64 {
            d.on_ack(&ack(a * 1000, 9_000, a % 2 == 0)); // 4 marks
        }
        d.on_ack(&ack(10_000, 19_000, false)); // closes the round: F = 4/10
        let expected = (1.0 - 1.0 / 16.0) + 0.4 / 16.0;
        assert!((d.alpha() - expected).abs() < 1e-12, "{}", d.alpha());
    }

    #[test]
    fn cuts_stop_at_the_minimum_rate_and_increases_at_line_rate() {
        let mut d = sender();
        let mut seq = 0;
        for _ in 0..20 {
            seq += 1000;
            d.on_ack(&ack(seq, seq + 1000, true));
        }
        assert_eq!(d.rate(), Rate::from_mbps(1000));
        let mut up = sender();
        up.on_ack(&ack(1000, 2000, false));
        assert_eq!(up.rate(), Rate::from_gbps(100));
    }
}
