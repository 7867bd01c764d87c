//! Connections to one SONiC database.
//!
//! Invariants:
//! - A [`DbConnection`] is bound to one [`Db`]; the database is selected during the
//!   connection handshake and never changed afterwards (scripts that `SELECT` other
//!   databases do not affect the caller's connection on Redis ≥ 7).
//! - Every socket read and write has a timeout ([`Endpoint::timeout`]); no call blocks
//!   forever.
//! - After a connection failure the connection is dropped and re-established lazily on the
//!   next request. A request that failed because the connection was found broken (not
//!   because of a timeout) is retried once on a fresh connection; this is safe because every
//!   request this module family sends is idempotent in effect.
//! - [`DbConnection::round_trips`] counts every request or pipeline sent (one write
//!   followed by reading all of its replies), including attempts that failed; the
//!   connection handshake (TCP connect, `SELECT`, client info) is not counted.

use std::path::PathBuf;
use std::time::Duration;

use redis::{ConnectionAddr, ConnectionInfo, ConnectionLike, RedisConnectionInfo, Value};

use super::error::{is_connection_failure, Result, SwssError};
use super::keys::Db;

/// Default socket timeout of an [`Endpoint`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where the Redis server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// TCP host and port.
    Tcp {
        /// Host name or IP address.
        host: String,
        /// TCP port.
        port: u16,
    },
    /// Unix-domain socket path (SONiC: `/var/run/redis/redis.sock`).
    Unix(PathBuf),
}

/// A Redis server address plus the socket timeout used for every connection to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The server address.
    pub address: Address,
    /// Connect, read and write timeout of every socket operation.
    pub timeout: Duration,
}

impl Endpoint {
    /// A TCP endpoint with the [`DEFAULT_TIMEOUT`].
    pub fn tcp(host: impl Into<String>, port: u16) -> Self {
        Endpoint {
            address: Address::Tcp {
                host: host.into(),
                port,
            },
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// A Unix-socket endpoint with the [`DEFAULT_TIMEOUT`].
    pub fn unix(path: impl Into<PathBuf>) -> Self {
        Endpoint {
            address: Address::Unix(path.into()),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same endpoint with another timeout (zero is replaced by one millisecond).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// A client-library handle for database `db` of this endpoint (does no I/O).
    pub(crate) fn client(&self, db: Db) -> Result<redis::Client> {
        let addr = match &self.address {
            Address::Tcp { host, port } => ConnectionAddr::Tcp(host.clone(), *port),
            Address::Unix(path) => ConnectionAddr::Unix(path.clone()),
        };
        let info = ConnectionInfo {
            addr,
            redis: RedisConnectionInfo {
                db: i64::from(db.id()),
                ..Default::default()
            },
        };
        redis::Client::open(info).map_err(|e| SwssError::redis("open", e))
    }

    /// Opens a connection with this endpoint's timeouts.
    pub(crate) fn connect(&self, client: &redis::Client) -> Result<redis::Connection> {
        let conn = client
            .get_connection_with_timeout(self.timeout)
            .map_err(|e| SwssError::redis("connect", e))?;
        conn.set_read_timeout(Some(self.timeout))
            .and_then(|()| conn.set_write_timeout(Some(self.timeout)))
            .map_err(|e| SwssError::redis("connect", e))?;
        Ok(conn)
    }
}

/// A synchronous connection to one database, with lazy reconnection and a round-trip
/// counter (see the module invariants).
pub struct DbConnection {
    endpoint: Endpoint,
    db: Db,
    client: redis::Client,
    conn: Option<redis::Connection>,
    round_trips: u64,
    reconnects: u64,
}

impl std::fmt::Debug for DbConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbConnection")
            .field("endpoint", &self.endpoint)
            .field("db", &self.db)
            .field("connected", &self.conn.is_some())
            .field("round_trips", &self.round_trips)
            .finish()
    }
}

impl DbConnection {
    /// Connects to database `db` of `endpoint` (eagerly, so an unreachable server is
    /// reported here).
    pub fn open(endpoint: &Endpoint, db: Db) -> Result<Self> {
        let client = endpoint.client(db)?;
        let conn = endpoint.connect(&client)?;
        Ok(DbConnection {
            endpoint: endpoint.clone(),
            db,
            client,
            conn: Some(conn),
            round_trips: 0,
            reconnects: 0,
        })
    }

    /// The database this connection is bound to.
    pub fn db(&self) -> Db {
        self.db
    }

    /// The endpoint this connection talks to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Whether a socket is currently held (false after a connection failure, until the
    /// next request reconnects).
    pub fn is_connected(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| c.is_open())
    }

    /// Total requests/pipelines sent so far (see the module invariants).
    pub fn round_trips(&self) -> u64 {
        self.round_trips
    }

    /// How many times the connection was re-established after the initial connect.
    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }

    /// Drops the current socket (if any) and connects again now.
    pub fn reconnect(&mut self) -> Result<()> {
        self.conn = None;
        let conn = self.endpoint.connect(&self.client)?;
        self.conn = Some(conn);
        self.reconnects += 1;
        Ok(())
    }

    /// Sends `PING` (1 round trip).
    pub fn ping(&mut self) -> Result<()> {
        let reply: String = self.query("PING", &redis::cmd("PING"))?;
        if reply == "PONG" {
            Ok(())
        } else {
            Err(SwssError::UnexpectedReply {
                op: "PING",
                detail: reply,
            })
        }
    }

    /// Sends one command and converts its reply (1 round trip, 2 if the connection had to
    /// be replaced). An error reply becomes [`SwssError::Redis`].
    ///
    /// Like every request of this type, the command is re-sent once on a fresh connection
    /// if the current one turns out to be broken, so it may execute twice: use it only for
    /// commands that are idempotent in effect (reads, `HSET`, `DEL`, `CONFIG SET`, …).
    pub fn query<T: redis::FromRedisValue>(
        &mut self,
        op: &'static str,
        cmd: &redis::Cmd,
    ) -> Result<T> {
        self.run(op, |c| cmd.query(c))
    }

    /// Sends a pipeline (or `MULTI`/`EXEC` transaction if `pipe` is atomic) in one write
    /// and converts the replies; the first error reply becomes [`SwssError::Redis`].
    pub fn query_pipeline<T: redis::FromRedisValue>(
        &mut self,
        op: &'static str,
        pipe: &redis::Pipeline,
    ) -> Result<T> {
        self.run(op, |c| pipe.query(c))
    }

    /// Sends `count` non-transactional commands packed in `pipe` in one write and returns
    /// every reply, error replies included in-band as [`Value::ServerError`].
    ///
    /// `count` must equal the number of commands in `pipe`, none of them ignored.
    pub fn pipeline_values(
        &mut self,
        op: &'static str,
        pipe: &redis::Pipeline,
        count: usize,
    ) -> Result<Vec<Value>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let packed = pipe.get_packed_pipeline();
        self.run(op, |c| c.req_packed_commands(&packed, 0, count))
    }

    /// Runs `f` on a live connection, applying the reconnection rules of the module docs.
    fn run<T>(
        &mut self,
        op: &'static str,
        mut f: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T> {
        let mut last = None;
        for attempt in 0..2 {
            let conn = match self.conn.take().filter(|c| c.is_open()) {
                Some(c) => self.conn.insert(c),
                None => {
                    // The initial connection is made by `open`, so this is a reconnect.
                    self.reconnects += 1;
                    let c = self.endpoint.connect(&self.client)?;
                    self.conn.insert(c)
                }
            };
            self.round_trips += 1;
            match f(conn) {
                Ok(v) => return Ok(v),
                Err(e) if is_connection_failure(&e) => {
                    self.conn = None;
                    let retry = attempt == 0 && !e.is_timeout();
                    last = Some(e);
                    if !retry {
                        break;
                    }
                }
                Err(e) => return Err(SwssError::redis(op, e)),
            }
        }
        match last {
            Some(e) => Err(SwssError::redis(op, e)),
            None => Err(SwssError::UnexpectedReply {
                op,
                detail: "no attempt made".to_owned(),
            }),
        }
    }

    /// Makes sure the server publishes the keyspace notifications a
    /// [`KeyspaceSubscriber`](super::KeyspaceSubscriber) needs (`K` plus the generic and
    /// hash classes, i.e. `A` or both `g` and `h`). If not, adds the missing letters of
    /// SONiC's `AKE` to the current `notify-keyspace-events` value.
    ///
    /// Returns whether the configuration was changed (1 round trip, 2 if changed).
    pub fn ensure_keyspace_events(&mut self) -> Result<bool> {
        let reply: Vec<String> = self.query(
            "CONFIG GET notify-keyspace-events",
            redis::cmd("CONFIG")
                .arg("GET")
                .arg("notify-keyspace-events"),
        )?;
        let current = reply.get(1).cloned().unwrap_or_default();
        if keyspace_flags_sufficient(&current) {
            return Ok(false);
        }
        let mut wanted = current.clone();
        for c in "AKE".chars() {
            if !wanted.contains(c) {
                wanted.push(c);
            }
        }
        let _: () = self.query(
            "CONFIG SET notify-keyspace-events",
            redis::cmd("CONFIG")
                .arg("SET")
                .arg("notify-keyspace-events")
                .arg(&wanted),
        )?;
        Ok(true)
    }
}

/// Whether `notify-keyspace-events` flags include keyspace events for generic and hash
/// commands.
pub(crate) fn keyspace_flags_sufficient(flags: &str) -> bool {
    flags.contains('K') && (flags.contains('A') || (flags.contains('g') && flags.contains('h')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyspace_flags() {
        assert!(keyspace_flags_sufficient("AKE"));
        assert!(keyspace_flags_sufficient("Kgh"));
        assert!(!keyspace_flags_sufficient(""));
        assert!(!keyspace_flags_sufficient("AE"));
        assert!(!keyspace_flags_sufficient("Kh"));
    }
}
