//! What buffermgrd writes (APPL_DB through ProducerStateTable, STATE_DB, the log) and the
//! views of CONFIG_DB / STATE_DB that the plugins read.
//!
//! Invariants: every APPL_DB write goes through [`BufferManager::appl_set`] or
//! [`BufferManager::appl_del`], which keep the manager's view of APPL_DB equal to what its
//! outputs applied in order give; the CONFIG_DB / STATE_DB views follow inputs as they
//! arrive.

use super::*;

impl BufferManager {
    pub(super) fn log(&mut self, level: LogLevel, message: String) {
        self.out.push_back(Output::Log { level, message });
    }

    pub(super) fn appl_set(&mut self, table: &str, key: &str, fields: Fields) {
        let entry = self
            .appl
            .entry(table.to_string())
            .or_default()
            .entry(key.to_string())
            .or_default();
        entry.extend(fields.iter().map(|(f, v)| (f.clone(), v.clone())));
        let merged = entry.clone();
        self.update_appl_cache(table, key, Some(merged));
        self.out.push_back(Output::ApplSet {
            table: table.to_string(),
            key: key.to_string(),
            fields,
        });
    }

    /// Deletes `table:key` (no output when the key does not exist).
    pub(super) fn appl_del(&mut self, table: &str, key: &str) {
        let existed = self
            .appl
            .get_mut(table)
            .is_some_and(|t| t.remove(key).is_some());
        if self.appl.get(table).is_some_and(BTreeMap::is_empty) {
            self.appl.remove(table);
        }
        if existed {
            self.update_appl_cache(table, key, None);
            self.out.push_back(Output::ApplDel {
                table: table.to_string(),
                key: key.to_string(),
            });
        }
    }

    /// Keeps the typed APPL_DB view in step with one write of `table:key` (its new merged
    /// fields, or `None` for a delete) instead of re-reading all of APPL_DB at the next
    /// use. Keys naming several ports, and entries that do not parse, drop the view (it is
    /// then rebuilt, and the error logged, by [`BufferManager::appl_view`]); the result is
    /// the view a full re-read gives.
    pub(super) fn update_appl_cache(&mut self, table: &str, key: &str, fields: Option<Fields>) {
        use crate::tables::appl::names as n;
        let Some(cache) = self.appl_cache.as_mut() else {
            return;
        };
        let db = std::sync::Arc::make_mut(cache);
        let removed = match table {
            n::BUFFER_POOL_TABLE => {
                db.pools.remove(key);
                true
            }
            n::BUFFER_PROFILE_TABLE => {
                db.profiles.remove(key);
                true
            }
            n::BUFFER_PG_TABLE | n::BUFFER_QUEUE_TABLE if !key.contains(',') => {
                match crate::tables::parse_port_ids(table, key, ':') {
                    Ok(ids) => {
                        let map = if table == n::BUFFER_PG_TABLE {
                            &mut db.pgs
                        } else {
                            &mut db.queues
                        };
                        for pk in ids {
                            map.remove(&pk);
                        }
                        true
                    }
                    Err(_) => false,
                }
            }
            n::BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE => {
                db.ingress_profile_lists.remove(key);
                true
            }
            n::BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE => {
                db.egress_profile_lists.remove(key);
                true
            }
            _ => false,
        };
        if !removed {
            self.appl_cache = None;
            return;
        }
        let Some(fields) = fields else {
            return;
        };
        let mut one = RawDb::new();
        one.entry(table.to_string())
            .or_default()
            .insert(key.to_string(), fields);
        match ApplDb::from_raw(&one) {
            Ok(new) => {
                db.pools.extend(new.pools);
                db.profiles.extend(new.profiles);
                db.pgs.extend(new.pgs);
                db.queues.extend(new.queues);
                db.ingress_profile_lists.extend(new.ingress_profile_lists);
                db.egress_profile_lists.extend(new.egress_profile_lists);
            }
            Err(_) => self.appl_cache = None,
        }
        // Checked in debug builds: the incremental view equals a full re-read.
        #[cfg(debug_assertions)]
        if let Some(c) = &self.appl_cache {
            assert_eq!(Some(&**c), ApplDb::from_raw(&self.appl).ok().as_ref());
        }
    }

    pub(super) fn state_write(&mut self, table: &str, key: &str, fields: Fields) {
        self.state_out
            .entry(table.to_string())
            .or_default()
            .insert(key.to_string(), fields.clone());
        self.out.push_back(Output::StateSet {
            table: table.to_string(),
            key: key.to_string(),
            fields,
        });
    }

    pub(super) fn state_remove(&mut self, table: &str, key: &str) {
        let existed = self
            .state_out
            .get_mut(table)
            .is_some_and(|t| t.remove(key).is_some());
        if self.state_out.get(table).is_some_and(BTreeMap::is_empty) {
            self.state_out.remove(table);
        }
        if existed {
            self.out.push_back(Output::StateDel {
                table: table.to_string(),
                key: key.to_string(),
            });
        }
    }

    pub(super) fn set_warm_state(&mut self, state: &str) {
        let mut f = Fields::new();
        f.insert("state".into(), state.into());
        self.state_write(WARM_RESTART_TABLE, "buffermgrd", f);
    }

    /// The typed APPL_DB the pool algorithm and the check read (cached between writes).
    pub(super) fn appl_view(&mut self) -> Option<std::sync::Arc<ApplDb>> {
        if self.appl_cache.is_none() {
            match ApplDb::from_raw(&self.appl) {
                Ok(db) => self.appl_cache = Some(std::sync::Arc::new(db)),
                Err(e) => {
                    self.log(
                        LogLevel::Error,
                        format!("APPL_DB cannot be read back for the buffer plugins: {e}"),
                    );
                    return None;
                }
            }
        }
        self.appl_cache.clone()
    }

    // ---------------------------------------------------------------------------------------
    // Views of CONFIG_DB / STATE_DB (what the plugins read).

    /// Updates the CONFIG_DB view; returns whether the item goes to a handler. Malformed
    /// entries are logged and dropped here.
    pub(super) fn mirror_config(
        &mut self,
        table: &str,
        key: &str,
        fields: Option<&Fields>,
    ) -> bool {
        let handled = CONFIG_HANDLED.contains(&table);
        let Some(fields) = fields else {
            self.cfg_remove(table, key);
            return handled;
        };
        if let Err(e) = tables::validate_config(table, key, fields) {
            self.log(LogLevel::Error, format!("{table}|{key}: ignored: {e}"));
            return false;
        }
        self.cfg_insert(table, key, fields);
        handled
    }

    pub(super) fn cfg_insert(&mut self, table: &str, key: &str, fields: &Fields) {
        if table == "CABLE_LENGTH" {
            let m = self.cfg.cable_lengths.entry(key.to_string()).or_default();
            m.clear();
            for (port, v) in fields {
                if let Ok(c) = crate::tables::CableLength::parse(v) {
                    m.insert(port.clone(), c);
                }
            }
            return;
        }
        if !matches!(
            table,
            "PORT"
                | "BUFFER_POOL"
                | "DEFAULT_LOSSLESS_BUFFER_PARAMETER"
                | "LOSSLESS_TRAFFIC_PATTERN"
                | "DEVICE_METADATA"
        ) {
            return;
        }
        let mut raw = RawDb::new();
        raw.entry(table.to_string())
            .or_default()
            .insert(key.to_string(), fields.clone());
        let Ok(one) = ConfigDb::from_raw(&raw) else {
            return;
        };
        self.cfg.ports.extend(one.ports);
        self.cfg.pools.extend(one.pools);
        self.cfg.default_lossless.extend(one.default_lossless);
        self.cfg.traffic_patterns.extend(one.traffic_patterns);
        if table == "DEVICE_METADATA" {
            self.cfg.device_metadata.extend(one.device_metadata);
            self.model_number = self
                .cfg
                .platform()
                .and_then(crate::naming::buffermgrd_model_number);
        }
    }

    pub(super) fn cfg_remove(&mut self, table: &str, key: &str) {
        match table {
            "PORT" => {
                self.cfg.ports.remove(key);
            }
            "CABLE_LENGTH" => {
                self.cfg.cable_lengths.remove(key);
            }
            "BUFFER_POOL" => {
                self.cfg.pools.remove(key);
            }
            "DEFAULT_LOSSLESS_BUFFER_PARAMETER" => {
                self.cfg.default_lossless.remove(key);
            }
            "LOSSLESS_TRAFFIC_PATTERN" => {
                self.cfg.traffic_patterns.remove(key);
            }
            "DEVICE_METADATA" => {
                self.cfg.device_metadata.remove(key);
                self.model_number = self
                    .cfg
                    .platform()
                    .and_then(crate::naming::buffermgrd_model_number);
            }
            _ => {}
        }
    }

    /// Updates the STATE_DB view; returns whether the item goes to a handler.
    pub(super) fn mirror_state(&mut self, table: &str, key: &str, fields: Option<&Fields>) -> bool {
        let handled = STATE_TABLES.contains(&table);
        match (table, fields) {
            ("BUFFER_MAX_PARAM_TABLE", None) => {
                if key == "global" {
                    self.state.mmu_size = None;
                } else {
                    self.state.port_max.remove(key);
                }
            }
            ("PORT_TABLE", None) => {
                self.state.supported_speeds.remove(key);
            }
            ("BUFFER_MAX_PARAM_TABLE" | "PORT_TABLE", Some(f)) => {
                let mut raw = RawDb::new();
                raw.entry(table.to_string())
                    .or_default()
                    .insert(key.to_string(), f.clone());
                match StateDb::from_raw(&raw) {
                    Ok(one) => {
                        if key == "global" && table == "BUFFER_MAX_PARAM_TABLE" {
                            self.state.mmu_size = one.mmu_size;
                        }
                        self.state.port_max.extend(one.port_max);
                        if table == "PORT_TABLE" {
                            match one.supported_speeds.get(key) {
                                Some(s) => {
                                    self.state.supported_speeds.insert(key.into(), s.clone());
                                }
                                None => {
                                    self.state.supported_speeds.remove(key);
                                }
                            }
                        }
                    }
                    Err(e) => {
                        self.log(LogLevel::Error, format!("{table}|{key}: ignored: {e}"));
                        return false;
                    }
                }
            }
            _ => {}
        }
        handled
    }
}
