//! Poisson fan-ins (`kind = "incast-poisson"`): many-to-one bursts at random receivers from
//! random senders, arriving as a Poisson process, as the DSH paper's large-scale
//! experiment injects them.
//!
//! A fan-in is `fan_in` flows of `size` bytes, all starting at the same instant, to one
//! receiver drawn uniformly from the hosts, from `fan_in` distinct senders drawn uniformly
//! from the hosts on other leaves than the receiver's (with every host on one leaf: from
//! the other hosts). Fan-ins arrive with exponential gaps whose mean makes the offered
//! bytes `load` times the hosts' total capacity: `fan_in × size × 8 / (load × n × rate)`.
//!
//! Invariants: deterministic in the RNG state (draws, in order: a gap; then per fan-in the
//! receiver `gen_range(0..n)`, the senders `rand::seq::index::sample` over that receiver's
//! eligible hosts, and the next gap); output sorted by start, ties in generation order
//! (receiver-major, senders in drawn order); ports as [`super::generators`] numbers them;
//! senders of a fan-in are distinct and never the receiver.

use super::generators::{check_flow_count, dport, exponential_gap, mean_gap_ps, sorted};
use super::leaves::Leaves;
use super::{FlowSpec, WorkloadError};
use crate::topology::NodeId;
use headroom_mech::units::{Rate, Time};
use rand::Rng;
use rand_pcg::Pcg64;

/// The parameters of a Poisson fan-in workload.
#[derive(Clone, Debug, PartialEq)]
pub struct FanIns {
    /// Offered load, of the hosts' total capacity, in `(0, 1]`.
    pub load: f64,
    /// Senders per fan-in (at least 1).
    pub fan_in: usize,
    /// Bytes each sender sends.
    pub size: u64,
    /// Arrivals begin after this time.
    pub start: Time,
    /// Arrivals stop at `start + duration`.
    pub duration: Time,
    /// Priority of every flow.
    pub prio: u8,
}

/// The flows of Poisson fan-ins over `hosts` (all with link rate `host_rate`, grouped by
/// `leaves`).
///
/// Errors: fewer than two hosts, `load` outside `(0, 1]`, a zero `fan_in`, `size` or
/// rate, `fan_in` above the hosts some receiver can draw senders from, more than
/// [`super::MAX_FLOWS`] flows expected, `prio >= 8`.
pub fn incast_poisson(
    hosts: &[NodeId],
    leaves: &Leaves,
    host_rate: Rate,
    p: &FanIns,
    rng: &mut Pcg64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    let bad = |m: String| WorkloadError::BadParameter(m);
    let n = hosts.len();
    if n < 2 || leaves.len() != n {
        return Err(bad(format!("need at least 2 hosts, got {n}")));
    }
    if p.prio >= 8 {
        return Err(bad(format!("priority must be 0..8, got {}", p.prio)));
    }
    if p.size == 0 || p.fan_in == 0 {
        return Err(bad("fan_in and size must be at least 1".into()));
    }
    let leaves = if leaves.count() == 1 {
        &Leaves::isolated(n)
    } else {
        leaves
    };
    let fewest = (0..n).map(|i| leaves.elsewhere(i)).min().unwrap_or(0);
    if p.fan_in > fewest {
        return Err(bad(format!(
            "fan_in of {} is more than the {fewest} hosts some receiver can draw senders from \
             (the hosts on other leaves)",
            p.fan_in
        )));
    }
    let burst_bytes = p.fan_in as f64 * p.size as f64;
    let gap_ps = mean_gap_ps(burst_bytes, p.load, n as f64 * host_rate.as_f64())?;
    check_flow_count(p.duration.as_ps() as f64 / gap_ps * p.fan_in as f64)?;
    let end = p.start + p.duration;
    let mut flows = Vec::new();
    let mut t = p.start + Time(exponential_gap(gap_ps, rng));
    while t < end {
        let r = rng.gen_range(0..n);
        let senders = rand::seq::index::sample(rng, leaves.elsewhere(r), p.fan_in);
        for k in senders.iter() {
            flows.push(FlowSpec {
                src: hosts[leaves.elsewhere_nth(r, k)],
                dst: hosts[r],
                prio: p.prio,
                size: p.size,
                start: t,
                dport: dport(flows.len()),
            });
        }
        check_flow_count(flows.len() as f64)?;
        t += Time(exponential_gap(gap_ps, rng));
    }
    Ok(sorted(flows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::generators::rng_from_seed;
    use std::collections::HashSet;

    fn hosts(n: u32) -> Vec<NodeId> {
        (0..n).map(NodeId).collect()
    }

    /// 16 leaves of 16 hosts (host `i` on leaf `i / 16`), as the DSH paper's leaf-spine.
    fn leaf_spine() -> (Vec<NodeId>, Leaves) {
        let groups: Vec<u64> = (0..256).map(|i| i / 16).collect();
        (hosts(256), Leaves::from_groups(&groups))
    }

    fn params(load: f64) -> FanIns {
        FanIns {
            load,
            fan_in: 16,
            size: 64_000,
            start: Time::ZERO,
            duration: Time::from_ms(20),
            prio: 3,
        }
    }

    #[test]
    fn arrival_rate_matches_the_load() {
        let (h, l) = leaf_spine();
        let rate = Rate::from_gbps(100);
        for (seed, load) in [(1, 0.1), (2, 0.5), (3, 0.8)] {
            let flows = incast_poisson(&h, &l, rate, &params(load), &mut rng_from_seed(seed))
                .expect("valid");
            // Expected fan-ins: load x 256 x 100 Gb/s x 20 ms / (16 x 64 KB x 8).
            let expected = load * 256.0 * 100e9 * 0.02 / (16.0 * 64_000.0 * 8.0);
            let events = flows.len() as f64 / 16.0;
            let sd = expected.sqrt();
            assert!(
                (events - expected).abs() < 4.0 * sd,
                "load {load}: {events} fan-ins, expected {expected:.0} ± {sd:.0}"
            );
            let bytes: u64 = flows.iter().map(|f| f.size).sum();
            let offered = bytes as f64 * 8.0 / 0.02 / (256.0 * 100e9);
            assert!((offered - load).abs() < 4.0 * sd / expected * load + 1e-9);
        }
    }

    #[test]
    fn senders_are_distinct_on_other_leaves_and_receivers_uniform() {
        let (h, l) = leaf_spine();
        let flows = incast_poisson(
            &h,
            &l,
            Rate::from_gbps(100),
            &params(0.8),
            &mut rng_from_seed(7),
        )
        .expect("valid");
        assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
        let mut per_receiver = vec![0u32; 256];
        let mut per_sender = vec![0u32; 256];
        for burst in flows.chunks(16) {
            let dst = burst[0].dst;
            assert!(burst
                .iter()
                .all(|f| f.dst == dst && f.start == burst[0].start));
            let srcs: HashSet<NodeId> = burst.iter().map(|f| f.src).collect();
            assert_eq!(srcs.len(), 16, "distinct senders");
            assert!(srcs.iter().all(|s| s.0 / 16 != dst.0 / 16), "other leaves");
            per_receiver[dst.index()] += 1;
            for s in srcs {
                per_sender[s.index()] += 1;
            }
        }
        // Chi-square against uniform, 255 degrees of freedom: the 99.9 % point is ~330.
        let chi2 = |counts: &[u32]| {
            let total: u32 = counts.iter().sum();
            let e = f64::from(total) / counts.len() as f64;
            counts
                .iter()
                .map(|&c| (f64::from(c) - e).powi(2) / e)
                .sum::<f64>()
        };
        assert!(chi2(&per_receiver) < 330.0, "{}", chi2(&per_receiver));
        assert!(chi2(&per_sender) < 330.0, "{}", chi2(&per_sender));
    }

    #[test]
    fn one_leaf_draws_from_every_other_host() {
        let h = hosts(8);
        let l = Leaves::from_groups(&[0; 8]);
        let p = FanIns {
            fan_in: 7,
            ..params(0.5)
        };
        let flows =
            incast_poisson(&h, &l, Rate::from_gbps(100), &p, &mut rng_from_seed(1)).expect("ok");
        assert!(!flows.is_empty());
        for burst in flows.chunks(7) {
            assert!(burst.iter().all(|f| f.src != f.dst));
        }
    }

    #[test]
    fn deterministic_for_a_seed() {
        let (h, l) = leaf_spine();
        let rate = Rate::from_gbps(100);
        let a = incast_poisson(&h, &l, rate, &params(0.3), &mut rng_from_seed(5));
        let b = incast_poisson(&h, &l, rate, &params(0.3), &mut rng_from_seed(5));
        assert_eq!(a, b);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let (h, l) = leaf_spine();
        let rate = Rate::from_gbps(100);
        let mut rng = rng_from_seed(1);
        for (p, needle) in [
            (
                FanIns {
                    fan_in: 241,
                    ..params(0.5)
                },
                "fan_in of 241 is more than the 240",
            ),
            (
                FanIns {
                    fan_in: 0,
                    ..params(0.5)
                },
                "at least 1",
            ),
            (params(0.0), "load"),
            (params(1.5), "load"),
        ] {
            let e = incast_poisson(&h, &l, rate, &p, &mut rng).expect_err("bad");
            assert!(e.to_string().contains(needle), "{e}");
        }
    }
}
