//! Helpers shared by the integration tests that measure fairness.

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

/// Jain's fairness index of `x`: 1 when all are equal, `1/n` when one has everything.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}
