//! TCD's detection micro-benchmarks (`examples/tcd/micro-*.toml`), run through the binary
//! with each detector, and the paper's claims asserted on the burst window (20-26 ms):
//! the root port is congestion, the port it pauses is undetermined without CE marks, plain
//! ECN CE-marks that paused port, and the victim keeps its rate with TCD and is cut
//! without it. With two congestion points, TCD still CE-marks the paused port that is also
//! a root.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Per (node, port) over the burst window: departures, CE, UE, intervals ending
/// undetermined; and the victim's (flow 0) mean sampled rate there.
struct Window {
    ports: BTreeMap<(u32, u16), [u64; 4]>,
    victim_gbps: f64,
    /// Plots written (only the TCD runs draw them).
    plots: Vec<String>,
}

impl Window {
    fn port(&self, node: u32, port: u16) -> [u64; 4] {
        self.ports.get(&(node, port)).copied().unwrap_or_default()
    }
}

/// Runs `example` with `detector` (the example's `[switch.ecn.tcd]` is kept only for the
/// detector it was written for) and reads its outputs.
fn run(example: &str, detector: &str) -> Window {
    let text = std::fs::read_to_string(repo().join("examples").join(example)).expect("example");
    let mut scenario = String::new();
    let mut in_tcd_table = false;
    for line in text.lines() {
        if line.starts_with('[') {
            in_tcd_table = line == "[switch.ecn.tcd]";
        }
        if in_tcd_table && detector != "tcd-released" {
            continue;
        }
        if line.starts_with("detector = ") {
            scenario.push_str(&format!("detector = \"{detector}\"\n"));
        } else {
            scenario.push_str(line);
            scenario.push('\n');
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("scenario.toml");
    std::fs::write(&file, scenario).expect("write scenario");
    let out = dir.path().join("out");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_headroom"));
    cmd.args(["run", "--quiet", "--out"]).arg(&out);
    if detector == "red" {
        cmd.arg("--no-plots");
    }
    let o = cmd.arg(&file).output().expect("the binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let in_window = |t: f64| t > 20e6 && t <= 26e6;
    let marks = std::fs::read_to_string(out.join("marks.csv")).expect("marks.csv");
    let mut ports: BTreeMap<(u32, u16), [u64; 4]> = BTreeMap::new();
    for line in marks.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let t: f64 = f[0].parse().expect("time");
        if !in_window(t) {
            continue;
        }
        let key = (f[1].parse().expect("node"), f[2].parse().expect("port"));
        let e = ports.entry(key).or_default();
        for (i, col) in [5, 6, 7].into_iter().enumerate() {
            e[i] += f[col].parse::<u64>().expect("count");
        }
        e[3] += u64::from(f[8] == "undetermined");
    }
    let rates = std::fs::read_to_string(out.join("rates.csv")).expect("rates.csv");
    let victim: Vec<f64> = rates
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let t: f64 = f[0].parse().ok()?;
            (f[1] == "0" && in_window(t)).then(|| f[2].parse().ok())?
        })
        .collect();
    let plots = std::fs::read_dir(&out)
        .expect("out dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".png"))
        .collect();
    Window {
        ports,
        victim_gbps: victim.iter().sum::<f64>() / victim.len().max(1) as f64,
        plots,
    }
}

fn fraction(x: [u64; 4], i: usize) -> f64 {
    x[i] as f64 / x[0].max(1) as f64
}

#[test]
fn single_congestion_point_tcd_spares_the_paused_port_and_its_victim() {
    // micro-single: SW0 = node 19 (P2 = its port 2, towards SW1), SW1 = node 20 (P3 = its
    // port 2, towards host 3).
    let (p2, p3) = ((19, 2), (20, 2));
    let red = run("tcd/micro-single.toml", "red");
    let released = run("tcd/micro-single.toml", "tcd-released");
    let paper = run("tcd/micro-single.toml", "tcd");
    for (name, w) in [("red", &red), ("tcd-released", &released), ("tcd", &paper)] {
        let root = w.port(p3.0, p3.1);
        assert!(fraction(root, 1) > 0.9, "{name}: P3 CE fraction {root:?}");
        assert_eq!(root[2], 0, "{name}: the root is never undetermined");
    }
    let paused = red.port(p2.0, p2.1);
    assert!(
        fraction(paused, 1) > 0.1,
        "RED CE-marks the paused P2: {paused:?}"
    );
    assert_eq!(paused[2], 0);
    let paused = released.port(p2.0, p2.1);
    assert_eq!(paused[1], 0, "tcd-released: no CE at P2: {paused:?}");
    assert!(
        fraction(paused, 2) > 0.1,
        "tcd-released: P2 marks UE: {paused:?}"
    );
    assert!(paused[3] > 0, "P2 ends intervals undetermined");
    assert!(
        released.plots.iter().any(|p| p == "queue_states.png"),
        "the state timeline is drawn: {:?}",
        released.plots
    );
    // The paper's detector with the derived bound: undetermined at times, fewer CE marks
    // than RED (the bound is shorter than the ON periods the dynamic threshold allows).
    let paused = paper.port(p2.0, p2.1);
    assert!(paused[2] > 0, "tcd: P2 marks UE: {paused:?}");
    assert!(
        fraction(paused, 1) < fraction(red.port(p2.0, p2.1), 1),
        "tcd: fewer CE at P2 than RED"
    );
    assert!(
        released.victim_gbps > 2.0 * red.victim_gbps,
        "the victim keeps its rate with TCD ({:.1} Gb/s) and is cut without it ({:.1} Gb/s)",
        released.victim_gbps,
        red.victim_gbps
    );
}

#[test]
fn on_credit_links_the_port_out_of_credit_is_undetermined() {
    // The same fabric on credit links (tcd.md: "works with both PFC and CBFC"): P2 waits
    // for credit instead of being paused. max(T_on) is the credit update period.
    let (p2, p3) = ((19, 2), (20, 2));
    let red = run("credit/tcd-micro-single.toml", "red");
    let paper = run("credit/tcd-micro-single.toml", "tcd");
    for (name, w) in [("red", &red), ("tcd", &paper)] {
        let root = w.port(p3.0, p3.1);
        assert!(fraction(root, 1) > 0.9, "{name}: P3 CE fraction {root:?}");
        assert_eq!(root[2], 0, "{name}: the root is never undetermined");
    }
    let starved = red.port(p2.0, p2.1);
    assert!(fraction(starved, 1) > 0.05, "RED CE-marks P2: {starved:?}");
    let starved = paper.port(p2.0, p2.1);
    assert_eq!(
        starved[1], 0,
        "tcd: no CE at the credit-starved P2: {starved:?}"
    );
    assert!(
        starved[2] > 0 && starved[3] > 0,
        "tcd: P2 undetermined, UE: {starved:?}"
    );
    assert!(
        paper.victim_gbps > 2.0 * red.victim_gbps,
        "the victim keeps its rate with TCD ({:.1} Gb/s) and is cut without it ({:.1} Gb/s)",
        paper.victim_gbps,
        red.victim_gbps
    );
}

#[test]
fn infiniband_cc_with_tcd_marks_fecn_at_the_root_and_spares_the_victim() {
    // IB CC on the same credit fabric: FECN by queue length (red) or only from a port in
    // the congestion state (tcd). Measured: P2 CE-marks 48 % (red) and 23 % (tcd, which
    // marks 26 % UE); the victim's rate 26.6 and 31.3 Gb/s.
    let (p2, p3) = ((19, 2), (20, 2));
    let red = run("credit/ib-cc-micro-single.toml", "red");
    let tcd = run("credit/ib-cc-micro-single.toml", "tcd");
    for (name, w) in [("red", &red), ("tcd", &tcd)] {
        let root = w.port(p3.0, p3.1);
        assert!(fraction(root, 1) > 0.8, "{name}: FECN at P3 {root:?}");
        assert_eq!(root[2], 0, "{name}: the root is never undetermined");
    }
    let (starved_red, starved_tcd) = (red.port(p2.0, p2.1), tcd.port(p2.0, p2.1));
    assert_eq!(starved_red[2], 0);
    assert!(
        starved_tcd[2] > 0 && starved_tcd[3] > 0,
        "tcd: P2 undetermined: {starved_tcd:?}"
    );
    assert!(
        fraction(starved_tcd, 1) < 0.75 * fraction(starved_red, 1),
        "fewer FECN at P2 with TCD: {starved_tcd:?} vs {starved_red:?}"
    );
    assert!(
        tcd.victim_gbps > 1.1 * red.victim_gbps,
        "the victim's rate: {:.1} Gb/s with TCD, {:.1} without",
        tcd.victim_gbps,
        red.victim_gbps
    );
}

#[test]
fn two_congestion_points_tcd_still_marks_the_paused_root() {
    // micro-multi: SW0 = node 24, SW1 = node 25.
    let (p2, p3) = ((24, 2), (25, 2));
    let red = run("tcd/micro-multi.toml", "red");
    let released = run("tcd/micro-multi.toml", "tcd-released");
    for (name, w) in [("red", &red), ("tcd-released", &released)] {
        assert!(
            fraction(w.port(p3.0, p3.1), 1) > 0.9,
            "{name}: P3 congested"
        );
    }
    let paused_root = released.port(p2.0, p2.1);
    assert!(
        paused_root[1] > 0 && paused_root[2] > 0,
        "tcd-released: P2 is both paused (UE) and a root (CE): {paused_root:?}"
    );
    assert!(fraction(red.port(p2.0, p2.1), 1) > fraction(paused_root, 1));
}

#[test]
fn fct_experiment_with_incasts_runs_both_detectors_to_completion() {
    let out = tempfile::tempdir().expect("tempdir");
    let o = Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args([
            "compare",
            "examples/tcd/fct-ws50-incast.toml",
            "--detector",
            "red,tcd-released",
            "--quiet",
            "--no-plots",
            "--out",
        ])
        .arg(out.path())
        .current_dir(repo())
        .output()
        .expect("the binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("compare.json")).expect("json"))
            .expect("valid json");
    let runs = doc["runs"].as_array().expect("runs");
    let run = |d: &str| {
        runs.iter()
            .find(|r| r["detector"] == d)
            .unwrap_or_else(|| panic!("a run with {d}"))
    };
    let (red, tcd) = (run("red"), run("tcd-released"));
    for r in [red, tcd] {
        assert_eq!(r["flows_finished"], r["flows"], "every flow finishes: {r}");
        assert_eq!(r["lossless_drops"], 0);
        assert!(
            r["queue_pauses"].as_u64().expect("pauses") > 1000,
            "incasts pause"
        );
    }
    // The incasts' PFC pauses aggregation ports: TCD marks UE there instead of CE.
    let marks = |r: &serde_json::Value, k: &str| r["marking"][k].as_u64().expect("count");
    assert_eq!(marks(red, "ue_marked"), 0);
    assert!(marks(tcd, "ue_marked") > 0);
    assert!(marks(tcd, "ce_marked") < marks(red, "ce_marked"));
    assert!(
        tcd["marking"]["undetermined_queues"]
            .as_u64()
            .expect("count")
            > 0
    );
}
