//! The `--redis URL` backend of the `sonic` commands: reading CONFIG_DB, STATE_DB and APPL_DB
//! of a switch's Redis into the same untyped dumps ([`RawDb`]) the file backend reads from
//! JSON, and writing a `config` change to CONFIG_DB.
//!
//! Built on the swss layer of `headroom-sonic` ([`DbConnection`], [`Table`], [`Db`]): one
//! connection per database (CONFIG_DB 4 and STATE_DB 6 with `|` keys, APPL_DB 0 with `:` keys),
//! tables enumerated with `KEYS <TABLE><sep>*` and one pipelined `HGETALL` per key.
//!
//! Invariants:
//! - Only the buffer tables are read ([`CONFIG_TABLES`], [`STATE_TABLES`], and APPL_DB's
//!   `BUFFER_PG_TABLE` for `show buffer information`); a dump holds a table only if Redis has
//!   at least one key of it.
//! - [`write_config`] sends every changed CONFIG_DB entry in one `MULTI`/`EXEC` transaction
//!   (each entry replaced whole: `DEL` + `HSET`, or `DEL` when removed), so other clients see
//!   all of the change or none of it; unchanged entries are not written. Like SONiC's own
//!   `config` commands, the read–validate–write sequence is not isolated from a concurrent
//!   writer of the same entries (the last writer wins).
//! - Every error is one line naming the URL.

use std::collections::BTreeSet;

use headroom_sonic::daemon::endpoint_from_url;
use headroom_sonic::swss::{table, Db, DbConnection, Endpoint, Table, TableName};
use headroom_sonic::tables::appl::names as appl_names;
use headroom_sonic::tables::raw::{RawDb, RawTable};
use headroom_sonic::tables::state::names as state_names;

use super::{Result, SonicError};

/// The CONFIG_DB tables the `sonic` commands read (sonic-buffer.md §1.1): the same list the
/// daemon subscribes to.
pub use headroom_sonic::daemon::CONFIG_TABLES;

/// The STATE_DB tables read: the inputs of the calculation (ASIC and gearbox parameters,
/// orchagent's maximums, supported speeds) and buffermgrd's mirrors of what is deployed
/// (`BUFFER_POOL_TABLE`, `BUFFER_PROFILE_TABLE`, shown by `show buffer information`).
pub const STATE_TABLES: [&str; 7] = [
    state_names::ASIC_TABLE,
    state_names::PERIPHERAL_TABLE,
    state_names::PORT_PERIPHERAL_TABLE,
    state_names::BUFFER_MAX_PARAM_TABLE,
    state_names::PORT_TABLE,
    appl_names::BUFFER_POOL_TABLE,
    appl_names::BUFFER_PROFILE_TABLE,
];

/// The STATE_DB tables buffermgrd writes from its `-a`/`-p` files at start-up.
pub const BUFFERMGRD_STATE_TABLES: [&str; 3] = [
    state_names::ASIC_TABLE,
    state_names::PERIPHERAL_TABLE,
    state_names::PORT_PERIPHERAL_TABLE,
];

/// A switch's Redis, as named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisSource {
    /// The URL as given (for messages).
    pub url: String,
    /// Where to connect.
    pub endpoint: Endpoint,
}

impl RedisSource {
    /// Parses `url` with the daemon's syntax ([`endpoint_from_url`]: `redis://HOST[:PORT]`,
    /// port 6379 by default, or `unix://PATH`, SONiC's `unix:///var/run/redis/redis.sock`), so
    /// every `--redis` option of the CLI takes the same URLs. A database number other than 0
    /// is rejected: each table lives in its fixed SONiC database.
    pub fn parse(url: &str) -> Result<RedisSource> {
        let endpoint = endpoint_from_url(url).map_err(|e| SonicError::new(e.to_string()))?;
        Ok(RedisSource {
            url: url.to_string(),
            endpoint,
        })
    }

    /// A connection to database `db`.
    pub fn connect(&self, db: Db) -> Result<DbConnection> {
        DbConnection::open(&self.endpoint, db).map_err(|e| {
            SonicError::new(format!(
                "cannot connect to Redis at {} ({}): {}",
                self.url,
                db.name(),
                one_line(&e.to_string())
            ))
        })
    }

    /// Reads `tables` of database `db` into a dump keyed by table name, then object key.
    pub fn read(&self, db: Db, tables: &[&str]) -> Result<RawDb> {
        let names = table_names(tables)?;
        let mut conn = self.connect(db)?;
        let rows = table::enumerate(&mut conn, &names).map_err(|e| {
            SonicError::new(format!(
                "cannot read {} from Redis at {}: {}",
                db.name(),
                self.url,
                one_line(&e.to_string())
            ))
        })?;
        let mut out = RawDb::new();
        for row in rows {
            out.entry(row.table.as_str().to_string())
                .or_default()
                .insert(row.key, row.fields);
        }
        Ok(out)
    }

    /// How to name this CONFIG_DB in messages.
    pub fn config_label(&self) -> String {
        format!("CONFIG_DB at {}", self.url)
    }
}

fn table_names(tables: &[&str]) -> Result<Vec<TableName>> {
    tables
        .iter()
        .map(|t| {
            TableName::new(*t).map_err(|e| SonicError::new(format!("internal: table {t}: {e}")))
        })
        .collect()
}

/// Redis error texts on one line.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Writes the entries of `touched` whose content differs between `before` and `after` to
/// CONFIG_DB, in one `MULTI`/`EXEC` (see the module invariants). Returns how many entries
/// were written.
pub fn write_config(
    source: &RedisSource,
    before: &RawDb,
    after: &RawDb,
    touched: &BTreeSet<(String, String)>,
) -> Result<usize> {
    let entry =
        |db: &RawDb, t: &str, k: &str| db.get(t).and_then(|tab: &RawTable| tab.get(k)).cloned();
    let mut changes = Vec::new();
    for (t, k) in touched {
        let (old, new) = (entry(before, t, k), entry(after, t, k));
        if old != new {
            changes.push((t, k, new));
        }
    }
    if changes.is_empty() {
        return Ok(0);
    }
    let mut table = Table::new(source.connect(Db::Config)?);
    for (t, k, new) in &changes {
        let name = TableName::new(t.as_str())
            .map_err(|e| SonicError::new(format!("internal: table {t}: {e}")))?;
        match new {
            Some(fields) if !fields.is_empty() => table.replace(&name, k, fields.clone()),
            _ => table.del(&name, k),
        }
    }
    table.flush().map_err(|e| {
        SonicError::new(format!(
            "cannot write CONFIG_DB at {}: {}",
            source.url,
            one_line(&e.to_string())
        ))
    })?;
    Ok(changes.len())
}
