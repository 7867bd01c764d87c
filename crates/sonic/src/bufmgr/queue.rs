//! buffermgrd's queue of items to process (SONiC's `m_toSync`), its retries and timers, and
//! the shared-headroom-pool ordering waits (sonic-buffer.md §7.9).
//!
//! Invariants: an item is processed when its table gets an event or at the retry 1 s after
//! the last activity, and stays queued until its handler succeeds or rejects it; while an
//! ordering wait blocks, nothing is processed and the wait's polls are the only timer.

use super::*;

/// A CONFIG_DB / STATE_DB item waiting to be processed (SONiC's `m_toSync`): an optional
/// delete followed by an optional set.
#[derive(Clone, Debug, Default)]
pub(super) struct Pending {
    pub(super) del: bool,
    pub(super) set: Option<Fields>,
    /// The deferral reason was already logged.
    pub(super) logged: bool,
}

/// Outcome of a handler (SONiC's `task_process_status`).
#[derive(Debug)]
pub(super) enum Status {
    /// Done.
    Success,
    /// Cannot be processed yet; keep and retry.
    Retry(String),
    /// Rejected; dropped with an error log.
    Failed(EntryError),
}

/// What an ordering wait waits for (§7.9).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum WaitFor {
    /// APPL_STATE_DB `BUFFER_POOL_TABLE:ingress_lossless_pool.xoff` non-zero.
    PoolXoff,
    /// APPL_STATE_DB `BUFFER_PROFILE_TABLE:<p>` shows these `xon`/`xoff`/`size`.
    Profiles(BTreeMap<String, Fields>),
}

/// What to do when a wait ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Resume {
    /// Refresh the dynamic profiles, then finish.
    ShpProfiles { by_ratio: bool, by_size: bool },
    /// Write the pool's xoff and recompute the pools.
    ShpFinish { by_ratio: bool },
}

/// An ordering wait under way: what it waits for, the polls it has left, when it polls
/// next, and what follows it.
#[derive(Clone, Debug)]
pub(super) struct Block {
    pub(super) wait: WaitFor,
    pub(super) polls_left: u32,
    pub(super) next_poll: Duration,
    pub(super) resume: Resume,
}

impl BufferManager {
    pub(super) fn enqueue(&mut self, table: &str, key: &str, set: Option<Fields>) {
        let p = self
            .todo
            .entry(table.to_string())
            .or_default()
            .entry(key.to_string())
            .or_default();
        match set {
            Some(f) => p.set = Some(f),
            None => {
                p.del = true;
                p.set = None;
            }
        }
        p.logged = false;
        if self.block.is_none() {
            self.process_table(table);
        }
    }

    pub(super) fn schedule_retry(&mut self) {
        let pending = !self.todo.is_empty() || !self.refresh_pending.is_empty();
        self.retry_at = (pending && self.block.is_none()).then_some(self.now + RETRY_INTERVAL);
    }

    /// Retries every table (SONiC's `Orch::doTask()` on a select timeout), then the ports
    /// whose refresh could not run.
    pub(super) fn retry_all(&mut self) {
        let tables: Vec<String> = self.todo.keys().cloned().collect();
        for t in tables {
            if self.block.is_some() {
                return;
            }
            self.process_table(&t);
        }
        let ports: Vec<String> = self.refresh_pending.iter().cloned().collect();
        for p in ports {
            if self.block.is_some() {
                return;
            }
            self.refresh_pending.remove(&p);
            self.refresh_pgs_for_port(&p, None);
        }
    }

    pub(super) fn process_table(&mut self, table: &str) {
        let keys: Vec<String> = match self.todo.get(table) {
            Some(m) => m.keys().cloned().collect(),
            None => return,
        };
        for key in keys {
            if self.block.is_some() {
                break;
            }
            let Some(mut item) = self.todo.get_mut(table).and_then(|m| m.remove(&key)) else {
                continue;
            };
            let mut keep = false;
            if item.del {
                match self.dispatch(table, &key, None) {
                    Status::Retry(reason) => {
                        keep = true;
                        self.log_deferral(&mut item, table, &key, &reason);
                    }
                    Status::Failed(e) => {
                        item.del = false;
                        self.log(LogLevel::Error, e.to_string());
                    }
                    Status::Success => item.del = false,
                }
            }
            if !keep && self.block.is_none() {
                if let Some(fields) = item.set.clone() {
                    match self.dispatch(table, &key, Some(&fields)) {
                        Status::Retry(reason) => {
                            self.log_deferral(&mut item, table, &key, &reason);
                        }
                        Status::Failed(e) => {
                            item.set = None;
                            self.log(LogLevel::Error, e.to_string());
                        }
                        Status::Success => item.set = None,
                    }
                }
            }
            if item.del || item.set.is_some() {
                self.todo
                    .entry(table.to_string())
                    .or_default()
                    .insert(key, item);
            }
        }
        if self.todo.get(table).is_some_and(BTreeMap::is_empty) {
            self.todo.remove(table);
        }
    }

    pub(super) fn log_deferral(
        &mut self,
        item: &mut Pending,
        table: &str,
        key: &str,
        reason: &str,
    ) {
        if !item.logged {
            item.logged = true;
            let level = if reason.contains("overlaps") {
                LogLevel::Error
            } else if reason.contains("not configured yet") {
                LogLevel::Warning
            } else {
                LogLevel::Info
            };
            self.log(
                level,
                format!("{table}|{key}: deferred, will retry: {reason}"),
            );
        }
    }

    pub(super) fn dispatch(&mut self, table: &str, key: &str, set: Option<&Fields>) -> Status {
        match table {
            "PORT" => self.handle_port(key, set),
            "CABLE_LENGTH" => self.handle_cable_length(set),
            "BUFFER_POOL" => self.handle_pool(key, set),
            "BUFFER_PROFILE" => self.handle_profile(key, set),
            "BUFFER_PG" => self.handle_objects(Dir::Pg, key, set),
            "BUFFER_QUEUE" => self.handle_objects(Dir::Queue, key, set),
            "BUFFER_PORT_INGRESS_PROFILE_LIST" => self.handle_profile_list(Dir::Pg, key, set),
            "BUFFER_PORT_EGRESS_PROFILE_LIST" => self.handle_profile_list(Dir::Queue, key, set),
            "DEFAULT_LOSSLESS_BUFFER_PARAMETER" => self.handle_default_lossless(set),
            "BUFFER_MAX_PARAM_TABLE" => self.handle_max_param(key, set),
            "PORT_TABLE" => self.handle_port_state(key, set),
            _ => Status::Success,
        }
    }

    pub(super) fn timer_tick(&mut self) {
        if self.block.is_some() {
            self.tick_deferred = true;
            return;
        }
        self.check_shared_buffer_pool_size(true);
        if !self.completely_initialized && self.block.is_none() {
            self.handle_pending_buffer_objects();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Ordering waits (§7.9).

    pub(super) fn start_block(&mut self, wait: WaitFor, resume: Resume) {
        self.block = Some(Block {
            wait,
            polls_left: WAIT_POLLS,
            next_poll: self.now + WAIT_POLL_INTERVAL,
            resume,
        });
        self.retry_at = None;
        // The first poll happens at once.
        self.poll_block();
    }

    /// Checks the wait condition and resumes when it holds; returns whether it resumed.
    pub(super) fn poll_block(&mut self) -> bool {
        let Some(b) = &self.block else {
            return false;
        };
        if !self.wait_satisfied(&b.wait) {
            return false;
        }
        let resume = b.resume;
        self.block = None;
        match resume {
            Resume::ShpProfiles { by_ratio, by_size } => {
                self.shp_refresh_profiles(by_ratio, by_size)
            }
            Resume::ShpFinish { by_ratio } => self.shp_finish(by_ratio),
        }
        if self.block.is_none() {
            self.after_unblock();
        }
        true
    }

    pub(super) fn after_unblock(&mut self) {
        if self.tick_deferred {
            self.tick_deferred = false;
            self.timer_tick();
        }
        if self.block.is_none() {
            self.retry_all();
            self.schedule_retry();
        }
    }

    pub(super) fn wait_satisfied(&self, wait: &WaitFor) -> bool {
        let get = |table: &str, key: &str| self.appl_state.get(table).and_then(|t| t.get(key));
        match wait {
            WaitFor::PoolXoff => get(
                crate::tables::appl::names::BUFFER_POOL_TABLE,
                crate::tables::config::INGRESS_LOSSLESS_POOL,
            )
            .and_then(|f| f.get("xoff"))
            .is_some_and(|x| crate::lua::tonumber(x).is_some_and(|v| v != 0.0)),
            WaitFor::Profiles(want) => want.iter().all(|(p, fields)| {
                get(crate::tables::appl::names::BUFFER_PROFILE_TABLE, p).is_some_and(|have| {
                    ["xon", "xoff", "size"]
                        .iter()
                        .all(|f| have.get(*f) == fields.get(*f))
                })
            }),
        }
    }
}
