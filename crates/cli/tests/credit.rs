//! Credit links through the binary (cbfc.md, "what the project must show"):
//! - `headroom credit-loop`: one flow over one credit link reaches line rate with a VL
//!   buffer above the credit loop and `buffer / loop time` below it; on the default sweep
//!   (three cable lengths, seven buffers, IBA's update period) every measured throughput
//!   is within 2 % of the model. With an update period shorter than a buffer's worth of
//!   frames the model is a lower bound, and the command says so.
//! - `headroom compare --flow-control pfc,credit`: one incast both ways; PFC pauses where
//!   credits withhold, neither drops.
//! - A run on credit links logs every wait for credit (`credit.csv`), sums it per
//!   (port, VL) in `summary.json` and draws the starvation timeline.

mod common;

use common::{headroom, stderr, stdout};

/// The CSV rows: (cable m, buffer B, model Gb/s, measured Gb/s, error %, long batch).
fn rows(csv: &str) -> Vec<(f64, u64, f64, f64, f64, bool)> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            (
                c[0].parse().expect("cable"),
                c[2].parse().expect("buffer"),
                c[5].parse().expect("model"),
                c[6].parse().expect("measured"),
                c[7].parse().expect("error"),
                c[8].parse().expect("flag"),
            )
        })
        .collect()
}

#[test]
fn the_default_sweep_matches_the_credit_loop_model_within_two_percent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = headroom(&["credit-loop", "--out", "cl"], dir.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(dir.path().join("cl/credit-loop.csv")).expect("csv");
    let r = rows(&csv);
    assert_eq!(r.len(), 21, "3 cables x 7 buffers");
    for &(cable, buffer, model, measured, error, _) in &r {
        assert!(
            error.abs() < 2.0,
            "{cable} m, {buffer} B: model {model} measured {measured}"
        );
    }
    // Below the loop, throughput grows with the buffer and falls with the cable; above it,
    // line rate (1 m: the loop is 5.34 us, 68,544 B).
    let at = |c: f64, b: u64| r.iter().find(|x| x.0 == c && x.1 == b).expect("row").3;
    assert!(at(1.0, 16 << 10) > 2.0 * at(1.0, 8 << 10) * 0.95);
    assert!(at(1000.0, 32 << 10) < at(100.0, 32 << 10));
    assert!(at(1.0, 96 << 10) > 93.0, "line rate: {}", at(1.0, 96 << 10));
    assert!(at(1.0, 64 << 10) < 91.0, "just below the loop");
    for f in ["credit-loop.json", "credit_loop.png", "credit_loop.svg"] {
        assert!(dir.path().join("cl").join(f).is_file(), "{f}");
    }
    assert!(stdout(&o).contains("largest difference between measured and model"));
}

#[test]
fn a_short_update_period_makes_the_model_a_lower_bound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = headroom(
        &[
            "credit-loop",
            "--update-period",
            "500ns",
            "--buffers",
            "4KiB,8KiB,16KiB",
            "--cables",
            "10,100",
            "--flow-size",
            "4MiB",
            "--out",
            "cl",
            "-q",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(dir.path().join("cl/credit-loop.csv")).expect("csv");
    for (cable, buffer, model, measured, error, long_batch) in rows(&csv) {
        if long_batch {
            assert!(error > -2.0, "{cable} m {buffer} B: {measured} < {model}");
        } else {
            assert!(
                error.abs() < 2.0,
                "{cable} m {buffer} B: {measured} vs {model}"
            );
        }
    }
}

#[test]
fn a_buffer_below_one_frame_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = headroom(&["credit-loop", "--buffers", "1KiB"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--buffers: 1024 B holds no frame of 1048 B"));
    let o = headroom(&["credit-loop", "--cables", "-3"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a cable of 0 to"), "{}", stderr(&o));
}

/// Scenarios the credit model refuses: each error names its field, and `run` exits with 2.
#[test]
fn bad_credit_scenarios_name_their_field_and_exit_with_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = INCAST.replace(
        "[fabric.credit]",
        "[fabric]\nkind = \"credit\"\n[fabric.credit]",
    );
    let mixed = MIXED.to_string();
    for (name, text, field) in [
        (
            "vls",
            base.replace("vls = 4", "vls = 3"),
            "fabric.credit.vls",
        ),
        (
            "buffer",
            base.replace("vl_buffer = \"32KiB\"", "vl_buffer = \"1KiB\""),
            "fabric.credit.vl_buffer",
        ),
        (
            "sl",
            base.replace("vls = 4", "vls = 4\nsl_to_vl = [0, 1, 2, 7, 0, 1, 2, 3]"),
            "fabric.credit.sl_to_vl",
        ),
        (
            "ends",
            mixed.replace(
                "flow_control = \"credit\"",
                "flow_control = [\"credit\", \"pfc\"]",
            ),
            "topology.link[1].flow_control",
        ),
        (
            "cct",
            base.replace(
                "algorithm = \"none\"",
                "algorithm = \"ib-cc\"\ncct = [0, 2, 1]",
            ),
            "host.cc.cct[2]",
        ),
    ] {
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(&path, text).expect("write");
        let o = headroom(&["run", path.to_str().expect("utf-8")], dir.path());
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(field), "{name}: {}", stderr(&o));
    }
    let path = dir.path().join("mixed.toml");
    std::fs::write(&path, MIXED).expect("write");
    let o = headroom(
        &["run", path.to_str().expect("utf-8"), "--out", "m"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Host 0 on a PFC link, host 1 on a credit link, through one switch.
const MIXED: &str = r#"
name = "mixed"

[topology]
kind = "links"
hosts = 2
switches = 1

[[topology.link]]
a = 0
b = 2
rate = "100Gbps"

[[topology.link]]
a = 1
b = 2
rate = "100Gbps"
flow_control = "credit"

[[workload]]
kind = "incast"
senders = [0]
receiver = 1
size = "64KiB"
"#;

/// An 8:1 incast of 256 KiB each into a 2 MiB switch: PFC must pause.
const INCAST: &str = r#"
name = "incast-8to1"
seed = 1

[topology]
kind = "star"
hosts = 9
rate = "100Gbps"
delay = "1us"

[fabric.credit]
vls = 4
vl_buffer = "32KiB"

[switch]
buffer = "2MiB"

[host]
ack_prio = 0

[host.cc]
algorithm = "none"

[[workload]]
kind = "incast"
sender_count = 8
receiver = 0
size = "256KiB"
start = "0us"
prio = 3
"#;

#[test]
fn compare_runs_one_incast_under_pfc_and_under_credits() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("incast.toml"), INCAST).expect("write");
    let o = headroom(
        &[
            "compare",
            "incast.toml",
            "--flow-control",
            "pfc,credit",
            "--no-plots",
            "--out",
            "cmp",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.lines().any(|l| l.starts_with("PFC ")), "{table}");
    assert!(table.lines().any(|l| l.starts_with("CREDIT ")), "{table}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("cmp/compare.json")).expect("json"))
            .expect("valid json");
    let runs = doc["runs"].as_array().expect("runs");
    let run = |k: &str| {
        runs.iter()
            .find(|r| r["flow_control"] == k)
            .unwrap_or_else(|| panic!("a {k} run"))
    };
    let (pfc, credit) = (run("pfc"), run("credit"));
    for r in [pfc, credit] {
        assert_eq!(r["lossless_drops"], 0, "{r}");
        assert_eq!(r["flows_finished"], 8, "{r}");
    }
    assert!(
        pfc["queue_pauses"].as_u64().expect("n") > 0,
        "PFC pauses: {pfc}"
    );
    assert_eq!(pfc["credit_blocked_ms"], 0.0);
    assert_eq!(credit["queue_pauses"], 0, "credits never pause: {credit}");
    assert!(
        credit["credit_blocked_ms"].as_f64().expect("ms") > 0.0,
        "{credit}"
    );
    assert!(credit["credit_updates"].as_u64().expect("n") > 0);
    let csv = std::fs::read_to_string(dir.path().join("cmp/compare.csv")).expect("csv");
    assert!(csv.starts_with("flow_control,"), "{csv}");
    for k in ["pfc", "credit"] {
        let summary = std::fs::read_to_string(dir.path().join(format!("cmp/{k}/summary.json")))
            .expect("summary");
        assert!(
            summary.contains(&format!("\"flow_control\": \"{k}\"")),
            "{k}"
        );
    }
    // An unknown or repeated kind, or a kind with --mmu, is refused before anything runs.
    for args in [
        &[
            "compare",
            "incast.toml",
            "--flow-control",
            "ethernet",
            "--out",
            "bad",
        ][..],
        &[
            "compare",
            "incast.toml",
            "--flow-control",
            "pfc,pfc",
            "--out",
            "bad",
        ][..],
        &[
            "compare",
            "incast.toml",
            "--flow-control",
            "pfc",
            "--mmu",
            "sih",
            "--out",
            "bad",
        ][..],
    ] {
        let o = headroom(args, dir.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!dir.path().join("bad").exists(), "{args:?} wrote outputs");
    }
}

/// The 16:1 credit incast's outputs: every sender's waits in `credit.csv` add up to the
/// blocked time `summary.json` gives its (port, VL), and the starvation timeline is drawn.
#[test]
fn credit_waits_are_logged_summarised_and_plotted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/credit/incast-16to1.toml");
    let o = headroom(
        &["run", scenario.to_str().expect("utf-8"), "--out", "run"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.path().join("run");
    let csv = std::fs::read_to_string(out.join("credit.csv")).expect("credit.csv");
    let mut logged: std::collections::BTreeMap<(u32, u16, u8), f64> = Default::default();
    for line in csv.lines().skip(1) {
        let c: Vec<&str> = line.split(',').collect();
        let (start, end): (f64, f64) = (c[0].parse().expect("start"), c[1].parse().expect("end"));
        assert!(end >= start, "{line}");
        let key = (
            c[2].parse().expect("node"),
            c[3].parse().expect("port"),
            c[4].parse().expect("vl"),
        );
        *logged.entry(key).or_default() += end - start;
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).expect("summary"))
            .expect("json");
    let credit = &summary["credit"];
    assert_eq!(
        credit["blocked_episodes"].as_u64(),
        Some(csv.lines().count() as u64 - 1)
    );
    let ports = credit["ports"].as_array().expect("credit.ports");
    let mut waited = 0;
    for p in ports {
        let key = (
            p["node"].as_u64().expect("node") as u32,
            p["port"].as_u64().expect("port") as u16,
            p["vl"].as_u64().expect("vl") as u8,
        );
        let blocked = p["blocked_ns"].as_f64().expect("blocked_ns");
        let sum = logged.get(&key).copied().unwrap_or(0.0);
        assert!(
            (sum - blocked).abs() <= 1e-3 * blocked.max(1.0),
            "{key:?}: {sum} vs {blocked}"
        );
        if blocked > 0.0 {
            waited += 1;
        }
    }
    // The 16 senders waited on VL 3 (their flows' priority), and only they; all their
    // traffic went where the switch's VL buffers were filled for: no victim wait.
    assert_eq!(waited, 16);
    assert!(credit["waits"].as_u64().expect("waits") >= 16);
    assert_eq!(credit["victim_waits"].as_u64(), Some(0));
    assert_eq!(logged.len(), 16);
    assert!(logged
        .keys()
        .all(|&(node, _, vl)| (1..=16).contains(&node) && vl == 3));
    for f in ["credit_timeline.png", "credit_timeline.svg"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    assert!(!out.join("pfc_timeline.png").exists());
}

/// Runs `examples/credit/<name>` without plots into `run/` of a fresh directory; returns
/// the directory and its `summary.json`.
fn run_example(name: &str) -> (tempfile::TempDir, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/credit")
        .join(name);
    let o = headroom(
        &[
            "run",
            scenario.to_str().expect("utf-8"),
            "--out",
            "run",
            "--no-plots",
            "--quiet",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    let summary = serde_json::from_slice(
        &std::fs::read(dir.path().join("run/summary.json")).expect("summary"),
    )
    .expect("json");
    (dir, summary)
}

/// Victim waits: on the TCD micro-benchmark's credit fabric, SW0's port to SW1 (P2) waits
/// for credit because SW1's VL buffer filled with the bursts for host 3, while it holds the
/// victim flow to host 2: most of its waits are victim waits (65 of 84; the others end
/// with credit from a buffer that never filled to its last frame), and no other port's is.
#[test]
fn a_port_starved_for_another_egress_waits_as_a_victim() {
    let (_dir, summary) = run_example("tcd-micro-single.toml");
    let ports = summary["credit"]["ports"].as_array().expect("ports");
    let victims: Vec<(u64, u64, u64, u64)> = ports
        .iter()
        .filter(|p| p["victim_waits"].as_u64() > Some(0))
        .map(|p| {
            let n = |k: &str| p[k].as_u64().expect("number");
            (n("node"), n("port"), n("waits"), n("victim_waits"))
        })
        .collect();
    assert_eq!(victims.len(), 1, "{victims:?}");
    let (node, port, waits, victim) = victims[0];
    assert_eq!((node, port), (19, 2), "P2: SW0 towards SW1");
    assert!(
        waits > 10 && victim * 2 > waits && victim <= waits,
        "{victims:?}"
    );
}

/// The shipped mixed fabric (`examples/credit/mixed-fabric.toml`): the credit hosts wait
/// for credit and never see a PAUSE, the PFC side pauses, nothing is dropped.
#[test]
fn the_mixed_fabric_example_holds_each_side_its_own_way() {
    let (dir, s) = run_example("mixed-fabric.toml");
    assert_eq!(s["config"]["flow_control"], "mixed");
    assert_eq!(s["flows"]["finished"], 4);
    assert_eq!(s["drops"]["total"], 0, "{}", s["drops"]);
    let waited: Vec<u64> = s["credit"]["ports"]
        .as_array()
        .expect("credit.ports")
        .iter()
        .filter(|p| p["blocked_ns"].as_f64() > Some(0.0))
        .map(|p| p["node"].as_u64().expect("node"))
        .collect();
    assert_eq!(waited, [0, 1, 2], "the credit hosts wait");
    assert!(s["pfc"]["pause_frames"].as_u64() > Some(0));
    let paused: Vec<u64> = s["pfc"]["ports"]
        .as_array()
        .expect("pfc.ports")
        .iter()
        .filter(|p| p["paused_ns"].as_f64() > Some(0.0))
        .map(|p| p["node"].as_u64().expect("node"))
        .collect();
    assert!(
        paused.iter().all(|n| ![0, 1, 2].contains(n)) && !paused.is_empty(),
        "only PFC transmitters pause: {paused:?}"
    );
    assert!(dir.path().join("run/credit.csv").is_file());
}
