//! The DSH paper's experiments, run from `examples/dsh/` through the binary, with their
//! qualitative claims asserted.

use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn headroom(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_headroom"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the binary runs")
}

/// The percent of the buffer each scheme absorbed, from `burst.json` in `dir`.
fn absorbed_percent(dir: &Path) -> impl Fn(&str) -> f64 {
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("burst.json")).expect("burst.json"))
            .expect("json");
    move |scheme: &str| {
        doc["results"]
            .as_array()
            .expect("results")
            .iter()
            .find(|r| r["scheme"] == scheme)
            .and_then(|r| r["absorbed_percent"].as_f64())
            .expect("a result per scheme")
    }
}

#[test]
fn dsh_absorbs_a_larger_burst_than_sih_without_pause() {
    let out = tempfile::tempdir().expect("tempdir");
    let dir = out.path().to_str().expect("utf-8 path");
    let o = headroom(&["burst", "examples/dsh/burst.toml", "--quiet", "--out", dir]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pct = absorbed_percent(out.path());
    let (sih, shp, dsh) = (pct("sih"), pct("shp"), pct("dsh"));
    assert!(dsh > sih, "DSH {dsh}% must beat SIH {sih}%");
    // The paper: DSH absorbs bursts up to ~40 % of the buffer, more than 4x SIH.
    assert!(dsh / sih > 4.0, "DSH/SIH = {}", dsh / sih);
    assert!((30.0..50.0).contains(&dsh), "DSH absorbs {dsh}%");
    assert!(
        shp > sih && shp < dsh,
        "SHP {shp}% sits between SIH {sih}% and DSH {dsh}%"
    );
    assert!(out.path().join("burst_absorbed.png").exists());
}

/// Fig. 11 of the paper: the fan-in (ports 2-17 to port 30) meets two long flows that
/// congest port 31. The long flows pause their own senders under SIH whatever the burst;
/// only PAUSEs to the burst count, so SIH absorbs something, DSH several times more. (The
/// long flows settle for 10 ms here, 100 ms in the example's command; the search is coarse.)
#[test]
fn fig11_fan_in_beside_two_long_flows() {
    let out = tempfile::tempdir().expect("tempdir");
    let dir = out.path().to_str().expect("utf-8 path");
    let o = headroom(&[
        "burst",
        "examples/dsh/burst-fig11.toml",
        "--at",
        "10ms",
        "--resolution",
        "0.02",
        "--mmu",
        "sih,dsh",
        "--quiet",
        "--out",
        dir,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pct = absorbed_percent(out.path());
    let (sih, dsh) = (pct("sih"), pct("dsh"));
    assert!(sih > 0.0, "SIH absorbs part of the burst");
    assert!(dsh / sih > 4.0, "DSH {dsh}% vs SIH {sih}%");
}

#[test]
fn plan_buffer_reports_the_papers_reservations() {
    let o = headroom(&["plan-buffer", "--delay-ns", "2000", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(doc["eta_bytes"], 56_840);
    let scheme = |name: &str| {
        doc["schemes"]
            .as_array()
            .expect("schemes")
            .iter()
            .find(|s| s["scheme"] == name)
            .cloned()
            .expect("scheme present")
    };
    let reserved = |n: &str| {
        scheme(n)["headroom_reserved_bytes"]
            .as_u64()
            .expect("bytes")
    };
    let shared = |n: &str| scheme(n)["shared_bytes"].as_u64().expect("bytes");
    // 32 ports x 7 queues x 56,840 B, rounded up to 80 B cells per queue.
    assert_eq!(reserved("SIH"), 32 * 7 * 56_880);
    assert_eq!(reserved("DSH"), 32 * 56_880);
    assert!(shared("DSH") > shared("SHP") && shared("SHP") > shared("SIH"));
}

#[test]
fn dsh_does_less_collateral_damage_than_sih() {
    let out = tempfile::tempdir().expect("tempdir");
    let dir = out.path().to_str().expect("utf-8 path");
    let o = headroom(&[
        "compare",
        "examples/dsh/collateral.toml",
        "--mmu",
        // SIH second: mean FCTs are normalised to SIH's, not to the first run's.
        "dsh,sih",
        "--quiet",
        "--no-plots",
        "--out",
        dir,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.path().join("compare.json")).expect("compare.json"),
    )
    .expect("json");
    let run = |scheme: &str| {
        doc["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .find(|r| r["scheme"] == scheme)
            .cloned()
            .expect("run present")
    };
    let innocent = |scheme: &str| {
        run(scheme)["by_workload"]
            .as_array()
            .expect("groups")
            .iter()
            .find(|g| g["workload"] == "workload[1]")
            .and_then(|g| g["slowdown_p50"].as_f64())
            .expect("innocent flow finished")
    };
    let (sih, dsh) = (innocent("sih"), innocent("dsh"));
    assert!(dsh < sih, "innocent flow slowdown: DSH {dsh} vs SIH {sih}");
    let pauses = |s: &str| run(s)["queue_pauses"].as_u64().expect("count");
    assert!(pauses("dsh") < pauses("sih"));
    assert_eq!(run("sih")["lossless_drops"], 0);
    assert_eq!(run("dsh")["lossless_drops"], 0);
    // Each scheme's own outputs say which scheme produced them.
    for scheme in ["sih", "dsh"] {
        let summary: serde_json::Value = serde_json::from_slice(
            &std::fs::read(out.path().join(scheme).join("summary.json")).expect("summary"),
        )
        .expect("json");
        assert_eq!(summary["config"]["headroom_scheme"], scheme);
        // Its per-workload mean FCT is the one the comparison normalises.
        let compared = run(scheme)["by_workload"].clone();
        for (mine, theirs) in summary["fct"]["by_workload"]
            .as_array()
            .expect("by_workload")
            .iter()
            .zip(compared.as_array().expect("groups"))
        {
            assert_eq!(mine["workload"], theirs["workload"]);
            assert_eq!(mine["stats"]["mean_fct_ns"], theirs["mean_fct_ns"]);
        }
    }
    // The paper's metric: each scheme's mean FCT over SIH's, overall and per workload.
    let mean = |s: &str, g: Option<&str>| -> (f64, f64) {
        let r = run(s);
        let v = match g {
            None => r,
            Some(g) => r["by_workload"]
                .as_array()
                .expect("groups")
                .iter()
                .find(|x| x["workload"] == g)
                .cloned()
                .expect("group"),
        };
        (
            v["mean_fct_ns"].as_f64().expect("mean"),
            v["mean_fct_norm"].as_f64().expect("normalised"),
        )
    };
    for g in [None, Some("workload[0]"), Some("workload[1]")] {
        let (sih, sih_norm) = mean("sih", g);
        let (dsh, dsh_norm) = mean("dsh", g);
        assert_eq!(sih_norm, 1.0, "{g:?}");
        assert!(
            (dsh_norm - dsh / sih).abs() < 1e-12,
            "{g:?}: {dsh_norm} vs {dsh}/{sih}"
        );
    }
}
