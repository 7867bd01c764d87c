//! Every scenario in `examples/*.toml` parses; the known ones build the networks and
//! workloads their comments describe.

use headroom_mech::units::Rate;
use headroom_sim::config::CcConfig;
use headroom_sim::scenario;
use headroom_sim::topology::NodeId;
use std::path::{Path, PathBuf};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_parses() {
    let files = examples();
    assert!(files.len() >= 3, "{files:?}");
    for path in files {
        let s = scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.name.is_empty());
        assert!(
            !s.config.flows.is_empty() || s.config.stop_time.is_some(),
            "{}",
            path.display()
        );
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let hosts = s.config.topology.hosts().len();
        let nodes = s.config.topology.len();
        let flows = &s.config.flows;
        match stem.as_deref() {
            Some("incast-2to1-dumbbell") => {
                assert_eq!((hosts, nodes), (3, 5));
                assert_eq!(flows.len(), 2);
                assert!(flows
                    .iter()
                    .all(|f| f.dst == NodeId(2) && f.size == 1_000_000));
                assert!(matches!(s.config.host.cc, CcConfig::Dcqcn(_)));
                assert!(s.config.record.fail_on_lossless_drop);
            }
            Some("incast-16to1-star") => {
                assert_eq!((hosts, nodes), (17, 18));
                assert_eq!(flows.len(), 16);
                assert!(flows
                    .iter()
                    .all(|f| f.dst == NodeId(0) && f.size == 512 * 1024));
                let srcs: Vec<u32> = flows.iter().map(|f| f.src.0).collect();
                assert_eq!(srcs, (1..=16).collect::<Vec<u32>>());
                assert_eq!(s.config.switch.buffer_bytes, 4 << 20);
            }
            Some("websearch-leaf-spine") => {
                assert_eq!((hosts, nodes), (32, 40));
                assert_eq!(s.config.topology.links.len(), 32 + 16);
                assert!(s
                    .config
                    .topology
                    .links
                    .iter()
                    .all(|l| l.rate == Rate::from_gbps(100)));
                // About 32 hosts x 3 ms x 50 Gb/s / (8 x 1.6 MB) = 375 flows.
                assert!((200..600).contains(&flows.len()), "{} flows", flows.len());
                assert!(flows.windows(2).all(|w| w[0].start <= w[1].start));
                // Deterministic.
                let again = scenario::load(&path).expect("valid");
                assert_eq!(&again.config.flows, flows);
            }
            _ => {}
        }
    }
}
