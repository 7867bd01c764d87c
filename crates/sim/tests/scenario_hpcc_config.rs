//! ns-3 HPCC simulator config files (`mix/config.txt`): a full DCQCN config on the
//! reference 320-host fat tree, and one test per error case.

use headroom_mech::buffer::mmu::Reservation;
use headroom_mech::cc::DcqcnVariant;
use headroom_mech::units::{Rate, Time};
use headroom_sim::config::{AlphaPolicy, CcConfig, HeadroomSizing};
use headroom_sim::hpcc_config::{self, HpccConfigError};
use std::path::{Path, PathBuf};

fn topology_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/topologies/hpcc_fat_320.txt")
}

struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("flow.txt"),
            "3\n0 17 3 100 1000000 2.000000000\n5 300 3 100 64000 2.000001000\n319 0 3 101 5000 2.000000500\n",
        )
        .expect("write flows");
        Setup { dir }
    }

    /// A config like the HPCC repository's `mix/config.txt` for DCQCN, with absolute paths.
    fn config(&self) -> String {
        format!(
            "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\n\nPACKET_PAYLOAD_SIZE 1000\n\n\
             TOPOLOGY_FILE {topo}\nFLOW_FILE {flow}\nTRACE_FILE mix/trace.txt\n\
             TRACE_OUTPUT_FILE mix/mix.tr\nFCT_OUTPUT_FILE {fct}\nPFC_OUTPUT_FILE mix/pfc.txt\n\n\
             SIMULATOR_STOP_TIME 4.00\n\nCC_MODE 1\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\n\
             CLAMP_TARGET_RATE 0\nRP_TIMER 900 \nEWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\n\
             RATE_AI 50Mb/s\nRATE_HAI 100Mb/s\nMIN_RATE 100Mb/s\nDCTCP_RATE_AI 1000Mb/s\n\n\
             ERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\n\n\
             HAS_WIN 0\nGLOBAL_T 1\nVAR_WIN 0\nFAST_REACT 1\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\n\
             MULTI_RATE 1\nSAMPLE_FEEDBACK 0\n\nRATE_BOUND 1\n\nACK_HIGH_PRIO 1\n\nLINK_DOWN 0 0 0\n\n\
             ENABLE_TRACE 0\n\n\
             KMAX_MAP 2 100000000000 1600 400000000000 6400\n\
             KMIN_MAP 2 100000000000 400 400000000000 1600\n\
             PMAX_MAP 2 100000000000 0.2 400000000000 0.2\n\
             BUFFER_SIZE 32\nQLEN_MON_FILE mix/qlen.txt\nQLEN_MON_START 2000000000\nQLEN_MON_END 2010000000\n",
            topo = topology_file().display(),
            flow = self.dir.path().join("flow.txt").display(),
            fct = self.dir.path().join("fct.txt").display(),
        )
    }

    fn parse(&self, text: &str) -> Result<hpcc_config::HpccRun, HpccConfigError> {
        let path = self.dir.path().join("config.txt");
        std::fs::write(&path, text).expect("write config");
        hpcc_config::load(&path)
    }

    /// Parses `text`, expecting an error at `key` on `line` whose reason contains `reason`.
    fn fails(&self, text: &str, key: &str, line: usize, reason: &str) {
        match self.parse(text) {
            Err(HpccConfigError::Invalid {
                path,
                line: l,
                key: k,
                reason: r,
            }) => {
                assert_eq!(path, self.dir.path().join("config.txt"));
                assert_eq!((k.as_str(), l), (key, line), "{r}");
                assert!(r.contains(reason), "reason `{r}` lacks `{reason}`");
            }
            Err(e) => panic!("expected an Invalid error, got {e}"),
            Ok(_) => panic!("expected an error at {key}"),
        }
    }
}

fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.split_whitespace().next() == Some(key))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{key} not in config"))
}

#[test]
fn parses_dcqcn_config_on_fat_tree() {
    let s = Setup::new();
    let run = s.parse(&s.config()).unwrap_or_else(|e| panic!("{e}"));
    let c = &run.config;
    assert_eq!(c.topology.len(), 376);
    assert_eq!(c.topology.hosts().len(), 320);
    assert_eq!(c.flows.len(), 3);
    assert_eq!(c.flows[1].src.0, 319, "sorted by start");
    assert!(c.flows.iter().all(|f| f.prio == 3));
    assert_eq!(c.stop_time, Some(Time::from_ms(4000)));
    assert_eq!(c.link.frame_overhead, 0);

    let sw = &c.switch;
    assert_eq!(sw.buffer_bytes, 32 * 1024 * 1024);
    assert_eq!(sw.private_bytes, 4096);
    assert_eq!(sw.headroom, HeadroomSizing::HpccCompat);
    assert_eq!(sw.reservation, Reservation::PerPort);
    assert_eq!(sw.xon_offset, 3072);
    match sw.alpha {
        AlphaPolicy::ScaledByRate { base, nic_rate } => {
            assert_eq!(base.value(), 0.125);
            assert_eq!(nic_rate, Rate::from_gbps(100));
        }
        ref other => panic!("{other:?}"),
    }
    // 400G ports get alpha 1/2, like the simulator's pfc_a_shift.
    assert_eq!(sw.alpha.for_rate(Rate::from_gbps(400)).value(), 0.5);
    assert!(sw.pfc.send_resume);
    assert!(sw.ecn.enabled);
    assert_eq!(sw.ecn.by_rate.len(), 2);
    let red = sw.ecn.red_for(Rate::from_gbps(400));
    assert_eq!((red.kmin, red.kmax, red.pmax), (1_600_000, 6_400_000, 0.2));
    // ACK_HIGH_PRIO 1: ACKs in the data class at switches (the simulator's switches never
    // prioritize them), held at the NIC only by class 0, which nothing pauses.
    assert_eq!(c.host.ack_prio, 3);
    assert_eq!(c.host.ack_pause_class, 0);
    assert_eq!(sw.scheduler.strict, 0);
    assert_eq!(sw.lossless, 0xFE);

    let h = &c.host;
    assert_eq!(h.mtu_payload, 1000);
    assert_eq!(h.ack_interval, 1);
    assert_eq!(h.cnp_interval, Time::ZERO);
    assert!(h.pacing);
    let CcConfig::Dcqcn(d) = &h.cc else {
        panic!("dcqcn")
    };
    assert_eq!(d.variant, DcqcnVariant::Mellanox);
    assert_eq!(d.alpha_resume_interval, Time::from_us(1));
    assert_eq!(d.rate_decrease_interval, Time::from_us(4));
    assert_eq!(d.rp_timer, Time::from_us(900));
    assert_eq!(d.g, 0.00390625);
    assert_eq!(d.fast_recovery_times, 1);
    assert_eq!(d.rate_ai, Rate::from_mbps(50));
    assert_eq!(d.rate_hai, Rate::from_mbps(100));
    assert_eq!(d.min_rate, Rate::from_mbps(100));
    assert!(!d.clamp_target_rate);

    assert_eq!(run.fct_output, Some(s.dir.path().join("fct.txt")));
    assert_eq!(run.pfc_output, Some(PathBuf::from("mix/pfc.txt")));
    for key in [
        "QLEN_MON_FILE",
        "TRACE_FILE",
        "U_TARGET",
        "DCTCP_RATE_AI",
        "L2_CHUNK_SIZE",
    ] {
        assert!(
            run.notes.iter().any(|n| n.starts_with(key)),
            "no note for {key}: {:?}",
            run.notes
        );
    }
}

#[test]
fn ack_priority_and_error_rate() {
    let s = Setup::new();
    let text = s
        .config()
        .replace("ACK_HIGH_PRIO 1", "ACK_HIGH_PRIO 0")
        .replace("ERROR_RATE_PER_LINK 0.0000", "ERROR_RATE_PER_LINK 0.001")
        .replace("RATE_BOUND 1", "RATE_BOUND 0")
        .replace("ENABLE_QCN 1", "ENABLE_QCN 0");
    let run = s.parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.config.host.ack_prio, 3);
    assert_ne!(run.config.switch.lossless & (1 << 7), 0);
    assert!(!run.config.host.pacing);
    assert!(!run.config.switch.ecn.enabled);
    assert!(run
        .config
        .topology
        .links
        .iter()
        .all(|l| l.error_rate == 0.001));
}

#[test]
fn unknown_key() {
    let s = Setup::new();
    let text = s
        .config()
        .replace("BUFFER_SIZE 32\n", "BUFFER_SIZE 32\nBUFFER_SIZZE 32\n");
    s.fails(
        &text,
        "BUFFER_SIZZE",
        line_of(&text, "BUFFER_SIZZE"),
        "unknown key",
    );
}

#[test]
fn cc_mode_10_and_unknown_modes() {
    let s = Setup::new();
    let text = s.config().replace("CC_MODE 1", "CC_MODE 10");
    s.fails(&text, "CC_MODE", line_of(&text, "CC_MODE"), "HPCC-PINT");
    let text = s.config().replace("CC_MODE 1", "CC_MODE 2");
    s.fails(
        &text,
        "CC_MODE",
        line_of(&text, "CC_MODE"),
        "not a mode of the simulator",
    );
}

#[test]
fn every_supported_mode_loads_its_algorithm() {
    let s = Setup::new();
    for (mode, name) in [(1, "dcqcn"), (3, "hpcc"), (7, "timely"), (8, "dctcp")] {
        let text = s
            .config()
            .replace("CC_MODE 1", &format!("CC_MODE {mode}"))
            .replace("MULTI_RATE 1", "MULTI_RATE 0");
        let run = s
            .parse(&text)
            .unwrap_or_else(|e| panic!("CC_MODE {mode}: {e}"));
        assert_eq!(run.config.host.cc.name(), name);
    }
}

#[test]
fn windows_follow_has_win_var_win_and_global_t() {
    let s = Setup::new();
    let text = s
        .config()
        .replace("HAS_WIN 0", "HAS_WIN 1")
        .replace("VAR_WIN 0", "VAR_WIN 1")
        .replace("GLOBAL_T 1", "GLOBAL_T 0");
    let w = s.parse(&text).expect("window").config.host.window;
    assert!(w.enabled && w.variable && !w.global, "{w:?}");
    let w = s.parse(&s.config()).expect("no window").config.host.window;
    assert!(!w.enabled, "{w:?}");
    // Absent, as third.cc: a window, not variable, global.
    let text: String = s
        .config()
        .lines()
        .filter(|l| {
            !l.starts_with("HAS_WIN") && !l.starts_with("VAR_WIN") && !l.starts_with("GLOBAL_T")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let w = s.parse(&text).expect("defaults").config.host.window;
    assert!(w.enabled && !w.variable && w.global, "{w:?}");
}

#[test]
fn bad_congestion_control_values_name_their_key() {
    let s = Setup::new();
    let hpcc = s
        .config()
        .replace("CC_MODE 1", "CC_MODE 3")
        .replace("MULTI_RATE 1", "MULTI_RATE 0");
    for (from, to, key) in [
        ("U_TARGET 0.95", "U_TARGET 0", "U_TARGET"),
        ("U_TARGET 0.95", "U_TARGET 1.5", "U_TARGET"),
        ("INT_MULTI 1", "INT_MULTI 0", "INT_MULTI"),
        ("MULTI_RATE 0", "MULTI_RATE 1", "MULTI_RATE"),
        ("RATE_AI 50Mb/s", "RATE_AI 0Mb/s", "RATE_AI"),
    ] {
        let text = hpcc.replace(from, to);
        assert_ne!(text, hpcc, "{from} not in the config");
        s.fails(&text, key, line_of(&text, key), "");
    }
    let dctcp = s.config().replace("CC_MODE 1", "CC_MODE 8");
    let text = dctcp.replace("EWMA_GAIN 0.00390625", "EWMA_GAIN 0");
    s.fails(&text, "EWMA_GAIN", line_of(&text, "EWMA_GAIN"), "(0, 1]");
    let text = dctcp.replace("DCTCP_RATE_AI 1000Mb/s", "DCTCP_RATE_AI 0Mb/s");
    s.fails(
        &text,
        "DCTCP_RATE_AI",
        line_of(&text, "DCTCP_RATE_AI"),
        "greater than zero",
    );
}

#[test]
fn missing_topology_file() {
    let s = Setup::new();
    let text: String = s
        .config()
        .lines()
        .filter(|l| !l.starts_with("TOPOLOGY_FILE"))
        .map(|l| format!("{l}\n"))
        .collect();
    s.fails(&text, "TOPOLOGY_FILE", 0, "missing");
    let e = s.parse(&text).expect_err("missing");
    assert!(e.to_string().ends_with("config.txt: TOPOLOGY_FILE: missing: add a `TOPOLOGY_FILE` line (the HPCC simulator has no usable default)"), "{e}");
}

#[test]
fn bad_number() {
    let s = Setup::new();
    let text = s.config().replace("RP_TIMER 900 ", "RP_TIMER fast");
    s.fails(
        &text,
        "RP_TIMER",
        line_of(&text, "RP_TIMER"),
        "`fast` is not a number",
    );
    let text = s.config().replace("BUFFER_SIZE 32", "BUFFER_SIZE 3.5");
    s.fails(
        &text,
        "BUFFER_SIZE",
        line_of(&text, "BUFFER_SIZE"),
        "`3.5` is not an integer",
    );
    let text = s.config().replace("BUFFER_SIZE 32", "BUFFER_SIZE 4096");
    s.fails(
        &text,
        "BUFFER_SIZE",
        line_of(&text, "BUFFER_SIZE"),
        "4096 MB is out of range (1 to 4095)",
    );
    let text = s.config().replace("RATE_AI 50Mb/s", "RATE_AI 50");
    let run = s.parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let CcConfig::Dcqcn(d) = &run.config.host.cc else {
        panic!("dcqcn")
    };
    assert_eq!(d.rate_ai, Rate(50), "a bare DataRate is bit/s");
    let text = s.config().replace("RATE_AI 50Mb/s", "RATE_AI lots");
    s.fails(&text, "RATE_AI", line_of(&text, "RATE_AI"), "not a rate");
}

#[test]
fn other_unsupported_and_malformed() {
    let s = Setup::new();
    // A failure of a real link is scheduled 1000 us after t = 2 s, as in the original.
    let text = s
        .config()
        .replace("LINK_DOWN 0 0 0", "LINK_DOWN 1000 320 340");
    let run = s.parse(&text).expect("a real link can fail");
    assert_eq!(run.config.link_failures.len(), 1);
    assert_eq!(run.config.link_failures[0].time, Time::from_us(2_001_000));
    let text = s.config().replace("LINK_DOWN 0 0 0", "LINK_DOWN 1000 0 1");
    s.fails(
        &text,
        "LINK_DOWN",
        line_of(&text, "LINK_DOWN"),
        "no link joins nodes 0 and 1",
    );
    let text = s.config().replace("ENABLE_TRACE 0", "ENABLE_TRACE 1");
    s.fails(
        &text,
        "ENABLE_TRACE",
        line_of(&text, "ENABLE_TRACE"),
        "not supported",
    );
    let text = s.config().replace("L2_BACK_TO_ZERO 0", "L2_BACK_TO_ZERO 1");
    s.fails(
        &text,
        "L2_BACK_TO_ZERO",
        line_of(&text, "L2_BACK_TO_ZERO"),
        "not supported",
    );
    // The maps must cover every switch port rate (400G here).
    let text = s.config().replace(
        "KMAX_MAP 2 100000000000 1600 400000000000 6400",
        "KMAX_MAP 1 100000000000 1600",
    );
    s.fails(
        &text,
        "KMAX_MAP",
        line_of(&text, "KMAX_MAP"),
        "400000000000",
    );
    let text = s.config().replace(
        "PMAX_MAP 2 100000000000 0.2 400000000000 0.2",
        "PMAX_MAP 2 100000000000 0.2",
    );
    s.fails(
        &text,
        "PMAX_MAP",
        line_of(&text, "PMAX_MAP"),
        "declares 2 entries",
    );
    let text = s.config().replace("EWMA_GAIN 0.00390625\n", "");
    s.fails(&text, "EWMA_GAIN", 0, "missing");
    let text = s.config() + "CC_MODE 1\n";
    s.fails(
        &text,
        "CC_MODE",
        line_of(&text, "ENABLE_QCN") + text.lines().count() - 1,
        "given twice",
    );
}

#[test]
fn errors_in_referenced_files() {
    let s = Setup::new();
    std::fs::write(s.dir.path().join("flow.txt"), "1\n0 400 3 100 1000 2.0\n").expect("write");
    s.fails(
        &s.config(),
        "FLOW_FILE",
        line_of(&s.config(), "FLOW_FILE"),
        "flow.txt:2: dst is unknown node 400",
    );
    std::fs::write(s.dir.path().join("flow.txt"), "1\n0 320 3 100 1000 2.0\n").expect("write");
    s.fails(
        &s.config(),
        "FLOW_FILE",
        line_of(&s.config(), "FLOW_FILE"),
        "switch",
    );
    std::fs::write(s.dir.path().join("flow.txt"), "2\n0 1 3 100 1000 2.0\n").expect("write");
    s.fails(
        &s.config(),
        "FLOW_FILE",
        line_of(&s.config(), "FLOW_FILE"),
        "declares 2 flows",
    );
    let text = s.config().replace(
        &topology_file().display().to_string(),
        "/nonexistent/topology.txt",
    );
    s.fails(
        &text,
        "TOPOLOGY_FILE",
        line_of(&text, "TOPOLOGY_FILE"),
        "/nonexistent/topology.txt",
    );
}

#[test]
fn unreadable_config() {
    let e = hpcc_config::load(Path::new("/nonexistent/config.txt")).expect_err("missing");
    assert!(matches!(e, HpccConfigError::Io { .. }), "{e:?}");
}
