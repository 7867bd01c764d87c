//! Helpers shared by integration tests.

// Each test crate including this module uses some of its helpers, not all.
#![allow(dead_code)]

use headroom_mech::units::Time;
use headroom_sim::config::SimConfig;
use headroom_sim::net::Simulation;
use headroom_sim::results::RunResults;

/// Runs `cfg` to its end (its stop time or its last flow), checks the conservation
/// invariants and returns the results.
pub fn run(cfg: SimConfig) -> RunResults {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run_until(Time::MAX);
    sim.check_invariants().expect("invariants");
    sim.finish()
}

/// Runs `cfg` to its end checking the conservation invariants every `step` of simulated
/// time (a failure names the instant), and returns the ended simulation for the caller's
/// own end-of-run checks.
pub fn run_checking(cfg: SimConfig, step: Time) -> Simulation {
    let mut sim = Simulation::new(cfg).expect("valid config");
    let mut t = Time::ZERO;
    loop {
        t += step;
        let ended = sim.run_until(t);
        sim.check_invariants()
            .unwrap_or_else(|e| panic!("at {}: {e}", sim.now()));
        if ended {
            return sim;
        }
    }
}

/// Jain's fairness index of `x`: 1 when all are equal, `1/n` when one has everything.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}
