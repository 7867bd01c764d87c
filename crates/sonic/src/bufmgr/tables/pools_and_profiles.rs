//! Handlers of `DEFAULT_LOSSLESS_BUFFER_PARAMETER`, `BUFFER_POOL` and `BUFFER_PROFILE`: the
//! shared-headroom-pool settings, the pools and the profiles the objects refer to.

use std::collections::BTreeSet;

use super::{numeric_non_zero, parse_one};
use crate::bufmgr::records::{PoolInfo, ProfileInfo};
use crate::bufmgr::{BufferManager, EntryError, LogLevel, Status};
use crate::tables::appl::names as appl_names;
use crate::tables::config::{BufferProfile, HeadroomType, INGRESS_LOSSLESS_POOL};
use crate::tables::{reference_name, Direction, Fields, IdRange, TableError};

impl BufferManager {
    // ---------------------------------------------------------------------------------------
    // DEFAULT_LOSSLESS_BUFFER_PARAMETER (§7.7, §7.9).

    pub(in crate::bufmgr) fn handle_default_lossless(&mut self, set: Option<&Fields>) -> Status {
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

    pub(in crate::bufmgr) fn handle_pool(&mut self, name: &str, set: Option<&Fields>) -> Status {
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

    pub(in crate::bufmgr) fn handle_profile(&mut self, name: &str, set: Option<&Fields>) -> Status {
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
}
