//! SONiC's default dynamic-mode buffer configuration (sonic-buffer.md §2.3): what
//! `buffers_config.j2` + Mellanox `buffers_defaults_objects.j2` render, and the Mellanox zero
//! profiles (`zero_profiles.j2`).
//!
//! Invariant: the produced [`ConfigDb`] passes [`ConfigDb::from_raw`]'s cross checks (every
//! reference resolves, directions match).

use std::collections::BTreeMap;

use crate::tables::appl::{ApplDb, ApplPool, ApplProfile};
use crate::tables::config::{
    BufferPg, BufferPool, BufferProfile, BufferQueue, ConfigDb, DefaultLosslessParams,
    DeviceMetadata, HeadroomType, LosslessTrafficPattern, Port,
};
use crate::tables::{CableLength, IdRange, PoolMode, PoolType, PortIds, Threshold};

/// One port of a default configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultPort {
    /// Port name, e.g. `Ethernet0`.
    pub name: String,
    /// The `PORT` entry.
    pub port: Port,
    /// Its cable length.
    pub cable: CableLength,
}

/// Options of [`mellanox_dynamic`].
#[derive(Clone, Debug, PartialEq)]
pub struct DefaultOptions {
    /// `DEVICE_METADATA|localhost.platform`.
    pub platform: String,
    /// Fixed `egress_lossless_pool` size (the chip's buffer), bytes.
    pub egress_lossless_pool_size: u64,
    /// Single ingress pool (SN5600-C256S1, SN5640): no `ingress_lossy_pool`.
    pub single_ingress_pool: bool,
    /// `LOSSLESS_TRAFFIC_PATTERN|AZURE.small_packet_percentage` (50 by default).
    pub small_packet_percentage: u32,
    /// `over_subscribe_ratio` (enables the shared headroom pool when non-zero).
    pub over_subscribe_ratio: Option<f64>,
}

impl DefaultOptions {
    /// Defaults for a platform and buffer size: two ingress pools, P 50, no SHP.
    pub fn new(platform: &str, egress_lossless_pool_size: u64) -> DefaultOptions {
        DefaultOptions {
            platform: platform.into(),
            egress_lossless_pool_size,
            single_ingress_pool: false,
            small_packet_percentage: 50,
            over_subscribe_ratio: None,
        }
    }
}

fn range(lo: u16, hi: u16) -> IdRange {
    if lo == hi {
        IdRange::single(lo)
    } else {
        IdRange::new(lo, hi).unwrap_or(IdRange::single(lo))
    }
}

fn profile(pool: &str, size: u64, th: i8) -> BufferProfile {
    BufferProfile {
        pool: pool.into(),
        xon: None,
        xon_offset: None,
        xoff: None,
        size: Some(size),
        threshold: Some(Threshold::Dynamic(th)),
        headroom_type: HeadroomType::Static,
        packet_discard_action: None,
    }
}

/// The Mellanox default dynamic-mode CONFIG_DB for `ports`: pools (`ingress_lossless_pool`,
/// `ingress_lossy_pool`, `egress_lossy_pool` without size, `egress_lossless_pool` fixed),
/// the five default profiles, PG `3-4` dynamic and `0` lossy, queues `0-2`/`5-6` lossy and
/// `3-4` lossless, profile lists, `LOSSLESS_TRAFFIC_PATTERN|AZURE` (MTU 1024),
/// `DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE` (`default_dynamic_th 0`), `CABLE_LENGTH|AZURE`.
pub fn mellanox_dynamic(ports: &[DefaultPort], opts: &DefaultOptions) -> ConfigDb {
    let mut db = ConfigDb::default();
    let pool = |t, size| BufferPool {
        pool_type: t,
        mode: PoolMode::Dynamic,
        size,
        xoff: None,
        percentage: None,
    };
    db.pools.insert(
        "ingress_lossless_pool".into(),
        pool(PoolType::Ingress, None),
    );
    if !opts.single_ingress_pool {
        db.pools
            .insert("ingress_lossy_pool".into(), pool(PoolType::Ingress, None));
    }
    db.pools.insert(
        "egress_lossless_pool".into(),
        pool(PoolType::Egress, Some(opts.egress_lossless_pool_size)),
    );
    db.pools
        .insert("egress_lossy_pool".into(), pool(PoolType::Egress, None));
    let lossy_pool = if opts.single_ingress_pool {
        "ingress_lossless_pool"
    } else {
        "ingress_lossy_pool"
    };
    db.profiles.insert(
        "ingress_lossless_profile".into(),
        profile("ingress_lossless_pool", 0, 7),
    );
    db.profiles
        .insert("ingress_lossy_profile".into(), profile(lossy_pool, 0, 3));
    db.profiles.insert(
        "egress_lossless_profile".into(),
        profile("egress_lossless_pool", 0, 7),
    );
    db.profiles.insert(
        "egress_lossy_profile".into(),
        profile("egress_lossy_pool", 9216, 7),
    );
    db.profiles
        .insert("q_lossy_profile".into(), profile("egress_lossy_pool", 0, 3));

    let mut cables = BTreeMap::new();
    for p in ports {
        db.ports.insert(p.name.clone(), p.port.clone());
        cables.insert(p.name.clone(), p.cable.clone());
        db.pgs.insert(
            PortIds::new(&p.name, range(3, 4)),
            BufferPg { profile: None },
        );
        db.pgs.insert(
            PortIds::new(&p.name, range(0, 0)),
            BufferPg {
                profile: Some("ingress_lossy_profile".into()),
            },
        );
        for (lo, hi, prof) in [
            (0, 2, "q_lossy_profile"),
            (3, 4, "egress_lossless_profile"),
            (5, 6, "q_lossy_profile"),
        ] {
            db.queues.insert(
                PortIds::new(&p.name, range(lo, hi)),
                BufferQueue {
                    profile: prof.into(),
                },
            );
        }
        db.ingress_profile_lists.insert(
            p.name.clone(),
            vec![
                "ingress_lossless_profile".into(),
                "ingress_lossy_profile".into(),
            ],
        );
        db.egress_profile_lists.insert(
            p.name.clone(),
            vec![
                "egress_lossless_profile".into(),
                "egress_lossy_profile".into(),
            ],
        );
    }
    db.cable_lengths.insert("AZURE".into(), cables);
    db.traffic_patterns.insert(
        "AZURE".into(),
        LosslessTrafficPattern {
            mtu: 1024,
            small_packet_percentage: opts.small_packet_percentage,
        },
    );
    db.default_lossless.insert(
        "AZURE".into(),
        DefaultLosslessParams {
            default_dynamic_th: Some(0),
            over_subscribe_ratio: opts.over_subscribe_ratio,
            max_headroom_size: None,
            default_hysteresis: None,
        },
    );
    db.device_metadata.insert(
        "localhost".into(),
        DeviceMetadata {
            platform: Some(opts.platform.clone()),
            hwsku: None,
            buffer_model: Some("dynamic".into()),
            other: Default::default(),
        },
    );
    db
}

/// The Mellanox zero pool and zero profiles (APPL_DB, `zero_profiles.j2`): `ingress_zero_pool`
/// (static, size 0), `ingress_lossy_pg_zero_profile` on it (`static_th 0`), and
/// `ingress_lossy_zero_profile`, `ingress_lossless_zero_profile`, `egress_lossy_zero_profile`,
/// `egress_lossless_zero_profile` on their normal pools (size 0, `dynamic_th -8`).
/// `ingress_lossy_zero_profile` is omitted with a single ingress pool.
pub fn mellanox_zero_profiles(single_ingress_pool: bool) -> ApplDb {
    let mut db = ApplDb::default();
    db.pools.insert(
        "ingress_zero_pool".into(),
        ApplPool {
            pool_type: Some(PoolType::Ingress),
            mode: Some(PoolMode::Static),
            size: Some(0),
            xoff: None,
        },
    );
    db.profiles.insert(
        "ingress_lossy_pg_zero_profile".into(),
        ApplProfile::plain("ingress_zero_pool", 0, Threshold::Static(0)),
    );
    let mut zero = vec![
        ("ingress_lossless_zero_profile", "ingress_lossless_pool"),
        ("egress_lossy_zero_profile", "egress_lossy_pool"),
        ("egress_lossless_zero_profile", "egress_lossless_pool"),
    ];
    if !single_ingress_pool {
        zero.push(("ingress_lossy_zero_profile", "ingress_lossy_pool"));
    }
    for (name, pool) in zero {
        db.profiles.insert(
            name.into(),
            ApplProfile::plain(pool, 0, Threshold::Dynamic(-8)),
        );
    }
    db
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_the_cross_checks() {
        let ports: Vec<DefaultPort> = (0..4)
            .map(|i| DefaultPort {
                name: format!("Ethernet{}", 4 * i),
                port: Port::up(100_000, 4),
                cable: CableLength::parse("5m").expect("cable"),
            })
            .collect();
        for single in [false, true] {
            let opts = DefaultOptions {
                single_ingress_pool: single,
                ..DefaultOptions::new("x86_64-mlnx_msn3800-r0", 34_287_552)
            };
            let db = mellanox_dynamic(&ports, &opts);
            assert_eq!(ConfigDb::from_raw(&db.to_raw()), Ok(db));
        }
    }
}
