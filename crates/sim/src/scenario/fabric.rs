//! `[fabric]`: how the links keep the fabric lossless (`kind = "pfc" | "credit"`), and
//! `[fabric.credit]`, the parameters of credit links.
//!
//! Invariants: keys not given keep [`crate::config::FabricConfig::default`]'s values;
//! `[fabric.credit]` is accepted with either kind (a scenario can switch kinds by one key)
//! and checked by `SimConfig::validate` when the kind is `"credit"`.

use super::fields::{Cx, Fld, Res};
use crate::config::{FabricConfig, FlowControlKind};

pub(super) fn parse_fabric(cx: &Cx, f: &Fld, fabric: &mut FabricConfig) -> Res<()> {
    let mut t = f.table(cx)?;
    t.check_keys(cx, &["kind", "credit"])?;
    if let Some(x) = t.get(cx, "kind") {
        fabric.kind = x.choice(
            cx,
            "flow control",
            &[
                ("pfc", FlowControlKind::Pfc),
                ("credit", FlowControlKind::Credit),
            ],
        )?;
    }
    if let Some(x) = t.get(cx, "credit") {
        let c = &mut fabric.credit;
        let mut t = x.table(cx)?;
        t.check_keys(
            cx,
            &[
                "vls",
                "block",
                "vl_buffer",
                "update_period",
                "update_threshold",
            ],
        )?;
        if let Some(x) = t.get(cx, "vls") {
            c.vls = match x.uint(cx, 1, 8)? {
                v @ (1 | 2 | 4 | 8) => v as u8,
                v => return Err(x.err(cx, format!("{v} VLs; must be 1, 2, 4 or 8"))),
            };
        }
        if let Some(x) = t.get(cx, "block") {
            let b = x.positive_bytes(cx)?;
            c.block =
                u32::try_from(b).map_err(|_| x.err(cx, "a credit block must be below 4 GiB"))?;
        }
        if let Some(x) = t.get(cx, "vl_buffer") {
            c.vl_buffer = x.positive_bytes(cx)?;
        }
        if let Some(x) = t.get(cx, "update_period") {
            c.update_period = Some(x.positive_time(cx)?);
        }
        if let Some(x) = t.get(cx, "update_threshold") {
            c.update_threshold = Some(x.bytes(cx)?);
        }
    }
    Ok(())
}
