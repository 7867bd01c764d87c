//! Static PFC thresholds (`[switch.pfc] xoff`, `xon`) through the simulator: an 8-to-1
//! incast on one switch pauses each sender's PG when its shared occupancy reaches `xoff`,
//! whatever the free buffer (no PG holds more than `xoff` plus one frame in shared cells, a
//! higher `xoff` lets them hold more and pause less), the fabric stays lossless with the
//! headroom formula, every flow finishes, and a bad pair of thresholds is refused naming
//! the field.

mod common;

use headroom_sim::results::{RunResults, StopReason};
use headroom_sim::scenario;
use std::path::Path;

fn scenario_text(pfc: &str) -> String {
    format!(
        r#"
[topology]
kind = "star"
hosts = 9
rate = "100Gbps"

[switch]
buffer = "8MiB"
lossless = [3]

[switch.pfc]
{pfc}

[host.cc]
algorithm = "none"

[[workload]]
kind = "incast"
sender_count = 8
receiver = 0
size = "1MB"
prio = 3
"#
    )
}

fn run(pfc: &str) -> RunResults {
    let s = scenario::parse(&scenario_text(pfc), Path::new("static.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    common::run(s.config)
}

/// The largest shared occupancy of any ingress PG, and PAUSE frames sent.
fn peaks(r: &RunResults) -> (u64, u64) {
    let shared = r
        .switches
        .iter()
        .map(|s| s.peak_pg_shared_bytes)
        .max()
        .unwrap_or(0);
    let pauses = r
        .pfc_sent
        .iter()
        .filter(|p| p.is_switch && p.quanta > 0)
        .count() as u64;
    (shared, pauses)
}

#[test]
fn pgs_pause_at_the_static_xoff_and_the_fabric_stays_lossless() {
    let low = run("xoff = \"40KB\"\nxon = \"20KB\"");
    let high = run("xoff = \"200KB\"\nxon = \"100KB\"");
    let dynamic = run("");
    for (r, what) in [(&low, "40 KB"), (&high, "200 KB"), (&dynamic, "dynamic")] {
        assert_eq!(r.stop_reason, Some(StopReason::AllFlowsDone), "{what}");
        assert!(
            r.lossless_drops.is_empty(),
            "{what}: {:?}",
            r.lossless_drops
        );
        assert_eq!(r.drops.values().sum::<u64>(), 0, "{what}");
    }
    let (low_shared, low_pauses) = peaks(&low);
    let (high_shared, high_pauses) = peaks(&high);
    // 80 B cells and ~1.1 KB frames: XOFF at 40 KB, plus the frame that crossed it.
    assert!(
        (40_000..40_000 + 1_200).contains(&low_shared),
        "peak PG shared {low_shared} B with xoff 40 KB"
    );
    assert!(
        (200_000..200_000 + 1_200).contains(&high_shared),
        "peak PG shared {high_shared} B with xoff 200 KB"
    );
    assert!(
        low_pauses > high_pauses && high_pauses > 0,
        "{low_pauses} vs {high_pauses}"
    );
    // The dynamic threshold (alpha x free) of this buffer lets a PG hold more than either.
    assert!(peaks(&dynamic).0 > high_shared, "{:?}", peaks(&dynamic));
}

#[test]
fn bad_static_thresholds_are_refused_naming_the_field() {
    let cases = [
        (
            "xoff = \"40KB\"",
            "switch.pfc.xoff",
            "both `xoff` and `xon`",
        ),
        ("xon = \"40KB\"", "switch.pfc.xon", "both `xoff` and `xon`"),
        (
            "xoff = \"40KB\"\nxon = \"40KB\"",
            "switch.pfc.xon",
            "must be below xoff",
        ),
        ("xoff = \"0B\"\nxon = \"0B\"", "switch.pfc.xoff", ""),
    ];
    for (pfc, field, reason) in cases {
        let e = scenario::parse(&scenario_text(pfc), Path::new("static.toml")).expect_err(pfc);
        assert_eq!(e.field(), Some(field), "{pfc}: {e}");
        assert!(e.reason().contains(reason), "{pfc}: {e}");
    }
    let dsh = scenario_text("xoff = \"40KB\"\nxon = \"20KB\"")
        .replace("lossless = [3]", "lossless = [3]\nscheme = \"dsh\"");
    let e = scenario::parse(&dsh, Path::new("static.toml")).expect_err("dsh");
    assert_eq!(e.field(), Some("switch.pfc.xoff"), "{e}");
    assert!(e.reason().contains("dynamic by design"), "{e}");
}
