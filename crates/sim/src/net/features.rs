//! The forwarding path, compiled once for runs that use none of the optional link and queue
//! features and once for any run.
//!
//! Every frame's hops ask whether the run has credit links, flow channels, arbitration
//! within a queue, classes other than the service level, or PFC watchdogs. Each question is
//! a load and a well-predicted branch, but on the 320-host benchmark (PFC, DCQCN, FIFO
//! classes) together they were 7 % of the instructions. So the hot functions (the event
//! loop, a switch's receive and dequeue paths, choosing and starting the next frame) take a
//! type parameter `F: Features` and ask `F::OPTIONAL && self.credit_links`: with [`Lean`] the
//! compiler removes the feature's code, with [`General`] the run's own state decides, as
//! before.
//!
//! Invariant: a simulation runs [`Lean`] only when none of the features is on
//! (`Simulation::lean`, fixed when it is built; the features never change during a run),
//! so both copies take the same branches and give the same results (tested below; when the
//! copies were introduced, `scripts/golden-outputs.sh` found every example's outputs
//! unchanged). Code off the hot path (link failures, rerouting, deadlock checks, channel
//! waits) calls the general copy, which is right for any run; the hosts' paths and the
//! event loop enter through the methods that choose the copy (`Simulation::try_send`,
//! `run_through`).

use super::classes::Classes;
use super::Simulation;

/// Whether the code compiled for this type may meet the optional features (credit links,
/// flow channels, sub-queues within a class, egress classes other than the service level,
/// PFC watchdogs that drop a class's frames).
pub(super) trait Features {
    /// `true`: ask the run which it uses; `false`: the run uses none of them.
    const OPTIONAL: bool;
}

/// Runs with none of the optional features: PFC or lossy links, FIFO classes named by the
/// frame's service level, no flow channels, no watchdog.
pub(super) enum Lean {}

/// Any run: each feature is asked for at run time.
pub(super) enum General {}

impl Features for Lean {
    const OPTIONAL: bool = false;
}

impl Features for General {
    const OPTIONAL: bool = true;
}

impl Simulation {
    /// Whether this simulation uses none of the optional features, so that it may run the
    /// [`Lean`] copy of the forwarding path.
    pub(super) fn uses_no_optional_feature(&self) -> bool {
        !self.credit_links
            && self.channels.is_none()
            && !self.arbitration.is_on()
            && self.classes == Classes::Service
            && self.watchdogs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use crate::net::Simulation;
    use crate::scenario;
    use std::path::Path;

    /// A simulation of the example `name`, on the copy of the forwarding path it chooses
    /// itself, or forced onto the general one.
    fn example(name: &str, general: bool) -> Simulation {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples")
            .join(name);
        let sc = scenario::load(&path).expect("the example parses");
        let mut sim = Simulation::new(sc.config).expect("the example builds");
        if general {
            sim.lean = false;
        }
        sim
    }

    fn results_json(sim: Simulation) -> String {
        serde_json::to_string(&sim.run()).expect("results serialize")
    }

    /// The lean copy gives exactly the results of the general one, on runs that pause
    /// (an incast) and that mark and reorder across paths (web search over ECMP).
    #[test]
    fn lean_path_gives_the_general_paths_results() {
        for name in ["incast-16to1-star.toml", "websearch-leaf-spine.toml"] {
            let lean = example(name, false);
            assert!(lean.lean, "{name} uses no optional feature");
            let lean = results_json(lean);
            let general = results_json(example(name, true));
            assert!(lean.len() > 1000, "{name}: {} bytes of results", lean.len());
            assert!(lean == general, "{name}: the two copies disagree");
        }
    }

    /// Runs with an optional feature take the general copy.
    #[test]
    fn optional_features_take_the_general_path() {
        for name in [
            "credit/incast-16to1.toml",
            "flow-channels/dragonfly.toml",
            "deadlock/ring-pfcwd.toml",
        ] {
            assert!(!example(name, false).lean, "{name}");
        }
    }
}
