//! An orchagent stand-in for tests and benchmarks: consumes the daemon's APPL_DB output the
//! way orchagent does (ConsumerStateTable pops) and publishes what orchagent publishes after
//! applying an object (sonic-buffer.md §9): pools with `xoff` and lossless (`xoff`) profiles
//! go to APPL_STATE_DB, and are removed from it when deleted. This is what lets the
//! shared-headroom-pool ordering waits of §7.9 complete without a real orchagent.
//!
//! Invariants: [`Orchagent::appl`] is the APPL_DB buffer tables as consumed so far (equal to
//! the `T:key` hashes in Redis); every confirmation is written before [`Orchagent::consume`]
//! returns.

use std::time::Instant;

use crate::swss::{
    ConsumerStateTable, Db, DbConnection, Endpoint, Op, SwssError, Table, TableName,
};
use crate::tables::RawDb;

use super::reconcile::APPL_TABLES;

/// Upper bound on pops per table per [`Orchagent::consume`] (each pops up to 128 keys).
const MAX_POPS: usize = 10_000;

/// See the module docs.
#[derive(Debug)]
pub struct Orchagent {
    consumers: Vec<ConsumerStateTable>,
    confirm: Table,
    appl: RawDb,
    consumed_ops: u64,
    last_change: Option<Instant>,
}

impl Orchagent {
    /// Connects to APPL_DB and APPL_STATE_DB of `endpoint`.
    pub fn connect(endpoint: &Endpoint) -> Result<Orchagent, SwssError> {
        let mut consumers = Vec::new();
        for t in APPL_TABLES {
            consumers.push(ConsumerStateTable::new(
                DbConnection::open(endpoint, Db::Appl)?,
                TableName::new(t)?,
            ));
        }
        Ok(Orchagent {
            consumers,
            confirm: Table::new(DbConnection::open(endpoint, Db::ApplState)?),
            appl: RawDb::new(),
            consumed_ops: 0,
            last_change: None,
        })
    }

    /// Pops every table until nothing is pending, applies the operations to
    /// [`Orchagent::appl`] and writes the confirmations; returns the number of operations
    /// consumed.
    pub fn consume(&mut self) -> Result<usize, SwssError> {
        let mut n = 0;
        for c in &mut self.consumers {
            let table = c.table().as_str().to_owned();
            let confirms = table == "BUFFER_POOL_TABLE" || table == "BUFFER_PROFILE_TABLE";
            for op in c.pop_all(MAX_POPS)? {
                n += 1;
                let t = self.appl.entry(table.clone()).or_default();
                match op.op {
                    Op::Del => {
                        t.remove(&op.key);
                        if confirms {
                            self.confirm.del(c.table(), &op.key);
                        }
                    }
                    Op::Set => {
                        let e = t.entry(op.key.clone()).or_default();
                        e.extend(op.fields);
                        if confirms && e.contains_key("xoff") {
                            self.confirm.replace(c.table(), &op.key, e.clone());
                        }
                    }
                }
            }
        }
        self.appl.retain(|_, t| !t.is_empty());
        self.confirm.flush()?;
        if n > 0 {
            self.consumed_ops += n as u64;
            self.last_change = Some(Instant::now());
        }
        Ok(n)
    }

    /// The APPL_DB buffer tables as consumed so far.
    pub fn appl(&self) -> &RawDb {
        &self.appl
    }

    /// Operations consumed so far.
    pub fn consumed_ops(&self) -> u64 {
        self.consumed_ops
    }

    /// When the last non-empty [`Orchagent::consume`] happened.
    pub fn last_change(&self) -> Option<Instant> {
        self.last_change
    }
}
