//! `config buffer shared-headroom-pool size|over-subscribe-ratio`: the shared headroom
//! pool of the ingress lossless pool.

use super::*;

pub(super) fn shp_size(ctx: &mut Ctx, size: u64) -> Result<String> {
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

pub(super) fn shp_ratio(ctx: &mut Ctx, ratio: u32) -> Result<String> {
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
