//! The error type of the swss layer.

use std::path::PathBuf;
use std::time::Duration;

use super::keys::Db;

/// Errors of the swss-common table protocol layer.
///
/// [`SwssError::is_connection_error`] tells whether an error means "the Redis server is
/// unreachable or the connection broke": such errors are transient; the operation that
/// failed may be retried once the server is back (every operation of this module is
/// idempotent in effect, see the module docs).
#[derive(Debug, thiserror::Error)]
pub enum SwssError {
    /// A table name was empty or contained a character that cannot appear in one
    /// (a key separator `|` or `:`, a Redis glob character `*?[]\`, or whitespace), or an
    /// APPL_DB table name did not end in `_TABLE` where a CONFIG_DB name had to be derived
    /// from it.
    #[error("invalid table name {name:?}: {reason}")]
    InvalidTableName {
        /// The rejected name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },

    /// A Redis key did not have the form `<TABLE><separator><object key>` of its database.
    #[error("malformed {db} key {key:?}: expected <TABLE>{sep}<object key>", sep = db.separator())]
    MalformedKey {
        /// The database whose separator was expected.
        db: Db,
        /// The offending Redis key.
        key: String,
    },

    /// A Redis command, pipeline or connection attempt failed: I/O error, connection
    /// refused or dropped, timeout, or an error reply from the server (including a runtime
    /// error raised by a Lua script).
    #[error("redis {op} failed: {source}")]
    Redis {
        /// What was being done (`"connect"`, `"EVALSHA"`, `"HGETALL pipeline"`, …).
        op: &'static str,
        /// The client library's error.
        #[source]
        source: redis::RedisError,
    },

    /// The server answered with a reply of an unexpected shape (e.g. a Lua script that
    /// returned an integer where an array of strings was expected).
    #[error("unexpected reply to {op}: {detail}")]
    UnexpectedReply {
        /// The command whose reply was unexpected.
        op: &'static str,
        /// A description of what was received.
        detail: String,
    },

    /// The keyspace-notification subscription (or the connection used to read hashes on
    /// notification) was lost; events may have been missed. Call
    /// [`KeyspaceSubscriber::resync`](super::KeyspaceSubscriber::resync).
    #[error("keyspace subscription lost ({detail}); resync required")]
    SubscriptionLost {
        /// Why the subscription was considered lost.
        detail: String,
    },

    /// Waiting for the server (e.g. for a subscription confirmation) took too long.
    #[error("timed out after {waited:?} waiting for {what}")]
    Timeout {
        /// What was being waited for.
        what: &'static str,
        /// How long was waited.
        waited: Duration,
    },

    /// A Lua plugin file could not be read.
    #[error("cannot read Lua plugin {path}: {source}")]
    PluginFile {
        /// The plugin file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl SwssError {
    /// Whether this error means the server was unreachable or the connection broke (as
    /// opposed to a malformed request or an error reply). Also true for
    /// [`SwssError::SubscriptionLost`].
    pub fn is_connection_error(&self) -> bool {
        match self {
            SwssError::Redis { source, .. } => is_connection_failure(source),
            SwssError::SubscriptionLost { .. } => true,
            _ => false,
        }
    }

    /// Whether this is a server error reply of kind `NOSCRIPT` (script not in the cache).
    pub fn is_noscript(&self) -> bool {
        match self {
            SwssError::Redis { source, .. } => source.kind() == redis::ErrorKind::NoScriptError,
            _ => false,
        }
    }

    pub(crate) fn redis(op: &'static str, source: redis::RedisError) -> Self {
        SwssError::Redis { op, source }
    }
}

/// Whether a client-library error means the connection is unusable (I/O failure, refused,
/// dropped, timed out).
pub(crate) fn is_connection_failure(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.is_unrecoverable_error()
}

/// Result alias of the swss layer.
pub type Result<T, E = SwssError> = std::result::Result<T, E>;
