//! ECN marking and congestion detection at switch egress queues: RED's thresholds per
//! queue and port rate, or InfiniBand's FECN rule instead of them, where marking happens,
//! and which detector decides the mark.
//!
//! Invariants: a detector other than RED decides at dequeue and needs marking on
//! ([`EcnConfig::validate`]); FECN marks at dequeue (a switch marks what it forwards).

use headroom_mech::ecn::RedConfig;
use headroom_mech::tcd::ReleasedConfig;
use headroom_mech::units::{Rate, Time};
use headroom_mech::PRIORITIES;
use serde::Serialize;

/// Where ECN marking happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum EcnPoint {
    /// When a packet leaves the queue (on the queue behind it).
    Dequeue,
    /// When a packet joins the queue (on the queue in front of it).
    Enqueue,
}

/// ECN setting of one egress queue (priority), on every port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub enum QueueEcn {
    /// The switch-wide thresholds ([`EcnConfig::red`] or the per-rate ones).
    #[default]
    Inherit,
    /// This queue never marks.
    Off,
    /// These thresholds, whatever the port rate.
    Red(RedConfig),
}

/// ECN marking of data packets.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EcnConfig {
    /// Whether switches mark at all.
    pub enabled: bool,
    /// Where marking happens.
    pub point: EcnPoint,
    /// Thresholds per port rate; `None` scales the DCQCN defaults with each port's rate.
    pub red: Option<RedConfig>,
    /// Per-rate overrides (rate in bit/s → thresholds), as the HPCC config's KMIN/KMAX maps.
    pub by_rate: Vec<(Rate, RedConfig)>,
    /// Per-queue overrides (index = priority).
    pub queues: [QueueEcn; PRIORITIES],
    /// What decides the mark of a departing packet.
    pub detector: DetectorConfig,
    /// InfiniBand FECN marking in place of RED's thresholds (`None`: RED; a run whose
    /// hosts use InfiniBand CC marks FECN with the defaults, [`EcnConfig::fecn_for`]).
    pub fecn: Option<FecnConfig>,
}

/// InfiniBand FECN marking at a switch egress (port, VL) (IBA Annex A10): a packet it
/// forwards is marked when the queue holds at least `threshold` bytes, the packet is at
/// least `packet_size` bytes, and it is the first of `marking_rate` such packets; on a
/// credit link a port whose VL is out of credit (a victim, not the root) marks only with
/// `victim_mask`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FecnConfig {
    /// Queue bytes from which the queue is congested.
    pub threshold: u64,
    /// Mark one of every this many eligible packets (1: every one).
    pub marking_rate: u32,
    /// Smallest packet marked, in bytes.
    pub packet_size: u64,
    /// A port out of credit marks too.
    pub victim_mask: bool,
}

impl Default for FecnConfig {
    /// 64 KiB, every eligible packet of any size, victims too (marking by queue length
    /// alone, as without TCD). With InfiniBand CC's default table and timer this holds N
    /// flows through a 100 Gb/s bottleneck at fair shares with the queue below it
    /// (`cc_convergence.rs`).
    fn default() -> Self {
        FecnConfig {
            threshold: 64 << 10,
            marking_rate: 1,
            packet_size: 0,
            victim_mask: true,
        }
    }
}

impl FecnConfig {
    /// The threshold as the RED rule every marking queue evaluates: always at or above
    /// it, never below.
    pub fn as_red(&self) -> RedConfig {
        RedConfig {
            kmin: self.threshold,
            kmax: self.threshold,
            pmax: 1.0,
        }
    }
}

impl EcnConfig {
    /// Why this marking cannot run, if it cannot: a TCD detector decides when a packet
    /// leaves its queue, so it needs marking on and at dequeue.
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.detector == DetectorConfig::Red {
            return Ok(());
        }
        if !self.enabled {
            return Err("ternary congestion detection needs ECN marking (enabled = true)");
        }
        if self.point != EcnPoint::Dequeue {
            return Err("ternary congestion detection decides at dequeue (point = \"dequeue\")");
        }
        Ok(())
    }

    /// Thresholds for a port of `rate`.
    pub fn red_for(&self, rate: Rate) -> RedConfig {
        if let Some((_, r)) = self.by_rate.iter().find(|(k, _)| *k == rate) {
            return *r;
        }
        self.red.unwrap_or_else(|| RedConfig::scaled(rate))
    }

    /// Thresholds of egress queue `queue` on a port of `rate`; `None` if it does not mark.
    /// With FECN (`fecn`) a marking queue takes its threshold.
    pub fn queue_red(
        &self,
        rate: Rate,
        queue: usize,
        fecn: Option<&FecnConfig>,
    ) -> Option<RedConfig> {
        if !self.enabled {
            return None;
        }
        let red = match self.queues[queue] {
            QueueEcn::Inherit => self.red_for(rate),
            QueueEcn::Off => return None,
            QueueEcn::Red(r) => r,
        };
        Some(fecn.map_or(red, FecnConfig::as_red))
    }

    /// The FECN rule of a run whose hosts use `cc`: the configured one, else the defaults
    /// when the hosts run InfiniBand CC; `None`: RED.
    pub fn fecn_for(&self, cc: &super::CcConfig) -> Option<FecnConfig> {
        match (self.fecn, cc) {
            (Some(f), _) => Some(f),
            (None, super::CcConfig::IbCc(_)) => Some(FecnConfig::default()),
            (None, _) => None,
        }
    }
}

impl Default for EcnConfig {
    fn default() -> Self {
        EcnConfig {
            enabled: true,
            point: EcnPoint::Dequeue,
            red: None,
            by_rate: Vec::new(),
            queues: [QueueEcn::Inherit; PRIORITIES],
            detector: DetectorConfig::Red,
            fecn: None,
        }
    }
}

/// What decides the mark of a packet leaving a switch egress queue.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub enum DetectorConfig {
    /// RED/ECN alone.
    #[default]
    Red,
    /// Ternary congestion detection with the paper's state machine.
    Tcd {
        /// max(T_on) of every port; `None`: derived per port from the downstream PFC
        /// hysteresis, the link and the response time.
        max_t_on: Option<Time>,
        /// Queue bytes above which an ON queue is congested; `None`: the queue's RED `kmin`.
        threshold: Option<u64>,
    },
    /// Ternary congestion detection as the authors' released code decides.
    TcdReleased(ReleasedConfig),
}

impl DetectorConfig {
    /// The name a scenario gives it: `red`, `tcd` or `tcd-released`.
    pub fn name(&self) -> &'static str {
        match self {
            DetectorConfig::Red => "red",
            DetectorConfig::Tcd { .. } => "tcd",
            DetectorConfig::TcdReleased(_) => "tcd-released",
        }
    }
}
