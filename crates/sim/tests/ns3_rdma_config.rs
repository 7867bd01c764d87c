//! `ns3_rdma_config`: the TCD authors' configs (copied to `examples/tcd/ns3-rdma/`) load
//! with the modelling of the hand-written `examples/tcd/micro-single.toml`, and bad inputs
//! are errors naming the file, the line and the key.

use headroom_mech::cc::UeReaction;
use headroom_mech::tcd::ReleasedConfig;
use headroom_mech::units::Time;
use headroom_sim::config::{CcConfig, CnpMode, DetectorConfig};
use headroom_sim::ns3_rdma_config::{self, Ns3RdmaConfigError};
use headroom_sim::scenario;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tcd")
}

fn load(rel: &str) -> ns3_rdma_config::Ns3RdmaRun {
    let path = examples().join("ns3-rdma").join(rel);
    ns3_rdma_config::load(&path).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn the_authors_micro_configs_load_as_the_hand_translation() {
    let ecn = load("micro/config_single_ecn.txt");
    let tcd = load("micro/config_single_tcd.txt");
    let example = scenario::load(&examples().join("micro-single.toml")).expect("example");
    let want = &example.config;
    for run in [&ecn, &tcd] {
        let c = &run.config;
        assert_eq!(c.flows.len(), 282, "only the declared flows are read");
        assert_eq!(c.seed, 7);
        assert_eq!(c.stop_time, Some(Time::from_us(2_045_000)));
        // 400,000,000 bytes: 400,000 packets of 976 data bytes.
        assert_eq!(c.flows[0].size, 400_000 * 976);
        assert_eq!(c.flows[0].start, Time::from_ms(2_000));
        // 64,000 bytes: 64 packets.
        assert_eq!(c.flows[2].size, 64 * 976);
        let (s, w) = (&c.switch, &want.switch);
        assert_eq!(s.buffer_bytes, w.buffer_bytes);
        assert_eq!(s.cell_bytes, w.cell_bytes);
        assert_eq!(s.alpha, w.alpha);
        assert_eq!(s.xon_offset, w.xon_offset);
        assert_eq!(s.lossless, w.lossless);
        assert_eq!(s.pfc, w.pfc);
        assert_eq!(s.headroom, w.headroom);
        assert_eq!(s.ecn.enabled, w.ecn.enabled);
        assert_eq!(s.ecn.point, w.ecn.point);
        assert_eq!(s.ecn.red, w.ecn.red);
        let (h, w) = (&c.host, &want.host);
        assert_eq!(h.mtu_payload, w.mtu_payload);
        assert_eq!(h.header_bytes, w.header_bytes);
        assert_eq!(h.cnp_interval, w.cnp_interval);
        assert_eq!(h.cnp_mode, CnpMode::Poll);
        assert_eq!(h.cnp_mode, w.cnp_mode);
        // L2_ACK_INTERVAL 256 packets.
        assert_eq!(h.ack_interval, 256 * 976);
        let (CcConfig::Dcqcn(got), CcConfig::Dcqcn(paper)) = (&h.cc, &w.cc) else {
            panic!("DCQCN expected: {:?}", h.cc);
        };
        assert_eq!(
            got.clone(),
            headroom_mech::cc::DcqcnConfig {
                on_ue: got.on_ue,
                ..paper.clone()
            }
        );
        // ns-3's point-to-point links: no preamble or gap.
        assert_eq!(c.link.frame_overhead, 0);
    }
    assert_eq!(ecn.config.switch.ecn.detector, DetectorConfig::Red);
    assert_eq!(
        tcd.config.switch.ecn.detector,
        DetectorConfig::TcdReleased(ReleasedConfig {
            interval: Time::from_us(97),
            ..ReleasedConfig::default()
        })
    );
    assert_eq!(
        tcd.config.switch.ecn.detector,
        example.config.switch.ecn.detector
    );
    let ue = |r: &ns3_rdma_config::Ns3RdmaRun| match &r.config.host.cc {
        CcConfig::Dcqcn(d) => d.on_ue,
        other => panic!("{other:?}"),
    };
    assert_eq!(ue(&ecn), UeReaction::Ignore);
    assert_eq!(ue(&tcd), UeReaction::HoldRestartAlpha);
    assert!(ecn
        .notes
        .iter()
        .any(|n| n.contains("USE_DYNAMIC_PFC_THRESHOLD 0")));
    assert!(ecn.notes.iter().any(|n| n.contains("not read")));
    assert_eq!(ecn.fct_output, Some(PathBuf::from("result/fct.txt")));
}

#[test]
fn the_authors_fct_configs_load() {
    for (file, tcd) in [
        ("fct/config_ws60_ecn.txt", false),
        ("fct/config_ws60_tcd.txt", true),
    ] {
        let run = load(file);
        let c = &run.config;
        assert_eq!(c.flows.len(), 874, "{file}");
        assert_eq!(c.topology.nodes.len(), 35);
        assert_eq!(c.seed, 6);
        assert_eq!(c.stop_time, Some(Time::from_ms(2_080)));
        assert_eq!(c.switch.pfc.quanta, 391, "5 us at 40 Gb/s");
        assert_eq!(
            matches!(c.switch.ecn.detector, DetectorConfig::TcdReleased(_)),
            tcd
        );
        // 75962 bytes: 76 packets; 2340 bytes: 3 packets.
        assert!(c.flows.iter().any(|f| f.size == 76 * 976));
        assert!(c.flows.iter().any(|f| f.size == 3 * 976));
        assert!(c.flows.windows(2).all(|w| w[0].start <= w[1].start));
    }
}

/// A directory with the micro topology and flows and a config made of `lines`.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in ["topology_single.txt", "flows_burst.txt"] {
            std::fs::copy(
                examples().join("ns3-rdma/micro").join(f),
                dir.path().join(f),
            )
            .expect("copy");
        }
        Case { dir }
    }

    fn base() -> String {
        std::fs::read_to_string(examples().join("ns3-rdma/micro/config_single_tcd.txt"))
            .expect("config")
    }

    /// Loads the base config with `key`'s line replaced by `line` (or appended).
    fn with(&self, key: &str, line: &str) -> (PathBuf, Result<(), Ns3RdmaConfigError>) {
        let mut text = String::new();
        let mut found = false;
        for l in Self::base().lines() {
            if l.split_whitespace().next() == Some(key) {
                text.push_str(line);
                found = true;
            } else {
                text.push_str(l);
            }
            text.push('\n');
        }
        if !found {
            text.push_str(line);
            text.push('\n');
        }
        let path = self.dir.path().join("config.txt");
        std::fs::write(&path, text).expect("write");
        (path.clone(), ns3_rdma_config::load(&path).map(|_| ()))
    }
}

fn line_of(path: &Path, key: &str) -> usize {
    std::fs::read_to_string(path)
        .expect("config")
        .lines()
        .position(|l| l.split_whitespace().next() == Some(key))
        .map_or(0, |i| i + 1)
}

#[test]
fn bad_keys_are_errors_naming_file_line_and_key() {
    let case = Case::new();
    for (key, line, wanted) in [
        (
            "ROOTECN_INTERVAL",
            "ROOTECN_INTERVAL 0",
            "at least 1 microsecond",
        ),
        ("ENABLE_NPECN", "ENABLE_NPECN 1", "not modelled"),
        ("PACKET_LEVEL_ECMP", "PACKET_LEVEL_ECMP 1", "not modelled"),
        ("FROBNICATE", "FROBNICATE 3", "unknown key"),
        ("KMAX", "KMAX 2x0", "`2x0` is not an integer"),
        ("PAUSE_TIME", "PAUSE_TIME 5.5", "not an integer"),
        ("RATE_AI", "RATE_AI fast", "not a rate"),
        ("ENABLE_ROOTECN", "ENABLE_ROOTECN 2", "expected 0 or 1"),
        (
            "TOPOLOGY_FILE",
            "TOPOLOGY_FILE no_such_topology.txt",
            "no_such_topology.txt",
        ),
    ] {
        let (path, got) = case.with(key, line);
        let e = got.expect_err(line);
        let msg = e.to_string();
        let Ns3RdmaConfigError::Invalid {
            line: l, key: k, ..
        } = &e
        else {
            panic!("{line}: {e:?}");
        };
        assert_eq!(k, key, "{msg}");
        assert_eq!(*l, line_of(&path, key), "{msg}");
        assert!(
            msg.starts_with(&format!("{}:{l}: {key}: ", path.display())),
            "{msg}"
        );
        assert!(msg.contains(wanted), "{line}: {msg}");
    }
    // A required key that is missing: line 0, the file alone.
    let (path, got) = case.with("RP_TIMER", "");
    let msg = got.expect_err("missing RP_TIMER").to_string();
    assert!(
        msg.starts_with(&format!("{}: RP_TIMER: missing", path.display())),
        "{msg}"
    );
}

#[test]
fn flow_file_errors_name_the_flow_file_and_its_line() {
    let case = Case::new();
    let flows = case.dir.path().join("flows_burst.txt");
    let text = std::fs::read_to_string(&flows).expect("flows");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[4] = "7 5 3 64000 2.020000";
    std::fs::write(case.dir.path().join("bad_flows.txt"), lines.join("\n")).expect("write");
    let (path, got) = case.with("FLOW_FILE", "FLOW_FILE bad_flows.txt");
    let msg = got.expect_err("5 fields").to_string();
    assert!(
        msg.starts_with(&format!(
            "{}:{}: FLOW_FILE: ",
            path.display(),
            line_of(&path, "FLOW_FILE")
        )),
        "{msg}"
    );
    assert!(msg.contains("bad_flows.txt:5: "), "{msg}");
    assert!(msg.contains("found 5 fields"), "{msg}");

    lines[4] = "7 0 3 64000 2.020000 3";
    std::fs::write(case.dir.path().join("bad_flows.txt"), lines.join("\n")).expect("write");
    let (_, got) = case.with("FLOW_FILE", "FLOW_FILE bad_flows.txt");
    let msg = got.expect_err("switch").to_string();
    assert!(msg.contains("bad_flows.txt:5: dst 0 is a switch"), "{msg}");
}

#[test]
fn tcp_flows_are_refused_and_placeholders_accepted() {
    let case = Case::new();
    std::fs::write(case.dir.path().join("tcp0.txt"), "0\n").expect("write");
    let (_, got) = case.with("TCP_FLOW_FILE", "TCP_FLOW_FILE tcp0.txt");
    got.expect("an empty TCP flow file is fine");
    std::fs::write(case.dir.path().join("tcp1.txt"), "1\n2 4 3 1000 2 3\n").expect("write");
    let (_, got) = case.with("TCP_FLOW_FILE", "TCP_FLOW_FILE tcp1.txt");
    let msg = got.expect_err("TCP flows").to_string();
    assert!(
        msg.contains("TCP_FLOW_FILE: ") && msg.contains("tcp1.txt:1: "),
        "{msg}"
    );
}

#[test]
fn small_flows_and_payload_sizes_follow_the_simulators_packets() {
    let case = Case::new();
    std::fs::write(
        case.dir.path().join("small.txt"),
        "3\n2 4 3 500 2 3\n2 4 3 1000 2.1 3\n2 4 3 1001 2.2 3\n",
    )
    .expect("write");
    let (path, _) = case.with("FLOW_FILE", "FLOW_FILE small.txt");
    let run = ns3_rdma_config::load(&path).expect("loads");
    let sizes: Vec<u64> = run.config.flows.iter().map(|f| f.size).collect();
    assert_eq!(sizes, [476, 976, 2 * 976]);
    std::fs::write(case.dir.path().join("tiny.txt"), "1\n2 4 3 24 2 3\n").expect("write");
    let (_, got) = case.with("FLOW_FILE", "FLOW_FILE tiny.txt");
    assert!(got
        .expect_err("24 bytes")
        .to_string()
        .contains("tiny.txt:2: "));
}
