//! Congestion points in a run: only queues that mark and carry data have one; the marks
//! `marks.csv` samples record never exceed the queue's totals; every departure is counted in
//! one state and the time in states adds up to the run; only TCD marks UE.

use headroom_sim::net::Simulation;
use headroom_sim::results::RunResults;
use headroom_sim::scenario;
use std::path::Path;

/// A 4-host star at 100 Gb/s: hosts 1 and 2 send 1 MB to host 0 on priority 3, host 3 sends
/// 1 MB to host 0 on priority 1 (whose queue does not mark); host 0's NIC buffer drains at
/// 50 Gb/s and pauses the switch, so the switch's port to host 0 is paused and congested.
fn run(detector: &str) -> RunResults {
    let text = format!(
        r#"
stop_time = "2ms"
[topology]
kind = "star"
hosts = 4
rate = "100Gbps"
[switch]
lossless = [1, 3]
[switch.ecn]
detector = "{detector}"
[switch.ecn.queue.1]
enabled = false
[host]
nic_buffer = {{ size = "1MiB", xoff = "64KiB", xon = "32KiB", drain = "50Gbps" }}
[[workload]]
kind = "incast"
senders = [1, 2]
receiver = 0
size = "1MB"
[[workload]]
kind = "flows"
[[workload.flow]]
src = 3
dst = 0
size = "1MB"
prio = 1
[output]
sample_interval = "5us"
"#
    );
    let s = scenario::parse(&text, Path::new("marking.toml")).expect("valid scenario");
    Simulation::new(s.config).expect("builds").run()
}

#[test]
fn congestion_points_cover_marking_data_queues_and_samples_add_up() {
    for detector in ["red", "tcd", "tcd-released"] {
        let r = run(detector);
        assert!(
            !r.marking.is_empty(),
            "{detector}: data left marking queues"
        );
        assert!(
            r.marking.iter().all(|m| m.queue == 3),
            "{detector}: queue 1 does not mark, other queues carry no data: {:?}",
            r.marking
        );
        for m in &r.marking {
            let rows = r
                .mark_samples
                .iter()
                .filter(|s| (s.node, s.port, s.queue) == (m.node, m.port, m.queue));
            let (mut d, mut ce, mut ue) = (0, 0, 0);
            for s in rows {
                d += s.departures;
                ce += s.ce_marked;
                ue += s.ue_marked;
            }
            // Samples end at the last sample time; departures after it are in the totals only.
            assert!(d <= m.totals.departures && ce <= m.totals.ce_marked);
            assert!(ue <= m.totals.ue_marked);
            assert_eq!(
                m.totals.departures_in.iter().sum::<u64>(),
                m.totals.departures,
                "{detector}: every departure in one state"
            );
            let time: u64 = m.totals.time_in.iter().map(|t| t.as_ps()).sum();
            assert_eq!(
                time,
                r.end_time.as_ps(),
                "{detector}: time in states adds up"
            );
        }
        let ue: u64 = r.marking.iter().map(|m| m.totals.ue_marked).sum();
        if detector == "red" {
            assert_eq!(ue, 0);
        } else {
            assert!(ue > 0, "{detector}: the paused port marks UE");
        }
    }
}
