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

// ----------------------------------------------------------------------------------------
// Profiles

/// `xon`/`xoff`/`size` from the given values and the deduction rules.
fn headroom(
    spec: &ProfileSpec,
    xon: Option<u64>,
    old_xoff: Option<u64>,
    shp: bool,
) -> Result<(u64, u64, u64)> {
    let Some(xon) = xon else {
        fail!("--xon is mandatory for a profile with headroom parameters");
    };
    let sum = |xoff: u64| {
        xon.checked_add(xoff)
            .ok_or_else(|| SonicError::new("xon + xoff is too large"))
    };
    let (xoff, size) = match (spec.xoff, spec.size) {
        (Some(x), Some(s)) => (x, s),
        (Some(x), None) => (x, if shp { xon } else { sum(x)? }),
        (None, Some(s)) if shp => match old_xoff {
            Some(x) => (x, s),
            None => fail!("the shared headroom pool is enabled: --xoff is mandatory"),
        },
        (None, Some(s)) => match s.checked_sub(xon) {
            Some(x) => (x, s),
            None => {
                fail!("size {s} is smaller than xon {xon} (xoff = size - xon would be negative)")
            }
        },
        (None, None) => match (old_xoff, shp) {
            (Some(x), true) => (x, xon),
            (Some(x), false) => (x, sum(x)?),
            (None, true) => fail!("the shared headroom pool is enabled: --xoff is mandatory"),
            (None, false) => {
                fail!("give --xoff or --size (the other is deduced from xon + xoff = size)")
            }
        },
    };
    if !shp && sum(xoff)? > size {
        fail!(
            "xon + xoff = {} exceeds size {size}: without the shared headroom pool the headroom \
             must be reserved (xon + xoff <= size)",
            sum(xoff)?
        );
    }
    if size < xon {
        fail!("size {size} is smaller than xon {xon}");
    }
    Ok((xon, xoff, size))
}

fn check_ingress_pool(cfg: &ConfigDb, pool: &str) -> Result<()> {
    match cfg.pools.get(pool) {
        None => fail!("pool {pool} does not exist in BUFFER_POOL"),
        Some(p) if p.pool_type.direction() == Direction::Egress => fail!(
            "pool {pool} is an egress pool; lossless profiles (headroom or dynamic_th) need an \
             ingress pool"
        ),
        Some(_) => Ok(()),
    }
}

fn valid_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains(['|', ':', ',']) || name.trim() != name || name == "NULL" {
        fail!("profile name {name:?} is not valid (no `|`, `:`, `,`, surrounding spaces or NULL)");
    }
    Ok(())
}

fn default_th(cfg: &ConfigDb) -> i8 {
    cfg.default_lossless()
        .and_then(|d| d.default_dynamic_th)
        .unwrap_or(0)
}

fn describe(fields: &[(&str, String)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn profile_add(ctx: &mut Ctx, s: &ProfileSpec) -> Result<String> {
    let cfg = &ctx.config;
    valid_name(&s.name)?;
    if cfg.profiles.contains_key(&s.name) {
        fail!(
            "profile {} already exists; use `config buffer profile set` to modify it",
            s.name
        );
    }
    if !s.has_headroom() && s.dynamic_th.is_none() {
        fail!("give headroom parameters (--xon with --xoff and/or --size) or --dynamic-th");
    }
    let pool = s
        .pool
        .clone()
        .unwrap_or_else(|| INGRESS_LOSSLESS_POOL.into());
    check_ingress_pool(cfg, &pool)?;
    let mut fields: Vec<(&str, String)> = vec![("pool", pool)];
    if s.has_headroom() {
        let (xon, xoff, size) = headroom(s, s.xon, None, cfg.shp_enabled())?;
        fields.push(("xon", xon.to_string()));
        fields.push(("xoff", xoff.to_string()));
        fields.push(("size", size.to_string()));
        let th = s.dynamic_th.unwrap_or_else(|| default_th(cfg));
        fields.push(("dynamic_th", th.to_string()));
    } else {
        fields.push(("dynamic_th", s.dynamic_th.unwrap_or(0).to_string()));
        fields.push(("headroom_type", "dynamic".into()));
    }
    let entry: Fields = fields
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    put_entry(&mut ctx.doc, names::BUFFER_PROFILE, &s.name, entry);
    Ok(format!(
        "added BUFFER_PROFILE|{} ({})",
        s.name,
        describe(&fields)
    ))
}

fn profile_set(ctx: &mut Ctx, s: &ProfileSpec) -> Result<String> {
    let cfg = &ctx.config;
    let Some(old) = cfg.profiles.get(&s.name) else {
        fail!(
            "profile {} does not exist; use `config buffer profile add` to create it",
            s.name
        );
    };
    let old: BufferProfile = old.clone();
    if let Some(p) = s.pool.as_ref().filter(|p| **p != old.pool) {
        fail!(
            "the pool of profile {} cannot change ({} → {p}): orchagent creates a profile's \
             pool once; remove the profile and add it again",
            s.name,
            old.pool
        );
    }
    if !s.has_headroom() && s.dynamic_th.is_none() {
        fail!("nothing to set: give --xon, --xoff, --size or --dynamic-th");
    }
    let mut fields: Vec<(&str, String)> = Vec::new();
    if s.has_headroom() {
        if old.is_dynamic_headroom() {
            fail!(
                "profile {} has dynamically calculated headroom (headroom_type dynamic): only \
                 --dynamic-th can be set",
                s.name
            );
        }
        check_ingress_pool(cfg, &old.pool)?;
        let (xon, xoff, size) = headroom(s, s.xon.or(old.xon), old.xoff, cfg.shp_enabled())?;
        fields.push(("xon", xon.to_string()));
        fields.push(("xoff", xoff.to_string()));
        fields.push(("size", size.to_string()));
        if old.threshold.is_none() && s.dynamic_th.is_none() {
            fields.push(("dynamic_th", default_th(cfg).to_string()));
        }
    }
    if let Some(th) = s.dynamic_th {
        if matches!(old.threshold, Some(Threshold::Static(_))) {
            fail!(
                "profile {} uses static_th (its pool {} is in static mode); --dynamic-th does not \
                 apply",
                s.name,
                old.pool
            );
        }
        fields.push(("dynamic_th", th.to_string()));
    }
    for (k, v) in &fields {
        set_field(&mut ctx.doc, names::BUFFER_PROFILE, &s.name, k, v.clone())?;
    }
    Ok(format!(
        "set BUFFER_PROFILE|{} ({})",
        s.name,
        describe(&fields)
    ))
}

fn profile_remove(ctx: &mut Ctx, name: &str) -> Result<String> {
    let cfg = &ctx.config;
    if !cfg.profiles.contains_key(name) {
        fail!("profile {name} does not exist in BUFFER_PROFILE");
    }
    let mut users: Vec<String> = Vec::new();
    for (k, pg) in &cfg.pgs {
        if pg.profile.as_deref() == Some(name) {
            users.push(format!("{}|{}", names::BUFFER_PG, k.key('|')));
        }
    }
    for (k, q) in &cfg.queues {
        if q.profile == name {
            users.push(format!("{}|{}", names::BUFFER_QUEUE, k.key('|')));
        }
    }
    for (table, lists) in [
        (
            names::BUFFER_PORT_INGRESS_PROFILE_LIST,
            &cfg.ingress_profile_lists,
        ),
        (
            names::BUFFER_PORT_EGRESS_PROFILE_LIST,
            &cfg.egress_profile_lists,
        ),
    ] {
        for (port, l) in lists {
            if l.iter().any(|p| p == name) {
                users.push(format!("{table}|{port}"));
            }
        }
    }
    if let Some(first) = users.first() {
        let more = if users.len() > 1 {
            format!(" (and {} more)", users.len() - 1)
        } else {
            String::new()
        };
        fail!("profile {name} is in use by {first}{more}; remove those references first");
    }
    remove_entry(&mut ctx.doc, names::BUFFER_PROFILE, name);
    Ok(format!("removed BUFFER_PROFILE|{name}"))
}

// ----------------------------------------------------------------------------------------
// Shared headroom pool

fn shp_size(ctx: &mut Ctx, size: u64) -> Result<String> {
    let cfg = &ctx.config;
    if !cfg.pools.contains_key(INGRESS_LOSSLESS_POOL) {
        fail!("BUFFER_POOL|{INGRESS_LOSSLESS_POOL} does not exist");
    }
    if let Some((m, from)) = buffer_size(cfg, ctx.state.as_ref()) {
        if size >= m {
            fail!(
                "shared headroom pool size {size} must be less than the buffer size {m} ({from})"
            );
        }
    }
    if size == 0 {
        remove_field(
            &mut ctx.doc,
            names::BUFFER_POOL,
            INGRESS_LOSSLESS_POOL,
            "xoff",
        )?;
        let state = match cfg.over_subscribe_ratio() {
            Some(r) => format!(
                "enabled by over_subscribe_ratio {}",
                headroom_sonic::lua::format_number(r)
            ),
            None => "disabled".into(),
        };
        Ok(format!(
            "removed BUFFER_POOL|{INGRESS_LOSSLESS_POOL}.xoff (shared headroom pool {state})"
        ))
    } else {
        set_field(
            &mut ctx.doc,
            names::BUFFER_POOL,
            INGRESS_LOSSLESS_POOL,
            "xoff",
            size.to_string(),
        )?;
        Ok(format!(
            "set BUFFER_POOL|{INGRESS_LOSSLESS_POOL}.xoff = {size} (shared headroom pool enabled \
             with this size)"
        ))
    }
}

fn shp_ratio(ctx: &mut Ctx, ratio: u32) -> Result<String> {
    let cfg = &ctx.config;
    let ports = cfg.ports.len();
    if ratio as usize > ports {
        fail!(
            "over-subscribe ratio {ratio} is out of range [0, {ports}] (0 to the number of ports)"
        );
    }
    let key = cfg
        .default_lossless
        .keys()
        .next()
        .cloned()
        .unwrap_or_else(|| "AZURE".into());
    let table = names::DEFAULT_LOSSLESS_BUFFER_PARAMETER;
    if ratio == 0 {
        remove_field(&mut ctx.doc, table, &key, "over_subscribe_ratio")?;
        let state = if cfg.configured_shp_size().is_some() {
            "enabled by its configured size"
        } else {
            "disabled"
        };
        Ok(format!(
            "removed {table}|{key}.over_subscribe_ratio (shared headroom pool {state})"
        ))
    } else {
        set_field(
            &mut ctx.doc,
            table,
            &key,
            "over_subscribe_ratio",
            ratio.to_string(),
        )?;
        Ok(format!("set {table}|{key}.over_subscribe_ratio = {ratio}"))
    }
}

// ----------------------------------------------------------------------------------------
// Lossless priority groups

fn check_port(cfg: &ConfigDb, port: &str) -> Result<()> {
    if !cfg.ports.contains_key(port) {
        fail!("port {port} does not exist in PORT");
    }
    Ok(())
}

fn parse_pgs(ctx: &Ctx, port: &str, pgs: &str) -> Result<IdRange> {
    let range = IdRange::parse(pgs).map_err(|reason| {
        SonicError::new(format!(
            "PG map {pgs:?} is malformed: {reason} (write e.g. 3-4 or 6)"
        ))
    })?;
    let limit = priority_groups(ctx.state.as_ref(), port);
    if u64::from(range.hi()) >= limit.count {
        fail!("PG {} is out of range: {limit}", range.hi());
    }
    Ok(range)
}

fn check_lossless_profile(cfg: &ConfigDb, profile: &str) -> Result<()> {
    let Some(p) = cfg.profiles.get(profile) else {
        fail!("profile {profile} does not exist in BUFFER_PROFILE");
    };
    if cfg.profile_direction(profile) == Some(Direction::Egress) {
        fail!(
            "profile {profile} is an egress profile (pool {}); a PG needs an ingress profile",
            p.pool
        );
    }
    if !p.is_lossless() {
        fail!(
            "profile {profile} is not lossless (it has no xoff and is not headroom_type dynamic)"
        );
    }
    Ok(())
}

fn pg_list(cfg: &ConfigDb, port: &str) -> String {
    let l: Vec<String> = cfg.pgs_of(port).map(|(k, _)| k.ids.to_string()).collect();
    if l.is_empty() {
        "none".into()
    } else {
        l.join(", ")
    }
}

fn pg_add(ctx: &mut Ctx, s: &PgSpec) -> Result<String> {
    check_port(&ctx.config, &s.port)?;
    let range = parse_pgs(ctx, &s.port, &s.pgs)?;
    let cfg = &ctx.config;
    if let Some((k, _)) = cfg.pgs_of(&s.port).find(|(k, _)| k.ids.overlaps(range)) {
        fail!(
            "PG map {} overlaps the existing PG {} of {}; PG ranges must be disjoint",
            s.pgs,
            k.ids,
            s.port
        );
    }
    if let Some(p) = &s.profile {
        check_lossless_profile(cfg, p)?;
    }
    let key = format!("{}|{range}", s.port);
    let profile = s.profile.clone().unwrap_or_else(|| "NULL".into());
    set_field(
        &mut ctx.doc,
        names::BUFFER_PG,
        &key,
        "profile",
        profile.clone(),
    )?;
    Ok(format!("added BUFFER_PG|{key} (profile {profile})"))
}

/// The existing lossless PG of `port` with exactly `range`.
fn existing_lossless(cfg: &ConfigDb, port: &str, range: IdRange, pgs: &str) -> Result<()> {
    let Some((_, pg)) = cfg
        .pgs_of(port)
        .find(|(k, _)| k.ids.lo() == range.lo() && k.ids.hi() == range.hi())
    else {
        fail!(
            "{port} has no PG {pgs} (its PGs: {}); use `add` to create it",
            pg_list(cfg, port)
        );
    };
    if !cfg.pg_is_lossless(pg) {
        fail!(
            "PG {pgs} of {port} is lossy (profile {}); this command manages lossless PGs",
            pg.profile.as_deref().unwrap_or("NULL")
        );
    }
    Ok(())
}

fn pg_set(ctx: &mut Ctx, s: &PgSpec) -> Result<String> {
    check_port(&ctx.config, &s.port)?;
    let range = parse_pgs(ctx, &s.port, &s.pgs)?;
    existing_lossless(&ctx.config, &s.port, range, &s.pgs)?;
    if let Some(p) = &s.profile {
        check_lossless_profile(&ctx.config, p)?;
    }
    let key = isolate_pg_key(&mut ctx.doc, &s.port, range)?;
    let profile = s.profile.clone().unwrap_or_else(|| "NULL".into());
    set_field(
        &mut ctx.doc,
        names::BUFFER_PG,
        &key,
        "profile",
        profile.clone(),
    )?;
    Ok(format!("set BUFFER_PG|{key} (profile {profile})"))
}

fn pg_remove(ctx: &mut Ctx, port: &str, pgs: Option<&str>) -> Result<String> {
    check_port(&ctx.config, port)?;
    let ranges: Vec<IdRange> = match pgs {
        Some(pgs) => {
            let range = parse_pgs(ctx, port, pgs)?;
            existing_lossless(&ctx.config, port, range, pgs)?;
            vec![range]
        }
        None => {
            let cfg = &ctx.config;
            let l: Vec<IdRange> = cfg
                .pgs_of(port)
                .filter(|(_, pg)| cfg.pg_is_lossless(pg))
                .map(|(k, _)| k.ids)
                .collect();
            if l.is_empty() {
                fail!(
                    "{port} has no lossless PG (its PGs: {})",
                    pg_list(cfg, port)
                );
            }
            l
        }
    };
    let mut removed = Vec::new();
    for r in ranges {
        let key = isolate_pg_key(&mut ctx.doc, port, r)?;
        remove_entry(&mut ctx.doc, names::BUFFER_PG, &key);
        removed.push(format!("BUFFER_PG|{key}"));
    }
    Ok(format!("removed {}", removed.join(", ")))
}

// ----------------------------------------------------------------------------------------
// Cable length

fn cable_length(ctx: &mut Ctx, port: &str, length: &str) -> Result<String> {
    let cfg = &ctx.config;
    check_port(cfg, port)?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match length.strip_suffix('m') {
        Some(n) if digits(n) => {
            if n.len() > 1 && n.starts_with('0') {
                let t = n.trim_start_matches('0');
                let canonical = if t.is_empty() { "0" } else { t };
                fail!("cable length {length:?} has a leading zero: write {canonical}m");
            }
            // Digits only: parses (to infinity at worst, which the bound refuses).
            let metres = n.parse::<f64>().unwrap_or(f64::INFINITY);
            if let Some(allowed) = cable_length_error(metres) {
                fail!("cable length {length:?} of {port} is out of range: {allowed}");
            }
        }
        _ if digits(length) => {
            fail!("cable length {length:?} has no unit: write {length}m (whole metres)")
        }
        _ => fail!(
            "cable length {length:?} is not a whole number of metres followed by `m` (e.g. 5m, \
             40m, 300m)"
        ),
    }
    let key = cfg
        .cable_lengths
        .iter()
        .find(|(_, m)| m.contains_key(port))
        .or_else(|| cfg.cable_lengths.iter().next())
        .map(|(k, _)| k.clone())
        .unwrap_or_else(|| "AZURE".into());
    let old = cfg
        .cable_length(port)
        .map(|c| format!(" (was {c})"))
        .unwrap_or_default();
    set_field(
        &mut ctx.doc,
        names::CABLE_LENGTH,
        &key,
        port,
        length.to_string(),
    )?;
    Ok(format!("set CABLE_LENGTH|{key}.{port} = {length}{old}"))
}
