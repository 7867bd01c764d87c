//! `headroom sonic diff`: what changing CONFIG_DB from `--config-db` to `--config-db-new` would
//! change in the APPL_DB buffermgrd writes.
//!
//! Both configurations are rendered with the same STATE_DB (ASIC, MMU size; `--state-db-new`
//! replaces the STATE_DB dump for the new side) and model, and the APPL_DB tables compared key
//! by key. With `--redis URL` the current side is the switch's CONFIG_DB and STATE_DB and the
//! new side `--config-db-new` with the switch's STATE_DB (`--state-db-new` tables merged over
//! it: what a `config reload` of that file would lead to):
//! - profiles created, removed, and modified (field by field);
//! - PG map, queue and profile-list entries added, removed or pointing at another profile;
//! - every pool's size and shared-headroom-pool `xoff` before and after, with the change;
//! - the pool accounting: lossless PG headroom, shared headroom pool, occupied and available
//!   bytes.
//!
//! Printed as tables, or with `--json` as one JSON document:
//! `{"changed": bool, "profiles": {"created": {name: fields}, "removed": {…},
//! "modified": {name: {field: {"before": v|null, "after": v|null}}}}, "pgs" / "queues" /
//! "ingress_profile_lists" / "egress_profile_lists": {"added": {key: value}, "removed": {…},
//! "changed": {key: {"before": v, "after": v}}}, "pools": {name: {"size": {"before": n|null,
//! "after": n|null, "change": n}, "xoff": {…}}}, "accounting": {item: {"before": n, "after": n,
//! "change": n}}}`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use headroom_sonic::pool::{PoolDebug, PoolOutcome};
use headroom_sonic::tables::appl::names;
use headroom_sonic::tables::raw::{Fields, RawDb, RawTable};
use serde_json::{json, Map, Value};

use super::input::{self, FileSource, InputArgs, Loaded, Source};
use super::output::{json_text, natural_cmp, Table};
use super::plan::{self, Planned};
use super::{ModelName, Result};

/// Arguments of `headroom sonic diff`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example: headroom sonic diff --config-db old/config_db.json \
--config-db-new new/config_db.json --asic-table asic_table.json --state-db state_db.json"
)]
pub struct DiffArgs {
    /// The current configuration and STATE_DB (`--config-db` is the old CONFIG_DB).
    #[command(flatten)]
    input: InputArgs,
    /// The changed CONFIG_DB (nested config_db.json format).
    #[arg(long, value_name = "FILE")]
    config_db_new: PathBuf,
    /// STATE_DB for the new side (default: the same as `--state-db`).
    #[arg(long, value_name = "FILE")]
    state_db_new: Option<PathBuf>,
    /// Headroom model for both sides.
    #[arg(long, value_enum, default_value_t = ModelName::Mellanox)]
    model: ModelName,
    /// Print the differences as JSON.
    #[arg(long)]
    json: bool,
}

/// Key-level differences of one table.
#[derive(Clone, Debug, Default, PartialEq)]
struct TableDiff {
    added: BTreeMap<String, Fields>,
    removed: BTreeMap<String, Fields>,
    /// Key → (before, after).
    changed: BTreeMap<String, (Fields, Fields)>,
}

impl TableDiff {
    fn of(old: Option<&RawTable>, new: Option<&RawTable>) -> TableDiff {
        let empty = RawTable::new();
        let (old, new) = (old.unwrap_or(&empty), new.unwrap_or(&empty));
        let mut d = TableDiff::default();
        for (k, f) in old {
            match new.get(k) {
                None => {
                    d.removed.insert(k.clone(), f.clone());
                }
                Some(g) if g != f => {
                    d.changed.insert(k.clone(), (f.clone(), g.clone()));
                }
                Some(_) => {}
            }
        }
        for (k, f) in new {
            if !old.contains_key(k) {
                d.added.insert(k.clone(), f.clone());
            }
        }
        d
    }

    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// The whole comparison.
struct PlanDiff {
    old: RawDb,
    new: RawDb,
    tables: BTreeMap<&'static str, TableDiff>,
    /// Pool-accounting items: (name, before, after), bytes.
    accounting: Vec<(&'static str, Option<u64>, Option<u64>)>,
}

/// The accounting items compared by `diff` (sonic-buffer.md §5.2), when computed.
fn accounting(p: &Planned) -> Vec<(&'static str, Option<u64>)> {
    let d = match &p.rendered.pools {
        PoolOutcome::Computed { debug, .. } => Some(debug.as_ref()),
        PoolOutcome::Fallback { .. } => None,
    };
    let v = |f: fn(&PoolDebug) -> f64| d.map(|d| f(d).ceil().max(0.0) as u64);
    vec![
        ("lossless PG headroom", v(|d| d.lossless_headroom)),
        ("shared headroom pool", v(|d| d.shp_size)),
        ("occupied", v(|d| d.occupied)),
        ("available for shared pools", v(|d| d.available)),
    ]
}

const TABLES: [&str; 6] = [
    names::BUFFER_POOL_TABLE,
    names::BUFFER_PROFILE_TABLE,
    names::BUFFER_PG_TABLE,
    names::BUFFER_QUEUE_TABLE,
    names::BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE,
    names::BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE,
];

impl PlanDiff {
    fn new(before: &Planned, after: &Planned) -> PlanDiff {
        let (old, new) = (plan::appl_db(before), plan::appl_db(after));
        let tables = TABLES
            .iter()
            .map(|t| (*t, TableDiff::of(old.get(*t), new.get(*t))))
            .collect();
        let accounting = accounting(before)
            .into_iter()
            .zip(accounting(after))
            .map(|((name, a), (_, b))| (name, a, b))
            .collect();
        PlanDiff {
            old,
            new,
            tables,
            accounting,
        }
    }

    fn table(&self, t: &str) -> TableDiff {
        self.tables.get(t).cloned().unwrap_or_default()
    }

    fn changed(&self) -> bool {
        self.tables.values().any(|d| !d.is_empty())
    }

    fn pool_names(&self) -> BTreeSet<String> {
        let mut s = BTreeSet::new();
        for db in [&self.old, &self.new] {
            if let Some(t) = db.get(names::BUFFER_POOL_TABLE) {
                s.extend(t.keys().cloned());
            }
        }
        s
    }

    fn pool_field(db: &RawDb, pool: &str, field: &str) -> Option<u64> {
        db.get(names::BUFFER_POOL_TABLE)?
            .get(pool)?
            .get(field)?
            .trim()
            .parse()
            .ok()
    }
}

fn num(v: Option<u64>) -> Value {
    v.map_or(Value::Null, |n| json!(n))
}

fn change(before: Option<u64>, after: Option<u64>) -> i128 {
    i128::from(after.unwrap_or(0)) - i128::from(before.unwrap_or(0))
}

fn signed(n: i128) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

fn fields_json(f: &Fields) -> Value {
    Value::Object(f.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
}

/// The single field of an entry (`profile` / `profile_list`) or all fields as `a=b` pairs.
fn entry_value(f: &Fields) -> String {
    match (f.get("profile"), f.get("profile_list")) {
        (Some(p), _) => p.clone(),
        (None, Some(l)) => l.clone(),
        _ => f
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

fn to_json(d: &PlanDiff) -> Value {
    let mut top = Map::new();
    top.insert("changed".into(), json!(d.changed()));
    let p = d.table(names::BUFFER_PROFILE_TABLE);
    let mut modified = Map::new();
    for (name, (a, b)) in &p.changed {
        let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let mut fm = Map::new();
        for k in keys {
            if a.get(k) != b.get(k) {
                fm.insert(k.clone(), json!({"before": a.get(k), "after": b.get(k)}));
            }
        }
        modified.insert(name.clone(), Value::Object(fm));
    }
    top.insert(
        "profiles".into(),
        json!({
            "created": p.added.iter().map(|(k, f)| (k.clone(), fields_json(f))).collect::<Map<_, _>>(),
            "removed": p.removed.iter().map(|(k, f)| (k.clone(), fields_json(f))).collect::<Map<_, _>>(),
            "modified": modified,
        }),
    );
    for (key, t) in [
        ("pgs", names::BUFFER_PG_TABLE),
        ("queues", names::BUFFER_QUEUE_TABLE),
        (
            "ingress_profile_lists",
            names::BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE,
        ),
        (
            "egress_profile_lists",
            names::BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE,
        ),
    ] {
        let td = d.table(t);
        top.insert(
            key.into(),
            json!({
                "added": td.added.iter().map(|(k, f)| (k.clone(), json!(entry_value(f)))).collect::<Map<_, _>>(),
                "removed": td.removed.iter().map(|(k, f)| (k.clone(), json!(entry_value(f)))).collect::<Map<_, _>>(),
                "changed": td.changed.iter().map(|(k, (a, b))| (k.clone(), json!({"before": entry_value(a), "after": entry_value(b)}))).collect::<Map<_, _>>(),
            }),
        );
    }
    let mut pools = Map::new();
    for pool in d.pool_names() {
        let mut pm = Map::new();
        for field in ["size", "xoff"] {
            let a = PlanDiff::pool_field(&d.old, &pool, field);
            let b = PlanDiff::pool_field(&d.new, &pool, field);
            if a.is_some() || b.is_some() {
                pm.insert(
                    field.into(),
                    json!({"before": num(a), "after": num(b), "change": change(a, b) as i64}),
                );
            }
        }
        pools.insert(pool, Value::Object(pm));
    }
    top.insert("pools".into(), Value::Object(pools));
    let acc: Map<String, Value> = d
        .accounting
        .iter()
        .map(|(name, a, b)| {
            (
                name.to_string(),
                json!({"before": num(*a), "after": num(*b), "change": change(*a, *b) as i64}),
            )
        })
        .collect();
    top.insert("accounting".into(), Value::Object(acc));
    Value::Object(top)
}

fn profile_row(name: &str, f: &Fields) -> Vec<String> {
    let g = |k: &str| f.get(k).cloned().unwrap_or_default();
    let th = f
        .get("dynamic_th")
        .or_else(|| f.get("static_th"))
        .cloned()
        .unwrap_or_default();
    vec![
        name.to_string(),
        g("xon"),
        g("xoff"),
        g("size"),
        th,
        g("pool"),
    ]
}

fn to_text(d: &PlanDiff) -> String {
    let mut out = String::new();
    if !d.changed() {
        out.push_str("No changes to APPL_DB.\n\n");
    }
    let p = d.table(names::BUFFER_PROFILE_TABLE);
    for (title, set) in [("created", &p.added), ("removed", &p.removed)] {
        if set.is_empty() {
            continue;
        }
        let mut t = Table::new(["Profile", "xon", "xoff", "size", "threshold", "pool"]);
        for (name, f) in set {
            t.row(profile_row(name, f));
        }
        out.push_str(&format!(
            "Profiles {title} ({}):\n{}\n",
            set.len(),
            t.render()
        ));
    }
    if !p.changed.is_empty() {
        let mut t = Table::new(["Profile", "Field", "Before", "After"]);
        for (name, (a, b)) in &p.changed {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                if a.get(k) != b.get(k) {
                    t.row([
                        name.clone(),
                        k.clone(),
                        a.get(k).cloned().unwrap_or_else(|| "-".into()),
                        b.get(k).cloned().unwrap_or_else(|| "-".into()),
                    ]);
                }
            }
        }
        out.push_str(&format!(
            "Profiles modified ({}):\n{}\n",
            p.changed.len(),
            t.render()
        ));
    }
    for (title, t) in [
        ("PG map", names::BUFFER_PG_TABLE),
        ("Queue map", names::BUFFER_QUEUE_TABLE),
        (
            "Ingress profile lists",
            names::BUFFER_PORT_INGRESS_PROFILE_LIST_TABLE,
        ),
        (
            "Egress profile lists",
            names::BUFFER_PORT_EGRESS_PROFILE_LIST_TABLE,
        ),
    ] {
        let td = d.table(t);
        if td.is_empty() {
            continue;
        }
        let mut rows: Vec<[String; 3]> = Vec::new();
        for (k, f) in &td.removed {
            rows.push([k.clone(), entry_value(f), "-".into()]);
        }
        for (k, f) in &td.added {
            rows.push([k.clone(), "-".into(), entry_value(f)]);
        }
        for (k, (a, b)) in &td.changed {
            rows.push([k.clone(), entry_value(a), entry_value(b)]);
        }
        rows.sort_by(|a, b| natural_cmp(&a[0], &b[0]));
        let mut tab = Table::new(["Key", "Before", "After"]);
        for r in rows {
            tab.row(r);
        }
        let n = td.added.len() + td.removed.len() + td.changed.len();
        out.push_str(&format!("{title} changes ({n}):\n{}\n", tab.render()));
    }
    let mut t = Table::new([
        "Pool",
        "Size before",
        "Size after",
        "Change",
        "xoff before",
        "xoff after",
    ]);
    for pool in d.pool_names() {
        let a = PlanDiff::pool_field(&d.old, &pool, "size");
        let b = PlanDiff::pool_field(&d.new, &pool, "size");
        let xa = PlanDiff::pool_field(&d.old, &pool, "xoff");
        let xb = PlanDiff::pool_field(&d.new, &pool, "xoff");
        let s = |v: Option<u64>| v.map_or_else(|| "-".into(), |n| n.to_string());
        t.row([pool.clone(), s(a), s(b), signed(change(a, b)), s(xa), s(xb)]);
    }
    out.push_str(&format!("Pools:\n{}\n", t.render()));
    let mut t = Table::new(["Buffer accounting", "Before", "After", "Change"]);
    for (name, a, b) in &d.accounting {
        let s = |v: &Option<u64>| v.map_or_else(|| "-".into(), |n| n.to_string());
        t.row([name.to_string(), s(a), s(b), signed(change(*a, *b))]);
    }
    out.push_str(&t.render());
    out
}

/// Runs `headroom sonic diff`.
pub fn run(a: &DiffArgs) -> Result<ExitCode> {
    let old = a.input.load()?;
    let (asic, peripheral) = (
        a.input.asic_table.as_deref(),
        a.input.peripheral_table.as_deref(),
    );
    let new = match a.input.source()? {
        Source::File(f) => {
            let new_source = Source::File(FileSource {
                config_db: a.config_db_new.clone(),
                state_db: a.state_db_new.clone().or(f.state_db),
            });
            input::load(&new_source, asic, peripheral)?
        }
        Source::Redis(_) => {
            let label = a.config_db_new.display().to_string();
            let config_dump = input::read_nested(&a.config_db_new)?;
            let config = input::parse_config(&config_dump, &label)?;
            let mut new = Loaded {
                config,
                config_dump,
                config_label: label,
                ..old.clone()
            };
            if let Some(p) = &a.state_db_new {
                let file = input::read_nested(p)?;
                let mut dump = old.state_dump.clone();
                headroom_sonic::tables::raw::merge(&mut dump, &file);
                let mut base = dump.clone();
                if asic.is_some() {
                    base.remove(headroom_sonic::tables::state::names::ASIC_TABLE);
                }
                let (state, _) = input::merge_state(base, asic, peripheral)?;
                new.state = state;
                new.state_dump = dump;
            }
            new
        }
    };
    input::validate(&new.config, &new.state, &new.config_label)?;
    let before = plan::compute(&old, a.model)?;
    let after = plan::compute(&new, a.model)?;
    let d = PlanDiff::new(&before, &after);
    if a.json {
        out!("{}", json_text(&to_json(&d)));
    } else {
        out!("{}", to_text(&d));
    }
    Ok(ExitCode::SUCCESS)
}
