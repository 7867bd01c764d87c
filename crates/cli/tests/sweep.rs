//! `headroom sweep` on this machine, through the binary:
//! - every point of the grid runs with its values (the scenario it ran has them, and its
//!   outputs show them), the table has a row per point with the baseline ratios, and the
//!   default plot is drawn;
//! - run again, a sweep skips its finished points; after an axis value changes, only the
//!   points that changed run again;
//! - a point that fails is listed with its reason and log, the others' results are kept,
//!   and the exit code is 5;
//! - a bad sweep file is refused before anything is written, naming the field (or the
//!   point and the scenario field) and the reason, with exit code 2.

mod common;

use common::{headroom, stderr, stdout};
use std::path::Path;

const BASE: &str = r#"
name = "fan-in"
[topology]
kind = "star"
hosts = 5
rate = "100Gbps"
delay = "1us"

[switch]
buffer = "2MiB"
lossless = [3]

[[workload]]
kind = "incast"
sender_count = 2
receiver = 0
size = "64KiB"
prio = 3
"#;

const SWEEP: &str = r#"
scenario = "base.toml"
name = "fan-in-sweep"

[[axis]]
name = "scheme"
key = "switch.scheme"
values = ["sih", "dsh"]

[[axis]]
name = "senders"
key = "workload[0].sender_count"
values = [1, 2, 4]

[baseline]
axis = "scheme"
value = "sih"
"#;

fn setup(sweep: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("base.toml"), BASE).expect("write base");
    std::fs::write(dir.path().join("sweep.toml"), sweep).expect("write sweep");
    dir
}

fn rows(dir: &Path) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let text = std::fs::read_to_string(dir.join("out/results.json")).expect("results.json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    v.as_array()
        .expect("a list")
        .iter()
        .map(|r| r.as_object().expect("an object").clone())
        .collect()
}

fn modified(path: &Path) -> std::time::SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .expect("mtime")
}

#[test]
fn every_point_runs_with_its_values_and_a_rerun_skips_or_redoes_them() {
    let dir = setup(SWEEP);
    let d = dir.path();
    let o = headroom(&["sweep", "sweep.toml", "--out", "out", "--jobs", "2"], d);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("points: 6 done, 0 failed"),
        "{}",
        stdout(&o)
    );

    let table = rows(d);
    assert_eq!(table.len(), 6);
    for (i, row) in table.iter().enumerate() {
        let id = format!("{i:04}");
        assert_eq!(row["point"], id.as_str());
        let senders: u64 = row["senders"]
            .as_str()
            .expect("text")
            .parse()
            .expect("number");
        assert_eq!(senders, [1, 2, 4][i % 3]);
        assert_eq!(row["scheme"], ["sih", "dsh"][i / 3]);
        // The run had the point's values: its scenario says so, and so do its outputs.
        let scenario =
            std::fs::read_to_string(d.join(format!("out/scenarios/{id}.toml"))).expect("scenario");
        assert!(
            scenario.contains(&format!("sender_count = {senders}")),
            "{scenario}"
        );
        assert!(scenario.contains(&format!(
            "scheme = \"{}\"",
            row["scheme"].as_str().expect("s")
        )));
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(d.join(format!("out/runs/{id}/summary.json")))
                .expect("summary"),
        )
        .expect("json");
        assert_eq!(summary["flows"]["total"], senders);
        assert_eq!(summary["config"]["headroom_scheme"], row["scheme"]);
        assert_eq!(row["drops.lossless"], 0);
        // The ratio to SIH is this row's mean over the SIH row's with as many senders.
        let mean = row["fct.overall.mean_fct_ns"].as_f64().expect("mean");
        let sih = table[i % 3]["fct.overall.mean_fct_ns"]
            .as_f64()
            .expect("sih mean");
        let ratio = row["fct.overall.mean_fct_ns/sih"].as_f64().expect("ratio");
        assert!(
            (ratio - mean / sih).abs() < 1e-12,
            "{ratio} vs {mean}/{sih}"
        );
    }
    let csv = std::fs::read_to_string(d.join("out/results.csv")).expect("csv");
    assert!(
        csv.starts_with("point,scheme,senders,wall_s,max_rss_bytes,fct.overall.mean_fct_ns,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 7);
    // The default plot: mean FCT against the numeric axis, a line per scheme.
    for f in [
        "plot-0-fct_overall_mean_fct_ns.png",
        "plot-1-fct_overall_mean_fct_ns_sih.svg",
    ] {
        assert!(d.join("out").join(f).is_file(), "{f} missing");
    }

    // Run again: nothing to do.
    let before: Vec<_> = (0..6)
        .map(|i| modified(&d.join(format!("out/runs/{i:04}/summary.json"))))
        .collect();
    let o = headroom(&["sweep", "sweep.toml", "--out", "out"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("6 points (6 done before)"),
        "{}",
        stderr(&o)
    );

    // Four senders become three: points 2 and 5 run again, the others are kept.
    std::fs::write(
        d.join("sweep.toml"),
        SWEEP.replace("[1, 2, 4]", "[1, 2, 3]"),
    )
    .expect("edit");
    let o = headroom(&["sweep", "sweep.toml", "--out", "out"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("6 points (4 done before)"),
        "{}",
        stderr(&o)
    );
    for (i, t) in before.iter().enumerate() {
        let now = modified(&d.join(format!("out/runs/{i:04}/summary.json")));
        assert_eq!(now == *t, i % 3 != 2, "point {i}");
    }
    let table = rows(d);
    assert_eq!(table[2]["senders"], "3");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("out/runs/0005/summary.json")).expect("summary"),
    )
    .expect("json");
    assert_eq!(summary["flows"]["total"], 3);
}

#[test]
fn a_failed_point_is_listed_with_its_log_and_the_others_are_kept() {
    // Sampling every picosecond would record far more than a run agrees to without
    // --force: that point's run fails, the other's does not.
    let dir = setup(
        r#"
scenario = "base.toml"
seeds = [1, 2]
[[axis]]
name = "sampling"
keys = ["output.sample_interval", "stop_time"]
values = [["10us", "1ms"], ["1ps", "1ms"]]
"#,
    );
    let d = dir.path();
    let o = headroom(&["sweep", "sweep.toml", "--out", "out", "--no-plots"], d);
    assert_eq!(o.status.code(), Some(5), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("points: 2 done, 2 failed"), "{out}");
    for id in ["0002", "0003"] {
        assert!(
            out.contains(&format!("failed {id} (sampling = 1ps/1ms, seed = ")),
            "{out}"
        );
        let log = std::fs::read_to_string(d.join(format!("out/logs/{id}.log"))).expect("log");
        assert!(log.contains("--force"), "{log}");
        assert!(out.contains(&format!("out/logs/{id}.log")), "{out}");
        assert!(!d.join(format!("out/runs/{id}")).exists());
    }
    let table = rows(d);
    assert_eq!(table.len(), 2);
    assert_eq!(table[1]["seed"], "2");
}

#[test]
fn bad_sweep_files_are_refused_before_anything_is_written() {
    let cases: [(&str, &str); 12] = [
        ("scenario = \"base.toml\"\ncolour = 1\n[[axis]]\nkey = \"seed\"\nvalues = [1]", "unknown key `colour`"),
        ("[[axis]]\nkey = \"seed\"\nvalues = [1]", "`scenario` (the base scenario file) is required"),
        ("scenario = \"nope.toml\"\n[[axis]]\nkey = \"seed\"\nvalues = [1]", "is not a readable file"),
        ("scenario = \"base.toml\"", "at least one [[axis]] is required"),
        ("scenario = \"base.toml\"\n[[axis]]\nkey = \"seed\"\nvalues = []", "values must be a non-empty list"),
        (
            "scenario = \"base.toml\"\n[[axis]]\nkey = \"workload[3].size\"\nvalues = [\"1KB\"]",
            "index 3 is out of range",
        ),
        (
            "scenario = \"base.toml\"\n[[axis]]\nkey = \"switch.scheme\"\nvalues = [\"sih\", \"fancy\"]",
            "sweep point 0001 (switch.scheme = fancy)",
        ),
        (
            "scenario = \"base.toml\"\n[[axis]]\nkey = \"switch.scheme\"\nvalues = [\"sih\"]\n[baseline]\naxis = \"switch.scheme\"\nvalue = \"dsh\"",
            "`dsh` is not a value of axis",
        ),
        (
            "scenario = \"base.toml\"\n[[axis]]\nkey = \"switch.scheme\"\nvalues = [\"sih\"]\n[[plot]]\nx = \"switch.scheme\"\ny = \"pfc.pause_frames\"",
            "must have numeric values",
        ),
        (
            "scenario = \"base.toml\"\n[[axis]]\nkeys = [\"seed\", \"stop_time\"]\nvalues = [[1]]",
            "with 2 keys, each value is a list of 2",
        ),
        (
            "scenario = \"base.toml\"\n[[axis]]\nsteps = [{ set = { seed = 1 } }]",
            "an axis of `steps` needs a `name`",
        ),
        (
            "scenario = \"base.toml\"\n[[axis]]\nname = \"s\"\nsteps = [{ label = \"a\", set = { seed = 1 } }, { label = \"a\", set = { seed = 2 } }]",
            "the label `a` appears twice",
        ),
    ];
    for (text, reason) in cases {
        let dir = setup(text);
        let o = headroom(&["sweep", "sweep.toml", "--out", "out"], dir.path());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(reason), "{text}: expected `{reason}` in {err}");
        assert!(
            err.contains("sweep.toml") || reason.starts_with("sweep point"),
            "{err}"
        );
        assert!(!dir.path().join("out").exists(), "{text}: wrote outputs");
    }
    // The scenario's own error names its field.
    let dir =
        setup("scenario = \"base.toml\"\n[[axis]]\nkey = \"switch.scheme\"\nvalues = [\"fancy\"]");
    let err = stderr(&headroom(
        &["sweep", "sweep.toml", "--out", "out"],
        dir.path(),
    ));
    assert!(err.contains("switch.scheme"), "{err}");
    // `collect` of a directory that is not a sweep's.
    let o = headroom(&["sweep", "collect", "."], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("sweep.json: cannot read"),
        "{}",
        stderr(&o)
    );
}
