//! buffermgrd's internal records (its `m_*Lookup` maps) and the id-range bitmaps used when
//! reclaiming buffers of admin-down ports.
//!
//! Invariants:
//! - a [`ProfileInfo::port_pgs`] entry `(port, ids)` exists exactly when the PG `(port, ids)`
//!   is configured with that profile or currently runs it (SONiC's reference set);
//! - id bitmaps only cover ids `0..64`; larger ids are ignored by the bitmap helpers (SONiC
//!   uses an `unsigned long` as well).

use std::collections::{BTreeMap, BTreeSet};

use crate::tables::{Direction, IdRange, Threshold};

/// Buffer object kinds, indexing per-direction arrays (`BUFFER_PG` = ingress, `BUFFER_QUEUE`
/// = egress), as buffermgrd does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Dir {
    /// Priority groups / ingress profile lists.
    Pg = 0,
    /// Queues / egress profile lists.
    Queue = 1,
}

impl Dir {
    pub(crate) const BOTH: [Dir; 2] = [Dir::Pg, Dir::Queue];

    pub(crate) fn idx(self) -> usize {
        self as usize
    }

    pub(crate) fn direction(self) -> Direction {
        match self {
            Dir::Pg => Direction::Ingress,
            Dir::Queue => Direction::Egress,
        }
    }

    /// APPL_DB table of the objects (`BUFFER_PG_TABLE` / `BUFFER_QUEUE_TABLE`).
    pub(crate) fn object_table(self) -> &'static str {
        match self {
            Dir::Pg => crate::tables::appl::names::BUFFER_PG_TABLE,
            Dir::Queue => crate::tables::appl::names::BUFFER_QUEUE_TABLE,
        }
    }

    /// APPL_DB table of the port profile lists.
    pub(crate) fn list_table(self) -> &'static str {
        match self {
            Dir::Pg => crate::tables::appl::names::BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE,
            Dir::Queue => crate::tables::appl::names::BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE,
        }
    }
}

/// Port states of buffermgrd (sonic-buffer.md §7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PortState {
    /// Administratively down (also the state of a port record before its first `PORT` entry
    /// says otherwise). Its buffers are reclaimed.
    AdminDown,
    /// Admin up, but effective speed or cable length is still unknown: only static
    /// (headroom-override and lossy) PGs are applied.
    Initializing,
    /// Admin up with effective speed and cable length known: dynamic PGs get profiles.
    Ready,
}

/// `m_portInfoLookup` entry.
#[derive(Clone, Debug)]
pub(crate) struct PortInfo {
    /// A `PORT` entry has been processed (ports referenced only by other tables are not
    /// "known": their objects are recorded but not written).
    pub known: bool,
    pub state: PortState,
    /// `speed` as configured.
    pub speed: Option<String>,
    /// Effective speed string (§7.3).
    pub effective_speed: Option<String>,
    /// `mtu` as configured (`None` = 9100).
    pub mtu: Option<String>,
    /// Cable length text as configured.
    pub cable: Option<String>,
    /// Lane count (`0` when `lanes` is absent).
    pub lane_count: u32,
    pub autoneg: bool,
    /// `adv_speeds` (`None` for absent / `all`).
    pub adv_speeds: Option<String>,
    /// STATE_DB `PORT_TABLE.supported_speeds`.
    pub supported_speeds: Option<String>,
    /// `max_priority_groups`, `max_queues` (0 = unknown).
    pub max_objects: [u32; 2],
    /// Supported-but-not-configured id ranges that got the default zero profile.
    pub sbnc: [BTreeSet<IdRange>; 2],
}

impl Default for PortInfo {
    fn default() -> Self {
        PortInfo {
            known: false,
            state: PortState::AdminDown,
            speed: None,
            effective_speed: None,
            mtu: None,
            cable: None,
            lane_count: 0,
            autoneg: false,
            adv_speeds: None,
            supported_speeds: None,
            max_objects: [0, 0],
            sbnc: [BTreeSet::new(), BTreeSet::new()],
        }
    }
}

impl PortInfo {
    /// The MTU string used for naming and the plugin (`9100` when absent).
    pub fn mtu_or_default(&self) -> String {
        self.mtu.clone().unwrap_or_else(|| "9100".to_string())
    }

    /// Computes the effective speed (§7.3) from the recorded fields.
    pub fn compute_effective_speed(&self) -> Option<String> {
        if self.autoneg {
            if let Some(adv) = self.adv_speeds.as_deref().filter(|s| is_non_zero(s)) {
                return Some(max_speed(adv));
            }
            if let Some(sup) = self.supported_speeds.as_deref().filter(|s| is_non_zero(s)) {
                return Some(max_speed(sup));
            }
            None
        } else {
            self.speed.clone()
        }
    }
}

/// The largest number of a comma list (SONiC's `getMaxSpeedFromList`).
fn max_speed(list: &str) -> String {
    list.split(',')
        .filter_map(|s| s.trim().parse::<u64>().ok())
        .max()
        .unwrap_or(0)
        .to_string()
}

/// SONiC's `isNonZero`: non-empty and not `"0"`.
pub(crate) fn is_non_zero(s: &str) -> bool {
    !s.is_empty() && s != "0"
}

/// `m_portPgLookup[port][ids]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct PgInfo {
    /// The profile named in CONFIG_DB (`None` for `NULL`/absent).
    pub configured: Option<String>,
    /// The profile currently written to APPL_DB for this PG.
    pub running: Option<String>,
    /// Headroom computed by the manager (`NULL` or a `headroom_type: dynamic` profile).
    pub dynamic_calculated: bool,
    /// The PG names a profile.
    pub static_configured: bool,
    /// The PG is lossless.
    pub lossless: bool,
}

/// Inputs a generated profile was computed from (to recompute it when the shared headroom
/// pool is toggled).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GenInputs {
    pub speed: String,
    pub cable: String,
    pub mtu: String,
    pub lane_count: u32,
}

/// `m_bufferProfileLookup` entry.
#[derive(Clone, Debug)]
pub(crate) struct ProfileInfo {
    pub pool: String,
    pub direction: Direction,
    pub lossless: bool,
    /// `headroom_type: dynamic` (configured profiles only).
    pub dynamic_calculated: bool,
    /// From CONFIG_DB (never released by the manager).
    pub static_configured: bool,
    pub xon: Option<u64>,
    pub xon_offset: Option<u64>,
    pub xoff: Option<u64>,
    pub size: Option<u64>,
    pub threshold: Option<Threshold>,
    pub packet_discard_action: Option<String>,
    /// Set for generated (`pg_lossless_…`) profiles.
    pub gen: Option<GenInputs>,
    /// PGs configured with or running this profile.
    pub port_pgs: BTreeSet<(String, IdRange)>,
}

/// `m_bufferPoolLookup` entry.
#[derive(Clone, Debug)]
pub(crate) struct PoolInfo {
    pub direction: Direction,
    /// `type` as written to APPL_DB.
    pub type_word: &'static str,
    /// `mode` (`static` / `dynamic`).
    pub mode: &'static str,
    /// No configured `size`: computed by the pool algorithm.
    pub dynamic_size: bool,
    /// Last size written by the pool update (`None` before the first update).
    pub total_size: Option<u64>,
    /// Shared headroom pool size as last written (`ingress_lossless_pool` only).
    pub xoff: Option<String>,
    /// Zero profile of this pool (from the zero-profile file), once loaded.
    pub zero_profile: Option<String>,
}

/// One port's PGs, by id range.
pub(crate) type PortPgs = BTreeMap<IdRange, PgInfo>;

/// Bitmap of the ids of a range (ids ≥ 64 are dropped).
pub(crate) fn ids_bitmap(ids: IdRange) -> u64 {
    (ids.lo()..=ids.hi())
        .filter(|i| *i < 64)
        .fold(0u64, |m, i| m | (1u64 << i))
}

/// All ids `0..max` as a bitmap.
pub(crate) fn full_bitmap(max: u32) -> u64 {
    if max >= 64 {
        u64::MAX
    } else {
        (1u64 << max) - 1
    }
}

/// The contiguous runs of set bits among ids `0..max`, as id ranges (`7`, `7-15`).
pub(crate) fn id_list_from_map(map: u64, max: u32) -> Vec<IdRange> {
    let max = max.min(64) as u16;
    let mut out = Vec::new();
    let mut start: Option<u16> = None;
    for i in 0..=max {
        let set = i < max && map & (1u64 << i) != 0;
        match (set, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let hi = i - 1;
                out.push(if s == hi {
                    IdRange::single(s)
                } else {
                    IdRange::new(s, hi).unwrap_or(IdRange::single(s))
                });
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Whether the set bits of `map` (within `0..max`) form one contiguous run.
pub(crate) fn is_continuous(map: u64, max: u32) -> bool {
    id_list_from_map(map & full_bitmap(max), max).len() == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(lo: u16, hi: u16) -> IdRange {
        if lo == hi {
            IdRange::single(lo)
        } else {
            IdRange::new(lo, hi).expect("range")
        }
    }

    #[test]
    fn bitmaps() {
        assert_eq!(ids_bitmap(r(3, 4)), 0b11000);
        assert_eq!(full_bitmap(8), 0xff);
        let map = full_bitmap(16) ^ ids_bitmap(r(0, 2)) ^ ids_bitmap(r(3, 4)) ^ ids_bitmap(r(5, 6));
        assert_eq!(id_list_from_map(map, 16), vec![r(7, 15)]);
        assert_eq!(
            id_list_from_map(0b1010_0110, 8),
            vec![r(1, 2), r(5, 5), r(7, 7)]
        );
        assert!(is_continuous(0b0111_0000, 8));
        assert!(!is_continuous(0b0101_0000, 8));
        assert_eq!(id_list_from_map(0, 8), vec![]);
    }

    #[test]
    fn effective_speed() {
        let mut p = PortInfo {
            speed: Some("100000".into()),
            ..PortInfo::default()
        };
        assert_eq!(p.compute_effective_speed().as_deref(), Some("100000"));
        p.autoneg = true;
        assert_eq!(p.compute_effective_speed(), None);
        p.supported_speeds = Some("10000,25000,50000".into());
        assert_eq!(p.compute_effective_speed().as_deref(), Some("50000"));
        p.adv_speeds = Some("25000,10000".into());
        assert_eq!(p.compute_effective_speed().as_deref(), Some("25000"));
    }
}
