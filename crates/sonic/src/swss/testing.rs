//! Test support (not used by the library itself): a throw-away `redis-server` on a free
//! loopback port, and a bounded wait helper.
//!
//! Invariants:
//! - The server binds only `127.0.0.1` (plus a Unix socket in its directory), has
//!   persistence disabled (`--save ''`, `--appendonly no`) and runs in its own temporary
//!   directory, removed on drop.
//! - The port is chosen by binding a listener to `127.0.0.1:0` and releasing it; if the
//!   server then fails to start (port taken meanwhile) another port is tried, at most
//!   [`START_ATTEMPTS`] times. [`RedisServer::restart`] reuses the same port.
//! - Every wait is bounded ([`READY_TIMEOUT`]); the process is killed (SIGKILL) and reaped
//!   on drop, on restart and on a failed start.
//! - The binary is `$HEADROOM_REDIS_SERVER` if set, else `/usr/bin/redis-server` if it
//!   exists, else `redis-server` from `PATH`.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::conn::Endpoint;

/// How many ports [`RedisServer::start`] tries.
pub const START_ATTEMPTS: usize = 5;

/// How long to wait for the server to answer `PING` after spawning it.
pub const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// Errors of the test harness.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// An I/O operation (temp dir, free-port probe, spawning) failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The server did not answer `PING` in time, or exited early, on every attempt.
    #[error("redis-server did not start: {detail}")]
    NotReady {
        /// The last failure, with the tail of the server log.
        detail: String,
    },
}

static DIR_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A `redis-server` child process (see the module docs).
#[derive(Debug)]
pub struct RedisServer {
    binary: PathBuf,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
    restarts: u32,
}

impl RedisServer {
    /// The `redis-server` binary that would be used (see the module docs).
    pub fn binary() -> PathBuf {
        if let Some(p) = std::env::var_os("HEADROOM_REDIS_SERVER") {
            return PathBuf::from(p);
        }
        let usr = Path::new("/usr/bin/redis-server");
        if usr.exists() {
            usr.to_owned()
        } else {
            PathBuf::from("redis-server")
        }
    }

    /// Starts a server on a free loopback port and waits until it answers `PING`.
    pub fn start() -> Result<Self, HarnessError> {
        let dir = std::env::temp_dir().join(format!(
            "headroom-redis-{}-{}",
            std::process::id(),
            DIR_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|source| HarnessError::Io {
            what: "create temp dir",
            source,
        })?;
        let mut server = RedisServer {
            binary: Self::binary(),
            dir,
            port: 0,
            child: None,
            restarts: 0,
        };
        let mut last = String::new();
        for _ in 0..START_ATTEMPTS {
            server.port = free_port()?;
            match server.spawn() {
                Ok(()) => return Ok(server),
                Err(HarnessError::NotReady { detail }) => last = detail,
                Err(e) => return Err(e),
            }
        }
        Err(HarnessError::NotReady { detail: last })
    }

    /// The TCP port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// An [`Endpoint`] for this server (2 s timeout, enough for loopback).
    pub fn endpoint(&self) -> Endpoint {
        Endpoint::tcp("127.0.0.1", self.port).with_timeout(Duration::from_secs(2))
    }

    /// The Unix socket the server also listens on (`redis.sock` in [`RedisServer::dir`]).
    pub fn unix_socket(&self) -> PathBuf {
        self.dir.join("redis.sock")
    }

    /// The temporary directory (working dir, Unix socket, log file `redis.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many times [`RedisServer::restart`] succeeded.
    pub fn restarts(&self) -> u32 {
        self.restarts
    }

    /// Kills the server (SIGKILL, as a crash would) and reaps it. Idempotent.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server and starts a fresh one (empty, default configuration) on the same
    /// port, retrying for up to [`READY_TIMEOUT`] while the port is not yet free.
    pub fn restart(&mut self) -> Result<(), HarnessError> {
        self.kill();
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            match self.spawn() {
                Ok(()) => {
                    self.restarts += 1;
                    return Ok(());
                }
                Err(HarnessError::NotReady { detail }) if Instant::now() >= deadline => {
                    return Err(HarnessError::NotReady { detail })
                }
                Err(HarnessError::NotReady { .. }) => std::thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(e),
            }
        }
    }

    /// Spawns the process on `self.port` and waits for `PING`; kills it on failure.
    fn spawn(&mut self) -> Result<(), HarnessError> {
        let log = self.dir.join("redis.log");
        let child = Command::new(&self.binary)
            .arg("--port")
            .arg(self.port.to_string())
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--databases", "16"])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--unixsocket")
            .arg(self.unix_socket())
            .args(["--unixsocketperm", "700"])
            .arg("--logfile")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| HarnessError::Io {
                what: "spawn redis-server",
                source,
            })?;
        self.child = Some(child);
        let deadline = Instant::now() + READY_TIMEOUT;
        let failure = loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    break format!("exited with {status}");
                }
            }
            if ping(self.port) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                break format!("no PONG within {READY_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        self.kill();
        Err(HarnessError::NotReady {
            detail: format!("port {}: {failure}; log: {}", self.port, log_tail(&log)),
        })
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A currently free loopback port (bound then released).
fn free_port() -> Result<u16, HarnessError> {
    let listener =
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|source| HarnessError::Io {
            what: "probe free port",
            source,
        })?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|source| HarnessError::Io {
            what: "probe free port",
            source,
        })
}

/// Whether a server on the loopback `port` answers `PING` with `+PONG` (inline command,
/// 200 ms timeouts).
fn ping(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let timeout = Duration::from_millis(200);
    let Ok(mut s) = TcpStream::connect_timeout(&addr, timeout) else {
        return false;
    };
    if s.set_read_timeout(Some(timeout)).is_err() || s.set_write_timeout(Some(timeout)).is_err() {
        return false;
    }
    if s.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

/// The last lines of the server log, for error messages.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

/// Calls `probe` every `step` until it returns `Some`, for at most `limit` (and at most
/// `limit / step + 1` calls); returns the value or `None` on timeout.
pub fn wait_for<T>(
    limit: Duration,
    step: Duration,
    mut probe: impl FnMut() -> Option<T>,
) -> Option<T> {
    let start = Instant::now();
    let max_calls = limit.as_nanos() / step.as_nanos().max(1) + 1;
    for _ in 0..max_calls {
        if let Some(v) = probe() {
            return Some(v);
        }
        if start.elapsed() >= limit {
            break;
        }
        std::thread::sleep(step);
    }
    None
}
