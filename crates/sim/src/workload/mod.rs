//! Workloads: the flows a run injects.
//!
//! A flow is a message of `size` bytes from one host to another on one priority, starting at
//! a given time. Generators ([`generators`], Poisson fan-ins in [`fan_in`]) are
//! deterministic functions of their parameters and a seeded RNG; [`leaves`] groups hosts by
//! the switch they hang off; [`cdf`] reads flow-size distributions; [`hpcc`] reads and writes the ns-3
//! HPCC simulator's flow list format. The flow list a run uses is always sorted by start
//! time, then by the order the generators produced it, and numbered in that order.

pub mod cdf;
pub mod fan_in;
pub mod generators;
pub mod hpcc;
pub mod htsim_cm;
pub mod leaves;
pub mod ns3_rdma;

use crate::topology::NodeId;
use headroom_mech::units::Time;

/// Most flows one workload list may hold (about 1 GB of flow specifications, and several
/// times that in a run's per-flow state): generators refuse to make more, before they
/// allocate them.
pub const MAX_FLOWS: usize = 20_000_000;

/// One flow to inject.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FlowSpec {
    /// Sending host.
    pub src: NodeId,
    /// Receiving host.
    pub dst: NodeId,
    /// Priority (0..8).
    pub prio: u8,
    /// Message size in bytes (> 0).
    pub size: u64,
    /// When the sender starts.
    pub start: Time,
    /// Destination port of the 5-tuple (feeds the ECMP hash; the HPCC format carries it).
    pub dport: u16,
}

/// Why a workload could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// A file could not be parsed.
    #[error("{path}:{line}: {reason}")]
    File {
        /// The file.
        path: String,
        /// 1-based line number (0 when the problem is the whole file).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A generator parameter is out of range.
    #[error("{0}")]
    BadParameter(String),
}

/// Which `[[workload]]` entry each flow of a run came from, to report them apart
/// (background and fan-in flows).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkloadGroups {
    /// Labels of the entries that produced flows (`workload[0]`, ...).
    pub names: Vec<String>,
    /// The kind of each entry of `names` (`poisson`, `incast`, ...).
    pub kinds: Vec<String>,
    /// For each flow, by flow id, the index in `names` of the entry that made it.
    pub of_flow: Vec<u32>,
}

impl WorkloadGroups {
    /// Flow groups for a table: one per entry, or, with more than `max_entries` entries,
    /// one per kind (in entry order of first appearance). Returns the labels and, per flow,
    /// its group's index.
    pub fn grouped(&self, max_entries: usize) -> (Vec<String>, Vec<u32>) {
        if self.names.len() <= max_entries {
            return (self.names.clone(), self.of_flow.clone());
        }
        let mut labels: Vec<String> = Vec::new();
        let group_of_entry: Vec<u32> = self
            .kinds
            .iter()
            .map(|kind| {
                let i = labels.iter().position(|g| g == kind).unwrap_or_else(|| {
                    labels.push(kind.clone());
                    labels.len() - 1
                });
                i as u32
            })
            .collect();
        let of_flow = self
            .of_flow
            .iter()
            .map(|&w| group_of_entry[w as usize])
            .collect();
        (labels, of_flow)
    }
}
