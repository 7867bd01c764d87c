//! `config interface buffer priority-group lossless add|set|remove`: a port's lossless
//! priority groups and their override profiles.

use super::*;

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

pub(super) fn pg_add(ctx: &mut Ctx, s: &PgSpec) -> Result<String> {
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
    let profile = set_pg_profile(ctx, &key, s.profile.as_deref())?;
    Ok(format!("added BUFFER_PG|{key} (profile {profile})"))
}

/// Sets the profile of the PG entry `key` to `profile` (when none is given `NULL`: dynamic
/// headroom); returns the profile set.
fn set_pg_profile(ctx: &mut Ctx, key: &str, profile: Option<&str>) -> Result<String> {
    let profile = profile.unwrap_or("NULL").to_string();
    set_field(
        &mut ctx.doc,
        names::BUFFER_PG,
        key,
        "profile",
        profile.clone(),
    )?;
    Ok(profile)
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

pub(super) fn pg_set(ctx: &mut Ctx, s: &PgSpec) -> Result<String> {
    check_port(&ctx.config, &s.port)?;
    let range = parse_pgs(ctx, &s.port, &s.pgs)?;
    existing_lossless(&ctx.config, &s.port, range, &s.pgs)?;
    if let Some(p) = &s.profile {
        check_lossless_profile(&ctx.config, p)?;
    }
    let key = isolate_pg_key(&mut ctx.doc, &s.port, range)?;
    let profile = set_pg_profile(ctx, &key, s.profile.as_deref())?;
    Ok(format!("set BUFFER_PG|{key} (profile {profile})"))
}

pub(super) fn pg_remove(ctx: &mut Ctx, port: &str, pgs: Option<&str>) -> Result<String> {
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
