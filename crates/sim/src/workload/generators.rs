//! Workload generators: Poisson arrivals with sizes from a CDF, synchronized incast
//! bursts, random permutations and all-to-all.
//!
//! Invariants:
//! - **Deterministic**: every generator is a pure function of its arguments and, for the
//!   random ones, of the state of the `rand_pcg::Pcg64` passed in (seed it with
//!   [`rng_from_seed`]). The sequence of random draws is documented per generator and is
//!   part of the contract: the same seed gives the identical `Vec` on every machine.
//! - **Ordering**: the output is sorted by start time; flows with equal start times keep
//!   the order in which the generator produced them (a stable sort).
//! - **Ports**: the `n`-th flow a call produces (in generation order, counting from 0) gets
//!   `dport = FIRST_DPORT + n % DPORT_COUNT`, so flows between the same pair of hosts
//!   usually hash to different ECMP paths, like the per-pair port counter of the ns-3 HPCC
//!   simulator. Ports do not depend on the random state.
//! - **Flows are valid**: `src != dst`, `size >= 1`, `prio < 8`. Host lists must not
//!   repeat a host. Bad parameters (fewer than two hosts, a zero size or rate, a load
//!   outside `(0, 1]`, a priority of 8 or more, ...) give [`WorkloadError::BadParameter`].
//! - Node ids are not checked against a topology here; the caller passes host ids.

use super::cdf::SizeCdf;
use super::leaves::Leaves;
use super::{FlowSpec, WorkloadError, MAX_FLOWS};
use crate::topology::NodeId;
use headroom_mech::units::{Rate, Time};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::HashSet;

/// The destination port of the first flow a generator call produces.
pub const FIRST_DPORT: u16 = 10_000;
/// Number of distinct destination ports generators cycle through
/// (`FIRST_DPORT..=u16::MAX`).
pub const DPORT_COUNT: u32 = u16::MAX as u32 - FIRST_DPORT as u32 + 1;

/// The RNG generators expect, seeded from a `u64` (`Pcg64::seed_from_u64`, whose seed
/// expansion is fixed by `rand_core`, so a seed means the same stream everywhere).
pub fn rng_from_seed(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// The destination port of the `n`-th flow of a call.
pub(crate) fn dport(n: usize) -> u16 {
    // The remainder is below DPORT_COUNT, so the sum is at most u16::MAX.
    (u32::from(FIRST_DPORT) + (n % DPORT_COUNT as usize) as u32) as u16
}

fn bad(msg: impl Into<String>) -> WorkloadError {
    WorkloadError::BadParameter(msg.into())
}

fn check_prio(prio: u8) -> Result<(), WorkloadError> {
    if prio >= 8 {
        return Err(bad(format!("priority must be 0..8, got {prio}")));
    }
    Ok(())
}

fn check_size(size: u64) -> Result<(), WorkloadError> {
    if size == 0 {
        return Err(bad("flow size must be at least 1 byte"));
    }
    Ok(())
}

/// At least two hosts, none repeated.
fn check_hosts(hosts: &[NodeId]) -> Result<(), WorkloadError> {
    if hosts.len() < 2 {
        return Err(bad(format!("need at least 2 hosts, got {}", hosts.len())));
    }
    let mut seen = HashSet::with_capacity(hosts.len());
    for h in hosts {
        if !seen.insert(*h) {
            return Err(bad(format!("host {} appears twice in the host list", h.0)));
        }
    }
    Ok(())
}

/// The checks every generator of flows of `size` and `prio` among `hosts` makes.
fn check_flows_among(hosts: &[NodeId], size: u64, prio: u8) -> Result<(), WorkloadError> {
    check_hosts(hosts)?;
    check_size(size)?;
    check_prio(prio)
}

pub(crate) fn sorted(mut flows: Vec<FlowSpec>) -> Vec<FlowSpec> {
    flows.sort_by_key(|f| f.start); // stable: ties keep generation order
    flows
}

/// The error of a workload that would hold more than [`MAX_FLOWS`] flows.
fn too_many(n: impl std::fmt::Display) -> WorkloadError {
    bad(format!(
        "{n} flows; at most {MAX_FLOWS} fit in one workload (shorten the duration, lower the \
         load or use fewer hosts)"
    ))
}

/// Refuses a workload expected to hold more than [`MAX_FLOWS`] flows.
pub(crate) fn check_flow_count(expected: f64) -> Result<(), WorkloadError> {
    if expected > MAX_FLOWS as f64 {
        return Err(too_many(format!("about {expected:.0}")));
    }
    Ok(())
}

/// The mean gap, in picoseconds, between arrivals of `mean_bytes` each that offer `load`
/// of `capacity_bps`. Errors: a zero capacity, `load` outside `(0, 1]`, or a gap under
/// 1 ps.
pub(crate) fn mean_gap_ps(
    mean_bytes: f64,
    load: f64,
    capacity_bps: f64,
) -> Result<f64, WorkloadError> {
    if capacity_bps <= 0.0 {
        return Err(bad("host rate must be greater than zero"));
    }
    if !(load > 0.0 && load <= 1.0) {
        return Err(bad(format!("load must be in (0, 1], got {load}")));
    }
    let gap = mean_bytes * 8.0 * 1e12 / (load * capacity_bps);
    if !(gap >= 1.0 && gap.is_finite()) {
        return Err(bad(format!(
            "mean inter-arrival time of {gap} ps is too short to represent"
        )));
    }
    Ok(gap)
}

/// An exponential gap of mean `mean_ps`, rounded to the picosecond (one `gen::<f64>()`).
pub(crate) fn exponential_gap(mean_ps: f64, rng: &mut Pcg64) -> u64 {
    let u: f64 = rng.gen();
    // 1 - u is in (0, 1], so the logarithm is finite and the gap non-negative.
    (-mean_ps * (1.0 - u).ln()).round() as u64
}

/// Poisson arrivals at a target per-host load (the convention of the HPCC simulator's
/// `traffic_gen.py`).
///
/// Every host in `hosts` is a sender. Its flows arrive as a Poisson process: inter-arrival
/// times are exponential with mean `cdf.mean() * 8 / (load * host_rate)` seconds, so each
/// host offers `load` times its link rate on average. Each flow goes to a host chosen
/// uniformly among the *other* hosts (with `cross_leaf`, among the hosts on other leaves
/// than the sender's), with a size drawn from `cdf` (at least 1 byte), on priority `prio`.
/// The first flow of a host starts one inter-arrival time after `start`; flows are
/// generated while their start is before `start + duration`. Times are integer picoseconds
/// (each gap rounded to the nearest picosecond).
///
/// Random draws, in order: for each host in `hosts` order, one gap; then, per flow, the
/// destination (`gen_range(0..n-1)`; with `cross_leaf`, [`Leaves::draw_elsewhere`]), the
/// size (`gen::<f64>()` into [`SizeCdf::sample`]) and the next gap
/// (`-mean * ln(1 - gen::<f64>())`).
///
/// Errors: fewer than two hosts or a repeated host, a zero `host_rate`, `load` not in
/// `(0, 1]`, `prio >= 8`, a mean inter-arrival time under 1 ps, or a `cross_leaf` whose
/// hosts are all on one leaf.
#[allow(clippy::too_many_arguments)] // The parameters are the documented generator inputs.
pub fn poisson(
    hosts: &[NodeId],
    host_rate: Rate,
    load: f64,
    cdf: &SizeCdf,
    start: Time,
    duration: Time,
    prio: u8,
    cross_leaf: Option<&Leaves>,
    rng: &mut Pcg64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_hosts(hosts)?;
    check_prio(prio)?;
    if let Some(l) = cross_leaf {
        if l.count() < 2 || l.len() != hosts.len() {
            return Err(bad("cross_leaf needs hosts on at least two leaves"));
        }
    }
    // Sizes are clamped to 1 byte, so the mean offered size is at least 1.
    let mean_gap_ps = mean_gap_ps(cdf.mean().max(1.0), load, host_rate.as_f64())?;
    check_flow_count(hosts.len() as f64 * duration.as_ps() as f64 / mean_gap_ps)?;
    let end = start + duration;
    let n = hosts.len();
    let mut flows = Vec::new();
    for (i, &src) in hosts.iter().enumerate() {
        let mut t = start + Time(exponential_gap(mean_gap_ps, rng));
        while t < end {
            let j = match cross_leaf {
                // Checked above: every host has hosts on other leaves.
                Some(l) => l.draw_elsewhere(i, rng).unwrap_or(i),
                None => {
                    let j = rng.gen_range(0..n - 1);
                    if j >= i {
                        j + 1
                    } else {
                        j
                    }
                }
            };
            let size = cdf.sample(rng.gen::<f64>()).max(1);
            if flows.len() == MAX_FLOWS {
                return Err(too_many(format!("more than {MAX_FLOWS}")));
            }
            flows.push(FlowSpec {
                src,
                dst: hosts[j],
                prio,
                size,
                start: t,
                dport: dport(flows.len()),
            });
            t += Time(exponential_gap(mean_gap_ps, rng));
        }
    }
    Ok(sorted(flows))
}

/// Gives each flow a class drawn uniformly from `prios` (one `gen_range(0..len)` per flow,
/// in list order), when there is more than one; with one class, sets it and draws nothing.
pub fn draw_prios(flows: &mut [FlowSpec], prios: &[u8], rng: &mut Pcg64) {
    match prios {
        [] => {}
        [p] => flows.iter_mut().for_each(|f| f.prio = *p),
        many => {
            for f in flows {
                f.prio = many[rng.gen_range(0..many.len())];
            }
        }
    }
}

/// Synchronized incast bursts: every sender sends `size` bytes to `receiver` at `start`,
/// and, with `repeat = Some((interval, count))`, `count` bursts in all, burst `k` at
/// `start + k * interval`. Within a burst flows follow the order of `senders`. No random
/// draws.
///
/// Errors: no senders, a repeated sender, the receiver among the senders, `size == 0`,
/// `prio >= 8`, a repeat count of 0, or a zero interval with more than one burst.
pub fn incast(
    senders: &[NodeId],
    receiver: NodeId,
    size: u64,
    start: Time,
    repeat: Option<(Time, u32)>,
    prio: u8,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    if senders.is_empty() {
        return Err(bad("incast needs at least one sender"));
    }
    let mut all = senders.to_vec();
    all.push(receiver);
    check_hosts(&all).map_err(|_| {
        bad(format!(
            "incast senders must be distinct and must not include the receiver {}",
            receiver.0
        ))
    })?;
    check_size(size)?;
    check_prio(prio)?;
    let (interval, count) = repeat.unwrap_or((Time::ZERO, 1));
    if count == 0 {
        return Err(bad("incast repeat count must be at least 1"));
    }
    if count > 1 && interval == Time::ZERO {
        return Err(bad("incast repeat interval must be greater than zero"));
    }
    let total = senders.len() as u64 * u64::from(count);
    if total > MAX_FLOWS as u64 {
        return Err(too_many(total));
    }
    let mut flows = Vec::with_capacity(total as usize);
    for k in 0..u64::from(count) {
        let t = start + Time(interval.as_ps().saturating_mul(k));
        for &src in senders {
            flows.push(FlowSpec {
                src,
                dst: receiver,
                prio,
                size,
                start: t,
                dport: dport(flows.len()),
            });
        }
    }
    Ok(sorted(flows))
}

/// A random permutation with no fixed point (a derangement): every host sends `size`
/// bytes to exactly one other host and receives from exactly one, all starting at
/// `start`. Flows are listed in `hosts` order of the sender.
///
/// The derangement is uniform over all derangements: shuffle (`SliceRandom::shuffle`) a
/// copy of the index list, retry until no index stays in place (on average e ≈ 2.72
/// shuffles).
///
/// Errors: fewer than two hosts or a repeated host, `size == 0`, `prio >= 8`.
pub fn permutation(
    hosts: &[NodeId],
    size: u64,
    start: Time,
    prio: u8,
    rng: &mut Pcg64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_flows_among(hosts, size, prio)?;
    let mut target: Vec<usize> = (0..hosts.len()).collect();
    loop {
        target.shuffle(rng);
        if target.iter().enumerate().all(|(i, &t)| i != t) {
            break;
        }
    }
    let flows = hosts
        .iter()
        .zip(&target)
        .enumerate()
        .map(|(n, (&src, &t))| FlowSpec {
            src,
            dst: hosts[t],
            prio,
            size,
            start,
            dport: dport(n),
        })
        .collect();
    Ok(flows)
}

/// A random ring (GPCNeT's victim pattern): the hosts in a uniformly random order (one
/// `SliceRandom::shuffle` of a copy of `hosts`), each sending `size` bytes to both of its
/// neighbours in that ring (to its one neighbour when there are two hosts), `rounds` times:
/// round `k` at `start + k * interval`. Within a round flows are listed in ring order, the
/// successor before the predecessor.
///
/// Errors: fewer than two hosts or a repeated host, `size == 0`, `prio >= 8`, zero rounds,
/// or a zero interval with more than one round.
pub fn ring(
    hosts: &[NodeId],
    size: u64,
    start: Time,
    (interval, rounds): (Time, u32),
    prio: u8,
    rng: &mut Pcg64,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_flows_among(hosts, size, prio)?;
    if rounds == 0 {
        return Err(bad("a ring needs at least one round"));
    }
    if rounds > 1 && interval == Time::ZERO {
        return Err(bad("a repeated ring needs an interval greater than zero"));
    }
    let n = hosts.len();
    let per_round: u64 = if n == 2 { 2 } else { 2 * n as u64 };
    let total = per_round.saturating_mul(u64::from(rounds));
    if total > MAX_FLOWS as u64 {
        return Err(too_many(total));
    }
    let mut order = hosts.to_vec();
    order.shuffle(rng);
    let mut flows = Vec::with_capacity(total as usize);
    for k in 0..u64::from(rounds) {
        let t = start + Time(interval.as_ps().saturating_mul(k));
        for i in 0..n {
            let next = order[(i + 1) % n];
            let prev = order[(i + n - 1) % n];
            let peers: &[NodeId] = if n == 2 { &[next] } else { &[next, prev] };
            for &dst in peers {
                flows.push(FlowSpec {
                    src: order[i],
                    dst,
                    prio,
                    size,
                    start: t,
                    dport: dport(flows.len()),
                });
            }
        }
    }
    Ok(flows)
}

/// All-to-all: every ordered pair of distinct hosts exchanges `size` bytes, all starting
/// at `start`; `n * (n - 1)` flows, ordered by sender then receiver in `hosts` order. No
/// random draws.
///
/// Errors: fewer than two hosts or a repeated host, `size == 0`, `prio >= 8`.
pub fn all_to_all(
    hosts: &[NodeId],
    size: u64,
    start: Time,
    prio: u8,
) -> Result<Vec<FlowSpec>, WorkloadError> {
    check_flows_among(hosts, size, prio)?;
    let total = hosts.len() as u64 * (hosts.len() as u64 - 1);
    if total > MAX_FLOWS as u64 {
        return Err(too_many(total));
    }
    let mut flows = Vec::with_capacity(total as usize);
    for &src in hosts {
        for &dst in hosts {
            if src != dst {
                flows.push(FlowSpec {
                    src,
                    dst,
                    prio,
                    size,
                    start,
                    dport: dport(flows.len()),
                });
            }
        }
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::cdf::builtin;

    fn hosts(n: u32) -> Vec<NodeId> {
        (0..n).map(NodeId).collect()
    }

    fn is_sorted(flows: &[FlowSpec]) -> bool {
        flows.windows(2).all(|w| w[0].start <= w[1].start)
    }

    #[test]
    fn poisson_offered_load() {
        let cdf = builtin("websearch").expect("builtin");
        let h = hosts(16);
        let rate = Rate::from_gbps(100);
        let start = Time::from_ms(1);
        let dur = Time::from_ms(1000);
        for (seed, load) in [(1, 0.3), (2, 0.5), (3, 0.8)] {
            let flows = poisson(
                &h,
                rate,
                load,
                &cdf,
                start,
                dur,
                3,
                None,
                &mut rng_from_seed(seed),
            )
            .expect("valid");
            let bytes: u64 = flows.iter().map(|f| f.size).sum();
            let offered = bytes as f64 * 8.0 / (dur.as_secs_f64() * 16.0 * rate.as_f64());
            assert!(
                (offered / load - 1.0).abs() < 0.05,
                "load {load}: offered {offered}"
            );
            assert!(is_sorted(&flows));
            assert!(flows
                .iter()
                .all(|f| f.start >= start && f.start < start + dur));
            assert!(flows
                .iter()
                .all(|f| f.src != f.dst && f.size >= 1 && f.prio == 3));
        }
    }

    #[test]
    fn poisson_arrival_rate_per_host() {
        // Small fixed sizes: the flow count per host follows the Poisson mean closely.
        let cdf = SizeCdf::parse("1000 0\n1000 100\n", "fixed").expect("valid");
        let h = hosts(4);
        let rate = Rate::from_gbps(10);
        let dur = Time::from_ms(100);
        let flows = poisson(
            &h,
            rate,
            0.5,
            &cdf,
            Time::ZERO,
            dur,
            0,
            None,
            &mut rng_from_seed(9),
        )
        .expect("valid");
        // Mean gap 1000*8/(0.5*1e10) s = 1.6 us, so 62500 flows per host.
        for src in &h {
            let n = flows.iter().filter(|f| f.src == *src).count() as f64;
            assert!((n / 62_500.0 - 1.0).abs() < 0.02, "host {src:?}: {n}");
        }
        // Destinations are uniform among the other hosts.
        let to0 = flows
            .iter()
            .filter(|f| f.src == NodeId(1) && f.dst == NodeId(0))
            .count();
        let from1 = flows.iter().filter(|f| f.src == NodeId(1)).count();
        assert!((to0 as f64 / from1 as f64 - 1.0 / 3.0).abs() < 0.02);
    }

    #[test]
    fn poisson_is_deterministic() {
        let cdf = builtin("fbhdp").expect("builtin");
        let h = hosts(8);
        let gen = |seed| {
            poisson(
                &h,
                Rate::from_gbps(100),
                0.6,
                &cdf,
                Time::ZERO,
                Time::from_ms(5),
                1,
                None,
                &mut rng_from_seed(seed),
            )
            .expect("valid")
        };
        let a = gen(42);
        assert!(a.len() > 100);
        assert_eq!(a, gen(42));
        assert_ne!(a, gen(43));
        // Ports follow generation order: all distinct here (fewer flows than ports).
        let ports: HashSet<u16> = a.iter().map(|f| f.dport).collect();
        assert_eq!(ports.len(), a.len());
        assert!(a.iter().all(|f| f.dport >= FIRST_DPORT));
    }

    #[test]
    fn poisson_bad_parameters() {
        let cdf = builtin("websearch").expect("builtin");
        let r = Rate::from_gbps(100);
        let d = Time::from_ms(1);
        let mut rng = rng_from_seed(0);
        let mut call = |h: &[NodeId], rate, load, prio| {
            poisson(h, rate, load, &cdf, Time::ZERO, d, prio, None, &mut rng)
        };
        for load in [0.0, -0.5, 1.01, f64::NAN] {
            assert!(matches!(
                call(&hosts(4), r, load, 0),
                Err(WorkloadError::BadParameter(_))
            ));
        }
        assert!(matches!(
            call(&hosts(1), r, 0.5, 0),
            Err(WorkloadError::BadParameter(_))
        ));
        assert!(matches!(
            call(&hosts(4), Rate(0), 0.5, 0),
            Err(WorkloadError::BadParameter(_))
        ));
        assert!(matches!(
            call(&hosts(4), r, 0.5, 8),
            Err(WorkloadError::BadParameter(_))
        ));
        let dup = [NodeId(1), NodeId(2), NodeId(1)];
        assert!(matches!(
            call(&dup, r, 0.5, 0),
            Err(WorkloadError::BadParameter(_))
        ));
        assert_eq!(call(&hosts(4), r, 1.0, 0).map(|f| f.is_empty()), Ok(false));
    }

    #[test]
    fn incast_bursts() {
        let s = [NodeId(1), NodeId(2), NodeId(3)];
        let one = incast(&s, NodeId(0), 64_000, Time::from_us(5), None, 3).expect("valid");
        assert_eq!(one.len(), 3);
        assert!(one
            .iter()
            .all(|f| f.dst == NodeId(0) && f.start == Time::from_us(5)));
        assert_eq!(one.iter().map(|f| f.src).collect::<Vec<_>>(), s.to_vec());
        let rep = incast(
            &s,
            NodeId(0),
            1000,
            Time::ZERO,
            Some((Time::from_us(100), 4)),
            0,
        )
        .expect("valid");
        assert_eq!(rep.len(), 12);
        assert!(is_sorted(&rep));
        assert_eq!(rep[11].start, Time::from_us(300));
        assert_eq!(rep[3].src, NodeId(1));
        let bp = |r: Result<Vec<FlowSpec>, WorkloadError>| {
            assert!(matches!(r, Err(WorkloadError::BadParameter(_))), "{r:?}");
        };
        bp(incast(&[], NodeId(0), 1, Time::ZERO, None, 0));
        bp(incast(&s, NodeId(2), 1, Time::ZERO, None, 0));
        bp(incast(
            &[NodeId(1), NodeId(1)],
            NodeId(0),
            1,
            Time::ZERO,
            None,
            0,
        ));
        bp(incast(&s, NodeId(0), 0, Time::ZERO, None, 0));
        bp(incast(
            &s,
            NodeId(0),
            1,
            Time::ZERO,
            Some((Time::from_us(1), 0)),
            0,
        ));
        bp(incast(
            &s,
            NodeId(0),
            1,
            Time::ZERO,
            Some((Time::ZERO, 2)),
            0,
        ));
        bp(incast(&s, NodeId(0), 1, Time::ZERO, None, 9));
    }

    #[test]
    fn permutation_is_derangement() {
        let h: Vec<NodeId> = (0..50).map(|i| NodeId(100 + 2 * i)).collect();
        for seed in 0..20 {
            let flows = permutation(&h, 4096, Time::from_us(1), 2, &mut rng_from_seed(seed))
                .expect("valid");
            assert_eq!(flows.len(), h.len());
            assert!(flows.iter().all(|f| f.src != f.dst));
            let srcs: HashSet<NodeId> = flows.iter().map(|f| f.src).collect();
            let dsts: HashSet<NodeId> = flows.iter().map(|f| f.dst).collect();
            let all: HashSet<NodeId> = h.iter().copied().collect();
            assert_eq!(srcs, all);
            assert_eq!(dsts, all);
        }
        let two = permutation(&hosts(2), 1, Time::ZERO, 0, &mut rng_from_seed(5)).expect("ok");
        assert_eq!((two[0].dst, two[1].dst), (NodeId(1), NodeId(0)));
        let a = permutation(&h, 1, Time::ZERO, 0, &mut rng_from_seed(7)).expect("ok");
        assert_eq!(
            a,
            permutation(&h, 1, Time::ZERO, 0, &mut rng_from_seed(7)).expect("ok")
        );
        let mut rng = rng_from_seed(0);
        assert!(permutation(&hosts(1), 1, Time::ZERO, 0, &mut rng).is_err());
        assert!(permutation(&hosts(3), 0, Time::ZERO, 0, &mut rng).is_err());
    }

    #[test]
    fn all_to_all_pairs() {
        let h = hosts(7);
        let flows = all_to_all(&h, 1000, Time::ZERO, 0).expect("valid");
        assert_eq!(flows.len(), 7 * 6);
        let pairs: HashSet<(NodeId, NodeId)> = flows.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(pairs.len(), 42);
        assert!(flows.iter().all(|f| f.src != f.dst));
        assert_eq!((flows[0].src, flows[0].dst), (NodeId(0), NodeId(1)));
        assert!(all_to_all(&hosts(1), 1, Time::ZERO, 0).is_err());
        assert!(all_to_all(&h, 0, Time::ZERO, 0).is_err());
    }

    #[test]
    fn ring_sends_to_both_neighbours_every_round() {
        let h = hosts(6);
        let us = Time::from_us(1);
        let flows =
            ring(&h, 8, us, (Time::from_us(10), 3), 2, &mut rng_from_seed(3)).expect("valid");
        assert_eq!(flows.len(), 3 * 12);
        for (k, round) in flows.chunks(12).enumerate() {
            assert!(round
                .iter()
                .all(|f| f.start == Time::from_us(1 + 10 * k as u64)));
            // Every host sends two and receives two, and the pairs form one cycle.
            for x in &h {
                assert_eq!(round.iter().filter(|f| f.src == *x).count(), 2);
                assert_eq!(round.iter().filter(|f| f.dst == *x).count(), 2);
            }
            let next: std::collections::HashMap<NodeId, NodeId> =
                round.iter().step_by(2).map(|f| (f.src, f.dst)).collect();
            let mut at = h[0];
            for _ in 0..h.len() {
                at = next[&at];
            }
            assert_eq!(at, h[0], "the successors close one ring of all hosts");
            let mut seen = HashSet::new();
            let mut at = h[0];
            while seen.insert(at) {
                at = next[&at];
            }
            assert_eq!(seen.len(), h.len());
            // The predecessor flow goes back along the ring.
            for pair in round.chunks(2) {
                assert_eq!(next[&pair[1].dst], pair[0].src);
            }
        }
        assert_eq!(
            flows,
            ring(&h, 8, us, (Time::from_us(10), 3), 2, &mut rng_from_seed(3)).expect("valid")
        );
        let two = ring(&hosts(2), 8, us, (us, 1), 0, &mut rng_from_seed(1)).expect("valid");
        assert_eq!(two.len(), 2);
        let mut r = rng_from_seed(0);
        assert!(ring(&h, 8, us, (us, 0), 0, &mut r).is_err());
        assert!(ring(&h, 8, us, (Time::ZERO, 2), 0, &mut r).is_err());
        assert!(ring(&h, 0, us, (us, 1), 0, &mut r).is_err());
        assert!(ring(&hosts(1), 8, us, (us, 1), 0, &mut r).is_err());
    }

    #[test]
    fn dports_cycle() {
        assert_eq!(dport(0), FIRST_DPORT);
        assert_eq!(dport(DPORT_COUNT as usize - 1), u16::MAX);
        assert_eq!(dport(DPORT_COUNT as usize), FIRST_DPORT);
    }
}
