//! Malformed inputs (issue 11 §5): every parser of the simulator's inputs either accepts a
//! file or says where it is wrong, and never panics or allocates by a count the file
//! merely announces.
//!
//! - Scenarios: the shipped examples (`examples/**/*.toml`) and every TOML example of
//!   `docs/scenario.md`, mutated: keys deleted, values replaced by hostile ones (zero,
//!   negative, extreme and non-finite numbers, empty and 10,000-character strings, wrong
//!   types, absurd sizes, times and rates), unknown keys injected, lines duplicated
//!   (duplicate keys and tables), text cut short, and the topology or workload replaced by
//!   one of hostile scale (two billion hosts, k = 1,000,000, all-to-all over thousands of
//!   hosts). Accepted scenarios whose estimated footprint is small are also built as two
//!   parts and run for a few simulated microseconds with the conservation invariants
//!   checked.
//! - HPCC `config.txt`: the shipped example's lines mutated (hostile values, lines dropped
//!   or duplicated, `CC_MODE` values, `*_MAP` with wrong counts, input files that are
//!   missing, empty or a directory).
//! - `/dev/zero` as each referenced file whose size bound is 64 MiB (once each: reading it
//!   takes a while).
//! - Topology, flow and CDF files: random headers (billions of nodes, links, flows) and
//!   bodies (truncated lines, non-numeric fields, negative or huge values), parsed
//!   directly and through a scenario that references them.
//!
//! The proptest seeds are fixed so a failure reproduces (no regression files are written);
//! the case counts and the run budgets keep the file near ten seconds in the test profile.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use headroom_mech::units::Time;
use headroom_sim::config::SimConfig;
use headroom_sim::hpcc_config;
use headroom_sim::net::parallel::Partitioned;
use headroom_sim::net::Footprint;
use headroom_sim::scenario::{self, ScenarioError};
use headroom_sim::topology;
use headroom_sim::workload::cdf::SizeCdf;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use toml::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fixed seeds: a failing case must reproduce on the next run and on CI.
fn config(cases: u32, seed: u64) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(seed),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------

/// A scenario to mutate: where it lives (relative file references resolve from there) and
/// its TOML tree.
struct Seed {
    path: PathBuf,
    doc: toml::Table,
}

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("examples directory")
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

/// The TOML blocks of `docs/scenario.md`, completed as its reference test completes them
/// (a star when there is no topology, a stop time when there is none), so each is a valid
/// scenario before it is mutated; those without traffic get a small incast, so that their
/// mutations reach the engine.
fn doc_examples() -> Vec<String> {
    let md = std::fs::read_to_string(repo().join("docs/scenario.md")).expect("docs/scenario.md");
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in md.lines() {
        match (&mut block, line.trim_end()) {
            (None, "```toml") => block = Some(String::new()),
            (Some(b), "```") => {
                let mut text = b.clone();
                if !text.contains("[topology]") {
                    text.push_str("\n[topology]\nkind = \"star\"\nhosts = 8\nrate = \"100Gbps\"\n");
                }
                if !text.contains("[[workload]]") {
                    text.push_str(
                        "\n[[workload]]\nkind = \"incast\"\nsenders = [1, 2]\nreceiver = 0\nsize = \"64KiB\"\n",
                    );
                }
                if !text.contains("stop_time") {
                    text = format!("stop_time = \"1ms\"\n{text}");
                }
                out.push(text);
                block = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    out
}

fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut files = Vec::new();
        toml_files(&repo().join("examples"), &mut files);
        let mut seeds: Vec<Seed> = files
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path).expect("example");
                let doc = text.parse().expect("examples are valid TOML");
                Seed { path, doc }
            })
            // Sweep files (a base `scenario` and axes) are not scenarios: the CLI's sweep
            // tests cover them.
            .filter(|s: &Seed| !s.doc.contains_key("scenario"))
            .collect();
        let docs = doc_examples();
        assert!(docs.len() > 20, "found only {} doc examples", docs.len());
        for (i, text) in docs.into_iter().enumerate() {
            seeds.push(Seed {
                // The doc's file paths are relative to the repository root.
                path: repo().join(format!("doc-example-{i}.toml")),
                doc: text.parse().expect("doc examples are valid TOML"),
            });
        }
        seeds
    })
}

/// Values a user (or a corrupted file) might put anywhere.
fn hostile_value(i: usize) -> Value {
    let s = |x: &str| Value::String(x.to_string());
    let all: [Value; 44] = [
        Value::Integer(0),
        Value::Integer(-1),
        Value::Integer(i64::MAX),
        Value::Integer(i64::MIN),
        Value::Integer(2_000_000_000),
        Value::Integer(1_000_000),
        Value::Integer(65_536),
        Value::Float(1e308),
        Value::Float(-1e308),
        Value::Float(f64::NAN),
        Value::Float(f64::INFINITY),
        Value::Float(f64::NEG_INFINITY),
        Value::Float(-0.0),
        Value::Float(5e-324),
        s(""),
        s(" "),
        s("nan"),
        s("inf"),
        s("-inf"),
        s("NaNs"),
        s("infGbps"),
        Value::String("x".repeat(10_000)),
        Value::String("9".repeat(400)),
        s("999999999TB"),
        s("18446744073709551616B"),
        s("-1B"),
        s("0B"),
        s("0s"),
        s("1e30s"),
        s("-1us"),
        s("1e-30s"),
        s("18446744073709551615ps"),
        s("0Gbps"),
        s("1e30Gbps"),
        s("-100Gbps"),
        s("1e-30bps"),
        s("µµµ\u{0}"),
        s("all"),
        Value::Boolean(true),
        Value::Array(Vec::new()),
        Value::Array(vec![Value::Integer(-1), Value::Integer(i64::MAX)]),
        Value::Array((0..2_000).map(Value::Integer).collect()),
        Value::Table(toml::Table::new()),
        Value::Datetime("1979-05-27T07:32:00Z".parse().expect("date-time")),
    ];
    all[i % all.len()].clone()
}

/// A value of the same kind as `old` at the edge of its range: a scenario it leaves
/// acceptable runs at the edges of the simulator (1 ps delays, 1 bit/s links, 1-byte MTUs
/// and cells, priorities 0 and 7).
fn edge_value(old: &Value, i: usize) -> Value {
    fn one_of(xs: &[&str], i: usize) -> Value {
        Value::String(xs[i % xs.len()].to_string())
    }
    match old {
        Value::String(s) if s.ends_with("bps") || s.ends_with("b/s") => {
            one_of(&["1bps", "1Mbps", "1Gbps", "400Gbps", "1.6Tbps"], i)
        }
        Value::String(s) if s.ends_with('s') => {
            one_of(&["0s", "1ps", "1ns", "999ns", "1ms", "500ms"], i)
        }
        Value::String(s) if s.ends_with('B') => {
            one_of(&["0B", "1B", "63B", "1500B", "9216B", "1MiB", "4095MiB"], i)
        }
        Value::Integer(n) => {
            let all = [
                0,
                1,
                2,
                7,
                8,
                n.saturating_add(1),
                n.saturating_sub(1),
                n.saturating_mul(4),
            ];
            Value::Integer(all[i % all.len()])
        }
        Value::Float(f) => {
            let all = [1e-9, 0.001, 0.999, 1.0, f * 2.0, f / 2.0];
            Value::Float(all[i % all.len()])
        }
        Value::Boolean(b) => Value::Boolean(!b),
        Value::Array(a) if a.len() > 1 && i.is_multiple_of(2) => Value::Array(a[..1].to_vec()),
        Value::Array(a) => Value::Array(a.iter().chain(a).cloned().collect()),
        other => other.clone(),
    }
}

/// Topologies and workloads of hostile scale, merged over a seed's top-level keys.
const SHAPES: &[&str] = &[
    "[topology]\nkind = \"star\"\nhosts = 2000000000\nrate = \"100Gbps\"",
    "[topology]\nkind = \"star\"\nhosts = 70000\nrate = \"100Gbps\"",
    "[topology]\nkind = \"fat-tree\"\nk = 1000000\nrate = \"100Gbps\"",
    "[topology]\nkind = \"fat-tree\"\nk = 514\nrate = \"100Gbps\"",
    "[topology]\nkind = \"fat-tree\"\nk = 3\nrate = \"100Gbps\"",
    "[topology]\nkind = \"chain\"\nswitches = 2000000000\nhosts_per_switch = 1\nrate = \"1Gbps\"",
    "[topology]\nkind = \"leaf-spine\"\nleaves = 100000\nspines = 100000\nhosts_per_leaf = 100000\nhost_rate = \"100Gbps\"",
    "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nhost_rate = \"100Gbps\"\noversubscription = 1e-300",
    "[topology]\nkind = \"dumbbell\"\nleft_hosts = 9223372036854775807\nright_hosts = 1\nhost_rate = \"100Gbps\"\nbottleneck_rate = \"100Gbps\"",
    "[topology]\nkind = \"links\"\nhosts = 2000000000\nswitches = 2000000000\nlink = []",
    "[topology]\nkind = \"hpcc-file\"\nfile = \"/\"",
    "[topology]\nkind = \"hpcc-file\"\nfile = \"no/such/file.txt\"",
    "[topology]\nkind = \"star\"\nhosts = 5000\nrate = \"100Gbps\"\n[[workload]]\nkind = \"all-to-all\"\nsize = \"1KB\"",
    "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\nkind = \"incast\"\nsender_count = 2000000000\nreceiver = 0\nsize = \"1KB\"",
    "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\nkind = \"incast\"\nsender_count = 3\nreceiver = 0\nsize = \"1KB\"\nrepeat = { count = 2000000000, interval = \"1ps\" }",
    "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\nkind = \"incast\"\nsenders = [1, 2]\nreceiver = 0\nsize = \"999999999TB\"",
    "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\nkind = \"poisson\"\nload = 1.0\ncdf = \"websearch\"\nduration = \"1e30s\"",
    "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"1e-30bps\"\n[[workload]]\nkind = \"poisson\"\nload = 1.0\ncdf = \"googlerpc\"\nduration = \"1ms\"",
    "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\nkind = \"permutation\"\nsize = \"1KB\"\nhosts = [0, 0, 4294967296]",
    "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\nkind = \"flow-file\"\nfile = \"/dev/null\"",
    "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf_file = \"/\"\nduration = \"1ms\"",
];

#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Every key and array element of `v`, as paths from the root.
fn paths(v: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Table(t) => {
            for (k, child) in t {
                prefix.push(Seg::Key(k.clone()));
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                prefix.push(Seg::Index(i));
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn get_mut<'a>(v: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(v);
    };
    let child = match (v, first) {
        (Value::Table(t), Seg::Key(k)) => t.get_mut(k)?,
        (Value::Array(a), Seg::Index(i)) => a.get_mut(*i)?,
        _ => return None,
    };
    get_mut(child, rest)
}

fn remove(root: &mut Value, path: &[Seg]) {
    let Some((last, parent)) = path.split_last() else {
        return;
    };
    match (get_mut(root, parent), last) {
        (Some(Value::Table(t)), Seg::Key(k)) => {
            t.remove(k);
        }
        (Some(Value::Array(a)), Seg::Index(i)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

/// One change to a scenario. Indices pick among the candidates modulo their number.
#[derive(Clone, Debug)]
enum Mutation {
    /// Delete a key or array element.
    Delete(usize),
    /// Replace a value by [`hostile_value`].
    Replace(usize, usize),
    /// Replace a value by an [`edge_value`] of it.
    Edge(usize, usize),
    /// Add a key no table accepts, to a table (or to the table holding a value).
    Unknown(usize),
    /// Merge one of [`SHAPES`] over the top level.
    Shape(usize),
    /// Write a line twice (a duplicate key, or a table defined twice).
    DuplicateLine(usize),
    /// Cut the text at a byte (rounded down to a character boundary).
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => any::<usize>().prop_map(Mutation::Delete),
        6 => (any::<usize>(), any::<usize>()).prop_map(|(p, v)| Mutation::Replace(p, v)),
        6 => (any::<usize>(), any::<usize>()).prop_map(|(p, v)| Mutation::Edge(p, v)),
        1 => any::<usize>().prop_map(Mutation::Unknown),
        2 => any::<usize>().prop_map(Mutation::Shape),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => any::<usize>().prop_map(Mutation::Truncate),
    ]
}

/// Applies the tree mutations to `doc`, serializes it, then applies the text mutations.
fn mutate(doc: &toml::Table, muts: &[Mutation]) -> String {
    let mut root = Value::Table(doc.clone());
    for m in muts {
        let mut all = Vec::new();
        paths(&root, &mut Vec::new(), &mut all);
        let pick = |i: usize| all.get(i % all.len().max(1)).cloned().unwrap_or_default();
        match m {
            Mutation::Delete(p) => remove(&mut root, &pick(*p)),
            Mutation::Replace(p, v) => {
                if let Some(slot) = get_mut(&mut root, &pick(*p)) {
                    *slot = hostile_value(*v);
                }
            }
            Mutation::Edge(p, v) => {
                if let Some(slot) = get_mut(&mut root, &pick(*p)) {
                    *slot = edge_value(slot, *v);
                }
            }
            Mutation::Unknown(p) => {
                let mut path = pick(*p);
                loop {
                    if let Some(Value::Table(t)) = get_mut(&mut root, &path) {
                        t.insert("no_such_key".to_string(), Value::Integer(1));
                        break;
                    }
                    if path.pop().is_none() {
                        break;
                    }
                }
            }
            Mutation::Shape(s) => {
                let shape: toml::Table = SHAPES[s % SHAPES.len()].parse().expect("shape");
                if let Value::Table(t) = &mut root {
                    t.extend(shape);
                }
            }
            Mutation::DuplicateLine(_) | Mutation::Truncate(_) => {}
        }
    }
    // A tree the serializer cannot write (it refuses a few mixed arrays) is fuzzed as the
    // unmutated text instead; the text mutations still apply.
    let mut text = toml::to_string(&root)
        .or_else(|_| toml::to_string(doc))
        .expect("a seed serializes");
    for m in muts {
        match m {
            Mutation::DuplicateLine(i) => {
                let mut lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let at = i % lines.len();
                    lines.insert(at, lines[at]);
                }
                text = lines.join("\n");
            }
            Mutation::Truncate(i) => {
                let mut at = i % (text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.truncate(at);
            }
            _ => {}
        }
    }
    text
}

/// How far an accepted scenario is run.
#[derive(Clone, Copy)]
struct Budget {
    /// Simulated time (or the scenario's stop time, if earlier).
    run_for: Time,
    /// Events after which the run is cut short (the invariants hold at any window
    /// boundary, so a cut run is still checked).
    max_events: u64,
}

/// For the random cases.
const FULL: Budget = Budget {
    run_for: Time::from_us(20),
    max_events: 300_000,
};

/// For the sweep, which runs hundreds of scenarios (some with 1 ps links, so two parts
/// synchronize every picosecond: the simulated time is what bounds those).
const QUICK: Budget = Budget {
    run_for: Time::from_us(1),
    max_events: 10_000,
};

/// Footprint above which an accepted scenario is only parsed, not built.
const MAX_FOOTPRINT: u64 = 200 << 20;

/// An error must say where the problem is: the scenario file, and a field, a position in
/// the text (TOML syntax) or a referenced file.
fn check_scenario_error(e: &ScenarioError, path: &Path, text: &str) {
    let msg = e.to_string();
    assert!(
        msg.starts_with(&path.display().to_string()),
        "error does not name the file: {msg}\n--- input ---\n{text}"
    );
    assert!(!e.reason().trim().is_empty(), "empty reason: {msg}");
    let located = e.field().is_some_and(|f| !f.is_empty())
        || e.span().is_some()
        || e.referenced_file().is_some();
    assert!(
        located,
        "error names no field, position or file: {msg}\n--- input ---\n{text}"
    );
}

/// Builds an accepted scenario as two parts and runs it briefly, checking the invariants
/// after every step. Large networks are left alone (their footprint is what `run` checks).
fn run_briefly(cfg: SimConfig, budget: Budget) {
    if Footprint::of(&cfg, 2).total() >= MAX_FOOTPRINT {
        return;
    }
    let stop = cfg
        .stop_time
        .map_or(budget.run_for, |s| s.min(budget.run_for));
    // A buffer that cannot hold the reservations is refused here, with a message; the
    // refusal is what this path must produce, not a panic.
    let Ok(mut sim) = Partitioned::new(cfg, 2) else {
        return;
    };
    // Steps that double from 10 ns: a scenario whose timers fire every picosecond (an
    // `rto` of "1ps" is valid) is cut after a few thousand events, not millions.
    let mut step = Time::from_ns(10);
    let mut t = Time::ZERO;
    while t < stop {
        t = (t + step).min(stop);
        step = step + step;
        let ended = sim.run_until(t);
        if let Err(e) = sim.check_invariants() {
            panic!("invariants broken at {t:?}: {e}");
        }
        if ended || sim.events() > budget.max_events {
            break;
        }
    }
    // Collecting the results walks every flow and port: part of what must not panic.
    let _results = sim.finish();
}

fn parse_and_run(text: &str, path: &Path, budget: Budget) {
    match scenario::parse(text, path) {
        Ok(s) => run_briefly(s.config, budget),
        Err(e) => check_scenario_error(&e, path, text),
    }
}

proptest! {
    #![proptest_config(config(128, 0x6d61_6c66_6f72_6d31))]

    #[test]
    fn mutated_scenarios_are_accepted_or_located(
        seed in any::<usize>(),
        muts in prop::collection::vec(mutation(), 1..4),
    ) {
        let seeds = seeds();
        let s = &seeds[seed % seeds.len()];
        let text = mutate(&s.doc, &muts);
        parse_and_run(&text, &s.path, FULL);
    }
}

proptest! {
    #![proptest_config(config(64, 0x6d61_6c66_6f72_6d34))]

    /// Only values at the edges of their ranges: most of these scenarios are accepted, so
    /// this is where the engine meets 1 ps links, 1-byte cells and 1 bit/s rates.
    #[test]
    fn edge_values_run_or_are_located(
        seed in any::<usize>(),
        edits in prop::collection::vec((any::<usize>(), any::<usize>()), 1..4),
    ) {
        let seeds = seeds();
        let s = &seeds[seed % seeds.len()];
        let muts: Vec<Mutation> = edits.into_iter().map(|(p, v)| Mutation::Edge(p, v)).collect();
        let text = mutate(&s.doc, &muts);
        parse_and_run(&text, &s.path, FULL);
    }
}

/// Found by `mutated_scenarios_are_accepted_or_located`: a 2^64-byte flow (the size
/// saturates to u64::MAX bytes) overflowed the ideal FCT's byte count when the run was built.
#[test]
fn regression_flow_of_two_to_the_64_bytes() {
    let text = "stop_time = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 8\nrate = \"100Gbps\"\n\
                [[workload]]\nkind = \"incast\"\nreceiver = 0\nsenders = [1, 2]\n\
                size = \"18446744073709551616B\"\n";
    let s = scenario::parse(text, Path::new("huge-flow.toml")).expect("accepted");
    assert_eq!(s.config.flows[0].size, u64::MAX);
    run_briefly(s.config, FULL);
}

/// Found by `mutated_scenarios_are_accepted_or_located`: NIC frame sizes of 2^64 bytes
/// were accepted and overflowed the frame arithmetic when the first packet was made (and
/// were silently cut to 32 bits in release builds). Now refused, naming the key.
#[test]
fn regression_frames_of_two_to_the_64_bytes() {
    let huge = "\"18446744073709551616B\"";
    for (key, field) in [
        ("header", "host.mtu"),
        ("mtu", "host.mtu"),
        ("ack", "host.ack"),
        ("cnp", "host.cnp"),
    ] {
        let text = format!(
            "stop_time = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 3\nrate = \"100Gbps\"\n\
             [host]\n{key} = {huge}\n\
             [[workload]]\nkind = \"incast\"\nreceiver = 0\nsenders = [1, 2]\nsize = \"64KiB\"\n"
        );
        let path = Path::new("huge-frame.toml");
        let e = scenario::parse(&text, path).expect_err(key);
        check_scenario_error(&e, path, &text);
        assert_eq!(e.field(), Some(field), "{key}: {e}");
        assert!(e.reason().contains("4 GiB"), "{key}: {e}");
    }
}

/// Found by `every_value_at_its_extremes` and `edge_values_run_or_are_located`: switch
/// settings whose byte counts overflowed while the headroom, the SHP pool, the alpha of a
/// fast port or the DWRR credit were computed. Each is now refused naming the key (an
/// over-committed buffer is reported on `switch.buffer`) or accepted and run.
#[test]
fn regression_switch_settings_at_the_extremes() {
    let huge = "\"18446744073709551616B\"";
    let cases = [
        // The SHP pool summed every PG's headroom (config.rs, SchemeConfig::resolve).
        (
            format!("[switch]\nheadroom = {huge}\nscheme = \"shp\"\n[switch.shp]\nover_subscribe_ratio = 2.0\n"),
            Some("switch.buffer"),
        ),
        // A pool of u64::MAX bytes (the ratio's quotient saturates) overflowed the MMU's
        // over-commitment report (mmu.rs).
        (
            "[switch]\nheadroom = \"sonic\"\nscheme = \"shp\"\n\
             [switch.shp]\nover_subscribe_ratio = 1e-300\n"
                .to_string(),
            Some("switch.buffer"),
        ),
        // The PFC guide's and DSH's formulas (formula.rs).
        (
            format!("[switch]\nheadroom = \"pfc-guide\"\n[switch.headroom_params]\nmtu_r = {huge}\n"),
            Some("switch.buffer"),
        ),
        (
            format!("[switch]\nheadroom = \"dsh\"\nscheme = \"dsh\"\n[switch.headroom_params]\nmtu = {huge}\n"),
            Some("switch.buffer"),
        ),
        // A DWRR quantum times a weight overflowed the deficit (port.rs); now refused.
        (
            format!("[switch.scheduler]\nquantum = {huge}\n"),
            Some("switch.scheduler.quantum"),
        ),
    ];
    let star = "stop_time = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 3\nrate = \"100Gbps\"\n";
    let traffic =
        "[[workload]]\nkind = \"incast\"\nreceiver = 0\nsenders = [1, 2]\nsize = \"64KiB\"\n";
    for (switch, field) in cases {
        let text = format!("{star}{switch}{traffic}");
        let path = Path::new("extreme-switch.toml");
        match scenario::parse(&text, path) {
            Ok(s) => panic!("accepted {switch}: {:?}", s.config.switch),
            Err(e) => {
                check_scenario_error(&e, path, &text);
                assert_eq!(e.field(), field, "{switch}: {e}");
            }
        }
    }
    // Alpha doubled per doubling of a port's rate above the NIC rate, up to a rate near
    // u64::MAX bit/s, overflowed (config.rs, AlphaPolicy::for_rate).
    let text = "stop_time = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 3\n\
                rate = \"18446744073709551615bps\"\n\
                [switch]\nalpha_scaling = { base = 0.125, nic_rate = \"100Gbps\" }\n";
    parse_and_run(text, Path::new("fast-ports.toml"), FULL);
}

/// Every seed parses unmutated: the fuzzer starts from valid scenarios, so what it finds is
/// caused by the mutation.
#[test]
fn seeds_are_valid_scenarios() {
    for s in seeds() {
        let text = toml::to_string(&s.doc).expect("serializes");
        if let Err(e) = scenario::parse(&text, &s.path) {
            panic!("{}: {e}", s.path.display());
        }
    }
}

/// The shapes of hostile scale, each over every shipped example: refused with a located
/// error, or accepted and (when small) run.
#[test]
fn hostile_shapes_over_every_example() {
    for s in seeds()
        .iter()
        .filter(|s| s.path.starts_with(repo().join("examples")))
    {
        for i in 0..SHAPES.len() {
            let text = mutate(&s.doc, &[Mutation::Shape(i)]);
            parse_and_run(&text, &s.path, FULL);
        }
    }
}

/// Values at the extremes of their kind, by the kind of the value they replace.
fn extremes(old: &Value) -> Vec<Value> {
    let strings = |xs: &[&str]| xs.iter().map(|x| Value::String(x.to_string())).collect();
    match old {
        Value::String(s) if s.ends_with("bps") || s.ends_with("b/s") => {
            strings(&["1bps", "18446744073709551615bps", "1e30Gbps"])
        }
        Value::String(s) if s.ends_with('s') => strings(&["18446744073709551615ps", "1ps", "0s"]),
        Value::String(s) if s.ends_with('B') => strings(&[
            "18446744073709551616B",
            "9223372036854775808B",
            "4GiB",
            "0B",
            "1B",
        ]),
        Value::Integer(_) => vec![
            Value::Integer(0),
            Value::Integer(-1),
            Value::Integer(i64::MAX),
        ],
        Value::Float(_) => vec![
            Value::Float(0.0),
            Value::Float(5e-324),
            Value::Float(1e308),
            Value::Float(f64::NAN),
        ],
        _ => Vec::new(),
    }
}

/// Every value of every seed, one at a time, at the extremes of its kind (the sweep the
/// random mutations sample; sizes of 2^64 bytes found three overflows).
#[test]
fn every_value_at_its_extremes() {
    let mut failures = Vec::new();
    for s in seeds() {
        let root = Value::Table(s.doc.clone());
        let mut all = Vec::new();
        paths(&root, &mut Vec::new(), &mut all);
        // The first key of each pattern (the path without array indices) stands for the
        // others: the examples' twenty incasts of sixteen senders each would otherwise make
        // most of the sweep.
        let mut patterns = std::collections::BTreeSet::new();
        let firsts = all.into_iter().filter(|p| {
            let pattern: Vec<&str> = p
                .iter()
                .map(|seg| match seg {
                    Seg::Key(k) => k.as_str(),
                    Seg::Index(_) => "[]",
                })
                .collect();
            patterns.insert(pattern.join("."))
        });
        for path in firsts {
            let Some(old) = get_mut(&mut root.clone(), &path).map(|v| v.clone()) else {
                continue;
            };
            for v in extremes(&old) {
                let mut doc = root.clone();
                if let Some(slot) = get_mut(&mut doc, &path) {
                    *slot = v.clone();
                }
                let text = toml::to_string(&doc).expect("serializes");
                let run = std::panic::catch_unwind(|| parse_and_run(&text, &s.path, QUICK));
                if let Err(p) = run {
                    let why = p
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    failures.push(format!("{} {path:?} = {v:?}: {why}", s.path.display()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} panics:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// All-to-all over thousands of hosts is within the flow limit: parsed (millions of flows)
/// but too large to build here.
#[test]
fn all_to_all_over_two_thousand_hosts() {
    let text = "[topology]\nkind = \"star\"\nhosts = 2000\nrate = \"100Gbps\"\n\
                [switch]\nbuffer = \"1GiB\"\n[[workload]]\nkind = \"all-to-all\"\nsize = \"1KB\"\n";
    let s = scenario::parse(text, Path::new("a2a.toml")).expect("within the limits");
    assert_eq!(s.config.flows.len(), 2000 * 1999);
    assert!(Footprint::of(&s.config, 2).total() >= MAX_FOOTPRINT);
}

// ---------------------------------------------------------------------------------------
// HPCC config.txt
// ---------------------------------------------------------------------------------------

/// Values for any key of the config.
const HPCC_VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "9223372036854775807",
    "18446744073709551616",
    "1e308",
    "-1e308",
    "NaN",
    "inf",
    "-inf",
    "1e-300",
    "0.5",
    "",
    "1 2 3",
    "100Gb/s",
    "0Mb/s",
    "99999999999999999999Tb/s",
    "-5Mb/s",
    "18446744073709551615",
    "/dev/null",
    "/",
    "no/such/file.txt",
];

/// Rate maps (`KMIN_MAP`, `KMAX_MAP`, `PMAX_MAP`) that are wrong for the example's
/// topology: counts that disagree with the values, missing or repeated rates, values out of
/// range.
const RATE_MAPS: &[&str] = &[
    "4294967296 0 1",
    "18446744073709551615 1 1",
    "1 4294967295 4294967295",
    "2 100000000000",
    "1 100000000000 1600",
    "3 100000000000 1600 400000000000 6400",
    "2 100000000000 0.2 400000000000 2",
    "2 100000000000 1600 100000000000 1600",
    "2 100000000000 18446744073709551615 400000000000 18446744073709551615",
];

/// The `i`-th of [`HPCC_VALUES`] and [`RATE_MAPS`] (cyclically).
fn hpcc_value(i: usize) -> &'static str {
    let n = HPCC_VALUES.len() + RATE_MAPS.len();
    let i = i % n;
    HPCC_VALUES
        .get(i)
        .copied()
        .unwrap_or_else(|| RATE_MAPS[i - HPCC_VALUES.len()])
}

/// `CC_MODE` values: the supported ones, HPCC-PINT and values that are no mode.
const CC_MODES: &[&str] = &["1", "0", "3", "7", "8", "10", "-1", "x", "1 1"];

#[derive(Clone, Debug)]
enum HpccMutation {
    /// Replace the values of a line.
    Value(usize, usize),
    /// Drop a line.
    Drop(usize),
    /// Write a line twice.
    Duplicate(usize),
    /// Set `CC_MODE`.
    CcMode(usize),
    /// Add a line with an unknown key, or a junk line.
    Junk(usize),
}

fn hpcc_mutation() -> impl Strategy<Value = HpccMutation> {
    prop_oneof![
        6 => (any::<usize>(), any::<usize>()).prop_map(|(l, v)| HpccMutation::Value(l, v)),
        2 => any::<usize>().prop_map(HpccMutation::Drop),
        1 => any::<usize>().prop_map(HpccMutation::Duplicate),
        1 => any::<usize>().prop_map(HpccMutation::CcMode),
        1 => any::<usize>().prop_map(HpccMutation::Junk),
    ]
}

/// The example config with absolute input paths (so it loads from a temporary directory).
fn hpcc_lines() -> Vec<String> {
    let dir = repo().join("examples/hpcc");
    let text = std::fs::read_to_string(dir.join("config.txt")).expect("config.txt");
    text.lines()
        .map(|l| match l.split_once(' ') {
            Some((k @ ("TOPOLOGY_FILE" | "FLOW_FILE"), f)) => {
                format!("{k} {}", dir.join(f).display())
            }
            _ => l.to_string(),
        })
        .collect()
}

fn mutate_hpcc(muts: &[HpccMutation]) -> String {
    let mut lines = hpcc_lines();
    for m in muts {
        let n = lines.len().max(1);
        match m {
            HpccMutation::Value(l, v) => {
                if let Some(line) = lines.get_mut(l % n) {
                    let key = line.split_whitespace().next().unwrap_or("").to_string();
                    *line = format!("{key} {}", hpcc_value(*v));
                }
            }
            HpccMutation::Drop(l) => {
                if !lines.is_empty() {
                    lines.remove(l % n);
                }
            }
            HpccMutation::Duplicate(l) => {
                if let Some(line) = lines.get(l % n).cloned() {
                    lines.insert(l % n, line);
                }
            }
            HpccMutation::CcMode(v) => {
                lines.retain(|l| !l.starts_with("CC_MODE"));
                lines.push(format!("CC_MODE {}", CC_MODES[v % CC_MODES.len()]));
            }
            HpccMutation::Junk(j) => {
                let junk = [
                    "NO_SUCH_KEY 1",
                    "\u{0}\u{1}\u{7f}",
                    "# only a comment",
                    "   ",
                    "KMAX_MAP",
                ];
                lines.insert(j % n, junk[j % junk.len()].to_string());
            }
        }
    }
    lines.join("\n")
}

fn load_hpcc(text: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.txt");
    std::fs::write(&path, text).expect("write config");
    if let Err(e) = hpcc_config::load(&path) {
        let msg = e.to_string();
        assert!(
            msg.starts_with(&path.display().to_string()),
            "error does not name the config: {msg}"
        );
        if let hpcc_config::HpccConfigError::Invalid { key, reason, .. } = &e {
            assert!(!key.is_empty() && !reason.is_empty(), "{msg}");
        }
    }
}

proptest! {
    #![proptest_config(config(96, 0x6d61_6c66_6f72_6d32))]

    #[test]
    fn mutated_hpcc_configs_are_accepted_or_located(
        muts in prop::collection::vec(hpcc_mutation(), 1..5),
    ) {
        load_hpcc(&mutate_hpcc(&muts));
    }
}

#[test]
fn the_unmutated_hpcc_config_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.txt");
    std::fs::write(&path, hpcc_lines().join("\n")).expect("write");
    hpcc_config::load(&path).expect("the example loads from anywhere");
}

/// Each `CC_MODE` and each malformed `KMAX_MAP` alone: refused naming the key (modes 1,
/// 3, 7 and 8 load).
#[test]
fn cc_modes_and_kmax_maps() {
    let load = |text: &str| {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.txt");
        std::fs::write(&path, text).expect("write");
        hpcc_config::load(&path)
    };
    for (i, mode) in CC_MODES.iter().enumerate() {
        match load(&mutate_hpcc(&[HpccMutation::CcMode(i)])) {
            Ok(_) => assert!(
                ["1", "3", "7", "8"].contains(mode),
                "CC_MODE {mode} accepted"
            ),
            Err(hpcc_config::HpccConfigError::Invalid { key, .. }) => {
                assert_eq!(key, "CC_MODE", "CC_MODE {mode}");
            }
            Err(e) => panic!("CC_MODE {mode}: {e}"),
        }
    }
    let kmax = hpcc_lines()
        .iter()
        .position(|l| l.starts_with("KMAX_MAP"))
        .expect("KMAX_MAP");
    for (i, map) in RATE_MAPS.iter().enumerate() {
        let v = HPCC_VALUES.len() + i;
        match load(&mutate_hpcc(&[HpccMutation::Value(kmax, v)])) {
            Err(hpcc_config::HpccConfigError::Invalid { key, .. }) => {
                assert_eq!(key, "KMAX_MAP", "KMAX_MAP {map}");
            }
            other => panic!("KMAX_MAP {map}: {other:?}"),
        }
    }
}

/// Found by `mutated_hpcc_configs_are_accepted_or_located`: a `LINK_DOWN` time of
/// u64::MAX microseconds overflowed its conversion to picoseconds.
#[test]
fn regression_link_down_time_out_of_range() {
    let mut lines = hpcc_lines();
    lines.retain(|l| !l.starts_with("LINK_DOWN"));
    lines.push("LINK_DOWN 18446744073709551615 0 320".to_string());
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.txt");
    std::fs::write(&path, lines.join("\n")).expect("write");
    match hpcc_config::load(&path) {
        Err(hpcc_config::HpccConfigError::Invalid {
            key, line, reason, ..
        }) => {
            assert_eq!((key.as_str(), line), ("LINK_DOWN", lines.len()), "{reason}");
            assert!(reason.contains("out of range"), "{reason}");
        }
        other => panic!("accepted: {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Topology, flow and CDF files
// ---------------------------------------------------------------------------------------

const TOPO_HEADERS: &[&str] = &[
    "4294967295 1 1",
    "4294967296 0 0",
    "2097151 0 1048575",
    "2097152 1 1",
    "3 1 4294967295",
    "3 1 1048576",
    "18446744073709551616 0 0",
    "-1 0 0",
    "3 5 2",
    "0 0 0",
    "3 1 2",
    "3 1",
    "3 1 2 4",
    "abc",
    "",
];

const TOPO_LINES: &[&str] = &[
    "2",
    "0 2 100Gbps 1us 0",
    "1 2 100Gbps 1000ns 0.000000",
    "0 2 100Gbps",
    "0 2 100Gbps 1us",
    "0 2 -100Gbps 1us 0",
    "0 2 0Gbps 1us 0",
    "0 2 1e400Gbps 1us 0",
    "0 2 100Gbps 1e30s 0",
    "0 2 100Gbps -1us 0",
    "0 2 100Gbps 1us NaN",
    "0 2 100Gbps 1us 2",
    "0 0 100Gbps 1us 0",
    "4294967295 2 100Gbps 1us 0",
    "4294967296 2 100Gbps 1us 0",
    "-1 2 100Gbps 1us 0",
    "x y z w v",
    "2 2 2",
    "4294967295",
];

const FLOW_HEADERS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "4000000000",
    "20000001",
    "-1",
    "1e9",
    "2",
    "0",
    "",
];

const FLOW_LINES: &[&str] = &[
    "0 1 3 100 1000 2.0",
    "1 0 3 100 1000 2.000000001",
    "0 1 3 100 1000",
    "0 1 3 100 -1000 2.0",
    "0 1 3 100 0 2.0",
    "0 1 3 100 18446744073709551616 2.0",
    "0 1 3 100 18446744073709551615 2.0",
    "0 1 8 100 1000 2.0",
    "0 1 3 65536 1000 2.0",
    "0 0 3 100 1000 2.0",
    "4294967295 1 3 100 1000 2.0",
    "0 1 3 100 1000 -2.0",
    "0 1 3 100 1000 NaN",
    "0 1 3 100 1000 inf",
    "0 1 3 100 1000 1e300",
    "0 1 3 100 1000 18446744073709551615.999999999999",
    "0 1 3 100 1000 .",
    "0 1 3 100 1000 2.9999999999995",
    "a b c d e f",
];

const CDF_LINES: &[&str] = &[
    "0 0",
    "1000 50",
    "100000 100",
    "1e308 100",
    "1e309 100",
    "-5 10",
    "100 -10",
    "100 NaN",
    "inf 100",
    "100 100.0000001",
    "100",
    "100 50 7",
    "5 20 # comment",
    "x y",
];

/// First lines of htsim connection matrices (the 4-host star of `referencing_scenario`).
const CM_HEADERS: &[&str] = &[
    "Nodes 4\nConnections 2",
    "Nodes 4\nConnections 1",
    "Nodes 9\nConnections 1",
    "# c\nNodes 4\nConnections 0",
    "Nodes 4\nConnections 2\nTriggers 0",
];

/// Connection-matrix lines, valid and not.
const CM_LINES: &[&str] = &[
    "0->1 id 1 start 0 size 2000",
    "2->3 id 2 start 1500000 size 100",
    "3->0 start 7.5 size 1",
    "1->2 size 10 start 0",
    "0->8 start 0 size 10",
    "0->0 start 0 size 10",
    "0->1 start 0 size 0",
    "0->1 id 0 start 0 size 10",
    "0->1 id 3 trigger 1",
    "0->1 start 0 size 10 prio 2",
    "0->1 start -1 size 10",
    "0->1 start 1e300 size 10",
    "0->1 start 0 size 99999999999999999999",
    "trigger id 1 oneshot",
    "failure switch_type TOR switch_id 0 link_id 0",
    "Connections 3",
    "->",
    "# comment",
    "",
];

/// A file: a header and lines drawn from `lines` or random text, optionally cut short.
fn file_text(
    headers: &'static [&'static str],
    lines: &'static [&'static str],
) -> impl Strategy<Value = String> {
    let header = prop_oneof![
        3 => prop::sample::select(headers).prop_map(str::to_string),
        1 => (any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(a, b, c)| format!("{a} {b} {c}")),
    ];
    let line = prop_oneof![
        4 => prop::sample::select(lines).prop_map(str::to_string),
        1 => "\\PC{0,24}",
    ];
    (
        header,
        prop::collection::vec(line, 0..8),
        any::<usize>(),
        any::<bool>(),
    )
        .prop_map(|(h, body, cut, truncate)| {
            let mut text = format!("{h}\n{}", body.join("\n"));
            if truncate {
                let mut at = cut % (text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.truncate(at);
            }
            text
        })
}

/// A small scenario that reads `file` as its topology, flow list or CDF.
fn referencing_scenario(kind: &str, file: &Path) -> String {
    let f = file.display();
    let star = "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n";
    match kind {
        "topology" => format!("stop_time = \"10us\"\n[topology]\nkind = \"hpcc-file\"\nfile = \"{f}\"\n"),
        "flows" => format!("stop_time = \"10us\"\n{star}[[workload]]\nkind = \"flow-file\"\nfile = \"{f}\"\n"),
        "htsim-cm" => format!("stop_time = \"10us\"\n{star}[[workload]]\nkind = \"htsim-cm\"\nfile = \"{f}\"\n"),
        _ => format!(
            "stop_time = \"10us\"\n{star}[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf_file = \"{f}\"\nduration = \"20us\"\n"
        ),
    }
}

/// Parses `text` with `parse` (errors must name `shown`), then as the file a scenario
/// references (errors must name the scenario and the referenced file).
fn check_file<T, E: std::fmt::Display>(
    kind: &str,
    text: &str,
    parse: impl Fn(&str, &str) -> Result<T, E>,
) {
    let shown = format!("fuzz-{kind}.txt");
    if let Err(e) = parse(text, &shown) {
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("{shown}:")),
            "{msg}\n--- input ---\n{text}"
        );
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(&shown);
    std::fs::write(&file, text).expect("write");
    let path = dir.path().join("s.toml");
    let scenario = referencing_scenario(kind, &file);
    match scenario::parse(&scenario, &path) {
        Ok(s) => run_briefly(s.config, FULL),
        Err(e) => check_scenario_error(&e, &path, &scenario),
    }
}

proptest! {
    #![proptest_config(config(128, 0x6d61_6c66_6f72_6d33))]

    #[test]
    fn topology_files_are_accepted_or_located(text in file_text(TOPO_HEADERS, TOPO_LINES)) {
        check_file("topology", &text, topology::hpcc::parse);
    }

    #[test]
    fn flow_files_are_accepted_or_located(text in file_text(FLOW_HEADERS, FLOW_LINES)) {
        check_file("flows", &text, headroom_sim::workload::hpcc::parse);
    }

    #[test]
    fn htsim_matrices_are_accepted_or_located(text in file_text(CM_HEADERS, CM_LINES)) {
        check_file("htsim-cm", &text, headroom_sim::workload::htsim_cm::parse);
    }

    #[test]
    fn cdf_files_are_accepted_or_located(text in file_text(&["0 0", "1 1"], CDF_LINES)) {
        check_file("cdf", &text, SizeCdf::parse);
    }
}

/// Found while timing `hostile_shapes_over_every_example`: a scenario's topology and CDF
/// files were read up to the 1 GiB bound of flow lists (a `/dev/zero` topology took 1 GiB
/// of memory before it was refused), not the 64 MiB the README gives for them. Each
/// endless file is now refused at 64 MiB, naming the field and the file.
#[test]
fn regression_endless_files_are_refused_at_their_bound() {
    let star = "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n";
    for (text, field) in [
        (
            "stop_time = \"1ms\"\n[topology]\nkind = \"hpcc-file\"\nfile = \"/dev/zero\"\n".to_string(),
            "topology.file",
        ),
        (
            format!("{star}[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf_file = \"/dev/zero\"\nduration = \"1ms\"\n"),
            "workload[0].cdf_file",
        ),
    ] {
        let path = Path::new("endless.toml");
        let e = scenario::parse(&text, path).expect_err(field);
        check_scenario_error(&e, path, &text);
        assert_eq!(e.field(), Some(field), "{e}");
        assert!(e.reason().contains("64.0 MiB"), "{e}");
        let file = e.referenced_file().map(|f| f.path.clone());
        assert_eq!(file, Some(PathBuf::from("/dev/zero")), "{e}");
    }
    let mut lines = hpcc_lines();
    for l in &mut lines {
        if l.starts_with("TOPOLOGY_FILE") {
            *l = "TOPOLOGY_FILE /dev/zero".to_string();
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.txt");
    std::fs::write(&path, lines.join("\n")).expect("write");
    match hpcc_config::load(&path) {
        Err(hpcc_config::HpccConfigError::Invalid { key, reason, .. }) => {
            assert_eq!(key, "TOPOLOGY_FILE", "{reason}");
            assert!(reason.contains("64.0 MiB"), "{reason}");
        }
        other => panic!("accepted: {other:?}"),
    }
}

/// Headers announcing more than the limits are refused at the header, with its line.
#[test]
fn announced_counts_beyond_the_limits() {
    for header in ["4294967295 1 1", "2097152 1 1", "3 1 1048576"] {
        let e = topology::hpcc::parse(&format!("{header}\n2\n0 2 100Gbps 1us 0\n"), "t.txt")
            .expect_err(header);
        assert!(e.to_string().starts_with("t.txt:1: "), "{header}: {e}");
    }
    let e =
        headroom_sim::workload::hpcc::parse("18446744073709551615\n0 1 3 100 1000 2.0\n", "f.txt")
            .expect_err("one line of many");
    assert!(e.to_string().starts_with("f.txt:3: "), "{e}");
}

/// Environment variable that makes [`parsers_stay_small_under_a_memory_limit`] the child.
const CHILD: &str = "HEADROOM_MALFORMED_CHILD";

/// Files that announce billions (or the largest counts allowed) are parsed in a child
/// process whose address space is limited to 1 GiB: a parser that sized anything by an
/// announced count beyond its limit would fail to allocate and abort the child.
#[test]
fn parsers_stay_small_under_a_memory_limit() {
    if std::env::var_os(CHILD).is_some() {
        announced_counts_beyond_the_limits();
        for header in TOPO_HEADERS {
            let _ = topology::hpcc::parse(&format!("{header}\n2\n0 2 100Gbps 1us 0\n"), "t.txt");
        }
        for header in FLOW_HEADERS {
            let _ = headroom_sim::workload::hpcc::parse(
                &format!("{header}\n0 1 3 100 1000 2.0\n"),
                "f.txt",
            );
        }
        for shape in SHAPES {
            let _ = scenario::parse(shape, Path::new("s.toml"));
        }
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(&exe)
        .args([
            "--exact",
            "parsers_stay_small_under_a_memory_limit",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .output()
        .expect("sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child under a 1 GiB limit: {:?}\n{stdout}\n{stderr}",
        out.status
    );
}
