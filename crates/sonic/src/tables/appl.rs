//! APPL_DB: buffermgrd's output and orchagent's input (`BUFFER_*_TABLE`).
//!
//! Two layers per table, because SONiC's plugins look at both (sonic-buffer.md §1.2–§1.3):
//! - **applied** entries (`T:key` hashes, what orchagent has consumed), typed;
//! - **pending** producer state ([`Pending`]): the `T_KEY_SET` / `T_DEL_SET` members and the
//!   staging hashes `_T:key` that a ProducerStateTable writes and the consumer has not popped
//!   yet. The pool algorithm falls back to the current pool sizes while PG/queue/profile-list
//!   changes are pending; the headroom check overlays staged PGs and profiles.
//!
//! Invariants: keys use `:` (`Ethernet0:3-4`), references are plain names, and
//! [`ApplDb::to_raw`] writes exactly the fields buffermgrd writes (a profile's `xoff` only when
//! it is lossless, a pool's `xoff` only when known).

use std::collections::{BTreeMap, BTreeSet};

use super::{
    config::split_list, parse_port_ids, reference_name, Entry, Fields, PoolMode, PoolType, PortIds,
    RawDb, TableError, TableErrors, Threshold,
};

/// APPL_DB table names.
pub mod names {
    /// `BUFFER_POOL_TABLE`.
    pub const BUFFER_POOL_TABLE: &str = "BUFFER_POOL_TABLE";
    /// `BUFFER_PROFILE_TABLE`.
    pub const BUFFER_PROFILE_TABLE: &str = "BUFFER_PROFILE_TABLE";
    /// `BUFFER_PG_TABLE`.
    pub const BUFFER_PG_TABLE: &str = "BUFFER_PG_TABLE";
    /// `BUFFER_QUEUE_TABLE`.
    pub const BUFFER_QUEUE_TABLE: &str = "BUFFER_QUEUE_TABLE";
    /// `BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE`.
    pub const BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE: &str =
        "BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE";
    /// `BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE`.
    pub const BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE: &str = "BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE";
    /// `PORT_TABLE` (buffermgrd only reads `PORT_TABLE:PortInitDone`).
    pub const PORT_TABLE: &str = "PORT_TABLE";
}

/// The APPL_DB buffer tables buffermgrd produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ApplTable {
    /// `BUFFER_POOL_TABLE`.
    Pool,
    /// `BUFFER_PROFILE_TABLE`.
    Profile,
    /// `BUFFER_PG_TABLE`.
    Pg,
    /// `BUFFER_QUEUE_TABLE`.
    Queue,
    /// `BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE`.
    IngressProfileList,
    /// `BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE`.
    EgressProfileList,
}

impl ApplTable {
    /// Every table.
    pub const ALL: [ApplTable; 6] = [
        ApplTable::Pool,
        ApplTable::Profile,
        ApplTable::Pg,
        ApplTable::Queue,
        ApplTable::IngressProfileList,
        ApplTable::EgressProfileList,
    ];

    /// The table name.
    pub fn name(self) -> &'static str {
        match self {
            ApplTable::Pool => names::BUFFER_POOL_TABLE,
            ApplTable::Profile => names::BUFFER_PROFILE_TABLE,
            ApplTable::Pg => names::BUFFER_PG_TABLE,
            ApplTable::Queue => names::BUFFER_QUEUE_TABLE,
            ApplTable::IngressProfileList => names::BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE,
            ApplTable::EgressProfileList => names::BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE,
        }
    }

    /// The table of a name, if it is one of these.
    pub fn from_name(name: &str) -> Option<ApplTable> {
        ApplTable::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// Producer-side state of one table not yet consumed by orchagent.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Pending {
    /// Members of `T_KEY_SET` (object keys with pending changes).
    pub key_set: BTreeSet<String>,
    /// Members of `T_DEL_SET` (object keys whose pending change starts with a delete).
    pub del_set: BTreeSet<String>,
    /// Staging hashes `_T:<key>` (fields of pending sets).
    pub staged: BTreeMap<String, Fields>,
}

impl Pending {
    /// Whether the `T_KEY_SET` or `T_DEL_SET` Redis set exists (is non-empty).
    pub fn has_sets(&self) -> bool {
        !self.key_set.is_empty() || !self.del_set.is_empty()
    }
}

/// `BUFFER_POOL_TABLE:<pool>`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ApplPool {
    /// `type`.
    pub pool_type: Option<PoolType>,
    /// `mode`.
    pub mode: Option<PoolMode>,
    /// `size`, bytes.
    pub size: Option<u64>,
    /// `xoff`: shared headroom pool size (`0` = disabled).
    pub xoff: Option<u64>,
}

impl ApplPool {
    /// The fields buffermgrd writes: `type`, `mode`, `size`, and `xoff` when known.
    pub fn to_fields(&self) -> Fields {
        let mut f = Fields::new();
        if let Some(t) = self.pool_type {
            f.insert("type".into(), t.as_str().into());
        }
        if let Some(m) = self.mode {
            f.insert("mode".into(), m.as_str().into());
        }
        if let Some(s) = self.size {
            f.insert("size".into(), s.to_string());
        }
        if let Some(x) = self.xoff {
            f.insert("xoff".into(), x.to_string());
        }
        f
    }
}

/// `BUFFER_PROFILE_TABLE:<profile>`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApplProfile {
    /// `pool`.
    pub pool: String,
    /// `xon`.
    pub xon: Option<u64>,
    /// `xon_offset`.
    pub xon_offset: Option<u64>,
    /// `xoff` (present only on lossless profiles).
    pub xoff: Option<u64>,
    /// `size` (absent/empty after a failed headroom computation).
    pub size: Option<u64>,
    /// `dynamic_th` / `static_th`.
    pub threshold: Option<Threshold>,
    /// `packet_discard_action`.
    pub packet_discard_action: Option<String>,
    /// `xon`/`xoff`/`size` were written as empty strings: buffermgrd's output after a failed
    /// headroom computation (sonic-buffer.md §4.6). The profile still counts as lossless
    /// (it has an `xoff` field) but has no numbers.
    pub empty_headroom: bool,
}

impl ApplProfile {
    /// A lossy or egress profile: `size` and threshold on `pool`.
    pub fn plain(pool: &str, size: u64, threshold: Threshold) -> ApplProfile {
        ApplProfile {
            pool: pool.into(),
            xon: None,
            xon_offset: None,
            xoff: None,
            size: Some(size),
            threshold: Some(threshold),
            packet_discard_action: None,
            empty_headroom: false,
        }
    }

    /// A lossless profile with computed headroom.
    pub fn lossless(
        pool: &str,
        xon: u64,
        xoff: u64,
        size: u64,
        threshold: Threshold,
    ) -> ApplProfile {
        ApplProfile {
            pool: pool.into(),
            xon: Some(xon),
            xon_offset: None,
            xoff: Some(xoff),
            size: Some(size),
            threshold: Some(threshold),
            packet_discard_action: None,
            empty_headroom: false,
        }
    }

    /// Lossless: has an `xoff` field (possibly empty, see [`ApplProfile::empty_headroom`]).
    pub fn is_lossless(&self) -> bool {
        self.xoff.is_some() || self.empty_headroom
    }

    /// The fields buffermgrd writes (`xon`, `xon_offset`, `xoff`, `packet_discard_action`,
    /// `size`, `pool`, `<mode>_th`, each when present).
    pub fn to_fields(&self) -> Fields {
        let mut f = Fields::new();
        for (n, v) in [
            ("xon", self.xon),
            ("xon_offset", self.xon_offset),
            ("xoff", self.xoff),
            ("size", self.size),
        ] {
            if let Some(v) = v {
                f.insert(n.into(), v.to_string());
            } else if self.empty_headroom && n != "xon_offset" {
                f.insert(n.into(), String::new());
            }
        }
        if let Some(a) = &self.packet_discard_action {
            f.insert("packet_discard_action".into(), a.clone());
        }
        f.insert("pool".into(), self.pool.clone());
        if let Some(t) = self.threshold {
            f.insert(t.field().into(), t.value());
        }
        f
    }

    fn parse(e: &Entry<'_>) -> Result<ApplProfile, TableError> {
        let threshold = e.opt_threshold()?;
        Ok(ApplProfile {
            pool: reference_name(e.req("pool")?).to_string(),
            xon: e.opt_u64_or_empty("xon")?,
            xon_offset: e.opt_u64_or_empty("xon_offset")?,
            xoff: e.opt_u64_or_empty("xoff")?,
            size: e.opt_u64_or_empty("size")?,
            threshold,
            packet_discard_action: e.get("packet_discard_action").map(str::to_string),
            empty_headroom: e.get("xoff").is_some_and(|v| v.trim().is_empty()),
        })
    }
}

/// A typed APPL_DB snapshot of the buffer tables, with pending producer state.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ApplDb {
    /// `BUFFER_POOL_TABLE`.
    pub pools: BTreeMap<String, ApplPool>,
    /// `BUFFER_PROFILE_TABLE`.
    pub profiles: BTreeMap<String, ApplProfile>,
    /// `BUFFER_PG_TABLE`: (port, PG ids) → profile.
    pub pgs: BTreeMap<PortIds, String>,
    /// `BUFFER_QUEUE_TABLE`: (port, queue ids) → profile.
    pub queues: BTreeMap<PortIds, String>,
    /// `BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE`: port → profiles.
    pub ingress_profile_lists: BTreeMap<String, Vec<String>>,
    /// `BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE`: port → profiles.
    pub egress_profile_lists: BTreeMap<String, Vec<String>>,
    /// Not-yet-consumed producer state per table.
    pub pending: BTreeMap<ApplTable, Pending>,
}

impl ApplDb {
    /// Reads an APPL_DB dump (nested format; staging hashes as tables `_BUFFER_…_TABLE`).
    /// `T_KEY_SET`/`T_DEL_SET` are Redis sets, not hashes: fill [`ApplDb::pending`] directly.
    pub fn from_raw(raw: &RawDb) -> Result<ApplDb, TableErrors> {
        let mut errs = Vec::new();
        let mut db = ApplDb::default();
        for (tname, table) in raw {
            if let Some(t) = tname.strip_prefix('_').and_then(ApplTable::from_name) {
                db.pending
                    .entry(t)
                    .or_default()
                    .staged
                    .extend(table.iter().map(|(k, f)| (k.clone(), f.clone())));
                continue;
            }
            let Some(t) = ApplTable::from_name(tname) else {
                continue;
            };
            for (k, f) in table {
                let e = Entry::new(tname, k, f);
                let r = match t {
                    ApplTable::Pool => parse_pool(&e).map(|p| {
                        db.pools.insert(k.clone(), p);
                    }),
                    ApplTable::Profile => ApplProfile::parse(&e).map(|p| {
                        db.profiles.insert(k.clone(), p);
                    }),
                    ApplTable::Pg | ApplTable::Queue => {
                        parse_port_ids(tname, k, ':').and_then(|keys| {
                            let p = reference_name(e.req("profile")?).to_string();
                            let dest = if t == ApplTable::Pg {
                                &mut db.pgs
                            } else {
                                &mut db.queues
                            };
                            for pk in keys {
                                dest.insert(pk, p.clone());
                            }
                            Ok(())
                        })
                    }
                    ApplTable::IngressProfileList | ApplTable::EgressProfileList => {
                        e.req("profile_list").map(|v| {
                            let dest = if t == ApplTable::IngressProfileList {
                                &mut db.ingress_profile_lists
                            } else {
                                &mut db.egress_profile_lists
                            };
                            dest.insert(k.clone(), split_list(v));
                        })
                    }
                };
                if let Err(err) = r {
                    errs.push(err);
                }
            }
        }
        if errs.is_empty() {
            Ok(db)
        } else {
            Err(TableErrors(errs))
        }
    }

    /// Renders the applied entries as a nested dump (staging hashes as `_T` tables).
    pub fn to_raw(&self) -> RawDb {
        let mut db = RawDb::new();
        let mut put = |t: ApplTable, k: String, f: Fields| {
            db.entry(t.name().to_string()).or_default().insert(k, f);
        };
        for (k, p) in &self.pools {
            put(ApplTable::Pool, k.clone(), p.to_fields());
        }
        for (k, p) in &self.profiles {
            put(ApplTable::Profile, k.clone(), p.to_fields());
        }
        for (t, map) in [(ApplTable::Pg, &self.pgs), (ApplTable::Queue, &self.queues)] {
            for (k, p) in map {
                let mut f = Fields::new();
                f.insert("profile".into(), p.clone());
                put(t, k.key(':'), f);
            }
        }
        for (t, lists) in [
            (ApplTable::IngressProfileList, &self.ingress_profile_lists),
            (ApplTable::EgressProfileList, &self.egress_profile_lists),
        ] {
            for (k, l) in lists {
                let mut f = Fields::new();
                f.insert("profile_list".into(), l.join(","));
                put(t, k.clone(), f);
            }
        }
        for (t, p) in &self.pending {
            for (k, f) in &p.staged {
                db.entry(format!("_{}", t.name()))
                    .or_default()
                    .insert(k.clone(), f.clone());
            }
        }
        db
    }

    /// Whether `T_KEY_SET` / `T_DEL_SET` of `table` exist.
    pub fn has_pending_sets(&self, table: ApplTable) -> bool {
        self.pending.get(&table).is_some_and(Pending::has_sets)
    }

    /// `BUFFER_POOL_TABLE:ingress_lossless_pool.xoff` if it is non-zero: the shared headroom
    /// pool as orchagent sees it (the check's SHP state).
    pub fn shp_size(&self) -> Option<u64> {
        self.pools
            .get(super::config::INGRESS_LOSSLESS_POOL)?
            .xoff
            .filter(|x| *x != 0)
    }
}

fn parse_pool(e: &Entry<'_>) -> Result<ApplPool, TableError> {
    Ok(ApplPool {
        pool_type: e.opt_enum(
            "type",
            &[
                ("ingress", PoolType::Ingress),
                ("egress", PoolType::Egress),
                ("both", PoolType::Both),
            ],
            "ingress, egress, both",
        )?,
        mode: e.opt_enum(
            "mode",
            &[("static", PoolMode::Static), ("dynamic", PoolMode::Dynamic)],
            "static, dynamic",
        )?,
        size: e.opt_u64_or_empty("size")?,
        xoff: e.opt_u64_or_empty("xoff")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_staging() {
        let mut db = ApplDb::default();
        db.pools.insert(
            "ingress_lossless_pool".into(),
            ApplPool {
                pool_type: Some(PoolType::Ingress),
                mode: Some(PoolMode::Dynamic),
                size: Some(100),
                xoff: Some(0),
            },
        );
        db.profiles.insert(
            "pg_lossless_100000_5m_profile".into(),
            ApplProfile::lossless(
                "ingress_lossless_pool",
                19456,
                48128,
                67584,
                Threshold::Dynamic(0),
            ),
        );
        db.pgs.insert(
            PortIds::new(
                "Ethernet0",
                super::super::IdRange::new(3, 4).expect("range"),
            ),
            "pg_lossless_100000_5m_profile".into(),
        );
        let mut staged = Fields::new();
        staged.insert("profile".into(), "x".into());
        db.pending
            .entry(ApplTable::Pg)
            .or_default()
            .staged
            .insert("Ethernet0:0".into(), staged);
        let raw = db.to_raw();
        assert_eq!(
            raw["BUFFER_PG_TABLE"]["Ethernet0:3-4"]["profile"],
            "pg_lossless_100000_5m_profile"
        );
        assert_eq!(
            raw["BUFFER_PROFILE_TABLE"]["pg_lossless_100000_5m_profile"]["dynamic_th"],
            "0"
        );
        assert!(raw.contains_key("_BUFFER_PG_TABLE"));
        assert_eq!(ApplDb::from_raw(&raw), Ok(db.clone()));
        assert_eq!(db.shp_size(), None);
    }

    #[test]
    fn empty_headroom_fields_are_absent() {
        let mut raw = RawDb::new();
        let mut f = Fields::new();
        for (k, v) in [
            ("pool", "ingress_lossless_pool"),
            ("xon", ""),
            ("xoff", ""),
            ("size", ""),
            ("dynamic_th", "0"),
        ] {
            f.insert(k.into(), v.into());
        }
        raw.entry("BUFFER_PROFILE_TABLE".into())
            .or_default()
            .insert("p".into(), f);
        let db = ApplDb::from_raw(&raw).expect("parse");
        let p = &db.profiles["p"];
        assert_eq!(
            (p.size, p.xoff, p.empty_headroom, p.is_lossless()),
            (None, None, true, true)
        );
        assert_eq!(p.to_fields(), raw["BUFFER_PROFILE_TABLE"]["p"]);
    }
}
