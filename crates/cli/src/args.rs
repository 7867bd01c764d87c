//! Parsers of command-line values that several commands share: each refuses what no
//! command could use, with the reason in words.

use headroom_mech::units::{parse_rate, Rate};

/// Parses a flag that must be a positive finite number (`--shp-ratio`, `--alpha`): a ratio
/// of zero divides by zero, a negative or infinite one makes no pool.
pub(crate) fn positive_number(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("must be a positive finite number, not {s}"))
    }
}

/// Parses a count flag that must be at least 1 (`--fan-in`, `--receivers`).
pub(crate) fn count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("must be a whole number of at least 1, not {s}")),
    }
}

/// Parses a priority flag (`--prio`): PFC has eight classes, 0 to 7.
pub(crate) fn priority(s: &str) -> Result<u8, String> {
    match s.trim().parse::<u8>() {
        Ok(p) if p < 8 => Ok(p),
        _ => Err(format!(
            "priorities are 0 to 7 (PFC has eight classes), not {s}"
        )),
    }
}

/// The fastest port a rate flag accepts: no Ethernet port comes near it, and it keeps
/// rate × delay products far from overflowing.
const MAX_PORT_RATE: Rate = Rate::from_gbps(10_000);

/// Parses a port rate flag (`plan-buffer --speed`, `workload --host-rate`): a unit is
/// required, zero carries nothing, and no port is faster than [`MAX_PORT_RATE`].
pub(crate) fn port_rate(s: &str) -> Result<Rate, String> {
    let r = parse_rate(s).map_err(|e| e.to_string())?;
    if r.bps() == 0 {
        return Err("a port of 0 bit/s carries nothing; give a positive rate".to_string());
    }
    if r > MAX_PORT_RATE {
        return Err(format!(
            "{r} is faster than any port (at most {MAX_PORT_RATE})"
        ));
    }
    Ok(r)
}
