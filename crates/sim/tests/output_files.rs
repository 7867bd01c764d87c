//! Output files of a real run: presence, row counts, determinism, HPCC formats, errors.

#![allow(clippy::unwrap_used)]

use headroom_mech::units::{Rate, Time};
use headroom_sim::config::SimConfig;
use headroom_sim::net::Simulation;
use headroom_sim::output::{self, WriteOptions};
use headroom_sim::results::RunResults;
use headroom_sim::topology::builders;
use headroom_sim::topology::NodeId;
use headroom_sim::workload::generators;
use std::fs;
use std::path::Path;
use std::time::Duration;

/// 16:1 incast on a star with a 1 MB switch buffer, so PFC fires; sampled every 2 us.
fn incast_run() -> (RunResults, SimConfig) {
    let topo = builders::star(17, Rate::from_gbps(100), Time::from_us(1)).unwrap();
    let senders: Vec<NodeId> = (0..16).map(NodeId).collect();
    let mut flows = generators::incast(&senders, NodeId(16), 200_000, Time::ZERO, None, 3).unwrap();
    // A few small flows so several size buckets are populated.
    let small =
        generators::incast(&senders[..4], NodeId(16), 5_000, Time::from_us(5), None, 3).unwrap();
    let mid = generators::incast(
        &senders[4..8],
        NodeId(16),
        50_000,
        Time::from_us(7),
        None,
        3,
    )
    .unwrap();
    flows.extend(small);
    flows.extend(mid);
    flows.sort_by_key(|f| f.start);
    let mut cfg = SimConfig::new(topo, flows);
    cfg.switch.buffer_bytes = 1_000_000;
    cfg.record.sample_interval = Some(Time::from_us(2));
    let mut sim = Simulation::new(cfg.clone()).unwrap();
    sim.run_until(Time::MAX);
    (sim.finish(), cfg)
}

fn lines(p: &Path) -> Vec<String> {
    fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn writes_all_files_with_matching_row_counts() {
    let (r, cfg) = incast_run();
    assert!(!r.pfc_sent.is_empty(), "the scenario must trigger PFC");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let summary = output::summarize(&r, &cfg, Some(Duration::from_millis(10)));
    let opts = WriteOptions {
        compat_hpcc: true,
        include_wall_time: false,
    };
    let written = output::write_all(&out, &r, &cfg, &summary, &opts).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for n in [
        "flows.csv",
        "summary.json",
        "pfc.csv",
        "queues.csv",
        "buffer.csv",
        "rates.csv",
        "fct.txt",
        "pfc.txt",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} not written: {names:?}");
        assert!(out.join(n).is_file(), "{n} missing");
    }
    // No temporary file left behind.
    for e in fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with('.'), "leftover {name}");
    }

    let flows = lines(&out.join("flows.csv"));
    assert_eq!(
        flows[0],
        "id,src,dst,priority,size,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,retransmitted,\
         delivered_bytes"
    );
    assert_eq!(flows.len() - 1, r.flows.len());
    for (row, f) in flows[1..].iter().zip(&r.flows) {
        let cols: Vec<&str> = row.split(',').collect();
        assert_eq!(cols.len(), 12, "{row}");
        assert_eq!(cols[0], f.id.to_string());
        assert_eq!(cols[5], output::format_ns(f.start));
        assert_eq!(cols[6].is_empty(), f.finish.is_none());
        // A finished flow delivered all of itself.
        assert_eq!(cols[11], f.delivered.to_string());
        if f.finish.is_some() {
            assert_eq!(f.delivered, f.size, "{row}");
        }
    }
    let pfc = lines(&out.join("pfc.csv"));
    assert_eq!(pfc[0], "time_ns,node,port,priority,kind,quanta,scope");
    assert_eq!(pfc.len() - 1, r.pfc_sent.len());
    let pauses = pfc[1..].iter().filter(|l| l.contains(",pause,")).count() as u64;
    assert_eq!(pauses, summary.pfc.pause_frames);
    assert_eq!(
        lines(&out.join("queues.csv")).len() - 1,
        r.queue_samples.len()
    );
    assert_eq!(
        lines(&out.join("buffer.csv")).len() - 1,
        r.buffer_samples.len()
    );
    assert_eq!(
        lines(&out.join("rates.csv")).len() - 1,
        r.rate_samples.len()
    );
    let finished = r.flows.iter().filter(|f| f.finish.is_some()).count();
    assert_eq!(lines(&out.join("fct.txt")).len(), finished);
    assert_eq!(lines(&out.join("pfc.txt")).len(), r.pfc_received.len());

    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["flows"]["total"], r.flows.len());
    assert!(
        json["wall"].is_null(),
        "wall time must be left out when not asked"
    );
    assert!(json["pfc"]["pause_frames"].as_u64().unwrap() > 0);

    // PFC per-port entries agree with the totals.
    let sent: u64 = summary
        .pfc
        .ports
        .iter()
        .map(|p| u64::from(p.pauses_sent))
        .sum();
    assert_eq!(sent, summary.pfc.pause_frames);
    assert!(summary.pfc.ports.iter().any(|p| p.paused_ns > 0.0));
    assert!(summary
        .pfc
        .ports
        .windows(2)
        .all(|w| (w[0].node, w[0].port, w[0].priority) < (w[1].node, w[1].port, w[1].priority)));

    let table = output::summary_table(&summary);
    eprintln!("{table}");
    assert!(table.contains("PAUSE") && table.contains("10KB-100KB"));
}

#[test]
fn wall_time_is_written_only_when_asked() {
    let (r, cfg) = incast_run();
    let dir = tempfile::tempdir().unwrap();
    let summary = output::summarize(&r, &cfg, Some(Duration::from_millis(250)));
    let opts = WriteOptions {
        compat_hpcc: false,
        include_wall_time: true,
    };
    let written = output::write_all(dir.path(), &r, &cfg, &summary, &opts).unwrap();
    assert!(!written.iter().any(|p| p.ends_with("fct.txt")));
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(json["wall"]["wall_seconds"], 0.25);
    assert!(json["wall"]["events_per_second"].as_f64().unwrap() > 0.0);
}

/// `[output] pfc_log = false`: no PFC log in memory, no pfc.csv or pfc.txt, and the same
/// PFC counts and dynamics as with the log (the counts come from the ports' counters).
#[test]
fn without_the_pfc_log_counts_and_flows_stay_and_no_pfc_file_is_written() {
    let (with_log, cfg) = incast_run();
    let mut quiet = cfg.clone();
    quiet.record.omit_pfc_log = true;
    let mut sim = Simulation::new(quiet.clone()).unwrap();
    sim.run_until(Time::MAX);
    let without = sim.finish();
    assert!(without.pfc_sent.is_empty() && without.pfc_received.is_empty());
    let a = output::summarize(&with_log, &cfg, None);
    let b = output::summarize(&without, &quiet, None);
    assert!(a.pfc.pause_frames > 0 && a.pfc.resume_frames > 0);
    let frames = |s: &output::Summary| (s.pfc.pause_frames, s.pfc.resume_frames);
    assert_eq!(frames(&a), frames(&b));
    assert_eq!(
        a.pfc.pause_frames + a.pfc.resume_frames,
        with_log.pfc_sent.len() as u64,
        "the counters count what the log holds"
    );
    assert_eq!(a.fct, b.fct);
    let dir = tempfile::tempdir().unwrap();
    let opts = WriteOptions {
        compat_hpcc: true,
        include_wall_time: false,
    };
    let written = output::write_all(dir.path(), &without, &quiet, &b, &opts).unwrap();
    assert!(!written
        .iter()
        .any(|p| p.ends_with("pfc.csv") || p.ends_with("pfc.txt")));
    assert!(written.iter().any(|p| p.ends_with("fct.txt")));
}

#[test]
fn outputs_are_byte_identical_across_runs() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let opts = WriteOptions {
        compat_hpcc: true,
        include_wall_time: false,
    };
    let mut written = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        let (r, cfg) = incast_run();
        // Different wall times must not matter when they are not included.
        let wall = Duration::from_millis(10 + i as u64 * 7);
        let summary = output::summarize(&r, &cfg, Some(wall));
        written.push(output::write_all(d.path(), &r, &cfg, &summary, &opts).unwrap());
    }
    assert_eq!(written[0].len(), written[1].len());
    for (a, b) in written[0].iter().zip(&written[1]) {
        assert_eq!(a.file_name(), b.file_name());
        assert!(
            fs::read(a).unwrap() == fs::read(b).unwrap(),
            "{} differs",
            a.display()
        );
    }
}

/// `%08x %08x %u %u %lu %lu %lu %lu`, checked field by field (the shape of the regex
/// `^[0-9a-f]{8} [0-9a-f]{8} \d+ \d+ \d+ \d+ \d+ \d+$`).
fn hpcc_fct_line_ok(line: &str) -> bool {
    let f: Vec<&str> = line.split(' ').collect();
    let hex = |s: &str| s.len() == 8 && s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    let dec = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    f.len() == 8 && hex(f[0]) && hex(f[1]) && f[2..].iter().all(|s| dec(s))
}

#[test]
fn hpcc_fct_and_pfc_formats() {
    let (r, cfg) = incast_run();
    let dir = tempfile::tempdir().unwrap();
    let summary = output::summarize(&r, &cfg, None);
    let opts = WriteOptions {
        compat_hpcc: true,
        include_wall_time: false,
    };
    output::write_all(dir.path(), &r, &cfg, &summary, &opts).unwrap();
    let fct = lines(&dir.path().join("fct.txt"));
    assert!(!fct.is_empty());
    let mut last_finish = 0u64;
    for l in &fct {
        assert!(hpcc_fct_line_ok(l), "bad fct.txt line {l:?}");
        let f: Vec<&str> = l.split(' ').collect();
        // Every flow goes to host 16: 11.0.16.1.
        assert_eq!(f[1], "0b001001");
        let src = u32::from_str_radix(f[0], 16).unwrap();
        assert_eq!(src & 0xff, 1);
        assert!(((src >> 8) & 0xff) < 16);
        // Completion order.
        let finish: u64 = f[5].parse::<u64>().unwrap() + f[6].parse::<u64>().unwrap();
        assert!(finish + 1 >= last_finish, "not in completion order: {l}");
        last_finish = finish;
        let fct_ns: u64 = f[6].parse().unwrap();
        let ideal_ns: u64 = f[7].parse().unwrap();
        assert!(fct_ns + 1 >= ideal_ns);
    }
    let pfc = lines(&dir.path().join("pfc.txt"));
    assert!(!pfc.is_empty());
    for (l, rec) in pfc.iter().zip(&r.pfc_received) {
        let f: Vec<u64> = l.split(' ').map(|s| s.parse().unwrap()).collect();
        assert_eq!(f.len(), 5, "{l}");
        assert_eq!(f[0], rec.time.as_ns());
        assert_eq!(f[1], u64::from(rec.node));
        assert_eq!(f[2], u64::from(rec.is_switch));
        assert_eq!(f[3], u64::from(rec.port) + 1);
        assert_eq!(f[4], u64::from(rec.quanta != 0));
    }
}

#[test]
fn unwritable_target_names_the_file() {
    let (r, cfg) = incast_run();
    let summary = output::summarize(&r, &cfg, None);
    let opts = WriteOptions::default();

    // The output "directory" is a regular file: the error names the directory.
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    fs::write(&blocker, b"x").unwrap();
    let err = output::write_all(&blocker.join("out"), &r, &cfg, &summary, &opts).unwrap_err();
    assert!(err.to_string().contains("not-a-dir"), "{err}");

    // A directory sits where `summary.json` must go (unwritable even for root): the error
    // names summary.json and no temporary file is left behind.
    let out = dir.path().join("out");
    fs::create_dir_all(out.join("summary.json").join("occupied")).unwrap();
    let err = output::write_all(&out, &r, &cfg, &summary, &opts).unwrap_err();
    assert!(err.to_string().contains("summary.json"), "{err}");
    assert!(err.path().ends_with("summary.json"));
    for e in fs::read_dir(&out).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "leftover {name}");
    }
}
