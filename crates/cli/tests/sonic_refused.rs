//! What `headroom sonic plan` (and `diff`, `show`, `config`) refuse: every input SONiC's own
//! validation refuses (`headroom_sonic::validate`), with exit code 2, one message naming the
//! file that holds the bad value, the table, key, field and reason, and nothing written:
//! no output directory, and earlier outputs byte-identical.

use std::path::Path;

mod common;
use common::{example, headroom, stderr};

use serde_json::Value;

/// A temporary copy of the SN3700 example: config_db.json, asic_table.json, state_db.json.
fn sn3700() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for f in ["config_db.json", "asic_table.json", "state_db.json"] {
        std::fs::copy(example("sn3700").join(f), tmp.path().join(f)).expect("copy");
    }
    tmp
}

/// Writes `dir/name` as the example's `file` with `edit` applied.
fn edited(dir: &Path, file: &str, name: &str, edit: impl FnOnce(&mut Value)) {
    let text = std::fs::read_to_string(dir.join(file)).expect("read");
    let mut v: Value = serde_json::from_str(&text).expect("json");
    edit(&mut v);
    std::fs::write(dir.join(name), v.to_string()).expect("write");
}

/// `sonic plan` with the given files into `dir/out`.
fn plan_args<'a>(config: &'a str, asic: Option<&'a str>, state: Option<&'a str>) -> Vec<&'a str> {
    let mut a = vec!["sonic", "plan", "--config-db", config, "--out", "out"];
    if let Some(f) = asic {
        a.extend(["--asic-table", f]);
    }
    if let Some(f) = state {
        a.extend(["--state-db", f]);
    }
    a
}

/// Runs `args` in `dir` and checks: exit 2, one `error:` line naming every `expect`, no panic,
/// no `out` directory.
fn refused(dir: &Path, args: &[&str], expect: &[&str]) {
    let o = headroom(args, dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?} was accepted: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for e in expect {
        assert!(err.contains(e), "{args:?}: stderr lacks {e:?}:\n{err}");
    }
    assert!(!dir.join("out").exists(), "{args:?}: written on error");
}

/// `plan` on the example's config_db.json with `edit` applied (as `bad.json`), refused.
fn plan_refuses_config(edit: impl FnOnce(&mut Value), expect: &[&str]) {
    let tmp = sn3700();
    let d = tmp.path();
    edited(d, "config_db.json", "bad.json", edit);
    let args = plan_args("bad.json", Some("asic_table.json"), Some("state_db.json"));
    let mut want = vec!["error: bad.json: "];
    want.extend_from_slice(expect);
    refused(d, &args, &want);
}

fn set(v: &mut Value, table: &str, key: &str, fields: Value) {
    v[table][key] = fields;
}

#[test]
fn two_digit_pg_ids() {
    plan_refuses_config(
        |v| {
            set(
                v,
                "BUFFER_PG",
                "Ethernet0|10-11",
                serde_json::json!({"profile": "NULL"}),
            )
        },
        &[
            "BUFFER_PG|Ethernet0|10-11: PG 10-11 is out of range: Ethernet0 has 8 priority groups \
             (0-7, STATE_DB BUFFER_MAX_PARAM_TABLE|Ethernet0.max_priority_groups)",
        ],
    );
}

#[test]
fn pg_range_past_the_last_pg() {
    plan_refuses_config(
        |v| {
            set(
                v,
                "BUFFER_PG",
                "Ethernet0|7-8",
                serde_json::json!({"profile": "NULL"}),
            )
        },
        &["BUFFER_PG|Ethernet0|7-8: PG 7-8 is out of range", "(0-7"],
    );
}

#[test]
fn pg_ids_default_to_eight_without_state_db() {
    let tmp = sn3700();
    let d = tmp.path();
    edited(d, "config_db.json", "bad.json", |v| {
        set(v, "BUFFER_PG", "Ethernet0|8", serde_json::json!({}))
    });
    refused(
        d,
        &plan_args("bad.json", Some("asic_table.json"), None),
        &[
            "bad.json: BUFFER_PG|Ethernet0|8: PG 8 is out of range",
            "SONiC's YANG pg_num [0-7]; STATE_DB does not publish max_priority_groups",
        ],
    );
}

#[test]
fn overlapping_pg_ranges() {
    plan_refuses_config(
        |v| set(v, "BUFFER_PG", "Ethernet0|4", serde_json::json!({"profile": "NULL"})),
        &["BUFFER_PG|Ethernet0|4: PG 4 overlaps BUFFER_PG|Ethernet0|3-4 (PG ranges of a port must be disjoint)"],
    );
}

#[test]
fn pg_on_a_port_that_does_not_exist() {
    plan_refuses_config(
        |v| {
            set(
                v,
                "BUFFER_PG",
                "Ethernet1|3-4",
                serde_json::json!({"profile": "NULL"}),
            )
        },
        &["BUFFER_PG|Ethernet1|3-4: port Ethernet1 does not exist in PORT"],
    );
}

#[test]
fn queue_out_of_range() {
    // The example's STATE_DB publishes 8 queues per port.
    plan_refuses_config(
        |v| {
            set(
                v,
                "BUFFER_QUEUE",
                "Ethernet0|7-9",
                serde_json::json!({"profile": "q_lossy_profile"}),
            )
        },
        &[
            "BUFFER_QUEUE|Ethernet0|7-9: queue 7-9 is out of range: Ethernet0 has 8 queues (0-7, \
             STATE_DB BUFFER_MAX_PARAM_TABLE|Ethernet0.max_queues)",
        ],
    );
}

#[test]
fn overlapping_queue_ranges() {
    plan_refuses_config(
        |v| {
            set(
                v,
                "BUFFER_QUEUE",
                "Ethernet0|2",
                serde_json::json!({"profile": "q_lossy_profile"}),
            )
        },
        &["BUFFER_QUEUE|Ethernet0|2: queue 2 overlaps BUFFER_QUEUE|Ethernet0|0-2"],
    );
}

#[test]
fn absurd_cable_length() {
    plan_refuses_config(
        |v| v["CABLE_LENGTH"]["AZURE"]["Ethernet0"] = "99999999999999999999m".into(),
        &[
            "CABLE_LENGTH|AZURE: cable length of `Ethernet0` = \"99999999999999999999m\" is out of \
             range: at most 100000m (100 km) is accepted",
        ],
    );
}

#[test]
fn port_mtu_out_of_range() {
    plan_refuses_config(
        |v| v["PORT"]["Ethernet0"]["mtu"] = "65535".into(),
        &["PORT|Ethernet0: field `mtu` = \"65535\" is out of range: 1..=9216 bytes"],
    );
}

#[test]
fn profile_dynamic_th_out_of_range() {
    plan_refuses_config(
        |v| v["BUFFER_PROFILE"]["q_lossy_profile"]["dynamic_th"] = "100".into(),
        &["BUFFER_PROFILE|q_lossy_profile: field `dynamic_th` = \"100\" is out of range: -8..=8"],
    );
}

#[test]
fn byte_size_out_of_range() {
    plan_refuses_config(
        |v| v["BUFFER_PROFILE"]["q_lossy_profile"]["size"] = "18446744073709551615".into(),
        &["BUFFER_PROFILE|q_lossy_profile: field `size` = \"18446744073709551615\" is out of range: at most 4294967296 bytes"],
    );
}

#[test]
fn missing_asic_table_names_both_options() {
    let tmp = sn3700();
    refused(
        tmp.path(),
        &plan_args("config_db.json", None, Some("state_db.json")),
        &["--asic-table FILE", "or --redis URL", "is required"],
    );
    refused(
        tmp.path(),
        &plan_args("config_db.json", None, None),
        &["--asic-table FILE", "or --redis URL", "is required"],
    );
}

#[test]
fn bad_state_db_value_names_state_db() {
    let tmp = sn3700();
    let d = tmp.path();
    edited(d, "state_db.json", "bad_state.json", |v| {
        v["BUFFER_MAX_PARAM_TABLE"]["Ethernet0"]["max_priority_groups"] = "eight".into()
    });
    refused(
        d,
        &plan_args("config_db.json", Some("asic_table.json"), Some("bad_state.json")),
        &["error: bad_state.json: BUFFER_MAX_PARAM_TABLE|Ethernet0: field `max_priority_groups` = \"eight\""],
    );
}

#[test]
fn bad_asic_value_names_the_asic_file() {
    let tmp = sn3700();
    let d = tmp.path();
    edited(d, "asic_table.json", "bad_asic.json", |v| {
        v["ASIC_TABLE:MELLANOX-SPECTRUM-2"]["cell_size"] = "big".into()
    });
    refused(
        d,
        &plan_args(
            "config_db.json",
            Some("bad_asic.json"),
            Some("state_db.json"),
        ),
        &["error: bad_asic.json: ASIC_TABLE|MELLANOX-SPECTRUM-2: field `cell_size` = \"big\""],
    );
}

#[test]
fn earlier_outputs_are_left_untouched() {
    let tmp = sn3700();
    let d = tmp.path();
    let ok = headroom(
        &[
            "sonic",
            "plan",
            "--config-db",
            "config_db.json",
            "--asic-table",
            "asic_table.json",
            "--out",
            "prev",
            "--quiet",
        ],
        d,
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let before: Vec<Vec<u8>> = ["appl_db.json", "state_db.json"]
        .iter()
        .map(|f| std::fs::read(d.join("prev").join(f)).expect("read"))
        .collect();
    edited(d, "config_db.json", "bad.json", |v| {
        set(v, "BUFFER_PG", "Ethernet0|10-11", serde_json::json!({}))
    });
    let o = headroom(
        &[
            "sonic",
            "plan",
            "--config-db",
            "bad.json",
            "--asic-table",
            "asic_table.json",
            "--out",
            "prev",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    for (f, b) in ["appl_db.json", "state_db.json"].iter().zip(&before) {
        assert!(
            std::fs::read(d.join("prev").join(f)).expect("read") == *b,
            "{f} changed"
        );
    }
    let entries = std::fs::read_dir(d.join("prev")).expect("dir").count();
    assert_eq!(entries, 2, "no temporary files left");
}

#[test]
fn diff_and_show_refuse_what_plan_refuses() {
    let tmp = sn3700();
    let d = tmp.path();
    edited(d, "config_db.json", "bad.json", |v| {
        set(v, "BUFFER_PG", "Ethernet0|4", serde_json::json!({}))
    });
    let want = ["error: bad.json: BUFFER_PG|Ethernet0|4: PG 4 overlaps"];
    refused(
        d,
        &[
            "sonic",
            "diff",
            "--config-db",
            "config_db.json",
            "--config-db-new",
            "bad.json",
            "--asic-table",
            "asic_table.json",
        ],
        &want,
    );
    refused(
        d,
        &[
            "sonic",
            "show",
            "buffer",
            "configuration",
            "--config-db",
            "bad.json",
        ],
        &want,
    );
}

#[test]
fn config_refuses_an_absurd_cable_length_and_writes_nothing() {
    let tmp = sn3700();
    let d = tmp.path();
    let before = std::fs::read(d.join("config_db.json")).expect("read");
    for len in ["99999999999999999999m", "100001m"] {
        refused(
            d,
            &[
                "sonic",
                "config",
                "--config-db",
                "config_db.json",
                "interface",
                "cable-length",
                "Ethernet0",
                len,
            ],
            &[&format!(
                "cable length \"{len}\" of Ethernet0 is out of range: at most 100000m (100 km)"
            )],
        );
    }
    assert!(std::fs::read(d.join("config_db.json")).expect("read") == before);
    // The bound itself is accepted.
    let o = headroom(
        &[
            "sonic",
            "config",
            "--config-db",
            "config_db.json",
            "interface",
            "cable-length",
            "Ethernet0",
            "100000m",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn config_refuses_to_write_a_config_plan_would_refuse() {
    let tmp = sn3700();
    let d = tmp.path();
    edited(d, "config_db.json", "config_db.json", |v| {
        set(v, "BUFFER_PG", "Ethernet0|10-11", serde_json::json!({}))
    });
    let before = std::fs::read(d.join("config_db.json")).expect("read");
    refused(
        d,
        &[
            "sonic",
            "config",
            "--config-db",
            "config_db.json",
            "--state-db",
            "state_db.json",
            "interface",
            "cable-length",
            "Ethernet8",
            "40m",
        ],
        &[
            "the change would leave config_db.json invalid: BUFFER_PG|Ethernet0|10-11: PG 10-11 \
             is out of range",
        ],
    );
    assert!(std::fs::read(d.join("config_db.json")).expect("read") == before);
}

/// Extreme values in every numeric field of the three files: `plan` exits 0 or 2, never
/// panics, and writes nothing when it refuses.
#[test]
fn extreme_numbers_never_panic() {
    let tmp = sn3700();
    let d = tmp.path();
    let values = [
        "18446744073709551616",
        "99999999999999999999",
        "-1",
        "1e400",
        "nan",
        "0x7fffffffffffffff",
        "0",
    ];
    let targets: [(&str, &str, &str, &str); 12] = [
        ("config_db.json", "PORT", "Ethernet0", "speed"),
        ("config_db.json", "PORT", "Ethernet0", "mtu"),
        ("config_db.json", "CABLE_LENGTH", "AZURE", "Ethernet0"),
        (
            "config_db.json",
            "BUFFER_POOL",
            "egress_lossless_pool",
            "size",
        ),
        (
            "config_db.json",
            "BUFFER_PROFILE",
            "ingress_lossy_profile",
            "size",
        ),
        (
            "config_db.json",
            "BUFFER_PROFILE",
            "q_lossy_profile",
            "dynamic_th",
        ),
        ("config_db.json", "LOSSLESS_TRAFFIC_PATTERN", "AZURE", "mtu"),
        (
            "config_db.json",
            "DEFAULT_LOSSLESS_BUFFER_PARAMETER",
            "AZURE",
            "default_dynamic_th",
        ),
        (
            "asic_table.json",
            "",
            "ASIC_TABLE:MELLANOX-SPECTRUM-2",
            "cell_size",
        ),
        (
            "asic_table.json",
            "",
            "ASIC_TABLE:MELLANOX-SPECTRUM-2",
            "pipeline_latency",
        ),
        (
            "state_db.json",
            "BUFFER_MAX_PARAM_TABLE",
            "global",
            "mmu_size",
        ),
        (
            "state_db.json",
            "BUFFER_MAX_PARAM_TABLE",
            "Ethernet0",
            "max_queues",
        ),
    ];
    for (file, table, key, field) in targets {
        for v in values {
            let value = if table == "CABLE_LENGTH" {
                format!("{v}m")
            } else {
                v.to_string()
            };
            edited(d, file, &format!("x_{file}"), |j| {
                let entry = if table.is_empty() {
                    &mut j[key]
                } else {
                    &mut j[table][key]
                };
                entry[field] = Value::String(value.clone());
            });
            let name = |f: &str| {
                if f == file {
                    format!("x_{f}")
                } else {
                    f.to_string()
                }
            };
            let (c, a, s) = (
                name("config_db.json"),
                name("asic_table.json"),
                name("state_db.json"),
            );
            let o = headroom(&plan_args(&c, Some(&a), Some(&s)), d);
            let err = stderr(&o);
            let what = format!("{file} {table}|{key}.{field} = {value}");
            assert!(!err.contains("panicked"), "{what}: panic: {err}");
            match o.status.code() {
                Some(0) => {
                    std::fs::remove_dir_all(d.join("out")).expect("outputs");
                }
                Some(2) => {
                    assert!(!d.join("out").exists(), "{what}: written on error");
                    assert_eq!(err.lines().count(), 1, "{what}: {err}");
                }
                c => panic!("{what}: exit {c:?}: {err}"),
            }
        }
    }
}
