//! `[host]` (NIC parameters, the optional NIC receive buffer) and `[host.cc]` (congestion
//! control), applied to a [`SimConfig`]'s host configuration.
//!
//! Invariants:
//! - Keys not given keep `HostConfig::default`'s values; `[host.cc]` starts from the
//!   chosen `preset` (default: the HPCC simulator's DCQCN) and overrides field by field.
//! - `algorithm` selects the keys `[host.cc]` accepts ([`CC_ALGORITHMS`]); `"none"` takes
//!   no other key.
//! - `[host.window]` not given: HPCC, DCTCP and PowerTCP get the ns-3 HPCC simulator's
//!   window (`run.py`: `HAS_WIN 1`, `VAR_WIN 1`, `GLOBAL_T 1`), the others none.
//! - PowerTCP's `mode` chooses the defaults the other keys override (`gamma` 0.9 with INT,
//!   0.7 with delay).
//! - A NIC buffer has `xon < xoff <= size`.

use super::fields::{Cx, Fld, Res};
use crate::config::{CcConfig, CnpMode, NicBufferConfig, SimConfig, WindowConfig};
use headroom_mech::cc::{
    DcqcnConfig, DcqcnVariant, DctcpConfig, HpccConfig, IbCcConfig, PowerTcpConfig, PowerTcpMode,
    TimelyConfig, UeReaction,
};

pub(super) fn parse_host(cx: &Cx, f: &Fld, config: &mut SimConfig) -> Res<()> {
    let h = &mut config.host;
    let mut t = f.table(cx)?;
    t.check_keys(
        cx,
        &[
            "mtu",
            "header",
            "ack",
            "cnp",
            "ack_interval",
            "ack_prio",
            "cnp_interval",
            "cnp_mode",
            "rto",
            "pacing",
            "cc",
            "window",
            "nic_buffer",
        ],
    )?;
    if let Some(x) = t.get(cx, "mtu") {
        h.mtu_payload = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "header") {
        h.header_bytes = x.bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "ack") {
        h.ack_bytes = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "cnp") {
        h.cnp_bytes = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "ack_interval") {
        h.ack_interval = x.positive_bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "ack_prio") {
        h.ack_prio = x.prio(cx)?;
        h.ack_pause_class = h.ack_prio;
    }
    if let Some(x) = t.get(cx, "cnp_interval") {
        h.cnp_interval = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "cnp_mode") {
        h.cnp_mode = x.choice(
            cx,
            "CNP mode",
            &[("paced", CnpMode::Paced), ("poll", CnpMode::Poll)],
        )?;
    }
    if let Some(x) = t.get(cx, "rto") {
        h.rto = x.positive_time(cx)?;
    }
    if let Some(x) = t.get(cx, "pacing") {
        h.pacing = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "cc") {
        h.cc = parse_cc(cx, &x, h.mtu_payload)?;
    }
    h.window = match t.get(cx, "window") {
        Some(x) => parse_window(cx, &x)?,
        None => WindowConfig::for_algorithm(&h.cc),
    };
    if let Some(x) = t.get(cx, "nic_buffer") {
        let mut b = x.table(cx)?;
        b.check_keys(cx, &["size", "xoff", "xon", "drain"])?;
        let size = b.req(cx, "size")?.positive_bytes(cx)?;
        let xoff_f = b.req(cx, "xoff")?;
        let xoff = xoff_f.positive_bytes(cx)?;
        let xon_f = b.req(cx, "xon")?;
        let xon = xon_f.bytes(cx)?;
        if xoff > size {
            return Err(xoff_f.err(cx, format!("xoff ({xoff} B) is above size ({size} B)")));
        }
        if xon >= xoff {
            return Err(xon_f.err(cx, format!("xon ({xon} B) must be below xoff ({xoff} B)")));
        }
        let drain = b.req(cx, "drain")?.rate(cx)?;
        h.nic_buffer = Some(NicBufferConfig {
            size,
            xoff,
            xon,
            drain,
        });
    }
    Ok(())
}

/// The keys of `[host.cc]` per `algorithm`.
pub(super) const CC_ALGORITHMS: [(&str, &[&str]); 7] = [
    (
        "dcqcn",
        &[
            "algorithm",
            "preset",
            "variant",
            "g",
            "alpha_resume_interval",
            "rate_decrease_interval",
            "rp_timer",
            "byte_counter",
            "fast_recovery_times",
            "rate_ai",
            "rate_hai",
            "min_rate",
            "clamp_target_rate",
            "rate_on_first_cnp",
            "on_ue",
        ],
    ),
    ("dctcp", &["algorithm", "g", "rate_ai", "min_rate"]),
    (
        "timely",
        &[
            "algorithm",
            "alpha",
            "beta",
            "t_low",
            "t_high",
            "min_rtt",
            "rate_ai",
            "rate_hai",
            "hai_after",
            "min_rate",
            "on_ue",
        ],
    ),
    (
        "hpcc",
        &[
            "algorithm",
            "target_utilization",
            "mi_thresh",
            "fast_react",
            "rate_ai",
            "min_rate",
            "sample_feedback",
            "int_multi",
        ],
    ),
    (
        "powertcp",
        &[
            "algorithm",
            "mode",
            "gamma",
            "beta",
            "target_utilization",
            "min_rate",
            "fast_react",
            "int_multi",
            "base_rtt_slack",
        ],
    ),
    (
        "ib-cc",
        &[
            "algorithm",
            "ccti_increase",
            "ccti_limit",
            "ccti_min",
            "ccti_timer",
            "cct",
            "cct_entries",
            "cct_slowest",
        ],
    ),
    ("none", &["algorithm"]),
];

fn parse_window(cx: &Cx, f: &Fld) -> Res<WindowConfig> {
    let mut t = f.table(cx)?;
    t.check_keys(cx, &["enabled", "variable", "global"])?;
    let mut w = WindowConfig::default();
    if let Some(x) = t.get(cx, "enabled") {
        w.enabled = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "variable") {
        w.variable = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "global") {
        w.global = x.boolean(cx)?;
    }
    Ok(w)
}

/// A number in `(0, 1]` (`zero_ok`: `[0, 1]`).
fn fraction(cx: &Cx, f: &Fld, zero_ok: bool) -> Res<f64> {
    let v = f.float(cx)?;
    let ok = if zero_ok {
        (0.0..=1.0).contains(&v)
    } else {
        v > 0.0 && v <= 1.0
    };
    if !ok {
        let range = if zero_ok { "[0, 1]" } else { "(0, 1]" };
        return Err(f.err(cx, format!("must be in {range}, found {v}")));
    }
    Ok(v)
}

fn parse_cc(cx: &Cx, f: &Fld, mtu_payload: u64) -> Res<CcConfig> {
    let mut t = f.table(cx)?;
    let algorithm = match t.get(cx, "algorithm") {
        Some(a) => {
            let name = a.str(cx)?;
            if !CC_ALGORITHMS.iter().any(|(n, _)| *n == name) {
                let names: Vec<&str> = CC_ALGORITHMS.iter().map(|(n, _)| *n).collect();
                return Err(a.err(
                    cx,
                    format!(
                        "unknown algorithm `{name}` (expected one of: {})",
                        names.join(", ")
                    ),
                ));
            }
            name
        }
        None => "dcqcn",
    };
    // Found above (or the default, which is in the list).
    let known = CC_ALGORITHMS
        .iter()
        .find(|(n, _)| *n == algorithm)
        .map_or(&[][..], |(_, k)| *k);
    t.check_keys_with(cx, known, &format!("algorithm = \"{algorithm}\""))?;
    match algorithm {
        "none" => Ok(CcConfig::None),
        "dctcp" => {
            let mut d = DctcpConfig {
                packet_payload: mtu_payload,
                ..DctcpConfig::default()
            };
            if let Some(x) = t.get(cx, "g") {
                d.g = fraction(cx, &x, false)?;
            }
            if let Some(x) = t.get(cx, "rate_ai") {
                d.rate_ai = x.positive_rate(cx)?;
            }
            if let Some(x) = t.get(cx, "min_rate") {
                d.min_rate = x.positive_rate(cx)?;
            }
            Ok(CcConfig::Dctcp(d))
        }
        "timely" => {
            let mut d = TimelyConfig::default();
            if let Some(x) = t.get(cx, "alpha") {
                d.alpha = fraction(cx, &x, false)?;
            }
            if let Some(x) = t.get(cx, "beta") {
                d.beta = fraction(cx, &x, false)?;
            }
            if let Some(x) = t.get(cx, "t_low") {
                d.t_low = x.time(cx)?;
            }
            if let Some(x) = t.get(cx, "t_high") {
                d.t_high = x.positive_time(cx)?;
                if d.t_high < d.t_low {
                    return Err(x.err(
                        cx,
                        format!("t_high ({}) is below t_low ({})", d.t_high, d.t_low),
                    ));
                }
            }
            if let Some(x) = t.get(cx, "min_rtt") {
                d.min_rtt = x.positive_time(cx)?;
            }
            if let Some(x) = t.get(cx, "rate_ai") {
                d.rate_ai = x.positive_rate(cx)?;
            }
            if let Some(x) = t.get(cx, "rate_hai") {
                d.rate_hai = x.positive_rate(cx)?;
            }
            if let Some(x) = t.get(cx, "hai_after") {
                // At most u32::MAX.
                d.hai_after = x.uint(cx, 0, u64::from(u32::MAX))? as u32;
            }
            if let Some(x) = t.get(cx, "min_rate") {
                d.min_rate = x.positive_rate(cx)?;
            }
            if let Some(x) = t.get(cx, "on_ue") {
                d.on_ue = ue_reaction(cx, &x, &["hold", "ignore"])?;
            }
            Ok(CcConfig::Timely(d))
        }
        "hpcc" => {
            let mut d = HpccConfig::default();
            if let Some(x) = t.get(cx, "target_utilization") {
                d.target_utilization = fraction(cx, &x, false)?;
            }
            if let Some(x) = t.get(cx, "mi_thresh") {
                // At most u32::MAX.
                d.mi_thresh = x.uint(cx, 0, u64::from(u32::MAX))? as u32;
            }
            if let Some(x) = t.get(cx, "fast_react") {
                d.fast_react = x.boolean(cx)?;
            }
            if let Some(x) = t.get(cx, "rate_ai") {
                d.rate_ai = x.positive_rate(cx)?;
            }
            if let Some(x) = t.get(cx, "min_rate") {
                d.min_rate = x.positive_rate(cx)?;
            }
            if let Some(x) = t.get(cx, "sample_feedback") {
                d.sample_feedback = x.boolean(cx)?;
            }
            if let Some(x) = t.get(cx, "int_multi") {
                // Between 1 and u32::MAX.
                d.int_multi = x.uint(cx, 1, u64::from(u32::MAX))? as u32;
            }
            Ok(CcConfig::Hpcc(d))
        }
        "powertcp" => parse_powertcp(cx, &mut t).map(CcConfig::PowerTcp),
        "ib-cc" => parse_ib_cc(cx, &mut t).map(CcConfig::IbCc),
        _ => parse_dcqcn(cx, &mut t).map(CcConfig::Dcqcn),
    }
}

/// InfiniBand CC: the table is `cct` (delays as multiples of a packet's time, never
/// decreasing) or generated (`cct_entries` down to 1/`cct_slowest` of line rate); the
/// limit defaults to the table's last index.
fn parse_ib_cc(cx: &Cx, t: &mut super::fields::Tbl) -> Res<IbCcConfig> {
    let mut c = IbCcConfig::default();
    let listed = t.get(cx, "cct");
    let entries = t.get(cx, "cct_entries");
    let slowest = t.get(cx, "cct_slowest");
    if let Some(list) = &listed {
        if let Some(other) = entries.as_ref().or(slowest.as_ref()) {
            return Err(other.err(
                cx,
                "the table is either listed (cct) or generated (cct_entries, cct_slowest), not both",
            ));
        }
        let items = list.array(cx)?;
        if items.is_empty() || items.len() > 16_384 {
            return Err(list.err(cx, "a table of 1 to 16,384 entries (IBA's largest)"));
        }
        let mut table = Vec::with_capacity(items.len());
        for (i, node) in items.iter().enumerate() {
            table.push(list.elem(i, node).float(cx)?);
        }
        let checked = IbCcConfig {
            table: table.into(),
            ccti_limit: 0,
            ..IbCcConfig::default()
        };
        // The table's own checks (entries 0 or more, never decreasing), on the entry's span.
        if let Err(e) = checked.validate() {
            if let Some(i) = e.entry() {
                return Err(list.elem(i, &items[i]).err(cx, e.to_string()));
            }
        }
        c.table = checked.table;
    } else if entries.is_some() || slowest.is_some() {
        let n = match &entries {
            // 2..=16384 fits in usize.
            Some(x) => x.uint(cx, 2, 16_384)? as usize,
            None => c.table.len(),
        };
        let s = match &slowest {
            Some(x) => {
                let v = x.float(cx)?;
                if !(1.0..=1e6).contains(&v) {
                    return Err(x.err(cx, format!("a slowdown of 1 to 1,000,000, found {v}")));
                }
                v
            }
            None => 128.0,
        };
        c.table = IbCcConfig::geometric_table(n, s);
    }
    let last = u64::try_from(c.table.len() - 1).unwrap_or(u64::MAX);
    c.ccti_limit = match t.get(cx, "ccti_limit") {
        // At most the table's last index, below 16,384.
        Some(x) => x.uint(cx, 0, last)? as u16,
        None => last as u16,
    };
    if let Some(x) = t.get(cx, "ccti_min") {
        // At most the limit.
        c.ccti_min = x.uint(cx, 0, u64::from(c.ccti_limit))? as u16;
    }
    if let Some(x) = t.get(cx, "ccti_increase") {
        // 1..=65535 fits in u16.
        c.ccti_increase = x.uint(cx, 1, 65_535)? as u16;
    }
    if let Some(x) = t.get(cx, "ccti_timer") {
        c.ccti_timer = x.positive_time(cx)?;
    }
    Ok(c)
}

fn parse_powertcp(cx: &Cx, t: &mut super::fields::Tbl) -> Res<PowerTcpConfig> {
    let mode = match t.get(cx, "mode") {
        Some(m) => m.choice(
            cx,
            "mode",
            &[("int", PowerTcpMode::Int), ("delay", PowerTcpMode::Delay)],
        )?,
        None => PowerTcpMode::Int,
    };
    let mut d = PowerTcpConfig::for_mode(mode);
    if let Some(x) = t.get(cx, "gamma") {
        d.gamma = fraction(cx, &x, false)?;
    }
    if let Some(x) = t.get(cx, "beta") {
        d.beta = x.positive_rate(cx)?;
    }
    if let Some(x) = t.get(cx, "target_utilization") {
        d.target_utilization = fraction(cx, &x, false)?;
    }
    if let Some(x) = t.get(cx, "min_rate") {
        d.min_rate = x.positive_rate(cx)?;
    }
    if let Some(x) = t.get(cx, "fast_react") {
        d.fast_react = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "int_multi") {
        // Between 1 and u32::MAX.
        d.int_multi = x.uint(cx, 1, u64::from(u32::MAX))? as u32;
    }
    if let Some(x) = t.get(cx, "base_rtt_slack") {
        let v = x.float(cx)?;
        if v < 1.0 {
            return Err(x.err(cx, format!("must be at least 1, found {v}")));
        }
        d.base_rtt_slack = v;
    }
    Ok(d)
}

fn parse_dcqcn(cx: &Cx, t: &mut super::fields::Tbl) -> Res<DcqcnConfig> {
    let mut d = match t.get(cx, "preset") {
        Some(p) => p.choice(
            cx,
            "preset",
            &[
                ("hpcc", DcqcnConfig::default()),
                ("paper", DcqcnConfig::paper()),
            ],
        )?,
        None => DcqcnConfig::default(),
    };
    if let Some(x) = t.get(cx, "variant") {
        d.variant = x.choice(
            cx,
            "variant",
            &[
                ("mellanox", DcqcnVariant::Mellanox),
                ("paper", DcqcnVariant::Paper),
            ],
        )?;
    }
    if let Some(x) = t.get(cx, "g") {
        d.g = fraction(cx, &x, true)?;
    }
    if let Some(x) = t.get(cx, "alpha_resume_interval") {
        d.alpha_resume_interval = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "rate_decrease_interval") {
        d.rate_decrease_interval = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "rp_timer") {
        d.rp_timer = x.time(cx)?;
    }
    if let Some(x) = t.get(cx, "byte_counter") {
        d.byte_counter = x.bytes(cx)?;
    }
    if let Some(x) = t.get(cx, "fast_recovery_times") {
        // At most u32::MAX.
        d.fast_recovery_times = x.uint(cx, 0, u64::from(u32::MAX))? as u32;
    }
    if let Some(x) = t.get(cx, "rate_ai") {
        d.rate_ai = x.rate(cx)?;
    }
    if let Some(x) = t.get(cx, "rate_hai") {
        d.rate_hai = x.rate(cx)?;
    }
    if let Some(x) = t.get(cx, "min_rate") {
        d.min_rate = x.rate(cx)?;
    }
    if let Some(x) = t.get(cx, "clamp_target_rate") {
        d.clamp_target_rate = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "rate_on_first_cnp") {
        d.rate_on_first_cnp = fraction(cx, &x, false)?;
    }
    if let Some(x) = t.get(cx, "on_ue") {
        d.on_ue = ue_reaction(cx, &x, &["hold", "hold-restart-alpha", "ignore"])?;
    }
    Ok(d)
}

/// `on_ue`: one of the reactions `allowed` (names as in [`UeReaction`]'s documentation).
fn ue_reaction(cx: &Cx, x: &Fld, allowed: &[&str]) -> Res<UeReaction> {
    let name = x.str(cx)?;
    match name {
        "hold" if allowed.contains(&name) => Ok(UeReaction::Hold),
        "hold-restart-alpha" if allowed.contains(&name) => Ok(UeReaction::HoldRestartAlpha),
        "ignore" if allowed.contains(&name) => Ok(UeReaction::Ignore),
        _ => Err(x.err(
            cx,
            format!(
                "unknown UE reaction `{name}` (expected {})",
                allowed.join(", ")
            ),
        )),
    }
}
