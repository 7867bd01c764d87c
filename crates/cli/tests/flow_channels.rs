//! The flow-channel patent's claims about arbitration, through the binary
//! (flow-channels.md, "what the project must show"):
//! - Fig. 6A (`examples/flow-channels/fig6a-chain.toml`): eleven sources incast through a
//!   chain of four switches with fan-ins 3, 4, 4 and 3. Round-robin over input ports gives
//!   each source the product of its shares along the path (1/3 for J and K down to 1/144
//!   for A, B, C), within 5 %; round-robin over flows gives every source an equal share
//!   (Jain's index of the delivered bytes at least 0.99).
//! - Application fairness (`examples/flow-channels/app-fairness.toml`): an application with
//!   one flow against one with a hundred at one switch output. Round-robin over flows gives
//!   the first about 1 %, round-robin over applications about 50 %.
//! - Congestion isolation (`examples/flow-channels/incast-isolation.toml`): a 7-to-1 incast
//!   and two victims, one sharing its fabric links, one its fabric links and a sender's
//!   host link. On PFC both wait with the incast (slowdowns above 3); on flow channels with
//!   endpoint congestion management and FGFC both run at about line rate (below 1.05 and
//!   1.25), no link is paused, and the incast finishes no later.
//! - GPCNeT's congestion impact (`examples/flow-channels/congestion-impact-sweep.toml`):
//!   a victim of small and large messages on every fifth host, beside an incast of every
//!   other host to one endpoint, on a dragonfly and a fat tree. On flow channels the
//!   victim's latency (mean and p99) and bandwidth move by less than 10 %; on PFC (DCQCN)
//!   and credits (InfiniBand CC) its p99 latency grows more than tenfold.
//! - Fabric-link congestion (`examples/flow-channels/fabric-link.toml`): four flows congest
//!   a spine's downlink, a victim shares an uplink with two of them. On PFC the spine
//!   pauses the uplinks and the victim waits (slowdown above 2.8); with hop-by-hop credits
//!   (and FGFC) the congesting flows are metered, no link is paused, and the victim gets
//!   its share of the uplink (below 2).
//! - A bad arbitration name, or an application id above 127, is refused with the field
//!   named, exit code 2; application 127 (reserved) becomes 126 with a warning.

mod common;

use common::{headroom, stderr};
use std::path::Path;

/// Each source's share of the destination's link under port-fair arbitration: the product
/// of 1 / fan-in over the switches it crosses (A, B, C: S1..S4; D, E, F: S2..S4; G, H, I:
/// S3, S4; J, K: S4).
const PORT_FAIR_SHARES: [f64; 11] = [
    1.0 / 144.0,
    1.0 / 144.0,
    1.0 / 144.0,
    1.0 / 48.0,
    1.0 / 48.0,
    1.0 / 48.0,
    1.0 / 12.0,
    1.0 / 12.0,
    1.0 / 12.0,
    1.0 / 3.0,
    1.0 / 3.0,
];

/// `delivered_bytes` of every flow in `flows.csv`, by flow id.
fn delivered(flows_csv: &Path) -> Vec<f64> {
    column(flows_csv, "delivered_bytes")
}

/// Column `name` of every flow in `flows.csv`, in file order (by flow id).
fn column(flows_csv: &Path, name: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(flows_csv).expect("flows.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = header
        .iter()
        .position(|&c| c == name)
        .unwrap_or_else(|| panic!("a {name} column"));
    lines
        .map(|l| {
            l.split(',')
                .nth(col)
                .expect("column")
                .parse()
                .expect("a number")
        })
        .collect()
}

/// `summary.json` of the flow-channel run of a `compare` into `dir`, after checking that
/// it paused no link.
fn flow_channel_summary(dir: &tempfile::TempDir) -> serde_json::Value {
    let summary: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("cmp/flow-channels/summary.json")).expect("summary"),
    )
    .expect("valid json");
    assert_eq!(
        summary["pfc"]["pause_frames"].as_u64(),
        Some(0),
        "no link is paused"
    );
    summary
}

/// Runs `examples/flow-channels/<example>` with `compare`'s `option` set to `values` (each
/// of a comma-separated list) into `cmp/` of a fresh directory, which it returns.
fn compare(example: &str, option: &str, values: &str) -> tempfile::TempDir {
    let example = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/flow-channels")
        .join(example);
    let dir = tempfile::tempdir().expect("tempdir");
    let o = headroom(
        &[
            "compare",
            example.to_str().expect("utf-8 path"),
            option,
            values,
            "--no-plots",
            "--quiet",
            "--out",
            "cmp",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    dir
}

#[test]
fn fig6a_port_fair_shares_multiply_along_the_chain_and_flow_fair_shares_are_equal() {
    let dir = compare("fig6a-chain.toml", "--arbitration", "input-port,flow");

    let port = delivered(&dir.path().join("cmp/input-port/flows.csv"));
    let total: f64 = port.iter().sum();
    assert!(total > 0.0, "nothing delivered");
    for (i, (&bytes, &expected)) in port.iter().zip(&PORT_FAIR_SHARES).enumerate() {
        let share = bytes / total;
        assert!(
            (share / expected - 1.0).abs() < 0.05,
            "source {i}: share {share:.5}, product of port shares {expected:.5}"
        );
    }
    // J (or K) against A, B, C: the patent's factor of 48.
    let ratio = port[9] / port[0];
    assert!((ratio / 48.0 - 1.0).abs() < 0.05, "J / A = {ratio:.1}");

    let flow = delivered(&dir.path().join("cmp/flow/flows.csv"));
    let sum: f64 = flow.iter().sum();
    let squares: f64 = flow.iter().map(|x| x * x).sum();
    let jain = sum * sum / (flow.len() as f64 * squares);
    assert!(jain >= 0.99, "Jain's index {jain:.4} of {flow:?}");

    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("cmp/compare.json")).expect("json"))
            .expect("valid json");
    let runs = doc["runs"].as_array().expect("runs");
    let jain_of = |name: &str| {
        runs.iter()
            .find(|r| r["arbitration"] == name)
            .and_then(|r| r["delivered_jain"].as_f64())
            .unwrap_or_else(|| panic!("a {name} run with delivered_jain"))
    };
    assert!((jain_of("flow") - jain).abs() < 1e-9);
    assert!(
        jain_of("input-port") < 0.5,
        "port-fair shares are far from equal"
    );
    for r in runs {
        assert_eq!(r["lossless_drops"], 0, "{r}");
    }
}

#[test]
fn an_incast_to_one_endpoint_does_not_slow_the_victim_on_flow_channels_only() {
    let sweep = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/flow-channels/congestion-impact-sweep.toml");
    let dir = tempfile::tempdir().expect("tempdir");
    let o = headroom(
        &[
            "sweep",
            sweep.to_str().expect("utf-8 path"),
            "--out",
            "impact",
            "--no-plots",
            "--quiet",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(
        &std::fs::read(dir.path().join("impact/results.json")).expect("results.json"),
    )
    .expect("valid json");
    assert_eq!(rows.len(), 24, "2 topologies x 3 fabrics x 4 congestors");
    for r in &rows {
        assert_eq!(r["run.stop_reason"], "all_flows_done", "{r}");
        assert_eq!(r["drops.lossless"], 0, "{r}");
    }
    // Impact as GPCNeT reports it: with the congestor over without (bandwidth: without
    // over with), so 1 is none.
    let impact = |topology: &str, fabric: &str| {
        let r = rows
            .iter()
            .find(|r| {
                r["topology"] == topology && r["fabric"] == fabric && r["congestor"] == "incast"
            })
            .unwrap_or_else(|| panic!("a {topology} {fabric} incast point"));
        let ratio = |key: &str| {
            r[format!("fct.by_workload[{key}/none")]
                .as_f64()
                .unwrap_or_else(|| panic!("{key} in {r}"))
        };
        [
            ratio("0].stats.mean_fct_ns"),
            ratio("0].stats.fct_p99_ns"),
            1.0 / ratio("1].stats.mean_goodput_gbps"),
        ]
    };
    for topology in ["dragonfly", "fat-tree"] {
        let [mean, p99, bandwidth] = impact(topology, "flow-channels");
        assert!(
            mean < 1.1 && p99 < 1.1 && bandwidth < 1.1,
            "{topology}, flow channels: latency {mean:.2} / {p99:.2}, bandwidth {bandwidth:.2}"
        );
        for fabric in ["pfc", "credit"] {
            let [_, p99, _] = impact(topology, fabric);
            assert!(
                p99 > 10.0,
                "{topology}, {fabric}: p99 latency impact {p99:.1}"
            );
        }
    }
}

#[test]
fn endpoint_congestion_and_fgfc_isolate_victims_that_pfc_does_not() {
    let dir = compare(
        "incast-isolation.toml",
        "--flow-control",
        "pfc,flow-channels",
    );
    // Flows 0-6 are the incast, flows 7 and 8 the victims.
    let pfc = column(&dir.path().join("cmp/pfc/flows.csv"), "slowdown");
    let channels = column(&dir.path().join("cmp/flow-channels/flows.csv"), "slowdown");
    assert_eq!((pfc.len(), channels.len()), (9, 9));
    for v in [7, 8] {
        assert!(
            pfc[v] > 3.0,
            "on PFC victim {v} waits with the incast: {}",
            pfc[v]
        );
    }
    assert!(
        channels[7] < 1.05,
        "on flow channels it does not: {}",
        channels[7]
    );
    assert!(
        channels[8] < 1.25,
        "nor does the one sharing a host link with the incast: {}",
        channels[8]
    );
    let worst = |s: &[f64]| s[..7].iter().copied().fold(0.0, f64::max);
    assert!(
        worst(&channels) <= worst(&pfc) * 1.01,
        "the incast finishes no later: {} vs {}",
        worst(&channels),
        worst(&pfc)
    );
    let summary = flow_channel_summary(&dir);
    let endpoint = &summary["flow_channels"]["endpoint"];
    assert!(endpoint["endpoint_acks"].as_u64() > Some(0), "{endpoint}");
    assert!(
        endpoint["flow_limit_holds"].as_u64() > Some(0),
        "{endpoint}"
    );
    let fgfc = &summary["flow_channels"]["fgfc"];
    assert!(fgfc["pause_frames"].as_u64() > Some(0), "{fgfc}");
    assert!(fgfc["resume_frames"].as_u64() > Some(0), "{fgfc}");
}

#[test]
fn hop_by_hop_credits_meter_the_flows_of_a_congested_fabric_link() {
    let dir = compare("fabric-link.toml", "--flow-control", "pfc,flow-channels");
    // Flows 0-3 congest the spine's link to leaf 2, flow 4 is the victim.
    let pfc = column(&dir.path().join("cmp/pfc/flows.csv"), "slowdown");
    let channels = column(&dir.path().join("cmp/flow-channels/flows.csv"), "slowdown");
    assert!(
        pfc[4] > 2.8,
        "on PFC the victim waits behind paused uplinks: {}",
        pfc[4]
    );
    assert!(
        channels[4] < 2.0,
        "metered, it gets its share: {}",
        channels[4]
    );
    let worst = |s: &[f64]| s[..4].iter().copied().fold(0.0, f64::max);
    assert!(worst(&channels) <= worst(&pfc) * 1.01);
    let summary = flow_channel_summary(&dir);
    let hop = &summary["flow_channels"]["hop_credits"];
    assert_eq!(hop["metered_flows"].as_u64(), Some(4), "{hop}");
    assert!(hop["headroom_acks"].as_u64() > Some(4), "{hop}");
}

#[test]
fn application_arbitration_shares_by_application_not_by_flow_count() {
    let dir = compare(
        "app-fairness.toml",
        "--arbitration",
        "flow,input-port,application",
    );
    // Flow 0 is application 1's only flow (host 0 starts first, at 0 ns).
    let share_of_x = |arbitration: &str| {
        let d = delivered(&dir.path().join(format!("cmp/{arbitration}/flows.csv")));
        assert_eq!(d.len(), 101);
        d[0] / d.iter().sum::<f64>()
    };
    let flow = share_of_x("flow");
    assert!(
        (flow - 1.0 / 101.0).abs() < 0.002,
        "flow round-robin: {flow:.4}"
    );
    let port = share_of_x("input-port");
    assert!(
        (port - 0.2).abs() < 0.01,
        "input-port round-robin: {port:.4}"
    );
    let app = share_of_x("application");
    assert!(
        (app - 0.5).abs() < 0.01,
        "application round-robin: {app:.4}"
    );
    // summary.json says the same per application.
    let summary = std::fs::read_to_string(dir.path().join("cmp/application/summary.json"))
        .expect("summary.json");
    let summary: serde_json::Value = serde_json::from_str(&summary).expect("JSON");
    let apps = summary["applications"].as_array().expect("applications");
    let ids: Vec<u64> = apps.iter().filter_map(|a| a["app"].as_u64()).collect();
    let flows: Vec<u64> = apps.iter().filter_map(|a| a["flows"].as_u64()).collect();
    assert_eq!((ids, flows), (vec![1, 2], vec![1, 100]));
    let share = apps[0]["share"].as_f64().expect("share");
    assert!((share - app).abs() < 1e-9, "{share} against {app}");
}

#[test]
fn an_unknown_arbitration_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = "name = \"bad-arbitration\"\n\
                    [topology]\nkind = \"star\"\nhosts = 2\nrate = \"100Gbps\"\n\
                    [switch.scheduler]\narbitration = \"per-packet\"\n\
                    [[workload]]\nkind = \"flows\"\n\
                    [[workload.flow]]\nsrc = 0\ndst = 1\nsize = \"10KB\"\n";
    std::fs::write(dir.path().join("bad.toml"), scenario).expect("write");
    let o = headroom(&["run", "bad.toml", "--no-plots"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("arbitration"), "{err}");
    assert!(err.contains("per-packet"), "{err}");
    assert!(err.contains("input-port"), "names the choices: {err}");

    let good = scenario.replace("per-packet", "flow");
    std::fs::write(dir.path().join("good.toml"), good).expect("write");
    let o = headroom(
        &["compare", "good.toml", "--arbitration", "fifo,round-robin"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("--arbitration") && err.contains("round-robin"),
        "{err}"
    );
}

#[test]
fn application_ids_are_checked_and_127_is_reserved() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scenario = |app: u32| {
        format!(
            "name = \"apps\"\n\
             [topology]\nkind = \"star\"\nhosts = 2\nrate = \"100Gbps\"\n\
             [[workload]]\nkind = \"flows\"\napp = {app}\n\
             [[workload.flow]]\nsrc = 0\ndst = 1\nsize = \"10KB\"\n"
        )
    };
    std::fs::write(dir.path().join("big.toml"), scenario(128)).expect("write");
    let o = headroom(&["run", "big.toml", "--no-plots"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("workload[0].app"), "{err}");

    std::fs::write(dir.path().join("reserved.toml"), scenario(127)).expect("write");
    let o = headroom(
        &["run", "reserved.toml", "--no-plots", "--out", "r"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("workload[0].app") && err.contains("127") && err.contains("126"),
        "{err}"
    );
}
