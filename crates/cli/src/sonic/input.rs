//! Where the `sonic` commands read their tables from, and loading them into typed snapshots.
//!
//! File formats (sonic-buffer.md §1, §2):
//! - `--config-db`: CONFIG_DB in SONiC's nested `config_db.json` format
//!   (`{"TABLE": {"key": {"field": "value"}}}`), as `sonic-cfggen` and `config save` write it;
//! - `--asic-table`: buffermgrd's `-a` file, flat: `{"ASIC_TABLE:<NAME>": {...}}`;
//! - `--peripheral-table`: buffermgrd's `-p` file, flat:
//!   `{"PERIPHERAL_TABLE:<MODEL>": {"gearbox_delay": "400"}}` (and `PORT_PERIPHERAL_TABLE:…`);
//! - `--state-db`: STATE_DB, nested: `BUFFER_MAX_PARAM_TABLE` (`global.mmu_size`, per-port
//!   `max_headroom_size`, `max_priority_groups`, `max_queues`) and `PORT_TABLE`
//!   (`supported_speeds`). Without `mmu_size` the pool sizes fall back to
//!   `BUFFER_POOL|egress_lossless_pool.size`, as SONiC's pool plugin does.
//!
//! The ASIC and peripheral files are merged into STATE_DB, as buffermgrd writes them there at
//! start-up. Every error names the file it comes from. Files are read with the simulator's
//! bound for hand-written inputs (64 MiB).
//!
//! [`InputArgs::load`] (`plan`, `diff`, `show`) then applies SONiC's validation
//! ([`headroom_sonic::validate`]) to CONFIG_DB, as `config` does to the CONFIG_DB it writes:
//! no command accepts a configuration another refuses.
//!
//! With `--redis URL` ([`Source::Redis`], see [`super::redis`]) CONFIG_DB (database 4) and
//! STATE_DB (database 6) are read from a switch's Redis instead of `--config-db`/`--state-db`,
//! into the same dumps, and typed by the same code: a configuration gives the same result from
//! either backend. STATE_DB there already holds `ASIC_TABLE` (written by buffermgrd), so
//! `--asic-table` is optional; when given, the file's `ASIC_TABLE` (and `--peripheral-table`'s
//! gearbox tables) replace STATE_DB's.

use std::path::{Path, PathBuf};

use clap::Args;
use headroom_sonic::swss::Db;
use headroom_sonic::tables::config::ConfigDb;
use headroom_sonic::tables::raw::{self, RawDb};
use headroom_sonic::tables::state::{names as state_names, StateDb};

use super::redis::{RedisSource, BUFFERMGRD_STATE_TABLES, CONFIG_TABLES, STATE_TABLES};
use super::{fail, Result, SonicError};

/// Where CONFIG_DB and STATE_DB come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// JSON dumps on disk.
    File(FileSource),
    /// A switch's Redis (`--redis redis://host:6379`).
    Redis(RedisSource),
}

/// The JSON dumps of [`Source::File`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSource {
    /// CONFIG_DB, nested format.
    pub config_db: PathBuf,
    /// STATE_DB, nested format (optional).
    pub state_db: Option<PathBuf>,
}

/// The input options shared by `plan`, `diff` and `show`.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// CONFIG_DB in SONiC's nested config_db.json format.
    #[arg(long, value_name = "FILE", required_unless_present = "redis")]
    pub config_db: Option<PathBuf>,
    /// ASIC parameters: buffermgrd's `-a` file, `{"ASIC_TABLE:<NAME>": {...}}`.
    #[arg(long, value_name = "FILE")]
    pub asic_table: Option<PathBuf>,
    /// Gearbox parameters: buffermgrd's `-p` file, `{"PERIPHERAL_TABLE:<MODEL>": {...}}`.
    #[arg(long, value_name = "FILE")]
    pub peripheral_table: Option<PathBuf>,
    /// STATE_DB (nested): BUFFER_MAX_PARAM_TABLE (mmu_size, per-port limits), PORT_TABLE.
    #[arg(long, value_name = "FILE")]
    pub state_db: Option<PathBuf>,
    /// Read CONFIG_DB (db 4) and STATE_DB (db 6) from a switch's Redis instead:
    /// redis://HOST[:PORT] or unix:///PATH.
    #[arg(long, value_name = "URL", conflicts_with_all = ["config_db", "state_db"])]
    pub redis: Option<String>,
}

impl InputArgs {
    /// The data source these options name.
    pub fn source(&self) -> Result<Source> {
        match (&self.redis, &self.config_db) {
            (Some(url), _) => Ok(Source::Redis(RedisSource::parse(url)?)),
            (None, Some(c)) => Ok(Source::File(FileSource {
                config_db: c.clone(),
                state_db: self.state_db.clone(),
            })),
            (None, None) => fail!("--config-db FILE is required"),
        }
    }

    /// Loads the tables and validates CONFIG_DB ([`validate`]).
    pub fn load(&self) -> Result<Loaded> {
        let loaded = load(
            &self.source()?,
            self.asic_table.as_deref(),
            self.peripheral_table.as_deref(),
        )?;
        validate(&loaded.config, &loaded.state, &loaded.config_label)?;
        Ok(loaded)
    }
}

/// Typed snapshots of the inputs.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// CONFIG_DB.
    pub config: ConfigDb,
    /// CONFIG_DB untyped, as read (the buffer tables, for Redis).
    pub config_dump: RawDb,
    /// STATE_DB (dump + ASIC + peripheral files).
    pub state: StateDb,
    /// The STATE_DB tables buffermgrd itself writes at start-up (its `-a`/`-p` files),
    /// verbatim.
    pub buffermgrd_state: RawDb,
    /// How to name the CONFIG_DB in messages (its path, or `CONFIG_DB at <URL>`).
    pub config_label: String,
    /// The STATE_DB dump as read (`--state-db` file or Redis), before the ASIC and
    /// peripheral files are merged in; from Redis it includes buffermgrd's mirrors
    /// `BUFFER_POOL_TABLE` and `BUFFER_PROFILE_TABLE` (what is deployed).
    pub state_dump: RawDb,
    /// The Redis the tables were read from, if any.
    pub redis: Option<RedisSource>,
    /// The `--asic-table` file, if given (to name it when it holds no ASIC).
    pub asic_table: Option<PathBuf>,
}

/// Reads a file as text, refusing directories and files larger than the bound of
/// hand-written inputs (a mistaken `/dev/zero` would otherwise be read until memory ran out).
pub fn read_text(path: &Path) -> Result<String> {
    headroom_sim::input::read_text(path, headroom_sim::input::MAX_TEXT_BYTES)
        .map_err(|e| SonicError::new(format!("cannot read {}: {e}", path.display())))
}

/// Reads a nested-format JSON dump.
pub fn read_nested(path: &Path) -> Result<RawDb> {
    let text = read_text(path)?;
    raw::from_nested_json(&text).map_err(|e| SonicError::new(format!("{}: {e}", path.display())))
}

/// Reads a flat-format (`TABLE:key`) JSON file, as buffermgrd's `-a`/`-p` files.
pub fn read_flat(path: &Path) -> Result<RawDb> {
    let text = read_text(path)?;
    raw::from_flat_json(&text, ':').map_err(|e| SonicError::new(format!("{}: {e}", path.display())))
}

/// Types a CONFIG_DB dump; errors are prefixed with `label`.
pub fn parse_config(raw: &RawDb, label: &str) -> Result<ConfigDb> {
    ConfigDb::from_raw(raw).map_err(|e| SonicError::new(format!("{label}: {e}")))
}

/// SONiC's validation of a typed CONFIG_DB ([`headroom_sonic::validate`]: id ranges, bounds),
/// with STATE_DB's per-port limits; errors are prefixed with `label` (the CONFIG_DB holds the
/// bad values).
pub fn validate(config: &ConfigDb, state: &StateDb, label: &str) -> Result<()> {
    headroom_sonic::validate::validate(config, Some(state))
        .map_err(|e| SonicError::new(format!("{label}: {e}")))
}

/// Types one STATE_DB dump; errors are prefixed with `label`.
fn parse_state(raw: &RawDb, label: &str) -> Result<StateDb> {
    StateDb::from_raw(raw).map_err(|e| SonicError::new(format!("{label}: {e}")))
}

/// Loads CONFIG_DB and STATE_DB from `source`, merging the ASIC and peripheral files into
/// STATE_DB.
pub fn load(source: &Source, asic: Option<&Path>, peripheral: Option<&Path>) -> Result<Loaded> {
    let (config_dump, config, label, state_dump, redis) = match source {
        Source::File(files) => {
            let label = files.config_db.display().to_string();
            let config_dump = read_nested(&files.config_db)?;
            let config = parse_config(&config_dump, &label)?;
            let state_dump = match &files.state_db {
                Some(p) => {
                    let r = read_nested(p)?;
                    parse_state(&r, &p.display().to_string())?;
                    r
                }
                None => RawDb::new(),
            };
            (config_dump, config, label, state_dump, None)
        }
        Source::Redis(r) => {
            let label = r.config_label();
            let config_dump = r.read(Db::Config, &CONFIG_TABLES)?;
            let config = parse_config(&config_dump, &label)?;
            let state_dump = r.read(Db::State, &STATE_TABLES)?;
            parse_state(&state_dump, &format!("STATE_DB at {}", r.url))?;
            (config_dump, config, label, state_dump, Some(r.clone()))
        }
    };
    let mut base = state_dump.clone();
    if redis.is_some() {
        // The files stand in for what buffermgrd wrote: they replace STATE_DB's tables.
        if asic.is_some() {
            base.remove(state_names::ASIC_TABLE);
        }
        if peripheral.is_some() {
            base.remove(state_names::PERIPHERAL_TABLE);
            base.remove(state_names::PORT_PERIPHERAL_TABLE);
        }
    }
    let (state, mut buffermgrd_state) = merge_state(base.clone(), asic, peripheral)?;
    if redis.is_some() {
        // On a switch buffermgrd has already written its tables to STATE_DB.
        let mut own = RawDb::new();
        for t in BUFFERMGRD_STATE_TABLES {
            if let Some(tab) = base.get(t) {
                own.insert(t.to_string(), tab.clone());
            }
        }
        raw::merge(&mut own, &buffermgrd_state);
        buffermgrd_state = own;
    }
    Ok(Loaded {
        config,
        config_dump,
        state,
        buffermgrd_state,
        config_label: label,
        state_dump,
        redis,
        asic_table: asic.map(Path::to_path_buf),
    })
}

/// Merges a STATE_DB dump with the ASIC and peripheral files (each checked on its own first,
/// so errors name the right file). Returns the typed STATE_DB and the tables of the files.
pub fn merge_state(
    mut state_db: RawDb,
    asic: Option<&Path>,
    peripheral: Option<&Path>,
) -> Result<(StateDb, RawDb)> {
    let mut own = RawDb::new();
    for p in [asic, peripheral].into_iter().flatten() {
        let r = read_flat(p)?;
        parse_state(&r, &p.display().to_string())?;
        raw::merge(&mut own, &r);
    }
    raw::merge(&mut state_db, &own);
    let state = parse_state(&state_db, "STATE_DB")?;
    Ok((state, own))
}
