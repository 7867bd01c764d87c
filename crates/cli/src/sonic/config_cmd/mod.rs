//! `headroom sonic config …`: SONiC's buffer configuration commands (seed 003, "Command line
//! interface") on a `config_db.json` file (`--config-db FILE`) or on a switch's CONFIG_DB in
//! Redis (`--redis URL`).
//!
//! ```text
//! config buffer profile add|set NAME [--xon N] [--xoff N] [--size N] [--dynamic-th N] [--pool P]
//! config buffer profile remove NAME
//! config buffer shared-headroom-pool size N
//! config buffer shared-headroom-pool over-subscribe-ratio R
//! config interface buffer priority-group lossless add|set PORT PGS [PROFILE]
//! config interface buffer priority-group lossless remove PORT [PGS]
//! config interface cable-length PORT LEN
//! ```
//!
//! Each command reads CONFIG_DB, checks the change against the rules below and the resulting
//! CONFIG_DB against the table model (every reference resolves, thresholds match pool modes,
//! …), and only then writes it. Nothing is written on error; the error is one line, exit code
//! 2. Tables, entries and fields the commands do not touch are kept as they are.
//!
//! One validation path, two backends: the command edits an untyped copy of CONFIG_DB
//! ([`Edits`]: the dump plus the set of entries touched), whichever backend it came from; the
//! backend then writes the touched entries:
//! - file: the touched entries are applied to the JSON document and the file replaced
//!   atomically (4-space JSON, keys sorted, as SONiC's `config save`; untouched values keep
//!   their JSON form); not rewritten if the text is unchanged;
//! - Redis: every changed entry is replaced in one `MULTI`/`EXEC` transaction
//!   ([`super::redis::write_config`]); STATE_DB is read from the same Redis (`mmu_size`,
//!   `max_priority_groups`, `max_headroom_size`, and `ASIC_TABLE` for the fit check below).
//!
//! Rules (seed 003):
//! - profile: headroom parameters and `dynamic_th` are two groups, at least one is given.
//!   With headroom parameters `xon` is mandatory; without the shared headroom pool at least one
//!   of `xoff`/`size` is given and the other deduced from `xon + xoff = size`, and
//!   `xon + xoff <= size`; with the shared headroom pool `xoff` is mandatory and `size`
//!   defaults to `xon`. Only headroom parameters: `dynamic_th` = `default_dynamic_th`. Only
//!   `dynamic_th`: a `headroom_type: dynamic` profile (headroom computed per port). The pool
//!   (default `ingress_lossless_pool`) must exist and be an ingress pool. `add` needs a new
//!   name, `set` an existing profile (of a dynamic profile only `dynamic_th` can be set; a
//!   profile's pool cannot change); `remove` refuses a profile still referenced by a PG,
//!   queue or profile list.
//! - shared headroom pool: the size is below the buffer size (STATE_DB `mmu_size`, else
//!   `egress_lossless_pool.size`), 0 removes it; the over-subscribe ratio is in
//!   `[0, number of ports]`, 0 removes it.
//! - lossless PGs: the port exists; `PGS` is `a` or `a-b` within the port's priority groups
//!   (STATE_DB `max_priority_groups`, else 8); `add` needs a range disjoint from every existing
//!   PG of the port, `set`/`remove` an existing lossless PG with exactly that range (`remove`
//!   without `PGS` removes all lossless PGs of the port); the override profile exists, is an
//!   ingress profile and is lossless.
//! - cable length: the port exists; the length is a whole number of metres with the unit `m`
//!   (`40m`; `40` is rejected: SONiC would read it as 4 m), at most 100 km.
//! - and the resulting CONFIG_DB passes SONiC's validation ([`headroom_sonic::validate`]: PG
//!   and queue ids within the port's, disjoint, on existing ports; numbers within bounds), the
//!   same validation `plan`, `diff` and `show` apply to what they read.
//!
//! When the ASIC parameters are known (`--asic-table`, or `ASIC_TABLE` in the switch's
//! STATE_DB) the changed configuration is also rendered (with STATE_DB's `mmu_size` and
//! `max_headroom_size`) and rejected if the buffer would be exhausted or a port would fail the
//! maximum-headroom check.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use headroom_sonic::render::render;
use headroom_sonic::tables::config::{names, BufferProfile, ConfigDb, INGRESS_LOSSLESS_POOL};
use headroom_sonic::tables::raw::{self, Fields, RawDb};
use headroom_sonic::tables::state::StateDb;
use headroom_sonic::tables::{Direction, IdRange, Threshold};
use headroom_sonic::validate::{buffer_size, cable_length_error, priority_groups, validate};
use serde_json::{Map, Value};

use super::input::{self, read_nested, read_text, Source};
use super::output::{json_text, write_atomically};
use super::redis::{self as live, RedisSource};
use super::{fail, ModelName, Result, SonicError};

mod cable;
mod pg;
mod profile;
mod shp;

use cable::cable_length;
use pg::{pg_add, pg_remove, pg_set};
use profile::{profile_add, profile_remove, profile_set};
use shp::{shp_ratio, shp_size};

/// Arguments of `headroom sonic config`.
#[derive(Args, Debug)]
#[command(
    after_help = "The file is replaced atomically only if the change passes every check; on \
error it is left untouched and the exit code is 2."
)]
pub struct ConfigArgs {
    /// The config_db.json to edit (SONiC's nested format).
    #[arg(long, value_name = "FILE", global = true, conflicts_with = "redis")]
    config_db: Option<PathBuf>,
    /// Also check that the result fits the buffer, with these ASIC parameters (`-a` file).
    #[arg(long, value_name = "FILE", global = true)]
    asic_table: Option<PathBuf>,
    /// Gearbox parameters for that check (`-p` file).
    #[arg(long, value_name = "FILE", global = true)]
    peripheral_table: Option<PathBuf>,
    /// STATE_DB (nested): mmu_size bounds the shared headroom pool, max_priority_groups the
    /// PG ids, max_headroom_size the headroom check.
    #[arg(long, value_name = "FILE", global = true, conflicts_with = "redis")]
    state_db: Option<PathBuf>,
    /// Headroom model of the fit check.
    #[arg(long, value_enum, global = true, default_value_t = ModelName::Mellanox)]
    model: ModelName,
    /// Edit a switch's CONFIG_DB (db 4) in Redis instead, with its STATE_DB (db 6):
    /// redis://HOST[:PORT] or unix:///PATH.
    #[arg(long, value_name = "URL", global = true)]
    redis: Option<String>,
    #[command(subcommand)]
    command: ConfigCommand,
}

#[derive(Subcommand, Debug)]
enum ConfigCommand {
    /// Buffer profiles and the shared headroom pool.
    Buffer(BufferArgs),
    /// Per-interface settings: lossless priority groups, cable length.
    Interface(InterfaceArgs),
}

#[derive(Args, Debug)]
struct BufferArgs {
    #[command(subcommand)]
    command: BufferCommand,
}

#[derive(Subcommand, Debug)]
enum BufferCommand {
    /// Add, modify or remove a profile (headroom override or non-default dynamic_th).
    Profile(ProfileArgs),
    /// Size or over-subscribe ratio of the shared headroom pool.
    #[command(alias = "shared_headroom_pool")]
    SharedHeadroomPool(ShpArgs),
}

#[derive(Args, Debug)]
struct ProfileArgs {
    #[command(subcommand)]
    command: ProfileCommand,
}

#[derive(Subcommand, Debug)]
enum ProfileCommand {
    /// Add a profile.
    Add(ProfileSpec),
    /// Modify a profile.
    Set(ProfileSpec),
    /// Remove a profile no PG, queue or profile list uses.
    Remove {
        /// Profile name.
        name: String,
    },
}

#[derive(Args, Debug)]
struct ProfileSpec {
    /// Profile name.
    name: String,
    /// xon threshold, bytes (mandatory with headroom parameters).
    #[arg(long)]
    xon: Option<u64>,
    /// xoff threshold, bytes.
    #[arg(long)]
    xoff: Option<u64>,
    /// Reserved size, bytes.
    #[arg(long)]
    size: Option<u64>,
    /// Shared-buffer threshold (alpha = 2^N), -8..=8.
    #[arg(
        long,
        alias = "dynamic_th",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i8).range(-8..=8)
    )]
    dynamic_th: Option<i8>,
    /// Pool (default ingress_lossless_pool).
    #[arg(long)]
    pool: Option<String>,
}

impl ProfileSpec {
    fn has_headroom(&self) -> bool {
        self.xon.is_some() || self.xoff.is_some() || self.size.is_some()
    }
}

#[derive(Args, Debug)]
struct ShpArgs {
    #[command(subcommand)]
    command: ShpCommand,
}

#[derive(Subcommand, Debug)]
enum ShpCommand {
    /// Configured shared headroom pool size in bytes (0: not configured).
    Size {
        /// Bytes.
        size: u64,
    },
    /// Over-subscribe ratio (0: disabled); the pool size is then computed.
    #[command(alias = "over_subscribe_ratio")]
    OverSubscribeRatio {
        /// Ratio, 0 to the number of ports.
        ratio: u32,
    },
}

#[derive(Args, Debug)]
struct InterfaceArgs {
    #[command(subcommand)]
    command: InterfaceCommand,
}

#[derive(Subcommand, Debug)]
enum InterfaceCommand {
    /// Buffer settings of an interface.
    Buffer(IfBufferArgs),
    /// Cable length of a port, e.g. `40m`.
    #[command(alias = "cable_length")]
    CableLength {
        /// Port, e.g. Ethernet0.
        port: String,
        /// Length in whole metres with the unit, e.g. 40m.
        length: String,
    },
}

#[derive(Args, Debug)]
struct IfBufferArgs {
    #[command(subcommand)]
    command: IfBufferCommand,
}

#[derive(Subcommand, Debug)]
enum IfBufferCommand {
    /// Priority groups.
    #[command(alias = "priority_group")]
    PriorityGroup(PgArgs),
}

#[derive(Args, Debug)]
struct PgArgs {
    #[command(subcommand)]
    command: PgCommand,
}

#[derive(Subcommand, Debug)]
enum PgCommand {
    /// Lossless priority groups (dynamic headroom, or a headroom-override profile).
    Lossless(LosslessArgs),
}

#[derive(Args, Debug)]
struct LosslessArgs {
    #[command(subcommand)]
    command: LosslessCommand,
}

#[derive(Subcommand, Debug)]
enum LosslessCommand {
    /// Add a lossless PG range, disjoint from the port's PGs.
    Add(PgSpec),
    /// Switch an existing lossless PG between dynamic headroom and an override profile.
    Set(PgSpec),
    /// Remove a lossless PG (all of the port's lossless PGs without PGS).
    Remove {
        /// Port, e.g. Ethernet0.
        port: String,
        /// PG range, e.g. 3-4.
        pgs: Option<String>,
    },
}

#[derive(Args, Debug)]
struct PgSpec {
    /// Port, e.g. Ethernet0.
    port: String,
    /// PG range, e.g. 3-4 or 6.
    pgs: String,
    /// Headroom-override profile (default: dynamic headroom, `profile: NULL`).
    profile: Option<String>,
}

/// What a command needs: the typed CONFIG_DB before the change, STATE_DB if known, and the
/// CONFIG_DB being edited.
struct Ctx {
    config: ConfigDb,
    state: Option<StateDb>,
    doc: Edits,
}

/// CONFIG_DB being edited, backend-independent: the dump with the edits applied, and every
/// `(table, key)` an edit touched (the entries a backend has to write).
struct Edits {
    db: RawDb,
    touched: BTreeSet<(String, String)>,
}

impl Edits {
    fn new(db: RawDb) -> Edits {
        Edits {
            db,
            touched: BTreeSet::new(),
        }
    }

    fn touch(&mut self, table: &str, key: &str) {
        self.touched.insert((table.to_string(), key.to_string()));
    }

    /// The entry after the edits.
    fn entry(&self, table: &str, key: &str) -> Option<&Fields> {
        self.db.get(table)?.get(key)
    }
}

/// A CONFIG_DB as read by one of the two backends.
enum Backend {
    /// A config_db.json: its path, text and JSON document.
    File {
        path: PathBuf,
        text: String,
        doc: Map<String, Value>,
    },
    /// A switch's Redis.
    Redis(RedisSource),
}

/// CONFIG_DB as read: untyped dump, typed view, label for messages; and STATE_DB if known.
struct Read {
    raw: RawDb,
    config: ConfigDb,
    label: String,
    state: Option<StateDb>,
}

/// Reads CONFIG_DB (and STATE_DB when given or, for Redis, always) from the backend.
fn load(a: &ConfigArgs) -> Result<(Backend, Read)> {
    if let Some(url) = &a.redis {
        let source = RedisSource::parse(url)?;
        let loaded = input::load(
            &Source::Redis(source.clone()),
            a.asic_table.as_deref(),
            a.peripheral_table.as_deref(),
        )?;
        let read = Read {
            raw: loaded.config_dump,
            config: loaded.config,
            label: loaded.config_label,
            state: Some(loaded.state),
        };
        return Ok((Backend::Redis(source), read));
    }
    let Some(path) = &a.config_db else {
        fail!("--config-db FILE is required (the config_db.json to edit), or --redis URL");
    };
    let label = path.display().to_string();
    let text = read_text(path)?;
    let raw = raw::from_nested_json(&text).map_err(|e| SonicError::new(format!("{label}: {e}")))?;
    let doc = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(m)) => m,
        _ => fail!("{label}: not a JSON object"),
    };
    let config = input::parse_config(&raw, &label)?;
    let state = if a.state_db.is_some() || a.asic_table.is_some() || a.peripheral_table.is_some() {
        let dump = match &a.state_db {
            Some(p) => read_nested(p)?,
            None => RawDb::new(),
        };
        let (s, _) =
            input::merge_state(dump, a.asic_table.as_deref(), a.peripheral_table.as_deref())?;
        Some(s)
    } else {
        None
    };
    let backend = Backend::File {
        path: path.clone(),
        text,
        doc,
    };
    let read = Read {
        raw,
        config,
        label,
        state,
    };
    Ok((backend, read))
}

/// Runs `headroom sonic config …`.
pub fn run(a: &ConfigArgs) -> Result<ExitCode> {
    let (
        backend,
        Read {
            raw,
            config,
            label,
            state,
        },
    ) = load(a)?;
    let mut ctx = Ctx {
        config,
        state,
        doc: Edits::new(raw.clone()),
    };
    let summary = apply(&mut ctx, &a.command)?;

    let new_config = ConfigDb::from_raw(&ctx.doc.db)
        .map_err(|e| SonicError::new(format!("the change would leave {label} invalid: {e}")))?;
    validate(&new_config, ctx.state.as_ref())
        .map_err(|e| SonicError::new(format!("the change would leave {label} invalid: {e}")))?;
    if let Some(state) = ctx.state.as_ref().filter(|s| s.asic().is_ok()) {
        fit_check(&new_config, state, a.model)?;
    }
    match backend {
        Backend::File {
            path,
            text,
            mut doc,
        } => {
            apply_to_json(&mut doc, &raw, &ctx.doc)?;
            let new_text = json_text(&Value::Object(doc));
            // The JSON document must say exactly what was validated.
            let written = raw::from_nested_json(&new_text).map_err(|e| {
                SonicError::new(format!("the change would leave {label} invalid: {e}"))
            })?;
            if written != ctx.doc.db {
                fail!("internal error: the edited {label} differs from the validated CONFIG_DB");
            }
            if new_text != text {
                write_atomically(&path, &new_text)?;
            }
        }
        Backend::Redis(source) => {
            live::write_config(&source, &raw, &ctx.doc.db, &ctx.doc.touched)?;
        }
    }
    outln!("{label}: {summary}");
    Ok(ExitCode::SUCCESS)
}

/// Applies the touched entries of `edits` to a config_db.json document read as `before`:
/// removed entries are removed (and a table left empty), changed fields are written as
/// strings, fields whose text is unchanged keep their JSON value.
fn apply_to_json(doc: &mut Map<String, Value>, before: &RawDb, edits: &Edits) -> Result<()> {
    for (table, key) in &edits.touched {
        let Some(fields) = edits.entry(table, key) else {
            json_remove_entry(doc, table, key);
            continue;
        };
        let old = before.get(table).and_then(|t| t.get(key));
        let entry = doc
            .entry(table.clone())
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| SonicError::new(format!("table {table} is not a JSON object")))?
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| SonicError::new(format!("{table}|{key} is not a JSON object")))?;
        entry.retain(|f, _| fields.contains_key(f));
        for (f, v) in fields {
            let same = entry.contains_key(f) && old.and_then(|o| o.get(f)) == Some(v);
            if !same {
                entry.insert(f.clone(), Value::String(v.clone()));
            }
        }
    }
    Ok(())
}

fn json_remove_entry(doc: &mut Map<String, Value>, table: &str, key: &str) {
    let now_empty = match doc.get_mut(table) {
        Some(Value::Object(t)) => {
            t.remove(key);
            t.is_empty()
        }
        _ => false,
    };
    if now_empty {
        doc.remove(table);
    }
}

/// Renders the changed configuration and rejects it if the buffer is exhausted or a port
/// fails the maximum-headroom check.
fn fit_check(config: &ConfigDb, state: &StateDb, model: ModelName) -> Result<()> {
    let r = render(config, state, &model.model())
        .map_err(|e| SonicError::new(format!("after the change: {e}")))?;
    let failed: Vec<_> = r.checks.iter().filter(|(_, c)| !c.passed).collect();
    if let Some((port, c)) = failed.first() {
        let more = if failed.len() > 1 {
            format!(" (and {} more ports)", failed.len() - 1)
        } else {
            String::new()
        };
        fail!(
            "after the change {port} would fail the maximum-headroom check: {} bytes of \
             headroom, max_headroom_size {}{more}",
            c.accumulated.ceil(),
            c.max_headroom_size.unwrap_or(0)
        );
    }
    Ok(())
}

fn apply(ctx: &mut Ctx, cmd: &ConfigCommand) -> Result<String> {
    match cmd {
        ConfigCommand::Buffer(b) => match &b.command {
            BufferCommand::Profile(p) => match &p.command {
                ProfileCommand::Add(s) => profile_add(ctx, s),
                ProfileCommand::Set(s) => profile_set(ctx, s),
                ProfileCommand::Remove { name } => profile_remove(ctx, name),
            },
            BufferCommand::SharedHeadroomPool(s) => match &s.command {
                ShpCommand::Size { size } => shp_size(ctx, *size),
                ShpCommand::OverSubscribeRatio { ratio } => shp_ratio(ctx, *ratio),
            },
        },
        ConfigCommand::Interface(i) => match &i.command {
            InterfaceCommand::Buffer(b) => {
                let IfBufferCommand::PriorityGroup(pg) = &b.command;
                let PgCommand::Lossless(l) = &pg.command;
                match &l.command {
                    LosslessCommand::Add(s) => pg_add(ctx, s),
                    LosslessCommand::Set(s) => pg_set(ctx, s),
                    LosslessCommand::Remove { port, pgs } => pg_remove(ctx, port, pgs.as_deref()),
                }
            }
            InterfaceCommand::CableLength { port, length } => cable_length(ctx, port, length),
        },
    }
}

// ----------------------------------------------------------------------------------------
// CONFIG_DB edits (backend-independent)

fn set_field(doc: &mut Edits, table: &str, key: &str, field: &str, value: String) -> Result<()> {
    doc.db
        .entry(table.to_string())
        .or_default()
        .entry(key.to_string())
        .or_default()
        .insert(field.to_string(), value);
    doc.touch(table, key);
    Ok(())
}

fn put_entry(doc: &mut Edits, table: &str, key: &str, fields: Fields) {
    doc.db
        .entry(table.to_string())
        .or_default()
        .insert(key.to_string(), fields);
    doc.touch(table, key);
}

fn remove_field(doc: &mut Edits, table: &str, key: &str, field: &str) -> Result<()> {
    let removed = doc
        .db
        .get_mut(table)
        .and_then(|t| t.get_mut(key))
        .and_then(|e| e.remove(field));
    if removed.is_some() {
        doc.touch(table, key);
    }
    Ok(())
}

fn remove_entry(doc: &mut Edits, table: &str, key: &str) {
    let now_empty = match doc.db.get_mut(table) {
        Some(t) => {
            t.remove(key);
            t.is_empty()
        }
        None => false,
    };
    if now_empty {
        doc.db.remove(table);
    }
    doc.touch(table, key);
}

/// Whether a CONFIG_DB `BUFFER_PG` key (`Ethernet0|3-4`, `Ethernet0,Ethernet4|3-4`) covers
/// exactly `range` on `port`.
fn pg_key_matches(key: &str, port: &str, range: IdRange) -> bool {
    key.rsplit_once('|').is_some_and(|(ports, ids)| {
        ports.split(',').any(|p| p.trim() == port)
            && IdRange::parse(ids).is_ok_and(|r| r.lo() == range.lo() && r.hi() == range.hi())
    })
}

/// The `BUFFER_PG` key of `port`'s PG `range`, splitting a multi-port key into one key per
/// port first (each with the same fields), so that one port's PG can change alone.
fn isolate_pg_key(doc: &mut Edits, port: &str, range: IdRange) -> Result<String> {
    let Some(key) = doc
        .db
        .get(names::BUFFER_PG)
        .and_then(|t| t.keys().find(|k| pg_key_matches(k, port, range)))
        .cloned()
    else {
        fail!("BUFFER_PG has no entry for {port}|{range}");
    };
    let Some((ports, ids)) = key.rsplit_once('|') else {
        fail!("BUFFER_PG key {key:?} is malformed");
    };
    let ports: Vec<&str> = ports.split(',').map(str::trim).collect();
    if ports.len() == 1 {
        return Ok(key.clone());
    }
    let fields = doc
        .entry(names::BUFFER_PG, &key)
        .cloned()
        .unwrap_or_default();
    remove_entry(doc, names::BUFFER_PG, &key);
    for p in &ports {
        put_entry(doc, names::BUFFER_PG, &format!("{p}|{ids}"), fields.clone());
    }
    Ok(format!("{port}|{ids}"))
}

/// Fails unless `port` is in CONFIG_DB's PORT table (the lossless-PG and cable-length commands
/// act on existing ports only).
fn check_port(cfg: &ConfigDb, port: &str) -> Result<()> {
    if !cfg.ports.contains_key(port) {
        fail!("port {port} does not exist in PORT");
    }
    Ok(())
}
