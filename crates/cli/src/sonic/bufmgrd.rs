//! `headroom sonic bufmgrd`: the buffer manager daemon on a SONiC Redis
//! ([`headroom_sonic::daemon`]): reads CONFIG_DB / STATE_DB through keyspace notifications,
//! writes APPL_DB with the ProducerStateTable protocol (for an unmodified orchagent) and the
//! STATE_DB mirrors, survives Redis restarts, and stops cleanly on SIGTERM / SIGINT.
//!
//! `--bench` runs the daemon benchmark on a throw-away `redis-server` instead.
//!
//! Errors (bad arguments, unreadable files, no ASIC table) are one line and exit code 2;
//! Redis being unreachable is not an error: the daemon retries with backoff.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use headroom_sonic::bufmgr::{HeadroomPlugin, Options, ZeroProfiles};
use headroom_sonic::daemon::bench::{self, BenchOptions};
use headroom_sonic::daemon::plugins::LuaHeadroom;
use headroom_sonic::daemon::{endpoint_from_url, Daemon, DaemonOptions};
use headroom_sonic::swss::{Db, DbConnection, Endpoint, Table, TableName};
use headroom_sonic::tables::raw::{self, RawDb};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::{fail, ModelName, Result, SonicError};

/// Arguments of `headroom sonic bufmgrd`.
#[derive(Args, Debug)]
#[command(
    before_long_help = "Run the buffer manager daemon (SONiC buffermgrd, dynamic mode) on a SONiC \
Redis: subscribes to CONFIG_DB (db 4) and STATE_DB (db 6) with keyspace notifications, \
computes lossless headroom profiles and pool sizes, and writes APPL_DB (db 0) with the \
ProducerStateTable protocol orchagent consumes, plus the STATE_DB mirrors of pools and \
profiles. Event-driven: a CONFIG_DB change is reflected in APPL_DB within milliseconds. \
If Redis restarts or the connection drops, it reconnects with backoff, resubscribes and \
reconciles (writing only what differs). Logs go to stderr (tracing); SIGTERM or SIGINT \
stops it cleanly.",
    after_help = "Examples:\n  headroom sonic bufmgrd --redis redis://127.0.0.1:6379 \
--asic-table /etc/sonic/asic_table.json --zero-profiles mellanox\n  headroom sonic bufmgrd \
--redis unix:///var/run/redis/redis.sock\n  headroom sonic bufmgrd --bench\n\nExit codes: 0 \
stopped by a signal (or benchmark done), 2 invalid arguments or input files."
)]
pub struct BufmgrdArgs {
    /// Redis server: `redis://HOST[:PORT]` (port 6379 by default) or `unix:///PATH`.
    #[arg(long, value_name = "URL", required_unless_present = "bench")]
    redis: Option<String>,
    /// buffermgrd's `-a` file: `{"ASIC_TABLE:<NAME>": {...}}`, written to STATE_DB at
    /// start. Without it, the `ASIC_TABLE` already in STATE_DB is used.
    #[arg(long, value_name = "FILE")]
    asic_table: Option<PathBuf>,
    /// buffermgrd's `-p` file: `PERIPHERAL_TABLE:<model>` / `PORT_PERIPHERAL_TABLE:<port|global>`
    /// entries (gearbox delay).
    #[arg(long, value_name = "FILE")]
    peripheral_table: Option<PathBuf>,
    /// Headroom model for the dynamic lossless profiles.
    #[arg(long, value_enum, default_value_t = ModelName::Mellanox)]
    model: ModelName,
    /// Zero profiles for admin-down ports (buffermgrd's `-z`): a JSON file in SONiC's
    /// `zero_profiles.json` format, or `mellanox` for the built-in Mellanox ones.
    #[arg(long, value_name = "FILE|mellanox")]
    zero_profiles: Option<String>,
    /// Directory with a vendor headroom plugin (`buffer_headroom_<vendor>.lua`, exactly one),
    /// run in Redis with SCRIPT LOAD + EVALSHA instead of the native model (`--model` still
    /// sets the profile naming; pool sizes and the headroom check stay native).
    #[arg(long, value_name = "DIR")]
    lua_plugins: Option<PathBuf>,
    /// Warm start: APPL_DB survived; it is read back and pools are written once.
    #[arg(long)]
    warm: bool,
    /// Do not wait for orchagent's APPL_STATE_DB confirmations when the shared headroom
    /// pool is toggled (sonic-buffer.md §7.9).
    #[arg(long)]
    no_orchagent_wait: bool,
    /// Wait for the 10 s periodic timer (as buffermgrd does) before the first computation
    /// and after PortInitDone, instead of running it at once.
    #[arg(long)]
    no_fast_start: bool,
    /// Timeout of every Redis socket operation, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    timeout_ms: u64,
    /// Log filter (tracing `EnvFilter` syntax, e.g. `info`, `bufmgrd=debug`).
    #[arg(long, value_name = "FILTER", default_value = "info")]
    log: String,
    /// Run the benchmark (64-port Spectrum-4 switch with 3 lossless PGs per port, startup
    /// and cable-length changes) on a throw-away redis-server, print the figures and exit.
    #[arg(long)]
    bench: bool,
    /// Benchmark: number of cable-length changes.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    bench_changes: usize,
    /// Benchmark: number of ports.
    #[arg(long, value_name = "N", default_value_t = 64)]
    bench_ports: usize,
}

/// Runs `headroom sonic bufmgrd`.
pub fn run(a: &BufmgrdArgs) -> Result<ExitCode> {
    let filter = tracing_subscriber::EnvFilter::try_new(&a.log)
        .map_err(|e| SonicError::new(format!("--log {:?}: {e}", a.log)))?;
    // Another subscriber may already be installed (tests); keep it then.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, not in a log file or a pipe.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    if a.bench {
        if a.bench_ports == 0 || a.bench_changes == 0 {
            fail!("--bench-ports and --bench-changes must be at least 1");
        }
        let report = bench::run(BenchOptions {
            ports: a.bench_ports,
            changes: a.bench_changes,
            ..BenchOptions::default()
        })
        .map_err(|e| SonicError::new(format!("benchmark: {e}")))?;
        outln!("{report}");
        return Ok(ExitCode::SUCCESS);
    }
    let Some(url) = &a.redis else {
        fail!("--redis URL is required");
    };
    let endpoint = endpoint_from_url(url)
        .map_err(|e| SonicError::new(e.to_string()))?
        .with_timeout(std::time::Duration::from_millis(a.timeout_ms.max(1)));
    let model = a.model.model();
    let mut hardware = RawDb::new();
    for p in [&a.asic_table, &a.peripheral_table].into_iter().flatten() {
        raw::merge(&mut hardware, &read_flat(p)?);
    }
    if a.asic_table.is_none() {
        raw::merge(&mut hardware, &hardware_from_state_db(&endpoint, url)?);
    }
    let zero_profiles = match a.zero_profiles.as_deref() {
        None => None,
        Some("mellanox") => Some(ZeroProfiles::mellanox()),
        Some(path) => {
            let text = super::input::read_text(Path::new(path))?;
            Some(
                ZeroProfiles::from_json(&text)
                    .map_err(|e| SonicError::new(format!("{path}: {e}")))?,
            )
        }
    };
    let headroom_plugin: Option<Arc<dyn HeadroomPlugin>> = match &a.lua_plugins {
        Some(dir) => {
            let p = LuaHeadroom::from_dir(&endpoint, dir)
                .map_err(|e| SonicError::new(format!("--lua-plugins: {e}")))?;
            Some(Arc::new(p))
        }
        None => None,
    };
    // Profile naming follows the ASIC's vendor, as `sonic plan` does (not the model).
    let mellanox_naming = hardware
        .get(headroom_sonic::tables::state::names::ASIC_TABLE)
        .is_some_and(|t| {
            t.keys()
                .any(|k| headroom_sonic::naming::is_mellanox_asic(k))
        });
    let options = Options {
        mellanox_naming,
        model,
        warm_reboot: a.warm,
        hardware_tables: hardware,
        zero_profiles,
        wait_for_orchagent: !a.no_orchagent_wait,
        preserved_appl_db: RawDb::new(),
        start: std::time::Duration::ZERO,
        headroom_plugin,
    };
    let mut dopts = DaemonOptions::new(endpoint, options);
    dopts.fast_start = !a.no_fast_start;
    let daemon = Daemon::new(dopts).map_err(|e| SonicError::new(e.to_string()))?;
    let handle = daemon.handle();
    let mut signals = Signals::new([SIGTERM, SIGINT])
        .map_err(|e| SonicError::new(format!("cannot install signal handlers: {e}")))?;
    let signal_handle = signals.handle();
    let watcher = std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let name = if sig == SIGTERM { "SIGTERM" } else { "SIGINT" };
            tracing::info!(target: "bufmgrd", signal = name, "stopping on signal");
            handle.stop();
        }
    });
    let result = daemon.run();
    signal_handle.close();
    let _ = watcher.join();
    result.map_err(|e| SonicError::new(e.to_string()))?;
    Ok(ExitCode::SUCCESS)
}

/// Reads a flat (`TABLE:key`) JSON file, as buffermgrd's `-a`/`-p` files.
fn read_flat(path: &Path) -> Result<RawDb> {
    let text = super::input::read_text(path)?;
    raw::from_flat_json(&text, ':').map_err(|e| SonicError::new(format!("{}: {e}", path.display())))
}

/// The ASIC and peripheral tables already in STATE_DB (when no `--asic-table` is given).
fn hardware_from_state_db(endpoint: &Endpoint, url: &str) -> Result<RawDb> {
    let err = |e: &dyn std::fmt::Display| {
        SonicError::new(format!(
            "no --asic-table given and STATE_DB at {url} cannot be read: {e}"
        ))
    };
    let mut table = Table::new(DbConnection::open(endpoint, Db::State).map_err(|e| err(&e))?);
    let names: Vec<TableName> = ["ASIC_TABLE", "PERIPHERAL_TABLE", "PORT_PERIPHERAL_TABLE"]
        .iter()
        .map(|n| TableName::new(*n))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| err(&e))?;
    let mut out = RawDb::new();
    for e in table.enumerate(&names).map_err(|e| err(&e))? {
        out.entry(e.table.as_str().to_owned())
            .or_default()
            .insert(e.key, e.fields);
    }
    if !out.contains_key("ASIC_TABLE") {
        fail!("no --asic-table given and STATE_DB at {url} has no ASIC_TABLE entry");
    }
    Ok(out)
}
