//! ECN marking and congestion detection at switch egress queues: RED's thresholds per
//! queue and port rate, where marking happens, and which detector decides the mark.
//!
//! Invariant: a detector other than RED decides at dequeue and needs marking on
//! ([`EcnConfig::validate`]).

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
    pub fn queue_red(&self, rate: Rate, queue: usize) -> Option<RedConfig> {
        if !self.enabled {
            return None;
        }
        match self.queues[queue] {
            QueueEcn::Inherit => Some(self.red_for(rate)),
            QueueEcn::Off => None,
            QueueEcn::Red(r) => Some(r),
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
