//! The `headroom` binary end to end: exit codes, error messages, and outputs.

mod common;
use common::headroom;

const VALID: &str = r#"
name = "t"
[topology]
kind = "star"
hosts = 3
rate = "100Gbps"
delay = "1us"
[[workload]]
kind = "incast"
senders = [0, 1]
receiver = 2
size = "64KiB"
"#;

/// Writes `text` as a scenario, runs it, and checks exit code 2 and that stderr names
/// every `expect` fragment (and does not mention a panic).
fn rejects(text: &str, expect: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("bad.toml"), text).expect("write scenario");
    let out = headroom(&["run", "bad.toml", "--quiet"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    for e in expect {
        assert!(err.contains(e), "stderr lacks `{e}`:\n{err}");
    }
    assert!(
        !dir.path().join("out").exists(),
        "nothing is written on error"
    );
}

#[test]
fn unknown_key() {
    rejects(
        &VALID.replace("delay = \"1us\"", "delay = \"1us\"\nspeed = 3"),
        &["bad.toml", "speed"],
    );
}

#[test]
fn negative_size() {
    rejects(
        &VALID.replace("\"64KiB\"", "\"-5B\""),
        &["bad.toml", "size"],
    );
}

#[test]
fn unknown_node() {
    rejects(
        &VALID.replace("receiver = 2", "receiver = 99"),
        &["receiver", "unknown node 99"],
    );
}

#[test]
fn rate_without_unit() {
    rejects(
        &VALID.replace("\"100Gbps\"", "\"100\""),
        &["rate", "100Gbps"],
    );
}

#[test]
fn topology_file_with_dangling_link() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("topo.txt"),
        "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 7 100Gbps 1000ns 0\n",
    )
    .expect("write topology");
    let scenario = "[topology]\nkind = \"hpcc-file\"\nfile = \"topo.txt\"\n[[workload]]\nkind = \"incast\"\nsenders = [0]\nreceiver = 1\nsize = \"1KiB\"\n";
    std::fs::write(dir.path().join("bad.toml"), scenario).expect("write scenario");
    let out = headroom(&["run", "bad.toml", "--quiet"], dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("topo.txt"), "names the topology file: {err}");
    assert!(err.contains("7"), "names the missing node: {err}");
}

#[test]
fn missing_scenario_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = headroom(&["run", "nope.toml"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.toml"));
}

#[test]
fn bad_cli_arguments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = headroom(&["run", "x.toml", "--stop-time", "10"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("10us")
            || String::from_utf8_lossy(&out.stderr).contains("unit")
    );
}

#[test]
fn a_valid_run_writes_its_outputs() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("ok.toml"), VALID).expect("write scenario");
    let out = headroom(
        &["run", "ok.toml", "--out", "res", "--compat", "hpcc"],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "flows.csv",
        "summary.json",
        "pfc.csv",
        "fct.txt",
        "pfc.txt",
        "fct_slowdown_cdf.png",
        "fct_slowdown_cdf.svg",
    ] {
        assert!(dir.path().join("res").join(f).exists(), "{f} missing");
    }
    let flows = std::fs::read_to_string(dir.path().join("res/flows.csv")).expect("flows.csv");
    assert_eq!(flows.lines().count(), 3, "header + 2 flows");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("flow completion time"),
        "summary table printed: {stdout}"
    );
}

#[test]
fn same_seed_same_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("ok.toml"), VALID).expect("write scenario");
    for o in ["a", "b"] {
        let out = headroom(
            &["run", "ok.toml", "--out", o, "--quiet", "--no-plots"],
            dir.path(),
        );
        assert!(out.status.success());
    }
    for f in ["flows.csv", "summary.json", "pfc.csv"] {
        let a = std::fs::read(dir.path().join("a").join(f)).expect("a");
        let b = std::fs::read(dir.path().join("b").join(f)).expect("b");
        assert_eq!(a, b, "{f} differs between runs");
    }
}

#[test]
fn lossless_drop_fails_the_run_with_code_3() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Headroom far below what arrives after XOFF: PFC cannot save the packet.
    let text = VALID.replace(
        "[[workload]]",
        "[switch]\nbuffer = \"200KiB\"\nheadroom = \"100B\"\n[host.cc]\nalgorithm = \"none\"\n[[workload]]",
    );
    std::fs::write(dir.path().join("drop.toml"), text).expect("write scenario");
    let out = headroom(
        &[
            "run",
            "drop.toml",
            "--quiet",
            "--no-plots",
            "--fail-on-lossless-drop",
        ],
        dir.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {err}");
    assert!(err.contains("lossless drop"), "{err}");
}

#[test]
fn compare_table_headers_are_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("ok.toml"), VALID).expect("write scenario");
    let out = headroom(
        &["compare", "ok.toml", "--out", "cmp", "--no-plots"],
        dir.path(),
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for words in [
        "shared buffer",
        "per switch",
        "PAUSEs",
        "victim",
        "median",
        "99th pct",
    ] {
        assert!(table.contains(words), "no `{words}`: {table}");
    }
    for short in ["shared/sw", "PAUSE q", "p50", "p99"] {
        assert!(!table.contains(short), "`{short}` left: {table}");
    }
    // The main table ends at the first blank line (sections per workload follow).
    let rows: Vec<&str> = table
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| ["SIH ", "SHP ", "DSH "].iter().any(|s| l.starts_with(s)))
        .collect();
    assert_eq!(rows.len(), 3, "a row per scheme: {table}");
}

#[test]
fn compare_runs_each_congestion_control_side_by_side() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("ok.toml"), VALID).expect("write scenario");
    let out = headroom(
        &[
            "compare",
            "ok.toml",
            "--cc",
            "dcqcn,hpcc,timely,dctcp",
            "--out",
            "cmp",
        ],
        dir.path(),
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["DCQCN ", "HPCC ", "TIMELY ", "DCTCP "] {
        assert!(
            table.lines().any(|l| l.starts_with(name)),
            "no {name}row: {table}"
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("cmp/compare.csv")).expect("csv");
    assert!(csv.starts_with("cc,"), "{csv}");
    for algorithm in ["dcqcn", "hpcc", "timely", "dctcp"] {
        let summary = dir.path().join(format!("cmp/{algorithm}/summary.json"));
        let text = std::fs::read_to_string(&summary).expect("summary");
        assert!(
            text.contains(&format!("\"congestion_control\": \"{algorithm}\"")),
            "{algorithm}: {text}"
        );
    }
    assert!(dir.path().join("cmp/compare_fct_slowdown_cdf.png").exists());
    // An unknown or repeated algorithm, or --cc with --mmu, is refused before anything runs.
    for args in [
        &["compare", "ok.toml", "--cc", "reno", "--out", "bad"][..],
        &["compare", "ok.toml", "--cc", "hpcc,hpcc", "--out", "bad"][..],
        &[
            "compare", "ok.toml", "--cc", "hpcc", "--mmu", "sih", "--out", "bad",
        ][..],
    ] {
        let out = headroom(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!dir.path().join("bad").exists(), "{args:?} wrote outputs");
    }
}

#[test]
fn every_hpcc_simulator_mode_runs_from_its_example_config() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().expect("tempdir");
    for (file, cc) in [
        ("config.txt", "dcqcn"),
        ("config-hpcc.txt", "hpcc"),
        ("config-timely.txt", "timely"),
        ("config-dctcp.txt", "dctcp"),
    ] {
        let config = root.join("examples/hpcc").join(file);
        let config = config.to_str().expect("utf-8 path");
        let out = headroom(
            &[
                "run",
                "--hpcc-config",
                config,
                "--stop-time",
                "2.0003s",
                "--out",
                cc,
                "--no-plots",
                "--quiet",
            ],
            dir.path(),
        );
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary =
            std::fs::read_to_string(dir.path().join(cc).join("summary.json")).expect("summary");
        assert!(
            summary.contains(&format!("\"congestion_control\": \"{cc}\"")),
            "{file}"
        );
    }
}

/// `headroom bench --scenario` runs any scenario without writing its outputs.
#[test]
fn bench_counts_the_windows_of_a_partitioned_run() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/flow-channels/fig6a-chain.toml");
    let dir = tempfile::tempdir().expect("tempdir");
    let args = [
        "bench",
        "--scenario",
        example.to_str().expect("utf-8 path"),
        "--threads",
        "2",
        "--json",
    ];
    let o = headroom(&args, dir.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(v["threads"], 2);
    // Windows of one lookahead over 4 ms; how many ran on one thread depends on how busy
    // the machine's cores were.
    let all = v["windows"].as_u64().expect("windows");
    let serial = v["serial_windows"].as_u64().expect("serial windows");
    assert!(all > 1_000 && serial <= all, "{v}");
}

#[test]
fn bench_runs_a_scenario_file() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/flow-channels/fig6a-chain.toml");
    let dir = tempfile::tempdir().expect("tempdir");
    // `bench --scenario <example> --threads 1 --json` with `extra` options: its JSON.
    let bench = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "bench",
            "--scenario",
            example.to_str().expect("utf-8 path"),
            "--threads",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = headroom(&args, dir.path());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).expect("one JSON object on stdout")
    };
    let v = bench(&[]);
    assert_eq!(v["hosts"], 12);
    assert_eq!(v["flows"], 11);
    assert_eq!(v["threads"], 1);
    // One part runs no windows.
    assert_eq!(
        (v["windows"].as_u64(), v["serial_windows"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(v["events"].as_u64().expect("events") > 100_000, "{v}");
    // The scenario's stop time (4 ms): the 1 GB flows do not finish.
    assert_eq!(v["finished"], 0);
    // PFC links: no flow tables to report.
    assert!(v["flow_table_peak_channels"].is_null(), "{v}");
    assert!(
        (v["simulated_ms"].as_f64().expect("ms") - 4.0).abs() < 1e-6,
        "{v}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        0,
        "bench writes no files"
    );
    // On flow channels it reports the tables: the eleven flows all cross the last switch.
    let v = bench(&["--flow-control", "flow-channels"]);
    assert_eq!(v["flow_table_peak_channels"], 11, "{v}");
    assert!(v["flow_table_bytes_at_peak"].as_u64() > Some(0), "{v}");
}

/// `examples/htsim/permutation-k4.toml` runs htsim's connection matrix as it is: the 16
/// flows of the matrix, in its order of hosts, all delivered.
#[test]
fn an_htsim_connection_matrix_runs_as_written() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/htsim/permutation-k4.toml");
    let dir = tempfile::tempdir().expect("tempdir");
    let o = headroom(
        &[
            "run",
            example.to_str().expect("utf-8 path"),
            "--no-plots",
            "--quiet",
            "--out",
            "run",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let flows = std::fs::read_to_string(dir.path().join("run/flows.csv")).expect("flows.csv");
    let rows: Vec<Vec<&str>> = flows
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 16);
    let matrix = std::fs::read_to_string(example.with_file_name("perm-16n-2MB.cm")).expect("cm");
    let mut pairs: Vec<(String, String)> = matrix
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.split_once("->"))
        .map(|(s, d)| (s.to_string(), d.to_string()))
        .collect();
    let mut got: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r[1].to_string(), r[2].to_string()))
        .collect();
    pairs.sort();
    got.sort();
    // A k = 4 fat tree numbers its 16 hosts 0..16: htsim's node i is host i.
    assert_eq!(got, pairs);
    for r in &rows {
        assert_eq!(r[4], "2000000");
        assert!(!r[6].is_empty(), "flow {} finished", r[0]);
    }
}
