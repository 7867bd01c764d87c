//! The binary under hostile conditions: a reader that goes away, inputs that would exhaust
//! memory, endless files, a memory limit, and configs run from elsewhere. Never an abort.

mod common;
use common::{headroom, stderr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SMALL: &str = r#"
name = "small"
[topology]
kind = "star"
hosts = 3
rate = "100Gbps"
[[workload]]
kind = "incast"
senders = [0, 1]
receiver = 2
size = "64KiB"
"#;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `headroom <args>` in `dir` with a standard output whose reader is already gone.
fn with_closed_stdout(args: &[&str], dir: &Path) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("the binary runs")
}

/// `args` ends quietly (exit 0, no panic, no abort) when nobody reads its output.
fn quiet_on_closed_stdout(args: &[&str], dir: &Path) {
    let out = with_closed_stdout(args, dir);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{args:?}: stderr: {err}");
    assert!(
        !err.contains("panicked") && !err.contains("failed printing"),
        "{err}"
    );
}

#[test]
fn every_subcommand_ends_quietly_when_stdout_is_closed() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("s.toml"), SMALL).expect("scenario");
    let switch_only =
        "stop_time = \"200us\"\n[topology]\nkind = \"star\"\nhosts = 4\nrate = \"100Gbps\"\n";
    std::fs::write(dir.path().join("b.toml"), switch_only).expect("scenario");
    let topo = repo().join("data/topologies/hpcc_fat_320.txt");
    let topo = topo.to_str().expect("utf-8 path");
    let sonic = common::example("sn3700");
    let config_db = sonic.join("config_db.json");
    let asic = sonic.join("asic_table.json");
    let state = sonic.join("state_db.json");
    let (config_db, asic, state) = (
        config_db.to_str().expect("utf-8"),
        asic.to_str().expect("utf-8"),
        state.to_str().expect("utf-8"),
    );
    let cases: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["run", "s.toml", "--out", "o-run"],
        vec!["compare", "s.toml", "--out", "o-cmp", "--no-plots"],
        vec![
            "burst",
            "b.toml",
            "--out",
            "o-burst",
            "--fan-in",
            "2",
            "--receivers",
            "1",
        ],
        vec!["plan-buffer"],
        vec!["plan-buffer", "--json"],
        vec!["workload", "--topology", topo, "--duration", "1ms"],
        vec![
            "sonic",
            "show",
            "buffer",
            "configuration",
            "--config-db",
            config_db,
        ],
        vec![
            "sonic",
            "plan",
            "--config-db",
            config_db,
            "--asic-table",
            asic,
            "--state-db",
            state,
            "--out",
            "o-plan",
        ],
    ];
    for args in cases {
        quiet_on_closed_stdout(&args, dir.path());
    }
}

/// Runs a scenario `text` in a fresh directory; returns (exit code, stderr).
fn run_scenario(text: &str, extra: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("s.toml"), text).expect("scenario");
    let mut args = vec!["run", "s.toml", "--quiet"];
    args.extend_from_slice(extra);
    let out = headroom(&args, dir.path());
    (out.status.code(), stderr(&out))
}

#[test]
fn a_topology_file_announcing_billions_of_nodes_is_refused_before_allocating() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("t.txt"),
        "4000000000 1 1\n0\n0 1 100Gbps 1us 0\n",
    )
    .expect("topology");
    let out = headroom(&["workload", "--topology", "t.txt"], dir.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("t.txt:1") && err.contains("node count"),
        "{err}"
    );
    assert!(err.contains("4000000000"), "{err}");
}

#[test]
fn a_switch_with_more_ports_than_can_be_numbered_is_refused() {
    let text = SMALL.replace("hosts = 3", "hosts = 100000");
    let (code, err) = run_scenario(&text, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("ports of switch 100000") && err.contains("65535"),
        "{err}"
    );
}

#[test]
fn a_workload_generator_refuses_more_flows_than_its_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let topo = repo().join("data/topologies/hpcc_fat_320.txt");
    let out = headroom(
        &[
            "workload",
            "--topology",
            topo.to_str().expect("utf-8"),
            "--duration",
            "1000s",
        ],
        dir.path(),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("at most 20000000"), "{err}");
}

/// `--cross-leaf` sends every flow off its sender's leaf (16 hosts per top-of-rack switch in
/// the HPCC fat tree).
#[test]
fn workload_cross_leaf_keeps_flows_off_the_senders_leaf() {
    let dir = tempfile::tempdir().expect("tempdir");
    let topo = repo().join("data/topologies/hpcc_fat_320.txt");
    let args = |extra: &'static [&'static str]| {
        let mut a = vec![
            "workload",
            "--topology",
            topo.to_str().expect("utf-8"),
            "--duration",
            "200us",
            "--load",
            "0.5",
        ];
        a.extend_from_slice(extra);
        a
    };
    let same_leaf = |out: &std::process::Output| {
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let pairs: Vec<(u32, u32)> = text
            .lines()
            .skip(1)
            .map(|l| {
                let mut f = l.split_whitespace().map(|x| x.parse::<u32>().expect("id"));
                (f.next().expect("src"), f.next().expect("dst"))
            })
            .collect();
        assert!(pairs.len() > 100, "{} flows", pairs.len());
        pairs.iter().filter(|(s, d)| s / 16 == d / 16).count()
    };
    let crossing = headroom(&args(&["--cross-leaf"]), dir.path());
    assert!(crossing.status.success(), "{}", stderr(&crossing));
    assert_eq!(same_leaf(&crossing), 0);
    let plain = headroom(&args(&[]), dir.path());
    assert!(same_leaf(&plain) > 0);
}

#[test]
fn endless_inputs_are_refused_by_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = headroom(&["workload", "--topology", "/dev/zero"], dir.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("larger than 64.0 MiB"), "{err}");
}

/// Runs `headroom <args>` in `dir` under `ulimit -v` of `kib` KiB.
fn under_ulimit(kib: u64, args: &[&str], dir: &Path) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("sh runs")
}

#[test]
fn a_run_larger_than_the_memory_limit_is_refused_with_its_estimate() {
    // An all-to-all of 3,000 hosts: 9 million flows, under the flow cap, but several GB.
    let text = r#"
[topology]
kind = "star"
hosts = 3000
rate = "100Gbps"
[switch]
ports = 3000
buffer = "1GiB"
headroom = "1KB"
[[workload]]
kind = "all-to-all"
size = "1KB"
"#;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a2a.toml"), text).expect("scenario");
    let out = under_ulimit(3 << 20, &["run", "a2a.toml", "--quiet"], dir.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("would need about") && err.contains("ulimit -v"),
        "{err}"
    );
    assert!(!dir.path().join("out").exists());
}

#[test]
fn the_hpcc_example_runs_from_any_directory_into_a_directory_named_after_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = repo().join("examples/hpcc/config.txt");
    let out = headroom(
        &[
            "run",
            "--hpcc-config",
            config.to_str().expect("utf-8"),
            "--stop-time",
            "2.00001s",
            "--quiet",
        ],
        dir.path(),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("relative to the config file"), "{err}");
    assert!(dir.path().join("out/hpcc/summary.json").exists(), "{err}");
    assert!(!dir.path().join("out/config").exists());
}

#[test]
fn the_ring_example_deadlocks_with_exit_code_4_and_its_watchdog_and_spanning_tree_twins_do_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ring = repo().join("examples/deadlock/ring.toml");
    let out = headroom(
        &[
            "run",
            ring.to_str().expect("utf-8"),
            "--out",
            "ring",
            "--quiet",
        ],
        dir.path(),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("PFC deadlock at") && err.contains("(cycle)"),
        "{err}"
    );
    let summary: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("ring/summary.json")).expect("outputs are written"),
    )
    .expect("json");
    assert_eq!(summary["run"]["stop_reason"], "deadlock");
    assert_eq!(
        summary["run"]["deadlock"]["cycle"].as_array().map(Vec::len),
        Some(5)
    );
    let watched = repo().join("examples/deadlock/ring-pfcwd.toml");
    let out = headroom(
        &[
            "run",
            watched.to_str().expect("utf-8"),
            "--out",
            "wd",
            "--quiet",
            "--no-plots",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("wd/summary.json")).expect("outputs are written"),
    )
    .expect("json");
    assert!(
        summary["pfc"]["watchdog_storms"].as_u64() > Some(0),
        "{summary}"
    );
    let tree = repo().join("examples/deadlock/ring-spanning-tree.toml");
    let out = headroom(
        &[
            "run",
            tree.to_str().expect("utf-8"),
            "--out",
            "tree",
            "--quiet",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The credit ring with a class per hop: no cycle, every flow finishes.
    let per_hop = repo().join("examples/deadlock/ring-class-per-hop.toml");
    let out = headroom(
        &[
            "run",
            per_hop.to_str().expect("utf-8"),
            "--out",
            "per-hop",
            "--quiet",
            "--no-plots",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("per-hop/summary.json")).expect("summary"),
    )
    .expect("json");
    assert_eq!(summary["run"]["stop_reason"], "all_flows_done", "{summary}");
}

#[test]
fn a_scenario_without_traffic_warns() {
    let text = "stop_time = \"10us\"\n[topology]\nkind = \"star\"\nhosts = 2\nrate = \"100Gbps\"\n";
    let (code, err) = run_scenario(text, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("warning:") && err.contains("no [[workload]]"),
        "{err}"
    );
}

#[test]
fn a_reused_output_directory_keeps_no_stale_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sampled = format!("{SMALL}\n[output]\nsample_interval = \"5us\"\n");
    std::fs::write(dir.path().join("a.toml"), sampled).expect("scenario");
    std::fs::write(dir.path().join("b.toml"), SMALL).expect("scenario");
    let o = headroom(&["run", "a.toml", "--out", "o", "--quiet"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(dir.path().join("o/queues.csv").exists());
    std::fs::write(dir.path().join("o/mine.txt"), "user's").expect("user file");
    let o = headroom(&["run", "b.toml", "--out", "o", "--quiet"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !dir.path().join("o/queues.csv").exists(),
        "stale sample file"
    );
    assert!(dir.path().join("o/flows.csv").exists());
    assert!(
        dir.path().join("o/mine.txt").exists(),
        "not headroom's to remove"
    );
}

#[test]
fn an_output_directory_that_cannot_be_made_is_refused_before_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("s.toml"), SMALL).expect("scenario");
    std::fs::write(dir.path().join("file"), "x").expect("a file");
    let o = headroom(
        &["run", "s.toml", "--out", "file/sub", "--quiet"],
        dir.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("output directory file/sub"), "{err}");
}

#[test]
fn a_sample_interval_that_would_write_gigabytes_asks_for_force() {
    let text = SMALL.replacen(
        "name = \"small\"",
        "name = \"small\"\nstop_time = \"5ms\"",
        1,
    ) + "\n[output]\nsample_interval = \"1ns\"\n";
    let (code, err) = run_scenario(&text, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("sample_interval") && err.contains("--force"),
        "{err}"
    );
}

#[test]
fn run_help_points_to_the_references() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = headroom(&["run", "--help"], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("docs/outputs.md") && text.contains("docs/scenario.md"),
        "{text}"
    );
}
