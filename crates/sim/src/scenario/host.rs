//! `[host]` (NIC parameters, the optional NIC receive buffer) and `[host.cc]` (congestion
//! control), applied to a [`SimConfig`]'s host configuration.
//!
//! Invariants:
//! - Keys not given keep `HostConfig::default`'s values; `[host.cc]` starts from the
//!   chosen `preset` (default: the HPCC simulator's DCQCN) and overrides field by field.
//! - `algorithm = "none"` takes no other key.
//! - A NIC buffer has `xon < xoff <= size`.

use super::fields::{join, Cx, Fld, Res};
use crate::config::{CcConfig, NicBufferConfig, SimConfig};
use headroom_mech::cc::{DcqcnConfig, DcqcnVariant};

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
            "rto",
            "pacing",
            "cc",
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
    if let Some(x) = t.get(cx, "rto") {
        h.rto = x.positive_time(cx)?;
    }
    if let Some(x) = t.get(cx, "pacing") {
        h.pacing = x.boolean(cx)?;
    }
    if let Some(x) = t.get(cx, "cc") {
        h.cc = parse_cc(cx, &x)?;
    }
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

const DCQCN_KEYS: [&str; 12] = [
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
];

fn parse_cc(cx: &Cx, f: &Fld) -> Res<CcConfig> {
    let mut t = f.table(cx)?;
    let mut known = vec!["algorithm", "preset"];
    known.extend(DCQCN_KEYS);
    t.check_keys(cx, &known)?;
    let algorithm = match t.get(cx, "algorithm") {
        Some(a) => match a.str(cx)? {
            "dcqcn" => true,
            "none" => false,
            other => {
                return Err(a.err(
                    cx,
                    format!("unknown algorithm `{other}` (expected dcqcn or none)"),
                ))
            }
        },
        None => true,
    };
    if !algorithm {
        if let Some(e) = t.entries.iter().find(|e| e.key != "algorithm") {
            return Err(cx.err(
                &join(&t.name, &e.key),
                e.key_span.clone(),
                format!("`{}` only applies with algorithm = \"dcqcn\"", e.key),
            ));
        }
        return Ok(CcConfig::None);
    }
    let mut d = match t.get(cx, "preset") {
        Some(p) => match p.str(cx)? {
            "hpcc" => DcqcnConfig::default(),
            "paper" => DcqcnConfig::paper(),
            other => {
                return Err(p.err(
                    cx,
                    format!("unknown preset `{other}` (expected hpcc or paper)"),
                ))
            }
        },
        None => DcqcnConfig::default(),
    };
    if let Some(x) = t.get(cx, "variant") {
        d.variant = match x.str(cx)? {
            "mellanox" => DcqcnVariant::Mellanox,
            "paper" => DcqcnVariant::Paper,
            other => {
                return Err(x.err(
                    cx,
                    format!("unknown variant `{other}` (expected mellanox or paper)"),
                ))
            }
        };
    }
    if let Some(x) = t.get(cx, "g") {
        let g = x.float(cx)?;
        if !(0.0..=1.0).contains(&g) {
            return Err(x.err(cx, format!("must be in [0, 1], found {g}")));
        }
        d.g = g;
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
        let r = x.float(cx)?;
        if !(r > 0.0 && r <= 1.0) {
            return Err(x.err(cx, format!("must be in (0, 1], found {r}")));
        }
        d.rate_on_first_cnp = r;
    }
    Ok(CcConfig::Dcqcn(d))
}
