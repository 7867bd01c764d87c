//! Admin-down ports and zero profiles (sonic-buffer.md §7.8): when a port's buffers can be
//! reclaimed, and the zero profiles that replace its PGs' and queues' profiles while it is
//! down.

use std::collections::BTreeSet;

use super::records::{full_bitmap, id_list_from_map, ids_bitmap, is_continuous, Dir};
use super::{BufferManager, LogLevel};
use crate::tables::appl::names as appl_names;
use crate::tables::config::INGRESS_LOSSLESS_POOL;
use crate::tables::{Direction, Fields, IdRange};

impl BufferManager {
    pub(super) fn ready_to_reclaim(&self, port: &str) -> bool {
        let Some(info) = self.ports.get(port) else {
            return false;
        };
        Dir::BOTH
            .iter()
            .all(|d| self.zero.ids_to_zero[d.idx()].is_some() || info.max_objects[d.idx()] != 0)
    }

    pub(super) fn load_zero_profiles(&mut self) {
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
}
