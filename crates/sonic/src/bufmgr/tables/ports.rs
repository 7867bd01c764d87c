//! Handlers of the tables that describe a port: CONFIG_DB `PORT` and `CABLE_LENGTH`, STATE_DB
//! `PORT_TABLE` (supported speeds) and `BUFFER_MAX_PARAM_TABLE` (per-port object maxima, and
//! the global MMU size).

use super::parse_one;
use crate::bufmgr::records::{is_non_zero, Dir, PortState};
use crate::bufmgr::{BufferManager, EntryError, LogLevel, Status};
use crate::tables::config::Port;
use crate::tables::{CableLength, Fields};

impl BufferManager {
    // ---------------------------------------------------------------------------------------
    // PORT (§7.3).

    pub(in crate::bufmgr) fn handle_port(&mut self, port: &str, set: Option<&Fields>) -> Status {
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

    pub(in crate::bufmgr) fn handle_cable_length(&mut self, set: Option<&Fields>) -> Status {
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

    pub(in crate::bufmgr) fn handle_port_state(
        &mut self,
        port: &str,
        set: Option<&Fields>,
    ) -> Status {
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

    pub(in crate::bufmgr) fn handle_max_param(
        &mut self,
        key: &str,
        set: Option<&Fields>,
    ) -> Status {
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
}
