//! CONFIG_DB: the user's buffer configuration, buffermgrd's input.
//!
//! Tables: `PORT`, `CABLE_LENGTH`, `BUFFER_POOL`, `BUFFER_PROFILE`, `BUFFER_PG`,
//! `BUFFER_QUEUE`, `BUFFER_PORT_INGRESS_PROFILE_LIST`, `BUFFER_PORT_EGRESS_PROFILE_LIST`,
//! `DEFAULT_LOSSLESS_BUFFER_PARAMETER`, `LOSSLESS_TRAFFIC_PATTERN`, `DEVICE_METADATA`
//! (sonic-buffer.md §1.1, §2.3, §7).
//!
//! Invariants of a [`ConfigDb`] built by [`ConfigDb::from_raw`]:
//! - every profile's `pool` names a pool of `BUFFER_POOL`, and its threshold kind matches the
//!   pool's mode;
//! - every `BUFFER_PG` / `BUFFER_QUEUE` / profile-list reference names a profile of
//!   `BUFFER_PROFILE` of the right direction (ingress for PGs and the ingress list, egress for
//!   queues and the egress list); a PG with `profile` absent or `NULL` is dynamic lossless;
//! - PG and queue keys are split per port (`Ethernet0,Ethernet4|3-4` → two entries).
//!
//! buffermgrd would *retry* an item whose referenced profile is not known yet (it may arrive
//! later); a snapshot has no "later", so an unknown reference is an error here.

use std::collections::BTreeMap;

use super::{CableLength, Direction, Fields, PoolMode, PoolType, PortIds, RawDb, Threshold};

mod read;

pub use read::pg_key;
pub(crate) use read::split_list;

/// CONFIG_DB table names.
pub mod names {
    /// `PORT`.
    pub const PORT: &str = "PORT";
    /// `CABLE_LENGTH`.
    pub const CABLE_LENGTH: &str = "CABLE_LENGTH";
    /// `BUFFER_POOL`.
    pub const BUFFER_POOL: &str = "BUFFER_POOL";
    /// `BUFFER_PROFILE`.
    pub const BUFFER_PROFILE: &str = "BUFFER_PROFILE";
    /// `BUFFER_PG`.
    pub const BUFFER_PG: &str = "BUFFER_PG";
    /// `BUFFER_QUEUE`.
    pub const BUFFER_QUEUE: &str = "BUFFER_QUEUE";
    /// `BUFFER_PORT_INGRESS_PROFILE_LIST`.
    pub const BUFFER_PORT_INGRESS_PROFILE_LIST: &str = "BUFFER_PORT_INGRESS_PROFILE_LIST";
    /// `BUFFER_PORT_EGRESS_PROFILE_LIST`.
    pub const BUFFER_PORT_EGRESS_PROFILE_LIST: &str = "BUFFER_PORT_EGRESS_PROFILE_LIST";
    /// `DEFAULT_LOSSLESS_BUFFER_PARAMETER`.
    pub const DEFAULT_LOSSLESS_BUFFER_PARAMETER: &str = "DEFAULT_LOSSLESS_BUFFER_PARAMETER";
    /// `LOSSLESS_TRAFFIC_PATTERN`.
    pub const LOSSLESS_TRAFFIC_PATTERN: &str = "LOSSLESS_TRAFFIC_PATTERN";
    /// `DEVICE_METADATA`.
    pub const DEVICE_METADATA: &str = "DEVICE_METADATA";
}

/// SONiC's port MTU when `PORT.mtu` is absent.
pub const DEFAULT_PORT_MTU: u32 = 9100;

/// The name of the ingress lossless pool, the only pool whose `xoff` (shared headroom pool
/// size) means anything.
pub const INGRESS_LOSSLESS_POOL: &str = "ingress_lossless_pool";

/// The egress lossless pool, whose fixed size is the pool algorithm's MMU-size fallback.
pub const EGRESS_LOSSLESS_POOL: &str = "egress_lossless_pool";

/// `PORT.admin_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AdminStatus {
    /// `up`.
    Up,
    /// `down`, or the field absent (SONiC treats a port without it as down).
    Down,
}

/// One `PORT|<name>` entry (only the fields the buffer manager uses).
#[derive(Clone, Debug, PartialEq)]
pub struct Port {
    /// `speed` in Mb/s (`100000` = 100G).
    pub speed: Option<u64>,
    /// `mtu` in bytes; absent means [`DEFAULT_PORT_MTU`].
    pub mtu: Option<u32>,
    /// `lanes` (`"0,1,2,3"`); empty when absent.
    pub lanes: Vec<u32>,
    /// `admin_status` (absent = down).
    pub admin_status: AdminStatus,
    /// `autoneg` (`on` / `off`).
    pub autoneg: Option<bool>,
    /// `adv_speeds`: `None` when absent or `all`, else the listed speeds (Mb/s).
    pub adv_speeds: Option<Vec<u64>>,
}

impl Port {
    /// A port with `speed`, `lanes` lanes, admin up, no MTU (= 9100).
    pub fn up(speed: u64, lanes: u32) -> Port {
        Port {
            speed: Some(speed),
            mtu: None,
            lanes: (0..lanes).collect(),
            admin_status: AdminStatus::Up,
            autoneg: None,
            adv_speeds: None,
        }
    }

    /// Number of lanes as buffermgrd sends it to the plugin (`0` when `lanes` is absent).
    pub fn lane_count(&self) -> u32 {
        u32::try_from(self.lanes.len()).unwrap_or(u32::MAX)
    }

    /// The MTU used for headroom: `mtu`, or 9100.
    pub fn mtu_or_default(&self) -> u32 {
        self.mtu.unwrap_or(DEFAULT_PORT_MTU)
    }

    /// Whether `admin_status` is `up`.
    pub fn is_up(&self) -> bool {
        self.admin_status == AdminStatus::Up
    }

    /// The effective speed (sonic-buffer.md §7.3): with autoneg on, the largest advertised
    /// speed, else the largest of STATE_DB `PORT_TABLE.supported_speeds` (`supported`), else
    /// none; with autoneg off or absent, `speed`.
    pub fn effective_speed(&self, supported: Option<&[u64]>) -> Option<u64> {
        if self.autoneg == Some(true) {
            match &self.adv_speeds {
                Some(adv) if !adv.is_empty() => adv.iter().copied().max(),
                _ => supported.and_then(|s| s.iter().copied().max()),
            }
        } else {
            self.speed
        }
    }

    /// Renders the entry's fields as SONiC writes them.
    pub fn to_fields(&self) -> Fields {
        let mut f = Fields::new();
        if let Some(s) = self.speed {
            f.insert("speed".into(), s.to_string());
        }
        if let Some(m) = self.mtu {
            f.insert("mtu".into(), m.to_string());
        }
        if !self.lanes.is_empty() {
            let l: Vec<String> = self.lanes.iter().map(u32::to_string).collect();
            f.insert("lanes".into(), l.join(","));
        }
        if self.admin_status == AdminStatus::Up {
            f.insert("admin_status".into(), "up".into());
        } else {
            f.insert("admin_status".into(), "down".into());
        }
        if let Some(a) = self.autoneg {
            f.insert("autoneg".into(), if a { "on" } else { "off" }.into());
        }
        if let Some(adv) = &self.adv_speeds {
            let l: Vec<String> = adv.iter().map(u64::to_string).collect();
            f.insert("adv_speeds".into(), l.join(","));
        }
        f
    }
}

/// One `BUFFER_POOL|<name>` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferPool {
    /// `type`.
    pub pool_type: PoolType,
    /// `mode` (absent = dynamic).
    pub mode: PoolMode,
    /// `size`: present = static size; absent = computed by the pool algorithm.
    pub size: Option<u64>,
    /// `xoff`: the configured shared-headroom-pool size (meaningful on
    /// `ingress_lossless_pool` only).
    pub xoff: Option<u64>,
    /// `percentage`: share of the available buffer for a dynamic pool.
    pub percentage: Option<f64>,
}

impl BufferPool {
    /// Whether the pool's size is computed (no `size` field).
    pub fn is_dynamic_size(&self) -> bool {
        self.size.is_none()
    }
}

/// `BUFFER_PROFILE.headroom_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HeadroomType {
    /// `static` (default): xon/xoff/size as configured (headroom override when lossless).
    Static,
    /// `dynamic`: a lossless profile with only a threshold; headroom is computed per port.
    Dynamic,
}

/// One `BUFFER_PROFILE|<name>` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferProfile {
    /// `pool`: name of a `BUFFER_POOL` entry.
    pub pool: String,
    /// `xon`.
    pub xon: Option<u64>,
    /// `xon_offset`.
    pub xon_offset: Option<u64>,
    /// `xoff` (its presence makes the profile lossless).
    pub xoff: Option<u64>,
    /// `size` (reserved bytes).
    pub size: Option<u64>,
    /// `dynamic_th` or `static_th`.
    pub threshold: Option<Threshold>,
    /// `headroom_type` (absent = static).
    pub headroom_type: HeadroomType,
    /// `packet_discard_action` (`drop` / `trim`).
    pub packet_discard_action: Option<String>,
}

impl BufferProfile {
    /// Lossless: has `xoff`, or `headroom_type: dynamic` (buffermgrd's rule).
    pub fn is_lossless(&self) -> bool {
        self.xoff.is_some() || self.headroom_type == HeadroomType::Dynamic
    }

    /// `headroom_type: dynamic`: headroom computed per port, threshold from this profile.
    pub fn is_dynamic_headroom(&self) -> bool {
        self.headroom_type == HeadroomType::Dynamic
    }
}

/// One `BUFFER_PG|<port>|<ids>` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferPg {
    /// `profile`; `None` when absent or `NULL` (dynamic lossless headroom).
    pub profile: Option<String>,
}

/// One `BUFFER_QUEUE|<port>|<ids>` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferQueue {
    /// `profile`.
    pub profile: String,
}

/// `DEFAULT_LOSSLESS_BUFFER_PARAMETER|<name>`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DefaultLosslessParams {
    /// `default_dynamic_th`: threshold of dynamically generated lossless profiles.
    pub default_dynamic_th: Option<i8>,
    /// `over_subscribe_ratio`: non-zero enables the shared headroom pool.
    pub over_subscribe_ratio: Option<f64>,
    /// `max_headroom_size` (informational; the check reads STATE_DB).
    pub max_headroom_size: Option<u64>,
    /// `default_hysteresis` (design field; unused by SONiC's implementation).
    pub default_hysteresis: Option<u64>,
}

/// `LOSSLESS_TRAFFIC_PATTERN|<name>`.
#[derive(Clone, Debug, PartialEq)]
pub struct LosslessTrafficPattern {
    /// `mtu`: largest lossless frame, bytes.
    pub mtu: u32,
    /// `small_packet_percentage`: 0..=100.
    pub small_packet_percentage: u32,
}

/// `DEVICE_METADATA|localhost` (the fields used here; others kept in `other`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DeviceMetadata {
    /// `platform`, e.g. `x86_64-mlnx_msn2700-r0`.
    pub platform: Option<String>,
    /// `hwsku`, e.g. `ACS-MSN2700`.
    pub hwsku: Option<String>,
    /// `buffer_model`: `dynamic` or `traditional`.
    pub buffer_model: Option<String>,
    /// All other fields, verbatim.
    pub other: Fields,
}

/// A typed CONFIG_DB snapshot of the buffer-related tables.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConfigDb {
    /// `PORT`.
    pub ports: BTreeMap<String, Port>,
    /// `CABLE_LENGTH`: key (e.g. `AZURE`) → port → length.
    pub cable_lengths: BTreeMap<String, BTreeMap<String, CableLength>>,
    /// `BUFFER_POOL`.
    pub pools: BTreeMap<String, BufferPool>,
    /// `BUFFER_PROFILE`.
    pub profiles: BTreeMap<String, BufferProfile>,
    /// `BUFFER_PG`, split per port.
    pub pgs: BTreeMap<PortIds, BufferPg>,
    /// `BUFFER_QUEUE`, split per port.
    pub queues: BTreeMap<PortIds, BufferQueue>,
    /// `BUFFER_PORT_INGRESS_PROFILE_LIST`: port → profiles.
    pub ingress_profile_lists: BTreeMap<String, Vec<String>>,
    /// `BUFFER_PORT_EGRESS_PROFILE_LIST`: port → profiles.
    pub egress_profile_lists: BTreeMap<String, Vec<String>>,
    /// `DEFAULT_LOSSLESS_BUFFER_PARAMETER`: key (e.g. `AZURE`) → parameters.
    pub default_lossless: BTreeMap<String, DefaultLosslessParams>,
    /// `LOSSLESS_TRAFFIC_PATTERN`: key → pattern.
    pub traffic_patterns: BTreeMap<String, LosslessTrafficPattern>,
    /// `DEVICE_METADATA`: key (`localhost`) → metadata.
    pub device_metadata: BTreeMap<String, DeviceMetadata>,
}

impl ConfigDb {
    /// The direction of a profile (from its pool's type); `None` if the profile or its pool
    /// is unknown.
    pub fn profile_direction(&self, profile: &str) -> Option<Direction> {
        let p = self.profiles.get(profile)?;
        Some(self.pools.get(&p.pool)?.pool_type.direction())
    }

    /// The first (smallest-keyed) `DEFAULT_LOSSLESS_BUFFER_PARAMETER` entry.
    pub fn default_lossless(&self) -> Option<&DefaultLosslessParams> {
        self.default_lossless.values().next()
    }

    /// The first (smallest-keyed) `LOSSLESS_TRAFFIC_PATTERN` entry.
    pub fn traffic_pattern(&self) -> Option<&LosslessTrafficPattern> {
        self.traffic_patterns.values().next()
    }

    /// `DEVICE_METADATA|localhost.platform`.
    pub fn platform(&self) -> Option<&str> {
        self.device_metadata.get("localhost")?.platform.as_deref()
    }

    /// `over_subscribe_ratio` of the first default-lossless entry, if set and non-zero.
    pub fn over_subscribe_ratio(&self) -> Option<f64> {
        self.default_lossless()?
            .over_subscribe_ratio
            .filter(|r| *r != 0.0)
    }

    /// The configured shared-headroom-pool size: `BUFFER_POOL|ingress_lossless_pool.xoff`,
    /// if set and non-zero.
    pub fn configured_shp_size(&self) -> Option<u64> {
        self.pools
            .get(INGRESS_LOSSLESS_POOL)?
            .xoff
            .filter(|x| *x != 0)
    }

    /// Whether the shared headroom pool is enabled (sonic-buffer.md §4.2 `SHP`): a non-zero
    /// configured SHP size or a non-zero over-subscribe ratio.
    pub fn shp_enabled(&self) -> bool {
        self.configured_shp_size().is_some() || self.over_subscribe_ratio().is_some()
    }

    /// The cable length of `port` (first `CABLE_LENGTH` key that lists it).
    pub fn cable_length(&self, port: &str) -> Option<&CableLength> {
        self.cable_lengths.values().find_map(|m| m.get(port))
    }

    /// Whether the PG entry is lossless: dynamic (`NULL`/absent profile) or referencing a
    /// lossless profile.
    pub fn pg_is_lossless(&self, pg: &BufferPg) -> bool {
        match &pg.profile {
            None => true,
            Some(p) => self.profiles.get(p).is_some_and(BufferProfile::is_lossless),
        }
    }

    /// Whether the PG's headroom is computed by the buffer manager (profile `NULL`/absent,
    /// or a `headroom_type: dynamic` profile).
    pub fn pg_is_dynamic(&self, pg: &BufferPg) -> bool {
        match &pg.profile {
            None => true,
            Some(p) => self
                .profiles
                .get(p)
                .is_some_and(BufferProfile::is_dynamic_headroom),
        }
    }

    /// The PGs of `port`, in id order.
    pub fn pgs_of<'a>(
        &'a self,
        port: &'a str,
    ) -> impl Iterator<Item = (&'a PortIds, &'a BufferPg)> + 'a {
        self.pgs.iter().filter(move |(k, _)| k.port == port)
    }

    /// Number of lossless PG ids configured on `port`.
    pub fn lossless_pg_count(&self, port: &str) -> u64 {
        self.pgs_of(port)
            .filter(|(_, pg)| self.pg_is_lossless(pg))
            .map(|(k, _)| k.ids.count())
            .sum()
    }

    /// Renders the typed tables back into SONiC's nested format.
    pub fn to_raw(&self) -> RawDb {
        let mut db = RawDb::new();
        for (k, p) in &self.ports {
            db.entry(names::PORT.into())
                .or_default()
                .insert(k.clone(), p.to_fields());
        }
        for (k, m) in &self.cable_lengths {
            let f = m
                .iter()
                .map(|(p, c)| (p.clone(), c.text().to_string()))
                .collect();
            db.entry(names::CABLE_LENGTH.into())
                .or_default()
                .insert(k.clone(), f);
        }
        for (k, p) in &self.pools {
            let mut f = Fields::new();
            f.insert("type".into(), p.pool_type.as_str().into());
            f.insert("mode".into(), p.mode.as_str().into());
            if let Some(s) = p.size {
                f.insert("size".into(), s.to_string());
            }
            if let Some(x) = p.xoff {
                f.insert("xoff".into(), x.to_string());
            }
            if let Some(x) = p.percentage {
                f.insert("percentage".into(), crate::lua::format_number(x));
            }
            db.entry(names::BUFFER_POOL.into())
                .or_default()
                .insert(k.clone(), f);
        }
        for (k, p) in &self.profiles {
            let mut f = Fields::new();
            f.insert("pool".into(), p.pool.clone());
            for (name, v) in [
                ("xon", p.xon),
                ("xon_offset", p.xon_offset),
                ("xoff", p.xoff),
                ("size", p.size),
            ] {
                if let Some(v) = v {
                    f.insert(name.into(), v.to_string());
                }
            }
            if let Some(t) = p.threshold {
                f.insert(t.field().into(), t.value());
            }
            if p.headroom_type == HeadroomType::Dynamic {
                f.insert("headroom_type".into(), "dynamic".into());
            }
            if let Some(a) = &p.packet_discard_action {
                f.insert("packet_discard_action".into(), a.clone());
            }
            db.entry(names::BUFFER_PROFILE.into())
                .or_default()
                .insert(k.clone(), f);
        }
        for (k, pg) in &self.pgs {
            let mut f = Fields::new();
            f.insert(
                "profile".into(),
                pg.profile.clone().unwrap_or_else(|| "NULL".into()),
            );
            db.entry(names::BUFFER_PG.into())
                .or_default()
                .insert(k.key('|'), f);
        }
        for (k, q) in &self.queues {
            let mut f = Fields::new();
            f.insert("profile".into(), q.profile.clone());
            db.entry(names::BUFFER_QUEUE.into())
                .or_default()
                .insert(k.key('|'), f);
        }
        for (tname, lists) in [
            (
                names::BUFFER_PORT_INGRESS_PROFILE_LIST,
                &self.ingress_profile_lists,
            ),
            (
                names::BUFFER_PORT_EGRESS_PROFILE_LIST,
                &self.egress_profile_lists,
            ),
        ] {
            for (port, l) in lists {
                let mut f = Fields::new();
                f.insert("profile_list".into(), l.join(","));
                db.entry(tname.into()).or_default().insert(port.clone(), f);
            }
        }
        for (k, p) in &self.default_lossless {
            let mut f = Fields::new();
            if let Some(v) = p.default_dynamic_th {
                f.insert("default_dynamic_th".into(), v.to_string());
            }
            if let Some(v) = p.over_subscribe_ratio {
                f.insert("over_subscribe_ratio".into(), crate::lua::format_number(v));
            }
            if let Some(v) = p.max_headroom_size {
                f.insert("max_headroom_size".into(), v.to_string());
            }
            if let Some(v) = p.default_hysteresis {
                f.insert("default_hysteresis".into(), v.to_string());
            }
            db.entry(names::DEFAULT_LOSSLESS_BUFFER_PARAMETER.into())
                .or_default()
                .insert(k.clone(), f);
        }
        for (k, p) in &self.traffic_patterns {
            let mut f = Fields::new();
            f.insert("mtu".into(), p.mtu.to_string());
            f.insert(
                "small_packet_percentage".into(),
                p.small_packet_percentage.to_string(),
            );
            db.entry(names::LOSSLESS_TRAFFIC_PATTERN.into())
                .or_default()
                .insert(k.clone(), f);
        }
        for (k, m) in &self.device_metadata {
            let mut f = m.other.clone();
            for (name, v) in [
                ("platform", &m.platform),
                ("hwsku", &m.hwsku),
                ("buffer_model", &m.buffer_model),
            ] {
                if let Some(v) = v {
                    f.insert(name.into(), v.clone());
                }
            }
            db.entry(names::DEVICE_METADATA.into())
                .or_default()
                .insert(k.clone(), f);
        }
        db
    }
}
