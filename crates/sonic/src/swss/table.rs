//! Plain hash-per-key tables (swss-common `Table`): writes to STATE_DB (mirrors of pools
//! and profiles) and reads/enumeration of CONFIG_DB/STATE_DB.
//!
//! Layout: object `key` of table `T` is the Redis hash `T<sep>key` (`|` in CONFIG_DB and
//! STATE_DB). A hash with no fields does not exist in Redis.
//!
//! Invariants:
//! - Writes are queued and sent by [`Table::flush`] as one `MULTI`/`EXEC` transaction in a
//!   single write: 1 round trip, atomic, queue order preserved. On error the operations
//!   stay queued (re-sending is idempotent); note that Redis does not roll a transaction
//!   back when one of its commands fails at execution (e.g. `WRONGTYPE` because a key holds
//!   a string), so after such an error the other writes are applied and the caller should
//!   [`Table::discard`] the queue. Reads never see unflushed writes.
//! - [`Table::enumerate`] uses one pipelined `KEYS <T><sep>*` per table (1 round trip for
//!   all tables) and one pipelined `HGETALL` per key found (1 more round trip, skipped if
//!   nothing was found). Keys that vanish in between, and keys that are not hashes, are
//!   left out. Results are ordered by table (as given) then by object key.

use redis::Value;

use super::conn::DbConnection;
use super::error::{Result, SwssError};
use super::keys::{Db, Fields, TableName};

/// One row read from a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableEntry {
    /// The table.
    pub table: TableName,
    /// The object key.
    pub key: String,
    /// The hash fields (never empty).
    pub fields: Fields,
}

/// A queued write.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TableOp {
    /// `HSET` (merge); `replace` also deletes first.
    Set {
        redis_key: String,
        fields: Vec<(String, String)>,
        replace: bool,
    },
    /// `DEL`.
    Del { redis_key: String },
}

/// Reads and writes hash-per-key tables of one database (see the module docs).
#[derive(Debug)]
pub struct Table {
    conn: DbConnection,
    pending: Vec<TableOp>,
}

impl Table {
    /// A table accessor over `conn`.
    pub fn new(conn: DbConnection) -> Self {
        Table {
            conn,
            pending: Vec::new(),
        }
    }

    /// The database accessed.
    pub fn db(&self) -> Db {
        self.conn.db()
    }

    /// The underlying connection.
    pub fn connection(&mut self) -> &mut DbConnection {
        &mut self.conn
    }

    fn collect<I, F, V>(fields: I) -> Vec<(String, String)>
    where
        I: IntoIterator<Item = (F, V)>,
        F: Into<String>,
        V: Into<String>,
    {
        fields
            .into_iter()
            .map(|(f, v)| (f.into(), v.into()))
            .collect()
    }

    /// Queues an `HSET` of `fields` into `table`/`key` (existing other fields are kept).
    /// With no fields this is a no-op.
    pub fn set<I, F, V>(&mut self, table: &TableName, key: &str, fields: I)
    where
        I: IntoIterator<Item = (F, V)>,
        F: Into<String>,
        V: Into<String>,
    {
        self.pending.push(TableOp::Set {
            redis_key: self.conn.db().redis_key(table, key),
            fields: Self::collect(fields),
            replace: false,
        });
    }

    /// Queues a replacement of the whole hash `table`/`key` by `fields` (`DEL` + `HSET`,
    /// atomically within the flush). With no fields this deletes the key.
    pub fn replace<I, F, V>(&mut self, table: &TableName, key: &str, fields: I)
    where
        I: IntoIterator<Item = (F, V)>,
        F: Into<String>,
        V: Into<String>,
    {
        self.pending.push(TableOp::Set {
            redis_key: self.conn.db().redis_key(table, key),
            fields: Self::collect(fields),
            replace: true,
        });
    }

    /// Queues a `DEL` of `table`/`key`.
    pub fn del(&mut self, table: &TableName, key: &str) {
        self.pending.push(TableOp::Del {
            redis_key: self.conn.db().redis_key(table, key),
        });
    }

    /// Number of queued writes.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Drops all queued writes without sending them.
    pub fn discard(&mut self) {
        self.pending.clear();
    }

    /// Sends all queued writes in one `MULTI`/`EXEC`; returns the round trips used (0 if
    /// nothing was queued, 1 normally, 2 if the connection had to be replaced).
    pub fn flush(&mut self) -> Result<usize> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        let mut commands = 0usize;
        for op in &self.pending {
            match op {
                TableOp::Set {
                    redis_key,
                    fields,
                    replace,
                } => {
                    if *replace {
                        pipe.cmd("DEL").arg(redis_key).ignore();
                        commands += 1;
                    }
                    if !fields.is_empty() {
                        pipe.cmd("HSET").arg(redis_key);
                        for (f, v) in fields {
                            pipe.arg(f).arg(v);
                        }
                        pipe.ignore();
                        commands += 1;
                    }
                }
                TableOp::Del { redis_key } => {
                    pipe.cmd("DEL").arg(redis_key).ignore();
                    commands += 1;
                }
            }
        }
        if commands == 0 {
            self.pending.clear();
            return Ok(0);
        }
        let before = self.conn.round_trips();
        let _: () = self.conn.query_pipeline("MULTI/EXEC table flush", &pipe)?;
        self.pending.clear();
        Ok(usize::try_from(self.conn.round_trips() - before).unwrap_or(usize::MAX))
    }

    /// Reads `table`/`key` (`HGETALL`, 1 round trip); `None` if it does not exist.
    pub fn get(&mut self, table: &TableName, key: &str) -> Result<Option<Fields>> {
        let redis_key = self.conn.db().redis_key(table, key);
        let fields: Fields = self
            .conn
            .query("HGETALL", redis::cmd("HGETALL").arg(redis_key))?;
        Ok((!fields.is_empty()).then_some(fields))
    }

    /// Object keys of `table`, sorted (`KEYS <table><sep>*`, 1 round trip).
    pub fn keys(&mut self, table: &TableName) -> Result<Vec<String>> {
        Ok(list_keys(&mut self.conn, std::slice::from_ref(table))?
            .into_iter()
            .next()
            .unwrap_or_default())
    }

    /// All rows of `tables` (see the module docs for cost and ordering).
    pub fn enumerate(&mut self, tables: &[TableName]) -> Result<Vec<TableEntry>> {
        enumerate(&mut self.conn, tables)
    }
}

/// Sorted object keys of each of `tables` (one pipelined `KEYS` per table, 1 round trip).
pub(crate) fn list_keys(conn: &mut DbConnection, tables: &[TableName]) -> Result<Vec<Vec<String>>> {
    if tables.is_empty() {
        return Ok(Vec::new());
    }
    let db = conn.db();
    let mut pipe = redis::pipe();
    for t in tables {
        pipe.cmd("KEYS").arg(db.table_pattern(t));
    }
    let lists: Vec<Vec<String>> = conn.query_pipeline("KEYS pipeline", &pipe)?;
    if lists.len() != tables.len() {
        return Err(SwssError::UnexpectedReply {
            op: "KEYS pipeline",
            detail: format!("{} replies for {} tables", lists.len(), tables.len()),
        });
    }
    let mut out = Vec::with_capacity(tables.len());
    for (t, redis_keys) in tables.iter().zip(lists) {
        let mut keys: Vec<String> = redis_keys
            .into_iter()
            .filter_map(|k| match db.split_key(&k) {
                Ok((table, key)) if &table == t => Some(key),
                _ => None,
            })
            .collect();
        keys.sort();
        out.push(keys);
    }
    Ok(out)
}

/// Reads the hashes of `rows` with one pipelined `HGETALL` each (1 round trip, 0 if
/// `rows` is empty). Per row: `Some(fields)` if it is a non-empty hash, `None` if it does not
/// exist or is not a hash.
pub(crate) fn read_hashes(
    conn: &mut DbConnection,
    rows: &[(&TableName, &str)],
) -> Result<Vec<Option<Fields>>> {
    let db = conn.db();
    let mut pipe = redis::pipe();
    for (t, k) in rows {
        pipe.cmd("HGETALL").arg(db.redis_key(t, k));
    }
    let values = conn.pipeline_values("HGETALL pipeline", &pipe, rows.len())?;
    if values.len() != rows.len() {
        return Err(SwssError::UnexpectedReply {
            op: "HGETALL pipeline",
            detail: format!("{} replies for {} keys", values.len(), rows.len()),
        });
    }
    Ok(values
        .into_iter()
        .map(|v| match v {
            Value::ServerError(_) => None,
            v => redis::from_owned_redis_value::<Fields>(v)
                .ok()
                .filter(|f| !f.is_empty()),
        })
        .collect())
}

/// All rows of `tables` over `conn` (see [`Table::enumerate`]).
pub fn enumerate(conn: &mut DbConnection, tables: &[TableName]) -> Result<Vec<TableEntry>> {
    let keys = list_keys(conn, tables)?;
    let rows: Vec<(&TableName, &str)> = tables
        .iter()
        .zip(&keys)
        .flat_map(|(t, ks)| ks.iter().map(move |k| (t, k.as_str())))
        .collect();
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let hashes = read_hashes(conn, &rows)?;
    Ok(rows
        .into_iter()
        .zip(hashes)
        .filter_map(|((t, k), h)| {
            h.map(|fields| TableEntry {
                table: t.clone(),
                key: k.to_owned(),
                fields,
            })
        })
        .collect())
}
