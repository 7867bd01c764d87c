//! `config buffer profile add|set|remove`: lossless buffer profiles (the rules for profiles in
//! the parent module's documentation).

use super::*;

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

pub(super) fn profile_add(ctx: &mut Ctx, s: &ProfileSpec) -> Result<String> {
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

pub(super) fn profile_set(ctx: &mut Ctx, s: &ProfileSpec) -> Result<String> {
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

pub(super) fn profile_remove(ctx: &mut Ctx, name: &str) -> Result<String> {
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
