//! Handlers of the per-port buffer objects: `BUFFER_PG` and `BUFFER_QUEUE` (id ranges split
//! per port, disjoint per port), and the `BUFFER_PORT_{INGRESS,EGRESS}_PROFILE_LIST`s.

use crate::bufmgr::records::{Dir, PortState};
use crate::bufmgr::{BufferManager, EntryError, LogLevel, Status};
use crate::tables::appl::names as appl_names;
use crate::tables::{parse_port_ids, reference_name, Direction, Fields, IdRange};

impl BufferManager {
    // ---------------------------------------------------------------------------------------
    // BUFFER_PG / BUFFER_QUEUE (§7.7, §7.8).

    pub(in crate::bufmgr) fn handle_objects(
        &mut self,
        dir: Dir,
        key: &str,
        set: Option<&Fields>,
    ) -> Status {
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

    pub(in crate::bufmgr) fn handle_profile_list(
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
