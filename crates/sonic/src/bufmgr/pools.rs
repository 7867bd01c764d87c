//! Pool sizes (sonic-buffer.md §5.4, §7.2), the shared headroom pool toggle (§7.9) and
//! the periodic handling of pending objects until the manager is initialised (§7.10).
//!
//! Invariant: nothing but deletions reaches APPL_DB before the pools are ready (writes
//! attempted earlier set `objects_pending` and are redone by
//! [`BufferManager::handle_pending_buffer_objects`]).

use std::collections::{BTreeMap, BTreeSet};

use super::records::{Dir, PortState};
use super::tables::numeric_non_zero;
use super::{BufferManager, LogLevel, Resume, WaitFor};
use crate::tables::config::INGRESS_LOSSLESS_POOL;
use crate::tables::{Fields, IdRange};

impl BufferManager {
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
