//! The flows the handlers share (sonic-buffer.md §7.2, §7.4–§7.6, §7.8, §7.9): refreshing a
//! port's PGs, allocating and releasing dynamic profiles, the headroom check, pool sizes,
//! the shared-headroom-pool toggle, zero profiles on admin-down ports, and the periodic
//! handling of pending objects.
//!
//! Invariants:
//! - nothing but deletions reaches APPL_DB before the pools are ready (writes attempted
//!   earlier set `objects_pending` and are redone by [`BufferManager::handle_pending_buffer_objects`]);
//! - a generated profile is deleted from APPL_DB and STATE_DB as soon as no PG references it;
//!   configured profiles are never released.

use std::collections::{BTreeMap, BTreeSet};

use super::records::{
    full_bitmap, id_list_from_map, ids_bitmap, is_continuous, Dir, GenInputs, PortState,
    ProfileInfo,
};
use super::tables::numeric_non_zero;
use super::{BufferManager, EntryError, LogLevel, Resume, WaitFor};
use crate::check::{check_headroom, CheckRequest};
use crate::model::{Headroom, HeadroomArgs, HeadroomEnv, HeadroomModel};
use crate::naming::{dynamic_profile_name, ProfileNameParts};
use crate::tables::appl::names as appl_names;
use crate::tables::config::INGRESS_LOSSLESS_POOL;
use crate::tables::{CableLength, Direction, Fields, IdRange, Threshold};

impl BufferManager {
    // ---------------------------------------------------------------------------------------
    // Gated writes.

    /// Writes a profile to APPL_DB and STATE_DB (deferred while the pools are not ready;
    /// `headroom_type: dynamic` profiles are never written).
    pub(super) fn write_profile(&mut self, name: &str) {
        if !self.pool_ready {
            self.objects_pending = true;
            return;
        }
        let Some(p) = self.profiles.get(name) else {
            return;
        };
        if p.static_configured && p.dynamic_calculated {
            return;
        }
        let mut f = Fields::new();
        if p.lossless {
            for (n, v) in [
                ("xon", p.xon),
                ("xon_offset", p.xon_offset),
                ("xoff", p.xoff),
            ] {
                if let Some(v) = v {
                    f.insert(n.into(), v.to_string());
                }
            }
        }
        if let Some(s) = p.size {
            f.insert("size".into(), s.to_string());
        }
        if let Some(a) = &p.packet_discard_action {
            f.insert("packet_discard_action".into(), a.clone());
        }
        f.insert("pool".into(), p.pool.clone());
        if let Some(th) = p.threshold {
            let field = match (&p.gen, self.pools.get(INGRESS_LOSSLESS_POOL)) {
                // Generated profiles take the threshold kind of the ingress lossless pool.
                (Some(_), Some(pool)) => format!("{}_th", pool.mode),
                _ => th.field().to_string(),
            };
            f.insert(field, th.value());
        }
        self.appl_set(appl_names::BUFFER_PROFILE_TABLE, name, f.clone());
        self.state_write(appl_names::BUFFER_PROFILE_TABLE, name, f);
    }

    /// Writes `BUFFER_PG_TABLE` / `BUFFER_QUEUE_TABLE:<port>:<ids>` (deferred while the pools
    /// are not ready).
    pub(super) fn write_object(&mut self, dir: Dir, port: &str, ids: IdRange, profile: &str) {
        if !self.pool_ready {
            self.objects_pending = true;
            return;
        }
        let mut f = Fields::new();
        f.insert("profile".into(), profile.to_string());
        self.appl_set(dir.object_table(), &format!("{port}:{ids}"), f);
    }

    /// Writes a port's profile list (deferred while the pools are not ready).
    pub(super) fn write_list(&mut self, dir: Dir, port: &str, list: &str) {
        if !self.pool_ready {
            self.objects_pending = true;
            return;
        }
        let mut f = Fields::new();
        f.insert("profile_list".into(), list.to_string());
        self.appl_set(dir.list_table(), port, f);
    }

    fn write_pool(&mut self, name: &str) {
        let Some(p) = self.pools.get(name) else {
            return;
        };
        let mut f = Fields::new();
        f.insert("type".into(), p.type_word.into());
        if let Some(x) = &p.xoff {
            f.insert("xoff".into(), x.clone());
        }
        f.insert("mode".into(), p.mode.into());
        if let Some(s) = p.total_size {
            f.insert("size".into(), s.to_string());
        }
        self.appl_set(appl_names::BUFFER_POOL_TABLE, name, f.clone());
        self.state_write(appl_names::BUFFER_POOL_TABLE, name, f);
    }

    // ---------------------------------------------------------------------------------------
    // Dynamic profiles (§7.4–§7.6).

    fn compute_headroom(&self, name: &str, gen: &GenInputs) -> Result<Headroom, String> {
        let gearbox = crate::lua::format_number(self.state.gearbox_delay_ns());
        let lanes = gen.lane_count.to_string();
        if let Some(plugin) = &self.plugin {
            return plugin.headroom(name, [&gen.speed, &gen.cable, &gen.mtu, &gearbox, &lanes]);
        }
        let env = HeadroomEnv::from_tables(&self.cfg, &self.state).map_err(|e| e.to_string())?;
        let args =
            HeadroomArgs::from_plugin_argv([&gen.speed, &gen.cable, &gen.mtu, &gearbox, &lanes])
                .map_err(|e| e.to_string())?;
        self.model.headroom(&args, &env).map_err(|e| e.to_string())
    }

    /// `allocateProfile`: reuses the profile `name` if it exists, otherwise computes and
    /// writes it. `Err` is the reason it cannot be computed yet.
    fn allocate_profile(&mut self, name: &str, gen: GenInputs, th: i8) -> Result<(), String> {
        if self.profiles.contains_key(name) {
            return Ok(());
        }
        if !self.pools.contains_key(INGRESS_LOSSLESS_POOL) {
            return Err(format!("{INGRESS_LOSSLESS_POOL} is not configured yet"));
        }
        let h = self
            .compute_headroom(name, &gen)
            .map_err(|e| format!("headroom of {name} cannot be computed: {e}"))?;
        self.profiles.insert(
            name.to_string(),
            ProfileInfo {
                pool: INGRESS_LOSSLESS_POOL.to_string(),
                direction: Direction::Ingress,
                lossless: true,
                dynamic_calculated: false,
                static_configured: false,
                xon: Some(h.xon),
                xon_offset: None,
                xoff: Some(h.xoff),
                size: Some(h.size),
                threshold: Some(Threshold::Dynamic(th)),
                packet_discard_action: None,
                gen: Some(gen),
                port_pgs: BTreeSet::new(),
            },
        );
        self.log(
            LogLevel::Notice,
            format!(
                "BUFFER_PROFILE {name} created: xon {} xoff {} size {}",
                h.xon, h.xoff, h.size
            ),
        );
        self.write_profile(name);
        Ok(())
    }

    /// `releaseProfile`: removes a generated profile no PG references.
    pub(super) fn release_profile(&mut self, name: &str) {
        let Some(p) = self.profiles.get(name) else {
            return;
        };
        if p.static_configured || !p.port_pgs.is_empty() {
            return;
        }
        self.profiles.remove(name);
        self.appl_del(appl_names::BUFFER_PROFILE_TABLE, name);
        self.state_remove(appl_names::BUFFER_PROFILE_TABLE, name);
        self.log(
            LogLevel::Notice,
            format!("BUFFER_PROFILE {name} released (no longer referenced)"),
        );
    }

    /// The maximum-headroom check (§6) of `profile` on `port`, `new_pg` being configured with
    /// it. Skipped for lossy profiles and during a warm reboot's initialisation.
    fn headroom_valid(
        &mut self,
        port: &str,
        profile: &str,
        new_pg: Option<IdRange>,
    ) -> Result<(), EntryError> {
        let Some(p) = self.profiles.get(profile) else {
            return Ok(());
        };
        if !p.lossless || (self.warm && !self.completely_initialized) {
            return Ok(());
        }
        let Some(size) = p.size else {
            self.log(
                LogLevel::Warning,
                format!("headroom check of {port} skipped: profile {profile} has no size"),
            );
            return Ok(());
        };
        let req = CheckRequest {
            port: port.to_string(),
            profile: profile.to_string(),
            size,
            xon: p.xon,
            xoff: p.xoff,
            new_pg,
        };
        let Some(appl) = self.appl_view() else {
            return Ok(());
        };
        match check_headroom(&req, &self.cfg, &self.state, &appl) {
            Ok(o) if o.passed => Ok(()),
            Ok(o) => {
                let mut detail = format!(
                    "accumulated {} bytes, maximum {} bytes",
                    crate::lua::format_number(o.accumulated),
                    o.max_headroom_size.unwrap_or(0)
                );
                if let Some(l) = o.shp_limit {
                    detail.push_str(&format!(
                        ", shared headroom {} of {} bytes",
                        crate::lua::format_number(o.port_shp),
                        crate::lua::format_number(l)
                    ));
                }
                Err(EntryError::HeadroomExceeded {
                    port: port.to_string(),
                    profile: profile.to_string(),
                    pg: new_pg.map_or_else(|| "*".to_string(), |r| r.to_string()),
                    detail,
                })
            }
            Err(e) => {
                self.log(
                    LogLevel::Warning,
                    format!(
                        "headroom check of {port} could not be evaluated ({e}); treated as passed"
                    ),
                );
                Ok(())
            }
        }
    }

    /// `refreshPgsForPort` (§7.4): (re)applies every PG of `port`, or only `only`. Returns
    /// `false` when the headroom check refused a PG (logged; the PGs processed before it stay
    /// updated).
    pub(super) fn refresh_pgs_for_port(&mut self, port: &str, only: Option<IdRange>) -> bool {
        let Some(info) = self.ports.get(port).cloned() else {
            return true;
        };
        if !info.known || info.state == PortState::AdminDown {
            return true;
        }
        let Some(default_th) = self.default_threshold.filter(|_| self.pool_ready) else {
            self.objects_pending = true;
            return true;
        };
        let ids_list: Vec<IdRange> = self
            .pgs
            .get(port)
            .map(|m| {
                m.keys()
                    .copied()
                    .filter(|k| only.is_none_or(|o| o == *k))
                    .collect()
            })
            .unwrap_or_default();
        let mut updated = false;
        let mut to_release = BTreeSet::new();
        let mut ok = true;
        for ids in ids_list {
            let Some(pg) = self.pgs.get(port).and_then(|m| m.get(&ids)).cloned() else {
                continue;
            };
            let key = (port.to_string(), ids);
            let old = pg.running.clone();
            let new = if pg.dynamic_calculated {
                if info.state != PortState::Ready {
                    continue;
                }
                let (Some(speed), Some(cable)) = (&info.effective_speed, &info.cable) else {
                    continue;
                };
                if CableLength::parse(cable).is_ok_and(|c| c.is_zero()) {
                    // Cable 0m: no lossless traffic on this port.
                    self.appl_del(appl_names::BUFFER_PG_TABLE, &format!("{port}:{ids}"));
                    if let Some(o) = old {
                        if let Some(p) = self.profiles.get_mut(&o) {
                            p.port_pgs.remove(&key);
                        }
                        to_release.insert(o);
                    }
                    if let Some(pg) = self.pgs.get_mut(port).and_then(|m| m.get_mut(&ids)) {
                        pg.running = None;
                    }
                    continue;
                }
                let th = pg
                    .configured
                    .as_ref()
                    .filter(|_| pg.static_configured)
                    .and_then(|c| self.profiles.get(c))
                    .and_then(|p| match p.threshold {
                        Some(Threshold::Dynamic(n)) => Some(n),
                        _ => None,
                    })
                    .unwrap_or(default_th);
                let mtu = info.mtu_or_default();
                let (th_s, def_s) = (th.to_string(), default_th.to_string());
                let name = dynamic_profile_name(&ProfileNameParts {
                    speed,
                    cable,
                    mtu: &mtu,
                    threshold: &th_s,
                    default_threshold: &def_s,
                    gearbox_model: "",
                    mellanox: self.mellanox_naming,
                    lane_count: info.lane_count,
                    model: self.model_number,
                });
                let gen = GenInputs {
                    speed: speed.clone(),
                    cable: cable.clone(),
                    mtu,
                    lane_count: info.lane_count,
                };
                if let Err(reason) = self.allocate_profile(&name, gen, th) {
                    if self.refresh_pending.insert(port.to_string()) {
                        self.log(
                            LogLevel::Warning,
                            format!("port {port}: PGs not refreshed, will retry: {reason}"),
                        );
                    }
                    break;
                }
                name
            } else {
                match &pg.configured {
                    Some(c) => c.clone(),
                    None => continue,
                }
            };
            if let Err(e) = self.headroom_valid(port, &new, Some(ids)) {
                self.log(LogLevel::Error, e.to_string());
                self.release_profile(&new);
                ok = false;
                break;
            }
            if Some(&new) != old.as_ref() {
                if let Some(p) = self.profiles.get_mut(&new) {
                    p.port_pgs.insert(key.clone());
                }
                if let Some(o) = old {
                    if let Some(p) = self.profiles.get_mut(&o) {
                        p.port_pgs.remove(&key);
                    }
                    to_release.insert(o);
                }
                if let Some(pg) = self.pgs.get_mut(port).and_then(|m| m.get_mut(&ids)) {
                    pg.running = Some(new.clone());
                }
            }
            self.write_object(Dir::Pg, port, ids, &new);
            updated = true;
        }
        if updated {
            self.check_shared_buffer_pool_size(false);
        }
        for p in to_release {
            self.release_profile(&p);
        }
        ok
    }

    /// `doUpdateBufferProfileForDynamicTh`: a `headroom_type: dynamic` profile changed; the
    /// ready ports using it get new (`_th…`) profiles.
    pub(super) fn update_profile_for_dynamic_th(&mut self, name: &str) {
        let ports: BTreeSet<String> = self
            .profiles
            .get(name)
            .map(|p| p.port_pgs.iter().map(|(port, _)| port.clone()).collect())
            .unwrap_or_default();
        for port in ports {
            if self.ports.get(&port).map(|p| p.state) != Some(PortState::Ready) {
                continue;
            }
            if !self.refresh_pgs_for_port(&port, None) {
                break;
            }
        }
        self.check_shared_buffer_pool_size(false);
    }

    /// `doUpdateBufferProfileForSize`: checks every port using the lossless profile `name`
    /// with its new values, then writes it.
    pub(super) fn update_profile_for_size(
        &mut self,
        name: &str,
        update_pool: bool,
    ) -> Result<(), EntryError> {
        let Some(p) = self.profiles.get(name) else {
            return Ok(());
        };
        if !p.static_configured || !p.dynamic_calculated {
            let ports: BTreeSet<String> = p.port_pgs.iter().map(|(port, _)| port.clone()).collect();
            for port in ports {
                self.headroom_valid(&port, name, None)?;
            }
            self.write_profile(name);
        }
        if update_pool {
            self.check_shared_buffer_pool_size(false);
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------------
    // Pool sizes (§5.4, §7.2).

    /// `checkSharedBufferPoolSize`.
    pub(super) fn check_shared_buffer_pool_size(&mut self, force: bool) {
        if !self.port_init_done && !force {
            return;
        }
        if !self.port_init_done {
            if self.port_init_done_seen {
                self.port_init_done = true;
                self.log(
                    LogLevel::Notice,
                    "PortInitDone: buffer pool sizes start to be updated".into(),
                );
            } else {
                if !self.pool_ready {
                    self.recalculate_shared_buffer_pool();
                }
                return;
            }
        }
        if self.warm && !self.completely_initialized && self.pool_ready {
            return;
        }
        if self.mmu_size.is_some() {
            self.recalculate_shared_buffer_pool();
        }
    }

    /// `recalculateSharedBufferPool`: runs the pool algorithm and writes the pools whose
    /// size or shared headroom pool changed.
    fn recalculate_shared_buffer_pool(&mut self) {
        if !self.pool_ready {
            if self.pools.is_empty() {
                return;
            }
            if !self.pools.values().any(|p| p.dynamic_size) {
                self.pool_ready = true;
                self.log(
                    LogLevel::Notice,
                    "no pool needs a computed size: buffer pools are ready".into(),
                );
            }
        }
        if let Some(appl) = self.appl_view() {
            match crate::pool::compute(&self.cfg, &self.state, &appl) {
                Err(e) => self.log(
                    LogLevel::Warning,
                    format!("buffer pool sizes not computed: {e}"),
                ),
                Ok(outcome) => {
                    let lines: Vec<(String, crate::pool::PoolSize)> = outcome
                        .pools()
                        .iter()
                        .map(|(n, s)| (n.clone(), *s))
                        .collect();
                    for (name, line) in lines {
                        self.apply_pool_line(&name, line);
                    }
                }
            }
        }
        if !self.pool_ready {
            self.pool_ready = true;
            self.log(LogLevel::Notice, "buffer pools are ready".into());
        }
    }

    fn apply_pool_line(&mut self, name: &str, line: crate::pool::PoolSize) {
        let mmu = self.mmu_size.unwrap_or(0);
        let configured_shp = numeric_non_zero(self.configured_shp.as_deref());
        let Some(pool) = self.pools.get_mut(name) else {
            self.log(
                LogLevel::Warning,
                format!("pool {name} computed by the pool algorithm is not configured"),
            );
            return;
        };
        let mut xoff_updated = false;
        let mut error = None;
        if name == INGRESS_LOSSLESS_POOL && !configured_shp {
            match line.shp {
                Some(x) => {
                    let xs = x.to_string();
                    if pool.xoff.as_deref() != Some(xs.as_str()) {
                        if mmu > 0 && mmu < x {
                            error = Some(format!("buffer pool {name}: shared headroom pool size {x} exceeds the MMU size {mmu}; ignored"));
                        } else {
                            pool.xoff = Some(xs);
                            xoff_updated = true;
                        }
                    }
                }
                None => {
                    if pool
                        .xoff
                        .as_deref()
                        .is_some_and(|x| numeric_non_zero(Some(x)))
                    {
                        xoff_updated = true;
                    }
                    pool.xoff = Some("0".into());
                }
            }
        }
        if let Some(e) = error {
            self.log(LogLevel::Error, e);
        }
        let Some(pool) = self.pools.get_mut(name) else {
            return;
        };
        if (pool.total_size == Some(line.size) || !pool.dynamic_size) && !xoff_updated {
            return;
        }
        if mmu > 0 && mmu < line.size {
            let msg = format!(
                "buffer pool {name}: size {} exceeds the MMU size {mmu}; not written",
                line.size
            );
            self.log(LogLevel::Error, msg);
            return;
        }
        pool.total_size = Some(line.size);
        self.write_pool(name);
    }

    // ---------------------------------------------------------------------------------------
    // Shared headroom pool (§7.9).

    /// `refreshSharedHeadroomPool`: the enabled state changed by the ratio and/or by the
    /// configured size.
    pub(super) fn refresh_shared_headroom_pool(&mut self, by_ratio: bool, by_size: bool) {
        let size_on = numeric_non_zero(self.configured_shp.as_deref());
        let ratio_on = numeric_non_zero(self.ratio.as_deref());
        let need = (by_ratio && !size_on) || (by_size && !ratio_on);
        if !need {
            self.shp_finish(by_ratio);
            return;
        }
        if (size_on || ratio_on) && self.port_init_done && self.wait_for_orchagent {
            // Disabled → enabled: the pool's xoff first, confirmed by orchagent.
            self.push_shp_for_enable(size_on);
            self.start_block(WaitFor::PoolXoff, Resume::ShpProfiles { by_ratio, by_size });
            return;
        }
        self.shp_refresh_profiles(by_ratio, by_size);
    }

    fn push_shp_for_enable(&mut self, size_on: bool) {
        let Some(appl) = self.appl_view() else {
            return;
        };
        let line = match crate::pool::compute(&self.cfg, &self.state, &appl) {
            Ok(o) => o.pools().get(INGRESS_LOSSLESS_POOL).copied(),
            Err(e) => {
                self.log(
                    LogLevel::Warning,
                    format!("shared headroom pool size not computed: {e}"),
                );
                None
            }
        };
        let static_size = self
            .cfg
            .pools
            .get(INGRESS_LOSSLESS_POOL)
            .and_then(|p| p.size);
        let configured = self.configured_shp.clone();
        let Some(pool) = self.pools.get_mut(INGRESS_LOSSLESS_POOL) else {
            return;
        };
        let xoff = if size_on {
            configured
        } else {
            line.and_then(|l| l.shp).map(|x| x.to_string())
        };
        if let Some(x) = xoff {
            pool.xoff = Some(x);
        }
        if pool.dynamic_size {
            if let Some(l) = line {
                pool.total_size = Some(l.size);
            }
        } else if pool.total_size.is_none() {
            pool.total_size = static_size;
        }
        if pool.total_size.is_some() {
            self.write_pool(INGRESS_LOSSLESS_POOL);
        }
    }

    /// Recomputes every generated profile (size = xon with the shared headroom pool, else
    /// xon + xoff), checks and rewrites it.
    pub(super) fn shp_refresh_profiles(&mut self, by_ratio: bool, by_size: bool) {
        self.log(
            LogLevel::Notice,
            "shared headroom pool toggled: updating the dynamic buffer profiles".into(),
        );
        let names: Vec<String> = self
            .profiles
            .iter()
            .filter(|(_, p)| !p.static_configured)
            .map(|(n, _)| n.clone())
            .collect();
        let mut rewritten = BTreeMap::new();
        for name in names {
            let Some(gen) = self.profiles.get(&name).and_then(|p| p.gen.clone()) else {
                continue;
            };
            match self.compute_headroom(&name, &gen) {
                Ok(h) => {
                    if let Some(p) = self.profiles.get_mut(&name) {
                        p.xon = Some(h.xon);
                        p.xoff = Some(h.xoff);
                        p.size = Some(h.size);
                    }
                    match self.update_profile_for_size(&name, false) {
                        Ok(()) => {
                            if self.pool_ready {
                                let mut f = Fields::new();
                                f.insert("xon".into(), h.xon.to_string());
                                f.insert("xoff".into(), h.xoff.to_string());
                                f.insert("size".into(), h.size.to_string());
                                rewritten.insert(name, f);
                            }
                        }
                        Err(e) => self.log(
                            LogLevel::Error,
                            format!("{e}; profile {name} not updated for the shared headroom pool toggle, adjust the configuration"),
                        ),
                    }
                }
                Err(e) => self.log(
                    LogLevel::Error,
                    format!(
                        "profile {name} not recomputed for the shared headroom pool toggle: {e}"
                    ),
                ),
            }
        }
        if by_size && self.port_init_done && self.wait_for_orchagent && !rewritten.is_empty() {
            self.start_block(WaitFor::Profiles(rewritten), Resume::ShpFinish { by_ratio });
            return;
        }
        self.shp_finish(by_ratio);
    }

    /// The pool's xoff after a toggle, then the pool sizes.
    pub(super) fn shp_finish(&mut self, by_ratio: bool) {
        let size_on = numeric_non_zero(self.configured_shp.as_deref());
        let ratio_on = numeric_non_zero(self.ratio.as_deref());
        let configured = self.configured_shp.clone();
        let mut write = false;
        if let Some(pool) = self.pools.get_mut(INGRESS_LOSSLESS_POOL) {
            let has_size = pool.total_size.is_some_and(|s| s != 0);
            if size_on {
                pool.xoff = configured;
                write = has_size;
            } else if !ratio_on && by_ratio {
                pool.xoff = Some("0".into());
                write = has_size;
            }
        }
        if write {
            self.write_pool(INGRESS_LOSSLESS_POOL);
        }
        if self.port_init_done {
            self.check_shared_buffer_pool_size(false);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Admin-down ports and zero profiles (§7.8).

    pub(super) fn ready_to_reclaim(&self, port: &str) -> bool {
        let Some(info) = self.ports.get(port) else {
            return false;
        };
        Dir::BOTH
            .iter()
            .all(|d| self.zero.ids_to_zero[d.idx()].is_some() || info.max_objects[d.idx()] != 0)
    }

    fn load_zero_profiles(&mut self) {
        let Some(z) = self.zero_file.clone() else {
            return;
        };
        for (name, fields) in &z.pools {
            self.appl_set(appl_names::BUFFER_POOL_TABLE, name, fields.clone());
            self.state_write(appl_names::BUFFER_POOL_TABLE, name, fields.clone());
            self.zero.pools.insert(name.clone());
        }
        for (name, fields) in &z.profiles {
            let pool = fields.get("pool").cloned().unwrap_or_default();
            if let Some(p) = self.pools.get_mut(&pool) {
                if p.zero_profile.is_none() {
                    p.zero_profile = Some(name.clone());
                    let d = if p.direction == Direction::Egress {
                        Dir::Queue
                    } else {
                        Dir::Pg
                    };
                    if self.zero.zero_profile_name[d.idx()].is_none() {
                        self.zero.zero_profile_name[d.idx()] = Some(name.clone());
                    }
                } else {
                    let other = p.zero_profile.clone().unwrap_or_default();
                    self.log(
                        LogLevel::Error,
                        format!("zero profiles {other} and {name} for pool {pool}: the latter is ignored"),
                    );
                }
            } else if !self.zero.pools.contains(&pool) {
                self.log(
                    LogLevel::Warning,
                    format!("zero profile {name} not loaded: its pool {pool} is not configured"),
                );
                continue;
            }
            self.zero.profiles.push((name.clone(), pool));
            self.appl_set(appl_names::BUFFER_PROFILE_TABLE, name, fields.clone());
            self.state_write(appl_names::BUFFER_PROFILE_TABLE, name, fields.clone());
        }
        self.zero.ids_to_zero = [z.pgs_to_apply_zero_profile, z.queues_to_apply_zero_profile];
        if let Some(n) = &z.ingress_zero_profile {
            self.zero.zero_profile_name[0] = Some(n.clone());
        }
        if let Some(n) = &z.egress_zero_profile {
            self.zero.zero_profile_name[1] = Some(n.clone());
        }
        self.zero.support_removing = z.support_removing_buffer_items;
        let mut no_reclaiming = false;
        if !self.zero.support_removing {
            let missing: Vec<String> = self
                .pools
                .iter()
                .filter(|(_, p)| p.zero_profile.is_none())
                .map(|(n, _)| n.clone())
                .collect();
            for n in missing {
                self.log(
                    LogLevel::Error,
                    format!("no zero profile for pool {n} while removing buffer items is not supported: reserved buffer cannot be reclaimed"),
                );
                no_reclaiming = true;
            }
            if self.zero.ids_to_zero.iter().any(Option::is_some) {
                self.log(
                    LogLevel::Error,
                    "zero-profile ids given while removing buffer items is not supported: reserved buffer cannot be reclaimed".into(),
                );
                no_reclaiming = true;
            }
        }
        if no_reclaiming {
            self.zero.loaded = true;
            self.unload_zero_profiles();
            self.zero_file = None;
            self.zero.ids_to_zero = [None, None];
        } else {
            self.zero.loaded = true;
            self.log(
                LogLevel::Notice,
                "zero buffer pools and profiles loaded".into(),
            );
        }
    }

    pub(super) fn unload_zero_profiles(&mut self) {
        if !self.zero.loaded {
            return;
        }
        let profiles = std::mem::take(&mut self.zero.profiles);
        for (name, pool) in profiles {
            if let Some(p) = self.pools.get_mut(&pool) {
                p.zero_profile = None;
            }
            self.appl_del(appl_names::BUFFER_PROFILE_TABLE, &name);
            self.state_remove(appl_names::BUFFER_PROFILE_TABLE, &name);
        }
        let pools = std::mem::take(&mut self.zero.pools);
        for name in pools {
            self.appl_del(appl_names::BUFFER_POOL_TABLE, &name);
            self.state_remove(appl_names::BUFFER_POOL_TABLE, &name);
        }
        self.zero.loaded = false;
        self.log(
            LogLevel::Notice,
            "zero buffer pools and profiles unloaded".into(),
        );
    }

    /// The zero profile of the pool of `profile` (the ingress lossless pool's for none).
    fn zero_profile_of(&self, profile: Option<&str>) -> Option<String> {
        let pool = profile
            .and_then(|p| self.profiles.get(p))
            .map_or(INGRESS_LOSSLESS_POOL, |p| p.pool.as_str());
        self.pools.get(pool).and_then(|p| p.zero_profile.clone())
    }

    /// `reclaimReservedBufferForPort` for one direction.
    pub(super) fn reclaim(&mut self, port: &str, dir: Dir) {
        if self.zero_file.is_some() && !self.zero.loaded {
            self.load_zero_profiles();
        }
        let specified = self.zero.ids_to_zero[dir.idx()];
        let max = self.ports.get(port).map_or(0, |p| p.max_objects[dir.idx()]);
        let mut map = full_bitmap(max);
        let items: Vec<(IdRange, Option<String>)> = match dir {
            Dir::Pg => self
                .pgs
                .get(port)
                .map(|m| m.iter().map(|(k, pg)| (*k, pg.running.clone())).collect())
                .unwrap_or_default(),
            Dir::Queue => self
                .queues
                .get(port)
                .map(|m| m.iter().map(|(k, p)| (*k, Some(p.clone()))).collect())
                .unwrap_or_default(),
        };
        let mut to_release = BTreeSet::new();
        for (ids, running) in items {
            let key = format!("{port}:{ids}");
            if specified.is_none() {
                match self.zero_profile_of(running.as_deref()) {
                    Some(z) => self.write_object(dir, port, ids, &z),
                    None => self.appl_del(dir.object_table(), &key),
                }
                map &= !ids_bitmap(ids);
            } else {
                self.appl_del(dir.object_table(), &key);
            }
            if dir == Dir::Pg {
                if let Some(r) = running {
                    if let Some(p) = self.profiles.get_mut(&r) {
                        p.port_pgs.remove(&(port.to_string(), ids));
                    }
                    to_release.insert(r);
                    if let Some(pg) = self.pgs.get_mut(port).and_then(|m| m.get_mut(&ids)) {
                        pg.running = None;
                    }
                }
            }
        }
        // PGs keep the reference to their configured profile.
        if dir == Dir::Pg {
            let configured: Vec<(IdRange, String)> = self
                .pgs
                .get(port)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, pg)| pg.configured.clone().map(|c| (*k, c)))
                        .collect()
                })
                .unwrap_or_default();
            for (ids, c) in configured {
                if let Some(p) = self.profiles.get_mut(&c) {
                    p.port_pgs.insert((port.to_string(), ids));
                }
            }
        }
        if let Some(ids) = specified {
            if let Some(z) = self.zero.zero_profile_name[dir.idx()].clone() {
                self.write_object(dir, port, ids, &z);
            }
        } else if let Some(z) = self.zero.zero_profile_name[dir.idx()].clone() {
            let sbnc: BTreeSet<IdRange> = id_list_from_map(map, max).into_iter().collect();
            if let Some(info) = self.ports.get_mut(port) {
                info.sbnc[dir.idx()] = sbnc.clone();
            }
            if self.wait_additional_zero == 0 {
                for ids in sbnc {
                    self.write_object(dir, port, ids, &z);
                }
            } else {
                self.pending_sbnc_ports[dir.idx()].insert(port.to_string());
            }
        }
        for p in to_release {
            self.release_profile(&p);
        }
        if let Some(list) = self.lists[dir.idx()].get(port).cloned() {
            let zero: Vec<String> = list
                .split(',')
                .filter_map(|p| self.zero_profile_of(Some(p)))
                .collect();
            if zero.is_empty() {
                self.appl_del(dir.list_table(), port);
            } else {
                let mut f = Fields::new();
                f.insert("profile_list".into(), zero.join(","));
                self.appl_set(dir.list_table(), port, f);
            }
        }
    }

    /// Removes the zero items written while the port was down (its admin-up path).
    pub(super) fn remove_supported_but_not_configured(&mut self, port: &str) {
        for dir in Dir::BOTH {
            let sbnc = self
                .ports
                .get_mut(port)
                .map(|p| std::mem::take(&mut p.sbnc[dir.idx()]))
                .unwrap_or_default();
            for ids in sbnc {
                self.appl_del(dir.object_table(), &format!("{port}:{ids}"));
            }
            // The vendor's zero item (e.g. PG 0) goes too unless the port configures that
            // range itself (it is rewritten then).
            if let Some(ids) = self.zero.ids_to_zero[dir.idx()] {
                let configured = match dir {
                    Dir::Pg => self.pgs.get(port).is_some_and(|m| m.contains_key(&ids)),
                    Dir::Queue => self.queues.get(port).is_some_and(|m| m.contains_key(&ids)),
                };
                if !configured {
                    self.appl_del(dir.object_table(), &format!("{port}:{ids}"));
                }
            }
        }
    }

    /// Queues and profile lists of a port coming up.
    pub(super) fn apply_normal_objects(&mut self, port: &str) {
        let queues: Vec<(IdRange, String)> = self
            .queues
            .get(port)
            .map(|m| m.iter().map(|(k, p)| (*k, p.clone())).collect())
            .unwrap_or_default();
        for (ids, p) in queues {
            self.write_object(Dir::Queue, port, ids, &p);
        }
        for dir in Dir::BOTH {
            if let Some(list) = self.lists[dir.idx()].get(port).cloned() {
                if !list.is_empty() {
                    self.write_list(dir, port, &list);
                }
            }
        }
    }

    /// `handleSetSingleBufferObjectOnAdminDownPort`.
    pub(super) fn set_on_admin_down(
        &mut self,
        dir: Dir,
        port: &str,
        ids: IdRange,
        profile: Option<&str>,
    ) {
        let specified = self.zero.ids_to_zero[dir.idx()];
        let key = format!("{port}:{ids}");
        if self.port_init_done {
            if specified.is_none() {
                let max = self.ports.get(port).map_or(0, |p| p.max_objects[dir.idx()]);
                let add = ids_bitmap(ids);
                let sbnc: Vec<IdRange> = self
                    .ports
                    .get(port)
                    .map(|p| p.sbnc[dir.idx()].iter().copied().collect())
                    .unwrap_or_default();
                let mut rest = 0u64;
                let mut overlapped = None;
                for s in sbnc {
                    let m = ids_bitmap(s);
                    if add & m == add {
                        self.appl_del(dir.object_table(), &format!("{port}:{s}"));
                        rest = m ^ add;
                        overlapped = Some(s);
                        break;
                    }
                }
                if let Some(s) = overlapped {
                    if let Some(p) = self.ports.get_mut(port) {
                        p.sbnc[dir.idx()].remove(&s);
                    }
                }
                if let Some(z) = self.zero.zero_profile_name[dir.idx()].clone() {
                    for split in id_list_from_map(rest, max) {
                        self.write_object(dir, port, split, &z);
                        if let Some(p) = self.ports.get_mut(port) {
                            p.sbnc[dir.idx()].insert(split);
                        }
                    }
                }
                match self.zero_profile_of(profile) {
                    Some(z) => self.write_object(dir, port, ids, &z),
                    None => self.appl_del(dir.object_table(), &key),
                }
            }
            return;
        }
        match specified {
            Some(s) => {
                if s != ids {
                    self.appl_del(dir.object_table(), &key);
                }
            }
            None => match self.zero_profile_of(profile) {
                Some(z) => self.write_object(dir, port, ids, &z),
                None => self.appl_del(dir.object_table(), &key),
            },
        }
    }

    /// `handleDelSingleBufferObjectOnAdminDownPort`.
    pub(super) fn del_on_admin_down(&mut self, dir: Dir, port: &str, ids: IdRange) {
        if self.zero.ids_to_zero[dir.idx()].is_some() {
            return;
        }
        let max = self.ports.get(port).map_or(0, |p| p.max_objects[dir.idx()]);
        let mut del_map = ids_bitmap(ids);
        let sbnc: Vec<IdRange> = self
            .ports
            .get(port)
            .map(|p| p.sbnc[dir.idx()].iter().copied().collect())
            .unwrap_or_default();
        let mut adjacent = Vec::new();
        for s in sbnc {
            let m = ids_bitmap(s);
            if m & del_map == 0 && is_continuous(m | del_map, max) {
                adjacent.push(s);
                self.appl_del(dir.object_table(), &format!("{port}:{s}"));
                del_map |= m;
            }
        }
        let zero = self.zero.zero_profile_name[dir.idx()].clone();
        if !adjacent.is_empty() {
            self.appl_del(dir.object_table(), &format!("{port}:{ids}"));
            if let Some(p) = self.ports.get_mut(port) {
                for s in &adjacent {
                    p.sbnc[dir.idx()].remove(s);
                }
            }
            if let Some(z) = zero {
                for c in id_list_from_map(del_map, max) {
                    if let Some(p) = self.ports.get_mut(port) {
                        p.sbnc[dir.idx()].insert(c);
                    }
                    self.write_object(dir, port, c, &z);
                }
            }
        } else if zero.is_some() {
            if let Some(p) = self.ports.get_mut(port) {
                p.sbnc[dir.idx()].insert(ids);
            }
        }
    }

    // ---------------------------------------------------------------------------------------
    // Initialisation (§7.2, §7.10).

    /// `handlePendingBufferObjects` (periodic, until completely initialised).
    pub(super) fn handle_pending_buffer_objects(&mut self) {
        if !self.pool_ready || self.default_threshold.is_none() {
            return;
        }
        if !self.pending_zero_ports.is_empty() && self.zero_file.is_some() && !self.zero.loaded {
            self.load_zero_profiles();
        }
        if self.objects_pending {
            let names: Vec<String> = self.profiles.keys().cloned().collect();
            for n in names {
                self.write_profile(&n);
            }
            let ports: Vec<String> = self
                .ports
                .iter()
                .filter(|(_, p)| p.known && p.state != PortState::AdminDown)
                .map(|(n, _)| n.clone())
                .collect();
            for port in ports {
                self.refresh_pgs_for_port(&port, None);
                self.apply_normal_objects(&port);
            }
            self.objects_pending = false;
        }
        if !self.pending_zero_ports.is_empty() {
            let ports: Vec<String> = self.pending_zero_ports.iter().cloned().collect();
            let mut retry = BTreeSet::new();
            for port in ports {
                if self.ready_to_reclaim(&port) {
                    self.reclaim(&port, Dir::Pg);
                    self.reclaim(&port, Dir::Queue);
                    self.log(
                        LogLevel::Notice,
                        format!("admin-down port {port}: buffers reclaimed"),
                    );
                } else {
                    retry.insert(port);
                }
            }
            self.pending_zero_ports = retry;
        }
        let done = !self.objects_pending
            && self.pending_zero_ports.is_empty()
            && self.refresh_pending.is_empty();
        if self.warm {
            if done {
                self.set_warm_state("replayed");
                self.set_warm_state("reconciled");
                self.completely_initialized = true;
                self.log(
                    LogLevel::Notice,
                    "all buffer configuration applied: warm-restart replay done".into(),
                );
            }
        } else if self.wait_additional_zero > 0 {
            if self.port_init_done && done {
                self.wait_additional_zero -= 1;
            }
        } else {
            for dir in Dir::BOTH {
                let ports = std::mem::take(&mut self.pending_sbnc_ports[dir.idx()]);
                let Some(z) = self.zero.zero_profile_name[dir.idx()].clone() else {
                    continue;
                };
                for port in ports {
                    let sbnc: Vec<IdRange> = self
                        .ports
                        .get(&port)
                        .map(|p| p.sbnc[dir.idx()].iter().copied().collect())
                        .unwrap_or_default();
                    for ids in sbnc {
                        self.write_object(dir, &port, ids, &z);
                    }
                }
            }
            if done {
                self.completely_initialized = true;
                self.log(
                    LogLevel::Notice,
                    "all buffer configuration applied: initialisation done".into(),
                );
            }
        }
    }
}
