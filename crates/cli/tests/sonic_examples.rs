//! The shipped SONiC examples (`examples/sonic/`) are what SONiC would have on those switches:
//! the buffer tables are the Mellanox dynamic-mode defaults (`defaults::mellanox_dynamic`),
//! the ASIC files are the real `asic_table.j2` values, and the MMU sizes are the SKUs' buffer.

use std::path::{Path, PathBuf};

use headroom_sonic::defaults::{mellanox_dynamic, DefaultOptions, DefaultPort};
use headroom_sonic::tables::config::ConfigDb;
use headroom_sonic::tables::raw;
use headroom_sonic::tables::state::{AsicModel, StateDb, SKU_EGRESS_LOSSLESS_POOL};

fn example(name: &str, file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/sonic")
        .join(name)
        .join(file)
}

fn text(name: &str, file: &str) -> String {
    std::fs::read_to_string(example(name, file)).expect("example file")
}

fn config(name: &str) -> ConfigDb {
    let raw = raw::from_nested_json(&text(name, "config_db.json")).expect("nested JSON");
    ConfigDb::from_raw(&raw).expect("valid CONFIG_DB")
}

fn state(name: &str) -> StateDb {
    let mut db = raw::from_nested_json(&text(name, "state_db.json")).expect("nested JSON");
    let asic = raw::from_flat_json(&text(name, "asic_table.json"), ':').expect("flat JSON");
    raw::merge(&mut db, &asic);
    StateDb::from_raw(&db).expect("valid STATE_DB")
}

/// (example, platform, hwsku, ASIC, ports, buffer size).
const EXAMPLES: [(&str, &str, &str, AsicModel, usize, u64); 2] = [
    (
        "sn3700",
        "x86_64-mlnx_msn3700-r0",
        "ACS-MSN3700",
        AsicModel::Spectrum2,
        32,
        34_287_552,
    ),
    (
        "sn5600",
        "x86_64-nvidia_sn5600-r0",
        "ACS-SN5600",
        AsicModel::Spectrum4,
        64,
        158_229_504,
    ),
];

#[test]
fn asic_tables_are_the_real_parameters() {
    for (name, platform, _, asic, _, _) in EXAMPLES {
        let s = state(name);
        assert_eq!(s.asic(), Ok(&asic.params()), "{name}");
        assert_eq!(AsicModel::from_mellanox_platform(platform), Some(asic));
        let flat: serde_json::Value =
            serde_json::from_str(&text(name, "asic_table.json")).expect("json");
        let (key, fields) = asic.flat_entry();
        assert_eq!(
            flat,
            serde_json::json!({ key: fields }),
            "{name}: asic_table.json is the asic_table.j2 entry"
        );
    }
}

#[test]
fn buffer_tables_are_the_mellanox_dynamic_defaults() {
    for (name, platform, hwsku, _, nports, size) in EXAMPLES {
        let c = config(name);
        assert_eq!(c.ports.len(), nports, "{name}");
        let ports: Vec<DefaultPort> = c
            .ports
            .iter()
            .map(|(n, p)| DefaultPort {
                name: n.clone(),
                port: p.clone(),
                cable: c.cable_length(n).expect("cable length").clone(),
            })
            .collect();
        let d = mellanox_dynamic(&ports, &DefaultOptions::new(platform, size));
        assert_eq!(c.pools, d.pools, "{name}");
        assert_eq!(c.profiles, d.profiles, "{name}");
        assert_eq!(c.pgs, d.pgs, "{name}");
        assert_eq!(c.queues, d.queues, "{name}");
        assert_eq!(c.ingress_profile_lists, d.ingress_profile_lists, "{name}");
        assert_eq!(c.egress_profile_lists, d.egress_profile_lists, "{name}");
        assert_eq!(c.cable_lengths, d.cable_lengths, "{name}");
        assert_eq!(c.traffic_patterns, d.traffic_patterns, "{name}");
        assert_eq!(c.default_lossless, d.default_lossless, "{name}");
        let md = &c.device_metadata["localhost"];
        assert_eq!(md.platform.as_deref(), Some(platform));
        assert_eq!(md.hwsku.as_deref(), Some(hwsku));
        assert_eq!(md.buffer_model.as_deref(), Some("dynamic"));
    }
}

#[test]
fn mmu_sizes_are_the_skus_buffer() {
    for (name, _, _, _, _, size) in EXAMPLES {
        assert_eq!(state(name).mmu_size, Some(size), "{name}");
    }
    let sku = |s: &str| {
        SKU_EGRESS_LOSSLESS_POOL
            .iter()
            .find(|(k, _)| *k == s)
            .map(|(_, v)| *v)
    };
    // SN3700 and SN3800 share the Spectrum-2 buffer; the SN5600 size is its own SKU's.
    assert_eq!(sku("ACS-MSN3800"), Some(34_287_552));
    assert_eq!(sku("ACS-SN5600"), Some(158_229_504));
}

#[test]
fn sn5600_mixes_speeds_lanes_and_cables() {
    let c = config("sn5600");
    let mut kinds = std::collections::BTreeSet::new();
    for (n, p) in &c.ports {
        kinds.insert((
            p.speed.expect("speed"),
            p.lane_count(),
            c.cable_length(n).expect("cable").text().to_string(),
        ));
    }
    let want: std::collections::BTreeSet<_> = [
        (100_000, 4, "5m".to_string()),
        (400_000, 4, "300m".to_string()),
        (400_000, 8, "5m".to_string()),
        (800_000, 8, "40m".to_string()),
    ]
    .into_iter()
    .collect();
    assert_eq!(kinds, want);
    assert_eq!(c.ports.values().filter(|p| !p.is_up()).count(), 2);
}
