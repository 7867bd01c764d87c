//! A Lua script cached in the server and invoked with `EVALSHA`.
//!
//! Invariants:
//! - The SHA1 is computed locally from the source; `SCRIPT LOAD` replies are checked
//!   against it.
//! - When the script is not known to be loaded (first use, or after a `NOSCRIPT` reply, e.g.
//!   after a server restart or `SCRIPT FLUSH`), `SCRIPT LOAD` and `EVALSHA` are pipelined
//!   in one round trip. So an invocation costs 1 round trip, or 2 when the cache was lost
//!   behind our back (`EVALSHA` → `NOSCRIPT`, then the pipelined pair).

use redis::Value;

use super::conn::DbConnection;
use super::error::{Result, SwssError};

/// A Lua script and whether it is believed to be in the server's script cache.
#[derive(Debug, Clone)]
pub(crate) struct CachedScript {
    source: String,
    sha: String,
    loaded: bool,
}

impl CachedScript {
    /// A script with the given source (not loaded yet).
    pub(crate) fn new(source: impl Into<String>) -> Self {
        let source = source.into();
        let sha = redis::Script::new(&source).get_hash().to_owned();
        CachedScript {
            source,
            sha,
            loaded: false,
        }
    }

    /// The script source.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    /// The lowercase hex SHA1 of the source.
    pub(crate) fn sha(&self) -> &str {
        &self.sha
    }

    /// `SCRIPT LOAD` now (1 round trip).
    pub(crate) fn load(&mut self, conn: &mut DbConnection) -> Result<()> {
        let sha: String = conn.query(
            "SCRIPT LOAD",
            redis::cmd("SCRIPT").arg("LOAD").arg(&self.source),
        )?;
        self.check_sha(&sha)?;
        self.loaded = true;
        Ok(())
    }

    fn check_sha(&self, sha: &str) -> Result<()> {
        if sha.eq_ignore_ascii_case(&self.sha) {
            Ok(())
        } else {
            Err(SwssError::UnexpectedReply {
                op: "SCRIPT LOAD",
                detail: format!("sha {sha}, expected {}", self.sha),
            })
        }
    }

    /// Runs the script with `keys` and `args` (see the module invariants for round trips).
    /// A Lua runtime error is returned as [`SwssError::Redis`].
    pub(crate) fn invoke<K, A>(
        &mut self,
        conn: &mut DbConnection,
        keys: &[K],
        args: &[A],
    ) -> Result<Value>
    where
        K: redis::ToRedisArgs,
        A: redis::ToRedisArgs,
    {
        let mut evalsha = redis::cmd("EVALSHA");
        evalsha.arg(&self.sha).arg(keys.len()).arg(keys).arg(args);
        if self.loaded {
            match conn.query::<Value>("EVALSHA", &evalsha) {
                Err(e) if e.is_noscript() => self.loaded = false,
                other => return other,
            }
        }
        let mut pipe = redis::pipe();
        pipe.cmd("SCRIPT").arg("LOAD").arg(&self.source);
        pipe.add_command(evalsha);
        let mut replies = conn
            .pipeline_values("SCRIPT LOAD + EVALSHA", &pipe, 2)?
            .into_iter();
        let (Some(load), Some(result)) = (replies.next(), replies.next()) else {
            return Err(SwssError::UnexpectedReply {
                op: "SCRIPT LOAD + EVALSHA",
                detail: "fewer than two replies".to_owned(),
            });
        };
        let sha: String = redis::from_owned_redis_value(
            load.extract_error()
                .map_err(|e| SwssError::redis("SCRIPT LOAD", e))?,
        )
        .map_err(|e| SwssError::redis("SCRIPT LOAD", e))?;
        self.check_sha(&sha)?;
        self.loaded = true;
        result
            .extract_error()
            .map_err(|e| SwssError::redis("EVALSHA", e))
    }
}
