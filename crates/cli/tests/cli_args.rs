//! Numeric flags of `plan-buffer`, `burst`, `compare` and `workload` that make no sense are
//! refused with exit code 2 and the flag named, before any work is done; and `plan-buffer`
//! reports a scheme that does not fit the buffer instead of failing.

mod common;
use common::{headroom, stderr, stdout};
use std::path::Path;

/// A small scenario for `burst` and `compare`: one switch, lossless priority 3 only (the
/// default), the default 32 MiB buffer of 80 B cells, a stop at 1 ms.
const STAR: &str = r#"
name = "star"
stop_time = "1ms"
[topology]
kind = "star"
hosts = 4
rate = "100Gbps"
delay = "1us"
[[workload]]
kind = "incast"
senders = [0]
receiver = 1
size = "4KiB"
"#;

/// Runs `headroom <args>` next to the `STAR` scenario (as `star.toml`) and checks exit code
/// 2, no panic, and that stderr names `flag` and contains `reason` (with single spaces).
fn refused(args: &[&str], flag: &str, reason: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("star.toml"), STAR).expect("write scenario");
    let out = headroom(args, dir.path());
    // miette wraps long messages under a `│` gutter; compare words, not line breaks.
    let err = stderr(&out)
        .split_whitespace()
        .filter(|w| *w != "│")
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(out.status.code(), Some(2), "{args:?}: stderr: {err}");
    assert!(!err.contains("panicked"), "{args:?}: panic: {err}");
    assert!(
        err.contains(flag),
        "{args:?}: stderr does not name {flag}: {err}"
    );
    assert!(
        err.contains(reason),
        "{args:?}: stderr lacks `{reason}`: {err}"
    );
    assert!(
        !dir.path().join("out").exists(),
        "{args:?}: nothing is written on error"
    );
}

/// One test per refused input: `name: [args...] => flag, reason fragment`.
macro_rules! refusals {
    ($($name:ident: [$($arg:expr),+] => $flag:expr, $reason:expr;)+) => {
        $(
            #[test]
            fn $name() {
                refused(&[$($arg),+], $flag, $reason);
            }
        )+
    };
}

const POSITIVE: &str = "positive finite number";
const PRIORITY: &str = "priorities are 0 to 7";

refusals! {
    plan_shp_ratio_zero: ["plan-buffer", "--shp-ratio", "0"] => "--shp-ratio", POSITIVE;
    plan_shp_ratio_negative: ["plan-buffer", "--shp-ratio", "-2"] => "--shp-ratio", POSITIVE;
    plan_shp_ratio_nan: ["plan-buffer", "--shp-ratio", "NaN"] => "--shp-ratio", POSITIVE;
    plan_shp_ratio_infinite: ["plan-buffer", "--shp-ratio", "inf"] => "--shp-ratio", POSITIVE;
    plan_speed_zero: ["plan-buffer", "--speed", "0Gbps"] => "--speed", "positive rate";
    plan_speed_negative: ["plan-buffer", "--speed", "-5Gbps"] => "--speed", "-5Gbps";
    plan_speed_absurd: ["plan-buffer", "--speed", "100Tbps"] => "--speed", "faster than any port";
    plan_mtu_zero: ["plan-buffer", "--mtu", "0"] => "--mtu", "64..=65535";
    plan_mtu_huge: ["plan-buffer", "--mtu", "100000"] => "--mtu", "64..=65535";
    plan_cell_zero: ["plan-buffer", "--cell", "0"] => "--cell", "a cell is 1 B";
    plan_cell_above_buffer: ["plan-buffer", "--cell", "32MB"] => "--cell", "larger than --buffer";
    plan_ports_zero: ["plan-buffer", "--ports", "0"] => "--ports", "1..=65535";
    plan_ports_huge: ["plan-buffer", "--ports", "100000000000"] => "--ports", "1..=65535";
    plan_alpha_zero: ["plan-buffer", "--alpha", "0"] => "--alpha", POSITIVE;
    plan_alpha_negative: ["plan-buffer", "--alpha", "-1"] => "--alpha", POSITIVE;
    plan_alpha_infinite: ["plan-buffer", "--alpha", "inf"] => "--alpha", POSITIVE;
    plan_lossless_nine: ["plan-buffer", "--lossless", "9"] => "--lossless", "1..=8";
    plan_lossless_zero: ["plan-buffer", "--lossless", "0"] => "--lossless", "1..=8";
    plan_cable_negative: ["plan-buffer", "--cable-m", "-5"] => "--cable-m", "0 to 200000 m";
    plan_cable_infinite: ["plan-buffer", "--cable-m", "inf"] => "--cable-m", "0 to 200000 m";
    plan_delay_huge: ["plan-buffer", "--delay-ns", "99999999999999"] => "--delay-ns", "0..=1000000";
    plan_buffer_zero: ["plan-buffer", "--buffer", "0B"] => "--buffer", "at least 1 byte";
    compare_shp_ratio_zero: ["compare", "star.toml", "--shp-ratio", "0"] => "--shp-ratio", POSITIVE;
    compare_shp_ratio_negative: ["compare", "star.toml", "--shp-ratio", "-1"] => "--shp-ratio", POSITIVE;
    compare_dsh_delta_whole_buffer: ["compare", "star.toml", "--mmu", "dsh", "--dsh-delta", "40000000"] => "--dsh-delta", "resume only once empty";
    compare_scheme_twice: ["compare", "star.toml", "--mmu", "sih,dsh,sih"] => "--mmu", "listed twice";
    burst_shp_ratio_zero: ["burst", "star.toml", "--shp-ratio", "0"] => "--shp-ratio", POSITIVE;
    burst_shp_ratio_nan: ["burst", "star.toml", "--shp-ratio", "nan"] => "--shp-ratio", POSITIVE;
    burst_fan_in_zero: ["burst", "star.toml", "--fan-in", "0"] => "--fan-in", "at least 1";
    burst_receivers_zero: ["burst", "star.toml", "--receivers", "1,0"] => "--receivers", "at least 1";
    burst_resolution_zero: ["burst", "star.toml", "--resolution", "0"] => "--resolution", "above 0 and below 1";
    burst_resolution_whole_buffer: ["burst", "star.toml", "--resolution", "1"] => "--resolution", "above 0 and below 1";
    burst_resolution_below_a_cell: ["burst", "star.toml", "--resolution", "1e-7"] => "--resolution", "below one MMU cell (80 B)";
    burst_prio_nine: ["burst", "star.toml", "--prio", "9"] => "--prio", PRIORITY;
    burst_prio_lossy: ["burst", "star.toml", "--prio", "5"] => "--prio", "not a lossless priority";
    burst_dsh_delta_whole_buffer: ["burst", "star.toml", "--mmu", "dsh", "--dsh-delta", "33554432"] => "--dsh-delta", "resume only once empty";
    burst_after_the_stop: ["burst", "star.toml", "--at", "2ms"] => "--at", "the scenario stops at 1ms";
    burst_scheme_twice: ["burst", "star.toml", "--mmu", "dsh,dsh"] => "--mmu", "listed twice";
    workload_prio_nine: ["workload", "--topology", "t.txt", "--prio", "9"] => "--prio", PRIORITY;
    workload_prio_negative: ["workload", "--topology", "t.txt", "--prio", "-1"] => "--prio", PRIORITY;
    workload_load_zero: ["workload", "--topology", "t.txt", "--load", "0"] => "--load", "above 0 and at most 1";
    workload_load_above_one: ["workload", "--topology", "t.txt", "--load", "1.5"] => "--load", "above 0 and at most 1";
    workload_load_nan: ["workload", "--topology", "t.txt", "--load", "NaN"] => "--load", "above 0 and at most 1";
    workload_duration_zero: ["workload", "--topology", "t.txt", "--duration", "0s"] => "--duration", "longer than zero";
    workload_host_rate_zero: ["workload", "--topology", "t.txt", "--host-rate", "0Gbps"] => "--host-rate", "positive rate";
}

/// `plan-buffer --json` on `args`, parsed.
fn plan_json(args: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = vec!["plan-buffer", "--json"];
    all.extend_from_slice(args);
    let out = headroom(&all, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("json")
}

fn scheme<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["schemes"]
        .as_array()
        .expect("schemes")
        .iter()
        .find(|s| s["scheme"] == name)
        .expect("a row per scheme")
}

#[test]
fn plan_buffer_marks_sih_as_not_fitting_and_plans_the_others() {
    // 64 ports x 7 queues of 132 KB static headroom is 59 MB: SIH and SHP (half of it)
    // overrun 16 MB, DSH (one eta per port, 8.4 MB) fits.
    let args = ["--ports", "64", "--cable-m", "1000", "--buffer", "16MB"];
    let doc = plan_json(&args);
    let (sih, shp, dsh) = (
        scheme(&doc, "SIH"),
        scheme(&doc, "SHP"),
        scheme(&doc, "DSH"),
    );
    assert_eq!(sih["fits"], false);
    assert!(sih["shared_bytes"].is_null());
    assert!(sih["headroom_reserved_bytes"].as_u64().expect("headroom") > 16_000_000);
    assert!(sih["reason"]
        .as_str()
        .expect("reason")
        .contains("leave no shared buffer"));
    assert_eq!(shp["fits"], false);
    assert_eq!(dsh["fits"], true);
    assert!(dsh["shared_bytes"].as_u64().expect("shared") > 0);

    let dir = tempfile::tempdir().expect("tempdir");
    let mut all = vec!["plan-buffer"];
    all.extend_from_slice(&args);
    let out = headroom(&all, dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row: {table}"))
            .to_string()
    };
    assert!(row("SIH").contains("does not fit"), "{table}");
    assert!(!row("DSH").contains("does not fit"), "{table}");
    assert!(row("DSH").contains('%'), "{table}");
}

#[test]
fn plan_buffer_where_only_shp_and_dsh_fit() {
    // 32 ports at 1 km: SIH's 29.5 MB overruns 16 MB, SHP's half and DSH fit.
    let doc = plan_json(&["--cable-m", "1000"]);
    assert_eq!(scheme(&doc, "SIH")["fits"], false);
    assert_eq!(scheme(&doc, "SHP")["fits"], true);
    assert_eq!(scheme(&doc, "DSH")["fits"], true);
}

#[test]
fn plan_buffer_with_no_scheme_fitting_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = headroom(
        &["plan-buffer", "--ports", "64", "--cable-m", "2000"],
        dir.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let table = stdout(&out);
    assert_eq!(table.matches("does not fit").count(), 3, "{table}");
    assert!(table.contains("no scheme fits"), "{table}");
}

#[test]
fn defaults_are_accepted() {
    // The defaults themselves must pass the parsers (clap parses default values too).
    let dir = tempfile::tempdir().expect("tempdir");
    let out = headroom(&["plan-buffer"], dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!Path::new(&dir.path().join("out")).exists());
}
