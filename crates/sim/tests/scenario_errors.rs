//! Scenario files: each kind of invalid input gives a specific error naming the field, the
//! reason and the span of the offending text; valid inputs parse deterministically.

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{AlphaPolicy, CcConfig, FlowControlKind, HeadroomSizing};
use headroom_sim::scenario::{self, Scenario, ScenarioError};
use headroom_sim::topology::NodeId;
use std::path::Path;

const BASE: &str = r#"
[topology]
kind = "star"
hosts = 4
rate = "100Gbps"

[[workload]]
kind = "incast"
senders = [1, 2]
receiver = 0
size = "64KiB"
"#;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    scenario::parse(text, Path::new("test.toml"))
}

fn err(text: &str) -> ScenarioError {
    match parse(text) {
        Ok(s) => panic!(
            "expected an error, got a scenario with {} flows",
            s.config.flows.len()
        ),
        Err(e) => e,
    }
}

/// Asserts the field path, a substring of the reason, and the exact text under the span.
fn check(text: &str, field: &str, reason: &str, spanned: &str) -> ScenarioError {
    let e = err(text);
    assert_eq!(e.field(), Some(field), "{e}");
    assert!(
        e.reason().contains(reason),
        "reason `{}` lacks `{reason}`",
        e.reason()
    );
    let span = e.span().unwrap_or_else(|| panic!("no span: {e}"));
    assert_eq!(&text[span], spanned, "{e}");
    assert_eq!(e.source_text(), Some(text));
    assert_eq!(e.path(), Path::new("test.toml"));
    e
}

#[test]
fn base_is_valid() {
    let s = parse(BASE).expect("valid");
    assert_eq!(s.name, "test");
    assert_eq!(s.config.topology.len(), 5);
    assert_eq!(s.config.flows.len(), 2);
    assert!(s.output.plots);
    assert!(!s.output.compat_hpcc);
}

#[test]
fn unknown_key_top_level() {
    let text = format!("colour = \"red\"\n{BASE}");
    check(&text, "colour", "unknown key `colour`", "colour");
}

#[test]
fn unknown_key_nested() {
    let text = format!("{BASE}\n[switch.pfc]\nquanta = 100\nquantaa = 5\n");
    check(
        &text,
        "switch.pfc.quantaa",
        "unknown key `quantaa`",
        "quantaa",
    );
    let text = BASE.replace("size = \"64KiB\"", "size = \"64KiB\"\nsise = \"1B\"");
    check(&text, "workload[0].sise", "unknown key `sise`", "sise");
    // A key that exists for another topology kind is unknown for this one.
    let text = BASE.replace("hosts = 4", "hosts = 4\nleaves = 2");
    let e = check(&text, "topology.leaves", "unknown key `leaves`", "leaves");
    assert!(e.reason().contains("kind = \"star\""), "{e}");
}

#[test]
fn negative_size() {
    let text = BASE.replace("\"64KiB\"", "\"-5B\"");
    check(&text, "workload[0].size", "negative", "\"-5B\"");
}

#[test]
fn zero_size() {
    let text = BASE.replace("\"64KiB\"", "\"0B\"");
    check(&text, "workload[0].size", "greater than zero", "\"0B\"");
}

#[test]
fn incast_receiver_unknown_node() {
    let text = BASE.replace("receiver = 0", "receiver = 99");
    check(&text, "workload[0].receiver", "unknown node 99", "99");
    // A switch is not a host either (node 4 is the star's switch).
    let text = BASE.replace("receiver = 0", "receiver = 4");
    check(&text, "workload[0].receiver", "is a switch", "4");
    // Unknown senders point at the list element.
    let text = BASE.replace("senders = [1, 2]", "senders = [1, 12]");
    check(&text, "workload[0].senders[1]", "unknown node 12", "12");
}

#[test]
fn rate_without_unit() {
    let text = BASE.replace("\"100Gbps\"", "\"100\"");
    check(&text, "topology.rate", "write \"100Gbps\"", "\"100\"");
    let text = BASE.replace("\"100Gbps\"", "100");
    check(&text, "topology.rate", "write \"100Gbps\"", "100");
    let text = BASE.replace("\"100Gbps\"", "\"100Gbpx\"");
    check(&text, "topology.rate", "unknown unit", "\"100Gbpx\"");
}

#[test]
fn time_without_unit() {
    let text = format!("stop_time = 5\n{BASE}");
    check(&text, "stop_time", "write \"5us\"", "5");
}

#[test]
fn wrong_types() {
    let text = BASE.replace("hosts = 4", "hosts = \"four\"");
    check(
        &text,
        "topology.hosts",
        "expected an integer, found a string",
        "\"four\"",
    );
    let text = BASE.replace("hosts = 4", "hosts = -4");
    check(&text, "topology.hosts", "must not be negative", "-4");
    let text = BASE.replace("hosts = 4", "hosts = 1");
    check(&text, "topology.hosts", "between 2 and", "1");
}

#[test]
fn hpcc_file_dangling_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    let topo = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 5 100Gbps 1000ns 0\n";
    std::fs::write(dir.path().join("topo.txt"), topo).expect("write");
    let text = "[topology]\nkind = \"hpcc-file\"\nfile = \"topo.txt\"\n";
    let e = scenario::parse(text, &dir.path().join("s.toml")).expect_err("dangling");
    assert_eq!(e.field(), Some("topology.file"), "{e}");
    assert!(e.reason().contains("node 5 does not exist"), "{e}");
    assert_eq!(e.span().map(|s| &text[s]), Some("\"topo.txt\""));
    let loc = e.referenced_file().expect("names the topology file");
    assert_eq!(loc.path, dir.path().join("topo.txt"));
    assert_eq!(loc.line, 4);
    assert!(e.to_string().contains("topo.txt:4: "), "{e}");
}

#[test]
fn hpcc_file_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = "[topology]\nkind = \"hpcc-file\"\nfile = \"nope.txt\"\n";
    let e = scenario::parse(text, &dir.path().join("s.toml")).expect_err("missing");
    assert_eq!(e.field(), Some("topology.file"));
    assert!(e.reason().contains("cannot read"), "{e}");
    assert_eq!(e.referenced_file().map(|l| l.line), Some(0));
}

#[test]
fn hpcc_file_with_flow_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("topo.txt"),
        "3 1 3\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n3 2 100Gbps 1000ns 0\n",
    )
    .expect("write");
    // The header says 3 nodes but node 3 is used: the topology file is wrong.
    let text = "[topology]\nkind = \"hpcc-file\"\nfile = \"topo.txt\"\n";
    let e = scenario::parse(text, &dir.path().join("s.toml")).expect_err("dangling");
    assert_eq!(e.referenced_file().map(|l| l.line), Some(5));

    std::fs::write(
        dir.path().join("topo.txt"),
        "4 1 3\n3\n0 3 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n2 3 100Gbps 1000ns 0\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("flows.txt"),
        "2\n0 2 3 100 5000 0.000001\n1 7 3 100 5000 0.000002\n",
    )
    .expect("write");
    let text = "[topology]\nkind = \"hpcc-file\"\nfile = \"topo.txt\"\n\
                [[workload]]\nkind = \"flow-file\"\nfile = \"flows.txt\"\n";
    let e = scenario::parse(text, &dir.path().join("s.toml")).expect_err("unknown node");
    assert_eq!(e.field(), Some("workload[0].file"), "{e}");
    assert!(e.reason().contains("unknown node 7"), "{e}");
    assert_eq!(e.referenced_file().map(|l| l.line), Some(3));

    std::fs::write(
        dir.path().join("flows.txt"),
        "2\n0 2 3 100 5000 0.000002\n1 2 3 101 6000 0.000001\n",
    )
    .expect("write");
    let s = scenario::parse(text, &dir.path().join("s.toml")).expect("valid");
    assert_eq!(s.config.flows.len(), 2);
    assert_eq!(s.config.flows[0].size, 6000, "sorted by start");
    assert_eq!(s.config.flows[0].dport, 101);
}

#[test]
fn cdf_file_not_monotone() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("sizes.txt"), "0 0\n100 50\n50 100\n").expect("write");
    let text = format!(
        "{BASE}\n[[workload]]\nkind = \"poisson\"\nload = 0.3\ncdf_file = \"sizes.txt\"\nduration = \"100us\"\n"
    );
    let e = scenario::parse(&text, &dir.path().join("s.toml")).expect_err("not monotone");
    assert_eq!(e.field(), Some("workload[1].cdf_file"), "{e}");
    assert!(e.reason().contains("must not decrease"), "{e}");
    assert_eq!(e.span().map(|s| &text[s]), Some("\"sizes.txt\""));
    assert_eq!(e.referenced_file().map(|l| l.line), Some(3));

    // A valid file parses, relative to the scenario's directory.
    std::fs::write(dir.path().join("sizes.txt"), "1000 0\n5000 100\n").expect("write");
    let s = scenario::parse(&text, &dir.path().join("s.toml")).expect("valid");
    assert!(s.config.flows.len() > 2);
    let poisson = s.config.flows.iter().filter(|f| f.size != 64 * 1024);
    assert!(poisson.clone().count() > 0);
    assert!(poisson.into_iter().all(|f| (1000..=5000).contains(&f.size)));
}

#[test]
fn syntax_error_has_span() {
    let text = "[topology\nkind = \"star\"\n";
    let e = err(text);
    assert_eq!(e.field(), Some(""));
    assert!(e.reason().contains("invalid TOML"), "{e}");
    assert!(e.span().is_some());
}

#[test]
fn duplicate_key_is_an_error() {
    let text = format!("seed = 1\nseed = 2\n{BASE}");
    let e = err(&text);
    assert!(e.reason().contains("invalid TOML"), "{e}");
}

#[test]
fn missing_sections_and_keys() {
    let e = err("seed = 3\n");
    assert_eq!(e.field(), Some("topology"));
    assert!(e.reason().contains("missing key `topology`"), "{e}");
    let text = BASE.replace("rate = \"100Gbps\"\n", "");
    let e = err(&text);
    assert_eq!(e.field(), Some("topology.rate"));
    assert!(e.reason().contains("missing key `rate`"), "{e}");
    assert_eq!(e.span().map(|s| &text[s]), Some("[topology]"));
}

#[test]
fn unknown_kinds() {
    let text = BASE.replace("kind = \"star\"", "kind = \"torus\"");
    check(
        &text,
        "topology.kind",
        "unknown topology kind `torus`",
        "\"torus\"",
    );
    let text = BASE.replace("kind = \"incast\"", "kind = \"burst\"");
    check(
        &text,
        "workload[0].kind",
        "unknown workload kind `burst`",
        "\"burst\"",
    );
}

#[test]
fn workload_must_be_array_of_tables() {
    let text = "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[workload]\nkind = \"incast\"\n";
    let e = err(text);
    assert_eq!(e.field(), Some("workload"));
    assert!(e.reason().contains("[[workload]]"), "{e}");
}

#[test]
fn flows_workload_errors() {
    let head = "[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n[[workload]]\nkind = \"flows\"\n";
    let ok = format!("{head}[[workload.flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n[[workload.flow]]\nsrc = 2\ndst = 3\nsize = \"2KB\"\nstart = \"1us\"\nprio = 5\ndport = 42\n");
    let s = parse(&ok).expect("valid");
    assert_eq!(s.config.flows.len(), 2);
    assert_eq!(s.config.flows[0].prio, 3);
    assert_eq!(s.config.flows[1].prio, 5);
    assert_eq!(s.config.flows[1].dport, 42);
    assert_eq!(s.config.flows[1].start, Time::from_us(1));
    let bad = format!("{head}[[workload.flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\n[[workload.flow]]\nsrc = 2\ndst = 2\nsize = \"2KB\"\n");
    check(&bad, "workload[0].flow[1].dst", "same host 2", "2");
    let bad = format!("{head}[[workload.flow]]\nsrc = 0\ndst = 1\nsize = \"1KB\"\nprio = 8\n");
    check(&bad, "workload[0].flow[0].prio", "between 0 and 7", "8");
}

#[test]
fn buffer_of_4gib_or_more() {
    let text = format!("{BASE}\n[switch]\nbuffer = \"4GiB\"\n");
    check(&text, "switch.buffer", "below 4 GiB", "\"4GiB\"");
    let text = format!("{BASE}\n[switch]\nbuffer = \"4095MiB\"\n");
    assert!(parse(&text).is_ok());
}

#[test]
fn switch_section() {
    let text = format!(
        "{BASE}\n[switch]\nbuffer = \"12MB\"\ncell = \"256B\"\nheadroom = \"dsh\"\nreservation = \"per-port\"\n\
         alpha_scaling = {{ base = 0.125, nic_rate = \"25Gbps\" }}\nlossless = [3, 4]\n\
         [switch.headroom_params]\nmtu = \"9000B\"\n[switch.pfc]\nmode = \"refresh\"\nquanta = 1000\n\
         [switch.scheduler]\nstrict = [6, 7]\nweights = [1, 2, 3, 4, 5, 6, 7, 8]\n\
         [switch.ecn]\npoint = \"enqueue\"\nkmin = \"100KB\"\nkmax = \"400KB\"\npmax = 0.1\n"
    );
    let s = parse(&text).expect("valid");
    let sw = &s.config.switch;
    assert_eq!(sw.buffer_bytes, 12_000_000);
    assert_eq!(sw.cell_bytes, 256);
    assert_eq!(sw.headroom, HeadroomSizing::Dsh { mtu: 9000 });
    assert_eq!(sw.lossless, (1 << 3) | (1 << 4));
    assert_eq!(sw.pfc.quanta, 1000);
    assert!(sw.pfc.refresh && !sw.pfc.send_resume);
    assert_eq!(sw.scheduler.strict, 0xC0);
    assert_eq!(sw.scheduler.weights[7], 8);
    assert!(
        matches!(sw.alpha, AlphaPolicy::ScaledByRate { nic_rate, .. } if nic_rate == Rate::from_gbps(25))
    );
    let red = sw.ecn.red.expect("thresholds");
    assert_eq!((red.kmin, red.kmax), (100_000, 400_000));

    let two = format!("{BASE}\n[switch]\nalpha = 0.5\ndynamic_th = -2\n");
    check(&two, "switch.dynamic_th", "at most one", "-2");
    let bad_param =
        format!("{BASE}\n[switch]\nheadroom = \"dsh\"\n[switch.headroom_params]\nmtu_r = \"1B\"\n");
    let e = check(
        &bad_param,
        "switch.headroom_params.mtu_r",
        "unknown key `mtu_r`",
        "mtu_r",
    );
    assert!(e.reason().contains("headroom = \"dsh\""), "{e}");
    let partial = format!("{BASE}\n[switch.ecn]\nkmin = \"1KB\"\n");
    let e = err(&partial);
    assert_eq!(e.field(), Some("switch.ecn.kmax"), "{e}");
    let fixed = format!("{BASE}\n[switch]\nheadroom = \"50KB\"\n");
    assert_eq!(
        parse(&fixed).expect("valid").config.switch.headroom,
        HeadroomSizing::Fixed(50_000)
    );
    let nonsense = format!("{BASE}\n[switch]\nheadroom = \"lots\"\n");
    check(
        &nonsense,
        "switch.headroom",
        "neither a formula",
        "\"lots\"",
    );
    let dup = format!("{BASE}\n[switch]\nlossless = [3, 3]\n");
    check(&dup, "switch.lossless[1]", "listed twice", "3");
}

#[test]
fn host_and_cc_sections() {
    let text = format!(
        "{BASE}\n[host]\nmtu = \"4KiB\"\nack_prio = 6\npacing = false\n\
         [host.cc]\npreset = \"paper\"\nrate_ai = \"5Mbps\"\nalpha_resume_interval = \"10us\"\n"
    );
    let s = parse(&text).expect("valid");
    assert_eq!(s.config.host.mtu_payload, 4096);
    assert_eq!(s.config.host.ack_prio, 6);
    assert!(!s.config.host.pacing);
    let CcConfig::Dcqcn(d) = &s.config.host.cc else {
        panic!("dcqcn")
    };
    assert_eq!(d.rate_ai, Rate::from_mbps(5));
    assert_eq!(d.alpha_resume_interval, Time::from_us(10));
    assert_eq!(d.byte_counter, 10_000_000, "from the paper preset");

    let none = format!("{BASE}\n[host.cc]\nalgorithm = \"none\"\n");
    assert_eq!(parse(&none).expect("valid").config.host.cc, CcConfig::None);
    let none_g = format!("{BASE}\n[host.cc]\nalgorithm = \"none\"\ng = 0.5\n");
    check(
        &none_g,
        "host.cc.g",
        "unknown key `g` for algorithm = \"none\"",
        "g",
    );
    let mtu0 = format!("{BASE}\n[host]\nmtu = \"0B\"\n");
    check(&mtu0, "host.mtu", "greater than zero", "\"0B\"");
}

#[test]
fn output_section() {
    let text = format!(
        "{BASE}\n[output]\nsample_interval = \"5us\"\nfail_on_lossless_drop = true\nplots = false\ncompat = \"hpcc\"\n"
    );
    let s = parse(&text).expect("valid");
    assert_eq!(s.config.record.sample_interval, Some(Time::from_us(5)));
    assert!(s.config.record.fail_on_lossless_drop);
    assert!(!s.output.plots);
    assert!(s.output.compat_hpcc);
}

#[test]
fn incast_variants() {
    let text = BASE.replace("senders = [1, 2]", "sender_count = 3")
        + "repeat = { interval = \"100us\", count = 4 }\n";
    let s = parse(&text).expect("valid");
    assert_eq!(s.config.flows.len(), 12);
    assert!(s
        .config
        .flows
        .iter()
        .all(|f| f.dst == NodeId(0) && f.src != NodeId(0)));
    assert_eq!(s.config.flows[11].start, Time::from_us(300));
    let text = BASE.replace("senders = [1, 2]", "sender_count = 4");
    check(&text, "workload[0].sender_count", "only 3 hosts", "4");
    let text = BASE.replace("senders = [1, 2]", "senders = [1, 0]");
    check(&text, "workload[0].senders[1]", "also the receiver", "0");
    // A stride or "all" takes its hosts less the receiver.
    let senders = |text: &str| -> Vec<u32> {
        let s = parse(text).expect("valid");
        s.config.flows.iter().map(|f| f.src.0).collect()
    };
    let all = BASE.replace("senders = [1, 2]", "senders = \"all\"");
    assert_eq!(senders(&all), [1, 2, 3]);
    let odd = BASE.replace("senders = [1, 2]", "senders = { every = 2, offset = 1 }");
    assert_eq!(senders(&odd), [1, 3]);
    let even = BASE.replace("senders = [1, 2]", "senders = { every = 2, invert = true }");
    assert_eq!(senders(&even), [1, 3]);
    let only_receiver = BASE.replace("senders = [1, 2]", "senders = { every = 4 }");
    check(
        &only_receiver,
        "workload[0].senders",
        "no host besides the receiver",
        "{ every = 4 }",
    );
    let wrong = BASE.replace("senders = [1, 2]", "senders = 3");
    check(&wrong, "workload[0].senders", "every = N", "3");
}

#[test]
fn random_workloads_are_deterministic() {
    let text = format!(
        "seed = 5\n{BASE}\n[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"fbhdp\"\nduration = \"200us\"\n\
         [[workload]]\nkind = \"permutation\"\nsize = \"10KB\"\nstart = \"50us\"\n"
    );
    let a = parse(&text).expect("valid");
    let b = parse(&text).expect("valid");
    assert_eq!(a, b);
    assert!(a.config.flows.windows(2).all(|w| w[0].start <= w[1].start));
    let other_seed = parse(&text.replace("seed = 5", "seed = 6")).expect("valid");
    assert_ne!(a.config.flows, other_seed.config.flows);
    // seed_offset pins a workload's stream regardless of its position.
    assert_ne!(scenario::workload_seed(1, 0), scenario::workload_seed(1, 1));
    assert_ne!(scenario::workload_seed(0, 1), scenario::workload_seed(1, 0));
}

#[test]
fn links_topology() {
    let text = "[topology]\nkind = \"links\"\nhosts = 2\nswitches = 1\n\
                [[topology.link]]\na = 0\nb = 2\nrate = \"100Gbps\"\n\
                [[topology.link]]\na = 1\nb = 2\nrate = \"25Gbps\"\ndelay = \"500ns\"\nerror_rate = 0.001\n\
                [[workload]]\nkind = \"all-to-all\"\nsize = \"1KB\"\n";
    let s = parse(text).expect("valid");
    assert_eq!(s.config.topology.len(), 3);
    assert_eq!(s.config.topology.links[1].rate, Rate::from_gbps(25));
    assert_eq!(s.config.flows.len(), 2);
    let dangling = text.replace("a = 1\nb = 2", "a = 1\nb = 3");
    check(&dangling, "topology.link[1].b", "unknown node 3", "3");
    let host_twice = text.replace("a = 1\nb = 2", "a = 0\nb = 1");
    let e = err(&host_twice);
    assert_eq!(e.field(), Some("topology.link[1]"), "{e}");
}

#[test]
fn poisson_needs_hosts_of_one_link_rate() {
    // Host 2's link (25 Gb/s) comes first in link order; hosts 0 and 1 have 100 Gb/s.
    let text = "[topology]\nkind = \"links\"\nhosts = 3\nswitches = 1\n\
                [[topology.link]]\na = 2\nb = 3\nrate = \"25Gbps\"\n\
                [[topology.link]]\na = 3\nb = 0\nrate = \"100Gbps\"\n\
                [[topology.link]]\na = 1\nb = 3\nrate = \"100Gbps\"\n\
                [[workload]]\nkind = \"poisson\"\nload = 0.3\ncdf = \"googlerpc\"\nduration = \"10us\"\n";
    let e = err(text);
    assert_eq!(e.field(), Some("workload[0]"), "{e}");
    for part in ["equal link rates", "host 0 has", "host 2 has"] {
        assert!(e.reason().contains(part), "`{}` lacks `{part}`", e.reason());
    }
    let same_rate = text.replace("duration", "hosts = [0, 1]\nduration");
    let s = parse(&same_rate).expect("hosts 0 and 1 share a rate");
    assert!(!s.config.flows.is_empty());
    let mixed = text.replace("duration", "hosts = [1, 2]\nduration");
    let e = check(&mixed, "workload[0].hosts", "host 1 has", "[1, 2]");
    assert!(e.reason().contains("host 2 has"), "{e}");
}

#[test]
fn poisson_rejects_huge_workloads() {
    let text = format!(
        "{BASE}\n[[workload]]\nkind = \"poisson\"\nload = 1.0\ncdf = \"googlerpc\"\nduration = \"100s\"\n"
    );
    let e = check(&text, "workload[1].duration", "at most", "\"100s\"");
    assert!(e.reason().contains("flows"), "{e}");
}

#[test]
fn display_names_file_line_and_field() {
    let text = BASE.replace("receiver = 0", "receiver = 99");
    let e = err(&text);
    let shown = e.to_string();
    assert!(
        shown.starts_with("test.toml:10:12: workload[0].receiver: "),
        "{shown}"
    );
}

#[test]
fn io_error_for_missing_file() {
    let e = scenario::load(Path::new("/nonexistent/scenario.toml")).expect_err("missing");
    assert!(matches!(e, ScenarioError::Io { .. }), "{e:?}");
    assert_eq!(e.source_text(), None);
    assert_eq!(e.field(), None);
}

#[test]
fn never_panics_on_odd_input() {
    let inputs = [
        "",
        "topology = 3",
        "[topology]\nkind = 3",
        "[topology]\nkind = \"fat-tree\"\nk = 3\nrate = \"1Gbps\"",
        "[topology]\nkind = \"fat-tree\"\nk = 9223372036854775807\nrate = \"1Gbps\"",
        "[topology]\nkind = \"star\"\nhosts = 16777216\nrate = \"1Gbps\"",
        "[topology]\nkind = \"star\"\nhosts = 3\nrate = \"1e400Gbps\"",
        "[topology]\nkind = \"star\"\nhosts = 3\nrate = \"nanGbps\"",
        "[topology]\nkind = \"star\"\nhosts = 3\nrate = \"1Gbps\"\ndelay = 1979-05-27T07:32:00Z",
        "[topology]\nkind = \"links\"\nhosts = 9223372036854775807\nswitches = 1\nlink = []",
        "[topology]\nkind = \"star\"\nhosts = 3\nrate = \"1Gbps\"\n[[workload]]\nkind = \"incast\"\nsender_count = 1\nreceiver = 0\nsize = \"1B\"\nrepeat = { count = 4294967295, interval = \"1ps\" }",
        "[topology]\nkind = \"star\"\nhosts = 3\nrate = \"1Gbps\"\n[[workload]]\nkind = \"poisson\"\nload = nan\ncdf = \"websearch\"\nduration = \"1ms\"",
        "[topology]\nkind = \"star\"\nhosts = 3\nrate = \"1Gbps\"\n[[workload]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"websearch\"\nduration = \"1ms\"\nstart = \"18446744073709551615ps\"",
    ];
    for text in inputs {
        let _ = parse(text);
    }
}

#[test]
fn ecn_per_queue() {
    use headroom_mech::ecn::RedConfig;
    use headroom_sim::config::QueueEcn;
    let text = format!(
        "{BASE}\n[switch.ecn.queue.3]\nkmin = \"100KB\"\nkmax = \"400KB\"\npmax = 0.1\n\
         [switch.ecn.queue.4]\nenabled = false\n"
    );
    let s = parse(&text).expect("valid");
    let q = s.config.switch.ecn.queues;
    assert_eq!(
        q[3],
        QueueEcn::Red(RedConfig {
            kmin: 100_000,
            kmax: 400_000,
            pmax: 0.1
        })
    );
    assert_eq!(q[4], QueueEcn::Off);
    assert_eq!(q[0], QueueEcn::Inherit);

    check(
        &format!("{BASE}\n[switch.ecn.queue]\n9 = {{ enabled = false }}\n"),
        "switch.ecn.queue.9",
        "`9` is not a queue (expected 0 to 7)",
        "9",
    );
    check(
        &format!("{BASE}\n[switch.ecn.queue]\n2 = {{ enabled = false, kmin = \"1KB\", kmax = \"2KB\", pmax = 0.1 }}\n"),
        "switch.ecn.queue.2",
        "takes no thresholds",
        "{ enabled = false, kmin = \"1KB\", kmax = \"2KB\", pmax = 0.1 }",
    );
    check(
        &format!("{BASE}\n[switch.ecn.queue]\n2 = {{ kmin = \"1KB\" }}\n"),
        "switch.ecn.queue.2.kmax",
        "`kmax` is missing",
        "{ kmin = \"1KB\" }",
    );
}

#[test]
fn no_traffic_is_a_warning() {
    assert!(parse(BASE).expect("valid").warnings.is_empty());
    let idle = "stop_time = \"1ms\"\n[topology]\nkind = \"star\"\nhosts = 2\nrate = \"100Gbps\"\n";
    let s = parse(idle).expect("a scenario without traffic is valid");
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    assert!(
        s.warnings[0].contains("no [[workload]]"),
        "{:?}",
        s.warnings
    );
    let empty = format!("workload = []\n{idle}");
    let s = parse(&empty).expect("valid");
    assert!(s.warnings[0].contains("make no flows"), "{:?}", s.warnings);
}

#[test]
fn headroom_frame_below_the_hosts_frames_is_a_warning() {
    let dsh = |host: &str| {
        format!("{BASE}\n[switch]\nheadroom = \"dsh\"\n[host]\n{host}\n[host.cc]\nalgorithm = \"powertcp\"\n")
    };
    // 1452 B of payload + 48 B of headers = the formula's 1500 B, but PowerTCP adds INT.
    let s = parse(&dsh("mtu = \"1452B\"")).expect("valid");
    assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    let w = &s.warnings[0];
    assert!(w.contains("switch.headroom_params.mtu = 1500 B"), "{w}");
    assert!(w.contains("1542 B"), "{w}");
    assert!(w.contains("42 B of INT (powertcp)"), "{w}");
    // Frames of 1500 B with INT fit the formula.
    let s = parse(&dsh("mtu = \"1410B\"")).expect("valid");
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn chip_ports_below_connected_ports() {
    // The star's switch has 4 links.
    let text = format!("{BASE}\n[switch]\nports = 3\n");
    let e = check(
        &text,
        "switch.ports",
        "3 ports are fewer than the 4 links",
        "3",
    );
    assert!(e.to_string().starts_with("test.toml:"), "{e}");
    let text = format!("{BASE}\n[switch]\nports = 4\n");
    parse(&text).expect("as many chip ports as links");
}

#[test]
fn buffer_too_small_for_reservations_names_the_field() {
    let text = format!("{BASE}\n[switch]\nbuffer = \"100KB\"\nheadroom = \"50KB\"\n");
    let e = check(
        &text,
        "switch.buffer",
        "leave no shared buffer",
        "\"100KB\"",
    );
    assert!(e.reason().contains("switch 4"), "{e}");
    let (line, _) = match &e {
        ScenarioError::Invalid(i) => i.line_col().expect("a span"),
        ScenarioError::Io { .. } => panic!("{e}"),
    };
    assert_eq!(text.lines().nth(line - 1), Some("buffer = \"100KB\""));
    // Without a `buffer` key the default is too small: the error points at [switch].
    let text = format!("{BASE}\n[switch]\nheadroom = \"10MiB\"\n");
    check(&text, "switch.buffer", "leave no shared buffer", "[switch]");
    // Private reservations count too.
    let text = format!("{BASE}\n[switch]\nbuffer = \"1MiB\"\nprivate = \"64KiB\"\n");
    check(&text, "switch.buffer", "private", "\"1MiB\"");
}

#[test]
fn name_must_be_a_plain_directory_name() {
    for (name, why) in [
        ("../escape", "`..`"),
        ("..", "`..`"),
        (".hidden", "start with `.`"),
        ("a/b", "path separator `/`"),
        ("a\\\\b", "path separator `\\`"),
        ("two words", "' '"),
        ("tab\\there", "'\\t'"),
        ("star*", "`*`"),
        ("colon:", "`:`"),
    ] {
        let text = format!("name = \"{name}\"\n{BASE}");
        let e = err(&text);
        assert_eq!(e.field(), Some("name"), "{name}: {e}");
        assert!(e.reason().contains(why), "{name}: {e}");
        assert!(e.reason().contains("out/<name>/"), "{name}: {e}");
    }
    let long = "x".repeat(300);
    let e = err(&format!("name = \"{long}\"\n{BASE}"));
    assert!(e.reason().contains("at most 255"), "{e}");
    for ok in ["incast-2to1", "run_3.v2", "a+b", "größe"] {
        let s = parse(&format!("name = \"{ok}\"\n{BASE}")).expect(ok);
        assert_eq!(s.name, ok);
    }
}

#[test]
fn congestion_control_algorithms_and_their_errors() {
    for name in ["dctcp", "timely", "hpcc", "powertcp"] {
        let text = format!("{BASE}\n[host.cc]\nalgorithm = \"{name}\"\n");
        let s = parse(&text).expect("valid");
        assert_eq!(s.config.host.cc.name(), name);
        // HPCC, DCTCP and PowerTCP run with the ns-3 HPCC simulator's window unless told
        // otherwise.
        assert_eq!(
            s.config.host.window.enabled,
            matches!(name, "hpcc" | "dctcp" | "powertcp"),
            "{name}"
        );
    }
    let unknown = format!("{BASE}\n[host.cc]\nalgorithm = \"reno\"\n");
    check(
        &unknown,
        "host.cc.algorithm",
        "unknown algorithm `reno`",
        "\"reno\"",
    );
    let eta0 = format!("{BASE}\n[host.cc]\nalgorithm = \"hpcc\"\ntarget_utilization = 0\n");
    check(&eta0, "host.cc.target_utilization", "(0, 1]", "0");
    let multi0 = format!("{BASE}\n[host.cc]\nalgorithm = \"hpcc\"\nint_multi = 0\n");
    check(&multi0, "host.cc.int_multi", "", "0");
    let ai0 = format!("{BASE}\n[host.cc]\nalgorithm = \"dctcp\"\nrate_ai = \"0Gbps\"\n");
    check(&ai0, "host.cc.rate_ai", "", "\"0Gbps\"");
    let g0 = format!("{BASE}\n[host.cc]\nalgorithm = \"dctcp\"\ng = 0.0\n");
    check(&g0, "host.cc.g", "(0, 1]", "0.0");
    let thresholds = format!(
        "{BASE}\n[host.cc]\nalgorithm = \"timely\"\nt_low = \"100us\"\nt_high = \"50us\"\n"
    );
    check(&thresholds, "host.cc.t_high", "below t_low", "\"50us\"");
    let foreign = format!("{BASE}\n[host.cc]\nalgorithm = \"timely\"\nrp_timer = \"1us\"\n");
    check(
        &foreign,
        "host.cc.rp_timer",
        "unknown key `rp_timer` for algorithm = \"timely\"",
        "rp_timer",
    );
    let window = format!("{BASE}\n[host.window]\nenabled = \"yes\"\n");
    check(&window, "host.window.enabled", "", "\"yes\"");
}

#[test]
fn powertcp_modes_keys_and_their_errors() {
    use headroom_mech::cc::{PowerTcpConfig, PowerTcpMode};
    let with = |keys: &str| format!("{BASE}\n[host.cc]\nalgorithm = \"powertcp\"\n{keys}");
    let powertcp = |keys: &str| {
        let s = parse(&with(keys)).expect("valid");
        let CcConfig::PowerTcp(p) = &s.config.host.cc else {
            panic!("powertcp")
        };
        (p.clone(), s.config.host.cc.int_multi())
    };
    // INT mode by default: switches append INT records.
    assert_eq!(powertcp(""), (PowerTcpConfig::default(), Some(4)));
    // Delay mode: its own gamma, no INT.
    let (p, int_multi) = powertcp("mode = \"delay\"\n");
    assert_eq!(
        (p.mode, p.gamma, int_multi),
        (PowerTcpMode::Delay, 0.7, None)
    );
    let (p, _) = powertcp(
        "mode = \"delay\"\ngamma = 0.5\nbeta = \"300Mbps\"\nbase_rtt_slack = 1\n\
         fast_react = false\nmin_rate = \"2Gbps\"\n",
    );
    assert_eq!(
        p,
        PowerTcpConfig {
            gamma: 0.5,
            beta: Rate::from_mbps(300),
            base_rtt_slack: 1.0,
            fast_react: false,
            min_rate: Rate::from_gbps(2),
            ..PowerTcpConfig::for_mode(PowerTcpMode::Delay)
        }
    );
    let (p, int_multi) = powertcp("target_utilization = 0.9\nint_multi = 2\n");
    assert_eq!((p.target_utilization, int_multi), (0.9, Some(2)));

    check(
        &with("mode = \"ecn\"\n"),
        "host.cc.mode",
        "unknown mode `ecn` (expected int or delay)",
        "\"ecn\"",
    );
    check(&with("gamma = 0\n"), "host.cc.gamma", "(0, 1]", "0");
    check(&with("gamma = 1.5\n"), "host.cc.gamma", "(0, 1]", "1.5");
    check(&with("beta = \"0Mbps\"\n"), "host.cc.beta", "", "\"0Mbps\"");
    check(
        &with("target_utilization = 1.2\n"),
        "host.cc.target_utilization",
        "(0, 1]",
        "1.2",
    );
    check(
        &with("base_rtt_slack = 0.95\n"),
        "host.cc.base_rtt_slack",
        "must be at least 1, found 0.95",
        "0.95",
    );
    check(&with("int_multi = 0\n"), "host.cc.int_multi", "", "0");
    check(
        &with("sample_feedback = true\n"),
        "host.cc.sample_feedback",
        "unknown key `sample_feedback` for algorithm = \"powertcp\"",
        "sample_feedback",
    );
}

#[test]
fn tcd_detectors_and_their_parameters() {
    use headroom_mech::cc::UeReaction;
    use headroom_sim::config::{CnpMode, DetectorConfig};
    let ok = |extra: &str| parse(&format!("{BASE}\n{extra}")).expect("valid");
    let s = ok("[switch.ecn]\ndetector = \"tcd\"\n[switch.ecn.tcd]\nmax_t_on = \"30us\"\n");
    assert_eq!(
        s.config.switch.ecn.detector,
        DetectorConfig::Tcd {
            max_t_on: Some(Time::from_us(30)),
            threshold: None
        }
    );
    let s =
        ok("[switch.ecn]\ndetector = \"tcd-released\"\n[switch.ecn.tcd]\ninterval = \"97us\"\n");
    let DetectorConfig::TcdReleased(r) = s.config.switch.ecn.detector else {
        panic!("released detector")
    };
    assert_eq!(
        (r.interval, r.growth, r.empty),
        (Time::from_us(97), 900, 2060)
    );
    let s = ok("[host]\ncnp_mode = \"poll\"\n[host.cc]\non_ue = \"hold-restart-alpha\"\n");
    assert_eq!(s.config.host.cnp_mode, CnpMode::Poll);
    let CcConfig::Dcqcn(d) = &s.config.host.cc else {
        panic!("dcqcn")
    };
    assert_eq!(d.on_ue, UeReaction::HoldRestartAlpha);

    let text = format!("{BASE}\n[switch.ecn]\ndetector = \"root-ecn\"\n");
    check(
        &text,
        "switch.ecn.detector",
        "unknown detector `root-ecn`",
        "\"root-ecn\"",
    );
    let text = format!("{BASE}\n[switch.ecn]\nenabled = false\ndetector = \"tcd\"\n");
    check(&text, "switch.ecn.detector", "needs ECN marking", "\"tcd\"");
    let text = format!("{BASE}\n[switch.ecn]\npoint = \"enqueue\"\ndetector = \"tcd-released\"\n");
    check(
        &text,
        "switch.ecn.detector",
        "decides at dequeue",
        "\"tcd-released\"",
    );
    let text = format!("{BASE}\n[switch.ecn]\n[switch.ecn.tcd]\nmax_t_on = \"30us\"\n");
    check(
        &text,
        "switch.ecn.tcd",
        "set detector = \"tcd\"",
        "[switch.ecn.tcd]",
    );
    let text = format!(
        "{BASE}\n[switch.ecn]\ndetector = \"tcd\"\n[switch.ecn.tcd]\ninterval = \"97us\"\n"
    );
    check(
        &text,
        "switch.ecn.tcd.interval",
        "unknown key `interval` for detector = \"tcd\" (expected one of: max_t_on, threshold)",
        "interval",
    );
    let text = format!(
        "{BASE}\n[switch.ecn]\ndetector = \"tcd-released\"\n[switch.ecn.tcd]\ninterval = \"500ns\"\n"
    );
    check(
        &text,
        "switch.ecn.tcd.interval",
        "whole microseconds",
        "\"500ns\"",
    );
    let text = format!("{BASE}\n[host]\ncnp_mode = \"often\"\n");
    check(
        &text,
        "host.cnp_mode",
        "unknown CNP mode `often`",
        "\"often\"",
    );
    let text =
        format!("{BASE}\n[host.cc]\nalgorithm = \"timely\"\non_ue = \"hold-restart-alpha\"\n");
    check(
        &text,
        "host.cc.on_ue",
        "expected hold, ignore",
        "\"hold-restart-alpha\"",
    );
}

#[test]
fn flow_channel_errors_name_their_field() {
    let fc = format!("{BASE}\n[fabric]\nkind = \"flow-channels\"\n[fabric.flow_channels]\n");
    check(
        &format!("{fc}table_size = 0\n"),
        "fabric.flow_channels.table_size",
        "must be between 1 and 65535, found 0",
        "0",
    );
    check(
        &format!("{fc}arbitration = \"flow-channel\"\n"),
        "fabric.flow_channels.arbitration",
        "set `[switch.scheduler] arbitration`",
        "\"flow-channel\"",
    );
    check(
        &format!("{fc}match = \"vni\"\n"),
        "fabric.flow_channels.match",
        "unknown match pattern `vni` (expected flow, destination, destination+class, \
         destination+app or destination+class+app)",
        "\"vni\"",
    );
    check(
        &format!("{fc}routing = \"valiant\"\n"),
        "fabric.flow_channels.routing",
        "unknown channel routing `valiant` (expected adaptive, ecmp or ugal)",
        "\"valiant\"",
    );
    check(
        &format!("{fc}link = \"flow-channels\"\n"),
        "fabric.flow_channels.link",
        "expected pfc or credit",
        "\"flow-channels\"",
    );
    check(
        &format!("{fc}ack_batch = 0\n"),
        "fabric.flow_channels.ack_batch",
        "must be between 1 and 65535, found 0",
        "0",
    );
    check(
        &format!("{fc}ack_idle_delay = \"100ns\"\nack_busy_delay = \"50ns\"\n"),
        "fabric.flow_channels.ack_busy_delay",
        "ack_idle_delay (100 ns) <= ack_busy_delay (50 ns) <= ack_max_delay (90 ns)",
        "\"50ns\"",
    );
    check(
        &format!("{fc}unit = \"0B\"\n"),
        "fabric.flow_channels.unit",
        "",
        "\"0B\"",
    );
    check(
        &format!("{fc}window = 4\n"),
        "fabric.flow_channels.window",
        "unknown key",
        "window",
    );
    let ep = format!(
        "{BASE}\n[switch.scheduler]\narbitration = \"flow\"\n[fabric]\nkind = \"flow-channels\"\n\
         [fabric.flow_channels.endpoint]\n"
    );
    check(
        &format!("{ep}bytes = \"0B\"\n"),
        "fabric.flow_channels.endpoint.bytes",
        "must be greater than zero",
        "\"0B\"",
    );
    check(
        &format!("{ep}packets = 0\n"),
        "fabric.flow_channels.endpoint.packets",
        "found 0",
        "0",
    );
    check(
        &format!("{ep}limits = []\n"),
        "fabric.flow_channels.endpoint.limits",
        "expected 1 to 8 limits (one per severity level), found 0",
        "[]",
    );
    check(
        &format!("{ep}growth = \"fast\"\n"),
        "fabric.flow_channels.endpoint.growth",
        "",
        "\"fast\"",
    );
    // Limits that rise with severity, and a FIFO that a held flow would block, are
    // refused when the configuration is checked.
    let e = err(&format!("{ep}limits = [\"8KiB\", \"16KiB\"]\n"));
    assert_eq!(
        e.field(),
        Some("fabric.flow_channels.endpoint.limits"),
        "{e}"
    );
    assert!(
        e.reason()
            .contains("level 2 allows 16384 B, level 1 8192 B"),
        "{e}"
    );
    let e = err(&format!(
        "{BASE}\n[fabric]\nkind = \"flow-channels\"\n[fabric.flow_channels.endpoint]\n"
    ));
    assert_eq!(e.field(), Some("switch.scheduler.arbitration"), "{e}");
    assert!(e.reason().contains("a queue per flow"), "{e}");
    let fgfc = format!("{BASE}\n[fabric]\nkind = \"flow-channels\"\n[fabric.flow_channels.fgfc]\n");
    check(
        &format!("{fgfc}pause = \"0us\"\n"),
        "fabric.flow_channels.fgfc.pause",
        "must be greater than zero",
        "\"0us\"",
    );
    check(
        &format!("{fgfc}credit = -1\n"),
        "fabric.flow_channels.fgfc.credit",
        "",
        "-1",
    );
    let e = err(&format!("{fgfc}target = \"8KiB\"\ndrop = \"8KiB\"\n"));
    assert_eq!(e.field(), Some("fabric.flow_channels.fgfc.drop"), "{e}");
    assert!(
        e.reason()
            .contains("the drop watermark (8192 B) must be below the target (8192 B)"),
        "{e}"
    );
    let hop = format!(
        "{BASE}\n[switch.scheduler]\narbitration = \"flow\"\n[fabric]\nkind = \"flow-channels\"\n\
         [fabric.flow_channels.hop_credits]\n"
    );
    let e = err(&format!("{hop}drop = \"32KiB\"\n"));
    assert_eq!(
        e.field(),
        Some("fabric.flow_channels.hop_credits.target"),
        "{e}"
    );
    assert!(
        e.reason()
            .contains("0 < drop < target < high: drop 32768 B, target 16384 B, high 65536 B"),
        "{e}"
    );
    check(
        &format!("{hop}high = \"0B\"\n"),
        "fabric.flow_channels.hop_credits.high",
        "must be greater than zero",
        "\"0B\"",
    );
    let e = err(&format!(
        "{BASE}\n[fabric]\nkind = \"flow-channels\"\n[fabric.flow_channels.hop_credits]\n"
    ));
    assert_eq!(e.field(), Some("switch.scheduler.arbitration"), "{e}");
    assert!(e.reason().contains("hop-by-hop credits hold"), "{e}");
    let injection =
        format!("{BASE}\n[fabric]\nkind = \"flow-channels\"\n[fabric.flow_channels.injection]\n");
    check(
        &format!("{injection}port = \"0B\"\n"),
        "fabric.flow_channels.injection.port",
        "must be greater than zero",
        "\"0B\"",
    );
    check(
        &format!("{injection}ilids = 3\n"),
        "fabric.flow_channels.injection.ilids",
        "unknown key",
        "ilids",
    );
    check(
        &format!("{injection}ilid = 3\n"),
        "fabric.flow_channels.injection.ilid",
        "expected an array, found an integer",
        "3",
    );
    let e = err(&format!("{injection}port = \"16KiB\"\n"));
    assert_eq!(e.field(), Some("switch.scheduler.arbitration"), "{e}");
    assert!(e.reason().contains("a port injection limit holds"), "{e}");
    // Severity watermarks: in order, not rising, no more than the severities.
    let marks = |list: &str| {
        format!(
            "{BASE}\n[fabric]\nkind = \"flow-channels\"\n[fabric.flow_channels.endpoint]\n\
             limits = [\"8KiB\", \"0B\"]\nwatermarks = {list}\n[switch.scheduler]\n\
             arbitration = \"flow\"\n"
        )
    };
    let e = err(&marks(
        "[{ high = \"8KiB\", target = \"8KiB\", drop = \"1KiB\" }]",
    ));
    assert_eq!(
        e.field(),
        Some("fabric.flow_channels.endpoint.watermarks"),
        "{e}"
    );
    assert!(e.reason().contains("drop < target < high"), "{e}");
    let e = err(&marks(
        "[{ high = \"8KiB\", target = \"4KiB\", drop = \"1KiB\" }, { high = \"8KiB\", \
         target = \"6KiB\", drop = \"1KiB\" }]",
    ));
    assert!(e.reason().contains("must not rise with severity"), "{e}");
    let w = "{ high = \"8KiB\", target = \"4KiB\", drop = \"1KiB\" }";
    check(
        &marks(&format!("[{w}, {w}, {w}]")),
        "fabric.flow_channels.endpoint.watermarks",
        "expected 1 to 2 watermark entries",
        &format!("[{w}, {w}, {w}]"),
    );
    check(
        &marks("[{ high = \"8KiB\", target = \"4KiB\" }]"),
        "fabric.flow_channels.endpoint.watermarks[0].drop",
        "",
        "{ high = \"8KiB\", target = \"4KiB\" }",
    );
    // ILIDs: one per id 0 to 7, an application in one ILID at most, 127 reserved.
    let ilid = |body: &str| {
        format!(
            "{injection}node = \"32KiB\"\n[[fabric.flow_channels.injection.ilid]]\n{body}\n\
             [switch.scheduler]\narbitration = \"application\"\n"
        )
    };
    check(
        &ilid("id = 8"),
        "fabric.flow_channels.injection.ilid[0].id",
        "between 0 and 7",
        "8",
    );
    check(
        &ilid("id = 1\napps = [3, 127]"),
        "fabric.flow_channels.injection.ilid[0].apps[1]",
        "reserved for frames of no flow",
        "127",
    );
    check(
        &ilid("id = 1\napps = [3]\n[[fabric.flow_channels.injection.ilid]]\nid = 2\napps = [3]"),
        "fabric.flow_channels.injection.ilid[1].apps[0]",
        "application 3 is already mapped to ILID 1",
        "3",
    );
    check(
        &ilid("id = 1\n[[fabric.flow_channels.injection.ilid]]\nid = 1"),
        "fabric.flow_channels.injection.ilid[1].id",
        "ILID 1 is listed twice",
        "1",
    );
    check(
        &ilid("id = 1\nratio = 0"),
        "fabric.flow_channels.injection.ilid[0].ratio",
        "between 1",
        "0",
    );
    check(
        &ilid("id = 1\nlimit = \"0B\""),
        "fabric.flow_channels.injection.ilid[0].limit",
        "must be greater than zero",
        "\"0B\"",
    );
    let e = err(&ilid("id = 1").replace(
        "[fabric.flow_channels.injection]",
        "[fabric.flow_channels]\nmatch = \"destination\"\n[fabric.flow_channels.injection]",
    ));
    assert_eq!(e.field(), Some("fabric.flow_channels.match"), "{e}");
    assert!(e.reason().contains("set it to \"flow\""), "{e}");
    // A channel per destination and application carries one application.
    let per_app = ilid("id = 1").replace(
        "[fabric.flow_channels.injection]",
        "[fabric.flow_channels]\nmatch = \"destination+app\"\n[fabric.flow_channels.injection]",
    );
    parse(&per_app).expect("valid");
    let e = err(&ilid("id = 1").replace("arbitration = \"application\"", "arbitration = \"fifo\""));
    assert_eq!(e.field(), Some("switch.scheduler.arbitration"), "{e}");
    assert!(e.reason().contains("ILID injection limits hold"), "{e}");
    // Reroutes: sizes and durations above zero, adaptive routing, a queue per flow.
    let reroute = |keys: &str, extra: &str| {
        format!(
            "{BASE}\n[fabric]\nkind = \"flow-channels\"\n[fabric.flow_channels]\n{extra}\n\
             [fabric.flow_channels.reroute]\n{keys}\n[switch.scheduler]\narbitration = \"flow\"\n"
        )
    };
    check(
        &reroute("queue = \"0B\"", ""),
        "fabric.flow_channels.reroute.queue",
        "must be greater than zero",
        "\"0B\"",
    );
    check(
        &reroute("interval = \"0us\"", ""),
        "fabric.flow_channels.reroute.interval",
        "greater than zero",
        "\"0us\"",
    );
    let e = err(&reroute("", "routing = \"ecmp\""));
    assert_eq!(e.field(), Some("fabric.flow_channels.routing"), "{e}");
    assert!(e.reason().contains("set it to \"adaptive\""), "{e}");
    let e = err(&reroute("", "").replace("arbitration = \"flow\"", "arbitration = \"fifo\""));
    assert_eq!(e.field(), Some("switch.scheduler.arbitration"), "{e}");
    assert!(e.reason().contains("reroutes hold"), "{e}");
    // What a channel cannot survive yet is refused, naming it.
    let e = err(&format!(
        "{BASE}\n[fabric]\nkind = \"flow-channels\"\n\n[switch.pfc_watchdog]\n"
    ));
    assert_eq!(e.field(), Some("switch.pfc_watchdog"), "{e}");
    assert!(e.reason().contains("PFC watchdog"), "{e}");
}

#[test]
fn credit_fabric_errors_name_their_field() {
    check(
        &format!("{BASE}\n[fabric]\nkind = \"infiniband\"\n"),
        "fabric.kind",
        "unknown fabric kind `infiniband` (expected pfc, credit or flow-channels)",
        "\"infiniband\"",
    );
    let credit = format!("{BASE}\n[fabric]\nkind = \"credit\"\n[fabric.credit]\n");
    check(
        &format!("{credit}vls = 3\n"),
        "fabric.credit.vls",
        "3 VLs; must be 1, 2, 4 or 8",
        "3",
    );
    check(
        &format!("{credit}vl_buffer = \"1KiB\"\n"),
        "fabric.credit.vl_buffer",
        "1024 bytes give a VL 16 blocks of 64 bytes; the largest frame (1048 bytes) needs 17",
        "\"1KiB\"",
    );
    // The incast's flows use priority 3: two VLs have none for it.
    check(
        &format!("{credit}vls = 2\n"),
        "fabric.credit.vls",
        "flow 0 uses service level 3, which maps to VL 3: there are 2 VLs (an SL with no VL)",
        "2",
    );
    check(
        &format!("{credit}grant = \"dynamic\"\n"),
        "fabric.credit.grant",
        "unknown credit grant `dynamic` (expected static or shared)",
        "\"dynamic\"",
    );
    // An SL → VL table that sends service level 3 to a VL that does not exist.
    check(
        &format!("{credit}vls = 4\nsl_to_vl = [0, 1, 2, 5, 0, 1, 2, 3]\n"),
        "fabric.credit.sl_to_vl",
        "flow 0 uses service level 3, which maps to VL 5: there are 4 VLs",
        "[0, 1, 2, 5, 0, 1, 2, 3]",
    );
    check(
        &format!("{credit}sl_to_vl = [0, 1, 2, 3]\n"),
        "fabric.credit.sl_to_vl",
        "expected 8 VLs (one per service level 0-7), found 4",
        "[0, 1, 2, 3]",
    );
    check(
        &format!("{credit}sl_to_vl = [0, 1, 2, 3, 4, 5, 6, 8]\n"),
        "fabric.credit.sl_to_vl[7]",
        "",
        "8",
    );
    // A link's own table, checked as the fabric's: the ACKs' service level 7 has no VL on
    // the receiver's link.
    let links = "[topology]\nkind = \"links\"\nhosts = 2\nswitches = 1\n\
                 [[topology.link]]\na = 0\nb = 2\nrate = \"100Gbps\"\n\
                 [[topology.link]]\na = 1\nb = 2\nrate = \"100Gbps\"\n\
                 sl_to_vl = [0, 0, 0, 0, 1, 1, 1, 4]\n\
                 [[workload]]\nkind = \"incast\"\nsenders = [0]\nreceiver = 1\nsize = \"64KiB\"\n\
                 [fabric]\nkind = \"credit\"\n[fabric.credit]\nvls = 4\n\
                 sl_to_vl = [0, 0, 1, 1, 2, 2, 3, 3]\n\
                 [host]\nack_prio = 7\n";
    check(
        links,
        "topology.link[1].sl_to_vl",
        "host.ack_prio uses service level 7, which maps to VL 4: there are 4 VLs",
        "[0, 0, 0, 0, 1, 1, 1, 4]",
    );
    // A link's flow control: one kind, or one per end that agree.
    let two = "[topology]\nkind = \"links\"\nhosts = 2\nswitches = 1\n\
               [[topology.link]]\na = 0\nb = 2\nrate = \"100Gbps\"\n\
               [[topology.link]]\na = 1\nb = 2\nrate = \"100Gbps\"\nflow_control = KIND\n\
               [[workload]]\nkind = \"incast\"\nsenders = [0]\nreceiver = 1\nsize = \"64KiB\"\n";
    check(
        &two.replace("KIND", "[\"credit\", \"pfc\"]"),
        "topology.link[1].flow_control",
        "the ends disagree: a uses credit, b uses pfc; both ends of a link use one kind",
        "[\"credit\", \"pfc\"]",
    );
    check(
        &two.replace("KIND", "\"ethernet\""),
        "topology.link[1].flow_control",
        "unknown flow control `ethernet` (expected pfc or credit)",
        "\"ethernet\"",
    );
    check(
        &two.replace("KIND", "[\"credit\"]"),
        "topology.link[1].flow_control",
        "give one kind, or one per end ([a's, b's]); found 1 entries",
        "[\"credit\"]",
    );
    let s = parse(&two.replace("KIND", "[\"credit\", \"credit\"]")).expect("ends agree");
    assert_eq!(s.config.fabric.link_kind(0), FlowControlKind::Pfc);
    assert_eq!(s.config.fabric.link_kind(1), FlowControlKind::Credit);
    let fixed = links.replace("1, 1, 1, 4]", "1, 1, 1, 3]");
    let s = parse(&fixed).expect("every used SL has a VL");
    assert_eq!(s.config.fabric.sl_to_vl(0), [0, 0, 1, 1, 2, 2, 3, 3]);
    assert_eq!(s.config.fabric.sl_to_vl(1), [0, 0, 0, 0, 1, 1, 1, 3]);
    check(
        &format!("{credit}update_period = \"0us\"\n"),
        "fabric.credit.update_period",
        "",
        "\"0us\"",
    );
}

#[test]
fn infiniband_cc_errors_name_their_field() {
    let ib = format!("{BASE}\n[host.cc]\nalgorithm = \"ib-cc\"\n");
    check(
        &format!("{ib}cct = [0, 0.5, 0.25, 1]\n"),
        "host.cc.cct[2]",
        "entry 2 (0.25) is below entry 1 (0.5): the table must not decrease",
        "0.25",
    );
    check(
        &format!("{ib}cct = [0, -1]\n"),
        "host.cc.cct[1]",
        "an inter-packet delay is 0 or more",
        "-1",
    );
    check(
        &format!("{ib}cct = []\n"),
        "host.cc.cct",
        "a table of 1 to 16,384 entries",
        "[]",
    );
    check(
        &format!("{ib}cct = [0, 1]\ncct_entries = 64\n"),
        "host.cc.cct_entries",
        "either listed (cct) or generated",
        "64",
    );
    check(
        &format!("{ib}cct = [0, 1, 2]\nccti_limit = 3\n"),
        "host.cc.ccti_limit",
        "",
        "3",
    );
    check(
        &format!("{ib}ccti_limit = 10\nccti_min = 11\n"),
        "host.cc.ccti_min",
        "",
        "11",
    );
    check(
        &format!("{ib}ccti_timer = \"0us\"\n"),
        "host.cc.ccti_timer",
        "",
        "\"0us\"",
    );
    check(
        &format!("{ib}reaction = \"fast\"\n"),
        "host.cc.reaction",
        "",
        "reaction",
    );
    // Switches mark FECN: at dequeue only, with a threshold and a marking rate of 1 or more.
    check(
        &format!("{BASE}\n[switch.ecn]\npoint = \"enqueue\"\n[switch.ecn.fecn]\n"),
        "switch.ecn.fecn",
        "it needs point = \"dequeue\"",
        "[switch.ecn.fecn]",
    );
    check(
        &format!("{BASE}\n[switch.ecn.fecn]\nmarking_rate = 0\n"),
        "switch.ecn.fecn.marking_rate",
        "",
        "0",
    );
    check(
        &format!("{ib}\n[switch.ecn]\npoint = \"enqueue\"\n"),
        "switch.ecn.point",
        "FECN (InfiniBand CC) marks the packets a switch forwards",
        "\"enqueue\"",
    );
}

/// `[topology] frame_overhead`: the wire's per-frame bytes, 20 by default, 0 for htsim's
/// and ns-3's wire; a value past 1000 B is refused. A frame takes longer with it: the
/// incast of BASE finishes later at 20 B than at 0 B.
#[test]
fn frame_overhead_is_read_bounded_and_paid_on_the_wire() {
    let with = |overhead: &str| {
        BASE.replace(
            "rate = \"100Gbps\"\n",
            &format!("rate = \"100Gbps\"\nframe_overhead = \"{overhead}\"\n"),
        )
    };
    assert_eq!(parse(BASE).expect("valid").config.link.frame_overhead, 20);
    let bare = parse(&with("0B")).expect("valid");
    assert_eq!(bare.config.link.frame_overhead, 0);
    let text = with("2KB");
    check(
        &text,
        "topology.frame_overhead",
        "at most 1000 B",
        "\"2KB\"",
    );

    let end = |s: Scenario| {
        let r = headroom_sim::net::Simulation::new(s.config)
            .expect("builds")
            .run();
        assert!(r.flows.iter().all(|f| f.finish.is_some()));
        r.end_time
    };
    let ethernet = end(parse(BASE).expect("valid"));
    let wire = end(bare);
    assert!(wire < ethernet, "0 B: {wire:?}, 20 B: {ethernet:?}");
}
