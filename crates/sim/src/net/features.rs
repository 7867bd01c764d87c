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
//! so both copies give the same results (tested below; when the copies were introduced,
//! `scripts/golden-outputs.sh` found every example's outputs unchanged). They take the same
//! branches but one: the lean copy lets a frame that finds its port idle leave without
//! queueing (`Simulation::depart_directly`), which does the queue's work in the queue's
//! order. Code off the hot path (link failures, rerouting, deadlock checks, channel
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

    /// The same on switches whose ports serve several classes at once: strict priority
    /// for two, DWRR with unequal weights for the lossless 1 to 3 and the lossy 0 and 5, PFC
    /// pausing some while others go on, ECN at enqueue, frames admitted at their last bit.
    /// A frame that finds its port idle may leave without queueing only in the lean copy
    /// (`Simulation::depart_directly`), and only when the scheduler would have served it
    /// untouched. This run fails when a direct departure leaves the round-robin pointer
    /// where it was while the scheduler would have moved it on (tried by letting every
    /// class pass that test).
    #[test]
    fn lean_path_gives_the_general_paths_results_with_many_classes() {
        let mut text = String::from(
            r#"
            seed = 3
            stop_time = "500us"
            [topology]
            kind = "leaf-spine"
            leaves = 2
            spines = 2
            hosts_per_leaf = 6
            host_rate = "100Gbps"
            uplink_rate = "100Gbps"
            delay = "1us"
            [switch]
            buffer = "2MiB"
            headroom = "pfc-guide"
            dynamic_th = -2
            lossless = [1, 2, 3]
            admission = "last-bit"
            [switch.scheduler]
            strict = [6, 7]
            quantum = "1200B"
            weights = [1, 3, 2, 1, 1, 4, 1, 1]
            [switch.ecn]
            enabled = true
            point = "enqueue"
            [host]
            mtu = "1000B"
            [host.cc]
            algorithm = "dcqcn"
            preset = "hpcc"
            [[workload]]
            kind = "incast"
            sender_count = 8
            receiver = 0
            size = "256KiB"
            start = "5us"
            prio = 1
            [[workload]]
            kind = "incast"
            sender_count = 4
            receiver = 0
            size = "128KiB"
            start = "20us"
            prio = 2
            [[workload]]
            kind = "poisson"
            cdf = "websearch"
            load = 0.5
            duration = "300us"
            hosts = "all"
            prio = 3
            [[workload]]
            kind = "poisson"
            cdf = "websearch"
            load = 0.3
            duration = "300us"
            hosts = "all"
            prio = 5
            [[workload]]
            kind = "poisson"
            cdf = "websearch"
            load = 0.1
            duration = "300us"
            hosts = "all"
            prio = 6
        "#,
        );
        // Every 40 us, four classes' frames reach host 1's idle port within a microsecond:
        // the first leaves at once, the others meet the round-robin pointer it left.
        for episode in 0..12 {
            for (i, (src, prio)) in [(7, 1), (2, 5), (8, 2), (3, 0)].into_iter().enumerate() {
                let start_ns = 5_000 + 40_000 * episode + 300 * i;
                text += &format!(
                    "[[workload]]\nkind = \"flows\"\n[[workload.flow]]\nsrc = {src}\ndst = 1\n\
                     prio = {prio}\nsize = \"12KB\"\nstart = \"{start_ns}ns\"\n"
                );
            }
        }
        // Where the scenario's relative paths would resolve (it names no file).
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/many-classes.toml");
        let build = |general: bool| {
            let sc = scenario::parse(&text, &path).expect("the scenario parses");
            let mut sim = Simulation::new(sc.config).expect("the scenario builds");
            assert!(sim.lean, "the scenario uses no optional feature");
            if general {
                sim.lean = false;
            }
            sim
        };
        let lean = build(false).run();
        let paused: std::collections::BTreeSet<u8> = lean.pfc_sent.iter().map(|r| r.prio).collect();
        assert!(paused.len() >= 2, "classes paused: {paused:?}");
        let lean = serde_json::to_string(&lean).expect("results serialize");
        let general = results_json(build(true));
        assert!(lean == general, "the two copies disagree");
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
