//! The flows the handlers share for profiles (sonic-buffer.md §7.4–§7.6): writes gated on
//! the pools being ready, refreshing a port's PGs, allocating and releasing dynamic
//! profiles, and the headroom check. Pool sizes, the shared headroom pool and the periodic
//! handling of pending objects are in `pools`; admin-down ports in `admin_down`.
//!
//! Invariants:
//! - nothing but deletions reaches APPL_DB before the pools are ready (writes attempted
//!   earlier set `objects_pending` and are redone by [`BufferManager::handle_pending_buffer_objects`]);
//! - a generated profile is deleted from APPL_DB and STATE_DB as soon as no PG references it;
//!   configured profiles are never released.

use std::collections::BTreeSet;

use super::records::{Dir, GenInputs, PortState, ProfileInfo};
use super::{BufferManager, EntryError, LogLevel};
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

    pub(super) fn write_pool(&mut self, name: &str) {
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

    pub(super) fn compute_headroom(&self, name: &str, gen: &GenInputs) -> Result<Headroom, String> {
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
}
