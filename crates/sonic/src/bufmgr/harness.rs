//! An in-memory environment for a [`BufferManager`]: CONFIG_DB, STATE_DB, APPL_DB and
//! APPL_STATE_DB as [`RawDb`]s, a simulated clock, and an optional orchagent stand-in that
//! confirms pools and lossless profiles in APPL_STATE_DB as orchagent does after applying them
//! (sonic-buffer.md §9), so the ordering waits of §7.9 complete.
//!
//! Invariants: every output is applied to the databases in order (APPL_DB sets merge fields,
//! as a ProducerStateTable consumed by orchagent does), so [`Harness::appl`] always equals
//! [`BufferManager::appl_db`]; time only moves forward, through [`Harness::advance`].

use std::time::Duration;

use super::{BufMgrError, BufferManager, Input, LogLevel, Options, Output};
use crate::tables::appl::{names as appl_names, ApplDb};
use crate::tables::{Fields, RawDb, TableErrors};

/// A manager with in-memory databases.
#[derive(Clone, Debug)]
pub struct Harness {
    mgr: BufferManager,
    now: Duration,
    /// CONFIG_DB as fed to the manager.
    pub config: RawDb,
    /// APPL_DB: the manager's writes (merged as orchagent sees them).
    pub appl: RawDb,
    /// STATE_DB: the manager's writes and the STATE_DB inputs fed.
    pub state: RawDb,
    /// APPL_STATE_DB: orchagent's confirmations.
    pub appl_state: RawDb,
    /// Every log line, in order.
    pub logs: Vec<(LogLevel, String)>,
    /// Every database write, in order (log lines excluded).
    pub writes: Vec<Output>,
    /// Confirm pools with `xoff` and lossless profiles in APPL_STATE_DB (orchagent).
    pub orchagent: bool,
}

impl Harness {
    /// A harness around a new manager, with the orchagent stand-in on; the start-up outputs
    /// are applied. The preserved APPL_DB of a warm reboot is APPL_DB's starting content.
    pub fn new(options: Options) -> Result<Harness, BufMgrError> {
        let now = options.start;
        let appl = options.preserved_appl_db.clone();
        let mgr = BufferManager::new(options)?;
        let mut h = Harness {
            mgr,
            now,
            config: RawDb::new(),
            appl,
            state: RawDb::new(),
            appl_state: RawDb::new(),
            logs: Vec::new(),
            writes: Vec::new(),
            orchagent: true,
        };
        h.drain();
        Ok(h)
    }

    /// The manager.
    pub fn manager(&self) -> &BufferManager {
        &self.mgr
    }

    /// The current simulated time.
    pub fn now(&self) -> Duration {
        self.now
    }

    /// Feeds an input now (recording CONFIG_DB / STATE_DB changes) and applies the outputs.
    pub fn feed(&mut self, input: Input) {
        match &input {
            Input::ConfigSet { table, key, fields } => {
                self.config
                    .entry(table.clone())
                    .or_default()
                    .insert(key.clone(), fields.clone());
            }
            Input::ConfigDel { table, key } => remove(&mut self.config, table, key),
            Input::StateSet { table, key, fields } => {
                self.state
                    .entry(table.clone())
                    .or_default()
                    .insert(key.clone(), fields.clone());
            }
            Input::StateDel { table, key } => remove(&mut self.state, table, key),
            _ => {}
        }
        self.mgr.handle(self.now, input);
        self.drain();
    }

    /// CONFIG_DB set.
    pub fn config_set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]) {
        self.feed(Input::config_set(table, key, fields));
    }

    /// CONFIG_DB delete.
    pub fn config_del(&mut self, table: &str, key: &str) {
        self.feed(Input::config_del(table, key));
    }

    /// STATE_DB set.
    pub fn state_set(&mut self, table: &str, key: &str, fields: &[(&str, &str)]) {
        self.feed(Input::state_set(table, key, fields));
    }

    /// `PORT_TABLE:PortInitDone`.
    pub fn port_init_done(&mut self) {
        self.feed(Input::PortInitDone);
    }

    /// Feeds every entry of a CONFIG_DB dump (tables and keys in name order, which makes the
    /// manager retry: PGs arrive before their profiles, profiles before their pools).
    pub fn load_config(&mut self, db: &RawDb) {
        for (table, entries) in db {
            for (key, fields) in entries {
                self.feed(Input::ConfigSet {
                    table: table.clone(),
                    key: key.clone(),
                    fields: fields.clone(),
                });
            }
        }
    }

    /// Lets `d` of simulated time pass, running every timer due.
    pub fn advance(&mut self, d: Duration) {
        let target = self.now + d;
        while let Some(t) = self.mgr.poll_timeout() {
            if t > target {
                break;
            }
            self.now = self.now.max(t);
            self.mgr.handle_timeout(t);
            self.drain();
        }
        self.now = target;
    }

    /// Lets a minute pass: enough for pools, pending objects, the deferred zero profiles and
    /// retries to settle.
    pub fn settle(&mut self) {
        self.advance(Duration::from_secs(60));
    }

    /// Error log lines.
    pub fn errors(&self) -> Vec<&str> {
        self.logs
            .iter()
            .filter(|(l, _)| *l == LogLevel::Error)
            .map(|(_, m)| m.as_str())
            .collect()
    }

    /// APPL_DB as typed tables.
    pub fn appl_typed(&self) -> Result<ApplDb, TableErrors> {
        ApplDb::from_raw(&self.appl)
    }

    /// A field of an APPL_DB hash.
    pub fn appl_field(&self, table: &str, key: &str, field: &str) -> Option<&str> {
        self.appl
            .get(table)?
            .get(key)?
            .get(field)
            .map(String::as_str)
    }

    /// Applies every pending output; the orchagent stand-in's confirmations are fed back.
    fn drain(&mut self) {
        loop {
            let mut responses = Vec::new();
            while let Some(o) = self.mgr.poll_output() {
                match &o {
                    Output::ApplSet { table, key, fields } => {
                        let merged = {
                            let e = self
                                .appl
                                .entry(table.clone())
                                .or_default()
                                .entry(key.clone())
                                .or_default();
                            e.extend(fields.iter().map(|(f, v)| (f.clone(), v.clone())));
                            e.clone()
                        };
                        if self.orchagent && confirms(table, &merged) {
                            responses.push(Input::ApplStateSet {
                                table: table.clone(),
                                key: key.clone(),
                                fields: merged,
                            });
                        }
                    }
                    Output::ApplDel { table, key } => {
                        remove(&mut self.appl, table, key);
                        if self.orchagent
                            && (table == appl_names::BUFFER_POOL_TABLE
                                || table == appl_names::BUFFER_PROFILE_TABLE)
                        {
                            responses.push(Input::ApplStateDel {
                                table: table.clone(),
                                key: key.clone(),
                            });
                        }
                    }
                    Output::StateSet { table, key, fields } => {
                        self.state
                            .entry(table.clone())
                            .or_default()
                            .insert(key.clone(), fields.clone());
                    }
                    Output::StateDel { table, key } => remove(&mut self.state, table, key),
                    Output::Log { level, message } => {
                        self.logs.push((*level, message.clone()));
                        continue;
                    }
                }
                self.writes.push(o);
            }
            if responses.is_empty() {
                break;
            }
            for r in responses {
                match &r {
                    Input::ApplStateSet { table, key, fields } => {
                        self.appl_state
                            .entry(table.clone())
                            .or_default()
                            .insert(key.clone(), fields.clone());
                    }
                    Input::ApplStateDel { table, key } => remove(&mut self.appl_state, table, key),
                    _ => {}
                }
                self.mgr.handle(self.now, r);
            }
        }
    }
}

/// Whether orchagent publishes the applied object to APPL_STATE_DB: pools with `xoff`,
/// lossless (`xoff`) profiles.
fn confirms(table: &str, fields: &Fields) -> bool {
    (table == appl_names::BUFFER_POOL_TABLE || table == appl_names::BUFFER_PROFILE_TABLE)
        && fields.contains_key("xoff")
}

fn remove(db: &mut RawDb, table: &str, key: &str) {
    if let Some(t) = db.get_mut(table) {
        t.remove(key);
        if t.is_empty() {
            db.remove(table);
        }
    }
}
