//! Scenario workloads that spread traffic over the fabric the DSH paper's way: Poisson
//! fan-ins (`incast-poisson`), background flows across leaves (`cross_leaf`) and
//! list-valued `prio`; GPCNeT's victim pattern (`ring`) on hosts picked by stride
//! (`hosts = { every, offset, invert }`); and the errors their bad values get.

use headroom_sim::scenario::{self, Scenario, ScenarioError};
use std::collections::HashSet;
use std::path::Path;

/// A 4 x 4 leaf-spine, 4 hosts per leaf (hosts 0..16, host `i` on leaf `i / 4`), with
/// classes 0..7 lossless; `workload` is appended.
fn leaf_spine(workload: &str) -> String {
    format!(
        r#"
seed = 3
[topology]
kind = "leaf-spine"
leaves = 4
spines = 4
hosts_per_leaf = 4
host_rate = "100Gbps"
uplink_rate = "100Gbps"

[switch]
lossless = [0, 1, 2, 3, 4, 5, 6]

{workload}
"#
    )
}

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    scenario::parse(text, Path::new("test.toml"))
}

fn err(text: &str, field: &str, reason: &str) {
    match parse(text) {
        Ok(s) => panic!("expected an error, got {} flows", s.config.flows.len()),
        Err(e) => {
            assert_eq!(e.field(), Some(field), "{e}");
            assert!(
                e.reason().contains(reason),
                "`{}` lacks `{reason}`",
                e.reason()
            );
        }
    }
}

/// Host ids of a leaf-spine are numbered leaf by leaf from 0.
fn leaf(host: u32) -> u32 {
    host / 4
}

#[test]
fn incast_poisson_fans_in_from_other_leaves() {
    let s = parse(&leaf_spine(
        r#"[[workload]]
kind = "incast-poisson"
load = 0.5
fan_in = 8
size = "64KB"
duration = "2ms"
"#,
    ))
    .expect("valid");
    let flows = &s.config.flows;
    // Expected fan-ins: 0.5 x 16 x 100 Gb/s x 2 ms / (8 x 64 KB x 8) = 390.6.
    let events = flows.len() / 8;
    assert!((330..450).contains(&events), "{events} fan-ins");
    assert_eq!(flows.len() % 8, 0);
    for burst in flows.chunks(8) {
        let dst = burst[0].dst;
        let srcs: HashSet<u32> = burst.iter().map(|f| f.src.0).collect();
        assert_eq!(srcs.len(), 8);
        assert!(burst.iter().all(|f| f.dst == dst
            && f.start == burst[0].start
            && f.size == 64_000
            && leaf(f.src.0) != leaf(dst.0)));
    }
    assert_eq!(s.workloads.kinds, ["incast-poisson"]);
}

#[test]
fn cross_leaf_background_never_stays_on_a_leaf() {
    let text = leaf_spine(
        r#"[[workload]]
kind = "poisson"
load = 0.5
cdf = "websearch"
duration = "5ms"
cross_leaf = true
"#,
    );
    let s = parse(&text).expect("valid");
    assert!(s.config.flows.len() > 100);
    assert!(s
        .config
        .flows
        .iter()
        .all(|f| leaf(f.src.0) != leaf(f.dst.0)));
    // Without the key, some flows stay on their leaf (3 of the 15 peers share it).
    let plain = parse(&text.replace("cross_leaf = true", "")).expect("valid");
    assert!(plain
        .config
        .flows
        .iter()
        .any(|f| leaf(f.src.0) == leaf(f.dst.0)));
}

#[test]
fn a_prio_list_spreads_flows_uniformly_over_its_classes() {
    let s = parse(&leaf_spine(
        r#"[[workload]]
kind = "poisson"
load = 0.8
cdf = "websearch"
duration = "20ms"
prio = [0, 2, 4, 6]
"#,
    ))
    .expect("valid");
    let mut per_class = [0u32; 8];
    for f in &s.config.flows {
        per_class[f.prio as usize] += 1;
    }
    let n = s.config.flows.len() as f64;
    assert!(n > 1000.0);
    for c in [0, 2, 4, 6] {
        let share = f64::from(per_class[c]) / n;
        assert!((share - 0.25).abs() < 0.04, "class {c}: {per_class:?}");
    }
    assert_eq!(per_class[1] + per_class[3] + per_class[5] + per_class[7], 0);
}

#[test]
fn a_one_class_list_is_the_same_as_the_class() {
    for kind in [
        "kind = \"poisson\"\nload = 0.3\ncdf = \"websearch\"\nduration = \"1ms\"",
        "kind = \"incast-poisson\"\nload = 0.3\nfan_in = 4\nsize = \"10KB\"\nduration = \"1ms\"",
        "kind = \"permutation\"\nsize = \"10KB\"",
        "kind = \"incast\"\nsender_count = 3\nreceiver = 0\nsize = \"10KB\"",
    ] {
        let one = parse(&leaf_spine(&format!("[[workload]]\n{kind}\nprio = 5"))).expect("valid");
        let list = parse(&leaf_spine(&format!("[[workload]]\n{kind}\nprio = [5]"))).expect("ok");
        assert_eq!(one.config.flows, list.config.flows, "{kind}");
        assert!(one.config.flows.iter().all(|f| f.prio == 5));
    }
}

#[test]
fn every_kind_takes_a_prio_list() {
    for kind in [
        "kind = \"incast\"\nsender_count = 12\nreceiver = 0\nsize = \"10KB\"\nrepeat = { interval = \"10us\", count = 20 }",
        "kind = \"all-to-all\"\nsize = \"10KB\"",
        "kind = \"flows\"\n[[workload.flow]]\nsrc = 1\ndst = 2\nsize = \"1KB\"\nprio = [1, 2]",
    ] {
        let prio = if kind.contains("workload.flow") {
            String::new()
        } else {
            "prio = [1, 2]\n".to_string()
        };
        let s = parse(&leaf_spine(&format!("[[workload]]\n{prio}{kind}"))).expect("valid");
        let classes: HashSet<u8> = s.config.flows.iter().map(|f| f.prio).collect();
        let expected: HashSet<u8> = if s.config.flows.len() > 1 {
            [1, 2].into()
        } else {
            classes.clone()
        };
        assert_eq!(classes, expected, "{kind}");
        assert!(classes.iter().all(|c| [1, 2].contains(c)));
    }
}

#[test]
fn a_ring_on_every_fourth_host_leaves_the_others_to_a_congestor() {
    let s = parse(&leaf_spine(
        r#"[[workload]]
kind = "ring"
size = "8B"
hosts = { every = 4, offset = 1 }
repeat = { interval = "5us", count = 10 }

[[workload]]
kind = "incast-poisson"
load = 0.5
fan_in = 3
size = "64KB"
duration = "100us"
hosts = { every = 4, offset = 1, invert = true }
"#,
    ))
    .expect("valid");
    let (ring, congestor): (Vec<_>, Vec<_>) = s.config.flows.iter().partition(|f| f.size == 8);
    // Hosts 1, 5, 9 and 13: one per leaf, each sending to both ring neighbours 10 times.
    assert_eq!(ring.len(), 4 * 2 * 10);
    let victims: HashSet<u32> = ring.iter().flat_map(|f| [f.src.0, f.dst.0]).collect();
    assert_eq!(victims, HashSet::from([1, 5, 9, 13]));
    assert!(!congestor.is_empty());
    assert!(congestor
        .iter()
        .all(|f| !victims.contains(&f.src.0) && !victims.contains(&f.dst.0)));
    assert_eq!(s.workloads.kinds, ["ring", "incast-poisson"]);
    let starts: HashSet<u64> = ring.iter().map(|f| f.start.as_ps()).collect();
    assert_eq!(starts.len(), 10);
}

#[test]
fn bad_host_selections_and_rings_name_their_field() {
    let ring = |extra: &str| {
        leaf_spine(&format!(
            "[[workload]]\nkind = \"ring\"\nsize = \"8B\"\n{extra}"
        ))
    };
    err(
        &ring("hosts = { every = 4, offset = 4 }"),
        "workload[0].hosts.offset",
        "between 0 and 3",
    );
    err(
        &ring("hosts = { every = 0 }"),
        "workload[0].hosts.every",
        "between 1",
    );
    err(
        &ring("hosts = { every = 16, offset = 3 }"),
        "workload[0].hosts",
        "at least 2 hosts, found 1",
    );
    err(
        &ring("hosts = { every = 2, odd = true }"),
        "workload[0].hosts.odd",
        "",
    );
    err(&ring("hosts = 3"), "workload[0].hosts", "every = N");
    err(
        &ring("repeat = { count = 3 }"),
        "workload[0].repeat.interval",
        "repeated ring",
    );
    err(
        &ring("repeat = { count = 0, interval = \"1us\" }"),
        "workload[0].repeat.count",
        "between 1",
    );
    err(
        &ring("repeat = { count = 100000000, interval = \"1us\" }"),
        "workload[0].repeat.count",
        "at most",
    );
}

#[test]
fn bad_values_name_their_field() {
    let fan_in = |extra: &str| {
        leaf_spine(&format!(
            "[[workload]]\nkind = \"incast-poisson\"\nload = 0.5\nsize = \"64KB\"\nduration = \"1ms\"\n{extra}"
        ))
    };
    err(&fan_in("fan_in = 0"), "workload[0].fan_in", "at least 1");
    // 12 hosts are on other leaves than any receiver's.
    err(
        &fan_in("fan_in = 13"),
        "workload[0].fan_in",
        "only 12 hosts on other leaves",
    );
    err(
        &fan_in("fan_in = 4\nload = 1.5").replace("load = 0.5\n", ""),
        "workload[0].load",
        "(0, 1]",
    );
    err(
        &fan_in("fan_in = 4\nload = 0").replace("load = 0.5\n", ""),
        "workload[0].load",
        "(0, 1]",
    );
    err(
        &fan_in("fan_in = 4\nprio = []"),
        "workload[0].prio",
        "empty list",
    );
    err(
        &fan_in("fan_in = 4\nprio = [3, 7]"),
        "workload[0].prio[1]",
        "class 7 is not lossless",
    );
    err(
        &fan_in("fan_in = 4\nprio = [3, 3]"),
        "workload[0].prio[1]",
        "listed twice",
    );
    err(&fan_in(""), "workload[0].fan_in", "");
    // All hosts on one switch: cross_leaf cannot cross anything; fan-ins draw any other host.
    let star = |w: &str| {
        format!("[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\n{w}")
    };
    err(
        &star("kind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\nduration = \"1ms\"\ncross_leaf = true"),
        "workload[0].cross_leaf",
        "one leaf",
    );
    err(
        &star(
            "kind = \"incast-poisson\"\nload = 0.5\nfan_in = 4\nsize = \"1KB\"\nduration = \"1ms\"",
        ),
        "workload[0].fan_in",
        "only 3 other hosts",
    );
    let s = parse(&star(
        "kind = \"incast-poisson\"\nload = 0.5\nfan_in = 3\nsize = \"1KB\"\nduration = \"100us\"",
    ))
    .expect("valid");
    assert!(s.config.flows.iter().all(|f| f.src != f.dst));
}
