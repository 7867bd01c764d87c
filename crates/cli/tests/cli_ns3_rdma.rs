//! `headroom run --ns3-rdma-config`: the FCT file goes where FCT_OUTPUT_FILE says, in the
//! DCQCN/TCD simulator's format, and bad configs exit with code 2 naming file, line and key.

mod common;

use common::{headroom, stderr};
use std::path::Path;

/// Two hosts on one switch, one flow of 10 packets and one of a single small packet.
fn write_case(dir: &Path, extra: &str) -> String {
    std::fs::write(
        dir.join("topo.txt"),
        "3 1 2\n0\n1 0 40Gbps 0.004ms 0\n2 0 40Gbps 0.004ms 0\n",
    )
    .expect("topology");
    std::fs::write(
        dir.join("flows.txt"),
        "2\n1 2 3 10000 2 3\n2 1 3 500 2.0001 3\n",
    )
    .expect("flows");
    let config = format!(
        "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 0\nENABLE_NPECN 0\nENABLE_ROOTECN 1\n\
         ENABLE_ROOTECNCC 1\nSEED_NUMBER 7\nROOTECN_INTERVAL 97\nPACKET_LEVEL_ECMP 0\n\
         FLOW_LEVEL_ECMP 1\nPAUSE_TIME 5\nPACKET_PAYLOAD_SIZE 1000\nTOPOLOGY_FILE topo.txt\n\
         FLOW_FILE flows.txt\nFCT_OUTPUT_FILE result/fct.txt\nSEND_IN_CHUNKS 0\n\
         APP_START_TIME 1.999\nAPP_STOP_TIME 2.06\nSIMULATOR_STOP_TIME 2.01\nCNP_INTERVAL 50\n\
         ALPHA_RESUME_INTERVAL 55\nRP_TIMER 55\nBYTE_COUNTER 10000000\nDCTCP_GAIN 0.00390625\n\
         KMAX 200\nKMIN 5\nPMAX 0.01\nRATE_AI 40Mb/s\nRATE_HAI 200Mb/s\nL2_ACK_INTERVAL 256\n{extra}"
    );
    std::fs::write(dir.join("config.txt"), config).expect("config");
    "config.txt".to_string()
}

#[test]
fn writes_the_fct_file_where_the_config_says() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = write_case(dir.path(), "");
    let out = headroom(
        &[
            "run",
            "--ns3-rdma-config",
            &config,
            "--out",
            "out",
            "--no-plots",
            "--quiet",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("note: USE_DYNAMIC_PFC_THRESHOLD 0"));
    let fct = std::fs::read_to_string(dir.path().join("result/fct.txt")).expect("fct file");
    let mine = std::fs::read_to_string(dir.path().join("out/fct_ns3rdma.txt")).expect("copy");
    assert_eq!(fct, mine);
    let lines: Vec<&str> = fct.lines().collect();
    assert_eq!(lines.len(), 2, "{fct}");
    // The single packet: 476 data bytes, base 476 / 5e9 + 8 us.
    let small = lines
        .iter()
        .find(|l| l.starts_with("2 1 476 2.000100 "))
        .unwrap_or_else(|| panic!("{fct}"));
    assert!(small.ends_with(" 0.00000810"), "{small}");
    let big = lines
        .iter()
        .find(|l| l.starts_with("1 2 9760 2.000000 "))
        .unwrap_or_else(|| panic!("{fct}"));
    let f: Vec<&str> = big.split(' ').collect();
    assert_eq!(f.len(), 6);
    assert_eq!(f[5], "0.00000995", "9760 / 5e9 + 8 us");
    let fct_s: f64 = f[4].parse().expect("number");
    assert!((9.9e-6..2e-5).contains(&fct_s), "{big}");
    assert_eq!(f[4].split('.').nth(1).map(str::len), Some(8));
}

#[test]
fn bad_configs_exit_2_naming_file_line_and_key() {
    for (extra, key, line) in [
        ("ROOTECN_INTERVAL 0\n", "ROOTECN_INTERVAL", 7),
        ("ENABLE_NPECN 1\n", "ENABLE_NPECN", 3),
        ("FROBNICATE 1\n", "FROBNICATE", 30),
        ("KMIN five\n", "KMIN", 25),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = write_case(dir.path(), "");
        // Replace the key's line (or append a new one).
        let text = std::fs::read_to_string(dir.path().join(&config)).expect("config");
        let mut replaced = false;
        let mut lines: Vec<String> = text
            .lines()
            .map(|l| {
                if l.split_whitespace().next() == Some(key) {
                    replaced = true;
                    extra.trim().to_string()
                } else {
                    l.to_string()
                }
            })
            .collect();
        if !replaced {
            lines.push(extra.trim().to_string());
        }
        std::fs::write(dir.path().join(&config), lines.join("\n") + "\n").expect("write");
        let out = headroom(
            &[
                "run",
                "--ns3-rdma-config",
                &config,
                "--out",
                "out",
                "--quiet",
            ],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(2), "{extra}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("config.txt:{line}: {key}: ")),
            "{extra}: {err}"
        );
    }
    // A five-field flow line: the flow file and its line.
    let dir = tempfile::tempdir().expect("tempdir");
    let config = write_case(dir.path(), "");
    std::fs::write(dir.path().join("flows.txt"), "1\n1 2 3 10000 2\n").expect("flows");
    let out = headroom(
        &["run", "--ns3-rdma-config", &config, "--quiet"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("flows.txt:2: "), "{}", stderr(&out));
    // A missing topology file.
    std::fs::remove_file(dir.path().join("topo.txt")).expect("remove");
    let out = headroom(
        &["run", "--ns3-rdma-config", &config, "--quiet"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("config.txt:12: TOPOLOGY_FILE: "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn conflicts_with_a_scenario_and_hpcc_config() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = headroom(&["run", "x.toml", "--ns3-rdma-config", "c.txt"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let out = headroom(
        &[
            "run",
            "--hpcc-config",
            "a.txt",
            "--ns3-rdma-config",
            "c.txt",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
}
