//! `docs/outputs.md` cannot drift from what `headroom run` writes.
//!
//! The reference names each file in a heading's code spans (`` ## `flows.csv` ``,
//! `` ### `pfc_timeline.png`, `pfc_timeline.svg` ``) and lists a file's columns or keys in a
//! table whose first column is `column` or `key`. The test runs a scenario that writes every
//! file (sampling, HPCC compat files, plots, `--wall-time`; DSH with lossy and lossless
//! incasts, so port-level pauses, drops and every array of the summary occur) and requires:
//! - the files written are exactly the files named by the headings;
//! - each CSV's header is exactly the documented columns, in order;
//! - each line of the header-less HPCC files has as many fields as documented columns;
//! - the keys of `summary.json` (objects flattened to dotted paths, arrays of objects as
//!   `[]`, the documented maps' keys as `<...>`) are exactly the documented keys (with a
//!   credit run, a deadlocked run and a flow-channel run for the keys only those write).

mod common;
use common::{headroom, stderr};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SCENARIO: &str = r#"
name = "every-output"
stop_time = "300us"

[topology]
kind = "star"
hosts = 9
rate = "100Gbps"

[switch]
buffer = "1MiB"
headroom = "dsh"
scheme = "dsh"
lossless = [3]

[switch.ecn]
detector = "tcd-released"   # a NIC buffer pauses the switch: queue_states has a row

[host]
nic_buffer = { size = "1MiB", xoff = "64KiB", xon = "32KiB", drain = "50Gbps" }

[host.cc]
algorithm = "none"

[[workload]]
kind = "incast"
sender_count = 8
receiver = 0
size = "200KB"

[[workload]]
kind = "incast"
sender_count = 4
receiver = 1
size = "200KB"
prio = 1
app = 2                     # names an application: summary.json has `applications`

[output]
sample_interval = "5us"
compat = "hpcc"
"#;

/// What the reference says about each file: its documented columns or keys (empty for
/// plots), in order.
fn documented(doc: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Vec<String> = Vec::new();
    let mut lines = doc.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix('#') {
            let level = 1 + rest.chars().take_while(|&c| c == '#').count();
            let files: Vec<String> = line
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|s| s.contains('.') && !s.contains(' '))
                .map(str::to_string)
                .collect();
            if !files.is_empty() || level <= 2 {
                current = files;
                for f in &current {
                    assert!(out.insert(f.clone(), Vec::new()).is_none(), "{f} twice");
                }
            }
            continue;
        }
        if !(line.starts_with("| column |") || line.starts_with("| key |")) {
            continue;
        }
        assert_eq!(current.len(), 1, "a column table under {current:?}");
        lines.next(); // the |---| row
        while let Some(row) = lines.next_if(|l| l.starts_with('|')) {
            let cell = row.split('|').nth(1).unwrap_or("").trim().trim_matches('`');
            if let Some(cols) = out.get_mut(&current[0]) {
                cols.push(cell.to_string());
            }
        }
    }
    out
}

/// The dotted paths of every leaf of `v`; an object under a path that `maps` documents
/// as `<path>.<...>` contributes its keys as that placeholder.
fn flatten(
    v: &serde_json::Value,
    path: &str,
    maps: &BTreeMap<String, String>,
    out: &mut BTreeSet<String>,
) {
    use serde_json::Value;
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let key = maps.get(path).map_or(k.as_str(), String::as_str);
                flatten(x, &join(key), maps, out);
            }
        }
        Value::Array(items) if items.iter().any(Value::is_object) => {
            for x in items {
                flatten(x, &format!("{path}[]"), maps, out);
            }
        }
        _ => {
            out.insert(path.to_string());
        }
    }
}

#[test]
fn every_output_is_documented_and_every_documented_output_is_written() {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/outputs.md");
    let doc = std::fs::read_to_string(&doc_path).expect("docs/outputs.md");
    let documented = documented(&doc);

    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("s.toml"), SCENARIO).expect("write scenario");
    let run = headroom(
        &["run", "s.toml", "--out", "res", "--quiet", "--wall-time"],
        dir.path(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let res = dir.path().join("res");
    let written: BTreeSet<String> = std::fs::read_dir(&res)
        .expect("output dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    let named: BTreeSet<String> = documented.keys().cloned().collect();
    let mut problems = Vec::new();
    for f in written.difference(&named) {
        problems.push(format!("{f} is written but not documented"));
    }
    // Written on credit links only: checked with the credit run below.
    let credit_only = ["credit.csv", "credit_timeline.png", "credit_timeline.svg"];
    for f in named.difference(&written) {
        if !credit_only.contains(&f.as_str()) {
            problems.push(format!("{f} is documented but not written"));
        }
    }

    let read = |f: &str| std::fs::read_to_string(res.join(f)).unwrap_or_default();
    for (file, cols) in &documented {
        if file.ends_with(".csv") && !credit_only.contains(&file.as_str()) {
            let text = read(file);
            let header: Vec<&str> = text.lines().next().unwrap_or("").split(',').collect();
            if header != *cols {
                problems.push(format!("{file}: header {header:?}, documented {cols:?}"));
            }
        } else if file.ends_with(".txt") {
            let text = read(file);
            let line = text.lines().next().unwrap_or("");
            let fields = line.split_whitespace().count();
            if fields != cols.len() {
                problems.push(format!(
                    "{file}: {fields} fields in `{line}`, {} documented",
                    cols.len()
                ));
            }
        }
    }

    let keys = documented.get("summary.json").cloned().unwrap_or_default();
    let maps: BTreeMap<String, String> = keys
        .iter()
        .filter_map(|k| {
            let (parent, last) = k.rsplit_once('.')?;
            last.starts_with('<')
                .then(|| (parent.to_string(), last.to_string()))
        })
        .collect();
    let summary: serde_json::Value =
        serde_json::from_str(&read("summary.json")).expect("summary.json is JSON");
    let mut actual = BTreeSet::new();
    flatten(&summary, "", &maps, &mut actual);
    // A deadlocked run adds `run.deadlock`: the shipped ring examples are (PFC, credit,
    // flow channels).
    for ring in ["ring", "ring-credit", "ring-flow-channels"] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../examples/deadlock/{ring}.toml"));
        let run = headroom(
            &[
                "run",
                file.to_str().expect("utf-8 path"),
                "--out",
                ring,
                "--quiet",
                "--no-plots",
            ],
            dir.path(),
        );
        assert_eq!(run.status.code(), Some(4), "{ring}: {}", stderr(&run));
        let deadlocked: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(ring).join("summary.json"))
                .unwrap_or_default(),
        )
        .expect("summary.json is JSON");
        let mut ring_keys = BTreeSet::new();
        flatten(&deadlocked, "", &maps, &mut ring_keys);
        actual.extend(
            ring_keys
                .into_iter()
                .filter(|k| k.starts_with("run.deadlock")),
        );
    }
    // A credit fabric adds `credit.csv`, its timeline and `credit.ports`: the shipped
    // credit incast writes them.
    let credit =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/credit/incast-16to1.toml");
    let run = headroom(
        &[
            "run",
            credit.to_str().expect("utf-8 path"),
            "--out",
            "credit",
            "--quiet",
        ],
        dir.path(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let credit_dir = dir.path().join("credit");
    for f in ["credit.csv", "credit_timeline.png", "credit_timeline.svg"] {
        if !credit_dir.join(f).is_file() {
            problems.push(format!("{f} is documented but not written"));
        }
    }
    let header = std::fs::read_to_string(credit_dir.join("credit.csv")).unwrap_or_default();
    let header: Vec<&str> = header.lines().next().unwrap_or("").split(',').collect();
    if Some(&header.iter().map(|c| c.to_string()).collect()) != documented.get("credit.csv") {
        problems.push(format!("credit.csv: header {header:?}"));
    }
    let credited: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(credit_dir.join("summary.json")).unwrap_or_default(),
    )
    .expect("summary.json is JSON");
    let mut credit_keys = BTreeSet::new();
    flatten(&credited, "", &maps, &mut credit_keys);
    actual.extend(
        credit_keys
            .into_iter()
            .filter(|k| k.starts_with("credit.ports")),
    );
    // A flow-channel fabric adds `flow_channels`: the shipped dragonfly writes it, and the
    // incast-isolation, fabric-link, injection-limit, ilid-limits, severity-watermarks,
    // release-delay and reroute examples the parts of its congestion management.
    for example in [
        "dragonfly",
        "incast-isolation",
        "fabric-link",
        "injection-limit",
        "ilid-limits",
        "severity-watermarks",
        "release-delay",
        "reroute",
        "dragonfly-ugal",
    ] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/flow-channels")
            .join(format!("{example}.toml"));
        let run = headroom(
            &[
                "run",
                file.to_str().expect("utf-8 path"),
                "--out",
                example,
                "--quiet",
                "--no-plots",
            ],
            dir.path(),
        );
        assert!(run.status.success(), "{}", stderr(&run));
        let channels: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(example).join("summary.json"))
                .unwrap_or_default(),
        )
        .expect("summary.json is JSON");
        let mut channel_keys = BTreeSet::new();
        flatten(&channels, "", &maps, &mut channel_keys);
        actual.extend(
            channel_keys
                .into_iter()
                .filter(|k| k.starts_with("flow_channels")),
        );
    }
    let keys: BTreeSet<String> = keys.into_iter().collect();
    for k in actual.difference(&keys) {
        problems.push(format!("summary.json: `{k}` is written but not documented"));
    }
    for k in keys.difference(&actual) {
        problems.push(format!("summary.json: `{k}` is documented but not written"));
    }
    assert!(
        problems.is_empty(),
        "docs/outputs.md:\n{}",
        problems.join("\n")
    );
}
