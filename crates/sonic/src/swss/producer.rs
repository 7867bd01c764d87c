//! A ProducerStateTable-compatible writer (what buffermgrd uses to write APPL_DB).
//!
//! For every queued operation on object `key` of table `T` in database `N`, the flush
//! performs exactly the Redis commands of swss-common's unbuffered single-key scripts, in
//! queue order:
//!
//! - `set(T, key, [(f1, v1), …])`: `SADD T_KEY_SET key`; `HSET _T:key fi vi` once per pair
//!   (in the given order); `PUBLISH T_CHANNEL@N G` if the `SADD` added a member.
//! - `del(T, key)`: `SADD T_KEY_SET key`; `SADD T_DEL_SET key`; `DEL _T:key`;
//!   `PUBLISH T_CHANNEL@N G` if the first `SADD` added a member.
//!
//! Invariants:
//! - One [`ProducerStateTable::flush`] runs *all* queued operations (any number of tables)
//!   in one `EVALSHA` of one Lua script, so a consumer never observes part of a flush.
//!   Cost: 1 round trip; 2 if the script had to be (re)loaded after a `NOSCRIPT` (the
//!   first flush pipelines `SCRIPT LOAD` with the `EVALSHA`, so it also costs 1); plus 1
//!   if the connection had to be replaced. An empty flush costs 0.
//! - Every key the script touches is passed in `KEYS` (channel first, as swss-common does).
//! - If a flush fails the operations stay queued; flushing again re-sends them. Re-sending
//!   is harmless: the resulting APPL_DB state is the same (the sets are idempotent and the
//!   consumer merges fields), at worst a consumer sees the same operation twice. A Lua
//!   runtime error (only possible if one of the keys holds a value of the wrong type) stops
//!   the script part-way without rollback, as in swss-common; then [`ProducerStateTable::discard`]
//!   the queue.
//! - `set` never removes fields from the consumer's hash (the consumer merges); to drop a
//!   field queue `del` then `set`. A `set` with no fields reaches the consumer as a DEL
//!   (swss-common semantics).

use super::conn::DbConnection;
use super::error::{Result, SwssError};
use super::keys::{Db, TableName};
use super::script::CachedScript;

/// The message published on the table channel (swss-common `SWSS_TABLE_UPDATE_NOTIFICATION`).
pub const UPDATE_NOTIFICATION: &str = "G";

/// The flush script.
///
/// `ARGV[1]` is the notification message; then one record per operation:
/// `"S", key, n, f1, v1, …, fn, vn` or `"D", key`. `KEYS` holds, per operation,
/// `channel, key set, staging hash` (set) or `channel, key set, staging hash, del set`
/// (del). Returns the number of messages published.
const FLUSH_LUA: &str = r#"-- headroom ProducerStateTable flush
local message = ARGV[1]
local a = 2
local k = 1
local published = 0
while a <= #ARGV do
    local kind, key = ARGV[a], ARGV[a + 1]
    local channel, key_set, staging = KEYS[k], KEYS[k + 1], KEYS[k + 2]
    local fresh = redis.call('SADD', key_set, key)
    if kind == 'S' then
        local n = tonumber(ARGV[a + 2])
        for i = 1, n do
            redis.call('HSET', staging, ARGV[a + 1 + 2 * i], ARGV[a + 2 + 2 * i])
        end
        a = a + 3 + 2 * n
        k = k + 3
    elseif kind == 'D' then
        redis.call('SADD', KEYS[k + 3], key)
        redis.call('DEL', staging)
        a = a + 2
        k = k + 4
    else
        return redis.error_reply('headroom producer: bad operation ' .. tostring(kind))
    end
    if fresh > 0 then
        redis.call('PUBLISH', channel, message)
        published = published + 1
    end
end
return published
"#;

/// One queued operation.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PendingOp {
    Set {
        table: TableName,
        key: String,
        fields: Vec<(String, String)>,
    },
    Del {
        table: TableName,
        key: String,
    },
}

/// Writes tables of one database (normally APPL_DB) with the ProducerStateTable protocol;
/// operations are queued until [`ProducerStateTable::flush`] (see the module docs).
#[derive(Debug)]
pub struct ProducerStateTable {
    conn: DbConnection,
    script: CachedScript,
    pending: Vec<PendingOp>,
    published: u64,
}

impl ProducerStateTable {
    /// A producer writing through `conn` (its database determines the `:`/`|` separator of
    /// staging keys and the `@N` of channel names).
    pub fn new(conn: DbConnection) -> Self {
        ProducerStateTable {
            conn,
            script: CachedScript::new(FLUSH_LUA),
            pending: Vec::new(),
            published: 0,
        }
    }

    /// The database written.
    pub fn db(&self) -> Db {
        self.conn.db()
    }

    /// The underlying connection (e.g. for its round-trip counter).
    pub fn connection(&mut self) -> &mut DbConnection {
        &mut self.conn
    }

    /// SHA1 of the flush script (what appears in `SCRIPT EXISTS`).
    pub fn script_sha(&self) -> &str {
        self.script.sha()
    }

    /// Queues a SET of `fields` (applied in iteration order) on `table`/`key`.
    pub fn set<I, F, V>(&mut self, table: &TableName, key: &str, fields: I)
    where
        I: IntoIterator<Item = (F, V)>,
        F: Into<String>,
        V: Into<String>,
    {
        self.pending.push(PendingOp::Set {
            table: table.clone(),
            key: key.to_owned(),
            fields: fields
                .into_iter()
                .map(|(f, v)| (f.into(), v.into()))
                .collect(),
        });
    }

    /// Queues a DEL of `table`/`key`.
    pub fn del(&mut self, table: &TableName, key: &str) {
        self.pending.push(PendingOp::Del {
            table: table.clone(),
            key: key.to_owned(),
        });
    }

    /// Number of queued operations.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Drops all queued operations without sending them.
    pub fn discard(&mut self) {
        self.pending.clear();
    }

    /// Total channel messages published by successful flushes so far.
    pub fn published(&self) -> u64 {
        self.published
    }

    /// Sends all queued operations atomically; returns the round trips used (0 if nothing
    /// was queued). On error the operations stay queued.
    pub fn flush(&mut self) -> Result<usize> {
        if self.pending.is_empty() {
            return Ok(0);
        }
        let db = self.conn.db();
        let mut keys: Vec<String> = Vec::new();
        let mut args: Vec<String> = vec![UPDATE_NOTIFICATION.to_owned()];
        for op in &self.pending {
            match op {
                PendingOp::Set { table, key, fields } => {
                    keys.push(table.channel(db));
                    keys.push(table.key_set());
                    keys.push(table.staging_key(db, key));
                    args.push("S".to_owned());
                    args.push(key.clone());
                    args.push(fields.len().to_string());
                    for (f, v) in fields {
                        args.push(f.clone());
                        args.push(v.clone());
                    }
                }
                PendingOp::Del { table, key } => {
                    keys.push(table.channel(db));
                    keys.push(table.key_set());
                    keys.push(table.staging_key(db, key));
                    keys.push(table.del_set());
                    args.push("D".to_owned());
                    args.push(key.clone());
                }
            }
        }
        let before = self.conn.round_trips();
        let reply = self.script.invoke(&mut self.conn, &keys, &args)?;
        let used = usize::try_from(self.conn.round_trips() - before).unwrap_or(usize::MAX);
        match reply {
            redis::Value::Int(n) => {
                self.published += u64::try_from(n).unwrap_or(0);
                self.pending.clear();
                Ok(used)
            }
            other => Err(SwssError::UnexpectedReply {
                op: "EVALSHA producer flush",
                detail: format!("{other:?}"),
            }),
        }
    }
}
