//! The CONFIG_DB / STATE_DB table handlers (sonic-buffer.md §7.3, §7.7): what happens when an
//! item of a subscribed table is processed.
//!
//! Invariant: a handler either completes ([`Status::Success`]), asks to be retried without
//! having changed buffermgrd's records ([`Status::Retry`]), or rejects the item
//! ([`Status::Failed`], logged by the caller).

use std::collections::BTreeSet;

use super::records::{is_non_zero, Dir, PoolInfo, PortState, ProfileInfo};
use super::{BufferManager, EntryError, LogLevel, Status};
use crate::tables::appl::names as appl_names;
use crate::tables::config::{BufferProfile, ConfigDb, HeadroomType, Port, INGRESS_LOSSLESS_POOL};
use crate::tables::{
    parse_port_ids, reference_name, CableLength, Direction, Fields, IdRange, RawDb, TableError,
};

/// Checks that a CONFIG_DB entry parses (malformed entries are logged and dropped before
/// they reach a handler). `CABLE_LENGTH` fields are checked one by one by the handler.
pub(super) fn validate_config(table: &str, key: &str, fields: &Fields) -> Result<(), EntryError> {
    let one = |t: &str, fields: &Fields, extra: Option<(&str, Fields)>| {
        let mut raw = RawDb::new();
        raw.entry(t.to_string())
            .or_default()
            .insert(key.to_string(), fields.clone());
        if let Some((pool, pf)) = extra {
            raw.entry("BUFFER_POOL".to_string())
                .or_default()
                .insert(pool.to_string(), pf);
        }
        ConfigDb::from_raw(&raw)
            .map(|_| ())
            .map_err(|e| match e.0.into_iter().next() {
                Some(first) => EntryError::Malformed(first),
                None => EntryError::Malformed(TableError::BadKey {
                    table: t.to_string(),
                    key: key.to_string(),
                    reason: "unreadable",
                }),
            })
    };
    match table {
        "PORT"
        | "BUFFER_POOL"
        | "DEFAULT_LOSSLESS_BUFFER_PARAMETER"
        | "LOSSLESS_TRAFFIC_PATTERN"
        | "DEVICE_METADATA" => one(table, fields, None),
        "BUFFER_PROFILE" => {
            // The pool may not exist yet: check the fields against a stand-in pool whose mode
            // matches the threshold given (the real pool is checked when processed).
            let pool = fields
                .get("pool")
                .map(|p| reference_name(p).to_string())
                .unwrap_or_default();
            let mut pf = Fields::new();
            pf.insert("type".into(), "ingress".into());
            let mode = if fields.contains_key("static_th") {
                "static"
            } else {
                "dynamic"
            };
            pf.insert("mode".into(), mode.into());
            let extra = (!pool.is_empty()).then_some((pool.as_str(), pf));
            one(table, fields, extra)
        }
        "BUFFER_PG" | "BUFFER_QUEUE" => {
            parse_port_ids(table, key, '|')?;
            if table == "BUFFER_PG" {
                if let Some(f) = fields.keys().find(|f| *f != "profile") {
                    return Err(EntryError::UnexpectedField {
                        table: table.into(),
                        key: key.into(),
                        field: f.clone(),
                    });
                }
            } else if !fields.contains_key("profile") {
                return Err(TableError::MissingField {
                    table: table.into(),
                    key: key.into(),
                    field: "profile".into(),
                }
                .into());
            }
            Ok(())
        }
        "BUFFER_PORT_INGRESS_PROFILE_LIST" | "BUFFER_PORT_EGRESS_PROFILE_LIST" => {
            if key.split(',').any(|p| p.trim().is_empty()) {
                return Err(TableError::BadKey {
                    table: table.into(),
                    key: key.into(),
                    reason: "empty port name",
                }
                .into());
            }
            if !fields.contains_key("profile_list") {
                return Err(TableError::MissingField {
                    table: table.into(),
                    key: key.into(),
                    field: "profile_list".into(),
                }
                .into());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn parse_one<T>(
    table: &str,
    key: &str,
    fields: &Fields,
    extra: Option<(&str, Fields)>,
    take: impl FnOnce(ConfigDb) -> Option<T>,
) -> Result<T, EntryError> {
    let mut raw = RawDb::new();
    raw.entry(table.to_string())
        .or_default()
        .insert(key.to_string(), fields.clone());
    if let Some((pool, pf)) = extra {
        raw.entry("BUFFER_POOL".to_string())
            .or_default()
            .insert(pool.to_string(), pf);
    }
    let unreadable = || {
        EntryError::Malformed(TableError::BadKey {
            table: table.to_string(),
            key: key.to_string(),
            reason: "unreadable",
        })
    };
    match ConfigDb::from_raw(&raw) {
        Ok(db) => take(db).ok_or_else(unreadable),
        Err(e) => Err(e
            .0
            .into_iter()
            .next()
            .map(EntryError::Malformed)
            .unwrap_or_else(unreadable)),
    }
}

/// Whether a ratio / size string counts as "enabled" (a number ≠ 0).
pub(super) fn numeric_non_zero(v: Option<&str>) -> bool {
    v.and_then(crate::lua::tonumber).is_some_and(|x| x != 0.0)
}

impl BufferManager {
    // ---------------------------------------------------------------------------------------
    // PORT (§7.3).

    pub(super) fn handle_port(&mut self, port: &str, set: Option<&Fields>) -> Status {
        let Some(fields) = set else {
            return self.handle_port_del(port);
        };
        let parsed: Port = match parse_one("PORT", port, fields, None, |db| {
            db.ports.into_values().next()
        }) {
            Ok(p) => p,
            Err(e) => return Status::Failed(e),
        };
        let info = self.ports.entry(port.to_string()).or_default();
        let first_time = !info.known;
        info.known = true;
        info.lane_count = parsed.lane_count();
        info.speed = fields.get("speed").cloned();
        let old_mtu = info.mtu_or_default();
        info.mtu = fields.get("mtu").cloned();
        let mtu_updated = info.mtu_or_default() != old_mtu;
        info.autoneg = parsed.autoneg == Some(true);
        info.adv_speeds = fields
            .get("adv_speeds")
            .filter(|v| v.trim() != "all" && !v.trim().is_empty())
            .cloned();
        let admin_up = parsed.is_up();
        let was_up = info.state != PortState::AdminDown;
        let admin_status_updated = admin_up != was_up;

        let new_eff = info.compute_effective_speed();
        if new_eff.is_none() && info.state == PortState::Ready {
            info.state = PortState::Initializing;
        }
        let eff_updated = new_eff != info.effective_speed;
        info.effective_speed = new_eff;

        let mut need_refresh_all = false;
        let mut need_handle_admin_down = false;
        let mut was_admin_down = false;
        if (eff_updated || mtu_updated) && info.cable.is_some() && info.effective_speed.is_some() {
            match info.state {
                PortState::Initializing => {
                    info.state = PortState::Ready;
                    need_refresh_all = true;
                }
                PortState::Ready => need_refresh_all = true,
                PortState::AdminDown => {}
            }
        }
        if admin_status_updated {
            if admin_up {
                info.state = if info.effective_speed.is_some() && info.cable.is_some() {
                    PortState::Ready
                } else {
                    PortState::Initializing
                };
                need_refresh_all = true;
                was_admin_down = true;
            } else {
                info.state = PortState::AdminDown;
                need_handle_admin_down = true;
            }
        } else if first_time {
            need_handle_admin_down = true;
        }
        let state = info.state;
        if admin_status_updated || first_time {
            self.log(LogLevel::Notice, format!("port {port}: state {state:?}"));
        }

        if need_handle_admin_down {
            self.admin_down_ports.insert(port.to_string());
            if !self.pool_ready {
                self.pending_zero_ports.insert(port.to_string());
            } else if self.ready_to_reclaim(port) {
                self.reclaim(port, Dir::Pg);
                self.reclaim(port, Dir::Queue);
                self.check_shared_buffer_pool_size(false);
            } else {
                self.pending_zero_ports.insert(port.to_string());
                self.log(
                    LogLevel::Notice,
                    format!("port {port}: admin down; reclaiming its buffers waits for max_priority_groups/max_queues in STATE_DB BUFFER_MAX_PARAM_TABLE"),
                );
            }
        } else if need_refresh_all {
            if was_admin_down {
                self.remove_supported_but_not_configured(port);
                self.apply_normal_objects(port);
                self.admin_down_ports.remove(port);
                self.pending_zero_ports.remove(port);
                for d in Dir::BOTH {
                    self.pending_sbnc_ports[d.idx()].remove(port);
                }
                if self.admin_down_ports.is_empty() {
                    self.unload_zero_profiles();
                }
            }
            self.refresh_pgs_for_port(port, None);
        }
        Status::Success
    }

    fn handle_port_del(&mut self, port: &str) -> Status {
        let has_pgs = self.pgs.get(port).is_some_and(|m| !m.is_empty());
        let has_queues = self.queues.get(port).is_some_and(|m| !m.is_empty());
        let has_lists = self.lists.iter().any(|l| l.contains_key(port));
        if has_pgs || has_queues || has_lists {
            return Status::Retry(format!(
                "port {port} still has buffer PGs, queues or profile lists"
            ));
        }
        if self.ports.get(port).is_some_and(|p| p.known) {
            self.remove_supported_but_not_configured(port);
            for d in Dir::BOTH {
                if let Some(ids) = self.zero.ids_to_zero[d.idx()] {
                    self.appl_del(d.object_table(), &format!("{port}:{ids}"));
                }
                self.appl_del(d.list_table(), port);
                self.pending_sbnc_ports[d.idx()].remove(port);
            }
        }
        self.ports.remove(port);
        self.admin_down_ports.remove(port);
        self.pending_zero_ports.remove(port);
        self.refresh_pending.remove(port);
        if self.admin_down_ports.is_empty() {
            self.unload_zero_profiles();
        }
        self.check_shared_buffer_pool_size(false);
        Status::Success
    }

    // ---------------------------------------------------------------------------------------
    // CABLE_LENGTH (§7.3).

    pub(super) fn handle_cable_length(&mut self, set: Option<&Fields>) -> Status {
        // A removed CABLE_LENGTH entry changes nothing (as in buffermgrd).
        let Some(fields) = set else {
            return Status::Success;
        };
        for (port, len) in fields {
            if let Err(no_unit) = CableLength::parse(len) {
                let reason = if no_unit {
                    "has no unit (write e.g. \"40m\")"
                } else {
                    "is not <metres>m"
                };
                self.log(
                    LogLevel::Error,
                    format!("CABLE_LENGTH: cable length of {port} = {len:?} {reason}; ignored"),
                );
                continue;
            }
            let info = self.ports.entry(port.clone()).or_default();
            if info.cable.as_deref() == Some(len.as_str()) {
                continue;
            }
            info.cable = Some(len.clone());
            if !info.known || info.effective_speed.is_none() {
                continue;
            }
            match info.state {
                PortState::Initializing => {
                    info.state = PortState::Ready;
                    self.refresh_pgs_for_port(port, None);
                }
                PortState::Ready => {
                    self.refresh_pgs_for_port(port, None);
                }
                PortState::AdminDown => {}
            }
        }
        Status::Success
    }

    // ---------------------------------------------------------------------------------------
    // STATE_DB PORT_TABLE (supported speeds of autoneg ports, §7.3).

    pub(super) fn handle_port_state(&mut self, port: &str, set: Option<&Fields>) -> Status {
        let Some(fields) = set else {
            return Status::Success;
        };
        let Some(sup) = fields.get("supported_speeds") else {
            return Status::Success;
        };
        let info = self.ports.entry(port.to_string()).or_default();
        if info.supported_speeds.as_deref() == Some(sup.as_str()) {
            return Status::Success;
        }
        info.supported_speeds = Some(sup.clone());
        if !info.autoneg {
            return Status::Success;
        }
        let new_eff = info.compute_effective_speed();
        if new_eff.is_none() && info.state == PortState::Ready {
            info.state = PortState::Initializing;
        }
        if new_eff == info.effective_speed {
            return Status::Success;
        }
        info.effective_speed = new_eff;
        if info.known
            && info.effective_speed.is_some()
            && info.cable.as_deref().is_some_and(is_non_zero)
            && info.state != PortState::AdminDown
        {
            info.state = PortState::Ready;
            self.refresh_pgs_for_port(port, None);
        }
        Status::Success
    }

    // ---------------------------------------------------------------------------------------
    // STATE_DB BUFFER_MAX_PARAM_TABLE (§7.7).

    pub(super) fn handle_max_param(&mut self, key: &str, set: Option<&Fields>) -> Status {
        let Some(fields) = set else {
            return Status::Success;
        };
        let positive = |field: &str, v: &str| {
            v.trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| EntryError::BadMaxParam {
                    key: key.to_string(),
                    field: field.to_string(),
                    value: v.to_string(),
                })
        };
        if key == "global" {
            if let Some(v) = fields.get("mmu_size") {
                match positive("mmu_size", v) {
                    Ok(n) => self.mmu_size = Some(n),
                    Err(e) => return Status::Failed(e),
                }
            }
            return Status::Success;
        }
        if !self.ports.get(key).is_some_and(|p| p.known) {
            return Status::Retry(format!("port {key} is not configured in PORT yet"));
        }
        let mut parsed = [None, None];
        for (i, field) in ["max_priority_groups", "max_queues"].iter().enumerate() {
            if let Some(v) = fields.get(*field) {
                match positive(field, v) {
                    Ok(n) => parsed[i] = Some(u32::try_from(n).unwrap_or(u32::MAX)),
                    Err(e) => return Status::Failed(e),
                }
            }
        }
        if let Some(info) = self.ports.get_mut(key) {
            for (i, v) in parsed.iter().enumerate() {
                if let Some(v) = v {
                    info.max_objects[i] = *v;
                }
            }
        }
        // An admin-down port that was waiting for these numbers can be reclaimed now.
        if self.pool_ready && self.pending_zero_ports.contains(key) && self.ready_to_reclaim(key) {
            self.pending_zero_ports.remove(key);
            self.reclaim(key, Dir::Pg);
            self.reclaim(key, Dir::Queue);
            self.check_shared_buffer_pool_size(false);
        }
        Status::Success
    }

    // ---------------------------------------------------------------------------------------
    // DEFAULT_LOSSLESS_BUFFER_PARAMETER (§7.7, §7.9).

    pub(super) fn handle_default_lossless(&mut self, set: Option<&Fields>) -> Status {
        let new_ratio = match set {
            Some(fields) => {
                if !self.pools.contains_key(INGRESS_LOSSLESS_POOL) {
                    return Status::Retry(format!("{INGRESS_LOSSLESS_POOL} is not configured yet"));
                }
                if let Some(th) = fields
                    .get("default_dynamic_th")
                    .and_then(|v| v.trim().parse::<i8>().ok())
                {
                    self.default_threshold = Some(th);
                }
                fields.get("over_subscribe_ratio").cloned()
            }
            None => None,
        };
        if new_ratio != self.ratio {
            let was = numeric_non_zero(self.ratio.as_deref());
            let will = numeric_non_zero(new_ratio.as_deref());
            self.ratio = new_ratio;
            self.refresh_shared_headroom_pool(was != will, false);
        }
        Status::Success
    }

    // ---------------------------------------------------------------------------------------
    // BUFFER_POOL (§7.7).

    pub(super) fn handle_pool(&mut self, name: &str, set: Option<&Fields>) -> Status {
        let Some(fields) = set else {
            self.appl_del(appl_names::BUFFER_POOL_TABLE, name);
            self.state_remove(appl_names::BUFFER_POOL_TABLE, name);
            self.pools.remove(name);
            if self.pools.is_empty() {
                self.unload_zero_profiles();
                self.pool_ready = false;
                self.log(
                    LogLevel::Notice,
                    "the last buffer pool was removed: buffer pools are not ready".into(),
                );
            }
            return Status::Success;
        };
        let parsed = match parse_one("BUFFER_POOL", name, fields, None, |db| {
            db.pools.into_values().next()
        }) {
            Ok(p) => p,
            Err(e) => return Status::Failed(e),
        };
        let direction = parsed.pool_type.direction();
        let rec = self.pools.entry(name.to_string()).or_insert(PoolInfo {
            direction,
            type_word: direction.as_str(),
            mode: parsed.mode.as_str(),
            dynamic_size: true,
            total_size: None,
            xoff: None,
            zero_profile: None,
        });
        rec.direction = direction;
        rec.type_word = direction.as_str();
        rec.mode = parsed.mode.as_str();
        rec.dynamic_size = parsed.size.is_none();
        let dynamic_size = rec.dynamic_size;
        let new_shp = fields.get("xoff").cloned().unwrap_or_else(|| "0".into());
        let mut dont_update = dynamic_size;
        if name == INGRESS_LOSSLESS_POOL {
            if !numeric_non_zero(Some(&new_shp)) {
                dont_update |= numeric_non_zero(self.ratio.as_deref());
            }
        } else if numeric_non_zero(Some(&new_shp)) {
            self.log(
                LogLevel::Error,
                format!("BUFFER_POOL|{name}: field `xoff` is supported for {INGRESS_LOSSLESS_POOL} only; ignored"),
            );
        }
        if !dont_update {
            self.appl_set(appl_names::BUFFER_POOL_TABLE, name, fields.clone());
            self.state_write(appl_names::BUFFER_POOL_TABLE, name, fields.clone());
        }
        if name == INGRESS_LOSSLESS_POOL && self.configured_shp.as_deref() != Some(&new_shp) {
            let was = numeric_non_zero(self.configured_shp.as_deref());
            let will = numeric_non_zero(Some(&new_shp));
            self.configured_shp = Some(new_shp);
            self.refresh_shared_headroom_pool(false, was != will);
        }
        Status::Success
    }

    // ---------------------------------------------------------------------------------------
    // BUFFER_PROFILE (§7.7).

    pub(super) fn handle_profile(&mut self, name: &str, set: Option<&Fields>) -> Status {
        let Some(fields) = set else {
            return self.handle_profile_del(name);
        };
        let pool_name = fields
            .get("pool")
            .map(|p| reference_name(p).to_string())
            .unwrap_or_default();
        let Some(pool) = self.pools.get(&pool_name).cloned() else {
            return Status::Retry(format!("pool {pool_name:?} is not configured yet"));
        };
        let mut pf = Fields::new();
        pf.insert("type".into(), pool.type_word.into());
        pf.insert("mode".into(), pool.mode.into());
        let parsed: BufferProfile = match parse_one(
            "BUFFER_PROFILE",
            name,
            fields,
            Some((&pool_name, pf)),
            |db| db.profiles.into_values().next(),
        ) {
            Ok(p) => p,
            Err(EntryError::Malformed(TableError::Inconsistent { .. })) => {
                let field = if fields.contains_key("static_th") {
                    "static_th"
                } else {
                    "dynamic_th"
                };
                return Status::Failed(EntryError::ThresholdMode {
                    profile: name.to_string(),
                    pool: pool_name,
                    field,
                    mode: pool.mode,
                });
            }
            Err(e) => return Status::Failed(e),
        };
        let dynamic = parsed.headroom_type == HeadroomType::Dynamic;
        let lossless = parsed.xoff.is_some() || dynamic;
        if lossless && pool.direction == Direction::Egress {
            return Status::Failed(EntryError::LosslessOnEgress {
                profile: name.to_string(),
                pool: pool_name,
            });
        }
        let old = self.profiles.get(name);
        let kind_changed =
            old.is_some_and(|o| o.dynamic_calculated != dynamic || o.lossless != lossless);
        let port_pgs = old.map(|o| o.port_pgs.clone()).unwrap_or_default();
        self.profiles.insert(
            name.to_string(),
            ProfileInfo {
                pool: pool_name,
                direction: if dynamic {
                    Direction::Ingress
                } else {
                    pool.direction
                },
                lossless,
                dynamic_calculated: dynamic,
                static_configured: true,
                xon: parsed.xon,
                xon_offset: parsed.xon_offset,
                xoff: parsed.xoff,
                size: parsed.size,
                threshold: parsed.threshold,
                packet_discard_action: parsed.packet_discard_action,
                gen: None,
                port_pgs,
            },
        );
        if kind_changed {
            // PGs configured with this profile follow its new kind (buffermgrd keeps the kind
            // the profile had when the PG was configured).
            let users: Vec<(String, IdRange)> = self
                .profiles
                .get(name)
                .map(|p| p.port_pgs.iter().cloned().collect())
                .unwrap_or_default();
            let mut ports = BTreeSet::new();
            for (port, ids) in users {
                if let Some(pg) = self.pgs.get_mut(&port).and_then(|m| m.get_mut(&ids)) {
                    if pg.configured.as_deref() == Some(name) {
                        pg.dynamic_calculated = dynamic;
                        pg.lossless = lossless;
                        ports.insert(port);
                    }
                }
            }
            self.write_profile(name);
            for port in ports {
                self.refresh_pgs_for_port(&port, None);
            }
            self.check_shared_buffer_pool_size(false);
            return Status::Success;
        }
        if lossless {
            if dynamic {
                self.update_profile_for_dynamic_th(name);
            } else if let Err(e) = self.update_profile_for_size(name, true) {
                return Status::Failed(e);
            }
        } else {
            self.write_profile(name);
        }
        Status::Success
    }

    fn handle_profile_del(&mut self, name: &str) -> Status {
        let Some(p) = self.profiles.get(name) else {
            self.log(
                LogLevel::Warning,
                format!("BUFFER_PROFILE|{name}: removed but it was not known"),
            );
            return Status::Success;
        };
        if let Some((port, ids)) = p.port_pgs.iter().next() {
            if p.static_configured {
                return Status::Retry(format!(
                    "profile {name} is still referenced by PG {port}|{ids}"
                ));
            }
            return Status::Failed(EntryError::RemoveGenerated {
                profile: name.to_string(),
            });
        }
        let in_queue = self.queues.iter().find_map(|(port, m)| {
            m.iter()
                .find(|(_, q)| *q == name)
                .map(|(ids, _)| format!("queue {port}|{ids}"))
        });
        let in_list = self.lists.iter().find_map(|l| {
            l.iter()
                .find(|(_, list)| list.split(',').any(|x| x == name))
                .map(|(port, _)| format!("the profile list of {port}"))
        });
        if let Some(user) = in_queue.or(in_list) {
            return Status::Retry(format!("profile {name} is still referenced by {user}"));
        }
        if !(p.static_configured && p.dynamic_calculated) {
            self.appl_del(appl_names::BUFFER_PROFILE_TABLE, name);
            self.state_remove(appl_names::BUFFER_PROFILE_TABLE, name);
        }
        self.profiles.remove(name);
        Status::Success
    }

    // ---------------------------------------------------------------------------------------
    // BUFFER_PG / BUFFER_QUEUE (§7.7, §7.8).

    pub(super) fn handle_objects(&mut self, dir: Dir, key: &str, set: Option<&Fields>) -> Status {
        let table = match dir {
            Dir::Pg => "BUFFER_PG",
            Dir::Queue => "BUFFER_QUEUE",
        };
        let keys = match parse_port_ids(table, key, '|') {
            Ok(k) => k,
            Err(e) => return Status::Failed(e.into()),
        };
        let mut result = Status::Success;
        for pk in keys {
            let st = match (dir, set) {
                (Dir::Pg, Some(f)) => self.pg_set(&pk.port, pk.ids, f),
                (Dir::Pg, None) => self.pg_del(&pk.port, pk.ids),
                (Dir::Queue, Some(f)) => self.queue_set(&pk.port, pk.ids, f),
                (Dir::Queue, None) => self.queue_del(&pk.port, pk.ids),
            };
            match st {
                Status::Retry(_) => return st,
                Status::Failed(_) if matches!(result, Status::Success) => result = st,
                _ => {}
            }
        }
        result
    }

    fn overlap(&self, dir: Dir, port: &str, ids: IdRange) -> Option<IdRange> {
        match dir {
            Dir::Pg => self
                .pgs
                .get(port)
                .and_then(|m| m.keys().find(|k| **k != ids && k.overlaps(ids)).copied()),
            Dir::Queue => self
                .queues
                .get(port)
                .and_then(|m| m.keys().find(|k| **k != ids && k.overlaps(ids)).copied()),
        }
    }

    fn pg_set(&mut self, port: &str, ids: IdRange, fields: &Fields) -> Status {
        if let Some(other) = self.overlap(Dir::Pg, port, ids) {
            return Status::Retry(format!(
                "PG range {ids} overlaps the configured range {other} of {port} (lossless PG ranges must be disjoint)"
            ));
        }
        let named = fields
            .get("profile")
            .map(|p| reference_name(p))
            .filter(|p| *p != "NULL" && !p.is_empty())
            .map(str::to_string);
        let (dynamic, lossless) = match &named {
            None => (true, true),
            Some(p) => {
                let Some(prof) = self.profiles.get(p) else {
                    return Status::Retry(format!("profile {p:?} is not configured yet"));
                };
                if prof.direction == Direction::Egress {
                    return Status::Failed(EntryError::WrongDirection {
                        table: "BUFFER_PG".into(),
                        key: format!("{port}|{ids}"),
                        profile: p.clone(),
                        actual: "egress",
                        expected: "ingress",
                    });
                }
                (prof.dynamic_calculated, prof.lossless)
            }
        };
        let pg = self
            .pgs
            .entry(port.to_string())
            .or_default()
            .entry(ids)
            .or_default();
        let old_configured = pg.configured.take();
        pg.configured = named.clone();
        pg.dynamic_calculated = dynamic;
        pg.static_configured = named.is_some();
        pg.lossless = lossless;
        if let Some(old) = old_configured {
            if let Some(p) = self.profiles.get_mut(&old) {
                p.port_pgs.remove(&(port.to_string(), ids));
            }
        }
        let (known, state) = self
            .ports
            .get(port)
            .map_or((false, PortState::AdminDown), |p| (p.known, p.state));
        if !known {
            // Recorded; applied when the port's PORT entry arrives.
        } else if state == PortState::AdminDown {
            self.set_on_admin_down(Dir::Pg, port, ids, named.as_deref());
        } else if lossless {
            self.update_pg(port, ids);
        } else {
            // Lossy: written as configured. The previous running profile (maybe a dynamic
            // one) is released.
            let old_running = self
                .pgs
                .get_mut(port)
                .and_then(|m| m.get_mut(&ids))
                .and_then(|pg| std::mem::replace(&mut pg.running, named.clone()));
            if let Some(p) = &named {
                self.write_object(Dir::Pg, port, ids, p);
            }
            if let Some(old) = old_running.filter(|o| Some(o) != named.as_ref()) {
                if let Some(p) = self.profiles.get_mut(&old) {
                    p.port_pgs.remove(&(port.to_string(), ids));
                }
                self.release_profile(&old);
            }
        }
        if let Some(p) = &named {
            if let Some(prof) = self.profiles.get_mut(p) {
                prof.port_pgs.insert((port.to_string(), ids));
            }
        }
        Status::Success
    }

    /// `doUpdatePgTask`: apply one lossless PG of an admin-up port.
    fn update_pg(&mut self, port: &str, ids: IdRange) {
        let state = self.ports.get(port).map(|p| p.state);
        let dynamic = self
            .pgs
            .get(port)
            .and_then(|m| m.get(&ids))
            .is_some_and(|pg| pg.dynamic_calculated);
        match state {
            Some(PortState::Ready) => {
                self.refresh_pgs_for_port(port, Some(ids));
            }
            Some(PortState::Initializing) if !dynamic => {
                self.refresh_pgs_for_port(port, Some(ids));
            }
            Some(PortState::Initializing) => self.log(
                LogLevel::Info,
                format!("BUFFER_PG|{port}|{ids}: port not ready (speed or cable length unknown), dynamic headroom deferred"),
            ),
            _ => {}
        }
    }

    fn pg_del(&mut self, port: &str, ids: IdRange) -> Status {
        if !self.zero.support_removing {
            return Status::Failed(EntryError::RemovalUnsupported {
                table: "BUFFER_PG".into(),
                key: format!("{port}|{ids}"),
            });
        }
        let Some(pg) = self.pgs.get_mut(port).and_then(|m| m.remove(&ids)) else {
            return Status::Success;
        };
        if self.pgs.get(port).is_some_and(|m| m.is_empty()) {
            self.pgs.remove(port);
        }
        let key = (port.to_string(), ids);
        for p in [&pg.running, &pg.configured].into_iter().flatten() {
            if let Some(prof) = self.profiles.get_mut(p) {
                prof.port_pgs.remove(&key);
            }
        }
        let (known, state) = self
            .ports
            .get(port)
            .map_or((false, PortState::AdminDown), |p| (p.known, p.state));
        let appl_key = format!("{port}:{ids}");
        if !known {
        } else if state == PortState::AdminDown {
            self.del_on_admin_down(Dir::Pg, port, ids);
        } else if pg.lossless {
            self.appl_del(appl_names::BUFFER_PG_TABLE, &appl_key);
            self.check_shared_buffer_pool_size(false);
            if let Some(r) = &pg.running {
                self.release_profile(r);
            }
        } else {
            self.appl_del(appl_names::BUFFER_PG_TABLE, &appl_key);
        }
        Status::Success
    }

    fn check_direction(
        &self,
        table: &str,
        key: &str,
        profiles: &[String],
        want: Direction,
    ) -> Status {
        for p in profiles {
            let Some(prof) = self.profiles.get(p) else {
                return Status::Retry(format!("profile {p:?} is not configured yet"));
            };
            if prof.direction != want {
                return Status::Failed(EntryError::WrongDirection {
                    table: table.into(),
                    key: key.into(),
                    profile: p.clone(),
                    actual: prof.direction.as_str(),
                    expected: want.as_str(),
                });
            }
        }
        Status::Success
    }

    fn queue_set(&mut self, port: &str, ids: IdRange, fields: &Fields) -> Status {
        if let Some(other) = self.overlap(Dir::Queue, port, ids) {
            return Status::Retry(format!(
                "queue range {ids} overlaps the configured range {other} of {port} (queue ranges must be disjoint)"
            ));
        }
        let profile = fields
            .get("profile")
            .map(|p| reference_name(p).to_string())
            .unwrap_or_default();
        let st = self.check_direction(
            "BUFFER_QUEUE",
            &format!("{port}|{ids}"),
            std::slice::from_ref(&profile),
            Direction::Egress,
        );
        if !matches!(st, Status::Success) {
            return st;
        }
        self.queues
            .entry(port.to_string())
            .or_default()
            .insert(ids, profile.clone());
        let (known, state) = self
            .ports
            .get(port)
            .map_or((false, PortState::AdminDown), |p| (p.known, p.state));
        if !known {
        } else if state == PortState::AdminDown {
            self.set_on_admin_down(Dir::Queue, port, ids, Some(&profile));
        } else {
            self.write_object(Dir::Queue, port, ids, &profile);
        }
        Status::Success
    }

    fn queue_del(&mut self, port: &str, ids: IdRange) -> Status {
        if !self.zero.support_removing {
            return Status::Failed(EntryError::RemovalUnsupported {
                table: "BUFFER_QUEUE".into(),
                key: format!("{port}|{ids}"),
            });
        }
        if let Some(m) = self.queues.get_mut(port) {
            m.remove(&ids);
            if m.is_empty() {
                self.queues.remove(port);
            }
        }
        let (known, state) = self
            .ports
            .get(port)
            .map_or((false, PortState::AdminDown), |p| (p.known, p.state));
        if !known {
        } else if state == PortState::AdminDown {
            self.del_on_admin_down(Dir::Queue, port, ids);
        } else {
            self.appl_del(appl_names::BUFFER_QUEUE_TABLE, &format!("{port}:{ids}"));
        }
        Status::Success
    }

    // ---------------------------------------------------------------------------------------
    // BUFFER_PORT_{INGRESS,EGRESS}_PROFILE_LIST (§7.7).

    pub(super) fn handle_profile_list(
        &mut self,
        dir: Dir,
        key: &str,
        set: Option<&Fields>,
    ) -> Status {
        let table = match dir {
            Dir::Pg => "BUFFER_PORT_INGRESS_PROFILE_LIST",
            Dir::Queue => "BUFFER_PORT_EGRESS_PROFILE_LIST",
        };
        let ports: Vec<String> = key.split(',').map(|p| p.trim().to_string()).collect();
        let Some(fields) = set else {
            for port in ports {
                self.lists[dir.idx()].remove(&port);
                self.appl_del(dir.list_table(), &port);
            }
            return Status::Success;
        };
        let names: Vec<String> = fields
            .get("profile_list")
            .map(|v| crate::tables::config::split_list(v))
            .unwrap_or_default();
        let st = self.check_direction(table, key, &names, dir.direction());
        if !matches!(st, Status::Success) {
            return st;
        }
        let list = names.join(",");
        for port in ports {
            self.lists[dir.idx()].insert(port.clone(), list.clone());
            let up = self
                .ports
                .get(&port)
                .is_some_and(|p| p.known && p.state != PortState::AdminDown);
            if up {
                self.write_list(dir, &port, &list);
            }
        }
        Status::Success
    }
}
