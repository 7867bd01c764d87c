//! `headroom sonic plan`: the steady-state APPL_DB and STATE_DB buffermgrd (dynamic mode)
//! converges to for a configuration, computed with a headroom model.
//!
//! Outputs in `--out` (default `out/sonic-plan`), nested JSON, keys sorted, byte-identical for
//! equal inputs:
//! - `appl_db.json`: `BUFFER_POOL_TABLE`, `BUFFER_PROFILE_TABLE`, `BUFFER_PG_TABLE`
//!   (`Ethernet0:3-4`), `BUFFER_QUEUE_TABLE`, `BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE`,
//!   `BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE`, with exactly the fields buffermgrd writes;
//! - `state_db.json`: what buffermgrd writes to STATE_DB: the `ASIC_TABLE` /
//!   `PERIPHERAL_TABLE` entries of its `-a`/`-p` files and the mirrors `BUFFER_POOL_TABLE`,
//!   `BUFFER_PROFILE_TABLE` (same fields as APPL_DB; keys are `TABLE|name` in Redis).
//!
//! Both files are written together or not at all. Inputs SONiC would refuse
//! ([`headroom_sonic::validate`], applied when loading) and a missing ASIC (`--asic-table` or
//! `--redis` is required) are refused before anything is written.
//!
//! Printed (unless `--quiet`): the `show buffer information` view, the PG map, the pool
//! accounting, the maximum-headroom check, items not rendered, and for `--model dsh` the DSH
//! plan (insurance headroom per port, shared pool, thresholds).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use headroom_sonic::model::dsh::{self, Dsh, DshPlan};
use headroom_sonic::render::{render, Rendered};
use headroom_sonic::tables::appl::names as appl_names;
use headroom_sonic::tables::raw::RawDb;
use headroom_sonic::tables::LookupError;

use super::input::{InputArgs, Loaded};
use super::output::{json_text, write_all_atomically};
use super::{ModelName, Result, SonicError};

/// Arguments of `headroom sonic plan`.
#[derive(Args, Debug)]
#[command(
    after_help = "Writes appl_db.json and state_db.json (nested JSON, keys sorted) to --out and \
prints SONiC's `show buffer information` view, the PG map, the pool accounting and, for \
--model dsh, the DSH plan."
)]
pub struct PlanArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Headroom model for the dynamic lossless profiles.
    #[arg(long, value_enum, default_value_t = ModelName::Mellanox)]
    model: ModelName,
    /// Output directory.
    #[arg(long, short, value_name = "DIR", default_value = "out/sonic-plan")]
    out: PathBuf,
    /// Write the files only; print nothing.
    #[arg(long, short)]
    quiet: bool,
}

/// A computed plan.
#[derive(Clone, Debug)]
pub struct Planned {
    /// The steady state (APPL_DB, pool result, checks, notes).
    pub rendered: Rendered,
    /// The DSH switch plan (`--model dsh` only).
    pub dsh: Option<DshPlan>,
    /// The model used.
    pub model: ModelName,
}

/// Renders the steady state of `loaded` with `model` (and the DSH plan for `dsh`).
pub fn compute(loaded: &Loaded, model: ModelName) -> Result<Planned> {
    require_asic(loaded)?;
    let m = model.model();
    let rendered = render(&loaded.config, &loaded.state, &m)
        .map_err(|e| SonicError::new(format!("{}: {e}", loaded.config_label)))?;
    let dsh = match model {
        ModelName::Dsh => Some(
            dsh::plan_from_tables(&loaded.config, &loaded.state, &Dsh::default())
                .map_err(|e| SonicError::new(format!("{}: DSH plan: {e}", loaded.config_label)))?,
        ),
        _ => None,
    };
    Ok(Planned {
        rendered,
        dsh,
        model,
    })
}

/// The ASIC parameters are the one STATE_DB input without a fallback: without them, say which
/// option gives them (rather than blaming the CONFIG_DB, which does not hold them).
fn require_asic(loaded: &Loaded) -> Result<()> {
    let names = || {
        let n: Vec<&str> = loaded.state.asic_table.keys().map(String::as_str).collect();
        n.join(", ")
    };
    match (loaded.state.asic(), &loaded.asic_table, &loaded.redis) {
        (Ok(_), _, _) => Ok(()),
        (Err(LookupError::NoAsic), Some(file), _) => Err(SonicError::new(format!(
            "{}: no ASIC_TABLE entry (buffermgrd's -a file holds one \"ASIC_TABLE:<NAME>\" \
             entry)",
            file.display()
        ))),
        (Err(LookupError::NoAsic), None, None) => Err(SonicError::new(
            "no ASIC parameters: --asic-table FILE (buffermgrd's -a asic_table.json) or --redis \
             URL (a switch's STATE_DB ASIC_TABLE) is required",
        )),
        (Err(LookupError::NoAsic), None, Some(r)) => Err(SonicError::new(format!(
            "no ASIC parameters: STATE_DB at {} has no ASIC_TABLE entry (buffermgrd has not \
             started); give --asic-table FILE",
            r.url
        ))),
        (Err(e), Some(file), None) => Err(SonicError::new(format!(
            "{e}: ASIC_TABLE {} (from {} and --state-db together)",
            names(),
            file.display()
        ))),
        (Err(e), _, _) => Err(SonicError::new(format!("{e}: ASIC_TABLE {}", names()))),
    }
}

/// `appl_db.json`: the rendered APPL_DB buffer tables.
pub fn appl_db(planned: &Planned) -> RawDb {
    planned.rendered.appl.to_raw()
}

/// `state_db.json`: buffermgrd's own STATE_DB entries and the pool/profile mirrors.
pub fn state_db(loaded: &Loaded, planned: &Planned) -> RawDb {
    let mut db = loaded.buffermgrd_state.clone();
    let appl = appl_db(planned);
    for t in [
        appl_names::BUFFER_POOL_TABLE,
        appl_names::BUFFER_PROFILE_TABLE,
    ] {
        if let Some(tab) = appl.get(t) {
            db.insert(t.to_string(), tab.clone());
        }
    }
    db
}

/// A table dump as JSON text.
pub fn db_text(db: &RawDb) -> String {
    json_text(&serde_json::to_value(db).unwrap_or_default())
}

/// Runs `headroom sonic plan`.
pub fn run(a: &PlanArgs) -> Result<ExitCode> {
    let loaded = a.input.load()?;
    if let Some(m) = loaded
        .config
        .device_metadata
        .get("localhost")
        .and_then(|d| d.buffer_model.as_deref())
        .filter(|m| *m != "dynamic")
    {
        errln!(
            "warning: DEVICE_METADATA|localhost.buffer_model is {m:?}; planning as the dynamic \
             buffer model"
        );
    }
    let planned = compute(&loaded, a.model)?;
    std::fs::create_dir_all(&a.out)
        .map_err(|e| SonicError::new(format!("cannot create {}: {e}", a.out.display())))?;
    let appl_path = a.out.join("appl_db.json");
    let state_path = a.out.join("state_db.json");
    let (appl_text, state_text) = (
        db_text(&appl_db(&planned)),
        db_text(&state_db(&loaded, &planned)),
    );
    // Both files or neither: a state_db.json from another run next to this appl_db.json
    // would be a plan nobody computed.
    write_all_atomically(&[(&appl_path, &appl_text), (&state_path, &state_text)])?;
    if !a.quiet {
        out!("{}", super::show::plan_view(&loaded, &planned));
        outln!("Wrote {} and {}", appl_path.display(), state_path.display());
    }
    Ok(ExitCode::SUCCESS)
}
