//! Shared buffer pool sizes: SONiC's Mellanox pool plugin (`buffer_pool_mellanox.lua`),
//! sonic-buffer.md §5, and what buffermgrd writes from its result (§5.4).
//!
//! Inputs are typed tables: CONFIG_DB (pools, ports, over-subscribe ratio, platform), STATE_DB
//! (MMU size, ASIC) and APPL_DB (profiles, PGs, queues, profile lists and pending producer
//! state). Output: the size of every pool without a configured size, the shared headroom pool
//! size on `ingress_lossless_pool`, and every intermediate ([`PoolDebug`]); or, while
//! orchagent has not consumed PG/queue/profile-list changes, the **fallback** (current APPL_DB
//! pool sizes).
//!
//! Invariants:
//! - the arithmetic is the plugin's, in doubles; sizes are `ceil`'d at the end only;
//! - when computed, every emitted pool size satisfies `size + occupied ≤ mmu` unless the pool
//!   has a `percentage` above 100 (impossible: parsing bounds it) — the occupied bytes include
//!   all headroom, reservations and the shared headroom pool; when `occupied > mmu` the result
//!   is [`PoolError::Exhausted`] instead of SONiC's negative sizes;
//! - the result does not depend on iteration order (the plugin's output order varies between
//!   runs; here everything is a `BTreeMap`).
//!
//! Deliberate differences from the plugin (sonic-buffer.md §11.3), each computing the correct
//! result where the plugin crashes or silently skips:
//! - a single two-digit id (`Ethernet0:10`) counts 1 (the plugin aborts);
//! - PGs and queues of ports not named `Ethernet<digits>` are counted (the plugin ignores them);
//! - a profile-list entry without `profile_list` cannot exist in a typed [`ApplDb`] (the
//!   plugin stops walking the table at such an entry);
//! - no MMU size, or no ASIC entry, is an error (the plugin does arithmetic on nil).
//!
//! Kept as SONiC does it: the shared size is `AVAIL / 2` unless exactly one *ingress* pool is
//! dynamic, whatever the number of dynamic pools.

use std::collections::BTreeMap;

use crate::naming::platform_model_number;
use crate::tables::appl::{ApplDb, ApplPool, ApplTable};
use crate::tables::config::{ConfigDb, INGRESS_LOSSLESS_POOL};
use crate::tables::state::StateDb;
use crate::tables::{LookupError, PoolType};

/// Per-port egress mirror reservation on platforms below SN6000, bytes.
pub const MIRROR_RESERVATION: f64 = 10240.0;
/// Management pool, bytes.
pub const MANAGEMENT_POOL: f64 = 262_144.0;
/// MODDESC reservation on SN6000+ platforms, bytes (32 MiB).
pub const MODDESC_RESERVATION: f64 = 33_554_432.0;
/// Private headroom per lossless port with the shared headroom pool, bytes.
pub const SHP_PORT_PRIVATE: f64 = 10240.0;
/// Shared headroom pool size when forced or when the ratio yields 0, bytes.
pub const SHP_PLACEHOLDER: f64 = 655_360.0;

/// One pool line of the plugin's result: `<pool>:<size>[:<shp>]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolSize {
    /// Pool size, bytes.
    pub size: u64,
    /// Shared headroom pool size (third field), on `ingress_lossless_pool` only.
    pub shp: Option<u64>,
}

/// How a profile takes part in the accounting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileClass {
    /// On an ingress CONFIG_DB pool, with `xoff`.
    IngressLossless,
    /// On an ingress CONFIG_DB pool, without `xoff` (its size gets the implicit lossy
    /// reservation added).
    IngressLossy,
    /// Anything else (egress, or a pool only APPL_DB knows such as `ingress_zero_pool`).
    Other,
}

/// Where the shared headroom pool size came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShpSource {
    /// No shared headroom pool.
    Off,
    /// Configured `BUFFER_POOL|ingress_lossless_pool.xoff`.
    Configured,
    /// `ceil(xoff sum / over_subscribe_ratio)` (655360 if that is 0).
    Ratio,
    /// Forced: profiles have `xon + xoff > size` but the configuration says no SHP.
    Forced,
}

/// Every intermediate of a computed result (the plugin's `debug:` lines, as numbers).
#[derive(Clone, Debug, PartialEq)]
pub struct PoolDebug {
    /// MMU size used.
    pub mmu: f64,
    /// `floor(mmu / cell) * cell`.
    pub ceil_mmu: f64,
    /// `RESERVED_LOSSY = pipeline_latency * 1024`.
    pub reserved_lossy: f64,
    /// `RESERVED_LOSSY_8 = (2 * pipeline_latency - 1) * 1024`.
    pub reserved_lossy_8: f64,
    /// Profile classification.
    pub classes: BTreeMap<String, ProfileClass>,
    /// Reference counts per profile.
    pub references: BTreeMap<String, u64>,
    /// Σ size × refs of ingress-lossless profiles (the PG headroom).
    pub lossless_headroom: f64,
    /// Σ (size + reserved) × refs of ingress-lossy profiles.
    pub lossy_profiles: f64,
    /// Σ size × refs of other profiles (egress).
    pub other_profiles: f64,
    /// `(RESERVED_LOSSY_8 - RESERVED_LOSSY) * LOSSY_PG_8`.
    pub lossy_8lane_extra: f64,
    /// Ingress-lossy PG ids on 8-lane ports.
    pub lossy_pg_8: u64,
    /// Ports with at least one ingress-lossless PG.
    pub lossless_ports: u64,
    /// Admin-up ports.
    pub up_ports: u64,
    /// Admin-up 8-lane ports.
    pub up_8lane_ports: u64,
    /// `lossless_ports * 10240` when the shared headroom pool is on.
    pub shp_port_private: f64,
    /// Management PG reservations of up ports.
    pub management_pgs: f64,
    /// Mirror reservations of up ports.
    pub mirror: f64,
    /// Management pool.
    pub management_pool: f64,
    /// MODDESC reservation.
    pub moddesc: f64,
    /// `XOFF_SUM` after the private-headroom deduction.
    pub xoff_sum: f64,
    /// Shared headroom pool size.
    pub shp_size: f64,
    /// Where it came from.
    pub shp_source: ShpSource,
    /// `OCC`: everything above.
    pub occupied: f64,
    /// `AVAIL = mmu - OCC`.
    pub available: f64,
    /// Dynamic ingress pools (`N_IN`).
    pub dynamic_ingress_pools: u64,
    /// The size given to pools without `percentage`.
    pub pool_share: f64,
}

impl PoolDebug {
    /// Occupied bytes that are not PG headroom nor the shared headroom pool: reservations of
    /// lossy and egress profiles, management PGs, mirror, management pool, MODDESC.
    pub fn reserved_without_headroom(&self) -> f64 {
        self.occupied - self.lossless_headroom - self.shp_port_private - self.shp_size
    }
}

/// The plugin's result.
#[derive(Clone, Debug, PartialEq)]
pub enum PoolOutcome {
    /// Pool sizes computed from the headroom in use.
    Computed {
        /// Pool → size (and SHP size on `ingress_lossless_pool`).
        pools: BTreeMap<String, PoolSize>,
        /// Intermediates.
        debug: Box<PoolDebug>,
    },
    /// PG/queue/profile-list changes are still pending in APPL_DB, or reference profiles
    /// orchagent does not have yet: the current APPL_DB pool values.
    Fallback {
        /// Pool → current size/xoff.
        pools: BTreeMap<String, PoolSize>,
    },
}

impl PoolOutcome {
    /// The pool lines.
    pub fn pools(&self) -> &BTreeMap<String, PoolSize> {
        match self {
            PoolOutcome::Computed { pools, .. } | PoolOutcome::Fallback { pools } => pools,
        }
    }

    /// The plugin's result strings (`<pool>:<size>[:<shp>]`, without `debug:` lines), sorted.
    pub fn plugin_lines(&self) -> Vec<String> {
        self.pools()
            .iter()
            .map(|(p, s)| match s.shp {
                Some(x) => format!("{p}:{}:{x}", s.size),
                None => format!("{p}:{}", s.size),
            })
            .collect()
    }
}

/// Why pool sizes could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PoolError {
    /// A needed entry is missing (ASIC, MMU size).
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// Headroom and reservations exceed the buffer (SONiC would emit negative pool sizes).
    #[error("buffer exhausted: {occupied} bytes reserved (headroom, reservations, shared headroom pool) exceed the MMU size {mmu}")]
    Exhausted {
        /// Occupied bytes.
        occupied: f64,
        /// MMU size.
        mmu: f64,
    },
}

/// Runs the pool algorithm (sonic-buffer.md §5.2).
pub fn compute(
    config: &ConfigDb,
    state: &StateDb,
    appl: &ApplDb,
) -> Result<PoolOutcome, PoolError> {
    let asic = state.asic()?;
    let mmu = state
        .mmu_size
        .or_else(|| {
            config
                .pools
                .get(crate::tables::config::EGRESS_LOSSLESS_POOL)
                .and_then(|p| p.size)
        })
        .ok_or(LookupError::NoMmuSize)? as f64;
    let cell = f64::from(asic.cell_size);
    let pl = asic.pipeline_latency;
    let model = config
        .platform()
        .and_then(platform_model_number)
        .unwrap_or(0);
    let (moddesc, mirror_per_port) = if model >= 6000 {
        (MODDESC_RESERVATION, 0.0)
    } else {
        (0.0, MIRROR_RESERVATION)
    };

    let reserved_lossy = pl * 1024.0;
    let reserved_lossy_8 = (2.0 * pl - 1.0) * 1024.0;
    let ceil_mmu = (mmu / cell).floor() * cell;
    let ratio = config.over_subscribe_ratio();
    let configured_shp = config.configured_shp_size();
    let mut shp_size = configured_shp.map_or(0.0, |s| s as f64);
    let mut shp_on = ratio.is_some() || configured_shp.is_some();
    let mut shp_source = match (configured_shp, ratio) {
        (Some(_), _) => ShpSource::Configured,
        (None, Some(_)) => ShpSource::Ratio,
        (None, None) => ShpSource::Off,
    };

    // Classification.
    let is_ingress_pool = |pool: &str| {
        config
            .pools
            .get(pool)
            .is_some_and(|p| p.pool_type == PoolType::Ingress)
    };
    let classes: BTreeMap<String, ProfileClass> = appl
        .profiles
        .iter()
        .map(|(n, p)| {
            let c = if !is_ingress_pool(&p.pool) {
                ProfileClass::Other
            } else if p.is_lossless() {
                ProfileClass::IngressLossless
            } else {
                ProfileClass::IngressLossy
            };
            (n.clone(), c)
        })
        .collect();
    let mut refs: BTreeMap<String, u64> = classes.keys().map(|n| (n.clone(), 0)).collect();

    let fallback = || fallback(config, appl, shp_on);
    if [
        ApplTable::Pg,
        ApplTable::Queue,
        ApplTable::IngressProfileList,
        ApplTable::EgressProfileList,
    ]
    .into_iter()
    .any(|t| appl.has_pending_sets(t))
    {
        return Ok(fallback());
    }

    let is_8lane = |port: &str| config.ports.get(port).is_some_and(|p| p.lane_count() == 8);
    let mut lossy_pg_8 = 0u64;
    let mut lossless_ports = std::collections::BTreeSet::new();
    for (is_pg, map) in [(true, &appl.pgs), (false, &appl.queues)] {
        for (k, profile) in map {
            let Some(class) = classes.get(profile) else {
                return Ok(fallback());
            };
            let n = k.ids.count();
            *refs.entry(profile.clone()).or_default() += n;
            if *class == ProfileClass::IngressLossy && is_8lane(&k.port) {
                lossy_pg_8 += n;
            }
            if is_pg && *class == ProfileClass::IngressLossless {
                lossless_ports.insert(k.port.clone());
            }
        }
    }
    for lists in [&appl.ingress_profile_lists, &appl.egress_profile_lists] {
        for list in lists.values() {
            for p in list {
                match classes.get(p) {
                    None => return Ok(fallback()),
                    // Counted under `<p>_list`, which has no size: reserves nothing.
                    Some(ProfileClass::IngressLossy) => {}
                    Some(_) => *refs.entry(p.clone()).or_default() += 1,
                }
            }
        }
    }

    // Accumulation.
    let (mut lossless_headroom, mut lossy_profiles, mut other_profiles) = (0.0, 0.0, 0.0);
    let mut xoff_sum = 0.0;
    for (name, p) in &appl.profiles {
        let Some(size) = p.size else { continue };
        let class = classes.get(name).copied().unwrap_or(ProfileClass::Other);
        let r = refs.get(name).copied().unwrap_or(0) as f64;
        let mut s = size as f64;
        if class == ProfileClass::IngressLossy {
            s += reserved_lossy;
        }
        if s != 0.0 {
            if configured_shp.is_none() {
                if let (Some(xon), Some(xoff)) = (p.xon, p.xoff) {
                    let hr = xon as f64 + xoff as f64;
                    if hr > s {
                        xoff_sum += (hr - s) * r;
                    }
                }
            }
            match class {
                ProfileClass::IngressLossless => lossless_headroom += s * r,
                ProfileClass::IngressLossy => lossy_profiles += s * r,
                ProfileClass::Other => other_profiles += s * r,
            }
        }
    }
    let lossy_8lane_extra = (reserved_lossy_8 - reserved_lossy) * lossy_pg_8 as f64;
    if xoff_sum > 0.0 && !shp_on {
        shp_size = SHP_PLACEHOLDER;
        shp_on = true;
        shp_source = ShpSource::Forced;
    }
    let n_lossless = lossless_ports.len() as u64;
    let mut shp_port_private = 0.0;
    if shp_on {
        shp_port_private = n_lossless as f64 * SHP_PORT_PRIVATE;
        xoff_sum = (xoff_sum - shp_port_private).max(0.0);
    }
    let up_ports = config.ports.values().filter(|p| p.is_up()).count() as u64;
    let up_8 = config
        .ports
        .values()
        .filter(|p| p.is_up() && p.lane_count() == 8)
        .count() as u64;
    let management_pgs = (up_ports - up_8) as f64 * reserved_lossy + up_8 as f64 * reserved_lossy_8;
    let mirror = up_ports as f64 * mirror_per_port;

    let ingress: Vec<&String> = config
        .pools
        .iter()
        .filter(|(_, p)| p.pool_type == PoolType::Ingress && p.size.is_none())
        .map(|(n, _)| n)
        .collect();
    let egress: Vec<&String> = config
        .pools
        .iter()
        .filter(|(_, p)| p.pool_type == PoolType::Egress && p.size.is_none())
        .map(|(n, _)| n)
        .collect();
    let n_in = ingress.len() as u64;

    if shp_on && shp_size == 0.0 {
        // Enabled by ratio (a configured size or the forced case set shp_size already).
        let r = ratio.unwrap_or(1.0);
        shp_size = (xoff_sum / r).ceil();
        if shp_size == 0.0 {
            shp_size = SHP_PLACEHOLDER;
        }
    }
    let occupied = lossless_headroom
        + lossy_profiles
        + other_profiles
        + lossy_8lane_extra
        + shp_port_private
        + management_pgs
        + mirror
        + MANAGEMENT_POOL
        + moddesc
        + shp_size;
    let available = mmu - occupied;
    if available < 0.0 {
        return Err(PoolError::Exhausted { occupied, mmu });
    }
    let share = if n_in == 1 {
        available
    } else {
        available / 2.0
    };
    let share = share.min(ceil_mmu);

    let mut pools = BTreeMap::new();
    for name in ingress.iter().chain(egress.iter()) {
        let pct = config
            .pools
            .get(*name)
            .and_then(|p| p.percentage)
            .filter(|p| *p >= 0.0);
        let size = match pct {
            Some(p) => available * p / 100.0,
            None => share,
        };
        let shp = (name.as_str() == INGRESS_LOSSLESS_POOL && shp_size != 0.0)
            .then(|| crate::model::to_u64(shp_size.ceil()));
        pools.insert(
            (*name).clone(),
            PoolSize {
                size: crate::model::to_u64(size.ceil()),
                shp,
            },
        );
    }
    if let Some(static_size) = config.pools.get(INGRESS_LOSSLESS_POOL).and_then(|p| p.size) {
        let carried = pools
            .get(INGRESS_LOSSLESS_POOL)
            .is_some_and(|p| p.shp.is_some());
        if shp_source == ShpSource::Ratio && !carried && shp_size != 0.0 {
            pools.insert(
                INGRESS_LOSSLESS_POOL.to_string(),
                PoolSize {
                    size: static_size,
                    shp: Some(crate::model::to_u64(shp_size)),
                },
            );
        }
    }

    let debug = PoolDebug {
        mmu,
        ceil_mmu,
        reserved_lossy,
        reserved_lossy_8,
        classes,
        references: refs,
        lossless_headroom,
        lossy_profiles,
        other_profiles,
        lossy_8lane_extra,
        lossy_pg_8,
        lossless_ports: n_lossless,
        up_ports,
        up_8lane_ports: up_8,
        shp_port_private,
        management_pgs,
        mirror,
        management_pool: MANAGEMENT_POOL,
        moddesc,
        xoff_sum,
        shp_size,
        shp_source,
        occupied,
        available,
        dynamic_ingress_pools: n_in,
        pool_share: share,
    };
    Ok(PoolOutcome::Computed {
        pools,
        debug: Box::new(debug),
    })
}

/// The fallback result: for each CONFIG_DB ingress/egress pool without `size`, the current
/// APPL_DB size (0 if absent) and xoff; `ingress_lossless_pool` without APPL_DB xoff and size
/// 0 while SHP is on becomes `2048:1024` (tells SAI the SHP mode early).
fn fallback(config: &ConfigDb, appl: &ApplDb, shp_on: bool) -> PoolOutcome {
    let mut pools = BTreeMap::new();
    for (name, p) in &config.pools {
        if p.size.is_some() || p.pool_type == PoolType::Both {
            continue;
        }
        let cur = appl.pools.get(name);
        let size = cur.and_then(|c| c.size).unwrap_or(0);
        let xoff = cur.and_then(|c| c.xoff);
        let line = if name == INGRESS_LOSSLESS_POOL && xoff.is_none() && shp_on && size == 0 {
            PoolSize {
                size: 2048,
                shp: Some(1024),
            }
        } else {
            PoolSize { size, shp: xoff }
        };
        pools.insert(name.clone(), line);
    }
    PoolOutcome::Fallback { pools }
}

/// What buffermgrd writes to APPL_DB `BUFFER_POOL_TABLE` from a pool result (§5.4): for each
/// configured pool of the result, the new record, when it must be written.
///
/// - `ingress_lossless_pool` without a configured SHP size: a third field different from the
///   stored xoff becomes the new xoff (ignored above `mmu_size`); no third field while a
///   non-zero xoff is stored sets xoff to 0.
/// - The pool is written if (its size changed and it is dynamic) or its xoff was updated, and
///   only if the size is at most `mmu_size` (when known).
pub fn pool_updates(
    outcome: &PoolOutcome,
    config: &ConfigDb,
    appl: &ApplDb,
    mmu_size: Option<u64>,
) -> BTreeMap<String, ApplPool> {
    let mut out = BTreeMap::new();
    for (name, line) in outcome.pools() {
        let Some(cfg) = config.pools.get(name) else {
            continue;
        };
        let cur = appl.pools.get(name);
        let mut rec = ApplPool {
            pool_type: Some(cfg.pool_type),
            mode: Some(cfg.mode),
            size: Some(line.size),
            xoff: cur.and_then(|c| c.xoff),
        };
        let mut xoff_updated = false;
        if name == INGRESS_LOSSLESS_POOL && config.configured_shp_size().is_none() {
            match line.shp {
                Some(x) if Some(x) != rec.xoff && mmu_size.is_none_or(|m| x <= m) => {
                    rec.xoff = Some(x);
                    xoff_updated = true;
                }
                None if rec.xoff.is_some_and(|x| x != 0) => {
                    rec.xoff = Some(0);
                    xoff_updated = true;
                }
                _ => {}
            }
        }
        if name == INGRESS_LOSSLESS_POOL && rec.xoff.is_none() {
            rec.xoff = config.configured_shp_size();
        }
        let size_changed = cur.and_then(|c| c.size) != Some(line.size);
        let fits = mmu_size.is_none_or(|m| line.size <= m);
        if ((size_changed && cfg.is_dynamic_size()) || xoff_updated) && fits {
            out.insert(name.clone(), rec);
        }
    }
    out
}
