//! A ConsumerStateTable-compatible popper: what orchagent does with a ProducerStateTable's
//! output. Used to check that what we produce is consumable, and usable as a real consumer.
//!
//! One pop is one atomic Lua script (same `KEYS`/`ARGV` layout as swss-common:
//! `KEYS = [T_KEY_SET, "T<sep>", T_DEL_SET]`, `ARGV = [batch, "_"]`):
//! `SPOP T_KEY_SET batch`; for each popped key: if `SREM T_DEL_SET key` removed it,
//! `DEL T<sep>key` and report a DEL; then if the staging hash `_T<sep>key` has fields, merge
//! them into `T<sep>key` (`HSET`, never removing fields), report a SET with them, and
//! `DEL _T<sep>key`. A key popped with neither a pending delete nor staged fields is
//! reported as a DEL (swss-common semantics: an entry with no fields is a DEL).
//!
//! Invariants:
//! - For one key, a DEL is always reported before the SET of the same pop.
//! - The order *between* keys is that of `SPOP`, i.e. unspecified (as in SONiC).
//! - A pop costs 1 round trip (2 if the script had to be reloaded after `NOSCRIPT`).

use redis::Value;

use super::conn::DbConnection;
use super::error::{Result, SwssError};
use super::keys::{Db, Fields, TableName};
use super::script::CachedScript;

/// Default number of keys popped per script run (swss-common's default batch size).
pub const DEFAULT_POP_BATCH: usize = 128;

/// The pop script; see the module docs. Returns `{ {key, {f1, v1, …}}, … }`, a DEL being
/// an entry with an empty list.
const POP_LUA: &str = r#"-- headroom ConsumerStateTable pop
local out = {}
local prefix = KEYS[2]
local staging_prefix = ARGV[2] .. prefix
local popped = redis.call('SPOP', KEYS[1], ARGV[1])
for _, key in ipairs(popped) do
    local deleted = redis.call('SREM', KEYS[3], key)
    if deleted == 1 then
        redis.call('DEL', prefix .. key)
    end
    local staged = redis.call('HGETALL', staging_prefix .. key)
    if deleted == 1 and #staged > 0 then
        out[#out + 1] = {key, {}}
    end
    out[#out + 1] = {key, staged}
    for i = 1, #staged, 2 do
        redis.call('HSET', prefix .. key, staged[i], staged[i + 1])
    end
    redis.call('DEL', staging_prefix .. key)
end
return out
"#;

/// Operation of a consumed entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Fields were set (merged into the table hash).
    Set,
    /// The object was deleted.
    Del,
}

/// One consumed entry: object key, operation and (for SET) the fields set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOpFields {
    /// Object key (without table name).
    pub key: String,
    /// SET or DEL.
    pub op: Op,
    /// The fields of a SET; empty for a DEL.
    pub fields: Fields,
}

/// Pops one table of one database (normally APPL_DB) the way orchagent does.
#[derive(Debug)]
pub struct ConsumerStateTable {
    conn: DbConnection,
    table: TableName,
    batch: usize,
    script: CachedScript,
}

impl ConsumerStateTable {
    /// A popper for `table` reading through `conn`, with [`DEFAULT_POP_BATCH`].
    pub fn new(conn: DbConnection, table: TableName) -> Self {
        ConsumerStateTable {
            conn,
            table,
            batch: DEFAULT_POP_BATCH,
            script: CachedScript::new(POP_LUA),
        }
    }

    /// Sets the maximum number of keys per pop (at least 1).
    pub fn with_batch(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// The table consumed.
    pub fn table(&self) -> &TableName {
        &self.table
    }

    /// The database read.
    pub fn db(&self) -> Db {
        self.conn.db()
    }

    /// The underlying connection.
    pub fn connection(&mut self) -> &mut DbConnection {
        &mut self.conn
    }

    /// Number of keys with pending changes (`SCARD T_KEY_SET`, 1 round trip).
    pub fn pending(&mut self) -> Result<usize> {
        self.conn
            .query("SCARD", redis::cmd("SCARD").arg(self.table.key_set()))
    }

    /// Pops up to the batch size of keys (1 round trip; see the module docs).
    pub fn pops(&mut self) -> Result<Vec<KeyOpFields>> {
        let db = self.conn.db();
        let keys = [
            self.table.key_set(),
            format!("{}{}", self.table, db.separator()),
            self.table.del_set(),
        ];
        let args = [self.batch.to_string(), "_".to_owned()];
        let reply = self.script.invoke(&mut self.conn, &keys, &args)?;
        parse_pops(reply)
    }

    /// Pops until the key set is empty, at most `max_pops` times; returns everything popped.
    pub fn pop_all(&mut self, max_pops: usize) -> Result<Vec<KeyOpFields>> {
        let mut all = Vec::new();
        for _ in 0..max_pops {
            let got = self.pops()?;
            if got.is_empty() {
                break;
            }
            all.extend(got);
        }
        Ok(all)
    }
}

fn unexpected(detail: impl Into<String>) -> SwssError {
    SwssError::UnexpectedReply {
        op: "EVALSHA consumer pop",
        detail: detail.into(),
    }
}

fn parse_pops(reply: Value) -> Result<Vec<KeyOpFields>> {
    let entries = match reply {
        Value::Nil => return Ok(Vec::new()),
        Value::Array(v) => v,
        other => return Err(unexpected(format!("{other:?}"))),
    };
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let (key, flat): (String, Vec<String>) =
            redis::from_owned_redis_value(entry).map_err(|e| unexpected(e.to_string()))?;
        if flat.len() % 2 != 0 {
            return Err(unexpected(format!("odd field list for {key}")));
        }
        let mut fields = Fields::new();
        let mut it = flat.into_iter();
        while let (Some(f), Some(v)) = (it.next(), it.next()) {
            fields.insert(f, v);
        }
        let op = if fields.is_empty() { Op::Del } else { Op::Set };
        out.push(KeyOpFields { key, op, fields });
    }
    Ok(out)
}
