//! Reading a CONFIG_DB dump into a [`ConfigDb`]: each buffer table's entries parsed into
//! their typed form, then the references between tables cross-checked (the invariants in the
//! parent module's docs).

use std::collections::BTreeMap;

use super::{
    names, AdminStatus, BufferPg, BufferPool, BufferProfile, BufferQueue, ConfigDb,
    DefaultLosslessParams, DeviceMetadata, HeadroomType, LosslessTrafficPattern, Port,
};
use crate::tables::{
    parse_port_ids, parse_u64, reference_name, CableLength, Direction, Entry, IdRange, PoolMode,
    PoolType, PortIds, RawDb, TableError, TableErrors,
};

impl ConfigDb {
    /// Reads and cross-checks the buffer tables of a CONFIG_DB dump (nested format). Returns
    /// every error found, in table/key order.
    pub fn from_raw(raw: &RawDb) -> Result<ConfigDb, TableErrors> {
        let mut errs = Vec::new();
        let mut db = ConfigDb::default();
        let empty = BTreeMap::new();
        let table = |name: &str| raw.get(name).unwrap_or(&empty);

        for (k, f) in table(names::PORT) {
            push(
                &mut errs,
                parse_port(&Entry::new(names::PORT, k, f)).map(|p| {
                    db.ports.insert(k.clone(), p);
                }),
            );
        }
        for (k, f) in table(names::CABLE_LENGTH) {
            let mut m = BTreeMap::new();
            for (port, v) in f {
                match CableLength::parse(v) {
                    Ok(c) => {
                        m.insert(port.clone(), c);
                    }
                    Err(no_unit) => {
                        let (table, key, field, value) = (
                            names::CABLE_LENGTH.to_string(),
                            k.clone(),
                            port.clone(),
                            v.clone(),
                        );
                        errs.push(if no_unit {
                            TableError::CableWithoutUnit {
                                table,
                                key,
                                field,
                                value,
                            }
                        } else {
                            TableError::BadCableLength {
                                table,
                                key,
                                field,
                                value,
                            }
                        });
                    }
                }
            }
            db.cable_lengths.insert(k.clone(), m);
        }
        // Entries that exist but are malformed: references to them are not reported again.
        let mut broken = std::collections::BTreeSet::new();
        for (k, f) in table(names::BUFFER_POOL) {
            match parse_pool(&Entry::new(names::BUFFER_POOL, k, f)) {
                Ok(p) => {
                    db.pools.insert(k.clone(), p);
                }
                Err(e) => {
                    errs.push(e);
                    broken.insert(k.clone());
                }
            }
        }
        for (k, f) in table(names::BUFFER_PROFILE) {
            match parse_profile(&Entry::new(names::BUFFER_PROFILE, k, f)) {
                Ok(p) => {
                    db.profiles.insert(k.clone(), p);
                }
                Err(e) => {
                    errs.push(e);
                    broken.insert(k.clone());
                }
            }
        }
        for (k, f) in table(names::BUFFER_PG) {
            let e = Entry::new(names::BUFFER_PG, k, f);
            let profile = e
                .get("profile")
                .map(reference_name)
                .filter(|p| *p != "NULL" && !p.is_empty());
            match parse_port_ids(names::BUFFER_PG, k, '|') {
                Ok(keys) => {
                    for pk in keys {
                        db.pgs.insert(
                            pk,
                            BufferPg {
                                profile: profile.map(str::to_string),
                            },
                        );
                    }
                }
                Err(err) => errs.push(err),
            }
        }
        for (k, f) in table(names::BUFFER_QUEUE) {
            let e = Entry::new(names::BUFFER_QUEUE, k, f);
            let parsed = parse_port_ids(names::BUFFER_QUEUE, k, '|').and_then(|keys| {
                e.req("profile")
                    .map(|p| (keys, reference_name(p).to_string()))
            });
            match parsed {
                Ok((keys, profile)) => {
                    for pk in keys {
                        db.queues.insert(
                            pk,
                            BufferQueue {
                                profile: profile.clone(),
                            },
                        );
                    }
                }
                Err(err) => errs.push(err),
            }
        }
        for (tname, dest) in [
            (
                names::BUFFER_PORT_INGRESS_PROFILE_LIST,
                &mut db.ingress_profile_lists,
            ),
            (
                names::BUFFER_PORT_EGRESS_PROFILE_LIST,
                &mut db.egress_profile_lists,
            ),
        ] {
            for (k, f) in table(tname) {
                let e = Entry::new(tname, k, f);
                match e.req("profile_list") {
                    Ok(v) => {
                        let list = split_list(v);
                        for port in k.split(',') {
                            dest.insert(port.trim().to_string(), list.clone());
                        }
                    }
                    Err(err) => errs.push(err),
                }
            }
        }
        for (k, f) in table(names::DEFAULT_LOSSLESS_BUFFER_PARAMETER) {
            let e = Entry::new(names::DEFAULT_LOSSLESS_BUFFER_PARAMETER, k, f);
            let p = (|| {
                Ok(DefaultLosslessParams {
                    default_dynamic_th: e.opt_i8("default_dynamic_th")?,
                    over_subscribe_ratio: e.opt_f64("over_subscribe_ratio")?,
                    max_headroom_size: e.opt_u64("max_headroom_size")?,
                    default_hysteresis: e.opt_u64("default_hysteresis")?,
                })
            })();
            push(
                &mut errs,
                p.map(|p| {
                    db.default_lossless.insert(k.clone(), p);
                }),
            );
        }
        for (k, f) in table(names::LOSSLESS_TRAFFIC_PATTERN) {
            let e = Entry::new(names::LOSSLESS_TRAFFIC_PATTERN, k, f);
            push(
                &mut errs,
                parse_pattern(&e).map(|p| {
                    db.traffic_patterns.insert(k.clone(), p);
                }),
            );
        }
        for (k, f) in table(names::DEVICE_METADATA) {
            let mut other = f.clone();
            let md = DeviceMetadata {
                platform: other.remove("platform"),
                hwsku: other.remove("hwsku"),
                buffer_model: other.remove("buffer_model"),
                other,
            };
            db.device_metadata.insert(k.clone(), md);
        }

        db.cross_check(&broken, &mut errs);
        if errs.is_empty() {
            Ok(db)
        } else {
            Err(TableErrors(errs))
        }
    }

    /// The references between tables (see the module invariants).
    fn cross_check(&self, broken: &std::collections::BTreeSet<String>, errs: &mut Vec<TableError>) {
        for (name, p) in &self.profiles {
            match self.pools.get(&p.pool) {
                None if broken.contains(&p.pool) => {}
                None => errs.push(TableError::UnknownPool {
                    table: names::BUFFER_PROFILE.into(),
                    key: name.clone(),
                    field: "pool".into(),
                    pool: p.pool.clone(),
                }),
                Some(pool) => {
                    if let Some(th) = p.threshold {
                        if th.mode() != pool.mode {
                            errs.push(TableError::Inconsistent {
                                table: names::BUFFER_PROFILE.into(),
                                key: name.clone(),
                                reason: format!(
                                    "`{}` given but pool {:?} is in {} mode (needs `{}_th`)",
                                    th.field(),
                                    p.pool,
                                    pool.mode.as_str(),
                                    pool.mode.as_str()
                                ),
                            });
                        }
                    }
                }
            }
        }
        let check = |errs: &mut Vec<TableError>,
                     table: &str,
                     key: String,
                     field: &str,
                     profile: &str,
                     want: Direction| {
            match self.profiles.get(profile) {
                None if broken.contains(profile) => {}
                None => errs.push(TableError::UnknownProfile {
                    table: table.into(),
                    key,
                    field: field.into(),
                    profile: profile.into(),
                }),
                Some(_) => {
                    if let Some(d) = self.profile_direction(profile) {
                        if d != want {
                            errs.push(TableError::WrongDirection {
                                table: table.into(),
                                key,
                                profile: profile.into(),
                                actual: d.as_str(),
                                expected: want.as_str(),
                            });
                        }
                    }
                }
            }
        };
        for (k, pg) in &self.pgs {
            if let Some(p) = &pg.profile {
                check(
                    errs,
                    names::BUFFER_PG,
                    k.key('|'),
                    "profile",
                    p,
                    Direction::Ingress,
                );
            }
        }
        for (k, q) in &self.queues {
            check(
                errs,
                names::BUFFER_QUEUE,
                k.key('|'),
                "profile",
                &q.profile,
                Direction::Egress,
            );
        }
        for (port, list) in &self.ingress_profile_lists {
            for p in list {
                check(
                    errs,
                    names::BUFFER_PORT_INGRESS_PROFILE_LIST,
                    port.clone(),
                    "profile_list",
                    p,
                    Direction::Ingress,
                );
            }
        }
        for (port, list) in &self.egress_profile_lists {
            for p in list {
                check(
                    errs,
                    names::BUFFER_PORT_EGRESS_PROFILE_LIST,
                    port.clone(),
                    "profile_list",
                    p,
                    Direction::Egress,
                );
            }
        }
    }
}

fn push(errs: &mut Vec<TableError>, r: Result<(), TableError>) {
    if let Err(e) = r {
        errs.push(e);
    }
}

/// Splits a comma list, dropping empty items and reference brackets.
pub(crate) fn split_list(v: &str) -> Vec<String> {
    v.split(',')
        .map(reference_name)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn parse_port(e: &Entry<'_>) -> Result<Port, TableError> {
    let speed =
        match e.get("speed") {
            None => None,
            Some(v) => Some(parse_u64(v).filter(|s| *s > 0).ok_or_else(|| {
                e.bad_number("speed", v, "a positive integer (Mb/s, e.g. 100000)")
            })?),
        };
    let mtu = match e.opt_u64("mtu")? {
        None => None,
        Some(m) => Some(
            u32::try_from(m)
                .ok()
                .filter(|m| *m > 0)
                .ok_or_else(|| e.bad_number("mtu", &m.to_string(), "a positive MTU in bytes"))?,
        ),
    };
    let lanes = match e.get("lanes") {
        None => Vec::new(),
        Some(v) => v
            .split(',')
            .map(|l| {
                l.trim()
                    .parse::<u32>()
                    .map_err(|_| e.bad_number("lanes", v, "a comma list of lane numbers"))
            })
            .collect::<Result<_, _>>()?,
    };
    let admin_status = e
        .opt_enum(
            "admin_status",
            &[("up", AdminStatus::Up), ("down", AdminStatus::Down)],
            "up, down",
        )?
        .unwrap_or(AdminStatus::Down);
    let autoneg = e.opt_enum("autoneg", &[("on", true), ("off", false)], "on, off")?;
    let adv_speeds = match e.get("adv_speeds") {
        None => None,
        Some(v) if v.trim() == "all" || v.trim().is_empty() => None,
        Some(v) => Some(
            v.split(',')
                .map(|s| {
                    parse_u64(s).ok_or_else(|| {
                        e.bad_number("adv_speeds", v, "`all` or a comma list of speeds (Mb/s)")
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    Ok(Port {
        speed,
        mtu,
        lanes,
        admin_status,
        autoneg,
        adv_speeds,
    })
}

fn parse_pool(e: &Entry<'_>) -> Result<BufferPool, TableError> {
    let pool_type = e
        .opt_enum(
            "type",
            &[
                ("ingress", PoolType::Ingress),
                ("egress", PoolType::Egress),
                ("both", PoolType::Both),
            ],
            "ingress, egress, both",
        )?
        .ok_or_else(|| e.missing("type"))?;
    let mode = e
        .opt_enum(
            "mode",
            &[("static", PoolMode::Static), ("dynamic", PoolMode::Dynamic)],
            "static, dynamic",
        )?
        .unwrap_or(PoolMode::Dynamic);
    let percentage = e.opt_f64("percentage")?;
    if let Some(p) = percentage {
        if !(0.0..=100.0).contains(&p) {
            return Err(e.bad_number(
                "percentage",
                &crate::lua::format_number(p),
                "a percentage in 0..=100",
            ));
        }
    }
    Ok(BufferPool {
        pool_type,
        mode,
        size: e.opt_u64("size")?,
        xoff: e.opt_u64("xoff")?,
        percentage,
    })
}

fn parse_profile(e: &Entry<'_>) -> Result<BufferProfile, TableError> {
    let pool = reference_name(e.req("pool")?).to_string();
    let threshold = e.opt_threshold()?;
    let headroom_type = e
        .opt_enum(
            "headroom_type",
            &[
                ("static", HeadroomType::Static),
                ("dynamic", HeadroomType::Dynamic),
            ],
            "static, dynamic",
        )?
        .unwrap_or(HeadroomType::Static);
    let p = BufferProfile {
        pool,
        xon: e.opt_u64("xon")?,
        xon_offset: e.opt_u64("xon_offset")?,
        xoff: e.opt_u64("xoff")?,
        size: e.opt_u64("size")?,
        threshold,
        headroom_type,
        packet_discard_action: e.get("packet_discard_action").map(str::to_string),
    };
    if let Some(a) = &p.packet_discard_action {
        if a != "drop" && a != "trim" {
            return Err(TableError::BadEnum {
                table: e.table.into(),
                key: e.key.into(),
                field: "packet_discard_action".into(),
                value: a.clone(),
                allowed: "drop, trim",
            });
        }
    }
    Ok(p)
}

fn parse_pattern(e: &Entry<'_>) -> Result<LosslessTrafficPattern, TableError> {
    let mtu = e.req_u64("mtu")?;
    let mtu = u32::try_from(mtu)
        .ok()
        .filter(|m| *m > 0)
        .ok_or_else(|| e.bad_number("mtu", &mtu.to_string(), "a positive MTU in bytes"))?;
    let p = e.req_u64("small_packet_percentage")?;
    let small_packet_percentage = u32::try_from(p).ok().filter(|p| *p <= 100).ok_or_else(|| {
        e.bad_number(
            "small_packet_percentage",
            &p.to_string(),
            "a percentage in 0..=100",
        )
    })?;
    Ok(LosslessTrafficPattern {
        mtu,
        small_packet_percentage,
    })
}

/// Helper for building CONFIG_DB keys of per-port id tables.
pub fn pg_key(port: &str, ids: &str) -> Result<PortIds, TableError> {
    let range = IdRange::parse(ids).map_err(|reason| TableError::BadIdRange {
        table: names::BUFFER_PG.into(),
        key: format!("{port}|{ids}"),
        range: ids.into(),
        reason,
    })?;
    Ok(PortIds::new(port, range))
}
