//! `config interface cable-length`: a port's cable length.

use super::*;

pub(super) fn cable_length(ctx: &mut Ctx, port: &str, length: &str) -> Result<String> {
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
