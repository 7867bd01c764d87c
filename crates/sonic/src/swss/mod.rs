//! The swss-common Redis table protocol: what SONiC's daemons use to talk through Redis,
//! re-implemented natively over the `redis` crate (synchronous API), so that a daemon in this
//! crate can stand in for buffermgrd next to an unmodified orchagent.
//!
//! Pieces:
//! - [`keys`]: database ids and separators (APPL 0 `:`, CONFIG 4 `|`, STATE 6 `|`,
//!   APPL_STATE 14 `:`), [`TableName`], Redis key ↔ (table, object key), CONFIG_DB ↔
//!   APPL_DB conversion (`BUFFER_PG|Ethernet0|3-4` ↔ `BUFFER_PG_TABLE:Ethernet0:3-4`), and the
//!   ProducerStateTable key names (`T_KEY_SET`, `T_DEL_SET`, `_T:key`, `T_CHANNEL@N`).
//! - [`DbConnection`]: a connection bound to one database, with socket timeouts, lazy
//!   reconnection and a round-trip counter.
//! - [`ProducerStateTable`]: writes APPL_DB exactly as swss-common's ProducerStateTable
//!   does (per operation `SADD` key set, `HSET` staging hash or `SADD` del set + `DEL`
//!   staging hash, `PUBLISH` when newly pending), all queued operations in one atomic script
//!   per flush.
//! - [`ConsumerStateTable`]: pops that output the way orchagent does.
//! - [`Table`]: plain hash-per-key reads/writes (STATE_DB mirrors, CONFIG_DB reads,
//!   enumeration).
//! - [`KeyspaceSubscriber`]: CONFIG_DB/STATE_DB subscription like SubscriberStateTable —
//!   initial enumeration, keyspace notifications resolved by re-reading the hash, connection
//!   loss detection and resync.
//! - [`LuaPlugin`]: `SCRIPT LOAD`/`EVALSHA` plugins with `name:value` output parsing and
//!   reload on `NOSCRIPT`.
//! - [`testing`]: a throw-away `redis-server` for tests.
//!
//! Module-wide invariants:
//! - This is the only module of the crate that talks to Redis: the daemon (`crate::daemon`)
//!   performs its I/O through these types.
//! - No call blocks without a bound: every socket operation has the [`Endpoint`] timeout.
//! - Every write sequence this module sends is idempotent in effect, so an operation that
//!   failed on a connection error may simply be repeated (queued writes stay queued on
//!   error).
//! - Round trips per operation are documented on each type and observable through
//!   [`DbConnection::round_trips`].

pub mod conn;
pub mod consumer;
pub mod error;
pub mod keys;
pub mod plugin;
pub mod producer;
mod script;
pub mod subscriber;
pub mod table;
pub mod testing;

pub use conn::{Address, DbConnection, Endpoint};
pub use consumer::{ConsumerStateTable, KeyOpFields, Op};
pub use error::{Result, SwssError};
pub use keys::{appl_key_to_config, config_key_to_appl, Db, Fields, TableKey, TableName};
pub use plugin::{LuaPlugin, PluginEntry, PluginOutput};
pub use producer::ProducerStateTable;
pub use subscriber::{ChangeEvent, KeyspaceSubscriber, SubscriberOptions};
pub use table::{Table, TableEntry};
