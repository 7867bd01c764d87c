//! `headroom sonic show buffer configuration|information`, and the human views shared with
//! `plan`.
//!
//! - **configuration** (SONiC: CONFIG_DB): the lossless traffic parameters, every
//!   `BUFFER_POOL` (no size for dynamically sized pools) and every configured
//!   `BUFFER_PROFILE` (no dynamically generated profiles). Needs only `--config-db`.
//! - **information** (SONiC: STATE_DB, what is deployed): every pool with its computed size
//!   (and shared headroom pool `xoff`), every profile including the generated
//!   `pg_lossless_<speed>_<cable>…_profile`s; then the PG map. From files it is computed (as
//!   `plan` does; needs the ASIC parameters, `--asic-table`).
//!
//! With `--redis URL`, **configuration** reads CONFIG_DB (db 4). **information** shows what the
//! switch has deployed, as SONiC's `show buffer information` does: the pools and profiles of
//! STATE_DB's `BUFFER_POOL_TABLE` / `BUFFER_PROFILE_TABLE` (buffermgrd's mirrors, db 6) verbatim,
//! and the PG map from APPL_DB's `BUFFER_PG_TABLE` (db 0). If STATE_DB has no mirror (no buffer
//! manager has run), it says so on stderr and shows what buffermgrd would deploy, computed from
//! the switch's CONFIG_DB and STATE_DB like the file case.
//!
//! Blocks are printed in SONiC's format (`Pool: <name>` / `Profile: <name>` over a two-column
//! table between dashed rules), sorted by name; a profile's fields in the order threshold,
//! pool, headroom_type, xon, xon_offset, xoff, size.

use std::collections::BTreeSet;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use headroom_sonic::check::CheckOutcome;
use headroom_sonic::model::dsh::DshPlan;
use headroom_sonic::pool::{PoolOutcome, ShpSource};
use headroom_sonic::render::Rendered;
use headroom_sonic::swss::Db;
use headroom_sonic::tables::appl::{names as appl_names, ApplDb};
use headroom_sonic::tables::config::ConfigDb;
use headroom_sonic::tables::raw::{Fields, RawDb, RawTable};

use super::input::{InputArgs, Loaded};
use super::output::{kv_block, natural_cmp, Table};
use super::plan::{self, Planned};
use super::{ModelName, Result, SonicError};

/// Arguments of `headroom sonic show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(subcommand)]
    what: ShowWhat,
}

#[derive(Subcommand, Debug)]
enum ShowWhat {
    /// Buffer pools and profiles.
    Buffer(ShowBufferArgs),
}

#[derive(Args, Debug)]
struct ShowBufferArgs {
    #[command(subcommand)]
    view: BufferView,
}

#[derive(Subcommand, Debug)]
enum BufferView {
    /// CONFIG_DB: configured pools (no dynamic sizes) and configured profiles.
    Configuration(ShowInput),
    /// What buffermgrd deploys: pools with sizes, all profiles, the PG map.
    Information(ShowInput),
}

#[derive(Args, Debug)]
struct ShowInput {
    #[command(flatten)]
    input: InputArgs,
    /// Headroom model for the generated profiles (information only).
    #[arg(long, value_enum, default_value_t = ModelName::Mellanox)]
    model: ModelName,
}

/// Runs `headroom sonic show …`.
pub fn run(a: &ShowArgs) -> Result<ExitCode> {
    let ShowWhat::Buffer(b) = &a.what;
    match &b.view {
        BufferView::Configuration(s) => {
            let loaded = s.input.load()?;
            out!("{}", configuration_view(&loaded.config));
        }
        BufferView::Information(s) => {
            let loaded = s.input.load()?;
            if let Some(appl) = deployed(&loaded)? {
                out!(
                    "{}",
                    information_view_of(
                        loaded.state_dump.get(appl_names::BUFFER_POOL_TABLE),
                        loaded.state_dump.get(appl_names::BUFFER_PROFILE_TABLE),
                    )
                );
                out!("{}", pg_map_view(&loaded, &appl));
            } else {
                if let Some(r) = &loaded.redis {
                    errln!(
                        "note: STATE_DB at {} has no BUFFER_POOL_TABLE or BUFFER_PROFILE_TABLE (no \
                         buffer manager has deployed anything); showing what buffermgrd would \
                         deploy, computed with model {}",
                        r.url,
                        s.model.as_str()
                    );
                }
                let planned = plan::compute(&loaded, s.model)?;
                out!("{}", information_view(&planned.rendered));
                out!("{}", pg_map_view(&loaded, &planned.rendered.appl));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What a switch has deployed (Redis only, when STATE_DB has buffermgrd's mirrors): pools
/// and profiles from STATE_DB, the PG map from APPL_DB (`BUFFER_PG_TABLE`), typed.
fn deployed(loaded: &Loaded) -> Result<Option<ApplDb>> {
    let Some(r) = &loaded.redis else {
        return Ok(None);
    };
    let mirrors = [
        appl_names::BUFFER_POOL_TABLE,
        appl_names::BUFFER_PROFILE_TABLE,
    ];
    if mirrors.iter().all(|t| !loaded.state_dump.contains_key(*t)) {
        return Ok(None);
    }
    let mut raw: RawDb = r.read(Db::Appl, &[appl_names::BUFFER_PG_TABLE])?;
    for t in mirrors {
        if let Some(tab) = loaded.state_dump.get(t) {
            raw.insert(t.to_string(), tab.clone());
        }
    }
    ApplDb::from_raw(&raw).map(Some).map_err(|e| {
        SonicError::new(format!(
            "deployed buffer tables at {} (STATE_DB mirrors, APPL_DB BUFFER_PG_TABLE): {e}",
            r.url
        ))
    })
}

/// The profile fields in display order, then any others alphabetically.
const PROFILE_FIELD_ORDER: [&str; 9] = [
    "dynamic_th",
    "static_th",
    "pool",
    "headroom_type",
    "xon",
    "xon_offset",
    "xoff",
    "size",
    "packet_discard_action",
];

fn profile_pairs(f: &Fields) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = PROFILE_FIELD_ORDER
        .iter()
        .filter_map(|k| f.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    for (k, v) in f {
        if !PROFILE_FIELD_ORDER.contains(&k.as_str()) {
            out.push((k.clone(), v.clone()));
        }
    }
    out
}

fn pool_pairs(f: &Fields) -> Vec<(String, String)> {
    f.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn blocks(
    out: &mut String,
    kind: &str,
    table: Option<&RawTable>,
    pairs: fn(&Fields) -> Vec<(String, String)>,
) {
    for (name, f) in table.into_iter().flatten() {
        out.push_str(&kv_block(&format!("{kind}: {name}"), &pairs(f)));
    }
}

/// `show buffer configuration`: lossless parameters, CONFIG_DB pools and profiles.
pub fn configuration_view(config: &ConfigDb) -> String {
    let raw = config.to_raw();
    let mut out = String::new();
    let mut params = Vec::new();
    if let Some(d) = config.default_lossless() {
        if let Some(th) = d.default_dynamic_th {
            params.push(("default_dynamic_th".to_string(), th.to_string()));
        }
        if let Some(r) = d.over_subscribe_ratio {
            params.push((
                "over_subscribe_ratio".to_string(),
                headroom_sonic::lua::format_number(r),
            ));
        }
    }
    if let Some(p) = config.traffic_pattern() {
        params.push(("mtu".to_string(), p.mtu.to_string()));
        params.push((
            "small_packet_percentage".to_string(),
            p.small_packet_percentage.to_string(),
        ));
    }
    if let Some(x) = config.configured_shp_size() {
        params.push(("shared_headroom_pool_size".to_string(), x.to_string()));
    }
    if !params.is_empty() {
        out.push_str(&kv_block("Lossless traffic pattern:", &params));
    }
    blocks(&mut out, "Pool", raw.get("BUFFER_POOL"), pool_pairs);
    blocks(
        &mut out,
        "Profile",
        raw.get("BUFFER_PROFILE"),
        profile_pairs,
    );
    out
}

/// `show buffer information`: the deployed pools and profiles (STATE_DB mirrors).
pub fn information_view(r: &Rendered) -> String {
    let raw = r.appl.to_raw();
    information_view_of(
        raw.get(appl_names::BUFFER_POOL_TABLE),
        raw.get(appl_names::BUFFER_PROFILE_TABLE),
    )
}

/// `show buffer information` of these pool and profile tables.
fn information_view_of(pools: Option<&RawTable>, profiles: Option<&RawTable>) -> String {
    let mut out = String::new();
    blocks(&mut out, "Pool", pools, pool_pairs);
    blocks(&mut out, "Profile", profiles, profile_pairs);
    out
}

fn opt(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The PG map: every APPL_DB `BUFFER_PG_TABLE` entry with its port's speed, lanes and cable
/// and its profile's headroom; then the ports that get no buffers (admin down).
pub fn pg_map_view(loaded: &Loaded, appl: &ApplDb) -> String {
    let c = &loaded.config;
    let mut t = Table::new([
        "Port", "Speed", "Lanes", "Cable", "PG", "Profile", "xon", "xoff", "size",
    ]);
    let mut pgs: Vec<_> = appl.pgs.iter().collect();
    pgs.sort_by(|(a, _), (b, _)| natural_cmp(&a.port, &b.port).then(a.ids.cmp(&b.ids)));
    for (k, profile) in pgs {
        let port = c.ports.get(&k.port);
        let speed = port
            .and_then(|p| {
                p.effective_speed(
                    loaded
                        .state
                        .supported_speeds
                        .get(&k.port)
                        .map(Vec::as_slice),
                )
            })
            .map(|s| s.to_string())
            .unwrap_or_default();
        let lanes = port.map(|p| p.lane_count().to_string()).unwrap_or_default();
        let cable = c
            .cable_length(&k.port)
            .map(|l| l.text().to_string())
            .unwrap_or_default();
        let p = appl.profiles.get(profile);
        t.row([
            k.port.clone(),
            speed,
            lanes,
            cable,
            k.ids.to_string(),
            profile.clone(),
            opt(p.and_then(|p| p.xon)),
            opt(p.and_then(|p| p.xoff)),
            opt(p.and_then(|p| p.size)),
        ]);
    }
    let mut out = format!(
        "Priority groups (APPL_DB BUFFER_PG_TABLE):\n{}\n",
        t.render()
    );
    let mut down: Vec<&str> = c
        .ports
        .iter()
        .filter(|(_, p)| !p.is_up())
        .map(|(n, _)| n.as_str())
        .collect();
    down.sort_by(|a, b| natural_cmp(a, b));
    if !down.is_empty() {
        out.push_str(&format!(
            "Admin-down ports (no buffers reserved): {}\n\n",
            down.join(", ")
        ));
    }
    out
}

fn bytes(v: f64) -> String {
    headroom_sonic::lua::format_number(v.ceil())
}

/// The pool algorithm's accounting (sonic-buffer.md §5.2) and the resulting pool sizes.
pub fn accounting_view(r: &Rendered) -> String {
    let debug = match &r.pools {
        PoolOutcome::Computed { debug, .. } => debug,
        PoolOutcome::Fallback { .. } => {
            return "Buffer accounting: not computed (pending APPL_DB changes)\n\n".into()
        }
    };
    let d = debug.as_ref();
    let mut rows = vec![
        ("mmu_size".to_string(), bytes(d.mmu)),
        (
            format!("lossless PG headroom ({} ports)", d.lossless_ports),
            bytes(d.lossless_headroom),
        ),
        (
            "lossy PG reservations".to_string(),
            bytes(d.lossy_profiles + d.lossy_8lane_extra),
        ),
        ("egress reservations".to_string(), bytes(d.other_profiles)),
        (
            format!("management PGs ({} up ports)", d.up_ports),
            bytes(d.management_pgs),
        ),
        ("mirror".to_string(), bytes(d.mirror)),
        ("management pool".to_string(), bytes(d.management_pool)),
    ];
    if d.moddesc != 0.0 {
        rows.push(("MODDESC".to_string(), bytes(d.moddesc)));
    }
    let source = match d.shp_source {
        ShpSource::Off => "off",
        ShpSource::Configured => "configured size",
        ShpSource::Ratio => "over-subscribe ratio",
        ShpSource::Forced => "forced: profiles share headroom",
    };
    rows.push((
        format!("shared headroom pool ({source})"),
        bytes(d.shp_size),
    ));
    if d.shp_port_private != 0.0 {
        rows.push((
            "private headroom with SHP".to_string(),
            bytes(d.shp_port_private),
        ));
    }
    rows.push(("occupied".to_string(), bytes(d.occupied)));
    rows.push(("available for shared pools".to_string(), bytes(d.available)));
    rows.push((
        format!(
            "shared pool size ({} dynamic ingress pools)",
            d.dynamic_ingress_pools
        ),
        bytes(d.pool_share),
    ));
    kv_block("Buffer accounting (bytes):", &rows)
}

/// The maximum-headroom check per admin-up port (sonic-buffer.md §6).
pub fn checks_view(checks: &std::collections::BTreeMap<String, CheckOutcome>) -> String {
    let evaluated: Vec<(&String, &CheckOutcome)> = checks
        .iter()
        .filter(|(_, c)| c.max_headroom_size.is_some())
        .collect();
    if evaluated.is_empty() {
        return "Maximum-headroom check: not evaluated (STATE_DB has no max_headroom_size)\n\n"
            .into();
    }
    let mut failed: Vec<&(&String, &CheckOutcome)> =
        evaluated.iter().filter(|(_, c)| !c.passed).collect();
    failed.sort_by(|(a, _), (b, _)| natural_cmp(a, b));
    let mut out = format!(
        "Maximum-headroom check: {} of {} ports pass\n",
        evaluated.len() - failed.len(),
        evaluated.len()
    );
    if !failed.is_empty() {
        let mut t = Table::new([
            "Port",
            "Accumulated",
            "max_headroom_size",
            "SHP",
            "SHP limit",
        ]);
        for (p, c) in failed {
            t.row([
                (*p).clone(),
                bytes(c.accumulated),
                opt(c.max_headroom_size),
                bytes(c.port_shp),
                c.shp_limit.map(bytes).unwrap_or_default(),
            ]);
        }
        out.push_str(&t.render());
    }
    out.push('\n');
    out
}

/// The DSH plan: insurance headroom per port, the shared pool and the thresholds at an empty
/// shared buffer.
pub fn dsh_view(p: &DshPlan, loaded: &Loaded) -> String {
    let alpha = match p.alpha.dynamic_th() {
        Some(th) => format!("2^{th}"),
        None => headroom_sonic::lua::format_number(p.alpha.value()),
    };
    let sih = match p.sih_shared {
        Some(s) => s.to_string(),
        None => "does not fit".to_string(),
    };
    let rows = vec![
        ("buffer (mmu_size)".to_string(), p.mmu_size.to_string()),
        ("private and reserved".to_string(), p.private.to_string()),
        (
            format!("insurance headroom (sum of eta, {} ports)", p.ports.len()),
            p.insurance.to_string(),
        ),
        ("shared pool".to_string(), p.shared.to_string()),
        ("alpha".to_string(), alpha),
        (
            "threshold T at empty shared pool".to_string(),
            p.threshold_empty.to_string(),
        ),
        (
            "static per-queue headroom (SIH) would reserve".to_string(),
            p.sih_headroom.to_string(),
        ),
        ("shared pool under SIH".to_string(), sih),
    ];
    let mut out = kv_block("DSH plan (bytes):", &rows);
    let mut t = Table::new([
        "Port", "Speed", "Cable", "eta", "Nq", "Xqoff", "Xqon", "Xpoff", "Xpon",
    ]);
    let mut ports: Vec<_> = p.ports.iter().collect();
    ports.sort_by(|(a, _), (b, _)| natural_cmp(a, b));
    for (name, th) in ports {
        let c = &loaded.config;
        t.row([
            name.clone(),
            c.ports
                .get(name)
                .and_then(|x| x.speed)
                .map(|s| s.to_string())
                .unwrap_or_default(),
            c.cable_length(name)
                .map(|l| l.text().to_string())
                .unwrap_or_default(),
            th.eta.to_string(),
            th.lossless_queues.to_string(),
            th.xqoff.to_string(),
            th.xqon.to_string(),
            th.xpoff.to_string(),
            th.xpon.to_string(),
        ]);
    }
    out.push_str("DSH thresholds per port (at an empty shared pool):\n");
    out.push_str(&t.render());
    out.push('\n');
    out
}

/// Everything `plan` prints: header, information view, PG map, accounting, check, notes,
/// and the DSH plan.
pub fn plan_view(loaded: &Loaded, planned: &Planned) -> String {
    let c = &loaded.config;
    let r = &planned.rendered;
    let asic = loaded
        .state
        .asic()
        .map(|a| a.name.clone())
        .unwrap_or_default();
    let up = c.ports.values().filter(|p| p.is_up()).count();
    let profiles: BTreeSet<&String> = r.appl.pgs.values().collect();
    let mut out = format!(
        "SONiC buffer plan for {}: model {}, ASIC {asic}, platform {}, {} ports ({up} up), \
         {} profiles in use\n\n",
        loaded.config_label,
        planned.model.as_str(),
        c.platform().unwrap_or("?"),
        c.ports.len(),
        profiles.len(),
    );
    out.push_str(&information_view(r));
    out.push_str(&pg_map_view(loaded, &r.appl));
    out.push_str(&accounting_view(r));
    out.push_str(&checks_view(&r.checks));
    if !r.notes.is_empty() {
        out.push_str("Notes:\n");
        for n in &r.notes {
            out.push_str(&format!("  {n}\n"));
        }
        out.push('\n');
    }
    if let Some(d) = &planned.dsh {
        out.push_str(&dsh_view(d, loaded));
    }
    out
}
